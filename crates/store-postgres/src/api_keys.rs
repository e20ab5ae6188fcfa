//! API keys: stored as SHA-256 hex, never in plain text.

use async_trait::async_trait;
use retold_domain::{AgentId, ApiKeyInfo, ApiKeyStore, KeyRole, Result as DomainResult, Timestamp};
use sea_orm::{ConnectionTrait, TransactionTrait};

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{PostgresStore, stmt};

#[async_trait]
impl ApiKeyStore for PostgresStore {
    /// Store a key by its SHA-256 hex.
    async fn put_api_key(&self, key: &ApiKeyInfo, sha256: &str, at: Timestamp) -> DomainResult<()> {
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        txn.execute_raw(stmt(
            "INSERT INTO api_keys (id, name, sha256, role, agents, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                key.id.as_str().into(),
                key.name.as_str().into(),
                sha256.into(),
                key.role.as_str().into(),
                serde_json::to_string(&key.agents.iter().map(AgentId::as_str).collect::<Vec<_>>())
                    .expect("strings serialise")
                    .into(),
                millis(at).into(),
            ],
        ))
        .await
        .map_err(StoreError::from)?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    /// The live key with this SHA-256, if any.
    async fn api_key_by_hash(&self, sha256: &str) -> DomainResult<Option<ApiKeyInfo>> {
        Ok(self.key_by_hash(sha256).await?)
    }

    async fn has_admin_key(&self) -> DomainResult<bool> {
        Ok(self
            .db
            .query_one_raw(stmt("SELECT 1 AS one FROM api_keys WHERE role = 'admin' AND revoked = 0", []))
            .await
            .map_err(StoreError::from)?
            .is_some())
    }
}

impl PostgresStore {
    async fn key_by_hash(&self, sha256: &str) -> Result<Option<ApiKeyInfo>, StoreError> {
        let row = self
            .db
            .query_one_raw(stmt(
                "SELECT id, name, role, agents FROM api_keys WHERE sha256 = ? AND revoked = 0",
                [sha256.into()],
            ))
            .await?;
        let Some(row) = row else { return Ok(None) };
        let agents: String = row.try_get("", "agents")?;
        let bad = |e| crate::error::corrupt("api_keys", e);
        let agents: Vec<String> = serde_json::from_str(&agents).map_err(bad)?;
        Ok(Some(ApiKeyInfo {
            id: row.try_get("", "id")?,
            name: row.try_get("", "name")?,
            role: KeyRole::parse(&row.try_get::<String>("", "role")?)
                .map_err(|e| crate::error::corrupt("api_keys", e))?,
            agents: agents
                .into_iter()
                .map(AgentId::new)
                .collect::<Result<_, _>>()
                .map_err(|e| crate::error::corrupt("api_keys", e))?,
        }))
    }
}
