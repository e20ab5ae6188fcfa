//! The extraction runner: claim an ended session once, extract, validate, review, revalidate,
//! write through the ingestor, and record the run on an `extraction.run` event.

use std::collections::BTreeMap;
use std::sync::Arc;

use retold_domain::chrono::TimeDelta;
use retold_domain::{
    AuditEvent, AuditLog, ClaimTerms, Clock, Content, DomainError, EventId, EventKind, ExtractionClaim,
    ExtractionClaims, IdGenerator, MemoryType, Principal, Result, Scope, SessionId, SourceKind, SourceRef,
    Timestamp, TurnBuffer, WordStemmer, WriteKey,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{
    Candidate, Extractor, Review, Reviewer, Transcript, Usage, Verdict, revision_refusal, validate_candidate,
};
use crate::ingestor::Ingestor;
use crate::request::{EntityRef, KeyedWrite, WriteRequest};

/// Settings of the runner (`ingestion.extraction.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractionConfig {
    /// The name this runner claims sessions under (recorded on the session and the event).
    pub runner_id: String,
    /// Longest transcript, in characters, sent to the extractor; longer sessions fail with
    /// an `extraction.failed` event that says so.
    pub max_transcript_chars: usize,
    /// A claim older than this whose run never finished (its runner died) may be taken over.
    pub lease: TimeDelta,
    /// Claims per session; a failed run releases its claim, so this bounds the retries.
    pub max_attempts: u32,
}

/// What review did to one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewResult {
    /// Failed validation before review; not written.
    Invalid {
        reason: String,
    },
    Accepted,
    /// The narrowed revision was written instead of the original.
    Revised,
    /// The revision was refused; the original was written.
    RevisionRefused {
        reason: String,
    },
    /// Not written.
    Rejected {
        reason: String,
    },
    /// The reviewer gave no usable verdict; not written.
    Unreviewed {
        reason: String,
    },
}

impl ReviewResult {
    /// The stable name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => "invalid",
            Self::Accepted => "accepted",
            Self::Revised => "revised",
            Self::RevisionRefused { .. } => "revision_refused",
            Self::Rejected { .. } => "rejected",
            Self::Unreviewed { .. } => "unreviewed",
        }
    }

    fn reason(&self) -> Option<&str> {
        match self {
            Self::Invalid { reason }
            | Self::RevisionRefused { reason }
            | Self::Rejected { reason }
            | Self::Unreviewed { reason } => Some(reason),
            Self::Accepted | Self::Revised => None,
        }
    }
}

/// One candidate's path through the run.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateOutcome {
    /// Its position among the extractor's candidates.
    pub index: usize,
    pub review: ReviewResult,
    /// The write's outcome (or the earlier attempt's, when a retried run finds it written),
    /// or why the write failed; `None` when nothing was written.
    pub write: Option<Result<KeyedWrite, String>>,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtractionReport {
    /// Another runner claimed the session, or it has not ended: nothing was done.
    Skipped { session: SessionId, reason: String },
    /// This runner extracted the session.
    Extracted {
        session: SessionId,
        /// Proposals that could not be read as candidates.
        malformed: Vec<String>,
        candidates: Vec<CandidateOutcome>,
        /// The session summary's write.
        summary: Option<Result<KeyedWrite, String>>,
        usage: Usage,
    },
}

/// A revision with its open times and confidence read as "unchanged".
fn inherit_open(original: &Candidate, mut revised: Candidate) -> Candidate {
    revised.event_at = revised.event_at.or(original.event_at);
    revised.expires_at = revised.expires_at.or(original.expires_at);
    revised.confidence = revised.confidence.or(original.confidence);
    revised
}

/// Runs extraction for ended sessions, each exactly once.
#[derive(Clone)]
pub struct ExtractionRunner {
    ingestor: Ingestor,
    turns: Arc<dyn TurnBuffer>,
    claims: Arc<dyn ExtractionClaims>,
    audit: Arc<dyn AuditLog>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    extractor: Arc<dyn Extractor>,
    reviewer: Arc<dyn Reviewer>,
    /// What tells a revision's inflection of a word from a word the candidate does not say.
    stemmer: Arc<dyn WordStemmer>,
    config: ExtractionConfig,
}

impl std::fmt::Debug for ExtractionRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractionRunner").field("config", &self.config).finish_non_exhaustive()
    }
}

impl ExtractionRunner {
    /// A runner that claims sessions through `claims` and reads and writes through `ingestor`'s ports.
    pub fn new(
        ingestor: Ingestor,
        claims: Arc<dyn ExtractionClaims>,
        extractor: Arc<dyn Extractor>,
        reviewer: Arc<dyn Reviewer>,
        stemmer: Arc<dyn WordStemmer>,
        config: ExtractionConfig,
    ) -> Self {
        let ports = ingestor.ports().clone();
        Self {
            ingestor,
            turns: ports.turns,
            claims,
            audit: ports.audit,
            clock: ports.clock,
            ids: ports.ids,
            extractor,
            reviewer,
            stemmer,
            config,
        }
    }

