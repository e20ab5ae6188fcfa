//! Operations through the admin API on a real store.
//!
//! Verified erasure: records carrying a unique token are written, searched (so traces hold
//! them), quoted in a session turn and in evidence; the user is erased; then the database
//! file, its WAL and its shared memory are scanned byte by byte for the token, and the FTS
//! vocabulary (the shadow tables, read through fts5vocab) is asked for it: absent. Another
//! user's records are untouched, and running the erasure again erases nothing.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::{ADMIN_KEY, app_in, principal};

const TOKEN: &str = "zqxerasetok";

/// The files of `dir` that hold `needle`. Each file is read by a child process (`cat`), never
/// opened here: closing a descriptor of the database file in the process that serves it drops
/// every POSIX lock the process holds on it, SQLite's too. A second process (the FTS check
/// below) could then take the database for itself, checkpoint and delete the WAL under the
/// live connections, and the next read fail with SQLITE_IOERR_SHORT_READ (522): the cause of
/// the intermittent 503 this test showed twice in `cargo xtask ci`, reproduced by
/// `checking_the_store_s_bytes_beside_another_process_leaves_the_service_whole`.
/// Subdirectories (snapshots) are searched too.
pub(crate) fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            hits.extend(files_holding(&path, needle));
            continue;
        }
        let out = std::process::Command::new("cat").arg(&path).output().expect("cat runs");
        assert!(out.status.success(), "cat {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
        let bytes = out.stdout;
        if bytes.windows(needle.len()).any(|w| w == needle) {
            hits.push(path.display().to_string());
        }
    }
    hits
}

