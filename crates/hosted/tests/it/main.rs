//! The hosted client against a local server speaking each provider's wire format.

use std::time::{Duration, Instant};

use retold_domain::{CompletionClient, CompletionRequest, DomainError};
use retold_hosted::fake::{FakeProvider, Reply};
use retold_hosted::{ApiKey, HostedClient, HostedConfig, HostedError, Provider, ProviderConfig};
use serde_json::{Value, json};

const ANTHROPIC_KEY: &str = "sk-ant-test-0123456789";
const OPENAI_KEY: &str = "sk-openai-test-9876543210";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"phrase": {"type": "string"}},
        "required": ["phrase"],
        "additionalProperties": false,
    })
}

fn request(model: &str) -> CompletionRequest {
    CompletionRequest {
        model: model.into(),
        system: "You rewrite queries.".into(),
        user: "what does he prefer?".into(),
        schema_name: "rewrite_v1".into(),
        schema_json: schema().to_string(),
        max_tokens: 256,
    }
}

fn config(server: &FakeProvider) -> HostedConfig {
    HostedConfig {
        anthropic: ProviderConfig { base_url: server.base_url(), api_key: ApiKey::new(ANTHROPIC_KEY) },
        openai: ProviderConfig {
            base_url: format!("{}/", server.base_url()),
            api_key: ApiKey::new(OPENAI_KEY),
        },
        timeout: Duration::from_millis(300),
        max_retries: 2,
        backoff: Duration::from_millis(10),
        backoff_max: Duration::from_millis(200),
    }
}

async fn setup() -> (FakeProvider, HostedClient) {
    let server = FakeProvider::start().await.unwrap();
    let client = HostedClient::new(config(&server)).unwrap();
    (server, client)
}

#[tokio::test]
async fn anthropic_structured_output_is_a_forced_tool_call() {
    let (server, client) = setup().await;
    server.script([Reply::anthropic_tool(
        "rewrite_v1",
        json!({"phrase": "Aditya's preferred explanation style"}),
    )]);

    let response = client.complete(request("claude-haiku-4-5-20251001")).await.unwrap();

    let answer: Value = serde_json::from_str(&response.json).unwrap();
    assert_eq!(answer, json!({"phrase": "Aditya's preferred explanation style"}));
    assert_eq!((response.input_tokens, response.output_tokens), (120, 40));
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.body["model"], "claude-haiku-4-5-20251001");
    assert_eq!(sent.body["max_tokens"], 256);
    assert_eq!(sent.body["system"], "You rewrite queries.");
    assert_eq!(sent.body["messages"], json!([{"role": "user", "content": "what does he prefer?"}]));
    assert_eq!(sent.body["tools"][0]["name"], "rewrite_v1");
    assert_eq!(sent.body["tools"][0]["input_schema"], schema());
    assert_eq!(sent.body["tool_choice"], json!({"type": "tool", "name": "rewrite_v1"}));
}

#[tokio::test]
async fn openai_structured_output_is_a_strict_json_schema() {
    let (server, client) = setup().await;
    server.script([Reply::openai_content(r#"{"phrase": "Aditya's preferred explanation style"}"#)]);

    let response = client.complete(request("gpt-4.1-mini")).await.unwrap();

    let answer: Value = serde_json::from_str(&response.json).unwrap();
    assert_eq!(answer["phrase"], "Aditya's preferred explanation style");
    assert_eq!((response.input_tokens, response.output_tokens), (90, 30));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions", "a trailing slash on the base URL is tolerated");
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.body["model"], "gpt-4.1-mini");
    assert_eq!(sent.body["max_completion_tokens"], 256);
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "system", "content": "You rewrite queries."},
            {"role": "user", "content": "what does he prefer?"},
        ])
    );
    assert_eq!(
        sent.body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "rewrite_v1", "strict": true, "schema": schema()}})
    );
}

