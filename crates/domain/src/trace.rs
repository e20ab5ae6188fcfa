//! The search_log trace: one complete account of a search (seed sections 11 and 13).

use crate::ids::{AgentId, RecordId, SearchId, UserId};
use crate::record::Timestamp;

/// Declares a closed set whose wire form is a fixed lower-case name.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// A candidate generator (seed section 11).
    Channel {
        Dense => "dense",
        Lexical => "lexical",
        Entity => "entity",
        /// The dense channel's second list: records ranked by their best sentence vector.
        Sentences => "sentences",
        /// The dense channel over the records inside the time the query names.
        Window => "window",
    }
}

named_enum! {
    /// What the query rewriter did (seed section 12).
    RewriteStatus {
        /// Rewriting is off (`NoRewriter`).
        Off => "off",
        /// The rewriter answered with the query itself.
        Unchanged => "unchanged",
        Rewritten => "rewritten",
        /// Timeout or error: the raw query ran.
        Failed => "failed",
        /// The phrase introduced a name or number absent from query and context: the raw query ran.
        Refused => "refused",
    }
}

named_enum! {
    /// A timed step of the search pipeline, as named in `timings_us`.
    PipelineStage {
        Eligibility => "eligibility",
        Rewrite => "rewrite",
        Dense => "dense",
        Lexical => "lexical",
        Entity => "entity",
        Fusion => "fusion",
        Fetch => "fetch",
        Freshness => "freshness",
        Gate => "gate",
        Duplicates => "duplicates",
        Reranker => "reranker",
        /// Of two alike results, the newer ranked just above the older.
        NewerFirst => "newer_first",
        Budget => "budget",
        Total => "total",
    }
}

named_enum! {
    /// The stage that removed a candidate. The reranker only reorders, so it removes nothing;
    /// what happened to it is a `TraceNote`.
    DropStage {
        Eligibility => "eligibility",
        /// A fused record the store no longer returned (removed since eligibility).
        Fetch => "fetch",
        Gate => "gate",
        Duplicate => "duplicate",
        Budget => "budget",
        Limit => "limit",
    }
}

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
    pub stage: DropStage,
    pub reason: String,
}

/// What a stage did that removed nothing (a reranker that failed and kept the RRF order).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceNote {
    pub stage: PipelineStage,
    pub note: String,
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
    pub rewrite_status: RewriteStatus,
    /// Why a rewrite failed or was refused, and the refused phrase.
    pub rewrite_note: Option<String>,
    pub eligible_count: u64,
    /// Each channel that ran and its candidates.
    pub channels: Vec<(Channel, Vec<TraceCandidate>)>,
    /// Fused order before result control: record and RRF score.
    pub fused: Vec<(RecordId, f64)>,
    /// Every candidate a stage removed, and why. Only real removals.
    pub drops: Vec<TraceDrop>,
    /// What stages did that removed nothing, such as a reranker fallback.
    pub notes: Vec<TraceNote>,
    pub results: Vec<TraceResult>,
    /// Each stage and its duration in microseconds.
    pub timings_us: Vec<(PipelineStage, u64)>,
}
