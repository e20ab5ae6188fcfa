//! The extraction lifecycle of a session (requested at its end, claimed with a lease, finished
//! or released after a failure, attempts counted), and indexes to find the sessions that still
//! need extraction and a session's events without scanning every row.

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

retold_store_sql::sql_migration!(SCHEMA);
