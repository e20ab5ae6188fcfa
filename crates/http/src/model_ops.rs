//! The embedding-model operations (`retold ops reembed|switch-model|calibrate`). They run in
//! their own process on the store file, because they load another model than the one the
//! service serves: re-embedding writes staged vectors beside the served ones while the
//! service keeps running; the switch swaps them in with the service stopped (it holds the
//! data directory's lock); calibration scores labelled pairs and LoCoMo dev with the model.

use std::path::Path;
use std::sync::Arc;

use retold_app::{Calibration, ReembedOutcome, ReembedService};
use retold_domain::{Embedder, EmbeddingModelInfo, ReembedCounts};
use retold_index::OnnxEmbedder;
use serde::Deserialize;

use crate::serve_error::ServeError;
use crate::server::{StoreHandle, embedder_config, lock_data_dir, store_config};
use crate::settings::{CalibrationSettings, Settings};
use crate::system::{SystemClock, UlidIds};

/// The labelled pairs calibration scores (`config/calibration-pairs.yaml`).
pub const CALIBRATION_PAIRS: &str = include_str!("../../../config/calibration-pairs.yaml");

/// The model `settings` configures.
pub fn model_of(settings: &Settings) -> EmbeddingModelInfo {
    let e = &settings.embedding;
    EmbeddingModelInfo { name: e.model.clone(), version: e.version, dims: e.dims }
}

fn calibration_of(c: &CalibrationSettings) -> Calibration {
    Calibration {
        model: EmbeddingModelInfo { name: c.model.clone(), version: c.version, dims: c.dims },
        dense_floor: c.dense_floor,
        duplicate_collapse_floor: c.duplicate_collapse_floor,
        entail_floor: c.entail_floor,
        same_meaning_floor: c.same_meaning_floor,
    }
}

async fn open(settings: &Settings) -> Result<(Arc<StoreHandle>, ReembedService), ServeError> {
    let data_dir = settings.data_dir();
    let path = store_config(settings, &data_dir).path;
    if settings.storage.backend == crate::settings::Backend::Sqlite && !path.is_file() {
        return Err(ServeError::Startup(retold_domain::DomainError::NotFound {
            what: "store",
            id: path.display().to_string(),
        }));
    }
    let (store, stores, _feed) = crate::server::open_store(settings, &data_dir).await?;
    let store = Arc::new(store);
    let service = ReembedService::new(
        &stores,
        Arc::new(SystemClock),
        Arc::new(UlidIds::new()?),
        settings.embedding.sentence_vectors,
    );
    Ok((store, service))
}

/// Load the model `settings` configures (off the async workers).
pub async fn load_model(settings: &Settings) -> Result<Arc<OnnxEmbedder>, ServeError> {
    let config = embedder_config(settings);
    Ok(Arc::new(tokio::task::spawn_blocking(move || OnnxEmbedder::load(config)).await??))
}

/// `retold ops reembed`: embed every live record of `settings`' data directory with
/// `settings`' model into staged vectors, `batch` at a time, reporting each batch to
/// `progress`. Safe beside a running service, and resumable: an interrupted run's staged
/// vectors are kept and only the rest is embedded. With the model the store already serves
/// it is refused unless `refresh` (every record embedded again, sentence vectors and all).
pub async fn reembed(
    settings: &Settings,
    (batch, refresh): (usize, bool),
    progress: impl FnMut(ReembedCounts) + Send,
) -> Result<ReembedOutcome, ServeError> {
    let model = load_model(settings).await?;
    let (store, service) = open(settings).await?;
    let outcome =
        service.run(model.as_ref() as &dyn Embedder, (batch, refresh), "retold ops reembed", progress).await;
    StoreHandle::clone(&store).close().await?;
    Ok(outcome?)
}

/// What `retold ops switch-model` did.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchOutcome {
    pub to: EmbeddingModelInfo,
    pub switched: u64,
    /// Records embedded by the catch-up pass (written after the last re-embedding run).
    pub caught_up: u64,
}

