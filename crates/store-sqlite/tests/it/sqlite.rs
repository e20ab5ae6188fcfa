//! SQLite-specific behaviour: restart on a real file, migrations, refusal of newer databases.

use retold_domain::WriteUnit;
use retold_store_sqlite::{SqliteStore, StoreConfig, StoreError};
use retold_test_kit::prelude::*;
use sea_orm::{ConnectionTrait, Database};

use crate::{event, open, record};

#[tokio::test]
async fn everything_written_is_there_after_a_restart() {
    let f = open().await;
    let path = f.dir.path().join("retold.db");
    let mut written = Vec::new();
    for n in 1..=20 {
        let r = record(n, "project:p", &format!("fact number {n}"));
        f.store
            .apply(WriteUnit {
                inserts: vec![r.clone()],
                events: vec![event("record.created", Some(&r.id))],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
        written.push(r);
    }
    f.store.close().await.unwrap();
    let reopened = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    for r in &written {
        assert_eq!(reopened.get(&r.id).await.unwrap().as_ref(), Some(r));
        assert_eq!(reopened.record_events(&r.id).await.unwrap().len(), 1);
    }
    // Migrations are idempotent: a third open changes nothing.
    reopened.close().await.unwrap();
    let again = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    assert_eq!(again.get(&written[0].id).await.unwrap().as_ref(), Some(&written[0]));
}

#[tokio::test]
async fn a_database_from_a_newer_retold_is_refused_untouched() {
    let f = open().await;
    let path = f.dir.path().join("retold.db");
    let mut plain = record(1, "project:p", "kept");
    plain.key = None;
    f.store.apply(WriteUnit { inserts: vec![plain.clone()], ..WriteUnit::default() }).await.unwrap();
    f.store.close().await.unwrap();
    let raw = Database::connect(format!("sqlite://{}", path.display())).await.unwrap();
    raw.execute_unprepared(
        "INSERT INTO seaql_migrations (version, applied_at) VALUES ('m29990101_000001_future', 0)",
    )
    .await
    .unwrap();
    raw.close().await.unwrap();
    let before = std::fs::read(&path).unwrap();
    match SqliteStore::open(&StoreConfig::new(&path)).await {
        Err(StoreError::NewerDatabase { unknown, .. }) => assert_eq!(unknown, ["m29990101_000001_future"]),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file must not be touched");
}

#[tokio::test]
async fn events_are_append_only() {
    let f = open().await;
    let r = record(1, "project:p", "x");
    f.store
        .apply(WriteUnit {
            inserts: vec![r.clone()],
            events: vec![event("record.created", Some(&r.id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    let path = f.dir.path().join("retold.db");
    let raw = Database::connect(format!("sqlite://{}", path.display())).await.unwrap();
    assert!(raw.execute_unprepared("UPDATE events SET kind = 'tampered'").await.is_err());
    assert!(raw.execute_unprepared("DELETE FROM events").await.is_err());
}
