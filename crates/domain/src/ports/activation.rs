//! Activation decisions and the review queue they share with operations (seed: activation service).

use async_trait::async_trait;

use crate::audit::AuditEvent;
use crate::error::Result;
use crate::ids::{RecordId, SessionId};
use crate::record::Timestamp;
use crate::scope::Scope;

/// Activation decisions and session profiles.
#[async_trait]
pub trait ActivationStore: Send + Sync {
    /// The stored decisions about records in `scopes`.
    async fn decisions_in(&self, scopes: &[Scope]) -> Result<Vec<crate::ActivationDecision>>;
    /// In one transaction: store `changed` decisions (a changed decision loses an earlier
    /// verdict), delete the decisions of `withdrawn` records, open `reviews` (one open item
    /// per record and reason), and append `events`.
    async fn record_decisions(
        &self,
        changed: &[crate::ActivationDecision],
        withdrawn: &[RecordId],
        reviews: &[ReviewItem],
        events: Vec<AuditEvent>,
    ) -> Result<()>;
    /// A person's verdict on a record's `review` decision.
    async fn set_verdict(&self, record: &RecordId, verdict: crate::ReviewVerdict) -> Result<()>;
    /// Store a session's profile with `event`; a second profile for the same session is a
    /// `DomainError::Conflict` (a profile never changes).
    async fn put_profile(&self, profile: &crate::ProfileBlock, event: AuditEvent) -> Result<()>;
    async fn profile(&self, session: &SessionId) -> Result<Option<crate::ProfileBlock>>;
}

/// Why a record waits for a person's look (seed section 1, operations: due-review flagging).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewReason {
    /// A provisional record whose expiry is near: confirm it or let it go.
    ExpiringProvisional,
    /// A provisional record on the losing side of a conflict with a record still active.
    UnresolvedConflict,
    /// A confirmed record of low confidence that nothing reinforced for long.
    StaleLowConfidence,
    /// A record whose category policy says `review` before it may be ambient (activation).
    Activation,
}

impl ReviewReason {
    pub const ALL: [ReviewReason; 4] =
        [Self::ExpiringProvisional, Self::UnresolvedConflict, Self::StaleLowConfidence, Self::Activation];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExpiringProvisional => "expiring_provisional",
            Self::UnresolvedConflict => "unresolved_conflict",
            Self::StaleLowConfidence => "stale_low_confidence",
            Self::Activation => "activation",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "reason",
            reason: format!("unknown review reason {value:?}"),
        })
    }
}

/// What a person decided about a flagged record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewAction {
    /// Keep it: confirmed, its expiry cleared.
    Confirm,
    /// Let it go: expired.
    Expire,
    /// Remove it: deleted.
    Forget,
    /// Activation: it may be ambient (its decision becomes promote).
    Approve,
    /// Activation: never ambient (the record itself stays searchable).
    Reject,
}

impl ReviewAction {
    pub const ALL: [ReviewAction; 5] =
        [Self::Confirm, Self::Expire, Self::Forget, Self::Approve, Self::Reject];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirm => "confirm",
            Self::Expire => "expire",
            Self::Forget => "forget",
            Self::Approve => "approve",
            Self::Reject => "reject",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "action",
            reason: format!("{value:?} is not one of confirm, expire, forget"),
        })
    }
}

/// An item of the review queue.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewItem {
    pub id: crate::ReviewId,
    pub record_id: RecordId,
    pub reason: ReviewReason,
    pub flagged_at: Timestamp,
    /// When and how it was resolved; open while `None`.
    pub resolved: Option<(Timestamp, ReviewAction)>,
}

/// What makes a record due for review.
#[derive(Debug, Clone, PartialEq)]
pub struct DueReviewRules {
    pub now: Timestamp,
    /// Provisional records expiring after `now` and at or before this.
    pub expiring_before: Timestamp,
    /// Confirmed records below this confidence …
    pub low_confidence_below: f64,
    /// … last created or reinforced before this.
    pub stale_before: Timestamp,
}

/// The review queue (shared with activation's review decisions).
#[async_trait]
pub trait ReviewQueue: Send + Sync {
    /// Records the rules find, each with its reason, that have no open review for it.
    async fn due_for_review(&self, rules: &DueReviewRules) -> Result<Vec<(RecordId, ReviewReason)>>;
    /// Add items (one already open for the same record and reason is skipped); records
    /// `event` with them. Returns how many were added.
    async fn add_reviews(&self, items: &[ReviewItem], event: AuditEvent) -> Result<u64>;
    /// Items, newest first; only open ones with `open_only`.
    async fn reviews(&self, open_only: bool, limit: usize) -> Result<Vec<ReviewItem>>;
    async fn review(&self, id: &crate::ReviewId) -> Result<Option<ReviewItem>>;
    /// Mark an open item resolved; `DomainError::Conflict` when it is resolved already.
    async fn resolve_review(
        &self,
        id: &crate::ReviewId,
        action: ReviewAction,
        at: Timestamp,
        event: AuditEvent,
    ) -> Result<()>;
}
