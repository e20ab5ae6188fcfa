//! `records.context`: what a record was said in (the turn before it), embedded with its
//! content and never returned as it. Existing records have none.

const SCHEMA: &str = r#"
ALTER TABLE records ADD COLUMN context TEXT;
"#;

retold_store_sql::sql_migration!(SCHEMA);
