//! Port traits: what the pure crates need from the outside world.
//!
//! Each is small and object-safe, injected as `Arc<dyn Port>`. Infrastructure crates
//! implement them; `ingest` and `retrieve` are written against them only.

use async_trait::async_trait;

use crate::audit::{AuditEvent, EventKind};
use crate::entity::{Entity, LinkRole, Name, RecordEntityLink};
use crate::error::{DomainError, Result};
use crate::ids::{AgentId, EntityId, GrantId, RecordId, SearchId, SessionId, UserId};
use crate::principal::{ApiKeyInfo, Grant};
use crate::record::{MemoryRecord, MemoryType, Origin, Status, Timestamp};
use crate::scope::Scope;
use crate::session::{ClaimTerms, ExtractionClaim, Session, SessionTurn};
use crate::trace::SearchTrace;

/// The current time. Injected so tests control it.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> Timestamp;
}

/// Unique, time-ordered identifier bodies (ULID-like, `[0-9A-Z]`).
pub trait IdGenerator: Send + Sync {
    /// A fresh body; callers wrap it with `RecordId::from_body` and friends.
    fn next_body(&self) -> String;
}

/// The store's dense numeric handle of a record (SQLite's rowid), stable for the
/// record's life. The vector index and the lexical channel use it to build eligibility
/// masks with array lookups instead of string hashing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKey(pub u64);

/// One eligible record: its key and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EligibleRecord {
    pub key: RecordKey,
    pub id: RecordId,
}

/// A record reached through an entity link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedRecord {
    pub key: RecordKey,
    pub record_id: RecordId,
    pub entity_id: EntityId,
    pub role: LinkRole,
}

/// A record with its store key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedRecord {
    pub key: RecordKey,
    pub record: MemoryRecord,
}

/// A stored embedding vector and the model that produced it (the write side).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingRow {
    pub record_id: RecordId,
    pub model: String,
    pub version: u32,
    pub dims: u32,
    pub vector: Vec<f32>,
    /// The record's sentence vectors ([`crate::IndexedText::sentence_texts`]), `dims`
    /// numbers each, one after the other; empty when it has none, or none yet.
    pub sentences: Vec<f32>,
    /// The record has sentence texts whose vectors are attached after the write commits
    /// ([`SentenceVectors`]); until then `sentences` is empty.
    pub sentences_pending: bool,
}

/// Every compatible stored vector, packed for the index to take over without copying:
/// row `i` is `keys[i]`, `ids[i]` and `vectors[i * dims..(i + 1) * dims]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbeddingScan {
    pub dims: u32,
    pub keys: Vec<RecordKey>,
    pub ids: Vec<RecordId>,
    pub vectors: Vec<f32>,
    /// Row `i`'s sentence vectors: `sentence_counts[i]` of them, `dims` numbers each, after
    /// those of the rows before it in `sentences`. Empty when no row has any.
    pub sentence_counts: Vec<u32>,
    pub sentences: Vec<f32>,
    /// Stored vectors of another model, version or dimension count: counted, never mixed in.
    pub incompatible: u64,
}

/// A conflict link between two records of the same current fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictLink {
    /// The record that stays the normal result.
    pub record_id: RecordId,
    /// The lower-trust record that contradicts it.
    pub conflicting_id: RecordId,
}

/// A change to an existing record, applied only if the stored row still has `expected_version`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordUpdate {
    /// The full record as it should be stored; its `version` must be `expected_version + 1`.
    pub record: MemoryRecord,
    pub expected_version: u32,
}

/// An entity created as part of a write (an unknown name becomes a provisional entity).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntity {
    pub entity: Entity,
    pub aliases: Vec<Name>,
    /// The writer looked the name up in the entity's scope and found nothing. The store then
    /// refuses the entity with `DomainError::Conflict` if that scope holds the name by now,
    /// so concurrent writers never create the same entity twice. `false` when the writer
    /// cannot read the scope (a write-only grant) and so could not look.
    pub name_was_unknown: bool,
}

/// A precondition on a current fact: inside the transaction, the active records of this key
/// in this scope must be exactly `expected`, or the whole unit fails with
/// `DomainError::Conflict` (the writer then re-reads and decides again). This is what keeps
/// concurrent writers of one key from both creating a current record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGuard {
    pub scope: Scope,
    pub subject_entity_id: EntityId,
    pub attribute: String,
    /// Sorted ids of the provisional and confirmed records the writer decided against.
    pub expected: Vec<RecordId>,
}

/// A deterministic key of a write that a retried run may attempt again (an extraction
/// candidate: its session and a hash of what it writes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WriteKey {
    pub session: SessionId,
    /// Hex digest of the write, stable across processes and releases.
    pub digest: String,
}

/// What a keyed write did, stored with it in the same transaction, so a later attempt finds
/// it and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReceipt {
    pub key: WriteKey,
    /// The audit event the write recorded on its record (created, reinforced, superseding,
    /// conflicting).
    pub outcome: EventKind,
    /// The record it created or reinforced.
    pub record_id: RecordId,
    pub at: Timestamp,
}

/// Everything one write changes, applied in one transaction or not at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteUnit {
    /// Preconditions checked first.
    pub guards: Vec<KeyGuard>,
    /// Entities created first, so the records below may link to them.
    pub entities: Vec<NewEntity>,
    /// New records, each with its FTS row written alongside.
    pub inserts: Vec<MemoryRecord>,
    /// Changes to existing records (status, confidence, expiry, reinforcement, tags; content
    /// and key never change). A stale `expected_version` fails the whole unit with
    /// `DomainError::Conflict`. An update to `deleted` removes the record's FTS row.
    pub updates: Vec<RecordUpdate>,
    /// Entity links of the inserted records.
    pub links: Vec<RecordEntityLink>,
    /// Embeddings of the inserted records.
    pub embeddings: Vec<EmbeddingRow>,
    /// Conflict links between records.
    pub conflicts: Vec<ConflictLink>,
    /// Audit events describing the change.
    pub events: Vec<AuditEvent>,
    /// The receipt of a keyed write. A receipt already stored for the same key fails the
    /// whole unit with `DomainError::Contention` (a concurrent attempt wrote it; reading again
    /// finds its receipt).
    pub receipt: Option<WriteReceipt>,
    /// A session turn appended with the records kept from it (turn memory), first: a turn
    /// number taken meanwhile fails the whole unit with `DomainError::Contention`, an ended
    /// or missing session as [`TurnBuffer::append_turn`] refuses it.
    pub turn: Option<SessionTurn>,
}

