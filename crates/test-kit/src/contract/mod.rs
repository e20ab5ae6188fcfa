//! The store contract: what every implementation of the store ports must do. Each
//! function takes one backend (all store ports) and asserts; `contract_suite!` turns the
//! whole list into tests for an implementation (SQLite today, PostgreSQL next).

pub mod fixtures;

use std::sync::Arc;

use crate::prelude::*;
use retold_domain::{
    ConflictLink, DomainError, EligibilityFilter, EmbeddingRow, EntityId, GrantStore, LexicalIndex,
    LexicalTerm, LinkRole, MemoryType, Name, RecordEntityLink, RecordKey, RecordUpdate, Scope, Status,
    WriteUnit,
};

use self::fixtures::{entity, event, filter, full_record, record, t, trace};

fn terms(words: &[&str]) -> Vec<LexicalTerm> {
    words.iter().map(|w| LexicalTerm::new(*w, false)).collect()
}

async fn insert(store: &dyn Backend, record: retold_domain::MemoryRecord) -> RecordKey {
    let id = record.id.clone();
    let keys = store
        .apply(WriteUnit {
            inserts: vec![record],
            events: vec![event("record.created", Some(&id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    keys[0].key
}

async fn eligible_ids(store: &dyn Backend, filter: &EligibilityFilter) -> Vec<String> {
    store.eligible(filter).await.unwrap().into_iter().map(|e| e.id.to_string()).collect()
}

async fn lexical_ids(
    lexical: &dyn LexicalIndex,
    records: &dyn Backend,
    words: &[&str],
    scope: &str,
) -> Vec<String> {
    let eligible: Vec<RecordKey> =
        records.eligible(&filter(&[scope])).await.unwrap().iter().map(|e| e.key).collect();
    lexical
        .search(&terms(words), &eligible, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.record_id.to_string())
        .collect()
}

/// Contract: see the body.
pub async fn every_field_round_trips(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let entities: &dyn Backend = backend.as_ref();
    entities
        .create_entity(
            entity("ent_person_aditya", "Aditya", "user:aditya"),
            vec![],
            event("entity.created", None),
        )
        .await
        .unwrap();
    let full = full_record();
    assert!(full.content.as_str().chars().count() > 5_000);
    insert(store, full.clone()).await;
    assert_eq!(store.get(&full.id).await.unwrap(), Some(full.clone()));
    assert_eq!(full.subject().unwrap(), "ent_person_aditya/explanation_style");
    let missing = retold_domain::RecordId::new("mem_missing").unwrap();
    assert_eq!(store.get_many(&[missing.clone(), full.id.clone()]).await.unwrap(), vec![full.clone()]);
    assert!(store.get_many(&[missing]).await.unwrap().is_empty());
    assert!(store.get_many(&[]).await.unwrap().is_empty());

    // Every optional field empty, other enums.
    let mut sparse = record(2, "agent:researcher/aditya", "x");
    sparse.memory_type = MemoryType::Procedural;
    sparse.source_kind = retold_domain::SourceKind::AgentInference;
    sparse.status = Status::Provisional;
    sparse.event_at = None;
    sparse.expires_at = Some(t(30));
    sparse.last_reinforced_at = Some(t(4));
    sparse.reinforcements = 3;
    sparse.supersedes_id = Some(full.id.clone());
    insert(store, sparse.clone()).await;
    assert_eq!(store.get(&sparse.id).await.unwrap(), Some(sparse));
    assert_eq!(store.get(&retold_domain::RecordId::new("mem_missing").unwrap()).await.unwrap(), None);

    // What a packed (JSON) read could bend comes back exactly: quotes, backslashes, control
    // characters, astral-plane text, and confidences whose shortest forms need 17 digits.
    let mut bent =
        record(3, "agent:researcher/aditya", "She said \"no\" \\ then\n\ttabbed: naïve ✓ 𝄞 🙂 \u{1}");
    bent.confidence = retold_domain::Confidence::new(0.1 + 0.2).unwrap();
    insert(store, bent.clone()).await;
    assert_eq!(store.get(&bent.id).await.unwrap(), Some(bent.clone()));
    let mut many = store.get_many(&[bent.id.clone(), full.id.clone()]).await.unwrap();
    many.sort_by(|a, b| a.id.cmp(&b.id));
    let mut expected = vec![bent, full];
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(many, expected);
}

/// Contract: see the body.
pub async fn a_failing_statement_leaves_nothing_behind(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let r = record(1, "project:p", "orphaned zebra fact");
    // The link names an entity that does not exist: the foreign key fails after the record,
    // its FTS row and its embedding were written in the same transaction.
    let unit = WriteUnit {
        inserts: vec![r.clone()],
        links: vec![RecordEntityLink {
            record_id: r.id.clone(),
            entity_id: EntityId::new("ent_missing").unwrap(),
            role: LinkRole::About,
        }],
        embeddings: vec![EmbeddingRow {
            record_id: r.id.clone(),
            model: "m".into(),
            version: 1,
            dims: 2,
            vector: vec![1.0, 0.0],
            sentences: vec![0.0, 1.0],
            sentences_pending: false,
        }],
        events: vec![event("record.created", Some(&r.id))],
        ..WriteUnit::default()
    };
    assert!(store.apply(unit).await.is_err());
    assert_eq!(store.get(&r.id).await.unwrap(), None);
    assert!(store.record_events(&r.id).await.unwrap().is_empty());
    let scan = store.compatible_embeddings("m", 1, 2).await.unwrap();
    assert!(scan.keys.is_empty() && scan.vectors.is_empty() && scan.incompatible == 0);
    assert!(lexical_ids(lexical, store, &["zebra"], "project:p").await.is_empty());

    // A duplicate event id as the last statement also rolls everything back.
    insert(store, record(2, "project:p", "first")).await;
    let taken = store.record_events(&record(2, "project:p", "x").id).await.unwrap()[0].clone();
    let r3 = record(3, "project:p", "second zebra");
    let unit = WriteUnit { inserts: vec![r3.clone()], events: vec![taken], ..WriteUnit::default() };
    assert!(matches!(store.apply(unit).await, Err(DomainError::Conflict(_))));
    assert_eq!(store.get(&r3.id).await.unwrap(), None);
    assert!(lexical_ids(lexical, store, &["zebra"], "project:p").await.is_empty());
}

/// Contract: see the body.
pub async fn supersession_flips_the_old_record_and_links_the_new_one_atomically(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let old = record(1, "user:aditya", "Aditya prefers concise technical explanations.");
    insert(store, old.clone()).await;
    let mut new = record(2, "user:aditya", "Aditya prefers detailed architecture explanations.");
    new.supersedes_id = Some(old.id.clone());
    let mut flipped = old.clone();
    flipped.status = Status::Superseded;
    flipped.version = 2;
    let unit = WriteUnit {
        inserts: vec![new.clone()],
        updates: vec![RecordUpdate { record: flipped.clone(), expected_version: 1 }],
        events: vec![event("record.superseded", Some(&old.id)), event("record.created", Some(&new.id))],
        ..WriteUnit::default()
    };
    store.apply(unit.clone()).await.unwrap();
    assert_eq!(store.get(&old.id).await.unwrap().unwrap().status, Status::Superseded);
    assert_eq!(store.get(&new.id).await.unwrap().unwrap().supersedes_id, Some(old.id.clone()));
    assert_eq!(eligible_ids(store, &filter(&["user:aditya"])).await, ["mem_0002"]);

    // Replaying the same unit: the old record's version moved on, so nothing is written, and
    // the error is contention (the writer may read again and decide again).
    let mut replay = unit;
    replay.inserts[0].id = retold_domain::RecordId::new("mem_0003").unwrap();
    replay.events = vec![event("record.created", None)];
    assert!(matches!(store.apply(replay).await, Err(DomainError::Contention(_))));
    assert_eq!(store.get(&retold_domain::RecordId::new("mem_0003").unwrap()).await.unwrap(), None);
}

/// Contract: see the body.
pub async fn conflicts_are_linked_both_ways(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let confirmed = record(1, "user:aditya", "concise");
    insert(store, confirmed.clone()).await;
    let mut provisional = record(2, "user:aditya", "detailed");
    provisional.status = Status::Provisional;
    let link = ConflictLink { record_id: confirmed.id.clone(), conflicting_id: provisional.id.clone() };
    store
        .apply(WriteUnit {
            inserts: vec![provisional.clone()],
            conflicts: vec![link.clone()],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    assert_eq!(
        store.conflicts_of(std::slice::from_ref(&confirmed.id)).await.unwrap(),
        std::slice::from_ref(&link)
    );
    assert_eq!(store.conflicts_of(std::slice::from_ref(&provisional.id)).await.unwrap(), [link]);
}

/// Contract: see the body.
pub async fn alias_changes_rewrite_fts_rows(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let entities: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let project = entity("ent_project_memory", "agentic-memory-system", "project:p");
    entities
        .create_entity(project.clone(), vec![Name::new("quasar").unwrap()], event("entity.created", None))
        .await
        .unwrap();
    // The content uses a pronoun; only the aliases column can find it by name.
    let r = record(1, "project:p", "It uses Conventional Commits.");
    store
        .apply(WriteUnit {
            inserts: vec![r.clone()],
            links: vec![RecordEntityLink {
                record_id: r.id.clone(),
                entity_id: project.id.clone(),
                role: LinkRole::About,
            }],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    assert_eq!(lexical_ids(lexical, store, &["quasar"], "project:p").await, ["mem_0001"]);

    entities
        .add_alias(&project.id, Name::new("Zephyr Engine").unwrap(), event("entity.alias_added", None))
        .await
        .unwrap();
    let hits = lexical.search(&terms(&["zephyr"]), &[RecordKey(1)], 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].matched.len(), 1);
    assert!(hits[0].matched[0].alias, "the match came through the aliases column");

    entities
        .remove_alias(&project.id, &Name::new("QUASAR").unwrap(), event("entity.alias_removed", None))
        .await
        .unwrap();
    assert!(lexical_ids(lexical, store, &["quasar"], "project:p").await.is_empty());
    assert_eq!(lexical_ids(lexical, store, &["zephyr"], "project:p").await, ["mem_0001"]);
    assert_eq!(entities.aliases(&project.id).await.unwrap(), [Name::new("Zephyr Engine").unwrap()]);
}

/// Contract: see the body.
pub async fn merging_entities_moves_links_and_aliases(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let entities: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let survivor = entity("ent_repo_cli", "agent-memory-cli", "project:p");
    let dup = entity("ent_repo_cli_dup", "nebulatool", "project:p");
    entities.create_entity(survivor.clone(), vec![], event("entity.created", None)).await.unwrap();
    entities
        .create_entity(dup.clone(), vec![Name::new("memory CLI").unwrap()], event("entity.created", None))
        .await
        .unwrap();
    let r = record(1, "project:p", "Release it on Fridays.");
    store
        .apply(WriteUnit {
            inserts: vec![r.clone()],
            links: vec![RecordEntityLink {
                record_id: r.id.clone(),
                entity_id: dup.id.clone(),
                role: LinkRole::Mentions,
            }],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    entities
        .merge(retold_domain::EntityMerge {
            from: dup.id.clone(),
            into: survivor.id.clone(),
            scopes: None,
            updates: vec![],
            conflicts: vec![],
            events: vec![event("entity.merged", None)],
        })
        .await
        .unwrap();
    assert_eq!(store.links_of(std::slice::from_ref(&r.id)).await.unwrap()[0].entity_id, survivor.id);
    assert_eq!(entities.entity(&dup.id).await.unwrap().unwrap().merged_into, Some(survivor.id.clone()));
    // The old name now finds the survivor, and the record still matches it lexically.
    let scopes = [Scope::parse("project:p").unwrap()];
    let found = entities.find_by_name(&scopes, &Name::new("NebulaTool").unwrap()).await.unwrap();
    assert_eq!(found.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [survivor.id.as_str()]);
    assert_eq!(lexical_ids(lexical, store, &["nebulatool"], "project:p").await, ["mem_0001"]);
    assert_eq!(lexical_ids(lexical, store, &["agent-memory-cli"], "project:p").await, ["mem_0001"]);
}

/// Contract: see the body.
pub async fn entity_lookup_is_exact_and_scope_aware(backend: Arc<dyn Backend>) {
    let entities: &dyn Backend = backend.as_ref();
    entities
        .create_entity(
            entity("ent_a", "Memory System", "project:p"),
            vec![Name::new("agent-memory-system").unwrap()],
            event("entity.created", None),
        )
        .await
        .unwrap();
    entities
        .create_entity(entity("ent_b", "memory system", "project:q"), vec![], event("entity.created", None))
        .await
        .unwrap();
    let p = [Scope::parse("project:p").unwrap()];
    let both = [Scope::parse("project:p").unwrap(), Scope::parse("project:q").unwrap()];
    let ids = |v: Vec<retold_domain::Entity>| v.into_iter().map(|e| e.id.to_string()).collect::<Vec<_>>();
    assert_eq!(
        ids(entities.find_by_name(&p, &Name::new("memory  SYSTEM").unwrap()).await.unwrap()),
        ["ent_a"]
    );
    assert_eq!(
        ids(entities.find_by_name(&both, &Name::new("memory system").unwrap()).await.unwrap()),
        ["ent_a", "ent_b"]
    );
    assert_eq!(
        ids(entities.find_by_name(&p, &Name::new("agent-memory-system").unwrap()).await.unwrap()),
        ["ent_a"]
    );
    assert!(entities.find_by_name(&p, &Name::new("memory").unwrap()).await.unwrap().is_empty());
    assert!(entities.find_by_name(&[], &Name::new("memory system").unwrap()).await.unwrap().is_empty());
    // Names are data, whatever they hold: quotes, a backslash, commas, braces, the word NULL
    // (each would mean something in an array or JSON literal written unquoted).
    let odd = r#"Dana "D\" O'Neil, {Jr.} NULL"#;
    entities
        .create_entity(
            entity("ent_c", odd, "project:p"),
            vec![Name::new("a,b").unwrap()],
            event("entity.created", None),
        )
        .await
        .unwrap();
    for (id, name) in [("ent_d", "NULL"), ("ent_e", "Zoë Łukasz 王"), ("ent_f", r"ends in \")] {
        entities
            .create_entity(entity(id, name, "project:p"), vec![], event("entity.created", None))
            .await
            .unwrap();
    }
    let asked = [
        Name::new(odd).unwrap(),
        Name::new("a,b").unwrap(),
        Name::new("memory system").unwrap(),
        Name::new("null").unwrap(),
        Name::new("ZOË ŁUKASZ 王").unwrap(),
        Name::new(r"ends in \").unwrap(),
    ];
    let mut found: Vec<(String, String)> = entities
        .find_by_names(&p, &asked)
        .await
        .unwrap()
        .into_iter()
        .map(|(matched, e)| (matched, e.id.to_string()))
        .collect();
    found.sort();
    let mut expected = vec![
        (Name::new(odd).unwrap().folded(), "ent_c".to_string()),
        ("a,b".to_string(), "ent_c".to_string()),
        ("memory system".to_string(), "ent_a".to_string()),
        ("null".to_string(), "ent_d".to_string()),
        (Name::new("Zoë Łukasz 王").unwrap().folded(), "ent_e".to_string()),
        (r"ends in \".to_string(), "ent_f".to_string()),
    ];
    expected.sort();
    assert_eq!(found, expected);
}

/// Contract: see the body.
pub async fn the_eligible_filter_excludes_everything_it_must(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let mut rows = Vec::new();
    rows.push(record(1, "project:p", "kept semantic"));
    rows.push(record(2, "project:other", "other scope"));
    let mut superseded = record(3, "project:p", "old superseded");
    superseded.status = Status::Superseded;
    rows.push(superseded);
    let mut expired_by_date = record(4, "project:p", "expired by date");
    expired_by_date.status = Status::Provisional;
    expired_by_date.expires_at = Some(t(10)); // at `now`: expired
    rows.push(expired_by_date);
    let mut expired_status = record(5, "project:p", "expired status");
    expired_status.status = Status::Expired;
    rows.push(expired_status);
    let mut episodic = record(6, "project:p", "episode on the fifth");
    episodic.memory_type = MemoryType::Episodic;
    episodic.event_at = Some(t(5));
    rows.push(episodic);
    let mut future_expiry = record(7, "project:p", "provisional not yet expired");
    future_expiry.status = Status::Provisional;
    future_expiry.expires_at = Some(t(11));
    rows.push(future_expiry);
    let deleted = record(8, "project:p", "forgotten secret");
    rows.push(deleted.clone());
    for r in rows {
        insert(store, r).await;
    }
    // Forget record 8: status deleted, FTS row gone.
    let mut gone = deleted.clone();
    gone.status = Status::Deleted;
    gone.version = 2;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: gone, expected_version: 1 }],
            events: vec![event("record.forgotten", Some(&deleted.id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();

    assert_eq!(eligible_ids(store, &filter(&["project:p"])).await, ["mem_0001", "mem_0006", "mem_0007"]);
    let mut history = filter(&["project:p"]);
    history.statuses = EligibilityFilter::statuses_for(true);
    assert_eq!(eligible_ids(store, &history).await, ["mem_0001", "mem_0003", "mem_0006", "mem_0007"]);
    let mut episodic_only = filter(&["project:p"]);
    episodic_only.types = Some(vec![MemoryType::Episodic]);
    assert_eq!(eligible_ids(store, &episodic_only).await, ["mem_0006"]);
    let mut window = filter(&["project:p"]);
    window.event_from = Some(t(4));
    window.event_to = Some(t(6));
    assert_eq!(eligible_ids(store, &window).await, ["mem_0006"]);
    window.event_to = Some(t(5)); // exclusive upper bound
    assert!(eligible_ids(store, &window).await.is_empty());
    assert!(eligible_ids(store, &filter(&[])).await.is_empty());
    assert_eq!(eligible_ids(store, &filter(&["project:p", "project:other"])).await.len(), 4);

    // Deleted records have no FTS row, even when asked for with every key.
    let all: Vec<RecordKey> = (1..=8).map(RecordKey).collect();
    let hits = lexical.search(&terms(&["forgotten", "secret"]), &all, 10).await.unwrap();
    assert!(hits.is_empty(), "{hits:?}");
    // Ineligible records never crowd out eligible ones: only eligible keys come back.
    let hits = lexical.search(&terms(&["scope", "semantic"]), &[RecordKey(1)], 1).await.unwrap();
    assert_eq!(hits.iter().map(|h| h.record_id.as_str()).collect::<Vec<_>>(), ["mem_0001"]);
}

/// Contract: see the body.
pub async fn a_terms_forms_count_as_the_term_and_indexed_words_are_listed_by_prefix(
    backend: Arc<dyn Backend>,
) {
    let store: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let hiked = insert(store, record(1, "project:p", "We hiked the ridge trail on Sunday")).await;
    let hikes = insert(store, record(2, "project:p", "Weekly hikes keep the team sane")).await;
    let other = insert(store, record(3, "project:q", "The hiker app crashed")).await;
    let forgotten = record(4, "project:p", "hikingpole secrets");
    insert(store, forgotten.clone()).await;
    let mut gone = forgotten.clone();
    gone.status = Status::Deleted;
    gone.version = 2;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: gone, expected_version: 1 }],
            events: vec![event("record.forgotten", Some(&forgotten.id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();

    // The words are the index's own (lowercased tokens), in byte order, from every record
    // whatever its scope, never a deleted record's; `limit` caps them.
    assert_eq!(lexical.words_with_prefix("hik", 10).await.unwrap(), ["hiked", "hiker", "hikes"]);
    assert_eq!(lexical.words_with_prefix("hik", 2).await.unwrap(), ["hiked", "hiker"]);
    assert!(lexical.words_with_prefix("zzz", 10).await.unwrap().is_empty());
    assert!(lexical.words_with_prefix("", 10).await.unwrap().is_empty());
    assert!(lexical.words_with_prefix("hik'*", 10).await.is_ok(), "a prefix is never query syntax");

    // "hiking" is in no record; with its forms it matches both eligible ones, each reporting
    // the term as asked; the ineligible record never comes back.
    let plain = lexical.search(&terms(&["hiking"]), &[hiked, hikes, other], 10).await.unwrap();
    assert!(plain.is_empty(), "{plain:?}");
    let mut hiking = LexicalTerm::new("hiking", false);
    hiking.forms = vec!["hiked".into(), "hikes".into()];
    let hits =
        lexical.search(&[hiking, LexicalTerm::new("ridge", false)], &[hiked, hikes], 10).await.unwrap();
    let found: Vec<(&str, Vec<&str>)> = hits
        .iter()
        .map(|h| (h.record_id.as_str(), h.matched.iter().map(|m| m.term.as_str()).collect()))
        .collect();
    assert_eq!(found, [("mem_0001", vec!["hiking", "ridge"]), ("mem_0002", vec!["hiking"])]);
}

/// Contract: see the body.
pub async fn user_text_is_never_fts_syntax(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let lexical: &dyn LexicalIndex = backend.as_ref();
    let key = insert(store, record(1, "project:p", "content with a quote \" and stars")).await;
    for nasty in ["a\" OR content:* NEAR(", "\"", "*", "NEAR(a b)", "content:x", "(", "AND", "-x", "^start"] {
        let result = lexical.search(&terms(&[nasty]), &[key], 5).await;
        assert!(result.is_ok(), "{nasty:?} gave {result:?}");
    }
}

/// Contract: see the body.
pub async fn grants_are_stored_listed_and_revoked(backend: Arc<dyn Backend>) {
    let grants: &dyn GrantStore = backend.as_ref();
    let agent = retold_domain::AgentId::new("implementation-agent").unwrap();
    let grant = retold_domain::Grant {
        id: retold_domain::GrantId::new("grt_1").unwrap(),
        agent_id: agent.clone(),
        scope: Scope::parse("project:agentic-memory-system").unwrap(),
        can_read: true,
        can_write: false,
    };
    grants.put_grant(grant.clone(), event("grant.created", None)).await.unwrap();
    assert_eq!(grants.grants_for(&agent).await.unwrap(), std::slice::from_ref(&grant));
    grants.revoke_grant(&grant.id, event("grant.revoked", None)).await.unwrap();
    assert!(grants.grants_for(&agent).await.unwrap().is_empty());
    assert!(matches!(
        grants.revoke_grant(&grant.id, event("grant.revoked", None)).await,
        Err(DomainError::NotFound { .. })
    ));
}

/// Contract: see the body.
pub async fn only_compatible_embeddings_are_loaded(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    for (n, model, dims) in [(1, "minilm", 2u32), (2, "minilm", 2), (3, "bge-m3", 3)] {
        let r = record(n, "project:p", "x");
        store
            .apply(WriteUnit {
                inserts: vec![r.clone()],
                embeddings: vec![EmbeddingRow {
                    record_id: r.id.clone(),
                    model: model.into(),
                    version: 1,
                    dims,
                    vector: (0..dims).map(|i| i as f32 + 0.5).collect(),
                    sentences: Vec::new(),
                    sentences_pending: false,
                }],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    let scan = store.compatible_embeddings("minilm", 1, 2).await.unwrap();
    assert_eq!(scan.incompatible, 1);
    assert_eq!(scan.keys, [RecordKey(1), RecordKey(2)]);
    assert_eq!(scan.ids.iter().map(|i| i.as_str()).collect::<Vec<_>>(), ["mem_0001", "mem_0002"]);
    assert_eq!(scan.vectors, [0.5, 1.5, 0.5, 1.5]);
    assert_eq!(store.compatible_embeddings("minilm", 2, 2).await.unwrap().incompatible, 3);
}

/// Contract: see the body.
pub async fn embeddings_round_trip_bit_for_bit_across_many_rows(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    // Bytes 0x00 and ',' inside blobs, signed zeros, subnormals, thousands of rows.
    let tricky = [0.0f32, -0.0, f32::from_bits(1), f32::from_bits(0x2C2C_2C2C), -1.5e-38];
    let mut unit = WriteUnit::default();
    let n = 9_000u32;
    for i in 1..=n {
        let r = record(i, "project:p", "x");
        unit.embeddings.push(EmbeddingRow {
            record_id: r.id.clone(),
            model: "m".into(),
            version: 1,
            dims: 5,
            vector: tricky.iter().map(|x| if i % 2 == 0 { *x } else { x * i as f32 }).collect(),
            // Every third row has `i % 4` sentence vectors.
            sentences: match i % 3 {
                0 => tricky.iter().cycle().take(5 * (i % 4) as usize).map(|x| x * 2.0).collect(),
                _ => Vec::new(),
            },
            sentences_pending: false,
        });
        unit.inserts.push(r);
    }
    store.apply(unit.clone()).await.unwrap();
    let scan = store.compatible_embeddings("m", 1, 5).await.unwrap();
    assert_eq!(scan.incompatible, 0);
    assert_eq!(scan.keys.len(), n as usize);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(scan.sentence_counts.len(), n as usize);
    let mut sentences = scan.sentences.as_slice();
    for (((id, got), count), want) in
        scan.ids.iter().zip(scan.vectors.chunks_exact(5)).zip(&scan.sentence_counts).zip(&unit.embeddings)
    {
        assert_eq!(id, &want.record_id);
        assert_eq!(bits(got), bits(&want.vector));
        let (these, rest) = sentences.split_at(5 * *count as usize);
        assert_eq!(bits(these), bits(&want.sentences));
        sentences = rest;
    }
    assert!(sentences.is_empty());
}

/// Contract: see the body.
pub async fn sessions_number_turns_and_refuse_writes_after_the_end(backend: Arc<dyn Backend>) {
    use retold_domain::{Session, SessionId, SessionTurn, TurnRole};
    let sessions: &dyn Backend = backend.as_ref();
    let id = SessionId::new("sess_42").unwrap();
    let session = Session {
        id: id.clone(),
        agent_id: retold_domain::AgentId::new("research-agent").unwrap(),
        user_id: retold_domain::UserId::new("aditya").unwrap(),
        project_id: None,
        started_at: t(3),
        ended_at: None,
        scope: Some(Scope::parse("project:memory").unwrap()),
    };
    sessions.start_session(session.clone(), event("session.started", None)).await.unwrap();
    assert_eq!(sessions.session(&id).await.unwrap().unwrap(), session, "the session's scope is kept");
    assert!(matches!(
        sessions.start_session(session, event("session.started", None)).await,
        Err(DomainError::Conflict(_))
    ));
    assert!(sessions.last_turn(&id).await.unwrap().is_none());
    let turn = |n: u32, role: TurnRole, text: &str| SessionTurn {
        session_id: id.clone(),
        turn: n,
        role,
        speaker: None,
        content: text.into(),
        at: t(3),
        created_at: t(3),
    };
    for (n, (role, text)) in
        [(TurnRole::User, "Keep answers concise."), (TurnRole::Assistant, "Noted."), (TurnRole::Tool, "{}")]
            .into_iter()
            .enumerate()
    {
        sessions.append_turn(turn(n as u32 + 1, role, text)).await.unwrap();
    }
    // A number already taken, or one that skips, is contention: the writer reads the last
    // turn again.
    for n in [3, 5] {
        assert!(matches!(
            sessions.append_turn(turn(n, TurnRole::User, "again")).await,
            Err(DomainError::Contention(_))
        ));
    }
    // A named speaker and the time it was said (before it was recorded) are kept.
    let said = SessionTurn {
        speaker: Some(Name::new("Melanie").unwrap()),
        at: t(2),
        ..turn(4, TurnRole::User, "Caroline, we went camping last week!")
    };
    sessions.append_turn(said.clone()).await.unwrap();
    assert_eq!(sessions.last_turn(&id).await.unwrap(), Some(said.clone()));
    assert_eq!(sessions.turn(&id, 4).await.unwrap(), Some(said));
    let first = sessions.turn(&id, 1).await.unwrap().unwrap();
    assert_eq!((first.role, first.content.as_str()), (TurnRole::User, "Keep answers concise."));
    assert_eq!(sessions.turns(&id).await.unwrap().len(), 4);
    assert!(sessions.turn(&id, 5).await.unwrap().is_none());
    sessions.end_session(&id, t(4), false, event("session.ended", None)).await.unwrap();
    assert_eq!(sessions.session(&id).await.unwrap().unwrap().ended_at, Some(t(4)));
    assert!(matches!(
        sessions.append_turn(turn(5, TurnRole::User, "late")).await,
        Err(DomainError::Conflict(_))
    ));
    assert!(matches!(
        sessions.end_session(&id, t(5), false, event("session.ended", None)).await,
        Err(DomainError::Conflict(_))
    ));
    let missing = SessionId::new("sess_missing").unwrap();
    assert!(matches!(
        sessions.append_turn(SessionTurn { session_id: missing, ..turn(1, TurnRole::User, "x") }).await,
        Err(DomainError::NotFound { .. })
    ));
}

/// Contract: see the body.
pub async fn a_turn_and_the_records_kept_of_it_commit_together_or_not_at_all(backend: Arc<dyn Backend>) {
    use retold_domain::{Origin, Session, SessionId, SessionTurn, SourceRef, TurnRole};
    let store: &dyn Backend = backend.as_ref();
    let id = SessionId::new("sess_turns").unwrap();
    let session = Session {
        id: id.clone(),
        agent_id: retold_domain::AgentId::new("research-agent").unwrap(),
        user_id: retold_domain::UserId::new("aditya").unwrap(),
        project_id: None,
        started_at: t(1),
        ended_at: None,
        scope: None,
    };
    store.start_session(session, event("session.started", None)).await.unwrap();
    let turn = SessionTurn {
        session_id: id.clone(),
        turn: 1,
        role: TurnRole::User,
        speaker: None,
        content: "My cat Biscuit is allergic to chicken.".into(),
        at: t(2),
        created_at: t(2),
    };
    let kept = |n: u32| retold_domain::MemoryRecord {
        memory_type: MemoryType::Episodic,
        key: None,
        source_ref: Some(SourceRef::session_turn_ref(&id, 1)),
        origin: Origin::Turn,
        ..record(n, "agent:research-agent/aditya", "My cat Biscuit is allergic to chicken.")
    };
    // A unit whose turn number is taken writes neither the turn nor its record.
    store.append_turn(turn.clone()).await.unwrap();
    let refused = WriteUnit { turn: Some(turn.clone()), inserts: vec![kept(1)], ..WriteUnit::default() };
    assert!(matches!(store.apply(refused).await, Err(DomainError::Contention(_))));
    assert!(store.get(&kept(1).id).await.unwrap().is_none(), "the record did not commit without its turn");
    // The next number commits the turn and its record together.
    let second = SessionTurn { turn: 2, content: "She eats salmon kibble now.".into(), ..turn.clone() };
    let unit = WriteUnit { turn: Some(second.clone()), inserts: vec![kept(2)], ..WriteUnit::default() };
    store.apply(unit).await.unwrap();
    assert_eq!(store.turn(&id, 2).await.unwrap(), Some(second));
    let stored = store.get(&kept(2).id).await.unwrap().unwrap();
    assert_eq!(
        (stored.origin, stored.source_ref.clone()),
        (Origin::Turn, Some(SourceRef::session_turn_ref(&id, 1)))
    );
    // The eligibility filter tells turns from memories, and leaves out a session's own turns.
    let mut memory = record(3, "agent:research-agent/aditya", "Biscuit's vet is Dr. Ruiz.");
    memory.memory_type = MemoryType::Episodic;
    memory.key = None;
    store.apply(WriteUnit { inserts: vec![memory.clone()], ..WriteUnit::default() }).await.unwrap();
    let ids = |f: EligibilityFilter| async move {
        store.eligible(&f).await.unwrap().into_iter().map(|e| e.id.to_string()).collect::<Vec<_>>()
    };
    let all = filter(&["agent:research-agent/aditya"]);
    assert_eq!(ids(all.clone()).await, [kept(2).id.to_string(), memory.id.to_string()]);
    let memories = EligibilityFilter { origins: Some(vec![Origin::Memory]), ..all.clone() };
    assert_eq!(ids(memories).await, [memory.id.to_string()]);
    let turns = EligibilityFilter { origins: Some(vec![Origin::Turn]), ..all.clone() };
    assert_eq!(ids(turns).await, [kept(2).id.to_string()]);
    let outside = EligibilityFilter { excluded_session: Some(id.clone()), ..all.clone() };
    assert_eq!(ids(outside).await, [memory.id.to_string()]);
    let other =
        EligibilityFilter { excluded_session: Some(SessionId::new("sess_turn").unwrap()), ..all.clone() };
    assert_eq!(ids(other).await.len(), 2, "only that session's turns are left out, not a prefix of it");
    // An ended session takes no turn, and the unit's records do not commit either.
    store.end_session(&id, t(3), false, event("session.ended", None)).await.unwrap();
    let late = SessionTurn { turn: 3, ..turn };
    let unit = WriteUnit { turn: Some(late), inserts: vec![kept(4)], ..WriteUnit::default() };
    assert!(matches!(store.apply(unit).await, Err(DomainError::Conflict(_))));
    assert!(store.get(&kept(4).id).await.unwrap().is_none());
}

/// Contract: see the body.
pub async fn an_ended_session_is_claimed_for_extraction_once_with_a_lease_and_bounded_retries(
    backend: Arc<dyn Backend>,
) {
    use retold_domain::{ClaimTerms, ExtractionClaim, Session, SessionId};
    let sessions: &dyn Backend = backend.as_ref();
    let start = |id: &str| Session {
        id: SessionId::new(id).unwrap(),
        agent_id: retold_domain::AgentId::new("research-agent").unwrap(),
        user_id: retold_domain::UserId::new("aditya").unwrap(),
        project_id: None,
        started_at: t(1),
        ended_at: None,
        scope: None,
    };
    // Claims made at t(5); a claim older than t(4) has lapsed.
    let terms = |now: u32, lapsed_before: u32| ClaimTerms {
        at: t(now),
        lapsed_before: t(lapsed_before),
        max_attempts: 2,
    };
    let (a, b, off) = (start("sess_a"), start("sess_b"), start("sess_off"));
    for s in [&a, &b, &off] {
        sessions.start_session(s.clone(), event("session.started", None)).await.unwrap();
    }
    assert_eq!(
        sessions.claim_extraction(&a.id, "runner-1", terms(2, 1)).await.unwrap(),
        ExtractionClaim::NotEnded
    );
    sessions.end_session(&b.id, t(3), true, event("session.ended", None)).await.unwrap();
    sessions.end_session(&a.id, t(4), true, event("session.ended", None)).await.unwrap();
    sessions.end_session(&off.id, t(4), false, event("session.ended", None)).await.unwrap();
    assert_eq!(
        sessions.pending_extractions(10, terms(5, 4)).await.unwrap(),
        vec![b.id.clone(), a.id.clone()],
        "oldest end first; sessions ended with extraction off are not pending"
    );
    assert_eq!(sessions.pending_extractions(1, terms(5, 4)).await.unwrap(), vec![b.id.clone()]);

    // Eight claimants race on one session: exactly one wins.
    let claims = futures_join((0..8).map(|n| {
        let store = backend.clone();
        let id = a.id.clone();
        async move { store.claim_extraction(&id, &format!("runner-{n}"), terms(5, 4)).await.unwrap() }
    }))
    .await;
    let winners: Vec<_> =
        claims.iter().filter(|c| matches!(c, ExtractionClaim::Claimed { attempt: 1 })).collect();
    assert_eq!(winners.len(), 1, "{claims:?}");
    assert_eq!(
        claims
            .iter()
            .filter(|c| matches!(c, ExtractionClaim::InProgress { by } if by.starts_with("runner-")))
            .count(),
        7,
        "{claims:?}"
    );
    assert_eq!(sessions.pending_extractions(10, terms(5, 4)).await.unwrap(), vec![b.id.clone()]);

    // The winner fails and releases: a second attempt may claim; then it is used up.
    // Every loser was told who holds the claim.
    let winner = claims
        .iter()
        .find_map(|c| match c {
            ExtractionClaim::InProgress { by } => Some(by.clone()),
            _ => None,
        })
        .unwrap();
    assert!(claims.iter().all(|c| match c {
        ExtractionClaim::InProgress { by } => *by == winner,
        other => matches!(other, ExtractionClaim::Claimed { .. }),
    }));
    assert!(sessions.release_extraction(&a.id, "someone-else").await.is_err(), "only the holder releases");
    sessions.release_extraction(&a.id, &winner).await.unwrap();
    assert_eq!(
        sessions.claim_extraction(&a.id, "runner-x", terms(6, 5)).await.unwrap(),
        ExtractionClaim::Claimed { attempt: 2 }
    );
    sessions.release_extraction(&a.id, "runner-x").await.unwrap();
    assert_eq!(
        sessions.claim_extraction(&a.id, "runner-y", terms(7, 6)).await.unwrap(),
        ExtractionClaim::Exhausted { attempts: 2 }
    );
    assert!(!sessions.pending_extractions(10, terms(7, 6)).await.unwrap().contains(&a.id));

    // A claim whose runner died lapses and can be taken over; a finished one never again.
    assert_eq!(
        sessions.claim_extraction(&b.id, "runner-dead", terms(5, 4)).await.unwrap(),
        ExtractionClaim::Claimed { attempt: 1 }
    );
    assert_eq!(
        sessions.claim_extraction(&b.id, "runner-z", terms(6, 4)).await.unwrap(),
        ExtractionClaim::InProgress { by: "runner-dead".into() },
        "the lease still runs"
    );
    assert_eq!(sessions.pending_extractions(10, terms(9, 6)).await.unwrap(), vec![b.id.clone()], "lapsed");
    assert_eq!(
        sessions.claim_extraction(&b.id, "runner-z", terms(9, 6)).await.unwrap(),
        ExtractionClaim::Claimed { attempt: 2 }
    );
    assert!(
        sessions.finish_extraction(&b.id, "runner-dead", t(9)).await.is_err(),
        "the lapsed holder cannot finish"
    );
    sessions.finish_extraction(&b.id, "runner-z", t(9)).await.unwrap();
    assert_eq!(
        sessions.claim_extraction(&b.id, "runner-w", terms(20, 19)).await.unwrap(),
        ExtractionClaim::Done { by: "runner-z".into() }
    );
    assert!(sessions.pending_extractions(10, terms(20, 19)).await.unwrap().is_empty());

    // An explicit claim works on a session ended with extraction off (the admin asked).
    assert_eq!(
        sessions.claim_extraction(&off.id, "admin", terms(5, 4)).await.unwrap(),
        ExtractionClaim::Claimed { attempt: 1 }
    );

    let mut about_a = event("extraction.run", None);
    about_a.details.insert("session_id".into(), "sess_a".into());
    backend.apply(retold_domain::WriteUnit { events: vec![about_a], ..Default::default() }).await.unwrap();
    let kinds: Vec<String> = sessions
        .session_events(&a.id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind.as_str().to_owned())
        .collect();
    assert_eq!(kinds, ["extraction.run"], "events whose details name the session, and only those");
    assert!(matches!(
        sessions.claim_extraction(&SessionId::new("sess_missing").unwrap(), "r", terms(6, 5)).await,
        Err(DomainError::NotFound { .. })
    ));
}

/// Run futures concurrently on the runtime and collect their outputs in order.
async fn futures_join<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

/// Contract: see the body.
pub async fn a_write_receipt_commits_with_its_unit_and_only_once(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let key = retold_domain::WriteKey {
        session: retold_domain::SessionId::new("sess_receipts").unwrap(),
        digest: "ab12".into(),
    };
    let receipt = |record: &retold_domain::MemoryRecord| retold_domain::WriteReceipt {
        key: key.clone(),
        outcome: retold_domain::EventKind::RecordCreated,
        record_id: record.id.clone(),
        at: t(3),
    };
    let keyed = |record: retold_domain::MemoryRecord| WriteUnit {
        receipt: Some(receipt(&record)),
        events: vec![event("record.created", Some(&record.id))],
        inserts: vec![record],
        ..WriteUnit::default()
    };
    assert_eq!(store.receipt(&key).await.unwrap(), None);

    // A unit that fails takes its receipt with it.
    let mut failing = keyed(record(1, "project:p", "first try"));
    failing.updates.push(RecordUpdate { record: record(9, "project:p", "missing"), expected_version: 1 });
    assert!(store.apply(failing).await.is_err());
    assert_eq!(store.receipt(&key).await.unwrap(), None, "nothing of a failed unit stays");

    let first = record(2, "project:p", "second try");
    store.apply(keyed(first.clone())).await.unwrap();
    assert_eq!(store.receipt(&key).await.unwrap(), Some(receipt(&first)));

    // The same key again (a concurrent attempt that decided before the first committed):
    // contention, and nothing of the second unit is written.
    let second = record(3, "project:p", "third try");
    assert!(matches!(store.apply(keyed(second.clone())).await, Err(DomainError::Contention(_))));
    assert_eq!(store.get(&second.id).await.unwrap(), None);
    assert_eq!(store.receipt(&key).await.unwrap(), Some(receipt(&first)));
    // Another session's key is another key.
    let other =
        retold_domain::WriteKey { session: retold_domain::SessionId::new("sess_other").unwrap(), ..key };
    assert_eq!(store.receipt(&other).await.unwrap(), None);
}

/// Contract: see the body.
pub async fn an_idempotency_key_is_claimed_once_answered_released_and_expires(backend: Arc<dyn Backend>) {
    use retold_domain::{AgentId, IdempotencyClaim, IdempotencyKey, UserId};
    let store: &dyn Backend = backend.as_ref();
    let key = |host: &str, user: &str, key: &str| IdempotencyKey {
        host_key: host.into(),
        agent_id: AgentId::new("research-agent").unwrap(),
        user_id: UserId::new(user).unwrap(),
        key: key.into(),
    };
    let k = key("key_1", "aditya", "retry-1");
    let held = |answer: Option<&[u8]>| IdempotencyClaim::Held {
        fingerprint: "f1".into(),
        answer: answer.map(<[u8]>::to_vec),
    };
    assert_eq!(store.claim_key(&k, "f1", t(3), t(4)).await.unwrap(), IdempotencyClaim::Claimed);
    // In flight: every later claim sees the first request, whatever it asks.
    assert_eq!(store.claim_key(&k, "f1", t(3), t(4)).await.unwrap(), held(None));
    assert_eq!(store.claim_key(&k, "f2", t(3), t(4)).await.unwrap(), held(None));
    store.store_answer(&k, b"the answer").await.unwrap();
    assert_eq!(store.claim_key(&k, "f1", t(3), t(4)).await.unwrap(), held(Some(b"the answer")));
    // An answered key is never released nor answered again.
    store.release_key(&k).await.unwrap();
    store.store_answer(&k, b"another answer").await.unwrap();
    assert_eq!(store.claim_key(&k, "f1", t(3), t(4)).await.unwrap(), held(Some(b"the answer")));
    // The same client key under another host key or principal is another key.
    for other in [key("key_2", "aditya", "retry-1"), key("key_1", "bob", "retry-1")] {
        assert_eq!(store.claim_key(&other, "f9", t(3), t(4)).await.unwrap(), IdempotencyClaim::Claimed);
    }
    // A released key is free again.
    let failed = key("key_1", "aditya", "retry-2");
    assert_eq!(store.claim_key(&failed, "f1", t(3), t(4)).await.unwrap(), IdempotencyClaim::Claimed);
    store.release_key(&failed).await.unwrap();
    assert_eq!(store.claim_key(&failed, "f1", t(3), t(4)).await.unwrap(), IdempotencyClaim::Claimed);
    // At its expiry a key is free again, answered or not.
    assert_eq!(store.claim_key(&k, "f2", t(4), t(5)).await.unwrap(), IdempotencyClaim::Claimed);
    assert_eq!(store.claim_key(&failed, "f2", t(4), t(5)).await.unwrap(), IdempotencyClaim::Claimed);
}

/// Contract: see the body.
pub async fn staged_embeddings_sit_beside_the_served_ones_until_one_complete_switch(
    backend: Arc<dyn Backend>,
) {
    use retold_domain::{EmbeddingModelInfo, ReembedCounts};
    let store: &dyn Backend = backend.as_ref();
    let old = EmbeddingModelInfo { name: "minilm".into(), version: 1, dims: 2 };
    let new = EmbeddingModelInfo { name: "bge".into(), version: 1, dims: 3 };
    let row = |id: &retold_domain::RecordId, m: &EmbeddingModelInfo, x: f32| EmbeddingRow {
        record_id: id.clone(),
        model: m.name.clone(),
        version: m.version,
        dims: m.dims,
        vector: vec![x; m.dims as usize],
        sentences: Vec::new(),
        sentences_pending: false,
    };
    // The same row with `n` sentence vectors (1, 2, 3, … in order).
    let sentenced = |mut row: EmbeddingRow, n: usize| {
        row.sentences = (0..n * row.dims as usize).map(|i| i as f32 + 1.0).collect();
        row
    };
    let mut ids = Vec::new();
    for n in 1..=3 {
        let mut r = record(n, "project:p", &format!("text {n}"));
        if n == 2 {
            r.context = Some(retold_domain::Context::new("the turn before").unwrap());
        }
        ids.push(r.id.clone());
        store
            .apply(WriteUnit {
                // The second record has two sentence vectors of the served model.
                embeddings: vec![sentenced(row(&r.id, &old, n as f32), if n == 2 { 2 } else { 0 })],
                inserts: vec![r],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    assert_eq!(store.stored_models().await.unwrap(), [(old.clone(), 3)]);
    assert_eq!(store.reembed_counts(&new).await.unwrap(), ReembedCounts { live: 3, staged: 0 });
    let todo = store.unstaged(&new, 2).await.unwrap();
    assert_eq!(
        todo.iter().map(|i| (i.key, i.content.as_str())).collect::<Vec<_>>(),
        [(RecordKey(1), "text 1"), (RecordKey(2), "text 2")]
    );
    // A record written with a context is re-embedded as the write embedded it.
    assert_eq!(
        todo.iter().map(|i| i.indexed().embedding_text()).collect::<Vec<_>>(),
        ["text 1", "text 2\nthe turn before"]
    );
    // Staged vectors of an abandoned target are discarded; the served ones stay.
    let other = EmbeddingModelInfo { name: "e5".into(), version: 1, dims: 2 };
    assert_eq!(store.stage(&[row(&ids[0], &other, 9.0)]).await.unwrap(), 1);
    assert_eq!(store.discard_other_staged(&new).await.unwrap(), 1);
    // Staged rows carry their sentence vectors: the first record gets one of the new model,
    // the second none (its two of the old model go with the switch).
    let staged = [sentenced(row(&ids[0], &new, 0.5), 1), row(&ids[1], &new, 0.25)];
    assert_eq!(store.stage(&staged).await.unwrap(), 2);
    assert_eq!(store.reembed_counts(&new).await.unwrap(), ReembedCounts { live: 3, staged: 2 });
    assert_eq!(
        store.unstaged(&new, 10).await.unwrap().iter().map(|i| i.key).collect::<Vec<_>>(),
        [RecordKey(3)]
    );
    // Until the switch, the service's model is what is stored.
    let served = store.compatible_embeddings("minilm", 1, 2).await.unwrap();
    assert_eq!((served.keys.len(), served.incompatible), (3, 0));
    assert_eq!(served.sentence_counts, [0, 2, 0]);
    assert_eq!(served.sentences, [1.0, 2.0, 3.0, 4.0]);
    // An incomplete switch is refused and changes nothing.
    let switch = event("ops.model_switch", None);
    assert!(matches!(store.switch_embeddings(&new, switch.clone()).await, Err(DomainError::Conflict(_))));
    assert_eq!(store.compatible_embeddings("minilm", 1, 2).await.unwrap().keys.len(), 3);
    // A deleted record needs no vector and is never staged.
    let mut gone = store.get(&ids[2]).await.unwrap().unwrap();
    gone.status = Status::Deleted;
    gone.version += 1;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: gone, expected_version: 1 }],
            events: vec![event("record.forgotten", Some(&ids[2]))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    assert_eq!(store.stage(&[row(&ids[2], &new, 1.0)]).await.unwrap(), 0);
    assert_eq!(store.reembed_counts(&new).await.unwrap(), ReembedCounts { live: 2, staged: 2 });
    assert_eq!(store.switch_embeddings(&new, switch).await.unwrap(), 2);
    let now_served = store.compatible_embeddings("bge", 1, 3).await.unwrap();
    assert_eq!(now_served.keys, [RecordKey(1), RecordKey(2)]);
    assert_eq!(now_served.vectors, [0.5, 0.5, 0.5, 0.25, 0.25, 0.25]);
    assert_eq!(now_served.sentence_counts, [1, 0]);
    assert_eq!(now_served.sentences, [1.0, 2.0, 3.0]);
    assert_eq!(now_served.incompatible, 0);
    assert_eq!(store.stored_models().await.unwrap(), [(new.clone(), 2)]);
    assert_eq!(store.reembed_counts(&new).await.unwrap(), ReembedCounts { live: 2, staged: 0 });
    // Erasure removes a record's staged vectors with its served one, sentence vectors and all.
    assert_eq!(store.stage(&[sentenced(row(&ids[0], &other, 3.0), 2)]).await.unwrap(), 1);
    let target = retold_domain::ErasureTarget::Record(ids[0].clone());
    let report =
        store.scrub(&target, std::slice::from_ref(&ids[0]), event("ops.erasure", None)).await.unwrap();
    assert_eq!(report.embeddings, 2);
    assert_eq!(store.reembed_counts(&other).await.unwrap().staged, 0);
    let left = store.compatible_embeddings("bge", 1, 3).await.unwrap();
    assert_eq!((left.keys.as_slice(), left.sentences.len()), ([RecordKey(2)].as_slice(), 0));
}

/// Contract: operators' record pages filter, count and page in the store; typed words match
/// by word and word start, never as FTS syntax; an id matches exactly.
pub async fn records_are_browsed_by_scope_status_and_words_newest_first(backend: Arc<dyn Backend>) {
    use retold_domain::{Inspection, PageRequest, RecordBrowse};
    let store: &dyn Backend = backend.as_ref();
    for n in 1..=7 {
        insert(store, record(n, "project:p", &format!("note {n} about the build cache"))).await;
    }
    insert(store, record(8, "project:q", "Deploys use the blue-green switch \" * NEAR(")).await;
    let browse: &dyn Inspection = backend.as_ref();
    let page = |limit, offset| PageRequest { limit, offset };
    let ids = |records: &[retold_domain::MemoryRecord]| {
        records.iter().map(|r| r.id.to_string()).collect::<Vec<_>>()
    };
    let all = RecordBrowse { scope: None, status: None, text: None, page: page(3, 0) };
    let (first, total) = browse.browse_records(&all).await.unwrap();
    assert_eq!((ids(&first), total), (vec!["mem_0008".into(), "mem_0007".into(), "mem_0006".into()], 8));
    let (last, _) = browse.browse_records(&RecordBrowse { page: page(3, 6), ..all.clone() }).await.unwrap();
    assert_eq!(ids(&last), ["mem_0002", "mem_0001"]);
    let scoped = RecordBrowse { scope: Some(Scope::parse("project:q").unwrap()), ..all.clone() };
    assert_eq!(browse.browse_records(&scoped).await.unwrap().1, 1);
    let deleted = RecordBrowse { status: Some(Status::Deleted), ..all.clone() };
    assert_eq!(browse.browse_records(&deleted).await.unwrap().1, 0);
    for (typed, expected) in [("cach", 7), ("build CACHE", 7), ("note 3", 1), ("blue gr", 1), ("mem_0004", 1)]
    {
        let found = RecordBrowse { text: Some(typed.into()), page: page(50, 0), ..all.clone() };
        assert_eq!(browse.browse_records(&found).await.unwrap().1, expected, "{typed:?}");
    }
    for nasty in ["\"", "*", "NEAR(a b)", "content:x", "(", "AND", "-x", "%", "_", "\\"] {
        let found = RecordBrowse { text: Some(nasty.into()), page: page(50, 0), ..all.clone() };
        assert!(browse.browse_records(&found).await.is_ok(), "{nasty:?}");
    }
}

/// Retention deletes the search traces written before its cut-off, those still waiting to be
/// written included, counts the same on a dry run, and leaves the newer ones readable.
pub async fn search_traces_before_the_cut_off_are_purged_and_the_rest_stay(backend: Arc<dyn Backend>) {
    let store: &dyn Backend = backend.as_ref();
    let at = |n: u32, day: u32| retold_domain::SearchTrace { at: t(day), ..trace(n) };
    // More than one purge batch (1,000) of old traces, and two newer ones.
    let (old, all) = (1_003, 1_005);
    for n in 0..all {
        store.append_trace(at(n, if n < old { 2 } else { 5 })).await.unwrap();
    }
    assert_eq!(store.purge_search_traces(t(3), true).await.unwrap(), u64::from(old), "a dry run counts");
    assert!(store.trace(&trace(0).id).await.unwrap().is_some(), "and deletes nothing");
    assert_eq!(store.purge_search_traces(t(3), false).await.unwrap(), u64::from(old));
    for n in [0, 999, 1_000, old - 1, old, all - 1] {
        assert_eq!(store.trace(&trace(n).id).await.unwrap().is_some(), n >= old, "trace {n}");
    }
    assert_eq!(store.purge_search_traces(t(3), false).await.unwrap(), 0, "nothing twice");
}

/// Contract: see the body.
pub async fn sentence_vectors_are_attached_once_after_the_write_and_left_waiting_until_then(
    backend: Arc<dyn Backend>,
) {
    use retold_domain::{EmbeddingModelInfo, Origin};
    let store: &dyn Backend = backend.as_ref();
    let model = EmbeddingModelInfo { name: "minilm".into(), version: 1, dims: 2 };
    let waiting = |r: &retold_domain::MemoryRecord, pending: bool| EmbeddingRow {
        record_id: r.id.clone(),
        model: model.name.clone(),
        version: model.version,
        dims: model.dims,
        vector: vec![1.0, 0.0],
        sentences: Vec::new(),
        sentences_pending: pending,
    };
    let mut turn = record(1, "project:p", "Two sentences here. And here is the second one.");
    turn.origin = Origin::Turn;
    turn.speaker = Some(Name::new("Caroline").unwrap());
    turn.context = Some(retold_domain::Context::new("Did you go?").unwrap());
    let done = record(2, "project:p", "No sentences wait here.");
    let forgotten = record(3, "project:p", "A record forgotten before its sentences came.");
    let note = record(4, "project:p", "A note whose sentences come in the same batch as the turn's.");
    for (r, pending) in [(&turn, true), (&done, false), (&forgotten, true), (&note, true)] {
        store
            .apply(WriteUnit {
                embeddings: vec![waiting(r, pending)],
                inserts: vec![r.clone()],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    // The waiting records, in key order, with what they are indexed by.
    let pending = store.pending_sentences(&model, 10).await.unwrap();
    assert_eq!(
        pending.iter().map(|i| i.id.clone()).collect::<Vec<_>>(),
        [turn.id.clone(), forgotten.id.clone(), note.id.clone()]
    );
    assert_eq!(pending[0].indexed(), turn.indexed(), "a turn's speaker, origin and context come back");
    assert_eq!(store.pending_sentences(&model, 1).await.unwrap().len(), 1);
    // Another model's rows wait for nothing of this one.
    let other = EmbeddingModelInfo { name: "bge".into(), ..model.clone() };
    assert!(store.pending_sentences(&other, 10).await.unwrap().is_empty());
    let row = |r: &retold_domain::MemoryRecord, sentences: &[f32]| retold_domain::SentenceRow {
        id: r.id.clone(),
        sentences: sentences.to_vec(),
    };
    assert_eq!(store.attach_sentences(&other, &[row(&turn, &[0.5, 0.5])]).await.unwrap(), [false]);
    assert!(store.attach_sentences(&model, &[]).await.unwrap().is_empty());
    // A batch with a row that is not whole vectors stores nothing, not even its whole rows.
    let broken = [row(&forgotten, &[1.0, 2.0]), row(&turn, &[1.0, 2.0, 3.0])];
    assert!(store.attach_sentences(&model, &broken).await.is_err());
    // So does a batch with two rows of one record.
    let twice = [row(&note, &[1.0, 2.0]), row(&note, &[3.0, 4.0])];
    assert!(store.attach_sentences(&model, &twice).await.is_err());
    assert_eq!(store.pending_sentences(&model, 10).await.unwrap().len(), 3, "nothing attached");
    // Attached once, each row of a batch on its own: the row carries its own, and waits no more.
    let batch = [row(&turn, &[0.5, 0.5, 0.0, 1.0]), row(&done, &[9.0, 9.0]), row(&note, &[0.25, 0.75])];
    assert_eq!(
        store.attach_sentences(&model, &batch).await.unwrap(),
        [true, false, true],
        "nothing waited for done"
    );
    assert_eq!(
        store.attach_sentences(&model, &[row(&turn, &[9.0, 9.0])]).await.unwrap(),
        [false],
        "only once"
    );
    let scan = store.compatible_embeddings(&model.name, model.version, model.dims).await.unwrap();
    assert_eq!(scan.sentence_counts, [2, 0, 0, 1]);
    assert_eq!(scan.sentences, [0.5, 0.5, 0.0, 1.0, 0.25, 0.75]);
    // A forgotten record waits no more for sentences: it is out of every search.
    let mut gone = forgotten.clone();
    gone.version = 2;
    gone.status = Status::Deleted;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: gone, expected_version: 1 }],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    assert!(store.pending_sentences(&model, 10).await.unwrap().is_empty());
    assert_eq!(store.attach_sentences(&model, &[row(&forgotten, &[1.0, 2.0])]).await.unwrap(), [false]);
}

/// Contract: a record that becomes a tombstone (forgotten, or the first step of an erasure)
/// loses its served and staged vectors and its FTS row in the same commit, so the store
/// checks clean at every moment, not only after an erasure's scrub.
pub async fn a_tombstone_keeps_no_vector_or_fts_row_from_its_own_commit(backend: Arc<dyn Backend>) {
    use retold_domain::EmbeddingModelInfo;
    let store: &dyn Backend = backend.as_ref();
    let model = EmbeddingModelInfo { name: "minilm".into(), version: 1, dims: 2 };
    let next = EmbeddingModelInfo { name: "bge".into(), version: 1, dims: 2 };
    let row = |id: &retold_domain::RecordId, m: &EmbeddingModelInfo| EmbeddingRow {
        record_id: id.clone(),
        model: m.name.clone(),
        version: m.version,
        dims: m.dims,
        vector: vec![0.5; m.dims as usize],
        sentences: Vec::new(),
        sentences_pending: false,
    };
    let kept = record(1, "project:p", "The nightly build runs at two.");
    let gone = record(2, "project:p", "The staging database password rotates weekly.");
    for r in [&kept, &gone] {
        store
            .apply(WriteUnit {
                inserts: vec![r.clone()],
                embeddings: vec![row(&r.id, &model)],
                events: vec![event("record.created", Some(&r.id))],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    // A re-embedding under way has staged both.
    assert_eq!(store.stage(&[row(&kept.id, &next), row(&gone.id, &next)]).await.unwrap(), 2);
    let mut forgotten = gone.clone();
    forgotten.status = Status::Deleted;
    forgotten.version = 2;
    store
        .apply(WriteUnit {
            updates: vec![RecordUpdate { record: forgotten, expected_version: 1 }],
            events: vec![event("record.forgotten", Some(&gone.id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    let check = store.verify().await.unwrap();
    assert!(check.is_ok(), "{check:?}");
    assert_eq!((check.live, check.orphan_embeddings, check.orphan_fts), (1, 0, 0), "{check:?}");
    let scan = store.compatible_embeddings("minilm", 1, 2).await.unwrap();
    assert_eq!(scan.ids.iter().map(|i| i.as_str()).collect::<Vec<_>>(), ["mem_0001"]);
    assert_eq!(
        store.reembed_counts(&next).await.unwrap(),
        retold_domain::ReembedCounts { live: 1, staged: 1 }
    );
    assert_eq!(lexical_ids(store, store, &["staging"], "project:p").await, Vec::<String>::new());
}
