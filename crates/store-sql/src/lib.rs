//! What the two SQL stores (`retold-store-sqlite`, `retold-store-postgres`) share: the row ↔
//! domain conversion, which reads sea-orm rows the same way whichever driver produced them,
//! and the store error with its mapping to `DomainError`. No SQL text lives here: each store
//! writes its own dialect.

pub mod convert;
pub mod decisions;
pub mod error;

pub use crate::error::{StoreError, corrupt};
