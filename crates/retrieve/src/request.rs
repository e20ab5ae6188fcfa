//! The search and get requests and their answers.

use crate::passage::Passage;
use retold_domain::{
    ConflictLink, EntityId, LinkRole, MatchedTerm, MemoryRecord, MemoryType, Origin, RecordEntityLink,
    RecordId, RewriteStatus, SearchId, Timestamp,
};

/// Which channels and stages run. The shipped default runs everything; evaluation switches
/// parts off to compare configurations on the same store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channels {
    pub dense: bool,
    pub lexical: bool,
    pub entity: bool,
    /// Freshness, relevance gate, duplicate collapse, reranker and token budget.
    pub result_control: bool,
}

impl Default for Channels {
    fn default() -> Self {
        Self { dense: true, lexical: true, entity: true, result_control: true }
    }
}

/// `memory_search`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: String,
    pub limit: Option<usize>,
    pub types: Option<Vec<MemoryType>>,
    pub event_from: Option<Timestamp>,
    pub event_to: Option<Timestamp>,
    pub include_history: bool,
    /// Also return provisional records that lost a conflict (seed section 7), marked so.
    pub include_conflicts: bool,
    /// Only records of these origins (a search for distilled memories only asks for
    /// `Memory`); `None` means both.
    pub origins: Option<Vec<Origin>>,
    /// Also the turn records of the session the principal names. Left out by default: the
    /// caller is having that conversation, so it already holds those turns.
    pub include_current_session: bool,
    /// Latest user and assistant turns, for the query rewriter.
    pub context: Vec<String>,
    /// This search's token budget, in place of `retrieval.token_budget`.
    pub token_budget: Option<usize>,
    pub channels: Channels,
}

impl SearchRequest {
    /// A plain query with every default.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            limit: None,
            types: None,
            event_from: None,
            event_to: None,
            include_history: false,
            include_conflicts: false,
            origins: None,
            include_current_session: false,
            context: Vec::new(),
            token_budget: None,
            channels: Channels::default(),
        }
    }
}

/// How the dense channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseMatch {
    pub rank: u32,
    pub cosine: f32,
}

/// How the lexical channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalMatch {
    pub rank: u32,
    pub bm25: f64,
    pub matched: Vec<MatchedTerm>,
    pub query_terms: usize,
}

/// How the entity channel saw a record.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMatch {
    pub rank: u32,
    pub entity_id: EntityId,
    pub role: LinkRole,
}

/// One result with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub record: MemoryRecord,
    /// 1-based position in the response.
    pub rank: u32,
    /// Fused score after freshness; with the reranker on, its fusion with the reranker's order.
    pub score: f64,
    pub fused_rank: u32,
    pub dense: Option<DenseMatch>,
    /// The dense channel's sentence list (`retrieval.fusion.sentences`): the record's rank
    /// there by its best sentence, and its own vector's cosine.
    pub sentence: Option<DenseMatch>,
    /// The dense channel's list of the records inside the time the query names
    /// (`retrieval.fusion.window`): the record's rank there, and its own cosine.
    pub window: Option<DenseMatch>,
    pub lexical: Option<LexicalMatch>,
    pub entity: Option<EntityMatch>,
    pub explanation: String,
    /// The part of a long record the result shows (`retrieval.passage_tokens`); `None` when
    /// the whole content is shown.
    pub passage: Option<Passage>,
}

/// A record's dense channel match from any of its lists (records, sentences, the query's
/// time), the first that found it: one channel, read with the record's own cosine (the
/// gate, the orchestrator's admission).
pub(crate) fn any_dense_list(lists: [&Option<DenseMatch>; 3]) -> Option<&DenseMatch> {
    lists.into_iter().find_map(Option::as_ref)
}

impl SearchHit {
    /// The record's own vector's cosine with the query when any of the dense channel's lists
    /// (records, sentences, the query's time) found it: what the relevance gate reads.
    pub fn dense_cosine(&self) -> Option<f32> {
        any_dense_list([&self.dense, &self.sentence, &self.window]).map(|d| d.cosine)
    }

    /// What the result shows of its record: the passage, or the whole content.
    pub fn shown(&self) -> &str {
        crate::passage::shown(self.passage.as_ref(), self.record.content.as_str())
    }
}

/// The answer to `memory_search`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResponse {
    /// The search_log row that explains this response.
    pub search_id: SearchId,
    pub hits: Vec<SearchHit>,
    pub eligible_count: usize,
    pub rewrite_status: RewriteStatus,
}

/// `memory_get`: a record with everything needed to inspect it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDetail {
    pub record: MemoryRecord,
    pub links: Vec<RecordEntityLink>,
    /// Conflict links whose other side the principal may read.
    pub conflicts: Vec<ConflictLink>,
    /// Older records this one replaced, newest first (following `supersedes_id`).
    pub supersedes: Vec<MemoryRecord>,
    /// Newer records that replaced this one.
    pub superseded_by: Vec<RecordId>,
}
