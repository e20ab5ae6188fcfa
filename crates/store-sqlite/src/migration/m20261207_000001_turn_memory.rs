//! Turn memory: a record kept verbatim from a session turn (`records.origin = 'turn'`) and
//! the speaker the host named (`records.speaker`, embedded as its label); a turn's speaker
//! and the time it was said (`session_turns.speaker`, `said_at`: `NULL` for turns recorded
//! before, which were said when recorded); the scope a session keeps its turns in
//! (`sessions.scope_kind`, `scope_id`: `NULL` for the principal's private scope).

const SCHEMA: &str = r#"
ALTER TABLE records ADD COLUMN origin TEXT NOT NULL DEFAULT 'memory' CHECK (origin IN ('memory','turn'));
ALTER TABLE records ADD COLUMN speaker TEXT;
ALTER TABLE session_turns ADD COLUMN speaker TEXT;
ALTER TABLE session_turns ADD COLUMN said_at INTEGER;
ALTER TABLE sessions ADD COLUMN scope_kind TEXT;
ALTER TABLE sessions ADD COLUMN scope_id TEXT;
"#;

retold_store_sql::sql_migration!(SCHEMA);
