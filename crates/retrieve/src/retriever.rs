//! The search pipeline: eligibility, three channels, RRF, result control, explanations and
//! one search_log trace per request; and `memory_get`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use retold_domain::{
    Clock, ConflictLink, DomainError, EligibilityFilter, EligibleRecord, Embedder, EntityId, EntityStore,
    GrantStore, IdGenerator, LexicalIndex, LinkRole, MatchedTerm, MemoryRecord, MemoryType, Name, Principal,
    RecordEntityLink, RecordId, RecordKey, RecordStore, Reranker, Result, SearchId, SearchLogStore,
    SearchTrace, Timestamp, TraceCandidate, TraceDrop, TraceResult, VectorIndex,
};
use retold_policy::{ScopeAccess, resolve_scopes};
use tracing::{Instrument, info_span};

use crate::config::RetrieveConfig;
use crate::fusion::rrf;
use crate::query::{lexical_terms, name_phrases};
use crate::rewrite::{QueryRewriter, Rewrite};

/// The ports the retriever reads through.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct RetrievePorts {
    pub records: Arc<dyn RecordStore>,
    pub entities: Arc<dyn EntityStore>,
    pub grants: Arc<dyn GrantStore>,
    pub lexical: Arc<dyn LexicalIndex>,
    pub index: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    pub search_log: Arc<dyn SearchLogStore>,
    pub rewriter: Arc<dyn QueryRewriter>,
    pub reranker: Option<Arc<dyn Reranker>>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
}

/// Which channels and stages run. The shipped default runs everything; evaluation switches
/// parts off to compare configurations on the same store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channels {
    pub dense: bool,
    pub lexical: bool,
    pub entity: bool,
    /// Freshness, relevance gate, duplicate collapse, reranker and token budget.
    pub result_control: bool,
}

impl Default for Channels {
    fn default() -> Self {
        Self { dense: true, lexical: true, entity: true, result_control: true }
    }
}

/// `memory_search`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: String,
    pub limit: Option<usize>,
    pub types: Option<Vec<MemoryType>>,
    pub event_from: Option<Timestamp>,
    pub event_to: Option<Timestamp>,
    pub include_history: bool,
    /// Latest user and assistant turns, for the query rewriter.
    pub context: Vec<String>,
    pub channels: Channels,
}

impl SearchRequest {
    /// A plain query with every default.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            limit: None,
            types: None,
            event_from: None,
            event_to: None,
            include_history: false,
            context: Vec::new(),
            channels: Channels::default(),
        }
    }
}

/// How the dense channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseMatch {
    pub rank: u32,
    pub cosine: f32,
}

/// How the lexical channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalMatch {
    pub rank: u32,
    pub bm25: f64,
    pub matched: Vec<MatchedTerm>,
    pub query_terms: usize,
}

/// How the entity channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMatch {
    pub rank: u32,
    pub entity_id: EntityId,
    pub role: LinkRole,
}

/// One result with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub record: MemoryRecord,
    /// 1-based position in the response.
    pub rank: u32,
    /// Fused score after freshness.
    pub score: f64,
    pub fused_rank: u32,
    pub dense: Option<DenseMatch>,
    pub lexical: Option<LexicalMatch>,
    pub entity: Option<EntityMatch>,
    pub explanation: String,
}

/// The answer to `memory_search`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResponse {
    /// The search_log row that explains this response.
    pub search_id: SearchId,
    pub hits: Vec<SearchHit>,
    pub eligible_count: usize,
    pub rewrite_status: String,
}

/// `memory_get`: a record with everything needed to inspect it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDetail {
    pub record: MemoryRecord,
    pub links: Vec<RecordEntityLink>,
    /// Conflict links whose other side the principal may read.
    pub conflicts: Vec<ConflictLink>,
    /// Older records this one replaced, newest first (following `supersedes_id`).
    pub supersedes: Vec<MemoryRecord>,
    /// Newer records that replaced this one.
    pub superseded_by: Vec<RecordId>,
}

/// The search pipeline.
#[derive(Clone)]
pub struct Retriever {
    ports: RetrievePorts,
    config: RetrieveConfig,
}

impl std::fmt::Debug for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retriever").field("config", &self.config).finish_non_exhaustive()
    }
}

