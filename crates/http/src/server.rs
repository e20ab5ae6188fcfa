//! Composition root: build the components from settings, wire the router, serve until a
//! shutdown signal.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use retold_domain::{Embedder, RecordStore, VectorIndex};
use retold_index::{
    ExactIndex, OnnxEmbedder, OnnxEmbedderConfig, default_model_dir, default_runtime_library,
};
use retold_store_sqlite::{Durability, SqliteStore, StoreConfig};

use crate::settings::{Pooling, Settings, Synchronous};

/// What request handlers share.
#[derive(Debug, Clone)]
pub struct AppState {
    embedder: Arc<OnnxEmbedder>,
    store: SqliteStore,
    index: Arc<ExactIndex>,
}

/// The embedder configuration from settings (empty paths mean the provisioned cache).
pub fn embedder_config(settings: &Settings) -> OnnxEmbedderConfig {
    let e = &settings.embedding;
    let path_or = |configured: &str, default: std::path::PathBuf| {
        if configured.is_empty() { default } else { std::path::PathBuf::from(configured) }
    };
    OnnxEmbedderConfig {
        model: e.model.clone(),
        version: e.version,
        dims: e.dims,
        pooling: match e.pooling {
            Pooling::Mean => retold_index::Pooling::Mean,
            Pooling::Cls => retold_index::Pooling::Cls,
        },
        max_length: e.max_length,
        batch_size: e.batch_size,
        workers: e.workers,
        model_dir: path_or(&e.model_dir, default_model_dir()),
        runtime_library: path_or(&e.runtime_library, default_runtime_library()),
    }
}

/// The write path's configuration from settings.
pub fn ingest_config(settings: &Settings) -> retold_ingest::IngestConfig {
    let i = &settings.ingestion;
    retold_ingest::IngestConfig {
        entail_floor: i.evidence.entail_floor,
        max_entity_attributes: i.max_entity_attributes,
        provisional_ttl: retold_domain::chrono::TimeDelta::milliseconds(
            (i.provisional_ttl_days * 86_400_000.0) as i64,
        ),
        reinforcements_to_confirm: i.reinforcements_to_confirm,
        same_meaning_floor: i.same_meaning_floor,
        attribute_name_floor: i.attribute_alias.name_floor,
        attribute_content_floor: i.attribute_alias.content_floor,
        reinforcement_step: i.reinforcement_step,
    }
}

/// The store configuration from settings.
pub fn store_config(settings: &Settings, data_dir: &std::path::Path) -> StoreConfig {
    let s = &settings.storage;
    StoreConfig {
        path: data_dir.join(&s.sqlite_file),
        durability: match s.synchronous {
            Synchronous::Normal => Durability::Normal,
            Synchronous::Full => Durability::Full,
        },
        busy_timeout: std::time::Duration::from_millis(s.busy_timeout_ms),
        read_connections: s.max_read_connections,
    }
}

/// The router.
pub fn app(state: AppState) -> Router {
    Router::new().route("/health", get(health)).route("/ready", get(ready)).with_state(state)
}

async fn health() -> &'static str {
    "ok"
}

async fn ready(State(state): State<AppState>) -> (StatusCode, String) {
    let probe = async {
        state.embedder.embed(&["readiness probe".to_owned()]).await?;
        state.store.get(&retold_domain::RecordId::new("mem_readiness")?).await
    };
    match probe.await {
        Ok(_) => (
            StatusCode::OK,
            format!(
                "ready: {} ({} vectors in the index)",
                state.embedder.info().name,
                state.index.live_len()
            ),
        ),
        Err(error) => {
            tracing::error!(%error, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "embedder unavailable".to_owned())
        }
    }
}

/// Start the service and run until SIGINT or SIGTERM.
pub async fn serve(settings: Settings) -> Result<()> {
    let data_dir = settings.data_dir();
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating data directory {}", data_dir.display()))?;
    let config = embedder_config(&settings);
    let embedder = tokio::task::spawn_blocking(move || OnnxEmbedder::load(config)).await??;
    let store = SqliteStore::open(&store_config(&settings, &data_dir)).await?;
    let (index, report) = ExactIndex::rebuild(&store, embedder.info()).await?;
    if report.incompatible > 0 {
        tracing::warn!(
            incompatible = report.incompatible,
            "stored vectors from another embedding model were not loaded"
        );
    }
    let state = AppState { embedder: Arc::new(embedder), store: store.clone(), index: Arc::new(index) };
    let listener = tokio::net::TcpListener::bind(settings.server.listen)
        .await
        .with_context(|| format!("binding {}", settings.server.listen))?;
    println!("retold listening on http://{}", listener.local_addr()?);
    println!("retold data directory: {} ({} vectors loaded)", data_dir.display(), report.loaded);
    axum::serve(listener, app(state)).with_graceful_shutdown(shutdown_signal()).await?;
    store.close().await?;
    println!("retold stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.ok();
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
