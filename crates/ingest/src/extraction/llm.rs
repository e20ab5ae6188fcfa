//! The hosted-model extractor and reviewer: prompt files next to this code, strict JSON
//! schemas, and the parsing of what the model answers.

use std::sync::Arc;

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, NaiveDate, Utc};
use retold_domain::{
    CompletionClient, CompletionRequest, DomainError, EntityKind, MemoryType, Result, SourceKind, Timestamp,
};
use serde_json::{Value, json};

use super::{
    Candidate, CandidateEntity, CandidateScope, Extraction, Extractor, Review, Reviewer, Transcript, Usage,
    Verdict,
};

/// The extraction prompt, version `extract_v1`.
const EXTRACT_V1: &str = include_str!("../prompts/extract_v1.md");
/// The review prompt, version `review_v1`.
const REVIEW_V1: &str = include_str!("../prompts/review_v1.md");

fn entity_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "kind"],
        "properties": {
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": EntityKind::ALL.map(EntityKind::as_str)},
        },
    })
}

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

/// One candidate, strict (every property required, nulls where absent) so both providers'
/// structured-output modes accept it.
fn candidate_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "content", "subject", "attribute", "mentions", "source_kind", "turn",
                     "evidence", "event_at", "expires_at", "confidence", "scope"],
        "properties": {
            "type": {"type": "string", "enum": ["semantic", "episodic", "procedural"]},
            "content": {"type": "string"},
            "subject": nullable(entity_schema()),
            "attribute": nullable(json!({"type": "string"})),
            "mentions": {"type": "array", "items": entity_schema()},
            "source_kind": {"type": "string", "enum": ["user_statement", "tool_result", "agent_inference"]},
            "turn": {"type": "integer"},
            "evidence": {"type": "string"},
            "event_at": nullable(json!({"type": "string"})),
            "expires_at": nullable(json!({"type": "string"})),
            "confidence": nullable(json!({"type": "number"})),
            "scope": {"type": "string", "enum": ["private", "user", "project"]},
        },
    })
}

fn extraction_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["candidates", "summary"],
        "properties": {
            "candidates": {"type": "array", "items": candidate_schema()},
            "summary": {"type": "string"},
        },
    })
}

fn review_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reviews"],
        "properties": {
            "reviews": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["index", "verdict", "reason", "revised"],
                    "properties": {
                        "index": {"type": "integer"},
                        "verdict": {"type": "string", "enum": ["accept", "revise", "reject"]},
                        "reason": {"type": "string"},
                        "revised": nullable(candidate_schema()),
                    },
                },
            },
        },
    })
}

fn time_text(at: Option<Timestamp>) -> Value {
    at.map_or(Value::Null, |t| Value::String(t.to_rfc3339()))
}

fn entity_json(e: &CandidateEntity) -> Value {
    json!({"name": e.name, "kind": e.kind.as_str()})
}

/// A candidate in the schema's shape.
pub(crate) fn candidate_json(c: &Candidate) -> Value {
    json!({
        "type": c.memory_type.as_str(),
        "content": c.content,
        "subject": c.subject.as_ref().map_or(Value::Null, entity_json),
        "attribute": c.attribute,
        "mentions": c.mentions.iter().map(entity_json).collect::<Vec<_>>(),
        "source_kind": c.source_kind.as_str(),
        "turn": c.turn,
        "evidence": c.evidence,
        "event_at": time_text(c.event_at),
        "expires_at": time_text(c.expires_at),
        "confidence": c.confidence,
        "scope": c.scope.as_str(),
    })
}

/// An RFC 3339 time or a `YYYY-MM-DD` date (midnight UTC).
fn parse_time(value: &Value, field: &str) -> Result<Option<Timestamp>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(t) = DateTime::parse_from_rfc3339(s) {
                return Ok(Some(t.with_timezone(&Utc)));
            }
            NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| Some(t.and_utc()))
                .ok_or_else(|| format!("{field} {s:?} is neither an RFC 3339 time nor a YYYY-MM-DD date"))
        }
        other => Err(format!("{field} is {other}, not a string")),
    }
}

