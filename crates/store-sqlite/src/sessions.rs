//! Sessions and numbered turns.

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    AgentId, AuditEvent, ClaimTerms, ExtractionClaim, ExtractionClaims, Name, ProjectId,
    Result as DomainResult, Scope, ScopeKind, Session, SessionId, SessionTurn, Timestamp, TurnBuffer,
    TurnRole, UserId,
};
use sea_orm::{ConnectionTrait, DatabaseTransaction, QueryResult};

use crate::convert::millis;
use crate::error::{StoreError, corrupt};
use crate::store::{SqliteStore, insert_event, stmt};

fn at(value: i64) -> Result<Timestamp, StoreError> {
    DateTime::<Utc>::from_timestamp_millis(value)
        .ok_or_else(|| corrupt("sessions", format!("bad timestamp {value}")))
}

pub(crate) fn session_from_row(row: &QueryResult) -> Result<Session, StoreError> {
    let bad = |e: retold_domain::DomainError| corrupt("sessions", e);
    Ok(Session {
        id: SessionId::new(row.try_get::<String>("", "id")?).map_err(bad)?,
        agent_id: AgentId::new(row.try_get::<String>("", "agent_id")?).map_err(bad)?,
        user_id: UserId::new(row.try_get::<String>("", "user_id")?).map_err(bad)?,
        project_id: row
            .try_get::<Option<String>>("", "project_id")?
            .map(ProjectId::new)
            .transpose()
            .map_err(bad)?,
        started_at: at(row.try_get("", "started_at")?)?,
        ended_at: row.try_get::<Option<i64>>("", "ended_at")?.map(at).transpose()?,
        scope: match (
            row.try_get::<Option<String>>("", "scope_kind")?,
            row.try_get::<Option<String>>("", "scope_id")?,
        ) {
            (Some(kind), Some(id)) => {
                Some(Scope::new(ScopeKind::parse(&kind).map_err(bad)?, id).map_err(bad)?)
            }
            _ => None,
        },
    })
}

fn turn_from_row(row: &QueryResult) -> Result<SessionTurn, StoreError> {
    let bad = |e: retold_domain::DomainError| corrupt("session_turns", e);
    Ok(SessionTurn {
        session_id: SessionId::new(row.try_get::<String>("", "session_id")?).map_err(bad)?,
        turn: u32::try_from(row.try_get::<i64>("", "turn")?).map_err(|e| corrupt("session_turns", e))?,
        role: TurnRole::parse(&row.try_get::<String>("", "role")?).map_err(bad)?,
        speaker: row.try_get::<Option<String>>("", "speaker")?.map(Name::new).transpose().map_err(bad)?,
        content: row.try_get("", "content")?,
        at: at(row.try_get("", "said_at")?)?,
        created_at: at(row.try_get("", "created_at")?)?,
    })
}

/// Append `turn` inside `txn`: the session must exist and be open, and the turn's number
/// must be the next one (a number taken meanwhile is `Contended`, so the writer reads the
/// last turn again).
pub(crate) async fn insert_turn(txn: &DatabaseTransaction, turn: &SessionTurn) -> Result<(), StoreError> {
    let id = &turn.session_id;
    let open = txn
        .query_one_raw(stmt(
            "SELECT ended_at, (SELECT coalesce(max(turn), 0) FROM session_turns WHERE session_id = ?) AS last \
             FROM sessions WHERE id = ?",
            [id.as_str().into(), id.as_str().into()],
        ))
        .await?;
    let Some(open) = open else {
        return Err(StoreError::NotFound { what: "session", id: id.to_string() });
    };
    if open.try_get::<Option<i64>>("", "ended_at")?.is_some() {
        return Err(StoreError::Duplicate(format!("session {id} has ended")));
    }
    let last: i64 = open.try_get("", "last")?;
    if last + 1 != i64::from(turn.turn) {
        return Err(StoreError::Contended(format!(
            "turn {} of session {id} cannot follow turn {last}: another turn was appended meanwhile",
            turn.turn
        )));
    }
    txn.execute_raw(stmt(
        &format!("INSERT INTO session_turns ({TURN_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"),
        [
            id.as_str().into(),
            i64::from(turn.turn).into(),
            turn.role.as_str().into(),
            turn.content.clone().into(),
            millis(turn.created_at).into(),
            turn.speaker.as_ref().map(|s| s.as_str().to_owned()).into(),
            millis(turn.at).into(),
        ],
    ))
    .await
    .map_err(|e| match e.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => {
            StoreError::Contended(format!("turn {} of session {id} was appended meanwhile", turn.turn))
        }
        _ => StoreError::Db(e),
    })?;
    Ok(())
}

