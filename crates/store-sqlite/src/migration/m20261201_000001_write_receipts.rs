//! Receipts of keyed writes: an extraction candidate's write is recorded under its session
//! and digest in the same transaction, so a retried run finds it and writes nothing again.

const SCHEMA: &str = r#"
CREATE TABLE write_receipts (
    session_id  TEXT NOT NULL,
    -- Hex digest of what the write wrote.
    digest      TEXT NOT NULL,
    -- The audit event kind of the write (record.created, record.reinforced, ...).
    outcome     TEXT NOT NULL,
    record_id   TEXT NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (session_id, digest)
) STRICT, WITHOUT ROWID;
"#;

retold_store_sql::sql_migration!(SCHEMA);
