//! The five memory tools.

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use retold_domain::{
    Attribute, Content, Context, EntityId, EntityKind, Evidence, MemoryType, Name, Origin, RecordId, Scope,
    SourceKind, SourceRef, Tag,
};
use retold_ingest::{EntityRef, RejectCode, ReviseAction, RevisionOutcome, WriteOutcome, WriteRequest};
use retold_retrieve::{Channels, DenseMatch, SearchHit, SearchRequest};

use crate::auth::HostKey;
use crate::dto::{
    ChannelMatchDto, ConflictDto, EntityRefDto, ForgetBody, GetBody, GetResponseDto, LinkDto, MatchesDto,
    PassageDto, RecordDetailDto, RecordDto, ReviseActionDto, ReviseBody, ReviseResponseDto, SearchBody,
    SearchResponseDto, SearchResultDto, WriteBody, WriteResponseDto, field,
};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::idempotency::{Fingerprinted, IdempotencyHeader, idempotent};
use crate::routes::Valid;
use crate::state::AppState;

fn dense_dto(d: &DenseMatch) -> ChannelMatchDto {
    ChannelMatchDto { rank: d.rank, score: f64::from(d.cosine), terms: vec![], entity_id: None, role: None }
}

fn hit_dto(hit: &SearchHit) -> SearchResultDto {
    SearchResultDto {
        rank: hit.rank,
        score: hit.score,
        fused_rank: hit.fused_rank,
        explanation: hit.explanation.clone(),
        matched: MatchesDto {
            dense: hit.dense.as_ref().map(dense_dto),
            sentence: hit.sentence.as_ref().map(dense_dto),
            window: hit.window.as_ref().map(dense_dto),
            lexical: hit.lexical.as_ref().map(|l| ChannelMatchDto {
                rank: l.rank,
                score: l.bm25,
                terms: l.matched.iter().map(|m| m.term.clone()).collect(),
                entity_id: None,
                role: None,
            }),
            entity: hit.entity.as_ref().map(|e| ChannelMatchDto {
                rank: e.rank,
                score: 1.0,
                terms: vec![],
                entity_id: Some(e.entity_id.to_string()),
                role: Some(e.role.as_str().to_owned()),
            }),
        },
        passage: hit.passage.as_ref().map(|p| PassageDto {
            text: p.text.clone(),
            start: p.start,
            end: p.end,
        }),
        record: RecordDto::from(&hit.record),
    }
}

