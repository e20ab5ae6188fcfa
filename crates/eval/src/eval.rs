//! `cargo xtask eval locomo|longmemeval [--data PATH] [--out FILE] [--limit N]`: retrieval
//! quality through the real write path (`Ingestor::write`) and the real search pipeline
//! (`Retriever::search`), for five channel configurations on the same store. `--trace DIR`
//! writes each question's default search trace, its records labelled by the dataset,
//! `--question ID` runs one LongMemEval question, and `--golden-write FILE` keeps every
//! question's first results that `--golden FILE` compares a later run with, so a refactor
//! shows it moved none.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use async_trait::async_trait;
use retold_domain::chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use retold_domain::{
    AgentId, AuditEvent, Content, Embedder, EmbeddingModelInfo, EntityKind, EventId, EventKind, Grant,
    GrantId, MemoryType, Name, Principal, RecordId, Scope, SearchId, SessionId, SourceKind, SourceRef,
    TurnRole, UserId,
};
use retold_index::{ExactIndex, OnnxEmbedder};
use retold_ingest::{EntityRef, Ingestor, WriteOutcome, WriteRequest};
use retold_retrieve::{Channels, Retriever, SearchRequest};
use retold_store_postgres::{PostgresConfig, PostgresStore};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use retold_test_kit::{ManualClock, SequentialIds};

use crate::replay::{Door, Layout, ReplaySession, ReplayTurn};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const CONFIGS: [(&str, Channels); 5] = [
    ("lexical", Channels { dense: false, lexical: true, entity: false, result_control: false }),
    ("dense", Channels { dense: true, lexical: false, entity: false, result_control: false }),
    ("entity", Channels { dense: false, lexical: false, entity: true, result_control: false }),
    ("rrf", Channels { dense: true, lexical: true, entity: true, result_control: false }),
    ("default", Channels { dense: true, lexical: true, entity: true, result_control: true }),
];

#[derive(Clone)]
struct Args {
    dataset: String,
    data: PathBuf,
    out: Option<PathBuf>,
    limit: Option<usize>,
    /// LongMemEval: which turns are stored (`all`, as a host's transcript holds them, or `user`).
    turns: Turns,
    /// Orchestrator: the bundle to measure (default `orchestrator.bundle`), and whether to
    /// record the result in the registry.
    bundle: Option<String>,
    record: bool,
    store: StoreKind,
    /// What a turn is written with as its context: the turn before it in its session (as a
    /// host passes it; with `--turns user`, the user turn before), or nothing (`--context
    /// none`, the ablation).
    context: bool,
    /// LongMemEval: the one question to run (`--question ID`).
    question: Option<String>,
    /// Where to write each question's default search trace, with what each record it names
    /// is in the dataset (`--trace DIR`).
    trace: Option<PathBuf>,
    /// How turns reach the store (`--door sessions|write`).
    door: Door,
    /// Compare every question's first results with those kept in FILE (`--golden FILE`).
    golden: Option<PathBuf>,
    /// Keep them in FILE (`--golden-write FILE`).
    golden_write: Option<PathBuf>,
    /// Where conversations are stored (`--layout`), each measured in turn.
    layouts: Vec<Layout>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Turns {
    All,
    User,
}

impl Turns {
    fn keeps(self, turn: &Value) -> bool {
        match self {
            Turns::All => turn["role"] == "user" || turn["role"] == "assistant",
            Turns::User => turn["role"] == "user",
        }
    }
}

fn parse(args: &[String]) -> Result<Args> {
    let usage = "usage: cargo xtask eval locomo|longmemeval|orchestrator [--data PATH] [--out FILE] [--golden FILE] [--golden-write FILE] [--limit N] [--turns all|user] [--bundle ID] [--record] [--store sqlite|postgres] [--context previous|none] [--question ID] [--trace DIR] [--door sessions|write] [--layout per-conversation|per-user|one-scope|all]";
    let mut it = args.iter();
    let dataset = it.next().context(usage)?.clone();
    let default = match dataset.as_str() {
        "locomo" | "orchestrator" => "../shared/data/locomo-dev.json",
        "longmemeval" => "../shared/data/longmemeval-s-dev.json.gz",
        other => bail!("unknown dataset {other:?}; {usage}"),
    };
    let mut parsed = Args {
        dataset,
        data: crate::workspace_root().join(default),
        out: None,
        limit: None,
        turns: Turns::All,
        bundle: None,
        record: false,
        store: StoreKind::Sqlite,
        context: true,
        question: None,
        trace: None,
        door: Door::Sessions,
        golden: None,
        golden_write: None,
        layouts: Layout::ALL.to_vec(),
    };
    while let Some(flag) = it.next() {
        if flag == "--record" {
            parsed.record = true;
            continue;
        }
        let value = it.next().with_context(|| format!("{flag} needs a value; {usage}"))?;
        match flag.as_str() {
            "--data" => parsed.data = PathBuf::from(value),
            "--out" => parsed.out = Some(PathBuf::from(value)),
            "--golden" => parsed.golden = Some(PathBuf::from(value)),
            "--golden-write" => parsed.golden_write = Some(PathBuf::from(value)),
            "--bundle" => parsed.bundle = Some(value.clone()),
            "--question" => parsed.question = Some(value.clone()),
            "--trace" => parsed.trace = Some(PathBuf::from(value)),
            "--store" => parsed.store = StoreKind::parse(value)?,
            "--door" => parsed.door = Door::parse(value)?,
            "--layout" => parsed.layouts = Layout::parse(value)?,
            "--context" => {
                parsed.context = match value.as_str() {
                    "previous" => true,
                    "none" => false,
                    other => bail!("--context takes previous or none, not {other:?}"),
                }
            }
            "--limit" => parsed.limit = Some(value.parse().context("--limit takes a number of questions")?),
            "--turns" => {
                parsed.turns = match value.as_str() {
                    "all" => Turns::All,
                    "user" => Turns::User,
                    other => bail!("--turns takes all or user, not {other:?}"),
                }
            }
            other => bail!("unknown option {other:?}; {usage}"),
        }
    }
    if parsed.question.is_some() && parsed.dataset != "longmemeval" {
        bail!("--question takes a LongMemEval question id; {usage}");
    }
    if parsed.trace.is_some() && parsed.dataset == "orchestrator" {
        bail!("--trace is for locomo and longmemeval; {usage}");
    }
    if !parsed.data.is_file() {
        bail!(
            "no {} data at {}: the default is the dev split in ../shared/data next to the repository; \
             pass --data PATH for another copy or split",
            parsed.dataset,
            parsed.data.display()
        );
    }
    Ok(parsed)
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let args = parse(args)?;
    STORE.set(args.store).ok();
    TURN_CONTEXT.set(args.context).ok();
    eprintln!(
        "store: {}; context: {}; door: {}; layouts: {}",
        args.store.name(),
        if args.context { "previous turn" } else { "none" },
        args.door.name(),
        args.layouts.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ")
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let report = runtime.block_on(async {
        match args.dataset.as_str() {
            "locomo" => locomo(&args).await,
            "orchestrator" => {
                crate::orchestrator::orchestrator(&args.data, args.limit, args.bundle.as_deref(), args.record)
                    .await
            }
            _ => longmemeval(&args).await,
        }
    })?;
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)?;
        eprintln!("wrote {}", out.display());
    }
    if let Some(golden) = &args.golden_write {
        crate::golden::write(golden, &report)?;
    }
    if let Some(golden) = &args.golden {
        crate::golden::check(golden, &report)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Embedding cache: (model, text) → vector on disk, so repeated runs skip the model.

pub(crate) struct CachedEmbedder {
    inner: Arc<OnnxEmbedder>,
    dir: PathBuf,
}

impl CachedEmbedder {
    /// The model itself, uncached.
    pub(crate) fn model(&self) -> Arc<OnnxEmbedder> {
        self.inner.clone()
    }

    fn path(&self, text: &str) -> PathBuf {
        let info = self.inner.info();
        let digest: String = Sha256::digest(format!("{}\0{}\0{}", info.name, info.version, text).as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.dir.join(&digest[..2]).join(&digest[2..])
    }

    pub(crate) fn load(&self, text: &str) -> Option<Vec<f32>> {
        let bytes = std::fs::read(self.path(text)).ok()?;
        (bytes.len() == self.inner.info().dims as usize * 4)
            .then(|| bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    fn store(&self, text: &str, vector: &[f32]) -> std::io::Result<()> {
        let path = self.path(text);
        std::fs::create_dir_all(path.parent().expect("cache paths have a parent"))?;
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(path, bytes)
    }

    /// Embed every text not cached yet, in large requests on two workers.
    pub(crate) fn warm(&self, texts: &[String]) -> Result<()> {
        let mut missing: Vec<String> = {
            let mut seen = HashSet::new();
            texts.iter().filter(|t| seen.insert(t.as_str()) && self.load(t).is_none()).cloned().collect()
        };
        // Alike lengths together: above embedding.batch_size 1 the embedder pads a run to its
        // longest text, so a sentence run with 256-token turns costs as much as they do. With
        // the default model each text runs alone (its vector must not depend on a batch), so
        // the order changes only the time a cold cache takes.
        missing.sort_by_key(String::len);
        if !missing.is_empty() {
            eprintln!(
                "embedding {} texts not cached yet ({} are)",
                missing.len(),
                texts.len() - missing.len()
            );
        }
        let started = Instant::now();
        for (i, chunk) in missing.chunks(256).enumerate() {
            // Two halves on two threads: the embedder has one session per worker.
            let halves: Vec<&[String]> = chunk.chunks(chunk.len().div_ceil(2)).collect();
            let results: Vec<Result<Vec<Vec<f32>>, retold_index::IndexError>> = std::thread::scope(|s| {
                let handles: Vec<_> =
                    halves.iter().map(|h| s.spawn(|| self.inner.embed_blocking(h))).collect();
                handles.into_iter().map(|h| h.join().expect("embedding thread")).collect()
            });
            for (half, vectors) in halves.iter().zip(results) {
                for (text, vector) in half.iter().zip(&vectors?) {
                    self.store(text, vector)?;
                }
            }
            progress("embed", (i * 256 + chunk.len()).min(missing.len()), missing.len());
        }
        if !missing.is_empty() {
            eprintln!(
                "\nembedded {} new texts in {:.1}s ({} were cached)",
                missing.len(),
                started.elapsed().as_secs_f64(),
                texts.len() - missing.len()
            );
        }
        Ok(())
    }
}

#[async_trait]
impl Embedder for CachedEmbedder {
    fn info(&self) -> &EmbeddingModelInfo {
        self.inner.info()
    }

    async fn embed(&self, texts: &[String]) -> retold_domain::Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            match self.load(text) {
                Some(vector) => out.push(vector),
                None => {
                    let vector = self.inner.embed(std::slice::from_ref(text)).await?.remove(0);
                    self.store(text, &vector)
                        .map_err(|e| retold_domain::DomainError::backend("embedding cache", e))?;
                    out.push(vector);
                }
            }
        }
        Ok(out)
    }
}

/// A progress line on a terminal; nothing when stderr is a file or a pipe (logs stay readable).
pub(crate) fn progress(what: &str, done: usize, total: usize) {
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return;
    }
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(width).min(width);
    eprint!("\r{what:>8} [{}{}] {done}/{total}", "#".repeat(filled), ".".repeat(width - filled));
    std::io::stderr().flush().ok();
}

// ---------------------------------------------------------------------------------------------
// One store, written and searched through the real components.

pub(crate) struct World {
    pub(crate) ingestor: Ingestor,
    pub(crate) retriever: Retriever,
    /// The sessions service, turn memory on (as configured), extraction off.
    pub(crate) sessions: retold_app::SessionService,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) store: retold_http::StoreHandle,
    pub(crate) index: Arc<ExactIndex>,
    pub(crate) path: PathBuf,
    _dir: tempfile::TempDir,
}

pub(crate) const AGENT: &str = "eval-agent";

pub(crate) fn principal() -> Principal {
    Principal::new(AgentId::new(AGENT).unwrap(), UserId::new("eval-user").unwrap())
}

/// Which store an evaluation or benchmark world runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreKind {
    Sqlite,
    /// A fresh database per world on the PostgreSQL server at `RETOLD_TEST_POSTGRES_URL`
    /// (`cargo xtask eval|bench … --store postgres` starts a private one).
    Postgres,
}