    fn terms(&self) -> ClaimTerms {
        let now = self.clock.now();
        ClaimTerms { at: now, lapsed_before: now - self.config.lease, max_attempts: self.config.max_attempts }
    }

    /// Extract the ended sessions that still need it (at most `limit`), oldest first.
    pub async fn run_pending(&self, limit: usize) -> Result<Vec<(SessionId, Result<ExtractionReport>)>> {
        let mut reports = Vec::new();
        for id in self.claims.pending_extractions(limit, self.terms()).await? {
            let report = self.run(&id).await;
            reports.push((id, report));
        }
        Ok(reports)
    }

    /// Claim `session` and extract it; a session claimed before (by any runner) is skipped.
    pub async fn run(&self, session: &SessionId) -> Result<ExtractionReport> {
        use tracing::Instrument;
        let span =
            tracing::info_span!("ingest.extraction", session = %session, runner = %self.config.runner_id);
        async {
            let skipped = |reason: String| Ok(ExtractionReport::Skipped { session: session.clone(), reason });
            let attempt =
                match self.claims.claim_extraction(session, &self.config.runner_id, self.terms()).await? {
                    ExtractionClaim::Claimed { attempt } => attempt,
                    ExtractionClaim::InProgress { by } => return skipped(format!("already claimed by {by}")),
                    ExtractionClaim::Done { by } => return skipped(format!("already extracted by {by}")),
                    ExtractionClaim::NotEnded => return skipped("the session has not ended".into()),
                    ExtractionClaim::Exhausted { attempts } => {
                        return skipped(format!("given up after {attempts} failed attempts"));
                    }
                };
            let transcript = self.transcript(session).await?;
            match self.extract_claimed(&transcript).await {
                Ok(report) => {
                    self.record_run(&transcript, &report, attempt).await?;
                    self.claims.finish_extraction(session, &self.config.runner_id, self.clock.now()).await?;
                    tracing::info!(outcome = "extracted", attempt, "extraction run");
                    Ok(report)
                }
                Err(error) => {
                    // Nothing was written yet (writes come last and record their own
                    // failures), so the claim goes back for a retry while attempts remain,
                    // unless retrying cannot help (the transcript itself is refused).
                    let hopeless = matches!(error, DomainError::Invalid { .. });
                    let retry = !hopeless && attempt < self.config.max_attempts;
                    tracing::warn!(%error, attempt, retry, "extraction failed");
                    let mut event = self.event(EventKind::ExtractionFailed, &transcript);
                    event.details.insert("error".into(), error.to_string());
                    event.details.insert("attempt".into(), attempt.to_string());
                    event.details.insert("will_retry".into(), retry.to_string());
                    self.audit.append(vec![event]).await?;
                    if hopeless {
                        self.claims
                            .finish_extraction(session, &self.config.runner_id, self.clock.now())
                            .await?;
                    } else {
                        self.claims.release_extraction(session, &self.config.runner_id).await?;
                    }
                    Err(error)
                }
            }
        }
        .instrument(span)
        .await
    }

    async fn transcript(&self, id: &SessionId) -> Result<Transcript> {
        let session = self
            .turns
            .session(id)
            .await?
            .ok_or_else(|| DomainError::NotFound { what: "session", id: id.to_string() })?;
        let turns = self.turns.turns(id).await?;
        Ok(Transcript { session, turns })
    }

    fn principal(transcript: &Transcript) -> Principal {
        let s = &transcript.session;
        Principal {
            agent_id: s.agent_id.clone(),
            user_id: s.user_id.clone(),
            project_id: s.project_id.clone(),
            session_id: Some(s.id.clone()),
        }
    }

