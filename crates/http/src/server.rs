//! Composition root: build every component from settings, wire the router, serve until a
//! shutdown signal, finishing in-flight requests.

use std::path::Path;
use std::sync::Arc;

use retold_app::{AdminService, IdempotencyService, Services, SessionService, Stores};
use retold_domain::{Clock, CompletionClient, Embedder, IdGenerator, Reranker, VectorIndex};
use retold_hosted::{ApiKey, HostedClient, HostedConfig, ProviderConfig};
use retold_index::{
    EligibilityTable, ExactIndex, OnnxEmbedder, OnnxEmbedderConfig, OnnxReranker, OnnxRerankerConfig,
    TrackedEntityWriter, TrackedWriter, default_model_dir, default_runtime_library,
};
use retold_ingest::{
    EmbeddingEntailmentJudge, ExtractionConfig, ExtractionRunner, IngestConfig, Ingestor, Ports,
    StructuredLLMExtractor, StructuredLLMReviewer,
};
use retold_retrieve::{
    HostedLLMQueryRewriter, NoRewriter, QueryRewriter, RetrieveConfig, RetrievePorts, Retriever,
};
use retold_store_postgres::{PostgresConfig, PostgresStore};
use retold_store_sqlite::{Durability, SqliteStore, StoreConfig};

use crate::auth::hash_key;
use crate::serve_error::ServeError;
use crate::settings::{Pooling, Settings, Synchronous};
use crate::state::AppState;
use crate::system::{SystemClock, UlidIds};

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
        threads: e.threads,
        model_dir: path_or(&e.model_dir, default_model_dir()),
        runtime_library: path_or(&e.runtime_library, default_runtime_library()),
    }
}

/// The write path's configuration from settings.
///
/// # Panics
/// When the model-dependent thresholds cannot be resolved ([`Settings::thresholds`]); the
/// service checks that before it builds anything.
pub fn ingest_config(settings: &Settings) -> IngestConfig {
    let i = &settings.ingestion;
    let t = settings.thresholds().expect("the model-dependent thresholds were checked at start");
    IngestConfig {
        entail_floor: t.entail_floor,
        max_entity_attributes: i.max_entity_attributes,
        provisional_ttl: retold_domain::chrono::TimeDelta::milliseconds(
            (i.provisional_ttl_days * 86_400_000.0) as i64,
        ),
        reinforcements_to_confirm: i.reinforcements_to_confirm,
        same_meaning_floor: t.same_meaning_floor,
        attribute_name_floor: i.attribute_alias.name_floor,
        attribute_content_floor: i.attribute_alias.content_floor,
        reinforcement_step: i.reinforcement_step,
        sentence_vectors: settings.embedding.sentence_vectors,
    }
}

/// The search pipeline's configuration from settings.
///
/// # Panics
/// When the model-dependent thresholds cannot be resolved ([`Settings::thresholds`]).
pub fn retrieve_config(settings: &Settings) -> RetrieveConfig {
    let r = &settings.retrieval;
    let t = settings.thresholds().expect("the model-dependent thresholds were checked at start");
    RetrieveConfig {
        rrf_k: r.rrf_k,
        fusion_weights: retold_retrieve::FusionWeights {
            dense: r.fusion.dense,
            lexical: r.fusion.lexical,
            entity: r.fusion.entity,
            sentences: r.fusion.sentences,
            window: r.fusion.window,
        },
        per_generator_k: r.per_generator_k,
        lexical_stemming: match r.lexical_stemming {
            crate::settings::LexicalStemming::Off => retold_retrieve::LexicalStemming::Off,
            crate::settings::LexicalStemming::Unmatched => retold_retrieve::LexicalStemming::Unmatched,
            crate::settings::LexicalStemming::All => retold_retrieve::LexicalStemming::All,
        },
        dense_centring: retold_domain::Centring::new(r.dense_centring)
            .expect("retrieval.dense_centring was validated at start"),
        dense_name_weight: r.dense_name_weight,
        default_limit: r.default_limit,
        max_limit: r.max_limit,
        token_budget: r.token_budget,
        dense_floor: t.dense_floor,
        lexical_min_term_share: r.gate.lexical_min_term_share,
        lexical_enough_terms: r.gate.lexical_enough_terms,
        duplicate_collapse_floor: t.duplicate_collapse_floor,
        entity_max_share: r.entity_max_share,
        entity_broad_corroborates: r.entity_broad_corroborates,
        pronouns: r.pronouns,
        episodic_half_life_days: r.freshness.episodic_half_life_days,
        episodic_freshness_floor: r.freshness.floor,
        newer_first: r.freshness.newer_first.enabled.then_some(retold_retrieve::NewerFirst {
            similarity: r.freshness.newer_first.similarity,
            score_share: r.freshness.newer_first.score_share,
            head: r.freshness.newer_first.head,
        }),
        substance: r
            .substance
            .enabled
            .then_some(retold_retrieve::Substance { words: r.substance.words, floor: r.substance.floor }),
        reranker_enabled: r.reranker.enabled,
        reranker_timeout: std::time::Duration::from_millis(r.reranker.timeout_ms),
        reranker_placement: match r.reranker.placement {
            crate::settings::RerankerPlacement::AfterGate => retold_retrieve::RerankerPlacement::AfterGate,
            crate::settings::RerankerPlacement::InsteadOfGate => {
                retold_retrieve::RerankerPlacement::InsteadOfGate
            }
        },
        reranker_candidates: r.reranker.candidates,
        passage_tokens: r.passage_tokens,
        query_time_boost: r.query_time.enabled.then_some(r.query_time.boost),
        asks_when_boost: if r.query_time.enabled { r.query_time.asks_when_boost } else { 1.0 },
    }
}

