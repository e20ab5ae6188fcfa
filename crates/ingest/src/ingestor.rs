//! The ingestor: one write = policy checks, evidence, entities, the current-fact decision,
//! embedding, one store transaction and the vector index update.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use retold_domain::text::same_values;
use retold_domain::{
    AgentId, AuditEvent, AuditLog, Clock, ConflictLink, CurrentFacts, DomainError, EligibleRecord, Embedder,
    EmbeddingRow, EntailmentJudge, Entity, EntityId, EntityReader, EntityStatus, EntityWriter, EventId,
    EventKind, FactKey, GrantStore, IdGenerator, KeyGuard, KeyedRecord, LinkRole, MemoryRecord, NewEntity,
    Principal, RecordEntityLink, RecordGraph, RecordId, RecordReader, RecordUpdate, RecordWriter, Result,
    Scope, SourceKind, Status, TurnBuffer, VectorIndex, WriteKey, WriteReceipt, WriteReceipts, WriteUnit,
};
use retold_policy::{
    EvidenceVerdict, FactDecision, Reinforcement, ScopeAccess, decide, evidence_appears_verbatim,
    judge_evidence, reinforce, resolve_scopes, transition,
};

use crate::config::IngestConfig;
use crate::judge::cosine;
use crate::request::{
    EntityRef, KeyedWrite, RejectCode, ReviseAction, RevisionOutcome, WriteOutcome, WriteRequest,
};
use crate::sentences::SentenceJob;
use crate::stages::{WriteStages, timed};

/// How often a write is retried when a concurrent writer changed what it decided against.
const MAX_ATTEMPTS: usize = 8;

/// The ports the ingestor writes through, each sized by what the write path uses.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct Ports {
    pub writer: Arc<dyn RecordWriter>,
    pub records: Arc<dyn RecordReader>,
    pub facts: Arc<dyn CurrentFacts>,
    pub graph: Arc<dyn RecordGraph>,
    pub audit: Arc<dyn AuditLog>,
    pub entities: Arc<dyn EntityReader>,
    pub entity_writer: Arc<dyn EntityWriter>,
    pub grants: Arc<dyn GrantStore>,
    /// Cited session turns, for the evidence check.
    pub turns: Arc<dyn TurnBuffer>,
    /// Receipts of keyed writes (extraction candidates), so a retried run writes nothing twice.
    pub receipts: Arc<dyn WriteReceipts>,
    /// Sentence vectors attached after a write commits …
    pub sentences: Arc<dyn retold_domain::SentenceVectors>,
    /// … by the sentence worker, a task of its own.
    pub background: Arc<dyn retold_domain::Background>,
    pub embedder: Arc<dyn Embedder>,
    pub index: Arc<dyn VectorIndex>,
    pub judge: Arc<dyn EntailmentJudge>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
}

/// The write path.
#[derive(Clone)]
pub struct Ingestor {
    pub(crate) ports: Ports,
    pub(crate) config: IngestConfig,
    /// Attribute names' vectors, for the aliasing check of a current fact: the same few
    /// names come back on every write about a subject, so each is embedded once.
    attribute_names: Arc<std::sync::Mutex<HashMap<String, Vec<f32>>>>,
    /// Committed records whose sentence vectors wait for the sentence worker.
    pub(crate) sentence_queue: Arc<crate::sentences::SentenceQueue>,
}

/// Most attribute names whose vectors are kept (the map starts over when it is full).
const ATTRIBUTE_NAMES_KEPT: usize = 4096;

impl std::fmt::Debug for Ingestor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ingestor").field("config", &self.config).finish_non_exhaustive()
    }
}

/// What the evidence checks concluded, for the record and its audit event.
struct EvidenceResult {
    source_kind: SourceKind,
    details: BTreeMap<String, String>,
}

/// Resolved entity links plus entities to create in the same transaction.
#[derive(Default)]
pub(crate) struct Resolved {
    pub(crate) subject: Option<EntityId>,
    pub(crate) links: Vec<(EntityId, LinkRole)>,
    pub(crate) new_entities: Vec<NewEntity>,
}

pub(crate) enum Resolution {
    Done(Resolved),
    Ambiguous(RejectCode),
}

impl Ingestor {
    /// An ingestor over `ports` with `config`.
    pub fn new(ports: Ports, config: IngestConfig) -> Self {
        Self { ports, config, attribute_names: Arc::default(), sentence_queue: Arc::default() }
    }