/// Terms of the FTS index (its shadow tables) starting with `prefix`, read by SQLite itself.
fn fts_terms(db: &std::path::Path, prefix: &str) -> String {
    let script = format!(
        "import sqlite3\nc = sqlite3.connect({:?})\nc.execute(\"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, records_fts, 'row')\")\n\
         print(','.join(t for (t,) in c.execute(\"SELECT term FROM temp.v WHERE term LIKE ?\", ({:?} + '%',))))",
        db.display().to_string(),
        prefix
    );
    let out = std::process::Command::new("python3").args(["-c", &script]).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn an_erased_user_leaves_no_byte_of_their_content_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let app = app_in(dir, &[]).await;
    let host = app.host_key(&[]).await;
    app.grant("ea", "user:dana", true, true).await;
    app.grant("ea", "user:bob", true, true).await;
    let dana = principal("ea", "dana");
    let bob = principal("ea", "bob");
    let write = |who: &Value, scope: &str, content: String| {
        json!({"principal": who, "type": "semantic", "content": content, "scope": scope,
            "source_kind": "system", "evidence": format!("noted: {content}"),
            "context": format!("asked about: {content}"),
            "mentions": [{"name": "Dana Okafor", "kind": "person"}]})
    };
    let mut erased_ids = Vec::new();
    for (n, scope) in ["user:dana", "agent:ea/dana", "user:dana", "agent:ea/dana"].iter().enumerate() {
        let body =
            write(&dana, scope, format!("Dana keeps the {TOKEN} ledger number {n} in the blue binder."));
        let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        erased_ids.push(answer["record_id"].as_str().unwrap().to_owned());
    }
    let body = write(&bob, "user:bob", "Bob keeps the keepbobtok ledger in the red binder.".into());
    let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let bob_id = answer["record_id"].as_str().unwrap().to_owned();

    // A session turn quoting the token, kept by turn memory in a project's shared memory (the
    // whole conversation goes with the user, whatever scope keeps it), and searches whose
    // traces hold it. Bob's turn in the same project stays.
    app.grant("ea", "project:shared", true, true).await;
    let in_project = |who: &Value| json!({"principal": who, "scope": "project:shared"});
    let (_, session) = app.call("POST", "/v1/sessions", Some(&host), Some(in_project(&dana))).await;
    let sid = session["id"].as_str().unwrap().to_owned();
    let turn = json!({"principal": dana, "role": "user", "content": format!("Remember the {TOKEN} ledger.")});
    let (status, kept) =
        app.call("POST", &format!("/v1/sessions/{sid}/turns"), Some(&host), Some(turn)).await;
    assert_eq!((status, kept["memory"].as_str()), (StatusCode::CREATED, Some("kept")), "{kept}");
    let (_, bob_session) = app.call("POST", "/v1/sessions", Some(&host), Some(in_project(&bob))).await;
    let bob_sid = bob_session["id"].as_str().unwrap().to_owned();
    let turn =
        json!({"principal": bob, "role": "user", "content": "Bob asked about the keepbobturn release date."});
    let (status, _) =
        app.call("POST", &format!("/v1/sessions/{bob_sid}/turns"), Some(&host), Some(turn)).await;
    assert_eq!(status, StatusCode::CREATED);
    for query in [TOKEN.to_owned(), "Where does Dana keep the ledger?".to_owned()] {
        let (status, answer) = app
            .call("POST", "/v1/memory/search", Some(&host), Some(json!({"principal": dana, "query": query})))
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(!answer["results"].as_array().unwrap().is_empty(), "{answer}");
    }
    app.built_store.flush_traces().await;
    assert!(!files_holding(&data, TOKEN.as_bytes()).is_empty(), "the token is on disk before the erasure");

    let (_, before) = app
        .call("POST", "/v1/memory/get", Some(&host), Some(json!({"principal": dana, "ids": [erased_ids[0]]})))
        .await;
    let entity = before["records"][0]["links"][0]["entity_id"].as_str().expect("a mention link").to_owned();
    let dry = json!({"user_id": "dana", "dry_run": true});
    let (status, answer) = app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(dry)).await;
    assert_eq!(
        (status, answer["matched"].as_u64(), answer["erased"].as_u64()),
        (StatusCode::OK, Some(5), Some(0)),
        "four memories and the turn record: {answer}"
    );
    assert!(!files_holding(&data, TOKEN.as_bytes()).is_empty(), "a dry run changes nothing");

    let (status, answer) =
        app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(json!({"user_id": "dana"}))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["erased"], 5, "{answer}");
    assert_eq!(answer["removed"]["turns"], 1, "{answer}");
    assert!(answer["removed"]["traces"].as_u64().unwrap() >= 2, "{answer}");
    assert!(answer["removed"]["embeddings"].as_u64().unwrap() == 5, "{answer}");
    assert!(answer["removed"]["entities"].as_u64().unwrap() >= 1, "{answer}");

    // The bytes are gone: file, WAL, shared memory; and the FTS vocabulary has no such term.
    assert_eq!(files_holding(&data, TOKEN.as_bytes()), Vec::<String>::new(), "the token is still on disk");
    assert_eq!(files_holding(&data, b"blue binder"), Vec::<String>::new());
    assert_eq!(fts_terms(&data.join("retold.db"), TOKEN), "");
    assert_eq!(fts_terms(&data.join("retold.db"), "keepbobtok"), "keepbobtok", "another user's terms stay");
    assert_eq!(
        fts_terms(&data.join("retold.db"), "keepbobturn"),
        "keepbobturn",
        "and their turns in the project"
    );

    // What remains is a tombstone: ids, status, times and the erasure in the audit trail.
    let (status, answer) = app
        .call("POST", "/v1/memory/get", Some(&host), Some(json!({"principal": dana, "ids": [erased_ids[0]]})))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let record = &answer["records"][0]["record"];
    assert_eq!((record["status"].as_str(), record["content"].as_str()), (Some("deleted"), Some("[erased]")));
    assert!(
        record["evidence"].is_null() && answer["records"][0]["links"].as_array().unwrap().is_empty(),
        "{answer}"
    );
    let (_, events) =
        app.call("GET", &format!("/v1/admin/records/{}/events", erased_ids[0]), Some(ADMIN_KEY), None).await;
    let kinds: Vec<&str> =
        events["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    // The session started after the writes decided about the record (activation).
    assert_eq!(kinds, ["record.created", "activation.decided", "record.erased"], "{events}");
    assert!(
        events["events"].as_array().unwrap().iter().all(|e| e["details"] == json!({"erased": "true"})),
        "{events}"
    );

    // An erased entity is a tombstone that still answers (found by the fuzzer: a blank name
    // made it unreadable, a 500).
    let (status, answer) = app
        .call(
            "POST",
            &format!("/v1/admin/entities/{entity}/aliases"),
            Some(ADMIN_KEY),
            Some(json!({"alias": "D. O."})),
        )
        .await;
    assert!(status.is_success(), "{status} {answer}");

    // Bob is untouched; a second run erases nothing.
    let search = json!({"principal": bob, "query": "Where does Bob keep the red binder?"});
    let (_, answer) = app.call("POST", "/v1/memory/search", Some(&host), Some(search)).await;
    let found: Vec<&Value> =
        answer["results"].as_array().unwrap().iter().map(|r| &r["record"]["id"]).collect();
    assert!(found.contains(&&json!(bob_id)), "{answer}");
    let (status, answer) =
        app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(json!({"user_id": "dana"}))).await;
    // The turn record's tombstone no longer cites the session, so it is not matched again.
    assert_eq!(
        (status, answer["matched"].as_u64(), answer["erased"].as_u64()),
        (StatusCode::OK, Some(4), Some(0)),
        "{answer}"
    );
}

