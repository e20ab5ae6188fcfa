//! The bundle registry file (`orchestrator.registry`, default the shipped
//! `config/bundles.json`): bundles and the fitness results `cargo xtask eval orchestrator
//! --record` wrote for them.

use std::path::Path;

use retold_app::orchestrator::{Bundle, Fitness, GapPolicy};
use retold_policy::AdmissionPolicy;
use serde::{Deserialize, Serialize};

use crate::settings::Settings;

/// The shipped registry.
pub const DEFAULT_REGISTRY: &str = include_str!("../../../config/bundles.json");

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryFile {
    pub bundles: Vec<BundleFile>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BundleFile {
    pub id: String,
    /// `heuristic` or `hosted`.
    pub gap_policy: String,
    /// The hosted planner's model (`hosted` only).
    pub planner_model: Option<String>,
    pub admission: AdmissionFile,
    /// The regeneration model; `null`: never regenerates.
    pub model: Option<String>,
    #[serde(default)]
    pub fitness: Vec<FitnessFile>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionFile {
    pub score_floor: f32,
    pub lexical_terms: usize,
    /// `null` = the embedding model's calibrated `same_meaning_floor`.
    pub stated_floor: Option<f32>,
    pub max_admitted: usize,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FitnessFile {
    pub dataset: String,
    pub level: String,
    pub date: String,
    pub revision: String,
    pub fingerprint: String,
    pub helpful_rate: f64,
    pub harmful_rate: f64,
    pub evidence_recall: f64,
    pub passed: bool,
}

impl From<&FitnessFile> for Fitness {
    fn from(f: &FitnessFile) -> Self {
        Self {
            dataset: f.dataset.clone(),
            level: f.level.clone(),
            date: f.date.clone(),
            revision: f.revision.clone(),
            fingerprint: f.fingerprint.clone(),
            helpful_rate: f.helpful_rate,
            harmful_rate: f.harmful_rate,
            evidence_recall: f.evidence_recall,
            passed: f.passed,
        }
    }
}

impl From<&Fitness> for FitnessFile {
    fn from(f: &Fitness) -> Self {
        Self {
            dataset: f.dataset.clone(),
            level: f.level.clone(),
            date: f.date.clone(),
            revision: f.revision.clone(),
            fingerprint: f.fingerprint.clone(),
            helpful_rate: f.helpful_rate,
            harmful_rate: f.harmful_rate,
            evidence_recall: f.evidence_recall,
            passed: f.passed,
        }
    }
}

/// The registry's text: the configured file, or the shipped one.
fn registry_text(settings: &Settings) -> Result<String, String> {
    let path = settings.orchestrator.registry.trim();
    if path.is_empty() {
        return Ok(DEFAULT_REGISTRY.to_owned());
    }
    std::fs::read_to_string(path).map_err(|e| format!("orchestrator.registry {path}: {e}"))
}

/// Parse a registry.
pub fn parse(text: &str) -> Result<RegistryFile, String> {
    serde_json::from_str(text).map_err(|e| format!("the bundle registry: {e}"))
}

impl BundleFile {
    /// The bundle as the orchestrator takes it; `same_meaning_floor` fills a `null`
    /// `stated_floor`.
    pub fn bundle(&self, same_meaning_floor: f32) -> Result<Bundle, String> {
        let gap_policy = match (self.gap_policy.as_str(), &self.planner_model) {
            ("heuristic", _) => GapPolicy::Heuristic,
            ("hosted", Some(model)) if !model.trim().is_empty() => GapPolicy::Hosted { model: model.clone() },
            ("hosted", _) => {
                return Err(format!("bundle {}: a hosted gap policy needs planner_model", self.id));
            }
            (other, _) => {
                return Err(format!("bundle {}: gap_policy {other:?} is not heuristic or hosted", self.id));
            }
        };
        let a = &self.admission;
        let stated_floor = a.stated_floor.unwrap_or(same_meaning_floor);
        let valid = |x: f32| (-1.0..=1.0).contains(&x);
        if !valid(a.score_floor) || !valid(stated_floor) || a.max_admitted == 0 || a.max_admitted > 50 {
            return Err(format!(
                "bundle {}: admission needs score_floor and stated_floor in [-1, 1] and max_admitted 1 to 50",
                self.id
            ));
        }
        Ok(Bundle {
            id: self.id.clone(),
            gap_policy,
            admission: AdmissionPolicy {
                score_floor: a.score_floor,
                lexical_terms: a.lexical_terms,
                stated_floor,
                max_admitted: a.max_admitted,
            },
            model: self.model.clone().filter(|m| !m.trim().is_empty()),
            fitness: self.fitness.iter().map(Fitness::from).collect(),
        })
    }
}

/// Every bundle of the configured registry.
pub fn bundles(settings: &Settings) -> Result<Vec<Bundle>, String> {
    let floor = settings.thresholds()?.same_meaning_floor as f32;
    let registry = parse(&registry_text(settings)?)?;
    let mut ids: Vec<&str> = registry.bundles.iter().map(|b| b.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("the bundle registry names bundle {} twice", w[0]));
    }
    registry.bundles.iter().map(|b| b.bundle(floor)).collect()
}

/// The bundle `orchestrator.bundle` names.
pub fn configured(settings: &Settings) -> Result<Bundle, String> {
    let id = &settings.orchestrator.bundle;
    bundles(settings)?
        .into_iter()
        .find(|b| &b.id == id)
        .ok_or_else(|| format!("orchestrator.bundle {id:?} is not in the bundle registry"))
}

/// Record `fitness` for bundle `id` in the registry file at `path`: it replaces an earlier
/// result of the same dataset and level. Written beside the file, checked, then moved over it.
pub fn record_fitness(path: &Path, id: &str, fitness: &Fitness) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut registry = parse(&text)?;
    let bundle = registry
        .bundles
        .iter_mut()
        .find(|b| b.id == id)
        .ok_or_else(|| format!("{} has no bundle {id:?}", path.display()))?;
    bundle.fitness.retain(|f| !(f.dataset == fitness.dataset && f.level == fitness.level));
    bundle.fitness.push(FitnessFile::from(fitness));
    let mut out = serde_json::to_string_pretty(&registry).map_err(|e| e.to_string())?;
    out.push('\n');
    parse(&out)?;
    let next = path.with_extension("json.next");
    std::fs::write(&next, out).map_err(|e| format!("{}: {e}", next.display()))?;
    std::fs::rename(&next, path).map_err(|e| format!("{}: {e}", path.display()))
}
