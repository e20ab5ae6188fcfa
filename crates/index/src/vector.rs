//! The in-memory exact vector index of seed section 9: ids, a contiguous matrix of
//! normalised vectors, key → row positions, and a live flag per row.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, RwLock};

use retold_domain::{
    Centring, DomainError, RecordId, RecordKey, Result, SentenceWeight, VectorHit, VectorIndex,
};

use crate::kernel::{DotI8, dot, dot_i8_kernel, quantise};

const NO_ROW: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Inner {
    /// Row → record id.
    ids: Vec<RecordId>,
    /// Row → record key.
    keys: Vec<RecordKey>,
    /// `rows × dims` normalised vectors, row-major.
    matrix: Vec<f32>,
    /// `matrix` as `i8`s: what a centred scan reads to pick the rows it then scores exactly
    /// from `matrix`.
    rows_i8: I8Rows,
    /// Record key → row (`NO_ROW` when absent). Keys are SQLite rowids: dense and small.
    pos: Vec<u32>,
    /// Row → still searchable.
    live: Vec<bool>,
    live_count: usize,
    /// Row → its sentence vectors: sentence rows `start..start + len`.
    spans: Vec<(u32, u32)>,
    /// The normalised sentence vectors as `i8`s, a record's contiguous: the scan reads every
    /// eligible record's sentences (a chat turn has a few). A replaced record's longer list
    /// is appended and its old rows left unused until `compact`.
    sentences: I8Rows,
}

/// Unit vectors held as `i8`s, row-major, with a scale each (`x ≈ q × scale`): a quarter of
/// the bytes `f32` rows take.
#[derive(Debug, Default)]
struct I8Rows {
    values: Vec<i8>,
    scales: Vec<f32>,
}

impl I8Rows {
    fn with_capacity(rows: usize, dims: usize) -> Self {
        Self { values: Vec::with_capacity(rows * dims), scales: Vec::with_capacity(rows) }
    }

    fn len(&self) -> usize {
        self.scales.len()
    }

    /// Row `at`: its `i8`s and scale.
    #[inline]
    fn row(&self, at: usize, dims: usize) -> (&[i8], f32) {
        (&self.values[at * dims..(at + 1) * dims], self.scales[at])
    }

    /// Append `unit` quantised.
    fn push_unit(&mut self, unit: &[f32]) {
        self.scales.push(quantise(unit, &mut self.values));
    }

    /// Append `other`'s rows `from..to`; returns the first one's number here.
    fn extend_from(&mut self, other: &I8Rows, (from, to): (usize, usize), dims: usize) -> u32 {
        let first = self.len() as u32;
        self.values.extend_from_slice(&other.values[from * dims..to * dims]);
        self.scales.extend_from_slice(&other.scales[from..to]);
        first
    }

    /// Overwrite rows from `at` with every row of `other`.
    fn overwrite(&mut self, at: usize, other: &I8Rows, dims: usize) {
        self.values[at * dims..(at + other.len()) * dims].copy_from_slice(&other.values);
        self.scales[at..at + other.len()].copy_from_slice(&other.scales);
    }
}

impl Inner {
    /// Row `row`'s normalised `f32` vector.
    #[inline]
    fn unit(&self, row: usize, dims: usize) -> &[f32] {
        &self.matrix[row * dims..(row + 1) * dims]
    }

    fn row_of(&self, key: RecordKey) -> Option<usize> {
        let row = *self.pos.get(usize::try_from(key.0).ok()?)?;
        (row != NO_ROW).then_some(row as usize)
    }
}

/// Exact cosine search over live, eligible rows.
#[derive(Debug)]
pub struct ExactIndex {
    dims: usize,
    inner: RwLock<Inner>,
    /// Bumped each time the write lock is taken, so a [`Prepared`] knows the rows it was
    /// computed from are still there.
    generation: AtomicU64,
    /// What searches over the last few eligible sets needed before the query (their rows
    /// and means), each valid for one `generation`.
    prepared: Mutex<Vec<Arc<Prepared>>>,
}

/// The part of a search that does not depend on the query: the eligible rows in scan order
/// and the means a centred search subtracts. [`VectorIndex::prepare`] computes it while the
/// query is embedded; a search over the same eligible set, with the index unchanged since,
/// takes it as it is, so its result is the same either way.
#[derive(Debug)]
struct Prepared {
    generation: u64,
    eligible: Vec<RecordKey>,
    /// Centred and weighing sentences: what the means below were asked for.
    centred: bool,
    weighed: bool,
    rows: Vec<u32>,
    /// The rows' mean, when centred over at least `CENTRING_MIN_ROWS` rows.
    mean: Option<Vec<f32>>,
    /// Their sentences' mean, when the rows' is there, sentences are weighed and there are
    /// at least `CENTRING_MIN_ROWS` of them.
    sentence_mean: Option<Vec<f32>>,
}

/// Eligible sets whose [`Prepared`] is kept (a few principals searching in turn).
const PREPARED_SETS: usize = 4;

