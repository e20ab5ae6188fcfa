//! The local ONNX embedder: `model.onnx` + `tokenizer.json` from a directory, run with
//! ONNX Runtime loaded dynamically from a configured `libonnxruntime.so`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use async_trait::async_trait;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use retold_domain::{DomainError, Embedder, EmbeddingModelInfo, Result};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::error::IndexError;
use crate::vector::normalise;

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Mean over tokens, weighted by the attention mask (all-MiniLM-L6-v2).
    Mean,
    /// The first (`[CLS]`) token (BGE-M3).
    Cls,
}

/// Everything the embedder needs, as plain values.
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxEmbedderConfig {
    /// Model name recorded with every vector, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub model: String,
    pub version: u32,
    pub dims: u32,
    pub pooling: Pooling,
    /// Inputs longer than this many tokens are truncated.
    pub max_length: usize,
    /// Texts per ONNX run.
    pub batch_size: usize,
    /// Concurrent ONNX runs. Callers waiting for a session share its next run.
    pub workers: usize,
    /// Threads one run uses (ONNX Runtime's intra-op threads).
    pub threads: usize,
    /// Directory holding `model.onnx` and `tokenizer.json`.
    pub model_dir: PathBuf,
    /// Path of `libonnxruntime.so`.
    pub runtime_library: PathBuf,
}

impl OnnxEmbedderConfig {
    /// The model `cargo xtask setup` provisions (all-MiniLM-L6-v2, int8 weights computed in
    /// int8, 384 dims, mean pooling) read from the provisioning cache, with the shipped
    /// defaults of `config/default.yaml`; for tests and benchmarks that need the real model.
    /// One text a run: the model quantises its activations with one scale per run, so a text
    /// batched with others would get another vector.
    pub fn provisioned() -> Self {
        Self {
            model: "sentence-transformers/all-MiniLM-L6-v2".into(),
            version: 2,
            dims: 384,
            pooling: Pooling::Mean,
            max_length: 256,
            batch_size: 1,
            workers: 1,
            threads: 2,
            model_dir: retold_provision::default_model_dir(),
            runtime_library: retold_provision::default_runtime_library(),
        }
    }

    /// The pinned model the default is derived from (`sentence-transformers/all-MiniLM-L6-v2`
    /// version 1: int8 weights computed in f32), which runs texts in padded batches without
    /// changing their vectors.
    pub fn pinned() -> Self {
        Self {
            version: 1,
            batch_size: 32,
            model_dir: retold_provision::pinned_model_dir(),
            ..Self::provisioned()
        }
    }
}

pub(crate) const FIX: &str = "run `cargo xtask setup` to provision it, or point the configuration at it";

/// ONNX Runtime can be loaded once per process; every embedder shares this environment.
static ENVIRONMENT: OnceLock<(PathBuf, ort::environment::Environment)> = OnceLock::new();
static ENVIRONMENT_INIT: Mutex<()> = Mutex::new(());

pub(crate) fn environment(
    library: &Path,
) -> std::result::Result<&'static ort::environment::Environment, IndexError> {
    // A missing library makes later ort calls panic, so check before touching ort at all.
    if !library.is_file() {
        return Err(IndexError::MissingFile {
            what: "ONNX Runtime library (embedding.runtime_library)",
            path: library.to_path_buf(),
            fix: FIX,
        });
    }
    let _guard = ENVIRONMENT_INIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((loaded, env)) = ENVIRONMENT.get() {
        if loaded != library {
            return Err(IndexError::Runtime(format!(
                "ONNX Runtime is already loaded from {} in this process; cannot also load {}",
                loaded.display(),
                library.display()
            )));
        }
        return Ok(env);
    }
    let builder = ort::init_from(library)
        .map_err(|e| IndexError::Runtime(format!("loading {}: {e}", library.display())))?;
    let env = builder
        .with_name("retold")
        .with_telemetry(false)
        .build()
        .map_err(|e| IndexError::Runtime(format!("creating the ONNX Runtime environment: {e}")))?;
    Ok(&ENVIRONMENT.get_or_init(|| (library.to_path_buf(), env)).1)
}

/// Sentence embeddings from a local ONNX model. Cheap to clone.
#[derive(Debug, Clone)]
pub struct OnnxEmbedder {
    info: EmbeddingModelInfo,
    core: std::sync::Arc<Core>,
}

