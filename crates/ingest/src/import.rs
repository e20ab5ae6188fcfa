//! Bulk import: many write requests in one call, each through the write path exactly as
//! `memory_write` takes it (scopes, evidence, entities, current-fact decisions, audit), their
//! texts embedded in one model run per batch, each written at most once per import key: a
//! re-sent batch (a retried or resumed import) writes nothing twice.

use retold_domain::{DomainError, Principal, Result, SessionId, WriteKey};
use sha2::{Digest, Sha256};

use crate::ingestor::Ingestor;
use crate::request::{KeyedWrite, WriteRequest};
use crate::sentences::SentenceJob;

/// The receipts namespace of imported items (beside extraction's, keyed by session).
const IMPORTS: &str = "sess_import";

/// One item of an import batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportItem {
    pub principal: Principal,
    pub request: WriteRequest,
    /// Written at most once (`import_key`).
    pub key: WriteKey,
}

/// The key an item is imported under: its principal (agent, user, project), the scope it is
/// written to, and `id`, the item's identity where it came from (a Mem0 memory id, a row id,
/// or the line's own text). The same item imported into another scope is another item.
pub fn import_key(principal: &Principal, scope: &retold_domain::Scope, id: &str) -> WriteKey {
    let mut hash = Sha256::new();
    let project = principal.project_id.as_ref().map_or("", |p| p.as_str());
    let scope = scope.to_string();
    for part in [principal.agent_id.as_str(), principal.user_id.as_str(), project, scope.as_str(), id] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    WriteKey {
        session: SessionId::new(IMPORTS).expect("a valid session id"),
        digest: hash.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// Whether an error is the item's own (it is answered for that item and the batch goes on) or
/// the store's or the embedder's (the batch stops: what committed before stays, and a re-sent
/// batch resumes after it).
fn the_items_own(error: &DomainError) -> bool {
    matches!(
        error,
        DomainError::Invalid { .. }
            | DomainError::NotFound { .. }
            | DomainError::ScopeNotWritable { .. }
            | DomainError::EntityAmbiguous { .. }
            | DomainError::Conflict(_)
            | DomainError::Contention(_)
    )
}

impl Ingestor {
    /// Import `items` in order, each through the write path; one answer per item. Items found
    /// already imported (their receipt) are answered `Earlier` and cost nothing; the others'
    /// texts are embedded in one run, then written one by one (a later item sees an earlier
    /// one, as sequential `memory_write`s would), and their sentence vectors attached before
    /// the call returns. An error of the store or the embedder fails the call; the items
    /// written before it stay written.
    pub async fn import(&self, items: &[ImportItem]) -> Result<Vec<Result<KeyedWrite>>> {
        let mut answers: Vec<Option<Result<KeyedWrite>>> = items.iter().map(|_| None).collect();
        let mut pending = Vec::new();
        for (at, item) in items.iter().enumerate() {
            match self.ports.receipts.receipt(&item.key).await? {
                Some(receipt) => answers[at] = Some(Ok(KeyedWrite::Earlier(receipt))),
                None => pending.push(at),
            }
        }
        let texts: Vec<String> =
            pending.iter().map(|&at| items[at].request.embedded_texts(0).swap_remove(0)).collect();
        let vectors = if texts.is_empty() { Vec::new() } else { self.embed(texts).await? };
        let mut jobs: Vec<SentenceJob> = Vec::new();
        let mut stopped = None;
        for (&at, vector) in pending.iter().zip(&vectors) {
            let ImportItem { principal, request, key } = &items[at];
            let written = self
                .retrying(|| async {
                    // An earlier item of this batch with the same key, or a concurrent import.
                    if let Some(receipt) = self.ports.receipts.receipt(key).await? {
                        return Ok((KeyedWrite::Earlier(receipt), Vec::new()));
                    }
                    let written = self.write_once(principal, request, None, Some(key), Some(vector)).await?;
                    Ok((KeyedWrite::Written(written.outcome), written.sentences))
                })
                .await;
            answers[at] = Some(match written {
                Ok((answer, sentences)) => {
                    jobs.extend(sentences);
                    Ok(answer)
                }
                Err(error) if the_items_own(&error) => Err(error),
                Err(error) => {
                    stopped = Some(error);
                    break;
                }
            });
        }
        // Sentence vectors of what committed, a model run and a change per 32 records; a
        // failure leaves them marked for the next start, as after a single write.
        let jobs: Vec<SentenceJob> = jobs.into_iter().filter(|j| !j.texts.is_empty()).collect();
        if !jobs.is_empty()
            && let Err(error) = self.attach(&jobs).await
        {
            tracing::warn!(%error, records = jobs.len(), "imported records' sentence vectors not attached yet; the next start attaches them");
        }
        if let Some(error) = stopped {
            return Err(error);
        }
        Ok(answers.into_iter().map(|a| a.expect("every item answered")).collect())
    }
}
