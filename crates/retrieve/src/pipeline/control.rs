//! Result control after RRF (seed section 11): episodic freshness, the relevance gate,
//! duplicate collapse, the optional reranker, then the limit and the token budget. Every
//! stage that removes a candidate says so in the trace.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use retold_domain::text;

use retold_domain::{
    DropStage, EntityId, LinkRole, MemoryRecord, MemoryType, PipelineStage, RecordId, RecordKey, Reranker,
    Timestamp, TraceDrop, TraceNote, WordStemmer,
};

use crate::config::RetrieveConfig;
use crate::fusion::rrf;
use crate::passage::{Passage, passage, shown};
use crate::request::{DenseMatch, EntityMatch, LexicalMatch};

/// A multiplier result control puts on a candidate's fused score, with what the explanation
/// says of it.
pub(crate) enum ScoreFactor<'a> {
    /// An old episode's decay ([`freshness`]).
    Freshness { factor: f64, days: i64 },
    /// A record dated inside the time the query names ([`query_time`]).
    QueryTime { phrase: &'a str, boost: f64 },
    /// A record that names a time, for a question that asks when ([`asks_when`]).
    AsksWhen { boost: f64 },
    /// An episode that says little ([`substance`]).
    Substance { factor: f64, words: usize },
}

impl ScoreFactor<'_> {
    pub(crate) fn multiplier(&self) -> f64 {
        match *self {
            Self::Freshness { factor, .. } | Self::Substance { factor, .. } => factor,
            Self::QueryTime { boost, .. } | Self::AsksWhen { boost } => boost,
        }
    }

    /// Its part of a result's explanation.
    pub(crate) fn explained(&self) -> String {
        match self {
            Self::Freshness { factor, days } => {
                format!("freshness: x{factor:.2} (episodic, {days} days old)")
            }
            Self::QueryTime { phrase, boost } => {
                format!("time: in the query's window \"{phrase}\" x{boost:.2}")
            }
            Self::AsksWhen { boost } => format!("time: names a time, the question asks when x{boost:.2}"),
            Self::Substance { factor, words } => {
                format!("substance: x{factor:.2} (episodic, {words} content words)")
            }
        }
    }
}

/// Every candidate's score: its fused score times its score factors, in one place; then the
/// highest first (equal scores keep their fused order).
pub(crate) fn apply_factors(candidates: &mut [Candidate]) {
    for c in candidates.iter_mut() {
        c.score = c.factored(c.rrf);
    }
    sort_by_score(candidates);
}

/// A fused candidate moving through result control.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) id: RecordId,
    pub(crate) key: RecordKey,
    pub(crate) fused_rank: u32,
    pub(crate) rrf: f64,
    pub(crate) score: f64,
    /// The freshness factor and the episode's age in days, when freshness applied.
    pub(crate) freshness: Option<(f64, i64)>,
    /// Why the gate let it pass.
    pub(crate) gate: String,
    pub(crate) record: MemoryRecord,
    pub(crate) dense: Option<DenseMatch>,
    /// Its rank in the dense channel's sentence list, with its own vector's cosine.
    pub(crate) sentence: Option<DenseMatch>,
    /// Its rank in the dense channel's list of the records inside the query's time.
    pub(crate) window: Option<DenseMatch>,
    pub(crate) lexical: Option<LexicalMatch>,
    pub(crate) entity: Option<EntityMatch>,
    /// For a provisional record on the lower-trust side of a conflict (returned only when the
    /// request includes conflicts): the record that stays the normal result.
    pub(crate) conflict_with: Option<RecordId>,
    /// The reranker's score and rank, when it reordered this candidate.
    pub(crate) reranked: Option<(f64, u32)>,
    /// The query's time window this record's event falls in, and the factor it got.
    pub(crate) in_window: Option<(String, f64)>,
    /// The factor a record that names a time got because the question asks when.
    pub(crate) names_time: Option<f64>,
    /// The factor an episode that says little got, and its count of content words.
    pub(crate) substance: Option<(f64, usize)>,
    /// The older result this one was ranked above, and how alike their vectors are.
    pub(crate) newer_than: Option<(RecordId, f64)>,
    /// The part of a long record the result shows (set by the budget stage).
    pub(crate) passage: Option<Passage>,
}

