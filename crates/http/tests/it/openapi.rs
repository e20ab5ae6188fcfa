//! The checked-in OpenAPI document matches the code and is a valid 3.1 document in which
//! every operation documents a 4xx response.

use serde_json::Value;

use crate::{ADMIN_KEY, app};

fn checked_in() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json"))
        .expect("docs/openapi.json exists (cargo xtask openapi writes it)");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn docs_openapi_json_matches_the_code() {
    let generated: Value = serde_json::from_str(&retold_http::openapi_json()).unwrap();
    assert!(generated == checked_in(), "docs/openapi.json is stale: run `cargo xtask openapi` and commit it");
}

#[test]
fn the_document_is_openapi_3_1_with_a_4xx_for_every_operation() {
    let doc = checked_in();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1."), "{}", doc["openapi"]);
    let mut operation_ids = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            assert!(responses.keys().any(|code| code.starts_with('4')), "{method} {path} documents no 4xx");
            operation_ids.push(operation["operationId"].as_str().unwrap().to_owned());
        }
    }
    for tool in ["memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"] {
        assert!(operation_ids.iter().any(|id| id == tool), "{tool} missing");
    }
    // Request bodies are documented field by field.
    let write = &doc["components"]["schemas"]["WriteBody"]["properties"];
    assert!(write["content"]["maxLength"].is_number(), "{write}");
    assert!(write["source_kind"]["description"].is_string());
}

#[tokio::test]
async fn the_service_serves_the_document_and_an_offline_docs_page() {
    let app = app().await;
    let (status, body) = app.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, axum::http::StatusCode::OK);
    assert_eq!(body, checked_in());
    let (status, page) = app.call("GET", "/docs/", Some(ADMIN_KEY), None).await;
    assert_eq!(status, axum::http::StatusCode::OK);
    let page = page.as_str().unwrap();
    assert!(
        page.contains("swagger-ui") && !page.contains("https://"),
        "the page loads nothing from the internet"
    );
}

/// Every operation of the document: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            all.push((method.clone(), path.clone(), operation.clone()));
        }
    }
    all
}

