//! Entity merge through the write path, and retries that only repeat contention.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use retold_domain::{
    DomainError, EligibleRecord, EntityId, EntityKind, EntityReader, FactKey, Name, RecordGraph,
    RecordWriter, Result, SourceKind, Status, WriteUnit,
};
use retold_ingest::{EntityRef, ReviseAction, RevisionOutcome, WriteOutcome, WriteRequest};
use retold_store_sqlite::SqliteStore;
use retold_test_kit::World;
use retold_test_kit::prelude::AuditLog;

use crate::{claim, principal, world};

fn about(mut request: WriteRequest, scope: &str, name: &str) -> WriteRequest {
    request.scope = retold_domain::Scope::parse(scope).unwrap();
    request.subject = Some(EntityRef::Name { name: Name::new(name).unwrap(), kind: EntityKind::Person });
    request
}

async fn created(w: &World, agent: &str, request: WriteRequest) -> retold_domain::RecordId {
    match w.ingestor.write(&principal(agent, "aditya"), &request).await.unwrap() {
        WriteOutcome::Created { id, .. } => id,
        other => panic!("expected created, got {other:?}"),
    }
}

async fn subject_of(w: &World, id: &retold_domain::RecordId) -> EntityId {
    w.record(id).await.key.map(|k: FactKey| k.subject_entity_id).unwrap()
}

#[tokio::test]
async fn a_merge_touches_only_records_the_caller_may_write_and_resolves_shared_keys() {
    let w = world().await;
    let p = principal("research-agent", "aditya");
    w.grant("research-agent", "user:aditya", true, true).await;
    // Another agent shares the user scope (to resolve names) and writes a secret project the
    // research agent cannot read.
    w.grant("vault-agent", "user:aditya", true, false).await;
    w.grant("vault-agent", "project:secret", true, true).await;

    let concise = created(
        &w,
        "research-agent",
        claim("Aditya prefers concise explanations.", "explanation_style", SourceKind::System),
    )
    .await;
    let aditya = subject_of(&w, &concise).await;
    let detailed = created(
        &w,
        "research-agent",
        about(
            claim("Adi prefers detailed architecture explanations.", "explanation_style", SourceKind::System),
            "user:aditya",
            "Adi",
        ),
    )
    .await;
    let adi = subject_of(&w, &detailed).await;
    assert_ne!(adi, aditya, "two entities before the merge");
    let secret = created(
        &w,
        "vault-agent",
        about(
            claim("Adi holds the vault combination.", "vault_access", SourceKind::System),
            "project:secret",
            "Adi",
        ),
    )
    .await;
    assert_eq!(subject_of(&w, &secret).await, adi);
    let secret_before = w.record(&secret).await;

    let outcome = w
        .ingestor
        .revise(&p, &ReviseAction::MergeEntities { from: adi.clone(), into: aditya.clone() })
        .await
        .unwrap();
    assert_eq!(outcome, RevisionOutcome::EntitiesMerged { from: adi.clone(), into: aditya.clone() });

    // The writable record moved to the survivor with a version bump and an audit event.
    let moved = w.record(&detailed).await;
    assert_eq!(moved.key.as_ref().unwrap().subject_entity_id, aditya);
    assert_eq!(moved.version, 2);
    assert_eq!(moved.status, Status::Confirmed);
    assert_eq!(moved.supersedes_id.as_ref(), Some(&concise), "equal rank: the merged record supersedes");
    let events = w.store.record_events(&detailed).await.unwrap();
    assert!(
        events.iter().any(|e| e.kind == "record.resubjected" && e.details["merge_into"] == aditya.as_str()),
        "{events:?}"
    );

    // The two current records that now share (aditya, explanation_style) were resolved by the
    // seed's rules: one current record remains.
    let old = w.record(&concise).await;
    assert_eq!((old.status, old.version), (Status::Superseded, 2));
    assert!(w.store.record_events(&concise).await.unwrap().iter().any(|e| e.kind == "record.superseded"));

    // The record in a scope the caller cannot read is untouched: same subject, same version.
    assert_eq!(w.record(&secret).await, secret_before);
    // Entity lookups of the survivor still reach it (through `merged_into`), so its owner's
    // entity channel keeps finding it.
    let linked = w.store.linked_records(std::slice::from_ref(&aditya)).await.unwrap();
    assert!(linked.iter().any(|l| l.record_id == secret && l.entity_id == aditya), "{linked:?}");

    let merged = w.store.entity(&adi).await.unwrap().unwrap();
    assert_eq!(merged.merged_into, Some(aditya.clone()));
    // A second merge of the same entity is a conflict, not a silent no-op.
    let again = w.ingestor.revise(&p, &ReviseAction::MergeEntities { from: adi, into: aditya }).await;
    assert!(matches!(again, Err(DomainError::Conflict(_))), "{again:?}");
}

