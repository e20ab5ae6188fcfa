//! Retold's application layer: the use-cases an edge calls, written against ports.
//!
//! The seed's tool handlers are the `Ingestor` (write, revise, forget) and the `Retriever`
//! (search, get); this crate adds the session buffer's use-cases (`SessionService`) and the
//! host's administration (`AdminService`: grants, entities and aliases, keys, audit history,
//! traces, extraction runs) and the operations (`OperationsService`: erasure with compaction;
//! `ReembedService`: re-embedding and the model switch),
//! and bundles them as `Services`. An edge (the REST service, later
//! MCP) authenticates, parses, calls one method and maps the result; the composition root is
//! the only place that names a concrete store (`Stores::from_store`).

mod activation;
mod admin;
mod background;
mod idempotency;
mod keys;
mod operations;
pub mod orchestrator;
mod reembed;
mod sessions;
mod stores;

pub use crate::activation::{ActivationConfig, ActivationService, Inventory};
pub use crate::admin::{AdminService, EntityView, NewHostKey, Readiness};
pub use crate::background::BackgroundTasks;
pub use crate::idempotency::{Answered, IdempotencyService, Idempotent};
pub use crate::keys::{hash_key, new_key};
pub use crate::operations::{
    ErasureOutcome, ExpiryOutcome, FlagOutcome, OperationsConfig, OperationsService, OperationsStatus,
    Resolution, RetentionOutcome, SnapshotFile, SnapshotOutcome,
};
pub use crate::orchestrator::OrchestratorService;
pub use crate::reembed::{Calibration, ReembedOutcome, ReembedService, uncalibrated};
pub use crate::sessions::{SessionEnd, SessionService, SessionsConfig, TurnAppended, TurnInput};
pub use crate::stores::{AllPorts, Stores};

use retold_ingest::Ingestor;
use retold_retrieve::Retriever;

/// Every use-case, cheap to clone per request.
#[derive(Clone, Debug)]
pub struct Services {
    /// `memory_write`, `memory_revise`, `memory_forget`.
    pub ingestor: Ingestor,
    /// `memory_search`, `memory_get`.
    pub retriever: Retriever,
    pub sessions: SessionService,
    pub admin: AdminService,
    /// Requests sent with an idempotency key run once per key.
    pub idempotency: IdempotencyService,
    /// Maintenance an administrator runs (erasure).
    pub operations: OperationsService,
    /// Which records are ambient, session profiles, the category inventory.
    pub activation: ActivationService,
    /// The host-issued memory decision for a turn.
    pub orchestrator: orchestrator::OrchestratorService,
}
