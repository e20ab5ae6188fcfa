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
    SearchTrace, TraceDrop, TraceNote, TraceResult,
};
use retold_policy::ScopeAccess;
use tracing::{Instrument, info_span};

pub(crate) use self::channels::ChannelHits;
pub(crate) use self::control::Candidate;
pub use self::control::{Admission, NewerFirst, ResultBudget};
pub use self::control::{shown_tokens, text_tokens};
use crate::config::RerankerPlacement;
use crate::request::{SearchHit, SearchRequest, SearchResponse};
use crate::retriever::Retriever;
use crate::rewrite::Rewrite;

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Per-stage durations, in pipeline order.
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

impl Retriever {
    /// `memory_search`.
    pub async fn search(&self, principal: &Principal, request: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let now = self.ports.clock.now();
        let mut timings = Timings(Vec::new());
        let limit = request.limit.unwrap_or(self.config.default_limit).clamp(1, self.config.max_limit);

        let t = Instant::now();
        let (access, filter, eligible) = self.eligibility(principal, request, now).await?;
        timings.record(PipelineStage::Eligibility, t);

        // Whom the question's pronouns name, read from the words as asked (a rewrite may
        // replace them): the principal's user for the first person, its agent for the second.
        let pointed =
            self.config.pronouns.then(|| crate::query::pointed(&request.query, principal)).flatten();
        let t = Instant::now();
        let rewritten = self.rewrite(request).await;
        timings.record(PipelineStage::Rewrite, t);

        // A query that names its time ("last month", "in March") is time-bounded: the records
        // inside its windows get a list of their own, and rank up under result control.
        let explicit = request.event_from.is_some() || request.event_to.is_some();
        let windows = match self.config.query_time_boost {
            Some(_) if !explicit && request.channels.result_control => {
                crate::when::time_windows(&request.query, now)
            }
            _ => Vec::new(),
        };
        let lists_window = self.config.fusion_weights.window > 0.0 && request.channels.dense;
        let in_windows = match lists_window && !windows.is_empty() && eligible.len() > 0 {
            true => Some(self.window_eligible((&filter, &eligible), &windows).await?),
            false => None,
        };
        let mut hits = self
            .channels(
                &access,
                &rewritten.query,
                pointed.as_ref(),
                (&eligible, in_windows.as_ref()),
                request.channels,
                &mut timings,
            )
            .await?;

        let t = Instant::now();
        let mut fused = hits.fused(&self.config.fusion_weights, self.config.rrf_k);
        break_ties_by_evidence(&mut fused, &hits);
        timings.record(PipelineStage::Fusion, t);

        let mut drops: Vec<TraceDrop> = Vec::new();
        let mut notes: Vec<TraceNote> = std::mem::take(&mut hits.notes);
        let t = Instant::now();
        let trace_channels = hits.trace.clone();
        let besides = std::mem::take(&mut hits.entity_besides);
        let mut candidates = self.fetch(&fused, &eligible, hits, &mut drops).await?;
        if request.include_conflicts {
            self.mark_conflicts(&mut candidates).await?;
        }
        timings.record(PipelineStage::Fetch, t);

        if request.channels.result_control {
            let t = Instant::now();
            // A time-bounded query: no freshness decay, and the episodes inside its windows
            // rank up.
            let time_bounded = explicit || (self.config.query_time_boost.is_some() && !windows.is_empty());
            if let (Some(boost), false) = (self.config.query_time_boost, windows.is_empty()) {
                control::query_time(&mut candidates, &windows, boost, &mut notes);
            } else if !explicit {
                control::freshness(&mut candidates, now, &self.config);
            }
            if self.config.asks_when_boost > 1.0 && crate::when::asks_when(&request.query) {
                control::asks_when(&mut candidates, self.config.asks_when_boost, &mut notes);
            }
            if let Some(rule) = self.config.substance {
                control::substance(&mut candidates, rule, &mut notes);
            }
            timings.record(PipelineStage::Freshness, t);
            let reranker = self.ports.reranker.as_ref().filter(|_| self.config.reranker_enabled);
            let gate_first =
                reranker.is_none() || self.config.reranker_placement == RerankerPlacement::AfterGate;
            if gate_first {
                let t = Instant::now();
                candidates = control::gate(candidates, &self.config, &besides, &mut drops);
                timings.record(PipelineStage::Gate, t);
            }
            let t = Instant::now();
            candidates = control::collapse_duplicates(
                candidates,
                |key| self.ports.index.vector(key),
                self.config.duplicate_collapse_floor,
                &mut drops,
            );
            timings.record(PipelineStage::Duplicates, t);
            if let Some(reranker) = reranker {
                let t = Instant::now();
                candidates = control::rerank(
                    reranker.as_ref(),
                    self.config.reranker_timeout,
                    &rewritten.query,
                    candidates,
                    (self.config.reranker_candidates, self.config.rrf_k),
                    &mut notes,
                )
                .await;
                timings.record(PipelineStage::Reranker, t);
                if !gate_first {
                    // In place of the gate for what it reordered; what it did not (the tail
                    // past `candidates`, or everything when it timed out or failed) is gated.
                    let t = Instant::now();
                    candidates = control::gate(candidates, &self.config, &besides, &mut drops);
                    timings.record(PipelineStage::Gate, t);
                }
            }
            // Where recency counts (no time named or filtered), the newer of two alike results
            // comes first.
            if let (Some(rule), false) = (self.config.newer_first, time_bounded) {
                let t = Instant::now();
                control::newer_first(
                    &mut candidates,
                    |key| self.ports.index.vector(key),
                    (rule, limit, self.ports.stemmer.as_ref()),
                    &mut notes,
                );
                timings.record(PipelineStage::NewerFirst, t);
            }
        }

        let t = Instant::now();
        let budget =
            request.channels.result_control.then(|| request.token_budget.unwrap_or(self.config.token_budget));
        let words = crate::passage::query_words(&rewritten.query);
        let kept =
            control::budget(candidates, limit, budget, (&words, self.config.passage_tokens), &mut drops);
        timings.record(PipelineStage::Budget, t);

        let hits: Vec<SearchHit> = kept.into_iter().enumerate().map(|(i, c)| explain::hit(c, i)).collect();
        timings.record(PipelineStage::Total, started);

        let search_id = SearchId::from_body(&self.ports.ids.next_body()).expect("generated ids are valid");
        let trace = SearchTrace {
            id: search_id.clone(),
            at: now,
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            request: explain::describe(request, limit, budget),
            query: rewritten.query,
            rewrite_status: rewritten.status,
            rewrite_note: rewritten.note,
            eligible_count: eligible.len() as u64,
            channels: trace_channels,
            fused,
            drops,
            notes,
            results: hits
                .iter()
                .map(|h| TraceResult {
                    record_id: h.record.id.clone(),
                    rank: h.rank,
                    score: h.score,
                    explanation: h.explanation.clone(),
                })
                .collect(),
            timings_us: timings.0,
        };
        self.ports.search_log.append_trace(trace).instrument(info_span!("retrieve.search_log")).await?;
        Ok(SearchResponse {
            search_id,
            hits,
            eligible_count: eligible.len(),
            rewrite_status: rewritten.status,
        })
    }

