//! Session extraction and candidate review (seed sections 13 and 15): after a session ends,
//! an extractor proposes evidence-backed candidates and one episodic summary, each candidate is
//! validated, reviewed, revalidated and written through the ingestor.

mod fakes;
mod llm;
mod runner;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use async_trait::async_trait;
use retold_domain::text::{KnownWords, is_limiting, is_stopword, opened_words};
use retold_domain::{
    Attribute, Confidence, Content, EntityKind, Evidence, MemoryType, Name, Result, Scope, Session,
    SessionTurn, SourceKind, SourceRef, Timestamp, TurnRole, WordStemmer,
};
use retold_policy::evidence_appears_verbatim;

pub use self::fakes::{FakeExtractor, TableReviewer};
pub use self::llm::{StructuredLLMExtractor, StructuredLLMReviewer};
pub use self::runner::{
    CandidateOutcome, ExtractionConfig, ExtractionReport, ExtractionRunner, ReviewResult,
};

use crate::request::{EntityRef, WriteRequest};

/// A session and its complete transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub session: Session,
    pub turns: Vec<SessionTurn>,
}

impl Transcript {
    /// The turn numbered `turn`.
    pub fn turn(&self, turn: u32) -> Option<&SessionTurn> {
        self.turns.iter().find(|t| t.turn == turn)
    }

    /// Characters of turn text.
    pub fn chars(&self) -> usize {
        self.turns.iter().map(|t| t.content.chars().count()).sum()
    }

    /// The transcript as the prompts show it: one `[turn N] role (time):` block per turn, the
    /// time it was said; `[turn N] role Name (time):` when the host named the speaker.
    pub fn render(&self) -> String {
        let s = &self.session;
        let mut out = format!(
            "Session {} between agent {} and user {}{}, started {}.\n\n",
            s.id,
            s.agent_id,
            s.user_id,
            s.project_id.as_ref().map(|p| format!(" in project {p}")).unwrap_or_default(),
            s.started_at.to_rfc3339(),
        );
        for turn in &self.turns {
            // A speaker the host named (a group chat) is shown after the role.
            let speaker = turn.speaker.as_ref().map(|s| format!(" {s}")).unwrap_or_default();
            out.push_str(&format!(
                "[turn {}] {}{} ({}):\n{}\n\n",
                turn.turn,
                turn.role,
                speaker,
                turn.at.to_rfc3339(),
                turn.content
            ));
        }
        out
    }
}

/// Where a candidate should live, relative to the session's agent and user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateScope {
    /// `agent:<agent>/<user>`, private to the pair (the default).
    Private,
    /// `user:<user>`: about the user, shared with the agents the host grants it to.
    User,
    /// `project:<project>`: the session's project.
    Project,
}

impl CandidateScope {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::User => "user",
            Self::Project => "project",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "private" => Some(Self::Private),
            "user" => Some(Self::User),
            "project" => Some(Self::Project),
            _ => None,
        }
    }
}

/// An entity named by a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateEntity {
    pub name: String,
    pub kind: EntityKind,
}

/// One memory an extractor proposes, as proposed (validation turns it into a write request).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub memory_type: MemoryType,
    pub content: String,
    pub subject: Option<CandidateEntity>,
    pub attribute: Option<String>,
    pub mentions: Vec<CandidateEntity>,
    /// user_statement (a user turn), tool_result (a tool turn) or agent_inference.
    pub source_kind: SourceKind,
    /// The turn the evidence is quoted from.
    pub turn: u32,
    /// Quoted verbatim from the turn.
    pub evidence: String,
    /// When it happened or applies from; defaults to the cited turn's time.
    pub event_at: Option<Timestamp>,
    /// When it stops being true.
    pub expires_at: Option<Timestamp>,
    pub confidence: Option<f64>,
    pub scope: CandidateScope,
}

/// Token usage of hosted calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// Both usages added.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

/// What an extractor proposed for one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extraction {
    pub candidates: Vec<Candidate>,
    /// Proposed entries that could not be read as candidates, with the reason.
    pub malformed: Vec<String>,
    /// The one episodic summary of the session (none for an empty session).
    pub summary: Option<String>,
    pub usage: Usage,
}

