//! The provider-neutral client: one attempt loop around the two wire formats.

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use retold_domain::{CompletionClient, CompletionRequest, CompletionResponse, Result as DomainResult};
use serde_json::Value;

use crate::config::{HostedConfig, Provider};
use crate::error::HostedError;
use crate::{anthropic, openai};

/// Longest provider error text kept in an error.
const MAX_ERROR_TEXT: usize = 300;

/// The hosted client (Anthropic and OpenAI, chosen by model name).
#[derive(Debug, Clone)]
pub struct HostedClient {
    http: reqwest::Client,
    config: HostedConfig,
}

/// Install rustls' ring provider for this process unless one is installed already (which
/// serves as well). Every reqwest client of the workspace needs one before it is built.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl HostedClient {
    /// A client. Installs the ring TLS provider for rustls when none is installed yet.
    pub fn new(config: HostedConfig) -> Result<Self, HostedError> {
        install_tls_provider();
        let http = reqwest::Client::builder()
            .user_agent(concat!("retold/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| HostedError::Transport { provider: "http client", message: e.to_string() })?;
        Ok(Self { http, config })
    }

    /// The configuration.
    pub fn config(&self) -> &HostedConfig {
        &self.config
    }

    /// Run one structured completion, retrying what may succeed on another attempt.
    pub async fn call(&self, request: &CompletionRequest) -> Result<CompletionResponse, HostedError> {
        let (provider, model) = Provider::for_model(&request.model)?;
        let settings = self.config.provider(provider);
        let key = settings
            .api_key
            .as_ref()
            .ok_or(HostedError::NoKey { provider: provider.as_str(), variable: provider.key_variable() })?;
        let schema: Value =
            serde_json::from_str(&request.schema_json).map_err(|e| HostedError::Malformed {
                provider: "caller",
                message: format!("the request's schema is not JSON: {e}"),
            })?;
        let base = settings.base_url.trim_end_matches('/');
        let (url, body) = match provider {
            Provider::Anthropic => {
                (format!("{base}{}", anthropic::PATH), anthropic::body(model, request, schema))
            }
            Provider::OpenAi => (format!("{base}{}", openai::PATH), openai::body(model, request, schema)),
        };
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            let (result, retry_after) = self.attempt(provider, &url, key.expose(), &body).await;
            let outcome = result.and_then(|answer| match provider {
                Provider::Anthropic => anthropic::parse(request, &answer),
                Provider::OpenAi => openai::parse(&answer),
            });
            match outcome {
                Ok(response) => {
                    tracing::info!(
                        provider = provider.as_str(),
                        model,
                        schema = %request.schema_name,
                        attempts = attempt + 1,
                        input_tokens = response.input_tokens,
                        output_tokens = response.output_tokens,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "hosted completion"
                    );
                    return Ok(response);
                }
                Err(error) if error.retryable() && attempt < self.config.max_retries => {
                    let wait = self.backoff(attempt, retry_after);
                    tracing::warn!(
                        provider = provider.as_str(),
                        model,
                        attempt = attempt + 1,
                        error = %error,
                        wait_ms = wait.as_millis() as u64,
                        "hosted completion failed; retrying"
                    );
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(error) => {
                    tracing::warn!(provider = provider.as_str(), model, attempts = attempt + 1, error = %error, "hosted completion failed");
                    return Err(error);
                }
            }
        }
    }

    /// One HTTP exchange: the answer's JSON, or an error and the server's requested wait.
    async fn attempt(
        &self,
        provider: Provider,
        url: &str,
        key: &str,
        body: &Value,
    ) -> (Result<Value, HostedError>, Option<Duration>) {
        let name = provider.as_str();
        let mut builder = self.http.post(url).timeout(self.config.timeout).json(body);
        builder = match provider {
            Provider::Anthropic => {
                let mut value = match reqwest::header::HeaderValue::from_str(key) {
                    Ok(value) => value,
                    Err(_) => {
                        let message = "the API key is not a valid header value".to_owned();
                        return (Err(HostedError::Transport { provider: name, message }), None);
                    }
                };
                value.set_sensitive(true);
                builder.header("x-api-key", value).header("anthropic-version", anthropic::VERSION)
            }
            Provider::OpenAi => builder.bearer_auth(key),
        };
        let response = match builder.send().await {
            Ok(response) => response,
            Err(e) => return (Err(self.transport_error(name, &e)), None),
        };
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return (Err(self.transport_error(name, &e)), retry_after),
        };
        if !status.is_success() {
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            // Providers quote (parts of) a wrong key back in 401 texts.
            let message = clip(&redact(&message, key));
            return (
                Err(HostedError::Status { provider: name, status: status.as_u16(), message }),
                retry_after,
            );
        }
        let parsed = serde_json::from_str::<Value>(&text).map_err(|e| HostedError::Malformed {
            provider: name,
            message: format!("the response body is not JSON: {e}"),
        });
        (parsed, None)
    }

    fn transport_error(&self, provider: &'static str, error: &reqwest::Error) -> HostedError {
        if error.is_timeout() {
            HostedError::Timeout { provider, timeout_ms: self.config.timeout.as_millis() }
        } else {
            // reqwest's text names the URL, never the headers, so no key can leak here.
            HostedError::Transport { provider, message: clip(&error.to_string()) }
        }
    }

    /// The wait before retry `attempt + 1`: the server's `retry-after` when given, else
    /// exponential backoff with up to 50% jitter; never longer than `backoff_max`.
    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let wait = retry_after.unwrap_or_else(|| {
            let base = self.config.backoff.saturating_mul(1 << attempt.min(16));
            let jitter_range = (base.as_millis() as u64 / 2).max(1);
            let jitter = std::collections::hash_map::RandomState::new().hash_one(attempt) % jitter_range;
            base + Duration::from_millis(jitter)
        });
        wait.min(self.config.backoff_max)
    }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok())
    };
    if let Some(ms) = read("retry-after-ms").filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    read("retry-after").filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

/// `text` without the key and without anything that looks like a key (`sk-…`).
fn redact(text: &str, key: &str) -> String {
    let text = if key.is_empty() { text.to_owned() } else { text.replace(key, "<redacted>") };
    text.split_inclusive(char::is_whitespace)
        .map(|word| {
            let trimmed = word.trim_start_matches(|c: char| !c.is_alphanumeric());
            if trimmed.starts_with("sk-") {
                let lead = &word[..word.len() - trimmed.len()];
                let tail = if word.ends_with(char::is_whitespace) { " " } else { "" };
                format!("{lead}sk-<redacted>{tail}")
            } else {
                word.to_owned()
            }
        })
        .collect()
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_TEXT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[async_trait]
impl CompletionClient for HostedClient {
    async fn complete(&self, request: CompletionRequest) -> DomainResult<CompletionResponse> {
        Ok(self.call(&request).await?)
    }
}
