//! The inspector's lists: the latest events of one kind, and sessions newest first, without a
//! scan or a sort of the whole table.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
CREATE INDEX events_kind ON events (kind, seq);
CREATE INDEX sessions_started ON sessions (started_at, id);
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