impl SqliteStore {
    /// Apply `set` (with `value` for its one placeholder, if any) to a session whose unfinished
    /// extraction `claimant` holds; refused when it does not hold it.
    async fn update_held_claim(
        &self,
        id: &SessionId,
        claimant: &str,
        set: &str,
        value: Option<i64>,
    ) -> Result<(), StoreError> {
        let txn = self.begin_write().await?;
        let mut values: Vec<sea_orm::Value> = value.into_iter().map(Into::into).collect();
        values.extend([id.as_str().into(), claimant.into()]);
        let result = txn
            .execute_raw(stmt(
                &format!(
                    "UPDATE sessions SET {set} \
                     WHERE id = ? AND extraction_claimed_by = ? AND extraction_finished_at IS NULL"
                ),
                values,
            ))
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::Duplicate(format!(
                "{claimant} does not hold the extraction of session {id}"
            )));
        }
        txn.commit().await?;
        Ok(())
    }
}

pub(crate) const SESSION_COLUMNS: &str =
    "id, agent_id, user_id, project_id, started_at, ended_at, scope_kind, scope_id";
const TURN_COLUMNS: &str =
    "session_id, turn, role, speaker, content, coalesce(said_at, created_at) AS said_at, created_at";
const TURN_INSERT_COLUMNS: &str = "session_id, turn, role, content, created_at, speaker, said_at";

