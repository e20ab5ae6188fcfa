//! OpenAI Chat Completions: structured output through a strict `json_schema` response format.

use retold_domain::{CompletionRequest, CompletionResponse};
use serde_json::{Value, json};

use crate::error::HostedError;

const PROVIDER: &str = "openai";
pub(crate) const PATH: &str = "/v1/chat/completions";

/// The request body.
pub(crate) fn body(model: &str, request: &CompletionRequest, schema: Value) -> Value {
    json!({
        "model": model,
        "max_completion_tokens": request.max_tokens,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "strict": true, "schema": schema},
        },
    })
}

fn malformed(message: impl Into<String>) -> HostedError {
    HostedError::Malformed { provider: PROVIDER, message: message.into() }
}

/// The structured answer: the first choice's message content, which must be a JSON object.
pub(crate) fn parse(answer: &Value) -> Result<CompletionResponse, HostedError> {
    let usage = &answer["usage"];
    let tokens = |name: &str| usage[name].as_u64().unwrap_or(0);
    let choice = &answer["choices"][0];
    let message = &choice["message"];
    if let Some(refusal) = message["refusal"].as_str() {
        return Err(HostedError::Refused { provider: PROVIDER, message: refusal.to_owned() });
    }
    let Some(content) = message["content"].as_str() else {
        let finish = choice["finish_reason"].as_str().unwrap_or("unknown");
        return Err(malformed(format!("no message content (finish_reason {finish})")));
    };
    if choice["finish_reason"] == "length" {
        return Err(malformed("the answer was cut off at max_completion_tokens"));
    }
    let parsed: Value =
        serde_json::from_str(content).map_err(|e| malformed(format!("message content is not JSON: {e}")))?;
    if !parsed.is_object() {
        return Err(malformed("message content is not a JSON object"));
    }
    Ok(CompletionResponse {
        json: parsed.to_string(),
        input_tokens: tokens("prompt_tokens"),
        output_tokens: tokens("completion_tokens"),
    })
}
