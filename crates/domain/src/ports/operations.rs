//! Erasure, re-embedding, expiry, snapshots and retention (seed: operations).

use async_trait::async_trait;

use super::{EmbeddingModelInfo, EmbeddingRow, KeyedRecord, RecordKey};
use crate::audit::AuditEvent;
use crate::error::Result;
use crate::ids::{RecordId, UserId};
use crate::record::{Origin, Timestamp};
use crate::scope::Scope;

/// What an erasure covers (seed section 3: "a controlled erase path removes stored content and
/// embeddings").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErasureTarget {
    /// One record.
    Record(RecordId),
    /// Every record of a user: its `user:<u>` scope and every `agent:*/<u>` private scope, with
    /// the user's session turns and the entities of those scopes.
    User(UserId),
    /// Every record of one scope, with the entities of that scope.
    Scope(Scope),
}

impl std::fmt::Display for ErasureTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Record(id) => write!(f, "record {id}"),
            Self::User(user) => write!(f, "user {user}"),
            Self::Scope(scope) => write!(f, "scope {scope}"),
        }
    }
}

/// What an erasure removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErasureReport {
    /// Records whose content, evidence, source reference and tags are gone (tombstones now).
    pub records: u64,
    pub embeddings: u64,
    /// Search traces that named an erased record (or, for a user, every trace of the user).
    pub traces: u64,
    /// Audit events whose details were blanked (their kind, ids and time stay).
    pub events: u64,
    /// Session turns deleted (user erasure).
    pub turns: u64,
    /// Entities whose names and aliases were removed (user and scope erasure).
    pub entities: u64,
    /// Session profiles that quoted an erased record (or, for a user, every profile of theirs).
    pub profiles: u64,
    /// Orchestrator decisions that admitted an erased record (or, for a user, every decision
    /// of theirs).
    pub decisions: u64,
}

/// Erasure and compaction: removing content for good, not only hiding it.
#[async_trait]
pub trait Erasure: Send + Sync {
    /// Every record the target covers, whatever its status (erased tombstones included).
    async fn erasure_records(&self, target: &ErasureTarget) -> Result<Vec<KeyedRecord>>;

    /// How many vectors (served and staged) `records` hold: what an erasure removes with the
    /// tombstones, reported before they are written.
    async fn vectors_of(&self, records: &[RecordId]) -> Result<u64>;

    /// In one transaction: blank the content, evidence, source reference and tags of
    /// `records` (already `deleted`) and mark them erased; delete their FTS rows, embeddings
    /// and entity links, every search trace that names one of them, and the details of their
    /// audit events; for a user also every trace and session turn of the user; for a user or
    /// a scope the names and aliases of the scope's entities. Records `event`.
    async fn scrub(
        &self,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> Result<ErasureReport>;

    /// Make removed bytes unreadable on disk: merge the FTS index, VACUUM, checkpoint and
    /// truncate the WAL. Returns the store's size in bytes (file, WAL, shared memory) before
    /// and after.
    async fn compact(&self) -> Result<(u64, u64)>;
}

/// How far a re-embedding to a target model has come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReembedCounts {
    /// Records that need a vector (not deleted, not erased).
    pub live: u64,
    /// Of those, records with a staged vector of the target model.
    pub staged: u64,
}

/// A live record to embed again: its key, id and content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReembedItem {
    pub key: RecordKey,
    pub id: RecordId,
    pub content: String,
    pub context: Option<String>,
    /// The speaker the host named (a turn record's label).
    pub speaker: Option<String>,
    pub origin: Origin,
}

impl ReembedItem {
    /// What it is indexed by, as the write path indexed it.
    pub fn indexed(&self) -> crate::record::IndexedText<'_> {
        crate::record::IndexedText {
            origin: self.origin,
            speaker: self.speaker.as_deref(),
            content: &self.content,
            context: self.context.as_deref(),
        }
    }
}

