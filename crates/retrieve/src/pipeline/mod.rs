//! `memory_search` as named stages: eligibility → rewrite → channels → fusion → fetch →
//! result control (freshness, substance, gate, duplicates, reranker, newer first) → budget →
//! trace. Each stage is a function with its own input and output, unit-tested in `tests.rs`;
//! `search` only sequences them and times each under its `PipelineStage` name.

mod channels;
mod control;
mod explain;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use retold_domain::{
    EligibilityFilter, PipelineStage, Principal, RecordId, RecordKey, Result, RewriteStatus, SearchId,
    SearchTrace, TraceDrop, TraceNote,
};
use retold_policy::ScopeAccess;
use tracing::{Instrument, info_span};

pub(crate) use self::channels::ChannelHits;
use self::channels::ChannelQuery;
pub(crate) use self::control::Candidate;
pub use self::control::{Admission, NewerFirst, ResultBudget};
pub use self::control::{shown_tokens, text_tokens};
use crate::config::RerankerPlacement;
use crate::request::{Channels, SearchHit, SearchRequest, SearchResponse};
use crate::retriever::Retriever;
use crate::rewrite::Rewrite;

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Per-stage durations, in pipeline order.
#[derive(Default)]
struct Timings(Vec<(PipelineStage, u64)>);

impl Timings {
    fn record(&mut self, stage: PipelineStage, since: Instant) {
        self.0.push((stage, micros(since)));
    }
}

/// The eligible set: what every channel and every later stage is restricted to. Keys are
/// sorted (the port returns them by key), so membership is a binary search and no map of
/// tens of thousands of ids is built per search.
pub(crate) struct Eligible {
    pub(crate) keys: Arc<Vec<RecordKey>>,
}

impl Eligible {
    fn new(mut keys: Vec<RecordKey>) -> Self {
        if !keys.is_sorted() {
            keys.sort_unstable();
        }
        Self { keys: Arc::new(keys) }
    }