    /// The vectors of attribute names (`_` read as spaces), embedding only the names not seen
    /// before, in one run.
    async fn attribute_vectors(&self, names: &[String]) -> Result<Vec<Vec<f32>>> {
        let lock = || self.attribute_names.lock().expect("the attribute-name map is never poisoned");
        let mut found: HashMap<String, Vec<f32>> = HashMap::new();
        {
            let kept = lock();
            for name in names {
                if let Some(vector) = kept.get(name) {
                    found.insert(name.clone(), vector.clone());
                }
            }
        }
        let mut missing: Vec<String> = names.iter().filter(|n| !found.contains_key(*n)).cloned().collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            let vectors = self.embed(missing.iter().map(|n| n.replace('_', " ")).collect()).await?;
            let mut kept = lock();
            if kept.len() + missing.len() > ATTRIBUTE_NAMES_KEPT {
                kept.clear();
            }
            for (name, vector) in missing.into_iter().zip(vectors) {
                kept.insert(name.clone(), vector.clone());
                found.insert(name, vector);
            }
        }
        Ok(names.iter().map(|n| found[n].clone()).collect())
    }

    /// The readable and writable scopes of a principal, from its stored grants.
    pub async fn access(&self, principal: &Principal) -> Result<ScopeAccess> {
        let grants = self.ports.grants.grants_for(&principal.agent_id).await?;
        Ok(resolve_scopes(principal, &grants))
    }

    /// The ports this ingestor writes through (the extraction runner reads turns with them).
    pub fn ports(&self) -> &Ports {
        &self.ports
    }

    pub(crate) fn event(
        &self,
        kind: EventKind,
        record: Option<&RecordId>,
        principal: &Principal,
    ) -> AuditEvent {
        self.event_by(kind, record, Some(&principal.agent_id))
    }

    /// An event caused by `actor` (`None` for the host's admin).
    pub(crate) fn event_by(
        &self,
        kind: EventKind,
        record: Option<&RecordId>,
        actor: Option<&AgentId>,
    ) -> AuditEvent {
        AuditEvent {
            id: EventId::from_body(&self.ports.ids.next_body()).expect("generated ids are valid"),
            at: self.ports.clock.now(),
            kind,
            record_id: record.cloned(),
            actor: actor.cloned(),
            details: BTreeMap::new(),
        }
    }

    fn new_record_id(&self) -> RecordId {
        RecordId::from_body(&self.ports.ids.next_body()).expect("generated ids are valid")
    }

    /// `memory_write`: one of created, reinforced, superseding, conflicting or rejected.
    pub async fn write(&self, principal: &Principal, request: &WriteRequest) -> Result<WriteOutcome> {
        Ok(self.write_timed(principal, request).await?.0)
    }

    /// `memory_write`, and where its time went (its last attempt's stages).
    pub async fn write_timed(
        &self,
        principal: &Principal,
        request: &WriteRequest,
    ) -> Result<(WriteOutcome, WriteStages)> {
        use tracing::Instrument;
        let span = tracing::info_span!("ingest.write", agent = %principal.agent_id, scope = %request.scope);
        let written =
            self.retrying(|| self.write_once(principal, request, None, None, None)).instrument(span).await?;
        Ok((self.answered(written.sentences, written.outcome), written.stages))
    }

    /// A written outcome, its sentence vectors left to follow the answer.
    fn answered(&self, sentences: Vec<SentenceJob>, outcome: WriteOutcome) -> WriteOutcome {
        self.attach_later(sentences);
        outcome
    }

    /// A write that a retried run may attempt again (an extraction candidate), applied at most
    /// once per `key`: the write's receipt commits with it, and an attempt that finds the
    /// receipt writes nothing, so a candidate never reinforces its own earlier copy.
    pub async fn write_keyed(
        &self,
        principal: &Principal,
        request: &WriteRequest,
        key: &WriteKey,
    ) -> Result<KeyedWrite> {
        use tracing::Instrument;
        let span = tracing::info_span!("ingest.write", agent = %principal.agent_id, scope = %request.scope);
        self.retrying(|| async {
            // A concurrent attempt that commits first makes this one's unit contended; the
            // retry then finds its receipt here.
            if let Some(receipt) = self.ports.receipts.receipt(key).await? {
                return Ok(KeyedWrite::Earlier(receipt));
            }
            let written = self.write_once(principal, request, None, Some(key), None).await?;
            Ok(KeyedWrite::Written(self.answered(written.sentences, written.outcome)))
        })
        .instrument(span)
        .await
    }

    pub(crate) async fn retrying<'a, T, F, Fut>(&'a self, attempt: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T>> + 'a,
    {
        retry_on_contention(MAX_ATTEMPTS, attempt).await
    }

    pub(crate) async fn reject(
        &self,
        principal: &Principal,
        code: RejectCode,
        reason: String,
    ) -> Result<WriteOutcome> {
        let mut event = self.event(EventKind::WriteRejected, None, principal);
        event.details.insert("code".into(), code.code().into());
        event.details.insert("reason".into(), reason.clone());
        self.ports.audit.append(vec![event]).await?;
        Ok(WriteOutcome::Rejected { code, reason })
    }

    async fn check_evidence(&self, request: &WriteRequest) -> Result<EvidenceResult> {
        let mut details = BTreeMap::new();
        let requested = request.source_kind;
        details.insert("requested_source_kind".into(), requested.as_str().into());
        if !requested.requires_evidence_check() {
            return Ok(EvidenceResult { source_kind: requested, details });
        }
        let verdict = self.evidence_verdict(request).await?;
        let source_kind = match verdict {
            EvidenceVerdict::Supported { entail_score } => {
                details.insert("evidence_check".into(), "passed".into());
                details.insert("entail_score".into(), format!("{entail_score:.4}"));
                requested
            }
            EvidenceVerdict::Downgraded { reason, entail_score } => {
                details.insert("evidence_check".into(), "downgraded".into());
                details.insert("downgrade_reason".into(), reason);
                if let Some(score) = entail_score {
                    details.insert("entail_score".into(), format!("{score:.4}"));
                }
                SourceKind::AgentInference
            }
        };
        details.insert("entail_floor".into(), format!("{:.4}", self.config.entail_floor));
        Ok(EvidenceResult { source_kind, details })
    }

    async fn evidence_verdict(&self, request: &WriteRequest) -> Result<EvidenceVerdict> {
        let floor = self.config.entail_floor;
        let missing =
            |reason: &str| EvidenceVerdict::Downgraded { reason: reason.into(), entail_score: None };
        let Some(evidence) = &request.evidence else {
            return Ok(missing("no evidence was given"));
        };
        let Some((session, turn)) = request.source_ref.as_ref().and_then(|r| r.session_turn()) else {
            return Ok(missing("source_ref does not cite a session turn (session:<id><turn:N>)"));
        };
        let Some(turn) = self.ports.turns.turn(&session, turn).await? else {
            return Ok(missing("the cited session turn does not exist"));
        };
        let verbatim = evidence_appears_verbatim(evidence.as_str(), &turn.content);
        let score = self.ports.judge.entails(evidence.as_str(), request.content.as_str()).await?.score;
        Ok(judge_evidence(verbatim, Some(score), floor))
    }

    pub(crate) async fn resolve_entities(
        &self,
        access: &ScopeAccess,
        request: &WriteRequest,
    ) -> Result<Resolution> {
        let mut resolved = Resolved::default();
        let refs = request
            .subject
            .iter()
            .map(|r| (r, LinkRole::About))
            .chain(request.mentions.iter().map(|r| (r, LinkRole::Mentions)));
        for (reference, role) in refs {
            let id = match reference {
                EntityRef::Id(id) => self.entity_by_id(access, id).await?,
                EntityRef::Name { name, kind } => {
                    // A name created earlier in this same request resolves to that entity.
                    if let Some(new) = resolved
                        .new_entities
                        .iter()
                        .find(|n| n.entity.canonical_name.folded() == name.folded())
                    {
                        new.entity.id.clone()
                    } else {
                        let found = self.ports.entities.find_by_name(&access.readable, name).await?;
                        match found.as_slice() {
                            [] => {
                                let entity = Entity::create(
                                    self.ports.ids.as_ref(),
                                    *kind,
                                    name.clone(),
                                    request.scope.clone(),
                                    EntityStatus::Provisional,
                                    self.ports.clock.now(),
                                );
                                let id = entity.id.clone();
                                let name_was_unknown = access.can_read(&entity.scope);
                                resolved.new_entities.push(NewEntity {
                                    entity,
                                    aliases: vec![],
                                    name_was_unknown,
                                });
                                id
                            }
                            [one] => one.id.clone(),
                            many => {
                                return Ok(Resolution::Ambiguous(RejectCode::EntityAmbiguous {
                                    name: name.to_string(),
                                    candidates: many.iter().map(|e| e.id.clone()).collect(),
                                }));
                            }
                        }
                    }
                }
            };
            if role == LinkRole::About && resolved.subject.is_none() {
                resolved.subject = Some(id.clone());
            }
            if !resolved.links.iter().any(|(existing, _)| *existing == id) {
                resolved.links.push((id, role));
            }
        }
        Ok(Resolution::Done(resolved))
    }

    /// An entity by id, following merges; unreadable entities are answered like missing ones.
    async fn entity_by_id(&self, access: &ScopeAccess, id: &EntityId) -> Result<EntityId> {
        let mut current = id.clone();
        for _ in 0..16 {
            let entity = self.ports.entities.entity(&current).await?;
            match entity {
                Some(e) if access.can_read(&e.scope) => match e.merged_into {
                    Some(next) => current = next,
                    None => return Ok(e.id),
                },
                _ => break,
            }
        }
        Err(DomainError::NotFound { what: "entity", id: id.to_string() })
    }

    /// One vector per text, in one embedder call; fewer or more is an embedder failure.
    pub(crate) async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        let vectors = self.ports.embedder.embed(&texts).await?;
        if vectors.len() != texts.len() {
            return Err(DomainError::backend(
                "embedder",
                format!("returned {} vectors for {} texts", vectors.len(), texts.len()),
            ));
        }
        Ok(vectors)
    }

    async fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(vec![text.to_owned()]).await?.remove(0))
    }

    /// The vector of a record's content alone: what the same-meaning and attribute checks
    /// compare (a fact restated word for word is the same fact whatever it was said after).
    /// The indexed vector when it is the content's; a record with a context is embedded again.
    pub(crate) async fn content_vector(&self, keyed: &KeyedRecord) -> Result<Vec<f32>> {
        if keyed.record.context.is_some() {
            return self.embed_one(keyed.record.content.as_str()).await;
        }
        match self.ports.index.vector(keyed.key) {
            Some(vector) => Ok(vector),
            None => self.embed_one(keyed.record.content.as_str()).await,
        }
    }

    /// Find the active records of the current fact, following attribute aliasing.
    /// Returns (records of the key, the attribute to use, aliasing details).
    async fn current_fact(
        &self,
        scopes: &[Scope],
        entity: &EntityId,
        attribute: &str,
        candidate_vector: &[f32],
        details: &mut BTreeMap<String, String>,
    ) -> Result<(Vec<KeyedRecord>, String)> {
        let exact = self.ports.facts.active_by_key(scopes, entity, attribute).await?;
        if !exact.is_empty() {
            return Ok((exact, attribute.to_owned()));
        }
        // Scan other attributes of the same entity for an equivalent label.
        let cap = self.config.max_entity_attributes;
        let nearby =
            self.ports.facts.active_by_subject(scopes, entity, cap.saturating_mul(4).max(cap)).await?;
        let mut attributes: Vec<String> = Vec::new();
        for keyed in &nearby {
            if let Some(key) = &keyed.record.key {
                let name = key.attribute.as_str().to_owned();
                if name != attribute && !attributes.contains(&name) {
                    attributes.push(name);
                }
            }
        }
        if attributes.len() > cap {
            attributes.truncate(cap);
            details.insert("attribute_scan_truncated".into(), "true".into());
        }
        if attributes.is_empty() {
            return Ok((Vec::new(), attribute.to_owned()));
        }
        let mut names = vec![attribute.to_owned()];
        names.extend(attributes.iter().cloned());
        let name_vectors = self.attribute_vectors(&names).await?;
        let mut best: Option<(f64, &String)> = None;
        for (other, vector) in attributes.iter().zip(&name_vectors[1..]) {
            let name_similarity = cosine(&name_vectors[0], vector);
            if name_similarity < self.config.attribute_name_floor {
                continue;
            }
            for keyed in nearby
                .iter()
                .filter(|k| k.record.key.as_ref().is_some_and(|key| key.attribute.as_str() == other))
            {
                let content_similarity = cosine(candidate_vector, &self.content_vector(keyed).await?);
                if content_similarity >= self.config.attribute_content_floor
                    && best.is_none_or(|(score, _)| name_similarity > score)
                {
                    best = Some((name_similarity, other));
                }
            }
        }
        let Some((_, survivor)) = best else {
            return Ok((Vec::new(), attribute.to_owned()));
        };
        details.insert("attribute_aliased_from".into(), attribute.to_owned());
        details.insert("attribute_aliased_to".into(), survivor.clone());
        let records = self.ports.facts.active_by_key(scopes, entity, survivor).await?;
        Ok((records, survivor.clone()))
    }

    /// One attempt of a write; `vector` is the record's, when it was embedded with others (an
    /// import batch). Its sentence vectors are the caller's to attach, after the answer.
    pub(crate) async fn write_once(
        &self,
        principal: &Principal,
        request: &WriteRequest,
        forced_target: Option<&RecordId>,
        key: Option<&WriteKey>,
        vector: Option<&[f32]>,
    ) -> Result<Written> {
        let mut stages = WriteStages::default();
        let now = self.ports.clock.now();
        let access = timed(&mut stages.access, self.access(principal)).await?;
        let rejected = |outcome| Written { outcome, stages: WriteStages::default(), sentences: Vec::new() };
        if !access.can_write(&request.scope) {
            let reason =
                format!("{} is not among the writable scopes of agent {}", request.scope, principal.agent_id);
            return self.reject(principal, RejectCode::ScopeNotWritable, reason).await.map(rejected);
        }
        precheck(request, now)?;
        let evidence = timed(&mut stages.evidence, self.check_evidence(request)).await?;
        let resolved = match timed(&mut stages.entities, self.resolve_entities(&access, request)).await? {
            Resolution::Done(resolved) => resolved,
            Resolution::Ambiguous(code) => {
                let reason = match &code {
                    RejectCode::EntityAmbiguous { name, candidates } => {
                        format!("{name:?} matches {} entities: {:?}", candidates.len(), candidates)
                    }
                    RejectCode::ScopeNotWritable => unreachable!("resolution only reports ambiguity"),
                };
                return self.reject(principal, code, reason).await.map(rejected);
            }
        };
        // The record's own vector now; its sentence vectors after the commit (`attach_later`).
        let mut texts = request.embedded_texts(self.config.sentence_vectors);
        let sentence_texts = texts.split_off(1);
        stages.sentences_after = sentence_texts.len();
        let vector = match vector {
            Some(vector) => vector.to_vec(),
            None => {
                stages.embedded = texts.len();
                timed(&mut stages.embed, self.embed(texts)).await?.remove(0)
            }
        };

        // Before anything commits: the index update after the commit then has nothing to refuse.
        self.ports.index.check(&vector)?;

        let source_kind = evidence.source_kind;
        let mut details = evidence.details;
        details.insert("source_kind".into(), source_kind.as_str().into());
        let mut record = self.draft(principal, request, source_kind, now);

        let mut unit = WriteUnit { entities: resolved.new_entities, ..WriteUnit::default() };
        let mut outcome: Option<WriteOutcome> = None;

        let keyed = match (&resolved.subject, &request.attribute) {
            (Some(subject), Some(attribute)) if request.memory_type.has_current_fact_key() => {
                Some((subject, attribute))
            }
            _ => None,
        };
        if let Some((subject, attribute)) = keyed {
            // The current-fact decisions compare content with content (`content_vector`).
            let content_vector = match request.context {
                Some(_) => self.embed_one(request.content.as_str()).await?,
                None => vector.clone(),
            };
            let fact = CurrentFactWrite {
                principal,
                access: &access,
                request,
                subject,
                attribute,
                vector: &content_vector,
                forced_target,
                key,
                now,
            };
            let started = std::time::Instant::now();
            let step = self.decide_current_fact(fact, &mut record, &mut unit, &mut details).await?;
            stages.current_fact = started.elapsed();
            match step {
                FactStep::Done(reinforced) => {
                    return Ok(Written { outcome: reinforced, stages, sentences: Vec::new() });
                }
                FactStep::Continue(decided) => outcome = decided,
            }
        }

        let outcome = outcome
            .unwrap_or_else(|| WriteOutcome::Created { id: record.id.clone(), reason: "new record".into() });
        let mut event = self.event(outcome.event_kind(), Some(&record.id), principal);
        event.details = details;
        for (entity, role) in &resolved.links {
            unit.links.push(RecordEntityLink {
                record_id: record.id.clone(),
                entity_id: entity.clone(),
                role: *role,
            });
        }
        let info = self.ports.embedder.info();
        unit.embeddings.push(EmbeddingRow {
            record_id: record.id.clone(),
            model: info.name.clone(),
            version: info.version,
            dims: info.dims,
            vector: vector.clone(),
            sentences: Vec::new(),
            sentences_pending: !sentence_texts.is_empty(),
        });
        unit.receipt = key.map(|key| receipt(key, outcome.event_kind(), &record.id, now));
        unit.inserts.push(record);
        unit.events.push(event);
        let keys = timed(&mut stages.commit, self.ports.writer.apply(unit)).await?;
        // Committed: nothing below may turn the answer into an error.
        let indexed = std::time::Instant::now();
        let mut sentences = Vec::new();
        for EligibleRecord { key, id } in keys {
            self.index_committed(key, &id, &vector, &[]);
            sentences.push(SentenceJob::new(key, id, sentence_texts.clone()));
        }
        stages.index = indexed.elapsed();
        Ok(Written { outcome, stages, sentences })
    }

    /// The vector index update after a commit, with the key the store gave. `check` took the
    /// vector before the commit, so an index that refuses it now breaks its contract (for
    /// `ExactIndex`, only a key beyond 2^32 − 2 can): the write stays acknowledged, since
    /// SQLite holds it, and the failure is logged; the next start rebuilds the index from
    /// SQLite, until then the dense channel misses the record.
    pub(crate) fn index_committed(
        &self,
        key: retold_domain::RecordKey,
        id: &RecordId,
        vector: &[f32],
        sentences: &[f32],
    ) {
        if let Err(error) = self.ports.index.upsert_with(key, id, vector, sentences) {
            tracing::error!(
                record = %id,
                %error,
                "the vector index refused a committed record; dense search misses it until the next start"
            );
        }
    }

    /// The new record before the current-fact decision: the seed's initial confidence and
    /// status for its (checked) source kind, the provisional TTL, the request's expiry and
    /// confidence cap.
    pub(crate) fn draft(
        &self,
        principal: &Principal,
        request: &WriteRequest,
        source_kind: SourceKind,
        now: retold_domain::Timestamp,
    ) -> MemoryRecord {
        let mut record = MemoryRecord {
            id: self.new_record_id(),
            memory_type: request.memory_type,
            version: 1,
            content: request.content.clone(),
            key: None,
            scope: request.scope.clone(),
            source_kind,
            source_ref: request.source_ref.clone(),
            creator_agent_id: principal.agent_id.clone(),
            evidence: request.evidence.clone(),
            created_at: now,
            event_at: Some(request.event_at.unwrap_or(now)),
            expires_at: None,
            confidence: source_kind.initial_confidence(),
            status: source_kind.initial_status(),
            supersedes_id: None,
            reinforcements: 0,
            last_reinforced_at: None,
            tags: request.tags.clone(),
            context: request.context.clone(),
            origin: retold_domain::Origin::Memory,
            speaker: None,
        };
        if record.status == Status::Provisional {
            record.expires_at = Some(now + self.config.provisional_ttl);
        }
        if let Some(until) = request.expires_at {
            record.expires_at = Some(record.expires_at.map_or(until, |ttl| ttl.min(until)));
        }
        if let Some(cap) = request.confidence
            && cap.get() < record.confidence.get()
        {
            record.confidence = cap;
        }
        record
    }

    /// Semantic and procedural records with a key: the active records of the key (after
    /// attribute aliasing) decide reinforce, supersede or conflict (seed section 7). A forced
    /// target (an explicit supersede) always supersedes it.
    async fn decide_current_fact(
        &self,
        fact: CurrentFactWrite<'_>,
        record: &mut MemoryRecord,
        unit: &mut WriteUnit,
        details: &mut BTreeMap<String, String>,
    ) -> Result<FactStep> {
        let CurrentFactWrite {
            principal,
            access,
            request,
            subject,
            attribute,
            vector,
            forced_target,
            key,
            now,
        } = fact;
        let source_kind = record.source_kind;
        let mut decided: Option<WriteOutcome> = None;
        // Only readable scopes are ever consulted: a write-only grant gets no duplicate check.
        let lookup: Vec<Scope> = access.readable_of([&request.scope]);
        let (existing, attribute_name) =
            self.current_fact(&lookup, subject, attribute.as_str(), vector, details).await?;
        let final_attribute = retold_domain::Attribute::new(attribute_name.clone())?;
        record.key = Some(FactKey::new(subject.clone(), final_attribute));
        let mut expected: Vec<RecordId> = existing.iter().map(|k| k.record.id.clone()).collect();
        expected.sort();
        if !lookup.is_empty() {
            unit.guards.push(KeyGuard {
                scope: request.scope.clone(),
                subject_entity_id: subject.clone(),
                attribute: attribute_name,
                expected,
            });
        }
        let live: Vec<&KeyedRecord> = existing.iter().filter(|k| !k.record.is_expired_at(now)).collect();
        let current = match forced_target {
            Some(target) => live.iter().find(|k| &k.record.id == target).copied(),
            None => live
                .iter()
                .filter(|k| k.record.status == Status::Confirmed)
                .chain(live.iter().filter(|k| k.record.status == Status::Provisional))
                .next()
                .copied(),
        };
        if let Some(current) = current {
            let similarity = cosine(vector, &self.content_vector(current).await?);
            details.insert("similarity_to_current".into(), format!("{similarity:.4}"));
            let same_meaning = forced_target.is_none()
                && similarity >= self.config.same_meaning_floor
                && same_values(request.content.as_str(), current.record.content.as_str());
            let decision = if forced_target.is_some() {
                FactDecision::Supersede
            } else {
                decide(&current.record, source_kind, same_meaning)
            };
            match decision {
                FactDecision::Reinforce => {
                    let rules = Reinforcement {
                        confidence_step: self.config.reinforcement_step,
                        to_confirm: self.config.reinforcements_to_confirm,
                        provisional_ttl: self.config.provisional_ttl,
                    };
                    let next = reinforce(&current.record, now, &rules);
                    let mut event =
                        self.event(EventKind::RecordReinforced, Some(&current.record.id), principal);
                    event.details = std::mem::take(details);
                    event.details.insert("reinforcements".into(), next.reinforcements.to_string());
                    event.details.insert("status".into(), next.status.as_str().into());
                    unit.updates
                        .push(RecordUpdate { expected_version: current.record.version, record: next });
                    unit.events.push(event);
                    unit.receipt =
                        key.map(|key| receipt(key, EventKind::RecordReinforced, &current.record.id, now));
                    // Reinforcement writes no new row, so no new entity either.
                    unit.entities.clear();
                    self.ports.writer.apply(std::mem::take(unit)).await?;
                    return Ok(FactStep::Done(WriteOutcome::Reinforced {
                        id: current.record.id.clone(),
                        reason: format!("same meaning as the current record (similarity {similarity:.3})"),
                    }));
                }
                FactDecision::Supersede => {
                    let mut superseded = Vec::new();
                    for old in
                        live.iter().filter(|k| forced_target.is_none() || Some(&k.record.id) == forced_target)
                    {
                        transition(old.record.status, Status::Superseded)?;
                        let mut next = old.record.clone();
                        next.status = Status::Superseded;
                        next.version += 1;
                        let mut event =
                            self.event(EventKind::RecordSuperseded, Some(&old.record.id), principal);
                        event.details.insert("superseded_by".into(), record.id.to_string());
                        unit.updates
                            .push(RecordUpdate { expected_version: old.record.version, record: next });
                        unit.events.push(event);
                        superseded.push(old.record.id.clone());
                    }
                    record.supersedes_id = Some(current.record.id.clone());
                    details.insert("supersedes".into(), current.record.id.to_string());
                    let reason = if forced_target.is_some() {
                        "explicit revise".to_owned()
                    } else {
                        format!(
                            "{} (rank {}) replaces {} (rank {})",
                            source_kind,
                            source_kind.rank(),
                            current.record.source_kind,
                            current.record.source_kind.rank()
                        )
                    };
                    decided = Some(WriteOutcome::Superseding { id: record.id.clone(), superseded, reason });
                }
                FactDecision::Conflict => {
                    record.status = Status::Provisional;
                    record.expires_at = Some(now + self.config.provisional_ttl);
                    unit.conflicts.push(ConflictLink {
                        record_id: current.record.id.clone(),
                        conflicting_id: record.id.clone(),
                    });
                    details.insert("conflicts_with".into(), current.record.id.to_string());
                    decided = Some(WriteOutcome::Conflicting {
                        id: record.id.clone(),
                        conflicts_with: current.record.id.clone(),
                        reason: format!(
                            "{} (rank {}) contradicts {} (rank {}); the higher-ranked record stays current",
                            source_kind,
                            source_kind.rank(),
                            current.record.source_kind,
                            current.record.source_kind.rank()
                        ),
                    });
                }
            }
        } else if let Some(target) = forced_target {
            return Err(DomainError::NotFound { what: "record", id: target.to_string() });
        }
        Ok(FactStep::Continue(decided))
    }

    /// Load a record the principal may read, or answer exactly like a missing one.
    pub(crate) async fn readable_record(&self, access: &ScopeAccess, id: &RecordId) -> Result<MemoryRecord> {
        match self.ports.records.get(id).await? {
            Some(record) if access.can_read(&record.scope) => Ok(record),
            _ => Err(DomainError::NotFound { what: "record", id: id.to_string() }),
        }
    }

    async fn change_status(
        &self,
        principal: &Principal,
        id: &RecordId,
        to: Status,
        kind: EventKind,
        reason: Option<&str>,
    ) -> Result<RevisionOutcome> {
        let access = self.access(principal).await?;
        let record = self.readable_record(&access, id).await?;
        if !access.can_write(&record.scope) {
            let reason =
                format!("{} is not among the writable scopes of agent {}", record.scope, principal.agent_id);
            return self
                .reject(principal, RejectCode::ScopeNotWritable, reason)
                .await
                .map(RevisionOutcome::from);
        }
        transition(record.status, to)?;
        // Every read before the commit: after it, only the infallible `mark_dead` is left.
        let dead_key = if to.keeps_indexes() { None } else { self.ports.records.key_of(id).await? };
        let mut next = record.clone();
        next.status = to;
        next.version += 1;
        if to == Status::Confirmed {
            next.expires_at = None;
        }
        let mut event = self.event(kind, Some(id), principal);
        event.details.insert("from".into(), record.status.as_str().into());
        event.details.insert("to".into(), to.as_str().into());
        if let Some(reason) = reason {
            event.details.insert("reason".into(), reason.into());
        }
        self.ports
            .writer
            .apply(WriteUnit {
                updates: vec![RecordUpdate { expected_version: record.version, record: next }],
                events: vec![event],
                ..WriteUnit::default()
            })
            .await?;
        if let Some(key) = dead_key {
            self.ports.index.mark_dead(key);
        }
        Ok(RevisionOutcome::StatusChanged { id: id.clone(), from: record.status, to })
    }

    /// `memory_forget`: status deleted with a reason; the FTS row is removed, the vector
    /// marked dead, the row kept as a tombstone.
    pub async fn forget(
        &self,
        principal: &Principal,
        id: &RecordId,
        reason: &str,
    ) -> Result<RevisionOutcome> {
        self.change_status(principal, id, Status::Deleted, EventKind::RecordForgotten, Some(reason)).await
    }

    /// `memory_revise`.
    pub async fn revise(&self, principal: &Principal, action: &ReviseAction) -> Result<RevisionOutcome> {
        match action {
            ReviseAction::Confirm { id } => {
                self.change_status(principal, id, Status::Confirmed, EventKind::RecordConfirmed, None).await
            }
            ReviseAction::Expire { id } => {
                self.change_status(principal, id, Status::Expired, EventKind::RecordExpired, None).await
            }
            ReviseAction::Supersede { id, replacement } => {
                let access = self.access(principal).await?;
                let target = self.readable_record(&access, id).await?;
                if replacement.scope != target.scope || target.key.is_none() {
                    return Err(DomainError::Invalid {
                        field: "replacement",
                        reason: "a replacement must have the same scope and a current-fact key (subject and attribute)"
                            .into(),
                    });
                }
                let written =
                    self.retrying(|| self.write_once(principal, replacement, Some(id), None, None)).await?;
                Ok(RevisionOutcome::from(self.answered(written.sentences, written.outcome)))
            }
            ReviseAction::MergeEntities { from, into } => {
                self.merge_entities(crate::merge::MergeAuthority::Principal(principal), from, into).await
            }
        }
    }
}

