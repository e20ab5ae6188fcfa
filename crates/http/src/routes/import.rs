//! `POST /v1/memory/import`: many `memory_write` bodies in one request, one per line (JSON
//! lines), each validated and written exactly as `memory_write` would be, and at most once.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Request, State};
use retold_ingest::{ImportItem, KeyedWrite, import_key};
use validator::Validate;

use crate::auth::HostKey;
use crate::dto::{ImportItemDto, ImportResponseDto, WriteBody};
use crate::error::{ApiError, ApiResult};
use crate::routes::tools::write_request;
use crate::routes::{field_of, json_lines};
use crate::state::AppState;

/// Import memories: a body of JSON lines, each a `memory_write` body that may carry an
/// `import_id`, its id where it came from.
///
/// Every line is validated and written like one `memory_write` (scopes, evidence, entities,
/// current facts, audit), in order, with their texts embedded together; the answer has one
/// item per non-blank line. A line is written at most once per principal, scope and `import_id`
/// (without one, per its own text): sent again, as a retried or resumed import does, it
/// answers `already_imported` and writes nothing. A bad line is answered for itself and
/// never stops the others. The answer comes once every record it wrote is fully indexed.
#[utoipa::path(
    post, path = "/v1/memory/import", operation_id = "memory_import", tag = "memory tools",
    request_body(content = String, content_type = "application/x-ndjson",
        description = "At most 1000 lines, within server.body_limit_bytes: each a memory_write body (a JSON object) with an optional import_id (1 to 255 characters)."),
    responses(
        (status = 200, description = "one item per non-blank line", body = ImportResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden: an admin key (memory tools take a host key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large: more than 1000 lines, or over the body limit", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed: the body is not UTF-8 text, or its content-type is not application/x-ndjson or application/jsonl", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 503, description = "storage_full or storage_unavailable: the lines before the failing one are written; send the batch again to resume", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_import(
    State(state): State<AppState>,
    key: HostKey,
    request: Request,
) -> ApiResult<Json<ImportResponseDto>> {
    let text = json_lines(request, &state).await?;
    let lines: Vec<&str> = text.lines().collect();
    let mut answers = Vec::new();
    let mut items = Vec::new();
    let mut numbers = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match item(&key, line) {
            Ok(item) => {
                items.push(item);
                numbers.push(at + 1);
            }
            Err(error) => answers.push(refused(at + 1, "invalid", error)),
        }
    }
    let written = state.services.ingestor.import(&items).await?;
    for (line, answer) in numbers.into_iter().zip(written) {
        answers.push(match answer {
            Ok(KeyedWrite::Earlier(receipt)) => {
                ImportItemDto::written(line, "already_imported", &receipt.record_id)
            }
            Ok(KeyedWrite::Written(outcome)) => match outcome.record_id() {
                Some(id) => ImportItemDto::written(line, outcome.kind(), id),
                None => match crate::routes::tools::write_response(outcome) {
                    Err(error) => refused(line, "rejected", error),
                    Ok(_) => unreachable!("only a rejection has no record"),
                },
            },
            Err(error) => refused(line, "invalid", ApiError::from(error)),
        });
    }
    answers.sort_by_key(|a| a.line);
    let mut counts = BTreeMap::new();
    for answer in &answers {
        *counts.entry(answer.outcome.clone()).or_insert(0) += 1;
    }
    Ok(Json(ImportResponseDto { items: answers, counts }))
}

fn refused(line: usize, outcome: &str, error: ApiError) -> ImportItemDto {
    ImportItemDto {
        line,
        outcome: outcome.to_owned(),
        record_id: None,
        code: Some(error.code.describe().0.to_owned()),
        field: error.field,
        detail: Some(error.detail),
    }
}

/// One line read, validated and keyed.
fn item(key: &HostKey, line: &str) -> Result<ImportItem, ApiError> {
    let mut value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| ApiError::validation("body", e.to_string()))?;
    let object =
        value.as_object_mut().ok_or_else(|| ApiError::validation("body", "a line must be a JSON object"))?;
    let import_id = match object.remove("import_id") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(id)) if (1..=255).contains(&id.chars().count()) => Some(id),
        Some(_) => return Err(ApiError::validation("import_id", "a string of 1 to 255 characters")),
    };
    // Without an id, the line is its own: its fields in one order, whatever order it sent.
    let id = match import_id {
        Some(id) => format!("id:{id}"),
        None => format!("line:{value}"),
    };
    let body: WriteBody = serde_path_to_error::deserialize(value).map_err(|e| {
        ApiError::validation(field_of(&format!("{}: {}", e.path(), e.inner())), e.inner().to_string())
    })?;
    body.validate()?;
    let principal = key.principal(&body.principal)?;
    let request = write_request(&body)?;
    Ok(ImportItem { key: import_key(&principal, &request.scope, &id), principal, request })
}

impl ImportItemDto {
    fn written(line: usize, outcome: &str, id: &retold_domain::RecordId) -> Self {
        Self {
            line,
            outcome: outcome.to_owned(),
            record_id: Some(id.to_string()),
            code: None,
            field: None,
            detail: None,
        }
    }
}
