//! The Anthropic Messages API: structured output through a forced tool call.

use retold_domain::{CompletionRequest, CompletionResponse};
use serde_json::{Value, json};

use crate::error::HostedError;

const PROVIDER: &str = "anthropic";
/// The API version header the Messages API requires.
pub(crate) const VERSION: &str = "2023-06-01";
pub(crate) const PATH: &str = "/v1/messages";

/// The request body.
pub(crate) fn body(model: &str, request: &CompletionRequest, schema: Value) -> Value {
    json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": [{"role": "user", "content": request.user}],
        "tools": [{
            "name": request.schema_name,
            "description": "Record the answer. Always answer by calling this tool.",
            "input_schema": schema,
        }],
        "tool_choice": {"type": "tool", "name": request.schema_name},
    })
}

fn malformed(message: impl Into<String>) -> HostedError {
    HostedError::Malformed { provider: PROVIDER, message: message.into() }
}

/// The structured answer: the input of the forced tool call.
pub(crate) fn parse(request: &CompletionRequest, answer: &Value) -> Result<CompletionResponse, HostedError> {
    let usage = &answer["usage"];
    let tokens = |name: &str| usage[name].as_u64().unwrap_or(0);
    let content = answer["content"].as_array().ok_or_else(|| malformed("no content array"))?;
    let call = content
        .iter()
        .find(|block| block["type"] == "tool_use" && block["name"] == request.schema_name.as_str());
    let stop = answer["stop_reason"].as_str().unwrap_or("unknown");
    if stop == "max_tokens" {
        return Err(malformed("the answer was cut off at max_tokens"));
    }
    let Some(call) = call else {
        if stop == "refusal" {
            return Err(HostedError::Refused { provider: PROVIDER, message: "stop_reason refusal".into() });
        }
        return Err(malformed(format!("no {} tool call (stop_reason {stop})", request.schema_name)));
    };
    let input = &call["input"];
    if !input.is_object() {
        return Err(malformed("the tool call's input is not an object"));
    }
    // Prompt-cache reads and writes are input the request was billed for, too.
    let input_tokens =
        tokens("input_tokens") + tokens("cache_creation_input_tokens") + tokens("cache_read_input_tokens");
    Ok(CompletionResponse { json: input.to_string(), input_tokens, output_tokens: tokens("output_tokens") })
}
