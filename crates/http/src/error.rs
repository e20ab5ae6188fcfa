//! The one table that turns errors into HTTP statuses and stable codes (problem+json).
//! Internal error text is logged here and never sent to clients.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use retold_domain::DomainError;
use serde::Serialize;
use utoipa::ToSchema;

/// Every error code a client can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    ScopeNotWritable,
    EntityAmbiguous,
    NotFound,
    ValidationFailed,
    Unauthorized,
    Forbidden,
    Conflict,
    /// An `Idempotency-Key` sent again with another request (method, path or body).
    IdempotencyKeyReused,
    PayloadTooLarge,
    /// The store's disk is full: nothing was written, reads still work.
    StorageFull,
    /// The store's disk failed a read or write: nothing was written.
    StorageUnavailable,
    /// The request took longer than `server.request_timeout_ms`.
    Timeout,
    /// The path exists, the method does not (the `Allow` header lists those that do).
    MethodNotAllowed,
    Internal,
}

impl ErrorCode {
    /// The code, its HTTP status and its title: the whole table.
    pub fn describe(self) -> (&'static str, StatusCode, &'static str) {
        match self {
            Self::ScopeNotWritable => ("scope_not_writable", StatusCode::FORBIDDEN, "Scope not writable"),
            Self::EntityAmbiguous => ("entity_ambiguous", StatusCode::CONFLICT, "Entity name is ambiguous"),
            Self::NotFound => ("not_found", StatusCode::NOT_FOUND, "Not found"),
            Self::ValidationFailed => {
                ("validation_failed", StatusCode::UNPROCESSABLE_ENTITY, "Validation failed")
            }
            Self::Unauthorized => ("unauthorized", StatusCode::UNAUTHORIZED, "Unauthorized"),
            Self::Forbidden => ("forbidden", StatusCode::FORBIDDEN, "Forbidden"),
            Self::Conflict => ("conflict", StatusCode::CONFLICT, "Conflict"),
            Self::IdempotencyKeyReused => {
                ("idempotency_key_reused", StatusCode::CONFLICT, "Idempotency key reused")
            }
            Self::PayloadTooLarge => {
                ("payload_too_large", StatusCode::PAYLOAD_TOO_LARGE, "Payload too large")
            }
            Self::StorageFull => ("storage_full", StatusCode::INSUFFICIENT_STORAGE, "Storage full"),
            Self::StorageUnavailable => {
                ("storage_unavailable", StatusCode::SERVICE_UNAVAILABLE, "Storage unavailable")
            }
            Self::Timeout => ("timeout", StatusCode::SERVICE_UNAVAILABLE, "Request timed out"),
            Self::MethodNotAllowed => {
                ("method_not_allowed", StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
            }
            Self::Internal => ("internal", StatusCode::INTERNAL_SERVER_ERROR, "Internal error"),
        }
    }
}

/// An RFC 9457 problem document with Retold's stable `code`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the problem type (`urn:retold:error:<code>`).
    #[serde(rename = "type")]
    pub type_uri: String,
    pub title: String,
    pub status: u16,
    /// Stable error code: scope_not_writable, entity_ambiguous, not_found, validation_failed,
    /// unauthorized, forbidden, conflict, idempotency_key_reused, payload_too_large, storage_full,
    /// storage_unavailable, timeout, method_not_allowed, internal.
    pub code: String,
    pub detail: String,
    /// For validation_failed: the field that was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For entity_ambiguous: the candidate entity ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<String>>,
}

/// An error on its way to becoming a problem response.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) code: ErrorCode,
    pub(crate) detail: String,
    pub(crate) field: Option<String>,
    pub(crate) candidates: Option<Vec<String>>,
}

impl ApiError {
    pub(crate) fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self { code, detail: detail.into(), field: None, candidates: None }
    }

    pub(crate) fn validation(field: impl Into<String>, detail: impl Into<String>) -> Self {
        let field = field.into();
        Self {
            code: ErrorCode::ValidationFailed,
            detail: detail.into(),
            field: Some(field),
            candidates: None,
        }
    }

    pub(crate) fn unauthorized() -> Self {
        Self::new(ErrorCode::Unauthorized, "a valid bearer key is required")
    }
}

