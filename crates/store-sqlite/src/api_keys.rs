//! API keys (an edge concern, so inherent methods rather than a domain port): stored as
//! SHA-256 hex, never in plain text.

use retold_domain::Timestamp;
use sea_orm::ConnectionTrait;

use crate::convert::millis;
use crate::error::StoreError;
use crate::store::{SqliteStore, stmt};

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    pub id: String,
    pub name: String,
    /// `admin` or `host`.
    pub role: String,
    /// Agent ids a host key may assert; empty means any.
    pub agents: Vec<String>,
}

impl SqliteStore {
    /// Store a key by its SHA-256 hex.
    pub async fn put_api_key(
        &self,
        key: &ApiKeyRecord,
        sha256: &str,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let txn = self.begin_write().await?;
        txn.execute_raw(stmt(
            "INSERT INTO api_keys (id, name, sha256, role, agents, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                key.id.as_str().into(),
                key.name.as_str().into(),
                sha256.into(),
                key.role.as_str().into(),
                serde_json::to_string(&key.agents).expect("strings serialise").into(),
                millis(at).into(),
            ],
        ))
        .await?;
        txn.commit().await?;
        Ok(())
    }

    /// The live key with this SHA-256, if any.
    pub async fn api_key_by_hash(&self, sha256: &str) -> Result<Option<ApiKeyRecord>, StoreError> {
        let row = self
            .reader
            .query_one_raw(stmt(
                "SELECT id, name, role, agents FROM api_keys WHERE sha256 = ? AND revoked = 0",
                [sha256.into()],
            ))
            .await?;
        let Some(row) = row else { return Ok(None) };
        let agents: String = row.try_get("", "agents")?;
        Ok(Some(ApiKeyRecord {
            id: row.try_get("", "id")?,
            name: row.try_get("", "name")?,
            role: row.try_get("", "role")?,
            agents: serde_json::from_str(&agents).map_err(|e| crate::error::corrupt("api_keys", e))?,
        }))
    }

    /// Whether any live admin key is stored.
    pub async fn has_admin_key(&self) -> Result<bool, StoreError> {
        Ok(self
            .reader
            .query_one_raw(stmt("SELECT 1 AS one FROM api_keys WHERE role = 'admin' AND revoked = 0", []))
            .await?
            .is_some())
    }
}