/// Which records a search may see (seed section 5, step 3).
#[derive(Debug, Clone, PartialEq)]
pub struct EligibilityFilter {
    /// Readable scopes of the principal; empty means nothing is eligible.
    pub scopes: Vec<Scope>,
    /// Lifecycle states: provisional + confirmed by default; history adds superseded.
    pub statuses: Vec<Status>,
    /// Records whose `expires_at` is at or before `now` are excluded.
    pub now: Timestamp,
    /// Only these types; `None` means all.
    pub types: Option<Vec<MemoryType>>,
    /// Inclusive lower bound on `event_at`; records without `event_at` are then excluded.
    pub event_from: Option<Timestamp>,
    /// Exclusive upper bound on `event_at`; records without `event_at` are then excluded.
    pub event_to: Option<Timestamp>,
    /// Also the lower-trust side of an unresolved conflict: a provisional record that a
    /// conflict link names as `conflicting_id`. Seed section 7: the confirmed record stays the
    /// normal result, the conflicting candidate is for inspection; off by default.
    pub include_conflicts: bool,
    /// Only records of these origins; `None` means both.
    pub origins: Option<Vec<Origin>>,
    /// Turn records of this session are left out: a search made inside a session does not
    /// get back the conversation its caller is having.
    pub excluded_session: Option<SessionId>,
}

impl EligibilityFilter {
    /// The default statuses: provisional and confirmed, plus superseded with history.
    pub fn statuses_for(include_history: bool) -> Vec<Status> {
        let mut statuses = vec![Status::Provisional, Status::Confirmed];
        if include_history {
            statuses.push(Status::Superseded);
        }
        statuses
    }
}

// The store's ports, each sized by the consumers that use it. One store implements them
// all; the composition root hands each consumer only the ones it asks for.

/// A task that runs apart from the request that started it.
pub type BackgroundTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// Work that finishes after an answer (a write's sentence vectors), counted so that a caller
/// can wait until it is done and shutdown finishes it.
pub trait Background: Send + Sync {
    /// Run `task` to completion, apart from the caller.
    fn spawn(&self, task: BackgroundTask);
    /// Completes once every task spawned before it was called has finished.
    fn settled(&self) -> BackgroundTask;
}

/// Sentence vectors attached after a write commits: a write answers once its record, its
/// lexical row and its own vector are stored, and its sentence vectors follow.
#[async_trait]
pub trait SentenceVectors: Send + Sync {
    /// Store the sentence vectors of a record whose embedding row of `model` still waits for
    /// them, in one transaction; `false` (nothing changed) when it does not: the record was
    /// erased or embedded again by another model, or they are there already.
    async fn attach_sentences(
        &self,
        id: &RecordId,
        model: &EmbeddingModelInfo,
        sentences: &[f32],
    ) -> Result<bool>;
    /// Up to `limit` live records, in key order, whose embedding row of `model` waits for its
    /// sentence vectors (a process stopped before it attached them).
    async fn pending_sentences(&self, model: &EmbeddingModelInfo, limit: usize) -> Result<Vec<ReembedItem>>;
}

/// Applies write units: the only way records, links, FTS rows, embeddings and conflicts change.
#[async_trait]
pub trait RecordWriter: Send + Sync {
    /// Apply a write unit atomically; returns the keys given to the inserted records, in order.
    /// A stale version, a moved key guard or an entity name created meanwhile fail the whole
    /// unit with `DomainError::Contention`.
    async fn apply(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>>;
}

/// Receipts of keyed writes (extraction candidates), read before a keyed write.
#[async_trait]
pub trait WriteReceipts: Send + Sync {
    /// The receipt of the write with this key, if one committed.
    async fn receipt(&self, key: &WriteKey) -> Result<Option<WriteReceipt>>;
}

/// Records by id, in any status.
#[async_trait]
pub trait RecordReader: Send + Sync {
    /// One record by id.
    async fn get(&self, id: &RecordId) -> Result<Option<MemoryRecord>>;
    /// The records of these ids that exist, in any order (one round trip).
    async fn get_many(&self, ids: &[RecordId]) -> Result<Vec<MemoryRecord>>;
    /// The key of a record.
    async fn key_of(&self, id: &RecordId) -> Result<Option<RecordKey>>;
}

/// The eligibility filter (seed section 5, step 3).
#[async_trait]
pub trait EligibilityIndex: Send + Sync {
    /// Records that match the filter, ordered by key.
    async fn eligible(&self, filter: &EligibilityFilter) -> Result<Vec<EligibleRecord>>;

