//! Which scopes a principal may read and write (seed section 5).

use std::collections::BTreeSet;

use retold_domain::{Grant, Principal, Scope, ScopeKind};

use crate::error::PolicyError;

/// The scopes a principal may read and write, each sorted and without duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeAccess {
    pub readable: Vec<Scope>,
    pub writable: Vec<Scope>,
}

impl ScopeAccess {
    /// Whether `scope` is readable.
    pub fn can_read(&self, scope: &Scope) -> bool {
        self.readable.binary_search(scope).is_ok()
    }

    /// Whether `scope` is writable.
    pub fn can_write(&self, scope: &Scope) -> bool {
        self.writable.binary_search(scope).is_ok()
    }

    /// The readable scopes among `scopes`.
    pub fn readable_of<'a>(&self, scopes: impl IntoIterator<Item = &'a Scope>) -> Vec<Scope> {
        scopes.into_iter().filter(|s| self.can_read(s)).cloned().collect()
    }
}

/// Whether a grant applies to this principal. Grants are per agent; a user-scope grant only
/// counts when it names the principal's own user; a grant on a private scope only counts for
/// that exact agent-user pair (which the implicit scope already covers).
fn grant_applies(principal: &Principal, grant: &Grant) -> bool {
    if grant.agent_id != principal.agent_id {
        return false;
    }
    match grant.scope.kind() {
        ScopeKind::User => grant.scope.id() == principal.user_id.as_str(),
        ScopeKind::Agent => match grant.scope.private_owner() {
            Some((agent, user)) => agent == principal.agent_id && user == principal.user_id,
            None => true,
        },
        ScopeKind::Project | ScopeKind::Org => true,
    }
}

/// Resolve readable and writable scopes: the implicit private scope, plus every grant that
/// applies. Grants that do not apply (another agent, another user's scope, another pair's
/// private scope found in the store) are ignored.
pub fn resolve_scopes(principal: &Principal, grants: &[Grant]) -> ScopeAccess {
    let private = principal.private_scope();
    let mut readable = BTreeSet::from([private.clone()]);
    let mut writable = BTreeSet::from([private]);
    for grant in grants.iter().filter(|g| grant_applies(principal, g)) {
        if grant.can_read {
            readable.insert(grant.scope.clone());
        }
        if grant.can_write {
            writable.insert(grant.scope.clone());
        }
    }
    ScopeAccess { readable: readable.into_iter().collect(), writable: writable.into_iter().collect() }
}

/// A host may not create a grant on a private `agent:<agent>/<user>` scope.
pub fn validate_new_grant(grant: &Grant) -> Result<(), PolicyError> {
    if grant.scope.is_private() {
        return Err(PolicyError::PrivateScopeGrant { scope: grant.scope.to_string() });
    }
    Ok(())
}
