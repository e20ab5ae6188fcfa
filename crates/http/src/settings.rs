//! Configuration: embedded defaults → optional file → `RETOLD__SECTION__KEY` environment
//! variables, deserialised once, validated once, then handed inward as plain structs.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use validator::{Validate, ValidationErrors, ValidationErrorsKind};

/// The embedded defaults (`config/default.yaml`).
pub const DEFAULT_YAML: &str = include_str!("../../../config/default.yaml");

/// Prefix of environment overrides: `RETOLD__RETRIEVAL__RRF_K=80`.
pub const ENV_PREFIX: &str = "RETOLD";

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A source could not be read or a value has the wrong type; the text names the key.
    #[error("configuration: {0}")]
    Load(#[from] config::ConfigError),
    /// A value is out of range; each entry names its key.
    #[error("configuration: {}", .0.join("; "))]
    Invalid(Vec<String>),
}

/// Every setting, as loaded.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[validate(nested)]
    pub server: ServerSettings,
    pub auth: AuthSettings,
    #[validate(nested)]
    pub storage: StorageSettings,
    #[validate(nested)]
    pub embedding: EmbeddingSettings,
    #[validate(nested)]
    pub retrieval: RetrievalSettings,
    #[validate(nested)]
    pub ingestion: IngestionSettings,
    #[validate(nested)]
    pub sessions: SessionsSettings,
    #[validate(nested)]
    pub hosted: HostedSettings,
    #[validate(nested)]
    pub operations: OperationsSettings,
    #[validate(nested)]
    pub activation: ActivationSettings,
    #[validate(nested)]
    pub orchestrator: OrchestratorSettings,
    pub telemetry: TelemetrySettings,
    /// The thresholds that depend on the embedding model, as calibrated per model
    /// (`retold ops calibrate` writes them). The configured model must have one.
    #[validate(nested)]
    pub calibrations: Vec<CalibrationSettings>,
}

/// `orchestrator.*`: the host-issued memory decision for a turn.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct OrchestratorSettings {
    /// The bundle that decides: an id in the registry.
    #[validate(length(min = 1, max = 64))]
    pub bundle: String,
    /// The bundle registry, a JSON file. Empty = the shipped `config/bundles.json`.
    pub registry: String,
    #[validate(range(min = 1, max = 10))]
    pub max_gaps: usize,
    #[validate(range(min = 1, max = 50))]
    pub results_per_gap: usize,
    /// Time for a decision when the request names none.
    #[validate(range(min = 10, max = 120_000))]
    pub deadline_ms: u64,
    /// The most a request may name.
    #[validate(range(min = 10, max = 120_000))]
    pub max_deadline_ms: u64,
    #[validate(range(min = 16, max = 8192))]
    pub regenerate_max_tokens: u32,
}

/// `activation.*`: which records are ambient, and the profile a session starts with.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ActivationSettings {
    /// Tokens the profile may take (whole records only).
    #[validate(range(min = 20, max = 100_000))]
    pub profile_token_budget: usize,
    /// Categories in priority order; a record no rule matches falls in the last.
    #[validate(length(min = 1, max = 100), nested, custom(function = "distinct_categories"))]
    pub categories: Vec<CategorySettings>,
}

fn distinct_categories(categories: &[CategorySettings]) -> Result<(), validator::ValidationError> {
    let mut names: Vec<&str> = categories.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err(validator::ValidationError::new("duplicate category name"));
    }
    Ok(())
}

/// `activation.categories[]`
#[derive(Debug, Clone, Deserialize, serde::Serialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct CategorySettings {
    #[validate(length(min = 1, max = 64))]
    pub name: String,
    /// Attribute words (`style` matches `explanation_style`).
    #[serde(default)]
    pub attributes: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub policy: AmbiencePolicy,
}

/// `promote`, `conditional` or `review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AmbiencePolicy {
    Promote,
    Conditional,
    Review,
}

