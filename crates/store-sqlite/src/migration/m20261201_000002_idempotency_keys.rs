//! Idempotency keys of client requests (`Idempotency-Key`) and the answers they got, per host
//! key and principal, until they expire.

const SCHEMA: &str = r#"
CREATE TABLE idempotency_keys (
    host_key    TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    key         TEXT NOT NULL,
    -- SHA-256 of the request the key was first used for (method, path, body).
    fingerprint TEXT NOT NULL,
    -- The answer, as the edge encoded it; NULL while the first request is in flight.
    answer      BLOB,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (host_key, agent_id, user_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
"#;

retold_store_sql::sql_migration!(SCHEMA);
