//! Query rewriting (seed section 12): the port and the default that leaves queries alone.

use async_trait::async_trait;
use retold_domain::Result;

/// What a rewriter did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rewrite {
    /// Rewriting is off: the raw query is used.
    Off,
    /// The rewriter produced this query.
    Rewritten(String),
    /// The rewriter failed or timed out: the raw query is used.
    Failed(String),
    /// The rewrite was refused (for example it introduced a name absent from the query and
    /// context): the raw query is used.
    Refused(String),
}

/// Turns a raw request plus recent turns into a clearer search phrase.
#[async_trait]
pub trait QueryRewriter: Send + Sync {
    /// Rewrite `query` using `context` (latest user and assistant turns).
    async fn rewrite(&self, query: &str, context: &[String]) -> Result<Rewrite>;
}

/// The default: rewriting off.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRewriter;

#[async_trait]
impl QueryRewriter for NoRewriter {
    async fn rewrite(&self, _query: &str, _context: &[String]) -> Result<Rewrite> {
        Ok(Rewrite::Off)
    }
}
