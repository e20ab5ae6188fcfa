//! Sentence vectors after the answer: a write commits its record, its lexical row and its own
//! vector, answers, and its sentence vectors follow, attached by the sentence worker with those
//! of the writes that came meanwhile (the sentence run was half of a conversation turn's
//! write). The record is searchable from the answer on, by its own vector and its words; its
//! best sentence counts once they are attached.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use retold_domain::{Background, RecordId, RecordKey, Result, SentenceRow};

use crate::ingestor::Ingestor;

/// How long the sentence worker gathers the writes that follow one before it attaches their
/// vectors together: a writer that writes back to back waits for the write turn behind one
/// change a gathering, not one a record. Nothing waits that long while a caller waits in
/// `settled` (the gathering ends at once).
const GATHER: Duration = Duration::from_millis(20);

/// Most records whose sentence vectors one model call embeds and one change attaches, so the
/// write turn is never held for long.
const BATCH: usize = 32;

/// A committed record whose sentence vectors are to be attached.
#[derive(Debug, Clone)]
pub(crate) struct SentenceJob {
    pub(crate) key: RecordKey,
    pub(crate) id: RecordId,
    pub(crate) texts: Vec<String>,
    /// When it was queued, so a gathering ends [`GATHER`] after its oldest job came.
    queued: Instant,
    /// Whether a failed batch put it back once already (it is not put back twice).
    retried: bool,
}

impl SentenceJob {
    pub(crate) fn new(key: RecordKey, id: RecordId, texts: Vec<String>) -> Self {
        Self { key, id, texts, queued: Instant::now(), retried: false }
    }
}

/// The jobs that wait for the sentence worker, and whether one is running (at most one is).
#[derive(Debug, Default)]
pub(crate) struct SentenceQueue(Mutex<Queued>);

#[derive(Debug, Default)]
struct Queued {
    jobs: Vec<SentenceJob>,
    running: bool,
}

impl SentenceQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queued> {
        self.0.lock().expect("the sentence queue is never poisoned")
    }
}

/// The sentence worker's hold on the queue. Its task ending without saying so (a panic, or
/// the runtime dropping it) marks the worker stopped, so the next write starts another; what
/// it left queued waits for that one, and the store keeps every record marked until its
/// vectors are attached.
struct Worker {
    queue: Arc<SentenceQueue>,
    stopped: bool,
}

impl Worker {
    /// The next batch: once the oldest waiting job is [`GATHER`] old (or [`BATCH`] wait), up
    /// to [`BATCH`] of them. `None` when nothing waits: the worker stopped, under the queue's
    /// lock, so a job queued after it starts another.
    async fn next_batch(&mut self, background: &dyn Background) -> Option<Vec<SentenceJob>> {
        let wait = {
            let mut queued = self.queue.lock();
            let Some(oldest) = queued.jobs.first() else {
                queued.running = false;
                self.stopped = true;
                return None;
            };
            match queued.jobs.len() >= BATCH {
                true => Duration::ZERO,
                false => GATHER.saturating_sub(oldest.queued.elapsed()),
            }
        };
        if !wait.is_zero() {
            background.gather(wait).await;
        }
        let mut queued = self.queue.lock();
        let n = queued.jobs.len().min(BATCH);
        Some(queued.jobs.drain(..n).collect())
    }

    /// A failed batch: the jobs not tried twice go back in front, the others are logged (the
    /// store keeps them marked for the next start).
    fn put_back(&self, batch: Vec<SentenceJob>, error: &retold_domain::DomainError) {
        let (again, dropped): (Vec<SentenceJob>, Vec<SentenceJob>) =
            batch.into_iter().partition(|job| !job.retried);
        if !dropped.is_empty() {
            let ids: Vec<String> = dropped.iter().map(|j| j.id.to_string()).collect();
            tracing::warn!(%error, records = ?ids, "sentence vectors not attached yet; the next start attaches them");
        }
        let again = again.into_iter().map(|job| SentenceJob { retried: true, ..job });
        self.queue.lock().jobs.splice(0..0, again);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if !self.stopped {
            self.queue.lock().running = false;
        }
    }
}

