//! `PostgresStore`: connecting, migrating, the write unit with its change number, and the
//! record store ports.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use async_trait::async_trait;
use retold_domain::{
    AuditEvent, AuditLog, ConflictLink, CurrentFacts, EligibilityFilter, EligibilityIndex, EligibilityRow,
    EligibilitySource, EligibleRecord, EmbeddingRow, EmbeddingScan, EmbeddingSource, EntityId, KeyedRecord,
    LinkedRecord, MemoryRecord, RecordEntityLink, RecordGraph, RecordId, RecordKey, RecordReader,
    RecordWriter, Result as DomainResult, Scope, WriteUnit,
};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend, Statement,
    TransactionTrait, Value,
};
use sea_orm_migration::MigratorTrait;

use crate::convert::{self, RECORD_COLUMNS, millis, record_values};
use crate::error::StoreError;
pub(crate) use crate::error::duplicate_or;
use crate::migration::Migrator;

/// How to reach the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresConfig {
    /// `postgres://user[:password]@host[:port]/database`.
    pub url: String,
    /// Connections in this process's pool.
    pub max_connections: u32,
    /// How long a request waits for a pooled connection before failing.
    pub acquire_timeout: Duration,
    /// How long one statement may run before the server cancels it.
    pub statement_timeout: Duration,
}

impl PostgresConfig {
    /// Defaults: 10 connections, 30 s to acquire one, 30 s per statement.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: 10,
            acquire_timeout: Duration::from_secs(30),
            statement_timeout: Duration::from_secs(30),
        }
    }
}

/// The PostgreSQL store: one pool per process, any number of processes on one database.
/// Every transaction that changes what replicas hold in memory takes the next change number
/// first (`change_head` stays row-locked until it commits), so such transactions run one at a
/// time across every process: the current-fact key guards and entity-name checks read a
/// state no other writer can move before the commit, as with SQLite's single writer.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pub(crate) db: DatabaseConnection,
    /// search_log appends, written off the request path.
    pub(crate) traces: std::sync::Arc<crate::search_log::TraceWriter>,
    /// LISTEN on the change channel (its own connection, outside the pool), opened on first
    /// wait.
    pub(crate) listener: std::sync::Arc<tokio::sync::Mutex<Option<sea_orm::sqlx::postgres::PgListener>>>,
    /// The serving lock's connection, while this process serves (`hold_serving_lock`).
    serving: std::sync::Arc<tokio::sync::Mutex<Option<DatabaseConnection>>>,
    pub(crate) url: std::sync::Arc<str>,
}

/// Advisory lock key every serving replica holds shared; a model switch needs it free.
pub(crate) const SERVING_LOCK: i64 = 0x7265_746f_6c65; // "retole"

/// The NOTIFY channel of the change feed; the payload is the change number.
pub(crate) const CHANGE_CHANNEL: &str = "retold_changes";

/// Advisory lock key of the migration runner (replicas booting together migrate once).
const MIGRATION_LOCK: i64 = 0x7265_746f_6c64; // "retold"

/// A statement with `?` placeholders, numbered `$1, $2, …` as PostgreSQL wants them (a `?`
/// inside a quoted literal is left alone; the store's SQL uses no `?` operator).
pub(crate) fn stmt(sql: &str, values: impl IntoIterator<Item = Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Postgres, numbered(sql), values)
}

fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