    /// The keys of `eligible(filter)`, in the same order: what search needs (it names records
    /// by key until the fused few are read), so an implementation may skip the ids.
    async fn eligible_keys(&self, filter: &EligibilityFilter) -> Result<Vec<RecordKey>> {
        Ok(self.eligible(filter).await?.into_iter().map(|e| e.key).collect())
    }
}

/// Current-fact reads of the write path (seed section 7).
#[async_trait]
pub trait CurrentFacts: Send + Sync {
    /// Records in the given scopes with this current-fact key and an active status (by
    /// status; the caller decides about expiry dates), ordered by key.
    async fn active_by_key(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        attribute: &str,
    ) -> Result<Vec<KeyedRecord>>;
    /// Active records in the given scopes whose subject is `subject_entity_id`, any attribute,
    /// newest first, at most `limit`.
    async fn active_by_subject(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        limit: usize,
    ) -> Result<Vec<KeyedRecord>>;
    /// Every record (any status) whose subject is `subject_entity_id`, ordered by key: only
    /// in `scopes`, or in every scope when `None` (the admin).
    async fn by_subject(
        &self,
        scopes: Option<&[Scope]>,
        subject_entity_id: &EntityId,
    ) -> Result<Vec<KeyedRecord>>;
}

/// Entity links, supersession and conflict links between records, read in batches.
#[async_trait]
pub trait RecordGraph: Send + Sync {
    /// Entity links of these records.
    async fn links_of(&self, ids: &[RecordId]) -> Result<Vec<RecordEntityLink>>;
    /// Records linked to any of `entities`, with the link role (any status; callers
    /// intersect with their eligible set).
    async fn linked_records(&self, entities: &[EntityId]) -> Result<Vec<LinkedRecord>>;
    /// `(newer, older)` for every record whose `supersedes_id` is one of `ids`.
    async fn successors(&self, ids: &[RecordId]) -> Result<Vec<(RecordId, RecordId)>>;
    /// Conflict links that involve any of these records.
    async fn conflicts_of(&self, ids: &[RecordId]) -> Result<Vec<ConflictLink>>;
}

/// The append-only audit log (seed section 13).
#[async_trait]
pub trait AuditLog: Send + Sync {
    /// Append events that change nothing else (a rejected write, an admin action).
    async fn append(&self, events: Vec<AuditEvent>) -> Result<()>;
    /// Events about a record, oldest first.
    async fn record_events(&self, id: &RecordId) -> Result<Vec<AuditEvent>>;
    /// Events about a session (start, end, extraction runs), oldest first.
    async fn session_events(&self, id: &SessionId) -> Result<Vec<AuditEvent>>;
}

/// What the eligibility filter reads of one record (seed section 5, step 3), for a derived
/// in-memory copy of the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct EligibilityRow {
    pub key: RecordKey,
    pub id: RecordId,
    pub scope: Scope,
    pub status: Status,
    pub memory_type: MemoryType,
    pub expires_at: Option<Timestamp>,
    pub event_at: Option<Timestamp>,
    /// The record's version: a change is only applied over an older one.
    pub version: u32,
    /// A conflict link names it as the lower-trust side (links are never removed).
    pub conflict_loser: bool,
    pub origin: Origin,
    /// The session a turn record was said in (its `source_ref`); `None` for other records.
    pub session: Option<SessionId>,
}

impl EligibilityRow {
    /// The row of a record stored under `key`.
    pub fn of(key: RecordKey, record: &MemoryRecord) -> Self {
        Self {
            key,
            id: record.id.clone(),
            scope: record.scope.clone(),
            status: record.status,
            memory_type: record.memory_type,
            expires_at: record.expires_at,
            event_at: record.event_at,
            version: record.version,
            conflict_loser: false,
            origin: record.origin,
            session: turn_session(record.origin, record.source_ref.as_ref()),
        }
    }
}

/// The session a turn record was said in: its `source_ref`'s, for a turn record only.
pub fn turn_session(origin: Origin, source_ref: Option<&crate::source::SourceRef>) -> Option<SessionId> {
    match origin {
        Origin::Turn => source_ref.and_then(|r| r.session_turn()).map(|(session, _)| session),
        Origin::Memory => None,
    }
}

/// The boot scan that rebuilds a derived eligibility filter.
#[async_trait]
pub trait EligibilitySource: Send + Sync {
    /// Every record's eligibility fields, ordered by key.
    async fn eligibility_rows(&self) -> Result<Vec<EligibilityRow>>;
}

/// The boot scan that rebuilds the vector index (seed section 9).
#[async_trait]
pub trait EmbeddingSource: Send + Sync {
    /// Every stored vector that matches `model`, `version` and `dims`, ordered by key, plus
    /// the number that did not. Deleted and erased records are skipped.
    async fn compatible_embeddings(&self, model: &str, version: u32, dims: u32) -> Result<EmbeddingScan>;
}

/// Entities and aliases as the write path and the entity channel read them.
#[async_trait]
pub trait EntityReader: Send + Sync {
    /// One entity by id.
    async fn entity(&self, id: &EntityId) -> Result<Option<Entity>>;
    /// Aliases of an entity.
    async fn aliases(&self, id: &EntityId) -> Result<Vec<Name>>;
    /// Entities in `scopes` whose canonical name or an alias folds to the same text as `name`.
    async fn find_by_name(&self, scopes: &[Scope], name: &Name) -> Result<Vec<Entity>>;
    /// For each of `names` that resolves in `scopes`: the folded name and the entity.
    async fn find_by_names(&self, scopes: &[Scope], names: &[Name]) -> Result<Vec<(String, Entity)>>;
}

/// Entity changes outside a record write; alias changes rewrite the affected FTS rows in the
/// same transaction.
#[async_trait]
pub trait EntityWriter: Send + Sync {
    /// Create an entity with its aliases.
    async fn create_entity(&self, entity: Entity, aliases: Vec<Name>, event: AuditEvent) -> Result<()>;
    /// Add an alias; every FTS row of a linked record is rewritten.
    async fn add_alias(&self, id: &EntityId, alias: Name, event: AuditEvent) -> Result<()>;
    /// Remove an alias; every FTS row of a linked record is rewritten.
    async fn remove_alias(&self, id: &EntityId, alias: &Name, event: AuditEvent) -> Result<()>;
    /// Merge `from` into `into` in one transaction, all or nothing: `from`'s name and aliases
    /// become aliases of `into`, `from` is marked merged, the links of `relink` move to
    /// `into`, the versioned record changes are applied (a stale version fails the whole
    /// merge with `DomainError::Contention`) and the FTS rows of every changed record are
    /// rewritten. Records outside the merge keep their links and subject; lookups of `into`
    /// still reach them through `merged_into`.
    async fn merge(&self, merge: EntityMerge) -> Result<()>;
}

