//! Erasure with compaction (seed section 3: "a controlled erase path removes stored content
//! and embeddings"). `scrub` removes an erased record's content and everything that quotes it
//! in one transaction; `compact` then makes the freed bytes unreadable on disk.

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, Erasure, ErasureReport, ErasureTarget, KeyedRecord, RecordId, Result as DomainResult,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction, Value};

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{SqliteStore, insert_event, stmt};

/// The blanked details of a scrubbed audit event (the only update the events trigger allows).
const ERASED_DETAILS: &str = r#"{"erased":"true"}"#;

/// `WHERE` over `records` (and, as `{alias}`, over `entities`) for a target.
fn target_condition(target: &ErasureTarget) -> (String, Vec<Value>) {
    match target {
        ErasureTarget::Record(id) => ("id = ?".into(), vec![id.as_str().into()]),
        ErasureTarget::User(user) => (
            "((scope_kind = 'user' AND scope_id = ?) OR (scope_kind = 'agent' AND instr(scope_id, '/') > 0 \
             AND substr(scope_id, instr(scope_id, '/') + 1) = ?))"
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
                     substr(source_ref, 9, instr(source_ref, '<') - 9) IN (SELECT id FROM sessions WHERE user_id = ?)))"
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

impl SqliteStore {
    /// The database file, its WAL and its shared memory, in bytes.
    pub fn size_on_disk(&self) -> u64 {
        let base = self.path.as_os_str().to_owned();
        ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| {
                let mut name = base.clone();
                name.push(suffix);
                std::fs::metadata(&name).map(|m| m.len()).unwrap_or(0)
            })
            .sum()
    }

    async fn scrub_in(
        &self,
        txn: &DatabaseTransaction,
        target: &ErasureTarget,
        now: i64,
    ) -> Result<ErasureReport, StoreError> {
        let mut report = ErasureReport::default();
        let in_erased = "IN (SELECT id FROM temp.erased_ids)";
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
            &format!("DELETE FROM records_fts WHERE rowid IN (SELECT key FROM records WHERE id {in_erased})"),
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
                "DELETE FROM session_profiles WHERE EXISTS (SELECT 1 FROM json_each(session_profiles.entries) j \
                 WHERE json_extract(j.value, '$.record_id') {in_erased})"
            ),
            vec![],
        )
        .await?;
        // A decision quotes the turn, its gaps and, regenerated, an answer built from its
        // admitted records: one that admitted an erased record goes.
        report.decisions = count(
            txn,
            &format!(
                "DELETE FROM turn_decisions WHERE EXISTS (SELECT 1 FROM json_each(turn_decisions.admitted) j \
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
        // the record).
        report.traces = count(
            txn,
            &format!(
                "DELETE FROM search_log WHERE EXISTS (SELECT 1 FROM json_tree(search_log.trace) t \
                 WHERE t.type = 'text' AND t.atom {in_erased})"
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
                "UPDATE events SET details = ? WHERE details != ? AND EXISTS (SELECT 1 FROM json_each(events.details) j \
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
                    "UPDATE events SET details = ? WHERE details != ? AND EXISTS (SELECT 1 FROM json_each(events.details) j \
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
impl Erasure for SqliteStore {
    async fn erasure_records(&self, target: &ErasureTarget) -> DomainResult<Vec<KeyedRecord>> {
        let (condition, values) = record_condition(target);
        Ok(self.select_keyed(&condition, values).await?)
    }

    async fn vectors_of(&self, records: &[RecordId]) -> DomainResult<u64> {
        let mut held = 0;
        for (sql, values) in retold_store_sql::vectors_of_counts(records) {
            held += crate::snapshots::scalar(&self.reader, &sql, values).await?;
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
        let txn = self.begin_write().await?;
        let result: Result<ErasureReport, StoreError> = async {
            txn.execute_raw(stmt("CREATE TEMP TABLE IF NOT EXISTS erased_ids (id TEXT PRIMARY KEY)", []))
                .await?;
            txn.execute_raw(stmt("DELETE FROM temp.erased_ids", [])).await?;
            for chunk in records.chunks(500) {
                let placeholders = vec!["(?)"; chunk.len()].join(", ");
                txn.execute_raw(stmt(
                    &format!("INSERT OR IGNORE INTO temp.erased_ids (id) VALUES {placeholders}"),
                    chunk.iter().map(|id| Value::from(id.as_str())),
                ))
                .await?;
            }
            let report = self.scrub_in(&txn, target, millis(event.at)).await?;
            txn.execute_raw(stmt("DELETE FROM temp.erased_ids", [])).await?;
            insert_event(&txn, &event).await?;
            Ok(report)
        }
        .await;
        let report = result?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(report)
    }

    async fn compact(&self) -> DomainResult<(u64, u64)> {
        let before = self.size_on_disk();
        for sql in ["INSERT INTO records_fts(records_fts) VALUES('optimize')", "VACUUM"] {
            self.writer.execute_unprepared(sql).await.map_err(StoreError::from)?;
        }
        // The truncating checkpoint waits (the busy timeout) for readers of older WAL frames;
        // one still reading makes it give up without an error, with the erased bytes left in
        // the WAL. It says so in its first column: tried again, then reported, never ignored.
        for attempt in 1..=3 {
            let row = self
                .writer
                .query_one_raw(stmt("PRAGMA wal_checkpoint(TRUNCATE)", []))
                .await
                .map_err(StoreError::from)?;
            let busy: i64 = row.map_or(Ok(0), |r| r.try_get_by_index(0)).map_err(StoreError::from)?;
            if busy == 0 {
                return Ok((before, self.size_on_disk()));
            }
            tracing::warn!(attempt, "the WAL checkpoint of a compaction waited for a reader");
        }
        Err(retold_domain::DomainError::backend(
            "compaction",
            "readers kept the WAL from being truncated: erased bytes may remain in it; run the erasure again",
        ))
    }
}

#[async_trait]
impl retold_domain::ExpiryIndex for SqliteStore {
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