    pub(crate) fn contains(&self, key: RecordKey) -> bool {
        self.keys.binary_search(&key).is_ok()
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

/// Equal fused scores never go against the better-evidenced record: among equal scores, a
/// record found by more channels comes first, then one whose lexical match covers more query
/// identifiers, then more query terms; otherwise RRF's own order (best single rank, id)
/// stands. (An exact identifier match at lexical rank 1 and a dense-only rank 1 both score
/// 1/61; the identifier match must not lose that tie.)
pub(crate) fn break_ties_by_evidence(fused: &mut [(RecordId, f64)], hits: &ChannelHits) {
    let evidence = |id: &RecordId| {
        let channels = usize::from(hits.in_dense_lists(id))
            + usize::from(hits.lexical.contains_key(id))
            + usize::from(hits.entity.contains_key(id));
        let (identifiers, terms) = hits
            .lexical
            .get(id)
            .map_or((0, 0), |l| (l.matched.iter().filter(|m| m.identifier).count(), l.matched.len()));
        (channels, identifiers, terms)
    };
    // Stable: within equal score and equal evidence the RRF order is kept.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| evidence(&b.0).cmp(&evidence(&a.0))));
}

/// The query the channels run, and what the rewriter did.
struct RewrittenQuery {
    query: String,
    status: RewriteStatus,
    note: Option<String>,
}

/// What a search's trace collects as the stages run: each stage's duration, the records
/// dropped and why, and what a stage changed about the query or the scores.
#[derive(Default)]
struct StageLog {
    timings: Timings,
    drops: Vec<TraceDrop>,
    notes: Vec<TraceNote>,
}

/// What a search did, for its trace.
struct Searched {
    now: retold_domain::Timestamp,
    /// The request as the trace describes it.
    request: Vec<(String, String)>,
    rewritten: RewrittenQuery,
    eligible: u64,
    channels: Vec<(retold_domain::Channel, Vec<retold_domain::TraceCandidate>)>,
    fused: Vec<(RecordId, f64)>,
    log: StageLog,
}

impl Searched {
    fn trace(self, id: SearchId, principal: &Principal, hits: &[SearchHit]) -> SearchTrace {
        SearchTrace {
            id,
            at: self.now,
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            request: self.request,
            query: self.rewritten.query,
            rewrite_status: self.rewritten.status,
            rewrite_note: self.rewritten.note,
            eligible_count: self.eligible,
            channels: self.channels,
            fused: self.fused,
            drops: self.log.drops,
            notes: self.log.notes,
            results: explain::trace_results(hits),
            timings_us: self.log.timings.0,
        }
    }
}

/// The time a query names: its windows ("last month", "in March"; none when the request
/// filters by event time itself) and whether the request filtered by event time.
struct QueryTime {
    windows: Vec<crate::when::TimeWindow>,
    explicit: bool,
}

impl QueryTime {
    /// A time-bounded search: no freshness decay, no newer-first.
    fn bounded(&self) -> bool {
        self.explicit || !self.windows.is_empty()
    }
}

/// What result control reads besides the candidates.
struct ControlInput<'a> {
    /// The query the channels ran (the rewriter's, when it rewrote).
    query: &'a str,
    /// The query as the request asked it.
    asked: &'a str,
    now: retold_domain::Timestamp,
    time: &'a QueryTime,
    /// The query's words besides the names of the entities it names (the gate's input).
    besides: &'a [String],
    limit: usize,
}

impl Retriever {
    /// `memory_search`: the seed's stages in order, each timed under its `PipelineStage`.
    pub async fn search(&self, principal: &Principal, request: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let now = self.ports.clock.now();
        let limit = request.limit.unwrap_or(self.config.default_limit).clamp(1, self.config.max_limit);
        let mut log = StageLog::default();

        let (access, filter, eligible) = self.eligibility(principal, request, now, &mut log.timings).await?;
        let pointed = self.pointed(principal, request);
        let rewritten = self.rewrite(request, &mut log.timings).await;
        let time = self.query_time(request, now);
        let in_windows = self.in_windows(&time, request.channels, &filter, &eligible).await?;
        let channel_query = ChannelQuery {
            access: &access,
            query: &rewritten.query,
            pointed: pointed.as_ref(),
            eligible: &eligible,
            in_windows: in_windows.as_ref(),
            which: request.channels,
        };
        let mut hits = self.channels(&channel_query, &mut log.timings).await?;
        let fused = self.fuse(&hits, &mut log.timings);
        log.notes.append(&mut hits.notes);
        let channels = hits.trace.clone();
        let besides = std::mem::take(&mut hits.entity_besides);
        let mut candidates = self.fetch(&fused, &eligible, hits, request.include_conflicts, &mut log).await?;
        if request.channels.result_control {
            let input = ControlInput {
                query: &rewritten.query,
                asked: &request.query,
                now,
                time: &time,
                besides: &besides,
                limit,
            };
            candidates = self.result_control(candidates, &input, &mut log).await;
        }
        let budget =
            request.channels.result_control.then(|| request.token_budget.unwrap_or(self.config.token_budget));
        let hits = self.budget(candidates, &rewritten.query, (limit, budget), &mut log);
        log.timings.record(PipelineStage::Total, started);

        let search_id = SearchId::from_body(&self.ports.ids.next_body()).expect("generated ids are valid");
        let rewrite_status = rewritten.status;
        let searched = Searched {
            now,
            request: explain::describe(request, limit, budget),
            rewritten,
            eligible: eligible.len() as u64,
            channels,
            fused,
            log,
        };
        let trace = searched.trace(search_id.clone(), principal, &hits);
        self.ports.search_log.append_trace(trace).instrument(info_span!("retrieve.search_log")).await?;
        Ok(SearchResponse { search_id, hits, eligible_count: eligible.len(), rewrite_status })
    }

