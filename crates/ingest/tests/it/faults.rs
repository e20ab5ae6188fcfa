//! The write path under injected faults around the commit: an error answers a write that
//! changed nothing, and a write that committed is never answered with an error.

use std::sync::Arc;

use async_trait::async_trait;
use retold_domain::{
    Centring, DomainError, Embedder, EmbeddingModelInfo, MemoryRecord, RecordId, RecordKey, RecordReader,
    Result, SentenceWeight, SourceKind, Status, VectorHit, VectorIndex,
};
use retold_ingest::WriteOutcome;
use retold_store_sqlite::SqliteStore;
use retold_test_kit::prelude::AuditLog;

use crate::{World, claim, embedder, principal, world, world_with};

/// An embedder with one number more than the index holds (a model configured with other
/// dims than the index was built for): the store takes its vectors, the index cannot.
struct OneTooMany {
    inner: Arc<dyn Embedder>,
    info: EmbeddingModelInfo,
}

impl OneTooMany {
    fn new(inner: Arc<dyn Embedder>) -> Self {
        let info = EmbeddingModelInfo { dims: inner.info().dims + 1, ..inner.info().clone() };
        Self { inner, info }
    }
}

#[async_trait]
impl Embedder for OneTooMany {
    fn info(&self) -> &EmbeddingModelInfo {
        &self.info
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut vectors = self.inner.embed(texts).await?;
        vectors.iter_mut().for_each(|v| v.push(0.5));
        Ok(vectors)
    }
}

/// The world's index, except that every upsert fails (an index that broke after the commit).
struct FailingUpserts {
    inner: Arc<dyn VectorIndex>,
}

impl VectorIndex for FailingUpserts {
    fn check(&self, vector: &[f32]) -> Result<()> {
        self.inner.check(vector)
    }
    fn upsert_with(
        &self,
        _key: RecordKey,
        _id: &RecordId,
        _vector: &[f32],
        _sentences: &[f32],
    ) -> Result<()> {
        Err(DomainError::backend("vector index", "injected upsert failure"))
    }
    fn attach_sentences(&self, key: RecordKey, sentences: &[f32]) -> Result<bool> {
        self.inner.attach_sentences(key, sentences)
    }
    fn mark_dead(&self, key: RecordKey) {
        self.inner.mark_dead(key);
    }
    fn search_lists(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        sentences: &[SentenceWeight],
    ) -> Result<Vec<Vec<VectorHit>>> {
        self.inner.search_lists(query, eligible, k, centring, sentences)
    }
    fn vector(&self, key: RecordKey) -> Option<Vec<f32>> {
        self.inner.vector(key)
    }
    fn live_len(&self) -> usize {
        self.inner.live_len()
    }
}

/// The store's reader, except that `key_of` fails.
struct FailingKeyOf {
    inner: SqliteStore,
}

#[async_trait]
impl RecordReader for FailingKeyOf {
    async fn get(&self, id: &RecordId) -> Result<Option<MemoryRecord>> {
        self.inner.get(id).await
    }
    async fn get_many(&self, ids: &[RecordId]) -> Result<Vec<MemoryRecord>> {
        self.inner.get_many(ids).await
    }
    async fn key_of(&self, _id: &RecordId) -> Result<Option<RecordKey>> {
        Err(DomainError::backend("sqlite store", "injected key_of failure"))
    }
}

async fn granted(w: World) -> World {
    w.grant("research-agent", "user:aditya", true, true).await;
    w
}

#[tokio::test]
async fn a_vector_the_index_cannot_hold_fails_the_write_before_anything_commits() {
    let w = granted(world_with(Arc::new(OneTooMany::new(embedder()))).await).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya drinks tea.", "drink", SourceKind::System),
        )
        .await;
    assert!(matches!(outcome, Err(DomainError::Invalid { field: "vector", .. })), "{outcome:?}");
    assert!(w.eligible("user:aditya").await.is_empty(), "an error answers a write that changed nothing");
    assert_eq!(w.index.live_len(), 0);
}

#[tokio::test]
async fn an_index_failing_after_the_commit_does_not_turn_an_acknowledged_write_into_an_error() {
    let w = granted(world().await).await;
    let index = w.ports.index.clone();
    let w = w.with_ports(|ports| ports.index = Arc::new(FailingUpserts { inner: index }));
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya drinks tea.", "drink", SourceKind::System),
        )
        .await;
    let Ok(WriteOutcome::Created { id, .. }) = outcome else { panic!("the write committed: {outcome:?}") };
    assert_eq!(w.eligible("user:aditya").await, [id.to_string()]);
    let events = w.store.record_events(&id).await.unwrap();
    assert_eq!(events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(), ["record.created"]);
}

#[tokio::test]
async fn forget_reads_everything_it_needs_before_the_commit() {
    let w = granted(world().await).await;
    let p = principal("research-agent", "aditya");
    let id = w.write(&p, claim("Aditya drinks tea.", "drink", SourceKind::System)).await;
    let key = w.store.key_of(&id).await.unwrap().unwrap();
    let store = w.store.clone();
    let w = w.with_ports(|ports| ports.records = Arc::new(FailingKeyOf { inner: store }));

    let outcome = w.ingestor.forget(&p, &id, "the user asked").await;
    assert!(matches!(outcome, Err(DomainError::Backend { .. })), "{outcome:?}");
    assert_eq!(
        w.record(&id).await.status,
        Status::Confirmed,
        "an error answers a forget that changed nothing"
    );
    assert!(w.index.vector(key).is_some(), "and the vector stays live");
}
