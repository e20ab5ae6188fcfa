//! A derived, in-memory copy of the eligibility filter (seed section 5, step 3).
//!
//! SQLite stays the source of truth: the table is rebuilt from it at boot
//! (`EligibilitySource`) and kept current by wrapping the two ports every record change goes
//! through (`RecordWriter::apply` and `EntityWriter::merge`): after a change commits, the
//! rows it wrote are applied here, a row only over an older version of itself, so two commits
//! finishing in either order leave the newer state. A filter then scans a few flat arrays
//! instead of running a query and decoding tens of thousands of ids.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, EligibilityFilter, EligibilityIndex, EligibilityRow, EligibilitySource, EligibleRecord,
    Entity, EntityId, EntityMerge, EntityWriter, MemoryType, Name, Origin, RecordId, RecordKey, RecordWriter,
    Result, Scope, SessionId, Status, WriteUnit,
};

/// No expiry, no event time: outside every bound.
const NEVER: i64 = i64::MAX;
const NONE: i64 = i64::MIN;
/// Not a turn record.
const NO_SESSION: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Table {
    /// Sorted record keys; row `i` of every column below belongs to `keys[i]`.
    keys: Vec<RecordKey>,
    ids: Vec<RecordId>,
    scopes: Vec<u32>,
    statuses: Vec<Status>,
    types: Vec<MemoryType>,
    /// Expiry in UTC milliseconds, `NEVER` when none.
    expires: Vec<i64>,
    /// Event time in UTC milliseconds, `NONE` when none.
    events: Vec<i64>,
    versions: Vec<u32>,
    /// A conflict link names the record as the lower-trust side.
    losers: Vec<bool>,
    origins: Vec<Origin>,
    /// The interned session a turn record was said in, `NO_SESSION` for other records.
    sessions: Vec<u32>,
    /// Interned scopes.
    scope_ids: HashMap<Scope, u32>,
    /// Interned sessions of turn records.
    session_ids: HashMap<SessionId, u32>,
    by_id: HashMap<RecordId, RecordKey>,
    /// Updates whose insert has not been applied yet (a second writer changed a record
    /// between its commit and this table learning of it); applied when the insert arrives.
    pending: HashMap<RecordId, EligibilityRow>,
    /// Conflict losers whose insert has not been applied yet.
    pending_losers: std::collections::HashSet<RecordId>,
}

impl Table {
    fn scope_id(&mut self, scope: &Scope) -> u32 {
        let next = self.scope_ids.len() as u32;
        *self.scope_ids.entry(scope.clone()).or_insert(next)
    }

    fn session_id(&mut self, session: Option<&SessionId>) -> u32 {
        let Some(session) = session else { return NO_SESSION };
        let next = self.session_ids.len() as u32;
        *self.session_ids.entry(session.clone()).or_insert(next)
    }

    fn upsert(&mut self, row: &EligibilityRow) {
        let scope = self.scope_id(&row.scope);
        let session = self.session_id(row.session.as_ref());
        let expires = row.expires_at.map_or(NEVER, |t| t.timestamp_millis());
        let event = row.event_at.map_or(NONE, |t| t.timestamp_millis());
        match self.keys.binary_search(&row.key) {
            Ok(i) => {
                if self.versions[i] >= row.version {
                    return;
                }
                self.scopes[i] = scope;
                self.statuses[i] = row.status;
                self.types[i] = row.memory_type;
                self.expires[i] = expires;
                self.events[i] = event;
                self.versions[i] = row.version;
                self.losers[i] |= row.conflict_loser;
                self.origins[i] = row.origin;
                self.sessions[i] = session;
            }
            Err(i) => {
                // Keys are rowids: new records nearly always append.
                self.keys.insert(i, row.key);
                self.ids.insert(i, row.id.clone());
                self.scopes.insert(i, scope);
                self.statuses.insert(i, row.status);
                self.types.insert(i, row.memory_type);
                self.expires.insert(i, expires);
                self.events.insert(i, event);
                self.versions.insert(i, row.version);
                let loser = row.conflict_loser || self.pending_losers.remove(&row.id);
                self.losers.insert(i, loser);
                self.origins.insert(i, row.origin);
                self.sessions.insert(i, session);
                self.by_id.insert(row.id.clone(), row.key);
                if let Some(newer) = self.pending.remove(&row.id) {
                    self.upsert(&EligibilityRow { key: row.key, ..newer });
                }
            }
        }
    }
}

/// The in-memory eligibility filter.
#[derive(Debug, Default)]
pub struct EligibilityTable {
    inner: RwLock<Table>,
}

impl EligibilityTable {
    /// A table holding `rows`.
    pub fn from_rows(rows: &[EligibilityRow]) -> Self {
        let mut table = Table::default();
        for row in rows {
            table.upsert(row);
        }
        Self { inner: RwLock::new(table) }
    }

    /// Rebuild from the store's rows.
    pub async fn rebuild(source: &dyn EligibilitySource) -> Result<Self> {
        Ok(Self::from_rows(&source.eligibility_rows().await?))
    }

