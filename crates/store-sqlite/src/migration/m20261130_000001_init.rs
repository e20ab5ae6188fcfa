//! The initial schema (seed sections 2, 5, 7, 8, 9, 10, 13).

const SCHEMA: &str = r#"
CREATE TABLE entities (
    id              TEXT PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('person','project','repository','product','organization','other')),
    canonical_name  TEXT NOT NULL,
    name_folded     TEXT NOT NULL,
    scope_kind      TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id        TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('provisional','confirmed','merged')),
    merged_into     TEXT REFERENCES entities(id),
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX entities_name ON entities (name_folded, scope_kind, scope_id);

CREATE TABLE entity_aliases (
    entity_id     TEXT NOT NULL REFERENCES entities(id),
    alias         TEXT NOT NULL,
    alias_folded  TEXT NOT NULL,
    PRIMARY KEY (entity_id, alias_folded)
) STRICT, WITHOUT ROWID;
CREATE INDEX entity_aliases_folded ON entity_aliases (alias_folded);

-- `key` is the rowid: the dense handle the vector index and the FTS table use.
CREATE TABLE records (
    key                 INTEGER PRIMARY KEY,
    id                  TEXT NOT NULL UNIQUE,
    type                TEXT NOT NULL CHECK (type IN ('semantic','episodic','procedural')),
    version             INTEGER NOT NULL CHECK (version >= 1),
    content             TEXT NOT NULL,
    subject_entity_id   TEXT REFERENCES entities(id),
    attribute           TEXT,
    subject             TEXT GENERATED ALWAYS AS (subject_entity_id || '/' || attribute) VIRTUAL,
    scope_kind          TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id            TEXT NOT NULL,
    source_kind         TEXT NOT NULL CHECK (source_kind IN
                            ('user_statement','system','tool_result','session_summary','agent_inference')),
    source_ref          TEXT,
    creator_agent_id    TEXT NOT NULL,
    evidence            TEXT,
    created_at          INTEGER NOT NULL,
    event_at            INTEGER,
    expires_at          INTEGER,
    confidence          REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
    status              TEXT NOT NULL CHECK (status IN ('provisional','confirmed','superseded','expired','deleted')),
    supersedes_id       TEXT REFERENCES records(id),
    reinforcements      INTEGER NOT NULL DEFAULT 0 CHECK (reinforcements >= 0),
    last_reinforced_at  INTEGER,
    tags                TEXT NOT NULL DEFAULT '[]',
    erased_at           INTEGER,
    CHECK ((subject_entity_id IS NULL) = (attribute IS NULL))
) STRICT;
-- The eligible-id filter: scope × status, then expiry, event time and type.
CREATE INDEX records_scope_status ON records (scope_kind, scope_id, status);
CREATE INDEX records_expires_at ON records (expires_at);
CREATE INDEX records_event_at ON records (event_at);
CREATE INDEX records_type ON records (type);
-- Current-fact lookups.
CREATE INDEX records_fact_key ON records (subject_entity_id, attribute, status);

CREATE TABLE record_entities (
    record_id  TEXT NOT NULL REFERENCES records(id),
    entity_id  TEXT NOT NULL REFERENCES entities(id),
    role       TEXT NOT NULL CHECK (role IN ('about','mentions')),
    PRIMARY KEY (record_id, entity_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX record_entities_entity ON record_entities (entity_id, role);

CREATE TABLE record_conflicts (
    record_id       TEXT NOT NULL REFERENCES records(id),
    conflicting_id  TEXT NOT NULL REFERENCES records(id),
    PRIMARY KEY (record_id, conflicting_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX record_conflicts_other ON record_conflicts (conflicting_id);

CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    scope_kind  TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id    TEXT NOT NULL,
    can_read    INTEGER NOT NULL CHECK (can_read IN (0, 1)),
    can_write   INTEGER NOT NULL CHECK (can_write IN (0, 1)),
    revoked     INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
) STRICT;
CREATE INDEX grants_agent ON grants (agent_id, revoked);

CREATE TABLE sessions (
    id                     TEXT PRIMARY KEY,
    agent_id               TEXT NOT NULL,
    user_id                TEXT NOT NULL,
    project_id             TEXT,
    started_at             INTEGER NOT NULL,
    ended_at               INTEGER,
    extraction_claimed_by  TEXT,
    extraction_claimed_at  INTEGER
) STRICT;

CREATE TABLE session_turns (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    turn        INTEGER NOT NULL CHECK (turn >= 1),
    role        TEXT NOT NULL CHECK (role IN ('user','assistant','tool')),
    content     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (session_id, turn)
) STRICT, WITHOUT ROWID;

-- Append-only audit trail.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    at         INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    record_id  TEXT,
    actor      TEXT,
    details    TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX events_record ON events (record_id, seq);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

CREATE TABLE search_log (
    id         TEXT PRIMARY KEY,
    at         INTEGER NOT NULL,
    agent_id   TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    trace      TEXT NOT NULL
) STRICT;
CREATE INDEX search_log_at ON search_log (at);

CREATE TABLE embeddings (
    -- = records.key, so the boot scan joins on the rowid.
    record_key  INTEGER PRIMARY KEY REFERENCES records(key),
    record_id   TEXT NOT NULL UNIQUE REFERENCES records(id),
    model       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    dims        INTEGER NOT NULL CHECK (dims > 0),
    vector      BLOB NOT NULL CHECK (length(vector) = 4 * dims)
) STRICT;

-- rowid = records.key. Deleted records have no row here.
CREATE VIRTUAL TABLE records_fts USING fts5 (
    record_id UNINDEXED, content, subject, aliases, tokenize = 'unicode61'
);
"#;

retold_store_sql::sql_migration!(SCHEMA);
