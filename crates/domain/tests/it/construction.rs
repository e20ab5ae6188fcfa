use retold_domain::{
    AgentId, Attribute, Confidence, Content, DomainError, EntityId, FactKey, MemoryType, Name, RecordId,
    Scope, ScopeKind, SessionId, SourceRef, Status, UserId,
};

fn refused_field<T: std::fmt::Debug>(result: Result<T, DomainError>) -> &'static str {
    match result {
        Err(DomainError::Invalid { field, .. }) => field,
        other => panic!("expected a construction error, got {other:?}"),
    }
}

#[test]
fn prefixed_ids_need_their_prefix_and_a_clean_body() {
    assert!(RecordId::new("mem_01J9K4D0S6H2V8P3X7M5Q1R9T").is_ok());
    assert!(EntityId::new("ent_person_aditya").is_ok());
    assert!(SessionId::new("sess_42").is_ok());
    for bad in ["", "mem_", "ent_person", "mem_a b", "mem_x/y", "MEM_abc", "mem_é"] {
        assert_eq!(refused_field(RecordId::new(bad)), "record_id", "{bad:?} must be refused");
    }
    assert_eq!(refused_field(EntityId::new("mem_abc")), "entity_id");
    assert_eq!(refused_field(SessionId::new("42")), "session_id");
    assert_eq!(refused_field(RecordId::new(format!("mem_{}", "a".repeat(200)))), "record_id");
}

#[test]
fn agent_and_user_ids_refuse_slash_colon_and_blank() {
    assert!(AgentId::new("research-agent").is_ok());
    assert!(UserId::new("aditya").is_ok());
    assert!(UserId::new("aditya@example.com").is_ok());
    for bad in ["", "a/b", "a:b", "a b", "x\n", "<turn>"] {
        assert_eq!(refused_field(AgentId::new(bad)), "agent_id", "{bad:?}");
        assert_eq!(refused_field(UserId::new(bad)), "user_id", "{bad:?}");
    }
}

#[test]
fn implicit_private_scope_is_agent_slash_user() {
    let agent = AgentId::new("researcher").unwrap();
    let user = UserId::new("aditya").unwrap();
    let scope = Scope::private(&agent, &user);
    assert_eq!(scope.to_string(), "agent:researcher/aditya");
    assert_eq!(scope.kind(), ScopeKind::Agent);
    assert!(scope.is_private());
    assert_eq!(scope.private_owner(), Some((agent, user)));
    // A plain agent scope is not private.
    let plain = Scope::parse("agent:researcher").unwrap();
    assert!(!plain.is_private());
    assert_eq!(plain.private_owner(), None);
}

#[test]
fn private_scope_cannot_be_built_from_ids_containing_slash() {
    // The ids themselves refuse `/`, so `agent:a/b/c` can never be encoded ambiguously.
    assert!(AgentId::new("a/b").is_err());
    assert!(UserId::new("b/c").is_err());
    assert_eq!(refused_field(Scope::parse("agent:a/b/c")), "scope_id");
    assert_eq!(refused_field(Scope::parse("agent:/aditya")), "scope_id");
    assert_eq!(refused_field(Scope::parse("agent:researcher/")), "scope_id");
}

#[test]
fn scopes_parse_and_refuse_bad_forms() {
    for good in ["user:aditya", "project:agentic-memory-system", "org:acme", "agent:researcher/aditya"] {
        assert_eq!(Scope::parse(good).unwrap().to_string(), good);
    }
    assert_eq!(refused_field(Scope::parse("user:a/b")), "scope_id");
    assert_eq!(refused_field(Scope::parse("project:a/b")), "scope_id");
    assert_eq!(refused_field(Scope::parse("team:x")), "scope_kind");
    assert_eq!(refused_field(Scope::parse("user")), "scope");
    assert_eq!(refused_field(Scope::parse("user:")), "scope_id");
    assert_eq!(refused_field(Scope::new(ScopeKind::Org, "ac me")), "scope_id");
}