impl Candidate {
    /// The candidate at fused position `at` (0-based) with its fused score, its record and
    /// what each channel matched (taken out of `hits`); result control fills in the rest.
    pub(crate) fn fused(
        id: RecordId,
        key: RecordKey,
        (at, score): (usize, f64),
        record: MemoryRecord,
        hits: &mut super::ChannelHits,
    ) -> Self {
        Self {
            key,
            fused_rank: at as u32 + 1,
            rrf: score,
            score,
            freshness: None,
            gate: String::new(),
            record,
            dense: hits.dense.remove(&id),
            sentence: hits.sentences.remove(&id),
            window: hits.window.remove(&id),
            lexical: hits.lexical.remove(&id),
            entity: hits.entity.remove(&id),
            conflict_with: None,
            reranked: None,
            in_window: None,
            names_time: None,
            substance: None,
            newer_than: None,
            passage: None,
            id,
        }
    }

    /// The score factors result control set on this candidate, in the order they apply: the
    /// one list the score (`factored`), the reranker and the explanation all read.
    pub(crate) fn score_factors(&self) -> impl Iterator<Item = ScoreFactor<'_>> {
        [
            self.freshness.map(|(factor, days)| ScoreFactor::Freshness { factor, days }),
            self.in_window.as_ref().map(|(phrase, boost)| ScoreFactor::QueryTime { phrase, boost: *boost }),
            self.names_time.map(|boost| ScoreFactor::AsksWhen { boost }),
            self.substance.map(|(factor, words)| ScoreFactor::Substance { factor, words }),
        ]
        .into_iter()
        .flatten()
    }

    /// `base` times each of its score factors, in order.
    pub(crate) fn factored(&self, base: f64) -> f64 {
        self.score_factors().fold(base, |score, f| score * f.multiplier())
    }

    /// Its dense channel match from any of its lists (records, sentences, the query's
    /// time): one channel to the gate, which reads the record's own cosine.
    pub(crate) fn dense_match(&self) -> Option<&DenseMatch> {
        crate::request::any_dense_list([&self.dense, &self.sentence, &self.window])
    }
}

/// Estimated tokens of a text, by script ([`retold_domain::text::estimated_tokens`]: four
/// Latin characters a token, one Han character a token).
pub fn text_tokens(text: &str) -> usize {
    retold_domain::text::estimated_tokens(text)
}

/// Estimated tokens of a result showing `text` (a record's content or its passage): the text
/// and a per-result overhead.
pub fn shown_tokens(text: &str) -> usize {
    text_tokens(text) + 12
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// How far [`quick_cosine`] may be from [`cosine`], with room to spare: for unit vectors (the
/// index keeps them L2-normalised) the eight-lane f32 sum of 384 products errs by under 1e-5.
const QUICK_COSINE_MARGIN: f64 = 1e-3;

/// [`cosine`] by the index's vectorised f32 dot product ([`retold_domain::vectors::dot`]): a
/// first look that rules out a pair far below a floor. [`cosine`]'s f64 sum runs in one order
/// (one dependent add per dimension, ~0.5 µs a pair), and the duplicate check compares every
/// survivor with every one kept before it; the decisions and the cosines reported stay
/// [`cosine`]'s.
fn quick_cosine(a: &[f32], b: &[f32]) -> f64 {
    f64::from(retold_domain::vectors::dot(a, b))
}

/// Highest score first; equal scores keep their fused order.
fn sort_by_score(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.fused_rank.cmp(&b.fused_rank)));
}

