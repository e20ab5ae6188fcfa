//! Disk full: the real `retold serve` with its data directory on a small tmpfs (mounted by
//! the test; it needs root, as CI has). Writes until the filesystem is full must fail with
//! 507 `storage_full` and change nothing; searches and reads keep working; once space is
//! freed writes succeed again; and afterwards the SQLite file passes its integrity check and
//! holds exactly the acknowledged records, each with its FTS row and its embedding.
//!
//! I/O errors: the same server with an `LD_PRELOAD` shim that fails every write and sync
//! under its data directory with EIO while a trigger file exists: writes get 503
//! `storage_unavailable`, reads keep working, writes succeed once the disk recovers.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::blocking::Client;
use retold_domain::{EligibilityFilter, EmbeddingSource, LexicalIndex, LexicalTerm, Scope};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use serde_json::{Value, json};

use crate::e2e::start;

const KEY: &str = "disk-full-admin-key";

/// A tmpfs of a fixed size, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Self {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .expect("the mount command exists");
        assert!(
            out.status.success(),
            "the disk-full test mounts a {size} tmpfs and needs root (CI runs as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self(at.to_owned())
    }

    fn available_bytes(&self) -> u64 {
        let out = Command::new("df").args(["--output=avail", "-B1"]).arg(&self.0).output().unwrap();
        String::from_utf8(out.stdout).unwrap().lines().nth(1).unwrap().trim().parse().unwrap()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn post(client: &Client, url: &str, key: &str, body: &Value) -> (u16, Value) {
    let response = client.post(url).bearer_auth(key).json(body).send().expect("the server answers");
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    let body: Value = response.json().unwrap();
    if status >= 400 {
        assert_eq!(content_type.as_deref(), Some("application/problem+json"), "{status} {body}");
    }
    (status, body)
}

fn write(n: usize) -> Value {
    // ~4 KB of text per record, so the filesystem fills in a few hundred writes.
    let padding = "The staging cluster keeps its build cache on local disk. ".repeat(70);
    json!({"principal": {"agent_id": "disk-agent", "user_id": "ops"}, "type": "episodic",
        "content": format!("Disk note {n} token dfull{n}q. {padding}"), "scope": "project:disk", "source_kind": "system"})
}

#[test]
fn a_full_disk_refuses_writes_with_507_keeps_reads_and_damages_nothing() {
    let root = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(root.path(), "24m");
    let data = root.path().join("data");
    let server = start(&data, KEY);
    retold_hosted::install_tls_provider();
    let client = Client::builder().timeout(std::time::Duration::from_secs(60)).build().unwrap();
    let admin = |path: &str, body: Value| {
        let (status, answer) = post(&client, &format!("{}{path}", server.url), KEY, &body);
        assert!(status < 300, "{path}: {status} {answer}");
        answer
    };
    admin(
        "/v1/admin/grants",
        json!({"agent_id": "disk-agent", "scope": "project:disk", "can_read": true, "can_write": true}),
    );
    let host = admin("/v1/admin/host-keys", json!({"name": "disk"}))["key"].as_str().unwrap().to_owned();
    let url = |path: &str| format!("{}{path}", server.url);

    // Leave about 3 MB free: the rest is a file the test deletes later.
    let filler = root.path().join("filler");
    let leave = 3 * 1024 * 1024;
    let fill = disk.available_bytes().saturating_sub(leave);
    std::fs::write(&filler, vec![0u8; fill as usize]).unwrap();

    let mut acked: Vec<(String, usize)> = Vec::new();
    let mut refusal = None;
    for n in 0..5000 {
        let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(n));
        if status == 200 {
            acked.push((answer["record_id"].as_str().unwrap().to_owned(), n));
            continue;
        }
        refusal = Some((n, status, answer));
        break;
    }
    let (refused_n, status, answer) = refusal.expect("the disk filled up");
    assert!(acked.len() > 10, "some writes fit before the disk filled: {}", acked.len());
    assert_eq!((status, answer["code"].as_str()), (507, Some("storage_full")), "{answer}");
    // Still full: the next write is refused the same way, and nothing was half-written.
    let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(refused_n + 1));
    assert_eq!((status, answer["code"].as_str()), (507, Some("storage_full")), "{answer}");

    // Reads keep working while the disk is full: search (lexical and dense) and get.
    let principal = json!({"agent_id": "disk-agent", "user_id": "ops"});
    for (id, n) in [acked[0].clone(), acked[acked.len() - 1].clone()] {
        let (status, answer) = post(
            &client,
            &url("/v1/memory/search"),
            &host,
            &json!({"principal": principal, "query": format!("dfull{n}q")}),
        );
        assert_eq!(status, 200, "search while full: {answer}");
        assert_eq!(answer["results"][0]["record"]["id"], id.as_str(), "{answer}");
        let (status, answer) =
            post(&client, &url("/v1/memory/get"), &host, &json!({"principal": principal, "ids": [id]}));
        assert_eq!(status, 200, "get while full: {answer}");
    }

    // Space freed: writes succeed again, on the same running server.
    std::fs::remove_file(&filler).unwrap();
    let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(9000));
    assert_eq!(status, 200, "a write after space was freed: {answer}");
    acked.push((answer["record_id"].as_str().unwrap().to_owned(), 9000));
    server.stop();

    // Nothing damaged: the file checks out and holds exactly the acknowledged records, each
    // found through its FTS row and with its embedding.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let check = SqliteStore::verify_file(&data.join("retold.db")).await.unwrap();
        assert_eq!(check.integrity, "ok", "{check:?}");
        let store = SqliteStore::open(&StoreConfig::new(data.join("retold.db"))).await.unwrap();
        let all = retold_domain::EligibilityIndex::eligible(
            &store,
            &EligibilityFilter {
                scopes: vec![Scope::parse("project:disk").unwrap()],
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
        let mut stored: Vec<String> = all.iter().map(|e| e.id.to_string()).collect();
        let mut expected: Vec<String> = acked.iter().map(|(id, _)| id.clone()).collect();
        stored.sort();
        expected.sort();
        assert_eq!(stored, expected, "exactly the acknowledged records, none from refused writes");
        let embedded = {
            let (model, version) = crate::served_model();
            store.compatible_embeddings(&model, version, 384).await.unwrap()
        };
        let keys: Vec<_> = all.iter().map(|e| e.key).collect();
        for (id, n) in &acked {
            let entry = all.iter().find(|e| e.id.as_str() == id).unwrap();
            assert!(embedded.keys.binary_search(&entry.key).is_ok(), "{id} has its embedding");
            let hits = store.search(&[LexicalTerm::new(format!("dfull{n}q"), true)], &keys, 3).await.unwrap();
            assert!(hits.iter().any(|h| h.record_id.as_str() == id), "{id} has its FTS row");
        }
        store.close().await.unwrap();
    });
    drop(disk);
}