/// Find relevant memories the principal may read.
#[utoipa::path(
    post, path = "/v1/memory/search", operation_id = "memory_search", tag = "memory tools",
    request_body = SearchBody,
    responses(
        (status = 200, description = "Ranked, explained results", body = SearchResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_search(
    State(state): State<AppState>,
    key: HostKey,
    Valid(body): Valid<SearchBody>,
) -> ApiResult<Json<SearchResponseDto>> {
    let principal = key.principal(&body.principal)?;
    search_as(&state, &principal, body).await.map(Json)
}

/// `memory_search` for `principal` (a host's, or the one an operator names).
pub(crate) async fn search_as(
    state: &AppState,
    principal: &retold_domain::Principal,
    body: SearchBody,
) -> Result<SearchResponseDto, ApiError> {
    let types = body
        .types
        .map(|types| {
            types.iter().map(|t| field("types", MemoryType::parse(t))).collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let origins = body
        .origins
        .map(|origins| {
            origins.iter().map(|o| field("origins", Origin::parse(o))).collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let request = SearchRequest {
        query: body.query,
        limit: body.limit,
        types,
        event_from: body.event_from,
        event_to: body.event_to,
        include_history: body.include_history,
        include_conflicts: body.include_conflicts,
        origins,
        include_current_session: body.include_current_session,
        context: body.context,
        token_budget: body.token_budget,
        channels: Channels::default(),
    };
    let response = state.services.retriever.search(principal, &request).await?;
    Ok(SearchResponseDto {
        search_id: response.search_id.to_string(),
        results: response.hits.iter().map(hit_dto).collect(),
        eligible_count: response.eligible_count,
        rewrite_status: response.rewrite_status.as_str().to_owned(),
    })
}

/// Inspect complete records, including conflicts and supersession history.
#[utoipa::path(
    post, path = "/v1/memory/get", operation_id = "memory_get", tag = "memory tools",
    request_body = GetBody,
    responses(
        (status = 200, description = "The records", body = GetResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found (also for records the principal may not read)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_get(
    State(state): State<AppState>,
    key: HostKey,
    Valid(body): Valid<GetBody>,
) -> ApiResult<Json<GetResponseDto>> {
    let principal = key.principal(&body.principal)?;
    let ids =
        body.ids.iter().map(|id| field("ids", RecordId::new(id.clone()))).collect::<Result<Vec<_>, _>>()?;
    let details = state.services.retriever.get(&principal, &ids).await?;
    Ok(Json(GetResponseDto { records: details.iter().map(detail_dto).collect() }))
}

pub(crate) fn detail_dto(d: &retold_retrieve::RecordDetail) -> RecordDetailDto {
    RecordDetailDto {
        record: RecordDto::from(&d.record),
        context: d.record.context.as_ref().map(|c| c.as_str().to_owned()),
        links: d
            .links
            .iter()
            .map(|l| LinkDto { entity_id: l.entity_id.to_string(), role: l.role.as_str().into() })
            .collect(),
        conflicts: d
            .conflicts
            .iter()
            .map(|c| ConflictDto {
                record_id: c.record_id.to_string(),
                conflicting_id: c.conflicting_id.to_string(),
            })
            .collect(),
        supersedes: d.supersedes.iter().map(RecordDto::from).collect(),
        superseded_by: d.superseded_by.iter().map(ToString::to_string).collect(),
    }
}

fn entity_ref(name: &str, dto: &EntityRefDto) -> Result<EntityRef, ApiError> {
    match (&dto.id, &dto.name) {
        (Some(id), None) => Ok(EntityRef::Id(field(name, EntityId::new(id.clone()))?)),
        (None, Some(n)) => Ok(EntityRef::Name {
            name: field(name, Name::new(n))?,
            kind: field(name, EntityKind::parse(dto.kind.as_deref().unwrap_or("other")))?,
        }),
        _ => Err(ApiError::validation(name, "give exactly one of id or name")),
    }
}

pub(crate) fn write_request(body: &WriteBody) -> Result<WriteRequest, ApiError> {
    Ok(WriteRequest {
        memory_type: field("type", MemoryType::parse(&body.memory_type))?,
        content: field("content", Content::new(body.content.clone()))?,
        scope: field("scope", Scope::parse(&body.scope))?,
        subject: body.subject.as_ref().map(|s| entity_ref("subject", s)).transpose()?,
        attribute: body.attribute.clone().map(|a| field("attribute", Attribute::new(a))).transpose()?,
        mentions: body.mentions.iter().map(|m| entity_ref("mentions", m)).collect::<Result<_, _>>()?,
        source_kind: field("source_kind", SourceKind::parse(&body.source_kind))?,
        source_ref: body.source_ref.clone().map(|s| field("source_ref", SourceRef::new(s))).transpose()?,
        evidence: body.evidence.clone().map(|e| field("evidence", Evidence::new(e))).transpose()?,
        event_at: body.event_at,
        expires_at: body.expires_at,
        confidence: None,
        tags: body.tags.iter().map(|t| field("tags", Tag::new(t.clone()))).collect::<Result<_, _>>()?,
        context: body.context.clone().map(|c| field("context", Context::new(c))).transpose()?,
    })
}

pub(crate) fn write_response(outcome: WriteOutcome) -> ApiResult<WriteResponseDto> {
    let kind = outcome.kind().to_owned();
    match outcome {
        WriteOutcome::Created { id, reason } | WriteOutcome::Reinforced { id, reason } => {
            Ok(WriteResponseDto {
                outcome: kind,
                record_id: id.to_string(),
                superseded: vec![],
                conflicts_with: None,
                reason,
            })
        }
        WriteOutcome::Superseding { id, superseded, reason } => Ok(WriteResponseDto {
            outcome: kind,
            record_id: id.to_string(),
            superseded: superseded.iter().map(ToString::to_string).collect(),
            conflicts_with: None,
            reason,
        }),
        WriteOutcome::Conflicting { id, conflicts_with, reason } => Ok(WriteResponseDto {
            outcome: kind,
            record_id: id.to_string(),
            superseded: vec![],
            conflicts_with: Some(conflicts_with.to_string()),
            reason,
        }),
        WriteOutcome::Rejected { code, reason } => Err(match code {
            RejectCode::ScopeNotWritable => ApiError::new(ErrorCode::ScopeNotWritable, reason),
            RejectCode::EntityAmbiguous { candidates, .. } => ApiError {
                code: ErrorCode::EntityAmbiguous,
                detail: reason,
                field: None,
                candidates: Some(candidates.iter().map(ToString::to_string).collect()),
            },
        }),
    }
}

/// Create a memory with source and evidence.
#[utoipa::path(
    post, path = "/v1/memory/write", operation_id = "memory_write", tag = "memory tools",
    params(("Idempotency-Key" = Option<String>, Header, description = "Optional, 1 to 255 visible ASCII characters: a retry with the same key and request gets the first successful answer (marked Idempotent-Replayed: true) and writes nothing; keys expire after server.idempotency_ttl_ms")),
    request_body = WriteBody,
    responses(
        (status = 200, description = "created, reinforced, superseding or conflicting", body = WriteResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "scope_not_writable or forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found (an entity id)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "entity_ambiguous, conflict (also: the first request with this Idempotency-Key is still running) or idempotency_key_reused", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_write(
    State(state): State<AppState>,
    key: HostKey,
    retry: IdempotencyHeader,
    Fingerprinted { body, fingerprint }: Fingerprinted<WriteBody>,
) -> ApiResult<Response> {
    let principal = key.principal(&body.principal)?;
    let request = write_request(&body)?;
    let services = state.services.clone();
    let who = principal.clone();
    Ok(idempotent(&state, &key, &principal, retry, fingerprint, async move {
        let (outcome, stages) = services.ingestor.write_timed(&who, &request).await?;
        Ok((
            [(axum::http::header::HeaderName::from_static("server-timing"), server_timing(&stages))],
            Json(write_response(outcome)?),
        ))
    })
    .await)
}

/// A write's stages as a `Server-Timing` header: each stage's milliseconds, the texts
/// embedded, and the sentence texts whose vectors follow the answer.
fn server_timing(stages: &retold_ingest::WriteStages) -> String {
    let mut parts: Vec<String> = stages
        .named()
        .iter()
        .map(|(name, took)| match *name {
            "embed" => {
                format!("embed;dur={:.2};desc=\"{} texts\"", took.as_secs_f64() * 1000.0, stages.embedded)
            }
            _ => format!("{name};dur={:.2}", took.as_secs_f64() * 1000.0),
        })
        .collect();
    parts.push(format!("sentences;desc=\"{} after the answer\"", stages.sentences_after));
    parts.join(", ")
}

fn revision_response(outcome: RevisionOutcome) -> ApiResult<ReviseResponseDto> {
    Ok(match outcome {
        RevisionOutcome::StatusChanged { id, from, to } => ReviseResponseDto {
            outcome: "status_changed".into(),
            record_id: Some(id.to_string()),
            from_status: Some(from.as_str().into()),
            to_status: Some(to.as_str().into()),
            write: None,
        },
        RevisionOutcome::Written(write) => {
            let write = write_response(write)?;
            ReviseResponseDto {
                outcome: "written".into(),
                record_id: Some(write.record_id.clone()),
                from_status: None,
                to_status: None,
                write: Some(write),
            }
        }
        RevisionOutcome::EntitiesMerged { from, into } => ReviseResponseDto {
            outcome: "entities_merged".into(),
            record_id: None,
            from_status: Some(from.to_string()),
            to_status: Some(into.to_string()),
            write: None,
        },
    })
}

/// Confirm, supersede, expire, or merge an entity.
#[utoipa::path(
    post, path = "/v1/memory/revise", operation_id = "memory_revise", tag = "memory tools",
    params(("Idempotency-Key" = Option<String>, Header, description = "Optional, 1 to 255 visible ASCII characters: a retry with the same key and request gets the first successful answer (marked Idempotent-Replayed: true) and writes nothing; keys expire after server.idempotency_ttl_ms")),
    request_body = ReviseBody,
    responses(
        (status = 200, description = "The revision", body = ReviseResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "scope_not_writable or forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (an illegal lifecycle transition, or the first request with this Idempotency-Key is still running) or idempotency_key_reused", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_revise(
    State(state): State<AppState>,
    key: HostKey,
    retry: IdempotencyHeader,
    Fingerprinted { body, fingerprint }: Fingerprinted<ReviseBody>,
) -> ApiResult<Response> {
    let principal = key.principal(&body.principal)?;
    let id = || -> Result<RecordId, ApiError> {
        let id = body.id.clone().ok_or_else(|| ApiError::validation("id", "required for this action"))?;
        field("id", RecordId::new(id))
    };
    let action = match body.action {
        ReviseActionDto::Confirm => ReviseAction::Confirm { id: id()? },
        ReviseActionDto::Expire => ReviseAction::Expire { id: id()? },
        ReviseActionDto::Supersede => {
            let replacement = body
                .replacement
                .as_ref()
                .ok_or_else(|| ApiError::validation("replacement", "required for supersede"))?;
            if key.principal(&replacement.principal)? != principal {
                return Err(ApiError::validation(
                    "replacement.principal",
                    "must equal the request's principal",
                ));
            }
            ReviseAction::Supersede { id: id()?, replacement: Box::new(write_request(replacement)?) }
        }
        ReviseActionDto::MergeEntities => {
            let get = |name: &str, value: &Option<String>| -> Result<EntityId, ApiError> {
                let v =
                    value.clone().ok_or_else(|| ApiError::validation(name, "required for merge_entities"))?;
                field(name, EntityId::new(v))
            };
            ReviseAction::MergeEntities { from: get("from", &body.from)?, into: get("into", &body.into)? }
        }
    };
    let services = state.services.clone();
    let who = principal.clone();
    Ok(idempotent(&state, &key, &principal, retry, fingerprint, async move {
        Ok(Json(revision_response(services.ingestor.revise(&who, &action).await?)?))
    })
    .await)
}

/// Mark a memory deleted with a reason.
#[utoipa::path(
    post, path = "/v1/memory/forget", operation_id = "memory_forget", tag = "memory tools",
    params(("Idempotency-Key" = Option<String>, Header, description = "Optional, 1 to 255 visible ASCII characters: a retry with the same key and request gets the first successful answer (marked Idempotent-Replayed: true) and writes nothing; keys expire after server.idempotency_ttl_ms")),
    request_body = ForgetBody,
    responses(
        (status = 200, description = "The record is a tombstone now", body = ReviseResponseDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "scope_not_writable or forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 409, description = "conflict (already deleted, or the first request with this Idempotency-Key is still running) or idempotency_key_reused", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_forget(
    State(state): State<AppState>,
    key: HostKey,
    retry: IdempotencyHeader,
    Fingerprinted { body, fingerprint }: Fingerprinted<ForgetBody>,
) -> ApiResult<Response> {
    let principal = key.principal(&body.principal)?;
    let id = field("id", RecordId::new(body.id.clone()))?;
    let services = state.services.clone();
    let who = principal.clone();
    Ok(idempotent(&state, &key, &principal, retry, fingerprint, async move {
        Ok(Json(revision_response(services.ingestor.forget(&who, &id, &body.reason).await?)?))
    })
    .await)
}

/// What the principal could search, without content: counts of records per activation
/// category (semantic records) and per type, over exactly the scopes search reads. An agent
/// can decide from it whether searching is worth a call.
#[utoipa::path(
    post, path = "/v1/memory/inventory", operation_id = "memory_inventory", tag = "memory tools",
    request_body = crate::dto::PrincipalBody,
    responses(
        (status = 200, description = "The counts", body = crate::dto::InventoryDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn memory_inventory(
    State(state): State<AppState>,
    key: HostKey,
    Valid(body): Valid<crate::dto::PrincipalBody>,
) -> ApiResult<Json<crate::dto::InventoryDto>> {
    let principal = key.principal(&body.principal)?;
    let inventory = state.services.activation.inventory(&principal).await?;
    let count = |(name, count): (String, u64)| crate::dto::CountDto { name, count };
    Ok(Json(crate::dto::InventoryDto {
        categories: inventory.categories.into_iter().map(count).collect(),
        types: inventory.types.into_iter().map(|(t, n)| count((t.as_str().to_owned(), n))).collect(),
        total: inventory.total,
    }))
}
