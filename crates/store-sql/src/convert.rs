//! Row ↔ domain conversion, in one place. No sea-orm type leaves this crate.

use std::collections::BTreeMap;

use retold_domain::EligibilityRow;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    AgentId, Attribute, AuditEvent, Confidence, Content, Context, Entity, EntityId, EntityKind, EntityStatus,
    EventId, EventKind, Evidence, FactKey, Grant, GrantId, LinkRole, MemoryRecord, MemoryType, Name, Origin,
    RecordEntityLink, RecordId, RecordKey, Scope, ScopeKind, SourceKind, SourceRef, Status, Tag, Timestamp,
};
use sea_orm::{QueryResult, Value};

use crate::error::{StoreError, corrupt};

/// Columns of `records` in the order [`record_values`] produces them.
pub const RECORD_COLUMNS: &str = "id, type, version, content, subject_entity_id, attribute, scope_kind, \
     scope_id, source_kind, source_ref, creator_agent_id, evidence, created_at, event_at, expires_at, confidence, \
     status, supersedes_id, reinforcements, last_reinforced_at, tags, context, origin, speaker";

pub fn millis(at: Timestamp) -> i64 {
    at.timestamp_millis()
}

fn from_millis(table: &'static str, value: i64) -> Result<Timestamp, StoreError> {
    DateTime::<Utc>::from_timestamp_millis(value)
        .ok_or_else(|| corrupt(table, format!("bad timestamp {value}")))
}

fn opt_millis(table: &'static str, value: Option<i64>) -> Result<Option<Timestamp>, StoreError> {
    value.map(|v| from_millis(table, v)).transpose()
}

/// The values of a record for an INSERT, in [`RECORD_COLUMNS`] order.
pub fn record_values(r: &MemoryRecord) -> Vec<Value> {
    let tags: Vec<&str> = r.tags.iter().map(Tag::as_str).collect();
    vec![
        r.id.as_str().into(),
        r.memory_type.as_str().into(),
        i64::from(r.version).into(),
        r.content.as_str().into(),
        r.key.as_ref().map(|k| k.subject_entity_id.as_str().to_owned()).into(),
        r.key.as_ref().map(|k| k.attribute.as_str().to_owned()).into(),
        r.scope.kind().as_str().into(),
        r.scope.id().into(),
        r.source_kind.as_str().into(),
        r.source_ref.as_ref().map(|s| s.as_str().to_owned()).into(),
        r.creator_agent_id.as_str().into(),
        r.evidence.as_ref().map(|e| e.as_str().to_owned()).into(),
        millis(r.created_at).into(),
        r.event_at.map(millis).into(),
        r.expires_at.map(millis).into(),
        r.confidence.get().into(),
        r.status.as_str().into(),
        r.supersedes_id.as_ref().map(|s| s.as_str().to_owned()).into(),
        i64::from(r.reinforcements).into(),
        r.last_reinforced_at.map(millis).into(),
        serde_json::to_string(&tags).expect("a list of strings serialises").into(),
        r.context.as_ref().map(|c| c.as_str().to_owned()).into(),
        r.origin.as_str().into(),
        r.speaker.as_ref().map(|s| s.as_str().to_owned()).into(),
    ]
}

fn get<T: sea_orm::TryGetable>(
    row: &QueryResult,
    table: &'static str,
    column: &str,
) -> Result<T, StoreError> {
    row.try_get::<T>("", column).map_err(|e| corrupt(table, format!("{column}: {e}")))
}

