//! The optional local reranker (seed section 11): a cross-encoder (`model.onnx` +
//! `tokenizer.json`, e.g. cross-encoder/ms-marco-MiniLM-L-12-v2) that reads the query and one
//! document together and scores how well the document answers it. Runs on ONNX Runtime like
//! the embedder, off the async workers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use ort::session::Session;
use retold_domain::{DomainError, Reranker, Result};
use tokenizers::{Tokenizer, TruncationParams, TruncationStrategy};

use crate::embedder::{ModelIo, RunOutput, build_session, environment, model_files};
use crate::error::IndexError;

/// Everything the reranker needs, as plain values.
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxRerankerConfig {
    /// Directory holding `model.onnx` and `tokenizer.json`.
    pub model_dir: PathBuf,
    /// Path of `libonnxruntime.so` (the embedder's: one runtime per process).
    pub runtime_library: PathBuf,
    /// A query and document pair longer than this many tokens is cut, longest part first.
    pub max_length: usize,
}

impl OnnxRerankerConfig {
    /// The reranker `cargo xtask setup` provisions (ms-marco-MiniLM-L-12-v2, int8), with
    /// the shipped defaults of `config/default.yaml`.
    pub fn provisioned() -> Self {
        Self {
            model_dir: retold_provision::default_reranker_dir(),
            runtime_library: retold_provision::default_runtime_library(),
            max_length: 256,
        }
    }
}

/// A local cross-encoder behind the [`Reranker`] port. Cheap to clone.
#[derive(Debug, Clone)]
pub struct OnnxReranker {
    core: Arc<Core>,
}

#[derive(Debug)]
struct Core {
    tokenizer: Tokenizer,
    session: Mutex<Session>,
    io: ModelIo,
    /// Pairs scored so far.
    runs: std::sync::atomic::AtomicU64,
}

impl OnnxReranker {
    /// Load the runtime, the tokenizer and the model. Fails with a message naming the missing
    /// or wrong file and the command that fixes it.
    pub fn load(config: OnnxRerankerConfig) -> std::result::Result<Self, IndexError> {
        let (model_path, tokenizer_path) = model_files(
            &config.model_dir,
            [
                "reranker model (retrieval.reranker.model_dir)",
                "reranker tokenizer (retrieval.reranker.model_dir)",
            ],
        )?;
        if config.max_length < 8 {
            return Err(IndexError::Config("retrieval.reranker.max_length must be at least 8".into()));
        }
        let env = environment(&config.runtime_library)?;
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| IndexError::Tokenizer(format!("{}: {e}", tokenizer_path.display())))?;
        // Each run pads to its longest pair (shipped tokenizers often pad to 512).
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: config.max_length,
                strategy: TruncationStrategy::LongestFirst,
                ..TruncationParams::default()
            }))
            .map_err(|e| IndexError::Tokenizer(format!("setting truncation: {e}")))?;
        let session = build_session(env, &model_path, 1)
            .map_err(|e| IndexError::Model(format!("{}: {e}", model_path.display())))?;
        let io = ModelIo::of(&session, &model_path)?;
        let core = Core { tokenizer, session: Mutex::new(session), io, runs: Default::default() };
        let reranker = Self { core: Arc::new(core) };
        // A model that is not a cross-encoder (one score per pair) fails here, not per search.
        reranker.score_blocking("probe", &["a probe document".to_owned()])?;
        Ok(reranker)
    }

    /// One relevance score (the model's logit, higher is better) per document, on the calling
    /// thread. Each pair runs alone: the shipped model quantises its activations dynamically,
    /// over the whole batch, so a pair padded into a batch scores differently (2.57 instead
    /// of 2.22 in `tests/it/reranker.rs`), and batching saves little (200 ms against 198 ms
    /// for 20 pairs of 76 tokens on one thread).
    pub fn score_blocking(
        &self,
        query: &str,
        documents: &[String],
    ) -> std::result::Result<Vec<f64>, IndexError> {
        self.score_until(query, documents, &AtomicBool::new(false))
    }

    /// [`Self::score_blocking`], stopping between pairs once `cancelled` is set (a search that
    /// timed out no longer waits for the rest).
    fn score_until(
        &self,
        query: &str,
        documents: &[String],
        cancelled: &AtomicBool,
    ) -> std::result::Result<Vec<f64>, IndexError> {
        let mut out = Vec::with_capacity(documents.len());
        for document in documents {
            if cancelled.load(Ordering::Relaxed) {
                return Err(IndexError::Model("reranking cancelled: the search stopped waiting".into()));
            }
            let encoding = self
                .core
                .tokenizer
                .encode((query, document.as_str()), true)
                .map_err(|e| IndexError::Tokenizer(e.to_string()))?;
            out.push(self.core.score(&encoding)?);
        }
        Ok(out)
    }
}

impl OnnxReranker {
    /// Pairs scored so far (the load's probe included).
    pub fn pairs_scored(&self) -> u64 {
        self.core.runs.load(Ordering::Relaxed)
    }
}

/// Sets its flag when dropped: the search future holding it was dropped (its timeout ran out).
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Core {
    /// One pair's score, in a run of its own.
    fn score(&self, pair: &tokenizers::Encoding) -> std::result::Result<f64, IndexError> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let mut session = self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let RunOutput { shape, data, .. } = self.io.run(&mut session, &[pair], (0, 0))?;
        match (shape.as_slice(), data.as_slice()) {
            ([1, 1] | [1], [score]) => Ok(f64::from(*score)),
            _ => Err(IndexError::Model(format!(
                "a cross-encoder gives one score per pair; this model's output has shape {shape:?} for one pair"
            ))),
        }
    }
}

#[async_trait]
impl Reranker for OnnxReranker {
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>> {
        let this = self.clone();
        let (query, documents) = (query.to_owned(), documents.to_vec());
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(cancelled.clone());
        tokio::task::spawn_blocking(move || this.score_until(&query, &documents, &cancelled))
            .await
            .map_err(|e| DomainError::backend("reranker", e))?
            .map_err(|e| DomainError::backend("reranker", e))
    }
}
