//! Re-embedding with floor-recalibration refusal (seed section 1, operations): every live
//! record is embedded again with another model, in batches, into staging rows beside the
//! served vectors (the service keeps serving its model); one switch then replaces them all,
//! and is refused unless the thresholds that depend on the model were calibrated for it.
//! A run is resumable by construction: it only embeds records without a staged vector.

use std::sync::Arc;
use std::time::Instant;

use retold_domain::{
    AuditLog, Clock, DomainError, Embedder, EmbeddingModelInfo, EmbeddingRow, EventKind, IdGenerator,
    ReembedCounts, Reembedding, Result,
};

use crate::sessions::app_event;

/// The thresholds that depend on the embedding model, as calibrated for one model
/// (`retold ops calibrate`; recorded in the configuration and `docs/calibration.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub model: EmbeddingModelInfo,
    /// `retrieval.gate.dense_floor`
    pub dense_floor: f64,
    /// `retrieval.duplicate_collapse_floor`
    pub duplicate_collapse_floor: f64,
    /// `ingestion.evidence.entail_floor`
    pub entail_floor: f64,
    /// `ingestion.same_meaning_floor`
    pub same_meaning_floor: f64,
}

/// What a re-embedding run did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReembedOutcome {
    pub target: EmbeddingModelInfo,
    /// Records embedded by this run.
    pub embedded: u64,
    /// Records that already had a staged vector (an earlier, interrupted run).
    pub already_staged: u64,
    /// Staged vectors of another target, dropped first.
    pub discarded: u64,
    /// Where it ended: every live record, and how many have a staged vector.
    pub counts: ReembedCounts,
    pub seconds: f64,
}

/// Re-embedding and the model switch, over the store's staging port.
#[derive(Clone)]
pub struct ReembedService {
    staging: Arc<dyn Reembedding>,
    audit: Arc<dyn AuditLog>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    /// Most sentence vectors a record gets (`embedding.sentence_vectors`), as the write path.
    sentence_vectors: usize,
}

impl std::fmt::Debug for ReembedService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReembedService").finish_non_exhaustive()
    }
}

fn describe(model: &EmbeddingModelInfo) -> String {
    format!("{} v{} ({} dims)", model.name, model.version, model.dims)
}

/// Why a switch to `model` is refused when it has no calibration.
pub fn uncalibrated(model: &EmbeddingModelInfo) -> DomainError {
    DomainError::Conflict(format!(
        "no calibration is recorded for {}: the dense floor, duplicate-collapse floor, entailment floor \
         and same-meaning floor depend on the model; run `retold ops calibrate` with this configuration first",
        describe(model)
    ))
}

impl ReembedService {
    /// `sentence_vectors`: the most sentence vectors a record gets, as the write path gives
    /// them (`embedding.sentence_vectors`).
    pub fn new(
        stores: &crate::Stores,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
        sentence_vectors: usize,
    ) -> Self {
        Self {
            staging: stores.reembedding.clone(),
            audit: stores.audit.clone(),
            clock,
            ids,
            sentence_vectors,
        }
    }

    /// The models the stored vectors come from, and how many live records each covers.
    pub async fn stored_models(&self) -> Result<Vec<(EmbeddingModelInfo, u64)>> {
        self.staging.stored_models().await
    }

    /// How far a re-embedding to `target` has come.
    pub async fn counts(&self, target: &EmbeddingModelInfo) -> Result<ReembedCounts> {
        self.staging.reembed_counts(target).await
    }