#[async_trait]
impl TurnBuffer for SqliteStore {
    async fn start_session(&self, session: Session, event: AuditEvent) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        txn.execute_raw(stmt(
            &format!("INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            [
                session.id.as_str().into(),
                session.agent_id.as_str().into(),
                session.user_id.as_str().into(),
                session.project_id.as_ref().map(|p| p.as_str().to_owned()).into(),
                millis(session.started_at).into(),
                session.ended_at.map(millis).into(),
                session.scope.as_ref().map(|s| s.kind().as_str().to_owned()).into(),
                session.scope.as_ref().map(|s| s.id().to_owned()).into(),
            ],
        ))
        .await
        .map_err(|e| match e.sql_err() {
            Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => {
                StoreError::Duplicate(format!("session {} already exists", session.id))
            }
            _ => StoreError::Db(e),
        })?;
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn append_turn(&self, turn: SessionTurn) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        insert_turn(&txn, &turn).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn last_turn(&self, id: &SessionId) -> DomainResult<Option<SessionTurn>> {
        let row = self
            .reader
            .query_one_raw(stmt(
                &format!(
                    "SELECT {TURN_COLUMNS} FROM session_turns WHERE session_id = ? ORDER BY turn DESC LIMIT 1"
                ),
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(turn_from_row).transpose()?)
    }

    async fn end_session(
        &self,
        id: &SessionId,
        at: Timestamp,
        extraction_requested: bool,
        event: AuditEvent,
    ) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        let result = txn
            .execute_raw(stmt(
                "UPDATE sessions SET ended_at = ?, extraction_requested = ? WHERE id = ? AND ended_at IS NULL",
                [millis(at).into(), i64::from(extraction_requested).into(), id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        if result.rows_affected() == 0 {
            let exists = txn
                .query_one_raw(stmt("SELECT 1 AS one FROM sessions WHERE id = ?", [id.as_str().into()]))
                .await;
            return Err(match exists.map_err(StoreError::from)? {
                Some(_) => StoreError::Duplicate(format!("session {id} has already ended")),
                None => StoreError::NotFound { what: "session", id: id.to_string() },
            }
            .into());
        }
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn session(&self, id: &SessionId) -> DomainResult<Option<Session>> {
        let row = self
            .reader
            .query_one_raw(stmt(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?"),
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(session_from_row).transpose()?)
    }

    async fn turn(&self, id: &SessionId, turn: u32) -> DomainResult<Option<SessionTurn>> {
        let row = self
            .reader
            .query_one_raw(stmt(
                &format!("SELECT {TURN_COLUMNS} FROM session_turns WHERE session_id = ? AND turn = ?"),
                [id.as_str().into(), i64::from(turn).into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(turn_from_row).transpose()?)
    }

    async fn turns(&self, id: &SessionId) -> DomainResult<Vec<SessionTurn>> {
        let rows = self
            .reader
            .query_all_raw(stmt(
                &format!("SELECT {TURN_COLUMNS} FROM session_turns WHERE session_id = ? ORDER BY turn"),
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(turn_from_row).collect::<Result<_, _>>()?)
    }
}

#[async_trait]
impl ExtractionClaims for SqliteStore {
    async fn claim_extraction(
        &self,
        id: &SessionId,
        claimant: &str,
        terms: ClaimTerms,
    ) -> DomainResult<ExtractionClaim> {
        let txn = self.begin_write().await?;
        // One conditional UPDATE on the single writer: of concurrent claimants at most one
        // finds the session claimable.
        let claimed = txn
            .query_one_raw(stmt(
                "UPDATE sessions SET extraction_claimed_by = ?, extraction_claimed_at = ?, \
                 extraction_attempts = extraction_attempts + 1 \
                 WHERE id = ? AND ended_at IS NOT NULL AND extraction_finished_at IS NULL \
                 AND extraction_attempts < ? \
                 AND (extraction_claimed_by IS NULL OR extraction_claimed_at < ?) \
                 RETURNING extraction_attempts",
                [
                    claimant.into(),
                    millis(terms.at).into(),
                    id.as_str().into(),
                    i64::from(terms.max_attempts).into(),
                    millis(terms.lapsed_before).into(),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        if let Some(row) = claimed {
            let attempt: i64 = row.try_get("", "extraction_attempts").map_err(StoreError::from)?;
            txn.commit().await.map_err(StoreError::from)?;
            let attempt = u32::try_from(attempt).map_err(|e| corrupt("sessions", e))?;
            return Ok(ExtractionClaim::Claimed { attempt });
        }
        let row = txn
            .query_one_raw(stmt(
                "SELECT ended_at, extraction_claimed_by, extraction_claimed_at, extraction_finished_at, \
                 extraction_attempts FROM sessions WHERE id = ?",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?
            .ok_or_else(|| StoreError::NotFound { what: "session", id: id.to_string() })?;
        let get = |column: &str| row.try_get::<Option<i64>>("", column).map_err(StoreError::from);
        let by: Option<String> = row.try_get("", "extraction_claimed_by").map_err(StoreError::from)?;
        let attempts =
            u32::try_from(get("extraction_attempts")?.unwrap_or(0)).map_err(|e| corrupt("sessions", e))?;
        let live = get("extraction_claimed_at")?.is_some_and(|at| at >= millis(terms.lapsed_before));
        Ok(match (get("ended_at")?, get("extraction_finished_at")?, by) {
            (None, _, _) => ExtractionClaim::NotEnded,
            (Some(_), Some(_), by) => ExtractionClaim::Done { by: by.unwrap_or_default() },
            (Some(_), None, Some(by)) if live => ExtractionClaim::InProgress { by },
            (Some(_), None, _) => ExtractionClaim::Exhausted { attempts },
        })
    }

    async fn finish_extraction(&self, id: &SessionId, claimant: &str, at: Timestamp) -> DomainResult<()> {
        Ok(self.update_held_claim(id, claimant, "extraction_finished_at = ?", Some(millis(at))).await?)
    }

    async fn release_extraction(&self, id: &SessionId, claimant: &str) -> DomainResult<()> {
        let set = "extraction_claimed_by = NULL, extraction_claimed_at = NULL";
        Ok(self.update_held_claim(id, claimant, set, None).await?)
    }

    async fn pending_extractions(&self, limit: usize, terms: ClaimTerms) -> DomainResult<Vec<SessionId>> {
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT id FROM sessions WHERE extraction_requested = 1 AND extraction_finished_at IS NULL \
                 AND ended_at IS NOT NULL AND extraction_attempts < ? \
                 AND (extraction_claimed_by IS NULL OR extraction_claimed_at < ?) \
                 ORDER BY ended_at, id LIMIT ?",
                [
                    i64::from(terms.max_attempts).into(),
                    millis(terms.lapsed_before).into(),
                    i64::try_from(limit).unwrap_or(i64::MAX).into(),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        let ids = rows
            .iter()
            .map(|row| {
                let id: String = row.try_get("", "id")?;
                SessionId::new(id).map_err(|e| corrupt("sessions", e))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(ids)
    }
}

#[async_trait]
impl retold_domain::Retention for SqliteStore {
    async fn purge_search_traces(&self, before: Timestamp, dry_run: bool) -> DomainResult<u64> {
        // Traces still waiting in memory are written first, so they are counted too.
        self.traces.flush().await;
        let at = vec![sea_orm::Value::from(millis(before))];
        if dry_run {
            return Ok(crate::snapshots::scalar(
                &self.reader,
                "SELECT count(*) FROM search_log WHERE at < ?",
                at,
            )
            .await?);
        }
        // In batches, each its own transaction: the first run on a busy store has hundreds of
        // megabytes to delete, and writes wait only for one batch at a time.
        let mut deleted = 0;
        loop {
            let txn = self.begin_write().await?;
            let batch = txn
                .execute_raw(stmt(
                    &format!(
                        "DELETE FROM search_log WHERE id IN (SELECT id FROM search_log WHERE at < ? LIMIT {})",
                        retold_store_sql::PURGE_BATCH
                    ),
                    at.clone(),
                ))
                .await
                .map_err(StoreError::from)?
                .rows_affected();
            txn.commit().await.map_err(StoreError::from)?;
            deleted += batch;
            if batch < retold_store_sql::PURGE_BATCH {
                return Ok(deleted);
            }
        }
    }

    async fn purge_turns(
        &self,
        before: Timestamp,
        force: bool,
        dry_run: bool,
        event: AuditEvent,
    ) -> DomainResult<retold_domain::RetentionReport> {
        let before = millis(before);
        let old = "EXISTS (SELECT 1 FROM session_turns t WHERE t.session_id = s.id AND t.created_at < ?)";
        let eligible = if force { "1" } else { "s.extraction_finished_at IS NOT NULL" };
        let db = &self.reader;
        let at = || vec![sea_orm::Value::from(before)];
        use crate::snapshots::scalar;
        let sessions =
            scalar(db, &format!("SELECT count(*) FROM sessions s WHERE {old} AND {eligible}"), at()).await?;
        let skipped =
            scalar(db, &format!("SELECT count(*) FROM sessions s WHERE {old} AND NOT ({eligible})"), at())
                .await?;
        let turns = scalar(
            db,
            &format!(
                "SELECT count(*) FROM session_turns t JOIN sessions s ON s.id = t.session_id \
             WHERE t.created_at < ? AND {eligible}"
            ),
            at(),
        )
        .await?;
        let report = retold_domain::RetentionReport { sessions, turns, skipped_sessions: skipped };
        if dry_run || turns == 0 {
            return Ok(report);
        }
        let txn = self.begin_write().await?;
        let deleted = txn
            .execute_raw(stmt(
                &format!(
                    "DELETE FROM session_turns WHERE created_at < ? AND session_id IN \
                     (SELECT s.id FROM sessions s WHERE {eligible})"
                ),
                [before.into()],
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        let mut event = event;
        event.details.insert("turns".into(), deleted.to_string());
        event.details.insert("sessions".into(), sessions.to_string());
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(retold_domain::RetentionReport { turns: deleted, ..report })
    }
}
