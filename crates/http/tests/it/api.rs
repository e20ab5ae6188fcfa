//! Every endpoint's success path and every error code, through `oneshot`.

use axum::http::StatusCode;
use serde_json::json;

use crate::{ADMIN_KEY, app, principal};

fn write_body(content: &str, scope: &str) -> serde_json::Value {
    json!({
        "principal": principal("research-agent", "aditya"),
        "type": "semantic",
        "content": content,
        "scope": scope,
        "subject": {"name": "Aditya", "kind": "person"},
        "attribute": "explanation_style",
        "source_kind": "system",
    })
}

#[tokio::test]
async fn health_needs_no_key_and_everything_else_does() {
    let app = app().await;
    let (status, body) = app.call("GET", "/health", None, None).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, Some("ok")));
    let (status, body) = app.call("GET", "/ready", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
    let (status, body) = app.call("GET", "/ready", Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["model"], "sentence-transformers/all-MiniLM-L6-v2");
    let (status, body) = app.call("GET", "/nowhere", Some(ADMIN_KEY), None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
}

#[tokio::test]
async fn keys_decide_what_a_caller_may_do() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    let search = json!({"principal": principal("research-agent", "aditya"), "query": "anything"});
    // No key, a wrong key, a malformed header.
    for key in [None, Some("not-a-key")] {
        let (status, body) = app.call("POST", "/v1/memory/search", key, Some(search.clone())).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("unauthorized")),
            "{key:?}"
        );
    }
    // A host key on an admin endpoint.
    let (status, body) = app
        .call(
            "POST",
            "/v1/admin/grants",
            Some(&host),
            Some(json!({"agent_id": "x", "scope": "org:o", "can_read": true, "can_write": false})),
        )
        .await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
    // A host key asserting an agent it is not allowed.
    let mut other = search.clone();
    other["principal"] = principal("other-agent", "aditya");
    let (status, body) = app.call("POST", "/v1/memory/search", Some(&host), Some(other)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
    // The admin key does not call tools.
    let (status, body) = app.call("POST", "/v1/memory/search", Some(ADMIN_KEY), Some(search.clone())).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
    // The right key and agent.
    let (status, body) = app.call("POST", "/v1/memory/search", Some(&host), Some(search)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // An unrestricted host key may assert any agent.
    let any = app.host_key(&[]).await;
    let (status, _) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&any),
            Some(json!({"principal": principal("whoever", "u"), "query": "q"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_tools_work_end_to_end() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "user:aditya", true, true).await;

    // Sessions: start, two turns, end.
    let (status, session) = app
        .call(
            "POST",
            "/v1/sessions",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    let sid = session["id"].as_str().unwrap().to_owned();
    let (status, turn) = app
        .call(
            "POST",
            &format!("/v1/sessions/{sid}/turns"),
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "role": "user", "content": "Keep answers concise."})),
        )
        .await;
    assert_eq!((status, turn["turn"].as_u64()), (StatusCode::CREATED, Some(1)), "{turn}");
    let source_ref = turn["source_ref"].as_str().unwrap().to_owned();

    // Write with evidence from that turn.
    let mut body = write_body("Aditya prefers concise technical explanations.", "user:aditya");
    body["source_kind"] = json!("user_statement");
    body["source_ref"] = json!(source_ref);
    body["evidence"] = json!("Keep answers concise.");
    let (status, written) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
    assert_eq!((status, written["outcome"].as_str()), (StatusCode::OK, Some("created")), "{written}");
    let id = written["record_id"].as_str().unwrap().to_owned();

    // Search and read the explanation.
    let (status, found) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "query": "what kind of explanations does Aditya prefer"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["results"][0]["record"]["id"], id.as_str(), "{found:#}");
    let explanation = found["results"][0]["explanation"].as_str().unwrap();
    assert!(explanation.starts_with("matched: ") && explanation.contains("fused rank: 1"), "{explanation}");
    let search_id = found["search_id"].as_str().unwrap().to_owned();

    // The trace and the audit history.
    let (status, trace) =
        app.call("GET", &format!("/v1/admin/search-log/{search_id}"), Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(trace["results"][0]["record_id"], id.as_str());
    let (status, events) =
        app.call("GET", &format!("/v1/admin/records/{id}/events"), Some(ADMIN_KEY), None).await;
    assert_eq!((status, events["events"][0]["kind"].as_str()), (StatusCode::OK, Some("record.created")));
    assert_eq!(events["events"][0]["details"]["evidence_check"], "passed");

    // memory_get.
    let (status, got) = app
        .call(
            "POST",
            "/v1/memory/get",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "ids": [id]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        got["records"][0]["record"]["subject"].as_str().unwrap().split('/').nth(1),
        Some("explanation_style")
    );
    assert_eq!(got["records"][0]["links"][0]["role"], "about");

    // A lower-rank contradiction: conflicting; then confirm it with revise; then forget it.
    let mut guess = write_body("Aditya prefers detailed architecture explanations.", "user:aditya");
    guess["source_kind"] = json!("agent_inference");
    let (status, conflicting) = app.call("POST", "/v1/memory/write", Some(&host), Some(guess)).await;
    assert_eq!(
        (status, conflicting["outcome"].as_str()),
        (StatusCode::OK, Some("conflicting")),
        "{conflicting}"
    );
    assert_eq!(conflicting["conflicts_with"], id.as_str());
    let guess_id = conflicting["record_id"].as_str().unwrap().to_owned();
    let revise =
        json!({"principal": principal("research-agent", "aditya"), "action": "confirm", "id": guess_id});
    let (status, revised) = app.call("POST", "/v1/memory/revise", Some(&host), Some(revise)).await;
    assert_eq!((status, revised["to_status"].as_str()), (StatusCode::OK, Some("confirmed")), "{revised}");
    let forget =
        json!({"principal": principal("research-agent", "aditya"), "id": guess_id, "reason": "user asked"});
    let (status, forgotten) = app.call("POST", "/v1/memory/forget", Some(&host), Some(forget.clone())).await;
    assert_eq!((status, forgotten["to_status"].as_str()), (StatusCode::OK, Some("deleted")), "{forgotten}");
    // conflict: forgetting twice is an illegal transition.
    let (status, body) = app.call("POST", "/v1/memory/forget", Some(&host), Some(forget)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")), "{body}");

    let end = json!({"principal": principal("research-agent", "aditya")});
    let (status, _) =
        app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end.clone())).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
}

