//! `SqliteStore`: opening, migrating, and the record store port.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, AuditLog, ConflictLink, CurrentFacts, EligibilityFilter, EligibilityIndex, EligibilityRow,
    EligibilitySource, EligibleRecord, EmbeddingRow, EmbeddingScan, EmbeddingSource, EntityId, KeyedRecord,
    LinkedRecord, MemoryRecord, RecordEntityLink, RecordGraph, RecordId, RecordKey, RecordReader,
    RecordWriter, Result as DomainResult, Scope, WriteUnit,
};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend,
    SqliteTransactionMode, Statement, TransactionOptions, TransactionTrait, Value,
};
use sea_orm_migration::MigratorTrait;

use crate::convert::{self, RECORD_COLUMNS, millis, record_values};
use crate::error::StoreError;
pub(crate) use crate::error::duplicate_or;
use crate::migration::Migrator;

/// SQLite `synchronous` level under WAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = NORMAL`: a commit survives a process crash; the last commits may be
    /// lost on power loss. WAL keeps the database consistent either way.
    Normal,
    /// `synchronous = FULL`: a commit also survives power loss, at a latency cost.
    Full,
}

/// How to open the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub path: PathBuf,
    pub durability: Durability,
    /// How long a connection waits for a lock before failing.
    pub busy_timeout: Duration,
    /// Connections in the read pool.
    pub read_connections: u32,
}

impl StoreConfig {
    /// Defaults for a file: NORMAL durability, 5 s busy timeout, 4 readers.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            durability: Durability::Normal,
            busy_timeout: Duration::from_secs(5),
            read_connections: 4,
        }
    }
}

/// The canonical SQLite store. One writer connection (writes are serialised in process and
/// each is one IMMEDIATE transaction), a pool of readers; WAL lets readers run during a write.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) writer: DatabaseConnection,
    pub(crate) reader: DatabaseConnection,
    /// search_log appends, written off the request path.
    pub(crate) traces: std::sync::Arc<crate::search_log::TraceWriter>,
    /// The database file (its WAL and shared memory sit beside it).
    pub(crate) path: std::sync::Arc<PathBuf>,
}

pub(crate) fn stmt(sql: &str, values: impl IntoIterator<Item = Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)
}

/// Which pool a connection belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pool {
    Writer,
    Reader,
}

async fn connect(
    config: &StoreConfig,
    pool: Pool,
    connections: u32,
) -> Result<DatabaseConnection, StoreError> {
    let path = config.path.clone();
    let durability = config.durability;
    let busy = config.busy_timeout;
    let mut options = ConnectOptions::new("sqlite://retold.db?mode=rwc");
    options
        .max_connections(connections)
        .min_connections(1)
        .acquire_timeout(busy + Duration::from_secs(25))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |o| {
            o.filename(&path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(match durability {
                    Durability::Normal => SqliteSynchronous::Normal,
                    Durability::Full => SqliteSynchronous::Full,
                })
                .busy_timeout(busy)
                .foreign_keys(true)
                .pragma("temp_store", "memory")
        });
    if pool == Pool::Writer {
        // When a statement fails with SQLITE_FULL or an I/O error, SQLite may roll the whole
        // transaction back itself; the ROLLBACK sqlx then sends fails ("no transaction is
        // active") and sqlx keeps counting the transaction as open. The connection's next
        // BEGIN becomes a SAVEPOINT inside a transaction that is never committed, so every
        // later write on it would be acknowledged and then lost. A writer connection that
        // comes back to the pool still counting a transaction is closed instead (the pool
        // opens a fresh one).
        options.map_sqlx_sqlite_pool_opts(|pool| {
            pool.after_release(|conn, _| {
                Box::pin(async move {
                    use sea_orm::sqlx::Connection;
                    conn.ping().await?; // runs the rollback the transaction queued on drop
                    if conn.is_in_transaction() {
                        tracing::warn!(
                            "closing a writer connection whose transaction SQLite already ended \
                             (after a full disk or an I/O error)"
                        );
                        return Ok(false);
                    }
                    Ok(true)
                })
            })
        });
    }
    Ok(Database::connect(options).await?)
}

