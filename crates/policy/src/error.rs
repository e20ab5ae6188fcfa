//! The policy crate's error enum.

use retold_domain::{DomainError, Status};

/// A policy refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Grants on implicit private `agent:<agent>/<user>` scopes are never created.
    #[error("grants on private agent scopes are refused: {scope}")]
    PrivateScopeGrant { scope: String },
    /// The lifecycle does not allow this change.
    #[error("a {from} record cannot become {to}")]
    IllegalTransition { from: Status, to: Status },
}

impl From<PolicyError> for DomainError {
    fn from(error: PolicyError) -> Self {
        match error {
            PolicyError::PrivateScopeGrant { .. } => {
                DomainError::Invalid { field: "scope", reason: error.to_string() }
            }
            PolicyError::IllegalTransition { .. } => DomainError::Conflict(error.to_string()),
        }
    }
}
