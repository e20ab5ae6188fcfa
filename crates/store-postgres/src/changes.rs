//! The change feed replicas follow: `record_changes` rows (numbered without gaps, see the
//! migration) and a NOTIFY on `retold_changes` per change, so a replica learns of a write at
//! once and, having missed notifications (a dropped connection, a restart), catches up from
//! the table.

use std::collections::BTreeSet;
use std::time::Duration;

use async_trait::async_trait;
use retold_domain::{
    ChangeBatch, ChangeFeed, CurrentRecord, EmbeddingModelInfo, RecordKey, Result as DomainResult,
};
use sea_orm::ConnectionTrait;
use sea_orm::sqlx::postgres::PgListener;

use crate::error::{StoreError, corrupt};
use crate::store::{CHANGE_CHANNEL, ELIGIBILITY_LINE, PostgresStore, key_array, stmt};

fn sqlx_error(error: sea_orm::sqlx::Error) -> StoreError {
    StoreError::Db(sea_orm::DbErr::Custom(error.to_string()))
}

#[async_trait]
impl ChangeFeed for PostgresStore {
    async fn change_head(&self) -> DomainResult<u64> {
        let row = self
            .db
            .query_one_raw(stmt("SELECT coalesce(max(seq), 0) AS seq FROM record_changes", []))
            .await
            .map_err(StoreError::from)?;
        let seq: i64 = row.map(|r| r.try_get("", "seq")).transpose().map_err(StoreError::from)?.unwrap_or(0);
        Ok(u64::try_from(seq).unwrap_or(0))
    }

    async fn changes_since(&self, after: u64, limit: usize) -> DomainResult<ChangeBatch> {
        let limit = limit.max(1);
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT seq, keys FROM record_changes WHERE seq > ? ORDER BY seq LIMIT ?",
                [
                    i64::try_from(after).unwrap_or(i64::MAX).into(),
                    i64::try_from(limit + 1).unwrap_or(i64::MAX).into(),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        let more = rows.len() > limit;
        let mut last = after;
        let mut keys = BTreeSet::new();
        for row in rows.iter().take(limit) {
            let seq: i64 = row.try_get("", "seq").map_err(StoreError::from)?;
            last = u64::try_from(seq).map_err(|e| corrupt("record_changes", e))?;
            let packed: String = row.try_get("", "keys").map_err(StoreError::from)?;
            for key in packed.split(',').filter(|k| !k.is_empty()) {
                keys.insert(RecordKey(
                    key.parse().map_err(|e| corrupt("record_changes", format!("key {key:?}: {e}")))?,
                ));
            }
        }
        Ok(ChangeBatch { last, keys: keys.into_iter().collect(), more })
    }

    async fn current(
        &self,
        keys: &[RecordKey],
        model: &EmbeddingModelInfo,
    ) -> DomainResult<Vec<CurrentRecord>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT {ELIGIBILITY_LINE} AS line FROM records WHERE key = ANY(?::bigint[]) ORDER BY key"
                ),
                [key_array(keys.iter().copied())],
            ))
            .await
            .map_err(StoreError::from)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let line: String = row.try_get("", "line").map_err(StoreError::from)?;
            out.push(CurrentRecord {
                row: crate::convert::parse_eligibility_row(&line)?,
                vector: None,
                sentences: Vec::new(),
            });
        }
        let vectors = self
            .db
            .query_all_raw(stmt(
                &format!("{} AND e.record_key = ANY(?::bigint[])", crate::store::LIVE_EMBEDDINGS),
                [
                    model.name.as_str().into(),
                    i64::from(model.version).into(),
                    i64::from(model.dims).into(),
                    key_array(keys.iter().copied()),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        for row in &vectors {
            let key = RecordKey(
                u64::try_from(row.try_get::<i64>("", "record_key").map_err(StoreError::from)?)
                    .map_err(|e| corrupt("embeddings", e))?,
            );
            let blob: Vec<u8> = row.try_get("", "vector").map_err(StoreError::from)?;
            let sentences: Vec<u8> = row.try_get("", "sentences").map_err(StoreError::from)?;
            if let Ok(i) = out.binary_search_by_key(&key, |c| c.row.key) {
                // Only records that keep their indexes are served from the vector index.
                if out[i].row.status.keeps_indexes() {
                    out[i].vector = Some(crate::convert::vector_from_blob("embeddings", &blob)?);
                    out[i].sentences = crate::convert::vector_from_blob("embeddings", &sentences)?;
                }
            }
        }
        Ok(out)
    }

    async fn wait_for_change(&self, timeout: Duration) -> DomainResult<()> {
        let mut listener = self.listener.lock().await;
        if listener.is_none() {
            match PgListener::connect(&self.url).await {
                Ok(mut l) => match l.listen(CHANGE_CHANNEL).await {
                    Ok(()) => *listener = Some(l),
                    Err(e) => {
                        tracing::warn!(error = %e, "LISTEN failed; following the change table by polling")
                    }
                },
                Err(e) => {
                    tracing::warn!(error = %e, "no LISTEN connection; following the change table by polling")
                }
            }
        }
        let Some(l) = listener.as_mut() else {
            tokio::time::sleep(timeout).await;
            return Ok(());
        };
        match tokio::time::timeout(timeout, l.try_recv()).await {
            // A notification, or the connection dropped (sqlx reconnects on the next call;
            // the caller reads the table either way).
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %sqlx_error(e), "the LISTEN connection failed; it is opened again");
                *listener = None;
                Ok(())
            }
            Err(_elapsed) => Ok(()),
        }
    }
}