/// Build the domain record from a `SELECT key, <RECORD_COLUMNS>` row.
pub fn record_from_row(row: &QueryResult) -> Result<MemoryRecord, StoreError> {
    const T: &str = "records";
    RecordRow {
        id: get(row, T, "id")?,
        memory_type: get(row, T, "type")?,
        version: get(row, T, "version")?,
        content: get(row, T, "content")?,
        subject_entity_id: get(row, T, "subject_entity_id")?,
        attribute: get(row, T, "attribute")?,
        scope_kind: get(row, T, "scope_kind")?,
        scope_id: get(row, T, "scope_id")?,
        source_kind: get(row, T, "source_kind")?,
        source_ref: get(row, T, "source_ref")?,
        creator_agent_id: get(row, T, "creator_agent_id")?,
        evidence: get(row, T, "evidence")?,
        created_at: get(row, T, "created_at")?,
        event_at: get(row, T, "event_at")?,
        expires_at: get(row, T, "expires_at")?,
        confidence: get(row, T, "confidence")?,
        status: get(row, T, "status")?,
        supersedes_id: get(row, T, "supersedes_id")?,
        reinforcements: get(row, T, "reinforcements")?,
        last_reinforced_at: get(row, T, "last_reinforced_at")?,
        tags: get(row, T, "tags")?,
        context: get(row, T, "context")?,
        origin: get(row, T, "origin")?,
        speaker: get(row, T, "speaker")?,
    }
    .into_record()
}

/// The columns of one `records` row in [`RECORD_COLUMNS`] order, before they are checked.
/// A JSON array of them, as [`RECORDS_PACKED`] makes it, deserialises into one.
#[derive(Debug, serde::Deserialize)]
pub struct RecordRow {
    id: String,
    memory_type: String,
    version: i64,
    content: String,
    subject_entity_id: Option<String>,
    attribute: Option<String>,
    scope_kind: String,
    scope_id: String,
    source_kind: String,
    source_ref: Option<String>,
    creator_agent_id: String,
    evidence: Option<String>,
    created_at: i64,
    event_at: Option<i64>,
    expires_at: Option<i64>,
    confidence: f64,
    status: String,
    supersedes_id: Option<String>,
    reinforcements: i64,
    last_reinforced_at: Option<i64>,
    tags: String,
    context: Option<String>,
    origin: String,
    speaker: Option<String>,
}

/// SQLite: the selected `records` rows as one JSON array of [`RecordRow`]s (`[]` for none),
/// for `SELECT {RECORDS_PACKED} AS records FROM records WHERE …`. Through the driver every
/// row costs microseconds per column; one packed row for a search's hundred-odd candidates
/// took a third less time in the fetch stage. `confidence` is written with 17 significant
/// digits, which round-trip an `f64` (SQLite's JSON writes 15, which do not). Built once.
pub static RECORDS_PACKED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let columns = RECORD_COLUMNS.replace("confidence", "json(printf('%!.17g', confidence))");
    format!("json_group_array(json_array({columns}))")
});

/// PostgreSQL: the same packing as [`RECORDS_PACKED`]. Its JSON writes a `float8` in the
/// shortest form that round-trips, as the driver's sessions ask (`extra_float_digits` above 0).
pub static RECORDS_PACKED_POSTGRES: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("coalesce(json_agg(json_build_array({RECORD_COLUMNS})), '[]')::text")
});

/// The records of a packed read ([`RECORDS_PACKED`], [`RECORDS_PACKED_POSTGRES`]).
pub fn records_from_packed(packed: &str) -> Result<Vec<MemoryRecord>, StoreError> {
    let rows: Vec<RecordRow> = serde_json::from_str(packed).map_err(|e| corrupt("records", e))?;
    rows.into_iter().map(RecordRow::into_record).collect()
}