    /// Stage 7: the first `limit` results within the token budget (result control only),
    /// each with its passage and explanation.
    fn budget(
        &self,
        candidates: Vec<Candidate>,
        query: &str,
        (limit, budget): (usize, Option<usize>),
        log: &mut StageLog,
    ) -> Vec<SearchHit> {
        let t = Instant::now();
        let words = crate::passage::query_words(query);
        let kept =
            control::budget(candidates, limit, budget, (&words, self.config.passage_tokens), &mut log.drops);
        log.timings.record(PipelineStage::Budget, t);
        kept.into_iter().enumerate().map(|(i, c)| explain::hit(c, i)).collect()
    }

    /// Whom the question's pronouns name, read from the words as asked (a rewrite may
    /// replace them): the principal's user for the first person, its agent for the second.
    fn pointed(&self, principal: &Principal, request: &SearchRequest) -> Option<retold_domain::Name> {
        self.config.pronouns.then(|| crate::query::pointed(&request.query, principal)).flatten()
    }

    /// A query that names its time ("last month", "in March") is time-bounded: the records
    /// inside its windows get a list of their own, and rank up under result control.
    fn query_time(&self, request: &SearchRequest, now: retold_domain::Timestamp) -> QueryTime {
        let explicit = request.event_from.is_some() || request.event_to.is_some();
        let windows = match self.config.query_time_boost {
            Some(_) if !explicit && request.channels.result_control => {
                crate::when::time_windows(&request.query, now)
            }
            _ => Vec::new(),
        };
        QueryTime { windows, explicit }
    }

    /// Stage 4: the channels' lists fused by weighted RRF; equal scores go to the
    /// better-evidenced record.
    fn fuse(&self, hits: &ChannelHits, timings: &mut Timings) -> Vec<(RecordId, f64)> {
        let t = Instant::now();
        let mut fused = hits.fused(&self.config.fusion_weights, self.config.rrf_k);
        break_ties_by_evidence(&mut fused, hits);
        timings.record(PipelineStage::Fusion, t);
        fused
    }

    /// Stage 6, result control: the score factors, then the gate, duplicates, the reranker
    /// (before or after the gate) and, where recency counts (no time named or filtered),
    /// the newer of two alike results first.
    async fn result_control(
        &self,
        mut candidates: Vec<Candidate>,
        input: &ControlInput<'_>,
        log: &mut StageLog,
    ) -> Vec<Candidate> {
        let t = Instant::now();
        self.score_factors(&mut candidates, input, &mut log.notes);
        log.timings.record(PipelineStage::Freshness, t);
        let reranker = self.ports.reranker.as_ref().filter(|_| self.config.reranker_enabled);
        let gate_first = reranker.is_none() || self.config.reranker_placement == RerankerPlacement::AfterGate;
        if gate_first {
            candidates = self.gate(candidates, input, log);
        }
        let t = Instant::now();
        let floor = self.config.duplicate_collapse_floor;
        candidates = control::collapse_duplicates(
            candidates,
            |key| self.ports.index.vector(key),
            floor,
            &mut log.drops,
        );
        log.timings.record(PipelineStage::Duplicates, t);
        if let Some(reranker) = reranker {
            let t = Instant::now();
            let (timeout, head) =
                (self.config.reranker_timeout, (self.config.reranker_candidates, self.config.rrf_k));
            candidates =
                control::rerank(reranker.as_ref(), timeout, input.query, candidates, head, &mut log.notes)
                    .await;
            log.timings.record(PipelineStage::Reranker, t);
            if !gate_first {
                // In place of the gate for what it reordered; what it did not (the tail
                // past `candidates`, or everything when it timed out or failed) is gated.
                candidates = self.gate(candidates, input, log);
            }
        }
        if let (Some(rule), false) = (self.config.newer_first, input.time.bounded()) {
            let t = Instant::now();
            let rule = (rule, input.limit, self.ports.stemmer.as_ref());
            control::newer_first(&mut candidates, |key| self.ports.index.vector(key), rule, &mut log.notes);
            log.timings.record(PipelineStage::NewerFirst, t);
        }
        candidates
    }

