//! Scope-aware entity and alias lookup and changes (seed: entity resolver).

use async_trait::async_trait;

use super::{ConflictLink, RecordUpdate};
use crate::audit::AuditEvent;
use crate::entity::{Entity, Name};
use crate::error::Result;
use crate::ids::EntityId;
use crate::scope::Scope;

/// An entity created as part of a write (an unknown name becomes a provisional entity).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntity {
    pub entity: Entity,
    pub aliases: Vec<Name>,
    /// The writer looked the name up in the entity's scope and found nothing. The store then
    /// refuses the entity with `DomainError::Conflict` if that scope holds the name by now,
    /// so concurrent writers never create the same entity twice. `false` when the writer
    /// cannot read the scope (a write-only grant) and so could not look.
    pub name_was_unknown: bool,
}

/// Entities and aliases as the write path and the entity channel read them.
#[async_trait]
pub trait EntityReader: Send + Sync {
    /// One entity by id.
    async fn entity(&self, id: &EntityId) -> Result<Option<Entity>>;
    /// Aliases of an entity.
    async fn aliases(&self, id: &EntityId) -> Result<Vec<Name>>;
    /// Entities in `scopes` whose canonical name or an alias folds to the same text as `name`.
    async fn find_by_name(&self, scopes: &[Scope], name: &Name) -> Result<Vec<Entity>>;
    /// For each of `names` that resolves in `scopes`: the folded name and the entity.
    async fn find_by_names(&self, scopes: &[Scope], names: &[Name]) -> Result<Vec<(String, Entity)>>;
}

/// Entity changes outside a record write; alias changes rewrite the affected FTS rows in the
/// same transaction.
#[async_trait]
pub trait EntityWriter: Send + Sync {
    /// Create an entity with its aliases.
    async fn create_entity(&self, entity: Entity, aliases: Vec<Name>, event: AuditEvent) -> Result<()>;
    /// Add an alias; every FTS row of a linked record is rewritten.
    async fn add_alias(&self, id: &EntityId, alias: Name, event: AuditEvent) -> Result<()>;
    /// Remove an alias; every FTS row of a linked record is rewritten.
    async fn remove_alias(&self, id: &EntityId, alias: &Name, event: AuditEvent) -> Result<()>;
    /// Merge `from` into `into` in one transaction, all or nothing: `from`'s name and aliases
    /// become aliases of `into`, `from` is marked merged, the links of `relink` move to
    /// `into`, the versioned record changes are applied (a stale version fails the whole
    /// merge with `DomainError::Contention`) and the FTS rows of every changed record are
    /// rewritten. Records outside the merge keep their links and subject; lookups of `into`
    /// still reach them through `merged_into`.
    async fn merge(&self, merge: EntityMerge) -> Result<()>;
}

/// One entity merge with the record changes the write path decided for it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMerge {
    pub from: EntityId,
    pub into: EntityId,
    /// The scopes whose records the merge may touch: their links to `from` move to `into`.
    /// `None` is every scope (the admin).
    pub scopes: Option<Vec<Scope>>,
    /// Versioned record changes (new subject keys, supersessions, reinforcements), applied
    /// like `WriteUnit::updates`; a changed key also rewrites the FTS subject.
    pub updates: Vec<RecordUpdate>,
    /// Conflict links created by the merge.
    pub conflicts: Vec<ConflictLink>,
    pub events: Vec<AuditEvent>,
}
