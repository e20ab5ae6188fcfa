//! The store's error enum and its conversion at the port boundary.

use retold_domain::DomainError;
use sea_orm::DbErr;

/// What can go wrong in the SQLite store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite or the connection pool failed.
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

/// The SQLite primary result code behind a database error, if it came from SQLite.
fn sqlite_code(error: &DbErr) -> Option<i64> {
    let (DbErr::Exec(runtime) | DbErr::Query(runtime) | DbErr::Conn(runtime)) = error else {
        return None;
    };
    let sea_orm::RuntimeErr::SqlxError(sqlx) = runtime else { return None };
    let sea_orm::sqlx::Error::Database(database) = sqlx.as_ref() else { return None };
    // sqlx reports the extended code; its low byte is the primary one.
    database.code()?.parse::<i64>().ok().map(|code| code & 0xff)
}

impl StoreError {
    /// Whether the disk is full (SQLITE_FULL, or ENOSPC on a file the store writes itself).
    fn is_full(&self) -> bool {
        match self {
            Self::Db(db) => sqlite_code(db) == Some(SQLITE_FULL),
            Self::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }

    fn is_io(&self) -> bool {
        matches!(self, Self::Db(db) if sqlite_code(db) == Some(SQLITE_IOERR))
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
        match error {
            StoreError::StaleVersion { .. } | StoreError::Contended(_) => {
                DomainError::Contention(error.to_string())
            }
            StoreError::Duplicate(_) => DomainError::Conflict(error.to_string()),
            StoreError::NotFound { what, id } => DomainError::NotFound { what, id },
            StoreError::Db(_)
            | StoreError::Corrupt { .. }
            | StoreError::NewerDatabase { .. }
            | StoreError::Io(_) => DomainError::backend("sqlite store", error),
        }
    }
}

pub(crate) fn corrupt(table: &'static str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { table, reason: reason.to_string() }
}