    async fn extract_claimed(&self, transcript: &Transcript) -> Result<ExtractionReport> {
        let session = transcript.session.id.clone();
        if transcript.turns.is_empty() {
            return Ok(ExtractionReport::Extracted {
                session,
                malformed: Vec::new(),
                candidates: Vec::new(),
                summary: None,
                usage: Usage::default(),
            });
        }
        let chars = transcript.chars();
        if chars > self.config.max_transcript_chars {
            return Err(DomainError::Invalid {
                field: "transcript",
                reason: format!(
                    "{chars} characters exceed ingestion.extraction.max_transcript_chars ({})",
                    self.config.max_transcript_chars
                ),
            });
        }
        let extraction = self.extractor.extract(transcript).await?;
        let now = self.clock.now();
        let mut outcomes = Vec::new();
        let mut valid: Vec<(usize, Candidate, WriteRequest)> = Vec::new();
        for (index, proposed) in extraction.candidates.iter().enumerate() {
            // An open event time means the cited turn's time; make it explicit so review can
            // only move it later.
            let mut candidate = proposed.clone();
            if candidate.event_at.is_none() {
                candidate.event_at = transcript.turn(candidate.turn).map(|t| t.at);
            }
            match validate_candidate(&candidate, transcript, now) {
                Ok(request) => valid.push((index, candidate, request)),
                Err(reason) => outcomes.push(CandidateOutcome {
                    index,
                    review: ReviewResult::Invalid { reason },
                    write: None,
                }),
            }
        }
        let review = if valid.is_empty() {
            Review::default()
        } else {
            let candidates: Vec<Candidate> = valid.iter().map(|(_, c, _)| c.clone()).collect();
            self.reviewer.review(transcript, &candidates).await?
        };
        if review.verdicts.len() != valid.len() {
            return Err(DomainError::backend(
                "reviewer",
                format!("{} verdicts for {} candidates", review.verdicts.len(), valid.len()),
            ));
        }
        let principal = Self::principal(transcript);
        for ((index, original, request), verdict) in valid.into_iter().zip(review.verdicts) {
            let (result, to_write) = match verdict {
                Verdict::Accept => (ReviewResult::Accepted, Some(request)),
                Verdict::Reject { reason } => (ReviewResult::Rejected { reason }, None),
                Verdict::Unusable { reason } => (ReviewResult::RevisionRefused { reason }, Some(request)),
                Verdict::Missing { reason } => (ReviewResult::Unreviewed { reason }, None),
                Verdict::Revise(revised) => {
                    let revised = inherit_open(&original, revised);
                    match revision_refusal(&original, &revised, self.stemmer.as_ref()) {
                        Some(reason) => (ReviewResult::RevisionRefused { reason }, Some(request)),
                        // Revalidate: the narrowed candidate must pass the same checks.
                        None => match validate_candidate(&revised, transcript, now) {
                            Ok(narrowed) => (ReviewResult::Revised, Some(narrowed)),
                            Err(reason) => (
                                ReviewResult::RevisionRefused {
                                    reason: format!("the revision fails validation: {reason}"),
                                },
                                Some(request),
                            ),
                        },
                    }
                }
            };
            let write = match to_write {
                Some(request) => Some(
                    self.ingestor
                        .write_keyed(&principal, &request, &write_key(&session, &request))
                        .await
                        .map_err(|e| e.to_string()),
                ),
                None => None,
            };
            outcomes.push(CandidateOutcome { index, review: result, write });
        }
        outcomes.sort_by_key(|o| o.index);
        let summary = match &extraction.summary {
            Some(text) => Some(self.write_summary(transcript, &principal, text).await),
            None => None,
        };
        Ok(ExtractionReport::Extracted {
            session,
            malformed: extraction.malformed,
            candidates: outcomes,
            summary,
            usage: extraction.usage.plus(review.usage),
        })
    }

    async fn write_summary(
        &self,
        transcript: &Transcript,
        principal: &Principal,
        text: &str,
    ) -> Result<KeyedWrite, String> {
        let session = &transcript.session;
        let request = WriteRequest {
            memory_type: MemoryType::Episodic,
            content: Content::new(text.to_owned()).map_err(|e| e.to_string())?,
            // Where the session keeps its turns (its own scope, else the private one), so
            // whoever may read the conversation may read its summary.
            scope: session
                .scope
                .clone()
                .unwrap_or_else(|| Scope::private(&session.agent_id, &session.user_id)),
            subject: None,
            attribute: None,
            mentions: Vec::new(),
            source_kind: SourceKind::SessionSummary,
            source_ref: Some(SourceRef::session_ref(&session.id)),
            evidence: None,
            // When the conversation happened: its first turn's time (a replayed session's
            // turns carry the host's times), else when the session started.
            event_at: Some(transcript.turns.first().map_or(session.started_at, |t| t.at)),
            expires_at: None,
            confidence: None,
            tags: Vec::new(),
            context: None,
        };
        let key = write_key(&session.id, &request);
        self.ingestor.write_keyed(principal, &request, &key).await.map_err(|e| e.to_string())
    }

    fn event(&self, kind: EventKind, transcript: &Transcript) -> AuditEvent {
        let mut details = BTreeMap::new();
        details.insert("session_id".into(), transcript.session.id.to_string());
        details.insert("runner".into(), self.config.runner_id.clone());
        details.insert("extract_prompt".into(), self.extractor.prompt_version().to_owned());
        details.insert("extract_model".into(), self.extractor.model().to_owned());
        details.insert("review_prompt".into(), self.reviewer.prompt_version().to_owned());
        details.insert("review_model".into(), self.reviewer.model().to_owned());
        details.insert("turns".into(), transcript.turns.len().to_string());
        AuditEvent {
            id: EventId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
            at: self.clock.now(),
            kind,
            record_id: None,
            actor: Some(transcript.session.agent_id.clone()),
            details,
        }
    }

