//! Export and restore: `GET /v1/admin/export` writes a user's or a scope's memories as JSON
//! lines (records with their history, entities, links and conflicts, no embeddings), and
//! `POST /v1/admin/import` restores such lines into a store as they were.

use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use retold_domain::{
    AgentId, Attribute, Confidence, ConflictLink, Content, Context, Entity, EntityId, EntityKind,
    EntityStatus, ErasureTarget, Evidence, FactKey, LinkRole, MemoryRecord, MemoryType, Name, Origin,
    RecordEntityLink, RecordId, Scope, SourceKind, SourceRef, Status, Tag, UserId,
};
use retold_ingest::MemorySet;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::AdminKey;
use crate::dto::field;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::routes::{ValidQuery, field_of, json_lines};
use crate::state::AppState;

/// The export format's version (the first line says it).
const FORMAT: u32 = 1;

/// One line of an export.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "item", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ExportLine {
    /// The first line: what was exported, when, in which format.
    Export {
        format: u32,
        scope: Option<String>,
        user: Option<String>,
        at: DateTime<Utc>,
        records: usize,
    },
    Entity {
        id: String,
        kind: String,
        canonical_name: String,
        scope: String,
        status: String,
        merged_into: Option<String>,
        created_at: DateTime<Utc>,
        #[serde(default)]
        aliases: Vec<String>,
    },
    Record(Box<RecordLine>),
    Conflict {
        record_id: String,
        conflicting_id: String,
    },
}

/// A record as it is stored, with its entity links.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordLine {
    id: String,
    #[serde(rename = "type")]
    memory_type: String,
    version: u32,
    content: String,
    subject_entity_id: Option<String>,
    attribute: Option<String>,
    scope: String,
    source_kind: String,
    source_ref: Option<String>,
    creator_agent_id: String,
    evidence: Option<String>,
    created_at: DateTime<Utc>,
    event_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
    confidence: f64,
    status: String,
    supersedes_id: Option<String>,
    reinforcements: u32,
    last_reinforced_at: Option<DateTime<Utc>>,
    #[serde(default)]
    tags: Vec<String>,
    context: Option<String>,
    origin: String,
    speaker: Option<String>,
    /// `[entity_id, role]` pairs.
    #[serde(default)]
    links: Vec<(String, String)>,
}

/// The scope to export.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScopeQuery {
    /// Every record of one scope (`project:p`, `user:u`, `agent:a/u`, …).
    #[param(
        pattern = r"^((user|project|org):[A-Za-z0-9_.@+-]{1,128}|agent:[A-Za-z0-9_.@+-]{1,128}(/[A-Za-z0-9_.@+-]{1,128})?)$"
    )]
    scope: String,
}

/// The user to export.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct UserPath {
    /// Every record of the user: `user:<u>` and every `agent:*/<u>`.
    #[param(pattern = r"^[A-Za-z0-9_.@+-]{1,128}$")]
    user: String,
}

/// Export a scope's memories as JSON lines.
///
/// The first line describes the export; then the entities the records link to (with their
/// aliases), the records oldest first (every status but deleted: history included), each
/// with its entity links, and the conflict links between them. No embeddings: the store that
/// imports them embeds them with its own model. `retold import` (or `POST /v1/admin/import`)
/// restores them as they were.
#[utoipa::path(
    get, path = "/v1/admin/export", operation_id = "export_scope", tag = "operations",
    params(ScopeQuery),
    responses(
        (status = 200, description = "JSON lines", body = String, content_type = "application/x-ndjson"),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed (the scope)", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn export_scope(
    State(state): State<AppState>,
    _: AdminKey,
    ValidQuery(query): ValidQuery<ScopeQuery>,
) -> ApiResult<Response> {
    let target = ErasureTarget::Scope(field("scope", Scope::parse(&query.scope))?);
    export(&state, &target, (Some(query.scope), None)).await
}

/// Export a user's memories as JSON lines: `user:<u>` and every `agent:*/<u>`, in the format
/// of `GET /v1/admin/export`.
#[utoipa::path(
    get, path = "/v1/admin/export/users/{user}", operation_id = "export_user", tag = "operations",
    params(UserPath),
    responses(
        (status = 200, description = "JSON lines", body = String, content_type = "application/x-ndjson"),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed (the user id)", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn export_user(
    State(state): State<AppState>,
    _: AdminKey,
    axum::extract::Path(UserPath { user }): axum::extract::Path<UserPath>,
) -> ApiResult<Response> {
    let target = ErasureTarget::User(field("user", UserId::new(user.clone()))?);
    export(&state, &target, (None, Some(user))).await
}

