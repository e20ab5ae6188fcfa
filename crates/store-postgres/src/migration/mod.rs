//! Forward-only, versioned migrations, applied at start-up (by one replica at a time: the
//! runner holds an advisory lock). A database that records a migration this binary does not
//! know was written by a newer Retold and is refused before anything is changed.

use sea_orm_migration::prelude::*;

mod m20261202_000001_init;
mod m20261202_000002_record_context;
mod m20261205_000001_sentence_vectors;
mod m20261207_000001_turn_memory;
mod m20261207_000002_sentences_pending;
mod m20261207_000003_term_statistics;
mod m20261207_000004_term_prefixes;
mod m20261207_000005_tombstone_vectors;
mod m20261207_000006_term_postings;

pub(crate) struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261202_000001_init::Migration),
            Box::new(m20261202_000002_record_context::Migration),
            Box::new(m20261205_000001_sentence_vectors::Migration),
            Box::new(m20261207_000001_turn_memory::Migration),
            Box::new(m20261207_000002_sentences_pending::Migration),
            Box::new(m20261207_000003_term_statistics::Migration),
            Box::new(m20261207_000004_term_prefixes::Migration),
            Box::new(m20261207_000005_tombstone_vectors::Migration),
            Box::new(m20261207_000006_term_postings::Migration),
        ]
    }
}