/// Old episodes lose score: the decayed part halves every half-life; the floor keeps
/// relevance in charge, so an old episode loses to an equally relevant recent one but not to
/// an irrelevant one. Semantic and procedural records keep their score. Sets the factor
/// ([`apply_factors`] applies it).
pub(crate) fn freshness(candidates: &mut [Candidate], now: Timestamp, config: &RetrieveConfig) {
    for c in candidates.iter_mut() {
        if c.record.memory_type != MemoryType::Episodic {
            continue;
        }
        let at = c.record.event_at.unwrap_or(c.record.created_at);
        let age_days = (now - at).num_days().max(0);
        let floor = config.episodic_freshness_floor;
        let factor = floor + (1.0 - floor) * 0.5f64.powf(age_days as f64 / config.episodic_half_life_days);
        c.freshness = Some((factor, age_days));
    }
}

/// For a query that names its time: a record whose event falls in one of the query's
/// windows gets `boost` times its fused score (an episode without `event_at` counts from when
/// it was written, as freshness does; other records only with an `event_at`); the rest keep
/// their fused score, and nothing is decayed for age. Sets the factor and notes the windows.
pub(crate) fn query_time(
    candidates: &mut [Candidate],
    windows: &[crate::when::TimeWindow],
    boost: f64,
    notes: &mut Vec<TraceNote>,
) {
    for c in candidates.iter_mut() {
        let at = match (c.record.event_at, c.record.memory_type) {
            (Some(at), _) => Some(at),
            (None, MemoryType::Episodic) => Some(c.record.created_at),
            (None, _) => None,
        };
        if let Some(window) = at.and_then(|at| windows.iter().find(|w| w.contains(at))) {
            c.in_window = Some((window.phrase.clone(), boost));
        }
    }
    let named: Vec<String> = windows.iter().map(crate::when::TimeWindow::describe).collect();
    notes.push(TraceNote {
        stage: PipelineStage::Freshness,
        note: format!(
            "the query names its time: {}; records dated in it x{boost:.2}, no freshness decay",
            named.join(", ")
        ),
    });
}

/// For a question that asks for a time ("When did…"): a record whose content names a time
/// gets `boost` times its score (after freshness or the query's windows). Sets the factor.
pub(crate) fn asks_when(candidates: &mut [Candidate], boost: f64, notes: &mut Vec<TraceNote>) {
    let mut named = 0;
    for c in candidates.iter_mut().filter(|c| crate::when::names_a_time(c.record.content.as_str())) {
        c.names_time = Some(boost);
        named += 1;
    }
    notes.push(TraceNote {
        stage: PipelineStage::Freshness,
        note: format!("the question asks when: {named} candidates that name a time x{boost:.2}"),
    });
}

/// Words of `text` that are not stopwords, and not a lone letter ("what's" splits into
/// "what" and "s"): "Bye, see you then!" has two, "bye" and "see"; a number counts.
pub(crate) fn content_words(text: &str) -> usize {
    text::unicode61_tokens(text)
        .iter()
        .filter(|w| !text::is_stopword(w))
        .filter(|w| w.chars().nth(1).is_some() || w.chars().all(|c| c.is_ascii_digit()))
        .count()
}

/// An episode that says little ranks lower: one with fewer than `rule.words` content words
/// keeps `rule.factor` of its score (after freshness or the query's windows, and after the
/// time a question asks for). A conversation's short turns ("Bye!", "Haha, yes!", "Hey Mel,
/// what's up?") otherwise rank on a name or on the turn they answer, and rarely say what a
/// question asks. Semantic and procedural records keep their score. Sets the factor.
pub(crate) fn substance(
    candidates: &mut [Candidate],
    rule: crate::config::Substance,
    notes: &mut Vec<TraceNote>,
) {
    let mut lowered = 0;
    for c in candidates.iter_mut().filter(|c| c.record.memory_type == MemoryType::Episodic) {
        let words = content_words(c.record.content.as_str());
        let factor = rule.factor(words);
        if factor < 1.0 {
            c.substance = Some((factor, words));
            lowered += 1;
        }
    }
    if lowered > 0 {
        notes.push(TraceNote {
            stage: PipelineStage::Freshness,
            note: format!(
                "{lowered} episodes with fewer than {} content words ranked lower (x{:.2} with none)",
                rule.words, rule.floor
            ),
        });
    }
}