impl RecordRow {
    /// The record these columns hold, or `Corrupt` naming what does not parse.
    pub fn into_record(self) -> Result<MemoryRecord, StoreError> {
        const T: &str = "records";
        let bad = |e: retold_domain::DomainError| corrupt(T, e);
        let key = match (self.subject_entity_id, self.attribute) {
            (Some(entity), Some(attribute)) => Some(FactKey::new(
                EntityId::new(entity).map_err(bad)?,
                Attribute::new(attribute).map_err(bad)?,
            )),
            (None, None) => None,
            _ => return Err(corrupt(T, "subject_entity_id and attribute must be set together")),
        };
        let tags: Vec<String> =
            serde_json::from_str(&self.tags).map_err(|e| corrupt(T, format!("tags: {e}")))?;
        let scope =
            Scope::new(ScopeKind::parse(&self.scope_kind).map_err(bad)?, self.scope_id).map_err(bad)?;
        let u32_of = |column: &str, value: i64| -> Result<u32, StoreError> {
            u32::try_from(value).map_err(|e| corrupt(T, format!("{column}: {e}")))
        };
        Ok(MemoryRecord {
            id: RecordId::new(self.id).map_err(bad)?,
            memory_type: MemoryType::parse(&self.memory_type).map_err(bad)?,
            version: u32_of("version", self.version)?,
            content: content_or_erased(self.content).map_err(bad)?,
            key,
            scope,
            source_kind: SourceKind::parse(&self.source_kind).map_err(bad)?,
            source_ref: self.source_ref.map(SourceRef::new).transpose().map_err(bad)?,
            creator_agent_id: AgentId::new(self.creator_agent_id).map_err(bad)?,
            evidence: self.evidence.map(Evidence::new).transpose().map_err(bad)?,
            created_at: from_millis(T, self.created_at)?,
            event_at: opt_millis(T, self.event_at)?,
            expires_at: opt_millis(T, self.expires_at)?,
            confidence: Confidence::new(self.confidence).map_err(bad)?,
            status: Status::parse(&self.status).map_err(bad)?,
            supersedes_id: self.supersedes_id.map(RecordId::new).transpose().map_err(bad)?,
            reinforcements: u32_of("reinforcements", self.reinforcements)?,
            last_reinforced_at: opt_millis(T, self.last_reinforced_at)?,
            tags: tags.into_iter().map(Tag::new).collect::<Result<_, _>>().map_err(bad)?,
            context: self.context.map(Context::new).transpose().map_err(bad)?,
            origin: Origin::parse(&self.origin).map_err(bad)?,
            speaker: self.speaker.map(Name::new).transpose().map_err(bad)?,
        })
    }
}

/// Erased records keep their row with empty content; show a placeholder rather than fail.
fn content_or_erased(content: String) -> retold_domain::Result<Content> {
    if content.is_empty() { Content::new("[erased]") } else { Content::new(content) }
}

pub fn record_key(row: &QueryResult) -> Result<RecordKey, StoreError> {
    let key: i64 = get(row, "records", "key")?;
    u64::try_from(key).map(RecordKey).map_err(|e| corrupt("records", format!("key: {e}")))
}

pub fn link_from_row(row: &QueryResult) -> Result<RecordEntityLink, StoreError> {
    const T: &str = "record_entities";
    let bad = |e: retold_domain::DomainError| corrupt(T, e);
    Ok(RecordEntityLink {
        record_id: RecordId::new(get::<String>(row, T, "record_id")?).map_err(bad)?,
        entity_id: EntityId::new(get::<String>(row, T, "entity_id")?).map_err(bad)?,
        role: LinkRole::parse(&get::<String>(row, T, "role")?).map_err(bad)?,
    })
}

pub fn entity_from_row(row: &QueryResult) -> Result<Entity, StoreError> {
    const T: &str = "entities";
    let bad = |e: retold_domain::DomainError| corrupt(T, e);
    Ok(Entity {
        id: EntityId::new(get::<String>(row, T, "id")?).map_err(bad)?,
        kind: EntityKind::parse(&get::<String>(row, T, "kind")?).map_err(bad)?,
        canonical_name: Name::new(get::<String>(row, T, "canonical_name")?).map_err(bad)?,
        scope: Scope::new(
            ScopeKind::parse(&get::<String>(row, T, "scope_kind")?).map_err(bad)?,
            get::<String>(row, T, "scope_id")?,
        )
        .map_err(bad)?,
        status: EntityStatus::parse(&get::<String>(row, T, "status")?).map_err(bad)?,
        merged_into: get::<Option<String>>(row, T, "merged_into")?
            .map(EntityId::new)
            .transpose()
            .map_err(bad)?,
        created_at: from_millis(T, get(row, T, "created_at")?)?,
    })
}

