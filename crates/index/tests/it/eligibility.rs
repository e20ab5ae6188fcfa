//! The derived eligibility table answers exactly like the store's SQL filter, after any
//! sequence of writes, revisions, forgets, merges, expiries (time passing) and restarts.

use proptest::prelude::*;
use retold_domain::chrono::TimeDelta;
use retold_domain::{
    Attribute, Clock, Content, EligibilityFilter, EntityKind, EntityReader, MemoryType, Name, Origin,
    RecordId, Scope, SessionId, SessionTurn, SourceKind, Status, TurnBuffer, TurnRole,
};
use retold_index::EligibilityTable;
use retold_ingest::{EntityRef, ReviseAction, TurnWrite, WriteOutcome, WriteRequest};
use retold_test_kit::prelude::*;
use retold_test_kit::{World, principal};

const SCOPES: [&str; 4] = ["user:u", "project:p", "org:o", "agent:a/u"];
const SUBJECTS: [&str; 3] = ["Ada", "Grace", "Linus"];

#[derive(Debug, Clone)]
enum Op {
    Write {
        scope: usize,
        kind: usize,
        source: usize,
        subject: usize,
        attribute: usize,
        event_days: i64,
    },
    Confirm(usize),
    Expire(usize),
    Forget(usize),
    Merge(usize, usize),
    Advance(i64),
    Restart,
    /// A turn appended to one of two sessions with turn memory, its records in one scope.
    Turn {
        session: usize,
        scope: usize,
    },
}

const SESSIONS: [&str; 2] = ["sess_a", "sess_ab"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..SCOPES.len(), 0usize..3, 0usize..3, 0..SUBJECTS.len(), 0usize..3, -60i64..5).prop_map(
            |(scope, kind, source, subject, attribute, event_days)| Op::Write { scope, kind, source, subject, attribute, event_days }
        ),
        1 => any::<usize>().prop_map(Op::Confirm),
        1 => any::<usize>().prop_map(Op::Expire),
        1 => any::<usize>().prop_map(Op::Forget),
        1 => (0..SUBJECTS.len(), 0..SUBJECTS.len()).prop_map(|(a, b)| Op::Merge(a, b)),
        1 => (1i64..40).prop_map(Op::Advance),
        1 => Just(Op::Restart),
        2 => (0..SESSIONS.len(), 0..SCOPES.len()).prop_map(|(session, scope)| Op::Turn { session, scope }),
    ]
}