#[derive(Debug)]
struct Core {
    config: OnnxEmbedderConfig,
    /// Truncates; never pads (a run pads its rows to the longest, see [`Core::run`]).
    tokenizer: Tokenizer,
    pad_id: i64,
    pad_type_id: i64,
    pool: Mutex<Pool>,
    /// Wakes waiting callers when a run finishes (their vectors may be ready, or a session
    /// free).
    changed: std::sync::Condvar,
    io: ModelIo,
    /// ONNX runs so far.
    runs: std::sync::atomic::AtomicU64,
}

/// The sessions and the embedding requests waiting for one. A caller whose request finds a
/// free session runs it together with the requests queued before and behind it (up to
/// `batch_size` rows), so above batch size 1 concurrent small requests (search queries) share
/// one ONNX run: each run reads every weight of the model once, whatever its rows. For a
/// model computing in floats a row's vector does not depend on the rows beside it
/// (`tests/it/onnx.rs` checks bit-equality on the pinned model); the default model, whose
/// activations are quantised per run, runs one text at a time (batch size 1), in turn.
#[derive(Debug, Default)]
struct Pool {
    sessions: Vec<Session>,
    waiting: std::collections::VecDeque<Job>,
    done: std::collections::HashMap<u64, std::result::Result<Vec<Vec<f32>>, IndexError>>,
    next_job: u64,
}

#[derive(Debug)]
struct Job {
    id: u64,
    encodings: Vec<tokenizers::Encoding>,
}

/// Rows a shared run may hold: the first request runs whatever its size (up to `batch_size`),
/// others join only while the run stays this small. Batches of 8 short queries already cost
/// 2.4 ms per query instead of 5.8 ms alone, and a larger shared run would grow ONNX Runtime's
/// activation arena for good under load.
const SHARED_ROWS: usize = 8;

impl Pool {
    /// Take the jobs to run together: FIFO, at most `max_rows` rows (at most [`SHARED_ROWS`]
    /// once a second request joins), and while padding to the longest row at most doubles
    /// the tokens computed.
    fn take_batch(&mut self, max_rows: usize) -> Vec<Job> {
        let (mut rows, mut longest, mut tokens) = (0usize, 0usize, 0usize);
        let mut batch = Vec::new();
        while let Some(next) = self.waiting.front() {
            let next_rows = next.encodings.len();
            let next_longest = next.encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
            let next_tokens: usize = next.encodings.iter().map(|e| e.get_ids().len()).sum();
            let (r, l, t) = (rows + next_rows, longest.max(next_longest), tokens + next_tokens);
            if !batch.is_empty() && (r > max_rows.min(SHARED_ROWS) || r * l > 2 * t) {
                break;
            }
            (rows, longest, tokens) = (r, l, t);
            batch.extend(self.waiting.pop_front());
        }
        batch
    }
}

/// The texts of one request grouped for runs: by length, at most `batch_size` rows a group,
/// a new group whenever padding every row to the group's longest would compute more than
/// half again the tokens the rows hold. A record's text (with its context) beside its short
/// sentences is two runs, not one where every sentence is padded to the record's length.
/// Indices into `lengths` (each text's tokens); each appears once.
pub(crate) fn length_groups(lengths: &[usize], batch_size: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| (lengths[i], i));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut tokens = 0usize;
    for i in order {
        let len = lengths[i];
        let fits = groups.last().is_some_and(|g| {
            let rows = g.len() + 1;
            // Sorted: this row is the group's longest.
            rows <= batch_size.max(1) && 2 * rows * len <= 3 * (tokens + len)
        });
        if fits {
            groups.last_mut().expect("checked").push(i);
            tokens += len;
        } else {
            groups.push(vec![i]);
            tokens = len;
        }
    }
    groups
}

