//! Composition root: build the components from settings, wire the router, serve until a
//! shutdown signal.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use retold_domain::Embedder;
use retold_index::{OnnxEmbedder, OnnxEmbedderConfig, default_model_dir, default_runtime_library};

use crate::settings::{Pooling, Settings};

/// What request handlers share.
#[derive(Debug, Clone)]
pub struct AppState {
    embedder: Arc<OnnxEmbedder>,
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

/// The router.
pub fn app(state: AppState) -> Router {
    Router::new().route("/health", get(health)).route("/ready", get(ready)).with_state(state)
}

async fn health() -> &'static str {
    "ok"
}

async fn ready(State(state): State<AppState>) -> (StatusCode, String) {
    match state.embedder.embed(&["readiness probe".to_owned()]).await {
        Ok(_) => (StatusCode::OK, format!("ready: {}", state.embedder.info().name)),
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
    let state = AppState { embedder: Arc::new(embedder) };
    let listener = tokio::net::TcpListener::bind(settings.server.listen)
        .await
        .with_context(|| format!("binding {}", settings.server.listen))?;
    println!("retold listening on http://{}", listener.local_addr()?);
    println!("retold data directory: {}", data_dir.display());
    axum::serve(listener, app(state)).with_graceful_shutdown(shutdown_signal()).await?;
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
