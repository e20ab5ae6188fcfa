//! Audit events: the append-only account of why a memory changed (seed section 13).

use std::collections::BTreeMap;

use crate::ids::{AgentId, EventId, RecordId};
use crate::record::Timestamp;

/// One append-only event.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    pub id: EventId,
    pub at: Timestamp,
    /// Dotted event name, e.g. `record.created`, `record.superseded`, `entity.alias_added`.
    pub kind: String,
    /// The record the event is about, when there is one.
    pub record_id: Option<RecordId>,
    /// The agent whose request caused the event, when there is one.
    pub actor: Option<AgentId>,
    /// Structured details (scores, reasons, `attribute_aliased_from`, …). Values are text;
    /// the store keeps them as a JSON object.
    pub details: BTreeMap<String, String>,
}