impl ExactIndex {
    /// An empty index for vectors of `dims` numbers.
    pub fn new(dims: usize) -> Self {
        Self::holding(dims, Inner::default())
    }

    /// An empty index with room for `rows` vectors.
    pub fn with_capacity(dims: usize, rows: usize) -> Self {
        let inner = Inner {
            ids: Vec::with_capacity(rows),
            keys: Vec::with_capacity(rows),
            matrix: Vec::with_capacity(rows * dims),
            rows_i8: I8Rows::with_capacity(rows, dims),
            pos: Vec::with_capacity(rows + 1),
            live: Vec::with_capacity(rows),
            live_count: 0,
            spans: Vec::with_capacity(rows),
            sentences: I8Rows::default(),
        };
        Self::holding(dims, inner)
    }

    fn holding(dims: usize, inner: Inner) -> Self {
        Self { dims, inner: RwLock::new(inner), generation: AtomicU64::new(0), prepared: Mutex::default() }
    }

    /// Vector length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Rows held, live or dead.
    pub fn rows(&self) -> usize {
        self.read().ids.len()
    }

    /// Sentence vectors held (of live rows and of rows replaced or dead until `compact`).
    pub fn sentence_rows(&self) -> usize {
        self.read().sentences.len()
    }

    /// Drop dead rows and rebuild positions. Searches wait while it runs.
    pub fn compact(&self) {
        let mut inner = self.write();
        let dims = self.dims;
        let old = std::mem::take(&mut *inner);
        let mut fresh = Inner {
            ids: Vec::with_capacity(old.live_count),
            keys: Vec::with_capacity(old.live_count),
            matrix: Vec::with_capacity(old.live_count * dims),
            rows_i8: I8Rows::with_capacity(old.live_count, dims),
            pos: vec![NO_ROW; old.pos.len()],
            live: Vec::with_capacity(old.live_count),
            live_count: 0,
            spans: Vec::with_capacity(old.live_count),
            sentences: I8Rows::default(),
        };
        for (row, alive) in old.live.iter().enumerate() {
            if !*alive {
                continue;
            }
            let new_row = fresh.ids.len();
            fresh.ids.push(old.ids[row].clone());
            fresh.keys.push(old.keys[row]);
            fresh.matrix.extend_from_slice(old.unit(row, dims));
            fresh.rows_i8.extend_from(&old.rows_i8, (row, row + 1), dims);
            fresh.pos[old.keys[row].0 as usize] = new_row as u32;
            fresh.live.push(true);
            fresh.live_count += 1;
            let (start, len) = old.spans[row];
            let first =
                fresh.sentences.extend_from(&old.sentences, (start as usize, (start + len) as usize), dims);
            fresh.spans.push((first, len));
        }
        *inner = fresh;
    }

    /// Plain scan over every row with no mask and no liveness check: the baseline the
    /// benchmark compares the masked search against. Returns (row, score) pairs.
    pub fn plain_scan_baseline(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        let inner = self.read();
        let mut top = TopK::new(k);
        for (row, vector) in inner.matrix.chunks_exact(self.dims).enumerate() {
            top.offer(dot(query, vector), row as u32, &inner.ids);
        }
        top.into_sorted().into_iter().map(|(row, score)| (row as usize, score)).collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The write lock; taking it makes every [`Prepared`] stale.
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        let inner = self.inner.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.generation.fetch_add(1, AtomicOrdering::AcqRel);
        inner
    }

    /// The [`Prepared`] of a search over `eligible` for lists of these sentence weights
    /// (`inner` read-locked by the caller): kept from an earlier call at this generation, or
    /// computed and kept. Sentences are weighed when any list weighs them.
    fn prepared_for(
        &self,
        inner: &Inner,
        eligible: &[RecordKey],
        centring: Centring,
        sentences: &[SentenceWeight],
    ) -> Arc<Prepared> {
        let centred = centring.share() > 0.0;
        let weighed = sentences.iter().any(|w| w.weight() > 0.0) && inner.sentences.len() > 0;
        let generation = self.generation.load(AtomicOrdering::Acquire);
        let kept = |p: &Prepared| {
            p.generation == generation
                && p.centred == centred
                && p.weighed == weighed
                && p.eligible == eligible
        };
        let mut sets = self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = sets.iter().position(|p| kept(p)) {
            // Most recently used last: the first is the one a new set replaces.
            let found = sets.remove(at);
            sets.push(found.clone());
            return found;
        }
        drop(sets);
        let dims = self.dims;
        let mut rows: Vec<u32> = eligible
            .iter()
            .filter_map(|key| inner.row_of(*key))
            .filter(|row| inner.live[*row])
            .map(|row| row as u32)
            .collect();
        // Scan in matrix order for sequential memory access. Eligible keys arrive sorted and
        // rows are appended in key order, so the sort is usually skipped.
        if !rows.is_sorted() {
            rows.sort_unstable();
        }
        rows.dedup();
        let mean = (centred && rows.len() >= CENTRING_MIN_ROWS)
            .then(|| mean(rows.iter().map(|&r| inner.unit(r as usize, dims)), rows.len(), dims));
        // As for records, a handful of sentences has no common direction to take away.
        let sentence_mean = match (&mean, weighed) {
            (Some(_), true) => {
                let count: usize = rows.iter().map(|&r| inner.spans[r as usize].1 as usize).sum();
                (count >= CENTRING_MIN_ROWS).then(|| sentence_mean(inner, &rows, count, dims))
            }
            _ => None,
        };
        let made = Arc::new(Prepared {
            generation,
            eligible: eligible.to_vec(),
            centred,
            weighed,
            rows,
            mean,
            sentence_mean,
        });
        let mut sets = self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sets.retain(|p| p.generation == generation && !kept(p));
        if sets.len() == PREPARED_SETS {
            sets.remove(0);
        }
        sets.push(made.clone());
        made
    }