    /// The score factors: the query's time (a time-bounded query: no freshness decay, and the
    /// episodes inside its windows rank up) or freshness, a when-question's dated records,
    /// and substance; each sets its factor, and the score is the fused score times them all,
    /// applied in one place (`control::apply_factors`).
    fn score_factors(
        &self,
        candidates: &mut [Candidate],
        input: &ControlInput<'_>,
        notes: &mut Vec<TraceNote>,
    ) {
        let windows = &input.time.windows;
        if let (Some(boost), false) = (self.config.query_time_boost, windows.is_empty()) {
            control::query_time(candidates, windows, boost, notes);
        } else if !input.time.explicit {
            control::freshness(candidates, input.now, &self.config);
        }
        if self.config.asks_when_boost > 1.0 && crate::when::asks_when(input.asked) {
            control::asks_when(candidates, self.config.asks_when_boost, notes);
        }
        if let Some(rule) = self.config.substance {
            control::substance(candidates, rule, notes);
        }
        control::apply_factors(candidates);
    }

    /// The gate, timed.
    fn gate(
        &self,
        candidates: Vec<Candidate>,
        input: &ControlInput<'_>,
        log: &mut StageLog,
    ) -> Vec<Candidate> {
        let t = Instant::now();
        let kept = control::gate(candidates, &self.config, input.besides, &mut log.drops);
        log.timings.record(PipelineStage::Gate, t);
        kept
    }

    /// Stage 1: the principal's readable scopes, lifecycle, expiry, types and event range.
    async fn eligibility(
        &self,
        principal: &Principal,
        request: &SearchRequest,
        now: retold_domain::Timestamp,
        timings: &mut Timings,
    ) -> Result<(ScopeAccess, EligibilityFilter, Eligible)> {
        let t = Instant::now();
        let access = self.access(principal).await?;
        let filter = EligibilityFilter {
            scopes: access.readable.clone(),
            statuses: EligibilityFilter::statuses_for(request.include_history),
            now,
            types: request.types.clone(),
            event_from: request.event_from,
            event_to: request.event_to,
            include_conflicts: request.include_conflicts,
            origins: request.origins.clone(),
            excluded_session: principal.session_id.clone().filter(|_| !request.include_current_session),
        };
        let keys = self
            .ports
            .eligibility
            .eligible_keys(&filter)
            .instrument(info_span!("retrieve.eligibility"))
            .await?;
        timings.record(PipelineStage::Eligibility, t);
        Ok((access, filter, Eligible::new(keys)))
    }

    /// The eligible records whose event time falls inside one of the query's windows, when
    /// the dense channel lists them (`fusion.window`): the search's own filter with each
    /// window as its event range (a record without an event time is in none), cut to the
    /// eligible set.
    async fn in_windows(
        &self,
        time: &QueryTime,
        which: Channels,
        filter: &EligibilityFilter,
        eligible: &Eligible,
    ) -> Result<Option<Eligible>> {
        let lists_window = self.config.fusion_weights.window > 0.0 && which.dense;
        if !lists_window || time.windows.is_empty() || eligible.len() == 0 {
            return Ok(None);
        }
        let mut keys = Vec::new();
        for w in &time.windows {
            let within =
                EligibilityFilter { event_from: Some(w.from), event_to: Some(w.to), ..filter.clone() };
            keys.extend(
                self.ports
                    .eligibility
                    .eligible_keys(&within)
                    .instrument(info_span!("retrieve.eligibility.window"))
                    .await?,
            );
        }
        keys.retain(|k| eligible.contains(*k));
        keys.sort_unstable();
        keys.dedup();
        Ok(Some(Eligible::new(keys)))
    }

