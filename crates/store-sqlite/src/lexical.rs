//! BM25 over `records_fts`, restricted to eligible records before the top-k cut.
//!
//! The matches are ranked by BM25 in one packed row and checked against the eligible keys in
//! memory (the FTS rowid is the record's key) until `k` eligible hits are found, or, when few
//! records are eligible, checked by SQLite against the keys passed as one JSON array before
//! they are scored; so no per-query table of eligible keys is written; which query terms each hit matched is computed from its indexed
//! columns with the same unicode61 rules FTS5 applies (letters and digits form tokens,
//! lowercased, Latin diacritics removed; a term matches where its tokens appear in order).
//! `tests/it/lexical.rs` checks both against the SQL this replaced. A term's other forms
//! (its inflections, when the retriever stems) are OR-ed in as phrases of their own and
//! count as the term; the words to pick them from are `records_vocab`'s.

use std::collections::HashMap;

use async_trait::async_trait;
use retold_domain::{
    LexicalHit, LexicalIndex, LexicalTerm, MatchedTerm, RecordId, RecordKey, Result as DomainResult,
};
use sea_orm::{ConnectionTrait, Value};
use unicode_normalization::UnicodeNormalization;

use crate::error::{StoreError, corrupt};
use crate::store::{SqliteStore, stmt};

/// Column weights: record_id (unindexed) 0, content 1, subject 2, aliases 3.
const BM25: &str = "bm25(records_fts, 0.0, 1.0, 2.0, 3.0)";

/// Quote one term as an FTS5 string: the whole term becomes a phrase of its tokens, and
/// nothing in it is read as query syntax (`"` is doubled, per the FTS5 grammar).
fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Tokens as FTS5's unicode61 tokenizer (remove_diacritics 1) makes them: the domain's one
/// word splitter, folded as FTS5 folds.
fn fts_tokens(text: &str) -> Vec<String> {
    retold_domain::text::words(text)
        .map(|t| {
            t.nfd().filter(|c| !('\u{300}'..='\u{36f}').contains(c)).flat_map(char::to_lowercase).collect()
        })
        .collect()
}

/// Whether `needle`'s tokens appear consecutively in `haystack` (an FTS5 phrase match).
fn has_phrase(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// A term and the tokens of each of its forms (its text first).
type Analysed<'a> = (&'a LexicalTerm, Vec<Vec<String>>);

/// The matched terms of one hit, from its three indexed columns: a term matches where any of
/// its forms does.
fn matched_terms(terms: &[Analysed<'_>], columns: [&str; 3]) -> Vec<MatchedTerm> {
    let [content, subject, aliases] = columns.map(fts_tokens);
    terms
        .iter()
        .filter_map(|(term, forms)| {
            let alias = forms.iter().any(|f| has_phrase(&aliases, f));
            (alias || forms.iter().any(|f| has_phrase(&content, f) || has_phrase(&subject, f)))
                .then(|| MatchedTerm { term: term.text.clone(), identifier: term.identifier, alias })
        })
        .collect()
}

impl SqliteStore {
    async fn lexical(
        &self,
        terms: &[LexicalTerm],
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<LexicalHit>, StoreError> {
        let terms: Vec<Analysed<'_>> = terms
            .iter()
            .filter(|t| !t.text.trim().is_empty())
            .map(|t| (t, t.all_forms().map(fts_tokens).collect()))
            .collect();
        if terms.is_empty() || eligible.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        debug_assert!(eligible.is_sorted(), "eligible keys come ordered by key");
        let query = terms.iter().flat_map(|(t, _)| t.all_forms().map(quote)).collect::<Vec<_>>().join(" OR ");
        // Rank enough of the matches to find k eligible hits: the expected share of eligible
        // rows is about eligible / highest key; when the window falls short, rank them all.
        let highest = eligible.last().map_or(1, |k| k.0.max(1)) as f64;
        let share = (eligible.len() as f64 / highest).clamp(0.001, 1.0);
        // Below a third eligible, a window is unlikely to hold k eligible hits: SQLite checks
        // each match against the eligible keys first, so only eligible matches are scored and
        // packed.
        let found = if share >= 1.0 / 3.0 {
            let window = ((k as f64 / share) * 1.5).ceil() as usize + 16;
            let found = self.ranked(&query, eligible, k, Some(window)).await?;
            if found.hits.len() < k && found.window_full {
                // The window held too few eligible hits: rank every match once.
                self.ranked(&query, eligible, k, None).await?.hits
            } else {
                found.hits
            }
        } else {
            self.ranked_among(&query, eligible, k).await?
        };
        if found.is_empty() {
            return Ok(Vec::new());
        }
        // The indexed columns of the hits, by rowid, for their matched terms.
        let keys_json = json_array(found.iter().map(|(k, _)| *k));
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT rowid AS key, record_id, content, subject, aliases FROM records_fts \
                 WHERE rowid IN (SELECT value FROM json_each(?))",
                [Value::from(keys_json)],
            ))
            .await?;
        let mut columns = HashMap::with_capacity(rows.len());
        // (record_id, content, subject, aliases) by key.
        for row in &rows {
            let key: i64 = row.try_get("", "key")?;
            let text = |c: &str| row.try_get::<String>("", c);
            columns.insert(key, (text("record_id")?, text("content")?, text("subject")?, text("aliases")?));
        }
        found
            .into_iter()
            .enumerate()
            .map(|(index, (key, score))| {
                let (id, content, subject, aliases) =
                    i64::try_from(key.0).ok().and_then(|k| columns.remove(&k)).ok_or_else(|| {
                        corrupt("records_fts", format!("row {} vanished during the search", key.0))
                    })?;
                let matched = matched_terms(&terms, [&content, &subject, &aliases]);
                Ok(LexicalHit {
                    record_key: key,
                    record_id: RecordId::new(id).map_err(|e| corrupt("records_fts", e))?,
                    rank: u32::try_from(index + 1).unwrap_or(u32::MAX),
                    // SQLite's bm25() is lower-is-better; report higher-is-better.
                    score: -score,
                    matched,
                })
            })
            .collect()
    }
}

