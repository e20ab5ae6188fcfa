//! `embeddings.sentences_pending`: a record's sentence vectors are attached after its write
//! commits (the write answers once the record and its own vector are stored); 1 until they
//! are, so a process stopped in between attaches them at its next start.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
ALTER TABLE embeddings ADD COLUMN sentences_pending INTEGER NOT NULL DEFAULT 0 CHECK (sentences_pending IN (0, 1));
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
