//! Admin endpoints: grants, entities and aliases, host keys, audit history, search traces.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use retold_domain::{
    AgentId, AuditEvent, Entity, EntityId, EntityKind, EntityStatus, EntityStore, EventId, Grant, GrantId,
    GrantStore, Name, RecordId, RecordStore, Scope, SearchId, SearchLogStore, SessionId, SessionStore,
};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::{AdminKey, hash_key, new_key};
use crate::dto::{
    AliasBody, EntityBody, EntityDto, EventDto, EventListDto, ExtractionReportDto, ExtractionRunBody,
    ExtractionRunDto, GrantBody, GrantDto, GrantListDto, HostKeyBody, HostKeyDto, MergeBody, field,
};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::routes::Valid;
use crate::state::AppState;

pub(crate) fn admin_event(state: &AppState, kind: &str, details: &[(&str, String)]) -> AuditEvent {
    AuditEvent {
        id: EventId::from_body(&state.ids.next_body()).expect("generated ids are valid"),
        at: state.clock.now(),
        kind: kind.to_owned(),
        record_id: None,
        actor: None,
        details: details.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect::<BTreeMap<_, _>>(),
    }
}

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
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem),
        (status = 422, description = "validation_failed (including grants on private agent scopes)", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<GrantBody>,
) -> ApiResult<(StatusCode, Json<GrantDto>)> {
    let grant = Grant {
        id: GrantId::from_body(&state.ids.next_body()).expect("generated ids are valid"),
        agent_id: field("agent_id", AgentId::new(body.agent_id))?,
        scope: field("scope", Scope::parse(&body.scope))?,
        can_read: body.can_read,
        can_write: body.can_write,
    };
    if !grant.can_read && !grant.can_write {
        return Err(ApiError::validation("can_read", "a grant must allow reading or writing"));
    }
    retold_policy::validate_new_grant(&grant).map_err(|e| ApiError::validation("scope", e.to_string()))?;
    let event = admin_event(
        &state,
        "grant.created",
        &[("grant_id", grant.id.to_string()), ("scope", grant.scope.to_string())],
    );
    state.store.put_grant(grant.clone(), event).await?;
    Ok((StatusCode::CREATED, Json(grant_dto(&grant))))
}

/// Filter for listing grants.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
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
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_list(
    State(state): State<AppState>,
    _: AdminKey,
    Query(query): Query<GrantQuery>,
) -> ApiResult<Json<GrantListDto>> {
    let agent = field("agent_id", AgentId::new(query.agent_id))?;
    let grants = state.store.grants_for(&agent).await?;
    Ok(Json(GrantListDto { grants: grants.iter().map(grant_dto).collect() }))
}

