//! Crash: concurrent writers against the real `retold serve`, `kill -9` at a random moment,
//! restart on the same data directory. Every acknowledged write must be readable and found by
//! search through both its FTS row and its vector, and no record may be half-written (a row
//! without its FTS row or its embedding). `RETOLD_CRASH_TRIALS` sets the trials (CI runs 3;
//! `cargo xtask reliability crash` runs 50).

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use retold_domain::{EligibilityFilter, EmbeddingSource, LexicalIndex, LexicalTerm, Scope, TurnBuffer};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use serde_json::{Value, json};

use crate::e2e::{Server, curl, start};

const KEY: &str = "crash-admin-key";

/// A curl call that may fail (the server dies mid-run): the body on success.
fn try_post(url: &str, key: &str, body: &Value) -> Option<Value> {
    let out = Command::new("curl")
        .args(["-sS", "--fail-with-body", "--max-time", "10", "-H"])
        .arg(format!("Authorization: Bearer {key}"))
        .args(["-H", "Content-Type: application/json", "-X", "POST", url, "-d"])
        .arg(body.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn token(trial: u64, writer: u64, n: u64) -> String {
    format!("crashtok{trial}x{writer}x{n}")
}

fn grant_and_key(server: &Server) -> String {
    curl(&[
        "-H",
        &format!("Authorization: Bearer {KEY}"),
        "-H",
        "Content-Type: application/json",
        "-X",
        "POST",
        &format!("{}/v1/admin/grants", server.url),
        "-d",
        r#"{"agent_id": "crash-agent", "scope": "project:crash", "can_read": true, "can_write": true}"#,
    ]);
    server.host_key(KEY)
}

#[test]
fn every_acknowledged_write_survives_kill_9_and_nothing_is_half_written() {
    let trials: u64 = std::env::var("RETOLD_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let mut acknowledged: Vec<(String, String, String)> = Vec::new(); // (id, token, content)
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut host = None;
    for trial in 0..trials {
        let server = start(dir.path(), KEY);
        let key = host.get_or_insert_with(|| grant_and_key(&server)).clone();
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(Mutex::new(Vec::new()));
        let writers: Vec<_> = (0..3u64)
            .map(|w| {
                let (url, key, stop, acked) =
                    (format!("{}/v1/memory/write", server.url), key.clone(), stop.clone(), acked.clone());
                std::thread::spawn(move || {
                    let mut n = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let token = token(trial, w, n);
                        // Two sentences: each write's sentence vectors are attached after its
                        // answer, so a kill may fall between the two.
                        let content = format!(
                            "Crash trial {trial} writer {w} note {n} with token {token}. \
                             It was written while the server could die at any moment."
                        );
                        let body = json!({"principal": {"agent_id": "crash-agent", "user_id": "ops"},
                            "type": "episodic", "content": content, "scope": "project:crash", "source_kind": "system"});
                        if let Some(answer) = try_post(&url, &key, &body)
                            && let Some(id) = answer["record_id"].as_str()
                        {
                            acked.lock().unwrap().push((id.to_owned(), token, content));
                        }
                        n += 1;
                    }
                })
            })
            .collect();
        // Kill at a random moment between 0.3 and 1.5 s into the writes.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let after = Duration::from_millis(300 + rng % 1200);
        let began = Instant::now();
        while began.elapsed() < after {
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut server = server;
        server.child.kill().unwrap(); // SIGKILL: no shutdown path runs
        server.child.wait().unwrap();
        stop.store(true, Ordering::SeqCst);
        for writer in writers {
            writer.join().unwrap();
        }
        acknowledged.extend(acked.lock().unwrap().drain(..));
    }
    assert!(acknowledged.len() >= trials as usize, "the writers got answers: {}", acknowledged.len());

    // Restart: every acknowledged write is readable and found through both channels.
    let server = start(dir.path(), KEY);
    let key = host.unwrap();
    let principal = json!({"agent_id": "crash-agent", "user_id": "ops"});
    let mut lost = Vec::new();
    for (id, token, content) in &acknowledged {
        let got = try_post(
            &format!("{}/v1/memory/get", server.url),
            &key,
            &json!({"principal": principal, "ids": [id]}),
        );
        if got.as_ref().and_then(|g| g["records"][0]["record"]["id"].as_str()) != Some(id.as_str()) {
            lost.push(format!("{id}: not readable ({got:?})"));
            continue;
        }
        let found = try_post(
            &format!("{}/v1/memory/search", server.url),
            &key,
            &json!({"principal": principal, "query": content, "limit": 50}),
        )
        .unwrap_or_default();
        let hit =
            found["results"].as_array().and_then(|r| r.iter().find(|h| h["record"]["id"] == id.as_str()));
        match hit {
            Some(hit) if !hit["matched"]["dense"].is_null() && !hit["matched"]["lexical"].is_null() => {}
            other => lost.push(format!("{id} ({token}): not found by both channels: {other:?}")),
        }
    }
    // Sentence vectors a kill left waiting are attached after the restart: every acknowledged
    // write is soon found by its best sentence too.
    let mut waiting: Vec<&(String, String, String)> = acknowledged.iter().collect();
    let since = Instant::now();
    while !waiting.is_empty() && since.elapsed() < Duration::from_secs(30) {
        waiting.retain(|(id, _, content)| {
            let found = try_post(
                &format!("{}/v1/memory/search", server.url),
                &key,
                &json!({"principal": principal, "query": content, "limit": 50}),
            )
            .unwrap_or_default();
            let hit =
                found["results"].as_array().and_then(|r| r.iter().find(|h| h["record"]["id"] == id.as_str()));
            hit.is_none_or(|h| h["matched"]["sentence"].is_null())
        });
    }
    for (id, token, _) in waiting {
        lost.push(format!("{id} ({token}): its sentence vectors were never attached"));
    }
    server.stop();
    println!(
        "| crash | {trials} trials of kill -9 under 3 writers | {} acknowledged writes | {} lost or inconsistent |",
        acknowledged.len(),
        lost.len()
    );
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged writes lost or inconsistent: {lost:#?}",
        lost.len(),
        acknowledged.len()
    );

    // Nothing half-written: every record in the file has its FTS row and its vector.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(&StoreConfig::new(dir.path().join("retold.db"))).await.unwrap();
        let all = retold_domain::EligibilityIndex::eligible(
            &store,
            &EligibilityFilter {
                scopes: vec![Scope::parse("project:crash").unwrap()],
                statuses: EligibilityFilter::statuses_for(true),
                now: retold_domain::chrono::Utc::now(),
                types: None,
                event_from: None,
                event_to: None,
                include_conflicts: true,
                origins: None,
                excluded_session: None,
            },
        )
        .await
        .unwrap();
        assert!(
            all.len() >= acknowledged.len(),
            "{} records, {} acknowledged",
            all.len(),
            acknowledged.len()
        );
        let scan = {
            let (model, version) = crate::served_model();
            store.compatible_embeddings(&model, version, 384).await.unwrap()
        };
        let keys: Vec<_> = all.iter().map(|e| e.key).collect();
        let mut without = Vec::new();
        for record in &all {
            if scan.keys.binary_search(&record.key).is_err() {
                without.push(format!("{}: no embedding", record.id));
            }
            let content =
                retold_domain::RecordReader::get(&store, &record.id).await.unwrap().unwrap().content;
            let token = content
                .as_str()
                .split_whitespace()
                .find(|w| w.starts_with("crashtok"))
                .unwrap()
                .trim_end_matches('.')
                .to_owned();
            let hits = store.search(&[LexicalTerm::new(token, true)], &keys, 5).await.unwrap();
            if !hits.iter().any(|h| h.record_id == record.id) {
                without.push(format!("{}: no FTS row", record.id));
            }
        }
        assert!(without.is_empty(), "half-written records: {without:#?}");
        // The sessions table is untouched by this test; the store opens and answers.
        assert!(store.session(&retold_domain::SessionId::new("sess_none").unwrap()).await.unwrap().is_none());
        store.close().await.unwrap();
    });
}
