//! Wire types: every request and response body, documented field by field, validated at the
//! edge and converted by hand to and from domain types.

use chrono::{DateTime, Utc};
use retold_domain::{self as domain, MemoryRecord};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use validator::Validate;

use crate::error::ApiError;

/// An optional count. JSON Schema counts `5.0` as an integer, so it is read as 5; a fraction
/// or a negative number stays an error.
fn whole_number<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = number.as_u64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(f))
            .map(|f| f as u64)
    });
    match whole.and_then(|n| usize::try_from(n).ok()) {
        Some(n) => Ok(Some(n)),
        None => Err(serde::de::Error::custom(format!("{number} is not a whole number"))),
    }
}

/// The principal of the current agent run, asserted by the host.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct PrincipalDto {
    /// The agent's id (no `/`).
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) agent_id: String,
    /// The user's id (no `/`).
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) user_id: String,
    /// The project of the run, if any.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) project_id: Option<String>,
    /// The session of the run (`sess_…`), if any.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) session_id: Option<String>,
}

/// `memory_search` request.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// What to look for, as the agent would ask it. With `retrieval.pronouns` on (the
    /// default), a question in the first person ("my", "I") is read as the user's, about the
    /// principal's user; one in the second ("you") as about the principal's agent.
    #[validate(length(min = 1, max = 2000))]
    #[schema(min_length = 1, max_length = 2000)]
    pub(crate) query: String,
    /// Most results to return (default from configuration, capped by `retrieval.max_limit`).
    #[validate(range(min = 1, max = 1000))]
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "whole_number")]
    pub(crate) limit: Option<usize>,
    /// Only these memory types: semantic, episodic, procedural.
    #[validate(length(max = 3))]
    #[schema(max_items = 3)]
    pub(crate) types: Option<Vec<String>>,
    /// Only records whose event time is at or after this instant.
    pub(crate) event_from: Option<DateTime<Utc>>,
    /// Only records whose event time is before this instant.
    pub(crate) event_to: Option<DateTime<Utc>>,
    /// Also return superseded records.
    #[serde(default)]
    pub(crate) include_history: bool,
    /// Also return provisional records on the lower-trust side of a conflict (seed section 7:
    /// the confirmed record is the normal result); each is marked in its explanation.
    #[serde(default)]
    pub(crate) include_conflicts: bool,
    /// Only records of these origins: `memory` (written as a memory: `memory_write`,
    /// extraction, a session summary) or `turn` (a session turn kept verbatim by turn
    /// memory). Absent means both; `["memory"]` asks for distilled records only.
    #[validate(length(max = 2))]
    #[schema(max_items = 2)]
    pub(crate) origins: Option<Vec<String>>,
    /// Also the turn records of the session `principal.session_id` names. Off by default: a
    /// search made inside a session leaves out the conversation its caller is having.
    #[serde(default)]
    pub(crate) include_current_session: bool,
    /// Latest user and assistant turns, for query rewriting.
    #[validate(length(max = 10))]
    #[schema(max_items = 10)]
    #[serde(default)]
    pub(crate) context: Vec<String>,
    /// Most estimated tokens of what the results show (default `retrieval.token_budget`): each
    /// result shows its content, or a long record's `passage`; results are kept in rank order
    /// while that fits, and the first is returned even if it alone is larger. Any host may ask
    /// for more than the configured default.
    #[validate(range(min = 1, max = 1000000))]
    #[schema(minimum = 1, maximum = 1000000)]
    #[serde(default, deserialize_with = "whole_number")]
    pub(crate) token_budget: Option<usize>,
}

/// How one channel matched a result.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ChannelMatchDto {
    /// Rank within the channel (1 is best).
    pub(crate) rank: u32,
    /// The channel's score: cosine for dense, BM25 for lexical, matched entities for entity.
    pub(crate) score: f64,
    /// Matched query terms (lexical) or the linked entity and role (entity).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) terms: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entity_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<String>,
}

