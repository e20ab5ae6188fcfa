//! A covering index for the eligible-id query, so it never touches the table rows.

const SCHEMA: &str = r#"
CREATE INDEX records_eligible ON records (scope_kind, scope_id, status, expires_at, type, event_at, key, id);
"#;

retold_store_sql::sql_migration!(SCHEMA);
