//! Retold's write path (seed section 13), written against the domain's ports only:
//! writable-scope and evidence checks, entity resolution, current-fact decisions (create,
//! reinforce, supersede, conflict, reject), embedding, the store's one-transaction write unit
//! and the vector index update; plus `memory_revise` and `memory_forget`; and session
//! extraction with candidate review (prompts in `src/prompts/`).

mod config;
mod extraction;
mod import;
mod ingestor;
mod judge;
mod merge;
mod request;
mod restore;
mod sentences;
mod stages;
mod turns;

pub use crate::config::IngestConfig;
pub use crate::extraction::{
    Candidate, CandidateEntity, CandidateOutcome, CandidateScope, Extraction, ExtractionConfig,
    ExtractionReport, ExtractionRunner, Extractor, FakeExtractor, Review, ReviewResult, Reviewer,
    StructuredLLMExtractor, StructuredLLMReviewer, TableReviewer, Transcript, Usage, Verdict,
    revision_refusal, validate_candidate,
};
pub use crate::import::{ImportItem, import_key};
pub use crate::ingestor::{Ingestor, Ports, retry_on_contention};
pub use crate::judge::EmbeddingEntailmentJudge;
pub use crate::merge::MergeAuthority;
pub use crate::request::{
    EntityRef, KeyedWrite, RejectCode, ReviseAction, RevisionOutcome, WriteOutcome, WriteRequest,
};
pub use crate::restore::{MemorySet, Restored};
pub use crate::stages::WriteStages;
pub use crate::turns::{TurnMemory, TurnWrite};
