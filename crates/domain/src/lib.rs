//! Retold's domain: memory records, scopes, lifecycle, principal, grants, source
//! authority, entities, audit events, and the port traits every adapter implements.
//!
//! Pure: no I/O, no serde, no async runtime, no database. Every value type refuses
//! bad input at construction, so code that holds one may trust it.

mod activation;
mod audit;
mod changes;
mod decision;
mod entity;
mod error;
mod ids;
mod inspection;
mod ports;
mod principal;
mod record;
mod scope;
mod session;
mod source;
pub mod text;
mod trace;
pub mod vectors;

pub use crate::activation::{ActivationDecision, Ambience, ProfileBlock, ProfileEntry, ReviewVerdict};
pub use crate::audit::{AuditEvent, EventKind};
pub use crate::changes::{ChangeBatch, ChangeFeed, CurrentRecord};
pub use crate::decision::{DecisionTimings, Disposition, Gap, GapKind, KeptReason, TurnMemoryDecision};
pub use crate::entity::{
    Entity, EntityKind, EntityStatus, LinkRole, MAX_NAME_CHARS, Name, RecordEntityLink, fold_name,
};
pub use crate::error::{BoxError, DomainError, Result};
pub use crate::ids::{
    AgentId, DecisionId, EntityId, EventId, GrantId, MAX_ID_LEN, ProjectId, RecordId, ReviewId, SearchId,
    SessionId, UserId,
};
pub use crate::inspection::{
    COUNT_CAP, Inspection, PageRequest, RecordBrowse, SearchSummary, SessionSummary,
};
pub use crate::ports::{
    ActivationStore, ApiKeyStore, AuditLog, Background, BackgroundTask, Centring, Clock, CompletionClient,
    CompletionRequest, CompletionResponse, ConflictLink, CurrentFacts, DecisionLog, DueReviewRules,
    EligibilityFilter, EligibilityIndex, EligibilityRow, EligibilitySource, EligibleRecord, Embedder,
    EmbeddingModelInfo, EmbeddingRow, EmbeddingScan, EmbeddingSource, Entailment, EntailmentJudge,
    EntityMerge, EntityReader, EntityWriter, Erasure, ErasureReport, ErasureTarget, ExpiryIndex,
    ExtractionClaims, GrantStore, IdGenerator, IdempotencyClaim, IdempotencyKey, IdempotencyKeys, KeyGuard,
    KeyedRecord, LexicalHit, LexicalIndex, LexicalTerm, LinkedRecord, MatchedTerm, NewEntity, RecordGraph,
    RecordKey, RecordReader, RecordUpdate, RecordWriter, ReembedCounts, ReembedItem, Reembedding, Reranker,
    Retention, RetentionReport, ReviewAction, ReviewItem, ReviewQueue, ReviewReason, SearchLogStore,
    SentenceRow, SentenceVectors, SentenceWeight, Snapshots, StoreCheck, TurnBuffer, VectorHit, VectorIndex,
    WordStemmer, WriteKey, WriteReceipt, WriteReceipts, WriteUnit, turn_session,
};
pub use crate::principal::{ApiKeyInfo, Grant, KeyRole, Principal};
pub use crate::record::{
    Attribute, Confidence, Content, Context, Evidence, FactKey, IndexedText, MAX_ATTRIBUTE_LEN,
    MAX_CONTENT_CHARS, MAX_CONTEXT_CHARS, MAX_EVIDENCE_CHARS, MAX_TAG_LEN, MAX_TAGS, MemoryRecord,
    MemoryType, Origin, SENTENCE_MIN_WORDS, Status, Tag, Timestamp,
};
pub use crate::scope::{Scope, ScopeKind};
pub use crate::session::{
    ClaimTerms, ExtractionClaim, MAX_TURN_CHARS, Session, SessionTurn, TurnRole, turn_parts,
};
pub use crate::source::{MAX_SOURCE_REF_LEN, SourceKind, SourceRef};
pub use crate::trace::{
    Channel, DropStage, PipelineStage, RewriteStatus, SearchTrace, TraceCandidate, TraceDrop, TraceNote,
    TraceResult,
};

/// Re-exported so callers build timestamps and durations with the same types.
pub use chrono;
