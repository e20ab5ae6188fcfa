//! Re-embedding (`embeddings_staged`): vectors of the next model beside the served ones, and
//! the one transaction that swaps them in.

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, EmbeddingModelInfo, EmbeddingRow, ReembedCounts, ReembedItem, Reembedding,
    Result as DomainResult, SentenceRow, SentenceVectors,
};
use sea_orm::{ConnectionTrait, Value};

use crate::convert;
use crate::error::{StoreError, corrupt};
use crate::snapshots::scalar;
use crate::store::{SqliteStore, insert_event, stmt};

const LIVE: &str = "r.status != 'deleted' AND r.erased_at IS NULL";

fn target_values(target: &EmbeddingModelInfo) -> Vec<Value> {
    vec![target.name.as_str().into(), i64::from(target.version).into(), i64::from(target.dims).into()]
}

const OF_TARGET: &str = "s.model = ? AND s.version = ? AND s.dims = ?";

#[async_trait]
impl Reembedding for SqliteStore {
    async fn stored_models(&self) -> DomainResult<Vec<(EmbeddingModelInfo, u64)>> {
        let rows = self
            .reader
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
        let txn = self.begin_write().await?;
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
            .reader
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
        let txn = self.begin_write().await?;
        let mut written = 0;
        for row in rows {
            convert::check_embedding_row("embeddings_staged", row)?;
            written += txn
                .execute_raw(stmt(
                    &format!(
                        "INSERT OR REPLACE INTO embeddings_staged (record_key, record_id, model, version, dims, vector, sentences) \
                         SELECT r.key, r.id, ?, ?, ?, ?, ? FROM records r WHERE r.id = ? AND {LIVE}"
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
        let live =
            scalar(&self.reader, &format!("SELECT count(*) FROM records r WHERE {LIVE}"), vec![]).await?;
        let staged = scalar(
            &self.reader,
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
        let txn = self.begin_write().await?;
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
        txn.execute_raw(stmt("DELETE FROM embeddings", [])).await.map_err(StoreError::from)?;
        let switched = txn
            .execute_raw(stmt(
                &format!(
                    "INSERT INTO embeddings (record_key, record_id, model, version, dims, vector, sentences) \
                     SELECT s.record_key, s.record_id, s.model, s.version, s.dims, s.vector, s.sentences \
                     FROM embeddings_staged s JOIN records r ON r.key = s.record_key WHERE {LIVE} AND {OF_TARGET}"
                ),
                target_values(target),
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        txn.execute_raw(stmt("DELETE FROM embeddings_staged", [])).await.map_err(StoreError::from)?;
        let mut event = event;
        event.details.insert("switched".into(), switched.to_string());
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(switched)
    }
}

#[async_trait]
impl SentenceVectors for SqliteStore {
    async fn attach_sentences(
        &self,
        model: &EmbeddingModelInfo,
        rows: &[SentenceRow],
    ) -> DomainResult<Vec<bool>> {
        retold_store_sql::check_sentence_rows(model, rows)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let txn = self.begin_write().await?;
        let mut attached = Vec::with_capacity(rows.len());
        for row in rows {
            let mut values = vec![convert::vector_to_blob(&row.sentences).into(), row.id.as_str().into()];
            values.extend(target_values(model));
            let changed = txn
                .execute_raw(stmt(
                    "UPDATE embeddings SET sentences = ?, sentences_pending = 0 \
                     WHERE record_id = ? AND model = ? AND version = ? AND dims = ? AND sentences_pending = 1",
                    values,
                ))
                .await
                .map_err(StoreError::from)?
                .rows_affected();
            attached.push(changed > 0);
        }
        txn.commit().await.map_err(StoreError::from)?;
        Ok(attached)
    }

    async fn pending_sentences(
        &self,
        model: &EmbeddingModelInfo,
        limit: usize,
    ) -> DomainResult<Vec<ReembedItem>> {
        let mut values = target_values(model);
        values.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        let rows = self
            .reader
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
