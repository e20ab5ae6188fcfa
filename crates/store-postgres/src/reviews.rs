//! The review queue (`review_queue`): due-review flagging and its resolutions.

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    AuditEvent, DueReviewRules, RecordId, Result as DomainResult, ReviewAction, ReviewId, ReviewItem,
    ReviewQueue, ReviewReason, Timestamp,
};
use sea_orm::{ConnectionTrait, QueryResult, TransactionTrait, Value};

use crate::convert::millis;
use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, insert_event, stmt};

const REVIEW_COLUMNS: &str = "id, record_id, reason, flagged_at, resolved_at, resolution";

fn at(value: i64) -> Result<Timestamp, StoreError> {
    DateTime::<Utc>::from_timestamp_millis(value)
        .ok_or_else(|| corrupt("review_queue", format!("bad time {value}")))
}

fn item_from_row(row: &QueryResult) -> Result<ReviewItem, StoreError> {
    let bad = |e: retold_domain::DomainError| corrupt("review_queue", e);
    let resolved_at: Option<i64> = row.try_get("", "resolved_at")?;
    let resolution: Option<String> = row.try_get("", "resolution")?;
    let resolved = match (resolved_at, resolution) {
        (Some(when), Some(how)) => Some((at(when)?, ReviewAction::parse(&how).map_err(bad)?)),
        (None, None) => None,
        _ => return Err(corrupt("review_queue", "resolved_at and resolution must be set together")),
    };
    Ok(ReviewItem {
        id: ReviewId::new(row.try_get::<String>("", "id")?).map_err(bad)?,
        record_id: RecordId::new(row.try_get::<String>("", "record_id")?).map_err(bad)?,
        reason: ReviewReason::parse(&row.try_get::<String>("", "reason")?).map_err(bad)?,
        flagged_at: at(row.try_get("", "flagged_at")?)?,
        resolved,
    })
}

const NOT_OPEN: &str = "NOT EXISTS (SELECT 1 FROM review_queue q WHERE q.record_id = r.id AND q.reason = ? AND q.resolved_at IS NULL)";

#[async_trait]
impl ReviewQueue for PostgresStore {
    async fn due_for_review(&self, rules: &DueReviewRules) -> DomainResult<Vec<(RecordId, ReviewReason)>> {
        let now = millis(rules.now);
        let queries: [(ReviewReason, String, Vec<Value>); 3] = [
            (
                ReviewReason::ExpiringProvisional,
                format!(
                    "SELECT r.id FROM records r WHERE r.status = 'provisional' AND r.expires_at > ? \
                     AND r.expires_at <= ? AND {NOT_OPEN} ORDER BY r.expires_at"
                ),
                vec![now.into(), millis(rules.expiring_before).into()],
            ),
            (
                ReviewReason::UnresolvedConflict,
                format!(
                    "SELECT r.id FROM records r WHERE r.status = 'provisional' AND EXISTS \
                     (SELECT 1 FROM record_conflicts c JOIN records w ON w.id = c.record_id \
                      WHERE c.conflicting_id = r.id AND w.status IN ('provisional', 'confirmed')) \
                     AND {NOT_OPEN} ORDER BY r.created_at"
                ),
                vec![],
            ),
            (
                ReviewReason::StaleLowConfidence,
                format!(
                    "SELECT r.id FROM records r WHERE r.status = 'confirmed' AND r.confidence < ? \
                     AND coalesce(r.last_reinforced_at, r.created_at) < ? AND {NOT_OPEN} ORDER BY r.created_at"
                ),
                vec![rules.low_confidence_below.into(), millis(rules.stale_before).into()],
            ),
        ];
        let mut due = Vec::new();
        for (reason, sql, mut values) in queries {
            values.push(reason.as_str().into());
            let rows = self.db.query_all_raw(stmt(&sql, values)).await.map_err(StoreError::from)?;
            for row in rows {
                let id: String = row.try_get_by_index(0).map_err(StoreError::from)?;
                due.push((RecordId::new(id).map_err(|e| corrupt("records", e))?, reason));
            }
        }
        Ok(due)
    }

    async fn add_reviews(&self, items: &[ReviewItem], event: AuditEvent) -> DomainResult<u64> {
        if items.is_empty() {
            return Ok(0);
        }
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        let mut added = 0;
        for item in items {
            // One open item per record and reason: the partial unique index `review_queue_open`
            // decides atomically across processes; an item already open is skipped.
            added += txn
                .execute_raw(stmt(
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
                .map_err(StoreError::from)?
                .rows_affected();
        }
        let mut event = event;
        event.details.insert("flagged".into(), added.to_string());
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(added)
    }

    async fn reviews(&self, open_only: bool, limit: usize) -> DomainResult<Vec<ReviewItem>> {
        let filter = if open_only { "WHERE resolved_at IS NULL" } else { "" };
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT {REVIEW_COLUMNS} FROM review_queue {filter} ORDER BY flagged_at DESC, id DESC LIMIT ?"
                ),
                [i64::try_from(limit).unwrap_or(i64::MAX).into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(item_from_row).collect::<Result<_, _>>()?)
    }

    async fn review(&self, id: &ReviewId) -> DomainResult<Option<ReviewItem>> {
        let row = self
            .db
            .query_one_raw(stmt(
                &format!("SELECT {REVIEW_COLUMNS} FROM review_queue WHERE id = ?"),
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(item_from_row).transpose()?)
    }

    async fn resolve_review(
        &self,
        id: &ReviewId,
        action: ReviewAction,
        at: Timestamp,
        event: AuditEvent,
    ) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        // A single conditional UPDATE: of two processes resolving the same item, the second
        // waits on the row lock, then finds it resolved and changes nothing.
        let changed = txn
            .execute_raw(stmt(
                "UPDATE review_queue SET resolved_at = ?, resolution = ? WHERE id = ? AND resolved_at IS NULL",
                [millis(at).into(), action.as_str().into(), id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?
            .rows_affected();
        if changed == 0 {
            return Err(retold_domain::DomainError::Conflict(format!("review {id} is resolved already")));
        }
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }
}
