//! Receipts of keyed writes, inserted inside the write unit's transaction.

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    EventKind, RecordId, Result as DomainResult, SessionId, WriteKey, WriteReceipt, WriteReceipts,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction};

use crate::convert::millis;
use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, stmt};

/// Store `receipt` in the write's transaction; a receipt already stored for its key means a
/// concurrent attempt wrote first, so the unit fails as contended and is decided again. (Across
/// processes the primary key decides: an insert of a key another uncommitted transaction
/// inserted waits for it, then fails with the unique violation if that one committed.)
pub(crate) async fn insert_receipt(
    txn: &DatabaseTransaction,
    receipt: &WriteReceipt,
) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        "INSERT INTO write_receipts (session_id, digest, outcome, record_id, at) VALUES (?, ?, ?, ?, ?)",
        [
            receipt.key.session.as_str().into(),
            receipt.key.digest.as_str().into(),
            receipt.outcome.as_str().into(),
            receipt.record_id.as_str().into(),
            millis(receipt.at).into(),
        ],
    ))
    .await
    .map_err(|e| match e.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => StoreError::Contended(format!(
            "write {} of session {} was written concurrently",
            receipt.key.digest, receipt.key.session
        )),
        _ => StoreError::Db(e),
    })?;
    Ok(())
}

#[async_trait]
impl WriteReceipts for PostgresStore {
    async fn receipt(&self, key: &WriteKey) -> DomainResult<Option<WriteReceipt>> {
        let row = self
            .db
            .query_one_raw(stmt(
                "SELECT session_id, digest, outcome, record_id, at FROM write_receipts \
                 WHERE session_id = ? AND digest = ?",
                [key.session.as_str().into(), key.digest.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let bad = |e: retold_domain::DomainError| corrupt("write_receipts", e);
        let at: i64 = row.try_get("", "at").map_err(StoreError::from)?;
        Ok(Some(WriteReceipt {
            key: WriteKey {
                session: SessionId::new(row.try_get::<String>("", "session_id").map_err(StoreError::from)?)
                    .map_err(bad)?,
                digest: row.try_get("", "digest").map_err(StoreError::from)?,
            },
            outcome: EventKind::parse(&row.try_get::<String>("", "outcome").map_err(StoreError::from)?)
                .map_err(bad)?,
            record_id: RecordId::new(row.try_get::<String>("", "record_id").map_err(StoreError::from)?)
                .map_err(bad)?,
            at: DateTime::<Utc>::from_timestamp_millis(at)
                .ok_or_else(|| corrupt("write_receipts", format!("bad timestamp {at}")))?,
        }))
    }
}
