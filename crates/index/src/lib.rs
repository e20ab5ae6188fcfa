//! Retold's in-memory exact vector index (seed section 9), the local ONNX embedder and the
//! optional local reranker.
//!
//! The index holds a contiguous matrix of normalised vectors; search masks it with the
//! eligible keys and scans exactly. SQLite stays the source of truth: the index is rebuilt
//! from compatible embedding rows at boot. The eligibility table is the same kind of derived
//! structure for the eligibility filter.

mod eligibility;
mod embedder;
mod error;
mod follow;
mod kernel;
mod reranker;
mod stemmer;
mod vector;

pub use crate::eligibility::{EligibilityTable, TrackedEntityWriter, TrackedWriter};
pub use crate::embedder::{OnnxEmbedder, OnnxEmbedderConfig, Pooling};
pub use crate::error::IndexError;
pub use crate::follow::Follower;
pub use crate::reranker::{OnnxReranker, OnnxRerankerConfig};
pub use crate::stemmer::SnowballEnglish;
pub use crate::vector::{CENTRING_MIN_ROWS, CENTRING_POOL, ExactIndex, RebuildReport};
/// Where `cargo xtask setup` puts the run-time files (defined once, in `retold-provision`).
pub use retold_provision::{
    cache_dir, default_model_dir, default_reranker_dir, default_runtime_library, pinned_model_dir,
};
