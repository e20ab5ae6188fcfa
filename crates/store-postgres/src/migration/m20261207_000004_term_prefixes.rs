//! The kept vocabulary answers prefix lookups: an index on `lexical_terms.term` in byte order
//! (`COLLATE "C"`, whatever the database's collation), so the words that start with a stem
//! are one range scan over the vocabulary, as SQLite's `fts5vocab` answers them, instead of
//! `ts_stat` over every row holding such a word.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
SET LOCAL statement_timeout = 0;
CREATE INDEX lexical_terms_bytes ON lexical_terms (term COLLATE "C");
"#;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared(SCHEMA).await?;
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
