//! Grants and API keys (seed: policy service).

use async_trait::async_trait;

use crate::audit::AuditEvent;
use crate::error::Result;
use crate::ids::{AgentId, GrantId};
use crate::principal::{ApiKeyInfo, Grant};
use crate::record::Timestamp;

/// API keys, stored as SHA-256 hex only.
#[async_trait]
pub trait ApiKeyStore: Send + Sync {
    /// Store a key by the SHA-256 hex of its secret.
    async fn put_api_key(&self, key: &ApiKeyInfo, sha256: &str, at: Timestamp) -> Result<()>;
    /// The live key with this SHA-256, if any.
    async fn api_key_by_hash(&self, sha256: &str) -> Result<Option<ApiKeyInfo>>;
    /// Whether any live admin key is stored.
    async fn has_admin_key(&self) -> Result<bool>;
}

/// Grants from the host.
#[async_trait]
pub trait GrantStore: Send + Sync {
    /// Store a grant (policy has already validated it).
    async fn put_grant(&self, grant: Grant, event: AuditEvent) -> Result<()>;
    /// Revoke a grant.
    async fn revoke_grant(&self, id: &GrantId, event: AuditEvent) -> Result<()>;
    /// Every grant held by an agent.
    async fn grants_for(&self, agent: &AgentId) -> Result<Vec<Grant>>;
}
