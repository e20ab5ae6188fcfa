//! The host's administration: grants, entities and aliases, host keys, audit history,
//! search traces, explicit extraction runs, readiness.

use std::sync::Arc;

use retold_domain::{
    AgentId, ApiKeyInfo, ApiKeyStore, AuditEvent, AuditLog, Clock, DomainError, Embedder, Entity, EntityKind,
    EntityReader, EntityStatus, EntityWriter, EventKind, Grant, GrantId, GrantStore, IdGenerator, KeyRole,
    Name, RecordId, RecordReader, Result, Scope, SearchId, SearchLogStore, SessionId, TurnBuffer,
    VectorIndex,
};
use retold_ingest::{ExtractionReport, Ingestor, MergeAuthority};

use crate::keys::{hash_key, new_key};
use crate::sessions::{SessionService, app_event};
use crate::stores::Stores;

/// An entity with its aliases.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityView {
    pub entity: Entity,
    pub aliases: Vec<Name>,
}

/// A key just created: its stored description and its secret, shown once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewHostKey {
    pub info: ApiKeyInfo,
    pub secret: String,
}

/// What readiness found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub model: String,
    pub vectors: usize,
}

/// Administration use-cases (the admin key's endpoints).
#[derive(Clone)]
pub struct AdminService {
    grants: Arc<dyn GrantStore>,
    entities: Arc<dyn EntityReader>,
    entity_writer: Arc<dyn EntityWriter>,
    keys: Arc<dyn ApiKeyStore>,
    audit: Arc<dyn AuditLog>,
    records: Arc<dyn RecordReader>,
    turns: Arc<dyn TurnBuffer>,
    search_log: Arc<dyn SearchLogStore>,
    decisions: Arc<dyn retold_domain::DecisionLog>,
    inspection: Arc<dyn retold_domain::Inspection>,
    activation: Arc<dyn retold_domain::ActivationStore>,
    embedder: Arc<dyn Embedder>,
    index: Arc<dyn VectorIndex>,
    ingestor: Ingestor,
    sessions: SessionService,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for AdminService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminService").finish_non_exhaustive()
    }
}

fn not_found(what: &'static str, id: &str) -> DomainError {
    DomainError::NotFound { what, id: id.to_owned() }
}

