//! SQLite-specific behaviour: restart on a real file, migrations, refusal of newer databases.

use retold_domain::{
    Attribute, Confidence, Context, Evidence, FactKey, LexicalTerm, MemoryType, NewEntity, RecordId,
    Snapshots, SourceRef, Tag, WriteUnit,
};
use retold_store_sqlite::{SqliteStore, StoreConfig, StoreError};
use retold_test_kit::contract::fixtures::{filter, t, trace};
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

/// Reads come back packed by SQLite as JSON (one row for a search's hundred-odd candidates),
/// so what JSON could bend must come back exactly: quotes, backslashes, control characters
/// and astral-plane text, every optional field set and unset, and a confidence that SQLite's
/// own JSON would round to 15 digits.
#[tokio::test]
async fn a_record_reads_back_exactly_alone_and_among_others() {
    let f = open().await;
    let mut full = record(1, "project:p", "She said \"no\" \\ then\n\ttabbed: naïve café ✓ 𝄞 🙂 \u{1}");
    full.memory_type = MemoryType::Procedural;
    full.version = 3;
    let ann = retold_test_kit::contract::fixtures::entity("ent_1", "Ann", "project:p");
    full.key = Some(FactKey::new(ann.id.clone(), Attribute::new("diet").unwrap()));
    full.source_ref = Some(SourceRef::new("turn:\"7\"").unwrap());
    full.evidence = Some(Evidence::new("quoted \"evidence\" ✓").unwrap());
    full.event_at = Some(t(4));
    full.expires_at = Some(t(30));
    full.confidence = Confidence::new(0.1 + 0.2).unwrap();
    full.supersedes_id = Some(RecordId::new("mem_0002").unwrap());
    full.reinforcements = 7;
    full.last_reinforced_at = Some(t(5));
    full.tags = vec![Tag::new("a\"b").unwrap(), Tag::new("ü").unwrap()];
    full.context = Some(Context::new("Speaker: \"Ann\" [2023-05-01]\n{\"json\": true}").unwrap());
    let mut bare = record(2, "project:p", "plain");
    bare.event_at = None;
    bare.confidence = Confidence::new(1.0 / 3.0).unwrap();
    f.store
        .apply(WriteUnit {
            entities: vec![NewEntity { entity: ann, aliases: Vec::new(), name_was_unknown: true }],
            inserts: vec![bare.clone(), full.clone()],
            ..WriteUnit::default()
        })
        .await
        .unwrap();

    assert_eq!(f.store.get(&full.id).await.unwrap().as_ref(), Some(&full));
    assert_eq!(f.store.get(&bare.id).await.unwrap().as_ref(), Some(&bare));
    assert_eq!(f.store.get(&RecordId::new("mem_0404").unwrap()).await.unwrap(), None);
    let mut many = f
        .store
        .get_many(&[bare.id.clone(), RecordId::new("mem_0404").unwrap(), full.id.clone()])
        .await
        .unwrap();
    many.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(many, vec![full, bare]);
    assert!(f.store.get_many(&[RecordId::new("mem_0404").unwrap()]).await.unwrap().is_empty());
}

/// `retold ops verify` under load answered `ok: false` with "fts5: checksum mismatch" on a
/// store that was sound. SQLite's FTS5 keeps the index structure it last read on each
/// connection and refreshes it when a statement opens a cursor on the table, but not when
/// `PRAGMA integrity_check` runs its check: a read connection whose last search came before
/// another connection's write compared the new rows with the old structure.
#[tokio::test]
async fn the_check_reads_the_full_text_index_as_it_is_after_other_connections_wrote() {
    let dir = tempfile::tempdir().unwrap();
    // One read connection, so the check runs where the search left its state.
    let config = StoreConfig { read_connections: 1, ..StoreConfig::new(dir.path().join("retold.db")) };
    let store = SqliteStore::open(&config).await.unwrap();
    let write = |n: u32, content: &str| {
        let r = record(n, "project:p", content);
        store.apply(WriteUnit { inserts: vec![r], ..WriteUnit::default() })
    };
    write(1, "the lantern by the north gate is lit at dusk").await.unwrap();
    let lantern = LexicalTerm::new("lantern", false);
    let eligible: Vec<_> =
        store.eligible(&filter(&["project:p"])).await.unwrap().iter().map(|e| e.key).collect();
    assert_eq!(store.search(std::slice::from_ref(&lantern), &eligible, 5).await.unwrap().len(), 1);
    // Another connection (the writer) changes the index after that search.
    write(2, "the lantern by the south gate stays dark").await.unwrap();
    let check = Snapshots::verify(&store).await.unwrap();
    assert_eq!(check.integrity, "ok", "{check:?}");
}

/// A store written before tombstones dropped their vectors still holds a forgotten record's
/// vector; the migration removes it, so the store checks clean once opened by this version.
#[tokio::test]
async fn a_vector_left_by_an_earlier_forget_is_removed_at_the_next_start() {
    let f = open().await;
    let path = f.dir.path().join("retold.db");
    for n in 1..=2 {
        let r = record(n, "project:p", &format!("fact number {n}"));
        let row = retold_domain::EmbeddingRow {
            record_id: r.id.clone(),
            model: "minilm".into(),
            version: 1,
            dims: 2,
            vector: vec![0.5, 0.5],
            sentences: Vec::new(),
            sentences_pending: false,
        };
        f.store
            .apply(WriteUnit { inserts: vec![r], embeddings: vec![row], ..WriteUnit::default() })
            .await
            .unwrap();
    }
    f.store.close().await.unwrap();
    // What an earlier version left: record 2 a tombstone, its vector still there, and the
    // migration not yet applied.
    let raw = Database::connect(format!("sqlite://{}", path.display())).await.unwrap();
    raw.execute_unprepared("UPDATE records SET status = 'deleted' WHERE id = 'mem_0002'").await.unwrap();
    raw.execute_unprepared("DELETE FROM records_fts WHERE rowid = 2").await.unwrap();
    raw.execute_unprepared(
        "DELETE FROM seaql_migrations WHERE version = 'm20261207_000005_tombstone_vectors'",
    )
    .await
    .unwrap();
    raw.close().await.unwrap();
    let reopened = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    let check = reopened.verify().await.unwrap();
    assert!(check.is_ok() && check.live == 1, "{check:?}");
    let scan = reopened.compatible_embeddings("minilm", 1, 2).await.unwrap();
    assert_eq!(scan.ids.iter().map(|i| i.as_str()).collect::<Vec<_>>(), ["mem_0001"]);
}
