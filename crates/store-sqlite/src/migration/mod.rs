//! Forward-only, versioned migrations, applied at start-up. A database that records a
//! migration this binary does not know was written by a newer Retold and is refused.

use sea_orm_migration::prelude::*;

mod m20261130_000001_init;
mod m20261130_000002_api_keys;
mod m20261130_000003_eligible_index;
mod m20261130_000004_pending_extraction;
mod m20261201_000001_write_receipts;
mod m20261201_000002_idempotency_keys;
mod m20261201_000003_erasure;
mod m20261201_000004_review_queue;
mod m20261201_000005_staged_embeddings;
mod m20261201_000006_activation;
mod m20261201_000007_decisions;
mod m20261201_000008_inspection;
mod m20261202_000001_record_context;
mod m20261203_000001_lexical_vocabulary;
mod m20261205_000001_sentence_vectors;
mod m20261207_000001_turn_memory;
mod m20261207_000002_sentences_pending;
mod m20261207_000005_tombstone_vectors;

pub(crate) struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_init::Migration),
            Box::new(m20261130_000002_api_keys::Migration),
            Box::new(m20261130_000003_eligible_index::Migration),
            Box::new(m20261130_000004_pending_extraction::Migration),
            Box::new(m20261201_000001_write_receipts::Migration),
            Box::new(m20261201_000002_idempotency_keys::Migration),
            Box::new(m20261201_000003_erasure::Migration),
            Box::new(m20261201_000004_review_queue::Migration),
            Box::new(m20261201_000005_staged_embeddings::Migration),
            Box::new(m20261201_000006_activation::Migration),
            Box::new(m20261201_000007_decisions::Migration),
            Box::new(m20261201_000008_inspection::Migration),
            Box::new(m20261202_000001_record_context::Migration),
            Box::new(m20261203_000001_lexical_vocabulary::Migration),
            Box::new(m20261205_000001_sentence_vectors::Migration),
            Box::new(m20261207_000001_turn_memory::Migration),
            Box::new(m20261207_000002_sentences_pending::Migration),
            Box::new(m20261207_000005_tombstone_vectors::Migration),
        ]
    }
}
