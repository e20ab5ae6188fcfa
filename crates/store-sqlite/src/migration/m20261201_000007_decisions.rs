//! The orchestrator's decisions: one row per turn it was asked about.

const SCHEMA: &str = r#"
CREATE TABLE turn_decisions (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    agent_id      TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    bundle_id     TEXT NOT NULL,
    disposition   TEXT NOT NULL CHECK (disposition IN ('draft_kept','regenerated')),
    reason        TEXT CHECK (reason IN ('no_gaps','nothing_admitted','unfit_bundle','failed')),
    failure       TEXT,
    gaps          TEXT NOT NULL,
    searches      TEXT NOT NULL,
    admitted      TEXT NOT NULL,
    timings       TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    answer        TEXT,
    CHECK ((disposition = 'regenerated') = (answer IS NOT NULL)),
    CHECK ((disposition = 'draft_kept') = (reason IS NOT NULL))
) STRICT;
CREATE INDEX turn_decisions_session ON turn_decisions (session_id, created_at);
CREATE INDEX turn_decisions_user ON turn_decisions (user_id);
"#;

retold_store_sql::sql_migration!(SCHEMA);
