//! Retold's search pipeline (seed sections 5, 10, 11, 12), written against the domain's
//! ports only: eligible ids first, then the dense, lexical and entity channels over that same
//! set, reciprocal rank fusion, result control (episodic freshness, relevance gate, duplicate
//! collapse, optional reranker, token budget), an explanation per result and one complete
//! search_log trace per request; plus `memory_get`.

mod config;
mod fusion;
mod get;
mod passage;
mod pipeline;
mod query;
mod request;
mod retriever;
mod rewrite;
mod when;

pub use crate::config::{FusionWeights, LexicalStemming, RerankerPlacement, RetrieveConfig, Substance};
pub use crate::fusion::{rrf, weighted_rrf};
pub use crate::passage::{Passage, passage, query_words};
pub use crate::pipeline::{Admission, NewerFirst, ResultBudget, shown_tokens, text_tokens};
pub use crate::request::{
    Channels, DenseMatch, EntityMatch, LexicalMatch, RecordDetail, SearchHit, SearchRequest, SearchResponse,
};
pub use crate::retriever::{RetrievePorts, Retriever};
pub use crate::rewrite::{HostedLLMQueryRewriter, NoRewriter, QueryRewriter, Rewrite};
pub use crate::when::{TimeWindow, time_windows};

#[cfg(test)]
mod tests;
