//! Activation: one decision per record (category, rule, policy, a person's verdict), one
//! immutable profile per session, and the review queue widened for activation reviews.

const SCHEMA: &str = r#"
CREATE TABLE activation_decisions (
    record_id   TEXT PRIMARY KEY REFERENCES records(id),
    category    TEXT NOT NULL,
    rule        TEXT NOT NULL,
    ambience    TEXT NOT NULL CHECK (ambience IN ('promote','conditional','review')),
    conditions  TEXT NOT NULL,
    basis       TEXT NOT NULL,
    decided_at  INTEGER NOT NULL,
    verdict     TEXT CHECK (verdict IN ('approved','rejected'))
) STRICT;

CREATE TABLE session_profiles (
    session_id   TEXT PRIMARY KEY REFERENCES sessions(id),
    created_at   INTEGER NOT NULL,
    text         TEXT NOT NULL,
    entries      TEXT NOT NULL,
    tokens       INTEGER NOT NULL,
    cut          INTEGER NOT NULL,
    content_hash TEXT NOT NULL
) STRICT;
-- A profile never changes once issued (erasure may delete it).
CREATE TRIGGER session_profiles_immutable BEFORE UPDATE ON session_profiles
BEGIN SELECT RAISE(ABORT, 'a session profile is immutable'); END;

CREATE TABLE review_queue_widened (
    id          TEXT PRIMARY KEY,
    record_id   TEXT NOT NULL REFERENCES records(id),
    reason      TEXT NOT NULL CHECK (reason IN ('expiring_provisional','unresolved_conflict','stale_low_confidence','activation')),
    flagged_at  INTEGER NOT NULL,
    resolved_at INTEGER,
    resolution  TEXT CHECK (resolution IN ('confirm','expire','forget','approve','reject')),
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
) STRICT;
INSERT INTO review_queue_widened (id, record_id, reason, flagged_at, resolved_at, resolution)
    SELECT id, record_id, reason, flagged_at, resolved_at, resolution FROM review_queue;
DROP TABLE review_queue;
ALTER TABLE review_queue_widened RENAME TO review_queue;
CREATE UNIQUE INDEX review_queue_open ON review_queue (record_id, reason) WHERE resolved_at IS NULL;
CREATE INDEX review_queue_flagged ON review_queue (flagged_at);
"#;

retold_store_sql::sql_migration!(SCHEMA);
