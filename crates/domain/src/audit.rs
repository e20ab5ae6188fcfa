//! Audit events: the append-only account of why a memory changed (seed section 13).

use std::collections::BTreeMap;

use crate::error::{DomainError, Result};
use crate::ids::{AgentId, EventId, RecordId};
use crate::record::Timestamp;

/// What an audit event records. The dotted name is the stored and wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    RecordCreated,
    RecordSuperseding,
    RecordConflicting,
    RecordReinforced,
    RecordSuperseded,
    RecordConfirmed,
    RecordExpired,
    RecordForgotten,
    /// A record's subject entity changed because its entity was merged into another.
    RecordResubjected,
    WriteRejected,
    EntityCreated,
    EntityAliasAdded,
    EntityAliasRemoved,
    EntityMerged,
    GrantCreated,
    GrantRevoked,
    SessionStarted,
    SessionEnded,
    ExtractionRun,
    ExtractionFailed,
    /// A record's content was erased (an operation; the record is a tombstone now).
    RecordErased,
    /// An erasure ran: what it covered and what it removed.
    OpsErasure,
    /// Transcript retention deleted old session turns.
    OpsRetention,
    /// Records due for review were flagged into the review queue.
    ReviewFlagged,
    /// A review item was resolved (confirm, expire, forget).
    ReviewResolved,
    /// A re-embedding run staged vectors of another embedding model beside the served ones.
    OpsReembed,
    /// The store switched its embeddings to the staged model.
    OpsModelSwitch,
    /// An activation decision about a record was made or changed (category, rule, policy).
    ActivationDecided,
    /// A record stopped being a candidate (superseded, forgotten, expired): no longer ambient.
    ActivationWithdrawn,
    /// A session's profile was assembled.
    ProfileAssembled,
    /// The orchestrator decided about a turn (disposition, bundle, admitted records).
    DecisionMade,
    /// An expiry run expired records (how many, who ran it).
    OpsExpiry,
    /// A snapshot was taken (file, bytes, whether its check passed).
    OpsSnapshot,
    /// Exported records were restored into this store (how many, the first and last id).
    OpsImport,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [EventKind; 34] = [
        Self::RecordCreated,
        Self::RecordSuperseding,
        Self::RecordConflicting,
        Self::RecordReinforced,
        Self::RecordSuperseded,
        Self::RecordConfirmed,
        Self::RecordExpired,
        Self::RecordForgotten,
        Self::RecordResubjected,
        Self::WriteRejected,
        Self::EntityCreated,
        Self::EntityAliasAdded,
        Self::EntityAliasRemoved,
        Self::EntityMerged,
        Self::GrantCreated,
        Self::GrantRevoked,
        Self::SessionStarted,
        Self::SessionEnded,
        Self::ExtractionRun,
        Self::ExtractionFailed,
        Self::RecordErased,
        Self::OpsErasure,
        Self::OpsRetention,
        Self::ReviewFlagged,
        Self::ReviewResolved,
        Self::OpsReembed,
        Self::OpsModelSwitch,
        Self::ActivationDecided,
        Self::ActivationWithdrawn,
        Self::ProfileAssembled,
        Self::DecisionMade,
        Self::OpsExpiry,
        Self::OpsSnapshot,
        Self::OpsImport,
    ];

    /// The dotted name (`record.created`, `entity.alias_added`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RecordCreated => "record.created",
            Self::RecordSuperseding => "record.superseding",
            Self::RecordConflicting => "record.conflicting",
            Self::RecordReinforced => "record.reinforced",
            Self::RecordSuperseded => "record.superseded",
            Self::RecordConfirmed => "record.confirmed",
            Self::RecordExpired => "record.expired",
            Self::RecordForgotten => "record.forgotten",
            Self::RecordResubjected => "record.resubjected",
            Self::WriteRejected => "write.rejected",
            Self::EntityCreated => "entity.created",
            Self::EntityAliasAdded => "entity.alias_added",
            Self::EntityAliasRemoved => "entity.alias_removed",
            Self::EntityMerged => "entity.merged",
            Self::GrantCreated => "grant.created",
            Self::GrantRevoked => "grant.revoked",
            Self::SessionStarted => "session.started",
            Self::SessionEnded => "session.ended",
            Self::ExtractionRun => "extraction.run",
            Self::ExtractionFailed => "extraction.failed",
            Self::RecordErased => "record.erased",
            Self::OpsErasure => "ops.erasure",
            Self::OpsRetention => "ops.retention",
            Self::ReviewFlagged => "review.flagged",
            Self::ReviewResolved => "review.resolved",
            Self::OpsReembed => "ops.reembed",
            Self::OpsModelSwitch => "ops.model_switch",
            Self::ActivationDecided => "activation.decided",
            Self::ActivationWithdrawn => "activation.withdrawn",
            Self::ProfileAssembled => "profile.assembled",
            Self::DecisionMade => "decision.made",
            Self::OpsExpiry => "ops.expiry",
            Self::OpsSnapshot => "ops.snapshot",
            Self::OpsImport => "ops.import",
        }
    }

    /// Parse a dotted name.
    pub fn parse(text: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| DomainError::invalid("kind", format!("unknown event kind {text:?}")))
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for EventKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for EventKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One append-only event.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    pub id: EventId,
    pub at: Timestamp,
    pub kind: EventKind,
    /// The record the event is about, when there is one.
    pub record_id: Option<RecordId>,
    /// The agent whose request caused the event, when there is one.
    pub actor: Option<AgentId>,
    /// Structured details (scores, reasons, `attribute_aliased_from`, …). Values are text;
    /// the store keeps them as a JSON object.
    pub details: BTreeMap<String, String>,
}
