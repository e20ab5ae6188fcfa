//! Every drop in a trace is real: a fused record the store no longer returns is dropped at
//! `fetch` with its reason, and nothing a trace calls dropped is among the results.

use std::sync::Arc;

use async_trait::async_trait;
use retold_domain::{MemoryRecord, RecordId, RecordKey, RecordReader, Result};
use retold_retrieve::{RetrieveConfig, SearchRequest};
use retold_store_sqlite::SqliteStore;

use crate::{ids, principal, request, world};

/// The store's reader, except that `get_many` no longer returns one record (removed between
/// eligibility and fetch).
struct Losing {
    inner: SqliteStore,
    lost: RecordId,
}

#[async_trait]
impl RecordReader for Losing {
    async fn get(&self, id: &RecordId) -> Result<Option<MemoryRecord>> {
        self.inner.get(id).await
    }
    async fn get_many(&self, ids: &[RecordId]) -> Result<Vec<MemoryRecord>> {
        let mut found = self.inner.get_many(ids).await?;
        found.retain(|r| r.id != self.lost);
        Ok(found)
    }
    async fn key_of(&self, id: &RecordId) -> Result<Option<RecordKey>> {
        self.inner.key_of(id).await
    }
}

#[tokio::test]
async fn a_record_the_store_no_longer_returns_is_dropped_at_fetch_and_nothing_dropped_is_returned() {
    let w = world(RetrieveConfig::default()).await;
    w.grant("trace-agent", "project:trace", true, true).await;
    let p = principal("trace-agent", "u");
    let kept =
        w.write(&p, request("project:trace", "The deploy script runs the staging server first.")).await;
    let lost =
        w.write(&p, request("project:trace", "The deploy script restarts the production server.")).await;
    let store = w.store.clone();
    let gone = lost.clone();
    let w = w.with_retrieve_ports(|ports| ports.records = Arc::new(Losing { inner: store, lost: gone }));

    let response = w.search(&p, SearchRequest::new("deploy script server")).await;
    assert_eq!(ids(&response), [kept], "the lost record is not returned");
    let trace = w.trace(&response.search_id).await;
    let drops = trace["drops"].as_array().unwrap();
    let fetch: Vec<_> = drops.iter().filter(|d| d["stage"] == "fetch").collect();
    assert_eq!(fetch.len(), 1, "{drops:?}");
    assert_eq!(fetch[0]["record_id"], lost.as_str());
    assert_eq!(fetch[0]["reason"], "the store no longer has this record");
    let returned: Vec<&str> =
        trace["results"].as_array().unwrap().iter().map(|r| r["record_id"].as_str().unwrap()).collect();
    assert!(
        drops.iter().all(|d| !returned.contains(&d["record_id"].as_str().unwrap())),
        "{drops:?} vs {returned:?}"
    );
}
