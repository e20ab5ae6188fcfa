//! What the two SQL stores (`retold-store-sqlite`, `retold-store-postgres`) share: the row ↔
//! domain conversion, which reads sea-orm rows the same way whichever driver produced them,
//! the store error with its mapping to `DomainError`, and the search-trace writer task. Each
//! store writes its own dialect; only a statement both read alike (`?` placeholders, which
//! each store numbers as its driver needs) lives here.

pub mod convert;
pub mod decisions;
pub mod error;
pub mod traces;

pub use crate::error::{StoreError, corrupt};

/// `Erasure::vectors_of` on either store: per chunk of ids, one statement counting the
/// served and staged vectors they hold (the counts add up).
pub fn vectors_of_counts(records: &[retold_domain::RecordId]) -> Vec<(String, Vec<sea_orm::Value>)> {
    records
        .chunks(500)
        .map(|chunk| {
            let marks = vec!["?"; chunk.len()].join(", ");
            let ids: Vec<sea_orm::Value> = chunk.iter().map(|id| id.as_str().into()).collect();
            let sql = format!(
                "SELECT (SELECT count(*) FROM embeddings WHERE record_id IN ({marks})) \
                 + (SELECT count(*) FROM embeddings_staged WHERE record_id IN ({marks}))"
            );
            (sql, [ids.clone(), ids].concat())
        })
        .collect()
}

/// `SentenceVectors::attach_sentences` on either store refuses, before anything runs, a batch
/// with a row whose numbers are not whole vectors of `model`, or two rows of one record.
pub fn check_sentence_rows(
    model: &retold_domain::EmbeddingModelInfo,
    rows: &[retold_domain::SentenceRow],
) -> Result<(), error::StoreError> {
    let dims = model.dims.max(1) as usize;
    if let Some(row) = rows.iter().find(|row| !row.sentences.len().is_multiple_of(dims)) {
        let reason = format!("{} numbers are not whole vectors of {}", row.sentences.len(), model.dims);
        return Err(error::corrupt("embeddings", reason));
    }
    let mut seen = std::collections::HashSet::with_capacity(rows.len());
    if let Some(row) = rows.iter().find(|row| !seen.insert(row.id.as_str())) {
        return Err(error::corrupt("embeddings", format!("two rows of sentence vectors for {}", row.id)));
    }
    Ok(())
}

/// Rows a purge of old search traces deletes per statement (each its own transaction), so
/// writes wait for one batch at a time.
pub const PURGE_BATCH: u64 = 1000;

/// One forward migration that runs one SQL script in one transaction, the shape of every
/// migration of both stores: `sql_migration!(SCHEMA);` in the migration's own file defines
/// its `Migration`, named after the file. Expands in the store crate, which provides
/// `sea_orm_migration` and `async_trait`.
#[macro_export]
macro_rules! sql_migration {
    ($sql:expr) => {
        #[derive(::sea_orm_migration::prelude::DeriveMigrationName)]
        pub(crate) struct Migration;

        #[::async_trait::async_trait]
        impl ::sea_orm_migration::prelude::MigrationTrait for Migration {
            async fn up(
                &self,
                manager: &::sea_orm_migration::prelude::SchemaManager,
            ) -> Result<(), ::sea_orm_migration::prelude::DbErr> {
                use ::sea_orm_migration::sea_orm::ConnectionTrait;
                manager.get_connection().execute_unprepared($sql).await?;
                Ok(())
            }

            fn use_transaction(&self) -> Option<bool> {
                Some(true)
            }
        }
    };
}