impl AdminService {
    /// Administration over `stores`; merges go through `ingestor`, extraction runs through
    /// `sessions`' runner.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        stores: &Stores,
        embedder: Arc<dyn Embedder>,
        index: Arc<dyn VectorIndex>,
        ingestor: Ingestor,
        sessions: SessionService,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            grants: stores.grants.clone(),
            entities: stores.entities.clone(),
            entity_writer: stores.entity_writer.clone(),
            keys: stores.keys.clone(),
            audit: stores.audit.clone(),
            records: stores.records.clone(),
            turns: stores.turns.clone(),
            search_log: stores.search_log.clone(),
            decisions: stores.decisions.clone(),
            inspection: stores.inspection.clone(),
            activation: stores.activation.clone(),
            embedder,
            index,
            ingestor,
            sessions,
            clock,
            ids,
        }
    }

    fn event(&self, kind: EventKind, details: &[(&str, String)]) -> AuditEvent {
        app_event(self.ids.as_ref(), self.clock.as_ref(), kind, None, details)
    }

    /// Give an agent read and/or write access to one scope. A grant that allows nothing, or
    /// one on a private `agent:<agent>/<user>` scope, is refused.
    pub async fn create_grant(
        &self,
        agent_id: AgentId,
        scope: Scope,
        can_read: bool,
        can_write: bool,
    ) -> Result<Grant> {
        if !can_read && !can_write {
            return Err(DomainError::Invalid {
                field: "can_read",
                reason: "a grant must allow reading or writing".into(),
            });
        }
        let grant = Grant {
            id: GrantId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
            agent_id,
            scope,
            can_read,
            can_write,
        };
        retold_policy::validate_new_grant(&grant)
            .map_err(|e| DomainError::Invalid { field: "scope", reason: e.to_string() })?;
        let event = self.event(
            EventKind::GrantCreated,
            &[("grant_id", grant.id.to_string()), ("scope", grant.scope.to_string())],
        );
        self.grants.put_grant(grant.clone(), event).await?;
        Ok(grant)
    }

    /// Every grant an agent holds.
    pub async fn grants(&self, agent: &AgentId) -> Result<Vec<Grant>> {
        self.grants.grants_for(agent).await
    }

    /// Revoke a grant.
    pub async fn revoke_grant(&self, id: &str) -> Result<()> {
        let id = GrantId::new(id.to_owned()).map_err(|_| not_found("grant", id))?;
        let event = self.event(EventKind::GrantRevoked, &[("grant_id", id.to_string())]);
        self.grants.revoke_grant(&id, event).await
    }

    async fn view(&self, entity: Entity) -> Result<EntityView> {
        let aliases = self.entities.aliases(&entity.id).await?;
        Ok(EntityView { entity, aliases })
    }

    /// A confirmed entity with aliases.
    pub async fn create_entity(
        &self,
        kind: EntityKind,
        canonical_name: Name,
        scope: Scope,
        aliases: Vec<Name>,
    ) -> Result<EntityView> {
        let entity = Entity::create(
            self.ids.as_ref(),
            kind,
            canonical_name,
            scope,
            EntityStatus::Confirmed,
            self.clock.now(),
        );
        let event = self.event(EventKind::EntityCreated, &[("entity_id", entity.id.to_string())]);
        self.entity_writer.create_entity(entity.clone(), aliases, event).await?;
        self.view(entity).await
    }

    /// One entity (merged ones too) with its aliases.
    pub async fn entity(&self, id: &str) -> Result<EntityView> {
        let entity_id = retold_domain::EntityId::new(id.to_owned()).map_err(|_| not_found("entity", id))?;
        let entity = self.entities.entity(&entity_id).await?.ok_or_else(|| not_found("entity", id))?;
        self.view(entity).await
    }

    /// Add an alias; every FTS row of a linked record is rewritten.
    pub async fn add_alias(&self, id: &str, alias: Name) -> Result<EntityView> {
        let entity = self.entity(id).await?.entity;
        let event = self.event(
            EventKind::EntityAliasAdded,
            &[("entity_id", id.to_owned()), ("alias", alias.to_string())],
        );
        self.entity_writer.add_alias(&entity.id, alias, event).await?;
        self.view(entity).await
    }

    /// Merge `from` into `into` through the write path, over every scope: records get the
    /// survivor as subject with a version bump, and two current records that now share a key
    /// are resolved by the seed's rules. Returns the survivor.
    pub async fn merge_entities(&self, from: &str, into: &str) -> Result<EntityView> {
        let from = self.entity(from).await?.entity;
        let into = self.entity(into).await?.entity;
        self.ingestor.merge_entities(MergeAuthority::Admin, &from.id, &into.id).await?;
        self.entity(into.id.as_str()).await
    }

    /// Create a host key limited to `agents` (empty: any agent), shown once, stored hashed.
    pub async fn create_host_key(&self, name: String, agents: Vec<AgentId>) -> Result<NewHostKey> {
        let secret = new_key("rtk").map_err(|e| DomainError::backend("random", e))?;
        let info =
            ApiKeyInfo { id: format!("key_{}", self.ids.next_body()), name, role: KeyRole::Host, agents };
        self.keys.put_api_key(&info, &hash_key(&secret), self.clock.now()).await?;
        Ok(NewHostKey { info, secret })
    }

    /// On a first start without a configured admin key: create one, returning its secret once.
    pub async fn ensure_admin_key(&self) -> Result<Option<String>> {
        if self.keys.has_admin_key().await? {
            return Ok(None);
        }
        let secret = new_key("rtadm").map_err(|e| DomainError::backend("random", e))?;
        let info = ApiKeyInfo {
            id: format!("key_{}", self.ids.next_body()),
            name: "first admin key".into(),
            role: KeyRole::Admin,
            agents: vec![],
        };
        self.keys.put_api_key(&info, &hash_key(&secret), self.clock.now()).await?;
        Ok(Some(secret))
    }

    /// The stored key whose secret hashes to `sha256`.
    pub async fn key_by_hash(&self, sha256: &str) -> Result<Option<ApiKeyInfo>> {
        self.keys.api_key_by_hash(sha256).await
    }

    /// The audit history of a record, oldest first.
    pub async fn record_events(&self, id: &str) -> Result<Vec<AuditEvent>> {
        let record = RecordId::new(id.to_owned()).map_err(|_| not_found("record", id))?;
        if self.records.get(&record).await?.is_none() {
            return Err(not_found("record", id));
        }
        self.audit.record_events(&record).await
    }

    async fn session_id(&self, id: &str) -> Result<SessionId> {
        let session = SessionId::new(id.to_owned()).map_err(|_| not_found("session", id))?;
        if self.turns.session(&session).await?.is_none() {
            return Err(not_found("session", id));
        }
        Ok(session)
    }

    /// The audit events of a session, oldest first.
    pub async fn session_events(&self, id: &str) -> Result<Vec<AuditEvent>> {
        let session = self.session_id(id).await?;
        self.audit.session_events(&session).await
    }

    /// Records by scope, status and words, newest first, one page, and how many match.
    pub async fn browse_records(
        &self,
        filter: &retold_domain::RecordBrowse,
    ) -> Result<(Vec<retold_domain::MemoryRecord>, u64)> {
        self.inspection.browse_records(filter).await
    }

    /// Searches of the search log, newest first.
    pub async fn recent_searches(
        &self,
        page: retold_domain::PageRequest,
    ) -> Result<Vec<retold_domain::SearchSummary>> {
        self.inspection.recent_searches(page).await
    }

    /// Sessions, newest first, with their turn counts.
    pub async fn recent_sessions(
        &self,
        page: retold_domain::PageRequest,
    ) -> Result<Vec<retold_domain::SessionSummary>> {
        self.inspection.recent_sessions(page).await
    }

    /// Conflicts, newest first: (the record that stays the result, the one contradicting it).
    pub async fn conflicts(
        &self,
        page: retold_domain::PageRequest,
    ) -> Result<Vec<(retold_domain::MemoryRecord, retold_domain::MemoryRecord)>> {
        let links = self.inspection.conflicts(page).await?;
        let ids: Vec<_> =
            links.iter().flat_map(|l| [l.record_id.clone(), l.conflicting_id.clone()]).collect();
        let records: std::collections::HashMap<_, _> =
            self.records.get_many(&ids).await?.into_iter().map(|r| (r.id.clone(), r)).collect();
        Ok(links
            .iter()
            .filter_map(|l| {
                Some((records.get(&l.record_id)?.clone(), records.get(&l.conflicting_id)?.clone()))
            })
            .collect())
    }

    /// The profile a session started with.
    pub async fn session_profile(&self, id: &str) -> Result<retold_domain::ProfileBlock> {
        let session = self.session_id(id).await?;
        self.activation.profile(&session).await?.ok_or_else(|| not_found("profile", id))
    }

    /// A session's transcript: its turns in order.
    pub async fn session_turns(&self, id: &str) -> Result<Vec<retold_domain::SessionTurn>> {
        let session = self.session_id(id).await?;
        self.turns.turns(&session).await
    }

    /// One orchestrator decision.
    pub async fn decision(&self, id: &str) -> Result<retold_domain::TurnMemoryDecision> {
        let decision_id =
            retold_domain::DecisionId::new(id.to_owned()).map_err(|_| not_found("decision", id))?;
        self.decisions.decision(&decision_id).await?.ok_or_else(|| not_found("decision", id))
    }

    /// A session's orchestrator decisions, oldest first.
    pub async fn session_decisions(&self, id: &str) -> Result<Vec<retold_domain::TurnMemoryDecision>> {
        let session = self.session_id(id).await?;
        self.decisions.decisions_of(&session).await
    }

    /// Run extraction now, for one session or for up to `limit` ended sessions nobody has
    /// extracted yet; each session is still extracted at most once.
    pub async fn run_extraction(
        &self,
        session: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(SessionId, Result<ExtractionReport>)>> {
        let Some(runner) = self.sessions.extraction().cloned() else {
            return Err(DomainError::Conflict(format!(
                "session extraction is {}",
                self.sessions.extraction_status()
            )));
        };
        let session = match session {
            Some(id) => Some(self.session_id(id).await?),
            None => None,
        };
        // Runs are their own task: cancelling the request must not abandon a claimed session.
        self.sessions
            .tasks()
            .spawn(async move {
                match session {
                    Some(session) => {
                        let run = runner.run(&session).await;
                        Ok(vec![(session, run)])
                    }
                    None => runner.run_pending(limit).await,
                }
            })
            .await
            .map_err(|e| DomainError::backend("extraction task", e.to_string()))?
    }

    /// One search_log trace as stored (JSON text).
    pub async fn trace(&self, id: &str) -> Result<String> {
        let search = SearchId::new(id.to_owned()).map_err(|_| not_found("trace", id))?;
        let (_, _, json) = self.search_log.trace(&search).await?.ok_or_else(|| not_found("trace", id))?;
        Ok(json)
    }

    /// The store answers and the embedder runs.
    pub async fn ready(&self) -> Result<Readiness> {
        self.embedder.embed(&["readiness probe".to_owned()]).await?;
        self.keys.has_admin_key().await?;
        Ok(Readiness { model: self.embedder.info().name.clone(), vectors: self.index.live_len() })
    }
}
