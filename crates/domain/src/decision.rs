//! The orchestrator's record of one turn (seed section 1, "Utility-aware orchestrator"): what
//! the draft lacked, what was searched and admitted, and whether the draft was kept.

use crate::ids::{AgentId, DecisionId, RecordId, SearchId, SessionId, UserId};
use crate::record::Timestamp;

/// Why a gap was planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapKind {
    /// The draft hedges ("I'm not sure", "you haven't told me").
    Hedge,
    /// The draft holds a placeholder (`[your editor]`, `<name>`, `TBD`).
    Placeholder,
    /// The turn asks about the principal's own facts, which the inventory holds.
    Inventory,
    /// A hosted planner named the gap.
    Planned,
}

impl GapKind {
    pub const ALL: [GapKind; 4] = [Self::Hedge, Self::Placeholder, Self::Inventory, Self::Planned];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hedge => "hedge",
            Self::Placeholder => "placeholder",
            Self::Inventory => "inventory",
            Self::Planned => "planned",
        }
    }

    pub fn parse(value: &str) -> crate::Result<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "gap.kind",
            reason: format!("{value:?} is not one of hedge, placeholder, inventory, planned"),
        })
    }
}

/// A fact the draft lacks or guesses, and the search that should find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub kind: GapKind,
    /// The search query for this gap.
    pub query: String,
    /// What in the turn or draft showed the gap (the hedge, the placeholder, the category).
    pub evidence: String,
}

/// Why the draft was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptReason {
    /// The planner found nothing the draft lacks.
    NoGaps,
    /// Searches ran, and no record passed admission.
    NothingAdmitted,
    /// Records were admitted, but the bundle has no recorded fitness result, so it may not
    /// regenerate.
    UnfitBundle,
    /// A stage failed or ran out of time; the text says which and why.
    Failed(String),
}

impl KeptReason {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoGaps => "no_gaps",
            Self::NothingAdmitted => "nothing_admitted",
            Self::UnfitBundle => "unfit_bundle",
            Self::Failed(_) => "failed",
        }
    }
}

/// What happened to the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    DraftKept(KeptReason),
    /// A fit bundle regenerated the answer with the admitted records.
    Regenerated,
}

impl Disposition {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::DraftKept(_) => "draft_kept",
            Self::Regenerated => "regenerated",
        }
    }
}

/// Milliseconds spent per stage (zero for a stage that did not run).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecisionTimings {
    pub plan_ms: f64,
    pub retrieve_ms: f64,
    pub admit_ms: f64,
    pub regenerate_ms: f64,
    pub total_ms: f64,
}

/// One host-issued memory decision for a turn, persisted.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnMemoryDecision {
    pub id: DecisionId,
    pub session_id: SessionId,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub created_at: Timestamp,
    /// The bundle (gap policy, admission policy, model) that decided.
    pub bundle_id: String,
    pub disposition: Disposition,
    pub gaps: Vec<Gap>,
    /// One search per gap that ran, in gap order; each explains itself in the search log.
    pub searches: Vec<SearchId>,
    /// Records admitted into the regeneration, in admission order.
    pub admitted: Vec<RecordId>,
    pub timings: DecisionTimings,
    /// Hosted-model tokens (planner and regeneration), input and output.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The regenerated answer; only with `Disposition::Regenerated`.
    pub answer: Option<String>,
}