    /// Records in the table.
    pub fn len(&self) -> usize {
        self.read().keys.len()
    }

    /// Whether the table holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Table> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Table> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Apply committed changes: rows of inserted records, of updated records (by id), and the
    /// records a new conflict link names as the lower-trust side.
    fn apply(
        &self,
        inserted: &[EligibilityRow],
        updated: &[(RecordId, EligibilityRow)],
        losers: &[RecordId],
    ) {
        if inserted.is_empty() && updated.is_empty() && losers.is_empty() {
            return;
        }
        let mut table = self.write();
        for row in inserted {
            table.upsert(row);
        }
        for id in losers {
            match table.by_id.get(id).copied() {
                Some(key) => {
                    if let Ok(i) = table.keys.binary_search(&key) {
                        table.losers[i] = true;
                    }
                }
                None => {
                    table.pending_losers.insert(id.clone());
                }
            }
        }
        for (id, row) in updated {
            match table.by_id.get(id).copied() {
                Some(key) => table.upsert(&EligibilityRow { key, ..row.clone() }),
                None => {
                    let keep = table.pending.get(id).is_none_or(|p| p.version < row.version);
                    if keep {
                        table.pending.insert(id.clone(), row.clone());
                    }
                }
            }
        }
    }

    /// Take rows read from the store now (a replica following other processes' writes):
    /// a row replaces an older version of itself and adds its conflict flag to the same
    /// version; a row older than the table's is left out. Returns, per row, whether the table
    /// now holds that row's version (so its vector may follow it).
    pub fn refresh(&self, rows: &[EligibilityRow]) -> Vec<bool> {
        let mut table = self.write();
        rows.iter()
            .map(|row| match table.keys.binary_search(&row.key) {
                Ok(i) if table.versions[i] > row.version => false,
                Ok(i) if table.versions[i] == row.version => {
                    table.losers[i] |= row.conflict_loser;
                    true
                }
                _ => {
                    table.upsert(row);
                    true
                }
            })
            .collect()
    }

    /// The filter over the table: the same records, in the same (key) order, as the store's
    /// `EligibilityIndex::eligible` for the same filter.
    pub fn filter(&self, filter: &EligibilityFilter) -> Vec<EligibleRecord> {
        let table = self.read();
        let mut out = Vec::new();
        table.scan(filter, |i| out.push(EligibleRecord { key: table.keys[i], id: table.ids[i].clone() }));
        out
    }

    /// The keys of `filter`, without touching the ids.
    pub fn filter_keys(&self, filter: &EligibilityFilter) -> Vec<RecordKey> {
        let table = self.read();
        let mut out = Vec::new();
        table.scan(filter, |i| out.push(table.keys[i]));
        out
    }
}

impl Table {
    /// Call `hit` with the row index of every row the filter admits, in key order.
    fn scan(&self, filter: &EligibilityFilter, mut hit: impl FnMut(usize)) {
        if filter.scopes.is_empty() || filter.statuses.is_empty() {
            return;
        }
        if filter.types.as_ref().is_some_and(Vec::is_empty)
            || filter.origins.as_ref().is_some_and(Vec::is_empty)
        {
            return;
        }
        let mut scope_ok = vec![false; self.scope_ids.len()];
        let mut any = false;
        for scope in &filter.scopes {
            if let Some(&id) = self.scope_ids.get(scope) {
                scope_ok[id as usize] = true;
                any = true;
            }
        }
        if !any {
            return;
        }
        let now = filter.now.timestamp_millis();
        let from = filter.event_from.map(|t| t.timestamp_millis());
        let to = filter.event_to.map(|t| t.timestamp_millis());
        let types = filter.types.as_deref();
        let origins = filter.origins.as_deref();
        // A session no turn record was said in excludes nothing.
        let excluded = filter.excluded_session.as_ref().and_then(|s| self.session_ids.get(s)).copied();
        for i in 0..self.keys.len() {
            if !scope_ok[self.scopes[i] as usize]
                || !filter.statuses.contains(&self.statuses[i])
                || (!filter.include_conflicts && self.losers[i] && self.statuses[i] == Status::Provisional)
                || self.expires[i] <= now
                || types.is_some_and(|t| !t.contains(&self.types[i]))
                || origins.is_some_and(|o| !o.contains(&self.origins[i]))
                || excluded.is_some_and(|s| self.sessions[i] == s)
            {
                continue;
            }
            let event = self.events[i];
            if from.is_some_and(|f| event == NONE || event < f)
                || to.is_some_and(|t| event == NONE || event >= t)
            {
                continue;
            }
            hit(i);
        }
    }
}

#[async_trait]
impl EligibilityIndex for EligibilityTable {
    async fn eligible(&self, filter: &EligibilityFilter) -> Result<Vec<EligibleRecord>> {
        Ok(self.filter(filter))
    }