#[test]
fn confidence_lies_in_unit_interval() {
    for good in [0.0, 0.6, 0.99, 1.0] {
        assert_eq!(Confidence::new(good).unwrap().get(), good);
    }
    for bad in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
        assert_eq!(refused_field(Confidence::new(bad)), "confidence", "{bad}");
    }
}

#[test]
fn content_must_be_non_empty_and_bounded() {
    assert!(Content::new("Aditya prefers concise technical explanations.").is_ok());
    assert!(Content::new("Ünïcödé ✓ 日本語").is_ok());
    for bad in ["", "   ", "\n\t"] {
        assert_eq!(refused_field(Content::new(bad)), "content");
    }
    assert_eq!(refused_field(Content::new("x".repeat(8_001))), "content");
    assert_eq!(refused_field(Content::new("a\0b")), "content");
}

#[test]
fn subject_is_derived_from_entity_and_attribute() {
    let key = FactKey::new(
        EntityId::new("ent_person_aditya").unwrap(),
        Attribute::new("explanation_style").unwrap(),
    );
    assert_eq!(key.subject(), "ent_person_aditya/explanation_style");
    let key = FactKey::new(
        EntityId::new("ent_project_agentic_memory_system").unwrap(),
        Attribute::new("commit_convention").unwrap(),
    );
    assert_eq!(key.subject(), "ent_project_agentic_memory_system/commit_convention");
    for bad in ["", "Explanation", "explanation-style", "1style", "a/b"] {
        assert_eq!(refused_field(Attribute::new(bad)), "attribute", "{bad:?}");
    }
}

#[test]
fn source_ref_parses_session_turns() {
    let r = SourceRef::new("session:sess_42<turn:7>").unwrap();
    assert_eq!(r.session_turn(), Some((SessionId::new("sess_42").unwrap(), 7)));
    assert_eq!(SourceRef::session_turn_ref(&SessionId::new("sess_42").unwrap(), 7), r);
    assert_eq!(SourceRef::new("tool:github-commit-abc123").unwrap().session_turn(), None);
    let whole = SourceRef::new("session:sess_42").unwrap();
    assert_eq!(whole.session_turn(), None, "a whole-session reference cites no turn");
    assert_eq!(whole.session(), Some(SessionId::new("sess_42").unwrap()));
    assert_eq!(SourceRef::session_ref(&SessionId::new("sess_42").unwrap()), whole);
    assert_eq!(r.session(), Some(SessionId::new("sess_42").unwrap()));
    for bad in [
        "session:sess_42<turn:x>",
        "session:42<turn:1>",
        "session:42",
        "",
        "session:sess_1<turn:>",
        "session:sess_1<turn:2",
    ] {
        assert_eq!(refused_field(SourceRef::new(bad)), "source_ref", "{bad:?}");
    }
}

#[test]
fn enums_round_trip_their_stable_names() {
    for t in MemoryType::ALL {
        assert_eq!(MemoryType::parse(t.as_str()).unwrap(), t);
    }
    for s in Status::ALL {
        assert_eq!(Status::parse(s.as_str()).unwrap(), s);
    }
    for k in ScopeKind::ALL {
        assert_eq!(ScopeKind::parse(k.as_str()).unwrap(), k);
    }
    assert_eq!(refused_field(MemoryType::parse("factual")), "type");
    assert_eq!(refused_field(Status::parse("active")), "status");
    assert!(!MemoryType::Episodic.has_current_fact_key());
    assert!(MemoryType::Semantic.has_current_fact_key() && MemoryType::Procedural.has_current_fact_key());
    let active: Vec<_> = Status::ALL.into_iter().filter(|s| s.is_active()).collect();
    assert_eq!(active, [Status::Provisional, Status::Confirmed]);
    assert!(!Status::Deleted.keeps_indexes() && Status::Superseded.keeps_indexes());
}

#[test]
fn names_fold_for_exact_lookup() {
    let name = Name::new("  Memory   System ").unwrap();
    assert_eq!(name.as_str(), "Memory   System");
    assert_eq!(name.folded(), "memory system");
    assert!(Name::new(" ").is_err());
}