/// One entity merge with the record changes the write path decided for it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMerge {
    pub from: EntityId,
    pub into: EntityId,
    /// The scopes whose records the merge may touch: their links to `from` move to `into`.
    /// `None` is every scope (the admin).
    pub scopes: Option<Vec<Scope>>,
    /// Versioned record changes (new subject keys, supersessions, reinforcements), applied
    /// like `WriteUnit::updates`; a changed key also rewrites the FTS subject.
    pub updates: Vec<RecordUpdate>,
    /// Conflict links created by the merge.
    pub conflicts: Vec<ConflictLink>,
    pub events: Vec<AuditEvent>,
}

/// The session buffer: sessions and their numbered turns (seed section 13).
#[async_trait]
pub trait TurnBuffer: Send + Sync {
    /// Record a new session.
    async fn start_session(&self, session: Session, event: AuditEvent) -> Result<()>;
    /// Append a turn under the number it carries, which must be the next (1, 2, …): a number
    /// taken meanwhile is `DomainError::Contention` (read the last turn again). Refused
    /// (`Conflict`) once the session has ended, `NotFound` without the session.
    async fn append_turn(&self, turn: SessionTurn) -> Result<()>;
    /// The session's last turn, if it has any.
    async fn last_turn(&self, id: &SessionId) -> Result<Option<SessionTurn>>;
    /// End a session; refused when it has already ended. `extraction_requested` marks it for
    /// the extraction sweep (extraction was on when it ended).
    async fn end_session(
        &self,
        id: &SessionId,
        at: Timestamp,
        extraction_requested: bool,
        event: AuditEvent,
    ) -> Result<()>;
    /// One session.
    async fn session(&self, id: &SessionId) -> Result<Option<Session>>;
    /// One turn.
    async fn turn(&self, id: &SessionId, turn: u32) -> Result<Option<SessionTurn>>;
    /// Every turn, in order.
    async fn turns(&self, id: &SessionId) -> Result<Vec<SessionTurn>>;
}

/// Extraction claims on ended sessions: each is extracted once.
#[async_trait]
pub trait ExtractionClaims: Send + Sync {
    /// Claim an ended session for extraction. Of any number of concurrent claimants at most
    /// one gets `Claimed`; a claim older than `terms.lapsed_before` that never finished may be
    /// taken over, up to `terms.max_attempts` claims in all.
    async fn claim_extraction(
        &self,
        id: &SessionId,
        claimant: &str,
        terms: ClaimTerms,
    ) -> Result<ExtractionClaim>;
    /// Mark the claimant's extraction of the session finished; it is never claimed again.
    async fn finish_extraction(&self, id: &SessionId, claimant: &str, at: Timestamp) -> Result<()>;
    /// Give the claimant's claim back after a failed run, so a later attempt may retry.
    async fn release_extraction(&self, id: &SessionId, claimant: &str) -> Result<()>;
    /// Sessions that ended with extraction requested and still need it (never claimed, or a
    /// lapsed claim, with attempts left), oldest end first.
    async fn pending_extractions(&self, limit: usize, terms: ClaimTerms) -> Result<Vec<SessionId>>;
}

/// API keys, stored as SHA-256 hex only.
#[async_trait]
pub trait ApiKeyStore: Send + Sync {
    /// Store a key by the SHA-256 hex of its secret.
    async fn put_api_key(&self, key: &ApiKeyInfo, sha256: &str, at: Timestamp) -> Result<()>;
    /// The live key with this SHA-256, if any.
    async fn api_key_by_hash(&self, sha256: &str) -> Result<Option<ApiKeyInfo>>;
    /// Whether any live admin key is stored.
    async fn has_admin_key(&self) -> Result<bool>;
}

/// Where a client's `Idempotency-Key` lives: the host key that sent it and the principal the
/// request asserted. The same key under another host key or principal is another key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// The id of the host key.
    pub host_key: String,
    pub agent_id: AgentId,
    pub user_id: UserId,
    /// The client's key, as sent.
    pub key: String,
}

/// What `IdempotencyKeys::claim_key` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key was free (or expired) and is now held in flight for this request: run it,
    /// then store its answer or release the key.
    Claimed,
    /// A live entry holds the key: the request it was first used for (`fingerprint`) and,
    /// once that request answered, its answer (`None` while it is still in flight).
    Held { fingerprint: String, answer: Option<Vec<u8>> },
}

/// Idempotency keys of client requests and the answers they got, until they expire.
#[async_trait]
pub trait IdempotencyKeys: Send + Sync {
    /// In one transaction: drop every entry that expired at or before `now`, then hold `key`
    /// in flight for the request `fingerprint` until `expires_at`, unless a live entry holds
    /// it already (returned instead). Of concurrent claims of one key, one is `Claimed`.
    async fn claim_key(
        &self,
        key: &IdempotencyKey,
        fingerprint: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<IdempotencyClaim>;
    /// Store the answer of a key held in flight; a retry then gets it.
    async fn store_answer(&self, key: &IdempotencyKey, answer: &[u8]) -> Result<()>;
    /// Give back a key held in flight whose request changed nothing (it failed), so that a
    /// retry runs again.
    async fn release_key(&self, key: &IdempotencyKey) -> Result<()>;
}

/// The search_log table.
#[async_trait]
pub trait SearchLogStore: Send + Sync {
    /// Append one trace. It may be written after this returns (the store's JSON of it
    /// too), but `trace` finds it from then on.
    async fn append_trace(&self, trace: SearchTrace) -> Result<()>;
    /// One trace as stored (JSON text), with the agent and user it belongs to.
    async fn trace(&self, id: &SearchId) -> Result<Option<(AgentId, UserId, String)>>;
}

/// Scores survivors against the query (e.g. bge-reranker-v2-m3). Optional; off by default.
#[async_trait]
pub trait Reranker: Send + Sync {
    /// One score per document, higher is better.
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>>;
}

/// Grants from the host.
#[async_trait]
pub trait GrantStore: Send + Sync {
    /// Store a grant (policy has already validated it).
    async fn put_grant(&self, grant: Grant, event: AuditEvent) -> Result<()>;
    /// Revoke a grant.
    async fn revoke_grant(&self, id: &GrantId, event: AuditEvent) -> Result<()>;
    /// Every grant held by an agent.
    async fn grants_for(&self, agent: &AgentId) -> Result<Vec<Grant>>;
}

/// One query term the lexical channel matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedTerm {
    pub term: String,
    /// Detected as an identifier (path, snake_case, dotted name, error code, id).
    pub identifier: bool,
    /// Matched through a linked entity alias.
    pub alias: bool,
}

