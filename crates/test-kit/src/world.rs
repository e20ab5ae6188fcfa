//! `World`: the write path and the search pipeline over a temporary SQLite file, the
//! provisioned ONNX model and the exact index, with a manual clock and sequential ids.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use retold_domain::chrono::{TimeDelta, TimeZone, Utc};
use retold_domain::{
    AgentId, AuditEvent, Clock, EligibilityFilter, Embedder, EventId, EventKind, Grant, GrantId, GrantStore,
    MemoryRecord, Principal, RecordId, RecordReader, Reranker, Scope, SearchId, SearchLogStore, Session,
    SessionId, TurnBuffer, TurnRole, UserId,
};
use retold_index::{
    EligibilityTable, ExactIndex, OnnxEmbedder, OnnxEmbedderConfig, TrackedEntityWriter, TrackedWriter,
};
use retold_ingest::{EmbeddingEntailmentJudge, IngestConfig, Ingestor, Ports, WriteOutcome, WriteRequest};
use retold_retrieve::{
    NoRewriter, QueryRewriter, RetrieveConfig, RetrievePorts, Retriever, SearchRequest, SearchResponse,
};
use retold_store_sqlite::{SqliteStore, StoreConfig};

use crate::doubles::{ManualClock, SequentialIds};
use crate::spy::Spy;

/// The provisioned embedder (the default model, as served), loaded once per test binary.
pub fn embedder() -> Arc<OnnxEmbedder> {
    static EMBEDDER: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            Arc::new(
                OnnxEmbedder::load(OnnxEmbedderConfig::provisioned())
                    .expect("model provisioned by `cargo xtask setup`"),
            )
        })
        .clone()
}

static SEQ: AtomicU64 = AtomicU64::new(1);

/// An event as the host's admin would record it (`kind` is a dotted event name).
pub fn host_event(kind: &str) -> AuditEvent {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    AuditEvent {
        id: EventId::new(format!("evt_host{n}")).expect("a valid event id"),
        at: Utc::now(),
        kind: EventKind::parse(kind).expect("a known event kind"),
        record_id: None,
        actor: None,
        details: Default::default(),
    }
}

/// A principal with no project or session.
pub fn principal(agent: &str, user: &str) -> Principal {
    Principal::new(
        AgentId::new(agent).expect("a valid agent id"),
        UserId::new(user).expect("a valid user id"),
    )
}

/// Options for a `World`.
#[allow(missing_debug_implementations)]
pub struct WorldBuilder {
    embedder: Arc<dyn Embedder>,
    retrieve: RetrieveConfig,
    ingest: IngestConfig,
    reranker: Option<Arc<dyn Reranker>>,
    rewriter: Arc<dyn QueryRewriter>,
    derived_eligibility: bool,
}

impl WorldBuilder {
    /// Answer eligibility from an in-memory `EligibilityTable` kept current by the writers,
    /// as the service does.
    pub fn derived_eligibility(mut self) -> Self {
        self.derived_eligibility = true;
        self
    }