/// `calibrations[]`: one model's calibrated thresholds.
#[derive(Debug, Clone, Deserialize, serde::Serialize, Validate, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CalibrationSettings {
    #[validate(length(min = 1, max = 200))]
    pub model: String,
    #[validate(range(min = 1))]
    pub version: u32,
    #[validate(range(min = 1, max = 8192))]
    pub dims: u32,
    #[validate(range(min = -1.0, max = 1.0))]
    pub dense_floor: f64,
    #[validate(range(min = 0.0, max = 1.0))]
    pub duplicate_collapse_floor: f64,
    #[validate(range(min = 0.0, max = 1.0))]
    pub entail_floor: f64,
    #[validate(range(min = 0.0, max = 1.0))]
    pub same_meaning_floor: f64,
    /// How and when it was made.
    #[validate(length(max = 500))]
    pub source: String,
}

/// The four model-dependent thresholds in force: each set explicitly, or the configured
/// model's calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelThresholds {
    pub dense_floor: f64,
    pub duplicate_collapse_floor: f64,
    pub entail_floor: f64,
    pub same_meaning_floor: f64,
}

impl Settings {
    /// The calibration recorded for the configured embedding model.
    pub fn calibration(&self) -> Option<&CalibrationSettings> {
        let e = &self.embedding;
        self.calibrations.iter().find(|c| c.model == e.model && c.version == e.version && c.dims == e.dims)
    }

    /// Model-dependent thresholds set explicitly to something other than the configured
    /// model's calibration: `(key, set, calibrated)`.
    pub fn overridden_thresholds(&self) -> Vec<(&'static str, f64, f64)> {
        let Some(c) = self.calibration() else { return Vec::new() };
        self.model_thresholds()
            .into_iter()
            .filter_map(|(key, set, calibrated)| {
                set.filter(|v| *v != calibrated(c)).map(|v| (key, v, calibrated(c)))
            })
            .collect()
    }

    /// The four model-dependent thresholds: key, explicit value, and where the calibration
    /// holds it (in `ModelThresholds` order).
    #[allow(clippy::type_complexity)]
    fn model_thresholds(&self) -> [(&'static str, Option<f64>, fn(&CalibrationSettings) -> f64); 4] {
        [
            ("retrieval.gate.dense_floor", self.retrieval.gate.dense_floor, |c| c.dense_floor),
            ("retrieval.duplicate_collapse_floor", self.retrieval.duplicate_collapse_floor, |c| {
                c.duplicate_collapse_floor
            }),
            ("ingestion.evidence.entail_floor", self.ingestion.evidence.entail_floor, |c| c.entail_floor),
            ("ingestion.same_meaning_floor", self.ingestion.same_meaning_floor, |c| c.same_meaning_floor),
        ]
    }

    /// The thresholds in force, or why there are none: a threshold left unset (`null`) comes
    /// from the configured model's calibration, and a model without one has none.
    pub fn thresholds(&self) -> Result<ModelThresholds, String> {
        let calibration = self.calibration();
        let mut values = [0.0; 4];
        for (value, (key, explicit, calibrated)) in values.iter_mut().zip(self.model_thresholds()) {
            *value = explicit.or_else(|| calibration.map(calibrated)).ok_or_else(|| {
                let e = &self.embedding;
                format!(
                    "{key} depends on the embedding model, and no calibration is recorded for {} v{} ({} dims): \
                     run `retold ops calibrate --config FILE` for it, or set {key}",
                    e.model, e.version, e.dims
                )
            })?;
        }
        let [dense_floor, duplicate_collapse_floor, entail_floor, same_meaning_floor] = values;
        Ok(ModelThresholds { dense_floor, duplicate_collapse_floor, entail_floor, same_meaning_floor })
    }
}

/// `sessions.*`: how session turns are kept.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct SessionsSettings {
    /// Every appended turn also becomes a searchable episodic record (turn memory).
    pub turn_memory: bool,
    /// Characters of the previous turn's end a turn record is embedded and indexed with.
    #[validate(range(max = 2_000))]
    pub turn_context_chars: usize,
}

/// `operations.*`: what the maintenance operations use (they never run on their own).
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct OperationsSettings {
    /// `retold ops retention` deletes session turns older than this (0: every turn of an
    /// extracted session).
    #[validate(range(max = 36_500))]
    pub transcript_retention_days: u32,
    /// `retold ops retention` deletes search traces older than this (0: every trace).
    #[validate(range(max = 36_500))]
    pub search_trace_retention_days: u32,
    #[validate(nested)]
    pub review: ReviewSettings,
}

