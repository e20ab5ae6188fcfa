//! The search_log table: one JSON trace per search.

use async_trait::async_trait;
use retold_domain::{AgentId, Result as DomainResult, SearchId, SearchLogStore, SearchTrace, UserId};
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};

use crate::convert::millis;
use crate::error::{StoreError, corrupt};
use crate::store::{SqliteStore, stmt};

fn trace_json(trace: &SearchTrace) -> Value {
    let pairs = |items: &[(String, String)]| -> Value {
        items
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    json!({
        "id": trace.id.as_str(),
        "at": trace.at.to_rfc3339(),
        "principal": {"agent_id": trace.agent_id.as_str(), "user_id": trace.user_id.as_str()},
        "request": pairs(&trace.request),
        "query": trace.query,
        "rewrite_status": trace.rewrite_status.as_str(),
        "rewrite_note": trace.rewrite_note,
        "eligible_count": trace.eligible_count,
        "channels": trace.channels.iter().map(|(name, candidates)| (name.as_str().to_owned(), Value::from(
            candidates.iter().map(|c| json!({
                "record_id": c.record_id.as_str(), "rank": c.rank, "score": c.score, "detail": c.detail,
            })).collect::<Vec<_>>()
        ))).collect::<serde_json::Map<_, _>>(),
        "fused": trace.fused.iter().map(|(id, score)| json!({"record_id": id.as_str(), "score": score})).collect::<Vec<_>>(),
        "drops": trace.drops.iter().map(|d| json!({"record_id": d.record_id.as_str(), "stage": d.stage.as_str(), "reason": d.reason})).collect::<Vec<_>>(),
        "notes": trace.notes.iter().map(|n| json!({"stage": n.stage.as_str(), "note": n.note})).collect::<Vec<_>>(),
        "results": trace.results.iter().map(|r| json!({
            "record_id": r.record_id.as_str(), "rank": r.rank, "score": r.score, "explanation": r.explanation,
        })).collect::<Vec<_>>(),
        "timings_us": trace.timings_us.iter().map(|(k, v)| (k.as_str().to_owned(), Value::from(*v))).collect::<serde_json::Map<_, _>>(),
    })
}

#[async_trait]
impl SearchLogStore for SqliteStore {
    async fn append_trace(&self, trace: &SearchTrace) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        txn.execute_raw(stmt(
            "INSERT INTO search_log (id, at, agent_id, user_id, trace) VALUES (?, ?, ?, ?, ?)",
            [
                trace.id.as_str().into(),
                millis(trace.at).into(),
                trace.agent_id.as_str().into(),
                trace.user_id.as_str().into(),
                trace_json(trace).to_string().into(),
            ],
        ))
        .await
        .map_err(StoreError::from)?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn trace(&self, id: &SearchId) -> DomainResult<Option<(AgentId, UserId, String)>> {
        let row = self
            .reader
            .query_one_raw(stmt(
                "SELECT agent_id, user_id, trace FROM search_log WHERE id = ?",
                [id.as_str().into()],
            ))
            .await
            .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let agent: String = row.try_get("", "agent_id").map_err(StoreError::from)?;
        let user: String = row.try_get("", "user_id").map_err(StoreError::from)?;
        let trace: String = row.try_get("", "trace").map_err(StoreError::from)?;
        Ok(Some((
            AgentId::new(agent).map_err(|e| corrupt("search_log", e))?,
            UserId::new(user).map_err(|e| corrupt("search_log", e))?,
            trace,
        )))
    }
}