/// Re-embedding with another model: vectors of the target model are staged beside the served
/// ones (the service keeps serving its model) until one switch replaces them all.
#[async_trait]
pub trait Reembedding: Send + Sync {
    /// Every model that stored vectors of live records use, and how many each.
    async fn stored_models(&self) -> Result<Vec<(EmbeddingModelInfo, u64)>>;
    /// Drop staged vectors of any model but `target` (a run towards another model left them).
    async fn discard_other_staged(&self, target: &EmbeddingModelInfo) -> Result<u64>;
    /// Up to `limit` live records, in key order, without a staged vector of `target`.
    async fn unstaged(&self, target: &EmbeddingModelInfo, limit: usize) -> Result<Vec<ReembedItem>>;
    /// Stage vectors in one transaction; a record no longer live is skipped. Returns the rows
    /// written.
    async fn stage(&self, rows: &[EmbeddingRow]) -> Result<u64>;
    /// Live records, and how many of them have a staged vector of `target`.
    async fn reembed_counts(&self, target: &EmbeddingModelInfo) -> Result<ReembedCounts>;
    /// In one transaction: unless a live record lacks a staged vector of `target` (then
    /// `DomainError::Conflict` and nothing changes), replace every stored vector with the
    /// staged ones, clear the staging rows, and record `event`. Returns the vectors switched.
    async fn switch_embeddings(&self, target: &EmbeddingModelInfo, event: AuditEvent) -> Result<u64>;
}

/// Records whose time ran out (seed section 3: expiry moves them to `expired`; until then the
/// eligibility filter already hides them).
#[async_trait]
pub trait ExpiryIndex: Send + Sync {
    /// Up to `limit` provisional or confirmed records whose `expires_at` is at or before `now`,
    /// oldest expiry first.
    async fn due_to_expire(&self, now: Timestamp, limit: usize) -> Result<Vec<KeyedRecord>>;
}

/// A consistency check of a store (seed section 1, operations: "snapshots").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreCheck {
    /// SQLite's `integrity_check`: `ok`, or what it found.
    pub integrity: String,
    /// Records that are neither deleted nor erased.
    pub live: u64,
    /// Live records without their FTS row, and FTS rows without a live record.
    pub missing_fts: u64,
    pub orphan_fts: u64,
    /// Live records without an embedding, and embeddings of records that are gone.
    pub missing_embeddings: u64,
    pub orphan_embeddings: u64,
}

impl StoreCheck {
    /// Whether the store is whole: the index can be rebuilt from it and search finds every
    /// live record through both channels.
    pub fn is_ok(&self) -> bool {
        self.integrity == "ok"
            && self.missing_fts == 0
            && self.orphan_fts == 0
            && self.missing_embeddings == 0
            && self.orphan_embeddings == 0
    }
}

/// Online snapshots and checks.
#[async_trait]
pub trait Snapshots: Send + Sync {
    /// Write a consistent copy of the store to `dest` (a new file) while writes continue;
    /// returns its size in bytes.
    async fn snapshot(&self, dest: &std::path::Path) -> Result<u64>;
    /// Check the store.
    async fn verify(&self) -> Result<StoreCheck>;
    /// Check another database file (a snapshot), opened read-only.
    async fn verify_file(&self, path: &std::path::Path) -> Result<StoreCheck>;
    /// How many of `records` the snapshot at `path` still holds content of.
    async fn snapshot_holds(&self, path: &std::path::Path, records: &[RecordId]) -> Result<u64>;
    /// Erase `records` inside the snapshot at `path` too (they become deleted tombstones
    /// there, scrubbed like [`Erasure::scrub`] with `event`, then compacted).
    async fn rewrite_snapshot(
        &self,
        path: &std::path::Path,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> Result<()>;
}

/// What a transcript-retention run removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// Sessions that lost turns, and the turns deleted.
    pub sessions: u64,
    pub turns: u64,
    /// Sessions with old turns left alone because their extraction has not run.
    pub skipped_sessions: u64,
}

/// Retention: neither the session buffer nor the search log is kept forever.
#[async_trait]
pub trait Retention: Send + Sync {
    /// Delete the search traces written before `before` (with those still waiting to be
    /// written); a dry run only counts. Returns how many.
    async fn purge_search_traces(&self, before: Timestamp, dry_run: bool) -> Result<u64>;
    /// Delete turns created before `before`, in sessions whose extraction finished (every
    /// session with `force`). A dry run only counts. Records `event` when it deletes.
    async fn purge_turns(
        &self,
        before: Timestamp,
        force: bool,
        dry_run: bool,
        event: AuditEvent,
    ) -> Result<RetentionReport>;
}
