//! Reading canonical records (seed: SQLite store): by id, by key, their links and the current fact
//! of a key.

use async_trait::async_trait;

use crate::entity::{LinkRole, RecordEntityLink};
use crate::error::Result;
use crate::ids::{EntityId, RecordId};
use crate::record::MemoryRecord;
use crate::scope::Scope;

/// The store's dense numeric handle of a record (SQLite's rowid), stable for the
/// record's life. The vector index and the lexical channel use it to build eligibility
/// masks with array lookups instead of string hashing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKey(pub u64);

/// One eligible record: its key and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EligibleRecord {
    pub key: RecordKey,
    pub id: RecordId,
}

/// A record reached through an entity link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedRecord {
    pub key: RecordKey,
    pub record_id: RecordId,
    pub entity_id: EntityId,
    pub role: LinkRole,
}

/// A record with its store key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedRecord {
    pub key: RecordKey,
    pub record: MemoryRecord,
}

/// A conflict link between two records of the same current fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictLink {
    /// The record that stays the normal result.
    pub record_id: RecordId,
    /// The lower-trust record that contradicts it.
    pub conflicting_id: RecordId,
}

/// Records by id, in any status.
#[async_trait]
pub trait RecordReader: Send + Sync {
    /// One record by id.
    async fn get(&self, id: &RecordId) -> Result<Option<MemoryRecord>>;
    /// The records of these ids that exist, in any order (one round trip).
    async fn get_many(&self, ids: &[RecordId]) -> Result<Vec<MemoryRecord>>;
    /// The key of a record.
    async fn key_of(&self, id: &RecordId) -> Result<Option<RecordKey>>;
}

/// Current-fact reads of the write path (seed section 7).
#[async_trait]
pub trait CurrentFacts: Send + Sync {
    /// Records in the given scopes with this current-fact key and an active status (by
    /// status; the caller decides about expiry dates), ordered by key.
    async fn active_by_key(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        attribute: &str,
    ) -> Result<Vec<KeyedRecord>>;
    /// Active records in the given scopes whose subject is `subject_entity_id`, any attribute,
    /// newest first, at most `limit`.
    async fn active_by_subject(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        limit: usize,
    ) -> Result<Vec<KeyedRecord>>;
    /// Every record (any status) whose subject is `subject_entity_id`, ordered by key: only
    /// in `scopes`, or in every scope when `None` (the admin).
    async fn by_subject(
        &self,
        scopes: Option<&[Scope]>,
        subject_entity_id: &EntityId,
    ) -> Result<Vec<KeyedRecord>>;
}

/// Entity links, supersession and conflict links between records, read in batches.
#[async_trait]
pub trait RecordGraph: Send + Sync {
    /// Entity links of these records.
    async fn links_of(&self, ids: &[RecordId]) -> Result<Vec<RecordEntityLink>>;
    /// Records linked to any of `entities`, with the link role (any status; callers
    /// intersect with their eligible set).
    async fn linked_records(&self, entities: &[EntityId]) -> Result<Vec<LinkedRecord>>;
    /// `(newer, older)` for every record whose `supersedes_id` is one of `ids`.
    async fn successors(&self, ids: &[RecordId]) -> Result<Vec<(RecordId, RecordId)>>;
    /// Conflict links that involve any of these records.
    async fn conflicts_of(&self, ids: &[RecordId]) -> Result<Vec<ConflictLink>>;
}
