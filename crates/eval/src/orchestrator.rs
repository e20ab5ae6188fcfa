//! `cargo xtask eval orchestrator`: the fitness of a bundle on a dataset built from LoCoMo
//! dev. Every question of categories 1-4 becomes a turn whose answer needs stored memories
//! (its evidence turns), with a draft that lacks them (a hedge). The decision pipeline runs
//! offline on the real components, at the retrieval level: did admission bring the evidence
//! (helpful), did it admit only noise (harmful), what share of the evidence it admitted. A
//! second draft states the evidence already: admitting it again is a restatement. With
//! `--record`, the result is written into the registry with the dataset, date and revision.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use retold_app::orchestrator::{DecisionPipeline, DecisionRequest, Fitness};
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{Disposition, Embedder, KeptReason, RecordId, Scope};
use serde_json::{Value, json};

use crate::eval::{progress, write_turn};

/// Drafts that lack the memory (one per question, chosen by its index).
const HEDGES: &[&str] = &[
    "I'm not sure, I don't have that information.",
    "I don't remember you telling me that.",
    "I don't know the details of that, sorry.",
];

#[derive(Default)]
struct Tally {
    decisions: usize,
    helpful: usize,
    harmful: usize,
    evidence: usize,
    evidence_admitted: usize,
    admitted: usize,
    restated: usize,
    restated_decisions: usize,
    no_gaps: usize,
}

impl Tally {
    fn rate(n: usize, d: usize) -> f64 {
        if d == 0 { 0.0 } else { n as f64 / d as f64 }
    }
    fn json(&self) -> Value {
        json!({
            "decisions": self.decisions,
            "helpful_rate": Self::rate(self.helpful, self.decisions),
            "harmful_rate": Self::rate(self.harmful, self.decisions),
            "evidence_recall": Self::rate(self.evidence_admitted, self.evidence),
            "admitted_per_decision": Self::rate(self.admitted, self.decisions),
            "precision": Self::rate(self.evidence_admitted, self.admitted),
            "restated_rate": Self::rate(self.restated, self.restated_decisions),
            "no_gaps_rate": Self::rate(self.no_gaps, self.decisions),
        })
    }
}

