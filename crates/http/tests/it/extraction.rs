//! Session extraction end to end: the REST session buffer, the real hosted client against a
//! local server that speaks the Anthropic Messages format, the real store and model.

use axum::http::StatusCode;
use retold_hosted::fake::{Captured, FakeProvider, Reply};
use serde_json::{Value, json};

use crate::{ADMIN_KEY, TestApp, app, app_in, principal};

pub(crate) const TURNS: [(&str, &str); 4] = [
    ("user", "I prefer concise technical explanations, ideally in English."),
    ("assistant", "Noted: short, technical answers from now on."),
    ("tool", r#"{"repository": "retold", "default_branch": "main", "stars": 42}"#),
    ("user", "Let's pick this up again next week."),
];

fn candidate(content: &str, source_kind: &str, turn: u32, evidence: &str) -> Value {
    json!({
        "type": "semantic", "content": content, "subject": null, "attribute": null, "mentions": [],
        "source_kind": source_kind, "turn": turn, "evidence": evidence,
        "event_at": null, "expires_at": null, "confidence": null, "scope": "private",
    })
}

fn proposals() -> Vec<Value> {
    let mut preference = candidate(
        "Aditya prefers concise technical explanations in English.",
        "user_statement",
        1,
        "I prefer concise technical explanations, ideally in English.",
    );
    preference["subject"] = json!({"name": "Aditya", "kind": "person"});
    preference["attribute"] = json!("explanation_style");
    let mut branch = candidate(
        "The retold repository's default branch is main.",
        "tool_result",
        3,
        r#""default_branch": "main""#,
    );
    branch["subject"] = json!({"name": "retold", "kind": "repository"});
    branch["attribute"] = json!("default_branch");
    let mut resume = candidate(
        "Aditya plans to resume the work next week.",
        "agent_inference",
        4,
        "pick this up again next week",
    );
    resume["type"] = json!("episodic");
    vec![
        preference,
        branch,
        // A user statement citing the assistant's turn: invalid, never reviewed.
        candidate("Aditya wants short answers.", "user_statement", 2, "short, technical answers"),
        resume,
    ]
}

/// The provider: extraction proposes; review narrows the first valid candidate, tries to
/// widen the second, accepts the third.
pub(crate) fn respond(request: &Captured) -> Reply {
    match request.schema_name() {
        Some("extract_v1") => Reply::structured(
            request,
            json!({"candidates": proposals(), "summary": "Aditya set his explanation style and checked the retold repository's default branch."}),
        ),
        Some("review_v1") => {
            let mut narrowed = proposals()[0].clone();
            narrowed["content"] = json!("Aditya prefers concise technical explanations.");
            let mut widened = proposals()[1].clone();
            widened["content"] =
                json!("The retold repository's default branch is main and every release is signed.");
            Reply::structured(
                request,
                json!({"reviews": [
                    {"index": 0, "verdict": "revise", "reason": "English is a wish, not a rule", "revised": narrowed},
                    {"index": 1, "verdict": "revise", "reason": "add release policy", "revised": widened},
                    {"index": 2, "verdict": "accept", "reason": "useful", "revised": null},
                ]}),
            )
        }
        other => Reply::error(400, &format!("unexpected schema {other:?}")),
    }
}

/// The app with `provider` configured as the `provider_name` endpoint, keyed with `key`.
async fn app_with_provider(
    provider: &FakeProvider,
    provider_name: &str,
    key: &str,
    extra: &[(&str, &str)],
) -> TestApp {
    let upper = provider_name.to_uppercase();
    let (url_var, key_var) =
        (format!("RETOLD__HOSTED__{upper}__BASE_URL"), format!("RETOLD__HOSTED__{upper}__API_KEY"));
    let base_url = provider.base_url();
    let mut env = vec![(url_var.as_str(), base_url.as_str()), (key_var.as_str(), key)];
    env.extend_from_slice(extra);
    app_in(tempfile::tempdir().unwrap(), &env).await
}

async fn session_with_turns(app: &TestApp, host: &str) -> String {
    let (status, session) = app
        .call(
            "POST",
            "/v1/sessions",
            Some(host),
            Some(json!({"principal": principal("research-agent", "aditya")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    let sid = session["id"].as_str().unwrap().to_owned();
    for (role, content) in TURNS {
        let body =
            json!({"principal": principal("research-agent", "aditya"), "role": role, "content": content});
        let (status, turn) =
            app.call("POST", &format!("/v1/sessions/{sid}/turns"), Some(host), Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{turn}");
    }
    sid
}

async fn record(app: &TestApp, host: &str, id: &str) -> Value {
    let body = json!({"principal": principal("research-agent", "aditya"), "ids": [id]});
    let (status, got) = app.call("POST", "/v1/memory/get", Some(host), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    got["records"][0]["record"].clone()
}

#[tokio::test]
async fn an_ended_session_is_extracted_reviewed_and_written_once() {
    extracted_once_through("anthropic").await;
}

#[tokio::test]
async fn extraction_works_the_same_through_openai_models() {
    extracted_once_through("openai").await;
}

async fn extracted_once_through(provider_name: &str) {
    let provider = FakeProvider::start().await.unwrap();
    provider.respond_with(respond);
    let (extraction_model, review_model) = match provider_name {
        "anthropic" => ("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"),
        _ => ("gpt-4.1", "gpt-4.1-mini"),
    };
    let app = app_with_provider(
        &provider,
        provider_name,
        "sk-test-key",
        &[
            ("RETOLD__INGESTION__EXTRACTION_MODEL", extraction_model),
            ("RETOLD__INGESTION__REVIEW_MODEL", review_model),
        ],
    )
    .await;
    let host = app.host_key(&["research-agent"]).await;
    let sid = session_with_turns(&app, &host).await;

    let end = json!({"principal": principal("research-agent", "aditya"), "wait_for_extraction": true});
    let (status, report) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;

    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["status"], "extracted", "{report}");
    let reviews: Vec<&str> =
        report["candidates"].as_array().unwrap().iter().map(|c| c["review"].as_str().unwrap()).collect();
    assert_eq!(reviews, ["revised", "revision_refused", "invalid", "accepted"], "{report}");
    assert!(report["candidates"][1]["reason"].as_str().unwrap().contains("every"), "{report}");
    assert!(report["candidates"][2]["reason"].as_str().unwrap().contains("assistant turn"), "{report}");
    let tokens = if provider_name == "anthropic" { (240, 80) } else { (180, 60) };
    assert_eq!(
        (report["input_tokens"].as_u64(), report["output_tokens"].as_u64()),
        (Some(tokens.0), Some(tokens.1))
    );

    // The records: the narrowed preference, the original branch fact, the inference, the summary.
    let id = |i: usize| report["candidates"][i]["write"]["record_id"].as_str().unwrap().to_owned();
    let preference = record(&app, &host, &id(0)).await;
    assert_eq!(preference["content"], "Aditya prefers concise technical explanations.");
    assert_eq!(preference["source_kind"], "user_statement");
    assert_eq!(preference["source_ref"], format!("session:{sid}<turn:1>"));
    assert_eq!(preference["evidence"], "I prefer concise technical explanations, ideally in English.");
    assert_eq!(preference["scope_kind"], "agent");
    assert_eq!(preference["scope_id"], "research-agent/aditya");
    let branch = record(&app, &host, &id(1)).await;
    assert_eq!(branch["content"], "The retold repository's default branch is main.");
    assert_eq!(branch["source_kind"], "tool_result");
    assert_eq!(branch["source_ref"], format!("session:{sid}<turn:3>"));
    assert_eq!(branch["evidence"], r#""default_branch": "main""#);
    let resume = record(&app, &host, &id(3)).await;
    assert_eq!(
        (resume["source_kind"].as_str(), resume["status"].as_str()),
        (Some("agent_inference"), Some("provisional"))
    );
    assert_eq!(resume["type"], "episodic");
    let summary = record(&app, &host, report["summary"]["record_id"].as_str().unwrap()).await;
    assert_eq!(summary["source_kind"], "session_summary");
    assert_eq!(summary["source_ref"], format!("session:{sid}"));
    assert_eq!(summary["type"], "episodic");

    // With turn memory on, the fact distilled from turn 1 and turn 1 itself are both memory,
    // told apart by their origin, and a search may ask for either.
    for distilled in [&preference, &branch, &resume, &summary] {
        assert_eq!(distilled["origin"], "memory", "{distilled}");
    }
    let search = |origins: Value| {
        let body = json!({"principal": principal("research-agent", "aditya"),
            "query": "How does Aditya like explanations?", "origins": origins});
        let (app, host) = (&app, host.clone());
        async move { app.call("POST", "/v1/memory/search", Some(&host), Some(body)).await.1 }
    };
    let turns = search(json!(["turn"])).await;
    let said = turns["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record"]["source_ref"] == preference["source_ref"])
        .unwrap_or_else(|| panic!("the cited turn is kept: {turns}"));
    assert_eq!(said["record"]["content"], "I prefer concise technical explanations, ideally in English.");
    let memories = search(json!(["memory"])).await;
    let first = &memories["results"][0]["record"];
    assert_eq!(
        (first["id"].as_str(), first["origin"].as_str()),
        (Some(id(0).as_str()), Some("memory")),
        "{memories}"
    );

    // What the provider was sent.
    let sent = provider.requests();
    assert_eq!(sent.len(), 2, "one extraction, one review");
    assert_eq!(sent[0].schema_name(), Some("extract_v1"));
    assert_eq!(sent[0].body["model"], extraction_model);
    let system = if provider_name == "anthropic" {
        assert_eq!(sent[0].path, "/v1/messages");
        assert_eq!(sent[0].header("x-api-key"), Some("sk-test-key"));
        sent[0].body["system"].as_str().unwrap().to_owned()
    } else {
        assert_eq!(sent[0].path, "/v1/chat/completions");
        assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test-key"));
        assert_eq!(sent[0].body["response_format"]["json_schema"]["strict"], true);
        sent[0].body["messages"][0]["content"].as_str().unwrap().to_owned()
    };
    assert!(system.starts_with("You extract long-term memories"), "{system}");
    let transcript = sent[0].user_text();
    assert!(transcript.contains("[turn 3] tool") && transcript.contains(TURNS[2].1), "{transcript}");
    assert_eq!(sent[1].schema_name(), Some("review_v1"));
    assert_eq!(sent[1].body["model"], review_model);
    assert!(sent[1].user_text().contains("The retold repository's default branch is main."));
    assert!(
        !sent[1].user_text().contains("Aditya wants short answers."),
        "invalid candidates are not reviewed"
    );

    // A second runner does nothing: neither for this session nor in a sweep.
    let (status, again) = app
        .call("POST", "/v1/admin/extractions/run", Some(ADMIN_KEY), Some(json!({"session_id": sid})))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["reports"][0]["status"], "skipped");
    assert!(
        again["reports"][0]["reason"].as_str().unwrap().starts_with("already extracted by retold-"),
        "{again}"
    );
    let (_, sweep) = app.call("POST", "/v1/admin/extractions/run", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!(sweep["reports"], json!([]));
    assert_eq!(provider.requests().len(), 2);

    // The session's audit trail holds one run, with the prompt versions.
    let (status, events) =
        app.call("GET", &format!("/v1/admin/sessions/{sid}/events"), Some(ADMIN_KEY), None).await;
    assert_eq!(status, StatusCode::OK);
    let events = events["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["session.started", "profile.assembled", "session.ended", "extraction.run"]);
    let run = &events[3]["details"];
    assert_eq!(
        (run["extract_prompt"].as_str(), run["review_prompt"].as_str()),
        (Some("extract_v1"), Some("review_v1"))
    );
    assert_eq!(run["revised"], "1");
    assert_eq!(run["revision_refused"], "1");
}

#[tokio::test]
async fn ending_without_waiting_extracts_in_the_background() {
    let provider = FakeProvider::start().await.unwrap();
    provider.respond_with(respond);
    let app = app_with_provider(&provider, "anthropic", "sk-ant-test-key", &[]).await;
    let host = app.host_key(&["research-agent"]).await;
    let sid = session_with_turns(&app, &host).await;
    let end = json!({"principal": principal("research-agent", "aditya")});
    let (status, _) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // What shutdown does: wait for the background runs.
    app.tasks.close();
    app.tasks.wait().await;

    let (_, events) =
        app.call("GET", &format!("/v1/admin/sessions/{sid}/events"), Some(ADMIN_KEY), None).await;
    let run = events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "extraction.run").cloned();
    let run = run.expect("the background run recorded extraction.run");
    assert_eq!(run["details"]["written"], "3", "{run}");
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test]
async fn without_a_key_extraction_is_off_and_says_why() {
    let app = app().await;
    let host = app.host_key(&["research-agent"]).await;
    let sid = session_with_turns(&app, &host).await;
    let end = json!({"principal": principal("research-agent", "aditya"), "wait_for_extraction": true});
    let (status, report) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(report["status"], "off");
    assert!(report["reason"].as_str().unwrap().contains("no API key for anthropic"), "{report}");
    let (status, body) =
        app.call("POST", "/v1/admin/extractions/run", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
}

#[tokio::test]
async fn a_failing_provider_records_extraction_failed_and_writes_nothing() {
    let provider = FakeProvider::start().await.unwrap();
    provider.respond_with(|_| Reply::error(401, "invalid x-api-key"));
    let app = app_with_provider(&provider, "anthropic", "sk-ant-wrong", &[]).await;
    let host = app.host_key(&["research-agent"]).await;
    let sid = session_with_turns(&app, &host).await;
    let end = json!({"principal": principal("research-agent", "aditya"), "wait_for_extraction": true});
    let (status, report) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;
    assert_eq!((status, report["status"].as_str()), (StatusCode::OK, Some("failed")), "{report}");
    assert!(!report.to_string().contains("sk-ant-wrong"));
    let (_, events) =
        app.call("GET", &format!("/v1/admin/sessions/{sid}/events"), Some(ADMIN_KEY), None).await;
    let failed =
        events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "extraction.failed").cloned();
    let failed = failed.expect("an extraction.failed event");
    assert!(failed["details"]["error"].as_str().unwrap().contains("HTTP 401"), "{failed}");
    let search = |origins: Value| {
        let body = json!({"principal": principal("research-agent", "aditya"), "query": "explanations", "origins": origins});
        let app = &app;
        let host = host.clone();
        async move { app.call("POST", "/v1/memory/search", Some(&host), Some(body)).await.1 }
    };
    assert_eq!(search(json!(["memory"])).await["results"], json!([]), "nothing was distilled");
    // The turns themselves were kept as memory when they were appended.
    let turns = search(json!(["turn"])).await;
    assert!(!turns["results"].as_array().unwrap().is_empty(), "{turns}");
}

#[test]
fn rewriting_enabled_without_a_key_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let settings = crate::settings(dir.path(), &[("RETOLD__RETRIEVAL__REWRITE__ENABLED", "true")]);
    let error = retold_http::hosted_stages(&settings).err().expect("refused");
    assert!(
        error.to_string().contains("retrieval.rewrite.enabled is true, but no API key for anthropic"),
        "{error}"
    );
}

#[tokio::test]
async fn the_reranker_enabled_without_its_model_files_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let settings = crate::settings(
        dir.path(),
        &[
            ("RETOLD__RETRIEVAL__RERANKER__ENABLED", "true"),
            ("RETOLD__RETRIEVAL__RERANKER__MODEL_DIR", empty.path().to_str().unwrap()),
        ],
    );
    let error = retold_http::build(&settings, crate::embedder(&settings)).await.err().expect("refused");
    let message = error.to_string();
    assert!(
        message.contains("retrieval.reranker.enabled is true, but the reranker model")
            && message.contains("model.onnx is missing")
            && message.contains(&empty.path().display().to_string()),
        "{message}"
    );
    assert!(!dir.path().join("retold.db").exists(), "nothing was created");

    // A model name other than the provisioned one, without its directory, is not quietly
    // served by the provisioned one; a model that is not a cross-encoder fails before the
    // store is opened.
    for (extra, expected) in [
        (
            ("RETOLD__RETRIEVAL__RERANKER__MODEL", "BAAI/bge-reranker-v2-m3"),
            "only cross-encoder/ms-marco-MiniLM-L-12-v2 is provisioned",
        ),
        (
            ("RETOLD__RETRIEVAL__RERANKER__MODEL_DIR", retold_index::default_model_dir().to_str().unwrap()),
            "one score per pair",
        ),
    ] {
        let settings =
            crate::settings(dir.path(), &[("RETOLD__RETRIEVAL__RERANKER__ENABLED", "true"), extra]);
        let error = retold_http::build(&settings, crate::embedder(&settings)).await.err().expect("refused");
        assert!(error.to_string().contains(expected), "{error}");
        assert!(!dir.path().join("retold.db").exists(), "nothing was created");
    }
}

#[tokio::test]
async fn the_enabled_reranker_reorders_real_searches_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let app = crate::app_in(dir, &[("RETOLD__RETRIEVAL__RERANKER__ENABLED", "true")]).await;
    let host = app.host_key(&[]).await;
    app.grant("rr-agent", "project:rr", true, true).await;
    let who = crate::principal("rr-agent", "u");
    for content in [
        "The deploy runbook lives in the ops wiki under runbooks/deploy.",
        "Deploys are frozen on Fridays after noon.",
        "The ops team meets on Tuesdays to review the runbook backlog.",
    ] {
        let body = json!({"principal": who, "type": "semantic", "content": content, "scope": "project:rr",
            "source_kind": "system"});
        let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    let query = json!({"principal": who, "query": "where can I find the deploy runbook?"});
    let (status, found) = app.call("POST", "/v1/memory/search", Some(&host), Some(query)).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let top = &found["results"][0];
    assert!(top["record"]["content"].as_str().unwrap().contains("ops wiki"), "{found}");
    let reranked = top["explanation"].as_str().unwrap().split("; reranker: ").nth(1).expect("reranked");
    assert!(reranked.ends_with("(rank 1)"), "{found}");
    let search_id = found["search_id"].as_str().unwrap();
    let (_, trace) =
        app.call("GET", &format!("/v1/admin/search-log/{search_id}"), Some(crate::ADMIN_KEY), None).await;
    assert!(trace["timings_us"].to_string().contains("reranker"), "{trace}");
    let fallback = |n: &&serde_json::Value| n["stage"] == "reranker";
    assert!(
        trace["notes"].as_array().is_none_or(|n| !n.iter().any(|n| fallback(&n))),
        "no fallback: {trace}"
    );
}

#[tokio::test]
async fn retention_deletes_extracted_transcripts_and_records_keep_their_evidence() {
    let provider = FakeProvider::start().await.unwrap();
    provider.respond_with(respond);
    // 0 days: every turn of an extracted session is past retention.
    let app = app_with_provider(
        &provider,
        "anthropic",
        "sk-test-key",
        &[("RETOLD__OPERATIONS__TRANSCRIPT_RETENTION_DAYS", "0")],
    )
    .await;
    let host = app.host_key(&["research-agent"]).await;
    let extracted = session_with_turns(&app, &host).await;
    let end = json!({"principal": principal("research-agent", "aditya"), "wait_for_extraction": true});
    let (status, report) =
        app.call("POST", &format!("/v1/sessions/{extracted}/end"), Some(&host), Some(end)).await;
    assert_eq!((status, report["status"].as_str()), (StatusCode::OK, Some("extracted")), "{report}");
    let written: Vec<String> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["write"]["record_id"].as_str().map(str::to_owned))
        .collect();
    let with_evidence: Vec<Value> = {
        let mut out = Vec::new();
        for id in &written {
            out.push(record(&app, &host, id).await);
        }
        out.into_iter().filter(|r| r["evidence"].is_string()).collect()
    };
    assert!(!with_evidence.is_empty(), "{report}");
    // A second session is still open: its extraction has not run.
    let open = session_with_turns(&app, &host).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;

    let (status, dry) =
        app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({"dry_run": true}))).await;
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(
        (dry["sessions"].as_u64(), dry["turns"].as_u64(), dry["skipped_sessions"].as_u64()),
        (Some(1), Some(4), Some(1)),
        "{dry}"
    );
    let (_, run) = app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({}))).await;
    assert_eq!((run["turns"].as_u64(), run["skipped_sessions"].as_u64()), (Some(4), Some(1)), "{run}");

    // The extracted session's turns are gone (a turn citation no longer verifies); the open
    // one is untouched; records keep the evidence they quoted.
    let cite = |sid: &str| {
        json!({"principal": principal("research-agent", "aditya"), "type": "semantic",
        "content": "Aditya prefers concise technical explanations.", "scope": "agent:research-agent/aditya",
        "source_kind": "user_statement", "source_ref": format!("session:{sid}<turn:1>"),
        "evidence": TURNS[0].1})
    };
    let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(cite(&extracted))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let cited = record(&app, &host, answer["record_id"].as_str().unwrap()).await;
    assert_eq!(cited["source_kind"], "agent_inference", "the deleted turn no longer verifies: {cited}");
    let (status, answer) = app.call("POST", "/v1/memory/write", Some(&host), Some(cite(&open))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let cited = record(&app, &host, answer["record_id"].as_str().unwrap()).await;
    assert_eq!(cited["source_kind"], "user_statement", "the open session's turn still verifies: {cited}");
    for before in &with_evidence {
        let after = record(&app, &host, before["id"].as_str().unwrap()).await;
        assert_eq!(after["evidence"], before["evidence"]);
    }
    let (_, forced) =
        app.call("POST", "/v1/admin/ops/retention", Some(ADMIN_KEY), Some(json!({"force": true}))).await;
    assert_eq!(
        (forced["turns"].as_u64(), forced["sessions"].as_u64()),
        (Some(4), Some(1)),
        "forced: {forced}"
    );
}