/// `operations.review.*`: what `retold ops flag-reviews` flags.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ReviewSettings {
    /// Provisional records expiring within this many hours.
    #[validate(range(min = 1, max = 87_600))]
    pub expiring_within_hours: u32,
    /// Confirmed records below this confidence …
    #[validate(range(min = 0.0, max = 1.0))]
    pub low_confidence_below: f64,
    /// … that nothing created or reinforced for this many days (0: at once).
    #[validate(range(max = 36_500))]
    pub stale_after_days: u32,
}

/// A secret from configuration; `Debug` never shows it.
#[derive(Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "Secret(<empty>)" } else { "Secret(<redacted>)" })
    }
}

/// `hosted.*`: the hosted model providers.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct HostedSettings {
    pub anthropic: ProviderSettings,
    pub openai: ProviderSettings,
    #[validate(range(min = 1, max = 600_000))]
    pub timeout_ms: u64,
    #[validate(range(max = 10))]
    pub max_retries: u32,
    #[validate(range(min = 1, max = 60_000))]
    pub backoff_ms: u64,
    #[validate(range(min = 1, max = 600_000))]
    pub backoff_max_ms: u64,
}

/// `hosted.anthropic.*`, `hosted.openai.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    pub base_url: String,
    /// Empty = the provider's usual environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY).
    pub api_key: Secret,
}

/// `server.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    pub listen: std::net::SocketAddr,
    pub data_dir: String,
    #[validate(range(min = 1, max = 600_000))]
    pub request_timeout_ms: u64,
    #[validate(range(min = 1024, max = 268_435_456))]
    pub body_limit_bytes: usize,
    pub cors_origins: Vec<String>,
    #[validate(range(max = 600_000))]
    pub shutdown_grace_ms: u64,
    /// How long an `Idempotency-Key` and its first answer are kept.
    #[validate(range(min = 1_000, max = 2_592_000_000_u64))]
    pub idempotency_ttl_ms: u64,
    /// `Host` values `/mcp` accepts (DNS-rebinding protection of MCP's HTTP transport).
    pub mcp_allowed_hosts: Vec<String>,
}

/// `auth.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// SHA-256 hex of the admin key.
    pub admin_key_sha256: String,
    /// The admin key itself, for automation (`RETOLD__AUTH__ADMIN_KEY`); hashed at start.
    pub admin_key: String,
}

/// SQLite `synchronous` level under WAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    Normal,
    Full,
}

/// Which store holds the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A SQLite file in the data directory (one process).
    Sqlite,
    /// A PostgreSQL database at `storage.url` (any number of replicas).
    Postgres,
}

/// `storage.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct StorageSettings {
    pub backend: Backend,
    /// `postgres://…` when the backend is postgres (it may hold a password: never logged).
    pub url: Secret,
    #[validate(range(min = 1, max = 1000))]
    pub max_connections: u32,
    #[validate(range(min = 1, max = 600_000))]
    pub acquire_timeout_ms: u64,
    #[validate(range(min = 1, max = 3_600_000))]
    pub statement_timeout_ms: u64,
    #[validate(range(min = 10, max = 600_000))]
    pub follow_poll_ms: u64,
    #[validate(length(min = 1, max = 255))]
    pub sqlite_file: String,
    #[validate(range(min = 1, max = 600_000))]
    pub busy_timeout_ms: u64,
    pub synchronous: Synchronous,
    #[validate(range(min = 1, max = 64))]
    pub max_read_connections: u32,
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Attention-masked mean (all-MiniLM-L6-v2).
    Mean,
    /// The first token (BGE-M3).
    Cls,
}

/// `embedding.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingSettings {
    #[validate(length(min = 1, max = 200))]
    pub model: String,
    #[validate(range(min = 1))]
    pub version: u32,
    #[validate(range(min = 1, max = 8192))]
    pub dims: u32,
    pub pooling: Pooling,
    #[validate(range(min = 8, max = 8192))]
    pub max_length: usize,
    #[validate(range(min = 1, max = 1024))]
    pub batch_size: usize,
    #[validate(range(min = 1, max = 64))]
    pub workers: usize,
    /// Threads each ONNX run uses.
    #[validate(range(min = 1, max = 64))]
    pub threads: usize,
    /// Most sentence vectors a record gets beside its own vector (its first sentences of four
    /// words or more, a sentence repeated with other numbers only counting once); 0 gives none.
    #[validate(range(max = 256))]
    pub sentence_vectors: usize,
    pub model_dir: String,
    pub runtime_library: String,
}

