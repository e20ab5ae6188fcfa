//! Re-embedding (`embeddings_staged`): vectors of the next model beside the served ones, and
//! the one transaction that swaps them in.

use std::collections::{BTreeSet, HashSet};

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, EmbeddingModelInfo, EmbeddingRow, ReembedCounts, ReembedItem, Reembedding,
    Result as DomainResult, SentenceRow, SentenceVectors,
};
use sea_orm::{ConnectionTrait, TransactionTrait, Value};

use crate::convert;
use crate::error::{StoreError, corrupt};
use crate::snapshots::scalar;
use crate::store::{LIVE, PostgresStore, insert_event, record_change, stmt};

fn target_values(target: &EmbeddingModelInfo) -> Vec<Value> {
    vec![target.name.as_str().into(), i64::from(target.version).into(), i64::from(target.dims).into()]
}

const OF_TARGET: &str = "s.model = ? AND s.version = ? AND s.dims = ?";

#[async_trait]
impl Reembedding for PostgresStore {
    async fn stored_models(&self) -> DomainResult<Vec<(EmbeddingModelInfo, u64)>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT e.model, e.version, e.dims, count(*) AS n FROM embeddings e \
                     JOIN records r ON r.key = e.record_key WHERE {LIVE} \
                     GROUP BY e.model, e.version, e.dims ORDER BY n DESC"
                ),
                [],
            ))
            .await
            .map_err(StoreError::from)?;
        let mut out = Vec::new();
        for row in rows {
            let number = |column: &str| -> Result<u32, StoreError> {
                let n: i64 = row.try_get("", column)?;
                u32::try_from(n).map_err(|e| corrupt("embeddings", e))
            };
            let info = EmbeddingModelInfo {
                name: row.try_get("", "model").map_err(StoreError::from)?,
                version: number("version")?,
                dims: number("dims")?,
            };
            let n: i64 = row.try_get("", "n").map_err(StoreError::from)?;
            out.push((info, u64::try_from(n).unwrap_or(0)));
        }
        Ok(out)
    }

    async fn discard_other_staged(&self, target: &EmbeddingModelInfo) -> DomainResult<u64> {
        // Staged vectors are not served: no change number needed. The record's row is share-
        // locked (`FOR SHARE OF r`): an erasure committing meanwhile is waited for and its
        // record then read as not live, so no vector of erased content is staged after the
        // erasure removed the staged ones.
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        let removed = txn
            .execute_raw(stmt(
                "DELETE FROM embeddings_staged WHERE NOT (model = ? AND version = ? AND dims = ?)",
                target_values(target),
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        txn.commit().await.map_err(StoreError::from)?;
        Ok(removed)
    }

    async fn unstaged(&self, target: &EmbeddingModelInfo, limit: usize) -> DomainResult<Vec<ReembedItem>> {
        let mut values = target_values(target);
        values.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT r.key, r.id, r.content, r.context, r.speaker, r.origin FROM records r WHERE {LIVE} AND NOT EXISTS \
                     (SELECT 1 FROM embeddings_staged s WHERE s.record_key = r.key AND {OF_TARGET}) \
                     ORDER BY r.key LIMIT ?"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter().map(|row| convert::reembed_item(row).map_err(Into::into)).collect()
    }

    async fn stage(&self, rows: &[EmbeddingRow]) -> DomainResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        // Staged vectors are not served: no change number needed. The record's row is share-
        // locked (`FOR SHARE OF r`): an erasure committing meanwhile is waited for and its
        // record then read as not live, so no vector of erased content is staged after the
        // erasure removed the staged ones.
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        let mut written = 0;
        for row in rows {
            convert::check_embedding_row("embeddings_staged", row)?;
            // A record's key and id belong together, so a conflict on the key is the only one.
            written += txn
                .execute_raw(stmt(
                    &format!(
                        "INSERT INTO embeddings_staged (record_key, record_id, model, version, dims, vector, sentences) \
                         SELECT r.key, r.id, ?, ?, ?, ?, ? FROM records r WHERE r.id = ? AND {LIVE} FOR SHARE OF r \
                         ON CONFLICT (record_key) DO UPDATE SET model = excluded.model, \
                           version = excluded.version, dims = excluded.dims, vector = excluded.vector, \
                           sentences = excluded.sentences"
                    ),
                    [
                        row.model.as_str().into(),
                        i64::from(row.version).into(),
                        i64::from(row.dims).into(),
                        convert::vector_to_blob(&row.vector).into(),
                        convert::vector_to_blob(&row.sentences).into(),
                        row.record_id.as_str().into(),
                    ],
                ))
                .await
                .map_err(StoreError::from)?
                .rows_affected();
        }
        txn.commit().await.map_err(StoreError::from)?;
        Ok(written)
    }

    async fn reembed_counts(&self, target: &EmbeddingModelInfo) -> DomainResult<ReembedCounts> {
        let live = scalar(&self.db, &format!("SELECT count(*) FROM records r WHERE {LIVE}"), vec![]).await?;
        let staged = scalar(
            &self.db,
            &format!(
                "SELECT count(*) FROM embeddings_staged s JOIN records r ON r.key = s.record_key \
                 WHERE {LIVE} AND {OF_TARGET}"
            ),
            target_values(target),
        )
        .await?;
        Ok(ReembedCounts { live, staged })
    }

    async fn switch_embeddings(&self, target: &EmbeddingModelInfo, event: AuditEvent) -> DomainResult<u64> {
        // Every served vector changes: the transaction holds the next change number, which
        // also keeps any other record change (a new live record) out until it commits, so the
        // completeness check below still holds at the switch.
        let (txn, seq) = self.begin_change().await?;
        // Replicas serving the old model would drop every vector they hold: refuse while any
        // serves (each holds the serving lock shared).
        let free = txn
            .query_one_raw(stmt(
                "SELECT pg_try_advisory_xact_lock(?) AS free",
                [crate::store::SERVING_LOCK.into()],
            ))
            .await
            .map_err(StoreError::from)?
            .map(|row| row.try_get::<bool>("", "free"))
            .transpose()
            .map_err(StoreError::from)?
            .unwrap_or(false);
        if !free {
            return Err(retold_domain::DomainError::Conflict(
                "a Retold replica is serving this database: stop every replica before switching the model"
                    .into(),
            ));
        }
        // Every stored vector is replaced: no statement timeout for it.
        txn.execute_unprepared("SET LOCAL statement_timeout = 0").await.map_err(StoreError::from)?;
        let missing = txn
            .query_one_raw(stmt(
                &format!(
                    "SELECT count(*) FROM records r WHERE {LIVE} AND NOT EXISTS \
                     (SELECT 1 FROM embeddings_staged s WHERE s.record_key = r.key AND {OF_TARGET})"
                ),
                target_values(target),
            ))
            .await
            .map_err(StoreError::from)?
            .map(|row| row.try_get_by_index::<i64>(0))
            .transpose()
            .map_err(StoreError::from)?
            .unwrap_or(0);
        if missing > 0 {
            // Dropping the transaction rolls it back: nothing changed.
            return Err(retold_domain::DomainError::Conflict(format!(
                "{missing} live records have no staged vector of {} v{} ({} dims): re-embed first",
                target.name, target.version, target.dims
            )));
        }
        let mut changed: BTreeSet<String> = BTreeSet::new();
        let removed = txn
            .query_all_raw(stmt("DELETE FROM embeddings RETURNING record_id", []))
            .await
            .map_err(StoreError::from)?;
        for row in &removed {
            changed.insert(row.try_get("", "record_id").map_err(StoreError::from)?);
        }
        let inserted = txn
            .query_all_raw(stmt(
                &format!(
                    "INSERT INTO embeddings (record_key, record_id, model, version, dims, vector, sentences) \
                     SELECT s.record_key, s.record_id, s.model, s.version, s.dims, s.vector, s.sentences \
                     FROM embeddings_staged s JOIN records r ON r.key = s.record_key WHERE {LIVE} AND {OF_TARGET} \
                     RETURNING record_id"
                ),
                target_values(target),
            ))
            .await
            .map_err(StoreError::from)?;
        for row in &inserted {
            changed.insert(row.try_get("", "record_id").map_err(StoreError::from)?);
        }
        let switched = inserted.len() as u64;
        txn.execute_raw(stmt("DELETE FROM embeddings_staged", [])).await.map_err(StoreError::from)?;
        let mut event = event;
        event.details.insert("switched".into(), switched.to_string());
        insert_event(&txn, &event).await?;
        record_change(&txn, seq, [], changed.iter().map(String::as_str)).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(switched)
    }
}

