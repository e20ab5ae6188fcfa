//! Idempotency keys: claimed in flight, answered, released, expired.

use async_trait::async_trait;
use retold_domain::{IdempotencyClaim, IdempotencyKey, IdempotencyKeys, Result as DomainResult, Timestamp};
use sea_orm::{ConnectionTrait, Value};

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{SqliteStore, stmt};

const WHERE_KEY: &str = "host_key = ? AND agent_id = ? AND user_id = ? AND key = ?";

fn key_values(key: &IdempotencyKey) -> Vec<Value> {
    vec![
        key.host_key.as_str().into(),
        key.agent_id.as_str().into(),
        key.user_id.as_str().into(),
        key.key.as_str().into(),
    ]
}

impl SqliteStore {
    /// Run `sql` (a statement on one in-flight key) in its own write transaction.
    async fn on_held_key(
        &self,
        sql: &str,
        mut values: Vec<Value>,
        key: &IdempotencyKey,
    ) -> Result<(), StoreError> {
        let txn = self.begin_write().await?;
        values.extend(key_values(key));
        txn.execute_raw(stmt(sql, values)).await?;
        txn.commit().await?;
        Ok(())
    }
}

#[async_trait]
impl IdempotencyKeys for SqliteStore {
    async fn claim_key(
        &self,
        key: &IdempotencyKey,
        fingerprint: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> DomainResult<IdempotencyClaim> {
        let txn = self.begin_write().await?;
        txn.execute_raw(stmt("DELETE FROM idempotency_keys WHERE expires_at <= ?", [millis(now).into()]))
            .await
            .map_err(StoreError::from)?;
        let held = txn
            .query_one_raw(stmt(
                &format!("SELECT fingerprint, answer FROM idempotency_keys WHERE {WHERE_KEY}"),
                key_values(key),
            ))
            .await
            .map_err(StoreError::from)?;
        let claim = match held {
            Some(row) => IdempotencyClaim::Held {
                fingerprint: row.try_get("", "fingerprint").map_err(StoreError::from)?,
                answer: row.try_get("", "answer").map_err(StoreError::from)?,
            },
            None => {
                let mut values = key_values(key);
                values.extend([fingerprint.into(), millis(now).into(), millis(expires_at).into()]);
                txn.execute_raw(stmt(
                    "INSERT INTO idempotency_keys \
                     (host_key, agent_id, user_id, key, fingerprint, created_at, expires_at) \
                     VALUES (?, ?, ?, ?, ?, ?, ?)",
                    values,
                ))
                .await
                .map_err(StoreError::from)?;
                IdempotencyClaim::Claimed
            }
        };
        txn.commit().await.map_err(StoreError::from)?;
        Ok(claim)
    }

    async fn store_answer(&self, key: &IdempotencyKey, answer: &[u8]) -> DomainResult<()> {
        let sql = format!("UPDATE idempotency_keys SET answer = ? WHERE {WHERE_KEY} AND answer IS NULL");
        Ok(self.on_held_key(&sql, vec![answer.to_vec().into()], key).await?)
    }

    async fn release_key(&self, key: &IdempotencyKey) -> DomainResult<()> {
        let sql = format!("DELETE FROM idempotency_keys WHERE {WHERE_KEY} AND answer IS NULL");
        Ok(self.on_held_key(&sql, Vec::new(), key).await?)
    }
}