    fn check_dims(&self, what: &'static str, vector: &[f32]) -> Result<()> {
        if vector.len() != self.dims {
            return Err(DomainError::Invalid {
                field: what,
                reason: format!("has {} dimensions, the index holds {}", vector.len(), self.dims),
            });
        }
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(DomainError::Invalid { field: what, reason: "contains a non-finite number".into() });
        }
        Ok(())
    }
}

/// `1 − w` of a record's own cosine and `w` of its best sentence's: its best alone at 1, its
/// own alone when it has no sentences (or the list weighs none).
#[inline]
fn mix(weight: f32, own: f32, best: Option<f32>) -> f32 {
    match best {
        Some(best) if weight >= 1.0 => best,
        Some(best) => own + weight * (best - own),
        None => own,
    }
}

/// L2-normalise in place; a zero vector stays zero (it then scores 0 against everything).
pub(crate) fn normalise(vector: &mut [f32]) {
    let norm = dot(vector, vector).sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

impl VectorIndex for ExactIndex {
    fn check(&self, vector: &[f32]) -> Result<()> {
        self.check_dims("vector", vector)
    }

    fn upsert_with(&self, key: RecordKey, id: &RecordId, vector: &[f32], sentences: &[f32]) -> Result<()> {
        self.check_dims("vector", vector)?;
        let dims = self.dims;
        let sentences = quantised_units(sentences, dims)?;
        let count = u32::try_from(sentences.len())
            .map_err(|_| DomainError::Invalid { field: "sentences", reason: "too many".into() })?;
        let slot = usize::try_from(key.0).ok().filter(|k| *k < (NO_ROW as usize)).ok_or_else(|| {
            DomainError::Invalid { field: "record_key", reason: format!("{} is too large", key.0) }
        })?;
        let mut normalised = vector.to_vec();
        normalise(&mut normalised);
        let mut row_i8 = I8Rows::with_capacity(1, dims);
        row_i8.push_unit(&normalised);
        let mut inner = self.write();
        if let Some(row) = inner.row_of(key) {
            inner.matrix[row * dims..(row + 1) * dims].copy_from_slice(&normalised);
            inner.rows_i8.overwrite(row, &row_i8, dims);
            let (start, len) = inner.spans[row];
            let start = if count <= len {
                inner.sentences.overwrite(start as usize, &sentences, dims);
                start
            } else {
                inner.sentences.extend_from(&sentences, (0, sentences.len()), dims)
            };
            inner.spans[row] = (start, count);
            inner.ids[row] = id.clone();
            if !inner.live[row] {
                inner.live[row] = true;
                inner.live_count += 1;
            }
            return Ok(());
        }
        let row = inner.ids.len() as u32;
        if inner.pos.len() <= slot {
            inner.pos.resize(slot + 1, NO_ROW);
        }
        inner.pos[slot] = row;
        inner.ids.push(id.clone());
        inner.keys.push(key);
        inner.matrix.extend_from_slice(&normalised);
        inner.rows_i8.extend_from(&row_i8, (0, 1), dims);
        inner.live.push(true);
        inner.live_count += 1;
        let start = inner.sentences.extend_from(&sentences, (0, sentences.len()), dims);
        inner.spans.push((start, count));
        Ok(())
    }

    fn attach_sentences(&self, key: RecordKey, sentences: &[f32]) -> Result<bool> {
        let dims = self.dims;
        let sentences = quantised_units(sentences, dims)?;
        let count = u32::try_from(sentences.len())
            .map_err(|_| DomainError::Invalid { field: "sentences", reason: "too many".into() })?;
        let mut inner = self.write();
        let Some(row) = inner.row_of(key).filter(|row| inner.live[*row]) else { return Ok(false) };
        let (start, len) = inner.spans[row];
        let start = if count <= len {
            inner.sentences.overwrite(start as usize, &sentences, dims);
            start
        } else {
            inner.sentences.extend_from(&sentences, (0, sentences.len()), dims)
        };
        inner.spans[row] = (start, count);
        Ok(true)
    }

    fn mark_dead(&self, key: RecordKey) {
        let mut inner = self.write();
        if let Some(row) = inner.row_of(key)
            && inner.live[row]
        {
            inner.live[row] = false;
            inner.live_count -= 1;
        }
    }

    fn search_lists(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        weights: &[SentenceWeight],
    ) -> Result<Vec<Vec<VectorHit>>> {
        self.check_dims("query", query)?;
        if k == 0 || eligible.is_empty() || weights.is_empty() {
            return Ok(vec![Vec::new(); weights.len()]);
        }
        let mut query = query.to_vec();
        normalise(&mut query);
        let dims = self.dims;
        // The mask is built (or found built at this generation) while holding the lock, so a
        // concurrent write cannot shift rows between building it and scanning. One prepared
        // set serves every list.
        let inner = self.read();
        let prepared = self.prepared_for(&inner, eligible, centring, weights);
        let (rows, weighed) = (prepared.rows.as_slice(), prepared.weighed);
        // Each list's sentence weight, and whether it weighs sentences at all (with none
        // stored, no list does).
        let lists: Vec<(f32, bool)> =
            weights.iter().map(|w| (w.weight(), weighed && w.weight() > 0.0)).collect();
        // Whether a row with sentences needs its own cosine in the scan: a list that does not
        // rank by its best sentence alone reads it.
        let own_beside_sentences = lists.iter().any(|&(weight, weighs)| !weighs || weight < 1.0);
        let row_of = |row: u32| inner.unit(row as usize, dims);
        // A row's sentence vectors: each one's `i8`s and scale.
        let sentences_of = |row: u32| {
            let (start, len) = inner.spans[row as usize];
            (start as usize..(start + len) as usize).map(|at| inner.sentences.row(at, dims))
        };
        let centre = prepared.mean.as_ref().map(|mean| Centre::new(&query, centring.share(), mean.clone()));
        // A centred search over more rows than it keeps scans the rows' `i8` copies for its
        // pool, then scores what that found exactly (below); other searches scan the exact
        // rows.
        let pool = match centre {
            Some(_) => k.saturating_mul(CENTRING_POOL),
            None => k,
        };
        let prefilter = centre.is_some() && rows.len() > pool.saturating_mul(PREFILTER_MARGIN);
        // The query quantised as the rows' copies and the sentences are, so that a cosine in
        // the scan is one integer dot product.
        let dot_i8 = dot_i8_kernel();
        let query_i8 = Quantised::new(if weighed || prefilter { &query } else { &[] });
        let sentence_cosine = |s: &[i8], scale: f32| query_i8.dot(s, scale, dot_i8);
        let own_cosine = |row: u32| {
            if prefilter {
                let (values, scale) = inner.rows_i8.row(row as usize, dims);
                query_i8.dot(values, scale, dot_i8)
            } else {
                dot(&query, row_of(row))
            }
        };
        let best_of = |row: u32, score: &dyn Fn(&[i8], f32) -> f32| {
            sentences_of(row).map(|(s, scale)| score(s, scale)).reduce(f32::max)
        };
        // Sentence vectors are centred on their own mean: a sentence is shorter than its
        // record and lies elsewhere.
        let sentence_centre = prepared.sentence_mean.as_ref().map(|mean| {
            let centre = Centre::new(&query, centring.share(), mean.clone());
            // Quantised like the sentences, so the reorder's two dot products a sentence are
            // integer ones too.
            let (query, mean) = (Quantised::new(&centre.query), Quantised::new(&centre.mean));
            (centre, query, mean)
        });
        // A centred search reorders the plain cosine's first `CENTRING_POOL × k`: scoring
        // every row centred would make the scan compute-bound (two dot products a row).
        let scanned = if prefilter { pool.saturating_mul(PREFILTER_MARGIN) } else { pool };
        // One pass over the rows for every list: each row's cosines are computed once and
        // offered to each list's top k.
        let scan = |rows: &[u32]| {
            let mut tops: Vec<TopK> = lists.iter().map(|_| TopK::new(scanned)).collect();
            for &row in rows {
                let best = if weighed { best_of(row, &sentence_cosine) } else { None };
                // Every list ranks a row with sentences by its best alone: its own vector is
                // not read (and the value below is never used).
                let own = match best {
                    Some(_) if !own_beside_sentences => 0.0,
                    _ => own_cosine(row),
                };
                for (top, &(weight, weighs)) in tops.iter_mut().zip(&lists) {
                    top.offer(mix(weight, own, best.filter(|_| weighs)), row, &inner.ids);
                }
            }
            tops
        };
        // Large scans are split in two halves on two threads (memory bandwidth, not the
        // arithmetic, is the bound; one core does not saturate it). Both halves' top k merge
        // into the same exact answer.
        let tops = if rows.len() >= PARALLEL_ROWS {
            let (left, right) = rows.split_at(rows.len() / 2);
            let (mut tops, others) = std::thread::scope(|s| {
                let handle = s.spawn(|| scan(right));
                (scan(left), handle.join().expect("the scan thread does not panic"))
            });
            for (top, other) in tops.iter_mut().zip(others) {
                for worst in other.heap {
                    top.offer_worst(worst);
                }
            }
            tops
        } else {
            scan(rows)
        };
        let hit = |row: u32, score: f32, centred: Option<f32>, sentence: Option<f32>| VectorHit {
            record_key: inner.keys[row as usize],
            record_id: inner.ids[row as usize].clone(),
            score,
            centred,
            sentence,
        };
        // One list's top k from what the scan kept for it.
        let finish = |top: TopK, (weight, weighs): (f32, bool)| -> Vec<VectorHit> {
            let plain = top.into_sorted();
            let Some(centre) = &centre else {
                return plain
                    .into_iter()
                    .map(|(row, score)| match weighs {
                        true => hit(row, dot(&query, row_of(row)), None, best_of(row, &sentence_cosine)),
                        false => hit(row, score, None, None),
                    })
                    .collect();
            };
            // The pool: the scanned rows' best `pool` by their exact plain score.
            let plain = if prefilter {
                let mut exact: Vec<(u32, f32)> = plain
                    .into_iter()
                    .map(|(row, _)| {
                        let best = if weighs { best_of(row, &sentence_cosine) } else { None };
                        (row, mix(weight, dot(&query, row_of(row)), best))
                    })
                    .collect();
                exact.sort_by(|a, b| {
                    b.1.total_cmp(&a.1).then_with(|| inner.ids[a.0 as usize].cmp(&inner.ids[b.0 as usize]))
                });
                exact.truncate(pool);
                exact
            } else {
                plain
            };
            let mut centred: Vec<(f32, f32, Option<f32>, u32)> = plain
                .into_iter()
                .map(|(row, _)| {
                    let row_vector = row_of(row);
                    let own = centre.cosine(dot(&centre.query, row_vector), dot(&centre.mean, row_vector));
                    let best = match (&sentence_centre, weighs) {
                        (Some((c, query, mean)), true) => best_of(row, &|s, scale| {
                            c.cosine(query.dot(s, scale, dot_i8), mean.dot(s, scale, dot_i8))
                        }),
                        (None, true) => best_of(row, &sentence_cosine),
                        (_, false) => None,
                    };
                    (own, dot(&query, row_vector), best, row)
                })
                .collect();
            let ranked = |c: &(f32, f32, Option<f32>, u32)| mix(weight, c.0, c.2);
            centred.sort_by(|a, b| {
                ranked(b)
                    .total_cmp(&ranked(a))
                    .then_with(|| inner.ids[a.3 as usize].cmp(&inner.ids[b.3 as usize]))
            });
            centred
                .into_iter()
                .take(k)
                .map(|(own, score, best, row)| hit(row, score, Some(own), best))
                .collect()
        };
        Ok(tops.into_iter().zip(lists.iter().copied()).map(|(top, list)| finish(top, list)).collect())
    }

    fn prepare(&self, eligible: &[RecordKey], centring: Centring, sentences: &[SentenceWeight]) {
        if eligible.is_empty() {
            return;
        }
        self.prepared_for(&self.read(), eligible, centring, sentences);
    }

    fn vector(&self, key: RecordKey) -> Option<Vec<f32>> {
        let inner = self.read();
        let row = inner.row_of(key).filter(|row| inner.live[*row])?;
        Some(inner.unit(row, self.dims).to_vec())
    }

    fn live_len(&self) -> usize {
        self.read().live_count
    }
}

/// Eligible rows from which a scan is split across two threads.
const PARALLEL_ROWS: usize = 16_384;

/// Fewer eligible rows than this rank by plain cosine whatever the centring: a handful of
/// records has no common direction to take away, and the mean of a few records is close to
/// each of them, so what is left of a record would be mostly noise.
pub const CENTRING_MIN_ROWS: usize = 64;

/// A centred search reorders this many times `k` of the plain cosine's best rows (all of
/// them in a smaller eligible set). Centring moves a record by how near it lies to the mean,
/// not far: reordering a pool of the plain cosine's best finds what reordering all of them
/// finds (figures: docs/quality.md, "Figures behind the default configuration"), and scoring
/// only the pool keeps the scan one memory-bound dot product a row.
pub const CENTRING_POOL: usize = 10;

/// A centred scan keeps this many times its pool by the rows' `i8` copies, and the pool is
/// the best of those by exact score. Each `i8` is off by at most half a step (a step is the
/// vector's largest magnitude / 127), so a row's cosine is off by at most
/// `(|q|₁ max|d| + |d|₁ max|q|) / 254`, and far less in practice as the errors' signs vary:
/// a row of the exact pool falls outside twice the pool only among near ties at its edge.
const PREFILTER_MARGIN: usize = 2;

/// The mean of a centred search is taken over at most this many eligible rows, evenly spaced
/// in scan order (the same eligible set gives the same sample): a mean of thousands of
/// vectors barely moves with more, and a full pass would double the scan's memory traffic.
const CENTRING_SAMPLE: usize = 4_096;

/// The sentences' mean is taken over at most this many: widening each `i8` costs more than
/// reading an `f32`, and the mean of a thousand sentences barely moves with more.
const SENTENCE_SAMPLE: usize = 1_024;

/// A centred scan's constants. With `m` the share of the eligible rows' mean and `|d| = 1`,
/// the cosine of `q − m` and `d − m` is `((q − m)·d − (q − m)·m) / (|q − m| √(1 − 2 m·d + |m|²))`:
/// two dot products per reordered row, nothing per scanned one.
struct Centre {
    /// `m`.
    mean: Vec<f32>,
    /// `q − m`.
    query: Vec<f32>,
    /// `(q − m)·m`.
    query_mean: f32,
    /// `|m|²`.
    mean_sq: f32,
    /// `|q − m|`.
    query_norm: f32,
}

impl Centre {
    /// Around `share` of the rows' `mean`.
    fn new(query: &[f32], share: f32, mut mean: Vec<f32>) -> Self {
        mean.iter_mut().for_each(|m| *m *= share);
        let centred: Vec<f32> = query.iter().zip(&mean).map(|(q, m)| q - m).collect();
        Self {
            query_mean: dot(&centred, &mean),
            mean_sq: dot(&mean, &mean),
            query_norm: dot(&centred, &centred).sqrt().max(f32::EPSILON),
            query: centred,
            mean,
        }
    }

    /// The centred cosine of a row from `(q − m)·d` and `m·d`.
    #[inline]
    fn cosine(&self, query_dot: f32, mean_dot: f32) -> f32 {
        let row_norm = (1.0 - 2.0 * mean_dot + self.mean_sq).max(f32::EPSILON).sqrt();
        (query_dot - self.query_mean) / (self.query_norm * row_norm)
    }
}

/// The mean of `count` rows (what `rows` yields), over at most `CENTRING_SAMPLE` of them
/// evenly spaced.
fn mean<'a>(rows: impl Iterator<Item = &'a [f32]>, count: usize, dims: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dims];
    let mut taken = 0usize;
    for row in rows.step_by(count.div_ceil(CENTRING_SAMPLE).max(1)) {
        sum.iter_mut().zip(row).for_each(|(m, x)| *m += x);
        taken += 1;
    }
    let scale = 1.0 / taken.max(1) as f32;
    sum.iter_mut().for_each(|m| *m *= scale);
    sum
}

