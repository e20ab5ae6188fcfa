//! The narrowing rule and the parsing of model answers.

use retold_domain::chrono::{TimeZone, Utc};
use retold_domain::{EntityKind, MemoryType, SourceKind};

use super::llm::{candidate_json, parse_candidate, parse_extraction, parse_review};
use super::{Candidate, CandidateEntity, CandidateScope, Verdict, revision_refusal};

/// Why a revision is refused, under the stemmer the service uses.
fn refusal_of(original: &Candidate, revised: &Candidate) -> Option<String> {
    revision_refusal(original, revised, &retold_index::SnowballEnglish::new())
}

fn candidate() -> Candidate {
    Candidate {
        memory_type: MemoryType::Semantic,
        content: "Aditya prefers concise technical explanations.".into(),
        subject: Some(CandidateEntity { name: "Aditya".into(), kind: EntityKind::Person }),
        attribute: Some("explanation_style".into()),
        mentions: vec![],
        source_kind: SourceKind::UserStatement,
        turn: 1,
        evidence: "I prefer concise technical explanations, ideally in English".into(),
        event_at: Some(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()),
        expires_at: None,
        confidence: None,
        scope: CandidateScope::User,
    }
}

fn check(change: impl FnOnce(&mut Candidate), expected: Option<&str>) {
    let original = candidate();
    let mut revised = original.clone();
    change(&mut revised);
    let refusal = refusal_of(&original, &revised);
    match expected {
        None => assert_eq!(refusal, None),
        Some(needle) => {
            let refusal = refusal.unwrap_or_else(|| panic!("expected a refusal containing {needle:?}"));
            assert!(refusal.contains(needle), "{refusal:?} lacks {needle:?}");
        }
    }
}

#[test]
fn narrowing_revisions_are_allowed() {
    check(|_| {}, None);
    check(|c| c.content = "Aditya prefers concise explanations.".into(), None);
    check(|c| c.content = "Aditya preferred concise explanations.".into(), None);
    check(|c| c.attribute = Some("explanation_style_language".into()), None);
    check(|c| c.event_at = Some(Utc.with_ymd_and_hms(2026, 9, 4, 0, 0, 0).unwrap()), None);
    check(|c| c.expires_at = Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap()), None);
    check(|c| c.confidence = Some(0.5), None);
}

#[test]
fn widening_revisions_are_refused() {
    check(
        |c| c.content = "Aditya always prefers concise explanations in every language.".into(),
        Some("always"),
    );
    check(|c| c.content = "Aditya and Priya prefer concise technical explanations.".into(), Some("priya"));
    check(
        |c| c.content = "Aditya prefers concise technical explanations in English.".into(),
        Some("english"),
    );
    check(|c| c.memory_type = MemoryType::Procedural, Some("type"));
    check(
        |c| c.subject = Some(CandidateEntity { name: "Priya".into(), kind: EntityKind::Person }),
        Some("subject"),
    );
    check(|c| c.scope = CandidateScope::Private, Some("scope"));
    check(|c| c.source_kind = SourceKind::AgentInference, Some("source_kind"));
    check(|c| c.turn = 2, Some("turn"));
    check(|c| c.evidence = "I prefer concise".into(), Some("evidence"));
    check(|c| c.attribute = Some("style".into()), Some("does not refine"));
    check(|c| c.attribute = None, Some("remove the attribute"));
    check(|c| c.event_at = Some(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()), Some("earlier"));
    check(|c| c.event_at = None, Some("remove event_at"));
    let mut open_start = candidate();
    open_start.event_at = None;
    let mut dated = open_start.clone();
    dated.event_at = Some(Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap());
    assert!(refusal_of(&open_start, &dated).unwrap().contains("left open"));
    check(|c| c.confidence = Some(0.99), Some("raise confidence"));
    let mut bounded = candidate();
    bounded.expires_at = Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
    let mut later = bounded.clone();
    later.expires_at = Some(Utc.with_ymd_and_hms(2028, 1, 1, 0, 0, 0).unwrap());
    assert!(refusal_of(&bounded, &later).unwrap().contains("later"));
    let mut unbounded = bounded.clone();
    unbounded.expires_at = None;
    assert!(refusal_of(&bounded, &unbounded).unwrap().contains("remove expires_at"));
}

#[test]
fn dropping_a_word_that_limits_the_claim_is_refused() {
    let cases = [
        ("Aditya never uses Windows.", "Aditya uses Windows.", Some("never")),
        ("Aditya doesn't drink coffee.", "Aditya drinks coffee.", Some("not")),
        ("Aditya is on call only until Friday.", "Aditya is on call.", Some("only")),
        ("Aditya might relocate to Berlin.", "Aditya relocates to Berlin.", Some("might")),
        ("Aditya uses Rust and Go at work.", "Aditya uses Rust at work.", None),
    ];
    for (original, revised, expected) in cases {
        let mut a = candidate();
        a.content = original.into();
        let mut b = a.clone();
        b.content = revised.into();
        let refusal = refusal_of(&a, &b);
        match expected {
            None => assert_eq!(refusal, None, "{original} -> {revised}"),
            Some(word) => {
                let refusal = refusal.unwrap_or_else(|| panic!("{original} -> {revised} was allowed"));
                assert!(refusal.contains(word), "{refusal}");
            }
        }
    }
    // Swapping one evidence word for another is not narrowing.
    let mut a = candidate();
    a.content = "Aditya likes Rust.".into();
    a.evidence = "I like Rust and Go".into();
    let mut b = a.clone();
    b.content = "Aditya likes Go.".into();
    assert!(refusal_of(&a, &b).unwrap().contains("go"));
}

