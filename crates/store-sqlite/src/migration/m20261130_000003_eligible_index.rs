//! A covering index for the eligible-id query, so it never touches the table rows.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
CREATE INDEX records_eligible ON records (scope_kind, scope_id, status, expires_at, type, event_at, key, id);
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