/// When the newer of two alike results ranks above the older: how alike their stored
/// vectors must be, how close their scores, and how many of the first results it looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewerFirst {
    pub similarity: f64,
    pub score_share: f64,
    pub head: usize,
}

/// Of two results about the same thing (the newer holds every query term the older matches,
/// up to inflection, and their stored vectors are at least `similarity` alike) at a close
/// score (the newer's at least `score_share` of the older's), the newer ranks just above the
/// older: an update ("four times a week now") comes before what it updates. A statement of
/// the entity the query names or points at (`About` it, as the entity channel listed it) is
/// updated only by another the channel listed so. It reorders the first `head` results (at
/// most `limit`) and never changes which records they are. Time is the record's event time,
/// else when it was written.
pub(crate) fn newer_first(
    candidates: &mut [Candidate],
    vector_of: impl Fn(RecordKey) -> Option<Vec<f32>>,
    (rule, limit, stemmer): (NewerFirst, usize, &dyn WordStemmer),
    notes: &mut Vec<TraceNote>,
) {
    let head = rule.head.min(limit).min(candidates.len());
    let mut seen: Vec<Seen> = candidates[..head].iter().map(|c| Seen::of(c, &vector_of, stemmer)).collect();
    let mut moved = 0;
    for j in 1..head {
        if let Some((i, sim)) = older_alike(candidates, &seen, j, rule, stemmer) {
            candidates[j].newer_than = Some((candidates[i].id.clone(), sim));
            candidates[i..=j].rotate_right(1);
            seen[i..=j].rotate_right(1);
            moved += 1;
        }
    }
    if moved > 0 {
        let results = if moved == 1 { "result" } else { "results" };
        notes.push(TraceNote {
            stage: PipelineStage::NewerFirst,
            note: format!(
                "{moved} {results} ranked above an older one about the same thing (cosine >= {:.2}, score >= {:.2} of it)",
                rule.similarity, rule.score_share
            ),
        });
    }
}

/// Per head result of `newer_first`, computed once and moved with it: its stored vector, the
/// query terms it matched, what the lexical index holds of it (content, then context) as
/// stems ("follower count" holds the older record's "followers").
struct Seen {
    vector: Option<Vec<f32>>,
    matched: Vec<String>,
    stems: HashSet<String>,
}

impl Seen {
    fn of(
        c: &Candidate,
        vector_of: &impl Fn(RecordKey) -> Option<Vec<f32>>,
        stemmer: &dyn WordStemmer,
    ) -> Self {
        let context = c.record.context.as_ref().map_or("", |x| x.as_str());
        Seen {
            vector: vector_of(c.key),
            matched: c
                .lexical
                .as_ref()
                .map(|l| l.matched.iter().map(|m| m.term.clone()).collect())
                .unwrap_or_default(),
            stems: [c.record.content.as_str(), context]
                .into_iter()
                .flat_map(text::unicode61_tokens)
                .map(|w| stemmer.stem(&w))
                .collect(),
        }
    }

    /// Whether this (newer) result holds every query term the older one matched.
    fn covers(&self, older: &Seen, stemmer: &dyn WordStemmer) -> bool {
        older.matched.iter().all(|t| self.matched.contains(t) || self.stems.contains(&stemmer.stem(t)))
    }
}

/// The entity the query names or points at, when a result is about it (its statement).
fn about(c: &Candidate) -> Option<&EntityId> {
    c.entity.as_ref().filter(|e| e.role == LinkRole::About).map(|e| &e.entity_id)
}