fn parse_entity(value: &Value) -> Result<CandidateEntity, String> {
    let name = value["name"].as_str().ok_or("an entity has no name")?.to_owned();
    let kind = value["kind"].as_str().ok_or("an entity has no kind")?;
    let kind = EntityKind::parse(kind).map_err(|e| e.to_string())?;
    Ok(CandidateEntity { name, kind })
}

/// Read one candidate object; the error says what is wrong with it.
pub(crate) fn parse_candidate(value: &Value) -> Result<Candidate, String> {
    let text =
        |field: &str| value[field].as_str().map(str::to_owned).ok_or_else(|| format!("{field} is missing"));
    let memory_type = MemoryType::parse(&text("type")?).map_err(|e| e.to_string())?;
    let source_kind = SourceKind::parse(&text("source_kind")?).map_err(|e| e.to_string())?;
    let turn =
        value["turn"].as_u64().and_then(|t| u32::try_from(t).ok()).ok_or("turn is not a turn number")?;
    let scope_text = text("scope")?;
    let scope =
        CandidateScope::parse(&scope_text).ok_or_else(|| format!("scope {scope_text:?} is unknown"))?;
    let subject = match &value["subject"] {
        Value::Null => None,
        entity => Some(parse_entity(entity)?),
    };
    let mentions = match &value["mentions"] {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().map(parse_entity).collect::<Result<_, _>>()?,
        other => return Err(format!("mentions is {other}, not a list")),
    };
    let attribute = match &value["attribute"] {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => return Err(format!("attribute is {other}, not a string")),
    };
    let confidence = match &value["confidence"] {
        Value::Null => None,
        v => Some(v.as_f64().ok_or("confidence is not a number")?),
    };
    Ok(Candidate {
        memory_type,
        content: text("content")?,
        subject,
        attribute,
        mentions,
        source_kind,
        turn,
        evidence: text("evidence")?,
        event_at: parse_time(&value["event_at"], "event_at")?,
        expires_at: parse_time(&value["expires_at"], "expires_at")?,
        confidence,
        scope,
    })
}

fn malformed(what: &str, error: impl std::fmt::Display) -> DomainError {
    DomainError::backend("extraction", format!("the {what} answer is malformed: {error}"))
}

/// Parse a whole extraction answer.
pub(crate) fn parse_extraction(json: &str) -> Result<Extraction> {
    let value: Value = serde_json::from_str(json).map_err(|e| malformed("extraction", e))?;
    let items =
        value["candidates"].as_array().ok_or_else(|| malformed("extraction", "no candidates list"))?;
    let mut extraction = Extraction::default();
    for (n, item) in items.iter().enumerate() {
        match parse_candidate(item) {
            Ok(candidate) => extraction.candidates.push(candidate),
            Err(reason) => extraction.malformed.push(format!("proposal {n}: {reason}")),
        }
    }
    extraction.summary =
        value["summary"].as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    Ok(extraction)
}

/// Parse a review answer for `count` candidates. A candidate the answer does not mention is
/// accepted; an unusable revision is reported as such (the runner keeps the original).
pub(crate) fn parse_review(json: &str, count: usize) -> Result<Vec<Verdict>> {
    let value: Value = serde_json::from_str(json).map_err(|e| malformed("review", e))?;
    let items = value["reviews"].as_array().ok_or_else(|| malformed("review", "no reviews list"))?;
    let mut verdicts: Vec<Option<Verdict>> = vec![None; count];
    let mut twice = vec![false; count];
    for item in items {
        let Some(index) = item["index"].as_u64().and_then(|i| usize::try_from(i).ok()).filter(|i| *i < count)
        else {
            continue;
        };
        if verdicts[index].is_some() {
            twice[index] = true;
        }
        let reason = item["reason"].as_str().unwrap_or("").to_owned();
        verdicts[index] = Some(match item["verdict"].as_str() {
            Some("accept") => Verdict::Accept,
            Some("reject") => Verdict::Reject { reason },
            Some("revise") => match parse_candidate(&item["revised"]) {
                Ok(revised) => Verdict::Revise(revised),
                Err(error) => Verdict::Unusable { reason: format!("the revision is malformed: {error}") },
            },
            other => Verdict::Unusable { reason: format!("unknown verdict {other:?}") },
        });
    }
    Ok(verdicts
        .into_iter()
        .zip(twice)
        .map(|(verdict, twice)| match (verdict, twice) {
            (_, true) => Verdict::Missing { reason: "the reviewer gave two verdicts".into() },
            (Some(verdict), false) => verdict,
            (None, false) => Verdict::Missing { reason: "the reviewer gave no verdict".into() },
        })
        .collect())
}