impl PostgresStore {
    /// Connect and migrate. A database written by a newer Retold is refused before anything
    /// is changed.
    pub async fn open(config: &PostgresConfig) -> Result<Self, StoreError> {
        let mut options = ConnectOptions::new(config.url.clone());
        let statement_timeout = config.statement_timeout.as_millis().to_string();
        options
            .max_connections(config.max_connections.max(1))
            .min_connections(1)
            .acquire_timeout(config.acquire_timeout)
            // A connection used in the last 30 s is handed out as it is; an older one is
            // pinged first (a server, proxy or firewall may have dropped it). Pinging every
            // checkout added a round trip to each of a search's half-dozen statements.
            .test_before_acquire_if_idle_for(Duration::from_secs(30))
            .sqlx_logging(false)
            .map_sqlx_postgres_opts(move |o| {
                o.application_name("retold").options([("statement_timeout", statement_timeout.as_str())])
            });
        let db = Database::connect(options).await?;
        {
            let txn = db.begin().await?;
            txn.execute_raw(stmt("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK.into()])).await?;
            refuse_newer(&txn, &config.url).await?;
            Migrator::up(&txn, None).await?;
            txn.commit().await?;
        }
        let traces = std::sync::Arc::new(crate::search_log::TraceWriter::start(
            db.clone(),
            crate::search_log::insert_trace,
        ));
        Ok(Self {
            db,
            traces,
            listener: Default::default(),
            serving: Default::default(),
            url: config.url.as_str().into(),
        })
    }

    /// Mark this process as serving the database until it closes: a model switch, which
    /// would leave a serving replica without vectors, is refused meanwhile. The lock is held
    /// shared on a connection of its own, so it goes when the process dies.
    pub async fn hold_serving_lock(&self) -> Result<(), StoreError> {
        let connection = self.maintenance_connection().await?;
        connection.execute_raw(stmt("SELECT pg_advisory_lock_shared(?)", [SERVING_LOCK.into()])).await?;
        *self.serving.lock().await = Some(connection);
        Ok(())
    }

    /// One connection of its own, outside the pool (maintenance, session-level locks).
    pub(crate) async fn maintenance_connection(&self) -> Result<DatabaseConnection, StoreError> {
        let mut options = ConnectOptions::new(self.url.to_string());
        options.max_connections(1).min_connections(1).sqlx_logging(false);
        Ok(Database::connect(options).await?)
    }

    /// Vacuum and analyse the whole database now, as autovacuum does in the background once
    /// enough rows have changed: visibility maps set (index-only scans, as the lexical
    /// postings' are, stop visiting the heap) and the planner's statistics current. For a
    /// measurement of a settled store right after a bulk load (`cargo xtask bench stores`).
    pub async fn vacuum_analyze(&self) -> Result<(), StoreError> {
        let maintenance = self.maintenance_connection().await?;
        maintenance.execute_unprepared("SET statement_timeout = 0").await?;
        maintenance.execute_unprepared("VACUUM (ANALYZE)").await?;
        maintenance.close().await?;
        Ok(())
    }

    /// Write every search trace handed so far.
    pub async fn flush_traces(&self) {
        self.traces.flush().await;
    }

    /// Write the waiting search traces, then close the LISTEN and serving-lock connections
    /// and the pool.
    pub async fn close(self) -> Result<(), StoreError> {
        self.traces.flush().await;
        drop(self.listener.lock().await.take());
        if let Some(serving) = self.serving.lock().await.take() {
            // Released here, not left to the server: a backend frees its session locks when
            // it exits, which may be after the client's close returns, and a model switch
            // right after the last replica stopped would still be refused.
            serving.execute_raw(stmt("SELECT pg_advisory_unlock_shared(?)", [SERVING_LOCK.into()])).await?;
            serving.close().await?;
        }
        self.db.close().await?;
        Ok(())
    }

    /// A transaction that changes records: it holds the next change number (and with it the
    /// write turn) until it commits.
    pub(crate) async fn begin_change(&self) -> Result<(DatabaseTransaction, i64), StoreError> {
        let txn = self.db.begin().await?;
        let row = txn
            .query_one_raw(stmt("UPDATE change_head SET seq = seq + 1 RETURNING seq", []))
            .await
            .map_err(|e| {
                // Waiting behind a long change (a scrub, a model switch) past the statement
                // timeout: nothing was written, and trying again may succeed.
                if retold_store_sql::error::is_statement_timeout(&e) {
                    StoreError::Contended("waited too long for the write turn".into())
                } else {
                    StoreError::Db(e)
                }
            })?
            .ok_or_else(|| crate::error::corrupt("change_head", "the row is missing"))?;
        let seq: i64 = row.try_get("", "seq")?;
        Ok((txn, seq))
    }

    async fn apply_unit(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>, StoreError> {
        let (txn, seq) = self.begin_change().await?;
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
        let mut changed: BTreeSet<String> = BTreeSet::new();
        for record in &unit.inserts {
            let values = record_values(record);
            let placeholders = vec!["?"; values.len()].join(", ");
            let row = txn
                .query_one_raw(stmt(
                    &format!("INSERT INTO records ({RECORD_COLUMNS}) VALUES ({placeholders}) RETURNING key"),
                    values,
                ))
                .await
                .map_err(|e| duplicate_or(e, || format!("record {} already exists", record.id)))?
                .ok_or_else(|| crate::error::corrupt("records", "an insert returned no key"))?;
            inserted.push(EligibleRecord { key: convert::record_key(&row)?, id: record.id.clone() });
            changed.insert(record.id.to_string());
        }
        let mut known: BTreeMap<String, RecordKey> =
            inserted.iter().map(|r| (r.id.to_string(), r.key)).collect();
        for update in &unit.updates {
            known.insert(update.record.id.to_string(), apply_update(&txn, update).await?);
            changed.insert(update.record.id.to_string());
        }
        for link in &unit.links {
            insert_link(&txn, link).await?;
        }
        // Lexical rows after the links, so the denormalised aliases are complete. The content
        // column holds the record's indexed text (its content, then its context): a reply is
        // found by the words of what it answers, as its vector is.
        for record in &unit.inserts {
            if record.status.keeps_indexes() {
                txn.execute_raw(stmt(
                    &format!(
                        "INSERT INTO records_fts (key, record_id, content, subject, aliases) \
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
            changed.insert(row.record_id.to_string());
        }
        for conflict in &unit.conflicts {
            txn.execute_raw(stmt(
                "INSERT INTO record_conflicts (record_id, conflicting_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [conflict.record_id.as_str().into(), conflict.conflicting_id.as_str().into()],
            ))
            .await?;
            changed.insert(conflict.conflicting_id.to_string());
        }
        for event in &unit.events {
            insert_event(&txn, event).await?;
        }
        if let Some(receipt) = &unit.receipt {
            crate::receipts::insert_receipt(&txn, receipt).await?;
        }
        // The records it inserted and updated by the keys it met them by; any other it
        // changed (a conflict's other side) looked up.
        let look_up = changed.iter().filter(|id| !known.contains_key(*id)).map(String::as_str);
        record_change(&txn, seq, known.values().copied(), look_up).await?;
        txn.commit().await?;
        Ok(inserted)
    }

    pub(crate) async fn select_keyed(
        &self,
        where_sql: &str,
        values: Vec<Value>,
    ) -> Result<Vec<KeyedRecord>, StoreError> {
        let rows = self
            .db
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
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT id, at, kind, record_id, actor, details FROM events WHERE {where_sql} ORDER BY seq"
                ),
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
        // One result row (`RECORDS_PACKED_POSTGRES`), not one per record: the driver's
        // column-by-column reads were most of a search's fetch stage. An aggregate always
        // has its row.
        let packed: String = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "SELECT {} AS records FROM records WHERE {where_sql}",
                    *convert::RECORDS_PACKED_POSTGRES
                ),
                values,
            ))
            .await?
            .ok_or_else(|| crate::error::corrupt("records", "the packed read returned no row"))?
            .try_get("", "records")?;
        convert::records_from_packed(&packed)
    }
}

/// Record change `seq` of the records keyed `keys` and of those whose ids are `look_up` (their
/// keys read), and notify the replicas (delivered when the transaction commits). Keys a
/// caller already holds are named as they are: a lookup by id is what a burst of writes into
/// a fresh database made slow, its cached plan scanning `records`.
pub(crate) async fn record_change<'a>(
    txn: &DatabaseTransaction,
    seq: i64,
    keys: impl IntoIterator<Item = RecordKey>,
    look_up: impl IntoIterator<Item = &'a str>,
) -> Result<(), StoreError> {
    let keys: BTreeSet<RecordKey> = keys.into_iter().collect();
    let look_up: Vec<&str> = look_up.into_iter().collect();
    if look_up.is_empty() {
        let keys: Vec<String> = keys.iter().map(|k| k.0.to_string()).collect();
        return insert_change(
            txn,
            &format!("VALUES (?, {NOW_MS}, ?)"),
            vec![seq.into(), keys.join(",").into()],
        )
        .await;
    }
    let source = format!(
        "SELECT ?, {NOW_MS}, coalesce(string_agg(k::text, ',' ORDER BY k), '') \
         FROM (SELECT key AS k FROM records WHERE id = ANY(?::text[]) UNION SELECT unnest(?::bigint[])) ks"
    );
    insert_change(txn, &source, vec![seq.into(), text_array(look_up), key_array(keys)]).await
}

/// The change row (`source` gives its seq, time and keys) and the notification naming it, in
/// one round trip.
async fn insert_change(
    txn: &DatabaseTransaction,
    source: &str,
    mut values: Vec<Value>,
) -> Result<(), StoreError> {
    values.push(CHANGE_CHANNEL.into());
    txn.execute_raw(stmt(
        &format!(
            "WITH change AS (INSERT INTO record_changes (seq, at, keys) {source} RETURNING seq) \
             SELECT pg_notify(?, seq::text) FROM change"
        ),
        values,
    ))
    .await?;
    Ok(())
}

/// The server's clock in Unix milliseconds, as a change's `at`.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

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
async fn refuse_newer(db: &DatabaseTransaction, url: &str) -> Result<(), StoreError> {
    let exists = db
        .query_one_raw(stmt("SELECT to_regclass('seaql_migrations') IS NOT NULL AS present", []))
        .await?
        .map(|row| row.try_get::<bool>("", "present"))
        .transpose()?
        .unwrap_or(false);
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
        Err(StoreError::NewerDatabase { path: redact_password(url), unknown })
    }
}

/// The URL without its password, for messages.
pub(crate) fn redact_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            let user = user.split(':').next().unwrap_or("");
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// SQL for the denormalised alias text of the record whose id is `record_id_sql`:
/// canonical names and aliases of every linked entity.
pub(crate) fn aliases_of(record_id_sql: &str) -> String {
    format!(
        "(SELECT coalesce(string_agg(name, ' | '), '') FROM ( \
            SELECT e.canonical_name AS name FROM record_entities l JOIN entities e ON e.id = l.entity_id \
              WHERE l.record_id = {record_id_sql} \
            UNION ALL \
            SELECT a.alias AS name FROM record_entities l JOIN entity_aliases a ON a.entity_id = l.entity_id \
              WHERE l.record_id = {record_id_sql}) names)"
    )
}

pub(crate) async fn apply_update(
    txn: &DatabaseTransaction,
    update: &retold_domain::RecordUpdate,
) -> Result<RecordKey, StoreError> {
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
    // The row lock taken here holds until commit, so a second writer's version check waits.
    let old = txn
        .query_one_raw(stmt(
            "SELECT key, subject_entity_id, attribute FROM records WHERE id = ? AND version = ? FOR UPDATE",
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
    // A tombstone loses its vectors (served and staged) in the same commit, as on SQLite.
    if !r.status.keeps_indexes() {
        for table in [
            "DELETE FROM records_fts WHERE key = ?",
            "DELETE FROM embeddings WHERE record_key = ?",
            "DELETE FROM embeddings_staged WHERE record_key = ?",
        ] {
            txn.execute_raw(stmt(table, [key.into()])).await?;
        }
    } else if key_changed {
        txn.execute_raw(stmt(
            "UPDATE records_fts SET subject = (SELECT coalesce(subject, '') FROM records WHERE key = ?) \
             WHERE key = ?",
            [key.into(), key.into()],
        ))
        .await?;
    }
    convert::record_key(&old)
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
        "INSERT INTO embeddings (record_key, record_id, model, version, dims, vector, sentences, sentences_pending) \
         VALUES ((SELECT key FROM records WHERE id = ?), ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (record_key) DO UPDATE SET model = excluded.model, version = excluded.version, \
           dims = excluded.dims, vector = excluded.vector, sentences = excluded.sentences, \
           sentences_pending = excluded.sentences_pending",
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

/// `(scope_kind = ? AND scope_id = ?) OR …` for a scope list; `false` when empty.
pub(crate) fn scope_clause(scopes: &[Scope], values: &mut Vec<Value>) -> String {
    if scopes.is_empty() {
        return "false".to_owned();
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

/// A PostgreSQL array literal of ids, for `= ANY(?::text[])` or `unnest(?::text[])`.
pub(crate) fn id_array(ids: &[RecordId]) -> Value {
    text_array(ids.iter().map(RecordId::as_str))
}

/// A PostgreSQL array literal of texts, each element quoted (a backslash before `"` and
/// `\`), so any text reads back as written. Bound as an array, a list tells the planner its
/// length; a JSON array expanded by `jsonb_array_elements_text` was estimated at 100 rows
/// whatever its length, which made fetching a search's 100 records from a 10,000-record
/// table a sequential scan (4.1 ms, against 1.1 by the id index).
pub(crate) fn text_array<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|item| format!("\"{}\"", item.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("{{{}}}", quoted.join(",")).into()
}

/// A PostgreSQL array literal of keys, for `= ANY(?::bigint[])`.
pub(crate) fn key_array(keys: impl IntoIterator<Item = RecordKey>) -> Value {
    let keys: Vec<String> = keys.into_iter().map(|k| k.0.to_string()).collect();
    format!("{{{}}}", keys.join(",")).into()
}

pub(crate) fn record_id_of(
    row: &sea_orm::QueryResult,
    column: &str,
    table: &'static str,
) -> Result<RecordId, StoreError> {
    let id: String = row.try_get("", column)?;
    RecordId::new(id).map_err(|e| crate::error::corrupt(table, e))
}

#[async_trait]
impl RecordWriter for PostgresStore {
    async fn apply(&self, unit: WriteUnit) -> DomainResult<Vec<EligibleRecord>> {
        Ok(self.apply_unit(unit).await?)
    }
}

#[async_trait]
impl RecordReader for PostgresStore {
    async fn get(&self, id: &RecordId) -> DomainResult<Option<MemoryRecord>> {
        Ok(self.select_records("id = ?", vec![id.as_str().into()]).await?.pop())
    }

    async fn get_many(&self, ids: &[RecordId]) -> DomainResult<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.select_records("id = ANY(?::text[])", vec![id_array(ids)]).await?)
    }

    async fn key_of(&self, id: &RecordId) -> DomainResult<Option<RecordKey>> {
        let row = self
            .db
            .query_one_raw(stmt("SELECT key FROM records WHERE id = ?", [id.as_str().into()]))
            .await
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(convert::record_key).transpose()?)
    }
}

#[async_trait]
impl EligibilityIndex for PostgresStore {
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
            sql.push_str(" AND NOT (origin = 'turn' AND starts_with(coalesce(source_ref, ''), ?))");
            values.push(retold_domain::SourceRef::session_prefix(session).into());
        }
        let rows = self
            .db
            .query_all_raw(stmt(&format!("{sql} ORDER BY key"), values))
            .await
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|row| {
                Ok(EligibleRecord { key: convert::record_key(row)?, id: record_id_of(row, "id", "records")? })
            })
            .collect::<Result<_, StoreError>>()?)
    }
}

