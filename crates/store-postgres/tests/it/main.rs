//! The store contract suite against the PostgreSQL implementation on the tests' private
//! server (a fresh database per test), and the PostgreSQL-specific tests: processes racing
//! for the same current fact and the same extraction claim, and the change feed.

mod contract;
mod postgres;

use retold_store_postgres::{PostgresConfig, PostgresStore};

pub(crate) struct Fixture {
    pub(crate) store: PostgresStore,
    pub(crate) url: String,
}

impl Fixture {
    /// Every store port of this store.
    pub(crate) fn backend(&self) -> std::sync::Arc<dyn retold_test_kit::prelude::Backend> {
        std::sync::Arc::new(self.store.clone())
    }
}

pub(crate) async fn open() -> Fixture {
    let url = retold_test_kit::postgres::fresh_database();
    let store = PostgresStore::open(&PostgresConfig::new(url.clone())).await.unwrap();
    Fixture { store, url }
}
