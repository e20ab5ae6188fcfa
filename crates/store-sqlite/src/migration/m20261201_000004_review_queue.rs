//! The review queue: records waiting for a person's look, with why, and how they were
//! resolved. At most one open item per record and reason.

const SCHEMA: &str = r#"
CREATE TABLE review_queue (
    id          TEXT PRIMARY KEY,
    record_id   TEXT NOT NULL REFERENCES records(id),
    reason      TEXT NOT NULL CHECK (reason IN ('expiring_provisional','unresolved_conflict','stale_low_confidence')),
    flagged_at  INTEGER NOT NULL,
    resolved_at INTEGER,
    resolution  TEXT CHECK (resolution IN ('confirm','expire','forget')),
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
) STRICT;
CREATE UNIQUE INDEX review_queue_open ON review_queue (record_id, reason) WHERE resolved_at IS NULL;
CREATE INDEX review_queue_flagged ON review_queue (flagged_at);
"#;

retold_store_sql::sql_migration!(SCHEMA);
