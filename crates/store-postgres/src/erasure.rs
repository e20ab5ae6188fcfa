//! Erasure with compaction (seed section 3: "a controlled erase path removes stored content
//! and embeddings"). `scrub` removes an erased record's content and everything that quotes it
//! in one transaction; `compact` then rewrites the tables an erasure touches so the freed
//! bytes are unreadable in the database's files.

use std::ops::Deref;

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, Erasure, ErasureReport, ErasureTarget, KeyedRecord, RecordId, Result as DomainResult,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbErr, Value};

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{PostgresStore, id_array, insert_event, record_change, stmt};

/// The blanked details of a scrubbed audit event (the only update the events trigger allows).
const ERASED_DETAILS: &str = r#"{"erased":"true"}"#;

/// Every table an erasure deletes from or rewrites rows of: `compact` rewrites them all.
const ERASED_TABLES: [&str; 15] = [
    "records",
    "records_fts",
    "lexical_terms",
    "lexical_postings",
    "embeddings",
    "embeddings_staged",
    "events",
    "search_log",
    "session_turns",
    "entities",
    "entity_aliases",
    "record_entities",
    "session_profiles",
    "turn_decisions",
    "activation_decisions",
];

/// PostgreSQL's SQLSTATE for insufficient_privilege.
const PG_INSUFFICIENT_PRIVILEGE: &str = "42501";

/// `WHERE` over `records` (and over `entities`) for a target.
fn target_condition(target: &ErasureTarget) -> (String, Vec<Value>) {
    match target {
        ErasureTarget::Record(id) => ("id = ?".into(), vec![id.as_str().into()]),
        ErasureTarget::User(user) => (
            "((scope_kind = 'user' AND scope_id = ?) OR (scope_kind = 'agent' AND strpos(scope_id, '/') > 0 \
             AND substr(scope_id, strpos(scope_id, '/') + 1) = ?))"
                .into(),
            vec![user.as_str().into(), user.as_str().into()],
        ),
        ErasureTarget::Scope(scope) => (
            "(scope_kind = ? AND scope_id = ?)".into(),
            vec![scope.kind().as_str().into(), scope.id().into()],
        ),
    }
}

/// `WHERE` over `records` for a target: [`target_condition`], and for a user also the turn
/// records of every session they had, in whatever scope the session kept them (the whole
/// conversation goes with the user: their turns and the replies to them).
fn record_condition(target: &ErasureTarget) -> (String, Vec<Value>) {
    let (condition, mut values) = target_condition(target);
    match target {
        ErasureTarget::User(user) => {
            values.push(user.as_str().into());
            (
                format!(
                    "({condition} OR (origin = 'turn' AND source_ref LIKE 'session:%' AND \
                     substr(source_ref, 9, strpos(source_ref, '<') - 9) IN (SELECT id FROM sessions WHERE user_id = ?)))"
                ),
                values,
            )
        }
        ErasureTarget::Record(_) | ErasureTarget::Scope(_) => (condition, values),
    }
}

async fn count(txn: &DatabaseTransaction, sql: &str, values: Vec<Value>) -> Result<u64, StoreError> {
    Ok(txn.execute_raw(stmt(sql, values)).await?.rows_affected())
}

/// Whether the server refused a statement with SQLSTATE `code`.
fn has_code(error: &DbErr, code: &str) -> bool {
    let (DbErr::Exec(runtime) | DbErr::Query(runtime)) = error else { return false };
    let sea_orm::RuntimeErr::SqlxError(sqlx) = runtime else { return false };
    let sea_orm::sqlx::Error::Database(database) = sqlx.deref() else { return false };
    database.code().is_some_and(|c| c == code)
}

/// Whether the server refused a statement for lack of privilege.
fn is_permission_denied(error: &DbErr) -> bool {
    has_code(error, PG_INSUFFICIENT_PRIVILEGE)
}

/// `lock_not_available`: a statement gave up waiting for a lock (`lock_timeout`).
const PG_LOCK_NOT_AVAILABLE: &str = "55P03";

/// How long one `VACUUM FULL` waits for the table's lock before it gives up and tries again.
const COMPACTION_LOCK_WAIT: &str = "5s";

