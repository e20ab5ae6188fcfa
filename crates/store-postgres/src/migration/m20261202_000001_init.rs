//! The schema, as the SQLite store's twelve migrations left it, in PostgreSQL's types: times
//! are milliseconds since the epoch (`BIGINT`), flags `BIGINT` 0/1 and JSON `TEXT`, so both
//! stores convert their rows with the same code (`retold-store-sql`). Differences: the
//! lexical rows carry a weighted `tsvector` (aliases A, subject B, content C) with a GIN
//! index instead of an FTS5 table; `change_head` and `record_changes` are the replicas'
//! change feed.

const SCHEMA: &str = r#"
CREATE EXTENSION IF NOT EXISTS unaccent;
-- FTS5's unicode61 in PostgreSQL: the default parser, lowercased, Latin diacritics removed,
-- no stemming and no stopwords (query processing drops stopwords before the search).
CREATE TEXT SEARCH CONFIGURATION retold (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION retold
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, simple;

CREATE TABLE entities (
    id              TEXT PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('person','project','repository','product','organization','other')),
    canonical_name  TEXT NOT NULL,
    name_folded     TEXT NOT NULL,
    scope_kind      TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id        TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('provisional','confirmed','merged')),
    merged_into     TEXT REFERENCES entities(id),
    created_at      BIGINT NOT NULL
);
CREATE INDEX entities_name ON entities (name_folded, scope_kind, scope_id);
CREATE INDEX entities_merged_into ON entities (merged_into);

CREATE TABLE entity_aliases (
    entity_id     TEXT NOT NULL REFERENCES entities(id),
    alias         TEXT NOT NULL,
    alias_folded  TEXT NOT NULL,
    PRIMARY KEY (entity_id, alias_folded)
);
CREATE INDEX entity_aliases_folded ON entity_aliases (alias_folded);

-- `key` is the dense handle the vector index and the lexical rows use.
CREATE TABLE records (
    key                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                  TEXT NOT NULL UNIQUE,
    type                TEXT NOT NULL CHECK (type IN ('semantic','episodic','procedural')),
    version             BIGINT NOT NULL CHECK (version >= 1),
    content             TEXT NOT NULL,
    subject_entity_id   TEXT REFERENCES entities(id),
    attribute           TEXT,
    subject             TEXT GENERATED ALWAYS AS (subject_entity_id || '/' || attribute) STORED,
    scope_kind          TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id            TEXT NOT NULL,
    source_kind         TEXT NOT NULL CHECK (source_kind IN
                            ('user_statement','system','tool_result','session_summary','agent_inference')),
    source_ref          TEXT,
    creator_agent_id    TEXT NOT NULL,
    evidence            TEXT,
    created_at          BIGINT NOT NULL,
    event_at            BIGINT,
    expires_at          BIGINT,
    confidence          DOUBLE PRECISION NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
    status              TEXT NOT NULL CHECK (status IN ('provisional','confirmed','superseded','expired','deleted')),
    supersedes_id       TEXT REFERENCES records(id),
    reinforcements      BIGINT NOT NULL DEFAULT 0 CHECK (reinforcements >= 0),
    last_reinforced_at  BIGINT,
    tags                TEXT NOT NULL DEFAULT '[]',
    erased_at           BIGINT,
    CHECK ((subject_entity_id IS NULL) = (attribute IS NULL))
);
CREATE INDEX records_eligible ON records (scope_kind, scope_id, status, expires_at, type, event_at, key, id);
CREATE INDEX records_expires_at ON records (expires_at);
CREATE INDEX records_event_at ON records (event_at);
CREATE INDEX records_fact_key ON records (subject_entity_id, attribute, status);
CREATE INDEX records_supersedes ON records (supersedes_id);

CREATE TABLE record_entities (
    record_id  TEXT NOT NULL REFERENCES records(id),
    entity_id  TEXT NOT NULL REFERENCES entities(id),
    role       TEXT NOT NULL CHECK (role IN ('about','mentions')),
    PRIMARY KEY (record_id, entity_id)
);
CREATE INDEX record_entities_entity ON record_entities (entity_id, role);

