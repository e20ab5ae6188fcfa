//! `embeddings.sentences` (and the staged ones'): a record's sentence vectors of the same
//! model, whole vectors of `dims` little-endian `f32`s one after the other, in the row of its
//! own vector, so that every path that writes, stages, switches or erases a record's vector
//! carries them with it. Existing rows have none until they are re-embedded.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
ALTER TABLE embeddings ADD COLUMN sentences BLOB NOT NULL DEFAULT x''
    CHECK (length(sentences) % (4 * dims) = 0);
ALTER TABLE embeddings_staged ADD COLUMN sentences BLOB NOT NULL DEFAULT x''
    CHECK (length(sentences) % (4 * dims) = 0);
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
