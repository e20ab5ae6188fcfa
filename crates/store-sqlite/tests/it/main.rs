//! The store contract suite, run against the SQLite implementation on a real file, and the
//! SQLite-specific tests.

mod contract;
mod lexical;
mod sqlite;

use retold_store_sqlite::{SqliteStore, StoreConfig};

pub(crate) use retold_test_kit::contract::fixtures::{event, record};

pub(crate) struct Fixture {
    pub(crate) store: SqliteStore,
    pub(crate) dir: tempfile::TempDir,
}

impl Fixture {
    /// Every store port of this store.
    pub(crate) fn backend(&self) -> std::sync::Arc<dyn retold_test_kit::prelude::Backend> {
        std::sync::Arc::new(self.store.clone())
    }
}

pub(crate) async fn open() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&StoreConfig::new(dir.path().join("retold.db"))).await.unwrap();
    Fixture { store, dir }
}
