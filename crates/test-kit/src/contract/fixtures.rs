//! Rows the contract builds its cases from.

use std::collections::BTreeMap;

use retold_domain::chrono::{TimeZone, Utc};
use retold_domain::{
    AgentId, AuditEvent, Confidence, Content, Context, EligibilityFilter, Entity, EntityId, EntityKind,
    EntityStatus, EventId, Evidence, FactKey, MemoryRecord, MemoryType, Name, RecordId, Scope, SourceKind,
    SourceRef, Status, Tag, Timestamp,
};

pub fn t(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 9, day, 12, 0, 0).unwrap()
}

pub fn record(n: u32, scope: &str, content: &str) -> MemoryRecord {
    MemoryRecord {
        id: RecordId::new(format!("mem_{n:04}")).unwrap(),
        memory_type: MemoryType::Semantic,
        version: 1,
        content: Content::new(content).unwrap(),
        key: None,
        scope: Scope::parse(scope).unwrap(),
        source_kind: SourceKind::UserStatement,
        source_ref: None,
        creator_agent_id: AgentId::new("research-agent").unwrap(),
        evidence: None,
        created_at: t(3),
        event_at: Some(t(3)),
        expires_at: None,
        confidence: Confidence::new(0.95).unwrap(),
        status: Status::Confirmed,
        supersedes_id: None,
        reinforcements: 0,
        last_reinforced_at: None,
        tags: Vec::new(),
        context: None,
        origin: retold_domain::Origin::Memory,
        speaker: None,
    }
}

static EVENT_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn event(kind: &str, record: Option<&RecordId>) -> AuditEvent {
    let n = EVENT_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    AuditEvent {
        id: EventId::new(format!("evt_{n:06}")).unwrap(),
        at: t(3),
        kind: retold_domain::EventKind::parse(kind).unwrap(),
        record_id: record.cloned(),
        actor: Some(AgentId::new("research-agent").unwrap()),
        details: BTreeMap::from([("reason".to_owned(), "test".to_owned())]),
    }
}

pub fn entity(id: &str, name: &str, scope: &str) -> Entity {
    Entity {
        id: EntityId::new(id).unwrap(),
        kind: EntityKind::Project,
        canonical_name: Name::new(name).unwrap(),
        scope: Scope::parse(scope).unwrap(),
        status: EntityStatus::Confirmed,
        merged_into: None,
        created_at: t(1),
    }
}

pub fn full_record() -> MemoryRecord {
    MemoryRecord {
        id: RecordId::new("mem_01J9K4D0S6H2V8P3X7M5Q1R9T").unwrap(),
        memory_type: MemoryType::Semantic,
        version: 1,
        content: Content::new(
            "Aditya prefers concise technical explanations. Ünïcödé ✓ 日本語 ".repeat(100).trim().to_owned(),
        )
        .unwrap(),
        key: Some(FactKey::new(
            EntityId::new("ent_person_aditya").unwrap(),
            retold_domain::Attribute::new("explanation_style").unwrap(),
        )),
        scope: Scope::parse("user:aditya").unwrap(),
        source_kind: SourceKind::UserStatement,
        source_ref: Some(SourceRef::new("session:sess_42<turn:7>").unwrap()),
        creator_agent_id: AgentId::new("research-agent").unwrap(),
        evidence: Some(Evidence::new("Keep answers concise.").unwrap()),
        created_at: t(3),
        event_at: Some(t(3)),
        expires_at: None,
        confidence: Confidence::new(0.95).unwrap(),
        status: Status::Confirmed,
        supersedes_id: None,
        reinforcements: 0,
        last_reinforced_at: None,
        tags: vec![Tag::new("communication").unwrap(), Tag::new("préférence").unwrap()],
        context: Some(Context::new("Sam: Quel format préfères-tu pour les rapports ?").unwrap()),
        origin: retold_domain::Origin::Turn,
        speaker: Some(Name::new("Aditya Rao").unwrap()),
    }
}

/// What a search in `scopes` may see at day 10: the active statuses, no other limit.
pub fn filter(scopes: &[&str]) -> EligibilityFilter {
    EligibilityFilter {
        scopes: scopes.iter().map(|s| Scope::parse(s).unwrap()).collect(),
        statuses: EligibilityFilter::statuses_for(false),
        now: t(10),
        types: None,
        event_from: None,
        event_to: None,
        include_conflicts: false,
        origins: None,
        excluded_session: None,
    }
}

/// Search `n`'s trace, written on day 3.
pub fn trace(n: u32) -> retold_domain::SearchTrace {
    retold_domain::SearchTrace {
        id: retold_domain::SearchId::new(format!("srch_{n:05}")).unwrap(),
        at: t(3),
        agent_id: AgentId::new("research-agent").unwrap(),
        user_id: retold_domain::UserId::new("aditya").unwrap(),
        request: vec![("query".into(), format!("question {n}"))],
        query: format!("question {n}"),
        rewrite_status: retold_domain::RewriteStatus::Off,
        rewrite_note: None,
        eligible_count: u64::from(n),
        channels: vec![],
        fused: vec![],
        drops: vec![],
        notes: vec![],
        results: vec![],
        timings_us: vec![(retold_domain::PipelineStage::Total, 1)],
    }
}