/// Which channels found a result.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct MatchesDto {
    pub(crate) dense: Option<ChannelMatchDto>,
    /// The dense channel's sentence list (`retrieval.fusion.sentences`): rank by the record's
    /// best sentence; score, the record's own cosine.
    pub(crate) sentence: Option<ChannelMatchDto>,
    /// The dense channel's list of the records inside the time the query names
    /// (`retrieval.fusion.window`): rank there; score, the record's own cosine.
    pub(crate) window: Option<ChannelMatchDto>,
    pub(crate) lexical: Option<ChannelMatchDto>,
    pub(crate) entity: Option<ChannelMatchDto>,
}

/// One memory record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RecordDto {
    pub(crate) id: String,
    /// semantic, episodic or procedural.
    #[serde(rename = "type")]
    pub(crate) memory_type: String,
    pub(crate) version: u32,
    pub(crate) content: String,
    pub(crate) subject_entity_id: Option<String>,
    pub(crate) attribute: Option<String>,
    /// `<entity_id>/<attribute>`, derived.
    pub(crate) subject: Option<String>,
    pub(crate) scope_kind: String,
    pub(crate) scope_id: String,
    pub(crate) source_kind: String,
    pub(crate) source_ref: Option<String>,
    pub(crate) creator_agent_id: String,
    pub(crate) evidence: Option<String>,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) event_at: Option<DateTime<Utc>>,
    pub(crate) expires_at: Option<DateTime<Utc>>,
    pub(crate) confidence: f64,
    /// provisional, confirmed, superseded, expired or deleted.
    pub(crate) status: String,
    pub(crate) supersedes_id: Option<String>,
    pub(crate) reinforcements: u32,
    pub(crate) last_reinforced_at: Option<DateTime<Utc>>,
    pub(crate) tags: Vec<String>,
    /// `memory` (written as a memory) or `turn` (a session turn kept verbatim; `source_ref`
    /// cites it).
    pub(crate) origin: String,
    /// Who said it, when the host named the speaker of the turn it keeps.
    pub(crate) speaker: Option<String>,
}

impl From<&MemoryRecord> for RecordDto {
    fn from(r: &MemoryRecord) -> Self {
        Self {
            id: r.id.to_string(),
            memory_type: r.memory_type.as_str().into(),
            version: r.version,
            content: r.content.as_str().into(),
            subject_entity_id: r.key.as_ref().map(|k| k.subject_entity_id.to_string()),
            attribute: r.key.as_ref().map(|k| k.attribute.to_string()),
            subject: r.subject(),
            scope_kind: r.scope.kind().as_str().into(),
            scope_id: r.scope.id().into(),
            source_kind: r.source_kind.as_str().into(),
            source_ref: r.source_ref.as_ref().map(|s| s.to_string()),
            creator_agent_id: r.creator_agent_id.to_string(),
            evidence: r.evidence.as_ref().map(|e| e.as_str().to_owned()),
            created_at: r.created_at,
            event_at: r.event_at,
            expires_at: r.expires_at,
            confidence: r.confidence.get(),
            status: r.status.as_str().into(),
            supersedes_id: r.supersedes_id.as_ref().map(|s| s.to_string()),
            reinforcements: r.reinforcements,
            last_reinforced_at: r.last_reinforced_at,
            tags: r.tags.iter().map(|t| t.as_str().to_owned()).collect(),
            origin: r.origin.as_str().into(),
            speaker: r.speaker.as_ref().map(|s| s.as_str().to_owned()),
        }
    }
}

/// One search result.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SearchResultDto {
    pub(crate) rank: u32,
    /// Fused score after freshness; with the reranker on, its fusion with the reranker's order.
    pub(crate) score: f64,
    pub(crate) fused_rank: u32,
    /// Why this record was returned, e.g. `matched: dense 0.71 (rank 2), lexical 3/3 terms (rank 1); fused rank: 1; gate: passed: 2 channels`.
    pub(crate) explanation: String,
    pub(crate) matched: MatchesDto,
    /// What to show of a record longer than `retrieval.passage_tokens`: the run of sentences
    /// with the most query words (its opening when none matches). `null` when the whole
    /// content is within the limit. The token budget counts the passage; `record.content`
    /// stays whole, and hosts render the passage (the adapters and the MCP text do).
    pub(crate) passage: Option<PassageDto>,
    pub(crate) record: RecordDto,
}

/// The shown part of a long record's content.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PassageDto {
    /// `record.content[start..end]`, with `…` where it cuts the content.
    pub(crate) text: String,
    /// First character shown (0-based, in Unicode code points).
    pub(crate) start: usize,
    /// One past the last character shown.
    pub(crate) end: usize,
}