/// The intermittent 503 after an erasure (`SQLITE_IOERR_SHORT_READ`, 522), reproduced: the
/// erasure test read the store's files in the process that serves them, and closing any
/// descriptor of the database file drops every POSIX lock the process holds on it, SQLite's
/// too. The FTS check's `python3` then found itself alone with the database, checkpointed and
/// deleted the WAL when it closed, and the service's next read on a new pooled connection
/// found its frames gone. `files_holding` reads through `cat` for that reason; with an
/// in-process read here, the WAL is gone and the writes below fail.
#[tokio::test]
async fn checking_the_store_s_bytes_beside_another_process_leaves_the_service_whole() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let app = app_in(dir, &[]).await;
    let host = app.host_key(&[]).await;
    app.grant("ea", "user:dana", true, true).await;
    let dana = principal("ea", "dana");
    let write = |n: usize| {
        json!({"principal": dana, "type": "semantic", "scope": "user:dana", "source_kind": "system",
            "content": format!("Dana's locker number {n} is on the {n}th floor.")})
    };
    let mut ids = Vec::new();
    for n in 0..10 {
        let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(write(n))).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        ids.push(answer["record_id"].clone());
    }
    assert_eq!(files_holding(&data, b"Dana's locker number 3 ").len(), 1, "the record is in the WAL");
    assert_eq!(fts_terms(&data.join("retold.db"), "locker"), "locker");
    assert!(data.join("retold.db-wal").exists(), "the other process left the service's WAL alone");
    for n in 10..30 {
        let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(write(n))).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        ids.push(answer["record_id"].clone());
        let (status, answer) = app
            .call("POST", "/v1/memory/get", Some(&host), Some(json!({"principal": dana, "ids": ids})))
            .await;
        assert_eq!(
            (status, answer["records"].as_array().map(Vec::len)),
            (StatusCode::OK, Some(n + 1)),
            "{answer}"
        );
    }
}

/// Search traces are the largest table of a busy store (one per search, tens of kilobytes
/// each): retention deletes those past `operations.search_trace_retention_days`, after
/// counting them on a dry run, and records what it did.
#[tokio::test]
async fn retention_deletes_search_traces_past_their_days() {
    let app =
        app_in(tempfile::tempdir().unwrap(), &[("RETOLD__OPERATIONS__SEARCH_TRACE_RETENTION_DAYS", "0")])
            .await;
    let host = app.host_key(&[]).await;
    app.grant("ea", "user:dana", true, true).await;
    let dana = principal("ea", "dana");
    let mut searches = Vec::new();
    for query in ["Where is the ledger?", "Who keeps the binder?", "What did Dana say?"] {
        let body = json!({"principal": dana, "query": query});
        let (status, answer) = app.call("POST", "/v1/memory/search", Some(&host), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        searches.push(answer["search_id"].as_str().unwrap().to_owned());
    }
    let path = |id: &str| format!("/v1/admin/search-log/{id}");
    assert_eq!(app.call("GET", &path(&searches[0]), Some(ADMIN_KEY), None).await.0, StatusCode::OK);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (status, dry) =
        app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({"dry_run": true}))).await;
    assert_eq!((status, dry["search_traces"].as_u64()), (StatusCode::OK, Some(3)), "{dry}");
    let (kept, _) = app.call("GET", &path(&searches[0]), Some(ADMIN_KEY), None).await;
    assert_eq!(kept, StatusCode::OK, "a dry run deletes nothing");
    let (_, run) = app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!(run["search_traces"].as_u64(), Some(3), "{run}");
    for id in &searches {
        assert_eq!(app.call("GET", &path(id), Some(ADMIN_KEY), None).await.0, StatusCode::NOT_FOUND, "{id}");
    }
    let (_, status) = app.call("GET", "/v1/admin/ops/status", Some(ADMIN_KEY), None).await;
    let retention = status["events"].as_array().unwrap().iter().find(|e| e["kind"] == "ops.retention");
    assert_eq!(retention.map(|e| e["details"]["search_traces"].clone()), Some(json!("3")), "{status}");
}