/// Activation's category rules and profile budget from settings.
pub fn activation_config(settings: &Settings) -> retold_app::ActivationConfig {
    let a = &settings.activation;
    retold_app::ActivationConfig {
        categories: a
            .categories
            .iter()
            .map(|c| retold_policy::CategoryRule {
                name: c.name.clone(),
                attributes: c.attributes.clone(),
                tags: c.tags.clone(),
                ambience: match c.policy {
                    crate::settings::AmbiencePolicy::Promote => retold_domain::Ambience::Promote,
                    crate::settings::AmbiencePolicy::Conditional => retold_domain::Ambience::Conditional,
                    crate::settings::AmbiencePolicy::Review => retold_domain::Ambience::Review,
                },
            })
            .collect(),
        profile_token_budget: a.profile_token_budget,
    }
}

/// How sessions keep their turns, from settings.
pub fn sessions_config(settings: &Settings) -> retold_app::SessionsConfig {
    retold_app::SessionsConfig {
        turn_memory: settings.sessions.turn_memory,
        turn_context_chars: settings.sessions.turn_context_chars,
    }
}

/// The operations' configuration from settings.
pub fn operations_config(settings: &Settings) -> retold_app::OperationsConfig {
    let o = &settings.operations;
    retold_app::OperationsConfig {
        transcript_retention: retold_domain::chrono::TimeDelta::days(i64::from(o.transcript_retention_days)),
        search_trace_retention: retold_domain::chrono::TimeDelta::days(i64::from(
            o.search_trace_retention_days,
        )),
        review_expiring_within: retold_domain::chrono::TimeDelta::hours(i64::from(
            o.review.expiring_within_hours,
        )),
        review_low_confidence_below: o.review.low_confidence_below,
        review_stale_after: retold_domain::chrono::TimeDelta::days(i64::from(o.review.stale_after_days)),
    }
}