/// The first result above `j` that `j` is a newer statement of: older, alike (cosine at least
/// the rule's similarity), scored at least the rule's share of it, holding the query terms it
/// matched; with their cosine.
fn older_alike(
    candidates: &[Candidate],
    seen: &[Seen],
    j: usize,
    rule: NewerFirst,
    stemmer: &dyn WordStemmer,
) -> Option<(usize, f64)> {
    let at = |c: &Candidate| c.record.event_at.unwrap_or(c.record.created_at);
    let vj = seen[j].vector.as_ref()?;
    (0..j).find_map(|i| {
        let (older, newer) = (&candidates[i], &candidates[j]);
        // An update is its speaker's own: a statement of the entity (usually a person) the
        // query names is passed only by another of theirs, not by others' words.
        if at(older) >= at(newer)
            || about(older).is_some_and(|theirs| about(newer) != Some(theirs))
            || newer.score < rule.score_share * older.score
            || !seen[j].covers(&seen[i], stemmer)
        {
            return None;
        }
        let sim = cosine(vj, seen[i].vector.as_ref()?);
        (sim >= rule.similarity).then_some((i, sim))
    })
}

/// Why a candidate passes the relevance gate, or why it does not: a candidate the reranker
/// reordered (in place of the gate), a match of two or more channels and one channel's match
/// dated inside the query's window pass; an entity match alone passes when the query names
/// nothing besides its entities (`besides` is empty: "What about Joanna?"), since a question
/// that also asks something ("What did Joanna research?") is answered by records the other
/// channels find; otherwise a dense-only match needs the dense floor, a lexical-only match
/// the term share.
pub(crate) fn gate_verdict(
    c: &Candidate,
    config: &RetrieveConfig,
    besides: &[String],
) -> Result<String, String> {
    let dense = c.dense_match();
    let channels = [dense.is_some(), c.lexical.is_some(), c.entity.is_some()].iter().filter(|x| **x).count();
    // Found only by the list of the query's time (its date, not its words or its place among
    // the store's closest), a record still needs the dense floor to be about the question.
    let by_date_alone = c.window.is_some() && c.dense.is_none() && c.sentence.is_none();
    let under_floor = dense.is_some_and(|d| f64::from(d.cosine) < config.dense_floor);
    if c.reranked.is_some() {
        // The gate runs after the reranker only when it stands in place of the gate.
        Ok("in place of the gate: reranked".to_owned())
    } else if channels >= 2 {
        Ok(format!("passed: {channels} channels"))
    } else if channels == 1 && c.in_window.is_some() && !(by_date_alone && under_floor) {
        // The time the query names corroborates a single channel's match.
        Ok("passed: one channel, in the query's window".to_owned())
    } else if c.entity.is_some() {
        if besides.is_empty() {
            Ok("passed: entity match, and the query names nothing else".to_owned())
        } else {
            Err(format!(
                "entity match alone, and the query names more than its entities ({})",
                besides.join(", ")
            ))
        }
    } else if let Some(d) = dense {
        if f64::from(d.cosine) >= config.dense_floor {
            Ok("passed dense threshold".to_owned())
        } else {
            Err(format!("dense-only cosine {:.2} below the floor {:.2}", d.cosine, config.dense_floor))
        }
    } else if let Some(l) = &c.lexical {
        let share = l.matched.len() as f64 / l.query_terms.max(1) as f64;
        if share >= config.lexical_min_term_share {
            Ok("passed lexical term share".to_owned())
        } else if l.matched.len() >= config.lexical_enough_terms {
            Ok(format!("passed lexical: {} terms", l.matched.len()))
        } else {
            Err(format!(
                "lexical-only match of {}/{} terms below the share {:.2} and under {} terms",
                l.matched.len(),
                l.query_terms,
                config.lexical_min_term_share,
                config.lexical_enough_terms
            ))
        }
    } else {
        Err("no channel matched".to_owned())
    }
}