/// Proposes candidates and a summary from a whole transcript.
#[async_trait]
pub trait Extractor: Send + Sync {
    /// The prompt version, recorded on the `extraction.run` event.
    fn prompt_version(&self) -> &str;
    /// The model, recorded on the `extraction.run` event.
    fn model(&self) -> &str;
    /// Read the transcript and propose.
    async fn extract(&self, transcript: &Transcript) -> Result<Extraction>;
}

/// A reviewer's decision on one candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Accept,
    /// Keep a narrowed version instead.
    Revise(Candidate),
    Reject {
        reason: String,
    },
    /// The reviewer answered something unusable for this candidate (a malformed revision):
    /// the original is kept, like a refused revision.
    Unusable {
        reason: String,
    },
    /// The reviewer gave no verdict (or two) for this candidate: it is not written.
    Missing {
        reason: String,
    },
}

/// The reviewer's decisions, one per candidate, in candidate order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Review {
    pub verdicts: Vec<Verdict>,
    pub usage: Usage,
}

/// Reviews validated candidates before they are written.
#[async_trait]
pub trait Reviewer: Send + Sync {
    /// The prompt version, recorded on the `extraction.run` event.
    fn prompt_version(&self) -> &str;
    /// The model, recorded on the `extraction.run` event.
    fn model(&self) -> &str;
    /// One verdict per candidate, in order.
    async fn review(&self, transcript: &Transcript, candidates: &[Candidate]) -> Result<Review>;
}

/// Check a candidate against its transcript and turn it into a write request: known turn, a
/// source kind that matches the turn's speaker, evidence quoted verbatim from that turn, and
/// well-formed fields. The error says why it was refused.
pub fn validate_candidate(
    candidate: &Candidate,
    transcript: &Transcript,
    now: Timestamp,
) -> Result<WriteRequest, String> {
    let session = &transcript.session;
    let turn = transcript.turn(candidate.turn).ok_or_else(|| {
        format!("turn {} is not in the session ({} turns)", candidate.turn, transcript.turns.len())
    })?;
    match (candidate.source_kind, turn.role) {
        (SourceKind::UserStatement, TurnRole::User)
        | (SourceKind::ToolResult, TurnRole::Tool)
        | (SourceKind::AgentInference, _) => {}
        (SourceKind::UserStatement | SourceKind::ToolResult, role) => {
            return Err(format!(
                "a {} must cite a {} turn, but turn {} is a {role} turn",
                candidate.source_kind,
                if candidate.source_kind == SourceKind::UserStatement { "user" } else { "tool" },
                candidate.turn
            ));
        }
        (kind @ (SourceKind::System | SourceKind::SessionSummary), _) => {
            return Err(format!("source kind {kind} is not one an extractor may claim"));
        }
    }
    if !evidence_appears_verbatim(&candidate.evidence, &turn.content) {
        return Err(format!("the evidence does not appear verbatim in turn {}", candidate.turn));
    }
    let scope = match candidate.scope {
        CandidateScope::Private => Scope::private(&session.agent_id, &session.user_id),
        CandidateScope::User => Scope::user(&session.user_id),
        CandidateScope::Project => match &session.project_id {
            Some(project) => {
                Scope::new(retold_domain::ScopeKind::Project, project.as_str()).map_err(|e| e.to_string())?
            }
            None => return Err("project scope, but the session has no project".into()),
        },
    };
    if candidate.attribute.is_some() && candidate.subject.is_none() {
        return Err("an attribute needs a subject".into());
    }
    if candidate.attribute.is_some() && !candidate.memory_type.has_current_fact_key() {
        return Err(format!("a {} memory has no attribute", candidate.memory_type));
    }
    if candidate.expires_at.is_some_and(|until| until <= now) {
        return Err("expires_at is not in the future".into());
    }
    if let (Some(from), Some(until)) = (candidate.event_at, candidate.expires_at)
        && until <= from
    {
        return Err("expires_at is not after event_at".into());
    }
    let entity = |e: &CandidateEntity| -> Result<EntityRef, String> {
        Ok(EntityRef::Name { name: Name::new(&e.name).map_err(|e| e.to_string())?, kind: e.kind })
    };
    Ok(WriteRequest {
        memory_type: candidate.memory_type,
        content: Content::new(candidate.content.clone()).map_err(|e| e.to_string())?,
        scope,
        subject: candidate.subject.as_ref().map(entity).transpose()?,
        attribute: candidate.attribute.clone().map(Attribute::new).transpose().map_err(|e| e.to_string())?,
        mentions: candidate.mentions.iter().map(entity).collect::<Result<_, _>>()?,
        source_kind: candidate.source_kind,
        source_ref: Some(SourceRef::session_turn_ref(&session.id, candidate.turn)),
        evidence: Some(Evidence::new(candidate.evidence.clone()).map_err(|e| e.to_string())?),
        event_at: Some(candidate.event_at.unwrap_or(turn.at)),
        expires_at: candidate.expires_at,
        confidence: candidate.confidence.map(Confidence::new).transpose().map_err(|e| e.to_string())?,
        tags: Vec::new(),
        context: None,
    })
}