/// A query for the lexical channel, already tokenised by the retriever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexicalTerm {
    pub text: String,
    pub identifier: bool,
    /// Other indexed words that count as this term (its inflections, when the retriever
    /// stems): a record holding any of them matches the term, which is reported as `text`.
    pub forms: Vec<String>,
}

impl LexicalTerm {
    /// A term matched as written, with no other forms.
    pub fn new(text: impl Into<String>, identifier: bool) -> Self {
        Self { text: text.into(), identifier, forms: Vec::new() }
    }

    /// The text and then each other form.
    pub fn all_forms(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.forms.iter().map(String::as_str))
    }
}

/// One lexical candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    pub record_key: RecordKey,
    pub record_id: RecordId,
    /// 1-based rank among eligible hits.
    pub rank: u32,
    /// The BM25 score (higher is better).
    pub score: f64,
    pub matched: Vec<MatchedTerm>,
}

/// A word's stem for lexical matching: words with one stem are inflections of one another.
pub trait WordStemmer: Send + Sync {
    fn stem(&self, word: &str) -> String;
}

/// BM25 search over records_fts, restricted to eligible ids before the top-k cut.
#[async_trait]
pub trait LexicalIndex: Send + Sync {
    /// The best `k` eligible records for `terms` (OR-joined, each quoted; a term's forms
    /// count as the term).
    async fn search(
        &self,
        terms: &[LexicalTerm],
        eligible: &[RecordKey],
        k: usize,
    ) -> Result<Vec<LexicalHit>>;

    /// Indexed words (single tokens, as the index made them) that start with `prefix`, in
    /// byte order, at most `limit`; whatever record holds them, eligible or not (a word
    /// is never shown, only matched).
    async fn words_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>>;
}

/// One dense candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub record_key: RecordKey,
    pub record_id: RecordId,
    /// Cosine similarity.
    pub score: f32,
    /// The cosine it was ranked by when the search was centred ([`Centring`]), else `None`.
    pub centred: Option<f32>,
    /// Its best sentence vector's cosine (centred when the search was), when the search
    /// weighed sentences in and the record has sentence vectors.
    pub sentence: Option<f32>,
}

/// How much of the searched records' mean vector a dense search takes away from the query
/// and from each record before it ranks them by cosine: 0 ranks by plain cosine, 1 removes
/// the whole mean. Records that all share a direction (one conversation's speakers and topic,
/// one project's vocabulary) look alike to a query by that direction alone; without it, what
/// tells them apart decides the order. Only the searched (eligible) records make the mean, so
/// records a caller may not read never change what it finds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Centring(f32);

impl Centring {
    /// Plain cosine.
    pub const NONE: Centring = Centring(0.0);

    /// A share of the mean in `[0, 1]`.
    pub fn new(share: f32) -> Result<Self> {
        if share.is_finite() && (0.0..=1.0).contains(&share) {
            Ok(Self(share))
        } else {
            Err(crate::DomainError::invalid("dense_centring", format!("{share} is not a share in [0, 1]")))
        }
    }

    /// The share of the mean removed.
    pub fn share(self) -> f32 {
        self.0
    }
}

/// How much a record's best sentence vector weighs in its dense score, in `[0, 1]`: 0 ranks
/// by the record's own vector alone. A record's own vector is pooled over all its tokens (and
/// its context), so the one sentence of a long turn that answers says little in it.
/// A record without sentence vectors scores by its own vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SentenceWeight(f32);

impl SentenceWeight {
    /// The record's own vector alone.
    pub const NONE: SentenceWeight = SentenceWeight(0.0);

    /// Each record by its best sentence alone (by its own vector when it has none: one short
    /// sentence is its own best): the retriever's sentence list (`retrieval.fusion.sentences`).
    pub const BEST: SentenceWeight = SentenceWeight(1.0);

    /// A weight in `[0, 1]`.
    pub fn new(weight: f32) -> Result<Self> {
        if weight.is_finite() && (0.0..=1.0).contains(&weight) {
            Ok(Self(weight))
        } else {
            Err(crate::DomainError::invalid(
                "dense_sentence_weight",
                format!("{weight} is not a weight in [0, 1]"),
            ))
        }
    }

    /// The weight of the best sentence.
    pub fn weight(self) -> f32 {
        self.0
    }
}