impl SqliteStore {
    /// Open (creating when missing) and migrate. A database written by a newer Retold is
    /// refused before anything is changed.
    pub async fn open(config: &StoreConfig) -> Result<Self, StoreError> {
        if let Some(parent) = config.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let writer = connect(config, Pool::Writer, 1).await?;
        refuse_newer(&writer, &config.path).await?;
        Migrator::up(&writer, None).await?;
        let reader = connect(config, Pool::Reader, config.read_connections.max(1)).await?;
        let traces = std::sync::Arc::new(crate::search_log::TraceWriter::start(
            writer.clone(),
            crate::search_log::insert_trace,
        ));
        Ok(Self { writer, reader, traces, path: std::sync::Arc::new(config.path.clone()) })
    }

    /// Write every search trace handed so far.
    pub async fn flush_traces(&self) {
        self.traces.flush().await;
    }

    /// Write the waiting search traces, then close both pools.
    pub async fn close(self) -> Result<(), StoreError> {
        self.traces.flush().await;
        self.reader.close().await?;
        self.writer.close().await?;
        Ok(())
    }

    pub(crate) async fn begin_write(&self) -> Result<DatabaseTransaction, StoreError> {
        Ok(self
            .writer
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await?)
    }

    async fn apply_unit(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>, StoreError> {
        let txn = self.begin_write().await?;
        if let Some(turn) = &unit.turn {
            crate::sessions::insert_turn(&txn, turn).await?;
        }
        for guard in &unit.guards {
            check_guard(&txn, guard).await?;
        }
        for new in unit.entities.iter().filter(|n| n.name_was_unknown) {
            // The name was unknown when the writer resolved it; if a concurrent write created
            // it since, fail so the writer resolves again instead of duplicating the entity.
            let name = new.entity.canonical_name.folded();
            let taken = txn
                .query_one_raw(stmt(
                    "SELECT 1 AS one FROM entities WHERE scope_kind = ? AND scope_id = ? AND status != 'merged' \
                     AND (name_folded = ? OR id IN (SELECT entity_id FROM entity_aliases WHERE alias_folded = ?))",
                    [
                        new.entity.scope.kind().as_str().into(),
                        new.entity.scope.id().into(),
                        name.clone().into(),
                        name.into(),
                    ],
                ))
                .await?;
            if taken.is_some() {
                return Err(StoreError::Contended(format!(
                    "an entity named {:?} was created concurrently in {}",
                    new.entity.canonical_name.as_str(),
                    new.entity.scope
                )));
            }
        }
        for new in &unit.entities {
            crate::entities::insert_entity(&txn, &new.entity, &new.aliases).await?;
        }
        let mut inserted = Vec::with_capacity(unit.inserts.len());
        for record in &unit.inserts {
            let values = record_values(record);
            let placeholders = vec!["?"; values.len()].join(", ");
            let result = txn
                .execute_raw(stmt(
                    &format!("INSERT INTO records ({RECORD_COLUMNS}) VALUES ({placeholders})"),
                    values,
                ))
                .await
                .map_err(|e| duplicate_or(e, || format!("record {} already exists", record.id)))?;
            inserted.push(EligibleRecord {
                key: retold_domain::RecordKey(result.last_insert_id()),
                id: record.id.clone(),
            });
        }
        for update in &unit.updates {
            apply_update(&txn, update).await?;
        }
        for link in &unit.links {
            insert_link(&txn, link).await?;
        }
        // FTS rows after the links, so the denormalised aliases are complete. The content
        // column holds the record's indexed text (its content, then its context): a reply is
        // found by the words of what it answers, as its vector is.
        for record in &unit.inserts {
            if record.status.keeps_indexes() {
                txn.execute_raw(stmt(
                    &format!(
                        "INSERT INTO records_fts (rowid, record_id, content, subject, aliases) \
                         SELECT r.key, r.id, ?, coalesce(r.subject, ''), {} \
                         FROM records r WHERE r.id = ?",
                        aliases_of("r.id")
                    ),
                    [record.embedding_text().into(), record.id.as_str().into()],
                ))
                .await?;
            }
        }
        for row in &unit.embeddings {
            insert_embedding(&txn, row).await?;
        }
        for conflict in &unit.conflicts {
            txn.execute_raw(stmt(
                "INSERT OR IGNORE INTO record_conflicts (record_id, conflicting_id) VALUES (?, ?)",
                [conflict.record_id.as_str().into(), conflict.conflicting_id.as_str().into()],
            ))
            .await?;
        }
        for event in &unit.events {
            insert_event(&txn, event).await?;
        }
        if let Some(receipt) = &unit.receipt {
            crate::receipts::insert_receipt(&txn, receipt).await?;
        }
        txn.commit().await?;
        Ok(inserted)
    }

    pub(crate) async fn select_keyed(
        &self,
        where_sql: &str,
        values: Vec<Value>,
    ) -> Result<Vec<KeyedRecord>, StoreError> {
        let rows = self
            .reader
            .query_all_raw(stmt(
                &format!("SELECT key, {RECORD_COLUMNS} FROM records WHERE {where_sql}"),
                values,
            ))
            .await?;
        rows.iter()
            .map(|row| {
                Ok(KeyedRecord { key: convert::record_key(row)?, record: convert::record_from_row(row)? })
            })
            .collect()
    }

    /// Audit events matching `where_sql` (one placeholder, bound to `value`), oldest first.
    pub(crate) async fn select_events(
        &self,
        where_sql: &str,
        value: &str,
    ) -> Result<Vec<AuditEvent>, StoreError> {
        let rows = self
            .reader
            .query_all_raw(stmt(
                &format!("SELECT id, at, kind, record_id, actor, details FROM events WHERE {where_sql} ORDER BY seq"),
                [value.into()],
            ))
            .await?;
        rows.iter().map(convert::event_from_row).collect()
    }

    async fn select_records(
        &self,
        where_sql: &str,
        values: Vec<Value>,
    ) -> Result<Vec<MemoryRecord>, StoreError> {
        // One result row (`RECORDS_PACKED`), not one per record; an aggregate always has it.
        let packed: String = self
            .reader
            .query_one_raw(stmt(
                &format!("SELECT {} AS records FROM records WHERE {where_sql}", *convert::RECORDS_PACKED),
                values,
            ))
            .await?
            .ok_or_else(|| crate::error::corrupt("records", "the packed read returned no row"))?
            .try_get("", "records")?;
        convert::records_from_packed(&packed)
    }
}

/// Fail with `Contended` when the active records of a key moved on.
async fn check_guard(txn: &DatabaseTransaction, guard: &retold_domain::KeyGuard) -> Result<(), StoreError> {
    let rows = txn
        .query_all_raw(stmt(
            "SELECT id FROM records WHERE scope_kind = ? AND scope_id = ? AND subject_entity_id = ? AND attribute = ? \
             AND status IN ('provisional', 'confirmed') ORDER BY id",
            [
                guard.scope.kind().as_str().into(),
                guard.scope.id().into(),
                guard.subject_entity_id.as_str().into(),
                guard.attribute.as_str().into(),
            ],
        ))
        .await?;
    let actual: Vec<String> = rows.iter().map(|r| r.try_get::<String>("", "id")).collect::<Result<_, _>>()?;
    let expected: Vec<&str> = guard.expected.iter().map(RecordId::as_str).collect();
    if actual != expected {
        return Err(StoreError::Contended(format!(
            "the current fact {}/{} in {} changed concurrently",
            guard.subject_entity_id, guard.attribute, guard.scope
        )));
    }
    Ok(())
}

/// Refuse a database that records migrations this binary does not know.
async fn refuse_newer(db: &DatabaseConnection, path: &Path) -> Result<(), StoreError> {
    let exists = db
        .query_one_raw(stmt(
            "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'seaql_migrations'",
            [],
        ))
        .await?
        .is_some();
    if !exists {
        return Ok(());
    }
    let known: HashSet<String> = Migrator::migrations().iter().map(|m| m.name().to_owned()).collect();
    let rows = db.query_all_raw(stmt("SELECT version FROM seaql_migrations", [])).await?;
    let mut unknown = Vec::new();
    for row in rows {
        let version: String = row.try_get("", "version")?;
        if !known.contains(&version) {
            unknown.push(version);
        }
    }
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(StoreError::NewerDatabase { path: path.display().to_string(), unknown })
    }
}

