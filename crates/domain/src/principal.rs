//! The caller of a memory tool, and the grants that give it access (seed section 5).

use crate::ids::{AgentId, GrantId, ProjectId, SessionId, UserId};
use crate::scope::Scope;

/// Who is calling: asserted by the host for the current agent run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub project_id: Option<ProjectId>,
    pub session_id: Option<SessionId>,
}

impl Principal {
    /// A principal with no project or session.
    pub fn new(agent_id: AgentId, user_id: UserId) -> Self {
        Self { agent_id, user_id, project_id: None, session_id: None }
    }

    /// The implicit private scope `agent:<agent_id>/<user_id>`, always readable and writable.
    pub fn private_scope(&self) -> Scope {
        Scope::private(&self.agent_id, &self.user_id)
    }
}

/// Permission for one agent on one scope. Scope describes ownership; a grant describes permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: GrantId,
    pub agent_id: AgentId,
    pub scope: Scope,
    pub can_read: bool,
    pub can_write: bool,
}

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRole {
    /// Manages grants, entities, keys and operations; never calls the memory tools.
    Admin,
    /// Calls the memory tools and sessions for the agents it may assert.
    Host,
}

impl KeyRole {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Host => "host",
        }
    }

    /// Parse a stored name.
    pub fn parse(text: &str) -> crate::error::Result<Self> {
        match text {
            "admin" => Ok(Self::Admin),
            "host" => Ok(Self::Host),
            other => Err(crate::error::DomainError::invalid("role", format!("unknown key role {other:?}"))),
        }
    }
}

/// A stored API key, without its secret (which is kept only as a SHA-256 hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyInfo {
    pub id: String,
    pub name: String,
    pub role: KeyRole,
    /// Agent ids a host key may assert; empty means any.
    pub agents: Vec<AgentId>,
}