/// [`mean`] of the `count` sentence vectors of `rows`, dequantised, over at most
/// `SENTENCE_SAMPLE` of them evenly spaced (found from the spans, without walking the rest).
fn sentence_mean(inner: &Inner, rows: &[u32], count: usize, dims: usize) -> Vec<f32> {
    let step = count.div_ceil(SENTENCE_SAMPLE).max(1);
    let mut sum = vec![0.0f32; dims];
    let (mut taken, mut next, mut seen) = (0usize, 0usize, 0usize);
    for &row in rows {
        let (start, len) = inner.spans[row as usize];
        let (start, len) = (start as usize, len as usize);
        while next < seen + len {
            let (values, scale) = inner.sentences.row(start + next - seen, dims);
            sum.iter_mut().zip(values).for_each(|(m, &x)| *m += f32::from(x) * scale);
            taken += 1;
            next += step;
        }
        seen += len;
    }
    let scale = 1.0 / taken.max(1) as f32;
    sum.iter_mut().for_each(|m| *m *= scale);
    sum
}

/// A vector quantised to `i8` with one scale, as the index holds sentence vectors.
struct Quantised {
    values: Vec<i8>,
    scale: f32,
}

impl Quantised {
    fn new(vector: &[f32]) -> Self {
        let mut values = Vec::with_capacity(vector.len());
        let scale = quantise(vector, &mut values);
        Self { values, scale }
    }

