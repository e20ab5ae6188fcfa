//! The memory record and its parts (seed sections 2, 3 and 7).

use std::fmt;

use chrono::{DateTime, Utc};

use crate::error::{DomainError, Result};
use crate::ids::{AgentId, EntityId, RecordId};
use crate::scope::Scope;
use crate::source::{SourceKind, SourceRef};

/// A point in time, always UTC.
pub type Timestamp = DateTime<Utc>;

/// Longest content accepted, in characters.
pub const MAX_CONTENT_CHARS: usize = 8_000;
/// Longest evidence accepted, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 8_000;
/// Longest context accepted, in characters (what a host passes of the turns before a record).
pub const MAX_CONTEXT_CHARS: usize = 2_000;
/// Longest attribute name accepted.
pub const MAX_ATTRIBUTE_LEN: usize = 64;
/// Longest tag accepted.
pub const MAX_TAG_LEN: usize = 64;
/// Most tags on one record.
pub const MAX_TAGS: usize = 32;

/// The three memory types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryType {
    /// Durable facts and preferences.
    Semantic,
    /// A dated experience, outcome or decision.
    Episodic,
    /// A reusable method or workflow.
    Procedural,
}

impl MemoryType {
    /// All types.
    pub const ALL: [MemoryType; 3] = [Self::Semantic, Self::Episodic, Self::Procedural];

    /// Whether records of this type carry a current-fact key (section 7).
    /// Episodic records never supersede one another.
    pub fn has_current_fact_key(self) -> bool {
        match self {
            Self::Semantic | Self::Procedural => true,
            Self::Episodic => false,
        }
    }

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Semantic => "semantic",
            Self::Episodic => "episodic",
            Self::Procedural => "procedural",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == value).ok_or_else(|| {
            DomainError::invalid("type", format!("{value:?} is not one of semantic, episodic, procedural"))
        })
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The five lifecycle statuses (section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// An agent inference or an unresolved lower-trust conflict. Eligible.
    Provisional,
    /// Source or reinforcement meets the confirmation policy. Eligible.
    Confirmed,
    /// A newer record replaced this claim. Only with include_history.
    Superseded,
    /// Its expiry passed. Never eligible for normal search.
    Expired,
    /// Removed at the user's request; the row stays as a tombstone.
    Deleted,
}

impl Status {
    /// All statuses.
    pub const ALL: [Status; 5] =
        [Self::Provisional, Self::Confirmed, Self::Superseded, Self::Expired, Self::Deleted];

    /// Whether default retrieval may return a record in this status.
    pub fn is_active(self) -> bool {
        match self {
            Self::Provisional | Self::Confirmed => true,
            Self::Superseded | Self::Expired | Self::Deleted => false,
        }
    }

    /// Whether the record keeps its FTS row and live vector (everything but deleted).
    pub fn keeps_indexes(self) -> bool {
        match self {
            Self::Provisional | Self::Confirmed | Self::Superseded | Self::Expired => true,
            Self::Deleted => false,
        }
    }

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisional => "provisional",
            Self::Confirmed => "confirmed",
            Self::Superseded => "superseded",
            Self::Expired => "expired",
            Self::Deleted => "deleted",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value).ok_or_else(|| {
            DomainError::invalid(
                "status",
                format!("{value:?} is not one of provisional, confirmed, superseded, expired, deleted"),
            )
        })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A confidence in `[0, 1]`. Records lifecycle state; retrieval does not rank by it.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Confidence(f64);

impl Confidence {
    /// The most reinforcement can raise a confidence to.
    pub const REINFORCEMENT_CAP: f64 = 0.99;

    /// Build; refuses NaN and values outside `[0, 1]`.
    pub fn new(value: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&value) {
            return Err(DomainError::invalid("confidence", format!("{value} is not in [0, 1]")));
        }
        Ok(Self(value))
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// A newtype over non-blank text of at most `$max` characters, without NUL.
macro_rules! bounded_text {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name(String);

        impl $name {
            #[doc = concat!("Build; refuses blank text and text longer than [`", stringify!($max), "`].")]
            pub fn new(value: impl Into<String>) -> Result<Self> {
                let value = value.into();
                check_text($field, &value, $max)?;
                Ok(Self(value))
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }
    };
}

bounded_text!(
    /// Non-empty record text of bounded length.
    Content, "content", MAX_CONTENT_CHARS
);
bounded_text!(
    /// Supporting material quoted from the source. Same rules as [`Content`].
    Evidence, "evidence", MAX_EVIDENCE_CHARS
);
bounded_text!(
    /// What a record was said in (the conversation turn before it, say): indexed with the
    /// record's content so that a reply like "Yes, last week!" is found by what it answers,
    /// and never returned as the record's text.
    Context, "context", MAX_CONTEXT_CHARS
);

/// What a record is indexed by: who said it, its content and what it was said after. The
/// write path, re-embedding and both stores' lexical rows all build their texts from this,
/// so a model switch reproduces what the write embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexedText<'a> {
    pub origin: Origin,
    /// The speaker the host named (a turn's).
    pub speaker: Option<&'a str>,
    pub content: &'a str,
    pub context: Option<&'a str>,
}

