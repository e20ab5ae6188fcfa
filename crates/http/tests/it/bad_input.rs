//! Bad input gets a clear 4xx with a stable code (naming the field where there is one) and
//! changes nothing: the SQLite file and its WAL hash the same before and after every refused
//! request. Bodies at and over every size limit the OpenAPI document states, over the body
//! limit, invalid UTF-8, deep nesting, unknown fields, wrong types, control characters in ids;
//! on every operation that takes a body, with and without an Idempotency-Key.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::{ADMIN_KEY, TestApp, app, principal};

/// SHA-256 of the database file and its write-ahead log: every committed change lands in one
/// of them.
fn store_digest(app: &TestApp) -> String {
    let mut hasher = Sha256::new();
    for name in ["retold.db", "retold.db-wal"] {
        let bytes = std::fs::read(app._dir.path().join(name)).unwrap_or_default();
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Every operation that takes a body: a concrete path, whether it needs the admin key, its
/// body schema's name, and whether it takes an Idempotency-Key.
#[derive(Clone)]
struct Operation {
    id: String,
    method: String,
    path: String,
    admin: bool,
    schema: String,
    retryable: bool,
}

fn document() -> Value {
    serde_json::from_str(&retold_http::openapi_json()).unwrap()
}

fn operations(doc: &Value) -> Vec<Operation> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(body) = op.get("requestBody") else { continue };
            // JSON lines (the imports) answer each line for itself: `import.rs` tests them.
            let Some(schema) = body["content"]["application/json"]["schema"]["$ref"].as_str() else {
                assert!(body["content"].get("application/x-ndjson").is_some(), "{path}: {body}");
                continue;
            };
            let retryable = op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == "Idempotency-Key"));
            all.push(Operation {
                id: op["operationId"].as_str().unwrap().to_owned(),
                method: method.to_uppercase(),
                path: path.replace("{id}", "x_1"),
                admin: op["tags"][0] == "admin" || op["tags"][0] == "operations",
                schema: schema.rsplit('/').next().unwrap().to_owned(),
                retryable,
            });
        }
    }
    assert!(all.len() >= 14, "every operation with a body");
    all
}

/// A body each operation's parsing and validation accept.
fn valid_body(operation: &str) -> Value {
    let p = principal("research-agent", "aditya");
    match operation {
        "entity_create" => json!({"kind": "person", "canonical_name": "Sam", "scope": "user:aditya"}),
        "entity_merge" => json!({"from": "ent_a", "into": "ent_b"}),
        "entity_add_alias" => json!({"alias": "Sammy"}),
        "extraction_run" => json!({"limit": 1}),
        "grant_create" => json!({"agent_id": "a", "scope": "user:u", "can_read": true, "can_write": false}),
        "host_key_create" => json!({"name": "n", "agents": []}),
        "memory_forget" => json!({"principal": p, "id": "mem_x", "reason": "r"}),
        "memory_get" => json!({"principal": p, "ids": ["mem_x"]}),
        "memory_inventory" => json!({"principal": p}),
        "memory_revise" => json!({"principal": p, "action": "confirm", "id": "mem_x"}),
        "memory_search" | "search_as" => json!({"principal": p, "query": "q"}),
        "memory_write" => json!({
            "principal": p, "type": "semantic", "content": "c", "scope": "user:aditya", "source_kind": "system",
        }),
        "session_start" | "session_end" => json!({"principal": p}),
        "session_append_turn" => json!({"principal": p, "role": "user", "content": "c"}),
        "session_decide" => json!({"principal": p, "turn": "t", "draft": "d"}),
        "ops_erase" => json!({"record_id": "mem_x", "dry_run": true}),
        "ops_expire" | "ops_retention" => json!({"dry_run": true}),
        "ops_snapshot" | "ops_verify" | "ops_flag_reviews" => json!({}),
        "review_resolve" => json!({"action": "confirm"}),
        other => panic!("no valid body for {other}: add one"),
    }
}

/// What a refused request must be answered.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// 422 `validation_failed` naming this field.
    Field(String),
    /// 422 `validation_failed` naming some field (a path inside a malformed document).
    SomeField,
    /// 413 `payload_too_large`.
    TooLarge,
}

/// One refused request.
struct Case {
    name: String,
    operation: usize,
    body: Vec<u8>,
    expect: Expect,
}