/// `memory_search` response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SearchResponseDto {
    /// Id of the search_log trace (GET /v1/admin/search-log/{id}).
    pub(crate) search_id: String,
    pub(crate) results: Vec<SearchResultDto>,
    /// Records the principal could see before ranking.
    pub(crate) eligible_count: usize,
    /// off, unchanged, rewritten, failed: …, refused: ….
    pub(crate) rewrite_status: String,
}

/// `memory_get` request.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// Record ids (`mem_…`).
    #[validate(length(min = 1, max = 100))]
    #[schema(min_items = 1, max_items = 100)]
    pub(crate) ids: Vec<String>,
}

/// A conflict between two records of one current fact.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ConflictDto {
    /// The record that stays the normal result.
    pub(crate) record_id: String,
    /// The lower-trust record that contradicts it.
    pub(crate) conflicting_id: String,
}

/// A link from a record to an entity.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct LinkDto {
    pub(crate) entity_id: String,
    /// about or mentions.
    pub(crate) role: String,
}

/// A record with its links, conflicts and supersession chain.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RecordDetailDto {
    pub(crate) record: RecordDto,
    /// What the record was said in, as written (embedded with the content; search results
    /// leave it out).
    pub(crate) context: Option<String>,
    pub(crate) links: Vec<LinkDto>,
    pub(crate) conflicts: Vec<ConflictDto>,
    /// Older records this one replaced, newest first.
    pub(crate) supersedes: Vec<RecordDto>,
    /// Newer records that replaced this one.
    pub(crate) superseded_by: Vec<String>,
}

/// `memory_get` response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct GetResponseDto {
    pub(crate) records: Vec<RecordDetailDto>,
}

/// An entity named by id or by name.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntityRefDto {
    /// An existing entity id (`ent_…`).
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) id: Option<String>,
    /// A name or alias, resolved exactly in readable scopes; unknown names create a
    /// provisional entity.
    #[validate(length(min = 1, max = 200))]
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) name: Option<String>,
    /// For a new entity: person, project, repository, product, organization, other.
    pub(crate) kind: Option<String>,
}

/// `memory_write` request.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// semantic, episodic or procedural.
    #[serde(rename = "type")]
    pub(crate) memory_type: String,
    #[validate(length(min = 1, max = 8000))]
    #[schema(min_length = 1, max_length = 8000)]
    pub(crate) content: String,
    /// Where the memory belongs: `user:<id>`, `project:<id>`, `org:<id>`, `agent:<id>` or
    /// `agent:<agent>/<user>`.
    #[validate(length(min = 3, max = 300))]
    #[schema(min_length = 3, max_length = 300)]
    pub(crate) scope: String,
    /// The entity the memory is about.
    #[validate(nested)]
    pub(crate) subject: Option<EntityRefDto>,
    /// With `subject`: the current-fact attribute, e.g. `explanation_style`.
    #[validate(length(min = 1, max = 64))]
    #[schema(min_length = 1, max_length = 64)]
    pub(crate) attribute: Option<String>,
    /// Other entities the memory mentions.
    #[validate(length(max = 16), nested)]
    #[schema(max_items = 16)]
    #[serde(default)]
    pub(crate) mentions: Vec<EntityRefDto>,
    /// user_statement, system, tool_result, session_summary or agent_inference.
    pub(crate) source_kind: String,
    /// `session:<id><turn:N>`, `tool:<name>`, …
    #[validate(length(min = 1, max = 512))]
    #[schema(min_length = 1, max_length = 512)]
    pub(crate) source_ref: Option<String>,
    /// Supporting text, quoted verbatim from the cited turn for user and tool claims.
    #[validate(length(min = 1, max = 8000))]
    #[schema(min_length = 1, max_length = 8000)]
    pub(crate) evidence: Option<String>,
    /// When it happened (episodic) or applies from; defaults to now.
    pub(crate) event_at: Option<DateTime<Utc>>,
    /// When the memory stops being true (must be in the future); an agent inference keeps
    /// its provisional expiry when that comes sooner.
    pub(crate) expires_at: Option<DateTime<Utc>>,
    #[validate(length(max = 32))]
    #[schema(max_items = 32)]
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// What the memory was said in, e.g. the conversation turn before it. Embedded with the
    /// content, so that a reply ("Yes, last week!") is found by what it answers; kept with the
    /// record (`memory_get` shows it) and never returned in search results.
    #[validate(length(min = 1, max = 2000))]
    #[schema(min_length = 1, max_length = 2000)]
    pub(crate) context: Option<String>,
}