    async fn record_run(
        &self,
        transcript: &Transcript,
        report: &ExtractionReport,
        attempt: u32,
    ) -> Result<()> {
        let ExtractionReport::Extracted { malformed, candidates, summary, usage, .. } = report else {
            return Ok(());
        };
        let mut event = self.event(EventKind::ExtractionRun, transcript);
        event.details.insert("attempt".into(), attempt.to_string());
        let count = |name: &str| candidates.iter().filter(|c| c.review.as_str() == name).count().to_string();
        for name in ["invalid", "accepted", "revised", "revision_refused", "rejected", "unreviewed"] {
            event.details.insert(name.into(), count(name));
        }
        event.details.insert("proposed".into(), (candidates.len() + malformed.len()).to_string());
        event.details.insert("malformed".into(), malformed.len().to_string());
        let written = candidates
            .iter()
            .filter(|c| matches!(&c.write, Some(Ok(KeyedWrite::Written(outcome))) if outcome.record_id().is_some()))
            .count();
        event.details.insert("written".into(), written.to_string());
        let earlier =
            candidates.iter().filter(|c| matches!(&c.write, Some(Ok(KeyedWrite::Earlier(_))))).count();
        event.details.insert("already_written".into(), earlier.to_string());
        event.details.insert("input_tokens".into(), usage.input_tokens.to_string());
        event.details.insert("output_tokens".into(), usage.output_tokens.to_string());
        let write_json = |write: &Option<Result<KeyedWrite, String>>| match write {
            None => json!(null),
            Some(Ok(KeyedWrite::Written(outcome))) => {
                json!({"outcome": outcome.kind(), "record_id": outcome.record_id().map(|id| id.to_string())})
            }
            Some(Ok(KeyedWrite::Earlier(receipt))) => json!({
                "outcome": "already_written",
                "record_id": receipt.record_id.to_string(),
                "earlier_outcome": receipt.outcome.as_str(),
            }),
            Some(Err(error)) => json!({"error": error}),
        };
        let outcomes: Vec<_> = candidates
            .iter()
            .map(|c| json!({"index": c.index, "review": c.review.as_str(), "reason": c.review.reason(), "write": write_json(&c.write)}))
            .collect();
        event.details.insert("outcomes".into(), serde_json::Value::from(outcomes).to_string());
        if !malformed.is_empty() {
            event.details.insert("malformed_reasons".into(), json!(malformed).to_string());
        }
        event.details.insert("summary".into(), write_json(summary).to_string());
        self.audit.append(vec![event]).await?;
        Ok(())
    }
}

/// The key of a candidate's write: its session and a SHA-256 of everything the write
/// writes, length-prefixed field by field. The same candidate proposed again (by a retried
/// run, or twice in one run) is one write; any other candidate, even from the same turn,
/// is another key, so nothing is skipped by mistake. Versioned: changing what goes in
/// changes the prefix.
pub(crate) fn write_key(session: &SessionId, request: &WriteRequest) -> WriteKey {
    let entity = |r: &EntityRef| match r {
        EntityRef::Id(id) => format!("id:{id}"),
        EntityRef::Name { name, kind } => format!("name:{}:{}", kind.as_str(), name.as_str()),
    };
    let time = |t: Option<Timestamp>| t.map(|t| t.timestamp_millis().to_string()).unwrap_or_default();
    let fields = [
        "retold-write-key-v1".to_owned(),
        request.memory_type.as_str().to_owned(),
        request.content.as_str().to_owned(),
        request.scope.to_string(),
        request.subject.as_ref().map(entity).unwrap_or_default(),
        request.attribute.as_ref().map(|a| a.as_str().to_owned()).unwrap_or_default(),
        request.mentions.iter().map(entity).collect::<Vec<_>>().join("\n"),
        request.source_kind.as_str().to_owned(),
        request.source_ref.as_ref().map(|r| r.as_str().to_owned()).unwrap_or_default(),
        request.evidence.as_ref().map(|e| e.as_str().to_owned()).unwrap_or_default(),
        time(request.event_at),
        time(request.expires_at),
        request.confidence.map(|c| format!("{:016x}", c.get().to_bits())).unwrap_or_default(),
        request.tags.iter().map(|t| t.as_str().to_owned()).collect::<Vec<_>>().join("\n"),
    ];
    let mut hasher = Sha256::new();
    for field in &fields {
        hasher.update((field.len() as u64).to_le_bytes());
        hasher.update(field.as_bytes());
    }
    let digest = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    WriteKey { session: session.clone(), digest }
}
