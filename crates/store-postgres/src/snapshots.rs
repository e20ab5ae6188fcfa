//! Snapshots and the consistency check `retold ops verify` runs. PostgreSQL has no database
//! file to copy: it is backed up with `pg_dump` or with base backups and WAL archiving
//! (point-in-time recovery), so the file-snapshot operations answer a conflict that says so;
//! the check runs in full.

use std::path::Path;

use async_trait::async_trait;
use retold_domain::{AuditEvent, ErasureTarget, RecordId, Result as DomainResult, Snapshots, StoreCheck};
use sea_orm::{ConnectionTrait, Value};

use crate::error::StoreError;
use crate::store::{LIVE, PostgresStore, stmt};

/// The first column of a one-row query, as a count.
pub(crate) async fn scalar<C: ConnectionTrait>(
    db: &C,
    sql: &str,
    values: Vec<Value>,
) -> Result<u64, StoreError> {
    let row =
        db.query_one_raw(stmt(sql, values)).await?.ok_or_else(|| crate::error::corrupt("check", "no row"))?;
    let n: i64 = row.try_get_by_index(0)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// What replaces SQLite's file snapshots here.
const USE_BACKUPS: &str = "back up PostgreSQL with pg_dump, or with base backups and WAL archiving \
     for point-in-time recovery; Retold's file snapshots are for the SQLite store";

fn no_snapshot_file(what: &str) -> retold_domain::DomainError {
    retold_domain::DomainError::Conflict(format!(
        "a PostgreSQL store has no database file to {what}: {USE_BACKUPS}"
    ))
}

/// What the structural checks found: `ok`, or one line per problem. PostgreSQL has no
/// `integrity_check`; reading every row of `records` (a damaged page fails the read) and the
/// change feed's invariants stand in for it.
async fn integrity<C: ConnectionTrait>(db: &C) -> Result<String, StoreError> {
    let mut problems = Vec::new();
    scalar(db, "SELECT count(*) FROM records", vec![]).await?;
    let heads = scalar(db, "SELECT count(*) FROM change_head", vec![]).await?;
    if heads != 1 {
        problems.push(format!("change_head holds {heads} rows (expected 1)"));
    }
    let ahead = scalar(
        db,
        "SELECT count(*) FROM record_changes WHERE seq > (SELECT coalesce(max(seq), 0) FROM change_head)",
        vec![],
    )
    .await?;
    if ahead > 0 {
        problems.push(format!("record_changes holds {ahead} change numbers past change_head"));
    }
    Ok(if problems.is_empty() { "ok".to_owned() } else { problems.join("\n") })
}

/// The check, on any connection to a Retold database.
pub(crate) async fn check<C: ConnectionTrait>(db: &C) -> Result<StoreCheck, StoreError> {
    Ok(StoreCheck {
        integrity: integrity(db).await?,
        live: scalar(db, &format!("SELECT count(*) FROM records r WHERE {LIVE}"), vec![]).await?,
        missing_fts: scalar(
            db,
            &format!(
                "SELECT count(*) FROM records r WHERE {LIVE} AND NOT EXISTS (SELECT 1 FROM records_fts f WHERE f.key = r.key)"
            ),
            vec![],
        )
        .await?,
        orphan_fts: scalar(
            db,
            &format!(
                "SELECT count(*) FROM records_fts f WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.key = f.key AND {LIVE})"
            ),
            vec![],
        )
        .await?,
        missing_embeddings: scalar(
            db,
            &format!(
                "SELECT count(*) FROM records r WHERE {LIVE} AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.record_key = r.key)"
            ),
            vec![],
        )
        .await?,
        orphan_embeddings: scalar(
            db,
            &format!(
                "SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.key = e.record_key AND {LIVE})"
            ),
            vec![],
        )
        .await?,
    })
}

#[async_trait]
impl Snapshots for PostgresStore {
    /// Refused: there is no database file to copy (see the module comment).
    async fn snapshot(&self, _dest: &Path) -> DomainResult<u64> {
        Err(no_snapshot_file("snapshot"))
    }

    async fn verify(&self) -> DomainResult<StoreCheck> {
        // One snapshot for every count, so concurrent writes cannot make them disagree.
        use sea_orm::TransactionTrait;
        let txn = self
            .db
            .begin_with_config(
                Some(sea_orm::IsolationLevel::RepeatableRead),
                Some(sea_orm::AccessMode::ReadOnly),
            )
            .await
            .map_err(StoreError::from)?;
        let result = check(&txn).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(result)
    }

    /// Refused: snapshot files are the SQLite store's.
    async fn verify_file(&self, _path: &Path) -> DomainResult<StoreCheck> {
        Err(no_snapshot_file("verify as a snapshot file"))
    }

    /// Refused: snapshot files are the SQLite store's. Erased content leaves PostgreSQL's
    /// backups as their retention expires them.
    async fn rewrite_snapshot(
        &self,
        _path: &Path,
        _target: &ErasureTarget,
        _records: &[RecordId],
        _event: AuditEvent,
    ) -> DomainResult<()> {
        Err(no_snapshot_file(
            "rewrite as a snapshot (erased content leaves backups as their retention expires)",
        ))
    }

    /// Refused: snapshot files are the SQLite store's.
    async fn snapshot_holds(&self, _path: &Path, _records: &[RecordId]) -> DomainResult<u64> {
        Err(no_snapshot_file("search as a snapshot"))
    }
}
