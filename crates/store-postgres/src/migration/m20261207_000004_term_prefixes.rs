//! The kept vocabulary answers prefix lookups: an index on `lexical_terms.term` in byte order
//! (`COLLATE "C"`, whatever the database's collation), so the words that start with a stem
//! are one range scan over the vocabulary, as SQLite's `fts5vocab` answers them, instead of
//! `ts_stat` over every row holding such a word.

const SCHEMA: &str = r#"
SET LOCAL statement_timeout = 0;
CREATE INDEX lexical_terms_bytes ON lexical_terms (term COLLATE "C");
"#;

retold_store_sql::sql_migration!(SCHEMA);
