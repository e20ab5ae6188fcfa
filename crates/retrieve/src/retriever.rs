//! The retriever: the ports it reads through and its two entry points, `search` (the
//! pipeline in `pipeline`) and `get` (`get`).

use std::sync::Arc;

use retold_domain::{
    Clock, EligibilityIndex, Embedder, EntityReader, GrantStore, IdGenerator, LexicalIndex, Principal,
    RecordGraph, RecordReader, Reranker, Result, SearchLogStore, VectorIndex, WordStemmer,
};
use retold_policy::{ScopeAccess, resolve_scopes};

use crate::config::RetrieveConfig;
use crate::rewrite::QueryRewriter;

/// The ports the retriever reads through, each sized by what search and get use.
#[derive(Clone)]
#[allow(missing_debug_implementations)]
pub struct RetrievePorts {
    pub eligibility: Arc<dyn EligibilityIndex>,
    pub records: Arc<dyn RecordReader>,
    pub graph: Arc<dyn RecordGraph>,
    pub entities: Arc<dyn EntityReader>,
    pub grants: Arc<dyn GrantStore>,
    pub lexical: Arc<dyn LexicalIndex>,
    /// Folds a query word's inflections as `lexical_stemming` allows.
    pub stemmer: Arc<dyn WordStemmer>,
    pub index: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    pub search_log: Arc<dyn SearchLogStore>,
    pub rewriter: Arc<dyn QueryRewriter>,
    pub reranker: Option<Arc<dyn Reranker>>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
}

/// The search pipeline and `memory_get`.
#[derive(Clone)]
pub struct Retriever {
    pub(crate) ports: RetrievePorts,
    pub(crate) config: RetrieveConfig,
}

impl std::fmt::Debug for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retriever").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Retriever {
    /// A retriever over `ports` with `config`.
    pub fn new(ports: RetrievePorts, config: RetrieveConfig) -> Self {
        Self { ports, config }
    }

    /// The principal's readable and writable scopes.
    pub async fn access(&self, principal: &Principal) -> Result<ScopeAccess> {
        Ok(resolve_scopes(principal, &self.ports.grants.grants_for(&principal.agent_id).await?))
    }

    /// The served vectors of records a search returned (`None` for one the index does not
    /// hold), so a caller compares them without embedding the records again.
    pub async fn stored_vectors(&self, ids: &[retold_domain::RecordId]) -> Result<Vec<Option<Vec<f32>>>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let key = self.ports.records.key_of(id).await?;
            out.push(key.and_then(|k| self.ports.index.vector(k)));
        }
        Ok(out)
    }
}
