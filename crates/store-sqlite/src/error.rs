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

impl From<StoreError> for DomainError {
    fn from(error: StoreError) -> Self {
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