    /// Another embedder (a failing one, a fake).
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = embedder;
        self
    }

    /// The search pipeline's configuration.
    pub fn retrieve(mut self, config: RetrieveConfig) -> Self {
        self.retrieve = config;
        self
    }

    /// The write path's configuration.
    pub fn ingest(mut self, config: IngestConfig) -> Self {
        self.ingest = config;
        self
    }

    /// A reranker stage.
    pub fn reranker(mut self, reranker: Option<Arc<dyn Reranker>>) -> Self {
        self.reranker = reranker;
        self
    }

    /// A query rewriter.
    pub fn rewriter(mut self, rewriter: Arc<dyn QueryRewriter>) -> Self {
        self.rewriter = rewriter;
        self
    }

    /// Open the store in a fresh temporary directory and wire everything.
    pub async fn build(self) -> World {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store =
            SqliteStore::open(&StoreConfig::new(dir.path().join("retold.db"))).await.expect("store opens");
        let index = Arc::new(ExactIndex::new(384));
        let clock =
            Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).single().expect("a time")));
        let ids = Arc::new(SequentialIds::default());
        let spy = Spy { inner: store.clone(), reads: Arc::default() };
        let reads = spy.reads.clone();
        let shared = Arc::new(store.clone());
        let table = if self.derived_eligibility {
            Some(Arc::new(EligibilityTable::rebuild(&store).await.expect("eligibility rows read")))
        } else {
            None
        };
        let writer: Arc<dyn retold_domain::RecordWriter> = match &table {
            Some(table) => Arc::new(TrackedWriter { inner: shared.clone(), table: table.clone() }),
            None => shared.clone(),
        };
        let entity_writer: Arc<dyn retold_domain::EntityWriter> = match &table {
            Some(table) => Arc::new(TrackedEntityWriter { inner: shared.clone(), table: table.clone() }),
            None => shared.clone(),
        };
        let eligibility: Arc<dyn retold_domain::EligibilityIndex> = match &table {
            Some(table) => table.clone(),
            None => shared.clone(),
        };
        let ports = Ports {
            writer,
            records: shared.clone(),
            facts: Arc::new(spy.clone()),
            graph: shared.clone(),
            audit: shared.clone(),
            entities: Arc::new(spy),
            entity_writer,
            grants: shared.clone(),
            turns: shared.clone(),
            receipts: shared.clone(),
            sentences: shared.clone(),
            background: Arc::new(retold_app::BackgroundTasks::default()),
            embedder: self.embedder.clone(),
            index: index.clone(),
            judge: Arc::new(EmbeddingEntailmentJudge::new(self.embedder.clone())),
            clock: clock.clone(),
            ids: ids.clone(),
        };
        let ingestor = Ingestor::new(ports.clone(), self.ingest.clone());
        let retrieve_ports = RetrievePorts {
            eligibility,
            records: shared.clone(),
            graph: shared.clone(),
            entities: shared.clone(),
            grants: shared.clone(),
            lexical: shared.clone(),
            stemmer: Arc::new(retold_index::SnowballEnglish::new()),
            index: index.clone(),
            embedder: self.embedder,
            search_log: shared,
            rewriter: self.rewriter,
            reranker: self.reranker,
            clock: clock.clone(),
            ids,
        };
        let retriever = Retriever::new(retrieve_ports.clone(), self.retrieve.clone());
        World {
            store,
            reads,
            index,
            clock,
            ingestor,
            retriever,
            ports,
            eligibility: table,
            ingest: self.ingest,
            retrieve_ports,
            retrieve: self.retrieve,
            _dir: dir,
        }
    }
}

/// The write path and search pipeline on real components.
#[allow(missing_debug_implementations)]
pub struct World {
    pub store: SqliteStore,
    /// Every scope list the ingestor read records or entities with.
    pub reads: Arc<Mutex<Vec<Vec<Scope>>>>,
    pub index: Arc<ExactIndex>,
    pub clock: Arc<ManualClock>,
    pub ingestor: Ingestor,
    pub retriever: Retriever,
    /// The ingestor's ports (for an extraction runner over the same store).
    pub ports: Ports,
    /// The derived eligibility table, when the world was built with one.
    pub eligibility: Option<Arc<EligibilityTable>>,
    ingest: IngestConfig,
    retrieve_ports: RetrievePorts,
    retrieve: RetrieveConfig,
    _dir: tempfile::TempDir,
}

impl World {
    /// Defaults: the provisioned embedder, default configurations, no reranker, no rewriter.
    pub fn builder() -> WorldBuilder {
        WorldBuilder {
            embedder: embedder(),
            retrieve: RetrieveConfig::default(),
            ingest: IngestConfig::default(),
            reranker: None,
            rewriter: Arc::new(NoRewriter),
            derived_eligibility: false,
        }
    }

    /// The same world with the ingestor writing through `writer` (a fault-injecting wrapper).
    pub fn with_writer(self, writer: Arc<dyn retold_domain::RecordWriter>) -> Self {
        self.with_ports(|ports| ports.writer = writer)
    }

    /// The same world with the ingestor's ports changed by `change` (fault-injecting wrappers
    /// around the store, the index or the embedder); its configuration stays.
    pub fn with_ports(mut self, change: impl FnOnce(&mut Ports)) -> Self {
        change(&mut self.ports);
        self.ingestor = Ingestor::new(self.ports.clone(), self.ingest.clone());
        self
    }

    /// The same world with the retriever's ports changed by `change` (a store wrapper that
    /// loses records, say); its configuration stays.
    pub fn with_retrieve_ports(mut self, change: impl FnOnce(&mut RetrievePorts)) -> Self {
        change(&mut self.retrieve_ports);
        self.retriever = Retriever::new(self.retrieve_ports.clone(), self.retrieve.clone());
        self
    }

    /// Now, on the world's clock.
    pub fn now(&self) -> retold_domain::Timestamp {
        self.clock.now()
    }