/// The store configuration from settings.
pub fn store_config(settings: &Settings, data_dir: &Path) -> StoreConfig {
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

/// The PostgreSQL store's configuration from settings.
pub fn postgres_config(settings: &Settings) -> PostgresConfig {
    let s = &settings.storage;
    PostgresConfig {
        url: s.url.expose().to_owned(),
        max_connections: s.max_connections,
        acquire_timeout: std::time::Duration::from_millis(s.acquire_timeout_ms),
        statement_timeout: std::time::Duration::from_millis(s.statement_timeout_ms),
    }
}

/// The store a service runs on, to flush and close on shutdown; a PostgreSQL replica also
/// stops following the other replicas' changes.
#[derive(Debug, Clone)]
pub enum StoreHandle {
    Sqlite(SqliteStore),
    Postgres { store: PostgresStore, follower: tokio_util::sync::CancellationToken },
}

impl StoreHandle {
    /// A PostgreSQL store that follows no other process (yet).
    pub fn postgres(store: PostgresStore) -> Self {
        Self::Postgres { store, follower: tokio_util::sync::CancellationToken::new() }
    }

    /// The SQLite store, when that is the backend.
    pub fn sqlite(&self) -> Option<&SqliteStore> {
        match self {
            Self::Sqlite(store) => Some(store),
            Self::Postgres { .. } => None,
        }
    }

    /// Every store port, straight on the store (no derived in-memory copies).
    pub fn stores(&self) -> Stores {
        match self {
            Self::Sqlite(store) => Stores::from_store(Arc::new(store.clone())),
            Self::Postgres { store, .. } => Stores::from_store(Arc::new(store.clone())),
        }
    }

    /// Write every search trace handed so far.
    pub async fn flush_traces(&self) {
        match self {
            Self::Sqlite(store) => store.flush_traces().await,
            Self::Postgres { store, .. } => store.flush_traces().await,
        }
    }

    /// Flush the traces and close the pools.
    pub async fn close(self) -> Result<(), retold_store_sqlite::StoreError> {
        match self {
            Self::Sqlite(store) => store.close().await,
            Self::Postgres { store, follower } => {
                follower.cancel();
                store.close().await
            }
        }
    }
}

/// Open the configured store: its handle, its ports, and for PostgreSQL its change feed.
pub(crate) async fn open_store(
    settings: &Settings,
    data_dir: &Path,
) -> Result<(StoreHandle, Stores, Option<Arc<dyn retold_domain::ChangeFeed>>), ServeError> {
    Ok(match settings.storage.backend {
        crate::settings::Backend::Sqlite => {
            let store = Arc::new(SqliteStore::open(&store_config(settings, data_dir)).await?);
            (StoreHandle::Sqlite((*store).clone()), Stores::from_store(store), None)
        }
        crate::settings::Backend::Postgres => {
            let store = Arc::new(PostgresStore::open(&postgres_config(settings)).await?);
            let handle = StoreHandle::postgres((*store).clone());
            (handle, Stores::from_store(store.clone()), Some(store as Arc<dyn retold_domain::ChangeFeed>))
        }
    })
}

/// The hosted client's configuration from settings (the settings already hold keys from the
/// providers' usual environment variables).
pub fn hosted_config(settings: &Settings) -> HostedConfig {
    let h = &settings.hosted;
    let provider = |p: &crate::settings::ProviderSettings| ProviderConfig {
        base_url: p.base_url.clone(),
        api_key: ApiKey::new(p.api_key.expose()),
    };
    HostedConfig {
        anthropic: provider(&h.anthropic),
        openai: provider(&h.openai),
        timeout: std::time::Duration::from_millis(h.timeout_ms),
        max_retries: h.max_retries,
        backoff: std::time::Duration::from_millis(h.backoff_ms),
        backoff_max: std::time::Duration::from_millis(h.backoff_max_ms),
    }
}

/// Hosted model clients for the stages that use one; `None` leaves the stage off.
#[derive(Clone, Default)]
#[allow(missing_debug_implementations)]
pub struct Hosted {
    /// For query rewriting (`retrieval.rewrite`).
    pub rewrite: Option<Arc<dyn CompletionClient>>,
    /// For session extraction and candidate review (`ingestion.extraction`).
    pub extraction: Option<Arc<dyn CompletionClient>>,
    /// The orchestrator's bundle and hosted models (`orchestrator.bundle`); `hosted_stages`
    /// resolves it, and `services` needs it.
    pub orchestrator: Option<OrchestratorStage>,
}

/// The orchestrator's bundle with its planner and the client it regenerates with.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct OrchestratorStage {
    pub bundle: retold_app::orchestrator::Bundle,
    /// The bundle's gap policy: the offline planner, or the hosted one (whose key is required
    /// to start).
    pub planner: Arc<dyn retold_app::orchestrator::GapPlanner>,
    /// The regeneration client, or why regeneration is off.
    pub regenerator: Result<Arc<dyn CompletionClient>, String>,
}

impl OrchestratorStage {
    /// The decision pipeline of this stage over `retriever` (the service's, or an evaluation's).
    pub fn pipeline(
        &self,
        settings: &Settings,
        retriever: retold_retrieve::Retriever,
        embedder: Arc<dyn retold_domain::Embedder>,
        clock: Arc<dyn retold_domain::Clock>,
    ) -> retold_app::orchestrator::DecisionPipeline {
        retold_app::orchestrator::DecisionPipeline {
            retriever,
            embedder,
            planner: self.planner.clone(),
            bundle: self.bundle.clone(),
            regenerator: self.regenerator.clone(),
            config: orchestrator_config(settings),
            clock,
        }
    }
}

/// The wired write path, search pipeline and, when on, the extraction runner.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct Wired {
    pub ingestor: Ingestor,
    pub retriever: Retriever,
    pub extraction: Option<ExtractionRunner>,
}

/// What every service runs over: the store's ports, the vector index, the embedder, the
/// clock and the id generator.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct Components {
    pub stores: Stores,
    pub index: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    /// The optional reranker, loaded when `retrieval.reranker.enabled` ([`load_reranker`]).
    pub reranker: Option<Arc<dyn Reranker>>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
}