#[tokio::test]
async fn a_merge_of_the_same_fact_reinforces_the_survivors_record() {
    let w = world().await;
    let p = principal("research-agent", "aditya");
    w.grant("research-agent", "user:aditya", true, true).await;
    let first = created(
        &w,
        "research-agent",
        claim("Aditya prefers concise explanations.", "explanation_style", SourceKind::System),
    )
    .await;
    let twin = created(
        &w,
        "research-agent",
        about(
            claim("Aditya prefers concise explanations.", "explanation_style", SourceKind::AgentInference),
            "user:aditya",
            "A. Sharma",
        ),
    )
    .await;
    let (into, from) = (subject_of(&w, &first).await, subject_of(&w, &twin).await);
    w.ingestor.revise(&p, &ReviseAction::MergeEntities { from, into }).await.unwrap();
    let survivor = w.record(&first).await;
    assert_eq!((survivor.status, survivor.reinforcements, survivor.version), (Status::Confirmed, 1, 2));
    assert_eq!(w.record(&twin).await.status, Status::Superseded, "the duplicate folds into the survivor");
}

/// Fails the first `contended` applies with contention, or every apply with a conflict.
struct Flaky {
    inner: SqliteStore,
    contended: usize,
    conflict: bool,
    calls: AtomicUsize,
}

#[async_trait]
impl RecordWriter for Flaky {
    async fn apply(&self, unit: WriteUnit) -> Result<Vec<EligibleRecord>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.conflict {
            return Err(DomainError::Conflict("record mem_x already exists".into()));
        }
        if call < self.contended {
            return Err(DomainError::Contention("the current fact changed concurrently".into()));
        }
        self.inner.apply(unit).await
    }
}

async fn flaky_world(contended: usize, conflict: bool) -> (World, Arc<Flaky>) {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let flaky = Arc::new(Flaky { inner: w.store.clone(), contended, conflict, calls: AtomicUsize::new(0) });
    (w.with_writer(flaky.clone()), flaky)
}

#[tokio::test]
async fn contention_is_retried_and_then_succeeds_once() {
    let (w, flaky) = flaky_world(3, false).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya likes tea.", "drink", SourceKind::System),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, WriteOutcome::Created { .. }), "{outcome:?}");
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 4, "three contended attempts, then the one that commits");
    assert_eq!(w.eligible("user:aditya").await.len(), 1, "written once");
}

#[tokio::test]
async fn a_conflict_is_not_retried() {
    let (w, flaky) = flaky_world(0, true).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya likes tea.", "drink", SourceKind::System),
        )
        .await;
    assert!(matches!(outcome, Err(DomainError::Conflict(_))), "{outcome:?}");
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 1, "a conflict fails the same way every time");
    assert!(w.eligible("user:aditya").await.is_empty());
}

#[tokio::test]
async fn endless_contention_gives_up_with_contention() {
    let (w, flaky) = flaky_world(usize::MAX, false).await;
    let outcome = w
        .ingestor
        .write(
            &principal("research-agent", "aditya"),
            &claim("Aditya likes tea.", "drink", SourceKind::System),
        )
        .await;
    assert!(matches!(outcome, Err(DomainError::Contention(_))), "{outcome:?}");
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 8, "bounded");
}
