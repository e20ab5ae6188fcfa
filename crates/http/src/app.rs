//! The router and its middleware.

use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::routing::{delete, get, post};
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa_swagger_ui::SwaggerUi;

use crate::auth::AnyKey;
use crate::dto::ReadyDto;
use crate::error::{ApiError, ErrorCode};
use crate::routes::{admin, inspect, sessions, tools};
use crate::settings::ServerSettings;
use crate::state::AppState;

/// Liveness: the process answers. Needs no key.
async fn health() -> &'static str {
    "ok"
}

/// Readiness: the store answers and the embedder runs.
#[utoipa::path(
    get, path = "/ready", operation_id = "ready", tag = "operations",
    responses(
        (status = 200, description = "Ready", body = ReadyDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 500, description = "internal (a component is down)", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ready(State(state): State<AppState>, _: AnyKey) -> Result<Json<ReadyDto>, ApiError> {
    let ready = state.services.admin.ready().await?;
    Ok(Json(ReadyDto { status: "ready".into(), model: ready.model, vectors: ready.vectors }))
}

/// A valid host key, or the request is answered 401/403 as REST answers it.
async fn require_host_key(
    _key: crate::auth::HostKey,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    next.run(request).await
}

async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such endpoint")
}

/// The whole application: routes, docs and middleware.
pub fn app(state: AppState, server: &ServerSettings) -> Router {
    app_until(state, server, tokio_util::sync::CancellationToken::new())
}

/// `app`, whose MCP sessions end when `shutdown` is cancelled (so graceful shutdown does not
/// wait for a client's open stream).
pub(crate) fn app_until(
    state: AppState,
    server: &ServerSettings,
    shutdown: tokio_util::sync::CancellationToken,
) -> Router {
    let api = Router::new()
        .route("/v1/memory/search", post(tools::memory_search))
        .route("/v1/memory/get", post(tools::memory_get))
        .route("/v1/memory/write", post(tools::memory_write))
        .route("/v1/memory/revise", post(tools::memory_revise))
        .route("/v1/memory/forget", post(tools::memory_forget))
        .route("/v1/memory/inventory", post(tools::memory_inventory))
        .route("/v1/memory/import", post(crate::routes::import::memory_import))
        .route("/v1/sessions", post(sessions::session_start))
        .route("/v1/sessions/{id}/profile", get(sessions::session_profile))
        .route("/v1/sessions/{id}/turns", post(sessions::session_append_turn))
        .route("/v1/sessions/{id}/end", post(sessions::session_end))
        .route("/v1/sessions/{id}/decisions", post(sessions::session_decide))
        .route("/v1/admin/grants", post(admin::grant_create).get(admin::grant_list))
        .route("/v1/admin/grants/{id}", delete(admin::grant_revoke))
        .route("/v1/admin/entities", post(admin::entity_create))
        .route("/v1/admin/entities/merge", post(admin::entity_merge))
        .route("/v1/admin/entities/{id}/aliases", post(admin::entity_add_alias))
        .route("/v1/admin/host-keys", post(admin::host_key_create))
        .route("/v1/admin/records", get(inspect::record_list))
        .route("/v1/admin/records/{id}", get(inspect::record_inspect))
        .route("/v1/admin/records/{id}/events", get(admin::record_events))
        .route("/v1/admin/search-log", get(inspect::search_list))
        .route("/v1/admin/search-log/{id}", get(admin::search_trace))
        .route("/v1/admin/search", post(inspect::search_as))
        .route("/v1/admin/sessions", get(inspect::session_list))
        .route("/v1/admin/sessions/{id}/profile", get(inspect::session_profile))
        .route("/v1/admin/conflicts", get(inspect::conflict_list))
        .route("/v1/admin/ops/status", get(inspect::ops_status))
        .route("/v1/admin/sessions/{id}/events", get(admin::session_events))
        .route("/v1/admin/sessions/{id}/decisions", get(admin::session_decisions))
        .route("/v1/admin/sessions/{id}/turns", get(admin::session_turns))
        .route("/v1/admin/decisions/{id}", get(admin::decision_get))
        .route("/v1/admin/reviews", get(crate::routes::ops::review_list))
        .route("/v1/admin/reviews/{id}/resolve", post(crate::routes::ops::review_resolve))
        .route("/ready", get(ready))
        .route("/health", get(health))
        .fallback(not_found)
        .with_state(state.clone());
    // Operations and whole-store transfers take as long as the store is large (an erasure's
    // compaction rewrites its tables, an export reads every record): the request timeout,
    // which would cut one off halfway, does not apply to them; they run to the end.
    let operations = Router::new()
        .route("/v1/admin/extractions/run", post(admin::extraction_run))
        .route("/v1/admin/ops/erase", post(crate::routes::ops::ops_erase))
        .route("/v1/admin/ops/expire", post(crate::routes::ops::ops_expire))
        .route("/v1/admin/ops/snapshot", post(crate::routes::ops::ops_snapshot))
        .route("/v1/admin/ops/retention", post(crate::routes::ops::ops_retention))
        .route("/v1/admin/ops/flag-reviews", post(crate::routes::ops::ops_flag_reviews))
        .route("/v1/admin/ops/verify", post(crate::routes::ops::ops_verify))
        .route("/v1/admin/export", get(crate::routes::export::export_scope))
        .route("/v1/admin/export/users/{user}", get(crate::routes::export::export_user))
        .route("/v1/admin/import", post(crate::routes::export::restore))
        .with_state(state.clone());
    // MCP's streamable HTTP transport: each tool call is the REST request of the same name,
    // sent to the routes above with the caller's own key.
    let rest = api.clone().layer(DefaultBodyLimit::max(server.body_limit_bytes));
    let mcp = retold_adapter_mcp::MemoryTools::new(rest, &crate::openapi::document())
        .expect("the OpenAPI document holds every tool's body schema")
        .with_timeout(Duration::from_millis(server.request_timeout_ms))
        .service(shutdown, &server.mcp_allowed_hosts, server.body_limit_bytes);
    // Every MCP request, `initialize` included, needs a valid host key (a tool call then checks
    // it again, as REST does, with the principal it asserts).
    let mcp = Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(state, require_host_key));
    let api = api.merge(mcp);

    let cors = if server.cors_origins.is_empty() {
        CorsLayer::new()
    } else {
        let origins: Vec<HeaderValue> = server.cors_origins.iter().filter_map(|o| o.parse().ok()).collect();
        CorsLayer::new()
            .allow_origin(origins)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([axum::http::header::AUTHORIZATION, axum::http::header::CONTENT_TYPE])
    };
    let request_id = HeaderName::from_static("x-request-id");
    api.merge(crate::inspector::routes())
        .merge(SwaggerUi::new("/docs").external_url_unchecked("/openapi.json", crate::openapi::document()))
        // A layer covers the routes there are when it is added: the operations, merged after
        // it, have no request timeout.
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_millis(server.request_timeout_ms),
        ))
        .merge(operations)
        .layer(CompressionLayer::new())
        .layer(DefaultBodyLimit::max(server.body_limit_bytes))
        .layer(axum::middleware::map_response(crate::error::problem_for_bare_errors))
        .layer(cors)
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
            let id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
            tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
        }))
        .layer(SetRequestIdLayer::new(request_id, MakeRequestUuid))
}
