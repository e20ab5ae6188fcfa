//! Evidence rules (seed section 6): verbatim in the cited turn, and entailing the content at
//! or above the floor. A failure downgrades the claim; it never silently passes.

/// Whether `evidence` appears verbatim in `turn`. Whitespace runs are compared as one space
/// so line wrapping in a transcript does not matter; everything else must match exactly.
pub fn evidence_appears_verbatim(evidence: &str, turn: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let evidence = squash(evidence);
    !evidence.is_empty() && squash(turn).contains(&evidence)
}

/// The outcome of the evidence checks for one claim.
#[derive(Debug, Clone, PartialEq)]
pub enum EvidenceVerdict {
    /// Both checks passed.
    Supported { entail_score: f64 },
    /// A check failed: the claim is stored as agent_inference, with the reason and score.
    Downgraded { reason: String, entail_score: Option<f64> },
}

/// Combine the verbatim check and the entailment score against the floor.
pub fn judge_evidence(verbatim: bool, entail_score: Option<f64>, floor: f64) -> EvidenceVerdict {
    match (verbatim, entail_score) {
        (false, score) => EvidenceVerdict::Downgraded {
            reason: "evidence does not appear verbatim in the cited turn".into(),
            entail_score: score,
        },
        (true, None) => {
            EvidenceVerdict::Downgraded { reason: "entailment was not scored".into(), entail_score: None }
        }
        (true, Some(score)) if score >= floor => EvidenceVerdict::Supported { entail_score: score },
        (true, Some(score)) => EvidenceVerdict::Downgraded {
            reason: format!("evidence entails the content with score {score:.3}, below the floor {floor:.3}"),
            entail_score: Some(score),
        },
    }
}