impl<'a> IndexedText<'a> {
    /// Who said the content, as its texts carry it, and the content after any label: the
    /// speaker the host named (`"Caroline: "`); for a turn without one, nobody (its text is
    /// exactly what was said, so "ERROR: disk full" or "Note: …" is not a speaker); for a
    /// memory written without one, the content's own transcript label
    /// ([`crate::text::speaker_label`]: "Nate: We played chess." has `Nate: `; a log level
    /// or a note's heading, "ERROR: " or "Note: ", is none, so it stays on its own line).
    fn label_and_body(&self) -> (String, &'a str) {
        match (self.speaker, self.origin) {
            (Some(speaker), _) => (format!("{speaker}: "), self.content),
            (None, Origin::Turn) => (String::new(), self.content),
            (None, Origin::Memory) => {
                let label = crate::text::speaker_label(self.content);
                (label.to_owned(), &self.content[label.len()..])
            }
        }
    }

    /// The text a record is indexed by, in its vector and its lexical row: its speaker's
    /// label (`"Caroline: "`, for a turn whose host named who spoke), its content, a line
    /// break, its context; the content alone without a speaker or a context. Content first,
    /// so that when the embedder truncates a long text it is the context that is cut.
    pub fn embedding_text(&self) -> String {
        let label = self.speaker.map(|s| format!("{s}: ")).unwrap_or_default();
        match self.context {
            Some(context) => format!("{label}{}\n{context}", self.content),
            None => format!("{label}{}", self.content),
        }
    }

    /// The texts of its sentence vectors: each sentence of its content (split as
    /// [`crate::text::sentence_spans`] splits) of at least [`SENTENCE_MIN_WORDS`] words
    /// ([`crate::text::word_count`]), carrying who said it (see `label_and_body`), so
    /// "Nate: That's cool, Joanna! We even played Chess." gives "Nate: That's cool, Joanna!"
    /// and "Nate: We even played Chess.". At most `max` of them, the first, counting once the
    /// sentences that differ only in their numbers ([`crate::text::number_template`]): a
    /// log's hundred "step N completed in M ms" lines get one vector, and the line that
    /// differs after them (the failure a question asks about) still gets its own. None when the
    /// record's own vector already is its one sentence's (one sentence and no context), or
    /// when `max` is 0. A record's one vector is pooled over all its tokens and its context,
    /// so one answering sentence among greetings says little in it; its own vector finds it.
    pub fn sentence_texts(&self, max: usize) -> Vec<String> {
        let (label, body) = self.label_and_body();
        let body: Vec<char> = body.chars().collect();
        let sentences: Vec<String> = crate::text::sentence_spans(&body)
            .into_iter()
            .map(|(from, to)| body[from..to].iter().collect::<String>())
            .filter(|sentence| sentence.chars().any(char::is_alphanumeric))
            .collect();
        if sentences.len() == 1 && self.context.is_none() {
            return Vec::new();
        }
        let mut templates = std::collections::HashSet::new();
        sentences
            .into_iter()
            .filter(|sentence| crate::text::word_count(sentence) >= SENTENCE_MIN_WORDS)
            .filter(|sentence| templates.insert(crate::text::number_template(sentence)))
            .take(max)
            .map(|sentence| format!("{label}{}", sentence.trim()))
            .collect()
    }

    /// What the write path embeds, in one model run: the record's text, then its
    /// sentences' (at most `max`).
    pub fn embedded_texts(&self, max: usize) -> Vec<String> {
        let mut texts = vec![self.embedding_text()];
        texts.extend(self.sentence_texts(max));
        texts
    }
}

/// Sentences of fewer words than this get no vector of their own: "Thanks!", "Wow, Mel!" or
/// "Yes, last week!" name nothing a question could find alone, and the record's own vector
/// still holds them (docs/quality.md).
pub const SENTENCE_MIN_WORDS: usize = 4;

