//! The store ports the services and the write and search paths take, as one bundle.

use std::sync::Arc;

use retold_domain::{
    ActivationStore, ApiKeyStore, AuditLog, CurrentFacts, DecisionLog, EligibilityIndex, EligibilitySource,
    EmbeddingSource, EntityReader, EntityWriter, Erasure, ExpiryIndex, ExtractionClaims, GrantStore,
    IdempotencyKeys, Inspection, LexicalIndex, RecordGraph, RecordReader, RecordWriter, Reembedding,
    Retention, ReviewQueue, SearchLogStore, SentenceVectors, Snapshots, TurnBuffer, WriteReceipts,
};

/// Every store port one backend implements.
pub trait AllPorts:
    RecordWriter
    + RecordReader
    + EligibilityIndex
    + EligibilitySource
    + CurrentFacts
    + RecordGraph
    + AuditLog
    + EmbeddingSource
    + EntityReader
    + EntityWriter
    + GrantStore
    + TurnBuffer
    + ExtractionClaims
    + ApiKeyStore
    + SearchLogStore
    + LexicalIndex
    + WriteReceipts
    + IdempotencyKeys
    + Erasure
    + ExpiryIndex
    + Snapshots
    + Retention
    + ReviewQueue
    + Reembedding
    + SentenceVectors
    + ActivationStore
    + DecisionLog
    + Inspection
    + 'static
{
}

impl<T> AllPorts for T where
    T: RecordWriter
        + RecordReader
        + EligibilityIndex
        + EligibilitySource
        + CurrentFacts
        + RecordGraph
        + AuditLog
        + EmbeddingSource
        + EntityReader
        + EntityWriter
        + GrantStore
        + TurnBuffer
        + ExtractionClaims
        + ApiKeyStore
        + SearchLogStore
        + LexicalIndex
        + WriteReceipts
        + IdempotencyKeys
        + Erasure
        + ExpiryIndex
        + Snapshots
        + Retention
        + ReviewQueue
        + Reembedding
        + SentenceVectors
        + ActivationStore
        + DecisionLog
        + Inspection
        + 'static
{
}

/// The store's ports, each as its own trait object, so every consumer takes only the ones it
/// uses and a second backend is a change here and in the composition root.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct Stores {
    pub writer: Arc<dyn RecordWriter>,
    pub records: Arc<dyn RecordReader>,
    pub eligibility: Arc<dyn EligibilityIndex>,
    /// The boot scan of a derived eligibility filter.
    pub eligibility_rows: Arc<dyn EligibilitySource>,
    pub facts: Arc<dyn CurrentFacts>,
    pub graph: Arc<dyn RecordGraph>,
    pub audit: Arc<dyn AuditLog>,
    pub embeddings: Arc<dyn EmbeddingSource>,
    pub entities: Arc<dyn EntityReader>,
    pub entity_writer: Arc<dyn EntityWriter>,
    pub grants: Arc<dyn GrantStore>,
    pub turns: Arc<dyn TurnBuffer>,
    pub claims: Arc<dyn ExtractionClaims>,
    pub keys: Arc<dyn ApiKeyStore>,
    pub search_log: Arc<dyn SearchLogStore>,
    pub lexical: Arc<dyn LexicalIndex>,
    pub receipts: Arc<dyn WriteReceipts>,
    pub erasure: Arc<dyn Erasure>,
    pub expiry: Arc<dyn ExpiryIndex>,
    pub snapshots: Arc<dyn Snapshots>,
    pub retention: Arc<dyn Retention>,
    pub reviews: Arc<dyn ReviewQueue>,
    pub reembedding: Arc<dyn Reembedding>,
    /// Sentence vectors attached after a write commits.
    pub sentences: Arc<dyn SentenceVectors>,
    pub activation: Arc<dyn ActivationStore>,
    pub decisions: Arc<dyn DecisionLog>,
    pub idempotency: Arc<dyn IdempotencyKeys>,
    /// Operators' browsing (the inspector).
    pub inspection: Arc<dyn Inspection>,
}

impl Stores {
    /// Every port from one backend.
    pub fn from_store<S: AllPorts>(store: Arc<S>) -> Self {
        Self {
            writer: store.clone(),
            records: store.clone(),
            eligibility: store.clone(),
            eligibility_rows: store.clone(),
            facts: store.clone(),
            graph: store.clone(),
            audit: store.clone(),
            embeddings: store.clone(),
            entities: store.clone(),
            entity_writer: store.clone(),
            grants: store.clone(),
            turns: store.clone(),
            claims: store.clone(),
            keys: store.clone(),
            search_log: store.clone(),
            lexical: store.clone(),
            receipts: store.clone(),
            erasure: store.clone(),
            expiry: store.clone(),
            snapshots: store.clone(),
            retention: store.clone(),
            reviews: store.clone(),
            reembedding: store.clone(),
            sentences: store.clone(),
            activation: store.clone(),
            decisions: store.clone(),
            idempotency: store.clone(),
            inspection: store,
        }
    }
}
