//! Port traits: what the pure crates need from the outside world.
//!
//! Each is small and object-safe, injected as `Arc<dyn Port>`. Infrastructure crates
//! implement them; `ingest` and `retrieve` are written against them only.
//!
//! One file per seed component that owns the ports; the store's ports are each sized by the
//! consumers that use them. One store implements them all; the composition root hands each
//! consumer only the ones it asks for.

mod activation;
mod eligibility;
mod entity;
mod lexical;
mod logs;
mod models;
mod operations;
mod policy;
mod records;
mod runtime;
mod session;
mod vector;
mod write;

pub use self::activation::*;
pub use self::eligibility::*;
pub use self::entity::*;
pub use self::lexical::*;
pub use self::logs::*;
pub use self::models::*;
pub use self::operations::*;
pub use self::policy::*;
pub use self::records::*;
pub use self::runtime::*;
pub use self::session::*;
pub use self::vector::*;
pub use self::write::*;
