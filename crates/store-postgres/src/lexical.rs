//! The lexical channel on PostgreSQL: a weighted `tsvector` per record (aliases A, subject B,
//! content C, as the seed weighs them) under a GIN index, restricted to the eligible records
//! before the top-k cut, and ranked BM25-like: each term's `ts_rank` in the record (weights
//! 3 : 2 : 1, the SQLite store's BM25 column weights, with length normalisation) times the
//! term's inverse document frequency, summed. `ts_rank` alone has no IDF, and without it a
//! question's common words (a speaker's name in every other turn) outrank its rare ones:
//! LoCoMo dev recall_frac@10 of the lexical channel was 0.284 with plain `ts_rank` and 0.576
//! with FTS5's BM25 (docs/quality.md has the figures with IDF).
//!
//! Each query term becomes `phraseto_tsquery('retold', term)` (OR-ed with one per other form
//! of it, which then share the term's IDF as stems would), the terms OR-joined: the text
//! is only ever a bound parameter parsed by PostgreSQL's text parser, never query syntax, and
//! an identifier stays one token where the parser keeps it whole (paths, versions, hosts,
//! e-mail addresses), on the document's side too. Which terms each hit matched is asked of
//! the same tsvector (and of its aliases alone), for the top hits only.
//!
//! Each match is filtered by its bit in a bitmap of the eligible keys, bound with the
//! statement, before the ranking; the best are asked which terms they hold in the same
//! statement, so a search pass is two round trips (the IDFs, then the ranked hits), three
//! when a term is a phrase or an identifier the parser splits (its matching rows counted).
//!
//! When every form of every term is one word (one lexeme), the ranks are not computed but
//! read: `lexical_postings` keeps each word's `ts_rank` in each record (a trigger on
//! `records_fts`), so a search sums `IDF × weight` over an index-only scan of its words'
//! rows, the same scores without reading a `tsvector` (`EXPLAIN ANALYZE` at 50k records, a
//! tenth eligible, the statement alone: 14 → 6 ms; docs/performance.md has the bench). A term
//! with other forms (the stemming pass's) is an OR of lexemes, whose `ts_rank` is the mean of
//! theirs, so each of its words weighs the term's IDF over their number. A phrase or an
//! identifier the parser splits is ranked by `ts_rank` as before.

use async_trait::async_trait;
use retold_domain::{LexicalHit, LexicalIndex, LexicalTerm, MatchedTerm, RecordKey, Result as DomainResult};
use sea_orm::{ConnectionTrait, Value};

use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, record_id_of, stmt};

/// `ts_rank` weights in `{D, C, B, A}` order: content (C) 1, subject (B) 2, aliases (A) 3.
/// The kept postings were ranked with the same weights (`lexeme_rank`, migration
/// `m20261207_000006_term_postings`): a change here needs a migration ranking them again.
const WEIGHTS: &str = "'{0.0, 0.333333, 0.666667, 1.0}'::float4[]";

/// BM25's inverse document frequency of a term found in `df` of `n` records.
fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