    /// Its dot product with a held sentence vector (`i8`s and their scale).
    #[inline]
    fn dot(&self, sentence: &[i8], scale: f32, kernel: DotI8) -> f32 {
        kernel(&self.values, sentence) as f32 * (self.scale * scale)
    }
}

/// Bounded selection of the best `k` (score descending, then id ascending).
struct TopK<'a> {
    k: usize,
    /// Min-heap on "goodness": the worst kept candidate is on top.
    heap: BinaryHeap<Worst<'a>>,
}

#[derive(Debug)]
struct Worst<'a> {
    score: f32,
    row: u32,
    /// Tie-break key; only consulted when scores are equal (borrowed: no allocation per
    /// kept candidate).
    id: &'a RecordId,
}

impl<'a> TopK<'a> {
    fn new(k: usize) -> Self {
        Self { k, heap: BinaryHeap::with_capacity(k + 1) }
    }

    #[inline]
    fn offer(&mut self, score: f32, row: u32, ids: &'a [RecordId]) {
        if self.heap.len() < self.k {
            self.heap.push(Worst::new(score, row, ids));
            return;
        }
        let worst = self.heap.peek().expect("k > 0");
        // Cheap rejection on score alone; equal scores fall through to the id tie-break.
        if score < worst.score {
            return;
        }
        let candidate = Worst::new(score, row, ids);
        if candidate.cmp(worst) == Ordering::Less {
            self.heap.pop();
            self.heap.push(candidate);
        }
    }

