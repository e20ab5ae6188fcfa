//! Retold on PostgreSQL: every store port over sea-orm with sqlx-postgres, for several
//! stateless service processes (replicas) on one database. Same rows as the SQLite store (the
//! conversion is shared, `retold-store-sql`), PostgreSQL's own SQL: a weighted `tsvector`
//! with a GIN index for the lexical channel, row locks and the change number for
//! concurrency across processes, LISTEN/NOTIFY plus a change table for the replicas.

mod activation;
mod api_keys;
mod changes;
mod decisions;
mod entities;
mod erasure;
mod idempotency;
mod inspection;
mod lexical;
mod migration;
mod receipts;
mod reembedding;
mod reviews;
mod search_log;
mod sessions;
mod snapshots;
mod store;

// Row conversion and the error type are shared with the SQLite store.
use retold_store_sql::{convert, error};

pub use crate::store::{PostgresConfig, PostgresStore};
pub use retold_store_sql::StoreError;
