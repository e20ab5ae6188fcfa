//! Retold's front door: configuration loading, the axum routes, DTOs, OpenAPI, auth,
//! the error-code table and telemetry. The composition root of the `retold` binary.

mod server;
mod settings;

pub use crate::server::{AppState, app, embedder_config, ingest_config, serve, store_config};

pub use crate::settings::{
    AttributeAliasSettings, AuthSettings, DEFAULT_YAML, ENV_PREFIX, EmbeddingSettings, EvidenceSettings,
    FreshnessSettings, GateSettings, IngestionSettings, LogFormat, ModelStageSettings, Pooling,
    RetrievalSettings, ServerSettings, Settings, SettingsError, StorageSettings, Synchronous,
    TelemetrySettings,
};