    /// Offer a candidate another selection already kept.
    fn offer_worst(&mut self, candidate: Worst<'a>) {
        if self.heap.len() < self.k {
            self.heap.push(candidate);
        } else if candidate.cmp(self.heap.peek().expect("k > 0")) == Ordering::Less {
            self.heap.pop();
            self.heap.push(candidate);
        }
    }

    fn into_sorted(self) -> Vec<(u32, f32)> {
        // Ascending in the "worse is greater" order: best first.
        self.heap.into_sorted_vec().into_iter().map(|w| (w.row, w.score)).collect()
    }
}

impl<'a> Worst<'a> {
    fn new(score: f32, row: u32, ids: &'a [RecordId]) -> Self {
        Self { score, row, id: &ids[row as usize] }
    }
}

// Ordering: a value is "greater" when it is worse, so the max-heap keeps the worst on top.
// Worse = lower score, or equal score and larger id.
impl Ord for Worst<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then_with(|| self.id.cmp(other.id))
    }
}

impl PartialOrd for Worst<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Worst<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Worst<'_> {}

/// Normalise each `dims`-long row of `matrix` in place (those the embedder already
/// normalised are left as they are); a non-finite number is refused as `field`.
fn unit_rows(field: &'static str, matrix: &mut [f32], dims: usize) -> Result<()> {
    if dims == 0 {
        return Ok(());
    }
    for vector in matrix.chunks_exact_mut(dims) {
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(DomainError::Invalid { field, reason: "contains a non-finite number".into() });
        }
        if (dot(vector, vector) - 1.0).abs() > 1e-4 {
            normalise(vector);
        }
    }
    Ok(())
}