/// One model and token budget behind a CompletionClient: what both hosted components share.
#[derive(Clone)]
struct HostedModel {
    client: Arc<dyn CompletionClient>,
    model: String,
    max_tokens: u32,
}

impl std::fmt::Debug for HostedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedModel").field("model", &self.model).finish_non_exhaustive()
    }
}

impl HostedModel {
    /// Ask with `prompt` (the system text of prompt `version`) for an answer matching
    /// `schema`; the answer's JSON text and its token usage.
    async fn ask(&self, version: &str, prompt: &str, user: String, schema: Value) -> Result<(String, Usage)> {
        let response = self
            .client
            .complete(CompletionRequest {
                model: self.model.clone(),
                system: prompt.to_owned(),
                user,
                schema_name: version.to_owned(),
                schema_json: schema.to_string(),
                max_tokens: self.max_tokens,
            })
            .await?;
        let usage = Usage { input_tokens: response.input_tokens, output_tokens: response.output_tokens };
        Ok((response.json, usage))
    }
}

/// Extraction through a hosted model with prompt `extract_v1`.
#[derive(Debug, Clone)]
pub struct StructuredLLMExtractor {
    hosted: HostedModel,
}

impl StructuredLLMExtractor {
    /// The prompt version.
    pub const PROMPT_VERSION: &'static str = "extract_v1";

    /// An extractor calling `model` (`ingestion.extraction_model`) through `client`.
    pub fn new(client: Arc<dyn CompletionClient>, model: impl Into<String>, max_tokens: u32) -> Self {
        Self { hosted: HostedModel { client, model: model.into(), max_tokens } }
    }
}

#[async_trait]
impl Extractor for StructuredLLMExtractor {
    fn prompt_version(&self) -> &str {
        Self::PROMPT_VERSION
    }

    fn model(&self) -> &str {
        &self.hosted.model
    }

    async fn extract(&self, transcript: &Transcript) -> Result<Extraction> {
        let user =
            format!("{}Propose the memories this session supports, then summarise it.", transcript.render());
        let (json, usage) =
            self.hosted.ask(Self::PROMPT_VERSION, EXTRACT_V1, user, extraction_schema()).await?;
        Ok(Extraction { usage, ..parse_extraction(&json)? })
    }
}

/// Candidate review through a hosted model with prompt `review_v1`.
#[derive(Debug, Clone)]
pub struct StructuredLLMReviewer {
    hosted: HostedModel,
}

impl StructuredLLMReviewer {
    /// The prompt version.
    pub const PROMPT_VERSION: &'static str = "review_v1";

    /// A reviewer calling `model` (`ingestion.review_model`) through `client`.
    pub fn new(client: Arc<dyn CompletionClient>, model: impl Into<String>, max_tokens: u32) -> Self {
        Self { hosted: HostedModel { client, model: model.into(), max_tokens } }
    }
}

#[async_trait]
impl Reviewer for StructuredLLMReviewer {
    fn prompt_version(&self) -> &str {
        Self::PROMPT_VERSION
    }

    fn model(&self) -> &str {
        &self.hosted.model
    }

    async fn review(&self, transcript: &Transcript, candidates: &[Candidate]) -> Result<Review> {
        if candidates.is_empty() {
            return Ok(Review::default());
        }
        let numbered: Vec<Value> = candidates
            .iter()
            .enumerate()
            .map(|(index, c)| json!({"index": index, "candidate": candidate_json(c)}))
            .collect();
        let user = format!(
            "{}Candidates:\n{}\n\nReview every candidate.",
            transcript.render(),
            serde_json::to_string_pretty(&numbered).map_err(|e| malformed("review request", e))?
        );
        let (json, usage) = self.hosted.ask(Self::PROMPT_VERSION, REVIEW_V1, user, review_schema()).await?;
        Ok(Review { verdicts: parse_review(&json, candidates.len())?, usage })
    }
}