/// The write path, the search pipeline and the extraction runner over `components`,
/// configured from settings. The service and the evaluation harness both use this one wiring.
pub fn wire(components: &Components, settings: &Settings, hosted: &Hosted) -> Wired {
    let Components { stores, index, embedder, reranker, clock, ids } = components.clone();
    if settings.retrieval.reranker.enabled && reranker.is_none() {
        tracing::warn!(
            "retrieval.reranker.enabled is true but no reranker was loaded (load_reranker): searches run without it"
        );
    }
    let stores = &stores;
    let ports = Ports {
        writer: stores.writer.clone(),
        records: stores.records.clone(),
        facts: stores.facts.clone(),
        graph: stores.graph.clone(),
        audit: stores.audit.clone(),
        entities: stores.entities.clone(),
        entity_writer: stores.entity_writer.clone(),
        grants: stores.grants.clone(),
        turns: stores.turns.clone(),
        receipts: stores.receipts.clone(),
        sentences: stores.sentences.clone(),
        background: Arc::new(retold_app::BackgroundTasks::default()),
        embedder: embedder.clone(),
        index: index.clone(),
        judge: Arc::new(EmbeddingEntailmentJudge::new(embedder.clone())),
        clock: clock.clone(),
        ids: ids.clone(),
    };
    let ingestor = Ingestor::new(ports, ingest_config(settings));
    // One stemmer for every stage that tells a word's inflections from other words: the
    // lexical channel, newer-first, the rewrite guard and the extraction review.
    let stemmer: Arc<dyn retold_domain::WordStemmer> = Arc::new(retold_index::SnowballEnglish::new());
    let rewriter: Arc<dyn QueryRewriter> = match &hosted.rewrite {
        Some(client) => Arc::new(HostedLLMQueryRewriter::new(
            client.clone(),
            settings.retrieval.rewrite.model.clone(),
            std::time::Duration::from_millis(settings.retrieval.rewrite.timeout_ms),
            stemmer.clone(),
        )),
        None => Arc::new(NoRewriter),
    };
    let extraction = hosted.extraction.as_ref().map(|client| {
        let i = &settings.ingestion;
        ExtractionRunner::new(
            ingestor.clone(),
            stores.claims.clone(),
            Arc::new(StructuredLLMExtractor::new(
                client.clone(),
                i.extraction_model.clone(),
                i.extraction.max_tokens,
            )),
            Arc::new(StructuredLLMReviewer::new(
                client.clone(),
                i.review_model.clone(),
                i.extraction.review_max_tokens,
            )),
            stemmer.clone(),
            ExtractionConfig {
                runner_id: format!("retold-{}-{}", std::process::id(), ids.next_body().to_lowercase()),
                max_transcript_chars: i.extraction.max_transcript_chars,
                lease: retold_domain::chrono::TimeDelta::milliseconds(
                    i64::try_from(i.extraction.claim_lease_ms).unwrap_or(i64::MAX),
                ),
                max_attempts: i.extraction.max_attempts,
            },
        )
    });
    let retriever = Retriever::new(
        RetrievePorts {
            eligibility: stores.eligibility.clone(),
            records: stores.records.clone(),
            graph: stores.graph.clone(),
            entities: stores.entities.clone(),
            grants: stores.grants.clone(),
            lexical: stores.lexical.clone(),
            stemmer,
            index,
            embedder,
            search_log: stores.search_log.clone(),
            rewriter,
            reranker,
            clock,
            ids,
        },
        retrieve_config(settings),
    );
    Wired { ingestor, retriever, extraction }
}

/// `orchestrator.*` as the orchestrator's bounds.
pub fn orchestrator_config(settings: &Settings) -> retold_app::orchestrator::OrchestratorConfig {
    let o = &settings.orchestrator;
    retold_app::orchestrator::OrchestratorConfig {
        max_gaps: o.max_gaps,
        results_per_gap: o.results_per_gap,
        deadline: std::time::Duration::from_millis(o.deadline_ms),
        max_deadline: std::time::Duration::from_millis(o.max_deadline_ms.max(o.deadline_ms)),
        regenerate_max_tokens: o.regenerate_max_tokens,
    }
}

/// The store's ports with the eligibility filter answered from an `EligibilityTable` rebuilt
/// from the store, kept current by wrapping the two writers every record change goes through.
pub async fn derive_eligibility(stores: Stores) -> retold_domain::Result<Stores> {
    Ok(derive_eligibility_table(stores).await?.0)
}

/// [`derive_eligibility`], also handing back the table (a replica's follower keeps it current
/// with other processes' writes).
pub async fn derive_eligibility_table(
    mut stores: Stores,
) -> retold_domain::Result<(Stores, Arc<EligibilityTable>)> {
    let table = Arc::new(EligibilityTable::rebuild(stores.eligibility_rows.as_ref()).await?);
    stores.writer = Arc::new(TrackedWriter { inner: stores.writer, table: table.clone() });
    stores.entity_writer =
        Arc::new(TrackedEntityWriter { inner: stores.entity_writer, table: table.clone() });
    stores.eligibility = table.clone();
    Ok((stores, table))
}