/// The relevance gate over every candidate; `besides` as [`gate_verdict`] reads it.
pub(crate) fn gate(
    candidates: Vec<Candidate>,
    config: &RetrieveConfig,
    besides: &[String],
    drops: &mut Vec<TraceDrop>,
) -> Vec<Candidate> {
    let mut kept = Vec::new();
    for mut c in candidates {
        match gate_verdict(&c, config, besides) {
            Ok(gate) => {
                c.gate = gate;
                kept.push(c);
            }
            Err(reason) => drops.push(TraceDrop { record_id: c.id, stage: DropStage::Gate, reason }),
        }
    }
    kept
}

/// Whether two texts name the same identifiers (paths, snake_case, dotted names, ids) and the
/// same names, dates and numbers: records that differ in one are not duplicates however alike
/// their vectors (build logs, tickets and error reports differ in exactly one id).
fn same_particulars(a: &str, b: &str) -> bool {
    let identifiers = |text: &str| -> std::collections::BTreeSet<String> {
        text.split_whitespace()
            .filter(|t| text::is_identifier(t))
            .map(|t| text::trim_punctuation(t).to_lowercase())
            .collect()
    };
    text::same_values(a, b) && identifiers(a) == identifiers(b)
}

/// The exact [`cosine`] of two stored vectors when it is at least `floor`; [`quick_cosine`]
/// first rules out a pair far below it. The index keeps vectors L2-normalised and of one
/// model's size, which the margin assumes.
fn alike(a: &[f32], b: &[f32], floor: f64) -> Option<f64> {
    if quick_cosine(a, b) < floor - QUICK_COSINE_MARGIN {
        return None;
    }
    let sim = cosine(a, b);
    (sim >= floor).then_some(sim)
}

/// Keep the higher-ranked of two survivors whose stored vectors are at least `floor` alike and
/// whose texts name the same identifiers, names, dates and numbers.
pub(crate) fn collapse_duplicates(
    candidates: Vec<Candidate>,
    vector_of: impl Fn(RecordKey) -> Option<Vec<f32>>,
    floor: f64,
    drops: &mut Vec<TraceDrop>,
) -> Vec<Candidate> {
    let mut kept: Vec<(Candidate, Option<Vec<f32>>)> = Vec::new();
    for c in candidates {
        let vector = vector_of(c.key);
        let twin = vector.as_ref().and_then(|v| {
            kept.iter().find_map(|(k, kv)| {
                let sim = alike(v, kv.as_ref()?, floor)?;
                same_particulars(c.record.content.as_str(), k.record.content.as_str())
                    .then(|| (k.id.clone(), sim))
            })
        });
        match twin {
            Some((other, sim)) => drops.push(TraceDrop {
                record_id: c.id,
                stage: DropStage::Duplicate,
                reason: format!("near-duplicate of {other} (cosine {sim:.3})"),
            }),
            None => kept.push((c, vector)),
        }
    }
    kept.into_iter().map(|(c, _)| c).collect()
}

