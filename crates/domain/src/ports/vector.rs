//! Stored vectors and the in-memory exact index (seed: vector index).

use async_trait::async_trait;

use super::{EmbeddingModelInfo, RecordKey, ReembedItem};
use crate::error::{DomainError, Result};
use crate::ids::RecordId;

/// A stored embedding vector and the model that produced it (the write side).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingRow {
    pub record_id: RecordId,
    pub model: String,
    pub version: u32,
    pub dims: u32,
    pub vector: Vec<f32>,
    /// The record's sentence vectors ([`crate::IndexedText::sentence_texts`]), `dims`
    /// numbers each, one after the other; empty when it has none, or none yet.
    pub sentences: Vec<f32>,
    /// The record has sentence texts whose vectors are attached after the write commits
    /// ([`SentenceVectors`]); until then `sentences` is empty.
    pub sentences_pending: bool,
}

/// Every compatible stored vector, packed for the index to take over without copying:
/// row `i` is `keys[i]`, `ids[i]` and `vectors[i * dims..(i + 1) * dims]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbeddingScan {
    pub dims: u32,
    pub keys: Vec<RecordKey>,
    pub ids: Vec<RecordId>,
    pub vectors: Vec<f32>,
    /// Row `i`'s sentence vectors: `sentence_counts[i]` of them, `dims` numbers each, after
    /// those of the rows before it in `sentences`. Empty when no row has any.
    pub sentence_counts: Vec<u32>,
    pub sentences: Vec<f32>,
    /// Stored vectors of another model, version or dimension count: counted, never mixed in.
    pub incompatible: u64,
}

/// One committed record's sentence vectors (`dims` numbers each, in sentence order).
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceRow {
    pub id: RecordId,
    pub sentences: Vec<f32>,
}

/// Sentence vectors attached after a write commits: a write answers once its record, its
/// lexical row and its own vector are stored, and its sentence vectors follow.
#[async_trait]
pub trait SentenceVectors: Send + Sync {
    /// Store each row's sentence vectors where its record's embedding row of `model` still
    /// waits for them, all rows in one transaction (one change). One flag per row, in order:
    /// `false` (nothing changed for it) when it does not wait: the record was erased or
    /// embedded again by another model, or they are there already. A row whose numbers are
    /// not whole vectors fails the batch, and nothing is stored.
    async fn attach_sentences(&self, model: &EmbeddingModelInfo, rows: &[SentenceRow]) -> Result<Vec<bool>>;
    /// Up to `limit` live records, in key order, whose embedding row of `model` waits for its
    /// sentence vectors (a process stopped before it attached them).
    async fn pending_sentences(&self, model: &EmbeddingModelInfo, limit: usize) -> Result<Vec<ReembedItem>>;
}

/// The boot scan that rebuilds the vector index (seed section 9).
#[async_trait]
pub trait EmbeddingSource: Send + Sync {
    /// Every stored vector that matches `model`, `version` and `dims`, ordered by key, plus
    /// the number that did not. Deleted and erased records are skipped.
    async fn compatible_embeddings(&self, model: &str, version: u32, dims: u32) -> Result<EmbeddingScan>;
}

/// One dense candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub record_key: RecordKey,
    pub record_id: RecordId,
    /// Cosine similarity.
    pub score: f32,
    /// The cosine it was ranked by when the search was centred ([`Centring`]), else `None`.
    pub centred: Option<f32>,
    /// Its best sentence vector's cosine (centred when the search was), when the search
    /// weighed sentences in and the record has sentence vectors.
    pub sentence: Option<f32>,
}

/// How much of the searched records' mean vector a dense search takes away from the query
/// and from each record before it ranks them by cosine: 0 ranks by plain cosine, 1 removes
/// the whole mean. Records that all share a direction (one conversation's speakers and topic,
/// one project's vocabulary) look alike to a query by that direction alone; without it, what
/// tells them apart decides the order. Only the searched (eligible) records make the mean, so
/// records a caller may not read never change what it finds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Centring(f32);

impl Centring {
    /// Plain cosine.
    pub const NONE: Centring = Centring(0.0);

    /// A share of the mean in `[0, 1]`.
    pub fn new(share: f32) -> Result<Self> {
        if share.is_finite() && (0.0..=1.0).contains(&share) {
            Ok(Self(share))
        } else {
            Err(crate::DomainError::invalid("dense_centring", format!("{share} is not a share in [0, 1]")))
        }
    }