/// What an import did with each line.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ImportResponseDto {
    /// One per non-blank line, in line order.
    pub(crate) items: Vec<ImportItemDto>,
    /// How many lines had each outcome.
    pub(crate) counts: std::collections::BTreeMap<String, usize>,
}

/// What an import did with one line.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ImportItemDto {
    /// The line's number in the request body, from 1.
    pub(crate) line: usize,
    /// created, reinforced, superseding or conflicting (written now, as `memory_write`
    /// answers); already_imported (written by an earlier import; nothing written now);
    /// rejected (scope_not_writable, entity_ambiguous); invalid (the line was not read,
    /// validated or allowed: `code` and `field` say why).
    pub(crate) outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) record_id: Option<String>,
    /// The error code a `memory_write` of the line would have answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) field: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

/// The outcome of a write.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct WriteResponseDto {
    /// created, reinforced, superseding, conflicting (rejections are errors).
    pub(crate) outcome: String,
    pub(crate) record_id: String,
    /// Records this one superseded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) superseded: Vec<String>,
    /// The record this one conflicts with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) conflicts_with: Option<String>,
    pub(crate) reason: String,
}

/// What `memory_revise` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReviseActionDto {
    /// Confirm a provisional record (or reactivate an expired one).
    Confirm,
    /// Expire a record now.
    Expire,
    /// Replace a record with `replacement`, whatever the source ranks.
    Supersede,
    /// Merge entity `from` into `into`.
    MergeEntities,
}

/// `memory_revise` request.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviseBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    pub(crate) action: ReviseActionDto,
    /// The record to confirm, expire or supersede.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) id: Option<String>,
    /// For supersede: the replacement (its principal must match the request's).
    #[validate(nested)]
    pub(crate) replacement: Option<Box<WriteBody>>,
    /// For merge_entities: the entity merged away.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) from: Option<String>,
    /// For merge_entities: the surviving entity.
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) into: Option<String>,
}

/// The outcome of a revise or forget.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ReviseResponseDto {
    /// status_changed, written or entities_merged.
    pub(crate) outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) record_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) to_status: Option<String>,
    /// For a supersede: the replacement write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) write: Option<WriteResponseDto>,
}

/// `memory_forget` request.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) id: String,
    /// Why the memory is removed (kept in the audit trail).
    #[validate(length(min = 1, max = 1000))]
    #[schema(min_length = 1, max_length = 1000)]
    pub(crate) reason: String,
}

/// A grant.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrantBody {
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) agent_id: String,
    /// `user:<id>`, `project:<id>`, `org:<id>` or `agent:<id>` (private pair scopes are refused).
    #[validate(length(min = 3, max = 300))]
    #[schema(min_length = 3, max_length = 300)]
    pub(crate) scope: String,
    pub(crate) can_read: bool,
    pub(crate) can_write: bool,
}

/// A stored grant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct GrantDto {
    pub(crate) id: String,
    pub(crate) agent_id: String,
    pub(crate) scope: String,
    pub(crate) can_read: bool,
    pub(crate) can_write: bool,
}

/// Grants of an agent.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct GrantListDto {
    pub(crate) grants: Vec<GrantDto>,
}

/// A new entity.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntityBody {
    /// person, project, repository, product, organization or other.
    pub(crate) kind: String,
    #[validate(length(min = 1, max = 200))]
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) canonical_name: String,
    /// The scope the entity lives in.
    #[validate(length(min = 3, max = 300))]
    #[schema(min_length = 3, max_length = 300)]
    pub(crate) scope: String,
    #[validate(length(max = 32))]
    #[schema(max_items = 32)]
    #[serde(default)]
    pub(crate) aliases: Vec<String>,
}

/// A stored entity.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct EntityDto {
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) canonical_name: String,
    pub(crate) scope: String,
    pub(crate) status: String,
    pub(crate) aliases: Vec<String>,
}

