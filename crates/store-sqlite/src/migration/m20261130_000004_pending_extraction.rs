//! Finding ended sessions nobody has claimed for extraction, and a session's events, without
//! scanning every row.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
CREATE INDEX sessions_pending_extraction ON sessions (ended_at)
    WHERE ended_at IS NOT NULL AND extraction_claimed_by IS NULL;
CREATE INDEX events_session ON events (json_extract(details, '$.session_id'), seq)
    WHERE json_extract(details, '$.session_id') IS NOT NULL;
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
