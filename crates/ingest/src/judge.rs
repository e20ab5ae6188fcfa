//! The offline entailment judge: cosine similarity of evidence and claim embeddings.
//!
//! Calibrated on hand-labelled pairs (`docs/calibration.md`): entailed pairs scored 0.39–0.87,
//! unrelated pairs 0.02–0.26, but contradictions about a detail (Berlin vs Paris) scored about
//! 0.5, because similarity cannot see negation or substitution. The floor therefore only
//! catches evidence that is off-topic for the claim; a hosted-LLM judge can take the same port
//! for contradiction-aware scoring.

use std::sync::Arc;

use async_trait::async_trait;
use retold_domain::{Embedder, Entailment, EntailmentJudge, Result};

/// Scores `evidence ⇒ claim` as the cosine of their embeddings, clamped to [0, 1].
#[derive(Clone)]
pub struct EmbeddingEntailmentJudge {
    embedder: Arc<dyn Embedder>,
}

impl std::fmt::Debug for EmbeddingEntailmentJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingEntailmentJudge").field("model", &self.embedder.info().name).finish()
    }
}

impl EmbeddingEntailmentJudge {
    /// A judge over `embedder`.
    pub fn new(embedder: Arc<dyn Embedder>) -> Self {
        Self { embedder }
    }
}

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}

#[async_trait]
impl EntailmentJudge for EmbeddingEntailmentJudge {
    async fn entails(&self, evidence: &str, claim: &str) -> Result<Entailment> {
        let vectors = self.embedder.embed(&[evidence.to_owned(), claim.to_owned()]).await?;
        Ok(Entailment {
            score: cosine(&vectors[0], &vectors[1]).clamp(0.0, 1.0),
            judge: format!("embedding-cosine:{}", self.embedder.info().name),
        })
    }
}