/// One attempt's write: its outcome, where its time went, and the sentence vectors that are
/// to follow the answer.
pub(crate) struct Written {
    pub(crate) outcome: WriteOutcome,
    pub(crate) stages: WriteStages,
    pub(crate) sentences: Vec<SentenceJob>,
}

/// What the current-fact step of a write works with.
struct CurrentFactWrite<'a> {
    principal: &'a Principal,
    access: &'a ScopeAccess,
    request: &'a WriteRequest,
    subject: &'a EntityId,
    attribute: &'a retold_domain::Attribute,
    /// The vector of the content alone.
    vector: &'a [f32],
    forced_target: Option<&'a RecordId>,
    /// The key of a keyed write, whose receipt commits with it.
    key: Option<&'a WriteKey>,
    now: retold_domain::Timestamp,
}

/// The receipt a keyed write stores with its unit.
fn receipt(
    key: &WriteKey,
    outcome: EventKind,
    record: &RecordId,
    at: retold_domain::Timestamp,
) -> WriteReceipt {
    WriteReceipt { key: key.clone(), outcome, record_id: record.clone(), at }
}

/// After the current-fact step: the write is finished (a reinforcement writes no new row), or
/// it goes on with the decided outcome (`None`: a new record).
enum FactStep {
    Done(WriteOutcome),
    Continue(Option<WriteOutcome>),
}

/// The request checks no store read is needed for.
fn precheck(request: &WriteRequest, now: retold_domain::Timestamp) -> Result<()> {
    if request.attribute.is_some() && request.subject.is_none() {
        return Err(DomainError::Invalid {
            field: "attribute",
            reason: "an attribute needs a subject entity".into(),
        });
    }
    if request.expires_at.is_some_and(|until| until <= now) {
        return Err(DomainError::Invalid { field: "expires_at", reason: "must be in the future".into() });
    }
    if request.tags.len() > retold_domain::MAX_TAGS {
        return Err(DomainError::Invalid {
            field: "tags",
            reason: format!("at most {} tags", retold_domain::MAX_TAGS),
        });
    }
    Ok(())
}

/// Run `attempt` until it succeeds or fails with anything but contention, at most `max` times.
/// Only `DomainError::Contention` (a concurrent writer moved what the attempt decided
/// against) is worth another read and decision; a conflict, an invalid value or a backend
/// failure would fail again the same way.
pub async fn retry_on_contention<T, F, Fut>(max: usize, attempt: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        match attempt().await {
            Err(DomainError::Contention(reason)) if tries < max => {
                tracing::debug!(tries, %reason, "write contended; deciding again");
            }
            other => return other,
        }
    }
}
