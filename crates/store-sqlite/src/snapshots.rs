//! Online snapshots (`VACUUM INTO`, a consistent copy taken in one read transaction while
//! writes continue) and the consistency check `retold ops verify` runs.

use std::path::Path;

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, Erasure, ErasureTarget, RecordId, Result as DomainResult, Snapshots, StoreCheck,
};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, TransactionTrait, Value};

use crate::error::StoreError;
use crate::store::{SqliteStore, stmt};

pub(crate) async fn scalar(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<Value>,
) -> Result<u64, StoreError> {
    let row =
        db.query_one_raw(stmt(sql, values)).await?.ok_or_else(|| crate::error::corrupt("check", "no row"))?;
    let n: i64 = row.try_get_by_index(0)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

const LIVE: &str = "r.status != 'deleted' AND r.erased_at IS NULL";

/// The check, on any connection to a Retold database: one read transaction, so every figure
/// is of one state of the store while writes go on.
pub(crate) async fn check(pool: &DatabaseConnection) -> Result<StoreCheck, StoreError> {
    let txn = pool.begin().await?;
    let db = &txn;
    // FTS5 keeps on each connection the index structure it last read, and refreshes it when a
    // statement opens a cursor on the table; `integrity_check` does not. On a pooled
    // connection whose last search came before another connection's write, it compared the
    // new rows with the old structure and reported "fts5: checksum mismatch" on a sound
    // store. A cursor opened first, in the same transaction, makes it read the index as is.
    db.query_one_raw(stmt("SELECT rowid FROM records_fts LIMIT 1", [])).await?;
    let rows = db.query_all_raw(stmt("PRAGMA integrity_check", [])).await?;
    let lines: Vec<String> =
        rows.iter().map(|row| row.try_get_by_index::<String>(0)).collect::<Result<_, _>>()?;
    let check = StoreCheck {
        integrity: lines.join("\n"),
        live: scalar(db, &format!("SELECT count(*) FROM records r WHERE {LIVE}"), vec![]).await?,
        missing_fts: scalar(
            db,
            &format!(
                "SELECT count(*) FROM records r WHERE {LIVE} AND NOT EXISTS (SELECT 1 FROM records_fts f WHERE f.rowid = r.key)"
            ),
            vec![],
        )
        .await?,
        orphan_fts: scalar(
            db,
            &format!(
                "SELECT count(*) FROM records_fts f WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.key = f.rowid AND {LIVE})"
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
    };
    txn.commit().await?;
    Ok(check)
}

/// A read-only connection to another database file (a snapshot).
async fn open_read_only(path: &Path) -> Result<DatabaseConnection, StoreError> {
    let url = format!("sqlite://{}?mode=ro", path.display());
    Ok(Database::connect(url).await?)
}

impl SqliteStore {
    /// Check a database file that no service has open (a snapshot, a restored copy).
    pub async fn verify_file(path: &Path) -> Result<StoreCheck, StoreError> {
        let db = open_read_only(path).await?;
        let result = check(&db).await;
        db.close().await?;
        result
    }
}

#[async_trait]
impl Snapshots for SqliteStore {
    async fn snapshot(&self, dest: &Path) -> DomainResult<u64> {
        if dest.exists() {
            return Err(retold_domain::DomainError::Conflict(format!("{} exists already", dest.display())));
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(StoreError::from)?;
        }
        // Traces still in memory go in too, so the copy is the whole store as of now.
        self.traces.flush().await;
        self.reader
            .execute_raw(stmt("VACUUM INTO ?", [Value::from(dest.display().to_string())]))
            .await
            .map_err(StoreError::from)?;
        Ok(std::fs::metadata(dest).map_err(StoreError::from)?.len())
    }

    async fn verify(&self) -> DomainResult<StoreCheck> {
        Ok(check(&self.reader).await?)
    }

    async fn verify_file(&self, path: &Path) -> DomainResult<StoreCheck> {
        Ok(Self::verify_file(path).await?)
    }

    async fn rewrite_snapshot(
        &self,
        path: &Path,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> DomainResult<()> {
        let snapshot = SqliteStore::open(&crate::store::StoreConfig::new(path)).await?;
        let result = async {
            let txn = snapshot.begin_write().await?;
            for chunk in records.chunks(500) {
                let placeholders = vec!["?"; chunk.len()].join(", ");
                txn.execute_raw(stmt(
                    &format!(
                        "UPDATE records SET status = 'deleted', version = version + 1 \
                         WHERE status != 'deleted' AND id IN ({placeholders})"
                    ),
                    chunk.iter().map(|id| Value::from(id.as_str())),
                ))
                .await?;
                txn.execute_raw(stmt(
                    &format!(
                        "DELETE FROM records_fts WHERE rowid IN (SELECT key FROM records WHERE id IN ({placeholders}))"
                    ),
                    chunk.iter().map(|id| Value::from(id.as_str())),
                ))
                .await?;
            }
            txn.commit().await?;
            Ok::<(), StoreError>(())
        }
        .await;
        result?;
        snapshot.scrub(target, records, event).await?;
        snapshot.compact().await?;
        snapshot.close().await?;
        Ok(())
    }

    async fn snapshot_holds(&self, path: &Path, records: &[RecordId]) -> DomainResult<u64> {
        let db = open_read_only(path).await?;
        let mut held = 0;
        for chunk in records.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(", ");
            held += scalar(
                &db,
                &format!("SELECT count(*) FROM records WHERE content != '' AND id IN ({placeholders})"),
                chunk.iter().map(|id| Value::from(id.as_str())).collect(),
            )
            .await?;
        }
        db.close().await.map_err(StoreError::from)?;
        Ok(held)
    }
}
