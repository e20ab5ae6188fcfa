//! Scopes: the ownership boundary on a record (seed section 4).

use std::fmt;

use crate::error::{DomainError, Result};
use crate::ids::{AgentId, UserId, check_token};

/// The four scope kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScopeKind {
    /// `agent:<agent>` (needs a grant) or the implicit private `agent:<agent>/<user>`.
    Agent,
    /// `user:<user>`: preferences and facts about one user.
    User,
    /// `project:<project>`: shared decisions and conventions.
    Project,
    /// `org:<org>`: knowledge shared across an organisation.
    Org,
}

impl ScopeKind {
    /// All kinds, in a fixed order.
    pub const ALL: [ScopeKind; 4] = [Self::Agent, Self::User, Self::Project, Self::Org];

    /// The stable name used in scope strings, storage and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::User => "user",
            Self::Project => "project",
            Self::Org => "org",
        }
    }

    /// Parse the stable name.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "agent" => Ok(Self::Agent),
            "user" => Ok(Self::User),
            "project" => Ok(Self::Project),
            "org" => Ok(Self::Org),
            other => Err(DomainError::invalid(
                "scope_kind",
                format!("{other:?} is not one of agent, user, project, org"),
            )),
        }
    }
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validated scope: a kind and an id.
///
/// Only agent scopes may carry a `/`, and then exactly one, separating the
/// agent id from the user id of the implicit private scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope {
    kind: ScopeKind,
    id: String,
}

impl Scope {
    /// Build a scope from its kind and id.
    pub fn new(kind: ScopeKind, id: impl Into<String>) -> Result<Self> {
        let id = id.into();
        match kind {
            ScopeKind::Agent => match id.split_once('/') {
                Some((agent, user)) => {
                    check_token("scope_id", agent)?;
                    check_token("scope_id", user)?;
                }
                None => check_token("scope_id", &id)?,
            },
            ScopeKind::User | ScopeKind::Project | ScopeKind::Org => check_token("scope_id", &id)?,
        }
        Ok(Self { kind, id })
    }

    /// The implicit private scope `agent:<agent_id>/<user_id>` of a principal pair.
    pub fn private(agent: &AgentId, user: &UserId) -> Self {
        // Both ids are validated tokens without `/`, so the encoding is unique.
        Self { kind: ScopeKind::Agent, id: format!("{agent}/{user}") }
    }

    /// `user:<user_id>`.
    pub fn user(user: &UserId) -> Self {
        Self { kind: ScopeKind::User, id: user.as_str().to_owned() }
    }

    /// Parse the `kind:id` form, e.g. `agent:researcher/aditya` or `project:agentic-memory-system`.
    pub fn parse(value: &str) -> Result<Self> {
        let Some((kind, id)) = value.split_once(':') else {
            return Err(DomainError::invalid("scope", format!("{value:?} is not of the form kind:id")));
        };
        Self::new(ScopeKind::parse(kind)?, id)
    }

    /// The scope's kind.
    pub fn kind(&self) -> ScopeKind {
        self.kind
    }

    /// The scope's id (for a private agent scope, `<agent>/<user>`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// For a private agent scope, the agent and user it belongs to.
    pub fn private_owner(&self) -> Option<(AgentId, UserId)> {
        if self.kind != ScopeKind::Agent {
            return None;
        }
        let (agent, user) = self.id.split_once('/')?;
        // Validated at construction.
        Some((AgentId::new(agent).ok()?, UserId::new(user).ok()?))
    }

    /// Whether this is an implicit private `agent:<agent>/<user>` scope.
    pub fn is_private(&self) -> bool {
        self.kind == ScopeKind::Agent && self.id.contains('/')
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.id)
    }
}