    /// Move the clock forward `n` days.
    pub fn days(&self, n: i64) {
        self.clock.advance(TimeDelta::days(n));
    }

    /// Grant `agent` read and/or write on `scope`.
    pub async fn grant(&self, agent: &str, scope: &str, read: bool, write: bool) {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let grant = Grant {
            id: GrantId::new(format!("grt_{n}")).expect("a valid grant id"),
            agent_id: AgentId::new(agent).expect("a valid agent id"),
            scope: Scope::parse(scope).expect("a valid scope"),
            can_read: read,
            can_write: write,
        };
        self.store.put_grant(grant, host_event("grant.created")).await.expect("grant stored");
    }

    /// Start session `id` for research-agent and aditya, unless it exists.
    pub async fn start_session(&self, id: &str) -> SessionId {
        let session = SessionId::new(id).expect("a valid session id");
        if self.store.session(&session).await.expect("session read").is_none() {
            let started = Session {
                id: session.clone(),
                agent_id: AgentId::new("research-agent").expect("a valid agent id"),
                user_id: UserId::new("aditya").expect("a valid user id"),
                project_id: None,
                started_at: self.now(),
                ended_at: None,
                scope: None,
            };
            self.store.start_session(started, host_event("session.started")).await.expect("session stored");
        }
        session
    }

    /// Append the next turn of `session`, said now by its own user, agent or tool, straight
    /// to the session buffer (no turn memory); returns its number.
    pub async fn append(&self, session: &SessionId, role: TurnRole, text: &str) -> u32 {
        let turn = self.store.last_turn(session).await.expect("last turn read").map_or(1, |t| t.turn + 1);
        let row = retold_domain::SessionTurn {
            session_id: session.clone(),
            turn,
            role,
            speaker: None,
            content: text.to_owned(),
            at: self.now(),
            created_at: self.now(),
        };
        self.store.append_turn(row).await.expect("turn stored");
        turn
    }

    /// A session whose turn `turn` says `text` (earlier turns are filler).
    pub async fn session_with_turn(&self, id: &str, turn: u32, text: &str) {
        let session = self.start_session(id).await;
        loop {
            let next = self.store.turns(&session).await.expect("turns read").len() as u32 + 1;
            let content = if next == turn { text.to_owned() } else { format!("filler turn {next}") };
            let at = Utc::now();
            let row = retold_domain::SessionTurn {
                session_id: session.clone(),
                turn: next,
                role: TurnRole::User,
                speaker: None,
                content,
                at,
                created_at: at,
            };
            self.store.append_turn(row).await.expect("turn stored");
            if next >= turn {
                break;
            }
        }
    }

    /// The ids eligible in one scope with the default statuses, now.
    pub async fn eligible(&self, scope: &str) -> Vec<String> {
        use retold_domain::EligibilityIndex;
        self.store
            .eligible(&EligibilityFilter {
                scopes: vec![Scope::parse(scope).expect("a valid scope")],
                statuses: EligibilityFilter::statuses_for(false),
                now: self.now(),
                types: None,
                event_from: None,
                event_to: None,
                include_conflicts: false,
                origins: None,
                excluded_session: None,
            })
            .await
            .expect("eligibility read")
            .into_iter()
            .map(|e| e.id.to_string())
            .collect()
    }

    /// A stored record, in any status.
    pub async fn record(&self, id: &RecordId) -> MemoryRecord {
        self.store.get(id).await.expect("record read").expect("the record exists")
    }

    /// Write through the ingestor, expecting a new record.
    pub async fn write(&self, p: &Principal, request: WriteRequest) -> RecordId {
        match self.ingestor.write(p, &request).await.expect("write succeeds") {
            WriteOutcome::Created { id, .. } | WriteOutcome::Superseding { id, .. } => id,
            other => panic!("expected a new record, got {other:?}"),
        }
    }

    /// Search through the retriever, once every earlier write's sentence vectors are attached
    /// (they follow a write's answer): the search sees what every write fully indexed.
    pub async fn search(&self, p: &Principal, request: SearchRequest) -> SearchResponse {
        self.ingestor.settled().await;
        self.retriever.search(p, &request).await.expect("search succeeds")
    }

    /// A search_log trace as JSON.
    pub async fn trace(&self, id: &SearchId) -> serde_json::Value {
        let (_, _, json) = self.store.trace(id).await.expect("trace read").expect("the trace exists");
        serde_json::from_str(&json).expect("traces are JSON")
    }
}