pub fn grant_from_row(row: &QueryResult) -> Result<Grant, StoreError> {
    const T: &str = "grants";
    let bad = |e: retold_domain::DomainError| corrupt(T, e);
    Ok(Grant {
        id: GrantId::new(get::<String>(row, T, "id")?).map_err(bad)?,
        agent_id: AgentId::new(get::<String>(row, T, "agent_id")?).map_err(bad)?,
        scope: Scope::new(
            ScopeKind::parse(&get::<String>(row, T, "scope_kind")?).map_err(bad)?,
            get::<String>(row, T, "scope_id")?,
        )
        .map_err(bad)?,
        can_read: get::<i64>(row, T, "can_read")? != 0,
        can_write: get::<i64>(row, T, "can_write")? != 0,
    })
}

pub fn event_details(event: &AuditEvent) -> String {
    serde_json::to_string(&event.details).expect("a string map serialises")
}

pub fn event_from_row(row: &QueryResult) -> Result<AuditEvent, StoreError> {
    const T: &str = "events";
    let bad = |e: retold_domain::DomainError| corrupt(T, e);
    let details: BTreeMap<String, String> = serde_json::from_str(&get::<String>(row, T, "details")?)
        .map_err(|e| corrupt(T, format!("details: {e}")))?;
    Ok(AuditEvent {
        id: EventId::new(get::<String>(row, T, "id")?).map_err(bad)?,
        at: from_millis(T, get(row, T, "at")?)?,
        kind: EventKind::parse(&get::<String>(row, T, "kind")?).map_err(bad)?,
        record_id: get::<Option<String>>(row, T, "record_id")?.map(RecordId::new).transpose().map_err(bad)?,
        actor: get::<Option<String>>(row, T, "actor")?.map(AgentId::new).transpose().map_err(bad)?,
        details,
    })
}

/// An embedding row before it is written: its vector has `dims` numbers and its sentence
/// vectors are whole vectors of `dims`.
pub fn check_embedding_row(table: &'static str, row: &retold_domain::EmbeddingRow) -> Result<(), StoreError> {
    let dims = row.dims as usize;
    if row.vector.len() != dims {
        return Err(corrupt(
            table,
            format!("vector of {} numbers declared as {} dims", row.vector.len(), row.dims),
        ));
    }
    if !row.sentences.len().is_multiple_of(dims) {
        return Err(corrupt(
            table,
            format!(
                "sentence vectors of {} numbers are not whole vectors of {} dims",
                row.sentences.len(),
                row.dims
            ),
        ));
    }
    Ok(())
}

