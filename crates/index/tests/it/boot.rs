//! Boot: the index is rebuilt from the compatible embedding rows in SQLite.

use retold_domain::chrono::{TimeZone, Utc};
use retold_domain::{
    AgentId, Centring, Confidence, Content, EmbeddingModelInfo, EmbeddingRow, MemoryRecord, MemoryType,
    RecordId, RecordUpdate, Scope, SentenceWeight, SourceKind, Status, VectorIndex, WriteUnit,
};
use retold_index::{ExactIndex, RebuildReport};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use retold_test_kit::prelude::*;

fn record(n: u32) -> MemoryRecord {
    let at = Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap();
    MemoryRecord {
        id: RecordId::new(format!("mem_{n:04}")).unwrap(),
        memory_type: MemoryType::Semantic,
        version: 1,
        content: Content::new(format!("fact {n}")).unwrap(),
        key: None,
        scope: Scope::parse("project:p").unwrap(),
        source_kind: SourceKind::System,
        source_ref: None,
        creator_agent_id: AgentId::new("a").unwrap(),
        evidence: None,
        created_at: at,
        event_at: Some(at),
        expires_at: None,
        confidence: Confidence::new(0.9).unwrap(),
        status: Status::Confirmed,
        supersedes_id: None,
        reinforcements: 0,
        last_reinforced_at: None,
        tags: vec![],
        context: None,
        origin: retold_domain::Origin::Memory,
        speaker: None,
    }
}

#[tokio::test]
async fn boot_rebuilds_from_compatible_rows_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retold.db");
    let store = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    let model = EmbeddingModelInfo { name: "minilm".into(), version: 1, dims: 3 };
    let rows = [
        (1, "minilm", 1, vec![1.0, 0.0, 0.0]),
        (2, "minilm", 1, vec![0.0, 1.0, 0.0]),
        (3, "minilm", 2, vec![1.0, 0.0, 0.0]),
        (4, "bge-m3", 1, vec![1.0, 0.0, 0.0, 0.0]),
        (5, "minilm", 1, vec![0.9, 0.1, 0.0]),
    ];
    for (n, name, version, vector) in rows {
        let r = record(n);
        store
            .apply(WriteUnit {
                inserts: vec![r.clone()],
                embeddings: vec![EmbeddingRow {
                    record_id: r.id.clone(),
                    model: name.into(),
                    version,
                    dims: vector.len() as u32,
                    // Record 2 also has a sentence vector pointing where record 1 does.
                    sentences: if n == 2 { vec![1.0, 0.0, 0.0] } else { Vec::new() },
                    sentences_pending: false,
                    vector,
                }],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    // Record 5 is forgotten: its vector must not come back.
    let mut gone = record(5);
    gone.status = Status::Deleted;
    gone.version = 2;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: gone, expected_version: 1 }],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    store.close().await.unwrap();

    let store = SqliteStore::open(&StoreConfig::new(&path)).await.unwrap();
    let eligible: Vec<_> = store
        .eligible(&retold_domain::EligibilityFilter {
            scopes: vec![Scope::parse("project:p").unwrap()],
            statuses: retold_domain::EligibilityFilter::statuses_for(false),
            now: Utc::now(),
            types: None,
            event_from: None,
            event_to: None,
            include_conflicts: false,
            origins: None,
            excluded_session: None,
        })
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    let (index, report) = ExactIndex::rebuild(&store, &model).await.unwrap();
    assert_eq!(report, RebuildReport { loaded: 2, incompatible: 2 });
    let hits = index.search(&[1.0, 0.0, 0.0], &eligible, 10, Centring::NONE).unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.record_id.as_str()).collect();
    assert_eq!(ids, ["mem_0001", "mem_0002"]);
    // The boot scan loads sentence vectors with their record: weighed in, record 2's
    // sentence matches the query exactly.
    assert_eq!(index.sentence_rows(), 1);
    let full = SentenceWeight::new(1.0).unwrap();
    let hits = index.search_with(&[0.0, 1.0, 0.0], &eligible, 10, Centring::NONE, full).unwrap();
    assert_eq!(hits[0].record_id.as_str(), "mem_0001", "record 1 scores its own vector: {hits:?}");
    let hits = index.search_with(&[1.0, 0.0, 0.0], &eligible, 10, Centring::NONE, full).unwrap();
    assert_eq!((hits[1].record_id.as_str(), hits[1].sentence), ("mem_0002", Some(1.0)));
}