/// The sessions holding a lock on `table` besides `maintenance`'s own: pid, state, when their
/// transaction began and the start of their query, for a compaction that could not get it.
async fn lock_holders(maintenance: &sea_orm::DatabaseConnection, table: &str) -> String {
    let sql = "SELECT string_agg(format('pid %s %s since %s: %s', a.pid, a.state, a.xact_start, \
               left(a.query, 120)), '; ') AS holders FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
               WHERE l.relation = to_regclass(?) AND l.granted AND l.pid <> pg_backend_pid()";
    match maintenance.query_one_raw(stmt(sql, [table.into()])).await {
        Ok(Some(row)) => row.try_get::<Option<String>>("", "holders").ok().flatten().unwrap_or_default(),
        Ok(None) => String::new(),
        Err(e) => format!("(could not read pg_locks: {e})"),
    }
}

impl PostgresStore {
    /// The database's size in bytes (`pg_database_size`: its files in every tablespace; the
    /// WAL is the cluster's and not counted).
    pub async fn size_on_disk(&self) -> Result<u64, StoreError> {
        let row = self
            .db
            .query_one_raw(stmt("SELECT pg_database_size(current_database()) AS size", []))
            .await?
            .ok_or_else(|| crate::error::corrupt("pg_database_size", "no row"))?;
        let size: i64 = row.try_get("", "size")?;
        Ok(u64::try_from(size).unwrap_or(0))
    }