/// Every service over `components`: the write path and search (`wire`), sessions,
/// administration and idempotency. `extraction_status` says why extraction is on or off.
/// `hosted` must come from [`hosted_stages`], which resolves the orchestrator's bundle.
pub fn services(
    components: &Components,
    settings: &Settings,
    hosted: &Hosted,
    extraction_status: String,
) -> Services {
    let Wired { ingestor, retriever, extraction } = wire(components, settings, hosted);
    let Components { stores, index, embedder, clock, ids, .. } = components.clone();
    let stores = &stores;
    // One tracker for background work and idempotent requests, which shutdown waits for.
    let tasks = tokio_util::task::TaskTracker::new();
    let sessions = SessionService::new(
        stores.turns.clone(),
        ingestor.clone(),
        sessions_config(settings),
        extraction,
        extraction_status,
        tasks.clone(),
        clock.clone(),
        ids.clone(),
    );
    let idempotency = IdempotencyService::new(
        stores.idempotency.clone(),
        clock.clone(),
        retold_domain::chrono::TimeDelta::milliseconds(
            i64::try_from(settings.server.idempotency_ttl_ms).unwrap_or(i64::MAX),
        ),
        tasks,
    );
    let operations = retold_app::OperationsService::new(
        stores,
        operations_config(settings),
        settings.data_dir().join("snapshots"),
        index.clone(),
        clock.clone(),
        ids.clone(),
    );
    let activation = retold_app::ActivationService::new(
        stores,
        retriever.clone(),
        activation_config(settings),
        clock.clone(),
        ids.clone(),
    );
    let stage = hosted.orchestrator.as_ref().expect("hosted_stages resolves the orchestrator's bundle");
    let orchestrator = retold_app::OrchestratorService::new(
        stage.pipeline(settings, retriever.clone(), embedder.clone(), clock.clone()),
        sessions.clone(),
        activation.clone(),
        stores.decisions.clone(),
        ids.clone(),
    );
    let admin = AdminService::new(stores, embedder, index, ingestor.clone(), sessions.clone(), clock, ids);
    Services { ingestor, retriever, sessions, admin, idempotency, operations, activation, orchestrator }
}

/// The hosted stages the settings turn on: a rewrite model without a key refuses to start
/// (it was asked for explicitly); extraction without keys starts off, with the reason.
pub fn hosted_stages(settings: &Settings) -> Result<(Hosted, String), ServeError> {
    let client = Arc::new(HostedClient::new(hosted_config(settings))?);
    let config = client.config().clone();
    let mut hosted = Hosted::default();
    if settings.retrieval.rewrite.enabled {
        config.check_model(&settings.retrieval.rewrite.model).map_err(ServeError::RewriteModel)?;
        hosted.rewrite = Some(client.clone());
    }
    let i = &settings.ingestion;
    let extraction = if !i.extraction.enabled {
        "off (ingestion.extraction.enabled is false)".to_owned()
    } else {
        match config.check_model(&i.extraction_model).and_then(|_| config.check_model(&i.review_model)) {
            Ok(_) => {
                hosted.extraction = Some(client.clone());
                format!("on ({}, reviewed by {})", i.extraction_model, i.review_model)
            }
            Err(e) => format!("off ({e})"),
        }
    };
    hosted.orchestrator = Some(orchestrator_stage(settings, client.clone())?);
    Ok((hosted, extraction))
}

/// The configured bundle and the clients it may use: a hosted planner needs its key to
/// start; regeneration without a key is off, and decisions say so.
fn orchestrator_stage(
    settings: &Settings,
    client: Arc<HostedClient>,
) -> Result<OrchestratorStage, ServeError> {
    let bundle = crate::bundles::configured(settings).map_err(ServeError::Orchestrator)?;
    let config = client.config().clone();
    let planner: Arc<dyn retold_app::orchestrator::GapPlanner> = match &bundle.gap_policy {
        retold_app::orchestrator::GapPolicy::Heuristic => Arc::new(
            retold_app::orchestrator::HeuristicGapPlanner::new(activation_config(settings).categories),
        ),
        retold_app::orchestrator::GapPolicy::Hosted { model } => {
            config.check_model(model).map_err(|e| {
                ServeError::Orchestrator(format!("bundle {} plans gaps with {model}, but {e}", bundle.id))
            })?;
            // The decision's own deadline bounds planning; this only caps a single call.
            let o = &settings.orchestrator;
            Arc::new(retold_app::orchestrator::HostedGapPlanner::new(
                client.clone(),
                model.clone(),
                std::time::Duration::from_millis(o.max_deadline_ms.max(o.deadline_ms)),
            ))
        }
    };
    let regenerator = match &bundle.model {
        None => Err(format!("bundle {} names no regeneration model", bundle.id)),
        Some(model) => match config.check_model(model) {
            Ok(_) => Ok(client as Arc<dyn CompletionClient>),
            Err(e) => Err(format!("regeneration with {model} is off: {e}")),
        },
    };
    Ok(OrchestratorStage { bundle, planner, regenerator })
}

/// A fully wired service and, on a first start without a configured key, the admin key it
/// just created (to be shown once).
#[allow(missing_debug_implementations)]
pub struct Built {
    pub state: AppState,
    /// The store, to close on shutdown.
    pub store: Arc<StoreHandle>,
    pub new_admin_key: Option<String>,
    pub vectors_loaded: usize,
}

