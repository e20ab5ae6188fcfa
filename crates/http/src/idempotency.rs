//! `Idempotency-Key` on the writes a client may retry after a timeout: `memory_write`,
//! `memory_revise`, `memory_forget` and `POST /v1/sessions/{id}/turns`.
//!
//! A key belongs to the host key that sent it and the principal the body asserts. The
//! handler parses, authenticates and converts the request first, so bad input is refused
//! before the key is touched and changes nothing. Then the first request with a key runs; a
//! retry with the same method, path and body gets the first answer (status and body, marked
//! `Idempotent-Replayed: true`) and runs nothing; the same key with another request is a 409
//! `idempotency_key_reused`, and while the first request is still running a 409 `conflict`.
//! Only successful answers are kept: an error changed nothing, so its key is given back and a
//! retry runs again. Keys expire after `server.idempotency_ttl_ms`. The once-per-key rule
//! and the store are `app::IdempotencyService`.

use std::future::Future;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use retold_app::{Answered, Idempotent};
use retold_domain::{IdempotencyKey, Principal};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use validator::Validate;

use crate::auth::HostKey;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::routes::Valid;
use crate::state::AppState;

/// The request header.
pub(crate) const HEADER: &str = "idempotency-key";
/// Set on an answer replayed for a retry.
pub(crate) const REPLAYED: &str = "idempotent-replayed";
/// The longest key accepted.
pub(crate) const MAX_KEY_CHARS: usize = 255;

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
fn fingerprint(method: &str, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    for part in [method.as_bytes(), path.as_bytes(), body] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// An answer as stored: status, content type and body.
async fn encode(response: Response) -> Answered {
    let (parts, body) = response.into_parts();
    let status = parts.status;
    // The handlers' bodies are in memory, so collecting cannot fail in practice; if it ever
    // does, the status is still kept (the write happened) and the loss is logged, not hidden.
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            tracing::error!(%error, %status, "an idempotent answer's body could not be read; it is kept without a body");
            Default::default()
        }
    };
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

/// The `Idempotency-Key` header, when one was sent.
#[derive(Debug)]
pub(crate) struct IdempotencyHeader(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyHeader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts.headers.get(HEADER).map(client_key).transpose().map(Self)
    }
}

/// A JSON body parsed and validated exactly like `Valid<T>`, with the request's fingerprint.
#[derive(Debug)]
pub(crate) struct Fingerprinted<T> {
    pub(crate) body: T,
    pub(crate) fingerprint: String,
}

impl<T> FromRequest<AppState> for Fingerprinted<T>
where
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        let (again, bytes) = crate::routes::read_body(request, state).await?;
        let fingerprint = fingerprint(method.as_str(), &path, &bytes);
        let request = again
            .body(axum::body::Body::from(bytes))
            .map_err(|e| ApiError::validation("body", e.to_string()))?;
        let Valid(body) = Valid::<T>::from_request(request, state).await?;
        Ok(Self { body, fingerprint })
    }
}

/// Run `request` once per idempotency key: with no key it just runs; with one, the first
/// request runs and keeps its answer, a retry gets that answer, another request under the
/// same key is refused. Called by the handler after it parsed, authenticated and converted
/// everything, so that bad input never touches the key.
pub(crate) async fn idempotent<R, F>(
    state: &AppState,
    key: &HostKey,
    principal: &Principal,
    header: IdempotencyHeader,
    fingerprint: String,
    request: F,
) -> Response
where
    R: IntoResponse,
    F: Future<Output = ApiResult<R>> + Send + 'static,
{
    let IdempotencyHeader(Some(client_key)) = header else {
        return request.await.into_response();
    };
    let key = IdempotencyKey {
        host_key: key.id().to_owned(),
        agent_id: principal.agent_id.clone(),
        user_id: principal.user_id.clone(),
        key: client_key,
    };
    let ran = state
        .services
        .idempotency
        .run(key, fingerprint, async move { encode(request.await.into_response()).await })
        .await;
    match ran {
        Ok(Idempotent::Ran(answer)) => decode(&answer, false),
        Ok(Idempotent::Replayed(answer)) => decode(&answer, true),
        Ok(Idempotent::Reused) => ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key was used for another request; send a new key with a new request",
        )
        .into_response(),
        Ok(Idempotent::InFlight) => {
            // Retry-After marks the one 409 a retry resolves (a conflict of the request
            // itself answers without it).
            let mut response = ApiError::new(
                ErrorCode::Conflict,
                "a request with this Idempotency-Key is still being processed; retry once it has answered",
            )
            .into_response();
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from_static("1"));
            response
        }
        Err(error) => ApiError::from(error).into_response(),
    }
}