    /// Stage 1: the principal's readable scopes, lifecycle, expiry, types and event range.
    async fn eligibility(
        &self,
        principal: &Principal,
        request: &SearchRequest,
        now: retold_domain::Timestamp,
    ) -> Result<(ScopeAccess, EligibilityFilter, Eligible)> {
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
        Ok((access, filter, Eligible::new(keys)))
    }

    /// The eligible records whose event time falls inside one of `windows`: the search's own
    /// filter with each window as its event range (a record without an event time is in
    /// none), cut to the eligible set.
    async fn window_eligible(
        &self,
        (filter, eligible): (&EligibilityFilter, &Eligible),
        windows: &[crate::when::TimeWindow],
    ) -> Result<Eligible> {
        let mut keys = Vec::new();
        for w in windows {
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
        Ok(Eligible::new(keys))
    }

    /// Stage 2: the query rewriter (off by default); any failure runs the raw query.
    async fn rewrite(&self, request: &SearchRequest) -> RewrittenQuery {
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
    /// eligible set, or one the store no longer returns, is dropped with its reason.
    async fn fetch(
        &self,
        fused: &[(RecordId, f64)],
        eligible: &Eligible,
        mut hits: ChannelHits,
        drops: &mut Vec<TraceDrop>,
    ) -> Result<Vec<Candidate>> {
        let keys = std::mem::take(&mut hits.keys);
        let key_of = |id: &RecordId| keys.get(id).copied().filter(|k| eligible.contains(*k));
        let wanted: Vec<RecordId> =
            fused.iter().filter(|(id, _)| key_of(id).is_some()).map(|(id, _)| id.clone()).collect();
        let mut records: HashMap<RecordId, _> =
            self.ports.records.get_many(&wanted).await?.into_iter().map(|r| (r.id.clone(), r)).collect();
        let mut candidates = Vec::with_capacity(wanted.len());
        for (i, (id, score)) in fused.iter().enumerate() {
            let Some(key) = key_of(id) else {
                drops.push(TraceDrop {
                    record_id: id.clone(),
                    stage: retold_domain::DropStage::Eligibility,
                    reason: "not eligible".into(),
                });
                continue;
            };
            let Some(record) = records.remove(id) else {
                drops.push(TraceDrop {
                    record_id: id.clone(),
                    stage: retold_domain::DropStage::Fetch,
                    reason: "the store no longer has this record".into(),
                });
                continue;
            };
            candidates.push(Candidate {
                id: id.clone(),
                key,
                fused_rank: i as u32 + 1,
                rrf: *score,
                score: *score,
                freshness: None,
                gate: String::new(),
                record,
                dense: hits.dense.remove(id),
                sentence: hits.sentences.remove(id),
                window: hits.window.remove(id),
                lexical: hits.lexical.remove(id),
                entity: hits.entity.remove(id),
                conflict_with: None,
                reranked: None,
                in_window: None,
                names_time: None,
                substance: None,
                newer_than: None,
                passage: None,
            });
        }
        Ok(candidates)
    }
}