/// A replayed conversation kept in a project's shared memory: its summary is dated when the
/// conversation happened (its first turn), not when it was replayed, and kept where its turns
/// are, so whoever may read the conversation may read its summary.
#[tokio::test]
async fn a_replayed_sessions_summary_is_dated_at_its_first_turn_and_kept_with_its_turns() {
    let provider = FakeProvider::start().await.unwrap();
    provider.respond_with(respond);
    let app = app_with_provider(&provider, "anthropic", "sk-test-key", &[]).await;
    let host = app.host_key(&["research-agent"]).await;
    app.grant("research-agent", "project:retold", true, true).await;
    let aditya = principal("research-agent", "aditya");
    let (status, session) = app
        .call(
            "POST",
            "/v1/sessions",
            Some(&host),
            Some(json!({"principal": aditya, "scope": "project:retold"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    let sid = session["id"].as_str().unwrap().to_owned();
    for (n, (role, content)) in TURNS.into_iter().enumerate() {
        let at = format!("2024-03-0{}T09:00:00Z", n + 1);
        let body = json!({"principal": aditya, "role": role, "content": content, "at": at});
        let (status, turn) =
            app.call("POST", &format!("/v1/sessions/{sid}/turns"), Some(&host), Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{turn}");
    }
    let end = json!({"principal": aditya, "wait_for_extraction": true});
    let (status, report) = app.call("POST", &format!("/v1/sessions/{sid}/end"), Some(&host), Some(end)).await;
    assert_eq!((status, report["status"].as_str()), (StatusCode::OK, Some("extracted")), "{report}");
    let summary = record(&app, &host, report["summary"]["record_id"].as_str().unwrap()).await;
    assert_eq!(
        (summary["scope_kind"].as_str(), summary["scope_id"].as_str()),
        (Some("project"), Some("retold"))
    );
    assert_eq!(summary["event_at"], "2024-03-01T09:00:00Z");
    // The extractor read when each turn was said.
    let prompt =
        provider.requests().iter().find(|r| r.schema_name() == Some("extract_v1")).unwrap().body.to_string();
    assert!(prompt.contains("2024-03-03T09:00:00+00:00"), "{prompt}");
}