/// An alias to add.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct AliasBody {
    #[validate(length(min = 1, max = 200))]
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) alias: String,
}

/// Entities to merge.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeBody {
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) from: String,
    #[validate(length(min = 1, max = 128))]
    #[schema(min_length = 1, max_length = 128)]
    pub(crate) into: String,
}

/// A host key to create.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostKeyBody {
    #[validate(length(min = 1, max = 100))]
    #[schema(min_length = 1, max_length = 100)]
    pub(crate) name: String,
    /// Agent ids the key may assert; empty = any agent.
    #[validate(length(max = 100))]
    #[schema(max_items = 100)]
    #[serde(default)]
    pub(crate) agents: Vec<String>,
}

/// A created host key: the secret is shown once and stored only hashed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct HostKeyDto {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) key: String,
    pub(crate) agents: Vec<String>,
}

/// A session to start.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// Tags that hold for this session: a conditional record tagged with one of them is in
    /// its profile (as are records tagged `project:<the principal's project>` or
    /// `agent:<its agent>`).
    #[serde(default)]
    #[validate(length(max = 32))]
    #[schema(max_items = 32)]
    pub(crate) tags: Vec<String>,
    /// Where turn memory keeps this session's turns: a scope the principal may write (a
    /// project's shared memory, say). Absent: the principal's private scope
    /// `agent:<agent_id>/<user_id>`.
    pub(crate) scope: Option<String>,
}

/// A started session and the profile it starts with.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct SessionDto {
    /// The session id to cite in `session:<id><turn:N>`.
    pub(crate) id: String,
    pub(crate) profile: ProfileDto,
}

/// One record in a profile and why it is there.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ProfileEntryDto {
    pub(crate) record_id: String,
    pub(crate) category: String,
    /// The policy that made it ambient and the rule that put it in its category.
    pub(crate) why: String,
}

/// The immutable profile a session starts with: text for the system prompt, the records it
/// holds, and a hash of the text.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ProfileDto {
    pub(crate) session_id: String,
    pub(crate) created_at: chrono::DateTime<chrono::Utc>,
    pub(crate) text: String,
    pub(crate) records: Vec<ProfileEntryDto>,
    /// Estimated tokens of `text`, within `activation.profile_token_budget`.
    pub(crate) tokens: u32,
    /// Ambient records the budget left out (whole records only).
    pub(crate) cut: u32,
    /// SHA-256 of `text`, hex.
    pub(crate) content_hash: String,
}

impl ProfileDto {
    pub(crate) fn of(p: &retold_domain::ProfileBlock) -> Self {
        Self {
            session_id: p.session_id.to_string(),
            created_at: p.created_at,
            text: p.text.clone(),
            records: p
                .entries
                .iter()
                .map(|e| ProfileEntryDto {
                    record_id: e.record_id.to_string(),
                    category: e.category.clone(),
                    why: e.why.clone(),
                })
                .collect(),
            tokens: p.tokens,
            cut: p.cut,
            content_hash: p.content_hash.clone(),
        }
    }
}

/// The principal, for calls that only need who is asking.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct PrincipalBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
}

/// A count of records, without their content.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct CountDto {
    pub(crate) name: String,
    pub(crate) count: u64,
}

/// What the principal could search, without content, subjects or ids.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct InventoryDto {
    /// Semantic records per activation category.
    pub(crate) categories: Vec<CountDto>,
    /// Records per memory type.
    pub(crate) types: Vec<CountDto>,
    pub(crate) total: u64,
}

/// A turn to append.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct TurnBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// user, assistant or tool.
    pub(crate) role: String,
    /// The turn's text. With turn memory on it is also kept as searchable records: one, or
    /// for a turn longer than a record holds, one per part, cut at line and sentence ends.
    #[validate(length(min = 1, max = 100000))]
    #[schema(min_length = 1, max_length = 100000)]
    pub(crate) content: String,
    /// Who spoke, when the session has more voices than its user, agent and tools (a group
    /// chat, a multi-party transcript): the name a search knows them by. Absent: the
    /// session's user for a user turn, its agent for an assistant turn.
    #[validate(length(min = 1, max = 200))]
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) speaker: Option<String>,
    /// When it was said, for a host that replays or imports history: not in the future, and
    /// not before the session's previous turn. Absent: now.
    pub(crate) at: Option<DateTime<Utc>>,
}

