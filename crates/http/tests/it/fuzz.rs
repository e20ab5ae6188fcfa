//! Schema-driven fuzzing of the whole OpenAPI document against the real `retold serve`, with
//! schemathesis (pinned by hash in `scripts/requirements/schemathesis.txt`, installed by
//! `cargo xtask setup`). Every check runs: no 5xx, status codes, content types, headers and
//! bodies as documented, schema-invalid requests refused, schema-valid requests accepted,
//! unsupported methods answered 405, auth never ignored. Two exceptions, both rules a JSON
//! Schema cannot state: a `memory_write` (and a supersede's replacement) may still be refused
//! with 422 for an `expires_at` in the past, a `session:` source reference that names no turn,
//! or a replacement principal that differs from the request's; a turn, for an `at` in the
//! future or before its session's previous turn; and
//! `ensure_resource_availability` is off, because a session belongs to one principal and any
//! other answers 404 on purpose. The two JSON-lines imports (`memory_import`, `restore`) are
//! left out: schemathesis serialises no `application/x-ndjson` body (`import.rs` tests them
//! line by line). `RETOLD_FUZZ_EXAMPLES` sets examples per operation (CI runs
//! 25; `cargo xtask reliability fuzz` runs 1,000).

use std::process::Command;

use crate::e2e::start;

const KEY: &str = "fuzz-admin-key";

#[test]
fn every_response_to_generated_requests_conforms_to_the_document() {
    let examples = std::env::var("RETOLD_FUZZ_EXAMPLES").unwrap_or_else(|_| "25".to_owned());
    let st = retold_provision::python_tool("schemathesis").executable();
    assert!(st.exists(), "{} is missing: run `cargo xtask setup`", st.display());
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("data"), KEY);
    let host = server.host_key(KEY);
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            r#"[[operations]]
include-path-regex = "^/(v1/admin/|ready$)"
headers = {{ Authorization = "Bearer {KEY}" }}

[[operations]]
include-path-regex = "^/v1/(sessions($|/\\{{id\\}}/(end|profile|decisions)$)|memory/(search|get|forget))"
headers = {{ Authorization = "Bearer {host}" }}

[[operations]]
include-path-regex = "^/v1/(memory/(write|revise)|sessions/\\{{id\\}}/turns)$"
headers = {{ Authorization = "Bearer {host}" }}
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409", "422"]

[output.sanitization]
sensitive-markers = ["token", "secret", "password", "passwd", "credential"]
"#
        ),
    )
    .unwrap();
    let document = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    let out = Command::new(&st)
        .arg("--config-file")
        .arg(&config)
        .args(["run", document, "--url", &server.url, "--checks", "all"])
        .args(["--exclude-checks", "ensure_resource_availability", "--max-examples", &examples])
        .args(["--exclude-operation-id-regex", "^(memory_import|restore)$"])
        .args(["--seed", "1", "--no-color", "--continue-on-failure", "--suppress-health-check", "all"])
        .current_dir(dir.path())
        .output()
        .expect("schemathesis runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("generated") || l.contains("passed") || l.contains("failures"))
        .collect();
    eprintln!("schemathesis ({examples} examples per operation): {}", summary.join(" | "));
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    server.stop();
}
