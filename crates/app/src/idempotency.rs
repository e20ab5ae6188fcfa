//! Client retries that do not write twice: a request sent with an idempotency key runs once
//! per key; a retry with the same request gets the first answer, the same key with another
//! request is refused, and keys expire after a configured time.

use std::future::Future;
use std::sync::Arc;

use retold_domain::chrono::TimeDelta;
use retold_domain::{Clock, IdempotencyClaim, IdempotencyKey, IdempotencyKeys, Result};
use tokio_util::task::TaskTracker;

/// What a request answered, as the edge encodes it, and whether it changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub answer: Vec<u8>,
    /// The request failed, and a failed request changes nothing (the write path's rule): its
    /// key is given back, so a retry runs again instead of replaying the failure.
    pub changed_nothing: bool,
}

/// What became of a request sent with an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idempotent {
    /// The first request with this key: it ran now, and this is its answer.
    Ran(Vec<u8>),
    /// A retry of the same request: the first answer, and nothing ran again.
    Replayed(Vec<u8>),
    /// The key was first used for another request; nothing ran.
    Reused,
    /// The first request with this key has not answered yet; nothing ran.
    InFlight,
}

/// Runs requests once per idempotency key.
#[derive(Clone)]
pub struct IdempotencyService {
    keys: Arc<dyn IdempotencyKeys>,
    clock: Arc<dyn Clock>,
    ttl: TimeDelta,
    tasks: TaskTracker,
}

impl std::fmt::Debug for IdempotencyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdempotencyService").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl IdempotencyService {
    /// Keys live `ttl` from their first use. Requests run as tasks of `tasks`, which shutdown
    /// waits for.
    pub fn new(
        keys: Arc<dyn IdempotencyKeys>,
        clock: Arc<dyn Clock>,
        ttl: TimeDelta,
        tasks: TaskTracker,
    ) -> Self {
        Self { keys, clock, ttl, tasks }
    }

    /// Run `request` (whose identity is `fingerprint`) once under `key`. It runs as its own
    /// task, so a client that hangs up or a request timeout cannot stop it between its write
    /// and the stored answer; a retry meanwhile is told it is in flight. A crash in that
    /// window leaves the key in flight until it expires: the retry is refused rather than
    /// run twice.
    pub async fn run<F>(&self, key: IdempotencyKey, fingerprint: String, request: F) -> Result<Idempotent>
    where
        F: Future<Output = Answered> + Send + 'static,
    {
        let now = self.clock.now();
        match self.keys.claim_key(&key, &fingerprint, now, now + self.ttl).await? {
            IdempotencyClaim::Held { fingerprint: first, answer } if first == fingerprint => {
                Ok(answer.map_or(Idempotent::InFlight, Idempotent::Replayed))
            }
            IdempotencyClaim::Held { .. } => Ok(Idempotent::Reused),
            IdempotencyClaim::Claimed => {
                let keys = self.keys.clone();
                let held = key.clone();
                let task = self.tasks.spawn(async move {
                    let answered = request.await;
                    let kept = if answered.changed_nothing {
                        keys.release_key(&held).await
                    } else {
                        keys.store_answer(&held, &answered.answer).await
                    };
                    if let Err(error) = kept {
                        // The request has answered; only its retry is affected (refused as in
                        // flight until the key expires, never run twice).
                        tracing::error!(%error, key = %held.key, "storing an idempotent answer failed");
                    }
                    answered.answer
                });
                match task.await {
                    Ok(answer) => Ok(Idempotent::Ran(answer)),
                    // The request panicked, maybe after writing: its key stays held until it
                    // expires, so a retry is refused rather than run twice.
                    Err(error) => {
                        Err(retold_domain::DomainError::backend("idempotent request", error.to_string()))
                    }
                }
            }
        }
    }
}
