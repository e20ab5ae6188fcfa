//! What the two SQL stores (`retold-store-sqlite`, `retold-store-postgres`) share: the row ↔
//! domain conversion, which reads sea-orm rows the same way whichever driver produced them,
//! the store error with its mapping to `DomainError`, and the search-trace writer task. No
//! SQL text lives here: each store writes its own dialect.

pub mod convert;
pub mod decisions;
pub mod error;
pub mod traces;

pub use crate::error::{StoreError, corrupt};