/// SQL for the denormalised alias text of the record whose id is `record_id_sql`:
/// canonical names and aliases of every linked entity.
pub(crate) fn aliases_of(record_id_sql: &str) -> String {
    format!(
        "(SELECT coalesce(group_concat(name, ' | '), '') FROM ( \
            SELECT e.canonical_name AS name FROM record_entities l JOIN entities e ON e.id = l.entity_id \
              WHERE l.record_id = {record_id_sql} \
            UNION ALL \
            SELECT a.alias AS name FROM record_entities l JOIN entity_aliases a ON a.entity_id = l.entity_id \
              WHERE l.record_id = {record_id_sql}))"
    )
}

pub(crate) async fn apply_update(
    txn: &DatabaseTransaction,
    update: &retold_domain::RecordUpdate,
) -> Result<(), StoreError> {
    let r = &update.record;
    if r.version != update.expected_version + 1 {
        return Err(StoreError::Corrupt {
            table: "records",
            reason: format!("update of {} must carry version {}", r.id, update.expected_version + 1),
        });
    }
    let tags: Vec<&str> = r.tags.iter().map(|t| t.as_str()).collect();
    let subject = r.key.as_ref().map(|k| k.subject_entity_id.as_str().to_owned());
    let attribute = r.key.as_ref().map(|k| k.attribute.as_str().to_owned());
    // The key changes only when an entity merge gives a record a new subject; the FTS
    // subject column then follows (below).
    let old = txn
        .query_one_raw(stmt(
            "SELECT key, subject_entity_id, attribute FROM records WHERE id = ? AND version = ?",
            [r.id.as_str().into(), i64::from(update.expected_version).into()],
        ))
        .await?;
    let Some(old) = old else {
        let exists = txn
            .query_one_raw(stmt("SELECT 1 AS one FROM records WHERE id = ?", [r.id.as_str().into()]))
            .await?;
        return Err(match exists {
            Some(_) => StoreError::StaleVersion { id: r.id.to_string(), expected: update.expected_version },
            None => StoreError::NotFound { what: "record", id: r.id.to_string() },
        });
    };
    let key: i64 = old.try_get("", "key")?;
    let key_changed = old.try_get::<Option<String>>("", "subject_entity_id")? != subject
        || old.try_get::<Option<String>>("", "attribute")? != attribute;
    txn.execute_raw(stmt(
        "UPDATE records SET version = ?, status = ?, confidence = ?, expires_at = ?, event_at = ?, \
         reinforcements = ?, last_reinforced_at = ?, tags = ?, subject_entity_id = ?, attribute = ?, \
         supersedes_id = ? WHERE key = ?",
        [
            i64::from(r.version).into(),
            r.status.as_str().into(),
            r.confidence.get().into(),
            r.expires_at.map(millis).into(),
            r.event_at.map(millis).into(),
            i64::from(r.reinforcements).into(),
            r.last_reinforced_at.map(millis).into(),
            serde_json::to_string(&tags).expect("strings serialise").into(),
            subject.into(),
            attribute.into(),
            r.supersedes_id.as_ref().map(|s| s.as_str().to_owned()).into(),
            key.into(),
        ],
    ))
    .await?;
    // records_fts's rowid is the record's key, so these touch one row. A tombstone loses its
    // vectors (served and staged) in the same commit, so no state of the store holds a vector
    // of a record that is gone (`ops verify` counts those as orphans).
    if !r.status.keeps_indexes() {
        for table in [
            "DELETE FROM records_fts WHERE rowid = ?",
            "DELETE FROM embeddings WHERE record_key = ?",
            "DELETE FROM embeddings_staged WHERE record_key = ?",
        ] {
            txn.execute_raw(stmt(table, [key.into()])).await?;
        }
    } else if key_changed {
        txn.execute_raw(stmt(
            "UPDATE records_fts SET subject = (SELECT coalesce(subject, '') FROM records WHERE key = ?) \
             WHERE rowid = ?",
            [key.into(), key.into()],
        ))
        .await?;
    }
    Ok(())
}

