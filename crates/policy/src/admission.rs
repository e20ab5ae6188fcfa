//! Draft-relative admission (seed section 1, "Utility-aware orchestrator"): which searched
//! records may enter a regenerated answer. A record is admitted only if it answers a gap,
//! is not already stated in the draft or the session's profile, and is policy-eligible.

use std::collections::HashSet;

use retold_domain::{MemoryRecord, RecordId, Scope, Status, Timestamp};

/// The admission policy of a bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionPolicy {
    /// A record answers a gap when its dense cosine to the gap's query is at least this…
    pub score_floor: f32,
    /// …or when it matched at least this many of the query's lexical terms.
    pub lexical_terms: usize,
    /// A record whose content is at least this similar to a sentence of the draft or a line
    /// of the profile is already stated.
    pub stated_floor: f32,
    /// Admitted records per decision, at most.
    pub max_admitted: usize,
}

/// One searched record, with what the orchestrator measured about it.
#[derive(Debug, Clone)]
pub struct AdmissionCandidate<'a> {
    pub record: &'a MemoryRecord,
    /// Cosine to the gap's query, when the dense channel saw it.
    pub dense_cosine: Option<f32>,
    /// Query terms the lexical channel matched.
    pub lexical_matched: usize,
    /// Highest cosine to a draft sentence or a profile line.
    pub stated_similarity: f32,
    /// The record's words appear in order in the draft or the profile, or the draft cites
    /// the record by its id.
    pub stated_verbatim: bool,
}

/// Why a candidate was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Below the score floor and the lexical-term count: it does not answer the gap.
    Irrelevant,
    /// The draft or the profile already says it.
    AlreadyStated,
    /// The profile holds this record.
    InProfile,
    /// Not current (superseded, expired, forgotten), past its expiry, or in a scope the
    /// principal cannot read.
    NotEligible,
    /// Another gap admitted it already.
    Duplicate,
    /// The decision holds `max_admitted` records already.
    OverCap,
}

/// Admit candidates in order (gap by gap, rank by rank). `readable` is the principal's
/// readable scopes, `profile` the record ids of the session's profile.
pub fn admit(
    policy: &AdmissionPolicy,
    candidates: &[AdmissionCandidate<'_>],
    readable: &[Scope],
    profile: &HashSet<RecordId>,
    now: Timestamp,
) -> Vec<(RecordId, Result<(), Refusal>)> {
    let mut admitted: HashSet<RecordId> = HashSet::new();
    candidates
        .iter()
        .map(|c| {
            let r = c.record;
            let verdict = if !eligible(r, readable, now) {
                Err(Refusal::NotEligible)
            } else if admitted.contains(&r.id) {
                Err(Refusal::Duplicate)
            } else if profile.contains(&r.id) {
                Err(Refusal::InProfile)
            } else if !(c.dense_cosine.is_some_and(|s| s >= policy.score_floor)
                || (policy.lexical_terms > 0 && c.lexical_matched >= policy.lexical_terms))
            {
                Err(Refusal::Irrelevant)
            } else if c.stated_verbatim || c.stated_similarity >= policy.stated_floor {
                Err(Refusal::AlreadyStated)
            } else if admitted.len() >= policy.max_admitted {
                Err(Refusal::OverCap)
            } else {
                admitted.insert(r.id.clone());
                Ok(())
            };
            (r.id.clone(), verdict)
        })
        .collect()
}

/// Current, unexpired and readable: what a search may return, checked again here so no
/// caller of `admit` can hand it a record the principal may not see.
fn eligible(record: &MemoryRecord, readable: &[Scope], now: Timestamp) -> bool {
    matches!(record.status, Status::Confirmed | Status::Provisional)
        && record.expires_at.is_none_or(|at| at > now)
        && readable.contains(&record.scope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use retold_domain::chrono::{TimeZone, Utc};
    use retold_domain::{AgentId, Confidence, Content, MemoryType, SourceKind};

    fn now() -> Timestamp {
        Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap()
    }

    fn record(id: &str, scope: &str, status: Status) -> MemoryRecord {
        MemoryRecord {
            id: RecordId::new(format!("mem_{id}")).unwrap(),
            memory_type: MemoryType::Semantic,
            version: 1,
            content: Content::new(format!("content {id}")).unwrap(),
            key: None,
            scope: Scope::parse(scope).unwrap(),
            source_kind: SourceKind::UserStatement,
            source_ref: None,
            creator_agent_id: AgentId::new("agent").unwrap(),
            evidence: None,
            created_at: now(),
            event_at: None,
            expires_at: None,
            confidence: Confidence::new(0.9).unwrap(),
            status,
            supersedes_id: None,
            reinforcements: 0,
            last_reinforced_at: None,
            tags: Vec::new(),
            context: None,
            origin: retold_domain::Origin::Memory,
            speaker: None,
        }
    }

    fn policy() -> AdmissionPolicy {
        AdmissionPolicy { score_floor: 0.4, lexical_terms: 2, stated_floor: 0.9, max_admitted: 2 }
    }

    fn candidate(record: &MemoryRecord, cosine: f32, lexical: usize, stated: f32) -> AdmissionCandidate<'_> {
        AdmissionCandidate {
            record,
            dense_cosine: Some(cosine),
            lexical_matched: lexical,
            stated_similarity: stated,
            stated_verbatim: false,
        }
    }

    #[test]
    fn each_rule_refuses_with_its_reason_and_the_rest_are_admitted_up_to_the_cap() {
        let readable = vec![Scope::parse("user:u").unwrap()];
        let good = record("a", "user:u", Status::Confirmed);
        let lexical_only = record("b", "user:u", Status::Provisional);
        let weak = record("c", "user:u", Status::Confirmed);
        let stated = record("d", "user:u", Status::Confirmed);
        let foreign = record("e", "user:other", Status::Confirmed);
        let superseded = record("f", "user:u", Status::Superseded);
        let in_profile = record("g", "user:u", Status::Confirmed);
        let third = record("h", "user:u", Status::Confirmed);
        let mut expired = record("i", "user:u", Status::Confirmed);
        expired.expires_at = Some(now());
        let candidates = vec![
            candidate(&good, 0.6, 0, 0.2),
            candidate(&good, 0.6, 0, 0.2),
            AdmissionCandidate { dense_cosine: None, ..candidate(&lexical_only, 0.0, 2, 0.1) },
            candidate(&weak, 0.39, 1, 0.1),
            candidate(&stated, 0.8, 3, 0.95),
            AdmissionCandidate { stated_verbatim: true, ..candidate(&stated, 0.8, 3, 0.1) },
            candidate(&foreign, 0.9, 3, 0.0),
            candidate(&superseded, 0.9, 3, 0.0),
            candidate(&expired, 0.9, 3, 0.0),
            candidate(&in_profile, 0.9, 3, 0.0),
            candidate(&third, 0.9, 3, 0.0),
        ];
        let profile: HashSet<RecordId> = [in_profile.id.clone()].into();
        let verdicts: Vec<Result<(), Refusal>> =
            admit(&policy(), &candidates, &readable, &profile, now()).into_iter().map(|(_, v)| v).collect();
        assert_eq!(
            verdicts,
            vec![
                Ok(()),
                Err(Refusal::Duplicate),
                Ok(()),
                Err(Refusal::Irrelevant),
                Err(Refusal::AlreadyStated),
                Err(Refusal::AlreadyStated),
                Err(Refusal::NotEligible),
                Err(Refusal::NotEligible),
                Err(Refusal::NotEligible),
                Err(Refusal::InProfile),
                Err(Refusal::OverCap),
            ]
        );
    }
}
