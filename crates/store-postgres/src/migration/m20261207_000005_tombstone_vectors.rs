//! Tombstones keep no vectors: a record forgotten (or erased) before this version kept its
//! served and staged vectors until an erasure scrubbed them, and `ops verify` counted them as
//! orphans. The write path now drops them in the tombstone's own commit; this drops those left.

const SCHEMA: &str = r#"
DELETE FROM embeddings WHERE record_key IN (SELECT key FROM records WHERE status = 'deleted' OR erased_at IS NOT NULL);
DELETE FROM embeddings_staged WHERE record_key IN (SELECT key FROM records WHERE status = 'deleted' OR erased_at IS NOT NULL);
"#;

retold_store_sql::sql_migration!(SCHEMA);
