//! Operations endpoints (admin key): maintenance the runtime never does on its own.

use axum::Json;
use axum::extract::State;
use retold_domain::{ErasureTarget, RecordId, Scope, UserId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use validator::Validate;

use crate::auth::AdminKey;
use crate::dto::field;
use crate::error::{ApiError, ApiResult};
use crate::routes::Valid;
use crate::state::AppState;

/// What to erase: exactly one of `record_id`, `user_id`, `scope`.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErasureBody {
    /// One record (`mem_…`).
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) record_id: Option<String>,
    /// Every record of a user: `user:<u>` and every `agent:*/<u>` scope, the user's session
    /// turns and the entities of those scopes.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) user_id: Option<String>,
    /// Every record of one scope, with its entities.
    #[validate(length(min = 3, max = 300))]
    #[schema(min_length = 3, max_length = 300)]
    pub(crate) scope: Option<String>,
    /// Only count what would be erased.
    #[serde(default)]
    pub(crate) dry_run: bool,
    /// Also erase the records inside earlier snapshots that still hold them.
    #[serde(default)]
    pub(crate) rewrite_snapshots: bool,
}

/// What was removed besides the records' own content.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ErasedDto {
    pub(crate) records: u64,
    pub(crate) embeddings: u64,
    pub(crate) traces: u64,
    pub(crate) events: u64,
    pub(crate) turns: u64,
    pub(crate) entities: u64,
    pub(crate) profiles: u64,
    /// Orchestrator decisions that admitted an erased record (or were the user's).
    pub(crate) decisions: u64,
}

/// The outcome of an erasure.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ErasureDto {
    /// `record <id>`, `user <id>` or `scope <scope>`.
    pub(crate) target: String,
    pub(crate) dry_run: bool,
    /// Records the target covers.
    pub(crate) matched: u64,
    /// Records erased now (0 when everything was erased before, or on a dry run).
    pub(crate) erased: u64,
    pub(crate) removed: ErasedDto,
    /// The store's size on disk (file, WAL, shared memory) before and after compaction.
    pub(crate) bytes_before: u64,
    pub(crate) bytes_after: u64,
    /// Earlier snapshots that held content of the erased records.
    pub(crate) snapshots_holding: Vec<SnapshotHoldingDto>,
}

/// A snapshot that still holds erased content.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SnapshotHoldingDto {
    pub(crate) path: String,
    /// Erased records whose content it held.
    pub(crate) records: u64,
    /// Whether it was rewritten (then it holds none of them any more).
    pub(crate) rewritten: bool,
}

fn target(body: &ErasureBody) -> Result<ErasureTarget, ApiError> {
    match (&body.record_id, &body.user_id, &body.scope) {
        (Some(id), None, None) => Ok(ErasureTarget::Record(field("record_id", RecordId::new(id.clone()))?)),
        (None, Some(user), None) => Ok(ErasureTarget::User(field("user_id", UserId::new(user.clone()))?)),
        (None, None, Some(scope)) => Ok(ErasureTarget::Scope(field("scope", Scope::parse(scope))?)),
        _ => Err(ApiError::validation("record_id", "give exactly one of record_id, user_id, scope")),
    }
}