/// The in-memory exact vector index (seed section 9).
pub trait VectorIndex: Send + Sync {
    /// Whether `upsert` takes this vector (the index's dims, finite numbers). The write path
    /// asks before its commit, so the update after the commit has nothing left to refuse.
    fn check(&self, vector: &[f32]) -> Result<()>;
    /// Add or replace the vector of a record (normalised on the way in), without sentence
    /// vectors. Fails only for a vector `check` refuses or a key the index cannot address.
    fn upsert(&self, key: RecordKey, id: &RecordId, vector: &[f32]) -> Result<()> {
        self.upsert_with(key, id, vector, &[])
    }
    /// Add or replace the vector of a record and its sentence vectors (`dims` numbers each,
    /// one after the other; each normalised on the way in).
    fn upsert_with(&self, key: RecordKey, id: &RecordId, vector: &[f32], sentences: &[f32]) -> Result<()>;
    /// Give a live record its sentence vectors, attached after its write committed; `false`
    /// (nothing changed) when the index holds no live row for `key`.
    fn attach_sentences(&self, key: RecordKey, sentences: &[f32]) -> Result<bool>;
    /// Mark a record's vector dead without rebuilding; it is never returned again.
    fn mark_dead(&self, key: RecordKey);
    /// Exact top-k by cosine among live rows whose key is in `eligible`, centred on their
    /// mean by `centring`; ties broken by id.
    fn search(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
    ) -> Result<Vec<VectorHit>> {
        self.search_with(query, eligible, k, centring, SentenceWeight::NONE)
    }
    /// As `search`, with each record scored `1 − w` its own cosine and `w` its best sentence
    /// vector's (sentences centred on their own mean by the same `centring`); a record
    /// without sentence vectors scores its own cosine.
    fn search_with(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        sentences: SentenceWeight,
    ) -> Result<Vec<VectorHit>> {
        let mut lists = self.search_lists(query, eligible, k, centring, &[sentences])?;
        lists.pop().ok_or_else(|| {
            DomainError::backend("vector index", "search_lists returned no list for one weight")
        })
    }
    /// As `search_with`, once for each weight in `sentences`, in one pass over the rows: the
    /// `i`-th list is what `search_with` with `sentences[i]` returns (the retriever's record
    /// and sentence lists).
    fn search_lists(
        &self,
        query: &[f32],
        eligible: &[RecordKey],
        k: usize,
        centring: Centring,
        sentences: &[SentenceWeight],
    ) -> Result<Vec<Vec<VectorHit>>>;
    /// Do now what a `search_lists` over `eligible` with these settings needs before its
    /// query (which rows, the means it centres on), so that a search soon after, the index
    /// unchanged, finds it done: the retriever calls it while the query is embedded. The
    /// search's result is the same whether or not this ran.
    fn prepare(&self, eligible: &[RecordKey], centring: Centring, sentences: &[SentenceWeight]) {
        let _ = (eligible, centring, sentences);
    }
    /// The vector stored for a record, when live.
    fn vector(&self, key: RecordKey) -> Option<Vec<f32>>;
    /// Number of live rows.
    fn live_len(&self) -> usize;
}

/// Which model produced an embedding; stored with every vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingModelInfo {
    pub name: String,
    pub version: u32,
    pub dims: u32,
}

/// Text → normalised vector.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// Which model this is.
    fn info(&self) -> &EmbeddingModelInfo;
    /// One L2-normalised vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// How strongly a piece of evidence entails a claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Entailment {
    /// In `[0, 1]`; compared against `ingestion.evidence.entail_floor`.
    pub score: f64,
    /// Which judge produced the score, for the audit event.
    pub judge: String,
}

/// Scores whether evidence entails content.
#[async_trait]
pub trait EntailmentJudge: Send + Sync {
    /// Score `evidence ⇒ claim`.
    async fn entails(&self, evidence: &str, claim: &str) -> Result<Entailment>;
}

/// A provider-neutral completion request with a JSON-schema-constrained answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    pub model: String,
    pub system: String,
    pub user: String,
    /// Name of the structured answer (tool / schema name).
    pub schema_name: String,
    /// JSON Schema of the answer, as text.
    pub schema_json: String,
    pub max_tokens: u32,
}

/// A structured answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionResponse {
    /// The structured answer, as JSON text matching the schema.
    pub json: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A hosted model call (Anthropic, OpenAI), chosen by model name.
#[async_trait]
pub trait CompletionClient: Send + Sync {
    /// Run one structured completion.
    async fn complete(&self, request: CompletionRequest) -> Result<CompletionResponse>;
}

/// What an erasure covers (seed section 3: "a controlled erase path removes stored content and
/// embeddings").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErasureTarget {
    /// One record.
    Record(RecordId),
    /// Every record of a user: its `user:<u>` scope and every `agent:*/<u>` private scope, with
    /// the user's session turns and the entities of those scopes.
    User(UserId),
    /// Every record of one scope, with the entities of that scope.
    Scope(Scope),
}

impl std::fmt::Display for ErasureTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Record(id) => write!(f, "record {id}"),
            Self::User(user) => write!(f, "user {user}"),
            Self::Scope(scope) => write!(f, "scope {scope}"),
        }
    }
}

/// What an erasure removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErasureReport {
    /// Records whose content, evidence, source reference and tags are gone (tombstones now).
    pub records: u64,
    pub embeddings: u64,
    /// Search traces that named an erased record (or, for a user, every trace of the user).
    pub traces: u64,
    /// Audit events whose details were blanked (their kind, ids and time stay).
    pub events: u64,
    /// Session turns deleted (user erasure).
    pub turns: u64,
    /// Entities whose names and aliases were removed (user and scope erasure).
    pub entities: u64,
    /// Session profiles that quoted an erased record (or, for a user, every profile of theirs).
    pub profiles: u64,
    /// Orchestrator decisions that admitted an erased record (or, for a user, every decision
    /// of theirs).
    pub decisions: u64,
}

/// Erasure and compaction: removing content for good, not only hiding it.
#[async_trait]
pub trait Erasure: Send + Sync {
    /// Every record the target covers, whatever its status (erased tombstones included).
    async fn erasure_records(&self, target: &ErasureTarget) -> Result<Vec<KeyedRecord>>;

    /// How many vectors (served and staged) `records` hold: what an erasure removes with the
    /// tombstones, reported before they are written.
    async fn vectors_of(&self, records: &[RecordId]) -> Result<u64>;