/// An appended turn.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TurnDto {
    /// The turn number (1, 2, …) to cite as `session:<id><turn:N>`.
    pub(crate) turn: u32,
    pub(crate) source_ref: String,
    /// What turn memory did: `kept` (its records are searchable now), `off`
    /// (`sessions.turn_memory` is off), or `scope_not_writable` (the session's scope is no
    /// longer writable by its principal); the turn is in the transcript in every case.
    pub(crate) memory: String,
    /// The records that keep it, in order (several for a long turn).
    pub(crate) record_ids: Vec<String>,
}

/// A session to end.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndSessionBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// Run the session's extraction before answering and return its report (200) instead of
    /// starting it in the background (204).
    #[serde(default)]
    pub(crate) wait_for_extraction: bool,
}

/// A write made by extraction: its outcome and record, or why it failed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExtractionWriteDto {
    /// created, reinforced, superseding, conflicting or rejected; already_written when an
    /// earlier attempt of this session's extraction wrote the same candidate (nothing was
    /// written again); absent when the write failed.
    pub(crate) outcome: Option<String>,
    pub(crate) record_id: Option<String>,
    /// Why the write was rejected or failed.
    pub(crate) reason: Option<String>,
}

impl ExtractionWriteDto {
    pub(crate) fn from_write(write: &Result<retold_ingest::KeyedWrite, String>) -> Self {
        match write {
            Ok(written) => Self {
                outcome: Some(written.kind().to_owned()),
                record_id: written.record_id().map(ToString::to_string),
                reason: match written {
                    retold_ingest::KeyedWrite::Written(retold_ingest::WriteOutcome::Rejected {
                        reason,
                        ..
                    }) => Some(reason.clone()),
                    _ => None,
                },
            },
            // The text may name internals; it is on the extraction.run event for the admin.
            Err(_) => Self {
                outcome: None,
                record_id: None,
                reason: Some("the write failed; the session's extraction.run event says why".into()),
            },
        }
    }
}

/// What review did to a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReviewDto {
    /// Failed validation before review; not written.
    Invalid,
    Accepted,
    /// The narrowed revision was written instead of the original.
    Revised,
    /// The revision was refused; the original was written.
    RevisionRefused,
    /// Not written.
    Rejected,
    /// The reviewer gave no usable verdict; not written.
    Unreviewed,
}

impl From<&retold_ingest::ReviewResult> for ReviewDto {
    fn from(review: &retold_ingest::ReviewResult) -> Self {
        use retold_ingest::ReviewResult as R;
        match review {
            R::Invalid { .. } => Self::Invalid,
            R::Accepted => Self::Accepted,
            R::Revised => Self::Revised,
            R::RevisionRefused { .. } => Self::RevisionRefused,
            R::Rejected { .. } => Self::Rejected,
            R::Unreviewed { .. } => Self::Unreviewed,
        }
    }
}

/// One candidate's path through extraction.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExtractionCandidateDto {
    /// Position among the extractor's candidates.
    pub(crate) index: usize,
    pub(crate) review: ReviewDto,
    pub(crate) reason: Option<String>,
    /// Absent when nothing was written (invalid, rejected).
    pub(crate) write: Option<ExtractionWriteDto>,
}

/// What extraction did for one session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExtractionReportDto {
    pub(crate) session_id: String,
    /// extracted, skipped (claimed or extracted already, still open, or out of attempts),
    /// failed (retried later while attempts remain), or off.
    pub(crate) status: String,
    pub(crate) reason: Option<String>,
    pub(crate) candidates: Vec<ExtractionCandidateDto>,
    /// Proposals that could not be read as candidates.
    pub(crate) malformed: Vec<String>,
    /// The session summary's write.
    pub(crate) summary: Option<ExtractionWriteDto>,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
}

