//! The orchestrator's decisions (`turn_decisions`).

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, DecisionId, DecisionLog, Result as DomainResult, SessionId, TurnMemoryDecision,
};
use retold_store_sql::decisions::{DECISION_COLUMNS, decision_from_row, decision_values};
use sea_orm::ConnectionTrait;

use crate::error::StoreError;
use crate::store::{SqliteStore, insert_event, stmt};

#[async_trait]
impl DecisionLog for SqliteStore {
    async fn put_decision(&self, d: &TurnMemoryDecision, event: AuditEvent) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        txn.execute_raw(stmt(
            &format!("INSERT INTO turn_decisions ({DECISION_COLUMNS}) VALUES ({})", vec!["?"; 16].join(", ")),
            decision_values(d),
        ))
        .await
        .map_err(StoreError::from)?;
        insert_event(&txn, &event).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn decision(&self, id: &DecisionId) -> DomainResult<Option<TurnMemoryDecision>> {
        let row = self
            .reader
            .query_one_raw(stmt("SELECT * FROM turn_decisions WHERE id = ?", [id.as_str().into()]))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(decision_from_row).transpose()?)
    }

    async fn decisions_of(&self, session: &SessionId) -> DomainResult<Vec<TurnMemoryDecision>> {
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT * FROM turn_decisions WHERE session_id = ? ORDER BY created_at, id",
                [session.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(decision_from_row).collect::<Result<_, _>>()?)
    }
}
