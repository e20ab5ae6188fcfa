//! What an operator browses (the inspector, through the admin API): pages of records,
//! sessions, search traces, conflicts and operation events, newest first, filtered by the
//! store so a page costs the same at 50k records as at 50.

use async_trait::async_trait;

use crate::AuditEvent;
use crate::error::Result;
use crate::ids::{AgentId, SearchId, UserId};
use crate::ports::ConflictLink;
use crate::record::{MemoryRecord, Status, Timestamp};
use crate::scope::Scope;
use crate::session::Session;

/// One page: at most `limit` items after skipping `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: usize,
    pub offset: usize,
}

/// Which records to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBrowse {
    pub scope: Option<Scope>,
    pub status: Option<Status>,
    /// Words the record holds (each word, or the start of one, in its content, subject or
    /// entity aliases: search as you type), or its exact id.
    pub text: Option<String>,
    pub page: PageRequest,
}

/// One search of the search log, summarised for a list.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSummary {
    pub id: SearchId,
    pub at: Timestamp,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub query: String,
    pub eligible_count: u64,
    pub results: u64,
    pub total_us: u64,
}

/// A session and how many turns it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub session: Session,
    pub turns: u32,
}

/// Counts stop here: a page says "more than this many" past it, so no count scans a big
/// store.
pub const COUNT_CAP: u64 = 10_000;

/// Read-only browsing for operators.
#[async_trait]
pub trait Inspection: Send + Sync {
    /// Records matching `filter`, newest first, and how many match in all (at most
    /// [`COUNT_CAP`]; more are counted as `COUNT_CAP + 1`).
    async fn browse_records(&self, filter: &RecordBrowse) -> Result<(Vec<MemoryRecord>, u64)>;
    /// Searches of the search log, newest first.
    async fn recent_searches(&self, page: PageRequest) -> Result<Vec<SearchSummary>>;
    /// Sessions, newest first.
    async fn recent_sessions(&self, page: PageRequest) -> Result<Vec<SessionSummary>>;
    /// Conflicts, newest first.
    async fn conflicts(&self, page: PageRequest) -> Result<Vec<ConflictLink>>;
    /// The latest audit events whose kind starts with `prefix` (such as `ops.`), newest first.
    async fn latest_events(&self, prefix: &str, limit: usize) -> Result<Vec<AuditEvent>>;
}
