//! What the hosted client needs to know: where each provider lives, its key, and how patient
//! to be.

use std::fmt;
use std::time::Duration;

use crate::error::HostedError;

/// An API key. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key; `None` when the text is empty.
    pub fn new(value: impl Into<String>) -> Option<Self> {
        let value = value.into();
        let value = value.trim();
        (!value.is_empty()).then(|| Self(value.to_owned()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// A provider's endpoint and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// Scheme, host and optional path prefix, without the API path (`https://api.anthropic.com`).
    pub base_url: String,
    pub api_key: Option<ApiKey>,
}

/// The two wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
}

impl Provider {
    /// The provider serving `model`, and the model name to send.
    ///
    /// `anthropic:<name>` and `openai:<name>` choose explicitly (for compatible servers with
    /// other model names); otherwise `claude-*` is Anthropic and `gpt-*`, `o1*`, `o3*`, `o4*`,
    /// `chatgpt-*` are OpenAI.
    pub fn for_model(model: &str) -> Result<(Self, &str), HostedError> {
        if let Some(name) = model.strip_prefix("anthropic:") {
            return Ok((Self::Anthropic, name));
        }
        if let Some(name) = model.strip_prefix("openai:") {
            return Ok((Self::OpenAi, name));
        }
        if model.starts_with("claude-") {
            Ok((Self::Anthropic, model))
        } else if ["gpt-", "o1", "o3", "o4", "chatgpt-"].iter().any(|p| model.starts_with(p)) {
            Ok((Self::OpenAi, model))
        } else {
            Err(HostedError::UnknownModel(model.to_owned()))
        }
    }

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    /// The environment variable the provider's own SDKs read the key from.
    pub fn key_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }
}

/// Configuration of the hosted client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedConfig {
    pub anthropic: ProviderConfig,
    pub openai: ProviderConfig,
    /// Longest one attempt may take.
    pub timeout: Duration,
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// First backoff; doubled on every retry, with jitter.
    pub backoff: Duration,
    /// Longest wait between attempts, `retry-after` included.
    pub backoff_max: Duration,
}

impl Default for HostedConfig {
    fn default() -> Self {
        Self {
            anthropic: ProviderConfig { base_url: "https://api.anthropic.com".into(), api_key: None },
            openai: ProviderConfig { base_url: "https://api.openai.com".into(), api_key: None },
            timeout: Duration::from_secs(60),
            max_retries: 2,
            backoff: Duration::from_millis(500),
            backoff_max: Duration::from_secs(20),
        }
    }
}

impl HostedConfig {
    /// The provider's configuration.
    pub fn provider(&self, provider: Provider) -> &ProviderConfig {
        match provider {
            Provider::Anthropic => &self.anthropic,
            Provider::OpenAi => &self.openai,
        }
    }

    /// Why `model` cannot be served (unknown name, or no key for its provider), if it cannot.
    pub fn check_model(&self, model: &str) -> Result<Provider, HostedError> {
        let (provider, _) = Provider::for_model(model)?;
        if self.provider(provider).api_key.is_none() {
            return Err(HostedError::NoKey {
                provider: provider.as_str(),
                variable: provider.key_variable(),
            });
        }
        Ok(provider)
    }
}