fn filters(now: retold_domain::Timestamp) -> Vec<EligibilityFilter> {
    let scope_sets: [&[&str]; 4] = [&SCOPES, &["user:u"], &["project:p", "agent:a/u"], &["team:none"]];
    let statuses = [
        EligibilityFilter::statuses_for(false),
        EligibilityFilter::statuses_for(true),
        vec![Status::Expired, Status::Deleted],
    ];
    let types = [
        None,
        Some(vec![MemoryType::Episodic]),
        Some(vec![MemoryType::Semantic, MemoryType::Procedural]),
        Some(vec![]),
    ];
    let ranges = [
        (None, None),
        (Some(now - TimeDelta::days(20)), None),
        (None, Some(now)),
        (Some(now - TimeDelta::days(30)), Some(now - TimeDelta::days(2))),
    ];
    let origins = [None, Some(vec![Origin::Memory]), Some(vec![Origin::Turn]), Some(vec![])];
    let excluded =
        [None, Some(SessionId::new(SESSIONS[0]).unwrap()), Some(SessionId::new("sess_none").unwrap())];
    let mut out = Vec::new();
    for (i, scopes) in scope_sets.iter().enumerate() {
        for (j, statuses) in statuses.iter().enumerate() {
            for (k, types) in types.iter().enumerate() {
                let (event_from, event_to) = ranges[(i + j + k) % ranges.len()];
                for (l, at) in [now, now + TimeDelta::days(31)].into_iter().enumerate() {
                    for include_conflicts in [false, true] {
                        let n = i + j + k + l + usize::from(include_conflicts);
                        out.push(EligibilityFilter {
                            scopes: scopes.iter().filter_map(|s| Scope::parse(s).ok()).collect(),
                            statuses: statuses.clone(),
                            now: at,
                            types: types.clone(),
                            event_from,
                            event_to,
                            include_conflicts,
                            origins: origins[n % origins.len()].clone(),
                            excluded_session: excluded[(n / 2) % excluded.len()].clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

async fn assert_same(w: &World, table: &EligibilityTable) {
    // Besides now and a month ahead: exactly at every stored expiry and a millisecond around
    // it, where `expires_at > now` decides.
    let mut instants = vec![w.now()];
    for row in w.store.eligibility_rows().await.unwrap() {
        if let Some(at) = row.expires_at {
            instants.extend([at - TimeDelta::milliseconds(1), at, at + TimeDelta::milliseconds(1)]);
        }
    }
    instants.sort();
    instants.dedup();
    let mut all = Vec::new();
    for at in instants.iter().take(12) {
        all.extend(filters(*at));
    }
    for filter in all {
        let sql = w.store.eligible(&filter).await.unwrap();
        assert_eq!(table.filter(&filter), sql, "{filter:?}");
        let keys: Vec<_> = sql.iter().map(|e| e.key).collect();
        assert_eq!(table.filter_keys(&filter), keys, "keys only: {filter:?}");
    }
}

fn request(
    scope: usize,
    kind: usize,
    source: usize,
    subject: usize,
    attribute: usize,
    event_at: retold_domain::Timestamp,
) -> WriteRequest {
    let memory_type = [MemoryType::Semantic, MemoryType::Episodic, MemoryType::Procedural][kind];
    WriteRequest {
        memory_type,
        content: Content::new(format!(
            "{} fact {attribute} from source {source} in {}",
            SUBJECTS[subject], SCOPES[scope]
        ))
        .unwrap(),
        scope: Scope::parse(SCOPES[scope]).unwrap(),
        subject: Some(EntityRef::Name {
            name: Name::new(SUBJECTS[subject]).unwrap(),
            kind: EntityKind::Person,
        }),
        attribute: Some(Attribute::new(["style", "city", "editor"][attribute]).unwrap()),
        mentions: vec![],
        source_kind: [SourceKind::System, SourceKind::AgentInference, SourceKind::ToolResult][source],
        source_ref: None,
        evidence: None,
        event_at: Some(event_at),
        expires_at: None,
        confidence: None,
        tags: vec![],
        context: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn the_derived_table_equals_the_sql_filter(ops in prop::collection::vec(op(), 1..14)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let w = World::builder().derived_eligibility().build().await;
            for scope in ["user:u", "project:p", "org:o"] {
                w.grant("a", scope, true, true).await;
            }
            let p = principal("a", "u");
            let table = w.eligibility.clone().unwrap();
            let mut written: Vec<RecordId> = Vec::new();
            let pick = |written: &[RecordId], n: usize| (!written.is_empty()).then(|| written[n % written.len()].clone());
            for op in ops {
                match op {
                    Op::Write { scope, kind, source, subject, attribute, event_days } => {
                        let at = w.now() + TimeDelta::days(event_days);
                        let outcome = w.ingestor.write(&p, &request(scope, kind, source, subject, attribute, at)).await.unwrap();
                        if let WriteOutcome::Created { id, .. } | WriteOutcome::Superseding { id, .. } | WriteOutcome::Conflicting { id, .. } = outcome {
                            written.push(id);
                        }
                    }
                    // Illegal transitions are refused (and change nothing): that is fine here.
                    Op::Confirm(n) => if let Some(id) = pick(&written, n) { let _ = w.ingestor.revise(&p, &ReviseAction::Confirm { id }).await; },
                    Op::Expire(n) => if let Some(id) = pick(&written, n) { let _ = w.ingestor.revise(&p, &ReviseAction::Expire { id }).await; },
                    Op::Forget(n) => if let Some(id) = pick(&written, n) { let _ = w.ingestor.forget(&p, &id, "property test").await; },
                    Op::Merge(a, b) => {
                        let scopes: Vec<Scope> = SCOPES.iter().map(|s| Scope::parse(s).unwrap()).collect();
                        let find = |name: &str| {
                            let scopes = scopes.clone();
                            let store = w.store.clone();
                            let name = Name::new(name).unwrap();
                            async move { store.find_by_name(&scopes, &name).await.unwrap().into_iter().next() }
                        };
                        if let (Some(from), Some(into)) = (find(SUBJECTS[a]).await, find(SUBJECTS[b]).await) {
                            let _ = w.ingestor.revise(&p, &ReviseAction::MergeEntities { from: from.id, into: into.id }).await;
                        }
                    }
                    Op::Advance(days) => w.clock.advance(TimeDelta::days(days)),
                    Op::Turn { session, scope } => {
                        let id = w.start_session(SESSIONS[session]).await;
                        let number = w.store.last_turn(&id).await.unwrap().map_or(1, |t| t.turn + 1);
                        let turn = SessionTurn {
                            session_id: id,
                            turn: number,
                            role: TurnRole::User,
                            speaker: None,
                            content: format!("turn {number} said in {}", SCOPES[scope]),
                            at: w.now(),
                            created_at: w.now(),
                        };
                        let write = TurnWrite { turn, scope: Scope::parse(SCOPES[scope]).unwrap(), context: None, context_chars: 300 };
                        let memory = w.ingestor.append_turn(&p, write).await.unwrap();
                        written.extend(memory.records().iter().cloned());
                    }
                    Op::Restart => {
                        // A rebuilt table equals the one kept current so far.
                        let rebuilt = EligibilityTable::rebuild(&w.store).await.unwrap();
                        for filter in filters(w.clock.now()) {
                            assert_eq!(rebuilt.filter(&filter), table.filter(&filter), "rebuilt vs kept: {filter:?}");
                        }
                    }
                }
                assert_same(&w, &table).await;
            }
            // What the retriever saw is what the store holds.
            prop_assert!(table.len() >= written.len());
            Ok(())
        })?;
    }
}

/// A replica's refresh: a newer version replaces the row, the same version only adds its
/// conflict flag and is reported held, an older version is left out and reported not held,
/// and an unknown key is added.
#[test]
fn refresh_takes_newer_rows_only_and_says_which_it_holds() {
    use retold_domain::{EligibilityRow, MemoryType, RecordId, RecordKey, Scope, Status};
    let row = |key: u64, version: u32, status: Status, loser: bool| EligibilityRow {
        key: RecordKey(key),
        id: RecordId::new(format!("mem_{key:04}")).unwrap(),
        scope: Scope::parse("project:p").unwrap(),
        status,
        memory_type: MemoryType::Semantic,
        expires_at: None,
        event_at: None,
        version,
        conflict_loser: loser,
        origin: retold_domain::Origin::Memory,
        session: None,
    };
    let table = EligibilityTable::from_rows(&[
        row(1, 2, Status::Confirmed, false),
        row(2, 1, Status::Provisional, false),
    ]);
    let held = table.refresh(&[
        row(1, 1, Status::Deleted, false),    // older: ignored
        row(2, 1, Status::Provisional, true), // same version: the conflict flag joins
        row(3, 1, Status::Confirmed, false),  // new
    ]);
    assert_eq!(held, vec![false, true, true]);
    let filter = retold_domain::EligibilityFilter {
        scopes: vec![Scope::parse("project:p").unwrap()],
        statuses: retold_domain::EligibilityFilter::statuses_for(false),
        now: retold_domain::chrono::Utc::now(),
        types: None,
        event_from: None,
        event_to: None,
        include_conflicts: false,
        origins: None,
        excluded_session: None,
    };
    let ids: Vec<String> = table.filter(&filter).into_iter().map(|e| e.id.to_string()).collect();
    assert_eq!(ids, vec!["mem_0001", "mem_0003"], "1 stays confirmed, 2 lost its conflict, 3 is new");
    assert_eq!(table.refresh(&[row(1, 3, Status::Deleted, false)]), vec![true]);
    let ids: Vec<String> = table.filter(&filter).into_iter().map(|e| e.id.to_string()).collect();
    assert_eq!(ids, vec!["mem_0003"], "a newer version replaces the row");
}