impl OnnxEmbedder {
    /// Load the runtime, the tokenizer and `workers` sessions. Fails with a message naming
    /// the missing or wrong file and the command that fixes it.
    pub fn load(config: OnnxEmbedderConfig) -> std::result::Result<Self, IndexError> {
        let (model_path, tokenizer_path) = model_files(
            &config.model_dir,
            ["embedding model (embedding.model_dir)", "tokenizer (embedding.model_dir)"],
        )?;
        if config.workers == 0 || config.batch_size == 0 {
            return Err(IndexError::Config(
                "embedding.workers and embedding.batch_size must be at least 1".into(),
            ));
        }
        let env = environment(&config.runtime_library)?;

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| IndexError::Tokenizer(format!("{}: {e}", tokenizer_path.display())))?;
        // Shipped tokenizer.json files often pad every input to a fixed length. Each run pads
        // its rows to the longest of them instead, with the tokenizer's pad ids.
        let padding = tokenizer.get_padding().cloned().unwrap_or_else(PaddingParams::default);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: config.max_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| IndexError::Tokenizer(format!("setting truncation: {e}")))?;

        let mut sessions = Vec::with_capacity(config.workers);
        for _ in 0..config.workers {
            let session = build_session(env, &model_path, config.threads.max(1))
                .map_err(|e| IndexError::Model(format!("{}: {e}", model_path.display())))?;
            sessions.push(session);
        }
        let io = ModelIo::of(&sessions[0], &model_path)?;

        let info =
            EmbeddingModelInfo { name: config.model.clone(), version: config.version, dims: config.dims };
        let core = Core {
            config,
            tokenizer,
            pad_id: i64::from(padding.pad_id),
            pad_type_id: i64::from(padding.pad_type_id),
            pool: Mutex::new(Pool { sessions, ..Pool::default() }),
            changed: std::sync::Condvar::new(),
            io,
            runs: std::sync::atomic::AtomicU64::new(0),
        };
        let embedder = Self { info, core: std::sync::Arc::new(core) };
        // Check the configured dims against what the model really produces.
        let probe = embedder.embed_blocking(&["dimension probe".to_owned()])?;
        let config = &embedder.core.config;
        if probe[0].len() != config.dims as usize {
            return Err(IndexError::Config(format!(
                "embedding.dims is {} but {} produces {} numbers",
                config.dims,
                config.model_dir.join("model.onnx").display(),
                probe[0].len()
            )));
        }
        Ok(embedder)
    }

    /// Embed on the calling thread (blocking). Batches by `batch_size`; when every session
    /// is busy, waits, and shares the next free session's run with the other waiting callers.
    pub fn embed_blocking(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, IndexError> {
        self.core.embed_blocking(texts)
    }

    /// ONNX runs so far (callers that shared a run count once).
    pub fn runs(&self) -> u64 {
        self.core.runs.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Core {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn embed_blocking(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, IndexError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.iter().map(String::as_str).collect::<Vec<_>>(), true)
            .map_err(|e| IndexError::Tokenizer(e.to_string()))?;
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let lengths: Vec<usize> = encodings.iter().map(|e| e.get_ids().len()).collect();
        for group in length_groups(&lengths, self.config.batch_size) {
            let rows: Vec<tokenizers::Encoding> = group.iter().map(|&i| encodings[i].clone()).collect();
            for (i, vector) in group.into_iter().zip(self.queue_and_run(rows)?) {
                out[i] = Some(vector);
            }
        }
        Ok(out.into_iter().map(|v| v.expect("every text is in one group")).collect())
    }

    /// Queue one request, then either run a batch (when a session is free) or wait, until
    /// this request's vectors are done.
    fn queue_and_run(
        &self,
        encodings: Vec<tokenizers::Encoding>,
    ) -> std::result::Result<Vec<Vec<f32>>, IndexError> {
        let mut pool = self.lock();
        let id = pool.next_job;
        pool.next_job += 1;
        pool.waiting.push_back(Job { id, encodings });
        loop {
            if let Some(result) = pool.done.remove(&id) {
                return result;
            }
            if pool.waiting.is_empty() || pool.sessions.is_empty() {
                // Ours is in another caller's run, or every session is busy.
                pool = self.changed.wait(pool).unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            let mut session = pool.sessions.pop().expect("checked above");
            let batch = pool.take_batch(self.config.batch_size);
            drop(pool);
            let rows: Vec<&tokenizers::Encoding> = batch.iter().flat_map(|j| &j.encodings).collect();
            // A panic inside the run must not strand the session or the batch's callers (they
            // would wait for ever, and with one worker so would every later caller).
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(&mut session, &rows)))
                    .unwrap_or_else(|_| Err(IndexError::Model("inference panicked".into())));
            pool = self.lock();
            pool.sessions.push(session);
            match result {
                Ok(vectors) => {
                    let mut vectors = vectors.into_iter();
                    for job in &batch {
                        let mine = vectors.by_ref().take(job.encodings.len()).collect();
                        pool.done.insert(job.id, Ok(mine));
                    }
                }
                Err(e) => {
                    for job in &batch {
                        pool.done.insert(job.id, Err(e.clone()));
                    }
                }
            }
            self.changed.notify_all();
        }
    }

    /// One ONNX run over `rows`, each padded to the longest with the tokenizer's pad ids.
    fn run(
        &self,
        session: &mut Session,
        rows: &[&tokenizers::Encoding],
    ) -> std::result::Result<Vec<Vec<f32>>, IndexError> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let RunOutput { shape, data, mask } = self.io.run(session, rows, (self.pad_id, self.pad_type_id))?;
        let seq = rows.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
        pool(&shape, &data, &mask, rows.len(), seq, self.config.pooling)
    }
}

