//! The search_log table: one JSON trace per search, appended off the request's path.
//! The search_log table: one JSON trace per search, written off the request's path by
//! `retold_store_sql::traces::TraceWriter`; this module holds the store's SQL.

use async_trait::async_trait;
use retold_domain::{AgentId, Result as DomainResult, SearchId, SearchLogStore, SearchTrace, UserId};
use retold_store_sql::traces::Row;
use sea_orm::{ConnectionTrait, Statement};

use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, stmt};

pub(crate) use retold_store_sql::traces::TraceWriter;

/// The INSERT of one trace row, for the writer task.
pub(crate) fn insert_trace(id: &str, row: &Row) -> Statement {
    stmt(
        "INSERT INTO search_log (id, at, agent_id, user_id, trace) VALUES (?, ?, ?, ?, ?)",
        [
            id.into(),
            row.at.into(),
            row.agent_id.as_str().into(),
            row.user_id.as_str().into(),
            row.trace.as_str().into(),
        ],
    )
}

#[async_trait]
impl SearchLogStore for PostgresStore {
    async fn append_trace(&self, trace: SearchTrace) -> DomainResult<()> {
        self.traces.hand(trace)
    }

    async fn trace(&self, id: &SearchId) -> DomainResult<Option<(AgentId, UserId, String)>> {
        let parse = |agent: String, user: String, trace: String| -> DomainResult<_> {
            Ok(Some((
                AgentId::new(agent).map_err(|e| corrupt("search_log", e))?,
                UserId::new(user).map_err(|e| corrupt("search_log", e))?,
                trace,
            )))
        };
        if let Some(row) = self.traces.waiting(id.as_str()) {
            return parse(row.agent_id, row.user_id, row.trace);
        }
        let row = self
            .db
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
        parse(agent, user, trace)
    }
}
