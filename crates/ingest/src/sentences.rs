//! Sentence vectors after the answer: a write commits its record, its lexical row and its own
//! vector, answers, and its sentence vectors follow in a task of their own (the sentence run
//! was half of a conversation turn's write). The record is searchable from the answer on,
//! by its own vector and its words; its best sentence counts once they are attached.

use retold_domain::{RecordId, RecordKey, Result};

use crate::ingestor::Ingestor;

/// A committed record whose sentence vectors are to be attached.
#[derive(Debug, Clone)]
pub(crate) struct SentenceJob {
    pub(crate) key: RecordKey,
    pub(crate) id: RecordId,
    pub(crate) texts: Vec<String>,
}

impl Ingestor {
    /// Attach the sentence vectors of committed records in a task of its own (nothing to do
    /// for records without sentence texts). A failure is logged; the store keeps the record
    /// marked, and [`Ingestor::resume_pending_sentences`] attaches them later.
    pub(crate) fn attach_later(&self, jobs: Vec<SentenceJob>) {
        let jobs: Vec<SentenceJob> = jobs.into_iter().filter(|j| !j.texts.is_empty()).collect();
        if jobs.is_empty() {
            return;
        }
        let this = self.clone();
        self.ports.background.spawn(Box::pin(async move {
            if let Err(error) = this.attach(&jobs).await {
                let ids: Vec<String> = jobs.iter().map(|j| j.id.to_string()).collect();
                tracing::warn!(%error, records = ?ids, "sentence vectors not attached yet; the next start attaches them");
            }
        }));
    }

    /// Embed the jobs' sentences in one call and attach them: in the store (only to a row of
    /// the served model that still waits for them), then in the index (only to a live row).
    pub(crate) async fn attach(&self, jobs: &[SentenceJob]) -> Result<usize> {
        let texts: Vec<String> = jobs.iter().flat_map(|j| j.texts.iter().cloned()).collect();
        let vectors = if texts.is_empty() { Vec::new() } else { self.embed(texts).await? };
        let mut vectors = vectors.into_iter();
        let info = self.ports.embedder.info().clone();
        let mut attached = 0;
        for job in jobs {
            let mine: Vec<Vec<f32>> = vectors.by_ref().take(job.texts.len()).collect();
            for vector in &mine {
                self.ports.index.check(vector)?;
            }
            let sentences = mine.concat();
            if self.ports.sentences.attach_sentences(&job.id, &info, &sentences).await? {
                // Committed: the index follows, unless the record was forgotten meanwhile.
                self.ports.index.attach_sentences(job.key, &sentences)?;
                attached += 1;
            }
        }
        Ok(attached)
    }

    /// Wait until every sentence task started so far has attached its vectors (or failed):
    /// what a search made now sees is what every earlier write fully indexed. Evaluations,
    /// tests and shutdown wait; the service's own searches do not.
    pub async fn settled(&self) {
        self.ports.background.settled().await;
    }

    /// Attach the sentence vectors a stopped process left waiting, in batches: the records
    /// whose embedding row of the served model is marked. Returns how many were attached.
    pub async fn resume_pending_sentences(&self) -> Result<usize> {
        const BATCH: usize = 64;
        let info = self.ports.embedder.info().clone();
        let mut attached = 0;
        loop {
            let items = self.ports.sentences.pending_sentences(&info, BATCH).await?;
            if items.is_empty() {
                return Ok(attached);
            }
            let jobs: Vec<SentenceJob> = items
                .iter()
                .map(|item| SentenceJob {
                    key: item.key,
                    id: item.id.clone(),
                    texts: item.indexed().sentence_texts(self.config.sentence_vectors),
                })
                .collect();
            let done = self.attach(&jobs).await?;
            if done == 0 {
                // Nothing could be attached (each marked row changed meanwhile): stop rather
                // than read the same rows again.
                return Ok(attached);
            }
            attached += done;
        }
    }
}