impl PostgresStore {
    /// Each term's IDF, and each term's lexemes when every form of every term is one lexeme
    /// (the kept postings can then rank them). A term whose every form is one lexeme reads its
    /// document frequency from what the writes keep: one lexeme from the term statistics
    /// (`lexical_terms`), several from the postings (the records holding any of them, each
    /// once); the corpus size is kept too. Any other term (a phrase, an identifier the parser
    /// splits) is counted over the rows matching it.
    async fn idfs(&self, terms: &[&LexicalTerm]) -> Result<(Vec<f64>, Option<Vec<Vec<String>>>), StoreError> {
        // Each form's one lexeme (NULL for a phrase or a split identifier), parsed once.
        let mut lexemes = Vec::new();
        let mut kept = Vec::with_capacity(terms.len());
        for (i, term) in terms.iter().enumerate() {
            let forms = term.all_forms().count();
            for j in 0..forms {
                lexemes.push(format!(
                    "CASE WHEN numnode(phraseto_tsquery('retold', ?)) = 1 THEN \
                     (tsvector_to_array(to_tsvector('retold', ?)))[1] END AS l{i}_{j}"
                ));
            }
            let all: Vec<String> = (0..forms).map(|j| format!("l{i}_{j}")).collect();
            let df = if forms == 1 {
                format!("coalesce((SELECT df FROM lexical_terms WHERE term = l{i}_0), 0)")
            } else {
                format!(
                    "(SELECT count(DISTINCT key) FROM lexical_postings WHERE term IN ({}))",
                    all.join(", ")
                )
            };
            let known: Vec<String> = all.iter().map(|l| format!("{l} IS NOT NULL")).collect();
            kept.push(format!(
                "{}, CASE WHEN {} THEN {df} END::float8 AS d{i}",
                all.join(", "),
                known.join(" AND ")
            ));
        }
        let values: Vec<Value> = terms
            .iter()
            .flat_map(|t| t.all_forms())
            .flat_map(|form| [Value::from(form), Value::from(form)])
            .collect();
        let row = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "SELECT (SELECT n FROM lexical_corpus)::float8 AS n, {} FROM (SELECT {}) AS t",
                    kept.join(", "),
                    lexemes.join(", ")
                ),
                values,
            ))
            .await?
            .ok_or_else(|| corrupt("lexical_corpus", "no corpus size"))?;
        let n: f64 = row.try_get("", "n")?;
        let mut dfs: Vec<Option<f64>> = (0..terms.len())
            .map(|i| row.try_get::<Option<f64>>("", &format!("d{i}")))
            .collect::<Result<_, _>>()?;
        // Each term's distinct lexemes, in the order of its forms (`ts_rank` of their OR is
        // the mean over the distinct ones).
        let mut per_term: Vec<Option<Vec<String>>> = Vec::with_capacity(terms.len());
        for (i, term) in terms.iter().enumerate() {
            let mut distinct: Vec<String> = Vec::new();
            let mut whole = true;
            for j in 0..term.all_forms().count() {
                match row.try_get::<Option<String>>("", &format!("l{i}_{j}"))? {
                    Some(lexeme) if !distinct.contains(&lexeme) => distinct.push(lexeme),
                    Some(_) => {}
                    None => whole = false,
                }
            }
            per_term.push(whole.then_some(distinct));
        }
        let counted: Vec<usize> = (0..terms.len()).filter(|&i| dfs[i].is_none()).collect();
        if !counted.is_empty() {
            let of: Vec<&LexicalTerm> = counted.iter().map(|&i| terms[i]).collect();
            for (i, df) in counted.into_iter().zip(self.counted_dfs(&of).await?) {
                dfs[i] = Some(df);
            }
        }
        let idfs = dfs.into_iter().map(|df| idf(n.max(1.0), df.unwrap_or(0.0))).collect();
        Ok((idfs, per_term.into_iter().collect()))
    }

    /// How many lexical rows match each term, in one pass over the rows matching any.
    async fn counted_dfs(&self, terms: &[&LexicalTerm]) -> Result<Vec<f64>, StoreError> {
        let counts: Vec<String> = (0..terms.len())
            .map(|i| format!("count(*) FILTER (WHERE f.doc @@ q.t{i})::float8 AS d{i}"))
            .collect();
        let row = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "{} SELECT {} FROM q, records_fts f WHERE f.doc @@ {}",
                    queries_sql(terms),
                    counts.join(", "),
                    query_sql(terms)
                ),
                queries_values(terms),
            ))
            .await?
            .ok_or_else(|| corrupt("records_fts", "no document frequencies"))?;
        (0..terms.len()).map(|i| Ok(row.try_get::<f64>("", &format!("d{i}"))?)).collect()
    }

    async fn lexical(
        &self,
        terms: &[LexicalTerm],
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<LexicalHit>, StoreError> {
        let terms: Vec<&LexicalTerm> = terms.iter().filter(|t| !t.text.trim().is_empty()).collect();
        if terms.is_empty() || eligible.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        debug_assert!(eligible.is_sorted(), "eligible keys come ordered by key");
        let (idfs, lexemes) = self.idfs(&terms).await?;
        let scored = match &lexemes {
            Some(lexemes) => Scored::Kept(lexemes),
            None => Scored::Ranked,
        };
        self.ranked(scored, &terms, &idfs, eligible, k).await
    }

    /// The best `k` eligible matches with their record ids and matched terms, in one
    /// statement: each match filtered by its bit in a bitmap of the eligible keys before it
    /// is ranked, then each of the best asked which terms it holds (of the whole document
    /// and of its aliases alone).
    async fn ranked(
        &self,
        scored: Scored<'_>,
        terms: &[&LexicalTerm],
        idfs: &[f64],
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<LexicalHit>, StoreError> {
        // In the order the statement binds them: the terms' forms (`q`), the scoring's
        // values, the eligible keys, the limit.
        let mut values = queries_values(terms);
        values.extend(scored.values(idfs));
        values.extend(eligible_bitmap(eligible));
        values.push(i64::try_from(k).unwrap_or(i64::MAX).into());
        let best = match scored {
            Scored::Ranked => format!(
                "SELECT f.key, {} AS score FROM q, records_fts f, {ELIGIBLE} \
                 WHERE f.doc @@ {} AND {} ORDER BY score DESC, f.key LIMIT ?",
                score_sql(terms),
                query_sql(terms),
                eligible_sql("f.key")
            ),
            Scored::Kept(lexemes) => format!(
                "SELECT p.key, sum(w.idf * p.weight)::float8 AS score FROM {} CROSS JOIN {ELIGIBLE} \
                 WHERE {} GROUP BY p.key ORDER BY score DESC, p.key LIMIT ?",
                kept_words_sql(lexemes),
                eligible_sql("p.key")
            ),
        };
        let mut columns = Vec::with_capacity(terms.len() * 2);
        for i in 0..terms.len() {
            columns.push(format!("(f.doc @@ q.t{i}) AS m{i}"));
            columns.push(format!("(to_tsvector('retold', f.aliases) @@ q.t{i}) AS a{i}"));
        }
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "{}, best AS ({best}) \
                     SELECT best.key, best.score, f.record_id, {} \
                     FROM best JOIN records_fts f ON f.key = best.key CROSS JOIN q \
                     ORDER BY best.score DESC, best.key",
                    queries_sql(terms),
                    columns.join(", ")
                ),
                values,
            ))
            .await?;
        rows.iter()
            .enumerate()
            .map(|(index, row)| {
                let mut matched = Vec::new();
                for (i, term) in terms.iter().enumerate() {
                    let alias: bool = row.try_get("", &format!("a{i}"))?;
                    let any: bool = row.try_get("", &format!("m{i}"))?;
                    if any || alias {
                        matched.push(MatchedTerm {
                            term: term.text.clone(),
                            identifier: term.identifier,
                            alias,
                        });
                    }
                }
                Ok(LexicalHit {
                    record_key: crate::convert::record_key(row)?,
                    record_id: record_id_of(row, "record_id", "records_fts")?,
                    rank: u32::try_from(index + 1).unwrap_or(u32::MAX),
                    score: row.try_get("", "score")?,
                    matched,
                })
            })
            .collect()
    }
}