/// Little-endian `f32`s.
pub fn vector_to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One eligibility row as both stores pack it: `key|id|scope_kind|scope_id|status|type|
/// expires_at|event_at|version|loser`, times as milliseconds or empty, loser `1` or `0`.
pub fn parse_eligibility_row(line: &str) -> Result<EligibilityRow, StoreError> {
    let bad = |what: &str| corrupt("records", format!("eligibility row {line:?}: {what}"));
    // The last field, a turn record's source_ref, is the rest of the line.
    let fields: Vec<&str> = line.splitn(12, '|').collect();
    let [key, id, scope_kind, scope_id, status, kind, expires, event, version, loser, origin, cited] =
        fields[..]
    else {
        return Err(bad("wrong field count"));
    };
    let origin = Origin::parse(origin).map_err(|e| corrupt("records", e))?;
    let cited =
        (!cited.is_empty()).then(|| SourceRef::new(cited)).transpose().map_err(|e| corrupt("records", e))?;
    let time = |v: &str| -> Result<Option<retold_domain::Timestamp>, StoreError> {
        if v.is_empty() {
            return Ok(None);
        }
        let ms: i64 = v.parse().map_err(|_| bad("time"))?;
        retold_domain::chrono::DateTime::from_timestamp_millis(ms).map(Some).ok_or_else(|| bad("time"))
    };
    Ok(EligibilityRow {
        key: RecordKey(key.parse().map_err(|_| bad("key"))?),
        id: RecordId::new(id).map_err(|e| corrupt("records", e))?,
        scope: Scope::new(
            retold_domain::ScopeKind::parse(scope_kind).map_err(|e| corrupt("records", e))?,
            scope_id,
        )
        .map_err(|e| corrupt("records", e))?,
        status: retold_domain::Status::parse(status).map_err(|e| corrupt("records", e))?,
        memory_type: retold_domain::MemoryType::parse(kind).map_err(|e| corrupt("records", e))?,
        expires_at: time(expires)?,
        event_at: time(event)?,
        version: version.parse().map_err(|_| bad("version"))?,
        conflict_loser: loser == "1",
        origin,
        session: retold_domain::turn_session(origin, cited.as_ref()),
    })
}

/// Append one stored vector (`dims` little-endian `f32`s) and its sentence vectors (whole
/// vectors of `dims`, one after the other) to a boot scan.
pub fn push_vector(
    scan: &mut retold_domain::EmbeddingScan,
    key: i64,
    id: String,
    blob: &[u8],
    sentences: &[u8],
) -> Result<(), StoreError> {
    let stride = scan.dims as usize * 4;
    if blob.len() != stride {
        return Err(corrupt(
            "embeddings",
            format!("vector of key {key} has {} bytes, expected {stride}", blob.len()),
        ));
    }
    if stride == 0 || !sentences.len().is_multiple_of(stride) {
        return Err(corrupt(
            "embeddings",
            format!(
                "sentence vectors of key {key} have {} bytes, not whole vectors of {stride}",
                sentences.len()
            ),
        ));
    }
    let count = u32::try_from(sentences.len() / stride).map_err(|e| corrupt("embeddings", e))?;
    if count > 0 || !scan.sentence_counts.is_empty() {
        // Counts are kept from the first row that has sentence vectors: the rows before it
        // had none.
        scan.sentence_counts.resize(scan.keys.len(), 0);
        scan.sentence_counts.push(count);
        scan.sentences
            .extend(sentences.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    }
    scan.ids.push(RecordId::new(id).map_err(|e| corrupt("embeddings", e))?);
    scan.keys.push(RecordKey(u64::try_from(key).map_err(|e| corrupt("embeddings", e))?));
    scan.vectors.extend(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    Ok(())
}

/// Little-endian `f32`s back to a vector.
pub fn vector_from_blob(table: &'static str, blob: &[u8]) -> Result<Vec<f32>, StoreError> {
    if !blob.len().is_multiple_of(4) {
        return Err(corrupt(table, format!("a vector of {} bytes", blob.len())));
    }
    Ok(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// A record to embed from a `SELECT r.key, r.id, r.content, r.context, r.speaker, r.origin` row
/// (re-embedding, and sentence vectors a stopped process left waiting).
pub fn reembed_item(row: &QueryResult) -> Result<retold_domain::ReembedItem, StoreError> {
    let key: i64 = row.try_get("", "key")?;
    let id: String = row.try_get("", "id")?;
    Ok(retold_domain::ReembedItem {
        key: retold_domain::RecordKey(u64::try_from(key).map_err(|e| corrupt("records", e))?),
        id: retold_domain::RecordId::new(id).map_err(|e| corrupt("records", e))?,
        content: row.try_get("", "content")?,
        context: row.try_get("", "context")?,
        speaker: row.try_get("", "speaker")?,
        origin: retold_domain::Origin::parse(&row.try_get::<String>("", "origin")?)
            .map_err(|e| corrupt("records", e))?,
    })
}
