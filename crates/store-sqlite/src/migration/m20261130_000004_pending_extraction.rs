//! The extraction lifecycle of a session (requested at its end, claimed with a lease, finished
//! or released after a failure, attempts counted), and indexes to find the sessions that still
//! need extraction and a session's events without scanning every row.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
ALTER TABLE sessions ADD COLUMN extraction_requested INTEGER NOT NULL DEFAULT 0
    CHECK (extraction_requested IN (0, 1));
ALTER TABLE sessions ADD COLUMN extraction_finished_at INTEGER;
ALTER TABLE sessions ADD COLUMN extraction_attempts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_pending_extraction ON sessions (ended_at)
    WHERE extraction_requested = 1 AND extraction_finished_at IS NULL;
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
