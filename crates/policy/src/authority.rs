//! Source authority and current-fact decisions (seed sections 6 and 7).

use retold_domain::chrono::TimeDelta;
use retold_domain::{Confidence, MemoryRecord, SourceKind, Status, Timestamp};

/// What to do with a candidate for a current fact that already has a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactDecision {
    /// Same meaning: reinforce the existing record; no new row.
    Reinforce,
    /// Equal or higher source rank: the candidate supersedes the existing record.
    Supersede,
    /// Lower rank and conflicting: store the candidate provisional, linked as a conflict.
    Conflict,
}

/// Decide by the seed's table: meaning first, then source rank.
pub fn decide(existing: &MemoryRecord, candidate: SourceKind, same_meaning: bool) -> FactDecision {
    if same_meaning {
        FactDecision::Reinforce
    } else if candidate.rank() >= existing.source_kind.rank() {
        FactDecision::Supersede
    } else {
        FactDecision::Conflict
    }
}

/// Reinforcement settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reinforcement {
    /// How much each reinforcement raises confidence (capped at 0.99).
    pub confidence_step: f64,
    /// Reinforcements after which a provisional record is confirmed.
    pub to_confirm: u32,
    /// A provisional record's expiry is refreshed to now + this.
    pub provisional_ttl: TimeDelta,
}

/// Apply one reinforcement at `now`: count it, raise confidence up to 0.99, refresh a
/// provisional expiry, and confirm after the configured count. The version is bumped.
pub fn reinforce(record: &MemoryRecord, now: Timestamp, rules: &Reinforcement) -> MemoryRecord {
    let mut next = record.clone();
    next.version += 1;
    next.reinforcements += 1;
    next.last_reinforced_at = Some(now);
    let raised = (record.confidence.get() + rules.confidence_step).min(Confidence::REINFORCEMENT_CAP);
    next.confidence = Confidence::new(raised.max(record.confidence.get())).expect("within [0, 1]");
    if record.status == Status::Provisional {
        if next.reinforcements >= rules.to_confirm {
            next.status = Status::Confirmed;
            next.expires_at = None;
        } else {
            next.expires_at = Some(now + rules.provisional_ttl);
        }
    }
    next
}