/// A value one past a documented limit (`maxLength`, `maxItems`, `maximum`).
fn over_limit(property: &Value) -> Option<Value> {
    if let Some(max) = property["maxLength"].as_u64() {
        return Some(json!("a".repeat(max as usize + 1)));
    }
    if let Some(max) = property["maximum"].as_u64() {
        return Some(json!(max + 1));
    }
    let max = property["maxItems"].as_u64()? as usize;
    // An empty object parses as the item schema (its fields are optional); every string item
    // accepts "semantic" (a type, a tag, an alias, an agent id, a context line).
    let item = if property["items"]["$ref"].is_string() { json!({}) } else { json!("semantic") };
    Some(Value::Array(vec![item; max + 1]))
}

/// `base` with `path` (one or two keys deep) set to `value`.
fn with(base: &Value, path: &[&str], value: Value) -> Vec<u8> {
    let mut body = base.clone();
    match path {
        [top] => body[*top] = value,
        [outer, inner] => body[*outer][*inner] = value,
        _ => unreachable!("one or two keys"),
    }
    body.to_string().into_bytes()
}

fn cases(doc: &Value, ops: &[Operation]) -> Vec<Case> {
    let schemas = &doc["components"]["schemas"];
    let field = |name: &str| Expect::Field(name.to_owned());
    let mut cases = Vec::new();
    let none = serde_json::Map::new();
    for (i, op) in ops.iter().enumerate() {
        let base = valid_body(&op.id);
        // A body without fields (`EmptyBody`) has no properties to push past a limit.
        let properties = schemas[&op.schema]["properties"].as_object().unwrap_or(&none);
        let mut refused: Vec<(String, Vec<u8>, Expect)> = Vec::new();
        // One past every documented limit, top level and in the principal; control
        // characters in the principal's ids and in record ids.
        for (name, property) in properties {
            if let Some(value) = over_limit(property) {
                refused.push((format!("{name} over its limit"), with(&base, &[name], value), field(name)));
            }
            if property["$ref"] == "#/components/schemas/PrincipalDto" {
                for (inner, limit) in schemas["PrincipalDto"]["properties"].as_object().unwrap() {
                    let body = with(&base, &["principal", inner], over_limit(limit).unwrap());
                    refused.push((
                        format!("principal.{inner} over its limit"),
                        body,
                        field(&format!("principal.{inner}")),
                    ));
                }
                for (inner, value) in [("agent_id", "research\u{0}agent"), ("user_id", "adi\u{7}tya")] {
                    let body = with(&base, &["principal", inner], json!(value));
                    refused.push((
                        format!("a control character in principal.{inner}"),
                        body,
                        field(&format!("principal.{inner}")),
                    ));
                }
            }
        }
        for (name, value) in [("id", json!("mem_\u{1}x")), ("ids", json!(["mem_x\u{1b}"]))] {
            if base.get(name).is_some() {
                refused.push((
                    format!("a control character in {name}"),
                    with(&base, &[name], value),
                    field(name),
                ));
            }
        }
        // An unknown field, at the top and holding a nested document; a required field of
        // the wrong type.
        refused.push(("an unknown field".into(), with(&base, &["colour"], json!("red")), field("colour")));
        let nested: Value = serde_json::from_str(&format!("{}{}", "[".repeat(100), "]".repeat(100))).unwrap();
        refused.push(("a nested unknown field".into(), with(&base, &["colour"], nested), field("colour")));
        if let Some(required) = schemas[&op.schema]["required"].as_array().and_then(|r| r[0].as_str()) {
            let wrong = if properties[required]["type"] == "integer" { json!("five") } else { json!(5) };
            refused.push((
                format!("{required} of the wrong type"),
                with(&base, &[required], wrong),
                field(required),
            ));
        }
        // Two bytes that are no UTF-8, just before the last closing quote; 100,000 nested
        // arrays; no JSON at all; one byte over the body limit (1 MiB by default).
        let text = base.to_string().into_bytes();
        let mut invalid = text.clone();
        // (`{}` has no quote: then just before its closing brace.)
        let quote = invalid.iter().rposition(|b| *b == b'"').unwrap_or(invalid.len() - 1);
        invalid.splice(quote..quote, [0xff, 0xfe]);
        refused.push(("invalid UTF-8".into(), invalid, field("body")));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes();
        refused.push(("100,000 nested arrays".into(), deep, Expect::SomeField));
        refused.push(("not JSON".into(), b"principal=aditya".to_vec(), field("body")));
        let mut huge = text;
        huge.resize(1_048_577, b' ');
        refused.push(("one byte over the body limit".into(), huge, Expect::TooLarge));
        cases.extend(refused.into_iter().map(|(name, body, expect)| Case {
            name: format!("{} {name}", op.id),
            operation: i,
            body,
            expect,
        }));
    }
    cases
}

