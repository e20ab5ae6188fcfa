//! MCP over streamable HTTP on the real `retold serve`, driven by the official Python MCP
//! client (`mcp`, installed by `cargo xtask setup`): the five tools with the REST bodies'
//! schemas, a round trip, and refusals as tool errors carrying the stable codes.

use serde_json::{Value, json};

use crate::e2e;

const ADMIN: &str = "mcp-admin-key";

/// Run the round-trip script; what it saw.
fn round_trip(args: &[&str]) -> Value {
    let python = retold_provision::python_tool("mcp").executable();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/mcp_round_trip.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} runs ({e}): run `cargo xtask setup`", python.display()));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("the script prints JSON")
}

#[test]
fn the_official_mcp_client_runs_the_round_trip_over_streamable_http_with_rest_s_rules() {
    let dir = tempfile::tempdir().unwrap();
    let server = e2e::start(dir.path(), ADMIN);
    let key = server.host_key(ADMIN);
    server.grant(ADMIN, "assistant", "user:jo");
    // Without a valid host key nothing is served, not even `initialize`.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}})
    .to_string();
    for auth in [vec![], vec!["-H", "Authorization: Bearer not-a-key"]] {
        let mut args =
            vec!["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json"];
        args.extend(["-H", "Accept: application/json, text/event-stream", "-d", &initialize]);
        args.extend(auth);
        let url = format!("{}/mcp", server.url);
        args.push(&url);
        let status = std::process::Command::new("curl").args(&args).output().expect("curl runs");
        assert_eq!(String::from_utf8_lossy(&status.stdout), "401", "{args:?}");
    }
    let seen = round_trip(&["http", &server.url, &key, "user:jo", "project:secret"]);
    check(&seen);
    server.stop();
}

/// `retold mcp` over stdio, one principal from the flags, on its own store: the agent's
/// private scope of the user is writable without a grant, a user scope without one is not.
#[test]
fn the_official_mcp_client_runs_the_round_trip_over_stdio_for_one_principal() {
    let dir = tempfile::tempdir().unwrap();
    let binary = env!("CARGO_BIN_EXE_retold");
    let data = dir.path().to_str().unwrap();
    let seen = round_trip(&["stdio", binary, data, "agent:assistant/jo", "user:jo"]);
    check(&seen);
    // The key it made for itself is kept, owner-only, and used again.
    let file = dir.path().join("mcp-stdio-assistant.key");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let again = round_trip(&["stdio", binary, data, "agent:assistant/jo", "user:jo"]);
    assert!(!again["write"]["is_error"].as_bool().unwrap(), "{}", again["write"]);
}

fn check(seen: &Value) {
    // The five tools, each with its REST body's schema minus the principal (from the headers).
    let tools = seen["tools"].as_object().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["memory_forget", "memory_get", "memory_revise", "memory_search", "memory_write"]);
    let document = retold_http::document();
    for (tool, body) in [
        ("memory_search", "SearchBody"),
        ("memory_write", "WriteBody"),
        ("memory_get", "GetBody"),
        ("memory_revise", "ReviseBody"),
        ("memory_forget", "ForgetBody"),
    ] {
        let rest = &document["components"]["schemas"][body];
        let mcp = &tools[tool];
        let rest_fields: Vec<&String> =
            rest["properties"].as_object().unwrap().keys().filter(|k| *k != "principal").collect();
        let mcp_fields: Vec<&String> = mcp["properties"].as_object().unwrap().keys().collect();
        assert_eq!(mcp_fields, rest_fields, "{tool} takes {body}'s fields");
        assert!(!mcp["required"].as_array().unwrap().iter().any(|r| r == "principal"));
        for field in mcp_fields {
            let (rest_field, mcp_field) = (&rest["properties"][field], &mcp["properties"][field]);
            // Same schema; a reference points into the tool's own $defs.
            let rewritten = rest_field.to_string().replace("#/components/schemas/", "#/$defs/");
            assert_eq!(mcp_field.to_string(), rewritten, "{tool}.{field}");
        }
    }

    // The round trip.
    assert!(!seen["write"]["is_error"].as_bool().unwrap(), "{}", seen["write"]);
    let record = seen["write"]["structured"]["record_id"].as_str().unwrap();
    let search = &seen["search"];
    assert!(!search["is_error"].as_bool().unwrap(), "{search}");
    assert_eq!(search["structured"]["results"][0]["record"]["id"], record, "{search}");
    let explanation = search["structured"]["results"][0]["explanation"].as_str().unwrap();
    assert!(!explanation.is_empty() && search["text"].as_str().unwrap().contains(explanation), "{search}");
    assert_eq!(seen["get"]["structured"]["records"][0]["record"]["id"], record);
    assert!(!seen["revise"]["is_error"].as_bool().unwrap(), "{}", seen["revise"]);
    // A supersede's replacement needs no principal of its own, in the schema or the call.
    assert!(!seen["supersede"]["is_error"].as_bool().unwrap(), "{}", seen["supersede"]);
    let replacement = &tools["memory_revise"]["$defs"]["WriteBody"];
    assert!(!replacement["properties"].as_object().unwrap().contains_key("principal"), "{replacement}");
    assert!(!seen["forget"]["is_error"].as_bool().unwrap(), "{}", seen["forget"]);

    // Refusals are tool errors with REST's stable codes.
    let violation = &seen["violation"];
    assert!(violation["is_error"].as_bool().unwrap(), "{violation}");
    assert_eq!(violation["structured"]["code"], "scope_not_writable", "{violation}");
    assert!(violation["text"].as_str().unwrap().starts_with("scope_not_writable"), "{violation}");
    assert_eq!(seen["invalid"]["structured"]["code"], "validation_failed", "{}", seen["invalid"]);
}
