//! What request handlers share.

use std::sync::Arc;

use retold_domain::{Clock, IdGenerator};
use retold_index::{ExactIndex, OnnxEmbedder};
use retold_ingest::{ExtractionRunner, Ingestor};
use retold_retrieve::Retriever;
use retold_store_sqlite::SqliteStore;

/// The composition root's components, cheap to clone per request.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct AppState {
    pub store: SqliteStore,
    pub index: Arc<ExactIndex>,
    pub embedder: Arc<OnnxEmbedder>,
    pub ingestor: Ingestor,
    pub retriever: Retriever,
    /// Session extraction, when on.
    pub extraction: Option<ExtractionRunner>,
    /// `on (…)` or `off (why)`.
    pub extraction_status: String,
    /// Background work (extraction runs) that shutdown waits for, so a claimed session is
    /// not abandoned halfway.
    pub tasks: tokio_util::task::TaskTracker,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// SHA-256 hex of the configured admin key(s).
    pub admin_hashes: Vec<String>,
}
