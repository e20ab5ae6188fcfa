//! The generated clients: the committed Python client is what `scripts/generate-clients.sh`
//! makes of `docs/openapi.json` today (so it never drifts from the document), and it runs the
//! five tools' round trip against the real `retold serve`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::e2e;

const ADMIN: &str = "clients-admin-key";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "__pycache__") {
                    pending.push(path);
                }
            } else {
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_committed_python_client_is_generated_from_the_document_of_today() {
    let out = tempfile::tempdir().unwrap();
    let generator = retold_provision::python_tool("openapi-python-client").executable();
    let status = std::process::Command::new("bash")
        .arg(root().join("scripts/generate-clients.sh"))
        .arg(out.path())
        .env("OPENAPI_PYTHON_CLIENT", &generator)
        .status()
        .expect("bash runs");
    assert!(status.success(), "scripts/generate-clients.sh failed (run `cargo xtask setup`)");
    let fresh = files(&out.path().join("python/retold_client"));
    let committed = files(&root().join("crates/adapters/clients/python/retold_client"));
    let names = |f: &[(PathBuf, Vec<u8>)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&committed), names(&fresh), "run `cargo xtask clients`");
    for ((path, a), (_, b)) in committed.iter().zip(&fresh) {
        assert!(a == b, "{} differs from the document: run `cargo xtask clients`", path.display());
    }
}

#[test]
fn the_generated_python_client_runs_the_round_trip_against_the_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = e2e::start(dir.path(), ADMIN);
    let key = server.host_key(ADMIN);
    let grant = e2e::curl(&[
        "-H",
        &format!("Authorization: Bearer {ADMIN}"),
        "-H",
        "Content-Type: application/json",
        "-d",
        &json!({"agent_id": "assistant", "scope": "user:jo", "can_read": true, "can_write": true})
            .to_string(),
        &format!("{}/v1/admin/grants", server.url),
    ]);
    assert!(grant.contains("grt_"), "{grant}");
    let python = retold_provision::python_tool("openapi-python-client").venv().join("bin/python");
    let output = std::process::Command::new(&python)
        .arg(root().join("crates/http/tests/it/fixtures/client_round_trip.py"))
        .arg(root().join("crates/adapters/clients/python"))
        .arg(&server.url)
        .arg(&key)
        .output()
        .unwrap_or_else(|e| panic!("{} runs ({e}): run `cargo xtask setup`", python.display()));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    assert_eq!(seen["write"]["status"], 200, "{seen}");
    let record = seen["write"]["body"]["record_id"].as_str().unwrap();
    assert_eq!(seen["search"]["results"][0]["record"]["id"], record, "{seen}");
    assert!(!seen["search"]["results"][0]["explanation"].as_str().unwrap().is_empty());
    assert_eq!(seen["get"]["records"][0]["record"]["id"], record);
    assert_eq!((seen["revise"].as_u64(), seen["forget"].as_u64()), (Some(200), Some(200)), "{seen}");
    assert_eq!(seen["violation"]["status"], 403, "{seen}");
    assert_eq!(seen["violation"]["body"]["code"], "scope_not_writable", "{seen}");
    server.stop();
}
