//! Hosted model calls behind the domain's `CompletionClient` port (seed section 15).
//!
//! One client speaks two wire protocols, chosen by model name: the Anthropic Messages API
//! (structured output through a forced tool call) and OpenAI Chat Completions (structured
//! output through a strict `json_schema` response format). Each attempt has a timeout;
//! 429, 5xx, 529, timeouts and transport errors are retried a bounded number of times with
//! exponential backoff (honouring `retry-after`); token usage is returned and traced. API keys
//! come from configuration or the provider's usual environment variable and are never logged.

mod anthropic;
mod client;
mod config;
mod error;
#[cfg(feature = "fake-provider")]
pub mod fake;
mod openai;

pub use crate::client::{HostedClient, install_tls_provider};
pub use crate::config::{ApiKey, HostedConfig, Provider, ProviderConfig};
pub use crate::error::HostedError;