/// Reorder the first `head` survivors with the reranker (the rest follow in their order).
/// Its order is fused with the order they came in, as RRF fuses the channels, and the
/// factors of time and substance apply again (episodic freshness, the query's window, a time
/// named for a question that asks when, an episode that says little): each scores
/// `(1/(rrf_k + reranker rank) + 1/(rrf_k + prior rank)) × those factors`. The reranker
/// alone ignores time and the channels' agreement, so an older statement it likes would pass
/// a newer one (figures: docs/quality.md). A timeout, a
/// failure or a wrong number of scores keeps the RRF order and says why in a note (nothing
/// was dropped).
pub(crate) async fn rerank(
    reranker: &dyn Reranker,
    timeout: Duration,
    query: &str,
    mut candidates: Vec<Candidate>,
    (head, rrf_k): (usize, u32),
    notes: &mut Vec<TraceNote>,
) -> Vec<Candidate> {
    if candidates.len() < 2 || head < 2 {
        return candidates;
    }
    let mut rest = candidates.split_off(head.min(candidates.len()));
    // A record is judged with its context, as the channels found it.
    let documents: Vec<String> = candidates.iter().map(|c| c.record.embedding_text()).collect();
    let mut out = match tokio::time::timeout(timeout, reranker.rerank(query, &documents)).await {
        Ok(Ok(scores)) if scores.len() == candidates.len() && scores.iter().all(|s| s.is_finite()) => {
            by_reranker(candidates, &mut rest, &scores, rrf_k)
        }
        outcome => {
            let reason = match outcome {
                Err(_) => format!(
                    "reranker timed out after {} ms on {} candidates; RRF order kept",
                    timeout.as_millis(),
                    documents.len()
                ),
                Ok(Err(error)) => format!("reranker failed ({error}); RRF order kept"),
                Ok(Ok(_)) => {
                    "reranker returned the wrong number of scores or a non-finite one; RRF order kept"
                        .to_owned()
                }
            };
            notes.push(TraceNote { stage: PipelineStage::Reranker, note: reason });
            candidates
        }
    };
    out.extend(rest);
    out
}

/// The head reordered by the reranker's `scores` fused with its prior order (RRF), times
/// each candidate's score factors; the tail keeps its order, scored on the same scale (its
/// prior rank in both lists).
fn by_reranker(
    mut candidates: Vec<Candidate>,
    rest: &mut [Candidate],
    scores: &[f64],
    rrf_k: u32,
) -> Vec<Candidate> {
    let prior: Vec<RecordId> = candidates.iter().map(|c| c.id.clone()).collect();
    let mut by_score: Vec<usize> = (0..scores.len()).collect();
    by_score.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let reranked: Vec<RecordId> = by_score.iter().map(|&i| prior[i].clone()).collect();
    for (rank, &i) in by_score.iter().enumerate() {
        candidates[i].reranked = Some((scores[i], rank as u32 + 1));
    }
    let fused: HashMap<RecordId, f64> = rrf(&[reranked, prior], rrf_k).into_iter().collect();
    for c in &mut candidates {
        c.score = c.factored(fused[&c.id]);
    }
    // Equal scores keep the reranker's order.
    let rank = |c: &Candidate| c.reranked.map_or(u32::MAX, |(_, rank)| rank);
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(rank(a).cmp(&rank(b))));
    let first = candidates.len();
    for (j, c) in rest.iter_mut().enumerate() {
        c.score = c.factored(2.0 / (f64::from(rrf_k) + (first + j + 1) as f64));
    }
    candidates
}

/// The result limit and the token budget as one search applies them, record by record in
/// rank order: what each result shows (its content or passage) counts whole, the first is
/// always kept, one that does not fit is skipped (a later, shorter one may still fit).
#[derive(Debug, Clone)]
pub struct ResultBudget {
    limit: usize,
    budget: Option<usize>,
    kept: usize,
    spent: usize,
}

/// What [`ResultBudget::admit`] decided for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Kept,
    /// `limit` records are already kept.
    OverLimit {
        limit: usize,
    },
    /// Its tokens would take the spent tokens past the budget.
    OverBudget {
        cost: usize,
        spent: usize,
        budget: usize,
    },
}

impl ResultBudget {
    /// At most `limit` records and, when `budget` is set, about that many tokens.
    pub fn new(limit: usize, budget: Option<usize>) -> Self {
        Self { limit, budget, kept: 0, spent: 0 }
    }

    /// Admit the next result in rank order, of `cost` estimated tokens ([`shown_tokens`]).
    pub fn admit(&mut self, cost: usize) -> Admission {
        if self.kept >= self.limit {
            return Admission::OverLimit { limit: self.limit };
        }
        if let Some(budget) = self.budget
            && self.kept > 0
            && self.spent + cost > budget
        {
            return Admission::OverBudget { cost, spent: self.spent, budget };
        }
        self.spent += cost;
        self.kept += 1;
        Admission::Kept
    }
}