/// Revoke a grant.
#[utoipa::path(
    delete, path = "/v1/admin/grants/{id}", operation_id = "grant_revoke", tag = "admin",
    params(("id" = String, Path, description = "The grant id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn grant_revoke(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = GrantId::new(id).map_err(|_| ApiError::new(ErrorCode::NotFound, "grant not found"))?;
    let event = admin_event(&state, "grant.revoked", &[("grant_id", id.to_string())]);
    state.store.revoke_grant(&id, event).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn entity_dto(state: &AppState, entity: &Entity) -> ApiResult<EntityDto> {
    let aliases = state.store.aliases(&entity.id).await?;
    Ok(EntityDto {
        id: entity.id.to_string(),
        kind: entity.kind.as_str().into(),
        canonical_name: entity.canonical_name.to_string(),
        scope: entity.scope.to_string(),
        status: entity.status.as_str().into(),
        aliases: aliases.iter().map(ToString::to_string).collect(),
    })
}

/// Create an entity with aliases.
#[utoipa::path(
    post, path = "/v1/admin/entities", operation_id = "entity_create", tag = "admin",
    request_body = EntityBody,
    responses(
        (status = 201, description = "The entity", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<EntityBody>,
) -> ApiResult<(StatusCode, Json<EntityDto>)> {
    let entity = Entity {
        id: EntityId::from_body(&state.ids.next_body().to_lowercase()).expect("generated ids are valid"),
        kind: field("kind", EntityKind::parse(&body.kind))?,
        canonical_name: field("canonical_name", Name::new(&body.canonical_name))?,
        scope: field("scope", Scope::parse(&body.scope))?,
        status: EntityStatus::Confirmed,
        merged_into: None,
        created_at: state.clock.now(),
    };
    let aliases =
        body.aliases.iter().map(|a| field("aliases", Name::new(a))).collect::<Result<Vec<_>, _>>()?;
    let event = admin_event(&state, "entity.created", &[("entity_id", entity.id.to_string())]);
    state.store.create_entity(entity.clone(), aliases, event).await?;
    Ok((StatusCode::CREATED, Json(entity_dto(&state, &entity).await?)))
}

async fn existing_entity(state: &AppState, id: &str) -> ApiResult<Entity> {
    let id =
        EntityId::new(id.to_owned()).map_err(|_| ApiError::new(ErrorCode::NotFound, "entity not found"))?;
    state
        .store
        .entity(&id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("entity {id} not found")))
}

/// Add an alias; every FTS row of a linked record is rewritten.
#[utoipa::path(
    post, path = "/v1/admin/entities/{id}/aliases", operation_id = "entity_add_alias", tag = "admin",
    params(("id" = String, Path, description = "The entity id")),
    request_body = AliasBody,
    responses(
        (status = 200, description = "The entity with its aliases", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_add_alias(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
    Valid(body): Valid<AliasBody>,
) -> ApiResult<Json<EntityDto>> {
    let entity = existing_entity(&state, &id).await?;
    let alias = field("alias", Name::new(&body.alias))?;
    let event = admin_event(&state, "entity.alias_added", &[("entity_id", id), ("alias", alias.to_string())]);
    state.store.add_alias(&entity.id, alias, event).await?;
    Ok(Json(entity_dto(&state, &entity).await?))
}

/// Merge one entity into another: links and aliases move, FTS rows are rewritten.
#[utoipa::path(
    post, path = "/v1/admin/entities/merge", operation_id = "entity_merge", tag = "admin",
    request_body = MergeBody,
    responses(
        (status = 200, description = "The surviving entity", body = EntityDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
        (status = 409, description = "conflict", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn entity_merge(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<MergeBody>,
) -> ApiResult<Json<EntityDto>> {
    let from = existing_entity(&state, &body.from).await?;
    let into = existing_entity(&state, &body.into).await?;
    let event =
        admin_event(&state, "entity.merged", &[("from", from.id.to_string()), ("into", into.id.to_string())]);
    state.store.merge(&from.id, &into.id, event).await?;
    Ok(Json(entity_dto(&state, &into).await?))
}

/// Create a host key (shown once, stored hashed).
#[utoipa::path(
    post, path = "/v1/admin/host-keys", operation_id = "host_key_create", tag = "admin",
    request_body = HostKeyBody,
    responses(
        (status = 201, description = "The key; store it now, it is not shown again", body = HostKeyDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn host_key_create(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<HostKeyBody>,
) -> ApiResult<(StatusCode, Json<HostKeyDto>)> {
    for agent in &body.agents {
        field("agents", AgentId::new(agent.clone()))?;
    }
    let key = new_key("rtk").map_err(|e| ApiError::from(retold_domain::DomainError::backend("random", e)))?;
    let record = retold_store_sqlite::ApiKeyRecord {
        id: format!("key_{}", state.ids.next_body()),
        name: body.name,
        role: "host".into(),
        agents: body.agents,
    };
    state
        .store
        .put_api_key(&record, &hash_key(&key), state.clock.now())
        .await
        .map_err(|e| ApiError::from(retold_domain::DomainError::from(e)))?;
    Ok((
        StatusCode::CREATED,
        Json(HostKeyDto { id: record.id, name: record.name, key, agents: record.agents }),
    ))
}

/// The audit history of a record.
#[utoipa::path(
    get, path = "/v1/admin/records/{id}/events", operation_id = "record_events", tag = "admin",
    params(("id" = String, Path, description = "The record id")),
    responses(
        (status = 200, description = "Events, oldest first", body = EventListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn record_events(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<EventListDto>> {
    let id = RecordId::new(id).map_err(|_| ApiError::new(ErrorCode::NotFound, "record not found"))?;
    if state.store.get(&id).await?.is_none() {
        return Err(ApiError::new(ErrorCode::NotFound, format!("record {id} not found")));
    }
    let events = state.store.events_of(&id).await?;
    Ok(Json(event_list(events)))
}

fn event_list(events: Vec<AuditEvent>) -> EventListDto {
    EventListDto {
        events: events
            .into_iter()
            .map(|e| EventDto {
                id: e.id.to_string(),
                at: e.at,
                kind: e.kind,
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
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_events(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<EventListDto>> {
    let not_found = || ApiError::new(ErrorCode::NotFound, format!("session {id} not found"));
    let session = SessionId::new(id.clone()).map_err(|_| not_found())?;
    if state.store.session(&session).await?.is_none() {
        return Err(not_found());
    }
    Ok(Json(event_list(state.store.session_events(&session).await?)))
}

/// Run session extraction now, for one session or for ended sessions nobody has extracted
/// yet; each session is still extracted at most once.
#[utoipa::path(
    post, path = "/v1/admin/extractions/run", operation_id = "extraction_run", tag = "admin",
    request_body = ExtractionRunBody,
    responses(
        (status = 200, description = "One report per session", body = ExtractionRunDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
        (status = 409, description = "conflict (session extraction is off)", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn extraction_run(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<ExtractionRunBody>,
) -> ApiResult<Json<ExtractionRunDto>> {
    let Some(runner) = &state.extraction else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("session extraction is {}", state.extraction_status),
        ));
    };
    let session = match &body.session_id {
        Some(id) => {
            let not_found = || ApiError::new(ErrorCode::NotFound, format!("session {id} not found"));
            let session = SessionId::new(id.clone()).map_err(|_| not_found())?;
            if state.store.session(&session).await?.is_none() {
                return Err(not_found());
            }
            Some(session)
        }
        None => None,
    };
    // Runs are their own task: cancelling the request must not abandon a claimed session.
    let (runner, limit) = (runner.clone(), body.limit.unwrap_or(16));
    let runs = state
        .tasks
        .spawn(async move {
            match session {
                Some(session) => {
                    let run = runner.run(&session).await;
                    Ok(vec![(session, run)])
                }
                None => runner.run_pending(limit).await,
            }
        })
        .await
        .map_err(|e| {
            ApiError::from(retold_domain::DomainError::backend("extraction task", e.to_string()))
        })??;
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
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn search_trace(
    State(state): State<AppState>,
    _: AdminKey,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let id = SearchId::new(id).map_err(|_| ApiError::new(ErrorCode::NotFound, "trace not found"))?;
    let (_, _, json) = state
        .store
        .trace(&id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("trace {id} not found")))?;
    let value = serde_json::from_str(&json)
        .map_err(|e| ApiError::from(retold_domain::DomainError::backend("search_log", e)))?;
    Ok(Json(value))
}
