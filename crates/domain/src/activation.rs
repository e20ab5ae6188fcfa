//! Activation and the profile (seed section 1, "Activation service and profile assembler"):
//! which records are ambient, and the bounded profile a session starts with.

use crate::ids::{RecordId, SessionId};
use crate::record::Timestamp;

/// What a category's policy does with a candidate record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ambience {
    /// Ambient in every session of the principal.
    Promote,
    /// Ambient only in a session its condition holds for (the session's project or agent, or a
    /// tag the host passes, as the record's tags name them).
    Conditional,
    /// Never ambient until a person approves it in the review queue.
    Review,
}

impl Ambience {
    pub const ALL: [Ambience; 3] = [Self::Promote, Self::Conditional, Self::Review];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Promote => "promote",
            Self::Conditional => "conditional",
            Self::Review => "review",
        }
    }

    pub fn parse(value: &str) -> crate::Result<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "policy",
            reason: format!("{value:?} is not one of promote, conditional, review"),
        })
    }
}

/// A person's answer to a `review` decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewVerdict {
    Approved,
    Rejected,
}

impl ReviewVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Rejected => "rejected",
        }
    }

    pub fn parse(value: &str) -> crate::Result<Self> {
        match value {
            "approved" => Ok(Self::Approved),
            "rejected" => Ok(Self::Rejected),
            other => Err(crate::DomainError::Invalid { field: "verdict", reason: format!("{other:?}") }),
        }
    }
}

/// The activation decision about one record, as stored and audited.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivationDecision {
    pub record_id: RecordId,
    /// The category it fell in, and the rule that put it there (`attribute ~ style`,
    /// `tag health`, or `default`).
    pub category: String,
    pub rule: String,
    pub ambience: Ambience,
    /// For a conditional record: the conditions from its tags (`project:p`, `agent:a`, or a tag).
    pub conditions: Vec<String>,
    /// Why it is a candidate: its source kind and evidence.
    pub basis: String,
    pub decided_at: Timestamp,
    /// A person's answer, for a `review` decision.
    pub verdict: Option<ReviewVerdict>,
}

impl ActivationDecision {
    /// Whether the decision keeps the same meaning as `other` (an unchanged re-evaluation is
    /// not audited again).
    pub fn same_as(&self, other: &ActivationDecision) -> bool {
        self.record_id == other.record_id
            && self.category == other.category
            && self.rule == other.rule
            && self.ambience == other.ambience
            && self.conditions == other.conditions
    }
}

/// One record inside a profile, with why it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    pub record_id: RecordId,
    pub category: String,
    /// `promote`, `conditional: project:retold`, `approved in review`.
    pub why: String,
}

/// The immutable profile a session starts with: rendered text, the records it holds, and a
/// hash of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileBlock {
    pub session_id: SessionId,
    pub created_at: Timestamp,
    pub text: String,
    pub entries: Vec<ProfileEntry>,
    /// Estimated tokens of `text`, within the configured budget.
    pub tokens: u32,
    /// Candidates left out by the budget (whole records only).
    pub cut: u32,
    /// SHA-256 of `text`, hex.
    pub content_hash: String,
}