async fn insert_link(txn: &DatabaseTransaction, link: &RecordEntityLink) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        "INSERT INTO record_entities (record_id, entity_id, role) VALUES (?, ?, ?)",
        [link.record_id.as_str().into(), link.entity_id.as_str().into(), link.role.as_str().into()],
    ))
    .await?;
    Ok(())
}

async fn insert_embedding(txn: &DatabaseTransaction, row: &EmbeddingRow) -> Result<(), StoreError> {
    convert::check_embedding_row("embeddings", row)?;
    txn.execute_raw(stmt(
        "INSERT OR REPLACE INTO embeddings \
         (record_key, record_id, model, version, dims, vector, sentences, sentences_pending) \
         VALUES ((SELECT key FROM records WHERE id = ?), ?, ?, ?, ?, ?, ?, ?)",
        [
            row.record_id.as_str().into(),
            row.record_id.as_str().into(),
            row.model.as_str().into(),
            i64::from(row.version).into(),
            i64::from(row.dims).into(),
            convert::vector_to_blob(&row.vector).into(),
            convert::vector_to_blob(&row.sentences).into(),
            i64::from(row.sentences_pending).into(),
        ],
    ))
    .await?;
    Ok(())
}

pub(crate) async fn insert_event(txn: &DatabaseTransaction, event: &AuditEvent) -> Result<(), StoreError> {
    txn.execute_raw(stmt(
        "INSERT INTO events (id, at, kind, record_id, actor, details) VALUES (?, ?, ?, ?, ?, ?)",
        [
            event.id.as_str().into(),
            millis(event.at).into(),
            event.kind.as_str().into(),
            event.record_id.as_ref().map(|r| r.as_str().to_owned()).into(),
            event.actor.as_ref().map(|a| a.as_str().to_owned()).into(),
            convert::event_details(event).into(),
        ],
    ))
    .await
    .map_err(|e| duplicate_or(e, || format!("event {} already exists", event.id)))?;
    Ok(())
}