/// The eligible hits of one ranking, best first, and whether the window was full (so more
/// matches may exist beyond it).
struct Ranked {
    hits: Vec<(RecordKey, f64)>,
    window_full: bool,
}

impl SqliteStore {
    /// Rank the matches of `query` by BM25 (then key), at most `window` of them (`None`: all),
    /// and keep the first `k` eligible. The ranking comes back packed in one row: through
    /// the driver each row costs microseconds, and a ranking that must look past thousands of
    /// ineligible matches would otherwise cost tens of milliseconds. Scores are printed with
    /// 17 significant digits, which round-trips an f64 exactly.
    async fn ranked(
        &self,
        query: &str,
        eligible: &[RecordKey],
        k: usize,
        window: Option<usize>,
    ) -> Result<Ranked, StoreError> {
        let limit = window.map_or(-1, |w| i64::try_from(w).unwrap_or(i64::MAX));
        let row = self
            .reader
            .query_one_raw(stmt(
                &format!(
                    "SELECT count(*) AS n, coalesce(group_concat(key || ' ' || printf('%!.17g', score), ','), '') AS hits \
                     FROM (SELECT rowid AS key, {BM25} AS score FROM records_fts \
                           WHERE records_fts MATCH ? ORDER BY score, rowid LIMIT ?)"
                ),
                [query.into(), limit.into()],
            ))
            .await?;
        let Some(row) = row else { return Ok(Ranked { hits: Vec::new(), window_full: false }) };
        let n: i64 = row.try_get("", "n")?;
        let packed: String = row.try_get("", "hits")?;
        let mut all = unpack(&packed)?;
        // The order SQLite ranked by, whatever order group_concat saw the rows in.
        all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let hits: Vec<(RecordKey, f64)> =
            all.into_iter().filter(|(key, _)| eligible.binary_search(key).is_ok()).take(k).collect();
        Ok(Ranked { hits, window_full: window.is_some_and(|w| i64::try_from(w).is_ok_and(|w| n >= w)) })
    }
}

impl SqliteStore {
    /// The first `k` eligible matches of `query` by BM25 (then key), with SQLite checking
    /// each match against `eligible` before scoring it (for a small eligible share, where
    /// scoring and packing every match costs more than the membership check). The `+` keeps
    /// the key list away from FTS5's planner, which would otherwise run one MATCH lookup per
    /// eligible key (50 times slower at 5,000 keys).
    async fn ranked_among(
        &self,
        query: &str,
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<(RecordKey, f64)>, StoreError> {
        let keys_json = json_array(eligible.iter().copied());
        let row = self
            .reader
            .query_one_raw(stmt(
                &format!(
                    "SELECT coalesce(group_concat(key || ' ' || printf('%!.17g', score), ','), '') AS hits \
                     FROM (SELECT rowid AS key, {BM25} AS score FROM records_fts \
                           WHERE records_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?)) \
                           ORDER BY score, rowid LIMIT ?)"
                ),
                [query.into(), keys_json.into(), i64::try_from(k).unwrap_or(i64::MAX).into()],
            ))
            .await?;
        let Some(row) = row else { return Ok(Vec::new()) };
        let mut hits = unpack(&row.try_get::<String>("", "hits")?)?;
        hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        Ok(hits)
    }
}

/// Keys as a JSON array for `json_each`, written into one string (a search at 10% of 50k
/// records passes 5,000 keys; a string per key was most of its allocations).
fn json_array(keys: impl Iterator<Item = RecordKey>) -> String {
    use std::fmt::Write;
    let mut json = String::from("[");
    for (i, key) in keys.enumerate() {
        if i > 0 {
            json.push(',');
        }
        write!(json, "{}", key.0).expect("writing to a String does not fail");
    }
    json.push(']');
    json
}

/// `key score,key score,…` as `ranked` and `ranked_among` pack them.
fn unpack(packed: &str) -> Result<Vec<(RecordKey, f64)>, StoreError> {
    packed
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (key, score) = item.split_once(' ').ok_or_else(|| corrupt("records_fts", "a packed hit"))?;
            let key: u64 = key.parse().map_err(|e| corrupt("records_fts", e))?;
            let score: f64 = score.parse().map_err(|e| corrupt("records_fts", e))?;
            Ok((RecordKey(key), score))
        })
        .collect()
}

#[async_trait]
impl LexicalIndex for SqliteStore {
    async fn search(
        &self,
        terms: &[LexicalTerm],
        eligible: &[RecordKey],
        k: usize,
    ) -> DomainResult<Vec<LexicalHit>> {
        Ok(self.lexical(terms, eligible, k).await?)
    }

    async fn words_with_prefix(&self, prefix: &str, limit: usize) -> DomainResult<Vec<String>> {
        if prefix.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // A range on `term` is what fts5vocab answers from the index without reading every
        // word; U+10FFFF sorts (as UTF-8 bytes) after every word that starts with `prefix`.
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT term FROM records_vocab WHERE term >= ? AND term < ? AND doc > 0 ORDER BY term LIMIT ?",
                [
                    Value::from(prefix),
                    Value::from(format!("{prefix}\u{10FFFF}")),
                    Value::from(i64::try_from(limit).unwrap_or(i64::MAX)),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| r.try_get::<String>("", "term"))
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)?)
    }
}