CREATE TABLE record_conflicts (
    record_id       TEXT NOT NULL REFERENCES records(id),
    conflicting_id  TEXT NOT NULL REFERENCES records(id),
    PRIMARY KEY (record_id, conflicting_id)
);
CREATE INDEX record_conflicts_other ON record_conflicts (conflicting_id);

CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    scope_kind  TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
    scope_id    TEXT NOT NULL,
    can_read    BIGINT NOT NULL CHECK (can_read IN (0, 1)),
    can_write   BIGINT NOT NULL CHECK (can_write IN (0, 1)),
    revoked     BIGINT NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
);
CREATE INDEX grants_agent ON grants (agent_id, revoked);

CREATE TABLE sessions (
    id                      TEXT PRIMARY KEY,
    agent_id                TEXT NOT NULL,
    user_id                 TEXT NOT NULL,
    project_id              TEXT,
    started_at              BIGINT NOT NULL,
    ended_at                BIGINT,
    extraction_claimed_by   TEXT,
    extraction_claimed_at   BIGINT,
    extraction_requested    BIGINT NOT NULL DEFAULT 0 CHECK (extraction_requested IN (0, 1)),
    extraction_finished_at  BIGINT,
    extraction_attempts     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_pending_extraction ON sessions (ended_at)
    WHERE extraction_requested = 1 AND extraction_finished_at IS NULL;
CREATE INDEX sessions_started ON sessions (started_at, id);

CREATE TABLE session_turns (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    turn        BIGINT NOT NULL CHECK (turn >= 1),
    role        TEXT NOT NULL CHECK (role IN ('user','assistant','tool')),
    content     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (session_id, turn)
);

-- Append-only audit trail: an erasure may blank an event's details, nothing else.
CREATE TABLE events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    at         BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    record_id  TEXT,
    actor      TEXT,
    details    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_record ON events (record_id, seq);
CREATE INDEX events_kind ON events (kind, seq);
CREATE INDEX events_session ON events (((details::jsonb) ->> 'session_id'), seq)
    WHERE ((details::jsonb) ->> 'session_id') IS NOT NULL;
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'events are append-only';
    END IF;
    IF NOT (NEW.details = '{"erased":"true"}' AND NEW.seq = OLD.seq AND NEW.id = OLD.id
            AND NEW.at = OLD.at AND NEW.kind = OLD.kind AND NEW.record_id IS NOT DISTINCT FROM OLD.record_id
            AND NEW.actor IS NOT DISTINCT FROM OLD.actor) THEN
        RAISE EXCEPTION 'events are append-only (an erasure may only blank their details)';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();

CREATE TABLE search_log (
    id         TEXT PRIMARY KEY,
    at         BIGINT NOT NULL,
    agent_id   TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    trace      TEXT NOT NULL
);
CREATE INDEX search_log_at ON search_log (at);

CREATE TABLE embeddings (
    record_key  BIGINT PRIMARY KEY REFERENCES records(key),
    record_id   TEXT NOT NULL UNIQUE REFERENCES records(id),
    model       TEXT NOT NULL,
    version     BIGINT NOT NULL,
    dims        BIGINT NOT NULL CHECK (dims > 0),
    vector      BYTEA NOT NULL CHECK (length(vector) = 4 * dims)
);

CREATE TABLE embeddings_staged (
    record_key  BIGINT PRIMARY KEY REFERENCES records(key),
    record_id   TEXT NOT NULL UNIQUE REFERENCES records(id),
    model       TEXT NOT NULL,
    version     BIGINT NOT NULL,
    dims        BIGINT NOT NULL CHECK (dims > 0),
    vector      BYTEA NOT NULL CHECK (length(vector) = 4 * dims)
);

-- The lexical rows: one per record that keeps its indexes (deleted and erased records have
-- none), with the denormalised alias text, weighted as the seed's lexical channel wants it.
CREATE TABLE records_fts (
    key        BIGINT PRIMARY KEY REFERENCES records(key),
    record_id  TEXT NOT NULL,
    content    TEXT NOT NULL,
    subject    TEXT NOT NULL,
    aliases    TEXT NOT NULL,
    doc        tsvector GENERATED ALWAYS AS (
                   setweight(to_tsvector('retold', aliases), 'A')
                || setweight(to_tsvector('retold', subject), 'B')
                || setweight(to_tsvector('retold', content), 'C')) STORED
);
CREATE INDEX records_fts_doc ON records_fts USING gin (doc);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    sha256      TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('admin', 'host')),
    agents      TEXT NOT NULL DEFAULT '[]',
    created_at  BIGINT NOT NULL,
    revoked     BIGINT NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
);