impl From<DomainError> for ApiError {
    fn from(error: DomainError) -> Self {
        match error {
            DomainError::Invalid { field, reason } => Self::validation(field, reason),
            DomainError::NotFound { what, id } => {
                Self::new(ErrorCode::NotFound, format!("{what} {id} not found"))
            }
            DomainError::ScopeNotWritable { scope } => {
                Self::new(ErrorCode::ScopeNotWritable, format!("{scope} is not writable"))
            }
            DomainError::EntityAmbiguous { name, candidates } => Self {
                code: ErrorCode::EntityAmbiguous,
                detail: format!("{name:?} matches several entities"),
                field: None,
                candidates: Some(candidates),
            },
            DomainError::Conflict(detail) => Self::new(ErrorCode::Conflict, detail),
            // Still contended after the write path's retries: the client may retry.
            DomainError::Contention(detail) => Self::new(ErrorCode::Conflict, detail),
            DomainError::StorageFull(detail) => {
                tracing::error!(error = %detail, "storage full");
                Self::new(ErrorCode::StorageFull, "the store is out of disk space; nothing was written")
            }
            DomainError::StorageIo(detail) => {
                tracing::error!(error = %detail, "storage I/O error");
                // SQLite's extended result code says which operation failed (a read, a write, a
                // sync, the shared-memory file), without saying anything about the data.
                let code = detail
                    .split_once("(code: ")
                    .and_then(|(_, rest)| rest.split_once(')'))
                    .map(|(code, _)| code)
                    .filter(|code| code.chars().all(|c| c.is_ascii_digit()));
                match code {
                    Some(code) => Self::new(
                        ErrorCode::StorageUnavailable,
                        format!("the store's disk failed (SQLite result code {code}); nothing was written"),
                    ),
                    None => Self::new(
                        ErrorCode::StorageUnavailable,
                        "the store's disk failed; nothing was written",
                    ),
                }
            }
            DomainError::Backend { component, source } => {
                tracing::error!(component, error = %source, "backend failure");
                Self::new(ErrorCode::Internal, "the request could not be completed")
            }
        }
    }
}

impl From<validator::ValidationErrors> for ApiError {
    fn from(errors: validator::ValidationErrors) -> Self {
        let (field, detail) = first_error("", &errors).unwrap_or_else(|| ("body".into(), "invalid".into()));
        Self::validation(field, detail)
    }
}

fn first_error(prefix: &str, errors: &validator::ValidationErrors) -> Option<(String, String)> {
    let mut entries: Vec<_> = errors.errors().iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (field, kind) in entries {
        let path = if prefix.is_empty() { field.to_string() } else { format!("{prefix}.{field}") };
        match kind {
            validator::ValidationErrorsKind::Field(list) => {
                if let Some(e) = list.first() {
                    let detail = e.message.as_ref().map(|m| m.to_string()).unwrap_or_else(|| {
                        match (e.params.get("min"), e.params.get("max")) {
                            (Some(min), Some(max)) => format!("must be between {min} and {max} ({})", e.code),
                            (None, Some(max)) => format!("must be at most {max} ({})", e.code),
                            (Some(min), None) => format!("must be at least {min} ({})", e.code),
                            (None, None) => e.code.to_string(),
                        }
                    });
                    return Some((path, detail));
                }
            }
            validator::ValidationErrorsKind::Struct(inner) => {
                if let Some(found) = first_error(&path, inner) {
                    return Some(found);
                }
            }
            validator::ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    if let Some(found) = first_error(&format!("{path}[{index}]"), inner) {
                        return Some(found);
                    }
                }
            }
        }
    }
    None
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (code, status, title) = self.code.describe();
        let problem = Problem {
            type_uri: format!("urn:retold:error:{code}"),
            title: title.to_owned(),
            status: status.as_u16(),
            code: code.to_owned(),
            detail: self.detail,
            field: self.field,
            candidates: self.candidates,
        };
        let mut response = (status, Json(problem)).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/problem+json"));
        response
    }
}

/// Error answers made by layers rather than handlers (the timeout's 503, the router's 405)
/// come without a body; give them the same problem document as every other error, keeping
/// their headers (`Allow`).
pub(crate) async fn problem_for_bare_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    let (code, detail) = match status {
        StatusCode::SERVICE_UNAVAILABLE => {
            (ErrorCode::Timeout, "the request took longer than the server allows")
        }
        StatusCode::METHOD_NOT_ALLOWED => {
            (ErrorCode::MethodNotAllowed, "this path does not take that method")
        }
        StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such endpoint"),
        _ => return response,
    };
    let (parts, _) = response.into_parts();
    let mut problem = ApiError::new(code, detail).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH {
            problem.headers_mut().entry(name).or_insert_with(|| value.clone());
        }
    }
    problem
}

/// Result alias for handlers.
pub(crate) type ApiResult<T> = Result<T, ApiError>;
