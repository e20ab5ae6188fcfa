//! The index crate's error enum.

use std::path::PathBuf;

/// Why the embedder or index could not do its work.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IndexError {
    /// A file the embedder needs is not there.
    #[error("{what} not found at {path}: {fix}")]
    MissingFile { what: &'static str, path: PathBuf, fix: &'static str },
    /// ONNX Runtime could not be loaded or initialised.
    #[error("ONNX Runtime: {0}")]
    Runtime(String),
    /// The model could not be loaded or run.
    #[error("embedding model: {0}")]
    Model(String),
    /// The tokenizer could not be loaded or failed on an input.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// The configuration does not match the model.
    #[error("embedding configuration: {0}")]
    Config(String),
}
