//! The write path on real components: a SQLite file, the ONNX model, the exact index.

mod examples;
mod extraction;
mod properties;
mod spy;

use std::sync::{Arc, OnceLock};

use retold_domain::chrono::{TimeZone, Utc};
use retold_domain::{
    AgentId, AuditEvent, Content, EligibilityFilter, Embedder, EntityKind, EventId, Evidence, Grant, GrantId,
    GrantStore, ManualClock, MemoryType, Name, Principal, RecordId, RecordStore, Scope, SequentialIds,
    Session, SessionId, SessionStore, SourceKind, SourceRef, TurnRole, UserId,
};
use retold_index::{ExactIndex, OnnxEmbedder, OnnxEmbedderConfig};
use retold_ingest::{EmbeddingEntailmentJudge, EntityRef, IngestConfig, Ingestor, Ports, WriteRequest};
use retold_store_sqlite::{SqliteStore, StoreConfig};

pub(crate) fn embedder() -> Arc<OnnxEmbedder> {
    static EMBEDDER: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            Arc::new(
                OnnxEmbedder::load(OnnxEmbedderConfig {
                    batch_size: 16,
                    ..OnnxEmbedderConfig::provisioned()
                })
                .expect("model provisioned by `cargo xtask setup`"),
            )
        })
        .clone()
}

pub(crate) struct World {
    pub(crate) store: SqliteStore,
    /// Every scope list the ingestor read records or entities with.
    pub(crate) reads: Arc<std::sync::Mutex<Vec<Vec<Scope>>>>,
    pub(crate) index: Arc<ExactIndex>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) ingestor: Ingestor,
    pub(crate) ports: Ports,
    _dir: tempfile::TempDir,
}

pub(crate) async fn world_with(embedder: Arc<dyn Embedder>) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&StoreConfig::new(dir.path().join("retold.db"))).await.unwrap();
    let index = Arc::new(ExactIndex::new(384));
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()));
    let spy = spy::Spy { inner: store.clone(), reads: Default::default() };
    let reads = spy.reads.clone();
    let ports = Ports {
        records: Arc::new(spy.clone()),
        entities: Arc::new(spy),
        grants: Arc::new(store.clone()),
        sessions: Arc::new(store.clone()),
        embedder: embedder.clone(),
        index: index.clone(),
        judge: Arc::new(EmbeddingEntailmentJudge::new(embedder)),
        clock: clock.clone(),
        ids: Arc::new(SequentialIds::default()),
    };
    let ingestor = Ingestor::new(ports.clone(), IngestConfig::default());
    World { store, reads, index, clock, ingestor, ports, _dir: dir }
}

pub(crate) async fn world() -> World {
    world_with(embedder()).await
}

static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(crate) fn host_event(kind: &str) -> AuditEvent {
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    AuditEvent {
        id: EventId::new(format!("evt_host{n}")).unwrap(),
        at: Utc::now(),
        kind: kind.into(),
        record_id: None,
        actor: None,
        details: Default::default(),
    }
}

pub(crate) fn principal(agent: &str, user: &str) -> Principal {
    Principal::new(AgentId::new(agent).unwrap(), UserId::new(user).unwrap())
}

impl World {
    pub(crate) async fn grant(&self, agent: &str, scope: &str, read: bool, write: bool) {
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.store
            .put_grant(
                Grant {
                    id: GrantId::new(format!("grt_{n}")).unwrap(),
                    agent_id: AgentId::new(agent).unwrap(),
                    scope: Scope::parse(scope).unwrap(),
                    can_read: read,
                    can_write: write,
                },
                host_event("grant.created"),
            )
            .await
            .unwrap();
    }

    /// Start session `id` for research-agent and aditya, unless it exists.
    pub(crate) async fn start_session(&self, id: &str) -> SessionId {
        let session = SessionId::new(id).unwrap();
        if self.store.session(&session).await.unwrap().is_none() {
            let started = Session {
                id: session.clone(),
                agent_id: AgentId::new("research-agent").unwrap(),
                user_id: UserId::new("aditya").unwrap(),
                project_id: None,
                started_at: retold_domain::Clock::now(self.clock.as_ref()),
                ended_at: None,
            };
            self.store.start_session(started, host_event("session.started")).await.unwrap();
        }
        session
    }

    /// A session whose turn `turn` says `text` (earlier turns are filler).
    pub(crate) async fn session_with_turn(&self, id: &str, turn: u32, text: &str) {
        let session = self.start_session(id).await;
        loop {
            let next = self.store.turns(&session).await.unwrap().len() as u32 + 1;
            let content = if next == turn { text.to_owned() } else { format!("filler turn {next}") };
            self.store.append_turn(&session, TurnRole::User, content, Utc::now()).await.unwrap();
            if next >= turn {
                break;
            }
        }
    }

    pub(crate) async fn eligible(&self, scope: &str) -> Vec<String> {
        self.store
            .eligible(&EligibilityFilter {
                scopes: vec![Scope::parse(scope).unwrap()],
                statuses: EligibilityFilter::statuses_for(false),
                now: retold_domain::Clock::now(self.clock.as_ref()),
                types: None,
                event_from: None,
                event_to: None,
            })
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.id.to_string())
            .collect()
    }

    pub(crate) async fn record(&self, id: &RecordId) -> retold_domain::MemoryRecord {
        self.store.get(id).await.unwrap().unwrap()
    }
}

/// A semantic claim about Aditya's `attribute`.
pub(crate) fn claim(content: &str, attribute: &str, source: SourceKind) -> WriteRequest {
    WriteRequest {
        memory_type: MemoryType::Semantic,
        content: Content::new(content).unwrap(),
        scope: Scope::parse("user:aditya").unwrap(),
        subject: Some(EntityRef::Name { name: Name::new("Aditya").unwrap(), kind: EntityKind::Person }),
        attribute: Some(retold_domain::Attribute::new(attribute).unwrap()),
        mentions: vec![],
        source_kind: source,
        source_ref: None,
        evidence: None,
        event_at: None,
        expires_at: None,
        confidence: None,
        tags: vec![],
    }
}

pub(crate) fn with_evidence(
    mut request: WriteRequest,
    session: &str,
    turn: u32,
    evidence: &str,
) -> WriteRequest {
    request.source_ref = Some(SourceRef::new(format!("session:{session}<turn:{turn}>")).unwrap());
    request.evidence = Some(Evidence::new(evidence).unwrap());
    request
}
