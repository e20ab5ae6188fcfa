//! The session buffer: start, append numbered turns, end (host key).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use retold_app::{SessionEnd, TurnInput};
use retold_domain::TurnRole;

use crate::auth::HostKey;
use crate::dto::{
    DecisionBody, DecisionDto, DecisionOutcomeDto, EndSessionBody, ExtractionReportDto, ProfileDto,
    RefusedDto, SessionBody, SessionDto, TurnBody, TurnDto, field,
};
use crate::error::ApiResult;
use crate::idempotency::{Fingerprinted, IdempotencyHeader, idempotent};
use crate::routes::Valid;
use crate::state::AppState;

/// Start a session for the principal's agent and user.
#[utoipa::path(
    post, path = "/v1/sessions", operation_id = "session_start", tag = "sessions",
    request_body = SessionBody,
    responses(
        (status = 201, description = "The session and its profile", body = SessionDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "scope_not_writable (the session's `scope`) or forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_start(
    State(state): State<AppState>,
    key: HostKey,
    Valid(body): Valid<SessionBody>,
) -> ApiResult<(StatusCode, Json<SessionDto>)> {
    let principal = key.principal(&body.principal)?;
    let tags: Vec<String> = body
        .tags
        .iter()
        .map(|t| retold_domain::Tag::new(t.clone()).map(|t| t.as_str().to_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| crate::error::ApiError::validation("tags", e.to_string()))?;
    let scope = body.scope.as_deref().map(|s| field("scope", retold_domain::Scope::parse(s))).transpose()?;
    let session = state.services.sessions.start(&principal, scope).await?;
    let profile = state.services.activation.assemble(&principal, &session, &tags).await?;
    Ok((
        StatusCode::CREATED,
        Json(SessionDto { id: session.id.to_string(), profile: ProfileDto::of(&profile) }),
    ))
}

/// Who reads a session's profile.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileQuery {
    /// The session's agent.
    agent_id: String,
    /// The session's user.
    user_id: String,
}

/// The profile a session started with, exactly as issued (it never changes).
#[utoipa::path(
    get, path = "/v1/sessions/{id}/profile", operation_id = "session_profile", tag = "sessions",
    params(("id" = String, Path, description = "The session id"), ProfileQuery),
    responses(
        (status = 200, description = "The profile", body = ProfileDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found (another principal's session answers the same)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_profile(
    State(state): State<AppState>,
    key: HostKey,
    Path(id): Path<String>,
    crate::routes::ValidQuery(query): crate::routes::ValidQuery<ProfileQuery>,
) -> ApiResult<Json<ProfileDto>> {
    let principal = key.principal(&crate::dto::PrincipalDto {
        agent_id: query.agent_id,
        user_id: query.user_id,
        project_id: None,
        session_id: None,
    })?;
    let session = state.services.sessions.own(&principal, &id).await?;
    let profile = state
        .services
        .activation
        .profile(&session.id)
        .await?
        .ok_or_else(|| retold_domain::DomainError::NotFound { what: "profile", id: id.clone() })?;
    Ok(Json(ProfileDto::of(&profile)))
}

/// Append a numbered user, assistant or tool turn.
#[utoipa::path(
    post, path = "/v1/sessions/{id}/turns", operation_id = "session_append_turn", tag = "sessions",
    params(("id" = String, Path, description = "The session id"), ("Idempotency-Key" = Option<String>, Header, description = "Optional, 1 to 255 visible ASCII characters: a retry with the same key and request gets the first successful answer (marked Idempotent-Replayed: true) and writes nothing; keys expire after server.idempotency_ttl_ms")),
    request_body = TurnBody,
    responses(
        (status = 201, description = "The turn number and, with turn memory on, the records that keep it (searchable once this answers)", body = TurnDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (the session has ended, or the first request with this Idempotency-Key is still running) or idempotency_key_reused", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_append_turn(
    State(state): State<AppState>,
    key: HostKey,
    Path(id): Path<String>,
    retry: IdempotencyHeader,
    Fingerprinted { body, fingerprint }: Fingerprinted<TurnBody>,
) -> ApiResult<Response> {
    let principal = key.principal(&body.principal)?;
    let input = TurnInput {
        role: field("role", TurnRole::parse(&body.role))?,
        content: body.content,
        speaker: body
            .speaker
            .as_deref()
            .map(|s| field("speaker", retold_domain::Name::new(s)))
            .transpose()?,
        at: body.at,
    };
    let services = state.services.clone();
    let who = principal.clone();
    Ok(idempotent(&state, &key, &principal, retry, fingerprint, async move {
        let appended = services.sessions.append(&who, &id, input).await?;
        Ok((
            StatusCode::CREATED,
            Json(TurnDto {
                turn: appended.turn,
                source_ref: appended.source_ref.to_string(),
                memory: appended.memory.status().to_owned(),
                record_ids: appended.memory.records().iter().map(ToString::to_string).collect(),
            }),
        ))
    })
    .await)
}

/// End a session. Its extraction then runs once: in the background (204), or before the
/// answer with `wait_for_extraction` (200 and the report).
#[utoipa::path(
    post, path = "/v1/sessions/{id}/end", operation_id = "session_end", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    request_body = EndSessionBody,
    responses(
        (status = 200, description = "Ended and extracted (wait_for_extraction)", body = ExtractionReportDto),
        (status = 204, description = "Ended; extraction runs in the background when it is on"),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (already ended)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_end(
    State(state): State<AppState>,
    key: HostKey,
    Path(id): Path<String>,
    Valid(body): Valid<EndSessionBody>,
) -> ApiResult<Response> {
    let principal = key.principal(&body.principal)?;
    let (session, ended) = state.services.sessions.end(&principal, &id, body.wait_for_extraction).await?;
    match (ended, body.wait_for_extraction) {
        (SessionEnd::Extracted(run), _) => {
            Ok((StatusCode::OK, Json(ExtractionReportDto::from_run(&session, run))).into_response())
        }
        (SessionEnd::ExtractionOff { status }, true) => {
            let report =
                ExtractionReportDto::status(&session, "off", format!("session extraction is {status}"));
            Ok((StatusCode::OK, Json(report)).into_response())
        }
        (SessionEnd::Background | SessionEnd::ExtractionOff { .. }, _) => {
            Ok(StatusCode::NO_CONTENT.into_response())
        }
    }
}

/// Ask whether memory would change the draft answer of a turn: gaps are planned, searched
/// and admitted against the draft and the session's profile; a bundle with a recorded
/// fitness result regenerates the answer, and any failure keeps the draft with the reason.
/// The decision is stored (`GET /v1/admin/decisions/{id}`).
#[utoipa::path(
    post, path = "/v1/sessions/{id}/decisions", operation_id = "session_decide", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    request_body = DecisionBody,
    responses(
        (status = 200, description = "The decision, the admitted records and the refusals", body = DecisionOutcomeDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found (another principal's session answers the same)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_decide(
    State(state): State<AppState>,
    key: HostKey,
    Path(id): Path<String>,
    Valid(body): Valid<DecisionBody>,
) -> ApiResult<Json<DecisionOutcomeDto>> {
    let principal = key.principal(&body.principal)?;
    let request = retold_app::orchestrator::DecisionRequest {
        turn: body.turn,
        draft: body.draft,
        deadline: body.deadline_ms.map(|ms| std::time::Duration::from_millis(ms as u64)),
    };
    let outcome = state.services.orchestrator.decide(&principal, &id, &request).await?;
    Ok(Json(DecisionOutcomeDto {
        decision: DecisionDto::of(&outcome.decision),
        admitted_records: outcome.admitted.iter().map(crate::dto::RecordDto::from).collect(),
        refused: outcome
            .refused
            .iter()
            .map(|(id, why)| RefusedDto { record_id: id.to_string(), reason: refusal_code(why).to_owned() })
            .collect(),
    }))
}

fn refusal_code(refusal: &retold_policy::Refusal) -> &'static str {
    use retold_policy::Refusal::*;
    match refusal {
        Irrelevant => "irrelevant",
        AlreadyStated => "already_stated",
        InProfile => "in_profile",
        NotEligible => "not_eligible",
        Duplicate => "duplicate",
        OverCap => "over_cap",
    }
}