pub(crate) async fn orchestrator(
    data: &std::path::Path,
    limit: Option<usize>,
    bundle: Option<&str>,
    record: bool,
) -> Result<Value> {
    let mut settings = retold_http::Settings::load(None)?;
    if let Some(id) = bundle {
        settings.orchestrator.bundle = id.to_owned();
    }
    let conversations: Value =
        serde_json::from_str(&std::fs::read_to_string(data).with_context(|| data.display().to_string())?)?;
    let conversations = conversations.as_array().context("LoCoMo data is a list of conversations")?;
    let embedder = crate::eval::embedder()?;
    // The configured bundle with its planner (a hosted planner needs its key) and, when its
    // model's key is given, the client the answer level regenerates with.
    let (hosted, _) = retold_http::hosted_stages(&settings)?;
    let stage = hosted.orchestrator.context("hosted_stages resolves the orchestrator's bundle")?;
    let bundle = stage.bundle.clone();
    if let Err(why) = &stage.regenerator {
        eprintln!("answer level: not run ({why})");
    }
    // bucket → (decisions, sum of regenerated answers' token F1, sum of drafts' F1, regenerated)
    let mut answers: BTreeMap<String, (usize, f64, f64, usize)> = BTreeMap::new();
    let mut by: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut plan_ms, mut retrieve_ms, mut admit_ms, mut total_ms) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let started = std::time::Instant::now();
    for (ci, conversation) in conversations.iter().enumerate() {
        let sample = conversation["sample_id"].as_str().unwrap_or("conv").to_owned();
        let scope =
            Scope::parse(&format!("project:locomo-{}", sample.replace(|c: char| !c.is_alphanumeric(), "-")))?;
        let turns = crate::eval::locomo_turns(&sample, &conversation["conversation"])?;
        let texts: Vec<String> = turns.iter().map(|t| t.2.clone()).collect();
        embedder.warm(&texts)?;
        let now = turns.iter().map(|t| t.3).max().unwrap_or_else(Utc::now)
            + retold_domain::chrono::TimeDelta::days(1);
        let w = crate::eval::world(embedder.clone() as Arc<dyn Embedder>, &scope, now).await?;
        let mut by_dia: HashMap<String, (RecordId, String)> = HashMap::new();
        for (i, (dia, speaker, content, at)) in turns.iter().enumerate() {
            let id = write_turn(&w, &scope, content, Some(speaker), None, *at).await?;
            by_dia.insert(dia.clone(), (id, content.clone()));
            progress(&format!("conv {}", ci + 1), i + 1, turns.len());
        }
        w.ingestor.settled().await;
        eprintln!();
        let served = stage.pipeline(
            &settings,
            w.retriever.clone(),
            embedder.clone() as Arc<dyn Embedder>,
            Arc::new(retold_test_kit::ManualClock::new(now)),
        );
        // The retrieval level never regenerates.
        let pipeline = DecisionPipeline { regenerator: Err("retrieval level".into()), ..served.clone() };
        // The answer level: the same decisions regenerated through the bundle's model, when its
        // provider key is given (the bundle counts as fit here: its fitness is what is measured).
        let answering = served.regenerator.is_ok().then(|| {
            let mut fit = bundle.clone();
            fit.fitness = vec![Fitness {
                dataset: "assumed for the answer level".into(),
                level: "answer".into(),
                date: String::new(),
                revision: String::new(),
                fingerprint: bundle.fingerprint(&retold_http::orchestrator_config(&settings)),
                helpful_rate: 1.0,
                harmful_rate: 0.0,
                evidence_recall: 0.0,
                passed: true,
            }];
            DecisionPipeline { bundle: fit, ..served.clone() }
        });
        let inventory = retold_app::Inventory::default();
        let qa = conversation["qa"].as_array().context("qa")?;
        for (qi, q) in qa.iter().enumerate().take(limit.unwrap_or(usize::MAX)) {
            let category = q["category"].as_u64().unwrap_or(0);
            let name = match category {
                1 => "multi-hop",
                2 => "temporal",
                3 => "open-domain",
                4 => "single-hop",
                _ => continue,
            };
            let ids: Vec<&str> = q["evidence"]
                .as_array()
                .map(|e| e.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let evidence: Vec<&(RecordId, String)> = ids.iter().filter_map(|d| by_dia.get(*d)).collect();
            if evidence.is_empty() || evidence.len() != ids.len() {
                continue;
            }
            let wanted: HashSet<&RecordId> = evidence.iter().map(|(id, _)| id).collect();
            let question = q["question"].as_str().unwrap_or("").to_owned();
            let deadline = Some(Duration::from_secs(30));
            // The draft lacks the memory.
            let lacking = DecisionRequest {
                turn: question.clone(),
                draft: HEDGES[qi % HEDGES.len()].to_owned(),
                deadline,
            };
            let decided = pipeline.run(&crate::eval::principal(), None, &inventory, &lacking).await?;
            let admitted: HashSet<&RecordId> = decided.admitted.iter().map(|r| &r.id).collect();
            let hits = admitted.intersection(&wanted).count();
            for bucket in ["overall", name] {
                let t = by.entry(bucket.to_owned()).or_default();
                t.decisions += 1;
                t.evidence += wanted.len();
                t.evidence_admitted += hits;
                t.admitted += admitted.len();
                t.helpful += usize::from(hits > 0);
                t.harmful += usize::from(hits == 0 && !admitted.is_empty());
                t.no_gaps += usize::from(decided.disposition == Disposition::DraftKept(KeptReason::NoGaps));
            }
            if let Some(answering) = &answering {
                let gold = match &q["answer"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let answered = answering.run(&crate::eval::principal(), None, &inventory, &lacking).await?;
                let f1 = answered.answer.as_deref().map_or(0.0, |a| token_f1(a, &gold));
                let draft_f1 = token_f1(&lacking.draft, &gold);
                for bucket in ["overall", name] {
                    let t = answers.entry(bucket.to_owned()).or_default();
                    t.0 += 1;
                    t.1 += f1;
                    t.2 += draft_f1;
                    t.3 += usize::from(answered.answer.is_some());
                }
            }
            plan_ms.push(decided.timings.plan_ms);
            retrieve_ms.push(decided.timings.retrieve_ms);
            admit_ms.push(decided.timings.admit_ms);
            total_ms.push(decided.timings.total_ms);
            // The draft already states the evidence (and still hedges about the rest).
            let stated: Vec<String> = evidence.iter().map(|(_, c)| c.clone()).collect();
            let restating = DecisionRequest {
                turn: question,
                draft: format!("{} I'm not sure about anything else.", stated.join(" ")),
                deadline,
            };
            let again = pipeline.run(&crate::eval::principal(), None, &inventory, &restating).await?;
            let readmitted = again.admitted.iter().any(|r| wanted.contains(&r.id));
            for bucket in ["overall", name] {
                let t = by.entry(bucket.to_owned()).or_default();
                t.restated_decisions += 1;
                t.restated += usize::from(readmitted);
            }
            progress("decide", qi + 1, qa.len());
        }
        eprintln!();
    }
    let overall = by.get("overall").context("no questions")?;
    let results = overall.json();
    let passed = overall.helpful > overall.harmful;
    println!(
        "\nOrchestrator fitness, bundle {} (retrieval level, offline), LoCoMo dev: {} decisions; a draft that hedges, and one that states the evidence",
        bundle.id, overall.decisions
    );
    println!(
        "| bucket | decisions | helpful | harmful | evidence recall | admitted / decision | precision | restated | no gaps |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let order = ["overall", "single-hop", "multi-hop", "temporal", "open-domain"];
    for bucket in order {
        let Some(t) = by.get(bucket) else { continue };
        let j = t.json();
        let f = |k: &str| format!("{:.3}", j[k].as_f64().unwrap_or(0.0));
        println!(
            "| {bucket} | {} | {} | {} | {} | {} | {} | {} | {} |",
            t.decisions,
            f("helpful_rate"),
            f("harmful_rate"),
            f("evidence_recall"),
            f("admitted_per_decision"),
            f("precision"),
            f("restated_rate"),
            f("no_gaps_rate")
        );
    }
    let q = |xs: Vec<f64>| {
        let [p50, p95] = crate::bench_pipeline::quantiles(xs, [0.5, 0.95]);
        json!({"p50": p50, "p95": p95})
    };
    let latency = json!({
        "plan_ms": q(plan_ms),
        "retrieve_ms": q(retrieve_ms),
        "admit_ms": q(admit_ms),
        "total_ms": q(total_ms),
    });
    let l = |k: &str| {
        format!(
            "{:.2} / {:.2}",
            latency[k]["p50"].as_f64().unwrap_or(0.0),
            latency[k]["p95"].as_f64().unwrap_or(0.0)
        )
    };
    println!(
        "\nper-stage latency p50 / p95 ms (hedging drafts): plan {} | retrieve {} | admit {} | total {}",
        l("plan_ms"),
        l("retrieve_ms"),
        l("admit_ms"),
        l("total_ms")
    );
    println!(
        "fit: {} (helpful {} > harmful {} is the rule); {:.0}s",
        if passed { "yes" } else { "no" },
        overall.helpful,
        overall.harmful,
        started.elapsed().as_secs_f64()
    );
    let answer_level = answers.get("overall").map(|&(n, f1, draft_f1, regenerated)| {
        println!("\nAnswer level, through {}: token F1 against the gold answer", bundle.model.as_deref().unwrap_or(""));
        println!("| bucket | decisions | regenerated | answer F1 | draft F1 |\n|---|---|---|---|---|");
        for bucket in order {
            if let Some(&(n, f1, d, r)) = answers.get(bucket) {
                println!("| {bucket} | {n} | {r} | {:.3} | {:.3} |", f1 / n as f64, d / n as f64);
            }
        }
        json!({"decisions": n, "regenerated": regenerated, "answer_f1": f1 / n as f64, "draft_f1": draft_f1 / n as f64,
               "passed": f1 > draft_f1})
    });
    if answer_level.is_none() {
        println!("answer level: not run (give the bundle model's provider key to run it)");
    }
    let dataset = format!("locomo-dev ({} questions, categories 1-4, hedging drafts)", overall.decisions);
    if record {
        let path = match settings.orchestrator.registry.trim() {
            "" => crate::workspace_root().join("config/bundles.json"),
            other => std::path::PathBuf::from(other),
        };
        let fitness = Fitness {
            dataset: dataset.clone(),
            level: "retrieval".into(),
            date: Utc::now().format("%Y-%m-%d").to_string(),
            revision: crate::eval::git_revision(),
            fingerprint: bundle.fingerprint(&retold_http::orchestrator_config(&settings)),
            helpful_rate: results["helpful_rate"].as_f64().unwrap_or(0.0),
            harmful_rate: results["harmful_rate"].as_f64().unwrap_or(0.0),
            evidence_recall: results["evidence_recall"].as_f64().unwrap_or(0.0),
            passed,
        };
        retold_http::bundles::record_fitness(&path, &bundle.id, &fitness).map_err(anyhow::Error::msg)?;
        if let Some(a) = &answer_level {
            let answer = Fitness {
                level: "answer".into(),
                helpful_rate: a["answer_f1"].as_f64().unwrap_or(0.0),
                harmful_rate: a["draft_f1"].as_f64().unwrap_or(0.0),
                passed: a["passed"].as_bool().unwrap_or(false),
                ..fitness
            };
            retold_http::bundles::record_fitness(&path, &bundle.id, &answer).map_err(anyhow::Error::msg)?;
        }
        println!("recorded in {} (rebuild the service to ship it)", path.display());
    }
    let buckets: serde_json::Map<String, Value> = by.iter().map(|(k, t)| (k.clone(), t.json())).collect();
    Ok(
        json!({"dataset": dataset, "bundle": bundle.id, "fingerprint": bundle.fingerprint(&retold_http::orchestrator_config(&settings)), "passed": passed,
              "results": buckets, "answer_level": answer_level, "latency": latency, "git_revision": crate::eval::git_revision(),
              "date": DateTime::<Utc>::from(std::time::SystemTime::now()).to_rfc3339()}),
    )
}

/// SQuAD-style token F1 of `answer` against `gold` (lowercased letters and digits).
fn token_f1(answer: &str, gold: &str) -> f64 {
    let tokens = |t: &str| -> Vec<String> {
        t.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (a, g) = (tokens(answer), tokens(gold));
    if a.is_empty() || g.is_empty() {
        return 0.0;
    }
    let mut left: HashMap<&str, usize> = HashMap::new();
    for w in &g {
        *left.entry(w).or_default() += 1;
    }
    let mut common = 0usize;
    for w in &a {
        if let Some(n) = left.get_mut(w.as_str()).filter(|n| **n > 0) {
            *n -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let (p, r) = (common as f64 / a.len() as f64, common as f64 / g.len() as f64);
    2.0 * p * r / (p + r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_f1_counts_shared_words_once_each() {
        assert_eq!(super::token_f1("Paris", "paris"), 1.0);
        assert_eq!(super::token_f1("I don't know", "7 May 2023"), 0.0);
        let f = super::token_f1("she went to Paris in May", "Paris, May");
        assert!((f - 2.0 * (2.0 / 6.0) * 1.0 / (2.0 / 6.0 + 1.0)).abs() < 1e-9, "{f}");
    }
}
