//! `--golden-write FILE` keeps the first results of every question, to guard a change that
//! must not move any (a refactor); `--golden FILE` compares a later run with them and fails
//! naming the results that moved (a missing FILE is an error, never a new baseline).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The report's keys that hold a question's results: its first ten (`top10`, `sessions@10`)
/// and where its evidence ranked under each configuration (`ranks`, `evidence_turn_ranks`).
const RESULT_KEYS: [&str; 4] = ["top10", "sessions@10", "ranks", "evidence_turn_ranks"];

/// Every result value of `report`, by its JSON path.
fn results(report: &Value) -> BTreeMap<String, Value> {
    fn walk(value: &Value, path: &str, out: &mut BTreeMap<String, Value>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    let here = format!("{path}/{key}");
                    if RESULT_KEYS.contains(&key.as_str()) {
                        out.insert(here, inner.clone());
                    } else {
                        walk(inner, &here, out);
                    }
                }
            }
            Value::Array(items) => {
                for (n, inner) in items.iter().enumerate() {
                    walk(inner, &format!("{path}/{n}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    walk(report, "", &mut out);
    out
}

/// Keep `report`'s results in `path` (`--golden-write`).
pub(crate) fn write(path: &Path, report: &Value) -> Result<()> {
    let now = results(report);
    if now.is_empty() {
        bail!("--golden-write: the report holds no per-question results to keep");
    }
    let body: serde_json::Map<String, Value> = now.into_iter().collect();
    std::fs::write(path, serde_json::to_string_pretty(&body)?).with_context(|| path.display().to_string())?;
    eprintln!("golden: wrote {} results to {}", body.len(), path.display());
    Ok(())
}

/// Compare `report`'s results with those kept in `path` (`--golden`); fail on any difference.
pub(crate) fn check(path: &Path, report: &Value) -> Result<()> {
    let now = results(report);
    if !path.exists() {
        bail!("--golden {}: no such file (keep a baseline first with --golden-write)", path.display());
    }
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let kept: BTreeMap<String, Value> =
        serde_json::from_str(&text).with_context(|| path.display().to_string())?;
    let mut moved: Vec<String> = Vec::new();
    for (key, value) in &kept {
        match now.get(key) {
            Some(v) if v == value => {}
            Some(v) => moved.push(format!("{key}: was {value}, now {v}")),
            None => moved.push(format!("{key}: gone")),
        }
    }
    moved.extend(now.keys().filter(|k| !kept.contains_key(*k)).map(|k| format!("{k}: new")));
    if moved.is_empty() {
        eprintln!("golden: all {} results identical to {}", kept.len(), path.display());
        return Ok(());
    }
    for line in moved.iter().take(20) {
        eprintln!("golden: {line}");
    }
    bail!("--golden: {} of {} results moved (first 20 above)", moved.len(), kept.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_moved_result_fails_and_an_identical_one_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.json");
        let report = json!({"default_per_question": [{"question": "q", "top10": ["D1:1", "D1:2"], "ranks": {"rrf": [1]}}],
            "overall": {"recall@10": 0.5}});
        let missing = check(&path, &report).unwrap_err().to_string();
        assert!(missing.contains("--golden-write"), "{missing}");
        write(&path, &report).unwrap();
        check(&path, &report).unwrap();
        let mut moved = report.clone();
        moved["default_per_question"][0]["top10"] = json!(["D1:2", "D1:1"]);
        // A figure alone is not a result: only the per-question lists are kept.
        moved["overall"]["recall@10"] = json!(0.6);
        let error = check(&path, &moved).unwrap_err().to_string();
        assert!(error.contains("1 of 2 results moved"), "{error}");
    }
}