#[test]
fn candidates_round_trip_through_the_schema_shape() {
    let original = candidate();
    assert_eq!(parse_candidate(&candidate_json(&original)).unwrap(), original);
}

#[test]
fn malformed_proposals_are_reported_one_by_one() {
    let mut good = candidate_json(&candidate());
    good["event_at"] = "2026-09-03".into();
    let mut bad_date = good.clone();
    bad_date["event_at"] = "last Tuesday".into();
    let mut bad_kind = good.clone();
    bad_kind["source_kind"] = "system".into();
    let answer =
        serde_json::json!({"candidates": [good, bad_date, {"content": "x"}], "summary": "  "}).to_string();
    let extraction = parse_extraction(&answer).unwrap();
    assert_eq!(extraction.candidates.len(), 1);
    assert_eq!(extraction.candidates[0].event_at, Some(Utc.with_ymd_and_hms(2026, 9, 3, 0, 0, 0).unwrap()));
    assert_eq!(extraction.malformed.len(), 2);
    assert!(extraction.malformed[0].contains("last Tuesday"), "{:?}", extraction.malformed);
    assert_eq!(extraction.summary, None, "a blank summary is no summary");
    assert!(parse_extraction("{\"summary\": \"s\"}").is_err());
    assert!(parse_extraction("not json").is_err());
    let with_system = serde_json::json!({"candidates": [bad_kind], "summary": "s"}).to_string();
    // `system` parses as a source kind; validation refuses it later.
    assert_eq!(parse_extraction(&with_system).unwrap().candidates.len(), 1);
}

#[test]
fn review_answers_map_to_verdicts_by_index() {
    let mut revised = candidate_json(&candidate());
    revised["content"] = "Aditya prefers concise explanations.".into();
    let answer = serde_json::json!({"reviews": [
        {"index": 2, "verdict": "reject", "reason": "small talk", "revised": null},
        {"index": 0, "verdict": "revise", "reason": "narrower", "revised": revised},
        {"index": 1, "verdict": "revise", "reason": "oops", "revised": null},
        {"index": 9, "verdict": "reject", "reason": "no such candidate", "revised": null},
    ]})
    .to_string();
    let verdicts = parse_review(&answer, 4).unwrap();
    assert!(
        matches!(&verdicts[0], Verdict::Revise(c) if c.content == "Aditya prefers concise explanations.")
    );
    assert!(matches!(&verdicts[1], Verdict::Unusable { reason } if reason.contains("malformed")));
    assert_eq!(verdicts[2], Verdict::Reject { reason: "small talk".into() });
    assert!(
        matches!(&verdicts[3], Verdict::Missing { .. }),
        "a candidate the reviewer skips is not accepted"
    );
    let twice = serde_json::json!({"reviews": [
        {"index": 0, "verdict": "reject", "reason": "no", "revised": null},
        {"index": 0, "verdict": "accept", "reason": "yes", "revised": null},
    ]})
    .to_string();
    assert!(
        matches!(&parse_review(&twice, 1).unwrap()[0], Verdict::Missing { reason } if reason.contains("two verdicts"))
    );
}

fn request() -> crate::request::WriteRequest {
    use retold_domain::{Attribute, Content, Evidence, Name, Scope, SourceRef};
    crate::request::WriteRequest {
        memory_type: MemoryType::Semantic,
        content: Content::new("Aditya prefers concise technical explanations.").unwrap(),
        scope: Scope::parse("user:aditya").unwrap(),
        subject: Some(crate::request::EntityRef::Name {
            name: Name::new("Aditya").unwrap(),
            kind: EntityKind::Person,
        }),
        attribute: Some(Attribute::new("explanation_style").unwrap()),
        mentions: vec![],
        source_kind: SourceKind::UserStatement,
        source_ref: Some(SourceRef::new("session:sess_1<turn:1>").unwrap()),
        evidence: Some(Evidence::new("I prefer concise technical explanations").unwrap()),
        event_at: Some(Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()),
        expires_at: None,
        confidence: None,
        tags: vec![],
        context: None,
    }
}

#[test]
fn a_write_key_is_stable_and_changes_with_everything_written() {
    use super::runner::write_key;
    use retold_domain::{Content, SessionId};
    let session = SessionId::new("sess_1").unwrap();
    let key = write_key(&session, &request());
    // Pinned: a retried run after an upgrade must find the receipts of the run before it.
    assert_eq!(key.digest, "25fb258490f39774edf1caa508228165a0b74bc9bc5941d0617e34e40c7efd39");
    let other_session = SessionId::new("sess_2").unwrap();
    assert_eq!(
        write_key(&other_session, &request()).digest,
        key.digest,
        "the session is the key's other half"
    );
    let changes: [fn(&mut crate::request::WriteRequest); 5] = [
        |r| r.content = Content::new("Aditya prefers concise explanations.").unwrap(),
        |r| r.scope = retold_domain::Scope::parse("agent:a/aditya").unwrap(),
        |r| r.attribute = None,
        |r| r.source_kind = SourceKind::AgentInference,
        |r| r.event_at = None,
    ];
    for change in changes {
        let mut changed = request();
        change(&mut changed);
        assert_ne!(write_key(&session, &changed).digest, key.digest, "{changed:?}");
    }
}
