//! The utility-aware orchestrator (seed section 1): the host lets its model draft an answer,
//! then asks whether memory would change it. Gap planning names what the draft lacks; one
//! bounded search per gap runs through the normal search path (scopes, lifecycle, trace);
//! draft-relative admission keeps only records that answer a gap and that neither the draft
//! nor the session's profile already carries; a bundle regenerates only with a recorded
//! fitness result, and any failure keeps the draft and says why. Every decision is stored.

mod gaps;
mod registry;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use retold_domain::text::unicode61_tokens;
use retold_domain::{
    Clock, CompletionClient, CompletionRequest, DecisionId, DecisionLog, DecisionTimings, Disposition,
    DomainError, Embedder, EventKind, Gap, IdGenerator, KeptReason, MemoryRecord, Principal, ProfileBlock,
    RecordId, Result, SearchId, TurnMemoryDecision,
};
use retold_policy::{AdmissionCandidate, Refusal, admit};
use retold_retrieve::{Retriever, SearchRequest};

pub use self::gaps::{
    GapPlanner, HeuristicGapPlanner, HostedGapPlanner, InventorySource, MAX_QUERY_CHARS, Plan, PlanInput,
};
pub use self::registry::{Bundle, Fitness, GapPolicy};
use crate::activation::{ActivationService, Inventory};
use crate::sessions::{SessionService, app_event};

/// The regeneration prompt, version `regenerate_v1`.
pub(crate) const REGENERATE_V1: &str = include_str!("../prompts/regenerate_v1.md");
/// Longest turn or draft accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Bounds of one decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrchestratorConfig {
    /// Gaps searched per decision, at most.
    pub max_gaps: usize,
    /// Results read per gap search.
    pub results_per_gap: usize,
    /// Total time for a decision when the request names none, and the most it may name.
    pub deadline: Duration,
    pub max_deadline: Duration,
    /// Output tokens of the regenerated answer.
    pub regenerate_max_tokens: u32,
}

/// A host's question about one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    /// The user's message.
    pub turn: String,
    /// The host model's draft answer.
    pub draft: String,
    /// Total time the host gives the decision.
    pub deadline: Option<Duration>,
}

/// A decision with the records it admitted (which the host may use itself when the draft
/// was kept).
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionOutcome {
    pub decision: TurnMemoryDecision,
    pub admitted: Vec<MemoryRecord>,
    /// Why each searched record was not admitted, for the explanation.
    pub refused: Vec<(RecordId, Refusal)>,
}

/// What the pipeline decided before it is stored (the evaluation runs this part alone).
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub disposition: Disposition,
    pub gaps: Vec<Gap>,
    pub searches: Vec<SearchId>,
    pub admitted: Vec<MemoryRecord>,
    pub refused: Vec<(RecordId, Refusal)>,
    pub timings: DecisionTimings,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub answer: Option<String>,
}

/// The decision pipeline: plan, search, admit, regenerate, over the search path, the
/// embedder (for the already-stated check) and, when a key allows it, the hosted model that
/// regenerates. Stores nothing (the evaluation runs it alone).
#[derive(Clone)]
pub struct DecisionPipeline {
    pub retriever: Retriever,
    pub embedder: Arc<dyn Embedder>,
    pub planner: Arc<dyn GapPlanner>,
    pub bundle: Bundle,
    /// The regeneration client, or why regeneration cannot run (no model, no key).
    pub regenerator: std::result::Result<Arc<dyn CompletionClient>, String>,
    pub config: OrchestratorConfig,
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for DecisionPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecisionPipeline")
            .field("bundle", &self.bundle.id)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The orchestrator: the pipeline for a principal's session, with its profile and inventory,
/// and every decision stored and audited.
#[derive(Clone)]
pub struct OrchestratorService {
    pipeline: DecisionPipeline,
    sessions: SessionService,
    activation: ActivationService,
    decisions: Arc<dyn DecisionLog>,
    ids: Arc<dyn IdGenerator>,
}

/// The principal's inventory, counted when a planner asks for it.
struct PrincipalInventory<'a> {
    activation: &'a ActivationService,
    principal: &'a Principal,
}

#[async_trait::async_trait]
impl InventorySource for PrincipalInventory<'_> {
    async fn inventory(&self) -> Result<Inventory> {
        self.activation.inventory(self.principal).await
    }
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Statements compared by embedding, at most (a longer draft is still checked verbatim).
const MAX_STATEMENTS: usize = 64;