/// A fused candidate moving through result control.
struct Candidate {
    id: RecordId,
    key: RecordKey,
    fused_rank: u32,
    rrf: f64,
    score: f64,
    freshness: Option<(f64, i64)>,
    gate: String,
    record: MemoryRecord,
    dense: Option<DenseMatch>,
    lexical: Option<LexicalMatch>,
    entity: Option<EntityMatch>,
}

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Estimated tokens of a record in a tool result.
fn tokens(record: &MemoryRecord) -> usize {
    record.content.as_str().chars().count().div_ceil(4) + 12
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

impl Retriever {
    /// A retriever over `ports` with `config`.
    pub fn new(ports: RetrievePorts, config: RetrieveConfig) -> Self {
        Self { ports, config }
    }

    /// The principal's readable and writable scopes.
    pub async fn access(&self, principal: &Principal) -> Result<ScopeAccess> {
        Ok(resolve_scopes(principal, &self.ports.grants.grants_for(&principal.agent_id).await?))
    }

    /// `memory_search`.
    pub async fn search(&self, principal: &Principal, request: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let now = self.ports.clock.now();
        let mut timings: Vec<(String, u64)> = Vec::new();
        let limit = request.limit.unwrap_or(self.config.default_limit).clamp(1, self.config.max_limit);

        // 1. Eligibility first.
        let t = Instant::now();
        let access = self.access(principal).await?;
        let filter = EligibilityFilter {
            scopes: access.readable.clone(),
            statuses: EligibilityFilter::statuses_for(request.include_history),
            now,
            types: request.types.clone(),
            event_from: request.event_from,
            event_to: request.event_to,
        };
        let eligible: Vec<EligibleRecord> =
            self.ports.records.eligible(&filter).instrument(info_span!("retrieve.eligibility")).await?;
        let eligible_ids: HashMap<&RecordId, RecordKey> = eligible.iter().map(|e| (&e.id, e.key)).collect();
        let keys: Vec<RecordKey> = eligible.iter().map(|e| e.key).collect();
        timings.push(("eligibility".into(), micros(t)));

        // 2. Rewrite (off by default).
        let t = Instant::now();
        let (query, rewrite_status, rewrite_note) = match self
            .ports
            .rewriter
            .rewrite(&request.query, &request.context)
            .instrument(info_span!("retrieve.rewrite"))
            .await
        {
            Ok(Rewrite::Off) => (request.query.clone(), "off", None),
            Ok(Rewrite::Rewritten(q)) if q == request.query => (q, "unchanged", None),
            Ok(Rewrite::Rewritten(q)) => (q, "rewritten", None),
            Ok(Rewrite::Failed(reason)) => (request.query.clone(), "failed", Some(reason)),
            Ok(Rewrite::Refused(reason)) => (request.query.clone(), "refused", Some(reason)),
            Err(error) => (request.query.clone(), "failed", Some(error.to_string())),
        };
        let rewrite_status = rewrite_status.to_owned();
        timings.push(("rewrite".into(), micros(t)));

        // 3. Three channels over the same eligible set.
        let k = self.config.per_generator_k;
        let mut trace_channels: Vec<(String, Vec<TraceCandidate>)> = Vec::new();
        let mut lists: Vec<Vec<RecordId>> = Vec::new();
        let mut dense: HashMap<RecordId, DenseMatch> = HashMap::new();
        let mut lexical: HashMap<RecordId, LexicalMatch> = HashMap::new();
        let mut entity: HashMap<RecordId, EntityMatch> = HashMap::new();

        if request.channels.dense && !keys.is_empty() {
            let t = Instant::now();
            let vector =
                self.ports.embedder.embed(std::slice::from_ref(&query)).await?.pop().unwrap_or_default();
            let hits = self.ports.index.search(&vector, &keys, k)?;
            let hits: Vec<_> = hits.into_iter().filter(|h| eligible_ids.contains_key(&h.record_id)).collect();
            let mut list = Vec::new();
            let mut trace = Vec::new();
            for (i, hit) in hits.into_iter().enumerate() {
                let rank = i as u32 + 1;
                trace.push(TraceCandidate {
                    record_id: hit.record_id.clone(),
                    rank,
                    score: f64::from(hit.score),
                    detail: String::new(),
                });
                dense.insert(hit.record_id.clone(), DenseMatch { rank, cosine: hit.score });
                list.push(hit.record_id);
            }
            trace_channels.push(("dense".into(), trace));
            lists.push(list);
            timings.push(("dense".into(), micros(t)));
        }
        if request.channels.lexical && !keys.is_empty() {
            let t = Instant::now();
            let terms = lexical_terms(&query);
            let hits = self
                .ports
                .lexical
                .search(&terms, &keys, k)
                .instrument(info_span!("retrieve.lexical"))
                .await?;
            let mut list = Vec::new();
            let mut trace = Vec::new();
            for hit in hits.into_iter().filter(|h| eligible_ids.contains_key(&h.record_id)) {
                let rank = list.len() as u32 + 1;
                let matched: Vec<String> = hit.matched.iter().map(|m| m.term.clone()).collect();
                trace.push(TraceCandidate {
                    record_id: hit.record_id.clone(),
                    rank,
                    score: hit.score,
                    detail: format!("terms {}/{}: {}", matched.len(), terms.len(), matched.join(", ")),
                });
                lexical.insert(
                    hit.record_id.clone(),
                    LexicalMatch { rank, bm25: hit.score, matched: hit.matched, query_terms: terms.len() },
                );
                list.push(hit.record_id);
            }
            trace_channels.push(("lexical".into(), trace));
            lists.push(list);
            timings.push(("lexical".into(), micros(t)));
        }
        if request.channels.entity && !keys.is_empty() {
            let t = Instant::now();
            let (list, trace) = self
                .entity_channel(&access, &query, &eligible_ids, k, &mut entity)
                .instrument(info_span!("retrieve.entity"))
                .await?;
            trace_channels.push(("entity".into(), trace));
            lists.push(list);
            timings.push(("entity".into(), micros(t)));
        }

        // 4. Fusion, then the eligibility check again.
        let t = Instant::now();
        let fused = rrf(&lists, self.config.rrf_k);
        timings.push(("fusion".into(), micros(t)));
        let mut drops: Vec<TraceDrop> = Vec::new();
        // Every eligible fused record in one round trip.
        let wanted: Vec<RecordId> =
            fused.iter().filter(|(id, _)| eligible_ids.contains_key(id)).map(|(id, _)| id.clone()).collect();
        let mut records: HashMap<RecordId, MemoryRecord> =
            self.ports.records.get_many(&wanted).await?.into_iter().map(|r| (r.id.clone(), r)).collect();
        let mut candidates: Vec<Candidate> = Vec::new();
        for (i, (id, score)) in fused.iter().enumerate() {
            let Some(key) = eligible_ids.get(id).copied() else {
                drops.push(TraceDrop {
                    record_id: id.clone(),
                    stage: "eligibility".into(),
                    reason: "not eligible".into(),
                });
                continue;
            };
            let Some(record) = records.remove(id) else { continue };
            candidates.push(Candidate {
                id: id.clone(),
                key,
                fused_rank: i as u32 + 1,
                rrf: *score,
                score: *score,
                freshness: None,
                gate: String::new(),
                record,
                dense: dense.remove(id),
                lexical: lexical.remove(id),
                entity: entity.remove(id),
            });
        }

        // 5. Result control.
        let time_bounded = request.event_from.is_some() || request.event_to.is_some();
        if request.channels.result_control {
            let t = Instant::now();
            if !time_bounded {
                self.apply_freshness(&mut candidates, now);
            }
            timings.push(("freshness".into(), micros(t)));
            let t = Instant::now();
            candidates = self.gate(candidates, &mut drops);
            timings.push(("gate".into(), micros(t)));
            let t = Instant::now();
            candidates = self.collapse_duplicates(candidates, &mut drops);
            timings.push(("duplicates".into(), micros(t)));
            if self.config.reranker_enabled
                && let Some(reranker) = &self.ports.reranker
            {
                let t = Instant::now();
                candidates = self.rerank(reranker.as_ref(), &query, candidates, &mut drops).await;
                timings.push(("reranker".into(), micros(t)));
            }
        }
        let t = Instant::now();
        let mut kept = Vec::new();
        let mut spent = 0usize;
        for candidate in candidates {
            if kept.len() >= limit {
                drops.push(TraceDrop {
                    record_id: candidate.id,
                    stage: "limit".into(),
                    reason: format!("limit {limit}"),
                });
                continue;
            }
            let cost = tokens(&candidate.record);
            if request.channels.result_control && !kept.is_empty() && spent + cost > self.config.token_budget
            {
                drops.push(TraceDrop {
                    record_id: candidate.id,
                    stage: "budget".into(),
                    reason: format!(
                        "{cost} tokens would exceed the budget ({spent}/{} spent)",
                        self.config.token_budget
                    ),
                });
                continue;
            }
            spent += cost;
            kept.push(candidate);
        }
        timings.push(("budget".into(), micros(t)));

        let hits: Vec<SearchHit> = kept
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let explanation = explain(&c);
                SearchHit {
                    record: c.record,
                    rank: i as u32 + 1,
                    score: c.score,
                    fused_rank: c.fused_rank,
                    dense: c.dense,
                    lexical: c.lexical,
                    entity: c.entity,
                    explanation,
                }
            })
            .collect();
        timings.push(("total".into(), micros(started)));

        let search_id = SearchId::from_body(&self.ports.ids.next_body()).expect("generated ids are valid");
        let trace = SearchTrace {
            id: search_id.clone(),
            at: now,
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            request: describe(request, limit),
            query: query.clone(),
            rewrite_status: rewrite_status.clone(),
            rewrite_note,
            eligible_count: eligible.len() as u64,
            channels: trace_channels,
            fused,
            drops,
            results: hits
                .iter()
                .map(|h| TraceResult {
                    record_id: h.record.id.clone(),
                    rank: h.rank,
                    score: h.score,
                    explanation: h.explanation.clone(),
                })
                .collect(),
            timings_us: timings,
        };
        self.ports.search_log.append_trace(&trace).instrument(info_span!("retrieve.search_log")).await?;
        Ok(SearchResponse { search_id, hits, eligible_count: eligible.len(), rewrite_status })
    }

    async fn entity_channel(
        &self,
        access: &ScopeAccess,
        query: &str,
        eligible: &HashMap<&RecordId, RecordKey>,
        k: usize,
        out: &mut HashMap<RecordId, EntityMatch>,
    ) -> Result<(Vec<RecordId>, Vec<TraceCandidate>)> {
        let names: Vec<Name> = name_phrases(query).iter().filter_map(|p| Name::new(p).ok()).collect();
        let found = self.ports.entities.find_by_names(&access.readable, &names).await?;
        let mut entity_ids: Vec<EntityId> = found.iter().map(|(_, e)| e.id.clone()).collect();
        entity_ids.sort();
        entity_ids.dedup();
        let linked = self.ports.records.linked_records(&entity_ids).await?;
        // Per record: its best role, how many query entities link it, and its key.
        let mut per_record: HashMap<RecordId, (LinkRole, usize, RecordKey, EntityId)> = HashMap::new();
        for link in linked.into_iter().filter(|l| eligible.contains_key(&l.record_id)) {
            let entry = per_record.entry(link.record_id.clone()).or_insert((
                link.role,
                0,
                link.key,
                link.entity_id.clone(),
            ));
            entry.1 += 1;
            if link.role == LinkRole::About && entry.0 != LinkRole::About {
                entry.0 = LinkRole::About;
                entry.3 = link.entity_id;
            }
        }
        let mut ranked: Vec<(RecordId, (LinkRole, usize, RecordKey, EntityId))> =
            per_record.into_iter().collect();
        // About before mentions, then more matched entities, then newer records.
        ranked.sort_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)).then(b.1.2.cmp(&a.1.2)));
        ranked.truncate(k);
        let mut list = Vec::new();
        let mut trace = Vec::new();
        for (i, (id, (role, count, _, entity_id))) in ranked.into_iter().enumerate() {
            let rank = i as u32 + 1;
            trace.push(TraceCandidate {
                record_id: id.clone(),
                rank,
                score: count as f64,
                detail: format!("{} {entity_id}", role.as_str()),
            });
            out.insert(id.clone(), EntityMatch { rank, entity_id, role });
            list.push(id);
        }
        Ok((list, trace))
    }

    fn apply_freshness(&self, candidates: &mut [Candidate], now: Timestamp) {
        for c in candidates.iter_mut() {
            if c.record.memory_type != MemoryType::Episodic {
                continue;
            }
            let at = c.record.event_at.unwrap_or(c.record.created_at);
            let age_days = (now - at).num_days().max(0);
            // The decayed part halves every half-life; the floor keeps relevance in charge, so an
            // old episode loses to an equally relevant recent one but not to an irrelevant one.
            let floor = self.config.episodic_freshness_floor;
            let factor =
                floor + (1.0 - floor) * 0.5f64.powf(age_days as f64 / self.config.episodic_half_life_days);
            c.score = c.rrf * factor;
            c.freshness = Some((factor, age_days));
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.fused_rank.cmp(&b.fused_rank)));
    }

    fn gate(&self, candidates: Vec<Candidate>, drops: &mut Vec<TraceDrop>) -> Vec<Candidate> {
        let mut kept = Vec::new();
        for mut c in candidates {
            let channels =
                [c.dense.is_some(), c.lexical.is_some(), c.entity.is_some()].iter().filter(|x| **x).count();
            let verdict = if c.entity.is_some() {
                Ok("passed: entity match".to_owned())
            } else if channels >= 2 {
                Ok(format!("passed: {channels} channels"))
            } else if let Some(d) = &c.dense {
                if f64::from(d.cosine) >= self.config.dense_floor {
                    Ok("passed dense threshold".to_owned())
                } else {
                    Err(format!(
                        "dense-only cosine {:.2} below the floor {:.2}",
                        d.cosine, self.config.dense_floor
                    ))
                }
            } else if let Some(l) = &c.lexical {
                let share = l.matched.len() as f64 / l.query_terms.max(1) as f64;
                if share >= self.config.lexical_min_term_share {
                    Ok("passed lexical term share".to_owned())
                } else {
                    Err(format!(
                        "lexical-only match of {}/{} terms below the share {:.2}",
                        l.matched.len(),
                        l.query_terms,
                        self.config.lexical_min_term_share
                    ))
                }
            } else {
                Err("no channel matched".to_owned())
            };
            match verdict {
                Ok(gate) => {
                    c.gate = gate;
                    kept.push(c);
                }
                Err(reason) => drops.push(TraceDrop { record_id: c.id, stage: "gate".into(), reason }),
            }
        }
        kept
    }

    fn collapse_duplicates(&self, candidates: Vec<Candidate>, drops: &mut Vec<TraceDrop>) -> Vec<Candidate> {
        let mut kept: Vec<(Candidate, Option<Vec<f32>>)> = Vec::new();
        for c in candidates {
            let vector = self.ports.index.vector(c.key);
            let twin = vector.as_ref().and_then(|v| {
                kept.iter().find_map(|(k, kv)| {
                    let sim = cosine(v, kv.as_ref()?);
                    (sim >= self.config.duplicate_collapse_floor).then(|| (k.id.clone(), sim))
                })
            });
            match twin {
                Some((other, sim)) => drops.push(TraceDrop {
                    record_id: c.id,
                    stage: "duplicate".into(),
                    reason: format!("near-duplicate of {other} (cosine {sim:.3})"),
                }),
                None => kept.push((c, vector)),
            }
        }
        kept.into_iter().map(|(c, _)| c).collect()
    }

    async fn rerank(
        &self,
        reranker: &dyn Reranker,
        query: &str,
        mut candidates: Vec<Candidate>,
        drops: &mut Vec<TraceDrop>,
    ) -> Vec<Candidate> {
        let documents: Vec<String> =
            candidates.iter().map(|c| c.record.content.as_str().to_owned()).collect();
        match tokio::time::timeout(self.config.reranker_timeout, reranker.rerank(query, &documents)).await {
            Ok(Ok(scores)) if scores.len() == candidates.len() => {
                let mut order: Vec<(usize, f64)> = scores.into_iter().enumerate().collect();
                order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                let mut slots: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
                order.into_iter().filter_map(|(i, _)| slots[i].take()).collect()
            }
            outcome => {
                let reason = match outcome {
                    Err(_) => "reranker timed out; RRF order kept".to_owned(),
                    Ok(Err(error)) => format!("reranker failed ({error}); RRF order kept"),
                    Ok(Ok(_)) => "reranker returned the wrong number of scores; RRF order kept".to_owned(),
                };
                if let Some(first) = candidates.first_mut() {
                    drops.push(TraceDrop { record_id: first.id.clone(), stage: "reranker".into(), reason });
                }
                candidates
            }
        }
    }

    /// `memory_get`: full records with links, conflicts and supersession chain, for ids the
    /// principal may read. An unreadable id answers exactly like a missing one.
    pub async fn get(&self, principal: &Principal, ids: &[RecordId]) -> Result<Vec<RecordDetail>> {
        let access = self.access(principal).await?;
        let readable = |r: &MemoryRecord| access.can_read(&r.scope);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let record = match self.ports.records.get(id).await? {
                Some(r) if readable(&r) => r,
                _ => return Err(DomainError::NotFound { what: "record", id: id.to_string() }),
            };
            let mut conflicts = Vec::new();
            for link in self.ports.records.conflicts_of(id).await? {
                let other = if &link.record_id == id { &link.conflicting_id } else { &link.record_id };
                if self.ports.records.get(other).await?.is_some_and(|r| readable(&r)) {
                    conflicts.push(link);
                }
            }
            let mut supersedes = Vec::new();
            let mut seen = HashSet::from([id.clone()]);
            let mut next = record.supersedes_id.clone();
            while let Some(older) = next.take() {
                if !seen.insert(older.clone()) {
                    break;
                }
                match self.ports.records.get(&older).await? {
                    Some(r) if readable(&r) => {
                        next = r.supersedes_id.clone();
                        supersedes.push(r);
                    }
                    _ => break,
                }
            }
            let mut superseded_by = Vec::new();
            for newer in self.ports.records.successors(id).await? {
                if self.ports.records.get(&newer).await?.is_some_and(|r| readable(&r)) {
                    superseded_by.push(newer);
                }
            }
            let links = self.ports.records.links_of(id).await?;
            out.push(RecordDetail { record, links, conflicts, supersedes, superseded_by });
        }
        Ok(out)
    }
}

