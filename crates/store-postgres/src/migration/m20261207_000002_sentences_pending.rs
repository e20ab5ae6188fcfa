//! `embeddings.sentences_pending`: a record's sentence vectors are attached after its write
//! commits (the write answers once the record and its own vector are stored); 1 until they
//! are, so a process stopped in between attaches them at its next start.

const SCHEMA: &str = r#"
ALTER TABLE embeddings ADD COLUMN sentences_pending BIGINT NOT NULL DEFAULT 0 CHECK (sentences_pending IN (0, 1));
"#;

retold_store_sql::sql_migration!(SCHEMA);
