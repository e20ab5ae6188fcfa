//! Replicas: two real `retold serve` processes on one PostgreSQL database (the tests' private
//! server). A write acknowledged by A is found by a search on B within a bounded delay, and
//! by A at once (read-your-writes); a forget on B leaves A's search; A and B racing for one
//! current fact leave exactly one; A killed with `kill -9` under three writers leaves B
//! consistent: every write A acknowledged is readable on B and found there through both
//! channels, no result is returned twice, and B keeps writing. A conversation's turns
//! appended on either are numbered in order and each is searchable on the other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::e2e::{Server, start_with};

const KEY: &str = "replica-admin-key";

fn post(url: &str, key: &str, body: &Value) -> Option<Value> {
    let out = std::process::Command::new("curl")
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

fn principal() -> Value {
    json!({"agent_id": "replica-agent", "user_id": "ops"})
}

fn write(server: &Server, key: &str, content: &str) -> Option<String> {
    let body = json!({"principal": principal(), "type": "episodic", "content": content,
        "scope": "project:replicas", "source_kind": "system"});
    post(&format!("{}/v1/memory/write", server.url), key, &body)?["record_id"].as_str().map(str::to_owned)
}

/// The ids a search on `server` returns for `query` (with whether each came through both
/// channels).
fn search(server: &Server, key: &str, query: &str) -> Vec<(String, bool)> {
    let body = json!({"principal": principal(), "query": query, "limit": 50});
    let found = post(&format!("{}/v1/memory/search", server.url), key, &body).unwrap_or_default();
    found["results"]
        .as_array()
        .map(|results| {
            results
                .iter()
                .map(|h| {
                    let both = !h["matched"]["dense"].is_null() && !h["matched"]["lexical"].is_null();
                    (h["record"]["id"].as_str().unwrap_or_default().to_owned(), both)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn replica(dir: &std::path::Path, url: &str) -> Server {
    start_with(dir, KEY, &[("RETOLD__STORAGE__BACKEND", "postgres"), ("RETOLD__STORAGE__URL", url)])
}

#[test]
fn a_write_on_one_replica_is_searchable_on_the_other_and_survives_its_kill_9() {
    let url = retold_test_kit::postgres::fresh_database();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = replica(dir_a.path(), &url);
    let b = replica(dir_b.path(), &url);
    // Grants and keys written through A hold on B: they are rows of the shared database.
    a.grant(KEY, "replica-agent", "project:replicas");
    let key = a.host_key(KEY);

    // Propagation: write on A, poll B's search until the record shows.
    let mut delays = Vec::new();
    for n in 0..10 {
        let content = format!("Replica probe rtok{n}q on the staging cluster.");
        let id = write(&a, &key, &content).expect("A acknowledges the write");
        let written = Instant::now();
        assert!(
            search(&a, &key, &format!("rtok{n}q")).iter().any(|(hit, _)| *hit == id),
            "read-your-writes: A finds its own write at once"
        );
        loop {
            if search(&b, &key, &format!("rtok{n}q")).iter().any(|(hit, both)| *hit == id && *both) {
                delays.push(written.elapsed());
                break;
            }
            assert!(written.elapsed() < Duration::from_secs(5), "B never found {id} through both channels");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // A forget on B reaches A's search the same way (a status change, not an insert).
    let forgotten = write(&a, &key, "Replica probe rtokgoneq, to be forgotten.").expect("A writes");
    let forget = json!({"principal": principal(), "id": forgotten, "reason": "replica test"});
    post(&format!("{}/v1/memory/forget", b.url), &key, &forget).expect("B forgets A's record");
    let asked = Instant::now();
    while search(&a, &key, "rtokgoneq").iter().any(|(hit, _)| *hit == forgotten) {
        assert!(asked.elapsed() < Duration::from_secs(5), "A still returns {forgotten} after B forgot it");
        std::thread::sleep(Duration::from_millis(5));
    }
    // One conversation across both: turns appended on A and on B to one session are numbered
    // in order, and each, kept by turn memory, is found on the other replica; a search made
    // inside the session, on either, leaves its turns out.
    let started = post(
        &format!("{}/v1/sessions", a.url),
        &key,
        &json!({"principal": principal(), "scope": "project:replicas"}),
    )
    .expect("A starts a session");
    let sid = started["id"].as_str().unwrap().to_owned();
    let mut kept = Vec::new();
    for (n, (on, other)) in [(&a, &b), (&b, &a), (&a, &b), (&b, &a)].into_iter().enumerate() {
        let body = json!({"principal": principal(), "role": "user",
            "content": format!("Turn rturn{n}q of the conversation across replicas.")});
        let turn =
            post(&format!("{}/v1/sessions/{sid}/turns", on.url), &key, &body).expect("a turn is appended");
        assert_eq!(
            (turn["turn"].as_u64(), turn["memory"].as_str()),
            (Some(n as u64 + 1), Some("kept")),
            "{turn}"
        );
        let id = turn["record_ids"][0].as_str().unwrap().to_owned();
        let appended = Instant::now();
        while !search(other, &key, &format!("rturn{n}q")).iter().any(|(hit, both)| *hit == id && *both) {
            assert!(
                appended.elapsed() < Duration::from_secs(5),
                "the other replica never found turn {}",
                n + 1
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        kept.push(id);
    }
    let inside = json!({"principal": {"agent_id": "replica-agent", "user_id": "ops", "session_id": sid},
        "query": "rturn0q rturn1q rturn2q rturn3q", "limit": 50});
    for server in [&a, &b] {
        let found = post(&format!("{}/v1/memory/search", server.url), &key, &inside).unwrap_or_default();
        let ids: Vec<&str> = found["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["record"]["id"].as_str())
            .collect();
        assert!(kept.iter().all(|k| !ids.contains(&k.as_str())), "{found}");
    }

    delays.sort();
    println!(
        "| replicas | write on A → found on B (both channels) | median {:?} | max {:?} (includes one search round trip) |",
        delays[delays.len() / 2],
        delays[delays.len() - 1]
    );

    // Two processes racing for one current fact: A and B write the same subject and
    // attribute at once, round after round. The key guard holds across them: the write
    // path's retry turns the loser into a supersession (or a conflict), never a second
    // current fact. The entity "Aditya" is created once: a second one would make every later
    // round's subject ambiguous (409), which `expect` below would report.
    for round in 0..8 {
        let fact = |server: &Server, editor: &str| {
            let body = json!({"principal": principal(), "type": "semantic",
                "content": format!("Aditya's editor is {editor} (round {round})."),
                "scope": "project:replicas", "subject": {"name": "Aditya", "kind": "person"},
                "attribute": "editor", "source_kind": "system"});
            post(&format!("{}/v1/memory/write", server.url), &key, &body)
        };
        let (ra, rb) = std::thread::scope(|s| {
            let ta = s.spawn(|| fact(&a, "vim"));
            let tb = s.spawn(|| fact(&b, "emacs"));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let (ra, rb) = (ra.expect("A answers the racing write"), rb.expect("B answers the racing write"));
        let outcomes =
            [ra["outcome"].as_str().unwrap_or_default(), rb["outcome"].as_str().unwrap_or_default()];
        assert!(
            outcomes.iter().filter(|o| **o == "created").count() <= 1,
            "round {round}: both replicas created a current fact: {ra} {rb}"
        );
        let body = json!({"principal": principal(), "query": "Aditya's editor", "limit": 50});
        for server in [&a, &b] {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let found =
                    post(&format!("{}/v1/memory/search", server.url), &key, &body).unwrap_or_default();
                let current: Vec<&str> = found["results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|h| h["record"]["content"].as_str())
                    .filter(|c| c.contains("editor is"))
                    .collect();
                if current.len() == 1 && current[0].contains(&format!("(round {round})")) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "round {round}: current facts on {}: {current:?}",
                    server.url
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    // kill -9 A under three writers.
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let a = Arc::new(Mutex::new(a));
    let writers: Vec<_> = (0..3u32)
        .map(|w| {
            let (url, key, stop, acked) = (
                format!("{}/v1/memory/write", a.lock().unwrap().url),
                key.clone(),
                stop.clone(),
                acked.clone(),
            );
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let token = format!("killtok{w}x{n}");
                    let content = format!("Replica writer {w} note {n} with token {token}.");
                    let body = json!({"principal": principal(), "type": "episodic", "content": content,
                        "scope": "project:replicas", "source_kind": "system"});
                    if let Some(answer) = post(&url, &key, &body)
                        && let Some(id) = answer["record_id"].as_str()
                    {
                        acked.lock().unwrap().push((id.to_owned(), token));
                    }
                    n += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    {
        let mut a = a.lock().unwrap();
        a.child.kill().unwrap(); // SIGKILL: no shutdown path runs
        a.child.wait().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 3, "the writers got answers before the kill: {}", acked.len());

    // Every write A acknowledged is on B, readable and found through both channels.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut missing: Vec<String> = Vec::new();
    for (id, token) in &acked {
        let got =
            post(&format!("{}/v1/memory/get", b.url), &key, &json!({"principal": principal(), "ids": [id]}));
        if got.as_ref().and_then(|g| g["records"][0]["record"]["id"].as_str()) != Some(id.as_str()) {
            missing.push(format!("{id}: not readable on B ({got:?})"));
            continue;
        }
        loop {
            let hits = search(&b, &key, token);
            if hits.iter().any(|(hit, both)| hit == id && *both) {
                break;
            }
            if Instant::now() > deadline {
                missing.push(format!("{id} ({token}): not found by both channels on B: {hits:?}"));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    assert!(missing.is_empty(), "{} of {} acknowledged writes: {missing:#?}", missing.len(), acked.len());
    // No result twice, and B keeps taking writes.
    let hits = search(&b, &key, "Replica writer note token");
    let mut ids: Vec<&String> = hits.iter().map(|(id, _)| id).collect();
    let total = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), total, "a search on B returns each record once");
    let after = write(&b, &key, "Replica B still writes after A died: rtokafterq.").expect("B writes");
    assert!(search(&b, &key, "rtokafterq").iter().any(|(id, _)| *id == after));
    println!("| replicas | kill -9 of A under 3 writers | {} acknowledged | 0 missing on B |", acked.len());
    b.stop();
}

/// Operations on two replicas while both serve (issue: operations while the service is busy,
/// on PostgreSQL): erasures with `VACUUM FULL` on one replica while the other writes and
/// searches, a check and the due-date operations on either; then a replica killed with
/// `kill -9` in the middle of an erasure on the other, and restarted. Pass: no request to a
/// live replica fails, every acknowledged write reads back on both, every erased record is a
/// tombstone on both, and both check clean. (PostgreSQL has no snapshot file: its backup is
/// the operator's `pg_dump`, so the kill lands during an erasure instead.)
#[test]
fn operations_on_one_replica_fail_no_request_on_either_and_a_killed_replica_loses_nothing() {
    let url = retold_test_kit::postgres::fresh_database();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = replica(dir_a.path(), &url);
    let mut b = replica(dir_b.path(), &url);
    a.grant(KEY, "replica-agent", "project:replicas");
    let victims = ["gone0", "gone1", "gone2"];
    for victim in victims {
        a.grant(KEY, "replica-agent", &format!("user:{victim}"));
    }
    let key = a.host_key(KEY);
    let mut erased = Vec::new();
    for victim in victims {
        for n in 0..5 {
            let body = json!({"principal": {"agent_id": "replica-agent", "user_id": victim}, "type": "semantic",
                "content": format!("{victim} keeps invoice {n} in the grey cabinet."),
                "scope": format!("user:{victim}"), "source_kind": "system"});
            let answer = post(&format!("{}/v1/memory/write", a.url), &key, &body).expect("a victim's note");
            erased.push((victim, answer["record_id"].as_str().unwrap().to_owned()));
        }
    }
    let admin = |server: &Server, path: &str, body: Value| {
        post(&format!("{}{path}", server.url), KEY, &body)
            .unwrap_or_else(|| panic!("{path} on {}", server.url))
    };

    // Two clients on each replica: a write and a search in turn, every failure counted.
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let failed: Arc<Mutex<Vec<String>>> = Arc::default();
    let run_load = |servers: Vec<String>, stop: Arc<AtomicBool>| {
        servers
            .into_iter()
            .enumerate()
            .map(|(c, base)| {
                let (key, acked, failed, stop) = (key.clone(), acked.clone(), failed.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut n = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let content = format!("Replica client {c} note {n} on the build queue.");
                        let body = json!({"principal": principal(), "type": "episodic", "content": content,
                            "scope": "project:replicas", "source_kind": "system"});
                        match post(&format!("{base}/v1/memory/write"), &key, &body) {
                            Some(answer) => acked
                                .lock()
                                .unwrap()
                                .push((answer["record_id"].as_str().unwrap().to_owned(), content)),
                            None => failed.lock().unwrap().push(format!("write on {base}")),
                        }
                        let query =
                            json!({"principal": principal(), "query": format!("note {n} build queue")});
                        if post(&format!("{base}/v1/memory/search"), &key, &query).is_none() {
                            failed.lock().unwrap().push(format!("search on {base}"));
                        }
                        n += 1;
                    }
                })
            })
            .collect::<Vec<_>>()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let clients = run_load(vec![a.url.clone(), a.url.clone(), b.url.clone(), b.url.clone()], stop.clone());
    std::thread::sleep(Duration::from_millis(500));
    let answer = admin(&a, "/v1/admin/ops/erase", json!({"user_id": "gone0"}));
    assert_eq!(answer["erased"], 5, "{answer}");
    assert_eq!(admin(&b, "/v1/admin/ops/verify", json!({}))["ok"], true);
    let answer = admin(&b, "/v1/admin/ops/erase", json!({"user_id": "gone1"}));
    assert_eq!(answer["erased"], 5, "{answer}");
    for path in ["/v1/admin/ops/expire", "/v1/admin/ops/retention", "/v1/admin/ops/flag-reviews"] {
        admin(&a, path, json!({}));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    clients.into_iter().for_each(|c| c.join().unwrap());
    assert_eq!(failed.lock().unwrap().as_slice(), &[] as &[String], "requests failed while both served");

    // B killed in the middle of an erasure on A, under a writer on A; then started again.
    let stop = Arc::new(AtomicBool::new(false));
    let clients = run_load(vec![a.url.clone()], stop.clone());
    let erase_began = Instant::now();
    let erasing = std::thread::spawn({
        let (url, body) = (format!("{}/v1/admin/ops/erase", a.url), json!({"user_id": "gone2"}));
        move || (post(&url, KEY, &body), Instant::now())
    });
    std::thread::sleep(Duration::from_millis(30));
    b.child.kill().unwrap(); // SIGKILL: no shutdown path runs
    b.child.wait().unwrap();
    let killed_after = erase_began.elapsed();
    let (answer, answered_at) = erasing.join().unwrap();
    let answer = answer.expect("the erasure on A answers");
    let erase_took = answered_at - erase_began;
    assert!(
        killed_after < erase_took,
        "B was killed while the erasure ran ({killed_after:?} of {erase_took:?})"
    );
    assert_eq!(answer["erased"], 5, "{answer}");
    b = replica(dir_b.path(), &url);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    clients.into_iter().for_each(|c| c.join().unwrap());
    assert_eq!(failed.lock().unwrap().as_slice(), &[] as &[String], "requests to A failed during B's kill");

    let acked = acked.lock().unwrap().clone();
    for server in [&a, &b] {
        for chunk in acked.chunks(50) {
            let ids: Vec<&str> = chunk.iter().map(|(id, _)| id.as_str()).collect();
            let got = post(
                &format!("{}/v1/memory/get", server.url),
                &key,
                &json!({"principal": principal(), "ids": ids}),
            )
            .expect("get");
            let contents: Vec<&str> = got["records"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["record"]["content"].as_str())
                .collect();
            let expected: Vec<&str> = chunk.iter().map(|(_, c)| c.as_str()).collect();
            assert_eq!(contents, expected, "acknowledged writes on {}", server.url);
        }
        for (victim, id) in &erased {
            let who = json!({"agent_id": "replica-agent", "user_id": victim});
            let got =
                post(&format!("{}/v1/memory/get", server.url), &key, &json!({"principal": who, "ids": [id]}))
                    .expect("get a tombstone");
            assert_eq!(got["records"][0]["record"]["content"], "[erased]", "{got}");
        }
        assert_eq!(admin(server, "/v1/admin/ops/verify", json!({}))["ok"], true, "{}", server.url);
    }
    println!(
        "| replicas under operations | {} acknowledged writes read back on both; 15 records erased; 0 failed requests; B killed {killed_after:?} into an erasure of {erase_took:?} |",
        acked.len()
    );
    a.stop();
    b.stop();
}
