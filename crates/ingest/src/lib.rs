//! Retold's write path (seed section 13), written against the domain's ports only:
//! writable-scope and evidence checks, entity resolution, current-fact decisions (create,
//! reinforce, supersede, conflict, reject), embedding, the store's one-transaction write unit
//! and the vector index update; plus `memory_revise` and `memory_forget`.

mod config;
mod ingestor;
mod judge;
mod request;

pub use crate::config::IngestConfig;
pub use crate::ingestor::{Ingestor, Ports};
pub use crate::judge::EmbeddingEntailmentJudge;
pub use crate::request::{EntityRef, RejectCode, ReviseAction, RevisionOutcome, WriteOutcome, WriteRequest};