async fn export(
    state: &AppState,
    target: &ErasureTarget,
    (scope, user): (Option<String>, Option<String>),
) -> ApiResult<Response> {
    let set = state.services.operations.export(target).await?;
    let mut lines = Vec::with_capacity(set.entities.len() + set.records.len() + set.conflicts.len() + 1);
    lines.push(ExportLine::Export {
        format: FORMAT,
        scope,
        user,
        at: Utc::now(),
        records: set.records.len(),
    });
    for (entity, aliases) in &set.entities {
        lines.push(ExportLine::Entity {
            id: entity.id.to_string(),
            kind: entity.kind.as_str().into(),
            canonical_name: entity.canonical_name.as_str().into(),
            scope: entity.scope.to_string(),
            status: entity.status.as_str().into(),
            merged_into: entity.merged_into.as_ref().map(ToString::to_string),
            created_at: entity.created_at,
            aliases: aliases.iter().map(|a| a.as_str().to_owned()).collect(),
        });
    }
    for record in &set.records {
        let links = set
            .links
            .iter()
            .filter(|l| l.record_id == record.id)
            .map(|l| (l.entity_id.to_string(), l.role.as_str().to_owned()))
            .collect();
        lines.push(ExportLine::Record(Box::new(record_line(record, links))));
    }
    for c in &set.conflicts {
        lines.push(ExportLine::Conflict {
            record_id: c.record_id.to_string(),
            conflicting_id: c.conflicting_id.to_string(),
        });
    }
    let mut body = String::new();
    for line in &lines {
        body.push_str(
            &serde_json::to_string(line).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        );
        body.push('\n');
    }
    Ok(([(axum::http::header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}

fn record_line(r: &MemoryRecord, links: Vec<(String, String)>) -> RecordLine {
    RecordLine {
        id: r.id.to_string(),
        memory_type: r.memory_type.as_str().into(),
        version: r.version,
        content: r.content.as_str().into(),
        subject_entity_id: r.key.as_ref().map(|k| k.subject_entity_id.to_string()),
        attribute: r.key.as_ref().map(|k| k.attribute.to_string()),
        scope: r.scope.to_string(),
        source_kind: r.source_kind.as_str().into(),
        source_ref: r.source_ref.as_ref().map(ToString::to_string),
        creator_agent_id: r.creator_agent_id.to_string(),
        evidence: r.evidence.as_ref().map(|e| e.as_str().to_owned()),
        created_at: r.created_at,
        event_at: r.event_at,
        expires_at: r.expires_at,
        confidence: r.confidence.get(),
        status: r.status.as_str().into(),
        supersedes_id: r.supersedes_id.as_ref().map(ToString::to_string),
        reinforcements: r.reinforcements,
        last_reinforced_at: r.last_reinforced_at,
        tags: r.tags.iter().map(|t| t.as_str().to_owned()).collect(),
        context: r.context.as_ref().map(|c| c.as_str().to_owned()),
        origin: r.origin.as_str().into(),
        speaker: r.speaker.as_ref().map(|s| s.as_str().to_owned()),
        links,
    }
}

fn record_of(l: &RecordLine) -> Result<(MemoryRecord, Vec<RecordEntityLink>), ApiError> {
    let id = field("id", RecordId::new(l.id.clone()))?;
    let key = match (&l.subject_entity_id, &l.attribute) {
        (Some(subject), Some(attribute)) => Some(FactKey::new(
            field("subject_entity_id", EntityId::new(subject.clone()))?,
            field("attribute", Attribute::new(attribute.clone()))?,
        )),
        (None, None) => None,
        _ => return Err(ApiError::validation("attribute", "subject_entity_id and attribute come together")),
    };
    let links = l
        .links
        .iter()
        .map(|(entity, role)| {
            Ok(RecordEntityLink {
                record_id: id.clone(),
                entity_id: field("links", EntityId::new(entity.clone()))?,
                role: field("links", LinkRole::parse(role))?,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let record = MemoryRecord {
        id,
        memory_type: field("type", MemoryType::parse(&l.memory_type))?,
        version: l.version,
        content: field("content", Content::new(l.content.clone()))?,
        key,
        scope: field("scope", Scope::parse(&l.scope))?,
        source_kind: field("source_kind", SourceKind::parse(&l.source_kind))?,
        source_ref: l.source_ref.clone().map(|s| field("source_ref", SourceRef::new(s))).transpose()?,
        creator_agent_id: field("creator_agent_id", AgentId::new(l.creator_agent_id.clone()))?,
        evidence: l.evidence.clone().map(|e| field("evidence", Evidence::new(e))).transpose()?,
        created_at: l.created_at,
        event_at: l.event_at,
        expires_at: l.expires_at,
        confidence: field("confidence", Confidence::new(l.confidence))?,
        status: match field("status", Status::parse(&l.status))? {
            Status::Deleted => {
                return Err(ApiError::validation("status", "a deleted record is not restored"));
            }
            status => status,
        },
        supersedes_id: l
            .supersedes_id
            .clone()
            .map(|s| field("supersedes_id", RecordId::new(s)))
            .transpose()?,
        reinforcements: l.reinforcements,
        last_reinforced_at: l.last_reinforced_at,
        tags: l.tags.iter().map(|t| field("tags", Tag::new(t.clone()))).collect::<Result<_, _>>()?,
        context: l.context.clone().map(|c| field("context", Context::new(c))).transpose()?,
        origin: field("origin", Origin::parse(&l.origin))?,
        speaker: l.speaker.clone().map(|s| field("speaker", Name::new(s))).transpose()?,
    };
    Ok((record, links))
}

/// What a restore did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RestoredDto {
    pub(crate) records: usize,
    pub(crate) entities: usize,
    pub(crate) conflicts: usize,
    /// Records and entities the store held already (by id), left as they were.
    pub(crate) already_present: usize,
}

/// Restore exported memories (the lines `GET /v1/admin/export` writes) as they were.
///
/// Records keep their ids, statuses, history, times and links; nothing is decided again.
/// Each record is embedded by the served model. The lines of one request are restored in one
/// transaction, all or nothing; what the store holds already (by id) is left as it is, so a
/// request sent again changes nothing. Send entities before the records that link to them
/// and conflicts after both records (the export's order).
#[utoipa::path(
    post, path = "/v1/admin/import", operation_id = "restore", tag = "operations",
    request_body(content = String, content_type = "application/x-ndjson",
        description = "At most 1000 lines of an export, within server.body_limit_bytes."),
    responses(
        (status = 200, description = "What was restored", body = RestoredDto),
        (status = 401, description = "unauthorized", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, description = "forbidden (not the admin key)", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: a link names an entity that is neither restored nor stored", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 413, description = "payload_too_large: more than 1000 lines, or over the body limit", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 422, description = "validation_failed: a line (named in the detail) is not an export line, or the content-type is not JSON lines; nothing was restored", body = crate::error::Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn restore(
    State(state): State<AppState>,
    _: AdminKey,
    request: Request,
) -> ApiResult<Json<RestoredDto>> {
    let text = json_lines(request, &state).await?;
    let lines: Vec<&str> = text.lines().collect();
    let mut set = MemorySet::default();
    for (at, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let on_line = |e: ApiError| ApiError { detail: format!("line {}: {}", at + 1, e.detail), ..e };
        let parsed: ExportLine =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(line)).map_err(|e| {
                on_line(ApiError::validation(
                    field_of(&format!("{}: {}", e.path(), e.inner())),
                    e.inner().to_string(),
                ))
            })?;
        match parsed {
            ExportLine::Export { format, .. } if format != FORMAT => {
                return Err(on_line(ApiError::validation(
                    "format",
                    format!("format {format}; this service reads {FORMAT}"),
                )));
            }
            ExportLine::Export { .. } => {}
            ExportLine::Entity {
                id,
                kind,
                canonical_name,
                scope,
                status,
                merged_into,
                created_at,
                aliases,
            } => {
                let entity = (|| {
                    Ok::<_, ApiError>(Entity {
                        id: field("id", EntityId::new(id))?,
                        kind: field("kind", EntityKind::parse(&kind))?,
                        canonical_name: field("canonical_name", Name::new(canonical_name))?,
                        scope: field("scope", Scope::parse(&scope))?,
                        status: field("status", EntityStatus::parse(&status))?,
                        merged_into: merged_into
                            .map(|m| field("merged_into", EntityId::new(m)))
                            .transpose()?,
                        created_at,
                    })
                })()
                .map_err(on_line)?;
                let aliases = aliases
                    .into_iter()
                    .map(|a| field("aliases", Name::new(a)))
                    .collect::<Result<_, _>>()
                    .map_err(on_line)?;
                set.entities.push((entity, aliases));
            }
            ExportLine::Record(line) => {
                let (record, links) = record_of(&line).map_err(on_line)?;
                set.records.push(record);
                set.links.extend(links);
            }
            ExportLine::Conflict { record_id, conflicting_id } => {
                set.conflicts.push(ConflictLink {
                    record_id: field("record_id", RecordId::new(record_id)).map_err(on_line)?,
                    conflicting_id: field("conflicting_id", RecordId::new(conflicting_id))
                        .map_err(on_line)?,
                });
            }
        }
    }
    let restored = state.services.ingestor.restore(&set).await?;
    Ok(Json(RestoredDto {
        records: restored.records,
        entities: restored.entities,
        conflicts: restored.conflicts,
        already_present: restored.already_present,
    }))
}