impl EmbeddingSettings {
    /// With `model_dir` empty the default files `cargo xtask setup` derives are served
    /// (all-MiniLM-L6-v2 computing in int8, version 2). Two settings would then serve them
    /// wrongly, silently: version 1 of that model (the pinned files computing in f32, whose
    /// vectors a store embedded before holds) would label other vectors as its own, and runs
    /// of more than one text would make a text's vector depend on the texts beside it.
    fn provisioned_model_problems(&self) -> Vec<String> {
        if !self.model_dir.is_empty() {
            return Vec::new();
        }
        let mut problems = Vec::new();
        let pinned = retold_index::OnnxEmbedderConfig::pinned();
        if self.model == pinned.model && self.version == pinned.version {
            problems.push(format!(
                "embedding.version: {} is the pinned all-MiniLM-L6-v2 files computing in f32, but embedding.model_dir \
                 is empty, which serves the default files (computing in int8); to serve version {0}, set \
                 embedding.model_dir to {} (and embedding.batch_size as you like), or use the default version",
                pinned.version,
                pinned.model_dir.display()
            ));
        }
        if self.batch_size > 1 {
            problems.push(format!(
                "embedding.batch_size: {} runs texts together, but the default model (embedding.model_dir empty) \
                 quantises its activations once per run, so a text's vector would depend on the texts beside it; \
                 use 1, or set embedding.model_dir to a model computing in floats",
                self.batch_size
            ));
        }
        problems
    }
}

/// `retrieval.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct RetrievalSettings {
    #[validate(range(min = 1, max = 10_000))]
    pub rrf_k: u32,
    #[validate(nested)]
    pub fusion: FusionSettings,
    #[validate(range(min = 1, max = 1_000))]
    pub per_generator_k: usize,
    /// Which query words also match their inflections (same Snowball English stem).
    pub lexical_stemming: LexicalStemming,
    /// How much of the eligible records' mean vector the dense channel takes away from the
    /// query and each record before ranking by cosine (0 = plain cosine, 1 = all of it).
    #[validate(custom(function = "share"))]
    pub dense_centring: f32,
    /// When the query names a person the store knows (or points at one by its pronouns), the
    /// share of the dense channel's query vector that is the query as written; the rest is the
    /// query without those names and pronouns (1 = off).
    #[validate(custom(function = "share"))]
    pub dense_name_weight: f32,
    #[validate(range(min = 1, max = 1_000))]
    pub default_limit: usize,
    #[validate(range(min = 1, max = 1_000))]
    pub max_limit: usize,
    #[validate(range(min = 1, max = 1_000_000))]
    pub token_budget: usize,
    /// A result whose record is longer shows its best-matching passage of at most this many
    /// tokens; 0 shows whole records.
    #[validate(custom(function = "passage_tokens"))]
    pub passage_tokens: usize,
    #[validate(nested)]
    pub gate: GateSettings,
    /// `null`: the configured model's calibration.
    #[validate(range(min = 0.0, max = 1.0))]
    pub duplicate_collapse_floor: Option<f64>,
    #[validate(range(min = 0.0, max = 1.0))]
    pub entity_max_share: f64,
    /// A broad entity the query names ranks those of its records another channel found.
    pub entity_broad_corroborates: bool,
    /// A question in the first person names the principal's user, in the second its agent.
    pub pronouns: bool,
    #[validate(nested)]
    pub freshness: FreshnessSettings,
    #[validate(nested)]
    pub query_time: QueryTimeSettings,
    /// An episode that says little ranks lower.
    #[validate(nested)]
    pub substance: SubstanceSettings,
    #[validate(nested)]
    pub rewrite: ModelStageSettings,
    #[validate(nested)]
    pub reranker: RerankerSettings,
}

/// A share in [0, 1] (NaN is refused too).
fn share(value: f32) -> Result<(), validator::ValidationError> {
    match (0.0..=1.0).contains(&value) {
        true => Ok(()),
        false => {
            Err(validator::ValidationError::new("range")
                .with_message("must be a share between 0 and 1".into()))
        }
    }
}