/// Build every component: the embedder, the store (migrated), the index (rebuilt from the
/// store), and the services over them. The only place that names the concrete store.
pub async fn build(settings: &Settings, embedder: Arc<OnnxEmbedder>) -> Result<Built, ServeError> {
    preflight(settings)?;
    // A model that does not load is refused before the data directory is touched.
    let reranker = load_reranker(settings).await?;
    for (key, set, calibrated) in settings.overridden_thresholds() {
        tracing::warn!(key, set, calibrated, "a model-dependent threshold overrides the model's calibration");
    }
    let data_dir = settings.data_dir();
    std::fs::create_dir_all(&data_dir)
        .map_err(|source| ServeError::DataDir { path: data_dir.clone(), source })?;
    let (store, stores, feed) = open_store(settings, &data_dir).await?;
    if let StoreHandle::Postgres { store, .. } = &store {
        // While it serves, no model switch may replace the vectors it holds.
        store.hold_serving_lock().await?;
    }
    // A replica follows the changes committed after this number; the rebuild below reads at
    // least everything before it (re-applying a change is harmless).
    let after = match &feed {
        Some(feed) => Some(feed.change_head().await?),
        None => None,
    };
    // The eligibility table is read beside the index's scan and build (two cores, two reads).
    let embeddings = stores.embeddings.clone();
    let derived = tokio::spawn(derive_eligibility_table(stores));
    let (index, report) = ExactIndex::rebuild(embeddings.as_ref(), embedder.info()).await?;
    let (stores, table) =
        derived.await.map_err(|e| retold_domain::DomainError::backend("boot", e.to_string()))??;
    if report.incompatible > 0 {
        // Serving would leave those records out of the dense channel without a word.
        let stored = stores.reembedding.stored_models().await?;
        let info = embedder.info();
        return Err(ServeError::ModelMismatch(format!(
            "the store holds vectors of {}; the configuration names {} v{} ({} dims). Re-embed with \
             `retold ops reembed --config FILE` and switch with `retold ops switch-model --config FILE`, \
             or configure the stored model again",
            stored
                .iter()
                .map(|(m, n)| format!("{} v{} ({} dims) for {n} records", m.name, m.version, m.dims))
                .collect::<Vec<_>>()
                .join(", "),
            info.name,
            info.version,
            info.dims
        )));
    }
    let index = Arc::new(index);
    if let (Some(feed), Some(after), StoreHandle::Postgres { follower, .. }) = (feed, after, &store) {
        let follow =
            retold_index::Follower { feed, table, index: index.clone(), model: embedder.info().clone() };
        // LISTEN first (so no notification falls between the catch-up and the first wait),
        // catch up once before serving (writes committed during the rebuild), then follow.
        follow.feed.wait_for_change(std::time::Duration::ZERO).await?;
        let after = follow.catch_up(after).await?;
        let poll = std::time::Duration::from_millis(settings.storage.follow_poll_ms);
        tokio::spawn(follow.run(after, poll, follower.clone()));
    }
    let store = Arc::new(store);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ids: Arc<dyn IdGenerator> = Arc::new(UlidIds::new()?);
    let (hosted, extraction_status) = hosted_stages(settings)?;
    let components = Components { stores, index, embedder, reranker, clock, ids };
    let services = services(&components, settings, &hosted, extraction_status);
    // Sentence vectors a stopped process left waiting are attached while the service serves.
    let ingestor = services.ingestor.clone();
    tokio::spawn(async move {
        match ingestor.resume_pending_sentences().await {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(records = n, "attached the sentence vectors a stopped process left waiting")
            }
            Err(error) => {
                tracing::warn!(%error, "sentence vectors left waiting were not attached; the next start retries")
            }
        }
    });
    let mut admin_hashes = Vec::new();
    if !settings.auth.admin_key_sha256.is_empty() {
        admin_hashes.push(settings.auth.admin_key_sha256.to_lowercase());
    }
    if !settings.auth.admin_key.is_empty() {
        admin_hashes.push(hash_key(&settings.auth.admin_key));
    }
    let new_admin_key = if admin_hashes.is_empty() { services.admin.ensure_admin_key().await? } else { None };
    Ok(Built {
        state: AppState { services, admin_hashes },
        store,
        new_admin_key,
        vectors_loaded: report.loaded,
    })
}

/// What a configuration must satisfy before anything is opened: the model-dependent
/// thresholds resolve, the orchestrator's bundle exists, and an enabled reranker's files are
/// there.
fn preflight(settings: &Settings) -> Result<(), ServeError> {
    settings.thresholds().map_err(ServeError::Uncalibrated)?;
    crate::bundles::configured(settings).map_err(ServeError::Orchestrator)?;
    check_reranker(settings)
}

