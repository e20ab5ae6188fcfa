//! Route handlers: thin, converting DTOs to domain calls and back.

pub(crate) mod admin;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod inspect;
pub(crate) mod ops;
pub(crate) mod sessions;
pub(crate) mod tools;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use validator::Validate;

use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// A JSON body that is parsed and validated, with problem+json errors naming the field.
#[derive(Debug)]
pub(crate) struct Valid<T>(pub T);

impl<T> FromRequest<AppState> for Valid<T>
where
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        // The body is read first so that after parsing it can be checked to be an object:
        // serde also reads a struct from a JSON array (`[]` would be every default).
        let (again, bytes) = read_body(request, state).await?;
        let is_object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let request = again
            .body(axum::body::Body::from(bytes))
            .map_err(|e| ApiError::validation("body", e.to_string()))?;
        let axum::Json(value) =
            axum::Json::<T>::from_request(request, state).await.map_err(|rejection| match rejection {
                JsonRejection::JsonDataError(e) => {
                    ApiError::validation(field_of(&e.body_text()), e.body_text())
                }
                JsonRejection::JsonSyntaxError(e) => ApiError::validation("body", e.body_text()),
                JsonRejection::MissingJsonContentType(e) => {
                    ApiError::validation("content-type", e.body_text())
                }
                JsonRejection::BytesRejection(e)
                    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE =>
                {
                    ApiError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
                }
                other => ApiError::validation("body", other.body_text()),
            })?;
        if !is_object {
            return Err(ApiError::validation("body", "the body must be a JSON object"));
        }
        value.validate()?;
        Ok(Self(value))
    }
}

/// Read a request's body (within the body limit) and keep what is needed to build the same
/// request around it again: method, URI, headers and extensions (the limit travels there).
pub(crate) async fn read_body(
    request: Request,
    state: &AppState,
) -> Result<(axum::http::request::Builder, axum::body::Bytes), ApiError> {
    let (parts, body) = request.into_parts();
    let mut again = axum::http::Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
    if let Some(headers) = again.headers_mut() {
        headers.clone_from(&parts.headers);
    }
    if let Some(extensions) = again.extensions_mut() {
        extensions.clone_from(&parts.extensions);
    }
    let bytes = axum::body::Bytes::from_request(Request::from_parts(parts, body), state).await.map_err(
        |rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
            } else {
                ApiError::validation("body", rejection.body_text())
            }
        },
    )?;
    Ok((again, bytes))
}

/// Most lines one JSON-lines request takes (blank lines count); `retold import` sends a file
/// in batches.
pub(crate) const MAX_JSON_LINES: usize = 1000;

/// A JSON-lines body (`application/x-ndjson` or `application/jsonl`) as UTF-8 text of at most
/// [`MAX_JSON_LINES`] lines: the imports' bodies.
pub(crate) async fn json_lines(request: Request, state: &AppState) -> Result<String, ApiError> {
    let kind = request.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let kind = kind.map(|k| k.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    if !kind.as_deref().is_some_and(|k| k == "application/x-ndjson" || k == "application/jsonl") {
        return Err(ApiError::validation(
            "content-type",
            "send JSON lines with Content-Type: application/x-ndjson (or application/jsonl)",
        ));
    }
    let (_, bytes) = read_body(request, state).await?;
    let text = String::from_utf8(bytes.to_vec()).map_err(|e| ApiError::validation("body", e.to_string()))?;
    let lines = text.lines().count();
    if lines > MAX_JSON_LINES {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("{lines} lines; at most {MAX_JSON_LINES} in one request"),
        ));
    }
    Ok(text)
}

/// A query string parsed into `T`, with problem+json errors naming the field (axum's own
/// `Query` answers a plain-text 400 the document does not list).
#[derive(Debug)]
pub(crate) struct ValidQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ValidQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) =
            axum::extract::Query::<T>::from_request_parts(parts, state).await.map_err(|rejection| {
                ApiError::validation(field_of(&rejection.body_text()), rejection.body_text())
            })?;
        Ok(Self(value))
    }
}

/// axum's data errors read `Failed to deserialize …: <path>: <serde message>`, where the
/// path is `.` at the top level (an unknown field's path already ends in its name) and serde
/// names a missing field in backticks: the field is the path, plus that name when missing.
pub(crate) fn field_of(message: &str) -> String {
    let detail = message.split_once("target type: ").map_or(message, |(_, rest)| rest);
    let (path, inner) = match detail.split_once(": ") {
        Some((path, inner)) if !path.contains(' ') => (path.trim_start_matches('.'), inner),
        _ => ("", detail),
    };
    let named = inner.starts_with("missing field").then(|| inner.split('`').nth(1)).flatten();
    match (path, named) {
        ("", Some(name)) => name.to_owned(),
        ("", None) => inner.split('`').nth(1).unwrap_or("body").to_owned(),
        (path, Some(name)) => format!("{path}.{name}"),
        (path, None) => path.to_owned(),
    }
}