/// 0 (whole records) or 20 to 100,000 tokens: a passage shorter than a sentence or two says
/// nothing.
fn passage_tokens(value: usize) -> Result<(), validator::ValidationError> {
    match value {
        0 | 20..=100_000 => Ok(()),
        _ => Err(validator::ValidationError::new("range")
            .with_message("must be 0 (whole records) or between 20 and 100000".into())),
    }
}

/// `retrieval.fusion.*`: each channel's weight in the fusion.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct FusionSettings {
    #[validate(range(min = 0.0, max = 100.0))]
    pub dense: f64,
    #[validate(range(min = 0.0, max = 100.0))]
    pub lexical: f64,
    #[validate(range(min = 0.0, max = 100.0))]
    pub entity: f64,
    /// The dense channel's second list, records ranked by their best sentence vector (0: none).
    #[validate(range(min = 0.0, max = 100.0))]
    pub sentences: f64,
    /// The dense channel over the records inside the time the query names (0: none).
    #[validate(range(min = 0.0, max = 100.0))]
    pub window: f64,
}

/// `retrieval.gate.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct GateSettings {
    /// `null`: the configured model's calibration.
    #[validate(range(min = -1.0, max = 1.0))]
    pub dense_floor: Option<f64>,
    #[validate(range(min = 0.0, max = 1.0))]
    pub lexical_min_term_share: f64,
    #[validate(range(min = 1, max = 64))]
    pub lexical_enough_terms: usize,
}

/// `retrieval.freshness.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct FreshnessSettings {
    #[validate(range(min = 0.1, max = 36_500.0))]
    pub episodic_half_life_days: f64,
    #[validate(range(min = 0.0, max = 1.0))]
    pub floor: f64,
    #[validate(nested)]
    pub newer_first: NewerFirstSettings,
}

/// `retrieval.freshness.newer_first.*`: the newer of two alike results ranks first.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct NewerFirstSettings {
    pub enabled: bool,
    /// How alike (cosine of the stored vectors) two results must be.
    #[validate(range(min = 0.0, max = 1.0))]
    pub similarity: f64,
    /// The newer's score as a share of the older's, at least.
    #[validate(range(min = 0.0, max = 1.0))]
    pub score_share: f64,
    /// How many of the first results it looks at.
    #[validate(range(min = 2, max = 50))]
    pub head: usize,
}

/// `retrieval.substance.*`: an episode with fewer than `words` content words keeps
/// `floor + (1 - floor) × n / words` of its score.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct SubstanceSettings {
    pub enabled: bool,
    #[validate(range(min = 1, max = 1_000))]
    pub words: usize,
    #[validate(range(min = 0.0, max = 1.0))]
    pub floor: f64,
}

/// `retrieval.query_time.*`: the time a query names ("last month", "in March 2023").
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct QueryTimeSettings {
    pub enabled: bool,
    /// The factor a record dated inside the query's window gets; more than 1.
    #[validate(range(exclusive_min = 1.0, max = 100.0))]
    pub boost: f64,
    /// The factor a record that names a time gets when the question asks when; 1.0 leaves
    /// them as they are.
    #[validate(range(min = 1.0, max = 100.0))]
    pub asks_when_boost: f64,
}

/// A stage backed by a hosted model call with a timeout (`retrieval.rewrite`).
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ModelStageSettings {
    pub enabled: bool,
    #[validate(length(min = 1, max = 200))]
    pub model: String,
    #[validate(range(min = 1, max = 120_000))]
    pub timeout_ms: u64,
}

/// `retrieval.reranker.*`: the optional local cross-encoder.
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct RerankerSettings {
    pub enabled: bool,
    /// The model's name. With `model_dir` empty it must be the provisioned model's.
    #[validate(length(min = 1, max = 200))]
    pub model: String,
    /// Directory holding its `model.onnx` and `tokenizer.json`; empty = the provisioned one.
    pub model_dir: String,
    pub placement: RerankerPlacement,
    /// How many of the first survivors it reorders.
    #[validate(range(min = 1, max = 1_000))]
    pub candidates: usize,
    /// Tokens of a query and document pair; longer pairs are cut. At most 512, the position
    /// limit of BERT-sized cross-encoders.
    #[validate(range(min = 8, max = 512))]
    pub max_length: usize,
    #[validate(range(min = 1, max = 120_000))]
    pub timeout_ms: u64,
}

