//! What callers ask the write path to do, and what it answers.

use retold_domain::{
    Attribute, Confidence, Content, Context, EntityId, EntityKind, Evidence, MemoryType, Name, RecordId,
    Scope, SourceKind, SourceRef, Status, Tag, Timestamp, WriteReceipt,
};

/// An entity named by id, or by a name resolved exactly and scope-aware.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRef {
    Id(EntityId),
    /// An unknown name creates a provisional entity of this kind.
    Name {
        name: Name,
        kind: EntityKind,
    },
}

/// `memory_write`, or one extractor candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteRequest {
    pub memory_type: MemoryType,
    pub content: Content,
    pub scope: Scope,
    /// The entity the record is about (its current-fact subject together with `attribute`).
    pub subject: Option<EntityRef>,
    /// With `subject`, the current-fact key of a semantic or procedural record.
    pub attribute: Option<Attribute>,
    /// Other entities the record mentions.
    pub mentions: Vec<EntityRef>,
    pub source_kind: SourceKind,
    pub source_ref: Option<SourceRef>,
    pub evidence: Option<Evidence>,
    /// When it happened (episodic) or applies from; defaults to now.
    pub event_at: Option<Timestamp>,
    /// When it stops being true; must be in the future. A provisional record keeps its TTL
    /// expiry when that comes sooner.
    pub expires_at: Option<Timestamp>,
    /// At most this confidence (the source kind's initial confidence is the ceiling).
    pub confidence: Option<Confidence>,
    pub tags: Vec<Tag>,
    /// What the record was said in (the turn before it): embedded with the content, kept
    /// with the record, never returned as its text.
    pub context: Option<Context>,
}

impl WriteRequest {
    /// What the write path embeds for this request, in one model run: the record's text (its
    /// content and context), then its sentences' (at most `sentence_vectors` of them), as
    /// [`retold_domain::IndexedText`] makes them for a memory.
    pub fn embedded_texts(&self, sentence_vectors: usize) -> Vec<String> {
        retold_domain::IndexedText {
            origin: retold_domain::Origin::Memory,
            speaker: None,
            content: self.content.as_str(),
            context: self.context.as_ref().map(Context::as_str),
        }
        .embedded_texts(sentence_vectors)
    }
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectCode {
    /// The scope is not among the principal's writable scopes.
    ScopeNotWritable,
    /// A name matched several entities; they are never merged by guess.
    EntityAmbiguous { name: String, candidates: Vec<EntityId> },
}

impl RejectCode {
    /// The stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ScopeNotWritable => "scope_not_writable",
            Self::EntityAmbiguous { .. } => "entity_ambiguous",
        }
    }
}

/// The outcome of a write: one of the five the seed names, with ids and the reason.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOutcome {
    Created { id: RecordId, reason: String },
    Reinforced { id: RecordId, reason: String },
    Superseding { id: RecordId, superseded: Vec<RecordId>, reason: String },
    Conflicting { id: RecordId, conflicts_with: RecordId, reason: String },
    Rejected { code: RejectCode, reason: String },
}

impl WriteOutcome {
    /// The stable outcome name.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Created { .. } => "created",
            Self::Reinforced { .. } => "reinforced",
            Self::Superseding { .. } => "superseding",
            Self::Conflicting { .. } => "conflicting",
            Self::Rejected { .. } => "rejected",
        }
    }

    /// The audit event that records this outcome on its record.
    pub fn event_kind(&self) -> retold_domain::EventKind {
        use retold_domain::EventKind;
        match self {
            Self::Created { .. } => EventKind::RecordCreated,
            Self::Reinforced { .. } => EventKind::RecordReinforced,
            Self::Superseding { .. } => EventKind::RecordSuperseding,
            Self::Conflicting { .. } => EventKind::RecordConflicting,
            Self::Rejected { .. } => EventKind::WriteRejected,
        }
    }

    /// The record the outcome is about, when there is one.
    pub fn record_id(&self) -> Option<&RecordId> {
        match self {
            Self::Created { id, .. }
            | Self::Reinforced { id, .. }
            | Self::Superseding { id, .. }
            | Self::Conflicting { id, .. } => Some(id),
            Self::Rejected { .. } => None,
        }
    }
}

/// What a keyed write (an extraction candidate) did: written by this attempt, or found
/// written by an earlier one, in which case nothing was written again.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyedWrite {
    Written(WriteOutcome),
    Earlier(WriteReceipt),
}

impl KeyedWrite {
    /// The stable outcome name: the write's, or `already_written`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Written(outcome) => outcome.kind(),
            Self::Earlier(_) => "already_written",
        }
    }

    /// The record written now or by the earlier attempt.
    pub fn record_id(&self) -> Option<&RecordId> {
        match self {
            Self::Written(outcome) => outcome.record_id(),
            Self::Earlier(receipt) => Some(&receipt.record_id),
        }
    }
}

/// `memory_revise`.
#[derive(Debug, Clone, PartialEq)]
pub enum ReviseAction {
    /// Confirm a provisional (or reactivate an expired) record.
    Confirm { id: RecordId },
    /// Replace a record with a new one, whatever the source ranks.
    Supersede { id: RecordId, replacement: Box<WriteRequest> },
    /// Expire a record now.
    Expire { id: RecordId },
    /// Merge entity `from` into `into`.
    MergeEntities { from: EntityId, into: EntityId },
}

/// The outcome of `memory_revise` or `memory_forget`.
#[derive(Debug, Clone, PartialEq)]
pub enum RevisionOutcome {
    /// Confirm, expire or forget changed a record's status.
    StatusChanged { id: RecordId, from: Status, to: Status },
    /// A supersede revise wrote a replacement.
    Written(WriteOutcome),
    /// Two entities were merged.
    EntitiesMerged { from: EntityId, into: EntityId },
}

impl From<WriteOutcome> for RevisionOutcome {
    fn from(outcome: WriteOutcome) -> Self {
        Self::Written(outcome)
    }
}