impl ExtractionReportDto {
    pub(crate) fn status(session: &domain::SessionId, status: &str, reason: impl Into<String>) -> Self {
        Self {
            session_id: session.to_string(),
            status: status.to_owned(),
            reason: Some(reason.into()),
            candidates: Vec::new(),
            malformed: Vec::new(),
            summary: None,
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    /// A run's result; a failure's text is logged by the runner and recorded on the
    /// session's extraction.failed event, not returned.
    pub(crate) fn from_run(
        session: &domain::SessionId,
        run: domain::Result<retold_ingest::ExtractionReport>,
    ) -> Self {
        use retold_ingest::ExtractionReport;
        match run {
            Ok(ExtractionReport::Skipped { reason, .. }) => Self::status(session, "skipped", reason),
            Ok(ExtractionReport::Extracted { malformed, candidates, summary, usage, .. }) => Self {
                session_id: session.to_string(),
                status: "extracted".into(),
                reason: None,
                candidates: candidates
                    .iter()
                    .map(|c| ExtractionCandidateDto {
                        index: c.index,
                        review: ReviewDto::from(&c.review),
                        reason: match &c.review {
                            retold_ingest::ReviewResult::Invalid { reason }
                            | retold_ingest::ReviewResult::RevisionRefused { reason }
                            | retold_ingest::ReviewResult::Rejected { reason }
                            | retold_ingest::ReviewResult::Unreviewed { reason } => Some(reason.clone()),
                            retold_ingest::ReviewResult::Accepted | retold_ingest::ReviewResult::Revised => {
                                None
                            }
                        },
                        write: c.write.as_ref().map(ExtractionWriteDto::from_write),
                    })
                    .collect(),
                malformed,
                summary: summary.as_ref().map(ExtractionWriteDto::from_write),
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
            },
            // The runner logged the failure and recorded it on the extraction.failed event.
            Err(_) => Self::status(
                session,
                "failed",
                "extraction failed; the session's extraction.failed event says why",
            ),
        }
    }
}

/// Run extraction now.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtractionRunBody {
    /// This session only; otherwise ended sessions nobody has extracted yet, oldest first.
    pub(crate) session_id: Option<String>,
    /// Most sessions to run (default 16).
    #[validate(range(min = 1, max = 100))]
    #[schema(minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "whole_number")]
    pub(crate) limit: Option<usize>,
}

/// Extraction reports.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExtractionRunDto {
    pub(crate) reports: Vec<ExtractionReportDto>,
}

/// One audit event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct EventDto {
    pub(crate) id: String,
    pub(crate) at: DateTime<Utc>,
    pub(crate) kind: String,
    pub(crate) record_id: Option<String>,
    pub(crate) actor: Option<String>,
    pub(crate) details: std::collections::BTreeMap<String, String>,
}

/// A record's audit history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct EventListDto {
    pub(crate) events: Vec<EventDto>,
}

/// Readiness.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ReadyDto {
    pub(crate) status: String,
    pub(crate) model: String,
    pub(crate) vectors: usize,
}

/// Parse a field with a domain constructor, naming the field on failure.
pub(crate) fn field<T>(name: &str, result: domain::Result<T>) -> Result<T, ApiError> {
    result.map_err(|e| match e {
        domain::DomainError::Invalid { reason, .. } => ApiError::validation(name, reason),
        other => ApiError::from(other),
    })
}

/// A turn and the host model's draft answer, for the orchestrator's decision.
#[derive(Debug, Clone, Deserialize, ToSchema, Validate)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionBody {
    #[validate(nested)]
    pub(crate) principal: PrincipalDto,
    /// The user's message.
    #[validate(length(min = 1, max = 20000))]
    #[schema(min_length = 1, max_length = 20000)]
    pub(crate) turn: String,
    /// The draft answer the host's model wrote.
    #[validate(length(min = 1, max = 20000))]
    #[schema(min_length = 1, max_length = 20000)]
    pub(crate) draft: String,
    /// Milliseconds the decision may take (default `orchestrator.deadline_ms`, at most
    /// `orchestrator.max_deadline_ms`); past it the draft is kept.
    #[validate(range(min = 1, max = 120000))]
    #[schema(minimum = 1, maximum = 120000)]
    #[serde(default, deserialize_with = "whole_number")]
    pub(crate) deadline_ms: Option<usize>,
}

