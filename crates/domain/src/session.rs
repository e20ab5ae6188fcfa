//! Sessions and their numbered turns (seed section 13): the transcript evidence is cited from.

use std::fmt;

use crate::error::{DomainError, Result};
use crate::ids::{AgentId, ProjectId, SessionId, UserId};
use crate::record::Timestamp;

/// Longest turn accepted, in characters.
pub const MAX_TURN_CHARS: usize = 100_000;

/// Who spoke in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TurnRole {
    User,
    Assistant,
    /// A tool result.
    Tool,
}

impl TurnRole {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "user" => Ok(Self::User),
            "assistant" => Ok(Self::Assistant),
            "tool" => Ok(Self::Tool),
            other => {
                Err(DomainError::invalid("role", format!("{other:?} is not one of user, assistant, tool")))
            }
        }
    }
}

impl fmt::Display for TurnRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One agent run with one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: SessionId,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub project_id: Option<ProjectId>,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
}

/// One numbered turn of a session (numbers start at 1 and have no gaps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionTurn {
    pub session_id: SessionId,
    pub turn: u32,
    pub role: TurnRole,
    pub content: String,
    pub created_at: Timestamp,
}

/// The answer to a claim on an ended session's extraction (seed section 13: the extractor
/// runs once per session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractionClaim {
    /// This claimant won; `attempt` counts the claims of this session, this one included.
    Claimed { attempt: u32 },
    /// Another claimant holds a claim whose lease has not run out.
    InProgress { by: String },
    /// The session was extracted (or its extraction was given up for good).
    Done { by: String },
    /// The session has not ended yet.
    NotEnded,
    /// Failed runs used every attempt.
    Exhausted { attempts: u32 },
}

/// The rules a claim is made under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTerms {
    /// Now.
    pub at: Timestamp,
    /// A claim made before this has lapsed (its runner died) and may be taken over.
    pub lapsed_before: Timestamp,
    /// Claims allowed per session; failed runs count.
    pub max_attempts: u32,
}
