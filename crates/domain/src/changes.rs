//! The change feed of a store that several service processes share (replicas): what each
//! replica reads to keep its in-memory copies (the vector index, the eligibility filter)
//! current with every other replica's writes.

use std::time::Duration;

use async_trait::async_trait;

use crate::{EligibilityRow, EmbeddingModelInfo, RecordKey, Result};

/// Changes after a number: the last number read, and the records they changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeBatch {
    /// The number of the last change in the batch (the number asked after when empty).
    pub last: u64,
    /// Keys of the records the changes touched, each once, in key order.
    pub keys: Vec<RecordKey>,
    /// Whether more changes follow the batch.
    pub more: bool,
}

/// A record as a replica must hold it now: its eligibility row, and its vector of the
/// served model when it keeps one (`None`: deleted, erased, or no vector of that model).
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentRecord {
    pub row: EligibilityRow,
    pub vector: Option<Vec<f32>>,
    /// Its sentence vectors of that model, `dims` numbers each (empty when none).
    pub sentences: Vec<f32>,
}

/// Numbered changes, committed in number order without gaps, so a reader that has seen every
/// change up to n and reads after n misses none.
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// The number of the latest committed change (0 when none).
    async fn change_head(&self) -> Result<u64>;
    /// Up to `limit` changes after `after`, oldest first.
    async fn changes_since(&self, after: u64, limit: usize) -> Result<ChangeBatch>;
    /// The current state of `keys` (a key the store does not hold is left out).
    async fn current(&self, keys: &[RecordKey], model: &EmbeddingModelInfo) -> Result<Vec<CurrentRecord>>;
    /// Wait until a change may have committed (a notification from the store), at most
    /// `timeout`; a store without notifications just sleeps.
    async fn wait_for_change(&self, timeout: Duration) -> Result<()>;
}
