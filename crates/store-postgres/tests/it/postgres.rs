//! What holds on PostgreSQL beyond the shared contract: two stores with their own pools on one
//! database (as two replicas are) racing for the same current fact and the same extraction
//! claim, the change feed another replica follows, the newer-database refusal, and the
//! append-only audit trail.

use std::time::{Duration, Instant};

use retold_domain::{
    ChangeFeed, ClaimTerms, DomainError, EmbeddingModelInfo, EmbeddingRow, Entity, EntityId, EntityKind,
    EntityStatus, ExtractionClaim, FactKey, KeyGuard, Name, NewEntity, RecordId, Scope, Session, SessionId,
    Status, WriteUnit,
};
use retold_store_postgres::{PostgresConfig, PostgresStore, StoreError};
use retold_test_kit::contract::fixtures::{event, record, t};
use retold_test_kit::prelude::*;

use crate::open;

/// A second store on the fixture's database, with its own pool (another replica).
async fn second(url: &str) -> PostgresStore {
    PostgresStore::open(&PostgresConfig::new(url)).await.unwrap()
}

fn model() -> EmbeddingModelInfo {
    EmbeddingModelInfo { name: "test-model".to_owned(), version: 1, dims: 3 }
}

/// A unit creating record `n` as the current fact `aditya/editor`, decided against no
/// active record (the guard), with the subject entity created alongside when asked.
fn fact_unit(n: u32, with_entity: bool) -> WriteUnit {
    let subject = EntityId::new("ent_aditya").unwrap();
    let mut r = record(n, "user:aditya", &format!("Aditya's editor is number {n}"));
    r.key = Some(FactKey::new(subject.clone(), retold_domain::Attribute::new("editor").unwrap()));
    let entities = if with_entity {
        vec![NewEntity {
            entity: Entity {
                id: subject.clone(),
                kind: EntityKind::Person,
                canonical_name: Name::new("Aditya").unwrap(),
                scope: Scope::parse("user:aditya").unwrap(),
                status: EntityStatus::Confirmed,
                merged_into: None,
                created_at: t(1),
            },
            aliases: Vec::new(),
            name_was_unknown: false,
        }]
    } else {
        Vec::new()
    };
    WriteUnit {
        guards: vec![KeyGuard {
            scope: Scope::parse("user:aditya").unwrap(),
            subject_entity_id: subject,
            attribute: "editor".to_owned(),
            expected: Vec::new(),
        }],
        entities,
        events: vec![event("record.created", Some(&r.id))],
        embeddings: vec![EmbeddingRow {
            record_id: r.id.clone(),
            model: "test-model".to_owned(),
            version: 1,
            dims: 3,
            vector: vec![n as f32, 1.0, 0.0],
            // One sentence vector, which a replica must index too.
            sentences: vec![0.0, 0.0, n as f32],
            sentences_pending: false,
        }],
        inserts: vec![r],
        ..WriteUnit::default()
    }
}