#[tokio::test]
async fn expiry_moves_records_whose_time_ran_out_to_expired_once() {
    let app = crate::app().await;
    let host = app.host_key(&[]).await;
    let who = principal("ops-agent", "ops");
    let soon = (retold_domain::chrono::Utc::now() + retold_domain::chrono::TimeDelta::milliseconds(800))
        .to_rfc3339();
    let write = |content: &str, expires: Option<&str>| {
        let mut body = json!({"principal": who, "type": "semantic", "content": content,
            "scope": "agent:ops-agent/ops", "source_kind": "system"});
        if let Some(at) = expires {
            body["expires_at"] = json!(at);
        }
        body
    };
    let (_, short) = app
        .call(
            "POST",
            "/v1/memory/write",
            Some(&host),
            Some(write("The trial licence is active.", Some(&soon))),
        )
        .await;
    let (_, lasting) = app
        .call("POST", "/v1/memory/write", Some(&host), Some(write("The office is in Lisbon.", None)))
        .await;
    let short = short["record_id"].as_str().unwrap().to_owned();
    let status_of = |answer: &Value| answer["records"][0]["record"]["status"].as_str().unwrap().to_owned();
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;

    // Due, but still confirmed until the operation runs (eligibility already hides it).
    let get = json!({"principal": who, "ids": [short]});
    let (_, answer) = app.call("POST", "/v1/memory/get", Some(&host), Some(get.clone())).await;
    assert_eq!(status_of(&answer), "confirmed");
    let (status, dry) =
        app.call("POST", "/v1/admin/ops/expire", Some(ADMIN_KEY), Some(json!({"dry_run": true}))).await;
    assert_eq!((status, dry["expired"].as_u64()), (StatusCode::OK, Some(1)), "{dry}");
    assert_eq!(dry["ids"], json!([short]));
    let (_, answer) = app.call("POST", "/v1/memory/get", Some(&host), Some(get.clone())).await;
    assert_eq!(status_of(&answer), "confirmed", "a dry run changes nothing");

    let (status, run) = app.call("POST", "/v1/admin/ops/expire", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!((status, run["expired"].as_u64()), (StatusCode::OK, Some(1)), "{run}");
    let (_, answer) = app.call("POST", "/v1/memory/get", Some(&host), Some(get)).await;
    assert_eq!(status_of(&answer), "expired");
    let (_, events) =
        app.call("GET", &format!("/v1/admin/records/{short}/events"), Some(ADMIN_KEY), None).await;
    let last = events["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["kind"].as_str(), last["details"]["by"].as_str()),
        (Some("record.expired"), Some("ops expire (admin)")),
        "{events}"
    );
    let lasting = json!({"principal": who, "ids": [lasting["record_id"]]});
    let (_, answer) = app.call("POST", "/v1/memory/get", Some(&host), Some(lasting)).await;
    assert_eq!(status_of(&answer), "confirmed", "a record without expiry is untouched");

    let (_, again) = app.call("POST", "/v1/admin/ops/expire", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!(again["expired"], 0, "re-running expires nothing new: {again}");
}

/// `retold ops …` against the real server at `url`; the parsed JSON answer.
fn ops(url: &str, args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retold"))
        .arg("ops")
        .args(args)
        .env("RETOLD_URL", url)
        .env("RETOLD_ADMIN_KEY", "snap-admin-key")
        .output()
        .unwrap();
    assert!(out.status.success(), "retold ops {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_snapshot_taken_under_writes_restores_into_a_whole_store() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let server = crate::e2e::start(&dir.path().join("data"), "snap-admin-key");
    let host = server.host_key("snap-admin-key");
    retold_hosted::install_tls_provider();
    let client = reqwest::blocking::Client::new();
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (client, url, host, stop, acked) = (
                client.clone(),
                format!("{}/v1/memory/write", server.url),
                host.clone(),
                stop.clone(),
                acked.clone(),
            );
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let body = json!({"principal": {"agent_id": "snap", "user_id": "u"}, "type": "episodic",
                        "content": format!("Snapshot writer {w} note {n} token snap{w}x{n}q."),
                        "scope": "agent:snap/u", "source_kind": "system"});
                    let answer: Value =
                        client.post(&url).bearer_auth(&host).json(&body).send().unwrap().json().unwrap();
                    let id = answer["record_id"].as_str().expect("every write is answered").to_owned();
                    acked.lock().unwrap().push(id);
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let before = acked.lock().unwrap().len();
    let snapshot = ops(&server.url, &["snapshot"]);
    std::thread::sleep(std::time::Duration::from_millis(800));
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().unwrap();
    }
    let after = acked.lock().unwrap().len();
    assert!(after > before, "writes continued during the snapshot");
    assert_eq!(snapshot["check"]["ok"], true, "{snapshot}");
    let live = snapshot["check"]["live"].as_u64().unwrap() as usize;
    assert!((before..=after).contains(&live), "{before} <= {live} <= {after}");
    let path = snapshot["path"].as_str().unwrap().to_owned();

    let live_check = ops(&server.url, &["verify"]);
    assert_eq!(
        (live_check["ok"].as_bool(), live_check["live"].as_u64()),
        (Some(true), Some(after as u64)),
        "{live_check}"
    );

    // Restore into a new directory; a server there finds what was acknowledged before it.
    let restored = dir.path().join("restored");
    let answer =
        ops(&server.url, &["restore", "--snapshot", &path, "--data-dir", restored.to_str().unwrap()]);
    assert_eq!(answer["check"]["ok"], true, "{answer}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retold"))
        .args(["ops", "restore", "--snapshot", &path, "--data-dir", restored.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "restoring over a database is refused");

    let early = acked.lock().unwrap()[0].clone();
    let copy = crate::e2e::start(&restored, "snap-admin-key");
    let host2 = copy.host_key("snap-admin-key");
    let get = json!({"principal": {"agent_id": "snap", "user_id": "u"}, "ids": [early]});
    let answer: Value = client
        .post(format!("{}/v1/memory/get", copy.url))
        .bearer_auth(&host2)
        .json(&get)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(answer["records"][0]["record"]["id"], early.as_str(), "{answer}");
    copy.stop();

    // Erasing a record the snapshot holds says so; with --rewrite-snapshots the snapshot
    // loses it too, byte for byte.
    let get = json!({"principal": {"agent_id": "snap", "user_id": "u"}, "ids": [early]});
    let answer: Value = client
        .post(format!("{}/v1/memory/get", server.url))
        .bearer_auth(&host)
        .json(&get)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let token = answer["records"][0]["record"]["content"]
        .as_str()
        .unwrap()
        .split(' ')
        .next_back()
        .unwrap()
        .trim_end_matches('.')
        .to_owned();
    let snapshot_bytes = |p: &str| std::fs::read(p).unwrap();
    assert!(snapshot_bytes(&path).windows(token.len()).any(|w| w == token.as_bytes()));
    let erased = ops(&server.url, &["erase", "--record", &early]);
    assert_eq!(
        erased["snapshots_holding"],
        json!([{"path": path, "records": 1, "rewritten": false}]),
        "{erased}"
    );
    let erased = ops(&server.url, &["erase", "--record", &early, "--rewrite-snapshots"]);
    assert_eq!(
        erased["snapshots_holding"],
        json!([{"path": path, "records": 1, "rewritten": true}]),
        "{erased}"
    );
    assert!(
        !snapshot_bytes(&path).windows(token.len()).any(|w| w == token.as_bytes()),
        "{token} left in the snapshot"
    );
    let erased = ops(&server.url, &["erase", "--record", &early]);
    assert_eq!(erased["snapshots_holding"], json!([]), "{erased}");
    let check = ops(
        &server.url,
        &["restore", "--snapshot", &path, "--data-dir", dir.path().join("again").to_str().unwrap()],
    );
    assert_eq!(check["check"]["ok"], true, "a rewritten snapshot is still whole: {check}");
    server.stop();
}

#[tokio::test]
async fn due_records_are_flagged_once_and_resolved_through_the_queue() {
    let app = app_in(
        tempfile::tempdir().unwrap(),
        &[
            ("RETOLD__OPERATIONS__REVIEW__STALE_AFTER_DAYS", "0"),
            ("RETOLD__OPERATIONS__REVIEW__LOW_CONFIDENCE_BELOW", "0.95"),
            ("RETOLD__OPERATIONS__REVIEW__EXPIRING_WITHIN_HOURS", "87600"),
        ],
    )
    .await;
    let host = app.host_key(&[]).await;
    let who = principal("rev-agent", "dana");
    let fact = |content: &str, source: &str| {
        json!({"principal": who, "type": "semantic", "content": content, "scope": "agent:rev-agent/dana",
            "subject": {"name": "Dana", "kind": "person"}, "attribute": "office_city", "source_kind": source})
    };
    let (_, berlin) = app
        .call("POST", "/v1/memory/write", Some(&host), Some(fact("Dana works from Berlin.", "system")))
        .await;
    let (_, lisbon) = app
        .call(
            "POST",
            "/v1/memory/write",
            Some(&host),
            Some(fact("Dana works from Lisbon.", "agent_inference")),
        )
        .await;
    assert_eq!(lisbon["outcome"], "conflicting", "{lisbon}");
    let (berlin, lisbon) =
        (berlin["record_id"].as_str().unwrap().to_owned(), lisbon["record_id"].as_str().unwrap().to_owned());
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;

    let (status, flagged) =
        app.call("POST", "/v1/admin/ops/flag-reviews", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{flagged}");
    assert_eq!(
        flagged,
        json!({"expiring_provisional": 1, "unresolved_conflict": 1, "stale_low_confidence": 1, "total": 3})
    );
    let (_, again) = app.call("POST", "/v1/admin/ops/flag-reviews", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!(again["total"], 0, "a record already waiting is not flagged again: {again}");

    let (_, list) = app.call("GET", "/v1/admin/reviews", Some(ADMIN_KEY), None).await;
    let items = list["reviews"].as_array().unwrap().clone();
    let item = |record: &str, reason: &str| {
        items
            .iter()
            .find(|i| i["record_id"] == record && i["reason"] == reason)
            .unwrap_or_else(|| panic!("{reason} for {record}: {list}"))["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (conflict, expiring, stale) = (
        item(&lisbon, "unresolved_conflict"),
        item(&lisbon, "expiring_provisional"),
        item(&berlin, "stale_low_confidence"),
    );
    let resolve = |id: &str, action: &str| {
        let (path, body) = (format!("/v1/admin/reviews/{id}/resolve"), json!({"action": action}));
        let app = &app;
        async move { app.call("POST", &path, Some(ADMIN_KEY), Some(body)).await }
    };
    let (status, done) = resolve(&conflict, "forget").await;
    assert_eq!(
        (status, done["from"].as_str(), done["to"].as_str()),
        (StatusCode::OK, Some("provisional"), Some("deleted")),
        "{done}"
    );
    assert_eq!(done["review"]["resolution"], "forget");
    let (status, again) = resolve(&conflict, "forget").await;
    assert_eq!((status, again["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")), "{again}");
    let (status, refused) = resolve(&expiring, "confirm").await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (StatusCode::CONFLICT, Some("conflict")),
        "a deleted record is not confirmed: {refused}"
    );
    let (status, kept) = resolve(&stale, "confirm").await;
    assert_eq!(
        (status, kept["from"].as_str(), kept["to"].as_str()),
        (StatusCode::OK, Some("confirmed"), Some("confirmed")),
        "{kept}"
    );

    let (_, open) = app.call("GET", "/v1/admin/reviews", Some(ADMIN_KEY), None).await;
    let open: Vec<&str> =
        open["reviews"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(open, [expiring.as_str()], "only the refused item stays open");
    let (_, all) = app.call("GET", "/v1/admin/reviews?all=true", Some(ADMIN_KEY), None).await;
    assert_eq!(all["reviews"].as_array().unwrap().len(), 3);
    let (_, events) =
        app.call("GET", &format!("/v1/admin/records/{lisbon}/events"), Some(ADMIN_KEY), None).await;
    let kinds: Vec<&str> =
        events["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.ends_with(&["record.forgotten", "review.resolved"]), "{kinds:?}");
    let (status, _) = resolve("rev_unknown", "forget").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, bad) = resolve(&stale, "archive").await;
    assert_eq!((status, bad["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("action")), "{bad}");
}

#[tokio::test]
async fn an_operation_body_must_be_an_object_and_queries_take_no_unknown_fields() {
    // Found by the fuzzer: serde reads a struct of defaults from `[]`, so an expiry ran.
    let app = crate::app().await;
    for path in ["/v1/admin/ops/expire", "/v1/admin/ops/verify", "/v1/admin/ops/retention"] {
        let (status, answer) = app.call("POST", path, Some(ADMIN_KEY), Some(json!([]))).await;
        assert_eq!(
            (status, answer["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("body")),
            "{path}: {answer}"
        );
    }
    let (status, answer) = app.call("GET", "/v1/admin/reviews?limit=5000", Some(ADMIN_KEY), None).await;
    assert_eq!(
        (status, answer["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("limit")),
        "{answer}"
    );
    let (status, _) = app.call("GET", "/v1/admin/reviews?colour=red", Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = app.call("GET", "/v1/admin/grants?agent_id=a&colour=red", Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}
