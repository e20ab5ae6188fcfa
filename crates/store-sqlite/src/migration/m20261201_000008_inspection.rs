//! The inspector's lists: the latest events of one kind, and sessions newest first, without a
//! scan or a sort of the whole table.

const SCHEMA: &str = r#"
CREATE INDEX events_kind ON events (kind, seq);
CREATE INDEX sessions_started ON sessions (started_at, id);
"#;

retold_store_sql::sql_migration!(SCHEMA);