/// `retrieval.lexical_stemming`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LexicalStemming {
    Off,
    Unmatched,
    All,
}

/// `retrieval.reranker.placement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RerankerPlacement {
    AfterGate,
    InsteadOfGate,
}

/// `ingestion.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct IngestionSettings {
    #[validate(length(min = 1, max = 200))]
    pub extraction_model: String,
    #[validate(length(min = 1, max = 200))]
    pub review_model: String,
    #[validate(nested)]
    pub evidence: EvidenceSettings,
    #[validate(range(min = 1, max = 100_000))]
    pub max_entity_attributes: usize,
    #[validate(range(min = 0.01, max = 36_500.0))]
    pub provisional_ttl_days: f64,
    #[validate(range(min = 1, max = 1_000))]
    pub reinforcements_to_confirm: u32,
    /// `null`: the configured model's calibration.
    #[validate(range(min = 0.0, max = 1.0))]
    pub same_meaning_floor: Option<f64>,
    #[validate(range(min = 0.0, max = 1.0))]
    pub reinforcement_step: f64,
    #[validate(nested)]
    pub attribute_alias: AttributeAliasSettings,
    #[validate(nested)]
    pub extraction: ExtractionSettings,
}

/// `ingestion.extraction.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct ExtractionSettings {
    pub enabled: bool,
    #[validate(range(min = 256, max = 128_000))]
    pub max_tokens: u32,
    #[validate(range(min = 256, max = 128_000))]
    pub review_max_tokens: u32,
    #[validate(range(min = 1_000, max = 10_000_000))]
    pub max_transcript_chars: usize,
    #[validate(range(min = 1_000, max = 86_400_000))]
    pub sweep_interval_ms: u64,
    #[validate(range(min = 60_000, max = 604_800_000))]
    pub claim_lease_ms: u64,
    #[validate(range(min = 1, max = 20))]
    pub max_attempts: u32,
}

/// `ingestion.attribute_alias.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct AttributeAliasSettings {
    #[validate(range(min = -1.0, max = 1.0))]
    pub name_floor: f64,
    #[validate(range(min = -1.0, max = 1.0))]
    pub content_floor: f64,
}

/// `ingestion.evidence.*`
#[derive(Debug, Clone, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSettings {
    /// `null`: the configured model's calibration.
    #[validate(range(min = 0.0, max = 1.0))]
    pub entail_floor: Option<f64>,
}

/// Log line format (`telemetry.log_format`; `retold --log-format` overrides it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Text when stderr is a terminal, JSON otherwise.
    Auto,
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// Whether log lines are JSON, given whether stderr is a terminal.
    pub fn is_json(self, stderr_is_terminal: bool) -> bool {
        match self {
            Self::Auto => !stderr_is_terminal,
            Self::Text => false,
            Self::Json => true,
        }
    }
}

/// `telemetry.*`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    pub otlp_endpoint: String,
    pub log_format: LogFormat,
    pub log_filter: String,
}

impl Settings {
    /// Load from the embedded defaults, then `file` when given, then the process environment.
    pub fn load(file: Option<&Path>) -> Result<Self, SettingsError> {
        Self::load_with_env(file, std::env::vars())
    }