/// Where a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// Written as a memory: `memory_write`, `memory_revise`, extraction, a session summary.
    Memory,
    /// A session turn kept verbatim as it was appended (turn memory); its `source_ref` cites
    /// the turn.
    Turn,
}

impl Origin {
    /// Both origins.
    pub const ALL: [Origin; 2] = [Self::Memory, Self::Turn];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Turn => "turn",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|o| o.as_str() == value)
            .ok_or_else(|| DomainError::invalid("origins", format!("{value:?} is not one of memory, turn")))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn check_text(field: &'static str, value: &str, max_chars: usize) -> Result<()> {
    if value.trim().is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    if value.chars().count() > max_chars {
        return Err(DomainError::invalid(field, format!("longer than {max_chars} characters")));
    }
    if value.contains('\0') {
        return Err(DomainError::invalid(field, "contains a NUL character"));
    }
    Ok(())
}

/// An attribute name such as `explanation_style`: lowercase ASCII letters, digits and `_`,
/// starting with a letter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Attribute(String);

impl Attribute {
    /// Build and validate.
    pub fn new(value: impl Into<String>) -> Result<Self> {
        let value = value.into();
        let valid_start = value.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        let valid_rest = value.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_start || !valid_rest || value.len() > MAX_ATTRIBUTE_LEN {
            return Err(DomainError::invalid(
                "attribute",
                format!(
                    "{value:?} must be 1-{MAX_ATTRIBUTE_LEN} lowercase letters, digits or _, starting with a letter"
                ),
            ));
        }
        Ok(Self(value))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tag: non-empty, no whitespace, bounded length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(String);

impl Tag {
    /// Build and validate.
    pub fn new(value: impl Into<String>) -> Result<Self> {
        let value = value.into();
        if value.is_empty()
            || value.chars().count() > MAX_TAG_LEN
            || value.chars().any(|c| c.is_whitespace() || c.is_control() || c == ',')
        {
            return Err(DomainError::invalid(
                "tags",
                format!("{value:?} must be 1-{MAX_TAG_LEN} characters without spaces or commas"),
            ));
        }
        Ok(Self(value))
    }

    /// The tag.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The current-fact key of a semantic or procedural record: which current claim it represents.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FactKey {
    pub subject_entity_id: EntityId,
    pub attribute: Attribute,
}

impl FactKey {
    /// Build from its parts.
    pub fn new(subject_entity_id: EntityId, attribute: Attribute) -> Self {
        Self { subject_entity_id, attribute }
    }

    /// The derived `subject`: `<entity_id>/<attribute>`, used for display and FTS.
    pub fn subject(&self) -> String {
        format!("{}/{}", self.subject_entity_id, self.attribute)
    }
}

/// One durable memory (section 2). Every field of the seed's record.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub id: RecordId,
    pub memory_type: MemoryType,
    /// Row version, incremented on every change to the row.
    pub version: u32,
    pub content: Content,
    /// subject_entity_id and attribute; `None` when the record has no current-fact key.
    pub key: Option<FactKey>,
    pub scope: Scope,
    pub source_kind: SourceKind,
    pub source_ref: Option<SourceRef>,
    pub creator_agent_id: AgentId,
    pub evidence: Option<Evidence>,
    pub created_at: Timestamp,
    pub event_at: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
    pub confidence: Confidence,
    pub status: Status,
    pub supersedes_id: Option<RecordId>,
    pub reinforcements: u32,
    pub last_reinforced_at: Option<Timestamp>,
    pub tags: Vec<Tag>,
    /// What the record was said in; embedded with the content, never returned as it.
    pub context: Option<Context>,
    /// Written as a memory, or kept verbatim from a session turn.
    pub origin: Origin,
    /// Who said it, as the host named the speaker of a turn; embedded as its label.
    pub speaker: Option<crate::entity::Name>,
}

impl MemoryRecord {
    /// What it is indexed by.
    pub fn indexed(&self) -> IndexedText<'_> {
        IndexedText {
            origin: self.origin,
            speaker: self.speaker.as_ref().map(crate::entity::Name::as_str),
            content: self.content.as_str(),
            context: self.context.as_ref().map(Context::as_str),
        }
    }

    /// The text its vector and lexical row are made from ([`IndexedText::embedding_text`]).
    pub fn embedding_text(&self) -> String {
        self.indexed().embedding_text()
    }

    /// The derived subject `<entity_id>/<attribute>`, when the record has a key.
    pub fn subject(&self) -> Option<String> {
        self.key.as_ref().map(FactKey::subject)
    }

    /// Whether the record has passed its expiry at `now`.
    pub fn is_expired_at(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}
