//! The eligible-ID set every channel searches within (seed: policy service and retriever).

use async_trait::async_trait;

use super::{EligibleRecord, RecordKey};
use crate::error::Result;
use crate::ids::{RecordId, SessionId};
use crate::record::{MemoryRecord, MemoryType, Origin, Status, Timestamp};
use crate::scope::Scope;

/// Which records a search may see (seed section 5, step 3).
#[derive(Debug, Clone, PartialEq)]
pub struct EligibilityFilter {
    /// Readable scopes of the principal; empty means nothing is eligible.
    pub scopes: Vec<Scope>,
    /// Lifecycle states: provisional + confirmed by default; history adds superseded.
    pub statuses: Vec<Status>,
    /// Records whose `expires_at` is at or before `now` are excluded.
    pub now: Timestamp,
    /// Only these types; `None` means all.
    pub types: Option<Vec<MemoryType>>,
    /// Inclusive lower bound on `event_at`; records without `event_at` are then excluded.
    pub event_from: Option<Timestamp>,
    /// Exclusive upper bound on `event_at`; records without `event_at` are then excluded.
    pub event_to: Option<Timestamp>,
    /// Also the lower-trust side of an unresolved conflict: a provisional record that a
    /// conflict link names as `conflicting_id`. Seed section 7: the confirmed record stays the
    /// normal result, the conflicting candidate is for inspection; off by default.
    pub include_conflicts: bool,
    /// Only records of these origins; `None` means both.
    pub origins: Option<Vec<Origin>>,
    /// Turn records of this session are left out: a search made inside a session does not
    /// get back the conversation its caller is having.
    pub excluded_session: Option<SessionId>,
}

impl EligibilityFilter {
    /// The default statuses: provisional and confirmed, plus superseded with history.
    pub fn statuses_for(include_history: bool) -> Vec<Status> {
        let mut statuses = vec![Status::Provisional, Status::Confirmed];
        if include_history {
            statuses.push(Status::Superseded);
        }
        statuses
    }
}

/// The eligibility filter (seed section 5, step 3).
#[async_trait]
pub trait EligibilityIndex: Send + Sync {
    /// Records that match the filter, ordered by key.
    async fn eligible(&self, filter: &EligibilityFilter) -> Result<Vec<EligibleRecord>>;

    /// The keys of `eligible(filter)`, in the same order: what search needs (it names records
    /// by key until the fused few are read), so an implementation may skip the ids.
    async fn eligible_keys(&self, filter: &EligibilityFilter) -> Result<Vec<RecordKey>> {
        Ok(self.eligible(filter).await?.into_iter().map(|e| e.key).collect())
    }
}

/// What the eligibility filter reads of one record (seed section 5, step 3), for a derived
/// in-memory copy of the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct EligibilityRow {
    pub key: RecordKey,
    pub id: RecordId,
    pub scope: Scope,
    pub status: Status,
    pub memory_type: MemoryType,
    pub expires_at: Option<Timestamp>,
    pub event_at: Option<Timestamp>,
    /// The record's version: a change is only applied over an older one.
    pub version: u32,
    /// A conflict link names it as the lower-trust side (links are never removed).
    pub conflict_loser: bool,
    pub origin: Origin,
    /// The session a turn record was said in (its `source_ref`); `None` for other records.
    pub session: Option<SessionId>,
}

impl EligibilityRow {
    /// The row of a record stored under `key`.
    pub fn of(key: RecordKey, record: &MemoryRecord) -> Self {
        Self {
            key,
            id: record.id.clone(),
            scope: record.scope.clone(),
            status: record.status,
            memory_type: record.memory_type,
            expires_at: record.expires_at,
            event_at: record.event_at,
            version: record.version,
            conflict_loser: false,
            origin: record.origin,
            session: turn_session(record.origin, record.source_ref.as_ref()),
        }
    }
}

/// The session a turn record was said in: its `source_ref`'s, for a turn record only.
pub fn turn_session(origin: Origin, source_ref: Option<&crate::source::SourceRef>) -> Option<SessionId> {
    match origin {
        Origin::Turn => source_ref.and_then(|r| r.session_turn()).map(|(session, _)| session),
        Origin::Memory => None,
    }
}

/// The boot scan that rebuilds a derived eligibility filter.
#[async_trait]
pub trait EligibilitySource: Send + Sync {
    /// Every record's eligibility fields, ordered by key.
    async fn eligibility_rows(&self) -> Result<Vec<EligibilityRow>>;
}
