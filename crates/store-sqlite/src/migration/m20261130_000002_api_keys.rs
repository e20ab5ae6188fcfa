//! Host API keys created through the admin endpoint, stored hashed.

const SCHEMA: &str = r#"
CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    sha256      TEXT NOT NULL UNIQUE,
    -- 'admin' or 'host'
    role        TEXT NOT NULL CHECK (role IN ('admin', 'host')),
    -- JSON array of agent ids a host key may assert; empty = any agent.
    agents      TEXT NOT NULL DEFAULT '[]',
    created_at  INTEGER NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
) STRICT;
"#;

retold_store_sql::sql_migration!(SCHEMA);
