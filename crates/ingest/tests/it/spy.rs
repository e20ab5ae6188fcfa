//! A store wrapper that records every scope list the ingestor reads with.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, ConflictLink, EligibilityFilter, EligibleRecord, EmbeddingScan, Entity, EntityId,
    EntityStore, KeyedRecord, LinkedRecord, MemoryRecord, Name, RecordEntityLink, RecordId, RecordKey,
    RecordStore, Result, Scope, WriteUnit,
};
use retold_store_sqlite::SqliteStore;

#[derive(Clone)]
pub(crate) struct Spy {
    pub(crate) inner: SqliteStore,
    pub(crate) reads: Arc<Mutex<Vec<Vec<Scope>>>>,
}

impl Spy {
    fn log(&self, scopes: &[Scope]) {
        self.reads.lock().unwrap().push(scopes.to_vec());
    }
}

#[async_trait]
impl RecordStore for Spy {
    async fn apply(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>> {
        self.inner.apply(unit).await
    }
    async fn get(&self, id: &RecordId) -> Result<Option<MemoryRecord>> {
        self.inner.get(id).await
    }
    async fn get_many(&self, ids: &[RecordId]) -> Result<Vec<MemoryRecord>> {
        self.inner.get_many(ids).await
    }
    async fn eligible(&self, filter: &EligibilityFilter) -> Result<Vec<EligibleRecord>> {
        self.log(&filter.scopes);
        self.inner.eligible(filter).await
    }
    async fn key_of(&self, id: &RecordId) -> Result<Option<RecordKey>> {
        self.inner.key_of(id).await
    }
    async fn active_by_key(
        &self,
        scopes: &[Scope],
        entity: &EntityId,
        attribute: &str,
    ) -> Result<Vec<KeyedRecord>> {
        self.log(scopes);
        self.inner.active_by_key(scopes, entity, attribute).await
    }
    async fn active_by_subject(
        &self,
        scopes: &[Scope],
        entity: &EntityId,
        limit: usize,
    ) -> Result<Vec<KeyedRecord>> {
        self.log(scopes);
        self.inner.active_by_subject(scopes, entity, limit).await
    }
    async fn links_of(&self, id: &RecordId) -> Result<Vec<RecordEntityLink>> {
        self.inner.links_of(id).await
    }
    async fn linked_records(&self, entities: &[EntityId]) -> Result<Vec<LinkedRecord>> {
        self.inner.linked_records(entities).await
    }
    async fn successors(&self, id: &RecordId) -> Result<Vec<RecordId>> {
        self.inner.successors(id).await
    }
    async fn conflicts_of(&self, id: &RecordId) -> Result<Vec<ConflictLink>> {
        self.inner.conflicts_of(id).await
    }
    async fn events_of(&self, id: &RecordId) -> Result<Vec<AuditEvent>> {
        self.inner.events_of(id).await
    }
    async fn compatible_embeddings(&self, model: &str, version: u32, dims: u32) -> Result<EmbeddingScan> {
        self.inner.compatible_embeddings(model, version, dims).await
    }
}

#[async_trait]
impl EntityStore for Spy {
    async fn create_entity(&self, entity: Entity, aliases: Vec<Name>, event: AuditEvent) -> Result<()> {
        self.inner.create_entity(entity, aliases, event).await
    }
    async fn entity(&self, id: &EntityId) -> Result<Option<Entity>> {
        self.inner.entity(id).await
    }
    async fn aliases(&self, id: &EntityId) -> Result<Vec<Name>> {
        self.inner.aliases(id).await
    }
    async fn add_alias(&self, id: &EntityId, alias: Name, event: AuditEvent) -> Result<()> {
        self.inner.add_alias(id, alias, event).await
    }
    async fn remove_alias(&self, id: &EntityId, alias: &Name, event: AuditEvent) -> Result<()> {
        self.inner.remove_alias(id, alias, event).await
    }
    async fn merge(&self, from: &EntityId, into: &EntityId, event: AuditEvent) -> Result<()> {
        self.inner.merge(from, into, event).await
    }
    async fn find_by_name(&self, scopes: &[Scope], name: &Name) -> Result<Vec<Entity>> {
        self.log(scopes);
        self.inner.find_by_name(scopes, name).await
    }
    async fn find_by_names(&self, scopes: &[Scope], names: &[Name]) -> Result<Vec<(String, Entity)>> {
        self.log(scopes);
        self.inner.find_by_names(scopes, names).await
    }
}
