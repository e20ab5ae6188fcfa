//! The write path's unit of change and its guards (seed: ingestor), receipts and idempotency keys.

use async_trait::async_trait;

use super::{ConflictLink, EligibleRecord, EmbeddingRow, NewEntity};
use crate::audit::{AuditEvent, EventKind};
use crate::entity::RecordEntityLink;
use crate::error::Result;
use crate::ids::{AgentId, EntityId, RecordId, SessionId, UserId};
use crate::record::{MemoryRecord, Timestamp};
use crate::scope::Scope;
use crate::session::SessionTurn;

/// A change to an existing record, applied only if the stored row still has `expected_version`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordUpdate {
    /// The full record as it should be stored; its `version` must be `expected_version + 1`.
    pub record: MemoryRecord,
    pub expected_version: u32,
}

/// A precondition on a current fact: inside the transaction, the active records of this key
/// in this scope must be exactly `expected`, or the whole unit fails with
/// `DomainError::Conflict` (the writer then re-reads and decides again). This is what keeps
/// concurrent writers of one key from both creating a current record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGuard {
    pub scope: Scope,
    pub subject_entity_id: EntityId,
    pub attribute: String,
    /// Sorted ids of the provisional and confirmed records the writer decided against.
    pub expected: Vec<RecordId>,
}

/// A deterministic key of a write that a retried run may attempt again (an extraction
/// candidate: its session and a hash of what it writes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WriteKey {
    pub session: SessionId,
    /// Hex digest of the write, stable across processes and releases.
    pub digest: String,
}

/// What a keyed write did, stored with it in the same transaction, so a later attempt finds
/// it and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReceipt {
    pub key: WriteKey,
    /// The audit event the write recorded on its record (created, reinforced, superseding,
    /// conflicting).
    pub outcome: EventKind,
    /// The record it created or reinforced.
    pub record_id: RecordId,
    pub at: Timestamp,
}

/// Everything one write changes, applied in one transaction or not at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteUnit {
    /// Preconditions checked first.
    pub guards: Vec<KeyGuard>,
    /// Entities created first, so the records below may link to them.
    pub entities: Vec<NewEntity>,
    /// New records, each with its FTS row written alongside.
    pub inserts: Vec<MemoryRecord>,
    /// Changes to existing records (status, confidence, expiry, reinforcement, tags; content
    /// and key never change). A stale `expected_version` fails the whole unit with
    /// `DomainError::Conflict`. An update to `deleted` removes the record's FTS row.
    pub updates: Vec<RecordUpdate>,
    /// Entity links of the inserted records.
    pub links: Vec<RecordEntityLink>,
    /// Embeddings of the inserted records.
    pub embeddings: Vec<EmbeddingRow>,
    /// Conflict links between records.
    pub conflicts: Vec<ConflictLink>,
    /// Audit events describing the change.
    pub events: Vec<AuditEvent>,
    /// The receipt of a keyed write. A receipt already stored for the same key fails the
    /// whole unit with `DomainError::Contention` (a concurrent attempt wrote it; reading again
    /// finds its receipt).
    pub receipt: Option<WriteReceipt>,
    /// A session turn appended with the records kept from it (turn memory), first: a turn
    /// number taken meanwhile fails the whole unit with `DomainError::Contention`, an ended
    /// or missing session as [`TurnBuffer::append_turn`] refuses it.
    pub turn: Option<SessionTurn>,
}

/// Applies write units: the only way records, links, FTS rows, embeddings and conflicts change.
#[async_trait]
pub trait RecordWriter: Send + Sync {
    /// Apply a write unit atomically; returns the keys given to the inserted records, in order.
    /// A stale version, a moved key guard or an entity name created meanwhile fail the whole
    /// unit with `DomainError::Contention`.
    async fn apply(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>>;
}

/// Receipts of keyed writes (extraction candidates), read before a keyed write.
#[async_trait]
pub trait WriteReceipts: Send + Sync {
    /// The receipt of the write with this key, if one committed.
    async fn receipt(&self, key: &WriteKey) -> Result<Option<WriteReceipt>>;
}

/// Where a client's `Idempotency-Key` lives: the host key that sent it and the principal the
/// request asserted. The same key under another host key or principal is another key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// The id of the host key.
    pub host_key: String,
    pub agent_id: AgentId,
    pub user_id: UserId,
    /// The client's key, as sent.
    pub key: String,
}

/// What `IdempotencyKeys::claim_key` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key was free (or expired) and is now held in flight for this request: run it,
    /// then store its answer or release the key.
    Claimed,
    /// A live entry holds the key: the request it was first used for (`fingerprint`) and,
    /// once that request answered, its answer (`None` while it is still in flight).
    Held { fingerprint: String, answer: Option<Vec<u8>> },
}

/// Idempotency keys of client requests and the answers they got, until they expire.
#[async_trait]
pub trait IdempotencyKeys: Send + Sync {
    /// In one transaction: drop every entry that expired at or before `now`, then hold `key`
    /// in flight for the request `fingerprint` until `expires_at`, unless a live entry holds
    /// it already (returned instead). Of concurrent claims of one key, one is `Claimed`.
    async fn claim_key(
        &self,
        key: &IdempotencyKey,
        fingerprint: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<IdempotencyClaim>;
    /// Store the answer of a key held in flight; a retry then gets it.
    async fn store_answer(&self, key: &IdempotencyKey, answer: &[u8]) -> Result<()>;
    /// Give back a key held in flight whose request changed nothing (it failed), so that a
    /// retry runs again.
    async fn release_key(&self, key: &IdempotencyKey) -> Result<()>;
}