    /// In one transaction: blank the content, evidence, source reference and tags of
    /// `records` (already `deleted`) and mark them erased; delete their FTS rows, embeddings
    /// and entity links, every search trace that names one of them, and the details of their
    /// audit events; for a user also every trace and session turn of the user; for a user or
    /// a scope the names and aliases of the scope's entities. Records `event`.
    async fn scrub(
        &self,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> Result<ErasureReport>;

    /// Make removed bytes unreadable on disk: merge the FTS index, VACUUM, checkpoint and
    /// truncate the WAL. Returns the store's size in bytes (file, WAL, shared memory) before
    /// and after.
    async fn compact(&self) -> Result<(u64, u64)>;
}

/// How far a re-embedding to a target model has come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReembedCounts {
    /// Records that need a vector (not deleted, not erased).
    pub live: u64,
    /// Of those, records with a staged vector of the target model.
    pub staged: u64,
}

/// A live record to embed again: its key, id and content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReembedItem {
    pub key: RecordKey,
    pub id: RecordId,
    pub content: String,
    pub context: Option<String>,
    /// The speaker the host named (a turn record's label).
    pub speaker: Option<String>,
    pub origin: Origin,
}

impl ReembedItem {
    /// What it is indexed by, as the write path indexed it.
    pub fn indexed(&self) -> crate::record::IndexedText<'_> {
        crate::record::IndexedText {
            origin: self.origin,
            speaker: self.speaker.as_deref(),
            content: &self.content,
            context: self.context.as_deref(),
        }
    }
}

/// Re-embedding with another model: vectors of the target model are staged beside the served
/// ones (the service keeps serving its model) until one switch replaces them all.
#[async_trait]
pub trait Reembedding: Send + Sync {
    /// Every model that stored vectors of live records use, and how many each.
    async fn stored_models(&self) -> Result<Vec<(EmbeddingModelInfo, u64)>>;
    /// Drop staged vectors of any model but `target` (a run towards another model left them).
    async fn discard_other_staged(&self, target: &EmbeddingModelInfo) -> Result<u64>;
    /// Up to `limit` live records, in key order, without a staged vector of `target`.
    async fn unstaged(&self, target: &EmbeddingModelInfo, limit: usize) -> Result<Vec<ReembedItem>>;
    /// Stage vectors in one transaction; a record no longer live is skipped. Returns the rows
    /// written.
    async fn stage(&self, rows: &[EmbeddingRow]) -> Result<u64>;
    /// Live records, and how many of them have a staged vector of `target`.
    async fn reembed_counts(&self, target: &EmbeddingModelInfo) -> Result<ReembedCounts>;
    /// In one transaction: unless a live record lacks a staged vector of `target` (then
    /// `DomainError::Conflict` and nothing changes), replace every stored vector with the
    /// staged ones, clear the staging rows, and record `event`. Returns the vectors switched.
    async fn switch_embeddings(&self, target: &EmbeddingModelInfo, event: AuditEvent) -> Result<u64>;
}

/// Activation decisions and session profiles.
#[async_trait]
pub trait ActivationStore: Send + Sync {
    /// The stored decisions about records in `scopes`.
    async fn decisions_in(&self, scopes: &[Scope]) -> Result<Vec<crate::ActivationDecision>>;
    /// In one transaction: store `changed` decisions (a changed decision loses an earlier
    /// verdict), delete the decisions of `withdrawn` records, open `reviews` (one open item
    /// per record and reason), and append `events`.
    async fn record_decisions(
        &self,
        changed: &[crate::ActivationDecision],
        withdrawn: &[RecordId],
        reviews: &[ReviewItem],
        events: Vec<AuditEvent>,
    ) -> Result<()>;
    /// A person's verdict on a record's `review` decision.
    async fn set_verdict(&self, record: &RecordId, verdict: crate::ReviewVerdict) -> Result<()>;
    /// Store a session's profile with `event`; a second profile for the same session is a
    /// `DomainError::Conflict` (a profile never changes).
    async fn put_profile(&self, profile: &crate::ProfileBlock, event: AuditEvent) -> Result<()>;
    async fn profile(&self, session: &SessionId) -> Result<Option<crate::ProfileBlock>>;
}

/// The orchestrator's decisions, one per turn it was asked about.
#[async_trait]
pub trait DecisionLog: Send + Sync {
    /// Store a decision with its audit event, in one transaction.
    async fn put_decision(&self, decision: &crate::TurnMemoryDecision, event: AuditEvent) -> Result<()>;
    async fn decision(&self, id: &crate::DecisionId) -> Result<Option<crate::TurnMemoryDecision>>;
    /// A session's decisions, oldest first.
    async fn decisions_of(&self, session: &SessionId) -> Result<Vec<crate::TurnMemoryDecision>>;
}

/// Records whose time ran out (seed section 3: expiry moves them to `expired`; until then the
/// eligibility filter already hides them).
#[async_trait]
pub trait ExpiryIndex: Send + Sync {
    /// Up to `limit` provisional or confirmed records whose `expires_at` is at or before `now`,
    /// oldest expiry first.
    async fn due_to_expire(&self, now: Timestamp, limit: usize) -> Result<Vec<KeyedRecord>>;
}

/// A consistency check of a store (seed section 1, operations: "snapshots").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreCheck {
    /// SQLite's `integrity_check`: `ok`, or what it found.
    pub integrity: String,
    /// Records that are neither deleted nor erased.
    pub live: u64,
    /// Live records without their FTS row, and FTS rows without a live record.
    pub missing_fts: u64,
    pub orphan_fts: u64,
    /// Live records without an embedding, and embeddings of records that are gone.
    pub missing_embeddings: u64,
    pub orphan_embeddings: u64,
}

