//! Retold's canonical store: SQLite through sea-orm, forward-only migrations, FTS5 rows,
//! the eligible-id query, and the one-transaction write unit. The only crate with SQL.
//!
//! Durability, chosen on purpose: WAL journal (readers never block the writer),
//! `synchronous = NORMAL` by default (a commit survives a process crash; on power loss the
//! last commits may be lost but the file stays consistent; `FULL` is one setting away),
//! a busy timeout, foreign keys on, one writer connection and a pool of readers. Every write
//! is one `BEGIN IMMEDIATE` transaction.

mod activation;
mod api_keys;
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
mod vector_scan;

// Row conversion and the error type are shared with the PostgreSQL store.
use retold_store_sql::{convert, error};

pub use crate::store::{Durability, SqliteStore, StoreConfig};
pub use retold_store_sql::StoreError;