/// The limit, then (when `budget` is set) results that fit the token budget; the first result
/// is always kept. A record longer than `passage_tokens` (0: none) shows, and costs, its
/// passage for the query words `words`.
pub(crate) fn budget(
    candidates: Vec<Candidate>,
    limit: usize,
    budget: Option<usize>,
    (words, passage_tokens): (&[String], usize),
    drops: &mut Vec<TraceDrop>,
) -> Vec<Candidate> {
    let mut rule = ResultBudget::new(limit, budget);
    let mut kept = Vec::new();
    for mut candidate in candidates {
        // Past the limit the cost does not matter: no passage is selected.
        if kept.len() < limit {
            candidate.passage = passage(candidate.record.content.as_str(), words, passage_tokens);
        }
        let shown = shown(candidate.passage.as_ref(), candidate.record.content.as_str());
        let (stage, reason) = match rule.admit(shown_tokens(shown)) {
            Admission::Kept => {
                kept.push(candidate);
                continue;
            }
            Admission::OverLimit { limit } => (DropStage::Limit, format!("limit {limit}")),
            Admission::OverBudget { cost, spent, budget } => {
                (DropStage::Budget, format!("{cost} tokens would exceed the budget ({spent}/{budget} spent)"))
            }
        };
        drops.push(TraceDrop { record_id: candidate.id, stage, reason });
    }
    kept
}

#[cfg(test)]
mod quick_cosine_tests {
    use super::{QUICK_COSINE_MARGIN, alike, cosine, quick_cosine};

    /// The first look never rules out a pair [`cosine`] would find at or above a floor: on
    /// unit vectors of the model's and of odd sizes, alike and unlike, it is within a hundredth
    /// of the margin.
    #[test]
    fn the_quick_cosine_stays_well_within_its_margin_of_the_exact_one() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let unit = |v: Vec<f32>| {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let mut worst = 0f64;
        for dims in [384, 383, 1024, 7] {
            for _ in 0..200 {
                let a = unit((0..dims).map(|_| next()).collect());
                let noise: Vec<f32> = (0..dims).map(|_| next() * 0.05).collect();
                let alike = unit(a.iter().zip(&noise).map(|(x, n)| x + n).collect());
                let other = unit((0..dims).map(|_| next()).collect());
                for b in [&alike, &other, &a] {
                    worst = worst.max((quick_cosine(&a, b) - cosine(&a, b)).abs());
                }
            }
        }
        assert!(worst < QUICK_COSINE_MARGIN / 100.0, "worst difference {worst}");
    }

    /// The duplicate check decides on the exact cosine: a pair just at or above the floor is
    /// alike, one just below is not, however close, at any floor.
    #[test]
    fn a_pair_is_alike_exactly_when_its_exact_cosine_reaches_the_floor() {
        // Unit vectors at angle t: cosine cos(t), in the first two of 384 dimensions.
        let pair = |cos: f64| {
            let mut a = vec![0f32; 384];
            let mut b = vec![0f32; 384];
            a[0] = 1.0;
            b[0] = cos as f32;
            b[1] = (1.0 - cos * cos).sqrt() as f32;
            (a, b)
        };
        for floor in [0.95, 0.5, 0.999, -0.2] {
            for offset in [0.0, 1e-6, 1e-4, 5e-4, 2e-3] {
                let (a, b) = pair(floor + offset);
                let exact = cosine(&a, &b);
                assert_eq!(
                    alike(&a, &b, floor),
                    (exact >= floor).then_some(exact),
                    "floor {floor} +{offset}"
                );
                let (a, b) = pair(floor - offset - 1e-6);
                assert_eq!(alike(&a, &b, floor), None, "floor {floor} -{offset}");
            }
        }
        let (a, b) = pair(0.96);
        assert_eq!(alike(&a, &b, 0.95), Some(cosine(&a, &b)));
    }
}
