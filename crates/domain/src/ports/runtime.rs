//! The clock, id generation and work that finishes after an answer.

use crate::record::Timestamp;

/// The current time. Injected so tests control it.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> Timestamp;
}

/// Unique, time-ordered identifier bodies (ULID-like, `[0-9A-Z]`).
pub trait IdGenerator: Send + Sync {
    /// A fresh body; callers wrap it with `RecordId::from_body` and friends.
    fn next_body(&self) -> String;
}

/// A task that runs apart from the request that started it.
pub type BackgroundTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// Work that finishes after an answer (a write's sentence vectors), counted so that a caller
/// can wait until it is done and shutdown finishes it.
pub trait Background: Send + Sync {
    /// Run `task` to completion, apart from the caller.
    fn spawn(&self, task: BackgroundTask);
    /// Completes once every task spawned before it was called has finished.
    fn settled(&self) -> BackgroundTask;
    /// Completes after `delay`, or at once while a caller waits in [`Background::settled`]:
    /// a task gathering work that arrives meanwhile never keeps a waiting caller waiting.
    fn gather(&self, delay: std::time::Duration) -> BackgroundTask;
}
