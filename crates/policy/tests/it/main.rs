//! Policy rules, with the seed's grant examples as tests.

use proptest::prelude::*;
use retold_domain::{AgentId, Grant, GrantId, Principal, ProjectId, Scope, Status, UserId};
use retold_policy::{
    EvidenceVerdict, PolicyError, evidence_appears_verbatim, judge_evidence, resolve_scopes, transition,
    validate_new_grant,
};

fn principal(agent: &str, user: &str) -> Principal {
    Principal {
        agent_id: AgentId::new(agent).unwrap(),
        user_id: UserId::new(user).unwrap(),
        project_id: Some(ProjectId::new("agentic-memory-system").unwrap()),
        session_id: None,
    }
}

fn grant(agent: &str, scope: &str, read: bool, write: bool) -> Grant {
    Grant {
        id: GrantId::new("grt_1").unwrap(),
        agent_id: AgentId::new(agent).unwrap(),
        scope: Scope::parse(scope).unwrap(),
        can_read: read,
        can_write: write,
    }
}

fn names(scopes: &[Scope]) -> Vec<String> {
    scopes.iter().map(Scope::to_string).collect()
}

#[test]
fn the_implicit_private_scope_needs_no_grant() {
    let access = resolve_scopes(&principal("implementation-agent", "aditya"), &[]);
    assert_eq!(names(&access.readable), ["agent:implementation-agent/aditya"]);
    assert_eq!(names(&access.writable), ["agent:implementation-agent/aditya"]);
}

#[test]
fn a_read_only_project_grant_reads_but_cannot_write() {
    let p = principal("implementation-agent", "aditya");
    let access =
        resolve_scopes(&p, &[grant("implementation-agent", "project:agentic-memory-system", true, false)]);
    let project = Scope::parse("project:agentic-memory-system").unwrap();
    assert!(access.can_read(&project));
    assert!(!access.can_write(&project));
}

#[test]
fn a_user_grant_counts_only_for_that_user() {
    let grants = [grant("research-agent", "user:aditya", true, true)];
    let aditya = resolve_scopes(&principal("research-agent", "aditya"), &grants);
    assert!(aditya.can_write(&Scope::parse("user:aditya").unwrap()));
    let other = resolve_scopes(&principal("research-agent", "bob"), &grants);
    assert!(!other.can_read(&Scope::parse("user:aditya").unwrap()));
    assert_eq!(names(&other.readable), ["agent:research-agent/bob"]);
}

#[test]
fn grants_of_other_agents_are_ignored() {
    let access = resolve_scopes(&principal("a", "u"), &[grant("b", "org:acme", true, true)]);
    assert!(!access.can_read(&Scope::parse("org:acme").unwrap()));
}

#[test]
fn private_scope_grants_are_refused_and_ignored_when_found_for_another_user() {
    let private = grant("research-agent", "agent:research-agent/aditya", true, true);
    assert!(matches!(validate_new_grant(&private), Err(PolicyError::PrivateScopeGrant { .. })));
    assert!(validate_new_grant(&grant("research-agent", "agent:research-agent", true, false)).is_ok());
    // Found in the store anyway: ignored for bob, harmless for aditya (already implicit).
    let bob = resolve_scopes(&principal("research-agent", "bob"), std::slice::from_ref(&private));
    assert!(!bob.can_read(&private.scope));
    // Another agent's private pair stays out of reach even with its user.
    let other_agent = resolve_scopes(
        &principal("other-agent", "aditya"),
        &[grant("other-agent", "agent:research-agent/aditya", true, true)],
    );
    assert!(!other_agent.can_read(&private.scope));
    // A plain agent scope needs and honours a grant.
    let plain = resolve_scopes(
        &principal("research-agent", "bob"),
        &[grant("research-agent", "agent:research-agent", true, false)],
    );
    assert!(plain.can_read(&Scope::parse("agent:research-agent").unwrap()));
}

#[test]
fn lifecycle_transitions_follow_the_seed() {
    use Status::*;
    let allowed = [
        (Provisional, Confirmed),
        (Provisional, Superseded),
        (Provisional, Expired),
        (Provisional, Deleted),
        (Confirmed, Superseded),
        (Confirmed, Expired),
        (Confirmed, Deleted),
        (Superseded, Deleted),
        (Expired, Provisional),
        (Expired, Confirmed),
        (Expired, Deleted),
    ];
    for from in Status::ALL {
        for to in Status::ALL {
            let expected = allowed.contains(&(from, to));
            assert_eq!(transition(from, to).is_ok(), expected, "{from} -> {to}");
        }
    }
    assert_eq!(
        transition(Deleted, Confirmed),
        Err(PolicyError::IllegalTransition { from: Deleted, to: Confirmed })
    );
}

#[test]
fn evidence_must_be_verbatim_and_entail_above_the_floor() {
    let turn = "Sure.  Keep answers\nconcise. Thanks!";
    assert!(evidence_appears_verbatim("Keep answers concise.", turn));
    assert!(!evidence_appears_verbatim("Keep answers short.", turn));
    assert!(!evidence_appears_verbatim("keep answers concise.", turn), "case matters");
    assert!(!evidence_appears_verbatim("   ", turn));
    assert_eq!(judge_evidence(true, Some(0.5), 0.35), EvidenceVerdict::Supported { entail_score: 0.5 });
    assert!(matches!(
        judge_evidence(true, Some(0.2), 0.35),
        EvidenceVerdict::Downgraded { entail_score: Some(_), .. }
    ));
    assert!(matches!(judge_evidence(false, Some(0.9), 0.35), EvidenceVerdict::Downgraded { .. }));
}

fn scope_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("user:u1".to_owned()),
        Just("user:u2".to_owned()),
        Just("project:p".to_owned()),
        Just("org:o".to_owned()),
        Just("agent:a1".to_owned()),
        Just("agent:a1/u1".to_owned()),
        Just("agent:a1/u2".to_owned()),
        Just("agent:a2/u1".to_owned()),
    ]
}

proptest! {
    /// Whatever the grants, a principal never reads or writes another user's user scope or
    /// another pair's private scope, and never writes what no applicable grant allows.
    #[test]
    fn resolution_never_leaks(
        agent in prop_oneof![Just("a1"), Just("a2")],
        user in prop_oneof![Just("u1"), Just("u2")],
        grants in prop::collection::vec((prop_oneof![Just("a1"), Just("a2")], scope_strategy(), any::<bool>(), any::<bool>()), 0..8),
    ) {
        let p = principal(agent, user);
        let grants: Vec<Grant> = grants.iter().map(|(a, s, r, w)| grant(a, s, *r, *w)).collect();
        let access = resolve_scopes(&p, &grants);
        for scope in access.readable.iter().chain(&access.writable) {
            if scope.kind() == retold_domain::ScopeKind::User {
                prop_assert_eq!(scope.id(), user);
            }
            if let Some((a, u)) = scope.private_owner() {
                prop_assert_eq!(a.as_str(), agent);
                prop_assert_eq!(u.as_str(), user);
            }
        }
        for scope in &access.writable {
            let implicit = *scope == p.private_scope();
            let granted = grants.iter().any(|g| g.agent_id.as_str() == agent && &g.scope == scope && g.can_write);
            prop_assert!(implicit || granted, "{} writable without a grant", scope);
        }
    }
}