/// Sentence vectors (`dims` numbers each, one after the other) as the index holds them: each
/// normalised, then quantised to `i8`; their `i8`s and one scale each. Numbers that are not
/// whole vectors, or not finite, are refused.
fn quantised_units(sentences: &[f32], dims: usize) -> Result<I8Rows> {
    if !sentences.len().is_multiple_of(dims) {
        return Err(DomainError::Invalid {
            field: "sentences",
            reason: format!("{} numbers are not whole vectors of {dims}", sentences.len()),
        });
    }
    let mut held = I8Rows::with_capacity(sentences.len() / dims.max(1), dims);
    if dims == 0 {
        return Ok(held);
    }
    let mut unit = vec![0.0f32; dims];
    for sentence in sentences.chunks_exact(dims) {
        if sentence.iter().any(|x| !x.is_finite()) {
            return Err(DomainError::Invalid {
                field: "sentences",
                reason: "contains a non-finite number".into(),
            });
        }
        unit.copy_from_slice(sentence);
        normalise(&mut unit);
        held.push_unit(&unit);
    }
    Ok(held)
}

/// Each row's `(start, len)` in the sentence matrix from a scan's per-row counts (none for
/// every row when the scan has no counts).
fn spans_from_counts(counts: &[u32], rows: usize, numbers: usize, dims: usize) -> Result<Vec<(u32, u32)>> {
    if counts.is_empty() && numbers == 0 {
        return Ok(vec![(0, 0); rows]);
    }
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if counts.len() != rows || total * dims as u64 != numbers as u64 || total > u64::from(u32::MAX) {
        return Err(DomainError::Invalid {
            field: "sentences",
            reason: format!(
                "{} counts summing to {total} for {rows} rows and {numbers} numbers of {dims} dims",
                counts.len()
            ),
        });
    }
    let mut start = 0u32;
    Ok(counts
        .iter()
        .map(|&len| {
            let span = (start, len);
            start += len;
            span
        })
        .collect())
}

/// What a boot rebuild found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebuildReport {
    /// Vectors loaded into the index.
    pub loaded: usize,
    /// Stored vectors from another model, version or dimension count: counted, never mixed in.
    pub incompatible: u64,
}