#[tokio::test]
async fn admin_endpoints_manage_grants_and_entities() {
    let app = app().await;
    let grant = app.grant("implementation-agent", "project:agentic-memory-system", true, false).await;
    let (status, list) =
        app.call("GET", "/v1/admin/grants?agent_id=implementation-agent", Some(ADMIN_KEY), None).await;
    assert_eq!((status, list["grants"].as_array().unwrap().len()), (StatusCode::OK, 1));
    let gid = grant["id"].as_str().unwrap();
    let (status, _) = app.call("DELETE", &format!("/v1/admin/grants/{gid}"), Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.call("DELETE", &format!("/v1/admin/grants/{gid}"), Some(ADMIN_KEY), None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
    // Private-scope grants are refused.
    let (status, body) = app
        .call(
            "POST",
            "/v1/admin/grants",
            Some(ADMIN_KEY),
            Some(json!({"agent_id": "a", "scope": "agent:a/u", "can_read": true, "can_write": true})),
        )
        .await;
    assert_eq!(
        (status, body["code"].as_str(), body["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed"), Some("scope"))
    );

    let entity = json!({"kind": "project", "canonical_name": "agentic-memory-system", "scope": "project:p", "aliases": ["memory system"]});
    let (status, created) = app.call("POST", "/v1/admin/entities", Some(ADMIN_KEY), Some(entity)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let eid = created["id"].as_str().unwrap().to_owned();
    let (status, aliased) = app
        .call(
            "POST",
            &format!("/v1/admin/entities/{eid}/aliases"),
            Some(ADMIN_KEY),
            Some(json!({"alias": "agent-memory-system"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(aliased["aliases"].as_array().unwrap().len(), 2);
    let other = json!({"kind": "project", "canonical_name": "AMS", "scope": "project:p"});
    let (_, other) = app.call("POST", "/v1/admin/entities", Some(ADMIN_KEY), Some(other)).await;
    let (status, merged) = app
        .call(
            "POST",
            "/v1/admin/entities/merge",
            Some(ADMIN_KEY),
            Some(json!({"from": other["id"], "into": eid})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert!(merged["aliases"].as_array().unwrap().iter().any(|a| a == "AMS"));
}

#[tokio::test]
async fn every_error_code_has_its_status_and_shape() {
    let app = app().await;
    let host = app.host_key(&[]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    app.grant("research-agent", "project:p", true, false).await;

    // scope_not_writable.
    let (status, body) =
        app.call("POST", "/v1/memory/write", Some(&host), Some(write_body("x y z", "project:p"))).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("scope_not_writable")),
        "{body}"
    );

    // entity_ambiguous: two entities of one name in readable scopes.
    for scope in ["user:aditya", "project:p"] {
        let entity = json!({"kind": "person", "canonical_name": "Sam", "scope": scope});
        app.call("POST", "/v1/admin/entities", Some(ADMIN_KEY), Some(entity)).await;
    }
    let mut ambiguous = write_body("Sam likes tea.", "user:aditya");
    ambiguous["subject"] = json!({"name": "sam", "kind": "person"});
    let (status, body) = app.call("POST", "/v1/memory/write", Some(&host), Some(ambiguous)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("entity_ambiguous")), "{body}");
    assert_eq!(body["candidates"].as_array().unwrap().len(), 2);

    // validation_failed naming the field: a bad scope, an unknown field, a bad type, an empty query.
    let cases = [
        (write_body("x", "team:x"), "scope"),
        (
            {
                let mut b = write_body("x", "user:aditya");
                b["colour"] = json!("red");
                b
            },
            "colour",
        ),
        (
            {
                let mut b = write_body("x", "user:aditya");
                b["type"] = json!("factual");
                b
            },
            "type",
        ),
        (
            {
                let mut b = write_body("x", "user:aditya");
                b["principal"]["agent_id"] = json!("a/b");
                b
            },
            "principal.agent_id",
        ),
    ];
    for (body, field) in cases {
        let (status, problem) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed")),
            "{problem}"
        );
        assert_eq!(problem["field"], field, "{problem}");
    }
    let (status, problem) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": principal("a", "u"), "query": ""})),
        )
        .await;
    assert_eq!(
        (status, problem["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("query")),
        "{problem}"
    );
    // A closed set refuses what it does not hold, naming the field; so does a missing field
    // inside a nested object.
    let revise_cases = [
        (json!({"principal": principal("a", "u"), "action": "bogus", "id": "mem_x"}), "action"),
        (json!({"principal": {"agent_id": "a"}, "action": "confirm", "id": "mem_x"}), "principal.user_id"),
    ];
    for (body, field) in revise_cases {
        let (status, problem) = app.call("POST", "/v1/memory/revise", Some(&host), Some(body)).await;
        assert_eq!(
            (status, problem["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{problem}"
        );
    }

    // not_found, and an unreadable record answers exactly like a missing one.
    let (_, written) = app
        .call(
            "POST",
            "/v1/memory/write",
            Some(&host),
            Some(write_body("Aditya likes short answers.", "user:aditya")),
        )
        .await;
    let id = written["record_id"].as_str().unwrap();
    let get = |who: &str, id: &str| json!({"principal": principal(who, "aditya"), "ids": [id]});
    let (s1, missing) = app
        .call(
            "POST",
            "/v1/memory/get",
            Some(&host),
            Some(get("research-agent", "mem_00000000000000000000000000")),
        )
        .await;
    let (s2, hidden) = app.call("POST", "/v1/memory/get", Some(&host), Some(get("stranger", id))).await;
    assert_eq!((s1, s2), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    assert_eq!((missing["code"].as_str(), hidden["code"].as_str()), (Some("not_found"), Some("not_found")));
    assert_eq!(missing["title"], hidden["title"]);

    // payload_too_large.
    let big = write_body(&"x".repeat(2_000_000), "user:aditya");
    let (status, body) = app.call("POST", "/v1/memory/write", Some(&host), Some(big)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large")));

    // internal: the database goes away; the client learns nothing about why.
    app.built_store.clone().close().await.unwrap();
    let (status, body) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "query": "q"})),
        )
        .await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")));
    assert_eq!(body["detail"], "the request could not be completed");
}

#[tokio::test]
async fn every_admin_read_needs_the_admin_key() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    let document: serde_json::Value = serde_json::from_str(&retold_http::openapi_json()).unwrap();
    let mut checked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        if !path.starts_with("/v1/admin/") || item.get("get").is_none() {
            continue;
        }
        let concrete = path.replace("{id}", "mem_0001");
        for (key, expected) in
            [(None, StatusCode::UNAUTHORIZED), (Some(host.as_str()), StatusCode::FORBIDDEN)]
        {
            let (status, body) = app.call("GET", &concrete, key, None).await;
            assert_eq!(status, expected, "GET {concrete} with {key:?}: {body}");
        }
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} admin GET endpoints in the document");
}

#[tokio::test]
async fn a_write_with_context_keeps_it_for_memory_get_and_leaves_it_out_of_search_results() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "project:context", true, true).await;
    let context = "Caroline: Did you ever sign up for that pottery class you told me about?";
    let body = json!({
        "principal": principal("research-agent", "aditya"),
        "type": "episodic",
        "content": "Melanie: Yes! Yesterday, actually. The first session is on Friday.",
        "scope": "project:context",
        "source_kind": "system",
        "context": context,
    });
    let (status, written) = app.call("POST", "/v1/memory/write", Some(&host), Some(body.clone())).await;
    assert_eq!((status, written["outcome"].as_str()), (StatusCode::OK, Some("created")), "{written}");
    let id = written["record_id"].as_str().unwrap().to_owned();

    let (status, got) = app
        .call(
            "POST",
            "/v1/memory/get",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "ids": [id]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got["records"][0]["context"], context);

    let (status, found) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "query": "Is Melanie taking pottery lessons?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["results"][0]["record"]["id"], id.as_str(), "{found:#}");
    assert!(
        !found.to_string().contains("pottery class you told me"),
        "search results leave the context out: {found}"
    );

    // Too long, or blank: refused with the field named, nothing stored.
    for bad in [json!("x".repeat(2_001)), json!("   ")] {
        let mut body = body.clone();
        body["context"] = bad;
        body["content"] = json!("Melanie: a different turn that must not be stored.");
        let (status, refused) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
        assert_eq!(
            (status, refused["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed")),
            "{refused}"
        );
        assert_eq!(refused["field"], "context", "{refused}");
    }
    let (_, found) = app
        .call(
            "POST",
            "/v1/memory/search",
            Some(&host),
            Some(json!({"principal": principal("research-agent", "aditya"), "query": "a different turn that must not be stored"})),
        )
        .await;
    assert!(!found.to_string().contains("must not be stored"), "{found}");
}

#[tokio::test]
async fn a_search_token_budget_cuts_its_results_and_a_bad_one_is_refused() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    // Three facts without a subject and attribute, so none supersedes another.
    for content in [
        "Aditya's laptop runs Linux.",
        "Aditya's laptop is a ThinkPad.",
        "Aditya's laptop has 32 GB of memory.",
    ] {
        let mut body = write_body(content, "user:aditya");
        let fields = body.as_object_mut().unwrap();
        fields.remove("subject");
        fields.remove("attribute");
        let (status, written) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
        assert_eq!((status, written["outcome"].as_str()), (StatusCode::OK, Some("created")), "{written}");
    }
    let search = |budget: Option<serde_json::Value>| {
        let mut body = json!({"principal": principal("research-agent", "aditya"), "query": "Aditya laptop"});
        if let Some(budget) = budget {
            body["token_budget"] = budget;
        }
        body
    };
    let (status, all) = app.call("POST", "/v1/memory/search", Some(&host), Some(search(None))).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["results"].as_array().unwrap().len(), 3, "{all}");
    // Whole records only, and always the first: a one-token budget returns exactly it.
    let (status, cut) =
        app.call("POST", "/v1/memory/search", Some(&host), Some(search(Some(json!(1))))).await;
    assert_eq!(status, StatusCode::OK, "{cut}");
    assert_eq!(cut["results"].as_array().unwrap().len(), 1, "{cut}");
    assert_eq!(cut["results"][0]["record"]["id"], all["results"][0]["record"]["id"]);
    for bad in [json!(0), json!(1.5), json!(1_000_001), json!("many")] {
        let (status, problem) =
            app.call("POST", "/v1/memory/search", Some(&host), Some(search(Some(bad.clone())))).await;
        assert_eq!(
            (status, problem["code"].as_str(), problem["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("validation_failed"), Some("token_budget")),
            "{bad}: {problem}"
        );
    }
}

#[tokio::test]
async fn a_long_record_shows_the_passage_that_matched_and_the_budget_counts_only_that() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "user:aditya", true, true).await;
    // A long turn (about 280 tokens) with one sentence about the query.
    let filler = "We talked about the weather, the trains and what to cook this week at some length. ";
    let content = format!(
        "{}By the way, the staging database password rotates every Tuesday at noon. {}",
        filler.repeat(6),
        filler.repeat(6)
    );
    let mut body = write_body(&content, "user:aditya");
    let fields = body.as_object_mut().unwrap();
    fields.remove("subject");
    fields.remove("attribute");
    let (status, written) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
    assert_eq!((status, written["outcome"].as_str()), (StatusCode::OK, Some("created")), "{written}");
    let search = json!({"principal": principal("research-agent", "aditya"),
        "query": "When does the staging database password rotate?"});
    let (status, found) = app.call("POST", "/v1/memory/search", Some(&host), Some(search.clone())).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let hit = &found["results"][0];
    let passage = hit["passage"]["text"].as_str().unwrap_or_else(|| panic!("a passage: {hit}"));
    assert!(passage.contains("password rotates every Tuesday at noon"), "{passage}");
    assert!(passage.starts_with('…') && passage.ends_with('…'), "{passage}");
    assert!(passage.chars().count() <= 100 * 4 + 2, "at most passage_tokens: {passage}");
    let (start, end) = (
        hit["passage"]["start"].as_u64().unwrap() as usize,
        hit["passage"]["end"].as_u64().unwrap() as usize,
    );
    let located: String = content.chars().collect::<Vec<char>>()[start..end].iter().collect();
    assert_eq!(located.trim(), passage.trim_matches('…'), "start and end locate it in the content");
    assert_eq!(hit["record"]["content"], content.as_str(), "the record itself stays whole");
    let explanation = hit["explanation"].as_str().unwrap();
    let said = format!("; shown: passage, characters {start}-{end} of {}", content.chars().count());
    assert!(explanation.ends_with(&said), "the explanation says what is shown: {explanation}");
    // The budget counts the passage, not the record (~290 tokens): a 200-token budget holds it
    // and a short record, which shows whole.
    let (status, short) = app
        .call(
            "POST",
            "/v1/memory/write",
            Some(&host),
            Some({
                let mut b = write_body("The staging database lives in Frankfurt.", "user:aditya");
                b.as_object_mut().unwrap().remove("subject");
                b.as_object_mut().unwrap().remove("attribute");
                b
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{short}");
    let mut budgeted = search.clone();
    budgeted["token_budget"] = json!(200);
    let (status, both) = app.call("POST", "/v1/memory/search", Some(&host), Some(budgeted)).await;
    assert_eq!(status, StatusCode::OK, "{both}");
    let results = both["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "the passage (~100 tokens) and the short record fit 200: {both}");
    let short_hit = results.iter().find(|r| r["passage"].is_null()).expect("the short record shows whole");
    assert_eq!(short_hit["record"]["content"], "The staging database lives in Frankfurt.");
}
