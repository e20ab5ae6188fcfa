//! Bearer-key authentication. Keys are only ever compared by SHA-256: the admin key from the
//! configuration (`auth.admin_key_sha256`, or `auth.admin_key` for automation, hashed at
//! start) or stored; host keys are created by the admin and stored hashed. A host key may be
//! limited to a set of agent ids, and nothing in a request body can widen that.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
pub use retold_app::hash_key;
use retold_domain::{AgentId, KeyRole, Principal, ProjectId, SessionId, UserId};

use crate::dto::PrincipalDto;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Caller {
    Admin,
    /// A host key (its id); `agents` empty means any agent.
    Host {
        key_id: String,
        agents: Vec<AgentId>,
    },
}

async fn caller(parts: &Parts, state: &AppState) -> Result<Caller, ApiError> {
    let header =
        parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).ok_or_else(ApiError::unauthorized)?;
    let token = header
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(ApiError::unauthorized)?;
    let hash = hash_key(token);
    if state.admin_hashes.iter().any(|h| h.eq_ignore_ascii_case(&hash)) {
        return Ok(Caller::Admin);
    }
    match state.services.admin.key_by_hash(&hash).await {
        Ok(Some(key)) if key.role == KeyRole::Admin => Ok(Caller::Admin),
        Ok(Some(key)) => Ok(Caller::Host { key_id: key.id, agents: key.agents }),
        Ok(None) => Err(ApiError::unauthorized()),
        Err(error) => {
            tracing::error!(%error, "key lookup failed");
            Err(ApiError::new(ErrorCode::Internal, "the request could not be completed"))
        }
    }
}

/// Any valid key.
#[derive(Debug)]
pub(crate) struct AnyKey;

/// The admin key.
#[derive(Debug)]
pub(crate) struct AdminKey;

/// A host key, with the agents it may assert.
#[derive(Debug)]
pub(crate) struct HostKey {
    id: String,
    agents: Vec<AgentId>,
}

impl FromRequestParts<AppState> for AnyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        caller(parts, state).await?;
        Ok(Self)
    }
}

impl FromRequestParts<AppState> for AdminKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match caller(parts, state).await? {
            Caller::Admin => Ok(Self),
            Caller::Host { .. } => {
                Err(ApiError::new(ErrorCode::Forbidden, "this endpoint needs the admin key"))
            }
        }
    }
}

impl FromRequestParts<AppState> for HostKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match caller(parts, state).await? {
            Caller::Host { key_id, agents } => Ok(Self { id: key_id, agents }),
            Caller::Admin => Err(ApiError::new(
                ErrorCode::Forbidden,
                "memory tools are called with a host key (create one with POST /v1/admin/host-keys)",
            )),
        }
    }
}

impl HostKey {
    /// The key's id (idempotency keys belong to it).
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The principal the request asserts, if this key may assert it.
    pub(crate) fn principal(&self, dto: &PrincipalDto) -> Result<Principal, ApiError> {
        let principal = principal_of(dto)?;
        if !self.agents.is_empty() && !self.agents.contains(&principal.agent_id) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                format!("this key may not act as agent {}", principal.agent_id),
            ));
        }
        Ok(principal)
    }
}

/// The principal a body asserts, checked field by field (what a key may assert is the
/// caller's check).
pub(crate) fn principal_of(dto: &PrincipalDto) -> Result<Principal, ApiError> {
    let agent = AgentId::new(dto.agent_id.clone())
        .map_err(|e| ApiError::validation("principal.agent_id", e.to_string()))?;
    Ok(Principal {
        agent_id: agent,
        user_id: UserId::new(dto.user_id.clone())
            .map_err(|e| ApiError::validation("principal.user_id", e.to_string()))?,
        project_id: dto
            .project_id
            .clone()
            .map(ProjectId::new)
            .transpose()
            .map_err(|e| ApiError::validation("principal.project_id", e.to_string()))?,
        session_id: dto
            .session_id
            .clone()
            .map(SessionId::new)
            .transpose()
            .map_err(|e| ApiError::validation("principal.session_id", e.to_string()))?,
    })
}