async fn send(
    app: &TestApp,
    op: &Operation,
    host: &str,
    body: Vec<u8>,
    idempotency_key: Option<&str>,
) -> crate::Answer {
    let key = if op.admin { ADMIN_KEY } else { host };
    let mut request = Request::builder()
        .method(op.method.as_str())
        .uri(&op.path)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json");
    if let Some(k) = idempotency_key {
        request = request.header("idempotency-key", k);
    }
    app.send(request.body(Body::from(body)).unwrap()).await
}

#[tokio::test]
async fn every_refused_request_names_its_problem_and_leaves_the_store_byte_for_byte_unchanged() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    let doc = document();
    let ops = operations(&doc);
    let all = cases(&doc, &ops);
    assert!(all.len() > 150, "{} cases", all.len());
    let mut wrong = Vec::new();
    for case in &all {
        let op = &ops[case.operation];
        let keys: &[Option<&str>] = if op.retryable { &[None, Some("bad-input")] } else { &[None] };
        for key in keys {
            let before = store_digest(&app);
            let answer = send(&app, op, &host, case.body.clone(), *key).await;
            let (code, named) = (answer.body["code"].as_str(), answer.body["field"].as_str());
            let held = match &case.expect {
                Expect::Field(f) => {
                    answer.status == StatusCode::UNPROCESSABLE_ENTITY
                        && code == Some("validation_failed")
                        && named == Some(f.as_str())
                }
                Expect::SomeField => {
                    answer.status == StatusCode::UNPROCESSABLE_ENTITY
                        && code == Some("validation_failed")
                        && named.is_some()
                }
                Expect::TooLarge => {
                    answer.status == StatusCode::PAYLOAD_TOO_LARGE && code == Some("payload_too_large")
                }
            };
            if !held {
                wrong.push(format!(
                    "{} (key {key:?}): expected {:?}, got {}",
                    case.name, case.expect, answer.body
                ));
            }
            if store_digest(&app) != before {
                wrong.push(format!("{} (key {key:?}) changed the store", case.name));
            }
        }
    }
    // The digest sees a commit: a valid write changes it.
    let before = store_digest(&app);
    let write = ops.iter().find(|o| o.id == "memory_write").unwrap();
    let written = send(&app, write, &host, valid_body("memory_write").to_string().into_bytes(), None).await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.body);
    assert_ne!(store_digest(&app), before, "a commit must change the digest");
    assert!(wrong.is_empty(), "{} of {} refused wrongly:\n{}", wrong.len(), all.len(), wrong.join("\n"));
}

#[tokio::test]
async fn bodies_at_their_limits_are_accepted() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    let doc = document();
    let ops = operations(&doc);
    let op = |id: &str| ops.iter().find(|o| o.id == id).unwrap();
    let limit = |schema: &str, field: &str| {
        doc["components"]["schemas"][schema]["properties"][field]["maxLength"].as_u64().unwrap() as usize
    };

    // A write whose content and tags are at their limits, in a body padded with whitespace to
    // exactly the body limit.
    let mut write = valid_body("memory_write");
    write["content"] = json!(format!("Aditya {}", "x".repeat(limit("WriteBody", "content") - 7)));
    write["tags"] = json!(
        (0..doc["components"]["schemas"]["WriteBody"]["properties"]["tags"]["maxItems"].as_u64().unwrap())
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
    );
    write["principal"]["user_id"] = json!("aditya");
    let mut body = write.to_string().into_bytes();
    body.resize(1_048_576, b' ');
    let answer = send(&app, op("memory_write"), &host, body, None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);

    // The longest principal ids, query and turn.
    let long_agent = "a".repeat(limit("PrincipalDto", "agent_id"));
    let long_user = "u".repeat(limit("PrincipalDto", "user_id"));
    let any_agent = app.host_key(&[]).await;
    let mut search = valid_body("memory_search");
    search["principal"] = principal(&long_agent, &long_user);
    search["query"] = json!("q".repeat(limit("SearchBody", "query")));
    let answer = send(&app, op("memory_search"), &any_agent, search.to_string().into_bytes(), None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);

    let (_, session) = app
        .call(
            "POST",
            "/v1/sessions",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya")})),
        )
        .await;
    let mut turn = valid_body("session_append_turn");
    turn["content"] = json!("w ".repeat(limit("TurnBody", "content") / 2));
    let turns = Operation {
        path: format!("/v1/sessions/{}/turns", session["id"].as_str().unwrap()),
        ..op("session_append_turn").clone()
    };
    let answer = send(&app, &turns, &host, turn.to_string().into_bytes(), None).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
}
