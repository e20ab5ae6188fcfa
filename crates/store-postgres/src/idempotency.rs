//! Idempotency keys: claimed in flight, answered, released, expired.

use async_trait::async_trait;
use retold_domain::{IdempotencyClaim, IdempotencyKey, IdempotencyKeys, Result as DomainResult, Timestamp};
use sea_orm::{ConnectionTrait, TransactionTrait, Value};

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{PostgresStore, stmt};

const WHERE_KEY: &str = "host_key = ? AND agent_id = ? AND user_id = ? AND key = ?";

fn key_values(key: &IdempotencyKey) -> Vec<Value> {
    vec![
        key.host_key.as_str().into(),
        key.agent_id.as_str().into(),
        key.user_id.as_str().into(),
        key.key.as_str().into(),
    ]
}

/// How many times a claim tries again when the entry that blocked its insert was gone before
/// it could be read (its holder released it or it expired in between).
const CLAIM_TRIES: usize = 3;

impl PostgresStore {
    /// Run `sql` (a statement on one in-flight key) in its own transaction; one conditional
    /// statement, so it needs no lock of its own.
    async fn on_held_key(
        &self,
        sql: &str,
        mut values: Vec<Value>,
        key: &IdempotencyKey,
    ) -> Result<(), StoreError> {
        let txn = self.db.begin().await?;
        values.extend(key_values(key));
        txn.execute_raw(stmt(sql, values)).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Across processes the primary key decides: `INSERT ... ON CONFLICT DO NOTHING RETURNING`
    /// either inserts the entry (this request holds the key) or, when another transaction
    /// inserted it (waiting for that one to commit first), inserts nothing; the live entry is
    /// then read in the same transaction. Should that entry be gone by then (released, or
    /// expired and dropped by another claim), the insert is tried again.
    async fn claim_key_tx(
        &self,
        key: &IdempotencyKey,
        fingerprint: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<IdempotencyClaim, StoreError> {
        let txn = self.db.begin().await?;
        txn.execute_raw(stmt(
            "DELETE FROM idempotency_keys WHERE (host_key, agent_id, user_id, key) IN \
             (SELECT host_key, agent_id, user_id, key FROM idempotency_keys WHERE expires_at <= ? \
              FOR UPDATE SKIP LOCKED)",
            [millis(now).into()],
        ))
        .await?;
        for _ in 0..CLAIM_TRIES {
            let mut values = key_values(key);
            values.extend([fingerprint.into(), millis(now).into(), millis(expires_at).into()]);
            let inserted = txn
                .query_one_raw(stmt(
                    "INSERT INTO idempotency_keys \
                     (host_key, agent_id, user_id, key, fingerprint, created_at, expires_at) \
                     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING created_at",
                    values,
                ))
                .await?;
            if inserted.is_some() {
                txn.commit().await?;
                return Ok(IdempotencyClaim::Claimed);
            }
            // An entry another claim committed holds the key; `expires_at > now` leaves out
            // one that expired since this claim's sweep (the next insert would then conflict
            // with it again, so it is dropped first).
            let mut values = key_values(key);
            values.push(millis(now).into());
            let held = txn
                .query_one_raw(stmt(
                    &format!(
                        "SELECT fingerprint, answer FROM idempotency_keys WHERE {WHERE_KEY} AND expires_at > ?"
                    ),
                    values,
                ))
                .await?;
            if let Some(row) = held {
                let claim = IdempotencyClaim::Held {
                    fingerprint: row.try_get("", "fingerprint")?,
                    answer: row.try_get("", "answer")?,
                };
                txn.commit().await?;
                return Ok(claim);
            }
            let mut values = key_values(key);
            values.push(millis(now).into());
            txn.execute_raw(stmt(
                &format!("DELETE FROM idempotency_keys WHERE {WHERE_KEY} AND expires_at <= ?"),
                values,
            ))
            .await?;
        }
        Err(StoreError::Contended(format!(
            "idempotency key {:?} was claimed and given back concurrently",
            key.key.as_str()
        )))
    }
}

#[async_trait]
impl IdempotencyKeys for PostgresStore {
    async fn claim_key(
        &self,
        key: &IdempotencyKey,
        fingerprint: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> DomainResult<IdempotencyClaim> {
        Ok(self.claim_key_tx(key, fingerprint, now, expires_at).await?)
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
