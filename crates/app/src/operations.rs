//! Operations (seed section 1): maintenance the runtime never does on its own. Each is an
//! explicit call (an admin endpoint, a `retold ops` subcommand), audited, and safe to re-run.
//! Today: erasure with compaction.

use std::sync::Arc;

use retold_domain::{
    Clock, Erasure, ErasureReport, ErasureTarget, EventKind, IdGenerator, RecordId, RecordUpdate,
    RecordWriter, Result, Status, VectorIndex, WriteUnit,
};

use crate::sessions::app_event;

/// Records moved to `deleted` per write unit.
const BATCH: usize = 256;

/// What an erasure did, or (a dry run) would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErasureOutcome {
    /// Records the target covers.
    pub matched: u64,
    /// Of those, records that still held content.
    pub erased: u64,
    pub dry_run: bool,
    pub removed: ErasureReport,
    /// The store's size on disk before and after compaction.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// The operations an administrator runs.
#[derive(Clone)]
pub struct OperationsService {
    writer: Arc<dyn RecordWriter>,
    erasure: Arc<dyn Erasure>,
    index: Arc<dyn VectorIndex>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for OperationsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperationsService").finish_non_exhaustive()
    }
}

impl OperationsService {
    pub fn new(
        writer: Arc<dyn RecordWriter>,
        erasure: Arc<dyn Erasure>,
        index: Arc<dyn VectorIndex>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self { writer, erasure, index, clock, ids }
    }

    /// Erase what `target` covers: every record becomes a `deleted` tombstone keeping only
    /// its ids, status and times (through the write path, so the index and the eligibility
    /// filter drop it at once), then its content and everything quoting it is scrubbed and
    /// the store compacted, so the bytes are gone from the file and its WAL. Re-running finds
    /// nothing left to erase. `dry_run` only counts.
    pub async fn erase(&self, target: &ErasureTarget, actor: &str, dry_run: bool) -> Result<ErasureOutcome> {
        let records = self.erasure.erasure_records(target).await?;
        let mut outcome = ErasureOutcome { matched: records.len() as u64, dry_run, ..Default::default() };
        if dry_run {
            return Ok(outcome);
        }
        let live: Vec<_> = records.iter().filter(|r| r.record.status != Status::Deleted).collect();
        for batch in live.chunks(BATCH) {
            let mut unit = WriteUnit::default();
            for keyed in batch {
                let mut next = keyed.record.clone();
                next.status = Status::Deleted;
                next.version += 1;
                let mut event = app_event(
                    self.ids.as_ref(),
                    self.clock.as_ref(),
                    EventKind::RecordErased,
                    None,
                    &[("from", keyed.record.status.as_str().to_owned()), ("by", actor.to_owned())],
                );
                event.record_id = Some(keyed.record.id.clone());
                unit.updates.push(RecordUpdate { expected_version: keyed.record.version, record: next });
                unit.events.push(event);
            }
            self.writer.apply(unit).await?;
        }
        for keyed in &records {
            self.index.mark_dead(keyed.key);
        }
        let ids: Vec<RecordId> = records.iter().map(|r| r.record.id.clone()).collect();
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsErasure,
            None,
            &[("target", target.to_string()), ("by", actor.to_owned()), ("records", ids.len().to_string())],
        );
        outcome.removed = self.erasure.scrub(target, &ids, event).await?;
        outcome.erased = outcome.removed.records;
        let (before, after) = self.erasure.compact().await?;
        outcome.bytes_before = before;
        outcome.bytes_after = after;
        Ok(outcome)
    }
}