#[tokio::test]
async fn anthropic_usage_counts_prompt_cache_tokens_as_input() {
    let (server, client) = setup().await;
    server.script([Reply::json(json!({
        "content": [{"type": "tool_use", "id": "t", "name": "rewrite_v1", "input": {"phrase": "x"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1000, "output_tokens": 5},
    }))]);
    let response = client.complete(request("claude-haiku-4-5-20251001")).await.unwrap();
    assert_eq!((response.input_tokens, response.output_tokens), (1210, 5));
}

#[tokio::test]
async fn explicit_provider_prefix_routes_other_model_names() {
    let (server, client) = setup().await;
    server.script([Reply::openai_content(r#"{"phrase": "x"}"#)]);
    client.complete(request("openai:local-llama")).await.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.body["model"], "local-llama");
}

#[tokio::test]
async fn a_429_is_retried_after_the_requested_wait_then_succeeds() {
    for model in ["claude-haiku-4-5-20251001", "gpt-4.1-mini"] {
        let (server, client) = setup().await;
        server.script([Reply::rate_limited(150)]);
        server.respond_with(|request| Reply::structured(request, json!({"phrase": "ok"})));

        let started = Instant::now();
        let response = client.complete(request(model)).await.unwrap();

        assert_eq!(serde_json::from_str::<Value>(&response.json).unwrap()["phrase"], "ok", "{model}");
        assert_eq!(server.requests().len(), 2, "{model}: one 429, one success");
        assert!(started.elapsed() >= Duration::from_millis(150), "{model}: retry-after-ms was honoured");
        assert_eq!(
            server.requests()[0].body,
            server.requests()[1].body,
            "{model}: the retry resends the same body"
        );
    }
}

#[tokio::test]
async fn server_errors_are_retried_a_bounded_number_of_times() {
    let (server, client) = setup().await;
    server.respond_with(|_| Reply::error(503, "overloaded"));
    let error = client.call(&request("claude-haiku-4-5-20251001")).await.unwrap_err();
    assert!(matches!(error, HostedError::Status { status: 503, .. }), "{error}");
    assert!(error.to_string().contains("overloaded"), "{error}");
    assert_eq!(server.requests().len(), 3, "first attempt plus max_retries = 2");
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let (server, client) = setup().await;
    server.respond_with(|_| Reply::error(400, "max_tokens: must be positive"));
    let error = client.call(&request("gpt-4.1-mini")).await.unwrap_err();
    assert!(matches!(error, HostedError::Status { status: 400, .. }), "{error}");
    assert!(error.to_string().contains("max_tokens: must be positive"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_slow_provider_times_out_on_every_attempt() {
    let (server, client) = setup().await;
    server.respond_with(|request| {
        Reply::structured(request, json!({"phrase": "late"})).after(Duration::from_secs(5))
    });
    let started = Instant::now();
    let error = client.call(&request("claude-haiku-4-5-20251001")).await.unwrap_err();
    assert!(matches!(error, HostedError::Timeout { timeout_ms: 300, .. }), "{error}");
    assert_eq!(server.requests().len(), 3, "timeouts are retried");
    assert!(started.elapsed() < Duration::from_secs(4), "each attempt stops at the timeout");
}

#[tokio::test]
async fn a_timeout_then_an_answer_succeeds() {
    let (server, client) = setup().await;
    server.script([
        Reply::anthropic_tool("rewrite_v1", json!({"phrase": "late"})).after(Duration::from_secs(5))
    ]);
    server.respond_with(|request| Reply::structured(request, json!({"phrase": "on time"})));
    let response = client.call(&request("claude-haiku-4-5-20251001")).await.unwrap();
    assert!(response.json.contains("on time"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn malformed_answers_are_errors_and_are_not_retried() {
    let cases: Vec<(&str, Reply, &str)> = vec![
        ("gpt-4.1-mini", Reply::openai_content("Sure! Here is the phrase: Aditya"), "not JSON"),
        ("gpt-4.1-mini", Reply::openai_content("[1, 2]"), "not a JSON object"),
        ("gpt-4.1-mini", Reply::json(json!({"choices": []})), "no message content"),
        (
            "claude-haiku-4-5-20251001",
            Reply::json(json!({"content": [{"type": "text", "text": "no tool"}], "stop_reason": "end_turn"})),
            "no rewrite_v1 tool call",
        ),
        (
            "claude-haiku-4-5-20251001",
            Reply::Raw { status: 200, headers: vec![], body: "<html>gateway</html>".into() },
            "not JSON",
        ),
        (
            "claude-haiku-4-5-20251001",
            Reply::json(json!({
                "content": [{"type": "tool_use", "name": "rewrite_v1", "input": {}}],
                "stop_reason": "max_tokens",
            })),
            "cut off at max_tokens",
        ),
        (
            "gpt-4.1-mini",
            Reply::json(json!({
                "choices": [{"message": {"role": "assistant", "content": "{\"phr", "refusal": null}, "finish_reason": "length"}],
            })),
            "cut off",
        ),
    ];
    for (model, reply, expected) in cases {
        let (server, client) = setup().await;
        server.script([reply]);
        let error = client.call(&request(model)).await.unwrap_err();
        assert!(matches!(error, HostedError::Malformed { .. }), "{model}: {error}");
        assert!(error.to_string().contains(expected), "{model}: {error} lacks {expected:?}");
        assert_eq!(server.requests().len(), 1, "{model}: malformed output is not retried");
    }
}

#[tokio::test]
async fn an_openai_refusal_is_reported() {
    let (server, client) = setup().await;
    server.script([Reply::json(json!({
        "choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}],
    }))]);
    let error = client.call(&request("gpt-4.1-mini")).await.unwrap_err();
    assert!(matches!(error, HostedError::Refused { .. }), "{error}");
}

#[tokio::test]
async fn missing_keys_and_unknown_models_fail_before_any_request() {
    let server = FakeProvider::start().await.unwrap();
    let mut without_keys = config(&server);
    without_keys.anthropic.api_key = None;
    let client = HostedClient::new(without_keys.clone()).unwrap();
    let error = client.call(&request("claude-haiku-4-5-20251001")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "no API key for anthropic: set ANTHROPIC_API_KEY or hosted.anthropic.api_key"
    );
    assert!(matches!(without_keys.check_model("claude-haiku-4-5-20251001"), Err(HostedError::NoKey { .. })));
    assert_eq!(without_keys.check_model("gpt-4.1-mini").unwrap(), Provider::OpenAi);
    let error = client.call(&request("llama-3")).await.unwrap_err();
    assert!(matches!(error, HostedError::UnknownModel(_)), "{error}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn keys_never_appear_in_debug_output_or_errors() {
    let (server, client) = setup().await;
    let shown = format!("{client:?} {:?}", client.config());
    assert!(!shown.contains(ANTHROPIC_KEY) && !shown.contains(OPENAI_KEY), "{shown}");
    // Providers quote the key back, whole or in part: neither reaches the error.
    let echo = format!("Incorrect API key provided: {ANTHROPIC_KEY}. Also tried sk-ant-test-0123****6789.");
    server.respond_with(move |_| Reply::error(401, &echo));
    let error = client.complete(request("claude-haiku-4-5-20251001")).await.unwrap_err();
    assert!(matches!(error, DomainError::Backend { .. }));
    let text = format!("{error} {error:?}");
    assert!(!text.contains(ANTHROPIC_KEY) && !text.contains("sk-ant-test-0123"), "{text}");
    assert!(text.contains("Incorrect API key provided: <redacted>"), "{text}");
    assert_eq!(server.requests().len(), 1, "401 is not retried");
}

#[tokio::test]
async fn an_unreachable_provider_is_a_transport_error() {
    let server = FakeProvider::start().await.unwrap();
    let mut unreachable = config(&server);
    drop(server);
    // Port 9 (discard) on loopback refuses connections.
    unreachable.anthropic.base_url = "http://127.0.0.1:9".into();
    unreachable.max_retries = 1;
    let client = HostedClient::new(unreachable).unwrap();
    let error = client.call(&request("claude-haiku-4-5-20251001")).await.unwrap_err();
    assert!(matches!(error, HostedError::Transport { .. }), "{error}");
}