#[async_trait]
impl CurrentFacts for PostgresStore {
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
        let scopes = scopes.map_or_else(|| "true".to_owned(), |s| scope_clause(s, &mut values));
        Ok(self.select_keyed(&format!("subject_entity_id = ? AND {scopes} ORDER BY key"), values).await?)
    }
}

#[async_trait]
impl RecordGraph for PostgresStore {
    async fn links_of(&self, ids: &[RecordId]) -> DomainResult<Vec<RecordEntityLink>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT record_id, entity_id, role FROM record_entities \
                 WHERE record_id = ANY(?::text[]) ORDER BY record_id, role, entity_id",
                [id_array(ids)],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(convert::link_from_row).collect::<Result<_, _>>()?)
    }

    async fn linked_records(&self, entities: &[EntityId]) -> DomainResult<Vec<LinkedRecord>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = text_array(entities.iter().map(EntityId::as_str));
        // Links of records a merge left on the merged entity (records its caller could not
        // write) still reach the survivor, reported under the survivor's id.
        let rows = self
            .db
            .query_all_raw(stmt(
                "WITH RECURSIVE m(id, root) AS ( \
                   SELECT value, value FROM unnest(?::text[]) AS value \
                   UNION SELECT e.id, m.root FROM entities e JOIN m ON e.merged_into = m.id) \
                 SELECT r.key AS key, l.record_id AS record_id, m.root AS entity_id, min(l.role) AS role \
                 FROM record_entities l JOIN m ON l.entity_id = m.id JOIN records r ON r.id = l.record_id \
                 GROUP BY r.key, l.record_id, m.root ORDER BY r.key, m.root",
                [wanted],
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
            .db
            .query_all_raw(stmt(
                "SELECT id, supersedes_id FROM records \
                 WHERE supersedes_id = ANY(?::text[]) ORDER BY key",
                [id_array(ids)],
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
            .db
            .query_all_raw(stmt(
                "SELECT record_id, conflicting_id FROM record_conflicts \
                 WHERE record_id = ANY(?::text[]) OR conflicting_id = ANY(?::text[]) \
                 ORDER BY record_id, conflicting_id",
                [id_array(ids), id_array(ids)],
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
impl AuditLog for PostgresStore {
    async fn append(&self, events: Vec<AuditEvent>) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
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
        Ok(self.select_events("((details::jsonb) ->> 'session_id') = ?", id.as_str()).await?)
    }
}

/// The eligibility row of `records` (aliased `records`) as one `|`-separated line; ids,
/// scopes, statuses and types never contain `|` or a newline.
pub(crate) const ELIGIBILITY_LINE: &str = "concat_ws('|', key, id, scope_kind, scope_id, status, type, \
     coalesce(expires_at::text, ''), coalesce(event_at::text, ''), version, \
     CASE WHEN EXISTS (SELECT 1 FROM record_conflicts c WHERE c.conflicting_id = records.id) THEN 1 ELSE 0 END, \
     origin, CASE WHEN origin = 'turn' THEN coalesce(source_ref, '') ELSE '' END)";

#[async_trait]
impl EligibilitySource for PostgresStore {
    async fn eligibility_rows(&self) -> DomainResult<Vec<EligibilityRow>> {
        // One packed row: through the driver each row costs microseconds.
        let row = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "SELECT coalesce(string_agg({ELIGIBILITY_LINE}, chr(10) ORDER BY key), '') AS packed FROM records"
                ),
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

/// A record `r` that is neither deleted nor erased: it keeps a vector and a lexical row.
macro_rules! live {
    () => {
        "r.status != 'deleted' AND r.erased_at IS NULL"
    };
}

/// [`live!`] as a constant, for SQL built with `format!`.
pub(crate) const LIVE: &str = live!();

/// The live vectors of one model, for the boot scan and the replicas' refresh.
pub(crate) const LIVE_EMBEDDINGS: &str = concat!(
    "SELECT e.record_key, e.record_id, e.vector, e.sentences FROM embeddings e JOIN records r ON r.key = e.record_key \
     WHERE ",
    live!(),
    " AND e.model = ? AND e.version = ? AND e.dims = ?"
);

#[async_trait]
impl EmbeddingSource for PostgresStore {
    async fn compatible_embeddings(
        &self,
        model: &str,
        version: u32,
        dims: u32,
    ) -> DomainResult<EmbeddingScan> {
        use sea_orm::sqlx::Row;
        let pool = self.db.get_postgres_connection_pool();
        // sqlx takes only literal SQL unless told otherwise: this is the constant above.
        let scan =
            sea_orm::sqlx::AssertSqlSafe(numbered(&format!("{LIVE_EMBEDDINGS} ORDER BY e.record_key")));
        let rows = sea_orm::sqlx::query(scan)
            .bind(model)
            .bind(i64::from(version))
            .bind(i64::from(dims))
            .fetch_all(pool)
            .await
            .map_err(|e| StoreError::Db(sea_orm::DbErr::Custom(e.to_string())))?;
        let mut scan = EmbeddingScan { dims, ..EmbeddingScan::default() };
        scan.keys.reserve(rows.len());
        scan.ids.reserve(rows.len());
        scan.vectors.reserve(rows.len() * dims as usize);
        for row in &rows {
            let key: i64 = row.get(0);
            let id: String = row.get(1);
            let blob: &[u8] = row.get(2);
            let sentences: &[u8] = row.get(3);
            convert::push_vector(&mut scan, key, id, blob, sentences)?;
        }
        let other = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "SELECT count(*) AS n FROM embeddings e JOIN records r ON r.key = e.record_key \
                     WHERE {LIVE} AND NOT (e.model = ? AND e.version = ? AND e.dims = ?)"
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
