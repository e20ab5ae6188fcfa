//! A store wrapper that records every scope list a consumer reads records or entities with,
//! over the three ports whose reads take scopes.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use retold_domain::{
    CurrentFacts, EligibilityFilter, EligibilityIndex, EligibleRecord, Entity, EntityId, EntityReader,
    KeyedRecord, Name, Result, Scope,
};
use retold_store_sqlite::SqliteStore;

/// Forwards to the store and logs the scopes of every read.
#[derive(Debug, Clone)]
pub struct Spy {
    pub inner: SqliteStore,
    pub reads: Arc<Mutex<Vec<Vec<Scope>>>>,
}

impl Spy {
    fn log(&self, scopes: &[Scope]) {
        self.reads.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(scopes.to_vec());
    }
}

#[async_trait]
impl EligibilityIndex for Spy {
    async fn eligible(&self, filter: &EligibilityFilter) -> Result<Vec<EligibleRecord>> {
        self.log(&filter.scopes);
        self.inner.eligible(filter).await
    }
}

#[async_trait]
impl CurrentFacts for Spy {
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
    async fn by_subject(&self, scopes: Option<&[Scope]>, entity: &EntityId) -> Result<Vec<KeyedRecord>> {
        if let Some(scopes) = scopes {
            self.log(scopes);
        }
        self.inner.by_subject(scopes, entity).await
    }
}

#[async_trait]
impl EntityReader for Spy {
    async fn entity(&self, id: &EntityId) -> Result<Option<Entity>> {
        self.inner.entity(id).await
    }
    async fn aliases(&self, id: &EntityId) -> Result<Vec<Name>> {
        self.inner.aliases(id).await
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