/// `(scope_kind = ? AND scope_id = ?) OR …` for a scope list; `0` when empty.
pub(crate) fn scope_clause(scopes: &[Scope], values: &mut Vec<Value>) -> String {
    if scopes.is_empty() {
        return "0".to_owned();
    }
    let parts: Vec<&str> = scopes
        .iter()
        .map(|s| {
            values.push(s.kind().as_str().into());
            values.push(s.id().into());
            "(scope_kind = ? AND scope_id = ?)"
        })
        .collect();
    format!("({})", parts.join(" OR "))
}

fn json_ids(ids: &[RecordId]) -> Value {
    serde_json::Value::from(ids.iter().map(RecordId::as_str).collect::<Vec<_>>()).to_string().into()
}

fn record_id_of(
    row: &sea_orm::QueryResult,
    column: &str,
    table: &'static str,
) -> Result<RecordId, StoreError> {
    let id: String = row.try_get("", column)?;
    RecordId::new(id).map_err(|e| crate::error::corrupt(table, e))
}

#[async_trait]
impl RecordWriter for SqliteStore {
    async fn apply(&self, unit: WriteUnit) -> DomainResult<Vec<EligibleRecord>> {
        Ok(self.apply_unit(unit).await?)
    }
}

#[async_trait]
impl RecordReader for SqliteStore {
    async fn get(&self, id: &RecordId) -> DomainResult<Option<MemoryRecord>> {
        Ok(self.select_records("id = ?", vec![id.as_str().into()]).await?.pop())
    }

