//! Admin endpoints: grants, entities and aliases, host keys, audit history, search traces.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use retold_app::EntityView;
use retold_domain::{AgentId, AuditEvent, EntityKind, Grant, Name, Scope};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::AdminKey;
use crate::dto::{
    AliasBody, EntityBody, EntityDto, EventDto, EventListDto, ExtractionReportDto, ExtractionRunBody,
    ExtractionRunDto, GrantBody, GrantDto, GrantListDto, HostKeyBody, HostKeyDto, MergeBody, field,
};
use crate::error::{ApiError, ApiResult};
use crate::routes::{Valid, ValidQuery};
use crate::state::AppState;

fn grant_dto(g: &Grant) -> GrantDto {
    GrantDto {
        id: g.id.to_string(),
        agent_id: g.agent_id.to_string(),
        scope: g.scope.to_string(),
        can_read: g.can_read,
        can_write: g.can_write,
    }
}

/// Give an agent read and/or write access to one scope.
#[utoipa::path(
    post, path = "/v1/admin/grants", operation_id = "grant_create", tag = "admin",
    request_body = GrantBody,
    responses(
        (status = 201, description = "The grant", body = GrantDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed (including grants on private agent scopes)", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<GrantBody>,
) -> ApiResult<(StatusCode, Json<GrantDto>)> {
    let grant = state
        .services
        .admin
        .create_grant(
            field("agent_id", AgentId::new(body.agent_id))?,
            field("scope", Scope::parse(&body.scope))?,
            body.can_read,
            body.can_write,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(grant_dto(&grant))))
}

/// Filter for listing grants.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrantQuery {
    /// The agent whose grants to list.
    agent_id: String,
}

