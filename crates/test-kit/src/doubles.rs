//! Deterministic implementations of the clock and id ports, for tests and replays.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use retold_domain::chrono::TimeDelta;
use retold_domain::{Clock, IdGenerator, Timestamp};

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    /// A clock standing at `at`.
    pub fn new(at: Timestamp) -> Self {
        Self(Mutex::new(at))
    }

    /// Move the clock forward (or back, with a negative delta).
    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Ids `00000000000000000000000001`, `…02`, …: unique and ordered, 26 characters like a ULID.
#[derive(Debug, Default)]
pub struct SequentialIds(AtomicU64);

impl IdGenerator for SequentialIds {
    fn next_body(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{n:026}")
    }
}