    async fn get_many(&self, ids: &[RecordId]) -> DomainResult<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.select_records("id IN (SELECT value FROM json_each(?))", vec![json_ids(ids)]).await?)
    }

    async fn key_of(&self, id: &RecordId) -> DomainResult<Option<RecordKey>> {
        let row = self
            .reader
            .query_one_raw(stmt("SELECT key FROM records WHERE id = ?", [id.as_str().into()]))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(convert::record_key).transpose()?)
    }
}

#[async_trait]
impl EligibilityIndex for SqliteStore {
    async fn eligible(&self, filter: &EligibilityFilter) -> DomainResult<Vec<EligibleRecord>> {
        if filter.scopes.is_empty() || filter.statuses.is_empty() {
            return Ok(Vec::new());
        }
        let mut values = Vec::new();
        let mut sql =
            format!("SELECT key, id FROM records WHERE {}", scope_clause(&filter.scopes, &mut values));
        let statuses: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        sql.push_str(&format!(" AND status IN ({})", vec!["?"; statuses.len()].join(", ")));
        values.extend(statuses.into_iter().map(Value::from));
        sql.push_str(" AND (expires_at IS NULL OR expires_at > ?)");
        values.push(millis(filter.now).into());
        if let Some(types) = &filter.types {
            if types.is_empty() {
                return Ok(Vec::new());
            }
            sql.push_str(&format!(" AND type IN ({})", vec!["?"; types.len()].join(", ")));
            values.extend(types.iter().map(|t| Value::from(t.as_str())));
        }
        if let Some(from) = filter.event_from {
            sql.push_str(" AND event_at >= ?");
            values.push(millis(from).into());
        }
        if let Some(to) = filter.event_to {
            sql.push_str(" AND event_at < ?");
            values.push(millis(to).into());
        }
        if !filter.include_conflicts {
            // Seed section 7: a provisional record on the lower-trust side of a conflict is
            // for inspection, not a normal result.
            sql.push_str(
                " AND (status != 'provisional' OR NOT EXISTS \
                 (SELECT 1 FROM record_conflicts c WHERE c.conflicting_id = records.id))",
            );
        }
        if let Some(origins) = &filter.origins {
            if origins.is_empty() {
                return Ok(Vec::new());
            }
            sql.push_str(&format!(" AND origin IN ({})", vec!["?"; origins.len()].join(", ")));
            values.extend(origins.iter().map(|o| Value::from(o.as_str())));
        }
        if let Some(session) = &filter.excluded_session {
            // A turn record cites `session:<id><turn:N>`.
            let prefix = retold_domain::SourceRef::session_prefix(session);
            sql.push_str(" AND NOT (origin = 'turn' AND substr(source_ref, 1, ?) = ?)");
            values.push((prefix.chars().count() as i64).into());
            values.push(prefix.into());
        }
        // One result row, not one per record: through the driver every row costs several
        // microseconds, which made 25k eligible records take ~100 ms. Both lists are filled
        // from the same rows in the same order; ids never contain commas.
        let packed = format!(
            "SELECT count(*) AS n, coalesce(group_concat(key, ','), '') AS keys, \
                    coalesce(group_concat(id, ','), '') AS ids FROM ({sql} ORDER BY key)"
        );
        let row = self.reader.query_one_raw(stmt(&packed, values)).await.map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(Vec::new()) };
        let count: i64 = row.try_get("", "n").map_err(StoreError::from)?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let keys: String = row.try_get("", "keys").map_err(StoreError::from)?;
        let ids: String = row.try_get("", "ids").map_err(StoreError::from)?;
        let mut out: Vec<EligibleRecord> = keys
            .split(',')
            .zip(ids.split(','))
            .map(|(key, id)| {
                Ok(EligibleRecord {
                    key: RecordKey(
                        key.parse()
                            .map_err(|e| crate::error::corrupt("records", format!("key {key:?}: {e}")))?,
                    ),
                    id: RecordId::new(id).map_err(|e| crate::error::corrupt("records", e))?,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        if out.len() as i64 != count {
            return Err(crate::error::corrupt("records", "eligible keys and ids do not pair up").into());
        }
        if !out.is_sorted_by_key(|e| e.key) {
            out.sort_by_key(|e| e.key);
        }
        Ok(out)
    }
}

#[async_trait]
impl CurrentFacts for SqliteStore {
    async fn active_by_key(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        attribute: &str,
    ) -> DomainResult<Vec<KeyedRecord>> {
        let mut values = vec![subject_entity_id.as_str().into(), attribute.into()];
        let scopes = scope_clause(scopes, &mut values);
        Ok(self
            .select_keyed(
                &format!(
                    "subject_entity_id = ? AND attribute = ? AND {scopes} \
                     AND status IN ('provisional', 'confirmed') ORDER BY key"
                ),
                values,
            )
            .await?)
    }

    async fn active_by_subject(
        &self,
        scopes: &[Scope],
        subject_entity_id: &EntityId,
        limit: usize,
    ) -> DomainResult<Vec<KeyedRecord>> {
        let mut values = vec![subject_entity_id.as_str().into()];
        let scopes = scope_clause(scopes, &mut values);
        values.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        Ok(self
            .select_keyed(
                &format!(
                    "subject_entity_id = ? AND {scopes} AND status IN ('provisional', 'confirmed') \
                     ORDER BY key DESC LIMIT ?"
                ),
                values,
            )
            .await?)
    }

    async fn by_subject(
        &self,
        scopes: Option<&[Scope]>,
        subject_entity_id: &EntityId,
    ) -> DomainResult<Vec<KeyedRecord>> {
        let mut values = vec![subject_entity_id.as_str().into()];
        let scopes = scopes.map_or_else(|| "1".to_owned(), |s| scope_clause(s, &mut values));
        Ok(self.select_keyed(&format!("subject_entity_id = ? AND {scopes} ORDER BY key"), values).await?)
    }
}

#[async_trait]
impl RecordGraph for SqliteStore {
    async fn links_of(&self, ids: &[RecordId]) -> DomainResult<Vec<RecordEntityLink>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT record_id, entity_id, role FROM record_entities \
                 WHERE record_id IN (SELECT value FROM json_each(?)) ORDER BY record_id, role, entity_id",
                [json_ids(ids)],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(convert::link_from_row).collect::<Result<_, _>>()?)
    }

    async fn linked_records(&self, entities: &[EntityId]) -> DomainResult<Vec<LinkedRecord>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let json =
            serde_json::Value::from(entities.iter().map(EntityId::as_str).collect::<Vec<_>>()).to_string();
        // Links of records a merge left on the merged entity (records its caller could not
        // write) still reach the survivor, reported under the survivor's id.
        let rows = self
            .reader
            .query_all_raw(stmt(
                "WITH RECURSIVE m(id, root) AS ( \
                   SELECT value, value FROM json_each(?) \
                   UNION SELECT e.id, m.root FROM entities e JOIN m ON e.merged_into = m.id) \
                 SELECT r.key AS key, l.record_id AS record_id, m.root AS entity_id, min(l.role) AS role \
                 FROM record_entities l JOIN m ON l.entity_id = m.id JOIN records r ON r.id = l.record_id \
                 GROUP BY r.key, l.record_id, m.root ORDER BY r.key, m.root",
                [json.into()],
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                let link = convert::link_from_row(row)?;
                Ok(LinkedRecord {
                    key: convert::record_key(row)?,
                    record_id: link.record_id,
                    entity_id: link.entity_id,
                    role: link.role,
                })
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }

    async fn successors(&self, ids: &[RecordId]) -> DomainResult<Vec<(RecordId, RecordId)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT id, supersedes_id FROM records \
                 WHERE supersedes_id IN (SELECT value FROM json_each(?)) ORDER BY key",
                [json_ids(ids)],
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                Ok((record_id_of(row, "id", "records")?, record_id_of(row, "supersedes_id", "records")?))
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }

    async fn conflicts_of(&self, ids: &[RecordId]) -> DomainResult<Vec<ConflictLink>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .reader
            .query_all_raw(stmt(
                "SELECT record_id, conflicting_id FROM record_conflicts \
                 WHERE record_id IN (SELECT value FROM json_each(?1)) OR conflicting_id IN (SELECT value FROM json_each(?1)) \
                 ORDER BY record_id, conflicting_id",
                [json_ids(ids)],
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                Ok(ConflictLink {
                    record_id: record_id_of(row, "record_id", "record_conflicts")?,
                    conflicting_id: record_id_of(row, "conflicting_id", "record_conflicts")?,
                })
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }
}

#[async_trait]
impl AuditLog for SqliteStore {
    async fn append(&self, events: Vec<AuditEvent>) -> DomainResult<()> {
        let txn = self.begin_write().await?;
        for event in &events {
            insert_event(&txn, event).await?;
        }
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    async fn record_events(&self, id: &RecordId) -> DomainResult<Vec<AuditEvent>> {
        Ok(self.select_events("record_id = ?", id.as_str()).await?)
    }

    async fn session_events(&self, id: &retold_domain::SessionId) -> DomainResult<Vec<AuditEvent>> {
        Ok(self.select_events("json_extract(details, '$.session_id') = ?", id.as_str()).await?)
    }
}

#[async_trait]
impl EligibilitySource for SqliteStore {
    async fn eligibility_rows(&self) -> DomainResult<Vec<EligibilityRow>> {
        // One packed row, as in `eligible`: through the driver each row costs microseconds.
        // Ids, scopes, statuses and types never contain `|` or a newline.
        let row = self
            .reader
            .query_one_raw(stmt(
                "SELECT coalesce(group_concat(line, char(10)), '') AS packed FROM ( \
                   SELECT key || '|' || id || '|' || scope_kind || '|' || scope_id || '|' || status || '|' || type \
                     || '|' || coalesce(expires_at, '') || '|' || coalesce(event_at, '') || '|' || version \
                     || '|' || EXISTS (SELECT 1 FROM record_conflicts c WHERE c.conflicting_id = records.id) \
                     || '|' || origin || '|' || CASE WHEN origin = 'turn' THEN coalesce(source_ref, '') ELSE '' END AS line \
                   FROM records ORDER BY key)",
                [],
            ))
            .await
            .map_err(StoreError::from)?;
        let packed: String = match row {
            Some(row) => row.try_get("", "packed").map_err(StoreError::from)?,
            None => String::new(),
        };
        packed.lines().map(|line| convert::parse_eligibility_row(line).map_err(Into::into)).collect()
    }
}

#[async_trait]
impl EmbeddingSource for SqliteStore {
    async fn compatible_embeddings(
        &self,
        model: &str,
        version: u32,
        dims: u32,
    ) -> DomainResult<EmbeddingScan> {
        let live =
            "JOIN records r ON r.key = e.record_key WHERE r.status != 'deleted' AND r.erased_at IS NULL";
        let mut scan =
            crate::vector_scan::scan(self.reader.get_sqlite_connection_pool(), model, version, dims).await?;
        let other = self
            .reader
            .query_one_raw(stmt(
                &format!(
                    "SELECT count(*) AS n FROM embeddings e {live} \
                     AND NOT (e.model = ? AND e.version = ? AND e.dims = ?)"
                ),
                [model.into(), i64::from(version).into(), i64::from(dims).into()],
            ))
            .await
            .map_err(StoreError::from)?
            .map(|row| row.try_get::<i64>("", "n"))
            .transpose()
            .map_err(StoreError::from)?
            .unwrap_or(0);
        scan.incompatible = u64::try_from(other).unwrap_or(0);
        Ok(scan)
    }
}
