//! Where a memory came from, and what that source is worth (seed section 6).

use std::fmt;

use crate::error::{DomainError, Result};
use crate::ids::SessionId;
use crate::record::{Confidence, Status};

/// The five source kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    UserStatement,
    System,
    ToolResult,
    SessionSummary,
    AgentInference,
}

impl SourceKind {
    /// All kinds, highest rank first.
    pub const ALL: [SourceKind; 5] =
        [Self::UserStatement, Self::System, Self::ToolResult, Self::SessionSummary, Self::AgentInference];

    /// Source rank: a higher rank may supersede a lower one.
    pub fn rank(self) -> u8 {
        match self {
            Self::UserStatement => 4,
            Self::System => 3,
            Self::ToolResult | Self::SessionSummary => 2,
            Self::AgentInference => 1,
        }
    }

    /// Confidence a new record from this source starts with.
    pub fn initial_confidence(self) -> Confidence {
        let value = match self {
            Self::UserStatement => 0.95,
            Self::System => 0.90,
            Self::ToolResult => 0.85,
            Self::SessionSummary => 0.80,
            Self::AgentInference => 0.60,
        };
        Confidence::new(value).expect("table values lie in [0, 1]")
    }

    /// Status a new record from this source starts with.
    pub fn initial_status(self) -> Status {
        match self {
            Self::UserStatement | Self::System | Self::ToolResult | Self::SessionSummary => Status::Confirmed,
            Self::AgentInference => Status::Provisional,
        }
    }

    /// Whether a claim of this kind must cite evidence verbatim from a session turn
    /// and pass the entailment check.
    pub fn requires_evidence_check(self) -> bool {
        match self {
            Self::UserStatement | Self::ToolResult => true,
            Self::System | Self::SessionSummary | Self::AgentInference => false,
        }
    }

    /// The stable name used in storage and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserStatement => "user_statement",
            Self::System => "system",
            Self::ToolResult => "tool_result",
            Self::SessionSummary => "session_summary",
            Self::AgentInference => "agent_inference",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value).ok_or_else(|| {
            DomainError::invalid(
                "source_kind",
                format!(
                    "{value:?} is not one of user_statement, system, tool_result, session_summary, agent_inference"
                ),
            )
        })
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Longest source reference accepted.
pub const MAX_SOURCE_REF_LEN: usize = 512;

/// A reference to what supplied a memory: `session:<id><turn:N>` (one turn), `session:<id>`
/// (a whole session, as a session summary cites it), `tool:<name>`, or free text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceRef(String);

impl SourceRef {
    /// Parse and validate. A value that starts with `session:` must be a well-formed session or
    /// turn reference.
    pub fn new(value: impl Into<String>) -> Result<Self> {
        let value = value.into();
        if value.trim().is_empty() {
            return Err(DomainError::invalid("source_ref", "must not be empty"));
        }
        if value.len() > MAX_SOURCE_REF_LEN {
            return Err(DomainError::invalid(
                "source_ref",
                format!("longer than {MAX_SOURCE_REF_LEN} bytes"),
            ));
        }
        if value.chars().any(char::is_control) {
            return Err(DomainError::invalid("source_ref", "contains a control character"));
        }
        let this = Self(value);
        if this.0.starts_with("session:") && this.session().is_none() {
            return Err(DomainError::invalid(
                "source_ref",
                format!(
                    "{:?} is not of the form session:<session_id> or session:<session_id><turn:N>",
                    this.0
                ),
            ));
        }
        Ok(this)
    }

    /// The reference to turn `turn` of `session`: `session:<id><turn:N>`.
    pub fn session_turn_ref(session: &SessionId, turn: u32) -> Self {
        Self(format!("session:{session}<turn:{turn}>"))
    }

    /// What every reference to one of `session`'s turns starts with: `session:<id><turn:`.
    pub fn session_prefix(session: &SessionId) -> String {
        format!("session:{session}<turn:")
    }

    /// The reference to a whole session: `session:<id>`.
    pub fn session_ref(session: &SessionId) -> Self {
        Self(format!("session:{session}"))
    }

    /// The session this cites, whether one turn or the whole session.
    pub fn session(&self) -> Option<SessionId> {
        match self.session_turn() {
            Some((session, _)) => Some(session),
            None => {
                let rest = self.0.strip_prefix("session:")?;
                if rest.contains('<') {
                    return None;
                }
                SessionId::new(rest).ok()
            }
        }
    }

    /// The session and turn number when this cites a session turn.
    pub fn session_turn(&self) -> Option<(SessionId, u32)> {
        let rest = self.0.strip_prefix("session:")?;
        let (session, turn) = rest.split_once("<turn:")?;
        let turn = turn.strip_suffix('>')?;
        if turn.is_empty() || !turn.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some((SessionId::new(session).ok()?, turn.parse().ok()?))
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
