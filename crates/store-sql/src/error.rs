//! The store's error enum and its conversion at the port boundary.

use retold_domain::DomainError;
use sea_orm::DbErr;

/// What can go wrong in a SQL store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database or the connection pool failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
    /// A stored row does not convert to a domain value (a bug or a hand-edited database).
    #[error("corrupt row in {table}: {reason}")]
    Corrupt { table: &'static str, reason: String },
    /// The database was migrated by a newer Retold; it is left untouched.
    #[error(
        "the database at {path} was written by a newer Retold (unknown migrations: {unknown:?}); \
         upgrade Retold or point it at another data directory"
    )]
    NewerDatabase { path: String, unknown: Vec<String> },
    /// A record changed since it was read (optimistic concurrency).
    #[error("record {id} changed concurrently (expected version {expected})")]
    StaleVersion { id: String, expected: u32 },
    /// A referenced row does not exist.
    #[error("{what} not found: {id}")]
    NotFound { what: &'static str, id: String },
    /// What the writer decided against changed concurrently (a key guard, an entity name).
    #[error("{0}")]
    Contended(String),
    /// A uniqueness rule would be broken.
    #[error("{0}")]
    Duplicate(String),
    /// The data directory could not be prepared.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// SQLite's primary result codes for a full disk and an I/O error.
const SQLITE_FULL: i64 = 13;
const SQLITE_IOERR: i64 = 10;
/// PostgreSQL's SQLSTATEs for a full disk, an I/O error, a serialisation failure and a
/// deadlock.
const PG_DISK_FULL: &str = "53100";
const PG_IO_ERROR: &str = "58030";
const PG_SERIALIZATION: &str = "40001";
const PG_DEADLOCK: &str = "40P01";
const PG_QUERY_CANCELED: &str = "57014";

/// Whether PostgreSQL cancelled the statement (its `statement_timeout` ran out).
pub fn is_statement_timeout(error: &DbErr) -> bool {
    database_code(error).is_some_and(|code| code == PG_QUERY_CANCELED)
}

/// The driver's code behind a database error: SQLite's extended result code as digits,
/// PostgreSQL's SQLSTATE.
fn database_code(error: &DbErr) -> Option<String> {
    let (DbErr::Exec(runtime) | DbErr::Query(runtime) | DbErr::Conn(runtime)) = error else {
        return None;
    };
    let sea_orm::RuntimeErr::SqlxError(sqlx) = runtime else { return None };
    let sea_orm::sqlx::Error::Database(database) = sqlx.as_ref() else { return None };
    database.code().map(|code| code.into_owned())
}

/// Whether `code` is the PostgreSQL SQLSTATE `sqlstate` (always five characters) or SQLite's
/// `primary` code (sqlx reports the extended code, at most four digits; its low byte is the
/// primary one).
fn is_code(error: &DbErr, primary: i64, sqlstate: &str) -> bool {
    database_code(error).is_some_and(|code| {
        if code.len() == 5 {
            code == sqlstate
        } else {
            code.parse::<i64>().is_ok_and(|n| n & 0xff == primary)
        }
    })
}

impl StoreError {
    /// Whether the disk is full (SQLITE_FULL, PostgreSQL's disk_full, or ENOSPC on a file
    /// the store writes itself).
    fn is_full(&self) -> bool {
        match self {
            Self::Db(db) => is_code(db, SQLITE_FULL, PG_DISK_FULL),
            Self::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }

    fn is_io(&self) -> bool {
        matches!(self, Self::Db(db) if is_code(db, SQLITE_IOERR, PG_IO_ERROR))
    }

    /// A PostgreSQL transaction that lost a race (serialisation failure, deadlock): nothing
    /// of it committed, and a retry may succeed.
    fn is_lost_race(&self) -> bool {
        matches!(self, Self::Db(db) if database_code(db).is_some_and(|c| c == PG_SERIALIZATION || c == PG_DEADLOCK))
    }
}

impl From<StoreError> for DomainError {
    fn from(error: StoreError) -> Self {
        if error.is_full() {
            return DomainError::StorageFull(error.to_string());
        }
        if error.is_io() {
            return DomainError::StorageIo(error.to_string());
        }
        if error.is_lost_race() {
            return DomainError::Contention(error.to_string());
        }
        match error {
            StoreError::StaleVersion { .. } | StoreError::Contended(_) => {
                DomainError::Contention(error.to_string())
            }
            StoreError::Duplicate(_) => DomainError::Conflict(error.to_string()),
            StoreError::NotFound { what, id } => DomainError::NotFound { what, id },
            StoreError::Db(_)
            | StoreError::Corrupt { .. }
            | StoreError::NewerDatabase { .. }
            | StoreError::Io(_) => DomainError::backend("store", error),
        }
    }
}

pub fn corrupt(table: &'static str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { table, reason: reason.to_string() }
}

/// A unique-constraint violation as `Duplicate` with `message`, any other error as it is.
pub fn duplicate_or(error: DbErr, message: impl FnOnce() -> String) -> StoreError {
    match error.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => StoreError::Duplicate(message()),
        _ => StoreError::Db(error),
    }
}