fn describe(request: &SearchRequest, limit: usize) -> Vec<(String, String)> {
    let mut out = vec![("query".to_owned(), request.query.clone()), ("limit".to_owned(), limit.to_string())];
    if let Some(types) = &request.types {
        out.push(("types".into(), types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(",")));
    }
    if let Some(from) = request.event_from {
        out.push(("event_from".into(), from.to_rfc3339()));
    }
    if let Some(to) = request.event_to {
        out.push(("event_to".into(), to.to_rfc3339()));
    }
    out.push(("include_history".into(), request.include_history.to_string()));
    let c = request.channels;
    out.push((
        "channels".into(),
        format!(
            "dense={} lexical={} entity={} result_control={}",
            c.dense, c.lexical, c.entity, c.result_control
        ),
    ));
    out
}

/// `matched: dense 0.71 (rank 2), lexical 3/3 terms (rank 1); fused rank: 1; gate: passed dense threshold`
fn explain(c: &Candidate) -> String {
    let mut matched = Vec::new();
    if let Some(d) = &c.dense {
        matched.push(format!("dense {:.2} (rank {})", d.cosine, d.rank));
    }
    if let Some(l) = &c.lexical {
        let identifiers = l.matched.iter().filter(|m| m.identifier).count();
        let aliases = l.matched.iter().filter(|m| m.alias).count();
        let mut note = format!("lexical {}/{} terms (rank {})", l.matched.len(), l.query_terms, l.rank);
        if identifiers > 0 || aliases > 0 {
            note.push_str(&format!(" [{identifiers} identifier, {aliases} alias]"));
        }
        matched.push(note);
    }
    if let Some(e) = &c.entity {
        matched.push(format!("entity {} {} (rank {})", e.role.as_str(), e.entity_id, e.rank));
    }
    let mut text = format!("matched: {}; fused rank: {}", matched.join(", "), c.fused_rank);
    if let Some((factor, days)) = c.freshness {
        text.push_str(&format!("; freshness: x{factor:.2} (episodic, {days} days old)"));
    }
    if !c.gate.is_empty() {
        text.push_str(&format!("; gate: {}", c.gate));
    }
    text
}
