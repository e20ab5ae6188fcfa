//! Extractor and reviewer doubles for tests: fixed answers, no model.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use retold_domain::Result;

use super::{Candidate, Extraction, Extractor, Review, Reviewer, Transcript, Verdict};

/// Proposes the same extraction for every session and counts its calls.
#[derive(Debug, Default)]
pub struct FakeExtractor {
    extraction: Extraction,
    calls: AtomicUsize,
}

impl FakeExtractor {
    /// An extractor that always proposes `extraction`.
    pub fn new(extraction: Extraction) -> Self {
        Self { extraction, calls: AtomicUsize::new(0) }
    }

    /// How many transcripts it was asked about.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Extractor for FakeExtractor {
    fn prompt_version(&self) -> &str {
        "fake_extract"
    }

    fn model(&self) -> &str {
        "fake"
    }

    async fn extract(&self, _transcript: &Transcript) -> Result<Extraction> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.extraction.clone())
    }
}

/// Answers from a table of verdicts keyed by position among the candidates it is asked about
/// (the valid ones, in proposal order); candidates not in the table are accepted. Remembers the
/// candidates it saw.
#[derive(Debug, Default)]
pub struct TableReviewer {
    table: BTreeMap<usize, Verdict>,
    seen: Mutex<Vec<Candidate>>,
}

impl TableReviewer {
    /// A reviewer answering `table`.
    pub fn new(table: impl IntoIterator<Item = (usize, Verdict)>) -> Self {
        Self { table: table.into_iter().collect(), seen: Mutex::new(Vec::new()) }
    }

    /// Every candidate it was asked about.
    pub fn seen(&self) -> Vec<Candidate> {
        self.seen.lock().expect("not poisoned").clone()
    }
}

#[async_trait]
impl Reviewer for TableReviewer {
    fn prompt_version(&self) -> &str {
        "table_review"
    }

    fn model(&self) -> &str {
        "table"
    }

    async fn review(&self, _transcript: &Transcript, candidates: &[Candidate]) -> Result<Review> {
        self.seen.lock().expect("not poisoned").extend(candidates.iter().cloned());
        let verdicts =
            (0..candidates.len()).map(|i| self.table.get(&i).cloned().unwrap_or(Verdict::Accept)).collect();
        Ok(Review { verdicts, usage: Default::default() })
    }
}