/// `retold ops switch-model`: with the service stopped, embed what the last run missed, then
/// replace every stored vector with the staged vectors of `settings`' model. Refused unless
/// `settings` records a calibration for that model, and while a service holds the data
/// directory.
pub async fn switch_model(settings: &Settings) -> Result<SwitchOutcome, ServeError> {
    let to = model_of(settings);
    let calibration = settings.calibration().map(calibration_of);
    if calibration.is_none() {
        // Refused before anything is loaded or locked, as the switch itself would refuse.
        return Err(ServeError::Startup(retold_app::uncalibrated(&to)));
    }
    // A floor set by hand for the old model would stay in force after the switch. A refresh
    // (to the model the store serves) keeps the model, so such a floor stays as right as it
    // was: this is checked once the store says which model it serves.
    let overridden = settings.overridden_thresholds();
    let overridden_refusal = (!overridden.is_empty()).then(|| {
        ServeError::Uncalibrated(format!(
            "the configuration sets model-dependent thresholds that differ from the calibration of {} v{}: {}; \
             remove them (null uses the calibration) before switching",
            to.name,
            to.version,
            overridden
                .iter()
                .map(|(k, set, cal)| format!("{k} = {set} (calibrated {cal})"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    });
    // The store is opened first (reading it beside a running service is safe, as `reembed`
    // does) to learn which model it serves; then the data directory is locked until the store
    // is closed.
    let (store, service) = open(settings).await?;
    let mut held = None;
    let result = async {
        let serves_it = matches!(service.stored_models().await?.as_slice(), [(served, _)] if *served == to);
        if let (false, Some(refused)) = (serves_it, overridden_refusal) {
            return Err(refused);
        }
        held = Some(lock_data_dir(&settings.data_dir())?);
        let model = load_model(settings).await?;
        let counts = service.counts(&to).await?;
        let caught_up = if counts.staged < counts.live {
            // With the served model, this finishes a refresh that `retold ops reembed
            // --refresh` began (something is staged); with nothing staged it is refused, as
            // a re-embedding without `--refresh` is: re-embedding the whole store with every
            // replica stopped is not what one mistaken command should start.
            service
                .run(
                    model.as_ref() as &dyn Embedder,
                    (256, counts.staged > 0),
                    "retold ops switch-model",
                    |_| {},
                )
                .await?
                .embedded
        } else {
            0
        };
        let switched = service.switch(&to, calibration.as_ref(), "retold ops switch-model").await?;
        Ok(SwitchOutcome { to: to.clone(), switched, caught_up })
    }
    .await;
    StoreHandle::clone(&store).close().await?;
    drop(held);
    result
}

// ---------------------------------------------------------------------------------------------
// Calibration.

#[derive(Debug, Deserialize)]
struct Pairs {
    entailment: Vec<Vec<String>>,
    same_meaning: Vec<Vec<String>>,
}

/// One labelled pair and its score under the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredPair {
    pub table: &'static str,
    pub label: String,
    pub a: String,
    pub b: String,
    pub score: f64,
}

/// A calibration and the evidence it was chosen from.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationReport {
    pub calibration: CalibrationSettings,
    pub pairs: Vec<ScoredPair>,
    /// LoCoMo dev: questions, and the cosine percentiles (10th, 50th, 95th) of question ↔
    /// evidence turn, and of question ↔ the other turns of its conversation.
    pub questions: usize,
    pub evidence_cosines: [f64; 3],
    pub other_cosines: [f64; 3],
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// `x` to the nearest multiple of 0.05 (so re-calibrating the same model reproduces it).
fn step(x: f64) -> f64 {
    ((x / 0.05).round() * 0.05 * 100.0).round() / 100.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// The midpoint between the lowest score labelled `yes` and the highest labelled `no`,
/// refused when they overlap (the model cannot separate them, so no floor is honest).
fn separating_floor(pairs: &[ScoredPair], table: &str, yes: &str, no: &str) -> Result<f64, String> {
    let of = |label: &str| -> Vec<f64> {
        pairs.iter().filter(|p| p.table == table && p.label == label).map(|p| p.score).collect()
    };
    let lowest_yes = of(yes).into_iter().fold(f64::INFINITY, f64::min);
    let highest_no = of(no).into_iter().fold(f64::NEG_INFINITY, f64::max);
    if !(lowest_yes.is_finite() && highest_no.is_finite()) {
        return Err(format!("the {table} pairs need both {yes} and {no} examples"));
    }
    if highest_no >= lowest_yes {
        return Err(format!(
            "this model does not separate the {table} pairs: a {no} pair scores {highest_no:.3}, a {yes} pair \
             {lowest_yes:.3}"
        ));
    }
    Ok(step((lowest_yes + highest_no) / 2.0))
}

/// Score the labelled pairs and LoCoMo dev (`locomo`) with `model`, and choose the four
/// thresholds:
/// - entailment floor: midway between the lowest entailed and the highest off-topic pair;
/// - same-meaning floor: midway between the lowest same-meaning and the highest
///   different-meaning pair;
/// - duplicate-collapse floor: one step (0.05) above the same-meaning floor, at most 0.99;
/// - dense floor: the 10th percentile of a question's cosine to its evidence turns (a
///   dense-only match needs what 9 in 10 true matches reach; the gate must not cost recall,
///   which is what the dense channel is for).
///
/// Each is rounded to a multiple of 0.05.
pub async fn calibrate(model: &dyn Embedder, locomo: &Path) -> Result<CalibrationReport, String> {
    let pairs: Pairs = config::Config::builder()
        .add_source(config::File::from_str(CALIBRATION_PAIRS, config::FileFormat::Yaml))
        .build()
        .and_then(config::Config::try_deserialize)
        .map_err(|e| format!("config/calibration-pairs.yaml: {e}"))?;
    let mut scored = Vec::new();
    for (table, rows) in [("entailment", &pairs.entailment), ("same_meaning", &pairs.same_meaning)] {
        for row in rows {
            let [label, a, b] = row.as_slice() else {
                return Err(format!("a {table} pair is [label, text, text], not {row:?}"));
            };
            let v = model.embed(&[a.clone(), b.clone()]).await.map_err(|e| e.to_string())?;
            scored.push(ScoredPair {
                table,
                label: label.clone(),
                a: a.clone(),
                b: b.clone(),
                score: cosine(&v[0], &v[1]),
            });
        }
    }
    let entail_floor = separating_floor(&scored, "entailment", "entails", "off_topic")?;
    let same_meaning_floor = separating_floor(&scored, "same_meaning", "same", "different")?;
    let duplicate_collapse_floor = step(same_meaning_floor + 0.05).min(0.99);
    let (questions, mut evidence, mut other) = locomo_cosines(model, locomo).await?;
    if questions == 0 {
        return Err(format!("{}: no questions with evidence", locomo.display()));
    }
    evidence.sort_by(f64::total_cmp);
    other.sort_by(f64::total_cmp);
    let dense_floor = step(percentile(&evidence, 0.10));
    let info = model.info();
    Ok(CalibrationReport {
        calibration: CalibrationSettings {
            model: info.name.clone(),
            version: info.version,
            dims: info.dims,
            dense_floor,
            duplicate_collapse_floor,
            entail_floor,
            same_meaning_floor,
            source: format!(
                "retold ops calibrate {}: {} labelled pairs, LoCoMo dev ({questions} questions)",
                chrono::Utc::now().format("%Y-%m-%d"),
                scored.len()
            ),
        },
        pairs: scored,
        questions,
        evidence_cosines: [0.10, 0.5, 0.95].map(|p| percentile(&evidence, p)),
        other_cosines: [0.10, 0.5, 0.95].map(|p| percentile(&other, p)),
    })
}

/// Per LoCoMo question (categories 1-4): cosines to its evidence turns and to every other turn
/// of its conversation.
async fn locomo_cosines(model: &dyn Embedder, path: &Path) -> Result<(usize, Vec<f64>, Vec<f64>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let data: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let conversations = data.as_array().ok_or_else(|| format!("{}: not a list", path.display()))?;
    let (mut questions, mut evidence, mut other) = (0usize, Vec::new(), Vec::new());
    for conversation in conversations {
        let conv = &conversation["conversation"];
        let mut turns: Vec<(String, String)> = Vec::new();
        for n in 1.. {
            let Some(session) = conv.get(format!("session_{n}")).and_then(|s| s.as_array()) else { break };
            for turn in session {
                let speaker = turn["speaker"].as_str().unwrap_or("someone");
                let text = format!("{speaker}: {}", turn["text"].as_str().unwrap_or(""));
                turns.push((turn["dia_id"].as_str().unwrap_or("").to_owned(), text));
            }
        }
        let mut vectors = Vec::with_capacity(turns.len());
        for chunk in turns.chunks(64) {
            let texts: Vec<String> = chunk.iter().map(|t| t.1.clone()).collect();
            vectors.extend(model.embed(&texts).await.map_err(|e| e.to_string())?);
        }
        let empty = Vec::new();
        for q in conversation["qa"].as_array().unwrap_or(&empty) {
            if !(1..=4).contains(&q["category"].as_u64().unwrap_or(0)) {
                continue;
            }
            let ids: Vec<&str> = q["evidence"]
                .as_array()
                .map(|e| e.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            let is_evidence: Vec<bool> = turns.iter().map(|t| ids.contains(&t.0.as_str())).collect();
            if !is_evidence.iter().any(|x| *x) {
                continue;
            }
            let question = q["question"].as_str().unwrap_or("").to_owned();
            let qv = model.embed(&[question]).await.map_err(|e| e.to_string())?.remove(0);
            questions += 1;
            for (v, relevant) in vectors.iter().zip(&is_evidence) {
                if *relevant { evidence.push(cosine(&qv, v)) } else { other.push(cosine(&qv, v)) }
            }
        }
    }
    Ok((questions, evidence, other))
}

/// Write `calibration` into `file`'s top-level `calibrations` list (replacing the entry of the
/// same model; a file without the list gets the effective list, so layering it over the
/// defaults keeps every model's calibration). Comments inside that block are not kept.
pub fn write_calibration(
    file: &Path,
    effective: &[CalibrationSettings],
    calibration: &CalibrationSettings,
) -> std::io::Result<()> {
    // The file must exist as named (a path without its extension would otherwise be created
    // beside the file the configuration actually read).
    let text = std::fs::read_to_string(file)?;
    let mut entries: Vec<CalibrationSettings> = effective
        .iter()
        .filter(|c| {
            !(c.model == calibration.model && c.version == calibration.version && c.dims == calibration.dims)
        })
        .cloned()
        .collect();
    entries.push(calibration.clone());
    let mut kept = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("calibrations:") {
            inside = true;
            continue;
        }
        // The block is its indented lines and list items; anything at column 0 (a key, a
        // comment heading the next section) ends it and is kept.
        if inside && !line.is_empty() && !line.starts_with(' ') && !line.starts_with('-') {
            inside = false;
        }
        if line.starts_with("# Written by `retold ops calibrate`") {
            continue;
        }
        if !inside {
            kept.push(line);
        }
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    let quote = |s: &str| serde_json::to_string(s).expect("strings serialise");
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(
        "# Written by `retold ops calibrate`: the model-dependent thresholds per model.\ncalibrations:\n",
    );
    for c in &entries {
        out.push_str(&format!(
            "  - model: {}\n    version: {}\n    dims: {}\n    dense_floor: {}\n    duplicate_collapse_floor: {}\n    \
             entail_floor: {}\n    same_meaning_floor: {}\n    source: {}\n",
            quote(&c.model),
            c.version,
            c.dims,
            c.dense_floor,
            c.duplicate_collapse_floor,
            c.entail_floor,
            c.same_meaning_floor,
            quote(&c.source)
        ));
    }
    // Written beside the file, checked as a configuration, then moved over it: a failure
    // leaves the original as it was.
    let staged = file.with_extension("calibrating.yaml");
    std::fs::write(&staged, &out)?;
    let check = Settings::load(Some(&staged)).map_err(|e| {
        let _ = std::fs::remove_file(&staged);
        std::io::Error::other(format!(
            "the rewritten configuration does not load, so {} is unchanged: {e}",
            file.display()
        ))
    })?;
    if check.calibrations.iter().all(|c| c != calibration) {
        let _ = std::fs::remove_file(&staged);
        return Err(std::io::Error::other("the rewritten configuration lost the calibration"));
    }
    std::fs::rename(&staged, file)
}

/// The marker of the recorded-calibrations table in `docs/calibration.md`.
const TABLE_HEADING: &str = "## Recorded calibrations";

/// Upsert the model's row in `doc`'s recorded-calibrations table (created at the end when
/// missing).
pub fn write_calibration_doc(doc: &Path, report: &CalibrationReport) -> std::io::Result<()> {
    let c = &report.calibration;
    let text = std::fs::read_to_string(doc).unwrap_or_default();
    let header = "| Model | Version | Dims | dense_floor | duplicate_collapse_floor | entail_floor | same_meaning_floor | Evidence cosine p10/p50/p95 | Other-turn cosine p10/p50/p95 | Source |\n\
                  | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";
    let key = format!("| {} | {} | {} |", c.model, c.version, c.dims);
    let f = |x: [f64; 3]| format!("{:.2}/{:.2}/{:.2}", x[0], x[1], x[2]);
    let row = format!(
        "{key} {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
        c.dense_floor,
        c.duplicate_collapse_floor,
        c.entail_floor,
        c.same_meaning_floor,
        f(report.evidence_cosines),
        f(report.other_cosines),
        c.source
    );
    let out = match text.find(TABLE_HEADING) {
        Some(at) => {
            let (before, section) = text.split_at(at);
            let end = section[TABLE_HEADING.len()..].find("\n## ").map(|i| i + TABLE_HEADING.len());
            let (section, after) = match end {
                Some(i) => section.split_at(i + 1),
                None => (section, ""),
            };
            let mut lines: Vec<String> = section.lines().map(str::to_owned).collect();
            match lines.iter().position(|l| l.starts_with(&key)) {
                Some(i) => lines[i] = row,
                None => {
                    let last_row = lines.iter().rposition(|l| l.starts_with("| ")).unwrap_or(lines.len() - 1);
                    lines.insert(last_row + 1, row);
                }
            }
            format!("{before}{}\n{after}", lines.join("\n"))
        }
        None => format!(
            "{}\n\n{TABLE_HEADING}\n\nWritten by `retold ops calibrate` (one row per model; the service and \
             `retold ops switch-model` read the same values from the configuration's `calibrations`).\n\n{header}\n{row}\n",
            text.trim_end()
        ),
    };
    std::fs::write(doc, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(label: &str, score: f64) -> ScoredPair {
        ScoredPair { table: "t", label: label.into(), a: String::new(), b: String::new(), score }
    }

    #[test]
    fn a_floor_sits_midway_between_the_labels_on_the_005_grid_and_overlap_is_refused() {
        let pairs = [pair("yes", 0.392), pair("yes", 0.8), pair("no", 0.259), pair("no", 0.1)];
        assert_eq!(separating_floor(&pairs, "t", "yes", "no"), Ok(0.35));
        let overlapping = [pair("yes", 0.4), pair("no", 0.45)];
        let refused = separating_floor(&overlapping, "t", "yes", "no").unwrap_err();
        assert!(refused.contains("does not separate"), "{refused}");
        assert!(separating_floor(&[pair("yes", 0.4)], "t", "yes", "no").is_err());
        assert_eq!([step(0.2998), step(0.8965), step(0.949)], [0.3, 0.9, 0.95]);
    }

    #[test]
    fn writing_a_calibration_keeps_the_rest_of_the_file_and_the_other_entries_exact() {
        let dir = std::env::temp_dir().join(format!("retold-calibration-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("next.yaml");
        std::fs::write(
            &file,
            "embedding:\n  version: 7\ncalibrations:\n  - model: \"x\"\n    version: 1\n    dims: 3\n    \
             dense_floor: 0.325\n    duplicate_collapse_floor: 0.95\n    entail_floor: 0.35\n    \
             same_meaning_floor: 0.9\n    source: \"by hand\"\n# Telemetry\ntelemetry:\n  log_filter: \"warn\"\n",
        )
        .unwrap();
        let before = Settings::load(Some(&file)).unwrap();
        let new = CalibrationSettings {
            model: before.embedding.model.clone(),
            version: 7,
            dims: before.embedding.dims,
            dense_floor: 0.3,
            duplicate_collapse_floor: 0.95,
            entail_floor: 0.35,
            same_meaning_floor: 0.9,
            source: "test".into(),
        };
        write_calibration(&file, &before.calibrations, &new).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("# Telemetry\ntelemetry:"), "{text}");
        let after = Settings::load(Some(&file)).unwrap();
        assert_eq!(after.telemetry.log_filter, "warn");
        assert_eq!(after.calibrations.len(), 2, "{text}");
        assert_eq!(after.calibrations[0].dense_floor, 0.325, "another model's entry is kept exactly");
        assert_eq!(after.calibration(), Some(&new));
        // A second run replaces its own entry and header instead of adding them again.
        write_calibration(&file, &after.calibrations, &new).unwrap();
        let again = std::fs::read_to_string(&file).unwrap();
        assert_eq!(again.matches("calibrations:").count(), 1, "{again}");
        assert_eq!(Settings::load(Some(&file)).unwrap().calibrations.len(), 2);
        // A missing file is an error, not a new file.
        assert!(write_calibration(&dir.join("missing.yaml"), &[], &new).is_err());
        assert!(!dir.join("missing.yaml").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