/// Erase a record, a user or a scope for good: content, evidence, embeddings, FTS rows, the
/// traces and audit details that quote it; then compact the store so the bytes are gone.
///
/// Blocks writes while it compacts (searches go on): erasing 100 records (a scope) took
/// 0.4 s at 10k records and 1.5 s at 50k, writes waiting up to 0.4 s and 1.3 s
/// (`docs/operations.md`).
#[utoipa::path(
    post, path = "/v1/admin/ops/erase", operation_id = "ops_erase", tag = "operations",
    request_body = ErasureBody,
    responses(
        (status = 200, description = "What was (or, on a dry run, would be) erased", body = ErasureDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (a record changed during the erasure; run it again)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_erase(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<ErasureBody>,
) -> ApiResult<Json<ErasureDto>> {
    let target = target(&body)?;
    let outcome =
        state.services.operations.erase(&target, "admin", body.dry_run, body.rewrite_snapshots).await?;
    let removed = &outcome.removed;
    Ok(Json(ErasureDto {
        target: target.to_string(),
        dry_run: outcome.dry_run,
        matched: outcome.matched,
        erased: outcome.erased,
        removed: ErasedDto {
            records: removed.records,
            embeddings: removed.embeddings,
            traces: removed.traces,
            events: removed.events,
            turns: removed.turns,
            entities: removed.entities,
            profiles: removed.profiles,
            decisions: removed.decisions,
        },
        bytes_before: outcome.bytes_before,
        bytes_after: outcome.bytes_after,
        snapshots_holding: outcome
            .snapshots_holding
            .iter()
            .map(|(path, records, rewritten)| SnapshotHoldingDto {
                path: path.display().to_string(),
                records: *records,
                rewritten: *rewritten,
            })
            .collect(),
    }))
}

/// An expiry run.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpiryBody {
    /// Only list what is due.
    #[serde(default)]
    pub(crate) dry_run: bool,
}

/// The outcome of an expiry run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExpiryDto {
    pub(crate) dry_run: bool,
    /// Records moved to `expired` (on a dry run: due to be).
    pub(crate) expired: u64,
    /// The first 100 of them, oldest expiry first.
    pub(crate) ids: Vec<String>,
}

/// Move every provisional or confirmed record whose `expires_at` passed to `expired`.
///
/// Writes wait only for its one transaction (milliseconds when little is due).
#[utoipa::path(
    post, path = "/v1/admin/ops/expire", operation_id = "ops_expire", tag = "operations",
    request_body = ExpiryBody,
    responses(
        (status = 200, description = "What was (or, on a dry run, would be) expired", body = ExpiryDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (records kept changing during the run; run it again)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_expire(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<ExpiryBody>,
) -> ApiResult<Json<ExpiryDto>> {
    let outcome = state.services.operations.expire("admin", body.dry_run).await?;
    Ok(Json(ExpiryDto {
        dry_run: outcome.dry_run,
        expired: outcome.expired,
        ids: outcome.ids.iter().map(ToString::to_string).collect(),
    }))
}

/// A store's consistency check.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct StoreCheckDto {
    /// Integrity, FTS rows and embeddings all agree with the records.
    pub(crate) ok: bool,
    /// SQLite's integrity_check: `ok` or what it found.
    pub(crate) integrity: String,
    /// Records neither deleted nor erased.
    pub(crate) live: u64,
    pub(crate) missing_fts: u64,
    pub(crate) orphan_fts: u64,
    pub(crate) missing_embeddings: u64,
    pub(crate) orphan_embeddings: u64,
}

impl From<&retold_domain::StoreCheck> for StoreCheckDto {
    fn from(c: &retold_domain::StoreCheck) -> Self {
        Self {
            ok: c.is_ok(),
            integrity: c.integrity.clone(),
            live: c.live,
            missing_fts: c.missing_fts,
            orphan_fts: c.orphan_fts,
            missing_embeddings: c.missing_embeddings,
            orphan_embeddings: c.orphan_embeddings,
        }
    }
}

/// A snapshot taken.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SnapshotDto {
    /// The snapshot file, in the data directory's `snapshots/`.
    pub(crate) path: String,
    pub(crate) bytes: u64,
    /// The snapshot's own check.
    pub(crate) check: StoreCheckDto,
}

/// No options.
#[derive(Debug, Clone, Default, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct EmptyBody {}

