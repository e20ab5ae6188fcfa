//! `records_vocab`: the words `records_fts` indexes, read-only, for the retriever's stemming
//! (which indexed words share a query term's stem). A view over the FTS5 index itself, so it
//! holds nothing to keep in step and is never written.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
CREATE VIRTUAL TABLE records_vocab USING fts5vocab(records_fts, row);
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
