//! The bundle registry: a bundle is (gap policy, admission policy, model), and it may
//! regenerate only with a recorded, passing fitness result for exactly its definition.

use retold_policy::AdmissionPolicy;
use sha2::{Digest, Sha256};

/// Which planner a bundle uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GapPolicy {
    /// The offline heuristic planner.
    Heuristic,
    /// The hosted planner (`gaps_v1`) through this model.
    Hosted { model: String },
}

/// A fitness result `cargo xtask eval orchestrator` recorded for a bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitness {
    pub dataset: String,
    /// `retrieval` (offline) or `answer` (through the hosted model).
    pub level: String,
    pub date: String,
    pub revision: String,
    /// [`Bundle::fingerprint`] of the definition measured; a changed bundle is unmeasured.
    pub fingerprint: String,
    /// Share of decisions whose admitted records held evidence the turn needed.
    pub helpful_rate: f64,
    /// Share of decisions that admitted records, none of them evidence.
    pub harmful_rate: f64,
    /// Share of the needed evidence records admitted.
    pub evidence_recall: f64,
    /// Whether the bundle helps more often than it harms (`helpful_rate > harmful_rate`).
    pub passed: bool,
}

/// One bundle of the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    pub id: String,
    pub gap_policy: GapPolicy,
    pub admission: AdmissionPolicy,
    /// The model that regenerates; `None`: this bundle never regenerates.
    pub model: Option<String>,
    pub fitness: Vec<Fitness>,
}

impl Bundle {
    /// SHA-256 of everything that decides what the bundle does, hex: its planner, admission
    /// and model, the decision's bounds (`config`), and the prompt texts.
    pub fn fingerprint(&self, config: &super::OrchestratorConfig) -> String {
        let planner = match &self.gap_policy {
            GapPolicy::Heuristic => "heuristic".to_owned(),
            GapPolicy::Hosted { model } => format!("hosted:{model}"),
        };
        let a = &self.admission;
        let text = format!(
            "planner={planner};score_floor={};lexical_terms={};stated_floor={};max_admitted={};model={}",
            a.score_floor,
            a.lexical_terms,
            a.stated_floor,
            a.max_admitted,
            self.model.as_deref().unwrap_or("")
        );
        let text = format!(
            "{text};max_gaps={};results_per_gap={};gaps_prompt={};regenerate_prompt={}",
            config.max_gaps,
            config.results_per_gap,
            super::gaps::GAPS_V1,
            super::REGENERATE_V1
        );
        format!("{:x}", Sha256::digest(text.as_bytes()))
    }

    /// The passing fitness result recorded for this exact definition, if any: passed, and
    /// helping more often than harming.
    pub fn fit(&self, config: &super::OrchestratorConfig) -> Option<&Fitness> {
        let fingerprint = self.fingerprint(config);
        self.fitness
            .iter()
            .find(|f| f.passed && f.helpful_rate > f.harmful_rate && f.fingerprint == fingerprint)
    }
}
