//! The search_log trace: one complete account of a search (seed sections 11 and 13).

use crate::ids::{AgentId, RecordId, SearchId, UserId};
use crate::record::Timestamp;

/// One candidate of one channel.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceCandidate {
    pub record_id: RecordId,
    /// 1-based rank within the channel.
    pub rank: u32,
    /// The channel's own score (cosine, BM25, or the link role for entities).
    pub score: f64,
    /// Free-form detail (matched terms, entity and role).
    pub detail: String,
}

/// A candidate removed by a result-control stage.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceDrop {
    pub record_id: RecordId,
    /// `gate`, `duplicate`, `budget`, `limit`, `eligibility`.
    pub stage: String,
    pub reason: String,
}

/// One returned result.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceResult {
    pub record_id: RecordId,
    pub rank: u32,
    pub score: f64,
    pub explanation: String,
}

/// Everything one search decided.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchTrace {
    pub id: SearchId,
    pub at: Timestamp,
    pub agent_id: AgentId,
    pub user_id: UserId,
    /// The request as received, rendered as `key=value` pairs.
    pub request: Vec<(String, String)>,
    /// The query the channels ran (the raw query unless a rewriter changed it).
    pub query: String,
    /// `off`, `unchanged`, `rewritten`, `failed`, `refused`.
    pub rewrite_status: String,
    /// Why a rewrite failed or was refused, and the refused phrase.
    pub rewrite_note: Option<String>,
    pub eligible_count: u64,
    /// Channel name (`dense`, `lexical`, `entity`) and its candidates.
    pub channels: Vec<(String, Vec<TraceCandidate>)>,
    /// Fused order before result control: record and RRF score.
    pub fused: Vec<(RecordId, f64)>,
    pub drops: Vec<TraceDrop>,
    pub results: Vec<TraceResult>,
    /// Stage name and its duration in microseconds.
    pub timings_us: Vec<(String, u64)>,
}
