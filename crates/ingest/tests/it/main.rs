//! The write path on real components: a SQLite file, the ONNX model, the exact index.

mod examples;
mod extraction;
mod faults;
mod merge;
mod properties;
mod sentences;

use std::sync::Arc;

use retold_domain::{
    Content, Embedder, EntityKind, Evidence, MemoryType, Name, Scope, SourceKind, SourceRef,
};
use retold_ingest::{EntityRef, WriteRequest};
pub(crate) use retold_test_kit::{World, embedder, host_event, principal};

pub(crate) async fn world_with(embedder: Arc<dyn Embedder>) -> World {
    World::builder().embedder(embedder).build().await
}

pub(crate) async fn world() -> World {
    World::builder().build().await
}

/// A semantic claim about Aditya's `attribute`.
pub(crate) fn claim(content: &str, attribute: &str, source: SourceKind) -> WriteRequest {
    WriteRequest {
        memory_type: MemoryType::Semantic,
        content: Content::new(content).unwrap(),
        scope: Scope::parse("user:aditya").unwrap(),
        subject: Some(EntityRef::Name { name: Name::new("Aditya").unwrap(), kind: EntityKind::Person }),
        attribute: Some(retold_domain::Attribute::new(attribute).unwrap()),
        mentions: vec![],
        source_kind: source,
        source_ref: None,
        evidence: None,
        event_at: None,
        expires_at: None,
        confidence: None,
        tags: vec![],
        context: None,
    }
}

pub(crate) fn with_evidence(
    mut request: WriteRequest,
    session: &str,
    turn: u32,
    evidence: &str,
) -> WriteRequest {
    request.source_ref = Some(SourceRef::new(format!("session:{session}<turn:{turn}>")).unwrap());
    request.evidence = Some(Evidence::new(evidence).unwrap());
    request
}
