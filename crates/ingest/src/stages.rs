//! Where one write's time went, stage by stage: answered over HTTP as `Server-Timing` and
//! printed by `cargo xtask bench writes`, as a search's trace holds its stages' times.

use std::time::{Duration, Instant};

/// The stages of one write (its last attempt, when a concurrent writer made it decide again).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteStages {
    /// The principal's readable and writable scopes, from its grants.
    pub access: Duration,
    /// The evidence checks of a user or tool claim (the cited turn, the entailment judge).
    pub evidence: Duration,
    /// Entity resolution (names and ids to entities, new ones drafted).
    pub entities: Duration,
    /// The embedder's run over the record's text (`embedded` texts; none when the vector came
    /// embedded with others, as in an import batch).
    pub embed: Duration,
    pub embedded: usize,
    /// The current-fact step: the key's active records, the attribute aliasing, the
    /// same-meaning check; for a reinforcement, its transaction too.
    pub current_fact: Duration,
    /// The store's one transaction.
    pub commit: Duration,
    /// The vector index update after the commit.
    pub index: Duration,
    /// Sentence texts whose vectors follow the answer (`ingest::sentences`).
    pub sentences_after: usize,
}

impl WriteStages {
    /// Each stage's name and time, in the order the write runs them.
    pub fn named(&self) -> [(&'static str, Duration); 7] {
        [
            ("access", self.access),
            ("evidence", self.evidence),
            ("entities", self.entities),
            ("embed", self.embed),
            ("current_fact", self.current_fact),
            ("commit", self.commit),
            ("index", self.index),
        ]
    }
}

/// Time `run` into `slot`.
pub(crate) async fn timed<T>(slot: &mut Duration, run: impl std::future::Future<Output = T>) -> T {
    let started = Instant::now();
    let value = run.await;
    *slot = started.elapsed();
    value
}
