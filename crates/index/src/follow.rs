//! A replica's follower: keeps this process's vector index and eligibility table current
//! with writes other processes commit to a shared store, by reading the store's change feed
//! (`ChangeFeed`) after each notification, and at least every `poll`.
//!
//! Read-your-writes holds without it (the writing process updates both itself); the follower
//! makes a write on replica A visible to a search on replica B within one notification and
//! one read of the changed rows. Applying a change twice (one's own, or after a restart) is
//! harmless: rows only replace older versions of themselves.

use std::sync::Arc;
use std::time::Duration;

use retold_domain::{ChangeFeed, EmbeddingModelInfo, Result, VectorIndex};

use crate::EligibilityTable;

/// Changes read per round.
const BATCH: usize = 500;

/// What one process holds in memory and follows.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct Follower {
    pub feed: Arc<dyn ChangeFeed>,
    pub table: Arc<EligibilityTable>,
    pub index: Arc<dyn VectorIndex>,
    /// The served model: only its vectors enter the index.
    pub model: EmbeddingModelInfo,
}

impl Follower {
    /// Apply every change after `after`; returns the number of the last one applied.
    pub async fn catch_up(&self, mut after: u64) -> Result<u64> {
        loop {
            let batch = self.feed.changes_since(after, BATCH).await?;
            if !batch.keys.is_empty() {
                let current = self.feed.current(&batch.keys, &self.model).await?;
                let rows: Vec<_> = current.iter().map(|c| c.row.clone()).collect();
                let held = self.table.refresh(&rows);
                for (record, held) in current.iter().zip(held) {
                    if !held {
                        // This process already holds a newer version (its own write).
                        continue;
                    }
                    match &record.vector {
                        // A vector the index refuses (another dimension count, not finite)
                        // must not stop the follower: the record stays out of the dense
                        // channel, as the boot scan would leave it.
                        Some(vector) => {
                            let (key, id) = (record.row.key, &record.row.id);
                            if let Err(e) = self.index.upsert_with(key, id, vector, &record.sentences) {
                                tracing::warn!(error = %e, record = %record.row.id, "a followed vector was refused");
                                self.index.mark_dead(record.row.key);
                            }
                        }
                        None => self.index.mark_dead(record.row.key),
                    }
                }
            }
            after = batch.last;
            if !batch.more {
                return Ok(after);
            }
        }
    }

    /// Follow until `stop`: wait for a notification (at most `poll`), catch up, again. A
    /// failed round is logged and retried after `poll`; nothing is skipped.
    pub async fn run(self, mut after: u64, poll: Duration, stop: tokio_util::sync::CancellationToken) {
        loop {
            match self.catch_up(after).await {
                Ok(last) => after = last,
                Err(e) => {
                    tracing::warn!(error = %e, after, "following the store's changes failed; retrying");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(poll) => {}
                    }
                    continue;
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                waited = self.feed.wait_for_change(poll) => {
                    if let Err(e) = waited {
                        tracing::warn!(error = %e, "waiting for the store's changes failed");
                        tokio::time::sleep(poll).await;
                    }
                }
            }
        }
    }
}