impl StoreKind {
    pub(crate) fn parse(value: &str) -> Result<Self> {
        match value {
            "sqlite" => Ok(Self::Sqlite),
            "postgres" => Ok(Self::Postgres),
            other => bail!("--store takes sqlite or postgres, not {other:?}"),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// The store `world` uses (`--store`, default SQLite).
static STORE: std::sync::OnceLock<StoreKind> = std::sync::OnceLock::new();

fn store_kind() -> StoreKind {
    *STORE.get().unwrap_or(&StoreKind::Sqlite)
}

pub(crate) async fn world(embedder: Arc<dyn Embedder>, scope: &Scope, now: DateTime<Utc>) -> Result<World> {
    world_on(store_kind(), embedder, scope, now).await
}

/// A world on the store `--store` names, its agent granted `scopes`.
pub(crate) async fn world_granted(
    embedder: Arc<dyn Embedder>,
    scopes: &[Scope],
    now: DateTime<Utc>,
) -> Result<World> {
    let url = (store_kind() == StoreKind::Postgres).then(retold_test_kit::postgres::fresh_database);
    world_at_granted(url, embedder, scopes, now).await
}

/// A world on a fresh store of `kind`.
pub(crate) async fn world_on(
    kind: StoreKind,
    embedder: Arc<dyn Embedder>,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<World> {
    let url = (kind == StoreKind::Postgres).then(retold_test_kit::postgres::fresh_database);
    world_at(url, embedder, scope, now).await
}

/// The reranker when the configuration enables it (`RETOLD__RETRIEVAL__RERANKER__ENABLED=true`),
/// loaded once per run and shared by every world.
async fn reranker(settings: &retold_http::Settings) -> Result<Option<Arc<dyn retold_domain::Reranker>>> {
    static RERANKER: tokio::sync::OnceCell<Option<Arc<dyn retold_domain::Reranker>>> =
        tokio::sync::OnceCell::const_new();
    Ok(RERANKER.get_or_try_init(|| retold_http::load_reranker(settings)).await?.clone())
}

/// A world on the PostgreSQL database at `url`, or on a fresh SQLite file without one.
pub(crate) async fn world_at(
    url: Option<String>,
    embedder: Arc<dyn Embedder>,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<World> {
    world_at_granted(url, embedder, std::slice::from_ref(scope), now).await
}

/// Whether a turn is kept with the end of the one before (`--context`), for every world's
/// sessions.
static TURN_CONTEXT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

async fn world_at_granted(
    url: Option<String>,
    embedder: Arc<dyn Embedder>,
    scopes: &[Scope],
    now: DateTime<Utc>,
) -> Result<World> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("eval.db");
    let store = match url {
        None => retold_http::StoreHandle::Sqlite(SqliteStore::open(&StoreConfig::new(&path)).await?),
        Some(url) => {
            retold_http::StoreHandle::postgres(PostgresStore::open(&PostgresConfig::new(url)).await?)
        }
    };
    let ports = store.stores();
    let index = Arc::new(ExactIndex::new(embedder.info().dims as usize));
    let clock = Arc::new(ManualClock::new(now));
    let ids = Arc::new(SequentialIds::default());
    for (n, scope) in scopes.iter().enumerate() {
        let grant = Grant {
            id: GrantId::new(format!("grt_eval_{n}")).unwrap(),
            agent_id: AgentId::new(AGENT).unwrap(),
            scope: scope.clone(),
            can_read: true,
            can_write: true,
        };
        let event = AuditEvent {
            id: EventId::new(format!("evt_eval_grant_{n}")).unwrap(),
            at: now,
            kind: EventKind::GrantCreated,
            record_id: None,
            actor: None,
            details: BTreeMap::new(),
        };
        ports.grants.put_grant(grant, event).await?;
    }
    // No hosted stages: the evaluation measures retrieval on the raw questions. Eligibility
    // comes from the derived in-memory table, as in the service.
    let stores = retold_http::derive_eligibility(ports).await?;
    let settings = retold_http::Settings::load(None)?;
    let reranker = reranker(&settings).await?;
    let turns = stores.turns.clone();
    let components = retold_http::Components {
        stores,
        index: index.clone(),
        embedder,
        reranker,
        clock: clock.clone(),
        ids: ids.clone(),
    };
    let retold_http::Wired { ingestor, retriever, .. } =
        retold_http::wire(&components, &settings, &retold_http::Hosted::default());
    let mut sessions_config = retold_http::sessions_config(&settings);
    if !TURN_CONTEXT.get().copied().unwrap_or(true) {
        sessions_config.turn_context_chars = 0;
    }
    let sessions = retold_app::SessionService::new(
        turns,
        ingestor.clone(),
        sessions_config,
        None,
        "off (evaluation)".into(),
        tokio_util::task::TaskTracker::new(),
        clock.clone(),
        ids,
    );
    Ok(World { ingestor, retriever, sessions, clock, store, index, path, _dir: dir })
}

/// One episodic record per turn, written with `context` (the turn before it); returns its
/// record id.
pub(crate) async fn write_turn(
    world: &World,
    scope: &Scope,
    content: &str,
    speaker: Option<&str>,
    context: Option<&str>,
    at: DateTime<Utc>,
) -> Result<RecordId> {
    write_turn_by(world, &principal(), scope, content, speaker, context, at).await
}

/// How a transcript turn cites where it was said, as the service's own sessions write
/// their turns: `session:sess_<session><turn:N>`. A dataset's session id that is not a
/// valid session id body is an error, not a silent rename.
pub(crate) fn cites(session: &str, turn: usize) -> Result<SourceRef> {
    let id = SessionId::new(format!("sess_{session}")).with_context(|| format!("session {session:?}"))?;
    Ok(SourceRef::session_turn_ref(&id, u32::try_from(turn)?))
}

/// One episodic record written by `who`.
pub(crate) async fn write_turn_as(
    world: &World,
    who: &Principal,
    scope: &Scope,
    content: &str,
    at: DateTime<Utc>,
) -> Result<RecordId> {
    write_turn_by(world, who, scope, content, None, None, at).await
}

/// One conversation turn as an episodic system record (truncated to the content limit).
pub(crate) fn turn_request(
    scope: &Scope,
    content: &str,
    speaker: Option<&str>,
    context: Option<&str>,
    at: DateTime<Utc>,
) -> Result<WriteRequest> {
    Ok(WriteRequest {
        memory_type: MemoryType::Episodic,
        content: Content::new(content.chars().take(retold_domain::MAX_CONTENT_CHARS).collect::<String>())?,
        scope: scope.clone(),
        subject: speaker
            .map(|s| Name::new(s).map(|name| EntityRef::Name { name, kind: EntityKind::Person }))
            .transpose()?,
        attribute: None,
        mentions: vec![],
        source_kind: SourceKind::System,
        source_ref: None,
        evidence: None,
        event_at: Some(at),
        expires_at: None,
        confidence: None,
        tags: vec![],
        context: context
            .map(|c| last_chars(c, CONTEXT_CHARS))
            .filter(|c| !c.trim().is_empty())
            .map(retold_domain::Context::new)
            .transpose()?,
    })
}

/// How much of the turn before a turn the harness passes as its context: its end, a sentence
/// or two (a long assistant answer would otherwise fill the embedder's window).
pub(crate) const CONTEXT_CHARS: usize = 300;

/// What the write path embeds for a turn written with `context` (to warm the cache with):
/// the request the harness writes says it (its scope does not change the texts).
fn embedded_texts(content: &str, context: Option<&str>, sentence_vectors: usize) -> Result<Vec<String>> {
    let scope = Scope::parse("project:warm")?;
    Ok(turn_request(&scope, content, None, context, Utc::now())?.embedded_texts(sentence_vectors))
}

/// `embedding.sentence_vectors`, as the write path the eval wires reads it.
fn sentence_vectors() -> Result<usize> {
    Ok(retold_http::ingest_config(&retold_http::Settings::load(None)?).sentence_vectors)
}

/// The end of `text`, at most `n` characters (a turn's end is what its reply follows).
pub(crate) fn last_chars(text: &str, n: usize) -> String {
    let Some(last) = n.checked_sub(1) else { return String::new() };
    let start = text.char_indices().rev().nth(last).map_or(0, |(at, _)| at);
    text[start..].to_owned()
}

async fn write_turn_by(
    world: &World,
    who: &Principal,
    scope: &Scope,
    content: &str,
    speaker: Option<&str>,
    context: Option<&str>,
    at: DateTime<Utc>,
) -> Result<RecordId> {
    write_request(world, who, &turn_request(scope, content, speaker, context, at)?).await
}

/// Write `request` as `who`; it must create a record.
pub(crate) async fn write_request(
    world: &World,
    who: &Principal,
    request: &WriteRequest,
) -> Result<RecordId> {
    match world.ingestor.write(who, request).await? {
        WriteOutcome::Created { id, .. } => Ok(id),
        other => bail!("an episodic turn must be created, got {other:?}"),
    }
}

/// One search: its id (its trace in search_log), the ranked ids, and the estimated tokens of
/// what each shows.
async fn ranked(
    world: &World,
    who: &Principal,
    query: &str,
    channels: Channels,
    k: usize,
) -> Result<(SearchId, Vec<RecordId>, Vec<usize>)> {
    let mut request = SearchRequest::new(query);
    request.limit = Some(k);
    request.channels = channels;
    let response = world.retriever.search(who, &request).await?;
    let (ids, costs) = response
        .hits
        .into_iter()
        .map(|h| (h.record.id.clone(), retold_retrieve::shown_tokens(h.shown())))
        .unzip();
    Ok((response.search_id, ids, costs))
}

/// Of the evidence turns shown as passages among the default's first ten results for
/// `question`: how many hold `answer` (lowercased) verbatim in their content, and how many of
/// those still show it in the passage.
async fn answer_shown_by_default(
    world: &World,
    who: &Principal,
    question: &str,
    evidence: &HashSet<RecordId>,
    answer: &str,
) -> Result<(usize, usize)> {
    let hits = world.retriever.search(who, &SearchRequest::new(question)).await?.hits;
    let held: Vec<_> = hits
        .iter()
        .filter(|h| h.passage.is_some() && evidence.contains(&h.record.id))
        .filter(|h| h.record.content.as_str().to_lowercase().contains(answer))
        .collect();
    let shown = held.iter().filter(|h| h.shown().to_lowercase().contains(answer)).count();
    Ok((held.len(), shown))
}

/// The configurations whose single channels (and plain fusion) are also scored under the
/// default's token budget: at equal tokens returned, as an agent's context pays for them.
const BUDGETED: [&str; 3] = ["lexical", "dense", "rrf"];

/// Every row the tables print, in order.
const ROWS: [&str; 8] =
    ["lexical", "dense", "entity", "rrf", "default", "lexical, budgeted", "dense, budgeted", "rrf, budgeted"];

/// Every configuration's ranking of `query` to `depth`, with the estimated tokens of its first
/// ten results (what a search at the default limit returns): the rows of `ROWS`. A budgeted
/// row is its configuration's ranking cut by the service's own limit-and-budget rule
/// ([`retold_retrieve::ResultBudget`]) at the configured `token_budget`. Also the default
/// configuration's search id, whose trace `--trace` writes.
async fn runs(
    world: &World,
    who: &Principal,
    query: &str,
    depth: usize,
    budget: usize,
) -> Result<(Vec<(String, Vec<RecordId>, f64)>, SearchId)> {
    let tokens_of = |costs: &[usize]| costs.iter().take(10).sum::<usize>() as f64;
    let mut out = Vec::new();
    let mut default_search = None;
    for (config, channels) in CONFIGS {
        let (search, ids, costs) = ranked(world, who, query, channels, depth).await?;
        if config == "default" {
            default_search = Some(search);
        }
        if BUDGETED.contains(&config) {
            let mut rule = retold_retrieve::ResultBudget::new(depth, Some(budget));
            let (cut, cut_costs): (Vec<RecordId>, Vec<usize>) = ids
                .iter()
                .zip(&costs)
                .filter(|(_, cost)| rule.admit(**cost) == retold_retrieve::Admission::Kept)
                .map(|(id, cost)| (id.clone(), *cost))
                .unzip();
            out.push((format!("{config}, budgeted"), cut, tokens_of(&cut_costs)));
        }
        out.push((config.to_owned(), ids, tokens_of(&costs)));
    }
    Ok((out, default_search.context("CONFIGS holds the default configuration")?))
}

/// `--trace DIR`: the trace of the default configuration's search for `query` as the service
/// logged it, and what each record the trace names is in the dataset (`labels`, by record
/// id, and whether it is `evidence`), written to `DIR/<name>.json`: why a question's
/// evidence ranks where it does, channel by channel.
async fn write_trace(
    dir: &Path,
    name: &str,
    world: &World,
    (search, query): (&SearchId, &str),
    labels: &HashMap<String, Value>,
    evidence: &HashSet<RecordId>,
) -> Result<()> {
    let (_, _, trace) = world
        .store
        .stores()
        .search_log
        .trace(search)
        .await?
        .with_context(|| format!("search {search}: no trace in search_log"))?;
    let trace: Value = serde_json::from_str(&trace)?;
    let evidence: HashSet<String> = evidence.iter().map(RecordId::to_string).collect();
    let records = trace_records(&trace, labels, &evidence);
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    let path = dir.join(format!("{}.json", name.replace(|c: char| !c.is_alphanumeric() && c != '-', "_")));
    let body = json!({"query": query, "records": records, "trace": trace});
    std::fs::write(&path, serde_json::to_string_pretty(&body)?).with_context(|| path.display().to_string())
}

/// The labels of the records a trace names (every candidate of every channel is in its fused
/// order), each with whether it is `evidence`.
fn trace_records(
    trace: &Value,
    labels: &HashMap<String, Value>,
    evidence: &HashSet<String>,
) -> serde_json::Map<String, Value> {
    trace["fused"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["record_id"].as_str())
        .filter_map(|id| {
            let mut label = labels.get(id)?.clone();
            label["evidence"] = json!(evidence.contains(id));
            Some((id.to_owned(), label))
        })
        .collect()
}

/// The service's configured tool-result budget (`retrieval.token_budget`).
fn token_budget() -> Result<usize> {
    Ok(retold_http::retrieve_config(&retold_http::Settings::load(None)?).token_budget)
}

// ---------------------------------------------------------------------------------------------
// A plain BM25 baseline (Okapi, k1 = 1.2, b = 0.75) over the same turns, independent of FTS5;
// the same with the service's Snowball English stems (`stemmed`), stemming measured apart
// from FTS5.

struct Bm25 {
    stemmer: Option<retold_index::SnowballEnglish>,
    docs: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    df: HashMap<String, f64>,
    average: f64,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// A text's words, stemmed when `stemmer` is given.
fn terms(stemmer: Option<&retold_index::SnowballEnglish>, text: &str) -> Vec<String> {
    let words = words(text);
    match stemmer {
        Some(stemmer) => words.iter().map(|w| retold_domain::WordStemmer::stem(stemmer, w)).collect(),
        None => words,
    }
}

impl Bm25 {
    fn new(texts: &[String], stemmed: bool) -> Self {
        let stemmer = stemmed.then(retold_index::SnowballEnglish::new);
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for text in texts {
            let mut tf: HashMap<String, f64> = HashMap::new();
            let tokens = terms(stemmer.as_ref(), text);
            lengths.push(tokens.len() as f64);
            for t in tokens {
                *tf.entry(t).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            docs.push(tf);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Self { stemmer, docs, lengths, df, average }
    }

    fn top(&self, query: &str, k: usize) -> Vec<usize> {
        let n = self.docs.len() as f64;
        let terms: HashSet<String> = terms(self.stemmer.as_ref(), query).into_iter().collect();
        let mut scored: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let score = terms
                    .iter()
                    .filter_map(|t| {
                        let f = *tf.get(t)?;
                        let df = self.df[t];
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        Some(idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lengths[i] / self.average)))
                    })
                    .sum();
                (score, i)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(k).map(|(_, i)| i).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Metrics.

#[derive(Default)]
struct Sums {
    values: BTreeMap<String, f64>,
    count: usize,
}

impl Sums {
    fn add(&mut self, metric: String, value: f64) {
        *self.values.entry(metric).or_default() += value;
    }

    fn mean(&self) -> Value {
        let n = self.count.max(1) as f64;
        self.values
            .iter()
            .map(|(k, v)| (k.clone(), json!((v / n * 10_000.0).round() / 10_000.0)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

fn recall_metrics(sums: &mut Sums, retrieved: &[RecordId], evidence: &HashSet<RecordId>, ks: &[usize]) {
    for &k in ks {
        let top: HashSet<&RecordId> = retrieved.iter().take(k).collect();
        let hit = evidence.iter().filter(|e| top.contains(e)).count();
        sums.add(format!("recall_frac@{k}"), hit as f64 / evidence.len() as f64);
        sums.add(format!("recall_all@{k}"), f64::from(u8::from(hit == evidence.len())));
        sums.add(format!("recall_any@{k}"), f64::from(u8::from(hit > 0)));
    }
}

fn cell(value: &Value, metric: &str) -> String {
    match value[metric].as_f64() {
        Some(v) if metric.starts_with("tokens") => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
        None => "-".into(),
    }
}

fn print_table(title: &str, columns: &[&str], configs: &BTreeMap<String, Value>, order: &[&str]) {
    println!("\n### {title}\n");
    println!("| config | {} |", columns.join(" | "));
    println!("|---|{}|", columns.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
    for name in order {
        if let Some(overall) = configs.get(*name).map(|c| &c["overall"]) {
            let cells: Vec<String> = columns.iter().map(|m| cell(overall, m)).collect();
            println!("| {name} | {} |", cells.join(" | "));
        }
    }
}

/// One metric per category and configuration.
fn print_by_category(metric: &str, configs: &BTreeMap<String, Value>, order: &[&str]) {
    let mut categories: Vec<String> = configs
        .values()
        .flat_map(|c| c["by_category"].as_object().into_iter().flat_map(|m| m.keys().cloned()))
        .collect();
    categories.sort();
    categories.dedup();
    println!("\n{metric} by category\n");
    println!("| config | {} |", categories.join(" | "));
    println!("|---|{}|", categories.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
    for name in order {
        if let Some(by) = configs.get(*name).map(|c| &c["by_category"]) {
            let cells: Vec<String> = categories.iter().map(|k| cell(&by[k.as_str()], metric)).collect();
            println!("| {name} | {} |", cells.join(" | "));
        }
    }
}

pub(crate) fn git_revision() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::workspace_root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

pub(crate) fn embedder() -> Result<Arc<CachedEmbedder>> {
    let settings = retold_http::Settings::load(None)?;
    // Evaluations embed whole datasets on two threads: one single-threaded session each.
    let config = retold_index::OnnxEmbedderConfig {
        workers: 2,
        threads: 1,
        ..retold_http::embedder_config(&settings)
    };
    let inner = Arc::new(OnnxEmbedder::load(config)?);
    let dir = retold_index::cache_dir().join("embedding-cache");
    Ok(Arc::new(CachedEmbedder { inner, dir }))
}

fn envelope(
    args: &Args,
    dataset: &str,
    questions: usize,
    skipped: Value,
    configs: BTreeMap<String, Value>,
    extra: Value,
) -> Value {
    let settings = retold_http::Settings::load(None).expect("settings load");
    json!({
        "dataset": dataset,
        "questions": questions,
        "skipped": skipped,
        "configs": configs,
        "git_revision": git_revision(),
        "door": args.door.name(),
        "turn_context": if args.context { "previous turn" } else { "none" },
        "model": format!("{} v{} ({} dims)", settings.embedding.model, settings.embedding.version, settings.embedding.dims),
        "reranker": settings.retrieval.reranker.enabled.then(|| settings.retrieval.reranker.model.clone()),
        "configuration": {"retrieve": format!("{:?}", retold_http::retrieve_config(&settings)), "channels": CONFIGS.iter().map(|(n, c)| (n.to_string(), Value::from(format!("{c:?}")))).collect::<serde_json::Map<_, _>>()},
        "baseline": extra,
    })
}

// ---------------------------------------------------------------------------------------------
// LoCoMo.

fn locomo_date(text: &str) -> Option<DateTime<Utc>> {
    // "1:56 pm on 8 May, 2023"
    let parsed = NaiveDateTime::parse_from_str(&text.replace(" on ", " "), "%I:%M %p %d %B, %Y").ok()?;
    Some(Utc.from_utc_datetime(&parsed))
}

/// A LoCoMo dialog id's session and turn: "D3:7" is session 3's seventh turn, ("D3", 7).
fn dia_session_turn(dia: &str) -> Option<(&str, usize)> {
    let (session, turn) = dia.split_once(':')?;
    Some((session, turn.parse().ok()?))
}

/// One LoCoMo turn: (dia_id, speaker, content, at).
pub(crate) type LocomoTurn = (String, String, String, DateTime<Utc>);

/// A LoCoMo conversation's turns.
pub(crate) fn locomo_turns(sample: &str, conv: &Value) -> Result<Vec<LocomoTurn>> {
    let mut turns = Vec::new();
    for n in 1.. {
        let Some(session) = conv.get(format!("session_{n}")).and_then(Value::as_array) else { break };
        // A date that does not parse is an error: falling back to "now" would silently
        // change every freshness decision.
        let stamp = conv[format!("session_{n}_date_time")].as_str().unwrap_or("");
        let at = locomo_date(stamp).with_context(|| format!("{sample}: session_{n} date {stamp:?}"))?;
        for turn in session {
            let speaker = turn["speaker"].as_str().unwrap_or("someone").to_owned();
            let mut content = format!("{speaker}: {}", turn["text"].as_str().unwrap_or(""));
            if let Some(caption) = turn["blip_caption"].as_str() {
                content.push_str(&format!(" [shared an image: {caption}]"));
            }
            turns.push((turn["dia_id"].as_str().unwrap_or("").to_owned(), speaker, content, at));
        }
    }
    Ok(turns)
}

/// A LoCoMo conversation as a host has it: its sessions of turns (each person's text, its
/// speaker named), the texts the outside baselines read, its questions, and the time its
/// questions are asked (a day after its last session).
struct LocomoConversation<'a> {
    sample: String,
    sessions: Vec<ReplaySession>,
    /// Every turn as "Speaker: text", in order, with its key.
    texts: Vec<(String, String)>,
    qa: &'a [Value],
    now: DateTime<Utc>,
}

fn locomo_conversation(conversation: &Value) -> Result<LocomoConversation<'_>> {
    let sample = conversation["sample_id"].as_str().unwrap_or("conv").to_owned();
    let turns = locomo_turns(&sample, &conversation["conversation"])?;
    let mut sessions: Vec<ReplaySession> = Vec::new();
    let mut texts = Vec::new();
    for (dia, speaker, labelled, at) in &turns {
        let (session, _) = dia_session_turn(dia)
            .with_context(|| format!("{sample}: dialog id {dia:?} is not of the form D<session>:<turn>"))?;
        let key = format!("{sample}#{dia}");
        let said = labelled.strip_prefix(&format!("{speaker}: ")).unwrap_or(labelled).to_owned();
        let turn = ReplayTurn {
            key: key.clone(),
            role: TurnRole::User,
            speaker: Some(speaker.clone()),
            content: said,
            at: *at,
        };
        match sessions.last_mut() {
            Some(last) if last.id == session => last.turns.push(turn),
            _ => sessions.push(ReplaySession { id: session.to_owned(), turns: vec![turn] }),
        }
        texts.push((key, labelled.clone()));
    }
    let now =
        turns.iter().map(|t| t.3).max().unwrap_or_else(Utc::now) + retold_domain::chrono::TimeDelta::days(1);
    let qa = conversation["qa"].as_array().map(Vec::as_slice).context("qa")?;
    Ok(LocomoConversation { sample, sessions, texts, qa, now })
}

/// What the write path embeds for each turn of `sessions` stored through `door` (to warm the
/// cache with), as each door indexes it.
fn replay_texts(
    sessions: &[ReplaySession],
    door: Door,
    context: bool,
    sentence_vectors: usize,
) -> Result<Vec<String>> {
    let context_chars = retold_http::sessions_config(&retold_http::Settings::load(None)?).turn_context_chars;
    let mut out = Vec::new();
    for session in sessions {
        for (i, turn) in session.turns.iter().enumerate() {
            let said = |t: &ReplayTurn| match &t.speaker {
                Some(speaker) => format!("{speaker}: {}", t.content),
                None => t.content.clone(),
            };
            let before = i.checked_sub(1).filter(|_| context).map(|j| said(&session.turns[j]));
            match door {
                Door::Write => out.extend(embedded_texts(&said(turn), before.as_deref(), sentence_vectors)?),
                Door::Sessions => {
                    let mut previous =
                        before.map(|b| retold_domain::text::last_chars(&b, context_chars).to_owned());
                    for part in retold_domain::turn_parts(&turn.content, retold_domain::MAX_CONTENT_CHARS) {
                        let indexed = retold_domain::IndexedText {
                            origin: retold_domain::Origin::Turn,
                            speaker: turn.speaker.as_deref(),
                            content: &part,
                            context: previous.as_deref().filter(|c| !c.trim().is_empty()),
                        };
                        out.extend(indexed.embedded_texts(sentence_vectors));
                        previous = Some(retold_domain::text::last_chars(&part, context_chars).to_owned());
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The stores of a layout: which conversations (by index) share one.
fn groups(layout: Layout, n: usize) -> Vec<Vec<usize>> {
    if layout.shared() { vec![(0..n).collect()] } else { (0..n).map(|i| vec![i]).collect() }
}

/// A world for `owners` in `layout`, its agent granted the scopes they are kept in (a private
/// scope needs no grant), its clock at `now`.
async fn layout_world(
    embedder: &Arc<CachedEmbedder>,
    layout: Layout,
    owners: &[&str],
    now: DateTime<Utc>,
) -> Result<World> {
    let mut scopes: Vec<Scope> = Vec::new();
    for owner in owners {
        let scope = layout.scope(owner)?;
        if scope != layout.principal(owner)?.private_scope() && !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    world_granted(embedder.clone() as Arc<dyn Embedder>, &scopes, now).await
}

/// Set a world's clock to `at` (a question is asked at its own time).
fn set_clock(world: &World, at: DateTime<Utc>) {
    world.clock.advance(at - retold_domain::Clock::now(world.clock.as_ref()));
}

/// The evaluations of each layout, and the layouts side by side: (name, report) pairs, the
/// headline metrics of the default configuration printed in one table.
fn layouts_report(dataset: &str, metrics: &[&str], reports: Vec<(Layout, Value)>) -> Value {
    if let [(layout, report)] = reports.as_slice() {
        let mut report = report.clone();
        report["layout"] = json!(layout.name());
        return report;
    }
    println!("\n{dataset}, the default configuration in each layout\n");
    println!("| layout | {} | other conversations' records in the first 10 |", metrics.join(" | "));
    println!("|---|{}---|", "---|".repeat(metrics.len()));
    for (layout, report) in &reports {
        let overall = &report["configs"]["default"]["overall"];
        let foreign = report["foreign_in_first_10"].as_f64().map_or("-".to_owned(), |f| format!("{f:.3}"));
        println!(
            "| {} | {} | {foreign} |",
            layout.name(),
            metrics.iter().map(|m| cell(overall, m)).collect::<Vec<_>>().join(" | ")
        );
    }
    json!({"dataset": dataset, "layouts": reports.into_iter().map(|(l, r)| (l.name().to_owned(), r)).collect::<serde_json::Map<_, _>>()})
}

async fn locomo(args: &Args) -> Result<Value> {
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(&args.data).with_context(|| args.data.display().to_string())?,
    )?;
    let conversations = data.as_array().context("LoCoMo data is a list of conversations")?;
    let conversations = conversations.iter().map(locomo_conversation).collect::<Result<Vec<_>>>()?;
    let embedder = embedder()?;
    let sentence_vectors = sentence_vectors()?;
    for conversation in &conversations {
        embedder.warm(&replay_texts(&conversation.sessions, args.door, args.context, sentence_vectors)?)?;
    }
    let mut reports = Vec::new();
    for &layout in &args.layouts {
        eprintln!("layout: {}", layout.name());
        reports.push((layout, locomo_layout(args, layout, &conversations, &embedder).await?));
    }
    Ok(layouts_report(
        "LoCoMo dev",
        &["recall_frac@5", "recall_frac@10", "recall_frac@25", "tokens@10"],
        reports,
    ))
}

async fn locomo_layout(
    args: &Args,
    layout: Layout,
    conversations: &[LocomoConversation<'_>],
    embedder: &Arc<CachedEmbedder>,
) -> Result<Value> {
    let budget = token_budget()?;
    let ks = [5usize, 10, 25];
    let mut per_config: BTreeMap<String, BTreeMap<String, Sums>> = BTreeMap::new();
    let mut adversarial: BTreeMap<String, Sums> = BTreeMap::new();
    // Per baseline ("plain BM25", "stemmed BM25"), its sums overall and per category.
    let mut baseline = BTreeMap::<&str, BTreeMap<String, Sums>>::new();
    let (mut questions, mut malformed, mut adversarial_count, mut foreign) = (0usize, 0usize, 0usize, 0usize);
    // Per question, the default configuration's first ten results by dialog id (`--out`):
    // what a miss looks like, for the next lever.
    let mut per_question: Vec<Value> = Vec::new();
    let started = Instant::now();
    for group in groups(layout, conversations.len()) {
        let owners: Vec<&str> = group.iter().map(|&i| conversations[i].sample.as_str()).collect();
        let latest = group.iter().map(|&i| conversations[i].now).max().unwrap_or_else(Utc::now);
        let w = layout_world(embedder, layout, &owners, latest).await?;
        let mut turns = crate::replay::Turns::default();
        // What each record is, for `--trace`.
        let mut labels: HashMap<String, Value> = HashMap::new();
        for &ci in &group {
            let c = &conversations[ci];
            let written =
                crate::replay::store(&w, args.door, layout, &c.sample, &c.sessions, args.context).await?;
            if args.trace.is_some() {
                let text_of: HashMap<&str, &str> =
                    c.texts.iter().map(|(k, t)| (k.as_str(), t.as_str())).collect();
                for (id, key) in &written {
                    let dia = key.split_once('#').map_or(key.as_str(), |(_, d)| d);
                    labels.insert(id.to_string(), json!({"dia": dia, "text": text_of.get(key.as_str())}));
                }
            }
            turns.add(&c.sample, written);
            eprintln!("conv {} stored ({})", ci + 1, layout.name());
        }
        for &ci in &group {
            let c = &conversations[ci];
            set_clock(&w, c.now);
            let who = layout.principal(&c.sample)?;
            let texts: Vec<String> = c.texts.iter().map(|(_, t)| t.clone()).collect();
            let id_order: Vec<RecordId> = c
                .texts
                .iter()
                .map(|(k, _)| turns.of_key(k).cloned().with_context(|| format!("{k} was not stored")))
                .collect::<Result<_>>()?;
            let baselines =
                [("plain BM25", Bm25::new(&texts, false)), ("stemmed BM25", Bm25::new(&texts, true))];
            let dia_of: HashMap<RecordId, String> = c
                .texts
                .iter()
                .filter_map(|(k, _)| Some((turns.of_key(k)?.clone(), k.split_once('#')?.1.to_owned())))
                .collect();
            for (qi, q) in c.qa.iter().enumerate().take(args.limit.unwrap_or(usize::MAX)) {
                let category = q["category"].as_u64().unwrap_or(0);
                let evidence_ids: Vec<&str> = q["evidence"]
                    .as_array()
                    .map(|e| e.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let evidence: HashSet<RecordId> = evidence_ids
                    .iter()
                    .filter_map(|d| turns.of_key(&format!("{}#{d}", c.sample)).cloned())
                    .collect();
                if evidence.is_empty() || evidence.len() != evidence_ids.len() {
                    malformed += 1;
                    continue;
                }
                let question = q["question"].as_str().unwrap_or("");
                let name = match category {
                    1 => "multi-hop",
                    2 => "temporal",
                    3 => "open-domain",
                    4 => "single-hop",
                    5 => "adversarial",
                    _ => "other",
                };
                let (raw, default_search) = runs(&w, &who, question, 25, budget).await?;
                let results = isolated(layout, &turns, &c.sample, question, raw, &mut foreign)?;
                if let Some(dir) = &args.trace {
                    let file = format!("{}-q{}", c.sample, qi + 1);
                    write_trace(dir, &file, &w, (&default_search, question), &labels, &evidence).await?;
                }
                if category != 5 {
                    // Where each channel ranks each evidence turn (1-based, within 25).
                    let ranks: serde_json::Map<String, Value> = results
                        .iter()
                        .map(|(config, retrieved, _)| {
                            let at = |d: &&str| {
                                turns
                                    .of_key(&format!("{}#{d}", c.sample))
                                    .and_then(|id| retrieved.iter().position(|r| r == id))
                                    .map(|p| p + 1)
                            };
                            (config.to_string(), json!(evidence_ids.iter().map(at).collect::<Vec<_>>()))
                        })
                        .collect();
                    if let Some((_, retrieved, _)) = results.iter().find(|(c, _, _)| *c == "default") {
                        let top: Vec<&str> = retrieved
                            .iter()
                            .take(10)
                            .filter_map(|id| dia_of.get(id).map(String::as_str))
                            .collect();
                        per_question.push(json!({
                            "sample": c.sample, "question": question, "category": name,
                            "evidence": evidence_ids, "top10": top, "ranks": ranks,
                            "found": evidence_ids.iter().filter(|d| top.contains(d)).count(),
                        }));
                    }
                }
                for (config, retrieved, tokens) in results {
                    if category == 5 {
                        let sums = adversarial.entry(config.to_owned()).or_default();
                        recall_metrics(sums, &retrieved, &evidence, &ks);
                        sums.add("tokens@10".into(), tokens);
                        sums.count += 1;
                    } else {
                        let by = per_config.entry(config.to_owned()).or_default();
                        for bucket in ["overall", name] {
                            let sums = by.entry(bucket.to_owned()).or_default();
                            recall_metrics(sums, &retrieved, &evidence, &ks);
                            sums.add("tokens@10".into(), tokens);
                            sums.count += 1;
                        }
                    }
                }
                if category == 5 {
                    adversarial_count += 1;
                } else {
                    questions += 1;
                    for (label, bm25) in &baselines {
                        let top: Vec<RecordId> =
                            bm25.top(question, 25).into_iter().map(|i| id_order[i].clone()).collect();
                        let by = baseline.entry(label).or_default();
                        for bucket in ["overall", name] {
                            let sums = by.entry(bucket.to_owned()).or_default();
                            recall_metrics(sums, &top, &evidence, &ks);
                            sums.count += 1;
                        }
                    }
                }
                progress("search", qi + 1, c.qa.len());
            }
            eprintln!();
        }
    }
    let mut configs = BTreeMap::new();
    for (config, by) in &per_config {
        let overall = by.get("overall").map(Sums::mean).unwrap_or(Value::Null);
        let by_category: serde_json::Map<String, Value> =
            by.iter().filter(|(k, _)| *k != "overall").map(|(k, v)| (k.clone(), v.mean())).collect();
        let adv = adversarial.get(config).map(Sums::mean).unwrap_or(Value::Null);
        configs.insert(
            config.clone(),
            json!({"overall": overall, "by_category": by_category, "adversarial": adv}),
        );
    }
    let columns =
        ["recall_frac@5", "recall_frac@10", "recall_frac@25", "recall_all@10", "recall_any@10", "tokens@10"];
    let title = format!(
        "LoCoMo dev ({}, {}): {questions} questions (categories 1-4)",
        layout.name(),
        args.door.name()
    );
    print_table(&title, &columns, &configs, &ROWS);
    let mut bases = BTreeMap::new();
    for (label, by) in &baseline {
        let overall = by.get("overall").map(Sums::mean).unwrap_or(Value::Null);
        let by_category: serde_json::Map<String, Value> =
            by.iter().filter(|(k, _)| *k != "overall").map(|(k, v)| (k.clone(), v.mean())).collect();
        println!(
            "| {label} baseline | {} |",
            columns.iter().map(|m| cell(&overall, m)).collect::<Vec<_>>().join(" | ")
        );
        bases.insert(label.to_string(), json!({"overall": overall, "by_category": by_category}));
    }
    print_by_category("recall_frac@10", &configs, &ROWS);
    println!("\nthe baselines (outside the service):");
    print_by_category("recall_frac@10", &bases, &["plain BM25", "stemmed BM25"]);
    println!(
        "\nskipped: {malformed} questions with malformed evidence ids; adversarial (category 5) reported separately: {adversarial_count}; {:.0}s",
        started.elapsed().as_secs_f64()
    );
    let mut out = envelope(
        args,
        "locomo",
        questions,
        json!({"malformed_evidence": malformed, "adversarial_reported_separately": adversarial_count}),
        configs,
        json!(bases),
    );
    out["default_per_question"] = json!(per_question);
    if layout == Layout::OneScope {
        out["foreign_in_first_10"] = json!(foreign as f64 / (questions + adversarial_count).max(1) as f64);
    }
    Ok(out)
}

/// Every configuration's ranking as a ranking of turns ([`crate::replay::Turns::ranked`]),
/// after the layout's promise is checked: in a store that keeps each conversation under its
/// own user, no search returns another user's record (an error if one does). In one shared
/// scope other conversations are in reach: `foreign` counts the questions whose default
/// first ten hold a turn of another conversation.
fn isolated(
    layout: Layout,
    turns: &crate::replay::Turns,
    owner: &str,
    question: &str,
    raw: Vec<(String, Vec<RecordId>, f64)>,
    foreign: &mut usize,
) -> Result<Vec<(String, Vec<RecordId>, f64)>> {
    for (config, retrieved, _) in &raw {
        let other = turns.foreign(owner, retrieved);
        match layout {
            Layout::PerUser | Layout::PerConversation => {
                if let Some(id) = other {
                    bail!(
                        "{}: the {config} search {question:?} as {owner} returned {id}, another user's record",
                        layout.name()
                    );
                }
            }
            Layout::OneScope => {
                if config == "default" && turns.foreign_turn(owner, &retrieved[..retrieved.len().min(10)]) {
                    *foreign += 1;
                }
            }
        }
    }
    Ok(raw
        .into_iter()
        .map(|(config, retrieved, tokens)| (config, turns.ranked(&retrieved), tokens))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// LongMemEval_S.

/// A LongMemEval session's stored turns, in order: those `turns` keeps, each with its 1-based
/// place in the whole session and its content.
fn lme_kept_turns(session: &Value, turns: Turns) -> Vec<(usize, &Value, &str)> {
    session
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, t)| turns.keeps(t))
        .filter_map(|(i, t)| t["content"].as_str().filter(|c| !c.trim().is_empty()).map(|c| (i + 1, t, c)))
        .collect()
}

fn lme_date(text: &str) -> Option<DateTime<Utc>> {
    // "2022/03/02 (Wed) 15:30"
    let cleaned: String =
        text.split_whitespace().filter(|p| !p.starts_with('(')).collect::<Vec<_>>().join(" ");
    NaiveDateTime::parse_from_str(&cleaned, "%Y/%m/%d %H:%M").ok().map(|d| Utc.from_utc_datetime(&d))
}

fn read_json(path: &Path) -> Result<Value> {
    let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)?;
        Ok(serde_json::from_str(&text)?)
    } else {
        Ok(serde_json::from_slice(&bytes)?)
    }
}

/// How many turns a LongMemEval search asks for (`retrieval.max_limit`, 50 by default, clamps it).
const LME_DEPTH: usize = 50;

/// The sessions of the ranked turns, each once, in the order their first turn ranks: the
/// sessions LongMemEval's turn-level evaluation reads its recall over
/// (`evaluate_retrieval_turn2session`: session@k = the first k distinct sessions).
fn distinct_sessions(
    retrieved: &[RecordId],
    session_of: &HashMap<RecordId, (String, DateTime<Utc>)>,
) -> Vec<String> {
    let mut seen = HashSet::new();
    retrieved
        .iter()
        .filter_map(|id| session_of.get(id).map(|s| s.0.as_str()))
        .filter(|s| seen.insert(*s))
        .map(str::to_owned)
        .collect()
}

/// Standard binary nDCG@k of a ranking (distinct sessions, or turns) against the relevant
/// set. Over sessions it is not LongMemEval's turn-level nDCG, which scores every turn of an
/// answer session as relevant; over turns only the evidence turns are relevant.
fn ndcg<T: Eq + std::hash::Hash>(ranked: &[T], relevant: &HashSet<T>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, s)| relevant.contains(*s))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(k)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

/// A LongMemEval question and its haystack as a host has it: the haystack's sessions of
/// kept turns, what each turn is (its session and date, whether it holds the answer, its
/// opening words, whether the user said it), and the question's own time.
struct LmeItem<'a> {
    qid: String,
    item: &'a Value,
    sessions: Vec<ReplaySession>,
    /// By turn key (`<session>#<n>`, `n` its place among the session's stored turns).
    turns: HashMap<String, LmeTurn>,
    now: DateTime<Utc>,
}

/// What a stored LongMemEval turn is in the dataset.
struct LmeTurn {
    session: String,
    /// Its session's date.
    at: DateTime<Utc>,
    has_answer: bool,
    /// Its first 120 characters.
    opening: String,
    from_user: bool,
    /// Its 1-based place in the whole session, assistant turns counted (the authors' turn id).
    place: usize,
}

impl LmeTurn {
    /// Its id in the authors' corpus ([`crate::lme_protocol::corpus_id`]).
    fn corpus_id(&self) -> String {
        crate::lme_protocol::corpus_id(&self.session, self.place, self.has_answer)
    }
}

/// The question's haystack, `turns` of it kept; `None` for an abstention question or one whose
/// evidence is in turns not kept (counted by the caller).
fn lme_item<'a>(item: &'a Value, keep: Turns) -> Result<LmeItem<'a>> {
    let qid = item["question_id"].as_str().unwrap_or("").to_owned();
    let session_ids: Vec<String> = item["haystack_session_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let dates: Vec<DateTime<Utc>> = item["haystack_dates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().and_then(lme_date).with_context(|| format!("{qid}: haystack date {v}")))
        .collect::<Result<_>>()?;
    let haystack = item["haystack_sessions"].as_array().context("haystack_sessions")?;
    let mut sessions = Vec::new();
    let mut turns = HashMap::new();
    for ((sid, at), session) in session_ids.iter().zip(&dates).zip(haystack) {
        let kept = lme_kept_turns(session, keep);
        let mut replayed = Vec::with_capacity(kept.len());
        for (i, (place, turn, content)) in kept.iter().enumerate() {
            // `n`: the turn's place among the session's kept turns, as its record cites it.
            let key = format!("{sid}#{}", i + 1);
            let from_user = turn["role"] == "user";
            let opening: String = content.chars().take(120).collect();
            let has_answer = turn["has_answer"].as_bool().unwrap_or(false);
            turns.insert(
                key.clone(),
                LmeTurn { session: sid.clone(), at: *at, has_answer, opening, from_user, place: *place },
            );
            let role = if from_user { TurnRole::User } else { TurnRole::Assistant };
            replayed.push(ReplayTurn { key, role, speaker: None, content: (*content).to_owned(), at: *at });
        }
        sessions.push(ReplaySession { id: sid.clone(), turns: replayed });
    }
    let now = item["question_date"]
        .as_str()
        .and_then(lme_date)
        .with_context(|| format!("{qid}: question_date {}", item["question_date"]))?;
    Ok(LmeItem { qid, item, sessions, turns, now })
}

/// The cut-offs the authors' `print_retrieval_metrics.py` reports (and recall_any@5), over the
/// questions their `run_retrieval.py` keeps.
const AUTHORS_COLUMNS: [&str; 11] = [
    "authors_session_recall_any@5",
    "authors_session_recall_all@5",
    "authors_session_ndcg_any@5",
    "authors_session_recall_all@10",
    "authors_session_ndcg_any@10",
    "authors_turn_recall_all@5",
    "authors_turn_ndcg_any@5",
    "authors_turn_recall_all@10",
    "authors_turn_ndcg_any@10",
    "authors_turn_recall_all@50",
    "authors_turn_ndcg_any@50",
];

/// One question's scores as LongMemEval's authors compute them ([`crate::lme_protocol`]),
/// over its ranked turn ids and its whole corpus of user turns: (metric, value) pairs.
fn authors_scores(ranked: &[String], corpus: &[String]) -> Vec<(String, f64)> {
    use crate::lme_protocol::{correct, evaluate, evaluate_sessions};
    let right = correct(corpus);
    let mut out = Vec::new();
    for k in [5, 10, 50] {
        for (level, scores) in [
            ("turn", evaluate(ranked, &right, corpus, k)),
            ("session", evaluate_sessions(ranked, &right, corpus, k)),
        ] {
            out.push((format!("authors_{level}_recall_any@{k}"), scores.recall_any));
            out.push((format!("authors_{level}_recall_all@{k}"), scores.recall_all));
            out.push((format!("authors_{level}_ndcg_any@{k}"), scores.ndcg_any));
        }
    }
    out
}

/// The questions searched when `turns` are stored, and how many were left out: abstention
/// questions (nothing to find) and those whose evidence is in turns not stored.
struct LmeQuestions<'a> {
    kept: Vec<LmeItem<'a>>,
    abstention: usize,
    no_evidence: usize,
}

fn lme_questions<'a>(items: &[&'a Value], args: &Args, turns: Turns) -> Result<LmeQuestions<'a>> {
    let mut questions = LmeQuestions { kept: Vec::new(), abstention: 0, no_evidence: 0 };
    for item in items.iter().take(args.limit.unwrap_or(usize::MAX)) {
        let qid = item["question_id"].as_str().unwrap_or("");
        if qid.ends_with("_abs") {
            if args.question.is_some() {
                bail!("{qid} is an abstention question: it is not searched");
            }
            questions.abstention += 1;
            continue;
        }
        let parsed = lme_item(item, turns)?;
        if !parsed.turns.values().any(|t| t.has_answer) {
            questions.no_evidence += 1;
            continue;
        }
        questions.kept.push(parsed);
    }
    Ok(questions)
}

async fn longmemeval(args: &Args) -> Result<Value> {
    let data = read_json(&args.data)?;
    let items: Vec<&Value> =
        data.as_array().context("LongMemEval data is a list of questions")?.iter().collect();
    let items = match &args.question {
        Some(id) => {
            let one: Vec<&Value> = items.into_iter().filter(|q| q["question_id"] == id.as_str()).collect();
            if one.is_empty() {
                bail!("no question {id:?} in {}", args.data.display());
            }
            one
        }
        None => items,
    };
    let LmeQuestions { kept, abstention, no_evidence } = lme_questions(&items, args, args.turns)?;
    if let (Some(id), true) = (&args.question, kept.is_empty()) {
        bail!("{id}: its evidence is in turns not stored (--turns user): it is not searched");
    }
    let embedder = embedder()?;
    warm(&embedder, &kept, args)?;
    let mut reports = Vec::new();
    for &layout in &args.layouts {
        eprintln!("layout: {}", layout.name());
        let mut report = longmemeval_layout(args, layout, &kept, &embedder).await?;
        report["skipped"]["abstention"] = json!(abstention);
        report["skipped"]["evidence_not_stored"] = json!(no_evidence);
        println!(
            "\nskipped: {abstention} abstention questions, {no_evidence} whose evidence is in turns not stored (--turns {})",
            if args.turns == Turns::All { "all" } else { "user" },
        );
        reports.push((layout, report));
    }
    let mut out = layouts_report(
        "LongMemEval_S dev",
        &[
            "session_recall_any@5",
            "session_recall_all@5",
            "session_ndcg@5",
            "turn_recall_all@10",
            "ku_newer_above_older",
            "tokens@10",
        ],
        reports,
    );
    // A run of one question (`--question`) says so: its figures are not the split's.
    if let Some(id) = &args.question {
        out["question"] = json!(id);
    }
    // The authors' protocol beside ours: user turns only, one haystack per store. A run that
    // stores only user turns has scored it already, in every layout but the shared scope.
    if args.turns == Turns::All {
        out["authors_protocol"] = longmemeval_as_authors_score_it(args, &items, &embedder).await?;
    }
    Ok(out)
}

/// Every stored turn's embedded texts into the cache first, in large batches.
fn warm(embedder: &CachedEmbedder, items: &[LmeItem<'_>], args: &Args) -> Result<()> {
    let sentence_vectors = sentence_vectors()?;
    let texts: Vec<String> = items
        .iter()
        .map(|i| replay_texts(&i.sessions, args.door, args.context, sentence_vectors))
        .collect::<Result<Vec<_>>>()?
        .concat();
    embedder.warm(&texts)
}

/// LongMemEval scored as in its authors' `run_retrieval.py` (turn granularity): the user turns
/// of each question's haystack stored (through the same door, with the same context rule), one
/// store per question, abstention questions and those with no user turn holding the answer
/// left out. Its figures compare with published systems'; ours count the assistant's turns too.
async fn longmemeval_as_authors_score_it(
    args: &Args,
    items: &[&Value],
    embedder: &Arc<CachedEmbedder>,
) -> Result<Value> {
    // `--trace` keeps the traces of our protocol's stores: this pass writes none over them.
    let authors =
        Args { turns: Turns::User, layouts: vec![Layout::PerConversation], trace: None, ..args.clone() };
    let LmeQuestions { kept, abstention, no_evidence } = lme_questions(items, &authors, Turns::User)?;
    println!(
        "\n## As LongMemEval's authors score it: user turns stored, one store per question; \
         {abstention} abstention questions and {no_evidence} with no user turn holding the answer left out"
    );
    if kept.is_empty() {
        println!("\nno question left to score");
        return Ok(Value::Null);
    }
    warm(embedder, &kept, &authors)?;
    eprintln!("authors' protocol: per-conversation, user turns");
    let mut report = longmemeval_layout(&authors, Layout::PerConversation, &kept, embedder).await?;
    report["skipped"]["abstention"] = json!(abstention);
    report["skipped"]["no_user_answer_turn"] = json!(no_evidence);
    Ok(report)
}

async fn longmemeval_layout(
    args: &Args,
    layout: Layout,
    items: &[LmeItem<'_>],
    embedder: &Arc<CachedEmbedder>,
) -> Result<Value> {
    let budget = token_budget()?;
    let ks = [5usize, 10];
    let mut per_config: BTreeMap<String, BTreeMap<String, Sums>> = BTreeMap::new();
    // Per config, each knowledge-update question's rank of its newest and oldest answer session.
    let mut ku_order: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut per_question: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    // Evidence turns shown as passages in the default's first ten results whose content holds
    // the answer verbatim, and how many of the passages still show it.
    let (mut answer_in_content, mut answer_shown) = (0usize, 0usize);
    let (mut questions, mut foreign) = (0usize, 0usize);
    let started = Instant::now();
    for group in groups(layout, items.len()) {
        let owners: Vec<&str> = group.iter().map(|&i| items[i].qid.as_str()).collect();
        // The clock stands past every turn while they are stored; each question is then asked
        // at its own time.
        let latest = group
            .iter()
            .flat_map(|&i| items[i].turns.values().map(|t| t.at).chain([items[i].now]))
            .max()
            .unwrap_or_else(Utc::now);
        let w = layout_world(embedder, layout, &owners, latest).await?;
        let mut turns = crate::replay::Turns::default();
        let mut session_of: HashMap<RecordId, (String, DateTime<Utc>)> = HashMap::new();
        let mut opening_of: HashMap<RecordId, String> = HashMap::new();
        // Each record's turn id as LongMemEval's authors name it (scored when only user turns
        // are stored, as their protocol has it).
        let mut corpus_id_of: HashMap<RecordId, String> = HashMap::new();
        // What each record is in the dataset, for `--trace`.
        let mut label_of: HashMap<String, Value> = HashMap::new();
        for (n, &i) in group.iter().enumerate() {
            let item = &items[i];
            let written =
                crate::replay::store(&w, args.door, layout, &item.qid, &item.sessions, args.context).await?;
            for (id, key) in &written {
                let turn = &item.turns[key];
                session_of.insert(id.clone(), (turn.session.clone(), turn.at));
                opening_of.insert(id.clone(), turn.opening.clone());
                corpus_id_of.insert(id.clone(), turn.corpus_id());
                if args.trace.is_some() {
                    let n = key.rsplit_once('#').map_or("", |(_, t)| t);
                    let label = json!({"session": turn.session, "turn": n, "user": turn.from_user, "opening": turn.opening});
                    label_of.insert(id.to_string(), label);
                }
            }
            turns.add(&item.qid, written);
            if layout.shared() {
                progress(&format!("stored ({})", layout.name()), n + 1, group.len());
            }
        }
        if layout.shared() {
            eprintln!();
        }
        for &i in &group {
            let LmeItem { qid, item, now, .. } = &items[i];
            let qid = qid.as_str();
            progress("question", questions + 1, items.len());
            set_clock(&w, *now);
            let asker = layout.principal(qid)?;
            let answer_sessions: HashSet<String> = item["answer_session_ids"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            let evidence: HashSet<RecordId> = items[i]
                .turns
                .iter()
                .filter(|(_, t)| t.has_answer)
                .filter_map(|(key, _)| turns.of_key(key).cloned())
                .collect();
            let question = item["question"].as_str().unwrap_or("");
            let kind = item["question_type"].as_str().unwrap_or("other").to_owned();
            let answer = item["answer"].as_str().map(str::to_lowercase).filter(|a| !a.trim().is_empty());
            if let Some(answer) = &answer {
                let (held, shown) = answer_shown_by_default(&w, &asker, question, &evidence, answer).await?;
                answer_in_content += held;
                answer_shown += shown;
            }
            // For knowledge updates: the newest and the oldest answer session.
            let mut answer_dates: Vec<(DateTime<Utc>, String)> = items[i]
                .turns
                .values()
                .filter(|t| answer_sessions.contains(&t.session))
                .map(|t| (t.at, t.session.clone()))
                .collect();
            answer_dates.sort();
            answer_dates.dedup();
            // Deep enough that the first ten distinct sessions are usually in it (LongMemEval's
            // turn-to-session evaluation reads on until it has k distinct sessions).
            let (raw, default_search) = runs(&w, &asker, question, LME_DEPTH, budget).await?;
            let results = isolated(layout, &turns, qid, question, raw, &mut foreign)?;
            if let Some(dir) = &args.trace {
                write_trace(dir, qid, &w, (&default_search, question), &label_of, &evidence).await?;
            }
            // The question's haystack as the authors' corpus, when it is theirs: user turns
            // only, one haystack per searched store.
            let authors_corpus: Option<Vec<String>> = (args.turns == Turns::User
                && layout != Layout::OneScope)
                .then(|| items[i].turns.values().map(LmeTurn::corpus_id).collect());
            for (config, retrieved, tokens) in results {
                let ranked_sessions = distinct_sessions(&retrieved, &session_of);
                let authors = authors_corpus.as_ref().map(|corpus| {
                    let ranked: Vec<String> =
                        retrieved.iter().filter_map(|r| corpus_id_of.get(r).cloned()).collect();
                    authors_scores(&ranked, corpus)
                });
                let by = per_config.entry(config.to_owned()).or_default();
                for bucket in ["overall".to_owned(), kind.clone()] {
                    let sums = by.entry(bucket).or_default();
                    sums.count += 1;
                    sums.add("tokens@10".into(), tokens);
                    if let Some(scores) = &authors {
                        scores.iter().for_each(|(metric, value)| sums.add(metric.clone(), *value));
                    }
                    for &k in &ks {
                        let top: HashSet<&String> = ranked_sessions.iter().take(k).collect();
                        let hit = answer_sessions.iter().filter(|s| top.contains(s)).count();
                        sums.add(format!("session_recall_any@{k}"), f64::from(u8::from(hit > 0)));
                        sums.add(
                            format!("session_recall_all@{k}"),
                            f64::from(u8::from(hit == answer_sessions.len())),
                        );
                        sums.add(format!("session_ndcg@{k}"), ndcg(&ranked_sessions, &answer_sessions, k));
                        // The turns themselves, as a reader sees them: a session metric does not
                        // see an evidence turn pushed down by other turns of its own session.
                        sums.add(format!("turn_ndcg@{k}"), ndcg(&retrieved, &evidence, k));
                        let top_turns: HashSet<&RecordId> = retrieved.iter().take(k).collect();
                        let all = evidence.iter().all(|e| top_turns.contains(e));
                        sums.add(format!("turn_recall_all@{k}"), f64::from(u8::from(all)));
                    }
                }
                // Each question's first ten sessions and its evidence turns' ranks, to read a
                // change question by question (`--out FILE`).
                let evidence_ranks: Vec<Option<usize>> = {
                    let mut ranks: Vec<Option<usize>> = evidence
                        .iter()
                        .map(|e| retrieved.iter().position(|r| r == e).map(|p| p + 1))
                        .collect();
                    ranks.sort_by_key(|r| r.unwrap_or(usize::MAX));
                    ranks
                };
                let mut wanted: Vec<&String> = answer_sessions.iter().collect();
                wanted.sort();
                per_question.entry(config.to_owned()).or_default().push(json!({
                    "question_id": qid,
                    "question_type": kind,
                    "question": question,
                    "answer_sessions": wanted,
                    "sessions@10": ranked_sessions.iter().take(10).collect::<Vec<_>>(),
                    "evidence_turn_ranks": evidence_ranks,
                    // The first ten results: session, whether it is an evidence turn, its opening.
                    "top10": retrieved.iter().take(10).map(|r| json!([
                        session_of.get(r).map(|(s, _)| s.as_str()),
                        evidence.contains(r),
                        opening_of.get(r),
                    ])).collect::<Vec<_>>(),
                }));
                if kind == "knowledge-update" && answer_dates.len() >= 2 {
                    let newest = answer_dates.iter().max().map(|d| d.1.clone()).unwrap();
                    let oldest = answer_dates.iter().min().map(|d| d.1.clone()).unwrap();
                    // 1-based ranks; a session not ranked at all ranks below every ranked one.
                    let rank = |s: &String| ranked_sessions.iter().position(|r| r == s).map(|p| p + 1);
                    let (newest, oldest) = (rank(&newest), rank(&oldest));
                    let above = newest.is_some_and(|n| oldest.is_none_or(|o| n < o));
                    ku_order.entry(config.to_owned()).or_default().push(
                            json!({"question_id": qid, "newest_session_rank": newest, "oldest_session_rank": oldest}),
                        );
                    let sums = by.entry("knowledge-update-order".into()).or_default();
                    sums.count += 1;
                    sums.add("ku_newer_above_older".into(), f64::from(u8::from(above)));
                }
            }
            questions += 1;
        }
    }
    eprintln!();
    let mut configs = BTreeMap::new();
    for (config, by) in &per_config {
        let mut overall = by.get("overall").map(Sums::mean).unwrap_or(Value::Null);
        if let Some(order) = by.get("knowledge-update-order") {
            overall["ku_newer_above_older"] = order.mean()["ku_newer_above_older"].clone();
        }
        let by_category: serde_json::Map<String, Value> = by
            .iter()
            .filter(|(k, _)| *k != "overall" && *k != "knowledge-update-order")
            .map(|(k, v)| (k.clone(), v.mean()))
            .collect();
        let order = ku_order.remove(config).unwrap_or_default();
        let questions = per_question.remove(config).unwrap_or_default();
        configs.insert(
            config.clone(),
            json!({"overall": overall, "by_category": by_category, "knowledge_update_order": order,
                "per_question": questions}),
        );
    }
    let columns = [
        "session_recall_any@5",
        "session_recall_all@5",
        "session_ndcg@5",
        "session_recall_any@10",
        "session_ndcg@10",
        "turn_ndcg@5",
        "turn_recall_all@10",
        "ku_newer_above_older",
        "tokens@10",
    ];
    let stored = if args.turns == Turns::All { "all turns" } else { "user turns" };
    let title = format!(
        "LongMemEval_S dev ({}, {}, {stored}): {questions} questions",
        layout.name(),
        args.door.name()
    );
    print_table(&title, &columns, &configs, &ROWS);
    print_by_category("session_recall_all@5", &configs, &ROWS);
    print_by_category("turn_recall_all@10", &configs, &ROWS);
    if args.turns == Turns::User && layout != Layout::OneScope {
        let title = format!("{title}, as LongMemEval's authors score it (user turns, their recall and nDCG)");
        print_table(&title, &AUTHORS_COLUMNS, &configs, &ROWS);
    }
    println!(
        "\ndefault, first ten results: {answer_shown} of the {answer_in_content} evidence turns shown as passages whose content holds the answer verbatim show it in the passage (passages of {} tokens)",
        retold_http::retrieve_config(&retold_http::Settings::load(None)?).passage_tokens
    );
    println!("{:.0}s", started.elapsed().as_secs_f64());
    let mut out = envelope(
        args,
        "longmemeval",
        questions,
        json!({"turns": if args.turns == Turns::All { "all" } else { "user" }, "answer_in_evidence_content": answer_in_content, "answer_shown": answer_shown}),
        configs,
        Value::Null,
    );
    if layout == Layout::OneScope {
        out["foreign_in_first_10"] = json!(foreign as f64 / questions.max(1) as f64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use retold_domain::RecordId;
    use retold_domain::chrono::{TimeZone, Utc};

    use serde_json::json;

    use super::{distinct_sessions, last_chars, ndcg, parse, trace_records};

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_question_or_a_trace_is_refused_where_it_means_nothing() {
        let err = parse(&args(&["locomo", "--question", "e3038f8c"])).err().expect("refused");
        assert!(err.to_string().starts_with("--question takes a LongMemEval question id"), "{err}");
        let err = parse(&args(&["orchestrator", "--trace", "traces"])).err().expect("refused");
        assert!(err.to_string().starts_with("--trace is for locomo and longmemeval"), "{err}");
    }

    #[test]
    fn a_trace_file_labels_exactly_the_records_the_trace_names() {
        let trace =
            json!({"fused": [{"record_id": "mem_b", "score": 0.5}, {"record_id": "mem_z", "score": 0.2}]});
        let labels: HashMap<String, serde_json::Value> =
            ["mem_a", "mem_b"].into_iter().map(|id| (id.to_owned(), json!({"session": id}))).collect();
        let evidence: HashSet<String> = ["mem_b".to_owned()].into();
        let records = trace_records(&trace, &labels, &evidence);
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(records["mem_b"], json!({"session": "mem_b", "evidence": true}));
    }

    #[test]
    fn last_chars_keeps_the_end_on_character_boundaries() {
        assert_eq!(last_chars("Caroline: ça va?", 6), "ça va?");
        assert_eq!(last_chars("short", 300), "short");
        assert_eq!(last_chars("anything", 0), "");
    }

    #[test]
    fn sessions_rank_by_their_first_turn_and_count_once() {
        let ids: Vec<RecordId> = (0..5).map(|i| RecordId::from_body(&format!("{i:026}")).unwrap()).collect();
        let at = Utc.with_ymd_and_hms(2023, 5, 1, 0, 0, 0).unwrap();
        let session_of: HashMap<RecordId, (String, _)> = [("a", 0), ("a", 1), ("b", 2), ("a", 3), ("c", 4)]
            .into_iter()
            .map(|(s, i)| (ids[i].clone(), (s.to_owned(), at)))
            .collect();
        let ranked = distinct_sessions(&ids, &session_of);
        assert_eq!(ranked, ["a", "b", "c"]);
        // Two relevant sessions found at ranks 2 and 3 of three distinct sessions: the third
        // turn-rank of "b" does not count, its session rank does.
        let relevant: HashSet<String> = ["b", "c"].map(str::to_owned).into();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        let expected = (1.0 / 3f64.log2() + 1.0 / 4f64.log2()) / ideal;
        assert!((ndcg(&ranked, &relevant, 5) - expected).abs() < 1e-9);
        assert!(ndcg(&ranked, &relevant, 1).abs() < 1e-9);
    }
}
