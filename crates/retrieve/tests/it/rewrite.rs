//! Query rewriting through the real hosted client against a local server that speaks the
//! Anthropic wire format: success, failure fallback and name-introduction refusal, each
//! visible in search_log.

use std::sync::Arc;
use std::time::Duration;

use retold_hosted::fake::{FakeProvider, Reply};
use retold_hosted::{ApiKey, HostedClient, HostedConfig, ProviderConfig};
use retold_retrieve::{HostedLLMQueryRewriter, RetrieveConfig, SearchRequest};
use serde_json::json;

use crate::{World, about, principal, request, world_full};

const MODEL: &str = "claude-haiku-4-5-20251001";
const QUERY: &str = "what does he prefer?";
const CONTEXT: &str = "user: Aditya asked for concise technical explanations.";

async fn rewriting_world(server: &FakeProvider, timeout: Duration) -> World {
    let client = HostedClient::new(HostedConfig {
        anthropic: ProviderConfig { base_url: server.base_url(), api_key: ApiKey::new("sk-ant-test") },
        max_retries: 0,
        ..HostedConfig::default()
    })
    .unwrap();
    let rewriter = HostedLLMQueryRewriter::new(
        Arc::new(client),
        MODEL,
        timeout,
        Arc::new(retold_index::SnowballEnglish::new()),
    );
    let w = world_full(RetrieveConfig::default(), None, Arc::new(rewriter)).await;
    let p = principal("rewrite-agent", "aditya");
    let scope = "agent:rewrite-agent/aditya";
    w.write(&p, about(request(scope, "Aditya prefers concise technical explanations."), "Aditya")).await;
    w.write(&p, request(scope, "The staging database is restored every Sunday night.")).await;
    w
}

fn search_request() -> SearchRequest {
    let mut request = SearchRequest::new(QUERY);
    request.context = vec![CONTEXT.to_owned()];
    request
}

#[tokio::test]
async fn a_rewritten_query_runs_the_channels_and_is_logged() {
    let server = FakeProvider::start().await.unwrap();
    server.respond_with(|r| Reply::structured(r, json!({"query": "Aditya's preferred explanation style"})));
    let w = rewriting_world(&server, Duration::from_secs(5)).await;

    let response = w.search(&principal("rewrite-agent", "aditya"), search_request()).await;

    assert_eq!(response.rewrite_status, "rewritten");
    assert_eq!(response.hits[0].record.content.as_str(), "Aditya prefers concise technical explanations.");
    let trace = w.trace(&response.search_id).await;
    assert_eq!(trace["rewrite_status"], "rewritten");
    assert_eq!(trace["query"], "Aditya's preferred explanation style");
    assert_eq!(trace["request"]["query"], QUERY, "the raw request stays in the log");
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], MODEL);
    assert_eq!(sent[0].schema_name(), Some("rewrite_v1"));
    let user = sent[0].user_text();
    assert!(user.contains(QUERY) && user.contains(CONTEXT), "the prompt carries query and context: {user}");
}

#[tokio::test]
async fn a_failed_or_slow_rewrite_falls_back_to_the_raw_query() {
    let cases: Vec<(Reply, &str)> = vec![
        (Reply::error(500, "internal error"), "HTTP 500"),
        (
            Reply::anthropic_tool("rewrite_v1", json!({"query": "late"})).after(Duration::from_secs(3)),
            "no answer within 300 ms",
        ),
        (Reply::anthropic_tool("rewrite_v1", json!({"phrase": "wrong field"})), "no query phrase"),
    ];
    for (reply, note) in cases {
        let server = FakeProvider::start().await.unwrap();
        let reply = std::sync::Mutex::new(Some(reply));
        server
            .respond_with(move |_| reply.lock().unwrap().take().unwrap_or_else(|| Reply::error(500, "once")));
        let w = rewriting_world(&server, Duration::from_millis(300)).await;

        let response = w.search(&principal("rewrite-agent", "aditya"), search_request()).await;

        assert_eq!(response.rewrite_status, "failed", "{note}");
        let trace = w.trace(&response.search_id).await;
        assert_eq!(trace["rewrite_status"], "failed");
        assert_eq!(trace["query"], QUERY, "the raw query ran");
        assert!(
            trace["rewrite_note"].as_str().unwrap().contains(note),
            "{} lacks {note:?}",
            trace["rewrite_note"]
        );
    }
}

#[tokio::test]
async fn a_rewrite_that_introduces_a_name_is_refused() {
    let server = FakeProvider::start().await.unwrap();
    server.respond_with(|r| Reply::structured(r, json!({"query": "Priya's preferred explanation style"})));
    let w = rewriting_world(&server, Duration::from_secs(5)).await;

    let response = w.search(&principal("rewrite-agent", "aditya"), search_request()).await;

    assert_eq!(response.rewrite_status, "refused");
    let trace = w.trace(&response.search_id).await;
    assert_eq!(trace["rewrite_status"], "refused");
    assert_eq!(trace["query"], QUERY);
    let note = trace["rewrite_note"].as_str().unwrap();
    assert!(note.contains("priya") && note.contains("Priya's preferred explanation style"), "{note}");
}
