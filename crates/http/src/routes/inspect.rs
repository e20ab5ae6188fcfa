//! What an operator browses with the admin key (the inspector's API): records by scope,
//! status and words; one record in full; the search log; a search as a named principal;
//! sessions and their profiles; conflicts; the operations status. Every list is one page,
//! newest first, filtered by the store.

use axum::Json;
use axum::extract::{Path, State};
use retold_domain::{PageRequest, RecordBrowse, RecordId, Scope, Status};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::AdminKey;
use crate::dto::{EventDto, ProfileDto, RecordDetailDto, RecordDto, SearchBody, SearchResponseDto, field};
use crate::error::{ApiError, ApiResult};
use crate::routes::{Valid, ValidQuery};
use crate::state::AppState;

/// Most items one page holds.
const MAX_PAGE: u32 = 200;

fn page(limit: Option<u32>, offset: Option<u32>) -> Result<PageRequest, ApiError> {
    let limit = limit.unwrap_or(50);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::validation("limit", format!("must be 1 to {MAX_PAGE}")));
    }
    let offset = offset.unwrap_or(0);
    if offset > 1_000_000 {
        return Err(ApiError::validation("offset", "must be at most 1000000"));
    }
    Ok(PageRequest { limit: limit as usize, offset: offset as usize })
}

/// One page of a list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageQuery {
    /// Most items (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Items to skip (default 0).
    #[param(minimum = 0, maximum = 1000000)]
    offset: Option<u32>,
}

/// Which records to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordsQuery {
    /// One scope (`user:jo`, `agent:assistant/jo`, ...).
    #[param(max_length = 300)]
    scope: Option<String>,
    /// provisional, confirmed, superseded, expired or deleted.
    #[param(max_length = 16)]
    status: Option<String>,
    /// Words the record holds (each word or the start of one, in its content, subject or
    /// aliases), or a record id.
    #[param(max_length = 200)]
    q: Option<String>,
    /// Most records (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Records to skip (default 0).
    #[param(minimum = 0, maximum = 1000000)]
    offset: Option<u32>,
}

/// A page of records and how many match in all.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RecordPageDto {
    pub(crate) records: Vec<RecordDto>,
    /// How many match, counted up to 10,000.
    pub(crate) total: u64,
    /// More than `total` match (the count stopped at 10,000).
    pub(crate) more: bool,
}