    /// Stage 2: the query rewriter (off by default); any failure runs the raw query.
    async fn rewrite(&self, request: &SearchRequest, timings: &mut Timings) -> RewrittenQuery {
        let t = Instant::now();
        let raw = || request.query.clone();
        let outcome = self
            .ports
            .rewriter
            .rewrite(&request.query, &request.context)
            .instrument(info_span!("retrieve.rewrite"))
            .await;
        let (query, status, note) = match outcome {
            Ok(Rewrite::Off) => (raw(), RewriteStatus::Off, None),
            Ok(Rewrite::Rewritten(q)) if q == request.query => (q, RewriteStatus::Unchanged, None),
            Ok(Rewrite::Rewritten(q)) => (q, RewriteStatus::Rewritten, None),
            Ok(Rewrite::Failed(reason)) => (raw(), RewriteStatus::Failed, Some(reason)),
            Ok(Rewrite::Refused(reason)) => (raw(), RewriteStatus::Refused, Some(reason)),
            Err(error) => (raw(), RewriteStatus::Failed, Some(error.to_string())),
        };
        timings.record(PipelineStage::Rewrite, t);
        RewrittenQuery { query, status, note }
    }

    /// With conflicts included: mark each provisional candidate a conflict link names as the
    /// lower-trust side with the record that stays the normal result (one batched read).
    async fn mark_conflicts(&self, candidates: &mut [Candidate]) -> Result<()> {
        let provisional: Vec<RecordId> = candidates
            .iter()
            .filter(|c| c.record.status == retold_domain::Status::Provisional)
            .map(|c| c.id.clone())
            .collect();
        if provisional.is_empty() {
            return Ok(());
        }
        let links = self.ports.graph.conflicts_of(&provisional).await?;
        for c in candidates.iter_mut() {
            if c.record.status == retold_domain::Status::Provisional {
                c.conflict_with =
                    links.iter().find(|l| l.conflicting_id == c.id).map(|l| l.record_id.clone());
            }
        }
        Ok(())
    }

    /// Stage 5: every eligible fused record in one round trip; a fused id outside the
    /// eligible set, or one the store no longer returns, is dropped with its reason. With
    /// conflicts included, the provisional side of a conflict is marked.
    async fn fetch(
        &self,
        fused: &[(RecordId, f64)],
        eligible: &Eligible,
        mut hits: ChannelHits,
        include_conflicts: bool,
        log: &mut StageLog,
    ) -> Result<Vec<Candidate>> {
        let t = Instant::now();
        let keys = std::mem::take(&mut hits.keys);
        let key_of = |id: &RecordId| keys.get(id).copied().filter(|k| eligible.contains(*k));
        let wanted: Vec<RecordId> =
            fused.iter().filter(|(id, _)| key_of(id).is_some()).map(|(id, _)| id.clone()).collect();
        let mut records: HashMap<RecordId, _> =
            self.ports.records.get_many(&wanted).await?.into_iter().map(|r| (r.id.clone(), r)).collect();
        let mut candidates = Vec::with_capacity(wanted.len());
        for (i, (id, score)) in fused.iter().enumerate() {
            let (stage, reason) = match (key_of(id), records.remove(id)) {
                (Some(key), Some(record)) => {
                    candidates.push(Candidate::fused(id.clone(), key, (i, *score), record, &mut hits));
                    continue;
                }
                (None, _) => (retold_domain::DropStage::Eligibility, "not eligible"),
                (Some(_), None) => (retold_domain::DropStage::Fetch, "the store no longer has this record"),
            };
            log.drops.push(TraceDrop { record_id: id.clone(), stage, reason: reason.into() });
        }
        if include_conflicts {
            self.mark_conflicts(&mut candidates).await?;
        }
        log.timings.record(PipelineStage::Fetch, t);
        Ok(candidates)
    }
}
