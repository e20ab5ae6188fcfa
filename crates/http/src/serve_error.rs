//! Why `retold serve` could not start, or stopped with an error. The binary prints the
//! message once and exits non-zero; nothing here reaches a client.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::settings::SettingsError;

/// Every way starting or running the service can fail; each message names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration could not be loaded or is invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// `telemetry.log_filter` is not a tracing filter directive.
    #[error("telemetry.log_filter: {0}")]
    LogFilter(#[from] tracing_subscriber::filter::ParseError),
    /// `telemetry.otlp_endpoint` could not be used.
    #[error("telemetry.otlp_endpoint: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// Another global log subscriber is already installed.
    #[error("installing the log subscriber: {0}")]
    Subscriber(#[from] tracing_subscriber::util::TryInitError),
    /// The data directory could not be created.
    #[error("creating data directory {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    /// The listen address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// The embedder could not be loaded (a missing file names `cargo xtask setup`).
    #[error(transparent)]
    Embedder(#[from] retold_index::IndexError),
    /// The embedder's loading thread panicked or was cancelled.
    #[error("loading the embedder: {0}")]
    EmbedderThread(#[from] tokio::task::JoinError),
    /// The SQLite store could not be opened, read or closed.
    #[error(transparent)]
    Store(#[from] retold_store_sqlite::StoreError),
    /// A service failed at start-up (rebuilding the vector index, creating the first key).
    #[error("{0}")]
    Startup(#[from] retold_domain::DomainError),
    /// The hosted model client could not be built.
    #[error("hosted models: {0}")]
    Hosted(#[from] retold_hosted::HostedError),
    /// Query rewriting was asked for but its model cannot be called.
    #[error("retrieval.rewrite.enabled is true, but {0}")]
    RewriteModel(retold_hosted::HostedError),
    /// The reranker was asked for, and its model cannot be loaded.
    #[error(
        "retrieval.reranker.enabled is true, but the reranker model {model} cannot be loaded from {}: {reason}; \
         RETOLD__RETRIEVAL__RERANKER__ENABLED=false turns the stage off",
        dir.display()
    )]
    RerankerModel { model: String, dir: std::path::PathBuf, reason: String },
    /// A model-dependent threshold has neither a value nor a calibration for the model.
    #[error("{0}")]
    Uncalibrated(String),
    /// The store's vectors come from another embedding model than the configured one.
    #[error("{0}")]
    ModelMismatch(String),
    /// The orchestrator's bundle cannot be used (not in the registry, a bad registry, or a
    /// hosted planner without a key).
    #[error("{0}")]
    Orchestrator(String),
    /// Another process (a running service) holds the data directory.
    #[error("{0} is locked: a retold service is running on this data directory")]
    Locked(PathBuf),
    /// Any other I/O failure (key generation, the socket while serving).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
