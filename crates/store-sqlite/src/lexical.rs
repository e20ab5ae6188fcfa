//! BM25 over `records_fts`, restricted to eligible records before the top-k cut.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use retold_domain::{
    LexicalHit, LexicalIndex, LexicalTerm, MatchedTerm, RecordId, RecordKey, Result as DomainResult,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction, TransactionTrait, Value};

use crate::error::{StoreError, corrupt};
use crate::store::{SqliteStore, stmt};

/// Column weights: record_id (unindexed) 0, content 1, subject 2, aliases 3.
const BM25: &str = "bm25(records_fts, 0.0, 1.0, 2.0, 3.0)";

/// Quote one term as an FTS5 string: the whole term becomes a phrase of its tokens, and
/// nothing in it is read as query syntax (`"` is doubled, per the FTS5 grammar).
fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Fill the per-connection temporary table of eligible keys.
async fn load_eligible(txn: &DatabaseTransaction, eligible: &[RecordKey]) -> Result<(), StoreError> {
    txn.execute_unprepared(
        "CREATE TEMP TABLE IF NOT EXISTS eligible_keys (key INTEGER PRIMARY KEY); DELETE FROM temp.eligible_keys;",
    )
    .await?;
    for chunk in eligible.chunks(10_000) {
        let json = format!("[{}]", chunk.iter().map(|k| k.0.to_string()).collect::<Vec<_>>().join(","));
        txn.execute_raw(stmt(
            "INSERT OR IGNORE INTO temp.eligible_keys (key) SELECT value FROM json_each(?)",
            [json.into()],
        ))
        .await?;
    }
    Ok(())
}

impl SqliteStore {
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
        let query = terms.iter().map(|t| quote(&t.text)).collect::<Vec<_>>().join(" OR ");
        // A read transaction pins one connection for the temp table and a consistent snapshot.
        let txn = self.reader.begin().await?;
        load_eligible(&txn, eligible).await?;
        let rows = txn
            .query_all_raw(stmt(
                &format!(
                    "SELECT f.record_id AS record_id, {BM25} AS score FROM records_fts f \
                     JOIN temp.eligible_keys e ON e.key = f.rowid \
                     WHERE records_fts MATCH ? ORDER BY score, f.rowid LIMIT ?"
                ),
                [query.into(), i64::try_from(k).unwrap_or(i64::MAX).into()],
            ))
            .await?;
        let mut hits = Vec::with_capacity(rows.len());
        for (index, row) in rows.iter().enumerate() {
            let id: String = row.try_get("", "record_id")?;
            let score: f64 = row.try_get("", "score")?;
            hits.push(LexicalHit {
                record_id: RecordId::new(id).map_err(|e| corrupt("records_fts", e))?,
                rank: u32::try_from(index + 1).unwrap_or(u32::MAX),
                // SQLite's bm25() is lower-is-better; report higher-is-better.
                score: -score,
                matched: Vec::new(),
            });
        }
        if hits.is_empty() {
            txn.rollback().await?;
            return Ok(hits);
        }
        // Which query terms each hit matched, and whether through its aliases column.
        let hit_json = format!(
            "[{}]",
            hits.iter().map(|h| format!("\"{}\"", h.record_id.as_str())).collect::<Vec<_>>().join(",")
        );
        let mut matched: HashMap<String, Vec<MatchedTerm>> = HashMap::new();
        for term in &terms {
            let quoted = quote(&term.text);
            let any = matching_ids(&txn, &quoted, &hit_json).await?;
            if any.is_empty() {
                continue;
            }
            let via_alias = matching_ids(&txn, &format!("aliases : {quoted}"), &hit_json).await?;
            for id in any {
                let alias = via_alias.contains(&id);
                matched.entry(id).or_default().push(MatchedTerm {
                    term: term.text.clone(),
                    identifier: term.identifier,
                    alias,
                });
            }
        }
        txn.rollback().await?;
        for hit in &mut hits {
            hit.matched = matched.remove(hit.record_id.as_str()).unwrap_or_default();
        }
        Ok(hits)
    }
}

async fn matching_ids(
    txn: &DatabaseTransaction,
    query: &str,
    ids_json: &str,
) -> Result<HashSet<String>, StoreError> {
    let rows = txn
        .query_all_raw(stmt(
            "SELECT record_id FROM records_fts WHERE records_fts MATCH ? AND record_id IN (SELECT value FROM json_each(?))",
            [Value::from(query), Value::from(ids_json)],
        ))
        .await?;
    rows.iter().map(|r| r.try_get::<String>("", "record_id").map_err(StoreError::from)).collect()
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
}