impl Ingestor {
    /// Queue the sentence vectors of committed records for the sentence worker (nothing to do
    /// for records without sentence texts), starting it if none runs. It gathers until the
    /// oldest queued job is [`GATHER`] old, then attaches up to [`BATCH`] records' vectors in
    /// one change, until nothing waits. A batch that fails is put back once, in front; a
    /// second failure is logged, the store keeps those records marked, and
    /// [`Ingestor::resume_pending_sentences`] attaches them at the next start.
    pub(crate) fn attach_later(&self, jobs: Vec<SentenceJob>) {
        let jobs: Vec<SentenceJob> = jobs.into_iter().filter(|j| !j.texts.is_empty()).collect();
        if jobs.is_empty() {
            return;
        }
        {
            let mut queued = self.sentence_queue.lock();
            queued.jobs.extend(jobs);
            if queued.running {
                return;
            }
            queued.running = true;
        }
        let this = self.clone();
        let mut worker = Worker { queue: self.sentence_queue.clone(), stopped: false };
        self.ports.background.spawn(Box::pin(async move {
            while let Some(batch) = worker.next_batch(this.ports.background.as_ref()).await {
                if let Err(error) = this.attach(&batch).await {
                    worker.put_back(batch, &error);
                }
            }
        }));
    }

    /// Embed the jobs' sentences and attach them, [`BATCH`] records a model call and a change:
    /// in the store (only to a row of the served model that still waits for them), then in
    /// the index (only to a live row). A record whose vectors the index cannot hold is left
    /// marked and logged, the others attached; an index refusing vectors the store took is
    /// logged (the next start rebuilds it from the store). Returns how many records the
    /// store took them for.
    pub(crate) async fn attach(&self, jobs: &[SentenceJob]) -> Result<usize> {
        let info = self.ports.embedder.info().clone();
        let mut attached = 0;
        for jobs in jobs.chunks(BATCH) {
            let texts: Vec<String> = jobs.iter().flat_map(|j| j.texts.iter().cloned()).collect();
            let vectors = if texts.is_empty() { Vec::new() } else { self.embed(texts).await? };
            let mut vectors = vectors.into_iter();
            let (mut keys, mut rows) = (Vec::with_capacity(jobs.len()), Vec::with_capacity(jobs.len()));
            for job in jobs {
                let mine: Vec<Vec<f32>> = vectors.by_ref().take(job.texts.len()).collect();
                if let Some(error) = mine.iter().find_map(|vector| self.ports.index.check(vector).err()) {
                    tracing::error!(record = %job.id, %error, "the vector index cannot hold these sentence vectors; the record stays marked");
                    continue;
                }
                keys.push(job.key);
                rows.push(SentenceRow { id: job.id.clone(), sentences: mine.concat() });
            }
            if rows.is_empty() {
                continue;
            }
            let stored = self.ports.sentences.attach_sentences(&info, &rows).await?;
            if stored.len() != rows.len() {
                let reason = format!("answered {} flags for {} rows", stored.len(), rows.len());
                return Err(retold_domain::DomainError::backend("sentence vectors", reason));
            }
            for ((key, row), _) in keys.iter().zip(&rows).zip(stored).filter(|(_, stored)| *stored) {
                attached += 1;
                // Committed: the index follows, unless the record was forgotten meanwhile.
                if let Err(error) = self.ports.index.attach_sentences(*key, &row.sentences) {
                    tracing::error!(record = %row.id, %error, "the vector index refused committed sentence vectors; they count from the next start");
                }
            }
        }
        Ok(attached)
    }

    /// Wait until every record queued so far has its sentence vectors attached (or failed):
    /// what a search made now sees is what every earlier write fully indexed. Evaluations,
    /// tests and shutdown wait; the service's own searches do not.
    pub async fn settled(&self) {
        self.ports.background.settled().await;
    }

    /// Attach the sentence vectors a stopped process left waiting, in batches: the records
    /// whose embedding row of the served model is marked. Returns how many were attached.
    pub async fn resume_pending_sentences(&self) -> Result<usize> {
        const PAGE: usize = 64;
        let info = self.ports.embedder.info().clone();
        let mut attached = 0;
        loop {
            let items = self.ports.sentences.pending_sentences(&info, PAGE).await?;
            if items.is_empty() {
                return Ok(attached);
            }
            let jobs: Vec<SentenceJob> = items
                .iter()
                .map(|item| {
                    SentenceJob::new(
                        item.key,
                        item.id.clone(),
                        item.indexed().sentence_texts(self.config.sentence_vectors),
                    )
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