/// The reranker's configuration from settings (an empty `model_dir` means the provisioned
/// cross-encoder); it runs on the embedder's ONNX Runtime.
pub fn reranker_config(settings: &Settings) -> OnnxRerankerConfig {
    let r = &settings.retrieval.reranker;
    OnnxRerankerConfig {
        model_dir: if r.model_dir.is_empty() {
            retold_index::default_reranker_dir()
        } else {
            std::path::PathBuf::from(&r.model_dir)
        },
        runtime_library: embedder_config(settings).runtime_library,
        max_length: r.max_length,
    }
}

/// `retrieval.reranker.enabled` with the model's files missing is refused before anything is
/// opened, rather than serving without the stage it asks for.
pub(crate) fn check_reranker(settings: &Settings) -> Result<(), ServeError> {
    let r = &settings.retrieval.reranker;
    if !r.enabled {
        return Ok(());
    }
    let dir = reranker_config(settings).model_dir;
    let refuse =
        |reason: String| ServeError::RerankerModel { model: r.model.clone(), dir: dir.clone(), reason };
    if r.model_dir.is_empty() && r.model != PROVISIONED_RERANKER {
        return Err(refuse(format!(
            "only {PROVISIONED_RERANKER} is provisioned; set retrieval.reranker.model_dir to the directory of {}",
            r.model
        )));
    }
    for file in ["model.onnx", "tokenizer.json"] {
        if !dir.join(file).is_file() {
            let fix = if r.model_dir.is_empty() {
                "run `cargo xtask setup`"
            } else {
                "put the model's files there, or empty retrieval.reranker.model_dir for the provisioned one"
            };
            return Err(refuse(format!("{file} is missing ({fix})")));
        }
    }
    Ok(())
}

/// The cross-encoder `cargo xtask setup` provisions (`retold_provision::default_reranker_dir`).
const PROVISIONED_RERANKER: &str = "cross-encoder/ms-marco-MiniLM-L-12-v2";

/// The reranker when `retrieval.reranker.enabled`, loaded off the async workers.
pub async fn load_reranker(settings: &Settings) -> Result<Option<Arc<dyn Reranker>>, ServeError> {
    if !settings.retrieval.reranker.enabled {
        return Ok(None);
    }
    check_reranker(settings)?;
    let config = reranker_config(settings);
    let (model, dir) = (settings.retrieval.reranker.model.clone(), config.model_dir.clone());
    let loaded = tokio::task::spawn_blocking(move || OnnxReranker::load(config))
        .await?
        .map_err(|e| ServeError::RerankerModel { model, dir, reason: e.to_string() })?;
    Ok(Some(Arc::new(loaded)))
}

/// The lock a running service holds on its data directory, so an offline operation that must
/// not run beside it (`retold ops switch-model`) can tell. Released when dropped (or when the
/// process dies: it is an advisory file lock).
#[derive(Debug)]
pub struct DataDirLock(#[allow(dead_code)] std::fs::File);

/// Take the data directory's lock, or say who holds it.
pub fn lock_data_dir(data_dir: &std::path::Path) -> Result<DataDirLock, ServeError> {
    std::fs::create_dir_all(data_dir)
        .map_err(|source| ServeError::DataDir { path: data_dir.to_path_buf(), source })?;
    let path = data_dir.join("retold.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(DataDirLock(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(ServeError::Locked(path)),
        Err(std::fs::TryLockError::Error(e)) => Err(ServeError::Io(e)),
    }
}

/// Load the embedder off the async workers.
pub async fn load_embedder(settings: &Settings) -> Result<Arc<OnnxEmbedder>, ServeError> {
    let config = embedder_config(settings);
    Ok(Arc::new(tokio::task::spawn_blocking(move || OnnxEmbedder::load(config)).await??))
}

/// Start the service and run until SIGINT or SIGTERM.
pub async fn serve(settings: Settings) -> Result<(), ServeError> {
    // Refused before the model is loaded or the data directory locked; `build` checks again
    // for its other callers (tests, tools).
    preflight(&settings)?;
    let _lock = lock_data_dir(&settings.data_dir())?;
    let embedder = load_embedder(&settings).await?;
    let built = build(&settings, embedder).await?;
    let listener = tokio::net::TcpListener::bind(settings.server.listen)
        .await
        .map_err(|source| ServeError::Bind { addr: settings.server.listen, source })?;
    println!("retold listening on http://{}", listener.local_addr()?);
    println!(
        "retold data directory: {} ({} vectors loaded)",
        settings.data_dir().display(),
        built.vectors_loaded
    );
    println!("retold session extraction: {}", built.state.services.sessions.extraction_status());
    if let Some(key) = &built.new_admin_key {
        println!("retold created the first admin key (shown once, stored hashed): {key}");
    }
    let store = built.store.clone();
    let tasks = built.state.services.sessions.tasks().clone();
    let ingestor = built.state.services.ingestor.clone();
    let stop = tokio_util::sync::CancellationToken::new();
    if let Some(runner) = built.state.services.sessions.extraction().cloned() {
        let every = std::time::Duration::from_millis(settings.ingestion.extraction.sweep_interval_ms);
        tasks.spawn(sweep(runner, every, stop.clone()));
    }
    let mcp_sessions = tokio_util::sync::CancellationToken::new();
    let app = crate::app::app_until(built.state, &settings.server, mcp_sessions.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            // Open MCP streams would otherwise keep graceful shutdown waiting.
            mcp_sessions.cancel();
        })
        .await?;
    // Let extraction runs and idempotent requests in flight finish: their sessions are
    // claimed and their keys held, and would otherwise stay so.
    stop.cancel();
    tasks.close();
    let grace = std::time::Duration::from_millis(settings.server.shutdown_grace_ms);
    if tokio::time::timeout(grace, tasks.wait()).await.is_err() {
        tracing::warn!(
            running = tasks.len(),
            "extraction runs or idempotent requests still in flight at shutdown were abandoned"
        );
    }
    settle(&ingestor, grace).await;
    // Closing a clone closes the shared pools.
    StoreHandle::clone(&store).close().await?;
    println!("retold stopped");
    Ok(())
}