/// The draft's sentences and the profile's lines: what the answer already states.
fn statements(draft: &str, profile: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = draft
        .split(['.', '!', '?', '\n', ';'])
        .map(str::trim)
        .filter(|s| s.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .map(str::to_owned)
        .collect();
    if let Some(profile) = profile {
        out.extend(
            profile.lines().map(|l| l.trim().trim_start_matches("- ").to_owned()).filter(|l| !l.is_empty()),
        );
    }
    out.truncate(MAX_STATEMENTS);
    out
}

/// Whether `needle`'s tokens appear in order, contiguously, in `haystack`'s.
fn contains_tokens(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

impl std::fmt::Debug for OrchestratorService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrchestratorService").field("pipeline", &self.pipeline).finish_non_exhaustive()
    }
}

impl OrchestratorService {
    pub fn new(
        pipeline: DecisionPipeline,
        sessions: SessionService,
        activation: ActivationService,
        decisions: Arc<dyn DecisionLog>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self { pipeline, sessions, activation, decisions, ids }
    }

    /// Decide about one turn of the principal's session, store the decision, and return it
    /// with the admitted records.
    pub async fn decide(
        &self,
        principal: &Principal,
        session_id: &str,
        request: &DecisionRequest,
    ) -> Result<DecisionOutcome> {
        for (field, text) in [("turn", &request.turn), ("draft", &request.draft)] {
            if text.trim().is_empty() || text.chars().count() > MAX_TEXT_CHARS || text.contains('\0') {
                return Err(DomainError::Invalid {
                    field,
                    reason: format!("must be 1 to {MAX_TEXT_CHARS} characters, not blank, without NUL"),
                });
            }
        }
        let started = Instant::now();
        let session = self.sessions.own(principal, session_id).await?;
        let profile = self.activation.profile(&session.id).await?;
        // The deadline covers the whole decision, these reads included.
        let config = &self.pipeline.config;
        let deadline = request.deadline.unwrap_or(config.deadline).min(config.max_deadline);
        let request =
            DecisionRequest { deadline: Some(deadline.saturating_sub(started.elapsed())), ..request.clone() };
        let inventory = PrincipalInventory { activation: &self.activation, principal };
        let decided = self.pipeline.run(principal, profile.as_ref(), &inventory, &request).await?;
        let decision = TurnMemoryDecision {
            id: DecisionId::from_body(&self.ids.next_body())?,
            session_id: session.id.clone(),
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            // Stored to the millisecond: the answer says what a later read returns.
            created_at: retold_domain::chrono::DateTime::from_timestamp_millis(
                self.pipeline.clock.now().timestamp_millis(),
            )
            .unwrap_or_else(|| self.pipeline.clock.now()),
            bundle_id: self.pipeline.bundle.id.clone(),
            disposition: decided.disposition.clone(),
            gaps: decided.gaps.clone(),
            searches: decided.searches.clone(),
            admitted: decided.admitted.iter().map(|r| r.id.clone()).collect(),
            timings: decided.timings,
            input_tokens: decided.input_tokens,
            output_tokens: decided.output_tokens,
            answer: decided.answer.clone(),
        };
        let reason = match &decision.disposition {
            Disposition::DraftKept(reason) => reason.code().to_owned(),
            Disposition::Regenerated => "regenerated".to_owned(),
        };
        let event = app_event(
            self.ids.as_ref(),
            self.pipeline.clock.as_ref(),
            EventKind::DecisionMade,
            Some(principal),
            &[
                ("decision_id", decision.id.to_string()),
                ("session_id", session.id.to_string()),
                ("bundle", decision.bundle_id.clone()),
                ("disposition", decision.disposition.as_str().to_owned()),
                ("reason", reason),
                ("admitted", decision.admitted.len().to_string()),
            ],
        );
        self.decisions.put_decision(&decision, event).await?;
        Ok(DecisionOutcome { decision, admitted: decided.admitted, refused: decided.refused })
    }
}