#[async_trait]
impl SentenceVectors for PostgresStore {
    async fn attach_sentences(
        &self,
        model: &EmbeddingModelInfo,
        rows: &[SentenceRow],
    ) -> DomainResult<Vec<bool>> {
        retold_store_sql::check_sentence_rows(model, rows)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        // One statement for the batch, so the write turn is held for one round trip of it.
        let mut values = Vec::with_capacity(2 * rows.len() + 3);
        for row in rows {
            values.push(row.id.as_str().into());
            values.push(convert::vector_to_blob(&row.sentences).into());
        }
        values.extend(target_values(model));
        let tuples = vec!["(?::text, ?::bytea)"; rows.len()].join(", ");
        // A change replicas follow: they read the records' vectors again.
        let (txn, seq) = self.begin_change().await?;
        let updated = txn
            .query_all_raw(stmt(
                &format!(
                    "UPDATE embeddings e SET sentences = v.blob, sentences_pending = 0 \
                     FROM (VALUES {tuples}) AS v(id, blob) \
                     WHERE e.record_id = v.id AND e.model = ? AND e.version = ? AND e.dims = ? \
                       AND e.sentences_pending = 1 \
                     RETURNING e.record_key AS key, e.record_id"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        let mut keys = Vec::with_capacity(updated.len());
        let mut attached = HashSet::with_capacity(updated.len());
        for row in &updated {
            keys.push(convert::record_key(row)?);
            attached.insert(row.try_get::<String>("", "record_id").map_err(StoreError::from)?);
        }
        if keys.is_empty() {
            // Nothing waited: the change number is given back, so change numbers have no gaps.
            txn.rollback().await.map_err(StoreError::from)?;
        } else {
            record_change(&txn, seq, keys, []).await?;
            txn.commit().await.map_err(StoreError::from)?;
        }
        Ok(rows.iter().map(|row| attached.contains(row.id.as_str())).collect())
    }

    async fn pending_sentences(
        &self,
        model: &EmbeddingModelInfo,
        limit: usize,
    ) -> DomainResult<Vec<ReembedItem>> {
        let mut values = target_values(model);
        values.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT r.key, r.id, r.content, r.context, r.speaker, r.origin FROM records r \
                     JOIN embeddings s ON s.record_key = r.key \
                     WHERE {LIVE} AND {OF_TARGET} AND s.sentences_pending = 1 ORDER BY r.key LIMIT ?"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter().map(|row| convert::reembed_item(row).map_err(Into::into)).collect()
    }
}
