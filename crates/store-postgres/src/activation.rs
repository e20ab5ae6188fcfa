//! Activation decisions (`activation_decisions`) and session profiles (`session_profiles`).

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    ActivationDecision, ActivationStore, Ambience, AuditEvent, DomainError, ProfileBlock, ProfileEntry,
    RecordId, Result as DomainResult, ReviewItem, ReviewVerdict, Scope, SessionId, Timestamp,
};
use sea_orm::{ConnectionTrait, QueryResult, TransactionTrait, Value};

use crate::convert::millis;
use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, insert_event, scope_clause, stmt};

fn at(value: i64, table: &'static str) -> Result<Timestamp, StoreError> {
    DateTime::<Utc>::from_timestamp_millis(value).ok_or_else(|| corrupt(table, format!("bad time {value}")))
}

fn decision_from_row(row: &QueryResult) -> Result<ActivationDecision, StoreError> {
    let bad = |e: DomainError| corrupt("activation_decisions", e);
    let conditions: String = row.try_get("", "conditions")?;
    let verdict: Option<String> = row.try_get("", "verdict")?;
    Ok(ActivationDecision {
        record_id: RecordId::new(row.try_get::<String>("", "record_id")?).map_err(bad)?,
        category: row.try_get("", "category")?,
        rule: row.try_get("", "rule")?,
        ambience: Ambience::parse(&row.try_get::<String>("", "ambience")?).map_err(bad)?,
        conditions: serde_json::from_str(&conditions).map_err(|e| corrupt("activation_decisions", e))?,
        basis: row.try_get("", "basis")?,
        decided_at: at(row.try_get("", "decided_at")?, "activation_decisions")?,
        verdict: verdict.as_deref().map(ReviewVerdict::parse).transpose().map_err(bad)?,
    })
}

#[async_trait]
impl ActivationStore for PostgresStore {
    async fn decisions_in(&self, scopes: &[Scope]) -> DomainResult<Vec<ActivationDecision>> {
        let mut values = Vec::new();
        let clause = scope_clause(scopes, &mut values);
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT d.* FROM activation_decisions d JOIN records r ON r.id = d.record_id \
                     WHERE {clause} ORDER BY d.record_id"
                ),
                values,
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(decision_from_row).collect::<Result<_, _>>()?)
    }

    async fn record_decisions(
        &self,
        changed: &[ActivationDecision],
        withdrawn: &[RecordId],
        reviews: &[ReviewItem],
        events: Vec<AuditEvent>,
    ) -> DomainResult<()> {
        if changed.is_empty() && withdrawn.is_empty() && reviews.is_empty() && events.is_empty() {
            return Ok(());
        }
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        for d in changed {
            txn.execute_raw(stmt(
                "INSERT INTO activation_decisions \
                 (record_id, category, rule, ambience, conditions, basis, decided_at, verdict) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (record_id) DO UPDATE SET category = excluded.category, rule = excluded.rule, \
                 ambience = excluded.ambience, conditions = excluded.conditions, basis = excluded.basis, \
                 decided_at = excluded.decided_at, verdict = excluded.verdict",
                [
                    d.record_id.as_str().into(),
                    d.category.as_str().into(),
                    d.rule.as_str().into(),
                    d.ambience.as_str().into(),
                    serde_json::to_string(&d.conditions).expect("strings serialise").into(),
                    d.basis.as_str().into(),
                    millis(d.decided_at).into(),
                    Value::from(d.verdict.map(|v| v.as_str().to_owned())),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        }
        for id in withdrawn {
            txn.execute_raw(stmt(
                "DELETE FROM activation_decisions WHERE record_id = ?",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
            // Its open activation review is moot: nobody needs to approve a record that is no
            // longer a candidate.
            txn.execute_raw(stmt(
                "DELETE FROM review_queue WHERE record_id = ? AND reason = 'activation' AND resolved_at IS NULL",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        }
        for item in reviews {
            // No conflict target: an existing id or an open review of the same record and
            // reason (the partial unique index `review_queue_open`) both keep the old row.
            txn.execute_raw(stmt(
                "INSERT INTO review_queue (id, record_id, reason, flagged_at) VALUES (?, ?, ?, ?) \
                 ON CONFLICT DO NOTHING",
                [
                    item.id.as_str().into(),
                    item.record_id.as_str().into(),
                    item.reason.as_str().into(),
                    millis(item.flagged_at).into(),
                ],
            ))
            .await
            .map_err(StoreError::from)?;
        }
        for event in &events {
            insert_event(&txn, event).await?;
        }
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn set_verdict(&self, record: &RecordId, verdict: ReviewVerdict) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        let n = txn
            .execute_raw(stmt(
                "UPDATE activation_decisions SET verdict = ? WHERE record_id = ?",
                [verdict.as_str().into(), record.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        txn.commit().await.map_err(StoreError::from)?;
        if n == 0 {
            return Err(DomainError::NotFound { what: "activation decision", id: record.to_string() });
        }
        Ok(())
    }

    async fn put_profile(&self, profile: &ProfileBlock, event: AuditEvent) -> DomainResult<()> {
        let entries: Vec<serde_json::Value> = profile
            .entries
            .iter()
            .map(|e| serde_json::json!({"record_id": e.record_id.as_str(), "category": e.category, "why": e.why}))
            .collect();
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        // Check-and-write in one statement: `ON CONFLICT DO NOTHING` on the primary key
        // (session_id) is atomic across processes, so of two concurrent profiles for one
        // session exactly one is inserted and the other sees no affected row (a Conflict). The
        // table refuses UPDATE, so an upsert is not an option.
        let inserted = txn
            .execute_raw(stmt(
                "INSERT INTO session_profiles (session_id, created_at, text, entries, tokens, cut, content_hash) \
                 VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING",
                [
                    profile.session_id.as_str().into(),
                    millis(profile.created_at).into(),
                    profile.text.as_str().into(),
                    serde_json::Value::from(entries).to_string().into(),
                    i64::from(profile.tokens).into(),
                    i64::from(profile.cut).into(),
                    profile.content_hash.as_str().into(),
                ],
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        if inserted == 0 {
            return Err(DomainError::Conflict(format!(
                "session {} has its profile already",
                profile.session_id
            )));
        }
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn profile(&self, session: &SessionId) -> DomainResult<Option<ProfileBlock>> {
        let row = self
            .db
            .query_one_raw(stmt(
                "SELECT * FROM session_profiles WHERE session_id = ?",
                [session.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let table = "session_profiles";
        let entries: String = row.try_get("", "entries").map_err(StoreError::from)?;
        let entries: Vec<serde_json::Value> =
            serde_json::from_str(&entries).map_err(|e| corrupt(table, e))?;
        let entries = entries
            .iter()
            .map(|e| {
                Ok(ProfileEntry {
                    record_id: RecordId::new(e["record_id"].as_str().unwrap_or_default().to_owned())
                        .map_err(|e| corrupt(table, e))?,
                    category: e["category"].as_str().unwrap_or_default().to_owned(),
                    why: e["why"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let number = |column: &str| -> Result<u32, StoreError> {
            let n: i64 = row.try_get("", column)?;
            u32::try_from(n).map_err(|e| corrupt(table, e))
        };
        Ok(Some(ProfileBlock {
            session_id: session.clone(),
            created_at: at(row.try_get("", "created_at").map_err(StoreError::from)?, table)?,
            text: row.try_get("", "text").map_err(StoreError::from)?,
            entries,
            tokens: number("tokens")?,
            cut: number("cut")?,
            content_hash: row.try_get("", "content_hash").map_err(StoreError::from)?,
        }))
    }
}