/// List an agent's grants.
#[utoipa::path(
    get, path = "/v1/admin/grants", operation_id = "grant_list", tag = "admin",
    params(GrantQuery),
    responses(
        (status = 200, description = "The grants", body = GrantListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_list(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<GrantQuery>,
) -> ApiResult<Json<GrantListDto>> {
    let agent = field("agent_id", AgentId::new(query.agent_id))?;
    let grants = state.services.admin.grants(&agent).await?;
    Ok(Json(GrantListDto { grants: grants.iter().map(grant_dto).collect() }))
}

/// Revoke a grant.
#[utoipa::path(
    delete, path = "/v1/admin/grants/{id}", operation_id = "grant_revoke", tag = "admin",
    params(("id" = String, Path, description = "The grant id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_revoke(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    state.services.admin.revoke_grant(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn entity_dto(view: EntityView) -> EntityDto {
    let EntityView { entity, aliases } = view;
    EntityDto {
        id: entity.id.to_string(),
        kind: entity.kind.as_str().into(),
        canonical_name: entity.canonical_name.to_string(),
        scope: entity.scope.to_string(),
        status: entity.status.as_str().into(),
        aliases: aliases.iter().map(ToString::to_string).collect(),
    }
}

/// Create an entity with aliases.
#[utoipa::path(
    post, path = "/v1/admin/entities", operation_id = "entity_create", tag = "admin",
    request_body = EntityBody,
    responses(
        (status = 201, description = "The entity", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<EntityBody>,
) -> ApiResult<(StatusCode, Json<EntityDto>)> {
    let kind = field("kind", EntityKind::parse(&body.kind))?;
    let name = field("canonical_name", Name::new(&body.canonical_name))?;
    let scope = field("scope", Scope::parse(&body.scope))?;
    let aliases =
        body.aliases.iter().map(|a| field("aliases", Name::new(a))).collect::<Result<Vec<_>, _>>()?;
    let view = state.services.admin.create_entity(kind, name, scope, aliases).await?;
    Ok((StatusCode::CREATED, Json(entity_dto(view))))
}

/// Add an alias; every FTS row of a linked record is rewritten.
#[utoipa::path(
    post, path = "/v1/admin/entities/{id}/aliases", operation_id = "entity_add_alias", tag = "admin",
    params(("id" = String, Path, description = "The entity id")),
    request_body = AliasBody,
    responses(
        (status = 200, description = "The entity with its aliases", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_add_alias(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
    Valid(body): Valid<AliasBody>,
) -> ApiResult<Json<EntityDto>> {
    let alias = field("alias", Name::new(&body.alias))?;
    Ok(Json(entity_dto(state.services.admin.add_alias(&id, alias).await?)))
}

/// Merge one entity into another: links and aliases move, FTS rows are rewritten.
#[utoipa::path(
    post, path = "/v1/admin/entities/merge", operation_id = "entity_merge", tag = "admin",
    request_body = MergeBody,
    responses(
        (status = 200, description = "The surviving entity", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_merge(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<MergeBody>,
) -> ApiResult<Json<EntityDto>> {
    Ok(Json(entity_dto(state.services.admin.merge_entities(&body.from, &body.into).await?)))
}

/// Create a host key (shown once, stored hashed).
#[utoipa::path(
    post, path = "/v1/admin/host-keys", operation_id = "host_key_create", tag = "admin",
    request_body = HostKeyBody,
    responses(
        (status = 201, description = "The key; store it now, it is not shown again", body = HostKeyDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn host_key_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<HostKeyBody>,
) -> ApiResult<(StatusCode, Json<HostKeyDto>)> {
    let agents =
        body.agents.into_iter().map(|a| field("agents", AgentId::new(a))).collect::<Result<Vec<_>, _>>()?;
    let key = state.services.admin.create_host_key(body.name, agents).await?;
    Ok((
        StatusCode::CREATED,
        Json(HostKeyDto {
            id: key.info.id,
            name: key.info.name,
            key: key.secret,
            agents: key.info.agents.iter().map(ToString::to_string).collect(),
        }),
    ))
}

/// The audit history of a record.
#[utoipa::path(
    get, path = "/v1/admin/records/{id}/events", operation_id = "record_events", tag = "admin",
    params(("id" = String, Path, description = "The record id")),
    responses(
        (status = 200, description = "Events, oldest first", body = EventListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn record_events(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<EventListDto>> {
    Ok(Json(event_list(state.services.admin.record_events(&id).await?)))
}

pub(crate) fn event_list(events: Vec<AuditEvent>) -> EventListDto {
    EventListDto {
        events: events
            .into_iter()
            .map(|e| EventDto {
                id: e.id.to_string(),
                at: e.at,
                kind: e.kind.as_str().to_owned(),
                record_id: e.record_id.map(|r| r.to_string()),
                actor: e.actor.map(|a| a.to_string()),
                details: e.details,
            })
            .collect(),
    }
}

/// The audit events of a session: start, end, and its extraction run (prompt versions,
/// models, every candidate's review and write, token usage) or failure.
#[utoipa::path(
    get, path = "/v1/admin/sessions/{id}/events", operation_id = "session_events", tag = "admin",
    params(("id" = String, Path, description = "The session id")),
    responses(
        (status = 200, description = "Events, oldest first", body = EventListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_events(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<EventListDto>> {
    Ok(Json(event_list(state.services.admin.session_events(&id).await?)))
}

/// Run session extraction now, for one session or for ended sessions nobody has extracted
/// yet; each session is still extracted at most once.
#[utoipa::path(
    post, path = "/v1/admin/extractions/run", operation_id = "extraction_run", tag = "admin",
    request_body = ExtractionRunBody,
    responses(
        (status = 200, description = "One report per session", body = ExtractionRunDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (session extraction is off)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn extraction_run(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<ExtractionRunBody>,
) -> ApiResult<Json<ExtractionRunDto>> {
    let runs =
        state.services.admin.run_extraction(body.session_id.as_deref(), body.limit.unwrap_or(16)).await?;
    let reports =
        runs.into_iter().map(|(session, run)| ExtractionReportDto::from_run(&session, run)).collect();
    Ok(Json(ExtractionRunDto { reports }))
}

/// One search_log trace: every channel's candidates, the fused order, every drop and the
/// per-stage timings.
#[utoipa::path(
    get, path = "/v1/admin/search-log/{id}", operation_id = "search_trace", tag = "admin",
    params(("id" = String, Path, description = "The search id from a memory_search response")),
    responses(
        (status = 200, description = "The trace (JSON object)", body = Object),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn search_trace(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let json = state.services.admin.trace(&id).await?;
    let value = serde_json::from_str(&json)
        .map_err(|e| ApiError::from(retold_domain::DomainError::backend("search_log", e)))?;
    Ok(Json(value))
}

/// One orchestrator decision: disposition and reason, gaps, searches, admitted records,
/// per-stage timings, tokens, bundle, and the regenerated answer when there is one.
#[utoipa::path(
    get, path = "/v1/admin/decisions/{id}", operation_id = "decision_get", tag = "admin",
    params(("id" = String, Path, description = "The decision id")),
    responses(
        (status = 200, description = "The decision", body = crate::dto::DecisionDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn decision_get(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<crate::dto::DecisionDto>> {
    let decision = state.services.admin.decision(&id).await?;
    Ok(Json(crate::dto::DecisionDto::of(&decision)))
}

/// A session's transcript: every turn the host appended, in turn order.
#[utoipa::path(
    get, path = "/v1/admin/sessions/{id}/turns", operation_id = "session_turns", tag = "admin",
    params(("id" = String, Path, description = "The session id")),
    responses(
        (status = 200, description = "The turns, in order", body = crate::dto::TranscriptDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_turns(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<crate::dto::TranscriptDto>> {
    let turns = state.services.admin.session_turns(&id).await?;
    Ok(Json(crate::dto::TranscriptDto {
        session_id: id,
        turns: turns
            .into_iter()
            .map(|t| crate::dto::TranscriptTurnDto {
                turn: t.turn,
                role: t.role.as_str().to_owned(),
                speaker: t.speaker.map(|s| s.as_str().to_owned()),
                content: t.content,
                at: t.at,
                created_at: t.created_at,
            })
            .collect(),
    }))
}

/// A session's orchestrator decisions, oldest first.
#[utoipa::path(
    get, path = "/v1/admin/sessions/{id}/decisions", operation_id = "session_decisions", tag = "admin",
    params(("id" = String, Path, description = "The session id")),
    responses(
        (status = 200, description = "The decisions", body = crate::dto::DecisionListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_decisions(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<crate::dto::DecisionListDto>> {
    let decisions = state.services.admin.session_decisions(&id).await?;
    Ok(Json(crate::dto::DecisionListDto {
        decisions: decisions.iter().map(crate::dto::DecisionDto::of).collect(),
    }))
}
