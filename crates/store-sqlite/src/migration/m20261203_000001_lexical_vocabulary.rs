//! `records_vocab`: the words `records_fts` indexes, read-only, for the retriever's stemming
//! (which indexed words share a query term's stem). A view over the FTS5 index itself, so it
//! holds nothing to keep in step and is never written.

const SCHEMA: &str = r#"
CREATE VIRTUAL TABLE records_vocab USING fts5vocab(records_fts, row);
"#;

retold_store_sql::sql_migration!(SCHEMA);
