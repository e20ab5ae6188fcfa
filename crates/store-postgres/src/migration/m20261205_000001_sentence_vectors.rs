//! `embeddings.sentences` (and the staged ones'): a record's sentence vectors of the same
//! model, whole vectors of `dims` little-endian `f32`s one after the other, in the row of its
//! own vector, so that every path that writes, stages, switches or erases a record's vector
//! carries them with it. Existing rows have none until they are re-embedded.

const SCHEMA: &str = r#"
ALTER TABLE embeddings ADD COLUMN sentences BYTEA NOT NULL DEFAULT '\x'::bytea
    CHECK (length(sentences) % (4 * dims) = 0);
ALTER TABLE embeddings_staged ADD COLUMN sentences BYTEA NOT NULL DEFAULT '\x'::bytea
    CHECK (length(sentences) % (4 * dims) = 0);
"#;

retold_store_sql::sql_migration!(SCHEMA);
