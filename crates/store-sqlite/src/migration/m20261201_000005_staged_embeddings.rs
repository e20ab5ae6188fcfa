//! Staged embeddings: vectors of another embedding model, written beside the served ones by a
//! re-embedding run and swapped in by one model switch.

const SCHEMA: &str = r#"
CREATE TABLE embeddings_staged (
    record_key  INTEGER PRIMARY KEY REFERENCES records(key),
    record_id   TEXT NOT NULL UNIQUE REFERENCES records(id),
    model       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    dims        INTEGER NOT NULL CHECK (dims > 0),
    vector      BLOB NOT NULL CHECK (length(vector) = 4 * dims)
) STRICT;
"#;

retold_store_sql::sql_migration!(SCHEMA);
