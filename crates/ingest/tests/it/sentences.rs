//! Sentence vectors follow a write's answer, gathered: the writes that come while the sentence
//! worker gathers get theirs in one change, so a writer waits for the write turn behind one
//! change a gathering rather than one a record.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use retold_domain::{
    Background, BackgroundTask, Content, EmbeddingModelInfo, MemoryType, ReembedItem, Result, Scope,
    SentenceRow, SentenceVectors, SourceKind,
};
use retold_ingest::{WriteOutcome, WriteRequest};
use tokio::sync::Semaphore;

use crate::{claim, principal, world};

/// The world's background tasks, except that a gathering lasts until the test lets one end.
struct HeldGathering {
    inner: Arc<dyn Background>,
    gate: Arc<Semaphore>,
}

impl Background for HeldGathering {
    fn spawn(&self, task: BackgroundTask) {
        self.inner.spawn(task);
    }
    fn settled(&self) -> BackgroundTask {
        self.inner.settled()
    }
    fn gather(&self, _: std::time::Duration) -> BackgroundTask {
        let gate = self.gate.clone();
        Box::pin(async move { gate.acquire().await.expect("the gate stays open").forget() })
    }
}

/// The store's sentence port, counting the rows of each call.
struct Counted {
    inner: Arc<dyn SentenceVectors>,
    calls: Arc<Mutex<Vec<usize>>>,
}

#[async_trait]
impl SentenceVectors for Counted {
    async fn attach_sentences(&self, model: &EmbeddingModelInfo, rows: &[SentenceRow]) -> Result<Vec<bool>> {
        self.calls.lock().unwrap().push(rows.len());
        self.inner.attach_sentences(model, rows).await
    }
    async fn pending_sentences(&self, model: &EmbeddingModelInfo, limit: usize) -> Result<Vec<ReembedItem>> {
        self.inner.pending_sentences(model, limit).await
    }
}

/// A note of two sentences, so it gets sentence vectors.
fn note(n: usize) -> WriteRequest {
    let mut request = claim("A placeholder.", "unused", SourceKind::System);
    request.memory_type = MemoryType::Episodic;
    request.subject = None;
    request.attribute = None;
    request.scope = Scope::parse("user:aditya").unwrap();
    request.content = Content::new(format!(
        "Build {n} of the billing service failed its smoke tests. The rollback to build {} finished without errors.",
        n + 100
    ))
    .unwrap();
    request
}

#[tokio::test]
async fn writes_that_come_while_the_worker_gathers_get_their_sentences_in_one_change() {
    let w = world().await;
    w.grant("research-agent", "user:aditya", true, true).await;
    let gate = Arc::new(Semaphore::new(0));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (inner, sentences) = (w.ports.background.clone(), w.ports.sentences.clone());
    let w = w.with_ports(|ports| {
        ports.background = Arc::new(HeldGathering { inner, gate: gate.clone() });
        ports.sentences = Arc::new(Counted { inner: sentences, calls: calls.clone() });
    });
    let p = principal("research-agent", "aditya");
    let info = w.ports.embedder.info().clone();
    for n in 0..3 {
        let outcome = w.ingestor.write(&p, &note(n)).await.unwrap();
        assert!(matches!(outcome, WriteOutcome::Created { .. }), "{outcome:?}");
    }
    // Answered, and waiting for their sentences while the worker gathers.
    assert_eq!(w.store.pending_sentences(&info, 10).await.unwrap().len(), 3);
    assert!(calls.lock().unwrap().is_empty(), "nothing attached while the worker gathers");

    gate.add_permits(1);
    w.ingestor.settled().await;
    assert_eq!(*calls.lock().unwrap(), [3], "the three records in one call, after one gathering");
    assert!(w.store.pending_sentences(&info, 10).await.unwrap().is_empty());

    // The worker stopped with nothing queued; the next write starts another.
    w.ingestor.write(&p, &note(3)).await.unwrap();
    gate.add_permits(1);
    w.ingestor.settled().await;
    assert_eq!(*calls.lock().unwrap(), [3, 1]);
    assert!(w.store.pending_sentences(&info, 10).await.unwrap().is_empty());
}
