//! The seed's worked examples, each asserting the final rows and the audit events.

use retold_test_kit::prelude::*;
use std::sync::Arc;

use retold_domain::chrono::TimeDelta;
use retold_domain::{
    DomainError, Embedder, EmbeddingModelInfo, EntityKind, MemoryType, Name, Result, Scope, SourceKind,
    Status, VectorIndex,
};
use retold_ingest::{EntityRef, RejectCode, ReviseAction, RevisionOutcome, WriteOutcome};

use crate::{World, claim, embedder, principal, with_evidence, world, world_with};

const CONCISE: &str = "Aditya prefers concise technical explanations.";
const DETAILED: &str = "Aditya prefers detailed architecture explanations.";

async fn aditya_world() -> World {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    w.session_with_turn("sess_42", 7, "Keep answers concise.").await;
    w
}

async fn stated_concise(w: &World) -> retold_domain::RecordId {
    let request = with_evidence(
        claim(CONCISE, "explanation_style", SourceKind::UserStatement),
        "sess_42",
        7,
        "Keep answers concise.",
    );
    match w.ingestor.write(&principal("research-agent", "aditya"), &request).await.unwrap() {
        WriteOutcome::Created { id, .. } => id,
        other => panic!("expected created, got {other:?}"),
    }
}

fn event_kinds(events: &[retold_domain::AuditEvent]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

#[tokio::test]
async fn agent_inference_against_a_user_statement_stays_provisional_with_a_conflict_link() {
    let w = aditya_world().await;
    let old = stated_concise(&w).await;
    let old_record = w.record(&old).await;
    assert_eq!((old_record.status, old_record.source_kind), (Status::Confirmed, SourceKind::UserStatement));
    assert_eq!(old_record.subject().unwrap().split('/').nth(1), Some("explanation_style"));
    let created = w.store.record_events(&old).await.unwrap();
    assert_eq!(event_kinds(&created), ["record.created"]);
    assert_eq!(created[0].details["evidence_check"], "passed");

    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim(DETAILED, "explanation_style", SourceKind::AgentInference),
        )
        .await
        .unwrap();
    let WriteOutcome::Conflicting { id: new, conflicts_with, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(conflicts_with, old);
    let new_record = w.record(&new).await;
    assert_eq!(new_record.status, Status::Provisional);
    assert_eq!(new_record.expires_at, Some(new_record.created_at + TimeDelta::days(30)));
    assert_eq!(w.record(&old).await.status, Status::Confirmed, "the confirmed record stays");
    assert_eq!(w.store.conflicts_of(std::slice::from_ref(&old)).await.unwrap()[0].conflicting_id, new);
    let events = w.store.record_events(&new).await.unwrap();
    assert_eq!(event_kinds(&events), ["record.conflicting"]);
    assert_eq!(events[0].details["conflicts_with"], old.as_str());

    // The user statement stays the normal result: the conflicting candidate is eligible only
    // when conflicts are asked for, and only until the provisional TTL passes.
    assert_eq!(w.eligible("user:aditya").await, [old.to_string()]);
    let with_conflicts = |now| retold_domain::EligibilityFilter {
        scopes: vec![retold_domain::Scope::parse("user:aditya").unwrap()],
        statuses: retold_domain::EligibilityFilter::statuses_for(false),
        now,
        types: None,
        event_from: None,
        event_to: None,
        include_conflicts: true,
        origins: None,
        excluded_session: None,
    };
    assert_eq!(w.store.eligible(&with_conflicts(w.now())).await.unwrap().len(), 2);
    w.clock.advance(TimeDelta::days(31));
    assert_eq!(w.eligible("user:aditya").await, [old.to_string()]);
    assert_eq!(w.store.eligible(&with_conflicts(w.now())).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_equal_rank_statement_supersedes() {
    let w = aditya_world().await;
    let old = stated_concise(&w).await;
    w.session_with_turn("sess_42", 8, "Please explain things in detail, with architecture diagrams.").await;
    let request = with_evidence(
        claim(DETAILED, "explanation_style", SourceKind::UserStatement),
        "sess_42",
        8,
        "Please explain things in detail, with architecture diagrams.",
    );
    let outcome = w.ingestor.write(&principal("research-agent", "aditya"), &request).await.unwrap();
    let WriteOutcome::Superseding { id: new, superseded, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(superseded, std::slice::from_ref(&old));
    assert_eq!(w.record(&old).await.status, Status::Superseded);
    assert_eq!(w.record(&new).await.supersedes_id, Some(old.clone()));
    assert_eq!(w.record(&new).await.status, Status::Confirmed);
    assert_eq!(
        event_kinds(&w.store.record_events(&old).await.unwrap()),
        ["record.created", "record.superseded"]
    );
    assert_eq!(w.eligible("user:aditya").await, [new.to_string()]);
}

#[tokio::test]
async fn the_same_meaning_reinforces_without_a_duplicate() {
    let w = aditya_world().await;
    let p = principal("research-agent", "aditya");
    // A provisional inference, reinforced twice, becomes confirmed.
    let first =
        w.ingestor.write(&p, &claim(CONCISE, "explanation_style", SourceKind::AgentInference)).await.unwrap();
    let WriteOutcome::Created { id, .. } = first else { panic!("{first:?}") };
    assert_eq!(w.record(&id).await.status, Status::Provisional);
    w.clock.advance(TimeDelta::days(10));
    let again = w
        .ingestor
        .write(
            &p,
            &claim(
                "Aditya likes concise technical explanations.",
                "explanation_style",
                SourceKind::AgentInference,
            ),
        )
        .await
        .unwrap();
    assert_eq!(again, WriteOutcome::Reinforced { id: id.clone(), reason: again_reason(&again) });
    let once = w.record(&id).await;
    assert_eq!(once.reinforcements, 1);
    assert!((once.confidence.get() - 0.65).abs() < 1e-9);
    assert_eq!(
        once.expires_at,
        Some(once.last_reinforced_at.unwrap() + TimeDelta::days(30)),
        "expiry refreshed"
    );
    assert_eq!(once.status, Status::Provisional);
    w.ingestor.write(&p, &claim(CONCISE, "explanation_style", SourceKind::AgentInference)).await.unwrap();
    let twice = w.record(&id).await;
    assert_eq!((twice.reinforcements, twice.status, twice.expires_at), (2, Status::Confirmed, None));
    assert_eq!(w.eligible("user:aditya").await, [id.to_string()], "no duplicate row");
    assert_eq!(
        event_kinds(&w.store.record_events(&id).await.unwrap()),
        ["record.created", "record.reinforced", "record.reinforced"]
    );
}

fn again_reason(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Reinforced { reason, .. } => reason.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_equivalent_attribute_name_is_aliased_to_the_existing_one() {
    let w = aditya_world().await;
    let old = stated_concise(&w).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim(DETAILED, "answer_style", SourceKind::AgentInference),
        )
        .await
        .unwrap();
    let WriteOutcome::Conflicting { id: new, conflicts_with, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(conflicts_with, old);
    let record = w.record(&new).await;
    assert_eq!(
        record.key.unwrap().attribute.as_str(),
        "explanation_style",
        "the survivor's attribute is kept"
    );
    let event = &w.store.record_events(&new).await.unwrap()[0];
    assert_eq!(event.details["attribute_aliased_from"], "answer_style");
    assert!(!event.details.contains_key("attribute_scan_truncated"));
}

#[tokio::test]
async fn unrelated_attributes_of_the_same_entity_stay_apart() {
    let w = aditya_world().await;
    stated_concise(&w).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya lives in Berlin.", "home_city", SourceKind::AgentInference),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, WriteOutcome::Created { .. }), "{outcome:?}");
}

#[tokio::test]
async fn episodic_records_about_the_same_subject_are_both_kept() {
    let w = world().await;
    w.grant("implementation-agent", "project:agentic-memory-system", true, true).await;
    let p = principal("implementation-agent", "aditya");
    let mut ids = Vec::new();
    for text in [
        "Vector-only retrieval missed exact error messages on Tuesday.",
        "FTS improved error lookup on Friday.",
    ] {
        let mut request = claim(text, "retrieval_quality", SourceKind::ToolResult);
        request.memory_type = MemoryType::Episodic;
        request.scope = Scope::parse("project:agentic-memory-system").unwrap();
        request.subject = Some(EntityRef::Name {
            name: Name::new("agentic-memory-system").unwrap(),
            kind: EntityKind::Project,
        });
        request.source_kind = SourceKind::System;
        let outcome = w.ingestor.write(&p, &request).await.unwrap();
        let WriteOutcome::Created { id, .. } = outcome else { panic!("{outcome:?}") };
        ids.push(id);
    }
    for id in &ids {
        let record = w.record(id).await;
        assert_eq!(record.status, Status::Confirmed);
        assert!(record.event_at.is_some());
    }
    assert_eq!(w.eligible("project:agentic-memory-system").await.len(), 2);
}

#[tokio::test]
async fn a_project_convention_and_a_personal_preference_are_separate_facts() {
    let w = world().await;
    w.grant("implementation-agent", "project:agentic-memory-system", true, true).await;
    w.grant("implementation-agent", "user:aditya", true, true).await;
    let p = principal("implementation-agent", "aditya");
    let mut ids = Vec::new();
    for scope in ["project:agentic-memory-system", "user:aditya"] {
        let mut request =
            claim("Commit messages follow Conventional Commits.", "commit_convention", SourceKind::System);
        request.scope = Scope::parse(scope).unwrap();
        request.subject = Some(EntityRef::Name {
            name: Name::new("agentic-memory-system").unwrap(),
            kind: EntityKind::Project,
        });
        let outcome = w.ingestor.write(&p, &request).await.unwrap();
        let WriteOutcome::Created { id, .. } = outcome else { panic!("{scope}: {outcome:?}") };
        ids.push(id);
    }
    assert_eq!(w.record(&ids[0]).await.scope.to_string(), "project:agentic-memory-system");
    assert_eq!(w.record(&ids[1]).await.scope.to_string(), "user:aditya");
    assert_eq!(w.record(&ids[0]).await.status, Status::Confirmed);
    assert_eq!(w.record(&ids[1]).await.status, Status::Confirmed);
}

#[tokio::test]
async fn the_seed_grant_examples_decide_writes() {
    let w = world().await;
    // Read-only project grant: the write is refused with scope_not_writable.
    w.grant("implementation-agent", "project:agentic-memory-system", true, false).await;
    let mut request =
        claim("The project uses Conventional Commits.", "commit_convention", SourceKind::System);
    request.scope = Scope::parse("project:agentic-memory-system").unwrap();
    let outcome = w.ingestor.write(&principal("implementation-agent", "aditya"), &request).await.unwrap();
    assert!(
        matches!(outcome, WriteOutcome::Rejected { code: RejectCode::ScopeNotWritable, .. }),
        "{outcome:?}"
    );
    assert!(w.eligible("project:agentic-memory-system").await.is_empty());

    // A user grant for aditya is ignored for bob.
    w.grant("research-agent", "user:aditya", true, true).await;
    let outcome = w
        .ingestor
        .write(&principal("research-agent", "bob"), &claim(CONCISE, "explanation_style", SourceKind::System))
        .await
        .unwrap();
    assert!(
        matches!(outcome, WriteOutcome::Rejected { code: RejectCode::ScopeNotWritable, .. }),
        "{outcome:?}"
    );

    // A private-scope grant found in the store for another user is ignored.
    w.grant("research-agent", "agent:research-agent/aditya", true, true).await;
    let mut private = claim(CONCISE, "explanation_style", SourceKind::System);
    private.scope = Scope::parse("agent:research-agent/aditya").unwrap();
    let outcome = w.ingestor.write(&principal("research-agent", "bob"), &private).await.unwrap();
    assert!(
        matches!(outcome, WriteOutcome::Rejected { code: RejectCode::ScopeNotWritable, .. }),
        "{outcome:?}"
    );
    // … while the pair itself writes its private scope without any grant.
    let outcome = w.ingestor.write(&principal("research-agent", "aditya"), &private).await.unwrap();
    assert!(matches!(outcome, WriteOutcome::Created { .. }), "{outcome:?}");
}

#[tokio::test]
async fn failed_evidence_downgrades_to_agent_inference_with_the_reason() {
    let w = aditya_world().await;
    let p = principal("research-agent", "aditya");
    // Not verbatim in the cited turn.
    let request = with_evidence(
        claim(CONCISE, "explanation_style", SourceKind::UserStatement),
        "sess_42",
        7,
        "Keep it short.",
    );
    let WriteOutcome::Created { id, .. } = w.ingestor.write(&p, &request).await.unwrap() else { panic!() };
    let record = w.record(&id).await;
    assert_eq!((record.source_kind, record.status), (SourceKind::AgentInference, Status::Provisional));
    let event = &w.store.record_events(&id).await.unwrap()[0];
    assert_eq!(event.details["evidence_check"], "downgraded");
    assert!(event.details["downgrade_reason"].contains("verbatim"), "{:?}", event.details);
    assert_eq!(event.details["requested_source_kind"], "user_statement");

    // Verbatim, but it does not support the claim: the score is recorded.
    w.session_with_turn("sess_43", 1, "Let's meet tomorrow.").await;
    let mut request = with_evidence(
        claim("The project uses Conventional Commits.", "commit_convention", SourceKind::ToolResult),
        "sess_43",
        1,
        "Let's meet tomorrow.",
    );
    request.subject = Some(EntityRef::Name {
        name: Name::new("agentic-memory-system").unwrap(),
        kind: EntityKind::Project,
    });
    let WriteOutcome::Created { id, .. } = w.ingestor.write(&p, &request).await.unwrap() else { panic!() };
    assert_eq!(w.record(&id).await.source_kind, SourceKind::AgentInference);
    let event = &w.store.record_events(&id).await.unwrap()[0];
    let score: f64 = event.details["entail_score"].parse().unwrap();
    assert!(score < 0.35, "{score}");
    assert!(event.details["downgrade_reason"].contains("below the floor"));

    // A cited turn that does not exist: downgraded again, so it reinforces the first
    // (same meaning, same rank) and the event says why.
    let first = id_of_first_downgrade(&w).await;
    let request =
        with_evidence(claim(CONCISE, "explanation_style", SourceKind::UserStatement), "sess_42", 99, "x");
    let outcome = w.ingestor.write(&p, &request).await.unwrap();
    assert!(matches!(&outcome, WriteOutcome::Reinforced { id, .. } if *id == first), "{outcome:?}");
    let event = w.store.record_events(&first).await.unwrap().pop().unwrap();
    assert!(event.details["downgrade_reason"].contains("does not exist"), "{:?}", event.details);
}

#[tokio::test]
async fn an_ambiguous_name_is_refused_with_its_candidates_and_nothing_is_written() {
    let w = world().await;
    w.grant("a", "project:p", true, true).await;
    w.grant("a", "project:q", true, true).await;
    let p = principal("a", "u");
    // Two host-created entities share a name in two readable scopes.
    for (id, scope) in [("ent_memory_p", "project:p"), ("ent_memory_q", "project:q")] {
        let entity = retold_domain::Entity {
            id: retold_domain::EntityId::new(id).unwrap(),
            kind: EntityKind::Project,
            canonical_name: Name::new("Memory System").unwrap(),
            scope: Scope::parse(scope).unwrap(),
            status: retold_domain::EntityStatus::Confirmed,
            merged_into: None,
            created_at: retold_domain::chrono::Utc::now(),
        };
        w.store.create_entity(entity, vec![], crate::host_event("entity.created")).await.unwrap();
    }
    let mut request = claim("Memory System uses Rust.", "language", SourceKind::System);
    request.scope = Scope::parse("project:p").unwrap();
    request.subject =
        Some(EntityRef::Name { name: Name::new("memory  system").unwrap(), kind: EntityKind::Project });
    let outcome = w.ingestor.write(&p, &request).await.unwrap();
    let WriteOutcome::Rejected { code: RejectCode::EntityAmbiguous { candidates, .. }, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(candidates.iter().map(|c| c.as_str()).collect::<Vec<_>>(), ["ent_memory_p", "ent_memory_q"]);
    assert!(w.eligible("project:p").await.is_empty(), "nothing was written");
    // With only one of them readable, the name resolves.
    w.grant("b", "project:p", true, true).await;
    let outcome = w.ingestor.write(&principal("b", "u"), &request).await.unwrap();
    let WriteOutcome::Created { id, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(
        w.store.links_of(std::slice::from_ref(&id)).await.unwrap()[0].entity_id.as_str(),
        "ent_memory_p"
    );
}

#[tokio::test]
async fn forget_and_revise_go_through_policy_and_leave_a_trail() {
    let w = aditya_world().await;
    let p = principal("research-agent", "aditya");
    let id = stated_concise(&w).await;
    let key = w.store.key_of(&id).await.unwrap().unwrap();
    assert!(w.index.vector(key).is_some());

    // Another user cannot see it: answered like a missing record.
    let missing = w.ingestor.forget(&principal("research-agent", "bob"), &id, "nope").await;
    assert!(matches!(missing, Err(DomainError::NotFound { .. })), "{missing:?}");

    let outcome = w.ingestor.forget(&p, &id, "user asked").await.unwrap();
    assert_eq!(
        outcome,
        RevisionOutcome::StatusChanged { id: id.clone(), from: Status::Confirmed, to: Status::Deleted }
    );
    assert_eq!(w.record(&id).await.status, Status::Deleted, "the tombstone stays");
    assert!(w.index.vector(key).is_none(), "the vector is dead");
    assert!(w.eligible("user:aditya").await.is_empty());
    let events = w.store.record_events(&id).await.unwrap();
    assert_eq!(events.last().unwrap().details["reason"], "user asked");
    // Illegal transitions are errors, not no-ops.
    let again = w.ingestor.revise(&p, &ReviseAction::Confirm { id: id.clone() }).await;
    assert!(matches!(again, Err(DomainError::Conflict(_))), "{again:?}");

    // Confirm a provisional inference; expire it.
    let WriteOutcome::Created { id: guess, .. } = w
        .ingestor
        .write(&p, &claim("Aditya lives in Berlin.", "home_city", SourceKind::AgentInference))
        .await
        .unwrap()
    else {
        panic!()
    };
    w.ingestor.revise(&p, &ReviseAction::Confirm { id: guess.clone() }).await.unwrap();
    assert_eq!((w.record(&guess).await.status, w.record(&guess).await.expires_at), (Status::Confirmed, None));
    w.ingestor.revise(&p, &ReviseAction::Expire { id: guess.clone() }).await.unwrap();
    assert_eq!(w.record(&guess).await.status, Status::Expired);

    // An explicit supersede replaces the current record whatever the ranks.
    let WriteOutcome::Created { id: city, .. } = w
        .ingestor
        .write(&p, &claim("Aditya lives in Munich.", "home_city", SourceKind::System))
        .await
        .unwrap()
    else {
        panic!()
    };
    let replacement = claim("Aditya lives in Hamburg.", "home_city", SourceKind::AgentInference);
    let outcome = w
        .ingestor
        .revise(&p, &ReviseAction::Supersede { id: city.clone(), replacement: Box::new(replacement) })
        .await
        .unwrap();
    let RevisionOutcome::Written(WriteOutcome::Superseding { superseded, .. }) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(superseded, std::slice::from_ref(&city));
    assert_eq!(w.record(&city).await.status, Status::Superseded);
}

/// An embedder that fails on its `fail_at`-th call, to inject a failure mid-write.
struct FailingEmbedder {
    inner: Arc<dyn Embedder>,
    calls: std::sync::atomic::AtomicUsize,
    fail_at: usize,
}

#[async_trait::async_trait]
impl Embedder for FailingEmbedder {
    fn info(&self) -> &EmbeddingModelInfo {
        self.inner.info()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if n == self.fail_at {
            return Err(DomainError::backend("embedder", "injected failure"));
        }
        self.inner.embed(texts).await
    }
}

#[tokio::test]
async fn an_injected_failure_leaves_nothing_half_written() {
    // Call 1 is the content embedding of the write, after entity resolution decided to
    // create a provisional entity for "Zoltan".
    let failing = Arc::new(FailingEmbedder { inner: embedder(), calls: Default::default(), fail_at: 1 });
    let w = world_with(failing).await;
    let p = principal("research-agent", "aditya");
    let mut request = claim("Zoltan prefers tea.", "drink", SourceKind::AgentInference);
    request.scope = Scope::parse("agent:research-agent/aditya").unwrap();
    request.subject = Some(EntityRef::Name { name: Name::new("Zoltan").unwrap(), kind: EntityKind::Person });
    assert!(w.ingestor.write(&p, &request).await.is_err());
    assert!(w.eligible("agent:research-agent/aditya").await.is_empty());
    let scopes = [Scope::parse("agent:research-agent/aditya").unwrap()];
    assert!(w.store.find_by_name(&scopes, &Name::new("Zoltan").unwrap()).await.unwrap().is_empty());
    assert_eq!(w.index.live_len(), 0);
    // The next attempt succeeds and creates everything together.
    let outcome = w.ingestor.write(&p, &request).await.unwrap();
    assert!(matches!(outcome, WriteOutcome::Created { .. }));
    assert_eq!(w.store.find_by_name(&scopes, &Name::new("Zoltan").unwrap()).await.unwrap().len(), 1);
}

async fn id_of_first_downgrade(w: &World) -> retold_domain::RecordId {
    let ids = w.eligible("user:aditya").await;
    retold_domain::RecordId::new(ids[0].clone()).unwrap()
}

#[tokio::test]
async fn a_changed_name_or_number_is_a_new_value_not_a_reinforcement() {
    let w = world().await;
    w.grant("a", "project:p", true, true).await;
    let p = principal("a", "u");
    let mut first = claim("The release train leaves on Tuesdays.", "release_day", SourceKind::System);
    first.scope = Scope::parse("project:p").unwrap();
    first.subject =
        Some(EntityRef::Name { name: Name::new("Release Train").unwrap(), kind: EntityKind::Project });
    let WriteOutcome::Created { id: old, .. } = w.ingestor.write(&p, &first).await.unwrap() else { panic!() };
    let mut second = first.clone();
    second.content = retold_domain::Content::new("The release train leaves on Thursdays.").unwrap();
    let outcome = w.ingestor.write(&p, &second).await.unwrap();
    assert!(
        matches!(&outcome, WriteOutcome::Superseding { superseded, .. } if superseded == std::slice::from_ref(&old)),
        "{outcome:?}"
    );
    let mut port = first.clone();
    port.attribute = Some(retold_domain::Attribute::new("port").unwrap());
    port.content = retold_domain::Content::new("The release train dashboard listens on port 8443.").unwrap();
    w.ingestor.write(&p, &port).await.unwrap();
    port.content = retold_domain::Content::new("The release train dashboard listens on port 8444.").unwrap();
    assert!(matches!(w.ingestor.write(&p, &port).await.unwrap(), WriteOutcome::Superseding { .. }));
}

#[tokio::test]
async fn a_fact_restated_after_other_turns_is_the_same_fact_whatever_its_context() {
    // The context goes into the vector search uses; the same-meaning rule compares content.
    let w = world().await;
    let p = principal("research-agent", "aditya");
    w.grant("research-agent", "user:aditya", true, true).await;
    let mut first = claim(CONCISE, "explanation_style", SourceKind::AgentInference);
    first.context = Some(
        retold_domain::Context::new("User: My flight to Lisbon leaves at six tomorrow morning.").unwrap(),
    );
    let WriteOutcome::Created { id, .. } = w.ingestor.write(&p, &first).await.unwrap() else { panic!() };
    let mut again = claim(CONCISE, "explanation_style", SourceKind::AgentInference);
    again.context = Some(
        retold_domain::Context::new("User: The quarterly tax forms are due at the end of the month.")
            .unwrap(),
    );
    let outcome = w.ingestor.write(&p, &again).await.unwrap();
    assert!(matches!(&outcome, WriteOutcome::Reinforced { id: same, .. } if *same == id), "{outcome:?}");
    assert_eq!(w.record(&id).await.reinforcements, 1);
}

/// The embedder, counting the texts it is given.
struct Counting {
    inner: Arc<dyn Embedder>,
    texts: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Embedder for Counting {
    fn info(&self) -> &EmbeddingModelInfo {
        self.inner.info()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.texts.lock().unwrap().extend(texts.iter().cloned());
        self.inner.embed(texts).await
    }
}

/// The aliasing check compares a new fact's attribute name with each of the subject's other
/// attribute names: each name is embedded once, not on every write about the subject (a
/// subject with 64 attributes made each of its writes embed 65 names).
#[tokio::test]
async fn each_attribute_name_is_embedded_once_for_the_aliasing_check() {
    let counting = Arc::new(Counting { inner: embedder(), texts: std::sync::Mutex::default() });
    let w = world_with(counting.clone()).await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let p = principal("research-agent", "aditya");
    let facts = [
        ("Aditya lives in Berlin.", "home_city"),
        ("Aditya works at Northwind.", "employer"),
        ("Aditya's editor is Helix.", "editor"),
        ("Aditya's shell is fish.", "shell"),
    ];
    let mut per_write = Vec::new();
    for (content, attribute) in facts {
        let before = counting.texts.lock().unwrap().len();
        w.ingestor.write(&p, &claim(content, attribute, SourceKind::AgentInference)).await.unwrap();
        let texts = counting.texts.lock().unwrap()[before..].to_vec();
        per_write.push(texts);
    }
    // First fact: its own text only. Second: its text, then both names. Later ones: their
    // text and their own new name; the names seen before are not embedded again.
    let names =
        |texts: &[String]| texts.iter().filter(|t| !t.contains("Aditya")).cloned().collect::<Vec<_>>();
    assert_eq!(names(&per_write[0]), Vec::<String>::new());
    assert_eq!(names(&per_write[1]), ["employer", "home city"]);
    assert_eq!(names(&per_write[2]), ["editor"]);
    assert_eq!(names(&per_write[3]), ["shell"]);
    // And the aliasing still reads them: an equivalent name is aliased to the existing one.
    let outcome = w
        .ingestor
        .write(&p, &claim("Aditya resides in Munich.", "city_of_residence", SourceKind::AgentInference))
        .await
        .unwrap();
    let id = outcome.record_id().unwrap().clone();
    let event = &w.store.record_events(&id).await.unwrap()[0];
    assert_eq!(event.details.get("attribute_aliased_to").map(String::as_str), Some("home_city"), "{event:?}");
}