impl DecisionPipeline {
    /// The pipeline without storing: plan, search, admit, regenerate. Errors of the store
    /// are errors; every failure of a stage is a kept draft with its reason.
    pub async fn run(
        &self,
        principal: &Principal,
        profile: Option<&ProfileBlock>,
        inventory: &dyn InventorySource,
        request: &DecisionRequest,
    ) -> Result<Decided> {
        let started = Instant::now();
        let deadline = request.deadline.unwrap_or(self.config.deadline).min(self.config.max_deadline);
        let left = || deadline.saturating_sub(started.elapsed());
        let mut decided = Decided {
            disposition: Disposition::DraftKept(KeptReason::NoGaps),
            gaps: Vec::new(),
            searches: Vec::new(),
            admitted: Vec::new(),
            refused: Vec::new(),
            timings: DecisionTimings::default(),
            input_tokens: 0,
            output_tokens: 0,
            answer: None,
        };
        let finish = |mut d: Decided, disposition: Disposition| {
            d.disposition = disposition;
            d.timings.total_ms = ms(started);
            d
        };

        // Gap planning.
        let t = Instant::now();
        let input = PlanInput {
            turn: &request.turn,
            draft: &request.draft,
            profile: profile.map(|p| p.text.as_str()),
            inventory,
        };
        let plan = match tokio::time::timeout(left(), self.planner.plan(&input)).await {
            Err(_) => Err(format!("planning ran past the {} ms deadline", deadline.as_millis())),
            Ok(plan) => plan,
        };
        decided.timings.plan_ms = ms(t);
        let plan = match plan {
            Ok(plan) => plan,
            Err(why) => return Ok(finish(decided, Disposition::DraftKept(KeptReason::Failed(why)))),
        };
        decided.input_tokens += plan.input_tokens;
        decided.output_tokens += plan.output_tokens;
        decided.gaps = plan.gaps.into_iter().take(self.config.max_gaps).collect();
        if decided.gaps.is_empty() {
            return Ok(finish(decided, Disposition::DraftKept(KeptReason::NoGaps)));
        }

        // Gap-driven retrieval: one bounded search per gap, through the normal path.
        let t = Instant::now();
        let mut hits = Vec::new();
        for gap in &decided.gaps {
            let mut search = SearchRequest::new(gap.query.clone());
            search.limit = Some(self.config.results_per_gap);
            // Only distilled memories are admitted into an answer: a verbatim turn is the
            // conversation's raw material (a question, a hedge, the agent's own earlier
            // answer), which host recall and memory_search show the model as what was said,
            // and which extraction distills when a model is configured.
            search.origins = Some(vec![retold_domain::Origin::Memory]);
            match tokio::time::timeout(left(), self.retriever.search(principal, &search)).await {
                Err(_) => {
                    decided.timings.retrieve_ms = ms(t);
                    let why = format!("retrieval ran past the {} ms deadline", deadline.as_millis());
                    return Ok(finish(decided, Disposition::DraftKept(KeptReason::Failed(why))));
                }
                Ok(Err(e @ DomainError::Invalid { .. })) => {
                    decided.timings.retrieve_ms = ms(t);
                    let why = format!("search for {:?}: {e}", gap.query);
                    return Ok(finish(decided, Disposition::DraftKept(KeptReason::Failed(why))));
                }
                // The store failing is the request failing, as for any search.
                Ok(Err(e)) => return Err(e),
                Ok(Ok(response)) => {
                    decided.searches.push(response.search_id);
                    hits.extend(response.hits);
                }
            }
        }
        decided.timings.retrieve_ms = ms(t);

        // Draft-relative admission.
        let t = Instant::now();
        let stated = statements(&request.draft, profile.map(|p| p.text.as_str()));
        // The records' served vectors; only a record the index lacks is embedded here.
        let ids: Vec<RecordId> = hits.iter().map(|h| h.record.id.clone()).collect();
        let served = if hits.is_empty() { Vec::new() } else { self.retriever.stored_vectors(&ids).await? };
        let mut texts: Vec<String> = if hits.is_empty() { Vec::new() } else { stated.clone() };
        texts.extend(
            hits.iter()
                .zip(&served)
                .filter(|(_, v)| v.is_none())
                .map(|(h, _)| h.record.content.as_str().to_owned()),
        );
        let embedded = if texts.is_empty() {
            Ok(Vec::new())
        } else {
            match tokio::time::timeout(left(), self.embedder.embed(&texts)).await {
                Err(_) => Err(format!("admission ran past the {} ms deadline", deadline.as_millis())),
                Ok(Err(e)) => Err(format!("admission: embedding the draft: {e}")),
                Ok(Ok(vectors)) => Ok(vectors),
            }
        };
        let mut embedded = match embedded {
            Ok(vectors) => vectors.into_iter(),
            Err(why) => {
                decided.timings.admit_ms = ms(t);
                return Ok(finish(decided, Disposition::DraftKept(KeptReason::Failed(why))));
            }
        };
        let stated_vectors: Vec<Vec<f32>> =
            embedded.by_ref().take(if hits.is_empty() { 0 } else { stated.len() }).collect();
        let hit_vectors: Vec<Vec<f32>> =
            served.into_iter().map(|v| v.unwrap_or_else(|| embedded.next().unwrap_or_default())).collect();
        let mut said: Vec<String> = unicode61_tokens(&request.draft);
        if let Some(p) = profile {
            said.extend(unicode61_tokens(&p.text));
        }
        let candidates: Vec<AdmissionCandidate<'_>> = hits
            .iter()
            .zip(&hit_vectors)
            .map(|(hit, vector)| AdmissionCandidate {
                record: &hit.record,
                dense_cosine: hit.dense_cosine(),
                lexical_matched: hit.lexical.as_ref().map_or(0, |l| l.matched.len()),
                stated_similarity: stated_vectors.iter().map(|s| cosine(s, vector)).fold(0.0, f32::max),
                stated_verbatim: contains_tokens(&said, &unicode61_tokens(hit.record.content.as_str()))
                    || request.draft.contains(hit.record.id.as_str()),
            })
            .collect();
        let readable = self.retriever.access(principal).await?.readable;
        let in_profile: HashSet<RecordId> =
            profile.map(|p| p.entries.iter().map(|e| e.record_id.clone()).collect()).unwrap_or_default();
        let verdicts = admit(&self.bundle.admission, &candidates, &readable, &in_profile, self.clock.now());
        let mut refused_ids = HashSet::new();
        for ((id, verdict), hit) in verdicts.into_iter().zip(&hits) {
            match verdict {
                Ok(()) => decided.admitted.push(hit.record.clone()),
                Err(Refusal::Duplicate) => {}
                // A record refused for one gap is listed once.
                Err(refusal) => {
                    if refused_ids.insert(id.clone()) {
                        decided.refused.push((id, refusal));
                    }
                }
            }
        }
        let admitted_ids: HashSet<&RecordId> = decided.admitted.iter().map(|r| &r.id).collect();
        decided.refused.retain(|(id, _)| !admitted_ids.contains(id));
        decided.timings.admit_ms = ms(t);
        if decided.admitted.is_empty() {
            return Ok(finish(decided, Disposition::DraftKept(KeptReason::NothingAdmitted)));
        }
        if self.bundle.fit(&self.config).is_none() {
            return Ok(finish(decided, Disposition::DraftKept(KeptReason::UnfitBundle)));
        }

        // Fail-closed regeneration.
        let t = Instant::now();
        let outcome = self.regenerate(request, &decided.admitted, left()).await;
        decided.timings.regenerate_ms = ms(t);
        match outcome {
            Ok((answer, input_tokens, output_tokens)) => {
                decided.input_tokens += input_tokens;
                decided.output_tokens += output_tokens;
                decided.answer = Some(answer);
                Ok(finish(decided, Disposition::Regenerated))
            }
            Err(why) => Ok(finish(decided, Disposition::DraftKept(KeptReason::Failed(why)))),
        }
    }

