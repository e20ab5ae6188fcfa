//! Turn memory: a record kept verbatim from a session turn (`records.origin = 'turn'`) and
//! the speaker the host named (`records.speaker`, embedded as its label); a turn's speaker
//! and the time it was said (`session_turns.speaker`, `said_at`: `NULL` for turns recorded
//! before, which were said when recorded); the scope a session keeps its turns in
//! (`sessions.scope_kind`, `scope_id`: `NULL` for the principal's private scope).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SCHEMA: &str = r#"
ALTER TABLE records ADD COLUMN origin TEXT NOT NULL DEFAULT 'memory' CHECK (origin IN ('memory','turn'));
ALTER TABLE records ADD COLUMN speaker TEXT;
ALTER TABLE session_turns ADD COLUMN speaker TEXT;
ALTER TABLE session_turns ADD COLUMN said_at INTEGER;
ALTER TABLE sessions ADD COLUMN scope_kind TEXT;
ALTER TABLE sessions ADD COLUMN scope_id TEXT;
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
