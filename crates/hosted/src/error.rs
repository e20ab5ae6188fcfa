//! What can go wrong talking to a hosted model.

/// A failed hosted call. The text never contains an API key.
#[derive(Debug, thiserror::Error)]
pub enum HostedError {
    /// The model name maps to no provider.
    #[error(
        "model {0:?} maps to no provider (claude-* is Anthropic; gpt-*, o1*, o3*, o4*, chatgpt-* are OpenAI; or prefix anthropic: / openai:)"
    )]
    UnknownModel(String),
    /// No API key is configured for the provider.
    #[error("no API key for {provider}: set {variable} or hosted.{provider}.api_key")]
    NoKey { provider: &'static str, variable: &'static str },
    /// An attempt took longer than the timeout.
    #[error("{provider} did not answer within {timeout_ms} ms")]
    Timeout { provider: &'static str, timeout_ms: u128 },
    /// The provider answered with an error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Status { provider: &'static str, status: u16, message: String },
    /// The request never got an answer (connection refused, reset, DNS).
    #[error("{provider} could not be reached: {message}")]
    Transport { provider: &'static str, message: String },
    /// The answer did not have the promised shape.
    #[error("{provider} answered malformed output: {message}")]
    Malformed { provider: &'static str, message: String },
    /// The model declined to answer.
    #[error("{provider} refused: {message}")]
    Refused { provider: &'static str, message: String },
}

impl HostedError {
    /// Whether another attempt may succeed.
    pub(crate) fn retryable(&self) -> bool {
        match self {
            Self::Timeout { .. } | Self::Transport { .. } => true,
            Self::Status { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            Self::UnknownModel(_) | Self::NoKey { .. } | Self::Malformed { .. } | Self::Refused { .. } => {
                false
            }
        }
    }

    /// A short stable name for logs and traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownModel(_) => "unknown_model",
            Self::NoKey { .. } => "no_key",
            Self::Timeout { .. } => "timeout",
            Self::Status { .. } => "status",
            Self::Transport { .. } => "transport",
            Self::Malformed { .. } => "malformed",
            Self::Refused { .. } => "refused",
        }
    }
}

impl From<HostedError> for retold_domain::DomainError {
    fn from(error: HostedError) -> Self {
        Self::backend("hosted model", error)
    }
}