/// Words that say something: opened words without the stopwords that limit nothing.
fn claim_words(text: &str) -> Vec<String> {
    opened_words(text).into_iter().filter(|w| !is_stopword(w) || is_limiting(w)).collect()
}

/// Why a reviewer's revision is refused, or `None` when it only narrows the candidate.
///
/// Review may narrow content (drop words, never add one the candidate does not already say,
/// never drop a word that limits the claim such as "not", "only", "until", "maybe"), refine the
/// attribute (`a` -> `a_detail`), move `event_at` later or `expires_at` earlier (or set
/// `expires_at` when absent), and lower confidence. Type, subject, mentions, scope, source
/// kind, turn and evidence may not change. The runner fills a missing `event_at` with the
/// cited turn's time before review, so "later" has a reference. A word is said by the
/// candidate when it or one of its inflections is (the same stem under `stemmer`).
pub fn revision_refusal(
    original: &Candidate,
    revised: &Candidate,
    stemmer: &dyn WordStemmer,
) -> Option<String> {
    let fixed = [
        ("type", original.memory_type != revised.memory_type),
        ("subject", original.subject != revised.subject),
        ("mentions", original.mentions != revised.mentions),
        ("scope", original.scope != revised.scope),
        ("source_kind", original.source_kind != revised.source_kind),
        ("turn", original.turn != revised.turn),
        ("evidence", original.evidence != revised.evidence),
    ];
    if let Some((field, _)) = fixed.iter().find(|(_, changed)| *changed) {
        return Some(format!("review may not change {field}"));
    }
    if original.content != revised.content {
        let known = KnownWords::new(claim_words(&original.content), stemmer);
        let added: Vec<String> =
            claim_words(&revised.content).into_iter().filter(|w| !known.knows(w)).collect();
        if !added.is_empty() {
            return Some(format!("the revised content adds {added:?}, which the candidate does not say"));
        }
        let kept: BTreeSet<String> = opened_words(&revised.content).into_iter().collect();
        let dropped: Vec<String> = opened_words(&original.content)
            .into_iter()
            .filter(|w| is_limiting(w) && !kept.contains(w))
            .collect();
        if !dropped.is_empty() {
            return Some(format!("the revised content drops {dropped:?}, which limit the claim"));
        }
    }
    match (&original.attribute, &revised.attribute) {
        (None, None) => {}
        (Some(a), Some(b)) if a == b || b.starts_with(&format!("{a}_")) => {}
        (None, Some(_)) => return Some("review may not add an attribute".into()),
        (Some(_), None) => return Some("review may not remove the attribute".into()),
        (Some(a), Some(b)) => return Some(format!("attribute {b:?} does not refine {a:?}")),
    }
    match (original.event_at, revised.event_at) {
        (Some(a), Some(b)) if b < a => return Some("review may not move event_at earlier".into()),
        (Some(_), Some(_)) | (None, None) => {}
        (None, Some(_)) => return Some("review may not set event_at the candidate left open".into()),
        (Some(_), None) => return Some("review may not remove event_at".into()),
    }
    match (original.expires_at, revised.expires_at) {
        (Some(a), Some(b)) if b > a => return Some("review may not move expires_at later".into()),
        (Some(_), Some(_)) | (None, None) | (None, Some(_)) => {}
        (Some(_), None) => return Some("review may not remove expires_at".into()),
    }
    let ceiling = original.confidence.unwrap_or_else(|| original.source_kind.initial_confidence().get());
    match revised.confidence {
        Some(c) if c > ceiling => Some(format!("review may not raise confidence above {ceiling}")),
        Some(_) => None,
        None if original.confidence.is_some() => Some("review may not remove the confidence limit".into()),
        None => None,
    }
}