    async fn eligible_keys(&self, filter: &EligibilityFilter) -> Result<Vec<RecordKey>> {
        Ok(self.filter_keys(filter))
    }
}

/// A `RecordWriter` that keeps an `EligibilityTable` current with what it commits.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct TrackedWriter {
    pub inner: Arc<dyn RecordWriter>,
    pub table: Arc<EligibilityTable>,
}

#[async_trait]
impl RecordWriter for TrackedWriter {
    async fn apply(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>> {
        let inserts: Vec<EligibilityRow> =
            unit.inserts.iter().map(|r| EligibilityRow::of(RecordKey(0), r)).collect();
        let updates: Vec<(RecordId, EligibilityRow)> = unit
            .updates
            .iter()
            .map(|u| (u.record.id.clone(), EligibilityRow::of(RecordKey(0), &u.record)))
            .collect();
        let losers: Vec<RecordId> = unit.conflicts.iter().map(|c| c.conflicting_id.clone()).collect();
        let keys = self.inner.apply(unit).await?;
        let inserted: Vec<EligibilityRow> =
            keys.iter().zip(inserts).map(|(key, row)| EligibilityRow { key: key.key, ..row }).collect();
        // Inserted rows first, so a conflict naming a new record finds it.
        self.table.apply(&inserted, &updates, &losers);
        Ok(keys)
    }
}

/// An `EntityWriter` whose merges (which change records) keep an `EligibilityTable` current.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct TrackedEntityWriter {
    pub inner: Arc<dyn EntityWriter>,
    pub table: Arc<EligibilityTable>,
}

#[async_trait]
impl EntityWriter for TrackedEntityWriter {
    async fn create_entity(&self, entity: Entity, aliases: Vec<Name>, event: AuditEvent) -> Result<()> {
        self.inner.create_entity(entity, aliases, event).await
    }

    async fn add_alias(&self, id: &EntityId, alias: Name, event: AuditEvent) -> Result<()> {
        self.inner.add_alias(id, alias, event).await
    }

    async fn remove_alias(&self, id: &EntityId, alias: &Name, event: AuditEvent) -> Result<()> {
        self.inner.remove_alias(id, alias, event).await
    }

    async fn merge(&self, merge: EntityMerge) -> Result<()> {
        let updates: Vec<(RecordId, EligibilityRow)> = merge
            .updates
            .iter()
            .map(|u| (u.record.id.clone(), EligibilityRow::of(RecordKey(0), &u.record)))
            .collect();
        let losers: Vec<RecordId> = merge.conflicts.iter().map(|c| c.conflicting_id.clone()).collect();
        self.inner.merge(merge).await?;
        self.table.apply(&[], &updates, &losers);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use retold_domain::chrono::{TimeZone, Utc};

    use super::*;

    fn row(key: u64, version: u32, status: Status) -> EligibilityRow {
        EligibilityRow {
            key: RecordKey(key),
            id: RecordId::new(format!("mem_{key}")).unwrap(),
            scope: Scope::parse("user:u").unwrap(),
            status,
            memory_type: MemoryType::Semantic,
            expires_at: None,
            event_at: None,
            version,
            conflict_loser: false,
            origin: Origin::Memory,
            session: None,
        }
    }

    fn eligible_keys(table: &EligibilityTable) -> Vec<u64> {
        let filter = EligibilityFilter {
            scopes: vec![Scope::parse("user:u").unwrap()],
            statuses: EligibilityFilter::statuses_for(false),
            now: Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap(),
            types: None,
            event_from: None,
            event_to: None,
            include_conflicts: false,
            origins: None,
            excluded_session: None,
        };
        table.filter(&filter).into_iter().map(|e| e.key.0).collect()
    }

    #[test]
    fn an_older_version_never_overwrites_a_newer_one() {
        let table = EligibilityTable::from_rows(&[row(1, 1, Status::Confirmed)]);
        let id = RecordId::new("mem_1").unwrap();
        // Two commits finish in the other order: version 3 (deleted) lands before version 2.
        table.apply(&[], &[(id.clone(), row(1, 3, Status::Deleted))], &[]);
        table.apply(&[], &[(id, row(1, 2, Status::Confirmed))], &[]);
        assert!(eligible_keys(&table).is_empty(), "the newer, deleted state stays");
    }

    #[test]
    fn an_update_that_arrives_before_its_insert_is_kept_and_applied() {
        let table = EligibilityTable::default();
        let id = RecordId::new("mem_7").unwrap();
        table.apply(&[], &[(id, row(7, 2, Status::Deleted))], &[]);
        table.apply(&[row(7, 1, Status::Confirmed)], &[], &[]);
        assert!(eligible_keys(&table).is_empty(), "the pending newer version wins over the insert");
        table.apply(&[row(3, 1, Status::Confirmed), row(9, 1, Status::Confirmed)], &[], &[]);
        assert_eq!(eligible_keys(&table), [3, 9], "out-of-order inserts stay ordered by key");
    }
}
