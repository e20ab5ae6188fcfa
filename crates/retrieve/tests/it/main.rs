//! The search pipeline on real components: SQLite + FTS5, the ONNX model, the exact index,
//! with the corpus written through the real ingestor.

mod golden;
mod properties;
mod rewrite;

use std::sync::{Arc, OnceLock};

use retold_domain::chrono::{TimeDelta, TimeZone, Utc};
use retold_domain::{
    AgentId, AuditEvent, Content, EntityKind, EventId, Grant, GrantId, GrantStore, ManualClock, MemoryType,
    Name, Principal, RecordId, Scope, SearchId, SearchLogStore, SequentialIds, SourceKind, UserId,
};
use retold_index::{ExactIndex, OnnxEmbedder, OnnxEmbedderConfig};
use retold_ingest::{
    EmbeddingEntailmentJudge, EntityRef, IngestConfig, Ingestor, Ports, WriteOutcome, WriteRequest,
};
use retold_retrieve::{NoRewriter, RetrieveConfig, RetrievePorts, Retriever, SearchRequest, SearchResponse};
use retold_store_sqlite::{SqliteStore, StoreConfig};

pub(crate) fn embedder() -> Arc<OnnxEmbedder> {
    static EMBEDDER: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            Arc::new(
                OnnxEmbedder::load(OnnxEmbedderConfig {
                    batch_size: 16,
                    ..OnnxEmbedderConfig::provisioned()
                })
                .expect("model provisioned by `cargo xtask setup`"),
            )
        })
        .clone()
}

pub(crate) struct World {
    pub(crate) store: SqliteStore,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) ingestor: Ingestor,
    pub(crate) retriever: Retriever,
    _dir: tempfile::TempDir,
}

pub(crate) async fn world(config: RetrieveConfig) -> World {
    world_with(config, None).await
}

pub(crate) async fn world_with(
    config: RetrieveConfig,
    reranker: Option<Arc<dyn retold_domain::Reranker>>,
) -> World {
    world_full(config, reranker, Arc::new(NoRewriter)).await
}

pub(crate) async fn world_full(
    config: RetrieveConfig,
    reranker: Option<Arc<dyn retold_domain::Reranker>>,
    rewriter: Arc<dyn retold_retrieve::QueryRewriter>,
) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&StoreConfig::new(dir.path().join("retold.db"))).await.unwrap();
    let index = Arc::new(ExactIndex::new(384));
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()));
    let ids = Arc::new(SequentialIds::default());
    let embedder = embedder();
    let ingestor = Ingestor::new(
        Ports {
            records: Arc::new(store.clone()),
            entities: Arc::new(store.clone()),
            grants: Arc::new(store.clone()),
            sessions: Arc::new(store.clone()),
            embedder: embedder.clone(),
            index: index.clone(),
            judge: Arc::new(EmbeddingEntailmentJudge::new(embedder.clone())),
            clock: clock.clone(),
            ids: ids.clone(),
        },
        IngestConfig::default(),
    );
    let retriever = Retriever::new(
        RetrievePorts {
            records: Arc::new(store.clone()),
            entities: Arc::new(store.clone()),
            grants: Arc::new(store.clone()),
            lexical: Arc::new(store.clone()),
            index,
            embedder,
            search_log: Arc::new(store.clone()),
            rewriter,
            reranker,
            clock: clock.clone(),
            ids,
        },
        config,
    );
    World { store, clock, ingestor, retriever, _dir: dir }
}

static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(crate) fn principal(agent: &str, user: &str) -> Principal {
    Principal::new(AgentId::new(agent).unwrap(), UserId::new(user).unwrap())
}

pub(crate) fn request(scope: &str, content: &str) -> WriteRequest {
    WriteRequest {
        memory_type: MemoryType::Semantic,
        content: Content::new(content).unwrap(),
        scope: Scope::parse(scope).unwrap(),
        subject: None,
        attribute: None,
        mentions: vec![],
        source_kind: SourceKind::System,
        source_ref: None,
        evidence: None,
        event_at: None,
        expires_at: None,
        confidence: None,
        tags: vec![],
    }
}

pub(crate) fn about(mut request: WriteRequest, name: &str) -> WriteRequest {
    request.subject = Some(EntityRef::Name { name: Name::new(name).unwrap(), kind: EntityKind::Person });
    request
}

impl World {
    pub(crate) async fn grant(&self, agent: &str, scope: &str, read: bool, write: bool) {
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let event = AuditEvent {
            id: EventId::new(format!("evt_g{n}")).unwrap(),
            at: Utc::now(),
            kind: "grant.created".into(),
            record_id: None,
            actor: None,
            details: Default::default(),
        };
        let grant = Grant {
            id: GrantId::new(format!("grt_{n}")).unwrap(),
            agent_id: AgentId::new(agent).unwrap(),
            scope: Scope::parse(scope).unwrap(),
            can_read: read,
            can_write: write,
        };
        self.store.put_grant(grant, event).await.unwrap();
    }

    pub(crate) async fn write(&self, p: &Principal, request: WriteRequest) -> RecordId {
        match self.ingestor.write(p, &request).await.unwrap() {
            WriteOutcome::Created { id, .. } | WriteOutcome::Superseding { id, .. } => id,
            other => panic!("expected a new record, got {other:?}"),
        }
    }

    pub(crate) async fn search(&self, p: &Principal, request: SearchRequest) -> SearchResponse {
        self.retriever.search(p, &request).await.unwrap()
    }

    pub(crate) async fn trace(&self, id: &SearchId) -> serde_json::Value {
        let (_, _, json) = self.store.trace(id).await.unwrap().unwrap();
        serde_json::from_str(&json).unwrap()
    }

    pub(crate) fn days(&self, n: i64) {
        self.clock.advance(TimeDelta::days(n));
    }
}

pub(crate) fn ids(response: &SearchResponse) -> Vec<RecordId> {
    response.hits.iter().map(|h| h.record.id.clone()).collect()
}