    /// The regenerated answer and its tokens, or why there is none.
    async fn regenerate(
        &self,
        request: &DecisionRequest,
        admitted: &[MemoryRecord],
        left: Duration,
    ) -> std::result::Result<(String, u64, u64), String> {
        let client = self.regenerator.as_ref().map_err(Clone::clone)?;
        let model = self.bundle.model.clone().ok_or("the bundle names no regeneration model")?;
        if left.is_zero() {
            return Err("no time left for regeneration".into());
        }
        let mut user =
            format!("User's turn:\n{}\n\nDraft answer:\n{}\n\nMemories:\n", request.turn, request.draft);
        for record in admitted {
            user.push_str(&format!("- [{}] {}\n", record.memory_type.as_str(), record.content.as_str()));
        }
        let completion = CompletionRequest {
            model,
            system: REGENERATE_V1.to_owned(),
            user,
            schema_name: "regenerate_v1".to_owned(),
            schema_json: serde_json::json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["answer", "refusal"],
                "properties": {"answer": {"type": "string"}, "refusal": {"type": "string"}},
            })
            .to_string(),
            max_tokens: self.config.regenerate_max_tokens,
        };
        let answer = match tokio::time::timeout(left, client.complete(completion)).await {
            Err(_) => return Err(format!("regeneration: no answer within {} ms", left.as_millis())),
            Ok(Err(error)) => return Err(format!("regeneration: {error}")),
            Ok(Ok(answer)) => answer,
        };
        let value: serde_json::Value = serde_json::from_str(&answer.json)
            .map_err(|e| format!("regeneration: malformed answer ({e})"))?;
        let refusal = value["refusal"].as_str().unwrap_or_default().trim();
        if !refusal.is_empty() {
            return Err(format!("regeneration refused: {}", refusal.chars().take(200).collect::<String>()));
        }
        match value["answer"].as_str().map(str::trim) {
            Some(text) if !text.is_empty() && text.chars().count() <= MAX_TEXT_CHARS => {
                Ok((text.to_owned(), answer.input_tokens, answer.output_tokens))
            }
            Some(text) if !text.is_empty() => {
                Err(format!("regeneration: an answer over {MAX_TEXT_CHARS} characters"))
            }
            Some(_) => Err("regeneration refused: an empty answer".into()),
            None => Err("regeneration: malformed answer (no answer field)".into()),
        }
    }
}