/// Take a consistent snapshot of the store while writes continue (`VACUUM INTO`), then check it.
///
/// Does not block writes: 0.4 s at 10k records, 1.5 s at 50k (`docs/operations.md`).
#[utoipa::path(
    post, path = "/v1/admin/ops/snapshot", operation_id = "ops_snapshot", tag = "operations",
    request_body = EmptyBody,
    responses(
        (status = 200, description = "The snapshot and its check", body = SnapshotDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (a snapshot of that name exists)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_snapshot(
    State(state): State<AppState>,
    _: AdminKey,
    _body: Valid<EmptyBody>,
) -> ApiResult<Json<SnapshotDto>> {
    let outcome = state.services.operations.snapshot().await?;
    Ok(Json(SnapshotDto {
        path: outcome.path.display().to_string(),
        bytes: outcome.bytes,
        check: StoreCheckDto::from(&outcome.check),
    }))
}

/// Check the live store: integrity, and FTS rows and embeddings against records (so the
/// index can be rebuilt and every live record is found by both channels).
///
/// Does not block writes (one read transaction): 0.25 s at 10k records, 1.0 s at 50k.
#[utoipa::path(
    post, path = "/v1/admin/ops/verify", operation_id = "ops_verify", tag = "operations",
    request_body = EmptyBody,
    responses(
        (status = 200, description = "The check (ok says whether it passed)", body = StoreCheckDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_verify(
    State(state): State<AppState>,
    _: AdminKey,
    _body: Valid<EmptyBody>,
) -> ApiResult<Json<StoreCheckDto>> {
    let check = state.services.operations.verify().await?;
    Ok(Json(StoreCheckDto::from(&check)))
}

/// A retention run (session turns and search traces).
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetentionBody {
    /// Only count what would be deleted.
    #[serde(default)]
    pub(crate) dry_run: bool,
    /// Also sessions whose extraction has not run (their turns are lost to extraction).
    #[serde(default)]
    pub(crate) force: bool,
}

/// The outcome of a retention run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RetentionDto {
    pub(crate) dry_run: bool,
    pub(crate) force: bool,
    /// Turns created before this instant were in scope (now − operations.transcript_retention_days).
    pub(crate) before: chrono::DateTime<chrono::Utc>,
    /// Sessions that lost (or would lose) turns, and the turns.
    pub(crate) sessions: u64,
    pub(crate) turns: u64,
    /// Sessions with old turns left alone because their extraction has not run.
    pub(crate) skipped_sessions: u64,
    /// Search traces written before this instant were in scope (now −
    /// operations.search_trace_retention_days).
    pub(crate) traces_before: chrono::DateTime<chrono::Utc>,
    /// Search traces deleted (or, on a dry run, that would be).
    pub(crate) search_traces: u64,
}

/// Delete session turns older than `operations.transcript_retention_days`, in sessions whose
/// extraction has run (all with `force`), and search traces older than
/// `operations.search_trace_retention_days` (a search's `search_id` then no longer explains it).
/// Records keep their own evidence.
///
/// Writes wait only for its deleting transactions (milliseconds when little is due).
#[utoipa::path(
    post, path = "/v1/admin/ops/retention", operation_id = "ops_retention", tag = "operations",
    request_body = RetentionBody,
    responses(
        (status = 200, description = "What was (or, on a dry run, would be) deleted", body = RetentionDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_retention(
    State(state): State<AppState>,
    _: AdminKey,
    Valid(body): Valid<RetentionBody>,
) -> ApiResult<Json<RetentionDto>> {
    let outcome = state.services.operations.retention("admin", body.force, body.dry_run).await?;
    Ok(Json(RetentionDto {
        dry_run: outcome.dry_run,
        force: outcome.force,
        before: outcome.before,
        sessions: outcome.report.sessions,
        turns: outcome.report.turns,
        skipped_sessions: outcome.report.skipped_sessions,
        traces_before: outcome.traces_before,
        search_traces: outcome.search_traces,
    }))
}

/// New review-queue items, per reason.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct FlagDto {
    pub(crate) expiring_provisional: u64,
    pub(crate) unresolved_conflict: u64,
    pub(crate) stale_low_confidence: u64,
    pub(crate) total: u64,
}

/// Flag the records that need a person's look into the review queue (operations.review.*).
///
/// Writes wait only for its one transaction (10 ms at 50k records).
#[utoipa::path(
    post, path = "/v1/admin/ops/flag-reviews", operation_id = "ops_flag_reviews", tag = "operations",
    request_body = EmptyBody,
    responses(
        (status = 200, description = "New items per reason (records already waiting for a reason are not added again)", body = FlagDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ops_flag_reviews(
    State(state): State<AppState>,
    _: AdminKey,
    _body: Valid<EmptyBody>,
) -> ApiResult<Json<FlagDto>> {
    let outcome = state.services.operations.flag_due_reviews("admin").await?;
    let of = |reason: retold_domain::ReviewReason| {
        outcome.flagged.iter().find(|(r, _)| *r == reason).map_or(0, |(_, n)| *n)
    };
    Ok(Json(FlagDto {
        expiring_provisional: of(retold_domain::ReviewReason::ExpiringProvisional),
        unresolved_conflict: of(retold_domain::ReviewReason::UnresolvedConflict),
        stale_low_confidence: of(retold_domain::ReviewReason::StaleLowConfidence),
        total: outcome.flagged.iter().map(|(_, n)| n).sum(),
    }))
}

/// An item of the review queue.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ReviewDto {
    pub(crate) id: String,
    pub(crate) record_id: String,
    /// expiring_provisional, unresolved_conflict, stale_low_confidence or activation.
    pub(crate) reason: String,
    pub(crate) flagged_at: chrono::DateTime<chrono::Utc>,
    pub(crate) resolved_at: Option<chrono::DateTime<chrono::Utc>>,
    /// confirm, expire or forget; approve or reject (activation reviews).
    pub(crate) resolution: Option<String>,
}

fn review_dto(item: &retold_domain::ReviewItem) -> ReviewDto {
    ReviewDto {
        id: item.id.to_string(),
        record_id: item.record_id.to_string(),
        reason: item.reason.as_str().to_owned(),
        flagged_at: item.flagged_at,
        resolved_at: item.resolved.map(|(at, _)| at),
        resolution: item.resolved.map(|(_, action)| action.as_str().to_owned()),
    }
}

/// The review queue.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ReviewListDto {
    pub(crate) reviews: Vec<ReviewDto>,
}

/// Which reviews to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewQuery {
    /// Also resolved items (default: open ones only).
    #[serde(default)]
    all: bool,
    /// Most items (default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
}

/// List the review queue, newest first.
#[utoipa::path(
    get, path = "/v1/admin/reviews", operation_id = "review_list", tag = "operations",
    params(ReviewQuery),
    responses(
        (status = 200, description = "The items", body = ReviewListDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn review_list(
    State(state): State<AppState>,
    _: AdminKey,
    crate::routes::ValidQuery(query): crate::routes::ValidQuery<ReviewQuery>,
) -> ApiResult<Json<ReviewListDto>> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::validation("limit", "must be 1 to 1000"));
    }
    let limit = limit as usize;
    let items = state.services.operations.reviews(!query.all, limit).await?;
    Ok(Json(ReviewListDto { reviews: items.iter().map(review_dto).collect() }))
}

/// How to resolve a review.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResolveBody {
    /// confirm (confirmed, expiry cleared), expire or forget.
    pub(crate) action: String,
}

/// A resolved review.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ResolutionDto {
    pub(crate) review: ReviewDto,
    /// The record's status before and after.
    pub(crate) from: String,
    pub(crate) to: String,
}

/// Resolve a review item: confirm, expire or forget its record, then close it.
#[utoipa::path(
    post, path = "/v1/admin/reviews/{id}/resolve", operation_id = "review_resolve", tag = "operations",
    params(("id" = String, Path, description = "The review id (`rev_…`)")),
    request_body = ResolveBody,
    responses(
        (status = 200, description = "The resolution", body = ResolutionDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (resolved already, or the record cannot take that action)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn review_resolve(
    State(state): State<AppState>,
    _: AdminKey,
    axum::extract::Path(id): axum::extract::Path<String>,
    Valid(body): Valid<ResolveBody>,
) -> ApiResult<Json<ResolutionDto>> {
    let id = field("id", retold_domain::ReviewId::new(id))?;
    let action = field("action", retold_domain::ReviewAction::parse(&body.action))?;
    let resolution = state.services.operations.resolve_review(&id, action, "admin").await?;
    Ok(Json(ResolutionDto {
        review: review_dto(&resolution.item),
        from: resolution.from.as_str().to_owned(),
        to: resolution.to.as_str().to_owned(),
    }))
}