/// How a statement scores a row: by `ts_rank` over its `tsvector` against each term's query,
/// or by the kept postings of each term's distinct lexemes.
#[derive(Clone, Copy)]
enum Scored<'a> {
    Ranked,
    Kept(&'a [Vec<String>]),
}

impl Scored<'_> {
    /// What the scoring part of a statement binds, in its order: the IDFs (ranked; the
    /// terms' queries are bound in `q`), or each lexeme beside its term's IDF shared among the
    /// term's distinct lexemes (kept): `ts_rank` of an OR of lexemes is the mean of the
    /// distinct ones' ranks, so a term of three distinct lexemes scores IDF × (r₁ + r₂ + r₃) / 3.
    fn values(self, idfs: &[f64]) -> Vec<Value> {
        match self {
            Scored::Ranked => idfs.iter().map(|idf| Value::from(*idf)).collect(),
            Scored::Kept(lexemes) => lexemes
                .iter()
                .zip(idfs)
                .flat_map(|(forms, idf)| {
                    let share = idf / forms.len().max(1) as f64;
                    forms.iter().flat_map(move |lexeme| [Value::from(lexeme.as_str()), Value::from(share)])
                })
                .collect(),
        }
    }
}

/// The eligible keys as a bitmap over their span: bit `(key - lowest) % 8` of byte
/// `(key - lowest) / 8`, as `get_bit` reads it, bound with the lowest key and the span's
/// length ([`eligible_sql`] tests all three). PostgreSQL filters each matching row by one
/// bit, with nothing to parse or hash: an array of 5,000 keys joined to the matches cost 5.0
/// ms of a 50,000-record statement, the bitmap 2.1 ms. Its size is the span over 8 bytes
/// (125 kB for keys a million apart), whatever the number of keys.
fn eligible_bitmap(eligible: &[RecordKey]) -> [Value; 3] {
    // The lowest and highest by a pass of their own: the keys come ordered, but a bitmap
    // must not depend on it (an unordered list would wrap the subtraction below).
    let (lowest, highest) = match (eligible.iter().min(), eligible.iter().max()) {
        (Some(first), Some(last)) => (first.0, last.0),
        _ => (0, 0),
    };
    let bits = if eligible.is_empty() { 0 } else { highest - lowest + 1 };
    let mut bitmap = vec![0u8; usize::try_from(bits.div_ceil(8)).unwrap_or(0)];
    for key in eligible {
        let bit = key.0 - lowest;
        bitmap[(bit / 8) as usize] |= 1 << (bit % 8);
    }
    let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    [as_i64(lowest).into(), as_i64(bits).into(), bitmap.into()]
}