/// Build the LD_PRELOAD shim that makes writes under a directory fail with EIO while a
/// trigger file exists (`fixtures/eio_shim.c`), with the C compiler Rust links with.
fn eio_shim(out: &Path) -> PathBuf {
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/fixtures/eio_shim.c");
    let library = out.join("eio_shim.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&library)
        .arg(source)
        .arg("-ldl")
        .status()
        .expect("cc (the C compiler Rust links with) runs");
    assert!(status.success(), "building the EIO shim");
    library
}

#[test]
fn an_io_error_refuses_writes_with_503_keeps_reads_and_damages_nothing() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let library = eio_shim(&root_path);
    let data = root_path.join("data");
    let trigger = root_path.join("trigger");
    let env = [
        ("LD_PRELOAD", library.to_str().unwrap()),
        ("RETOLD_FAULT_TRIGGER", trigger.to_str().unwrap()),
        ("RETOLD_FAULT_DIR", data.to_str().unwrap()),
    ];
    let server = crate::e2e::start_with(&data, KEY, &env);
    retold_hosted::install_tls_provider();
    let client = Client::builder().timeout(std::time::Duration::from_secs(60)).build().unwrap();
    let url = |path: &str| format!("{}{path}", server.url);
    let (status, _) = post(
        &client,
        &url("/v1/admin/grants"),
        KEY,
        &json!({"agent_id": "disk-agent", "scope": "project:disk", "can_read": true, "can_write": true}),
    );
    assert_eq!(status, 201);
    let (_, key) = post(&client, &url("/v1/admin/host-keys"), KEY, &json!({"name": "eio"}));
    let host = key["key"].as_str().unwrap().to_owned();
    let mut acked = Vec::new();
    for n in 0..5 {
        let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(n));
        assert_eq!(status, 200, "{answer}");
        acked.push((answer["record_id"].as_str().unwrap().to_owned(), n));
    }

    // The disk starts failing: writes are refused with 503 storage_unavailable.
    std::fs::write(&trigger, b"").unwrap();
    for n in 100..103 {
        let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(n));
        assert_eq!((status, answer["code"].as_str()), (503, Some("storage_unavailable")), "{answer}");
        // The detail names SQLite's result code (which operation failed), nothing of the data.
        assert!(answer["detail"].as_str().unwrap().contains("(SQLite result code "), "{answer}");
    }
    // Reads keep working.
    let principal = json!({"agent_id": "disk-agent", "user_id": "ops"});
    let (status, answer) =
        post(&client, &url("/v1/memory/search"), &host, &json!({"principal": principal, "query": "dfull3q"}));
    assert_eq!(status, 200, "search while the disk fails: {answer}");
    assert_eq!(answer["results"][0]["record"]["id"], acked[3].0.as_str(), "{answer}");
    let ids: Vec<&str> = acked.iter().map(|(id, _)| id.as_str()).collect();
    let (status, answer) =
        post(&client, &url("/v1/memory/get"), &host, &json!({"principal": principal, "ids": ids}));
    assert_eq!(status, 200, "get while the disk fails: {answer}");

    // The disk recovers: writes succeed again on the same server.
    std::fs::remove_file(&trigger).unwrap();
    let (status, answer) = post(&client, &url("/v1/memory/write"), &host, &write(200));
    assert_eq!(status, 200, "a write after the disk recovered: {answer}");
    acked.push((answer["record_id"].as_str().unwrap().to_owned(), 200));
    server.stop();

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let check = SqliteStore::verify_file(&data.join("retold.db")).await.unwrap();
        assert!(check.is_ok(), "{check:?}");
        assert_eq!(check.live as usize, acked.len(), "exactly the acknowledged records: {check:?}");
    });
}
