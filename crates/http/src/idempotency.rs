//! `Idempotency-Key` on the writes a client may retry after a timeout: `memory_write`,
//! `memory_revise`, `memory_forget` and `POST /v1/sessions/{id}/turns`.
//!
//! A key belongs to the host key that sent it and the principal the body asserts. The first
//! request with a key runs; a retry with the same method, path and body gets the first
//! answer (status and body, marked `Idempotent-Replayed: true`) and runs nothing; the same
//! key with another request is a 409 `idempotency_key_reused`, and while the first request
//! is still running a 409 `conflict`. Only successful answers are kept: an error changed
//! nothing, so its key is given back and a retry runs again. Keys expire after
//! `server.idempotency_ttl_ms`. The store and the once-per-key rule are `app::IdempotencyService`.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use retold_app::{Answered, Idempotent};
use retold_domain::{AgentId, IdempotencyKey, UserId};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::auth::{Caller, caller};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// The request header.
pub(crate) const HEADER: &str = "idempotency-key";
/// Set on an answer replayed for a retry.
pub(crate) const REPLAYED: &str = "idempotent-replayed";
/// The longest key accepted.
pub(crate) const MAX_KEY_CHARS: usize = 255;

/// What the layer needs: the services and the body limit the handlers apply.
#[derive(Clone, Debug)]
pub(crate) struct IdempotencyLayer {
    pub(crate) state: AppState,
    pub(crate) body_limit: usize,
}

/// The principal a body asserts, read leniently: the handler parses the body strictly, so a
/// body this cannot read is refused there and writes nothing.
#[derive(Deserialize)]
struct Asserted {
    principal: AssertedPrincipal,
}

#[derive(Deserialize)]
struct AssertedPrincipal {
    agent_id: String,
    user_id: String,
}

/// 1 to 255 visible ASCII characters (a UUID, a ULID, a client's own scheme).
fn client_key(value: &HeaderValue) -> Result<String, ApiError> {
    let refused = || {
        ApiError::validation(
            "Idempotency-Key",
            format!("must be 1 to {MAX_KEY_CHARS} visible ASCII characters (no spaces)"),
        )
    };
    let text = value.to_str().map_err(|_| refused())?;
    if text.is_empty() || text.len() > MAX_KEY_CHARS || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(refused());
    }
    Ok(text.to_owned())
}

/// What makes two requests the same request: method, path and body, byte for byte.
fn fingerprint(request: &axum::http::request::Parts, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    for part in [request.method.as_str().as_bytes(), request.uri.path().as_bytes(), body] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// An answer as stored: status, content type and body.
async fn encode(response: Response) -> Answered {
    let (parts, body) = response.into_parts();
    let status = parts.status;
    let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let answer = json!({
        "status": status.as_u16(),
        "content_type": content_type,
        "body": String::from_utf8_lossy(&bytes),
    });
    Answered { answer: answer.to_string().into_bytes(), changed_nothing: !status.is_success() }
}

fn decode(answer: &[u8], replayed: bool) -> Response {
    let stored: Option<(StatusCode, String, String)> =
        serde_json::from_slice::<Value>(answer).ok().and_then(|v| {
            let status = StatusCode::from_u16(u16::try_from(v["status"].as_u64()?).ok()?).ok()?;
            Some((status, v["content_type"].as_str()?.to_owned(), v["body"].as_str()?.to_owned()))
        });
    let Some((status, content_type, body)) = stored else {
        tracing::error!("a stored idempotent answer does not decode");
        return ApiError::new(ErrorCode::Internal, "the request could not be completed").into_response();
    };
    let mut response = (status, body).into_response();
    if let Ok(value) = HeaderValue::from_str(&content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    if replayed {
        response.headers_mut().insert(HeaderName::from_static(REPLAYED), HeaderValue::from_static("true"));
    }
    response
}

/// The layer on the four retryable writes.
pub(crate) async fn idempotent(
    State(layer): State<IdempotencyLayer>,
    request: Request,
    next: Next,
) -> Response {
    let Some(value) = request.headers().get(HEADER) else {
        return next.run(request).await;
    };
    let key = match client_key(value) {
        Ok(key) => key,
        Err(refused) => return refused.into_response(),
    };
    let (mut parts, body) = request.into_parts();
    // Only a host key calls these routes; for any other caller the handler answers as usual.
    let host_key = match caller(&mut parts, &layer.state).await {
        Ok(Caller::Host { key_id, .. }) => key_id,
        _ => return next.run(Request::from_parts(parts, body)).await,
    };
    let bytes: Bytes = match Limited::new(body, layer.body_limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            return ApiError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
                .into_response();
        }
        Err(_) => return ApiError::validation("body", "the request body could not be read").into_response(),
    };
    let asserted = serde_json::from_slice::<Asserted>(&bytes).ok().and_then(|a| {
        Some((AgentId::new(a.principal.agent_id).ok()?, UserId::new(a.principal.user_id).ok()?))
    });
    let Some((agent_id, user_id)) = asserted else {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    let fingerprint = fingerprint(&parts, &bytes);
    let request = Request::from_parts(parts, Body::from(bytes));
    let key = IdempotencyKey { host_key, agent_id, user_id, key };
    let ran = layer
        .state
        .services
        .idempotency
        .run(key, fingerprint, async move { encode(next.run(request).await).await })
        .await;
    match ran {
        Ok(Idempotent::Ran(answer)) => decode(&answer, false),
        Ok(Idempotent::Replayed(answer)) => decode(&answer, true),
        Ok(Idempotent::Reused) => ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key was used for another request; send a new key with a new request",
        )
        .into_response(),
        Ok(Idempotent::InFlight) => ApiError::new(
            ErrorCode::Conflict,
            "a request with this Idempotency-Key is still being processed; retry once it has answered",
        )
        .into_response(),
        Err(error) => ApiError::from(error).into_response(),
    }
}
