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

fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
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

    // A session turn quoting the token, and searches whose traces hold it.
    let (_, session) = app.call("POST", "/v1/sessions", Some(&host), Some(json!({"principal": dana}))).await;
    let sid = session["id"].as_str().unwrap().to_owned();
    let turn = json!({"principal": dana, "role": "user", "content": format!("Remember the {TOKEN} ledger.")});
    let (status, _) = app.call("POST", &format!("/v1/sessions/{sid}/turns"), Some(&host), Some(turn)).await;
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

    let dry = json!({"user_id": "dana", "dry_run": true});
    let (status, answer) = app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(dry)).await;
    assert_eq!(
        (status, answer["matched"].as_u64(), answer["erased"].as_u64()),
        (StatusCode::OK, Some(4), Some(0)),
        "{answer}"
    );
    assert!(!files_holding(&data, TOKEN.as_bytes()).is_empty(), "a dry run changes nothing");

    let (status, answer) =
        app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(json!({"user_id": "dana"}))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["erased"], 4, "{answer}");
    assert_eq!(answer["removed"]["turns"], 1, "{answer}");
    assert!(answer["removed"]["traces"].as_u64().unwrap() >= 2, "{answer}");
    assert!(answer["removed"]["embeddings"].as_u64().unwrap() == 4, "{answer}");
    assert!(answer["removed"]["entities"].as_u64().unwrap() >= 1, "{answer}");

    // The bytes are gone: file, WAL, shared memory; and the FTS vocabulary has no such term.
    assert_eq!(files_holding(&data, TOKEN.as_bytes()), Vec::<String>::new(), "the token is still on disk");
    assert_eq!(files_holding(&data, b"blue binder"), Vec::<String>::new());
    assert_eq!(fts_terms(&data.join("retold.db"), TOKEN), "");
    assert_eq!(fts_terms(&data.join("retold.db"), "keepbobtok"), "keepbobtok", "another user's terms stay");

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
    assert_eq!(kinds, ["record.created", "record.erased"], "{events}");
    assert!(
        events["events"].as_array().unwrap().iter().all(|e| e["details"] == json!({"erased": "true"})),
        "{events}"
    );

    // Bob is untouched; a second run erases nothing.
    let search = json!({"principal": bob, "query": "Where does Bob keep the red binder?"});
    let (_, answer) = app.call("POST", "/v1/memory/search", Some(&host), Some(search)).await;
    assert_eq!(answer["results"][0]["record"]["id"], bob_id.as_str(), "{answer}");
    let (status, answer) =
        app.call("POST", "/v1/admin/ops/erase", Some(ADMIN_KEY), Some(json!({"user_id": "dana"}))).await;
    assert_eq!(
        (status, answer["matched"].as_u64(), answer["erased"].as_u64()),
        (StatusCode::OK, Some(4), Some(0)),
        "{answer}"
    );
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