    /// The share of the mean removed.
    pub fn share(self) -> f32 {
        self.0
    }
}

/// How much a record's best sentence vector weighs in one of the index's lists, in `[0, 1]`:
/// 0 ranks by the record's own vector alone (the retriever's record list), 1 by its best
/// sentence alone (its sentence list); the index scores any mix in one pass. A record's own
/// vector is pooled over all its tokens (and its context), so the one sentence of a long turn
/// that answers says little in it. A record without sentence vectors scores by its own vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SentenceWeight(f32);

impl SentenceWeight {
    /// The record's own vector alone.
    pub const NONE: SentenceWeight = SentenceWeight(0.0);

    /// Each record by its best sentence alone (by its own vector when it has none: one short
    /// sentence is its own best): the retriever's sentence list (`retrieval.fusion.sentences`).
    pub const BEST: SentenceWeight = SentenceWeight(1.0);

    /// A weight in `[0, 1]`.
    pub fn new(weight: f32) -> Result<Self> {
        if weight.is_finite() && (0.0..=1.0).contains(&weight) {
            Ok(Self(weight))
        } else {
            Err(crate::DomainError::invalid("sentence_weight", format!("{weight} is not a weight in [0, 1]")))
        }
    }

    /// The weight of the best sentence.
    pub fn weight(self) -> f32 {
        self.0
    }
}

/// The in-memory exact vector index (seed section 9).
pub trait VectorIndex: Send + Sync {
    /// Whether `upsert` takes this vector (the index's dims, finite numbers). The write path
    /// asks before its commit, so the update after the commit has nothing left to refuse.
    fn check(&self, vector: &[f32]) -> Result<()>;
    /// Add or replace the vector of a record (normalised on the way in), without sentence
    /// vectors. Fails only for a vector `check` refuses or a key the index cannot address.
    fn upsert(&self, key: RecordKey, id: &RecordId, vector: &[f32]) -> Result<()> {
        self.upsert_with(key, id, vector, &[])
    }
    /// Add or replace the vector of a record and its sentence vectors (`dims` numbers each,
    /// one after the other; each normalised on the way in).
    fn upsert_with(&self, key: RecordKey, id: &RecordId, vector: &[f32], sentences: &[f32]) -> Result<()>;
    /// Give a live record its sentence vectors, attached after its write committed; `false`
    /// (nothing changed) when the index holds no live row for `key`.
    fn attach_sentences(&self, key: RecordKey, sentences: &[f32]) -> Result<bool>;
    /// Mark a record's vector dead without rebuilding; it is never returned again.
    fn mark_dead(&self, key: RecordKey);
    /// Exact top-k by cosine among live rows whose key is in `eligible`, centred on their
    /// mean by `centring`; ties broken by id.
    fn search(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
    ) -> Result<Vec<VectorHit>> {
        self.search_with(query, eligible, k, centring, SentenceWeight::NONE)
    }
    /// As `search`, with each record scored `1 − w` its own cosine and `w` its best sentence
    /// vector's (sentences centred on their own mean by the same `centring`); a record
    /// without sentence vectors scores its own cosine.
    fn search_with(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        sentences: SentenceWeight,
    ) -> Result<Vec<VectorHit>> {
        let mut lists = self.search_lists(query, eligible, k, centring, &[sentences])?;
        lists.pop().ok_or_else(|| {
            DomainError::backend("vector index", "search_lists returned no list for one weight")
        })
    }
    /// As `search_with`, once for each weight in `sentences`, in one pass over the rows: the
    /// `i`-th list is what `search_with` with `sentences[i]` returns (the retriever's record
    /// and sentence lists).
    fn search_lists(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        sentences: &[SentenceWeight],
    ) -> Result<Vec<Vec<VectorHit>>>;
    /// Do now what a `search_lists` over `eligible` with these settings needs before its
    /// query (which rows, the means it centres on), so that a search soon after, the index
    /// unchanged, finds it done: the retriever calls it while the query is embedded. The
    /// search's result is the same whether or not this ran.
    fn prepare(&self, eligible: &[RecordKey], centring: Centring, sentences: &[SentenceWeight]) {
        let _ = (eligible, centring, sentences);
    }
    /// The vector stored for a record, when live.
    fn vector(&self, key: RecordKey) -> Option<Vec<f32>>;
    /// Number of live rows.
    fn live_len(&self) -> usize;
}
