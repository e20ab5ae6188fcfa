//! Append-only events, search traces and turn decisions (seed: audit and search log; the
//! orchestrator's decision log).

use async_trait::async_trait;

use crate::audit::AuditEvent;
use crate::error::Result;
use crate::ids::{AgentId, RecordId, SearchId, SessionId, UserId};
use crate::trace::SearchTrace;

/// The append-only audit log (seed section 13).
#[async_trait]
pub trait AuditLog: Send + Sync {
    /// Append events that change nothing else (a rejected write, an admin action).
    async fn append(&self, events: Vec<AuditEvent>) -> Result<()>;
    /// Events about a record, oldest first.
    async fn record_events(&self, id: &RecordId) -> Result<Vec<AuditEvent>>;
    /// Events about a session (start, end, extraction runs), oldest first.
    async fn session_events(&self, id: &SessionId) -> Result<Vec<AuditEvent>>;
}

/// The search_log table.
#[async_trait]
pub trait SearchLogStore: Send + Sync {
    /// Append one trace. It may be written after this returns (the store's JSON of it
    /// too), but `trace` finds it from then on.
    async fn append_trace(&self, trace: SearchTrace) -> Result<()>;
    /// One trace as stored (JSON text), with the agent and user it belongs to.
    async fn trace(&self, id: &SearchId) -> Result<Option<(AgentId, UserId, String)>>;
}

/// The orchestrator's decisions, one per turn it was asked about.
#[async_trait]
pub trait DecisionLog: Send + Sync {
    /// Store a decision with its audit event, in one transaction.
    async fn put_decision(&self, decision: &crate::TurnMemoryDecision, event: AuditEvent) -> Result<()>;
    async fn decision(&self, id: &crate::DecisionId) -> Result<Option<crate::TurnMemoryDecision>>;
    /// A session's decisions, oldest first.
    async fn decisions_of(&self, session: &SessionId) -> Result<Vec<crate::TurnMemoryDecision>>;
}
