//! Sessions and their numbered turns (seed section 13): the transcript evidence is cited from.

use std::fmt;

use crate::entity::Name;
use crate::error::{DomainError, Result};
use crate::ids::{AgentId, ProjectId, SessionId, UserId};
use crate::record::Timestamp;
use crate::scope::Scope;
use crate::source::SourceKind;

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

    /// The source kind of a record kept verbatim from a turn of this role (turn memory): the
    /// user's own words are a user statement and a tool's output a tool result, each quoting
    /// the turn it cites in full; the agent's own words are the host's record of what was said
    /// (`system`), not an inference, so they neither start provisional nor expire.
    pub fn source_kind(self) -> SourceKind {
        match self {
            Self::User => SourceKind::UserStatement,
            Self::Assistant => SourceKind::System,
            Self::Tool => SourceKind::ToolResult,
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
    /// Where its turns are kept as memory (turn memory): a scope the principal could write
    /// when the session started; `None` is the principal's private scope.
    pub scope: Option<Scope>,
}

/// One numbered turn of a session (numbers start at 1 and have no gaps; times never go
/// back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionTurn {
    pub session_id: SessionId,
    pub turn: u32,
    pub role: TurnRole,
    /// Who spoke, as the host named them (a group chat, a multi-party transcript); `None`
    /// for the session's own user, agent or tool.
    pub speaker: Option<Name>,
    pub content: String,
    /// When it was said: the host's time for a replayed or imported turn, else when it was
    /// recorded.
    pub at: Timestamp,
    /// When the service recorded it (transcript retention counts from this).
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

/// A turn's text cut into parts of at most `max_chars` characters each, for records that
/// hold at most that much: at the last line break of a part, else its last sentence end
/// (". ", "! ", "? ", "。", "！", "？"), else its last space, else at `max_chars`. Text
/// within the limit is one part. No part is empty or blank; together they hold every
/// non-blank character in order.
pub fn turn_parts(text: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let chars: Vec<char> = text.chars().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let end = if chars.len() - start <= max_chars {
            chars.len()
        } else {
            let window = &chars[start..start + max_chars];
            let after =
                |pred: &dyn Fn(usize) -> bool| (1..window.len()).rev().find(|&i| pred(i)).map(|i| i + 1);
            let line = after(&|i| window[i] == '\n');
            let sentence = after(&|i| {
                matches!(window[i], '。' | '！' | '？')
                    || (window[i] == ' ' && matches!(window[i - 1], '.' | '!' | '?'))
            });
            let space = after(&|i| window[i].is_whitespace());
            start + line.or(sentence).or(space).unwrap_or(max_chars)
        };
        let part: String = chars[start..end].iter().collect();
        if !part.trim().is_empty() {
            parts.push(part.trim_end().to_owned());
        }
        start = end;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::turn_parts;

    #[test]
    fn a_turn_within_the_limit_is_one_part() {
        assert_eq!(turn_parts("Short turn.", 100), ["Short turn."]);
    }

    #[test]
    fn a_long_turn_is_cut_at_lines_then_sentences_then_spaces() {
        let log = "line one\nline two\nline three\n";
        assert_eq!(turn_parts(log, 12), ["line one", "line two", "line three"]);
        assert_eq!(turn_parts("One two. Three four. Five six.", 22), ["One two. Three four.", "Five six."]);
        assert_eq!(turn_parts("alpha beta gamma delta", 12), ["alpha beta", "gamma delta"]);
        assert_eq!(turn_parts("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(turn_parts("第一句。第二句。第三句。", 5), ["第一句。", "第二句。", "第三句。"]);
    }

    #[test]
    fn every_part_is_within_the_limit_and_nothing_is_lost() {
        let text: String = (0..500).map(|i| format!("Entry {i}: value {}.\n", i * 7)).collect();
        let parts = turn_parts(&text, 1000);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.chars().count() <= 1000 && !p.trim().is_empty()));
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&parts.concat()), squeeze(&text));
    }
}