    /// Embed every live record without a staged vector of `target`'s model, `batch` records
    /// per model run and per transaction, calling `progress` after each batch. Records
    /// written meanwhile are picked up by the next batch, or by the next run. When the store
    /// already serves that model it is refused unless `refresh`: then every record is
    /// embedded again with it, which gives records written before sentence vectors (or
    /// under a smaller `embedding.sentence_vectors`) theirs. Ends with an `ops.reembed` event.
    pub async fn run(
        &self,
        target: &dyn Embedder,
        (batch, refresh): (usize, bool),
        actor: &str,
        mut progress: impl FnMut(ReembedCounts) + Send,
    ) -> Result<ReembedOutcome> {
        let started = Instant::now();
        let model = target.info().clone();
        let stored = self.staging.stored_models().await?;
        if !refresh && stored.len() == 1 && stored[0].0 == model {
            return Err(DomainError::Conflict(format!(
                "the store already serves {}; `retold ops reembed --refresh` embeds every record again \
                 with it (records written before sentence vectors, or under a smaller \
                 embedding.sentence_vectors, get theirs), then `retold ops switch-model` swaps them in",
                describe(&model)
            )));
        }
        let discarded = self.staging.discard_other_staged(&model).await?;
        let first = self.staging.reembed_counts(&model).await?;
        progress(first);
        let mut embedded = 0u64;
        loop {
            let items = self.staging.unstaged(&model, batch.max(1)).await?;
            if items.is_empty() {
                break;
            }
            // Each record's own text, then its sentences, in one model run per batch.
            let mut texts: Vec<String> = Vec::new();
            let mut counts: Vec<usize> = Vec::with_capacity(items.len());
            for item in &items {
                let embedded = item.indexed().embedded_texts(self.sentence_vectors);
                counts.push(embedded.len() - 1);
                texts.extend(embedded);
            }
            let vectors = target.embed(&texts).await?;
            if vectors.len() != texts.len() {
                return Err(DomainError::backend(
                    "embedder",
                    format!("{} vectors for {} texts", vectors.len(), texts.len()),
                ));
            }
            let mut vectors = vectors.into_iter();
            let rows: Vec<EmbeddingRow> = items
                .into_iter()
                .zip(counts)
                .map(|(item, count)| EmbeddingRow {
                    record_id: item.id,
                    model: model.name.clone(),
                    version: model.version,
                    dims: model.dims,
                    vector: vectors.next().unwrap_or_default(),
                    sentences: vectors.by_ref().take(count).flatten().collect(),
                    sentences_pending: false,
                })
                .collect();
            // A record deleted since it was read is skipped; it is not live, so the next
            // batch does not return it again.
            embedded += self.staging.stage(&rows).await?;
            progress(self.staging.reembed_counts(&model).await?);
        }
        let counts = self.staging.reembed_counts(&model).await?;
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsReembed,
            None,
            &[
                ("by", actor.to_owned()),
                ("model", model.name.clone()),
                ("version", model.version.to_string()),
                ("dims", model.dims.to_string()),
                ("embedded", embedded.to_string()),
                ("refresh", refresh.to_string()),
                ("staged", counts.staged.to_string()),
                ("live", counts.live.to_string()),
            ],
        );
        self.audit.append(vec![event]).await?;
        Ok(ReembedOutcome {
            target: model,
            embedded,
            already_staged: first.staged,
            discarded,
            counts,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Replace every stored vector with the staged vectors of `target`, in one transaction,
    /// with an `ops.model_switch` event. Refused (nothing changes) unless `calibration` is a
    /// calibration of exactly that model, and unless every live record has a staged vector.
    pub async fn switch(
        &self,
        target: &EmbeddingModelInfo,
        calibration: Option<&Calibration>,
        actor: &str,
    ) -> Result<u64> {
        let Some(calibration) = calibration.filter(|c| c.model == *target) else {
            return Err(uncalibrated(target));
        };
        let from = self
            .staging
            .stored_models()
            .await?
            .iter()
            .map(|(m, n)| format!("{} ({n})", describe(m)))
            .collect::<Vec<_>>()
            .join(", ");
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::OpsModelSwitch,
            None,
            &[
                ("by", actor.to_owned()),
                ("from", from),
                ("to", describe(target)),
                ("dense_floor", calibration.dense_floor.to_string()),
                ("duplicate_collapse_floor", calibration.duplicate_collapse_floor.to_string()),
                ("entail_floor", calibration.entail_floor.to_string()),
                ("same_meaning_floor", calibration.same_meaning_floor.to_string()),
            ],
        );
        self.staging.switch_embeddings(target, event).await
    }
}
