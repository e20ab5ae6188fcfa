//! Retold's front door: configuration loading, the axum routes, DTOs, OpenAPI, auth, the
//! error-code table and telemetry. The composition root of the `retold` binary.

mod app;
mod auth;
pub mod bundles;
mod dto;
mod error;
mod idempotency;
mod inspector;
pub mod model_ops;
mod openapi;
mod routes;
mod serve_error;
mod server;
mod settings;
mod state;
mod system;
mod telemetry;

pub use crate::app::app;
pub use crate::auth::hash_key;
pub use crate::error::{ErrorCode, Problem};
pub use crate::model_ops::{CalibrationReport, SwitchOutcome};
pub use crate::openapi::{ApiDoc, document, openapi_json, rules};
pub use crate::serve_error::ServeError;
pub use crate::server::{
    Built, Components, DataDirLock, Hosted, OrchestratorStage, StoreHandle, Wired, activation_config, build,
    derive_eligibility, derive_eligibility_table, embedder_config, hosted_config, hosted_stages,
    ingest_config, load_embedder, load_reranker, lock_data_dir, operations_config, orchestrator_config,
    postgres_config, reranker_config, retrieve_config, serve, serve_mcp_stdio, services, sessions_config,
    store_config, wire,
};
pub use crate::settings::{
    AttributeAliasSettings, AuthSettings, Backend, CalibrationSettings, DEFAULT_YAML, ENV_PREFIX,
    EmbeddingSettings, EvidenceSettings, ExtractionSettings, FreshnessSettings, GateSettings, HostedSettings,
    IngestionSettings, LogFormat, ModelStageSettings, ModelThresholds, Pooling, ProviderSettings,
    RerankerPlacement, RerankerSettings, RetrievalSettings, Secret, ServerSettings, Settings, SettingsError,
    StorageSettings, Synchronous, TelemetrySettings,
};
pub use crate::state::AppState;
pub use crate::system::{SystemClock, UlidIds};
pub use crate::telemetry::{TelemetryGuard, init as init_telemetry};