/// A gap the draft has.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct GapDto {
    /// hedge, placeholder, inventory or planned.
    pub(crate) kind: String,
    /// The search query for the gap.
    pub(crate) query: String,
    /// What showed the gap.
    pub(crate) evidence: String,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DecisionTimingsDto {
    pub(crate) plan_ms: f64,
    pub(crate) retrieve_ms: f64,
    pub(crate) admit_ms: f64,
    pub(crate) regenerate_ms: f64,
    pub(crate) total_ms: f64,
}

/// A searched record that was not admitted, and why.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RefusedDto {
    pub(crate) record_id: String,
    /// irrelevant, already_stated, in_profile, not_eligible or over_cap.
    pub(crate) reason: String,
}

/// One host-issued memory decision for a turn, as stored.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DecisionDto {
    pub(crate) id: String,
    pub(crate) session_id: String,
    pub(crate) created_at: chrono::DateTime<chrono::Utc>,
    pub(crate) bundle_id: String,
    /// draft_kept or regenerated.
    pub(crate) disposition: String,
    /// Why the draft was kept: no_gaps, nothing_admitted, unfit_bundle or failed.
    pub(crate) reason: Option<String>,
    /// What failed, for reason `failed`.
    pub(crate) failure: Option<String>,
    pub(crate) gaps: Vec<GapDto>,
    /// One search id per gap searched (`GET /v1/admin/search-log/{id}` explains each).
    pub(crate) searches: Vec<String>,
    /// Ids of the admitted records.
    pub(crate) admitted: Vec<String>,
    pub(crate) timings: DecisionTimingsDto,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// The regenerated answer; only with disposition `regenerated`.
    pub(crate) answer: Option<String>,
}

impl DecisionDto {
    pub(crate) fn of(d: &retold_domain::TurnMemoryDecision) -> Self {
        let (reason, failure) = match &d.disposition {
            retold_domain::Disposition::Regenerated => (None, None),
            retold_domain::Disposition::DraftKept(reason) => (
                Some(reason.code().to_owned()),
                match reason {
                    retold_domain::KeptReason::Failed(why) => Some(why.clone()),
                    _ => None,
                },
            ),
        };
        let t = &d.timings;
        Self {
            id: d.id.to_string(),
            session_id: d.session_id.to_string(),
            created_at: d.created_at,
            bundle_id: d.bundle_id.clone(),
            disposition: d.disposition.as_str().to_owned(),
            reason,
            failure,
            gaps: d
                .gaps
                .iter()
                .map(|g| GapDto {
                    kind: g.kind.as_str().to_owned(),
                    query: g.query.clone(),
                    evidence: g.evidence.clone(),
                })
                .collect(),
            searches: d.searches.iter().map(ToString::to_string).collect(),
            admitted: d.admitted.iter().map(ToString::to_string).collect(),
            timings: DecisionTimingsDto {
                plan_ms: t.plan_ms,
                retrieve_ms: t.retrieve_ms,
                admit_ms: t.admit_ms,
                regenerate_ms: t.regenerate_ms,
                total_ms: t.total_ms,
            },
            input_tokens: d.input_tokens,
            output_tokens: d.output_tokens,
            answer: d.answer.clone(),
        }
    }
}

/// A decision with the admitted records (the host may use them itself when the draft was
/// kept) and why each other searched record was not admitted.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DecisionOutcomeDto {
    pub(crate) decision: DecisionDto,
    pub(crate) admitted_records: Vec<RecordDto>,
    pub(crate) refused: Vec<RefusedDto>,
}

/// One turn of a session's transcript.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TranscriptTurnDto {
    /// The turn number, cited as `session:<id><turn:N>`.
    #[schema(minimum = 1)]
    pub(crate) turn: u32,
    /// user, assistant or tool.
    pub(crate) role: String,
    /// Who spoke, when the host named them.
    pub(crate) speaker: Option<String>,
    pub(crate) content: String,
    /// When it was said.
    pub(crate) at: DateTime<Utc>,
    /// When the service recorded it.
    pub(crate) created_at: DateTime<Utc>,
}

/// A session's transcript, in turn order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TranscriptDto {
    pub(crate) session_id: String,
    pub(crate) turns: Vec<TranscriptTurnDto>,
}

/// A session's decisions, oldest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct DecisionListDto {
    pub(crate) decisions: Vec<DecisionDto>,
}
