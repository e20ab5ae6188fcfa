//! The write path's settings, as plain values.

use retold_domain::chrono::TimeDelta;

/// Thresholds of the write path (`ingestion.*` in the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct IngestConfig {
    /// Evidence must entail the content at or above this score.
    pub entail_floor: f64,
    /// Most distinct attributes scanned per entity for attribute aliasing.
    pub max_entity_attributes: usize,
    /// Agent inferences (and lower-rank conflicts) expire after this.
    pub provisional_ttl: TimeDelta,
    /// Reinforcements that confirm a provisional record.
    pub reinforcements_to_confirm: u32,
    /// Cosine at or above which a candidate means the same as the current record.
    pub same_meaning_floor: f64,
    /// Two attribute names are candidates for aliasing at or above this name similarity …
    pub attribute_name_floor: f64,
    /// … and only when the two records' contents are at least this similar.
    pub attribute_content_floor: f64,
    /// How much one reinforcement raises confidence (capped at 0.99).
    pub reinforcement_step: f64,
    /// Most sentence vectors a record gets (its first sentences, one of those repeated with
    /// other numbers only; `embedding.sentence_vectors`); 0 gives none.
    pub sentence_vectors: usize,
}

impl Default for IngestConfig {
    /// The shipped defaults (see `config/default.yaml` and `docs/calibration.md`).
    fn default() -> Self {
        Self {
            entail_floor: 0.35,
            max_entity_attributes: 64,
            provisional_ttl: TimeDelta::days(30),
            reinforcements_to_confirm: 2,
            same_meaning_floor: 0.90,
            attribute_name_floor: 0.45,
            attribute_content_floor: 0.60,
            reinforcement_step: 0.05,
            sentence_vectors: 16,
        }
    }
}