CREATE TABLE write_receipts (
    session_id  TEXT NOT NULL,
    digest      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    record_id   TEXT NOT NULL,
    at          BIGINT NOT NULL,
    PRIMARY KEY (session_id, digest)
);

CREATE TABLE idempotency_keys (
    host_key    TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    answer      BYTEA,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    PRIMARY KEY (host_key, agent_id, user_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE review_queue (
    id          TEXT PRIMARY KEY,
    record_id   TEXT NOT NULL REFERENCES records(id),
    reason      TEXT NOT NULL CHECK (reason IN ('expiring_provisional','unresolved_conflict','stale_low_confidence','activation')),
    flagged_at  BIGINT NOT NULL,
    resolved_at BIGINT,
    resolution  TEXT CHECK (resolution IN ('confirm','expire','forget','approve','reject')),
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE UNIQUE INDEX review_queue_open ON review_queue (record_id, reason) WHERE resolved_at IS NULL;
CREATE INDEX review_queue_flagged ON review_queue (flagged_at);

CREATE TABLE activation_decisions (
    record_id   TEXT PRIMARY KEY REFERENCES records(id),
    category    TEXT NOT NULL,
    rule        TEXT NOT NULL,
    ambience    TEXT NOT NULL CHECK (ambience IN ('promote','conditional','review')),
    conditions  TEXT NOT NULL,
    basis       TEXT NOT NULL,
    decided_at  BIGINT NOT NULL,
    verdict     TEXT CHECK (verdict IN ('approved','rejected'))
);

CREATE TABLE session_profiles (
    session_id   TEXT PRIMARY KEY REFERENCES sessions(id),
    created_at   BIGINT NOT NULL,
    text         TEXT NOT NULL,
    entries      TEXT NOT NULL,
    tokens       BIGINT NOT NULL,
    cut          BIGINT NOT NULL,
    content_hash TEXT NOT NULL
);
-- A profile never changes once issued (erasure may delete it).
CREATE FUNCTION session_profiles_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a session profile is immutable';
END $$;
CREATE TRIGGER session_profiles_immutable BEFORE UPDATE ON session_profiles
    FOR EACH ROW EXECUTE FUNCTION session_profiles_immutable();

CREATE TABLE turn_decisions (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    agent_id      TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    bundle_id     TEXT NOT NULL,
    disposition   TEXT NOT NULL CHECK (disposition IN ('draft_kept','regenerated')),
    reason        TEXT CHECK (reason IN ('no_gaps','nothing_admitted','unfit_bundle','failed')),
    failure       TEXT,
    gaps          TEXT NOT NULL,
    searches      TEXT NOT NULL,
    admitted      TEXT NOT NULL,
    timings       TEXT NOT NULL,
    input_tokens  BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    answer        TEXT,
    CHECK ((disposition = 'regenerated') = (answer IS NOT NULL)),
    CHECK ((disposition = 'draft_kept') = (reason IS NOT NULL))
);
CREATE INDEX turn_decisions_session ON turn_decisions (session_id, created_at);
CREATE INDEX turn_decisions_user ON turn_decisions (user_id);

-- The replicas' change feed. Every transaction that changes what a replica holds in memory
-- (records' eligibility fields, vectors) takes the next number from `change_head` first,
-- which row-locks it until commit: such transactions run one at a time across every process
-- (as SQLite's single writer does), so numbers commit in order and without gaps, and a
-- replica that reads `record_changes` after number n misses nothing. The keys are the
-- records it changed; a NOTIFY on `retold_changes` carries the number.
CREATE TABLE change_head (
    only_row  BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    seq       BIGINT NOT NULL
);
INSERT INTO change_head (only_row, seq) VALUES (true, 0);
CREATE TABLE record_changes (
    seq   BIGINT PRIMARY KEY,
    at    BIGINT NOT NULL,
    keys  TEXT NOT NULL
);
"#;

retold_store_sql::sql_migration!(SCHEMA);