#[test]
fn every_error_is_documented_as_problem_json_and_every_body_can_be_refused() {
    let doc = checked_in();
    let mut wrong = Vec::new();
    for (method, path, operation) in operations(&doc) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            if status.starts_with('2') {
                continue;
            }
            let types: Vec<&String> =
                response["content"].as_object().map(|c| c.keys().collect()).unwrap_or_default();
            if types != ["application/problem+json"] {
                wrong.push(format!("{method} {path} {status}: {types:?}"));
            }
        }
        if operation.get("requestBody").is_some() {
            // A body can be malformed or of the wrong type (422) and larger than the limit (413).
            for status in ["413", "422"] {
                if operation["responses"].get(status).is_none() {
                    wrong.push(format!("{method} {path} takes a body but documents no {status}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Fill `{id}` path parameters with a plausible id.
fn concrete(path: &str) -> String {
    path.replace("{id}", "x_1")
}

#[tokio::test]
async fn a_body_without_a_json_content_type_is_answered_with_a_documented_status() {
    let app = app().await;
    let host = app.host_key(&[]).await;
    let doc = checked_in();
    let mut undocumented = Vec::new();
    for (method, path, operation) in operations(&doc) {
        if operation.get("requestBody").is_none() {
            continue;
        }
        let admin = operation["tags"][0] == "admin" || operation["tags"][0] == "operations";
        let key = if admin { ADMIN_KEY } else { host.as_str() };
        let request = axum::http::Request::builder()
            .method(method.to_uppercase().as_str())
            .uri(concrete(&path))
            .header("authorization", format!("Bearer {key}"))
            .body(axum::body::Body::from(r#"{"principal": {"agent_id": "a", "user_id": "u"}}"#))
            .unwrap();
        let answer = app.send(request).await;
        assert_eq!(answer.body["field"], "content-type", "{method} {path}: {}", answer.body);
        if operation["responses"].get(answer.status.as_str()).is_none() {
            undocumented.push(format!("{method} {path} answered {}", answer.status));
        }
    }
    assert!(undocumented.is_empty(), "{undocumented:#?}");
}

#[tokio::test]
async fn a_malformed_query_string_is_a_documented_problem() {
    let app = app().await;
    let doc = checked_in();
    let answer = app.call_with("GET", "/v1/admin/grants", Some(ADMIN_KEY), &[], None).await;
    assert_eq!(answer.body["field"], "agent_id", "{}", answer.body);
    let documented = &doc["paths"]["/v1/admin/grants"]["get"]["responses"];
    assert!(documented.get(answer.status.as_str()).is_some(), "{} is not documented", answer.status);
}

#[test]
fn every_operation_documents_the_server_faults_it_can_answer() {
    let doc = checked_in();
    for (method, path, operation) in operations(&doc) {
        for status in ["500", "503", "507"] {
            let content = &operation["responses"][status]["content"];
            assert!(
                content["application/problem+json"]["schema"]["$ref"] == "#/components/schemas/Problem",
                "{method} {path} does not document {status} as a problem: {content}"
            );
        }
    }
}

#[tokio::test]
async fn answers_made_by_layers_are_problems_too() {
    // A method the path does not take: 405 with its Allow header, as a problem document
    // (`send` checks the content type of every error).
    let app = app().await;
    let answer = app.call_with("GET", "/v1/memory/search", Some(ADMIN_KEY), &[], None).await;
    assert_eq!(answer.status, axum::http::StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.body["code"], "method_not_allowed", "{}", answer.body);
    assert_eq!(answer.headers["allow"], "POST");

    // The request timeout: a search cannot embed its query within 1 ms. The key is made
    // through a router with the normal timeout over the same state.
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::settings(dir.path(), &[]);
    let retold_http::Built { state, store, .. } =
        retold_http::build(&settings, crate::embedder(&settings)).await.unwrap();
    let over = |router, dir| crate::TestApp {
        ingestor: state.services.ingestor.clone(),
        settle: std::sync::atomic::AtomicBool::new(true),
        router,
        built_store: (*store).clone(),
        tasks: state.services.sessions.tasks().clone(),
        _dir: dir,
    };
    let patient = over(retold_http::app(state.clone(), &settings.server), dir);
    let key = patient.host_key(&[]).await;
    // With nothing eligible a search answers at once; one record makes it embed the query.
    let write = serde_json::json!({"principal": crate::principal("a", "u"), "type": "semantic",
        "content": "The deploy runbook lives in the wiki.", "scope": "agent:a/u", "source_kind": "system"});
    let (status, body) = patient.call("POST", "/v1/memory/write", Some(&key), Some(write)).await;
    assert_eq!(status, axum::http::StatusCode::OK, "{body}");
    settings.server.request_timeout_ms = 1;
    let hasty = over(retold_http::app(state.clone(), &settings.server), tempfile::tempdir().unwrap());
    let search =
        serde_json::json!({"principal": crate::principal("a", "u"), "query": "what is the deploy runbook?"});
    let answer = hasty.call_with("POST", "/v1/memory/search", Some(&key), &[], Some(search)).await;
    assert_eq!(answer.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.body["code"], "timeout", "{}", answer.body);
    // Operations run to the end whatever the timeout: one cut off halfway (an erasure
    // between its scrub and its compaction) would leave work undone behind a 503.
    let check = hasty
        .call_with("POST", "/v1/admin/ops/verify", Some(ADMIN_KEY), &[], Some(serde_json::json!({})))
        .await;
    assert_eq!(check.status, axum::http::StatusCode::OK, "{}", check.body);
    assert_eq!(check.body["ok"], true, "{}", check.body);
}

/// Strings around every rule's edges, plus random ones over a mixed alphabet.
fn corpus() -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        " ",
        "a",
        "A9",
        "a.b@c+d-e_f",
        "é",
        "名前",
        "a/b",
        "a:b",
        "a b",
        "a,b",
        "a\tb",
        "a\u{0}b",
        "a\u{7f}",
        "a\u{85}b",
        "\u{a0}",
        "mem_",
        "mem_01ABC",
        "mem_a-b",
        "ent_x",
        "ent_",
        "sess_1",
        "sess_a.b",
        "user:u",
        "user:u/v",
        "agent:a/u",
        "agent:a/u/v",
        "agent:a/",
        "project:p q",
        "org:",
        "team:x",
        "explanation_style",
        "9lives",
        "Upper",
        "tag-1",
        "x\n",
        " padded ",
        "tool:gh",
        "session:sess_1<turn:2>",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.push("a".repeat(128));
    out.push("a".repeat(129));
    out.push(format!("mem_{}", "a".repeat(124)));
    out.push(format!("mem_{}", "a".repeat(125)));
    out.push(format!("agent:{}/{}", "a".repeat(128), "u".repeat(128)));
    out.push(format!("user:{}", "u".repeat(129)));
    let alphabet: Vec<char> = "ab_Z09.@+-/: ,\t\u{0}\u{1f}\u{7f}\u{9f}é".chars().collect();
    let prefixes = ["", "mem_", "ent_", "sess_", "user:", "agent:", "project:", "org:", "a"];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..3000 {
        let mut s = prefixes[i % prefixes.len()].to_owned();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for k in 0..(state % 9) {
            s.push(alphabet[((state >> (k * 5)) % alphabet.len() as u64) as usize]);
        }
        out.push(s);
    }
    out
}

#[test]
fn the_documents_patterns_accept_exactly_what_the_domain_accepts() {
    use retold_domain as d;
    use retold_http::rules;
    type Accepts = fn(&str) -> bool;
    // (rule, pattern, what the domain accepts); the schemas' maxLength applies beside the
    // pattern (200 characters for names).
    let checks: [(&str, &str, Accepts); 13] = [
        ("TOKEN", rules::TOKEN, |s| d::AgentId::new(s).is_ok()),
        ("TOKEN (users)", rules::TOKEN, |s| d::UserId::new(s).is_ok()),
        ("RECORD_ID", rules::RECORD_ID, |s| d::RecordId::new(s).is_ok()),
        ("ENTITY_ID", rules::ENTITY_ID, |s| d::EntityId::new(s).is_ok()),
        ("SESSION_ID", rules::SESSION_ID, |s| d::SessionId::new(s).is_ok()),
        ("SCOPE", rules::SCOPE, |s| d::Scope::parse(s).is_ok()),
        ("GRANT_SCOPE", rules::GRANT_SCOPE, |s| d::Scope::parse(s).is_ok_and(|s| !s.is_private())),
        ("TEXT", rules::TEXT, |s| d::Content::new(s).is_ok()),
        ("TEXT (evidence)", rules::TEXT, |s| d::Evidence::new(s).is_ok()),
        ("NAME", rules::NAME, |s| d::Name::new(s).is_ok()),
        ("ATTRIBUTE", rules::ATTRIBUTE, |s| d::Attribute::new(s).is_ok()),
        ("TAG", rules::TAG, |s| d::Tag::new(s).is_ok()),
        ("SOURCE_REF", rules::SOURCE_REF, |s| d::SourceRef::new(s).is_ok()),
    ];
    let corpus = corpus();
    let mut disagreements = Vec::new();
    for (name, pattern, accepts) in checks {
        let regex = regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{name}: {e}"));
        for s in &corpus {
            if name == "NAME" && s.chars().count() > 200 {
                continue;
            }
            if regex.is_match(s) != accepts(s) {
                disagreements.push(format!(
                    "{name}: {s:?} pattern {} domain {}",
                    regex.is_match(s),
                    accepts(s)
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(20)]
    );

    let enums: [(&[&str], Vec<&str>); 4] = [
        (rules::MEMORY_TYPES, d::MemoryType::ALL.iter().map(|t| t.as_str()).collect()),
        (rules::SOURCE_KINDS, d::SourceKind::ALL.iter().map(|t| t.as_str()).collect()),
        (rules::ENTITY_KINDS, d::EntityKind::ALL.iter().map(|t| t.as_str()).collect()),
        (
            rules::ROLES,
            ["user", "assistant", "tool"].into_iter().filter(|r| d::TurnRole::parse(r).is_ok()).collect(),
        ),
    ];
    for (documented, domain) in enums {
        assert_eq!(documented, domain.as_slice());
    }
    assert!(d::TurnRole::parse("system").is_err(), "a new turn role must be added to rules::ROLES");
}
