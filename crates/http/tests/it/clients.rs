//! The generated clients: the committed Python client and TypeScript types are what
//! `scripts/generate-clients.sh` makes of `docs/openapi.json` today (so they never drift from
//! the document), and each runs the five tools' round trip against the real `retold serve`
//! (the TypeScript one compiled by `tsc` against the generated types, then run with node).

use std::path::{Path, PathBuf};

use serde_json::Value;

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
        .env("DATAMODEL_CODEGEN", retold_provision::python_tool("datamodel-code-generator").executable())
        .status()
        .expect("bash runs");
    assert!(status.success(), "scripts/generate-clients.sh failed (run `cargo xtask setup`)");
    let generated = |python: &Path| {
        [files(&python.join("retold_client")), files(&python.join("retold_schemas"))].concat()
    };
    let fresh = generated(&out.path().join("python"));
    let committed = generated(&root().join("crates/adapters/clients/python"));
    let names = |f: &[(PathBuf, Vec<u8>)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&committed), names(&fresh), "run `cargo xtask clients`");
    for ((path, a), (_, b)) in committed.iter().zip(&fresh) {
        assert!(a == b, "{} differs from the document: run `cargo xtask clients`", path.display());
    }
    let types = |dir: &Path| std::fs::read(dir.join("typescript/schema.d.ts")).unwrap();
    assert!(
        types(out.path()) == types(&root().join("crates/adapters/clients")),
        "crates/adapters/clients/typescript/schema.d.ts differs from the document: run `cargo xtask clients`"
    );
}

/// A server with a host key whose agent `assistant` may write `user:jo`.
fn server_for_jo(dir: &Path) -> (e2e::Server, String) {
    let server = e2e::start(dir, ADMIN);
    let key = server.host_key(ADMIN);
    server.grant(ADMIN, "assistant", "user:jo");
    (server, key)
}

#[test]
fn the_typescript_client_compiles_against_the_generated_types_and_runs_the_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key) = server_for_jo(dir.path());
    let client = root().join("crates/adapters/clients/typescript");
    let tsc = std::process::Command::new(client.join("node_modules/.bin/tsc"))
        .args(["-p", "tsconfig.json"])
        .current_dir(&client)
        .output()
        .expect("tsc runs (cargo xtask setup installs it)");
    assert!(
        tsc.status.success(),
        "tsc: {}{}",
        String::from_utf8_lossy(&tsc.stdout),
        String::from_utf8_lossy(&tsc.stderr)
    );
    let output = std::process::Command::new("node")
        .arg(client.join("dist/test/round_trip.js"))
        .arg(&server.url)
        .arg(&key)
        .output()
        .expect("node runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    let record = seen["write"]["record_id"].as_str().unwrap();
    assert_eq!(seen["search"]["results"][0]["record"]["id"], record, "{seen}");
    assert!(!seen["search"]["results"][0]["explanation"].as_str().unwrap().is_empty());
    assert_eq!(seen["get"]["records"][0]["record"]["id"], record);
    assert_eq!((seen["revise"].as_u64(), seen["forget"].as_u64()), (Some(200), Some(200)), "{seen}");
    assert_eq!(seen["violation"]["status"], 403, "{seen}");
    assert_eq!(seen["violation"]["body"]["code"], "scope_not_writable", "{seen}");
    server.stop();
}

#[test]
fn the_generated_python_client_runs_the_round_trip_against_the_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key) = server_for_jo(dir.path());
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
