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

fn trace(n: u32) -> retold_domain::SearchTrace {
    retold_domain::SearchTrace {
        id: retold_domain::SearchId::new(format!("srch_{n:05}")).unwrap(),
        at: retold_test_kit::contract::fixtures::t(3),
        agent_id: retold_domain::AgentId::new("research-agent").unwrap(),
        user_id: retold_domain::UserId::new("aditya").unwrap(),
        request: vec![("query".into(), format!("question {n}"))],
        query: format!("question {n}"),
        rewrite_status: retold_domain::RewriteStatus::Off,
        rewrite_note: None,
        eligible_count: u64::from(n),
        channels: vec![],
        fused: vec![],
        drops: vec![],
        notes: vec![],
        results: vec![],
        timings_us: vec![(retold_domain::PipelineStage::Total, 1)],
    }
}

/// Traces are written off the request path: each is readable as soon as its search has
/// answered, and a clean shutdown writes every one before the file closes.
#[tokio::test]
async fn every_search_trace_is_readable_at_once_and_written_by_a_clean_shutdown() {
    let f = open().await;
    let path = f.dir.path().join("retold.db");
    for n in 0..600 {
        f.store.append_trace(trace(n)).await.unwrap();
        if n % 97 == 0 {
            let (_, _, json) = f.store.trace(&trace(n).id).await.unwrap().expect("readable right away");
            assert!(json.contains(&format!("question {n}")), "{json}");
        }
    }
    f.store.close().await.unwrap();
    let reopened = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    for n in 0..600 {
        let (agent, _, json) = reopened.trace(&trace(n).id).await.unwrap().expect("written before close");
        assert_eq!(agent.as_str(), "research-agent");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["eligible_count"], n);
    }
}