impl ExactIndex {
    /// Take over a scan's contiguous vectors as the matrix (no copy). Vectors the embedder
    /// already normalised are left as they are; others are normalised in place.
    pub fn from_scan(scan: retold_domain::EmbeddingScan) -> Result<Self> {
        let dims = scan.dims as usize;
        let rows = scan.keys.len();
        if scan.ids.len() != rows || scan.vectors.len() != rows * dims {
            return Err(DomainError::Invalid {
                field: "embeddings",
                reason: format!(
                    "{} keys, {} ids and {} numbers for {dims} dims",
                    rows,
                    scan.ids.len(),
                    scan.vectors.len()
                ),
            });
        }
        let max_key = scan.keys.iter().map(|k| k.0).max().unwrap_or(0);
        let slots = usize::try_from(max_key).ok().filter(|k| *k < NO_ROW as usize).ok_or_else(|| {
            DomainError::Invalid { field: "record_key", reason: format!("{max_key} is too large") }
        })?;
        let mut pos = vec![NO_ROW; slots + 1];
        for (row, key) in scan.keys.iter().enumerate() {
            let slot = &mut pos[key.0 as usize];
            if *slot != NO_ROW {
                return Err(DomainError::Invalid {
                    field: "record_key",
                    reason: format!("{} appears twice", key.0),
                });
            }
            *slot = row as u32;
        }
        let spans = spans_from_counts(&scan.sentence_counts, rows, scan.sentences.len(), dims)?;
        let mut matrix = scan.vectors;
        // The records' rows and the sentences are made ready on two threads (a boot's largest
        // part after the scan): the sentences' first half beside the rows, then the rest.
        let half = (scan.sentences.len() / dims.max(1)).div_ceil(2) * dims;
        let (first, second) = scan.sentences.split_at(half);
        let (rows_i8, sentences) = std::thread::scope(|threads| -> Result<(I8Rows, I8Rows)> {
            let beside = threads.spawn(|| quantised_units(first, dims));
            unit_rows("vector", &mut matrix, dims)?;
            // The rows are unit vectors now: quantised as they are, as `upsert_with` does.
            let mut rows_i8 = I8Rows::with_capacity(rows, dims);
            for row in 0..rows {
                rows_i8.push_unit(&matrix[row * dims..(row + 1) * dims]);
            }
            let rest = quantised_units(second, dims)?;
            let mut sentences = beside
                .join()
                .map_err(|_| DomainError::backend("vector index", "a boot thread panicked"))??;
            sentences.extend_from(&rest, (0, rest.len()), dims);
            Ok((rows_i8, sentences))
        })?;
        drop(scan.sentences);
        let inner = Inner {
            ids: scan.ids,
            keys: scan.keys,
            matrix,
            rows_i8,
            pos,
            live: vec![true; rows],
            live_count: rows,
            spans,
            sentences,
        };
        Ok(Self::holding(dims, inner))
    }

    /// Boot: scan the compatible embedding rows of `model` from the store and build the index.
    pub async fn rebuild(
        store: &dyn retold_domain::EmbeddingSource,
        model: &retold_domain::EmbeddingModelInfo,
    ) -> Result<(Self, RebuildReport)> {
        let scan = store.compatible_embeddings(&model.name, model.version, model.dims).await?;
        let (loaded, incompatible) = (scan.keys.len(), scan.incompatible);
        let index = Self::from_scan(scan)?;
        Ok((index, RebuildReport { loaded, incompatible }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> RecordId {
        RecordId::new(format!("mem_{n:08}")).unwrap()
    }

    /// Every row's `i8` copy is its `f32` row quantised, scale and all.
    fn assert_copies_follow(index: &ExactIndex) {
        let inner = index.read();
        let dims = index.dims;
        assert_eq!((inner.rows_i8.values.len(), inner.rows_i8.len()), (inner.matrix.len(), inner.ids.len()));
        for (row, vector) in inner.matrix.chunks_exact(dims).enumerate() {
            let mut want = Vec::new();
            let scale = quantise(vector, &mut want);
            assert_eq!(inner.rows_i8.row(row, dims), (want.as_slice(), scale), "row {row}");
        }
    }

    #[test]
    fn each_row_s_i8_copy_follows_it_through_writes_replacements_compaction_and_boot() {
        let index = ExactIndex::new(4);
        let vector = |n: u64| [n as f32, 1.0 - n as f32 * 0.1, (n % 3) as f32, -0.5];
        for n in 1..=12 {
            index.upsert(RecordKey(n), &id(n), &vector(n)).unwrap();
        }
        assert_copies_follow(&index);
        // Replaced with other vectors, some marked dead, compacted.
        for n in [2, 5, 9] {
            index.upsert(RecordKey(n), &id(n), &vector(n + 20)).unwrap();
        }
        assert_copies_follow(&index);
        for n in [1, 5, 12] {
            index.mark_dead(RecordKey(n));
        }
        index.compact();
        assert_copies_follow(&index);
        assert_eq!(index.rows(), 9);
        // Built from a boot scan.
        let booted = ExactIndex::from_scan(retold_domain::EmbeddingScan {
            dims: 4,
            keys: (1..=6).map(RecordKey).collect(),
            ids: (1..=6).map(id).collect(),
            vectors: (1..=6).flat_map(vector).collect(),
            sentence_counts: Vec::new(),
            sentences: Vec::new(),
            incompatible: 0,
        })
        .unwrap();
        assert_copies_follow(&booted);
    }
}