#[tokio::test]
async fn two_replicas_racing_for_one_current_fact_commit_exactly_one() {
    let a = open().await;
    let b = second(&a.url).await;
    // The subject entity exists; both replicas decided against "no active record".
    a.store.apply(fact_unit(1, true)).await.unwrap();
    let first = RecordId::new("mem_0001").unwrap();
    let mut forget = a.store.get(&first).await.unwrap().unwrap();
    forget.status = Status::Deleted;
    forget.version = 2;
    a.store
        .apply(WriteUnit {
            updates: vec![retold_domain::RecordUpdate { record: forget, expected_version: 1 }],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    for round in 0..20u32 {
        let (x, y) = (10 + 2 * round, 11 + 2 * round);
        let (ra, rb) = tokio::join!(a.store.apply(fact_unit(x, false)), b.apply(fact_unit(y, false)));
        let won = [&ra, &rb].iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "round {round}: exactly one writer commits ({ra:?}, {rb:?})");
        let lost = if ra.is_err() { ra } else { rb };
        assert!(matches!(lost, Err(DomainError::Contention(_))), "the other is told to read again: {lost:?}");
        let active = a
            .store
            .active_by_key(
                &[Scope::parse("user:aditya").unwrap()],
                &EntityId::new("ent_aditya").unwrap(),
                "editor",
            )
            .await
            .unwrap();
        assert_eq!(active.len(), 1, "round {round}: one current fact");
        // Retire it so the next round races again from "no active record".
        let mut done = active[0].record.clone();
        done.status = Status::Superseded;
        done.version += 1;
        a.store
            .apply(WriteUnit {
                updates: vec![retold_domain::RecordUpdate {
                    expected_version: done.version - 1,
                    record: done,
                }],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn two_replicas_claiming_one_session_get_it_once() {
    let a = open().await;
    let b = second(&a.url).await;
    let terms = ClaimTerms { at: t(5), lapsed_before: t(4), max_attempts: 3 };
    for n in 0..20 {
        let id = SessionId::new(format!("sess_race_{n}")).unwrap();
        a.store
            .start_session(
                Session {
                    id: id.clone(),
                    agent_id: retold_domain::AgentId::new("research-agent").unwrap(),
                    user_id: retold_domain::UserId::new("aditya").unwrap(),
                    project_id: None,
                    started_at: t(1),
                    ended_at: None,
                    scope: None,
                },
                event("session.started", None),
            )
            .await
            .unwrap();
        a.store.end_session(&id, t(2), true, event("session.ended", None)).await.unwrap();
        let (ca, cb) = tokio::join!(
            a.store.claim_extraction(&id, "replica-a", terms),
            b.claim_extraction(&id, "replica-b", terms)
        );
        let claimed = [ca.unwrap(), cb.unwrap()]
            .iter()
            .filter(|c| matches!(c, ExtractionClaim::Claimed { .. }))
            .count();
        assert_eq!(claimed, 1, "session {n}: one replica runs its extraction");
    }
}

#[tokio::test]
async fn another_replica_learns_of_a_write_by_notification_and_reads_its_row_and_vector() {
    let a = open().await;
    let b = second(&a.url).await;
    let head = b.change_head().await.unwrap();
    // B waits for a notification before A writes.
    let waiter = {
        let b = b.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            b.wait_for_change(Duration::from_secs(20)).await.unwrap();
            started.elapsed()
        })
    };
    // Let B's LISTEN start before the write.
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.store.apply(fact_unit(1, true)).await.unwrap();
    let waited = waiter.await.unwrap();
    assert!(waited < Duration::from_secs(10), "woken by the notification, not the timeout ({waited:?})");
    let batch = b.changes_since(head, 100).await.unwrap();
    assert_eq!(batch.keys.len(), 1, "{batch:?}");
    assert!(!batch.more);
    let current = b.current(&batch.keys, &model()).await.unwrap();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].row.id.as_str(), "mem_0001");
    assert_eq!(current[0].row.status, Status::Confirmed);
    assert_eq!(current[0].vector.as_deref(), Some(&[1.0, 1.0, 0.0][..]));
    assert_eq!(current[0].sentences, [0.0, 0.0, 1.0]);
    // A vector of another model is not served.
    let other = EmbeddingModelInfo { name: "other".to_owned(), ..model() };
    assert_eq!(b.current(&batch.keys, &other).await.unwrap()[0].vector, None);
    // Nothing after the last change; numbers have no gaps.
    assert_eq!(b.changes_since(batch.last, 100).await.unwrap().keys, Vec::new());
    assert_eq!(batch.last, head + 1, "one unit, one change: {batch:?}");
}

/// Sentence vectors attached after their writes, a batch at a time: one change naming the
/// records that got them (not the one that waited for nothing), which another replica reads.
#[tokio::test]
async fn sentence_vectors_attached_in_one_batch_are_one_change_another_replica_reads() {
    use retold_domain::{SentenceRow, SentenceVectors};
    let a = open().await;
    let b = second(&a.url).await;
    let mut ids = Vec::new();
    for n in 1..=3 {
        let mut unit = fact_unit(n, n == 1);
        unit.guards.clear();
        unit.inserts[0].key = None;
        unit.embeddings[0].sentences = Vec::new();
        unit.embeddings[0].sentences_pending = n != 2;
        ids.push(unit.inserts[0].id.clone());
        a.store.apply(unit).await.unwrap();
    }
    let head = b.change_head().await.unwrap();
    let rows: Vec<SentenceRow> = ids
        .iter()
        .zip(1..)
        .map(|(id, n)| SentenceRow {
            id: id.clone(),
            sentences: vec![n as f32, 0.0, 0.0, 0.0, n as f32, 0.0],
        })
        .collect();
    assert_eq!(a.store.attach_sentences(&model(), &rows).await.unwrap(), [true, false, true]);
    let batch = b.changes_since(head, 100).await.unwrap();
    assert_eq!(batch.last, head + 1, "one change: {batch:?}");
    let current = b.current(&batch.keys, &model()).await.unwrap();
    let got: Vec<(&str, &[f32])> =
        current.iter().map(|c| (c.row.id.as_str(), c.sentences.as_slice())).collect();
    assert_eq!(got, [("mem_0001", &rows[0].sentences[..]), ("mem_0003", &rows[2].sentences[..])]);
    // A batch that finds nothing waiting takes no change number: the next change follows on.
    assert_eq!(a.store.attach_sentences(&model(), &rows).await.unwrap(), [false, false, false]);
    let next = record(4, "user:aditya", "note four");
    a.store.apply(WriteUnit { inserts: vec![next], ..WriteUnit::default() }).await.unwrap();
    assert_eq!(b.changes_since(batch.last, 100).await.unwrap().last, batch.last + 1, "no gap");
}

/// A unit that inserts one record and updates another names both in its one change: the
/// inserted one by the key its insert returned, the updated one looked up.
#[tokio::test]
async fn a_change_names_the_records_a_unit_inserted_and_the_ones_it_updated() {
    let a = open().await;
    let b = second(&a.url).await;
    let first = record(1, "user:aditya", "note one");
    a.store.apply(WriteUnit { inserts: vec![first.clone()], ..WriteUnit::default() }).await.unwrap();
    let head = b.change_head().await.unwrap();
    let mut gone = first.clone();
    gone.version = 2;
    gone.status = Status::Deleted;
    let unit = WriteUnit {
        inserts: vec![record(2, "user:aditya", "note two")],
        updates: vec![retold_domain::RecordUpdate { record: gone, expected_version: 1 }],
        ..WriteUnit::default()
    };
    a.store.apply(unit).await.unwrap();
    let batch = b.changes_since(head, 100).await.unwrap();
    assert_eq!(batch.last, head + 1, "one change: {batch:?}");
    let current = b.current(&batch.keys, &model()).await.unwrap();
    let ids: Vec<&str> = current.iter().map(|c| c.row.id.as_str()).collect();
    assert_eq!(ids, ["mem_0001", "mem_0002"]);
    assert_eq!(current[0].row.status, Status::Deleted);
}

#[tokio::test]
async fn a_replica_that_missed_notifications_catches_up_from_the_change_table_in_order() {
    let a = open().await;
    let b = second(&a.url).await;
    for n in 1..=30 {
        let r = record(n, "user:aditya", &format!("note {n}"));
        let id = r.id.clone();
        a.store
            .apply(WriteUnit {
                inserts: vec![r],
                events: vec![event("record.created", Some(&id))],
                ..WriteUnit::default()
            })
            .await
            .unwrap();
    }
    let mut after = 0;
    let mut keys = Vec::new();
    loop {
        let batch = b.changes_since(after, 7).await.unwrap();
        keys.extend(batch.keys);
        after = batch.last;
        if !batch.more {
            break;
        }
    }
    assert_eq!(keys.len(), 30, "every change, in batches of 7");
    assert!(keys.is_sorted());
    assert_eq!(after, b.change_head().await.unwrap());
}

#[tokio::test]
async fn a_database_migrated_by_a_newer_retold_is_refused_untouched() {
    let fixture = open().await;
    fixture.store.apply(fact_unit(1, true)).await.unwrap();
    // The test server trusts every local connection: any password is accepted, and must
    // never show in a message.
    let url = fixture.url.replacen("postgres://retold@", "postgres://retold:s3cret-pw@", 1);
    assert_ne!(url, fixture.url);
    fixture.store.close().await.unwrap();
    let output = std::process::Command::new("psql")
        .args([url.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c"])
        .arg("INSERT INTO seaql_migrations (version, applied_at) VALUES ('m29990101_000001_future', 0)")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    match PostgresStore::open(&PostgresConfig::new(url)).await {
        Err(error @ StoreError::NewerDatabase { .. }) => {
            let message = error.to_string();
            assert!(message.contains("m29990101_000001_future"), "{message}");
            assert!(!message.contains("s3cret-pw"), "the password is not shown: {message}");
        }
        other => panic!("expected NewerDatabase, got {other:?}"),
    }
    // Untouched: the record is there and no migration ran (nine known, one unknown).
    let output = std::process::Command::new("psql")
        .args([fixture.url.as_str(), "-X", "-A", "-t", "-c"])
        .arg("SELECT (SELECT count(*) FROM records) || ' ' || (SELECT count(*) FROM seaql_migrations)")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "1 10");
}

#[tokio::test]
async fn audit_events_cannot_be_changed_or_deleted() {
    let fixture = open().await;
    let r = record(1, "user:aditya", "a note");
    let id = r.id.clone();
    fixture
        .store
        .apply(WriteUnit {
            inserts: vec![r],
            events: vec![event("record.created", Some(&id))],
            ..WriteUnit::default()
        })
        .await
        .unwrap();
    for sql in ["UPDATE events SET kind = 'record.deleted'", "DELETE FROM events"] {
        let output = std::process::Command::new("psql")
            .args([fixture.url.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap();
        assert!(!output.status.success(), "{sql} must fail");
        assert!(String::from_utf8_lossy(&output.stderr).contains("append-only"));
    }
    assert_eq!(fixture.store.record_events(&id).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_model_switch_is_refused_while_a_replica_serves() {
    use retold_domain::Reembedding;
    let serving = open().await;
    serving.store.hold_serving_lock().await.unwrap();
    let operator = second(&serving.url).await;
    let target = EmbeddingModelInfo { name: "next-model".to_owned(), version: 1, dims: 3 };
    match operator.switch_embeddings(&target, event("ops.model_switch", None)).await {
        Err(DomainError::Conflict(message)) => assert!(message.contains("stop every replica"), "{message}"),
        other => panic!("expected a refusal while a replica serves, got {other:?}"),
    }
    serving.store.close().await.unwrap();
    assert_eq!(operator.switch_embeddings(&target, event("ops.model_switch", None)).await.unwrap(), 0);
}

/// The term statistics the writes keep (`lexical_terms`, `lexical_corpus`) equal what counting
/// the lexical rows finds (`ts_stat`, `count(*)`), after inserts, alias changes, entity
/// merges, supersessions, a failed unit rolled back and an erasure: so every search reads the
/// IDFs counting gave, and its results are the same.
#[tokio::test]
async fn kept_term_statistics_equal_the_counted_ones_after_every_kind_of_change() {
    use retold_domain::Erasure;
    use retold_test_kit::contract;
    use sea_orm::ConnectionTrait;
    type Case =
        fn(std::sync::Arc<dyn Backend>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
    let cases: [(&str, Case); 4] = [
        ("aliases", |b| Box::pin(contract::alias_changes_rewrite_fts_rows(b))),
        ("merges", |b| Box::pin(contract::merging_entities_moves_links_and_aliases(b))),
        ("supersession", |b| {
            Box::pin(contract::supersession_flips_the_old_record_and_links_the_new_one_atomically(b))
        }),
        ("rollback", |b| Box::pin(contract::a_failing_statement_leaves_nothing_behind(b))),
    ];
    for (name, case) in cases {
        let f = open().await;
        case(f.backend()).await;
        let extra: Vec<_> = (100..110)
            .map(|n| {
                record(n, "project:p", &format!("The lantern {n} by the gate uses Conventional Commits."))
            })
            .collect();
        let ids: Vec<RecordId> = extra.iter().map(|r| r.id.clone()).collect();
        f.store.apply(WriteUnit { inserts: extra, ..WriteUnit::default() }).await.unwrap();
        let target = retold_domain::ErasureTarget::Record(ids[0].clone());
        f.store.scrub(&target, &ids[..1], event("ops.erasure", None)).await.unwrap();
        let raw = sea_orm::Database::connect(&f.url).await.unwrap();
        let rows = |sql: &'static str| {
            let raw = raw.clone();
            async move {
                let rows = raw
                    .query_all_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql))
                    .await
                    .unwrap();
                rows.iter()
                    .map(|r| {
                        (r.try_get_by_index::<String>(0).unwrap(), r.try_get_by_index::<i64>(1).unwrap())
                    })
                    .collect::<Vec<_>>()
            }
        };
        let kept = rows("SELECT term, df FROM lexical_terms ORDER BY term COLLATE \"C\"").await;
        let counted =
            rows("SELECT word, ndoc::bigint FROM ts_stat('SELECT doc FROM records_fts') ORDER BY word COLLATE \"C\"").await;
        assert!(!counted.is_empty(), "{name}: the corpus has words");
        assert_eq!(kept, counted, "{name}: kept document frequencies");
        let sizes =
            rows("SELECT 'n', n FROM lexical_corpus UNION ALL SELECT 'count', count(*) FROM records_fts")
                .await;
        assert_eq!(sizes[0].1, sizes[1].1, "{name}: corpus size {sizes:?}");
        assert!(
            !kept.iter().any(|(term, _)| term == "lantern")
                || kept.iter().any(|(t, df)| t == "lantern" && *df == 9)
        );
        // The kept postings: one row per word of each lexical row, holding its rank there,
        // and no other rows (`lexical_postings`, rewritten with every changed document).
        let postings = rows(
            "SELECT 'kept', count(*) FROM lexical_postings UNION ALL \
             SELECT 'differing', count(*) FROM ( \
               (SELECT term, key, weight FROM lexical_postings \
                EXCEPT SELECT u.lexeme, f.key, lexeme_rank(f.doc, u.lexeme) FROM records_fts f, unnest(f.doc) u) \
               UNION ALL \
               (SELECT u.lexeme, f.key, lexeme_rank(f.doc, u.lexeme) FROM records_fts f, unnest(f.doc) u \
                EXCEPT SELECT term, key, weight FROM lexical_postings)) d",
        )
        .await;
        assert!(postings[0].1 > 0, "{name}: postings kept {postings:?}");
        assert_eq!(postings[1].1, 0, "{name}: kept postings that ranking the rows again does not give");
    }
}

/// Queries of one-lexeme words, and of words with other forms (the stemming pass's terms), are
/// ranked from the kept postings: the same records in the same order, with the same scores,
/// as ranking every matching `tsvector` by `ts_rank` of each term's query (the OR of its
/// forms, computed here per record and term as the oracle, with the document frequency
/// counted over the matching rows), with each hit's record id and matched terms; every record
/// eligible, a tenth, and a span in the middle. A term with a phrase among its forms is
/// ranked by `ts_rank`.
#[tokio::test]
async fn kept_postings_rank_words_and_their_forms_as_ts_rank_does() {
    use retold_domain::{LexicalIndex as _, LexicalTerm, RecordReader as _};
    use sea_orm::ConnectionTrait;
    let f = open().await;
    let words = ["deploy", "pipeline", "failed", "timeout", "staging", "server", "review", "cache", "notes"];
    let records: Vec<_> = (0..240usize)
        .map(|n| {
            let (a, b, c) = (words[n % 9], words[(n * 7 + 3) % 9], words[(n * 5 + 1) % 9]);
            let mut tail =
                if n % 4 == 0 { format!(" The {a} was {b} twice, then {c} again.") } else { String::new() };
            if n % 6 == 1 {
                tail.push_str(&format!(" It deployed the {c} and kept failing."));
            }
            if n % 10 == 3 {
                tail.push_str(" Nothing deploys on Fridays.");
            }
            record(n as u32 + 1, "project:p", &format!("Note {n}: the {a} {b} after the {c}.{tail}"))
        })
        .collect();
    let ids: Vec<RecordId> = records.iter().map(|r| r.id.clone()).collect();
    f.store.apply(WriteUnit { inserts: records, ..WriteUnit::default() }).await.unwrap();
    let mut keys = Vec::new();
    let mut id_of = std::collections::HashMap::new();
    for id in &ids {
        let key = f.store.key_of(id).await.unwrap().unwrap();
        keys.push(key);
        id_of.insert(key, id.clone());
    }
    keys.sort();
    let tenth: Vec<_> = keys.iter().copied().step_by(10).collect();
    // A span in the middle: matches below and above the eligible keys' span are not eligible.
    let middle: Vec<_> = keys[100..].iter().copied().step_by(3).take(40).collect();
    let raw = sea_orm::Database::connect(&f.url).await.unwrap();
    let query = |sql: String| {
        let raw = raw.clone();
        async move {
            raw.query_all_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql))
                .await
                .unwrap()
        }
    };
    let n = query("SELECT n::float8 FROM lexical_corpus".into()).await[0].try_get_by_index::<f64>(0).unwrap();
    let term = |text: &str, forms: &[&str]| LexicalTerm {
        forms: forms.iter().map(|f| f.to_string()).collect(),
        ..LexicalTerm::new(text, false)
    };
    let asked: Vec<Vec<LexicalTerm>> = vec![
        vec![term("deploy", &[])],
        vec![term("failed", &[]), term("timeout", &[])],
        vec![term("staging", &[]), term("notes", &[]), term("review", &[]), term("cache", &[])],
        // "fail" is in no record: its rank 0 counts in the mean of its three forms' ranks.
        vec![term("fail", &["failed", "failing"])],
        vec![term("deploy", &["deployed", "deploys"]), term("timeout", &[])],
        // Two forms of one lexeme count once, as they do in `ts_rank`.
        vec![term("Deploy", &["deploy", "deployed"]), term("server", &[])],
        // A phrase among the forms: ranked by `ts_rank`, the same scores.
        vec![term("deploy", &["deploy pipeline"]), term("cache", &[])],
    ];
    for terms in &asked {
        // The oracle: Σ IDF × ts_rank over every record, best first, ties by key.
        let mut scores = std::collections::BTreeMap::<i64, f64>::new();
        let mut holding = std::collections::BTreeMap::<i64, Vec<&str>>::new();
        for t in terms {
            let or = t
                .all_forms()
                .map(|form| format!("phraseto_tsquery('retold', '{form}')"))
                .collect::<Vec<_>>()
                .join(" || ");
            let df = query(format!("SELECT count(*)::float8 FROM records_fts WHERE doc @@ ({or})")).await[0]
                .try_get_by_index::<f64>(0)
                .unwrap();
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let ranks = query(format!(
                "SELECT key, ts_rank('{{0.0, 0.333333, 0.666667, 1.0}}'::float4[], doc, ({or}), 1)::float8 \
                 FROM records_fts WHERE doc @@ ({or})"
            ))
            .await;
            for row in ranks {
                let (key, rank) =
                    (row.try_get_by_index::<i64>(0).unwrap(), row.try_get_by_index::<f64>(1).unwrap());
                *scores.entry(key).or_default() += idf * rank;
                holding.entry(key).or_default().push(t.text.as_str());
            }
        }
        // One-word queries read the kept weights as `ts_rank` computed them; a term's forms
        // sum them in float8 where `ts_rank` averages in float4.
        let tolerance = |score: f64| match terms.iter().all(|t| t.forms.is_empty()) {
            true => 1e-9,
            false => 1e-6 * score.max(1.0),
        };
        let named: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        for (eligible, k) in [(&keys, 25), (&tenth, 10), (&middle, 10)] {
            let mut oracle: Vec<(i64, f64)> = scores
                .iter()
                .filter(|(key, _)| eligible.iter().any(|e| i64::try_from(e.0).unwrap() == **key))
                .map(|(k, s)| (*k, *s))
                .collect();
            oracle.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            oracle.truncate(k);
            let hits = f.store.search(terms, eligible, k).await.unwrap();
            let got: Vec<(i64, f64)> =
                hits.iter().map(|h| (i64::try_from(h.record_key.0).unwrap(), h.score)).collect();
            assert_eq!(got.len(), oracle.len(), "{named:?}, {} eligible", eligible.len());
            for (g, o) in got.iter().zip(&oracle) {
                assert!(
                    g.0 == o.0 && (g.1 - o.1).abs() < tolerance(o.1),
                    "{named:?}, {} eligible: {got:?}\n{oracle:?}",
                    eligible.len()
                );
            }
            for hit in &hits {
                let key = i64::try_from(hit.record_key.0).unwrap();
                assert_eq!(Some(&hit.record_id), id_of.get(&hit.record_key), "{named:?}: the hit's record");
                let matched: Vec<&str> = hit.matched.iter().map(|m| m.term.as_str()).collect();
                assert_eq!(matched, holding[&key], "{named:?}: the terms record {key} holds");
            }
            assert!(got.len() >= 3, "{named:?}: the query matches");
        }
    }
    // And the scores are read from the postings, not ranked again: doubling every kept weight
    // doubles the scores of a query of one word and of a word with forms, and leaves those of a
    // query with a phrase among its forms as they were.
    let read = |terms: Vec<LexicalTerm>| {
        let (store, keys) = (&f.store, &keys);
        async move { store.search(&terms, keys, 5).await.unwrap() }
    };
    let one = || vec![term("deploy", &[])];
    let forms = || vec![term("fail", &["failed", "failing"])];
    let phrase = || vec![term("deploy", &["deploy pipeline"])];
    let before = [read(one()).await, read(forms()).await, read(phrase()).await];
    query("UPDATE lexical_postings SET weight = weight * 2".into()).await;
    let after = [read(one()).await, read(forms()).await, read(phrase()).await];
    for (i, factor) in [2.0, 2.0, 1.0].into_iter().enumerate() {
        assert_eq!(before[i].len(), after[i].len());
        for (b, a) in before[i].iter().zip(&after[i]) {
            assert!((a.score - factor * b.score).abs() < 1e-9, "query {i}: {} then {}", b.score, a.score);
        }
    }
}

/// A session that keeps a lock on an erased table (a transaction left open) cannot hold an
/// erasure's compaction forever: after three bounded waits it fails, naming the table and
/// the session; once the lock is gone, compaction runs.
#[tokio::test]
async fn a_compaction_blocked_by_a_held_lock_fails_naming_it_instead_of_waiting_forever() {
    use retold_domain::Erasure as _;
    use sea_orm::{ConnectionTrait, Database, TransactionTrait};
    let fixture = open().await;
    let holder = Database::connect(fixture.url.as_str()).await.unwrap();
    let txn = holder.begin().await.unwrap();
    txn.execute_unprepared("LOCK TABLE search_log IN ACCESS SHARE MODE").await.unwrap();
    let started = Instant::now();
    let error = fixture.store.compact().await.expect_err("VACUUM FULL cannot take search_log's lock");
    let message = error.to_string();
    assert!(message.contains("search_log") && message.contains("LOCK TABLE search_log"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(25), "bounded: {:?}", started.elapsed());
    txn.rollback().await.unwrap();
    fixture.store.compact().await.expect("no lock held any more");
    holder.close().await.unwrap();
}
