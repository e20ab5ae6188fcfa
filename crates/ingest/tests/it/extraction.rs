//! The extraction runner on real components, with the fake extractor and the table reviewer.

use retold_test_kit::prelude::*;
use std::sync::Arc;

use retold_domain::chrono::{TimeDelta, TimeZone, Utc};
use retold_domain::{
    Clock, EntityKind, MemoryType, Scope, SessionId, SourceKind, SourceRef, Status, TurnRole,
};
use retold_ingest::{
    Candidate, CandidateEntity, CandidateScope, Extraction, ExtractionConfig, ExtractionReport,
    ExtractionRunner, FakeExtractor, KeyedWrite, ReviewResult, TableReviewer, Verdict, WriteOutcome,
};

use crate::{World, claim, principal, world};

const TURNS: [(TurnRole, &str); 4] = [
    (TurnRole::User, "I prefer concise technical explanations, ideally in English. Priya leads my team."),
    (TurnRole::Assistant, "Noted: short, technical answers from now on."),
    (TurnRole::Tool, r#"{"repository": "retold", "default_branch": "main", "stars": 42}"#),
    (TurnRole::User, "Let's pick this up again next week."),
];

async fn ended_session(w: &World, id: &str) -> SessionId {
    let session = w.start_session(id).await;
    for (role, text) in TURNS {
        w.append(&session, role, text).await;
    }
    w.store.end_session(&session, w.clock.now(), true, crate::host_event("session.ended")).await.unwrap();
    session
}

fn person(name: &str) -> CandidateEntity {
    CandidateEntity { name: name.into(), kind: EntityKind::Person }
}

fn candidate(content: &str, source_kind: SourceKind, turn: u32, evidence: &str) -> Candidate {
    Candidate {
        memory_type: MemoryType::Semantic,
        content: content.into(),
        subject: None,
        attribute: None,
        mentions: vec![],
        source_kind,
        turn,
        evidence: evidence.into(),
        event_at: None,
        expires_at: None,
        confidence: None,
        scope: CandidateScope::Private,
    }
}

/// 0: a preference the reviewer narrows; 1: a tool fact whose widening revision is refused;
/// 2: a user_statement citing an assistant turn (invalid); 3: rejected by the reviewer;
/// 4: evidence that is not in the turn (invalid); 5: a user-scoped fact (needs a grant).
fn proposals() -> Extraction {
    let mut preference = candidate(
        "Aditya prefers concise technical explanations in English.",
        SourceKind::UserStatement,
        1,
        "I prefer concise technical explanations, ideally in English.",
    );
    preference.subject = Some(person("Aditya"));
    preference.attribute = Some("explanation_style".into());
    preference.mentions = vec![];
    let mut branch = candidate(
        "The retold repository's default branch is main.",
        SourceKind::ToolResult,
        3,
        r#""default_branch": "main""#,
    );
    branch.subject = Some(CandidateEntity { name: "retold".into(), kind: EntityKind::Repository });
    branch.attribute = Some("default_branch".into());
    let mut lead =
        candidate("Priya leads Aditya's team.", SourceKind::UserStatement, 1, "Priya leads my team.");
    lead.scope = CandidateScope::User;
    lead.subject = Some(person("Priya"));
    Extraction {
        candidates: vec![
            preference,
            branch,
            candidate(
                "Aditya wants short answers.",
                SourceKind::UserStatement,
                2,
                "short, technical answers",
            ),
            candidate(
                "Aditya will resume next week.",
                SourceKind::UserStatement,
                4,
                "pick this up again next week",
            ),
            candidate("Aditya likes Rust.", SourceKind::UserStatement, 1, "I like Rust"),
            lead,
        ],
        malformed: vec!["proposal 6: turn is not a turn number".into()],
        summary: Some("Aditya set his explanation preferences and checked the retold repository.".into()),
        usage: Default::default(),
    }
}

fn runner(
    w: &World,
    id: &str,
    extractor: Arc<FakeExtractor>,
    reviewer: Arc<TableReviewer>,
) -> ExtractionRunner {
    ExtractionRunner::new(
        w.ingestor.clone(),
        Arc::new(w.store.clone()),
        extractor,
        reviewer,
        Arc::new(retold_index::SnowballEnglish::new()),
        ExtractionConfig {
            runner_id: id.into(),
            max_transcript_chars: 100_000,
            lease: TimeDelta::hours(1),
            max_attempts: 3,
        },
    )
}

#[tokio::test]
async fn an_ended_session_is_extracted_once_reviewed_and_written_with_its_evidence() {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let session = ended_session(&w, "sess_extract").await;
    let narrowed = {
        let mut c = proposals().candidates[0].clone();
        c.content = "Aditya prefers concise technical explanations.".into();
        c
    };
    let widened = {
        let mut c = proposals().candidates[1].clone();
        c.content = "The retold repository's default branch is main and every release is signed.".into();
        c
    };
    let reviewer = Arc::new(TableReviewer::new([
        (0, Verdict::Revise(narrowed)),
        (1, Verdict::Revise(widened)),
        (2, Verdict::Reject { reason: "not worth keeping".into() }),
    ]));
    let extractor = Arc::new(FakeExtractor::new(proposals()));
    let first = runner(&w, "runner-a", extractor.clone(), reviewer.clone());
    let second = runner(&w, "runner-b", extractor.clone(), reviewer.clone());

    // Two runners race on the same session: exactly one extracts it.
    let (a, b) = tokio::join!(first.run(&session), second.run(&session));
    let reports = [a.unwrap(), b.unwrap()];
    let extracted: Vec<_> =
        reports.iter().filter(|r| matches!(r, ExtractionReport::Extracted { .. })).collect();
    assert_eq!(extracted.len(), 1, "{reports:?}");
    assert!(
        reports.iter().any(
            |r| matches!(r, ExtractionReport::Skipped { reason, .. } if reason.starts_with("already claimed by runner-"))
        ),
        "{reports:?}"
    );
    assert_eq!(extractor.calls(), 1);

    let ExtractionReport::Extracted { candidates, summary, malformed, .. } = extracted[0] else {
        unreachable!()
    };
    assert_eq!(malformed.len(), 1);
    let review: Vec<&str> = candidates.iter().map(|c| c.review.as_str()).collect();
    assert_eq!(review, ["revised", "revision_refused", "invalid", "rejected", "invalid", "accepted"]);
    assert!(
        matches!(&candidates[1].review, ReviewResult::RevisionRefused { reason } if reason.contains("every")),
        "{:?}",
        candidates[1]
    );
    assert!(
        matches!(&candidates[2].review, ReviewResult::Invalid { reason } if reason.contains("assistant turn"))
    );
    assert!(matches!(&candidates[4].review, ReviewResult::Invalid { reason } if reason.contains("verbatim")));
    assert_eq!(reviewer.seen().len(), 4, "only valid candidates are reviewed");

    let written = |i: usize| match &candidates[i].write {
        Some(Ok(KeyedWrite::Written(WriteOutcome::Created { id, .. }))) => id.clone(),
        other => panic!("candidate {i}: {other:?}"),
    };
    let preference = w.record(&written(0)).await;
    assert_eq!(
        preference.content.as_str(),
        "Aditya prefers concise technical explanations.",
        "the narrowed revision"
    );
    assert_eq!(preference.source_kind, SourceKind::UserStatement, "evidence passed verbatim and entailment");
    assert_eq!(preference.source_ref, Some(SourceRef::session_turn_ref(&session, 1)));
    assert_eq!(
        preference.evidence.as_ref().map(|e| e.as_str()),
        Some("I prefer concise technical explanations, ideally in English.")
    );
    assert_eq!(preference.scope, Scope::parse("agent:research-agent/aditya").unwrap());
    assert_eq!(preference.key.as_ref().map(|k| k.attribute.as_str()), Some("explanation_style"));

    let branch = w.record(&written(1)).await;
    assert_eq!(
        branch.content.as_str(),
        "The retold repository's default branch is main.",
        "the original, not the widening"
    );
    assert_eq!(branch.source_kind, SourceKind::ToolResult);
    assert_eq!(branch.source_ref, Some(SourceRef::session_turn_ref(&session, 3)));

    let lead = w.record(&written(5)).await;
    assert_eq!(lead.scope, Scope::parse("user:aditya").unwrap());

    let summary_id = match summary {
        Some(Ok(KeyedWrite::Written(WriteOutcome::Created { id, .. }))) => id.clone(),
        other => panic!("summary: {other:?}"),
    };
    let summary = w.record(&summary_id).await;
    assert_eq!(summary.memory_type, MemoryType::Episodic);
    assert_eq!(summary.source_kind, SourceKind::SessionSummary);
    assert_eq!(summary.source_ref, Some(SourceRef::session_ref(&session)));
    assert_eq!(summary.status, Status::Confirmed);

    let events = w.store.session_events(&session).await.unwrap();
    let run = events.iter().find(|e| e.kind == "extraction.run").expect("an extraction.run event");
    assert_eq!(run.details["extract_prompt"], "fake_extract");
    assert_eq!(run.details["review_prompt"], "table_review");
    assert_eq!(run.details["written"], "3", "candidates written; the summary is reported apart");
    assert_eq!(run.details["revision_refused"], "1");
    assert_eq!(run.details["proposed"], "7");
    assert!(run.details["runner"].starts_with("runner-"));

    // A third attempt, and a sweep for pending sessions, do nothing.
    let again = runner(&w, "runner-c", extractor.clone(), reviewer.clone());
    assert!(matches!(again.run(&session).await.unwrap(), ExtractionReport::Skipped { .. }));
    assert!(again.run_pending(10).await.unwrap().is_empty());
    assert_eq!(extractor.calls(), 1);
}

#[tokio::test]
async fn an_open_session_is_not_extracted_and_stays_pending_until_it_ends() {
    let w = world().await;
    let session = w.start_session("sess_open").await;
    w.append(&session, TurnRole::User, TURNS[0].1).await;
    let extractor = Arc::new(FakeExtractor::new(proposals()));
    let runner = runner(&w, "runner-a", extractor.clone(), Arc::new(TableReviewer::default()));
    assert!(
        matches!(runner.run(&session).await.unwrap(), ExtractionReport::Skipped { reason, .. } if reason.contains("not ended"))
    );
    w.store.end_session(&session, w.clock.now(), true, crate::host_event("session.ended")).await.unwrap();
    let reports = runner.run_pending(10).await.unwrap();
    assert_eq!(reports.len(), 1);
    assert!(matches!(&reports[0].1, Ok(ExtractionReport::Extracted { .. })));
    assert_eq!(extractor.calls(), 1);
}

#[tokio::test]
async fn an_expiry_and_a_confidence_limit_narrow_a_write() {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    w.session_with_turn("sess_1", 1, "I am on call until Friday.").await;
    let mut request = crate::with_evidence(
        claim("Aditya is on call.", "on_call", SourceKind::UserStatement),
        "sess_1",
        1,
        "I am on call",
    );
    let friday = w.clock.now() + TimeDelta::days(2);
    request.expires_at = Some(friday);
    request.confidence = Some(retold_domain::Confidence::new(0.5).unwrap());
    let outcome = w.ingestor.write(&principal("research-agent", "aditya"), &request).await.unwrap();
    let record = w.record(outcome.record_id().unwrap()).await;
    assert_eq!(record.expires_at, Some(friday));
    assert_eq!(record.confidence.get(), 0.5);

    request.expires_at = Some(Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap());
    let error = w.ingestor.write(&principal("research-agent", "aditya"), &request).await.unwrap_err();
    assert!(matches!(error, retold_domain::DomainError::Invalid { field: "expires_at", .. }), "{error}");
}

/// Fails its first `failures` calls, then proposes like the fake.
struct Flaky {
    failures: usize,
    inner: FakeExtractor,
    calls: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl retold_ingest::Extractor for Flaky {
    fn prompt_version(&self) -> &str {
        "flaky"
    }

    fn model(&self) -> &str {
        "flaky"
    }

    async fn extract(&self, transcript: &retold_ingest::Transcript) -> retold_domain::Result<Extraction> {
        let call = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if call < self.failures {
            return Err(retold_domain::DomainError::backend("extractor", "provider overloaded"));
        }
        self.inner.extract(transcript).await
    }
}

#[tokio::test]
async fn a_failed_run_is_retried_until_its_attempts_are_used() {
    let w = world().await;
    let session = ended_session(&w, "sess_flaky").await;
    let flaky =
        Arc::new(Flaky { failures: 1, inner: FakeExtractor::new(proposals()), calls: Default::default() });
    let runner = ExtractionRunner::new(
        w.ingestor.clone(),
        Arc::new(w.store.clone()),
        flaky.clone(),
        Arc::new(TableReviewer::default()),
        Arc::new(retold_index::SnowballEnglish::new()),
        ExtractionConfig {
            runner_id: "runner-a".into(),
            max_transcript_chars: 100_000,
            lease: TimeDelta::hours(1),
            max_attempts: 2,
        },
    );
    assert!(runner.run(&session).await.is_err(), "the first attempt fails");
    let events = w.store.session_events(&session).await.unwrap();
    let failed = events.iter().find(|e| e.kind == "extraction.failed").unwrap();
    assert_eq!((failed.details["attempt"].as_str(), failed.details["will_retry"].as_str()), ("1", "true"));
    // The claim was given back: the sweep retries and the second attempt extracts.
    let reports = runner.run_pending(10).await.unwrap();
    assert!(matches!(&reports[..], [(_, Ok(ExtractionReport::Extracted { .. }))]), "{reports:?}");
    let run = w
        .store
        .session_events(&session)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.kind == "extraction.run")
        .unwrap();
    assert_eq!(run.details["attempt"], "2");
    assert!(runner.run_pending(10).await.unwrap().is_empty(), "finished sessions are not pending");

    // Always failing: given up after max_attempts, and no longer pending.
    let stuck = ended_session(&w, "sess_stuck").await;
    let broken =
        Arc::new(Flaky { failures: 99, inner: FakeExtractor::new(proposals()), calls: Default::default() });
    let runner = ExtractionRunner::new(
        w.ingestor.clone(),
        Arc::new(w.store.clone()),
        broken,
        Arc::new(TableReviewer::default()),
        Arc::new(retold_index::SnowballEnglish::new()),
        ExtractionConfig {
            runner_id: "runner-b".into(),
            max_transcript_chars: 100_000,
            lease: TimeDelta::hours(1),
            max_attempts: 2,
        },
    );
    assert!(runner.run(&stuck).await.is_err());
    assert!(runner.run(&stuck).await.is_err());
    assert!(
        matches!(runner.run(&stuck).await.unwrap(), ExtractionReport::Skipped { reason, .. } if reason.contains("given up after 2"))
    );
    assert!(runner.run_pending(10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_candidate_the_reviewer_skips_is_not_written() {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let session = ended_session(&w, "sess_skip").await;
    let reviewer = Arc::new(TableReviewer::new([(0, Verdict::Missing { reason: "no verdict".into() })]));
    let report = runner(&w, "runner-a", Arc::new(FakeExtractor::new(proposals())), reviewer)
        .run(&session)
        .await
        .unwrap();
    let ExtractionReport::Extracted { candidates, .. } = report else { panic!("{report:?}") };
    assert_eq!(candidates[0].review, ReviewResult::Unreviewed { reason: "no verdict".into() });
    assert_eq!(candidates[0].write, None);
}

/// The store's claims, except that finishing a run fails (after its writes).
struct UnfinishedClaims {
    inner: retold_store_sqlite::SqliteStore,
}

#[async_trait::async_trait]
impl ExtractionClaims for UnfinishedClaims {
    async fn claim_extraction(
        &self,
        id: &SessionId,
        claimant: &str,
        terms: retold_domain::ClaimTerms,
    ) -> retold_domain::Result<retold_domain::ExtractionClaim> {
        self.inner.claim_extraction(id, claimant, terms).await
    }
    async fn finish_extraction(
        &self,
        _id: &SessionId,
        _claimant: &str,
        _at: retold_domain::Timestamp,
    ) -> retold_domain::Result<()> {
        Err(retold_domain::DomainError::backend("sqlite store", "injected failure finishing the run"))
    }
    async fn release_extraction(&self, id: &SessionId, claimant: &str) -> retold_domain::Result<()> {
        self.inner.release_extraction(id, claimant).await
    }
    async fn pending_extractions(
        &self,
        limit: usize,
        terms: retold_domain::ClaimTerms,
    ) -> retold_domain::Result<Vec<SessionId>> {
        self.inner.pending_extractions(limit, terms).await
    }
}

/// Every record in the session's private scope and Aditya's user scope, in any status:
/// (id, version, status, reinforcements).
async fn every_record(w: &World) -> Vec<(String, u32, Status, u32)> {
    let filter = retold_domain::EligibilityFilter {
        scopes: vec![
            Scope::parse("agent:research-agent/aditya").unwrap(),
            Scope::parse("user:aditya").unwrap(),
        ],
        statuses: Status::ALL.to_vec(),
        now: w.clock.now(),
        types: None,
        event_from: None,
        event_to: None,
        include_conflicts: false,
        origins: None,
        excluded_session: None,
    };
    let ids: Vec<_> = w.store.eligible(&filter).await.unwrap().into_iter().map(|e| e.id).collect();
    let mut records: Vec<_> = w
        .store
        .get_many(&ids)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id.to_string(), r.version, r.status, r.reinforcements))
        .collect();
    records.sort_by(|a, b| a.0.cmp(&b.0));
    records
}

#[tokio::test]
async fn a_run_retried_after_its_writes_neither_writes_nor_reinforces_anything_again() {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let session = ended_session(&w, "sess_retried").await;
    let mut extraction = proposals();
    // An agent inference with a current-fact key: reinforced twice, it would be confirmed.
    let mut guess = candidate(
        "Aditya works on the retold repository.",
        SourceKind::AgentInference,
        3,
        r#""repository": "retold""#,
    );
    guess.subject = Some(person("Aditya"));
    guess.attribute = Some("current_project".into());
    extraction.candidates.push(guess);
    let extractor = Arc::new(FakeExtractor::new(extraction));
    let config = ExtractionConfig {
        runner_id: "runner-a".into(),
        max_transcript_chars: 100_000,
        lease: TimeDelta::hours(1),
        max_attempts: 3,
    };
    let failing = ExtractionRunner::new(
        w.ingestor.clone(),
        Arc::new(UnfinishedClaims { inner: w.store.clone() }),
        extractor.clone(),
        Arc::new(TableReviewer::default()),
        Arc::new(retold_index::SnowballEnglish::new()),
        config,
    );
    assert!(failing.run(&session).await.is_err(), "the run fails after its writes");
    let first = every_record(&w).await;
    assert_eq!(first.len(), 6, "four candidates, the inference and the summary: {first:?}");

    // Its claim lapses; the sweep extracts the session again, with the same proposals.
    w.clock.advance(TimeDelta::hours(2));
    let sweep = runner(&w, "runner-b", extractor.clone(), Arc::new(TableReviewer::default()));
    let reports = sweep.run_pending(10).await.unwrap();
    let [(_, Ok(ExtractionReport::Extracted { candidates, summary, .. }))] = &reports[..] else {
        panic!("{reports:?}")
    };
    assert_eq!(extractor.calls(), 2, "the session was extracted twice");
    let writes: Vec<&str> =
        candidates.iter().filter_map(|c| c.write.as_ref()).map(|w| w.as_ref().unwrap().kind()).collect();
    assert_eq!(writes, ["already_written"; 5], "{candidates:?}");
    assert_eq!(summary.as_ref().unwrap().as_ref().unwrap().kind(), "already_written");
    assert_eq!(every_record(&w).await, first, "no new record, no version bump, no reinforcement");
    assert!(first.iter().all(|(_, _, _, reinforcements)| *reinforcements == 0), "{first:?}");
}
