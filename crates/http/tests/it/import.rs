//! `POST /v1/memory/import`: JSON lines of `memory_write` bodies, each answered for itself and
//! written at most once; and a write's stages in `Server-Timing`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};

use crate::{ADMIN_KEY, Answer, TestApp, app, principal};

async fn import(app: &TestApp, key: &str, body: &str) -> Answer {
    let request = Request::builder()
        .method("POST")
        .uri("/v1/memory/import")
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/x-ndjson")
        .body(Body::from(body.to_owned()))
        .unwrap();
    app.send(request).await
}

fn line(value: &Value) -> String {
    value.to_string()
}

fn note(content: &str) -> Value {
    json!({"principal": principal("importer", "jo"), "type": "semantic", "content": content,
        "scope": "agent:importer/jo", "source_kind": "system"})
}

async fn records(app: &TestApp, scope: &str) -> Vec<Value> {
    let (status, page) =
        app.call("GET", &format!("/v1/admin/records?scope={scope}&limit=200"), Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["records"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_import_answers_every_line_for_itself_and_a_batch_sent_again_writes_nothing_twice() {
    let app = app().await;
    let key = app.host_key(&[]).await;
    let mut with_id = note("The staging database is db-stage-02 in eu-west-1.");
    with_id["import_id"] = json!("crm-1041");
    let mut empty = note("x");
    empty["content"] = json!("");
    let elsewhere = json!({"principal": principal("importer", "jo"), "type": "semantic",
        "content": "Quarterly targets are in the finance share.", "scope": "project:finance", "source_kind": "system"});
    let body = [
        line(&note("Jo prefers answers in bullet points.")),
        line(&with_id),
        String::new(),
        "{not json".to_owned(),
        line(&empty),
        line(&elsewhere),
        line(&json!({"principal": principal("importer", "jo"), "type": "semantic"})),
        line(&note("Jo prefers answers in bullet points.")),
    ]
    .join("\n");
    let first = import(&app, &key, &body).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let items = first.body["items"].as_array().unwrap();
    let outcome = |n: usize| {
        let item = items.iter().find(|i| i["line"] == n).unwrap_or_else(|| panic!("line {n}: {items:?}"));
        (
            item["outcome"].as_str().unwrap().to_owned(),
            item["code"].as_str().map(str::to_owned),
            item["field"].as_str().map(str::to_owned),
        )
    };
    assert_eq!(items.len(), 7, "one item per non-blank line: {items:?}");
    assert_eq!(outcome(1), ("created".into(), None, None));
    assert_eq!(outcome(2), ("created".into(), None, None));
    assert_eq!(outcome(4), ("invalid".into(), Some("validation_failed".into()), Some("body".into())));
    assert_eq!(outcome(5), ("invalid".into(), Some("validation_failed".into()), Some("content".into())));
    assert_eq!(outcome(6), ("rejected".into(), Some("scope_not_writable".into()), None));
    assert_eq!(outcome(7), ("invalid".into(), Some("validation_failed".into()), Some("content".into())));
    // The same line twice in one batch is written once.
    assert_eq!(outcome(8).0, "already_imported");
    assert_eq!(items[6]["record_id"], items[0]["record_id"]);
    assert_eq!(
        first.body["counts"],
        json!({"already_imported": 1, "created": 2, "invalid": 3, "rejected": 1})
    );

    // Imported as memory_write writes: searchable, audited as created.
    let found = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&key),
            Some(json!({"principal": principal("importer", "jo"), "query": "which database is staging?"})),
        )
        .await
        .1;
    assert_eq!(found["results"][0]["record"]["id"], items[1]["record_id"], "{found}");
    let id = items[1]["record_id"].as_str().unwrap();
    let (_, events) = app.call("GET", &format!("/v1/admin/records/{id}/events"), Some(ADMIN_KEY), None).await;
    assert_eq!(events["events"][0]["kind"], "record.created");

    // Sent again (a retried or resumed import): every written line answers already_imported
    // with its record, and nothing is written.
    let before = records(&app, "agent:importer/jo").await.len();
    let again = import(&app, &key, &body).await;
    assert_eq!(again.status, StatusCode::OK);
    let items_again = again.body["items"].as_array().unwrap();
    for n in [0, 1, 6] {
        assert_eq!(items_again[n]["outcome"], "already_imported", "{items_again:?}");
        assert_eq!(items_again[n]["record_id"], items[n]["record_id"]);
    }
    assert_eq!(records(&app, "agent:importer/jo").await.len(), before);
    assert_eq!(before, 2);

    // An id keys its line: the same id with other words is the same item, already imported.
    let mut edited = with_id.clone();
    edited["content"] = json!("The staging database moved to db-stage-03.");
    let third = import(&app, &key, &line(&edited)).await;
    assert_eq!(third.body["items"][0]["outcome"], "already_imported", "{}", third.body);
    // The same item imported into another scope is another item there.
    app.grant("importer", "project:infra", true, true).await;
    let mut elsewhere = with_id.clone();
    elsewhere["scope"] = json!("project:infra");
    let fourth = import(&app, &key, &line(&elsewhere)).await;
    assert_eq!(fourth.body["items"][0]["outcome"], "created", "{}", fourth.body);
}

/// Jo's editor, as a `memory_write` body of `jo` with a current-fact key: each call is a
/// version of the same fact.
fn fact(content: &str, source_kind: &str) -> serde_json::Value {
    json!({"principal": principal("importer", "jo"), "type": "semantic", "content": content,
        "scope": "agent:importer/jo", "source_kind": source_kind,
        "subject": {"name": "Jo", "kind": "person"}, "attribute": "editor"})
}

/// A version that was forgotten is not exported; the version that superseded it is, without
/// the reference, and restores.
#[tokio::test]
async fn an_export_without_a_forgotten_version_restores() {
    let source = app().await;
    let key = source.host_key(&[]).await;
    let jo = principal("importer", "jo");
    let (_, old) = source
        .call("POST", "/v1/memory/write", Some(&key), Some(fact("Jo edits code in Vim.", "tool_result")))
        .await;
    let (_, new) = source
        .call("POST", "/v1/memory/write", Some(&key), Some(fact("Jo edits code in Helix now.", "system")))
        .await;
    assert_eq!(new["outcome"], "superseding", "{new}");
    let forget = json!({"principal": jo, "id": old["record_id"], "reason": "wrong"});
    let (status, _) = source.call("POST", "/v1/memory/forget", Some(&key), Some(forget)).await;
    assert_eq!(status, StatusCode::OK);
    let lines = export(&source, "/users/jo").await;
    let target = app().await;
    let restored = restore(&target, &lines).await;
    assert_eq!(
        (restored.status, restored.body["records"].as_u64()),
        (StatusCode::OK, Some(1)),
        "{}",
        restored.body
    );
    let (_, got) = target
        .call(
            "POST",
            "/v1/memory/get",
            Some(&target.host_key(&[]).await),
            Some(json!({"principal": jo, "ids": [new["record_id"]]})),
        )
        .await;
    assert_eq!(got["records"][0]["record"]["supersedes_id"], Value::Null, "{got}");
}

#[tokio::test]
async fn imported_lines_go_through_the_write_path_in_order_and_keys_limit_the_principals() {
    let app = app().await;
    let key = app.host_key(&["importer"]).await;
    let fact = |content: &str, source: &str| {
        json!({"principal": principal("importer", "jo"), "type": "semantic", "content": content,
            "scope": "agent:importer/jo", "source_kind": source,
            "subject": {"name": "Jo", "kind": "person"}, "attribute": "editor"})
    };
    let other_agent = json!({"principal": principal("someone-else", "jo"), "type": "semantic",
        "content": "Not this agent's to write.", "scope": "agent:someone-else/jo", "source_kind": "system"});
    let body = [
        line(&fact("Jo edits code in Vim.", "tool_result")),
        line(&fact("Jo edits code in Helix now.", "system")),
        line(&other_agent),
    ]
    .join("\n");
    let answer = import(&app, &key, &body).await;
    let items = answer.body["items"].as_array().unwrap();
    assert_eq!(items[0]["outcome"], "created", "{items:?}");
    // The second line sees the first: a higher source rank supersedes it.
    assert_eq!(items[1]["outcome"], "superseding", "{items:?}");
    assert_eq!(
        (items[2]["outcome"].as_str(), items[2]["code"].as_str()),
        (Some("invalid"), Some("forbidden"))
    );
    let current = records(&app, "agent:importer/jo").await;
    let status = |content: &str| {
        current.iter().find(|r| r["content"] == content).map(|r| r["status"].as_str().unwrap().to_owned())
    };
    assert_eq!(status("Jo edits code in Vim.").as_deref(), Some("superseded"));
    assert_eq!(status("Jo edits code in Helix now.").as_deref(), Some("confirmed"));
}

#[tokio::test]
async fn more_lines_than_one_request_takes_are_refused_and_nothing_is_written() {
    let app = app().await;
    let key = app.host_key(&[]).await;
    let body: Vec<String> = (0..1001).map(|n| line(&note(&format!("Import note number {n}.")))).collect();
    let answer = import(&app, &key, &body.join("\n")).await;
    assert_eq!(
        (answer.status, answer.body["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    assert!(records(&app, "agent:importer/jo").await.is_empty());
}

#[tokio::test]
async fn a_write_answers_where_its_time_went() {
    let app = app().await;
    let key = app.host_key(&[]).await;
    let body = note("The deploy key rotates every ninety days. Rotation runs from the vault job.");
    let answer = app.call_with("POST", "/v1/memory/write", Some(&key), &[], Some(body)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let timing = answer.headers["server-timing"].to_str().unwrap().to_owned();
    let names: Vec<&str> = timing.split(", ").map(|p| p.split(';').next().unwrap()).collect();
    assert_eq!(
        names,
        ["access", "evidence", "entities", "embed", "current_fact", "commit", "index", "sentences"]
    );
    assert!(timing.contains("embed;dur=") && timing.contains("desc=\"1 texts\""), "{timing}");
    assert!(timing.contains("sentences;desc=\"2 after the answer\""), "{timing}");
    let embed: f64 = timing
        .split(", ")
        .find(|p| p.starts_with("embed;"))
        .and_then(|p| p.split("dur=").nth(1))
        .and_then(|d| d.split(';').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(embed > 0.0, "the model ran: {timing}");
}

async fn export(app: &TestApp, query: &str) -> String {
    let answer = app.call_with("GET", &format!("/v1/admin/export{query}"), Some(ADMIN_KEY), &[], None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.headers["content-type"], "application/x-ndjson");
    answer.body.as_str().unwrap().to_owned()
}

async fn restore(app: &TestApp, lines: &str) -> Answer {
    let request = Request::builder()
        .method("POST")
        .uri("/v1/admin/import")
        .header("authorization", format!("Bearer {ADMIN_KEY}"))
        .header("content-type", "application/x-ndjson")
        .body(Body::from(lines.to_owned()))
        .unwrap();
    app.send(request).await
}

async fn search_ids(app: &TestApp, key: &str, query: &str) -> Vec<(String, String)> {
    let body = json!({"principal": principal("importer", "jo"), "query": query, "include_history": true, "include_conflicts": true});
    let (status, found) = app.call("POST", "/v1/memory/search", Some(key), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["record"]["id"].as_str().unwrap().to_owned(),
                r["record"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A user's memories exported and restored into an empty store come back as they were:
/// history (a superseded fact, a provisional one in conflict), entities with their aliases,
/// turn records with speaker and context; and the same searches find the same records in
/// the same order. Restoring again changes nothing; a bad line restores nothing.
#[tokio::test]
async fn an_export_restored_into_an_empty_store_answers_the_same_searches() {
    let source = app().await;
    let key = source.host_key(&[]).await;
    let jo = principal("importer", "jo");
    for body in [
        fact("Jo edits code in Vim.", "tool_result"),
        fact("Jo edits code in Helix now.", "system"),
        fact("Jo edits code in Emacs.", "agent_inference"),
        note("The staging database is db-stage-02 in eu-west-1. Backups run nightly at 02:00 UTC."),
        note("Deploys need two approvals from the platform team."),
    ] {
        let (status, answer) = source.call("POST", "/v1/memory/write", Some(&key), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    // A conversation kept as turn memory, and an alias for Jo.
    let (_, session) = source.call("POST", "/v1/sessions", Some(&key), Some(json!({"principal": jo}))).await;
    let sid = session["id"].as_str().unwrap();
    for (role, content) in
        [("user", "My cat Biscuit is allergic to chicken."), ("assistant", "Noted: no chicken for Biscuit.")]
    {
        let (status, turn) = source
            .call(
                "POST",
                &format!("/v1/sessions/{sid}/turns"),
                Some(&key),
                Some(json!({"principal": jo, "role": role, "content": content})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{turn}");
    }
    let (_, page) = source.call("GET", "/v1/admin/records?q=Helix", Some(ADMIN_KEY), None).await;
    let subject = page["records"][0]["subject_entity_id"].as_str().unwrap().to_owned();
    let (status, _) = source
        .call(
            "POST",
            &format!("/v1/admin/entities/{subject}/aliases"),
            Some(ADMIN_KEY),
            Some(json!({"alias": "Jojo"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let lines = export(&source, "/users/jo").await;
    let items: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(items[0]["item"], "export");
    assert_eq!(items[0]["records"], 7, "{lines}");
    let statuses: Vec<&str> =
        items.iter().filter(|i| i["item"] == "record").map(|i| i["status"].as_str().unwrap()).collect();
    assert!(statuses.contains(&"superseded") && statuses.contains(&"provisional"), "{statuses:?}");
    assert!(items.iter().any(|i| i["item"] == "entity" && i["aliases"] == json!(["Jojo"])), "{lines}");
    assert!(items.iter().any(|i| i["item"] == "conflict"), "{lines}");
    assert!(!lines.contains("\"vector\""), "no embeddings");

    // Into an empty store: the same records, the same answers.
    let target = app().await;
    let target_key = target.host_key(&[]).await;
    let restored = restore(&target, &lines).await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.body);
    assert_eq!(restored.body, json!({"records": 7, "entities": 2, "conflicts": 1, "already_present": 0}));
    for query in [
        "what editor does Jo use?",
        "where is the staging database?",
        "what is Biscuit allergic to?",
        "Jojo",
        "deploy approvals",
    ] {
        assert_eq!(
            search_ids(&source, &key, query).await,
            search_ids(&target, &target_key, query).await,
            "{query}"
        );
    }
    // Past the header line, which says when each export was made.
    assert_eq!(
        export(&target, "/users/jo").await.lines().skip(1).collect::<Vec<_>>(),
        lines.lines().skip(1).collect::<Vec<_>>()
    );

    // Again: nothing changes.
    let again = restore(&target, &lines).await;
    assert_eq!(again.body, json!({"records": 0, "entities": 0, "conflicts": 0, "already_present": 9}));

    // A bad line restores nothing and names its line.
    let empty = app().await;
    let broken = lines.replacen("\"status\":\"confirmed\"", "\"status\":\"sort-of\"", 1);
    let refused = restore(&empty, &broken).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(refused.body["detail"].as_str().unwrap().starts_with("line "), "{}", refused.body);
    assert_eq!(refused.body["field"], "status");
    assert_eq!(export(&empty, "/users/jo").await.lines().count(), 1, "only the header");
}
