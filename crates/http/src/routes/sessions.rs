//! The session buffer: start, append numbered turns, end (host key).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use retold_domain::{Session, SessionId, SessionStore, SourceRef, TurnRole};

use crate::auth::HostKey;
use crate::dto::{EndSessionBody, ExtractionReportDto, SessionBody, SessionDto, TurnBody, TurnDto, field};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::routes::Valid;
use crate::routes::admin::admin_event;
use crate::state::AppState;

/// The session, if it belongs to the principal's agent and user; otherwise not_found.
async fn own_session(state: &AppState, id: &str, principal: &retold_domain::Principal) -> ApiResult<Session> {
    let not_found = || ApiError::new(ErrorCode::NotFound, format!("session {id} not found"));
    let session_id = SessionId::new(id.to_owned()).map_err(|_| not_found())?;
    match state.store.session(&session_id).await? {
        Some(s) if s.agent_id == principal.agent_id && s.user_id == principal.user_id => Ok(s),
        _ => Err(not_found()),
    }
}

/// Start a session for the principal's agent and user.
#[utoipa::path(
    post, path = "/v1/sessions", operation_id = "session_start", tag = "sessions",
    request_body = SessionBody,
    responses(
        (status = 201, description = "The session", body = SessionDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_start(
    State(state): State<AppState>,
    key: HostKey,
    Valid(body): Valid<SessionBody>,
) -> ApiResult<(StatusCode, Json<SessionDto>)> {
    let principal = key.principal(&body.principal)?;
    let session = Session {
        id: SessionId::from_body(&state.ids.next_body()).expect("generated ids are valid"),
        agent_id: principal.agent_id.clone(),
        user_id: principal.user_id.clone(),
        project_id: principal.project_id.clone(),
        started_at: state.clock.now(),
        ended_at: None,
    };
    let mut event = admin_event(&state, "session.started", &[("session_id", session.id.to_string())]);
    event.actor = Some(principal.agent_id.clone());
    state.store.start_session(session.clone(), event).await?;
    Ok((StatusCode::CREATED, Json(SessionDto { id: session.id.to_string() })))
}

/// Append a numbered user, assistant or tool turn.
#[utoipa::path(
    post, path = "/v1/sessions/{id}/turns", operation_id = "session_append_turn", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    request_body = TurnBody,
    responses(
        (status = 201, description = "The turn number", body = TurnDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
        (status = 409, description = "conflict (the session has ended)", body = crate::error::Problem),
        (status = 422, description = "validation_failed", body = crate::error::Problem),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn session_append_turn(
    State(state): State<AppState>,
    key: HostKey,
    Path(id): Path<String>,
    Valid(body): Valid<TurnBody>,
) -> ApiResult<(StatusCode, Json<TurnDto>)> {
    let principal = key.principal(&body.principal)?;
    let session = own_session(&state, &id, &principal).await?;
    let role = field("role", TurnRole::parse(&body.role))?;
    let turn = state.store.append_turn(&session.id, role, body.content, state.clock.now()).await?;
    Ok((
        StatusCode::CREATED,
        Json(TurnDto { turn, source_ref: SourceRef::session_turn_ref(&session.id, turn).to_string() }),
    ))
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
        (status = 401, description = "unauthorized", body = crate::error::Problem),
        (status = 403, description = "forbidden", body = crate::error::Problem),
        (status = 404, description = "not_found", body = crate::error::Problem),
        (status = 409, description = "conflict (already ended)", body = crate::error::Problem),
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
    let session = own_session(&state, &id, &principal).await?;
    let mut event = admin_event(&state, "session.ended", &[("session_id", session.id.to_string())]);
    event.actor = Some(principal.agent_id.clone());
    let extraction_requested = state.extraction.is_some();
    state.store.end_session(&session.id, state.clock.now(), extraction_requested, event).await?;
    match (&state.extraction, body.wait_for_extraction) {
        (Some(runner), true) => {
            // The run is its own task: a client that hangs up or a request timeout must not
            // cancel it halfway, since the session is claimed once it starts.
            let (runner, id) = (runner.clone(), session.id.clone());
            let run = state.tasks.spawn(async move { runner.run(&id).await }).await.map_err(|e| {
                ApiError::from(retold_domain::DomainError::backend("extraction task", e.to_string()))
            })?;
            Ok((StatusCode::OK, Json(ExtractionReportDto::from_run(&session.id, run))).into_response())
        }
        (Some(runner), false) => {
            let runner = runner.clone();
            state.tasks.spawn(async move {
                // The runner records the outcome on the session's extraction.run or
                // extraction.failed event and logs failures; nobody waits for the report.
                let _report = runner.run(&session.id).await;
            });
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        (None, true) => {
            let report = ExtractionReportDto::status(
                &session.id,
                "off",
                format!("session extraction is {}", state.extraction_status),
            );
            Ok((StatusCode::OK, Json(report)).into_response())
        }
        (None, false) => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}
