//! Exact-word and identifier retrieval (seed: FTS5 lexical index).

use async_trait::async_trait;

use super::RecordKey;
use crate::error::Result;
use crate::ids::RecordId;

/// One query term the lexical channel matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedTerm {
    pub term: String,
    /// Detected as an identifier (path, snake_case, dotted name, error code, id).
    pub identifier: bool,
    /// Matched through a linked entity alias.
    pub alias: bool,
}

/// A query for the lexical channel, already tokenised by the retriever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexicalTerm {
    pub text: String,
    pub identifier: bool,
    /// Other indexed words that count as this term (its inflections, when the retriever
    /// stems): a record holding any of them matches the term, which is reported as `text`.
    pub forms: Vec<String>,
}

impl LexicalTerm {
    /// A term matched as written, with no other forms.
    pub fn new(text: impl Into<String>, identifier: bool) -> Self {
        Self { text: text.into(), identifier, forms: Vec::new() }
    }

    /// The text and then each other form.
    pub fn all_forms(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.forms.iter().map(String::as_str))
    }
}

/// One lexical candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    pub record_key: RecordKey,
    pub record_id: RecordId,
    /// 1-based rank among eligible hits.
    pub rank: u32,
    /// The BM25 score (higher is better).
    pub score: f64,
    pub matched: Vec<MatchedTerm>,
}

/// A word's stem for lexical matching: words with one stem are inflections of one another.
pub trait WordStemmer: Send + Sync {
    fn stem(&self, word: &str) -> String;
}

/// BM25 search over records_fts, restricted to eligible ids before the top-k cut.
#[async_trait]
pub trait LexicalIndex: Send + Sync {
    /// The best `k` eligible records for `terms` (OR-joined, each quoted; a term's forms
    /// count as the term).
    async fn search(
        &self,
        terms: &[LexicalTerm],
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<LexicalHit>>;

    /// Indexed words (single tokens, as the index made them) that start with `prefix`, in
    /// byte order, at most `limit`; whatever record holds them, eligible or not (a word
    /// is never shown, only matched).
    async fn words_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>>;
}