/// `retold mcp`: the five tools over MCP's stdio transport for one principal, on the
/// embedded store (the process owns the data directory, as `serve` does). Without `key`, a
/// host key for `agent_id` is created on the first start and kept in
/// `<data_dir>/mcp-stdio-<agent>.key` (owner-only) for the next ones. Nothing but the
/// protocol is written to stdout.
pub async fn serve_mcp_stdio(
    settings: Settings,
    agent_id: &str,
    user_id: &str,
    project_id: Option<&str>,
    key: Option<String>,
) -> Result<(), ServeError> {
    preflight(&settings)?;
    let data_dir = settings.data_dir();
    let _lock = lock_data_dir(&data_dir)?;
    let embedder = load_embedder(&settings).await?;
    let built = build(&settings, embedder).await?;
    if let Some(admin) = &built.new_admin_key {
        // stdout carries the protocol.
        eprintln!("retold created the first admin key (shown once, stored hashed): {admin}");
    }
    let key = match key {
        Some(key) => key,
        None => {
            let agent = retold_domain::AgentId::new(agent_id.to_owned())?;
            let file = data_dir.join(format!("mcp-stdio-{agent}.key"));
            match std::fs::read_to_string(&file) {
                Ok(key) if !key.trim().is_empty() => key.trim().to_owned(),
                Ok(_) => {
                    return Err(ServeError::Orchestrator(format!(
                        "{} is empty: delete it to create a new host key, or pass --key",
                        file.display()
                    )));
                }
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(ServeError::Io(std::io::Error::new(
                        e.kind(),
                        format!("{}: {e}", file.display()),
                    )));
                }
                Err(_) => {
                    let created = built
                        .state
                        .services
                        .admin
                        .create_host_key(format!("retold mcp (stdio) for {agent}"), vec![agent])
                        .await?;
                    write_owner_only(&file, &created.secret)?;
                    tracing::info!(file = %file.display(), "created a host key for the stdio MCP server");
                    created.secret
                }
            }
        }
    };
    let store = built.store.clone();
    let ingestor = built.state.services.ingestor.clone();
    let rest = crate::app::app(built.state, &settings.server);
    let tools = retold_adapter_mcp::MemoryTools::new(rest, &crate::openapi::document())
        .map_err(ServeError::Orchestrator)?;
    let served = tools.serve_stdio(&key, agent_id, user_id, project_id).await;
    settle(&ingestor, std::time::Duration::from_millis(settings.server.shutdown_grace_ms)).await;
    StoreHandle::clone(&store).close().await?;
    served.map_err(|e| ServeError::Io(std::io::Error::other(format!("MCP over stdio: {e}"))))
}

/// Wait at most `grace` for the sentence vectors of the last writes; what is left is attached
/// at the next start.
async fn settle(ingestor: &retold_ingest::Ingestor, grace: std::time::Duration) {
    if tokio::time::timeout(grace, ingestor.settled()).await.is_err() {
        tracing::warn!("sentence vectors still being attached at exit are attached at the next start");
    }
}

fn write_owner_only(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// Extract ended sessions nobody has claimed (ended while extraction was off, or before a
/// restart), now and then every `every`.
async fn sweep(
    runner: ExtractionRunner,
    every: std::time::Duration,
    stop: tokio_util::sync::CancellationToken,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        match runner.run_pending(16).await {
            Ok(reports) => {
                for (session, report) in reports {
                    if let Err(error) = report {
                        tracing::warn!(%session, %error, "session extraction failed");
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "looking for sessions to extract failed"),
        }
    }
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
