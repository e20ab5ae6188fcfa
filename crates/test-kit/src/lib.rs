//! What Retold's test suites share: deterministic clock and ids, a scope-logging store spy,
//! the provisioned embedder, and `World`, a write path and search pipeline on real
//! components (a SQLite file, the ONNX model, the exact index). Dev-only: the service crates
//! take it as a dev-dependency and the evaluation harness for replays; nothing in the
//! service's normal dependency tree does (checked by the tidy test).

mod doubles;
mod spy;
mod world;

pub use crate::doubles::{ManualClock, SequentialIds};
pub use crate::spy::Spy;
pub use crate::world::{World, WorldBuilder, embedder, host_event, principal};

/// Every store port trait, for tests that call the store directly, and `Backend`: all of them
/// at once, so a contract test written over `&dyn Backend` runs against any implementation.
pub mod prelude {
    pub use retold_domain::{
        ApiKeyStore, AuditLog, CurrentFacts, EligibilityIndex, EmbeddingSource, EntityReader, EntityWriter,
        ExtractionClaims, GrantStore, LexicalIndex, RecordGraph, RecordReader, RecordWriter, SearchLogStore,
        TurnBuffer, VectorIndex,
    };

    /// Every store port one backend implements.
    pub trait Backend:
        ApiKeyStore
        + AuditLog
        + CurrentFacts
        + EligibilityIndex
        + EmbeddingSource
        + EntityReader
        + EntityWriter
        + ExtractionClaims
        + GrantStore
        + LexicalIndex
        + RecordGraph
        + RecordReader
        + RecordWriter
        + SearchLogStore
        + TurnBuffer
    {
    }

    impl<T> Backend for T where
        T: ApiKeyStore
            + AuditLog
            + CurrentFacts
            + EligibilityIndex
            + EmbeddingSource
            + EntityReader
            + EntityWriter
            + ExtractionClaims
            + GrantStore
            + LexicalIndex
            + RecordGraph
            + RecordReader
            + RecordWriter
            + SearchLogStore
            + TurnBuffer
    {
    }
}
