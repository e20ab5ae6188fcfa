//! The search pipeline on real components: SQLite + FTS5, the ONNX model, the exact index,
//! with the corpus written through the real ingestor.

mod conflicts;
mod context;
mod entities;
mod golden;
mod identifiers;
mod properties;
mod rewrite;
mod sentences;
mod stemming;
mod trace;

use std::sync::Arc;

use retold_domain::{Content, EntityKind, MemoryType, Name, RecordId, Scope, SourceKind};
use retold_ingest::{EntityRef, WriteRequest};
use retold_retrieve::{NoRewriter, RetrieveConfig, SearchResponse};
pub(crate) use retold_test_kit::{World, principal};

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
    World::builder().retrieve(config).reranker(reranker).rewriter(rewriter).build().await
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
        context: None,
    }
}

/// An episodic record of `content` in `scope` (a conversation turn, an event).
pub(crate) fn episode(scope: &str, content: &str) -> WriteRequest {
    WriteRequest { memory_type: MemoryType::Episodic, ..request(scope, content) }
}

pub(crate) fn about(mut request: WriteRequest, name: &str) -> WriteRequest {
    request.subject = Some(EntityRef::Name { name: Name::new(name).unwrap(), kind: EntityKind::Person });
    request
}

pub(crate) fn ids(response: &SearchResponse) -> Vec<RecordId> {
    response.hits.iter().map(|h| h.record.id.clone()).collect()
}