    /// Like [`Settings::load`] with an explicit environment (tests use this; no global state).
    pub fn load_with_env(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, SettingsError> {
        let env: config::Map<String, String> = env.into_iter().collect();
        let mut builder = config::Config::builder()
            .add_source(config::File::from_str(DEFAULT_YAML, config::FileFormat::Yaml));
        if let Some(path) = file {
            builder = builder.add_source(config::File::from(path.to_path_buf()).required(true));
        }
        builder = builder.add_source(
            config::Environment::with_prefix(ENV_PREFIX)
                .prefix_separator("__")
                .separator("__")
                .try_parsing(true)
                .list_separator(",")
                .with_list_parse_key("server.cors_origins")
                .source(Some(env.clone())),
        );
        let mut settings: Settings = builder.build()?.try_deserialize()?;
        // The providers' own variables fill keys the configuration leaves empty, read from the
        // same environment as everything else.
        for (provider, variable) in [
            (&mut settings.hosted.anthropic, "ANTHROPIC_API_KEY"),
            (&mut settings.hosted.openai, "OPENAI_API_KEY"),
        ] {
            if provider.api_key.0.trim().is_empty()
                && let Some(key) = env.get(variable)
            {
                provider.api_key = Secret(key.trim().to_owned());
            }
        }
        settings.validate().map_err(|errors| SettingsError::Invalid(flatten("", &errors)))?;
        settings.check_relations()?;
        Ok(settings)
    }

    /// Rules that span more than one field.
    fn check_relations(&self) -> Result<(), SettingsError> {
        let mut problems = Vec::new();
        if self.retrieval.default_limit > self.retrieval.max_limit {
            problems.push(format!(
                "retrieval.default_limit: {} exceeds retrieval.max_limit {}",
                self.retrieval.default_limit, self.retrieval.max_limit
            ));
        }
        for (name, provider) in [("anthropic", &self.hosted.anthropic), ("openai", &self.hosted.openai)] {
            let url = &provider.base_url;
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                problems.push(format!(
                    "hosted.{name}.base_url: must start with https:// or http:// (got {url:?})"
                ));
            }
        }
        if self.hosted.backoff_max_ms < self.hosted.backoff_ms {
            problems.push(format!(
                "hosted.backoff_max_ms: {} is below hosted.backoff_ms {}",
                self.hosted.backoff_max_ms, self.hosted.backoff_ms
            ));
        }
        let url = self.storage.url.expose();
        if self.storage.backend == Backend::Postgres
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            problems.push(
                "storage.url: the postgres backend needs a postgres:// URL (set RETOLD__STORAGE__URL)"
                    .to_owned(),
            );
        }
        problems.extend(self.embedding.provisioned_model_problems());
        if self.retrieval.fusion.sentences > 0.0 && self.embedding.sentence_vectors == 0 {
            problems.push(format!(
                "retrieval.fusion.sentences: {} ranks records by their sentence vectors, but embedding.sentence_vectors \
                 is 0 so records get none; set the weight to 0 or give records sentence vectors",
                self.retrieval.fusion.sentences
            ));
        }
        if self.retrieval.fusion.window > 0.0 && !self.retrieval.query_time.enabled {
            problems.push(format!(
                "retrieval.fusion.window: {} lists the records inside the time a query names, but \
                 retrieval.query_time.enabled is false so no query names one; set the weight to 0 or turn \
                 query_time on",
                self.retrieval.fusion.window
            ));
        }
        let key = &self.auth.admin_key_sha256;
        let is_sha256 = key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit());
        if !key.is_empty() && !is_sha256 {
            problems.push("auth.admin_key_sha256: must be 64 hex characters (a SHA-256) or empty".to_owned());
        }
        if problems.is_empty() { Ok(()) } else { Err(SettingsError::Invalid(problems)) }
    }

    /// The data directory: configured, or `$XDG_DATA_HOME/retold`, or `~/.local/share/retold`.
    pub fn data_dir(&self) -> PathBuf {
        if !self.server.data_dir.is_empty() {
            return PathBuf::from(&self.server.data_dir);
        }
        if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(xdg).join("retold");
        }
        home_dir().join(".local/share/retold")
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}

/// Turn nested validator errors into `section.key: message` lines.
fn flatten(prefix: &str, errors: &ValidationErrors) -> Vec<String> {
    let mut out = Vec::new();
    for (field, kind) in errors.errors() {
        let path = if prefix.is_empty() { field.to_string() } else { format!("{prefix}.{field}") };
        match kind {
            ValidationErrorsKind::Field(list) => {
                for error in list {
                    let detail = match (error.params.get("min"), error.params.get("max")) {
                        (Some(min), Some(max)) => format!("must be between {min} and {max}"),
                        (Some(min), None) => format!("must be at least {min}"),
                        (None, Some(max)) => format!("must be at most {max}"),
                        (None, None) => error.code.to_string(),
                    };
                    let value = error.params.get("value").map(|v| format!(" (got {v})")).unwrap_or_default();
                    out.push(format!("{path}: {detail}{value}"));
                }
            }
            ValidationErrorsKind::Struct(inner) => out.extend(flatten(&path, inner)),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    out.extend(flatten(&format!("{path}[{index}]"), inner));
                }
            }
        }
    }
    out.sort();
    out
}
