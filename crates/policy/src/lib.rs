//! Retold's policy: scope resolution (readable and writable scopes of a principal), grant
//! rules, source authority and current-fact decisions, lifecycle transitions, evidence rules
//! and reinforcement. Pure functions over `retold-domain` types; no I/O.

mod activation;
mod admission;
mod authority;
mod error;
mod evidence;
mod lifecycle;
mod scopes;

pub use crate::activation::{
    CategoryRule, SessionContext, candidacy, categorize, condition_holding, conditions,
};
pub use crate::admission::{AdmissionCandidate, AdmissionPolicy, Refusal, admit};
pub use crate::authority::{FactDecision, Reinforcement, decide, reinforce};
pub use crate::error::PolicyError;
pub use crate::evidence::{EvidenceVerdict, evidence_appears_verbatim, judge_evidence};
pub use crate::lifecycle::transition;
pub use crate::scopes::{ScopeAccess, resolve_scopes, validate_new_grant};