impl StoreCheck {
    /// Whether the store is whole: the index can be rebuilt from it and search finds every
    /// live record through both channels.
    pub fn is_ok(&self) -> bool {
        self.integrity == "ok"
            && self.missing_fts == 0
            && self.orphan_fts == 0
            && self.missing_embeddings == 0
            && self.orphan_embeddings == 0
    }
}

/// Online snapshots and checks.
#[async_trait]
pub trait Snapshots: Send + Sync {
    /// Write a consistent copy of the store to `dest` (a new file) while writes continue;
    /// returns its size in bytes.
    async fn snapshot(&self, dest: &std::path::Path) -> Result<u64>;
    /// Check the store.
    async fn verify(&self) -> Result<StoreCheck>;
    /// Check another database file (a snapshot), opened read-only.
    async fn verify_file(&self, path: &std::path::Path) -> Result<StoreCheck>;
    /// How many of `records` the snapshot at `path` still holds content of.
    async fn snapshot_holds(&self, path: &std::path::Path, records: &[RecordId]) -> Result<u64>;
    /// Erase `records` inside the snapshot at `path` too (they become deleted tombstones
    /// there, scrubbed like [`Erasure::scrub`] with `event`, then compacted).
    async fn rewrite_snapshot(
        &self,
        path: &std::path::Path,
        target: &ErasureTarget,
        records: &[RecordId],
        event: AuditEvent,
    ) -> Result<()>;
}

/// What a transcript-retention run removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// Sessions that lost turns, and the turns deleted.
    pub sessions: u64,
    pub turns: u64,
    /// Sessions with old turns left alone because their extraction has not run.
    pub skipped_sessions: u64,
}

/// Retention: neither the session buffer nor the search log is kept forever.
#[async_trait]
pub trait Retention: Send + Sync {
    /// Delete the search traces written before `before` (with those still waiting to be
    /// written); a dry run only counts. Returns how many.
    async fn purge_search_traces(&self, before: Timestamp, dry_run: bool) -> Result<u64>;
    /// Delete turns created before `before`, in sessions whose extraction finished (every
    /// session with `force`). A dry run only counts. Records `event` when it deletes.
    async fn purge_turns(
        &self,
        before: Timestamp,
        force: bool,
        dry_run: bool,
        event: AuditEvent,
    ) -> Result<RetentionReport>;
}

/// Why a record waits for a person's look (seed section 1, operations: due-review flagging).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewReason {
    /// A provisional record whose expiry is near: confirm it or let it go.
    ExpiringProvisional,
    /// A provisional record on the losing side of a conflict with a record still active.
    UnresolvedConflict,
    /// A confirmed record of low confidence that nothing reinforced for long.
    StaleLowConfidence,
    /// A record whose category policy says `review` before it may be ambient (activation).
    Activation,
}

impl ReviewReason {
    pub const ALL: [ReviewReason; 4] =
        [Self::ExpiringProvisional, Self::UnresolvedConflict, Self::StaleLowConfidence, Self::Activation];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExpiringProvisional => "expiring_provisional",
            Self::UnresolvedConflict => "unresolved_conflict",
            Self::StaleLowConfidence => "stale_low_confidence",
            Self::Activation => "activation",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "reason",
            reason: format!("unknown review reason {value:?}"),
        })
    }
}

/// What a person decided about a flagged record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewAction {
    /// Keep it: confirmed, its expiry cleared.
    Confirm,
    /// Let it go: expired.
    Expire,
    /// Remove it: deleted.
    Forget,
    /// Activation: it may be ambient (its decision becomes promote).
    Approve,
    /// Activation: never ambient (the record itself stays searchable).
    Reject,
}

impl ReviewAction {
    pub const ALL: [ReviewAction; 5] =
        [Self::Confirm, Self::Expire, Self::Forget, Self::Approve, Self::Reject];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirm => "confirm",
            Self::Expire => "expire",
            Self::Forget => "forget",
            Self::Approve => "approve",
            Self::Reject => "reject",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == value).ok_or_else(|| crate::DomainError::Invalid {
            field: "action",
            reason: format!("{value:?} is not one of confirm, expire, forget"),
        })
    }
}

/// An item of the review queue.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewItem {
    pub id: crate::ReviewId,
    pub record_id: RecordId,
    pub reason: ReviewReason,
    pub flagged_at: Timestamp,
    /// When and how it was resolved; open while `None`.
    pub resolved: Option<(Timestamp, ReviewAction)>,
}

/// What makes a record due for review.
#[derive(Debug, Clone, PartialEq)]
pub struct DueReviewRules {
    pub now: Timestamp,
    /// Provisional records expiring after `now` and at or before this.
    pub expiring_before: Timestamp,
    /// Confirmed records below this confidence …
    pub low_confidence_below: f64,
    /// … last created or reinforced before this.
    pub stale_before: Timestamp,
}

/// The review queue (shared with activation's review decisions).
#[async_trait]
pub trait ReviewQueue: Send + Sync {
    /// Records the rules find, each with its reason, that have no open review for it.
    async fn due_for_review(&self, rules: &DueReviewRules) -> Result<Vec<(RecordId, ReviewReason)>>;
    /// Add items (one already open for the same record and reason is skipped); records
    /// `event` with them. Returns how many were added.
    async fn add_reviews(&self, items: &[ReviewItem], event: AuditEvent) -> Result<u64>;
    /// Items, newest first; only open ones with `open_only`.
    async fn reviews(&self, open_only: bool, limit: usize) -> Result<Vec<ReviewItem>>;
    async fn review(&self, id: &crate::ReviewId) -> Result<Option<ReviewItem>>;
    /// Mark an open item resolved; `DomainError::Conflict` when it is resolved already.
    async fn resolve_review(
        &self,
        id: &crate::ReviewId,
        action: ReviewAction,
        at: Timestamp,
        event: AuditEvent,
    ) -> Result<()>;
}