    /// The scrub proper; the erased ids are in the transaction's `pg_temp.erased_ids`.
    async fn scrub_in(
        &self,
        txn: &DatabaseTransaction,
        target: &ErasureTarget,
        now: i64,
    ) -> Result<ErasureReport, StoreError> {
        let mut report = ErasureReport::default();
        let in_erased = "IN (SELECT id FROM pg_temp.erased_ids)";
        report.records = count(
            txn,
            &format!(
                "UPDATE records SET content = '', context = NULL, evidence = NULL, source_ref = NULL, tags = '[]', \
                 erased_at = coalesce(erased_at, ?) WHERE id {in_erased} AND (erased_at IS NULL OR content != '')"
            ),
            vec![now.into()],
        )
        .await?;
        txn.execute_raw(stmt(
            &format!("DELETE FROM records_fts WHERE key IN (SELECT key FROM records WHERE id {in_erased})"),
            [],
        ))
        .await?;
        report.embeddings =
            count(txn, &format!("DELETE FROM embeddings WHERE record_id {in_erased}"), vec![]).await?;
        report.embeddings +=
            count(txn, &format!("DELETE FROM embeddings_staged WHERE record_id {in_erased}"), vec![]).await?;
        txn.execute_raw(stmt(&format!("DELETE FROM record_entities WHERE record_id {in_erased}"), []))
            .await?;
        txn.execute_raw(stmt(&format!("DELETE FROM activation_decisions WHERE record_id {in_erased}"), []))
            .await?;
        // A profile quotes its records' content: one that holds an erased record goes.
        report.profiles = count(
            txn,
            &format!(
                "DELETE FROM session_profiles WHERE EXISTS \
                 (SELECT 1 FROM jsonb_array_elements(session_profiles.entries::jsonb) AS j(value) \
                  WHERE (j.value ->> 'record_id') {in_erased})"
            ),
            vec![],
        )
        .await?;
        // A decision quotes the turn, its gaps and, regenerated, an answer built from its
        // admitted records: one that admitted an erased record goes.
        report.decisions = count(
            txn,
            &format!(
                "DELETE FROM turn_decisions WHERE EXISTS \
                 (SELECT 1 FROM jsonb_array_elements_text(turn_decisions.admitted::jsonb) AS j(value) \
                  WHERE j.value {in_erased})"
            ),
            vec![],
        )
        .await?;
        report.events = count(
            txn,
            &format!("UPDATE events SET details = ? WHERE record_id {in_erased} AND details != ?"),
            vec![ERASED_DETAILS.into(), ERASED_DETAILS.into()],
        )
        .await?;
        // A trace names records in its results, its channels' lists and its drops: any string
        // anywhere in it that is an erased id condemns the whole trace (its query may quote
        // the record). `strict $.**` is every value at every depth (SQLite's json_tree).
        report.traces = count(
            txn,
            &format!(
                "DELETE FROM search_log WHERE EXISTS \
                 (SELECT 1 FROM jsonb_path_query(search_log.trace::jsonb, 'strict $.**') AS t(v) \
                  WHERE jsonb_typeof(t.v) = 'string' AND (t.v #>> '{{}}') {in_erased})"
            ),
            vec![],
        )
        .await?;
        if let ErasureTarget::User(user) = target {
            let user: Value = user.as_str().into();
            report.traces +=
                count(txn, "DELETE FROM search_log WHERE user_id = ?", vec![user.clone()]).await?;
            report.turns = count(
                txn,
                "DELETE FROM session_turns WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)",
                vec![user.clone()],
            )
            .await?;
            report.profiles += count(
                txn,
                "DELETE FROM session_profiles WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)",
                vec![user.clone()],
            )
            .await?;
            report.decisions +=
                count(txn, "DELETE FROM turn_decisions WHERE user_id = ?", vec![user.clone()]).await?;
            // Session events carry the session id in their details; extraction events may
            // describe what the turns said.
            report.events += count(
                txn,
                "UPDATE events SET details = ? WHERE details != ? AND EXISTS \
                 (SELECT 1 FROM jsonb_each_text(events.details::jsonb) AS j(key, value) \
                  WHERE j.value IN (SELECT id FROM sessions WHERE user_id = ?))",
                vec![ERASED_DETAILS.into(), ERASED_DETAILS.into(), user],
            )
            .await?;
        }
        if !matches!(target, ErasureTarget::Record(_)) {
            let (condition, values) = target_condition(target);
            txn.execute_raw(stmt(
                &format!("DELETE FROM entity_aliases WHERE entity_id IN (SELECT id FROM entities WHERE {condition})"),
                values.clone(),
            ))
            .await?;
            report.entities = count(
                txn,
                &format!(
                    "UPDATE entities SET canonical_name = '[erased]', name_folded = id \
                     WHERE {condition} AND name_folded != id"
                ),
                values.clone(),
            )
            .await?;
            report.events += count(
                txn,
                &format!(
                    "UPDATE events SET details = ? WHERE details != ? AND EXISTS \
                     (SELECT 1 FROM jsonb_each_text(events.details::jsonb) AS j(key, value) \
                      WHERE j.value IN (SELECT id FROM entities WHERE {condition}))"
                ),
                [vec![ERASED_DETAILS.into(), ERASED_DETAILS.into()], values].concat(),
            )
            .await?;
        }
        Ok(report)
    }
}

#[async_trait]
impl Erasure for PostgresStore {
    async fn erasure_records(&self, target: &ErasureTarget) -> DomainResult<Vec<KeyedRecord>> {
        let (condition, values) = record_condition(target);
        Ok(self.select_keyed(&condition, values).await?)
    }

    async fn vectors_of(&self, records: &[RecordId]) -> DomainResult<u64> {
        let mut held = 0;
        for (sql, values) in retold_store_sql::vectors_of_counts(records) {
            held += crate::snapshots::scalar(&self.db, &sql, values).await?;
        }
        Ok(held)
    }

