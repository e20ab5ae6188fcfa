//! Operations (seed section 1): maintenance the runtime never does on its own. Each is an
//! explicit call (an admin endpoint, a `retold ops` subcommand), audited, and safe to re-run.
//! Today: expiry, transcript retention, erasure with compaction, snapshots and checks, and
//! due-review flagging into the review queue.

use std::sync::Arc;

use retold_domain::{
    Clock, DomainError, Erasure, ErasureReport, ErasureTarget, EventKind, ExpiryIndex, IdGenerator,
    KeyedRecord, RecordId, RecordUpdate, RecordWriter, Result, Retention, RetentionReport, Snapshots, Status,
    StoreCheck, VectorIndex, WriteUnit,
};
use retold_domain::{
    DueReviewRules, RecordReader, ReviewAction, ReviewId, ReviewItem, ReviewQueue, ReviewReason,
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
    /// Earlier snapshots that held content of the erased records, how many, and whether they
    /// were rewritten (then they hold none).
    pub snapshots_holding: Vec<(std::path::PathBuf, u64, bool)>,
}

/// A snapshot taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOutcome {
    pub path: std::path::PathBuf,
    pub bytes: u64,
    /// The snapshot's own check.
    pub check: StoreCheck,
}

/// What an expiry run did, or (a dry run) would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpiryOutcome {
    pub dry_run: bool,
    /// Records moved to `expired` (or, on a dry run, due to be).
    pub expired: u64,
    /// The first of them, oldest expiry first (at most 100).
    pub ids: Vec<RecordId>,
}

/// What the operations use; the defaults are `config/default.yaml`'s `operations` section.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationsConfig {
    /// Session turns older than this are deleted by [`OperationsService::retention`].
    pub transcript_retention: retold_domain::chrono::TimeDelta,
    /// Search traces older than this are deleted by [`OperationsService::retention`].
    pub search_trace_retention: retold_domain::chrono::TimeDelta,
    /// Provisional records expiring within this are flagged for review.
    pub review_expiring_within: retold_domain::chrono::TimeDelta,
    /// Confirmed records below this confidence …
    pub review_low_confidence_below: f64,
    /// … that nothing created or reinforced for this long are flagged for review.
    pub review_stale_after: retold_domain::chrono::TimeDelta,
}

impl Default for OperationsConfig {
    fn default() -> Self {
        Self {
            transcript_retention: retold_domain::chrono::TimeDelta::days(30),
            search_trace_retention: retold_domain::chrono::TimeDelta::days(30),
            review_expiring_within: retold_domain::chrono::TimeDelta::hours(24),
            review_low_confidence_below: 0.7,
            review_stale_after: retold_domain::chrono::TimeDelta::days(90),
        }
    }
}

/// What a flagging run added to the review queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagOutcome {
    /// New items, per reason (records already waiting for the same reason are not added twice).
    pub flagged: Vec<(ReviewReason, u64)>,
}

/// A resolved review and what it did to its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub item: ReviewItem,
    pub from: Status,
    pub to: Status,
}

/// What a retention run did, or (a dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionOutcome {
    pub dry_run: bool,
    pub force: bool,
    /// Turns created before this were in scope.
    pub before: retold_domain::Timestamp,
    pub report: RetentionReport,
    /// Search traces written before this were in scope, and how many there were.
    pub traces_before: retold_domain::Timestamp,
    pub search_traces: u64,
}

/// A snapshot file in the snapshot directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    pub name: String,
    pub bytes: u64,
    pub modified_at: Option<retold_domain::Timestamp>,
}

/// `OperationsService::status`.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationsStatus {
    pub snapshots: Vec<SnapshotFile>,
    pub events: Vec<retold_domain::AuditEvent>,
}

/// Most record ids an outcome lists.
const LISTED: usize = 100;