/// List records by scope, status and words, newest first.
#[utoipa::path(
    get, path = "/v1/admin/records", operation_id = "record_list", tag = "admin",
    params(RecordsQuery),
    responses(
        (status = 200, description = "One page", body = RecordPageDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn record_list(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<RecordsQuery>,
) -> ApiResult<Json<RecordPageDto>> {
    let filter = RecordBrowse {
        scope: query.scope.map(|s| field("scope", Scope::parse(&s))).transpose()?,
        status: query.status.map(|s| field("status", Status::parse(&s))).transpose()?,
        text: query.q.filter(|q| !q.trim().is_empty()),
        page: page(query.limit, query.offset)?,
    };
    if filter.text.as_ref().is_some_and(|q| q.chars().count() > 200) {
        return Err(ApiError::validation("q", "at most 200 characters"));
    }
    let (records, total) = state.services.admin.browse_records(&filter).await?;
    Ok(Json(RecordPageDto {
        records: records.iter().map(RecordDto::from).collect(),
        total: total.min(retold_domain::COUNT_CAP),
        more: total > retold_domain::COUNT_CAP,
    }))
}

/// One record in full, whatever its scope: links, conflicts, supersession chain.
#[utoipa::path(
    get, path = "/v1/admin/records/{id}", operation_id = "record_inspect", tag = "admin",
    params(("id" = String, Path, description = "The record id")),
    responses(
        (status = 200, description = "The record", body = RecordDetailDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn record_inspect(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<RecordDetailDto>> {
    let record = RecordId::new(id.clone())
        .map_err(|_| retold_domain::DomainError::NotFound { what: "record", id: id.clone() })?;
    let details = state.services.retriever.inspect(&[record]).await?;
    let detail = details.first().ok_or(retold_domain::DomainError::NotFound { what: "record", id })?;
    Ok(Json(crate::routes::tools::detail_dto(detail)))
}

/// One search of the search log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SearchSummaryDto {
    pub(crate) id: String,
    pub(crate) at: chrono::DateTime<chrono::Utc>,
    pub(crate) agent_id: String,
    pub(crate) user_id: String,
    pub(crate) query: String,
    pub(crate) eligible_count: u64,
    /// Results returned.
    pub(crate) results: u64,
    /// The search's duration in microseconds.
    pub(crate) total_us: u64,
}

/// Searches, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SearchListDto {
    pub(crate) searches: Vec<SearchSummaryDto>,
}

/// The search log, newest first (`GET /v1/admin/search-log/{id}` explains each).
#[utoipa::path(
    get, path = "/v1/admin/search-log", operation_id = "search_list", tag = "admin",
    params(PageQuery),
    responses(
        (status = 200, description = "One page", body = SearchListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn search_list(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<PageQuery>,
) -> ApiResult<Json<SearchListDto>> {
    let searches = state.services.admin.recent_searches(page(query.limit, query.offset)?).await?;
    Ok(Json(SearchListDto {
        searches: searches
            .into_iter()
            .map(|s| SearchSummaryDto {
                id: s.id.to_string(),
                at: s.at,
                agent_id: s.agent_id.to_string(),
                user_id: s.user_id.to_string(),
                query: s.query,
                eligible_count: s.eligible_count,
                results: s.results,
                total_us: s.total_us,
            })
            .collect(),
    }))
}

/// Search as the principal the body names, with that principal's grants (the operator's
/// "try a search"); logged like any search.
#[utoipa::path(
    post, path = "/v1/admin/search", operation_id = "search_as", tag = "admin",
    request_body = SearchBody,
    responses(
        (status = 200, description = "The results", body = SearchResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn search_as(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<SearchBody>,
) -> ApiResult<Json<SearchResponseDto>> {
    let principal = crate::auth::principal_of(&body.principal)?;
    crate::routes::tools::search_as(&state, &principal, body).await.map(Json)
}

/// A session and how many turns it holds.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SessionSummaryDto {
    pub(crate) id: String,
    pub(crate) agent_id: String,
    pub(crate) user_id: String,
    pub(crate) project_id: Option<String>,
    pub(crate) started_at: chrono::DateTime<chrono::Utc>,
    pub(crate) ended_at: Option<chrono::DateTime<chrono::Utc>>,
    #[schema(minimum = 0)]
    pub(crate) turns: u32,
}

/// Sessions, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SessionListDto {
    pub(crate) sessions: Vec<SessionSummaryDto>,
}

/// Sessions, newest first.
#[utoipa::path(
    get, path = "/v1/admin/sessions", operation_id = "session_list", tag = "admin",
    params(PageQuery),
    responses(
        (status = 200, description = "One page", body = SessionListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_list(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<PageQuery>,
) -> ApiResult<Json<SessionListDto>> {
    let sessions = state.services.admin.recent_sessions(page(query.limit, query.offset)?).await?;
    Ok(Json(SessionListDto {
        sessions: sessions
            .into_iter()
            .map(|s| SessionSummaryDto {
                id: s.session.id.to_string(),
                agent_id: s.session.agent_id.to_string(),
                user_id: s.session.user_id.to_string(),
                project_id: s.session.project_id.map(|p| p.to_string()),
                started_at: s.session.started_at,
                ended_at: s.session.ended_at,
                turns: s.turns,
            })
            .collect(),
    }))
}

/// The profile a session started with.
#[utoipa::path(
    get, path = "/v1/admin/sessions/{id}/profile", operation_id = "session_profile_inspect", tag = "admin",
    params(("id" = String, Path, description = "The session id")),
    responses(
        (status = 200, description = "The profile", body = ProfileDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_profile(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<ProfileDto>> {
    Ok(Json(ProfileDto::of(&state.services.admin.session_profile(&id).await?)))
}

/// A conflict with both records.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ConflictPairDto {
    /// The record that stays the normal result.
    pub(crate) record: RecordDto,
    /// The lower-trust record that contradicts it.
    pub(crate) conflicting: RecordDto,
}

/// Conflicts, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ConflictListDto {
    pub(crate) conflicts: Vec<ConflictPairDto>,
}

/// Conflicts between records of one current fact, newest first.
#[utoipa::path(
    get, path = "/v1/admin/conflicts", operation_id = "conflict_list", tag = "admin",
    params(PageQuery),
    responses(
        (status = 200, description = "One page", body = ConflictListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn conflict_list(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<PageQuery>,
) -> ApiResult<Json<ConflictListDto>> {
    let pairs = state.services.admin.conflicts(page(query.limit, query.offset)?).await?;
    Ok(Json(ConflictListDto {
        conflicts: pairs
            .iter()
            .map(|(record, conflicting)| ConflictPairDto {
                record: RecordDto::from(record),
                conflicting: RecordDto::from(conflicting),
            })
            .collect(),
    }))
}

/// A snapshot file.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SnapshotFileDto {
    pub(crate) name: String,
    pub(crate) bytes: u64,
    pub(crate) modified_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Snapshots on disk and the latest operations.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct OpsStatusDto {
    /// Newest first.
    pub(crate) snapshots: Vec<SnapshotFileDto>,
    /// The latest operation events, up to five of each kind (expiry runs, snapshots,
    /// erasures, retention, re-embedding, model switches), newest first.
    pub(crate) events: Vec<EventDto>,
}

/// The operations status: snapshots on disk and the latest operations.
#[utoipa::path(
    get, path = "/v1/admin/ops/status", operation_id = "ops_status", tag = "operations",
    responses(
        (status = 200, description = "The status", body = OpsStatusDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_status(State(state): State<AppState>, _: AdminKey) -> ApiResult<Json<OpsStatusDto>> {
    let status = state.services.operations.status(5).await?;
    Ok(Json(OpsStatusDto {
        snapshots: status
            .snapshots
            .into_iter()
            .map(|s| SnapshotFileDto { name: s.name, bytes: s.bytes, modified_at: s.modified_at })
            .collect(),
        events: crate::routes::admin::event_list(status.events).events,
    }))
}