    async fn scrub(
        &self,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> DomainResult<ErasureReport> {
        // Traces still waiting in memory are written first, so the scrub sees them.
        self.traces.flush().await;
        // The records lose their vectors and lexical rows (and become erased): a change the
        // replicas must see, so the transaction holds the next change number.
        let (txn, seq) = self.begin_change().await?;
        // A scrub may scan every search trace: no statement timeout for it.
        txn.execute_unprepared("SET LOCAL statement_timeout = 0").await.map_err(StoreError::from)?;
        let result: Result<ErasureReport, StoreError> = async {
            // The ids in a table of this transaction only (dropped at commit, gone with a
            // rollback), so every statement below joins one indexed set.
            txn.execute_raw(stmt("CREATE TEMP TABLE erased_ids (id TEXT PRIMARY KEY) ON COMMIT DROP", []))
                .await?;
            txn.execute_raw(stmt(
                "INSERT INTO pg_temp.erased_ids (id) SELECT unnest(?::text[]) \
                 ON CONFLICT DO NOTHING",
                [id_array(records)],
            ))
            .await?;
            let report = self.scrub_in(&txn, target, millis(event.at)).await?;
            insert_event(&txn, &event).await?;
            record_change(&txn, seq, [], records.iter().map(RecordId::as_str)).await?;
            Ok(report)
        }
        .await;
        let report = result?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(report)
    }

    /// Make removed bytes unreadable in the database's files: `VACUUM FULL` rewrites every
    /// table an erasure touches (and its indexes, the lexical GIN index included) into new
    /// files and drops the old ones, then a `CHECKPOINT` flushes the new pages (skipped with
    /// a warning when the role may not checkpoint). Each table's rewrite holds an exclusive
    /// lock on it, so other processes wait for that table meanwhile. Returns the database's
    /// size in bytes (`pg_database_size`) before and after.
    ///
    /// Beyond the database files, older pages live on where the operator keeps them: WAL
    /// segments in `pg_wal` until the server recycles them, and archived WAL, replicas' WAL
    /// and base backups until their retention lets them go. That retention is the operator's
    /// to set.
    async fn compact(&self) -> DomainResult<(u64, u64)> {
        let before = self.size_on_disk().await?;
        // VACUUM cannot run inside a transaction block: one statement per table, on one
        // connection of its own without the pool's statement timeout (a large table's
        // rewrite takes longer).
        // A session holding a lock on a table (a long query, a transaction left open) would
        // keep VACUUM FULL waiting with no end: each waits at most COMPACTION_LOCK_WAIT, three
        // times, and then the erasure fails naming the table and who held it.
        let maintenance = self.maintenance_connection().await?;
        maintenance.execute_unprepared("SET statement_timeout = 0").await.map_err(StoreError::from)?;
        maintenance
            .execute_unprepared(&format!("SET lock_timeout = '{COMPACTION_LOCK_WAIT}'"))
            .await
            .map_err(StoreError::from)?;
        for table in ERASED_TABLES {
            let mut attempt = 1;
            loop {
                match maintenance.execute_unprepared(&format!("VACUUM FULL {table}")).await {
                    Ok(_) => break,
                    Err(e) if has_code(&e, PG_LOCK_NOT_AVAILABLE) => {
                        let holders = lock_holders(&maintenance, table).await;
                        tracing::warn!(table, attempt, holders, "compaction waited for a lock on the table");
                        if attempt == 3 {
                            return Err(retold_domain::DomainError::backend(
                                "compaction",
                                format!(
                                    "VACUUM FULL {table} could not get its lock in three tries ({holders}): \
                                     the records are erased, their bytes may remain on disk; run the erasure again"
                                ),
                            ));
                        }
                        attempt += 1;
                    }
                    Err(e) => return Err(StoreError::from(e).into()),
                }
            }
        }
        match maintenance.execute_unprepared("CHECKPOINT").await {
            Ok(_) => {}
            Err(e) if is_permission_denied(&e) => {
                tracing::warn!(
                    error = %e,
                    "compaction could not CHECKPOINT (the role lacks pg_checkpoint or superuser); \
                     the server's next checkpoint flushes the rewritten tables"
                );
            }
            Err(e) => return Err(StoreError::from(e).into()),
        }
        maintenance.close().await.map_err(StoreError::from)?;
        Ok((before, self.size_on_disk().await?))
    }
}

#[async_trait]
impl retold_domain::ExpiryIndex for PostgresStore {
    async fn due_to_expire(
        &self,
        now: retold_domain::Timestamp,
        limit: usize,
    ) -> DomainResult<Vec<KeyedRecord>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(self
            .select_keyed(
                "status IN ('provisional', 'confirmed') AND expires_at IS NOT NULL AND expires_at <= ? \
                 ORDER BY expires_at, key LIMIT ?",
                vec![millis(now).into(), limit.into()],
            )
            .await?)
    }
}
