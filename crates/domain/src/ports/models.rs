//! The models the service calls: the embedder, the reranker, the entailment judge and a completion
//! client.

use async_trait::async_trait;

use crate::error::Result;

/// Scores survivors against the query (e.g. bge-reranker-v2-m3). Optional; off by default.
#[async_trait]
pub trait Reranker: Send + Sync {
    /// One score per document, higher is better.
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>>;
}

/// Which model produced an embedding; stored with every vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingModelInfo {
    pub name: String,
    pub version: u32,
    pub dims: u32,
}

/// Text → normalised vector.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// Which model this is.
    fn info(&self) -> &EmbeddingModelInfo;
    /// One L2-normalised vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// How strongly a piece of evidence entails a claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Entailment {
    /// In `[0, 1]`; compared against `ingestion.evidence.entail_floor`.
    pub score: f64,
    /// Which judge produced the score, for the audit event.
    pub judge: String,
}

/// Scores whether evidence entails content.
#[async_trait]
pub trait EntailmentJudge: Send + Sync {
    /// Score `evidence ⇒ claim`.
    async fn entails(&self, evidence: &str, claim: &str) -> Result<Entailment>;
}

/// A provider-neutral completion request with a JSON-schema-constrained answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    pub model: String,
    pub system: String,
    pub user: String,
    /// Name of the structured answer (tool / schema name).
    pub schema_name: String,
    /// JSON Schema of the answer, as text.
    pub schema_json: String,
    pub max_tokens: u32,
}

/// A structured answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionResponse {
    /// The structured answer, as JSON text matching the schema.
    pub json: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A hosted model call (Anthropic, OpenAI), chosen by model name.
#[async_trait]
pub trait CompletionClient: Send + Sync {
    /// Run one structured completion.
    async fn complete(&self, request: CompletionRequest) -> Result<CompletionResponse>;
}