/// The bound bitmap as a one-row relation `e(lowest, bits, bitmap)`.
const ELIGIBLE: &str = "(SELECT ?::bigint AS lowest, ?::bigint AS bits, ?::bytea AS bitmap) AS e";

/// Whether the row keyed `key` is eligible: its bit in the bound bitmap (a key outside the
/// bitmap's span is not; `CASE` keeps `get_bit` from being asked outside it).
fn eligible_sql(key: &str) -> String {
    format!(
        "CASE WHEN {key} - e.lowest >= 0 AND {key} - e.lowest < e.bits \
         THEN get_bit(e.bitmap, {key} - e.lowest) = 1 ELSE false END"
    )
}

/// The query's words as rows `w(term, idf)`, `idf` being its term's IDF over the term's
/// distinct lexemes, each bound (a word asked twice counts twice, as its two terms' ranks
/// did), beside each word's postings `p(key, weight)`. Each word's rows
/// are read by their own index range (`OFFSET 0` keeps the planner from joining the whole
/// table instead, which it did on statistics a bulk load had left behind: 17 ms at 10k).
fn kept_words_sql(lexemes: &[Vec<String>]) -> String {
    let rows = lexemes.iter().map(Vec::len).sum();
    format!(
        "(VALUES {}) AS w(term, idf) CROSS JOIN LATERAL \
         (SELECT key, weight FROM lexical_postings WHERE term = w.term OFFSET 0) AS p",
        vec!["(?::text, ?::float8)"; rows].join(", ")
    )
}

/// One term's query: the OR of a phrase query per form (its text first), each a bound
/// parameter.
fn term_sql(term: &LexicalTerm) -> String {
    let forms = 1 + term.forms.len();
    format!("({})", vec!["phraseto_tsquery('retold', ?)"; forms].join(" || "))
}

/// The one-row `q` every lexical statement starts with: term `i`'s query as `q.t{i}`. Parsed
/// once per statement: written inline, each `phraseto_tsquery` ran again for every row
/// scored or filtered (eight parses a row for a four-term query), most of the channel's time.
/// `MATERIALIZED` keeps the planner from inlining the expressions back into every row.
fn queries_sql(terms: &[&LexicalTerm]) -> String {
    let columns: Vec<String> =
        terms.iter().enumerate().map(|(i, t)| format!("{} AS t{i}", term_sql(t))).collect();
    format!("WITH q AS MATERIALIZED (SELECT {})", columns.join(", "))
}

/// The values `queries_sql` binds: each term's forms, its text first.
fn queries_values(terms: &[&LexicalTerm]) -> Vec<Value> {
    terms.iter().flat_map(|t| t.all_forms().map(Value::from)).collect()
}

/// The BM25-like score of a row: per term, its IDF (a bound number) times its `ts_rank`.
fn score_sql(terms: &[&LexicalTerm]) -> String {
    let parts: Vec<String> =
        (0..terms.len()).map(|i| format!("?::float8 * ts_rank({WEIGHTS}, f.doc, q.t{i}, 1)")).collect();
    format!("({})::float8", parts.join(" + "))
}

/// The OR of every term's query.
fn query_sql(terms: &[&LexicalTerm]) -> String {
    format!("({})", (0..terms.len()).map(|i| format!("q.t{i}")).collect::<Vec<_>>().join(" || "))
}

#[async_trait]
impl LexicalIndex for PostgresStore {
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
        // The kept vocabulary in byte order (its own index): a range, as SQLite's fts5vocab
        // answers it; U+10FFFF sorts after every word that starts with `prefix`.
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT term AS word FROM lexical_terms \
                 WHERE term COLLATE \"C\" >= ? AND term COLLATE \"C\" < ? ORDER BY term COLLATE \"C\" LIMIT ?",
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
            .map(|r| r.try_get::<String>("", "word"))
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)?)
    }
}
