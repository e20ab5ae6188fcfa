//! Query rewriting (seed section 12): the port, the default that leaves queries alone, and
//! the hosted-model rewriter (prompt `rewrite_v1`, next to this file).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use retold_domain::{CompletionClient, CompletionRequest, Result, WordStemmer};

use retold_domain::text::{KnownWords, is_value, unicode61_tokens, words};

/// The rewrite prompt, version `rewrite_v1`.
const REWRITE_V1: &str = include_str!("prompts/rewrite_v1.md");
/// Longest phrase accepted from the model, in characters.
const MAX_PHRASE_CHARS: usize = 300;

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

/// Rewriting through a hosted model (`retrieval.rewrite.model`) with a deadline; on timeout
/// or failure the raw query is used, and a phrase that introduces a name, date or number
/// absent from the query and the context is refused.
#[derive(Clone)]
pub struct HostedLLMQueryRewriter {
    client: Arc<dyn CompletionClient>,
    model: String,
    timeout: Duration,
    /// What tells an inflection of a known word from a new one, in the phrase's guard.
    stemmer: Arc<dyn WordStemmer>,
}

impl std::fmt::Debug for HostedLLMQueryRewriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedLLMQueryRewriter")
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl HostedLLMQueryRewriter {
    /// The prompt version.
    pub const PROMPT_VERSION: &'static str = "rewrite_v1";

    /// A rewriter calling `model` through `client`, giving up after `timeout`.
    pub fn new(
        client: Arc<dyn CompletionClient>,
        model: impl Into<String>,
        timeout: Duration,
        stemmer: Arc<dyn WordStemmer>,
    ) -> Self {
        Self { client, model: model.into(), timeout, stemmer }
    }

    fn prompt(query: &str, context: &[String]) -> String {
        let mut user = String::from("Latest turns of the conversation:\n");
        if context.is_empty() {
            user.push_str("(none)\n");
        }
        for turn in context {
            user.push_str(&format!("- {turn}\n"));
        }
        user.push_str(&format!("\nQuestion: {query}\n"));
        user
    }
}

/// The names, dates and numbers `phrase` has that neither `query` nor `context` mentions. An
/// inflection of a known word (the same stem under `stemmer`) counts as known ("Explanation
/// style" after "explanations").
pub(crate) fn introduced_values(
    phrase: &str,
    query: &str,
    context: &[String],
    stemmer: &dyn WordStemmer,
) -> Vec<String> {
    let said = std::iter::once(query).chain(context.iter().map(String::as_str)).flat_map(unicode61_tokens);
    let known = KnownWords::new(said, stemmer);
    let mut introduced = Vec::new();
    for token in words(phrase).filter(|t| is_value(t)) {
        let word = token.to_lowercase();
        if !known.knows(&word) && !introduced.contains(&word) {
            introduced.push(word);
        }
    }
    introduced
}

#[async_trait]
impl QueryRewriter for HostedLLMQueryRewriter {
    async fn rewrite(&self, query: &str, context: &[String]) -> Result<Rewrite> {
        let request = CompletionRequest {
            model: self.model.clone(),
            system: REWRITE_V1.to_owned(),
            user: Self::prompt(query, context),
            schema_name: Self::PROMPT_VERSION.to_owned(),
            schema_json: serde_json::json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["query"],
                "properties": {"query": {"type": "string"}},
            })
            .to_string(),
            max_tokens: 200,
        };
        let answer = match tokio::time::timeout(self.timeout, self.client.complete(request)).await {
            Err(_) => {
                return Ok(Rewrite::Failed(format!("no answer within {} ms", self.timeout.as_millis())));
            }
            Ok(Err(error)) => return Ok(Rewrite::Failed(error.to_string())),
            Ok(Ok(answer)) => answer,
        };
        let phrase = serde_json::from_str::<serde_json::Value>(&answer.json)
            .ok()
            .and_then(|v| v["query"].as_str().map(|q| q.trim().to_owned()));
        let phrase = match phrase {
            Some(p) if !p.is_empty() && p.chars().count() <= MAX_PHRASE_CHARS => p,
            Some(p) if !p.is_empty() => {
                return Ok(Rewrite::Failed(format!(
                    "the phrase is longer than {MAX_PHRASE_CHARS} characters"
                )));
            }
            _ => return Ok(Rewrite::Failed("the answer has no query phrase".into())),
        };
        let introduced = introduced_values(&phrase, query, context, self.stemmer.as_ref());
        if !introduced.is_empty() {
            return Ok(Rewrite::Refused(format!(
                "{phrase:?} introduces {introduced:?}, absent from the query and context"
            )));
        }
        Ok(Rewrite::Rewritten(phrase))
    }
}