/// A model directory's `model.onnx` and `tokenizer.json`, or which one is missing (`what`
/// names each for the message) and the command that fixes it.
pub(crate) fn model_files(
    dir: &Path,
    what: [&'static str; 2],
) -> std::result::Result<(PathBuf, PathBuf), IndexError> {
    let (model, tokenizer) = (dir.join("model.onnx"), dir.join("tokenizer.json"));
    for (what, path) in what.into_iter().zip([&model, &tokenizer]) {
        if !path.is_file() {
            return Err(IndexError::MissingFile { what, path: path.clone(), fix: FIX });
        }
    }
    Ok((model, tokenizer))
}

/// How a loaded BERT-style model is fed and read: whether it takes `token_type_ids`, and the
/// name of its first output.
#[derive(Debug)]
pub(crate) struct ModelIo {
    feeds_token_type_ids: bool,
    output_name: String,
}

impl ModelIo {
    /// Read from the session; `input_ids` and `attention_mask` are required.
    pub(crate) fn of(session: &Session, model_path: &Path) -> std::result::Result<Self, IndexError> {
        let inputs: Vec<String> = session.inputs().iter().map(|o| o.name().to_owned()).collect();
        for required in ["input_ids", "attention_mask"] {
            if !inputs.iter().any(|n| n == required) {
                return Err(IndexError::Model(format!(
                    "{} declares inputs {inputs:?}; {required} is required",
                    model_path.display()
                )));
            }
        }
        let output_name = session
            .outputs()
            .first()
            .map(|o| o.name().to_owned())
            .ok_or_else(|| IndexError::Model(format!("{} declares no output", model_path.display())))?;
        Ok(Self { feeds_token_type_ids: inputs.iter().any(|n| n == "token_type_ids"), output_name })
    }

    /// One ONNX run over `rows`, each padded to the longest with `(pad_id, pad_type_id)`.
    pub(crate) fn run(
        &self,
        session: &mut Session,
        rows: &[&tokenizers::Encoding],
        (pad_id, pad_type_id): (i64, i64),
    ) -> std::result::Result<RunOutput, IndexError> {
        let count = rows.len();
        let seq = rows.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(count * seq);
        let mut mask = Vec::with_capacity(count * seq);
        let mut types = Vec::with_capacity(count * seq);
        for encoding in rows {
            let pad = seq - encoding.get_ids().len();
            ids.extend(encoding.get_ids().iter().map(|&x| i64::from(x)));
            ids.extend(std::iter::repeat_n(pad_id, pad));
            mask.extend(encoding.get_attention_mask().iter().map(|&x| i64::from(x)));
            mask.extend(std::iter::repeat_n(0, pad));
            types.extend(encoding.get_type_ids().iter().map(|&x| i64::from(x)));
            types.extend(std::iter::repeat_n(pad_type_id, pad));
        }
        let run = |session: &mut Session| -> ort::Result<(Vec<i64>, Vec<f32>)> {
            let mut inputs: Vec<(std::borrow::Cow<'_, str>, ort::session::SessionInputValue<'_>)> = ort::inputs![
                "input_ids" => Tensor::from_array(([count, seq], ids))?,
                "attention_mask" => Tensor::from_array(([count, seq], mask.clone()))?,
            ];
            if self.feeds_token_type_ids {
                inputs.push(("token_type_ids".into(), Tensor::from_array(([count, seq], types))?.into()));
            }
            let outputs = session.run(inputs)?;
            let (shape, data) = outputs[self.output_name.as_str()].try_extract_tensor::<f32>()?;
            Ok((shape.to_vec(), data.to_vec()))
        };
        let (shape, data) = run(session).map_err(|e| IndexError::Model(format!("inference failed: {e}")))?;
        Ok(RunOutput { shape, data, mask })
    }
}

/// What one run gives: the first output's shape and values, and the attention mask that was
/// fed (mean pooling reads it).
pub(crate) struct RunOutput {
    pub(crate) shape: Vec<i64>,
    pub(crate) data: Vec<f32>,
    pub(crate) mask: Vec<i64>,
}

pub(crate) fn build_session(
    env: &ort::environment::Environment,
    model: &Path,
    threads: usize,
) -> ort::Result<Session> {
    Session::builder(env)?
        .with_optimization_level(GraphOptimizationLevel::Level3)?
        .with_intra_threads(threads)?
        .with_inter_threads(1)?
        .commit_from_file(model)
}

/// Pool `[rows, seq, hidden]` token vectors (or take `[rows, hidden]` as they are), then
/// L2-normalise each row.
fn pool(
    shape: &[i64],
    data: &[f32],
    mask: &[i64],
    rows: usize,
    seq: usize,
    pooling: Pooling,
) -> std::result::Result<Vec<Vec<f32>>, IndexError> {
    let mut out = Vec::with_capacity(rows);
    match *shape {
        [r, s, hidden] if r as usize == rows && s as usize == seq => {
            let hidden = hidden as usize;
            for row in 0..rows {
                let tokens = &data[row * seq * hidden..(row + 1) * seq * hidden];
                let mut vector = vec![0.0f32; hidden];
                match pooling {
                    Pooling::Cls => vector.copy_from_slice(&tokens[..hidden]),
                    Pooling::Mean => {
                        let mut count = 0.0f32;
                        for (t, token) in tokens.chunks_exact(hidden).enumerate() {
                            if mask[row * seq + t] == 0 {
                                continue;
                            }
                            count += 1.0;
                            vector.iter_mut().zip(token).for_each(|(v, x)| *v += x);
                        }
                        let count = count.max(1e-9);
                        vector.iter_mut().for_each(|v| *v /= count);
                    }
                }
                normalise(&mut vector);
                out.push(vector);
            }
        }
        [r, hidden] if r as usize == rows => {
            for row in data.chunks_exact(hidden as usize) {
                let mut vector = row.to_vec();
                normalise(&mut vector);
                out.push(vector);
            }
        }
        _ => {
            return Err(IndexError::Model(format!(
                "unexpected output shape {shape:?} for a batch of {rows} × {seq} tokens"
            )));
        }
    }
    Ok(out)
}

#[async_trait]
impl Embedder for OnnxEmbedder {
    fn info(&self) -> &EmbeddingModelInfo {
        &self.info
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        // ONNX runs are blocking CPU work: keep them off the async workers. The session
        // pool bounds how many run at once.
        let core = std::sync::Arc::clone(&self.core);
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || core.embed_blocking(&texts))
            .await
            .map_err(|e| DomainError::backend("embedder", e))?
            .map_err(|e| DomainError::backend("embedder", e))
    }
}

#[cfg(test)]
mod tests {
    use super::length_groups;

    #[test]
    fn a_long_text_beside_short_ones_runs_apart_and_every_text_runs_once() {
        // A turn with its context (90 tokens) and its three sentences (14-16).
        assert_eq!(length_groups(&[90, 14, 16, 15], 32), [vec![1, 3, 2], vec![0]]);
        // Alike lengths share a run, up to the batch size.
        assert_eq!(length_groups(&[10, 12, 11, 9], 3), [vec![3, 0, 2], vec![1]]);
        let lengths: Vec<usize> = (0..100).map(|i| (i * 37) % 120 + 3).collect();
        let mut seen: Vec<usize> = length_groups(&lengths, 32).concat();
        seen.sort();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        for group in length_groups(&lengths, 32) {
            let longest = group.iter().map(|&i| lengths[i]).max().unwrap();
            let tokens: usize = group.iter().map(|&i| lengths[i]).sum();
            assert!(group.len() <= 32 && (group.len() == 1 || 2 * group.len() * longest <= 3 * tokens));
        }
        assert!(length_groups(&[], 32).is_empty());
    }
}