/// The operations an administrator runs.
#[derive(Clone)]
pub struct OperationsService {
    writer: Arc<dyn RecordWriter>,
    erasure: Arc<dyn Erasure>,
    expiry: Arc<dyn ExpiryIndex>,
    snapshots: Arc<dyn Snapshots>,
    retention: Arc<dyn Retention>,
    reviews: Arc<dyn ReviewQueue>,
    activation: Arc<dyn retold_domain::ActivationStore>,
    records: Arc<dyn RecordReader>,
    audit: Arc<dyn retold_domain::AuditLog>,
    inspection: Arc<dyn retold_domain::Inspection>,
    graph: Arc<dyn retold_domain::RecordGraph>,
    entities: Arc<dyn retold_domain::EntityReader>,
    config: OperationsConfig,
    snapshot_dir: std::path::PathBuf,
    index: Arc<dyn VectorIndex>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    /// Held by an erasure and by a snapshot, so they never overlap: a snapshot that began
    /// before an erasure's scrub and ended after its look at the snapshot directory would keep
    /// the erased content unlisted. Shared by every clone of the service.
    files: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for OperationsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperationsService").finish_non_exhaustive()
    }
}

impl OperationsService {
    /// Operations over `stores`; snapshots are written into `snapshot_dir`.
    pub fn new(
        stores: &crate::Stores,
        config: OperationsConfig,
        snapshot_dir: std::path::PathBuf,
        index: Arc<dyn VectorIndex>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            writer: stores.writer.clone(),
            erasure: stores.erasure.clone(),
            expiry: stores.expiry.clone(),
            snapshots: stores.snapshots.clone(),
            retention: stores.retention.clone(),
            reviews: stores.reviews.clone(),
            activation: stores.activation.clone(),
            records: stores.records.clone(),
            audit: stores.audit.clone(),
            inspection: stores.inspection.clone(),
            graph: stores.graph.clone(),
            entities: stores.entities.clone(),
            config,
            snapshot_dir,
            index,
            clock,
            ids,
            files: Arc::default(),
        }
    }

    /// The memories of a user (`user:<u>` and every `agent:*/<u>`) or of one scope, to take
    /// elsewhere: every record but deleted and erased ones (history included: superseded,
    /// expired, provisional), oldest first; their entity links; the entities they link to,
    /// with aliases, merged ones with the entity they were merged into; the conflict links
    /// between them. No embedding: the importing store embeds with its own model.
    pub async fn export(&self, target: &ErasureTarget) -> Result<retold_ingest::MemorySet> {
        if matches!(target, ErasureTarget::Record(_)) {
            return Err(DomainError::Invalid { field: "target", reason: "export a user or a scope".into() });
        }
        let mut keyed = self.erasure.erasure_records(target).await?;
        keyed.retain(|k| k.record.status != Status::Deleted);
        keyed.sort_by_key(|k| k.key);
        let mut records: Vec<retold_domain::MemoryRecord> = keyed.into_iter().map(|k| k.record).collect();
        let ids: Vec<RecordId> = records.iter().map(|r| r.id.clone()).collect();
        // A version that was forgotten (deleted) is not exported: the record that superseded
        // it goes without the reference, as its history now begins with it.
        let kept: std::collections::HashSet<RecordId> = ids.iter().cloned().collect();
        for record in &mut records {
            if record.supersedes_id.as_ref().is_some_and(|older| !kept.contains(older)) {
                record.supersedes_id = None;
            }
        }
        let mut links = Vec::new();
        let mut conflicts = Vec::new();
        for chunk in ids.chunks(500) {
            links.extend(self.graph.links_of(chunk).await?);
            conflicts.extend(self.graph.conflicts_of(chunk).await?);
        }
        let exported: std::collections::HashSet<&RecordId> = ids.iter().collect();
        conflicts.retain(|c| exported.contains(&c.record_id) && exported.contains(&c.conflicting_id));
        conflicts.sort_by(|a, b| (&a.record_id, &a.conflicting_id).cmp(&(&b.record_id, &b.conflicting_id)));
        conflicts.dedup();
        // The linked entities, and the entities they were merged into (a link may name a
        // merged entity; following it needs the survivor).
        let mut wanted: Vec<retold_domain::EntityId> = links.iter().map(|l| l.entity_id.clone()).collect();
        let mut entities = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(id) = wanted.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            let entity = self
                .entities
                .entity(&id)
                .await?
                .ok_or_else(|| DomainError::NotFound { what: "entity", id: id.to_string() })?;
            if let Some(into) = &entity.merged_into {
                wanted.push(into.clone());
            }
            let aliases = self.entities.aliases(&id).await?;
            entities.push((entity, aliases));
        }
        entities.sort_by(|(a, _), (b, _)| {
            (a.merged_into.is_some(), &a.created_at, &a.id).cmp(&(
                b.merged_into.is_some(),
                &b.created_at,
                &b.id,
            ))
        });
        Ok(retold_ingest::MemorySet { entities, records, links, conflicts })
    }

    /// Move every provisional or confirmed record whose `expires_at` passed to `expired`
    /// (seed section 3: the record and its indexes stay; eligibility already hid it), each
    /// with a `record.expired` event naming the operation. A record changed meanwhile is
    /// read again; re-running expires nothing new. `dry_run` only lists.
    pub async fn expire(&self, actor: &str, dry_run: bool) -> Result<ExpiryOutcome> {
        let now = self.clock.now();
        let mut outcome = ExpiryOutcome { dry_run, ..Default::default() };
        let mut contended = 0;
        loop {
            let due = self.expiry.due_to_expire(now, BATCH).await?;
            if dry_run {
                // Count them all; list the first.
                let mut all = due;
                if all.len() == BATCH {
                    all = self.expiry.due_to_expire(now, usize::MAX).await?;
                }
                outcome.expired = all.len() as u64;
                outcome.ids = all.iter().take(LISTED).map(|r| r.record.id.clone()).collect();
                return Ok(outcome);
            }
            if due.is_empty() {
                // Every run leaves one event, so "when did expiry last run" has an answer.
                let event = app_event(
                    self.ids.as_ref(),
                    self.clock.as_ref(),
                    EventKind::OpsExpiry,
                    None,
                    &[("expired", outcome.expired.to_string()), ("actor", actor.to_owned())],
                );
                self.audit.append(vec![event]).await?;
                return Ok(outcome);
            }
            match self.expire_batch(&due, actor).await {
                Ok(()) => {
                    outcome.expired += due.len() as u64;
                    let room = LISTED.saturating_sub(outcome.ids.len());
                    outcome.ids.extend(due.iter().take(room).map(|r| r.record.id.clone()));
                }
                Err(DomainError::Contention(_)) if contended < 8 => contended += 1,
                Err(error) => return Err(error),
            }
        }
    }

    /// Add to `unit` the change of `record` to `to` (a confirmed record loses its expiry), with
    /// its `kind` event naming `by`.
    fn push_status(
        &self,
        unit: &mut WriteUnit,
        record: &retold_domain::MemoryRecord,
        to: Status,
        kind: EventKind,
        by: &str,
    ) {
        let mut next = record.clone();
        next.status = to;
        next.version += 1;
        if to == Status::Confirmed {
            next.expires_at = None;
        }
        let details = [
            ("from", record.status.as_str().to_owned()),
            ("to", to.as_str().to_owned()),
            ("by", by.to_owned()),
        ];
        let mut event = app_event(self.ids.as_ref(), self.clock.as_ref(), kind, None, &details);
        event.record_id = Some(record.id.clone());
        unit.updates.push(RecordUpdate { expected_version: record.version, record: next });
        unit.events.push(event);
    }

    async fn expire_batch(&self, due: &[KeyedRecord], actor: &str) -> Result<()> {
        let mut unit = WriteUnit::default();
        for keyed in due {
            let by = format!("ops expire ({actor})");
            self.push_status(&mut unit, &keyed.record, Status::Expired, EventKind::RecordExpired, &by);
        }
        self.writer.apply(unit).await.map(|_| ())
    }

    /// Erase what `target` covers: every record becomes a `deleted` tombstone keeping only
    /// its ids, status and times (through the write path, so the index and the eligibility
    /// filter drop it at once), then its content and everything quoting it is scrubbed and
    /// the store compacted, so the bytes are gone from the file and its WAL. Re-running finds
    /// nothing left to erase. `dry_run` only counts.
    ///
    /// Earlier snapshots that still hold content of the erased records are listed, and with
    /// `rewrite_snapshots` erased in place too.
    pub async fn erase(
        &self,
        target: &ErasureTarget,
        actor: &str,
        dry_run: bool,
        rewrite_snapshots: bool,
    ) -> Result<ErasureOutcome> {
        let _files = self.files.lock().await;
        let records = self.erasure.erasure_records(target).await?;
        let mut outcome = ErasureOutcome { matched: records.len() as u64, dry_run, ..Default::default() };
        if dry_run {
            return Ok(outcome);
        }
        let live: Vec<_> = records.iter().filter(|r| r.record.status != Status::Deleted).collect();
        // The tombstones drop the records' vectors in their own commits; counted first, so
        // the report says what the erasure removed.
        let ids: Vec<RecordId> = records.iter().map(|r| r.record.id.clone()).collect();
        let vectors = self.erasure.vectors_of(&ids).await?;
        for batch in live.chunks(BATCH) {
            let mut unit = WriteUnit::default();
            for keyed in batch {
                self.push_status(&mut unit, &keyed.record, Status::Deleted, EventKind::RecordErased, actor);
            }
            self.writer.apply(unit).await?;
        }
        for keyed in &records {
            self.index.mark_dead(keyed.key);
        }
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsErasure,
            None,
            &[("target", target.to_string()), ("by", actor.to_owned()), ("records", ids.len().to_string())],
        );
        outcome.removed = self.erasure.scrub(target, &ids, event.clone()).await?;
        outcome.removed.embeddings += vectors;
        outcome.erased = outcome.removed.records;
        let (before, after) = self.erasure.compact().await?;
        outcome.bytes_before = before;
        outcome.bytes_after = after;
        for snapshot in self.snapshot_files()? {
            let held = self.snapshots.snapshot_holds(&snapshot, &ids).await?;
            if held == 0 {
                continue;
            }
            if rewrite_snapshots {
                self.snapshots.rewrite_snapshot(&snapshot, target, &ids, event.clone()).await?;
                let left = self.snapshots.snapshot_holds(&snapshot, &ids).await?;
                if left > 0 {
                    return Err(DomainError::backend(
                        "snapshot rewrite",
                        format!("{} still holds {left} erased records", snapshot.display()),
                    ));
                }
            }
            outcome.snapshots_holding.push((snapshot, held, rewrite_snapshots));
        }
        Ok(outcome)
    }

    /// What an operator checks first: the snapshots on disk (newest first, with size and
    /// time) and the latest `per_kind` events of each operation (expiry runs, snapshots,
    /// erasures, retention, re-embedding, model switches), newest first, so a burst of one
    /// kind never hides the last of another.
    pub async fn status(&self, per_kind: usize) -> Result<OperationsStatus> {
        let mut snapshots = Vec::new();
        for path in self.snapshot_files()?.into_iter().rev() {
            let meta = std::fs::metadata(&path).map_err(|e| DomainError::backend("snapshot directory", e))?;
            snapshots.push(SnapshotFile {
                name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                bytes: meta.len(),
                modified_at: meta.modified().ok().map(retold_domain::Timestamp::from),
            });
        }
        let mut events = Vec::new();
        for kind in [
            EventKind::OpsExpiry,
            EventKind::OpsSnapshot,
            EventKind::OpsErasure,
            EventKind::OpsRetention,
            EventKind::OpsReembed,
            EventKind::OpsModelSwitch,
        ] {
            events.extend(self.inspection.latest_events(kind.as_str(), per_kind).await?);
        }
        events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.id.as_str().cmp(a.id.as_str())));
        Ok(OperationsStatus { snapshots, events })
    }

    /// The snapshots in the snapshot directory, oldest first.
    pub fn snapshot_files(&self) -> Result<Vec<std::path::PathBuf>> {
        let entries = match std::fs::read_dir(&self.snapshot_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(DomainError::backend("snapshot directory", e)),
        };
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "db"))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Take a consistent snapshot while writes continue (`retold-<UTC time>.db` in the
    /// snapshot directory), then check it.
    pub async fn snapshot(&self) -> Result<SnapshotOutcome> {
        let _files = self.files.lock().await;
        let name = format!("retold-{}.db", self.clock.now().format("%Y%m%dT%H%M%S%.3fZ"));
        let path = self.snapshot_dir.join(name);
        let bytes = self.snapshots.snapshot(&path).await?;
        let check = self.snapshots.verify_file(&path).await?;
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsSnapshot,
            None,
            &[("file", file), ("bytes", bytes.to_string()), ("ok", check.is_ok().to_string())],
        );
        self.audit.append(vec![event]).await?;
        Ok(SnapshotOutcome { path, bytes, check })
    }

    /// Delete session turns older than the configured retention, in sessions whose
    /// extraction has run (every session with `force`), and search traces older than theirs;
    /// records keep their own evidence.
    pub async fn retention(&self, actor: &str, force: bool, dry_run: bool) -> Result<RetentionOutcome> {
        let now = self.clock.now();
        let before = now - self.config.transcript_retention;
        let traces_before = now - self.config.search_trace_retention;
        let search_traces = self.retention.purge_search_traces(traces_before, dry_run).await?;
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsRetention,
            None,
            &[
                ("by", actor.to_owned()),
                ("before", before.to_rfc3339()),
                ("force", force.to_string()),
                ("search_traces", search_traces.to_string()),
            ],
        );
        let report = self.retention.purge_turns(before, force, dry_run, event.clone()).await?;
        // The turns' purge records the event when it deletes turns; traces alone are audited here.
        if !dry_run && report.turns == 0 && search_traces > 0 {
            self.audit.append(vec![event]).await?;
        }
        Ok(RetentionOutcome { dry_run, force, before, report, traces_before, search_traces })
    }

    /// Flag the records that need a person's look into the review queue: provisional records
    /// about to expire, provisional records losing a conflict to a record still active, and
    /// low-confidence confirmed records nothing reinforced for long. Safe to re-run: a record
    /// already waiting for the same reason is not added again.
    pub async fn flag_due_reviews(&self, actor: &str) -> Result<FlagOutcome> {
        let now = self.clock.now();
        let rules = DueReviewRules {
            now,
            expiring_before: now + self.config.review_expiring_within,
            low_confidence_below: self.config.review_low_confidence_below,
            stale_before: now - self.config.review_stale_after,
        };
        let due = self.reviews.due_for_review(&rules).await?;
        let items: Vec<ReviewItem> = due
            .iter()
            .map(|(record_id, reason)| ReviewItem {
                id: ReviewId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
                record_id: record_id.clone(),
                reason: *reason,
                flagged_at: now,
                resolved: None,
            })
            .collect();
        let mut outcome = FlagOutcome::default();
        for reason in ReviewReason::ALL {
            outcome.flagged.push((reason, items.iter().filter(|i| i.reason == reason).count() as u64));
        }
        let details: Vec<(&str, String)> = std::iter::once(("by", actor.to_owned()))
            .chain(outcome.flagged.iter().map(|(reason, n)| (reason.as_str(), n.to_string())))
            .collect();
        let event =
            app_event(self.ids.as_ref(), self.clock.as_ref(), EventKind::ReviewFlagged, None, &details);
        self.reviews.add_reviews(&items, event).await?;
        Ok(outcome)
    }

    /// The review queue, newest first.
    pub async fn reviews(&self, open_only: bool, limit: usize) -> Result<Vec<ReviewItem>> {
        self.reviews.reviews(open_only, limit).await
    }

    /// Resolve a review: confirm (confirmed, expiry cleared), expire or forget its record
    /// through the write path, then close the item. A record already in that status is left
    /// as it is; a transition that makes no sense (confirming a deleted record) is a conflict.
    pub async fn resolve_review(
        &self,
        id: &ReviewId,
        action: ReviewAction,
        actor: &str,
    ) -> Result<Resolution> {
        let not_found = || DomainError::NotFound { what: "review", id: id.to_string() };
        let item = self.reviews.review(id).await?.ok_or_else(not_found)?;
        if item.resolved.is_some() {
            return Err(DomainError::Conflict(format!("review {id} is resolved already")));
        }
        let record = self
            .records
            .get(&item.record_id)
            .await?
            .ok_or_else(|| DomainError::NotFound { what: "record", id: item.record_id.to_string() })?;
        let activation = item.reason == ReviewReason::Activation;
        let verdict = match action {
            ReviewAction::Approve => Some(retold_domain::ReviewVerdict::Approved),
            ReviewAction::Reject => Some(retold_domain::ReviewVerdict::Rejected),
            _ => None,
        };
        if verdict.is_some() != activation && action != ReviewAction::Forget {
            return Err(DomainError::Conflict(format!(
                "a {} review is resolved with {}, not {}",
                item.reason.as_str(),
                if activation { "approve, reject or forget" } else { "confirm, expire or forget" },
                action.as_str()
            )));
        }
        let (to, kind) = match action {
            ReviewAction::Confirm => (Status::Confirmed, EventKind::RecordConfirmed),
            ReviewAction::Expire => (Status::Expired, EventKind::RecordExpired),
            ReviewAction::Forget => (Status::Deleted, EventKind::RecordForgotten),
            ReviewAction::Approve | ReviewAction::Reject => (record.status, EventKind::ReviewResolved),
        };
        let from = record.status;
        let allowed = match to {
            Status::Confirmed => matches!(from, Status::Provisional | Status::Expired | Status::Confirmed),
            Status::Expired => matches!(from, Status::Provisional | Status::Confirmed | Status::Expired),
            _ => from != Status::Superseded || to == Status::Deleted,
        };
        if verdict.is_none() && (!allowed || (from == Status::Deleted && to != Status::Deleted)) {
            return Err(DomainError::Conflict(format!(
                "a {} record cannot be {}ed",
                from.as_str(),
                action.as_str()
            )));
        }
        if let Some(verdict) = verdict {
            // The record's status does not change; a decision withdrawn meanwhile (the record
            // was superseded, forgotten or expired) closed its review already.
            self.activation.set_verdict(&record.id, verdict).await?;
        }
        let by = format!("review {id} ({actor})");
        if from != to {
            let key = if to == Status::Deleted { self.records.key_of(&record.id).await? } else { None };
            let mut unit = WriteUnit::default();
            self.push_status(&mut unit, &record, to, kind, &by);
            self.writer.apply(unit).await?;
            if let Some(key) = key {
                self.index.mark_dead(key);
            }
        }
        let mut event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::ReviewResolved,
            None,
            &[("review_id", id.to_string()), ("action", action.as_str().to_owned()), ("by", by)],
        );
        event.record_id = Some(record.id.clone());
        let now = self.clock.now();
        self.reviews.resolve_review(id, action, now, event).await?;
        let item = ReviewItem { resolved: Some((now, action)), ..item };
        Ok(Resolution { item, from, to })
    }

    /// Check the live store: integrity, FTS rows and embeddings against records.
    pub async fn verify(&self) -> Result<StoreCheck> {
        self.snapshots.verify().await
    }
}
