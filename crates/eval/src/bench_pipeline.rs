//! `cargo xtask bench [pipeline] [--large] [--out FILE]`: the whole service path on synthetic
//! stores written through the real ingestor, and `cargo xtask bench http`: concurrent clients
//! against a real server on loopback.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use async_trait::async_trait;
use retold_domain::chrono::Utc;
use retold_domain::{Embedder, EmbeddingModelInfo, Scope, SearchLogStore};
use retold_index::ExactIndex;
use retold_retrieve::SearchRequest;
use retold_store_sqlite::{SqliteStore, StoreConfig};
use serde_json::{Value, json};

use crate::eval::{CachedEmbedder, principal, world, write_turn};

/// Record texts get deterministic random unit vectors (sizes the model cannot embed quickly
/// here); everything else (queries) goes to the real model through the cache.
struct SyntheticEmbedder {
    real: Arc<CachedEmbedder>,
    synthetic: HashMap<String, Vec<f32>>,
}

#[async_trait]
impl Embedder for SyntheticEmbedder {
    fn info(&self) -> &EmbeddingModelInfo {
        self.real.info()
    }

    async fn embed(&self, texts: &[String]) -> retold_domain::Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            match self.synthetic.get(text) {
                Some(v) => out.push(v.clone()),
                None => out.extend(self.real.embed(std::slice::from_ref(text)).await?),
            }
        }
        Ok(out)
    }
}

fn unit_vector(seed: u64, dims: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            ((state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

const TOPICS: &[&str] = &[
    "the deploy pipeline",
    "the staging server",
    "Aditya's review habits",
    "the OAuth refresh flow",
    "the benchmark suite",
    "the release train",
    "the database migration",
    "the on-call rota",
    "the memory service",
    "the CI cache",
];
const FACTS: &[&str] = &[
    "failed after a timeout",
    "moved to Thursdays",
    "needs a warm cache",
    "uses Conventional Commits",
    "was rewritten in Rust",
    "runs on port 8443",
    "was reviewed by Mel",
    "lost its flaky tests",
    "gained an index",
    "doubled its throughput",
];

fn text(n: usize) -> String {
    format!(
        "Note {n}: {} {} (item {}).",
        TOPICS[n % TOPICS.len()],
        FACTS[(n / TOPICS.len()) % FACTS.len()],
        n
    )
}

fn pct(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    if samples.is_empty() {
        return (0.0, 0.0);
    }
    let at = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.95))
}

fn ms(p: (f64, f64)) -> Value {
    json!({"p50": (p.0 * 1000.0).round() / 1000.0, "p95": (p.1 * 1000.0).round() / 1000.0})
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| (kb / 1024.0 * 10.0).round() / 10.0)
}

pub(crate) async fn pipeline(large: bool) -> Result<Value> {
    let real = crate::eval::embedder()?;
    let dims = real.info().dims as usize;
    // Raw embedder throughput, measured in this run (two workers, fresh texts).
    let fresh: Vec<String> = (0..256)
        .map(|i| format!("throughput probe {i} {}", Utc::now().timestamp_nanos_opt().unwrap_or(0)))
        .collect();
    let t = Instant::now();
    std::thread::scope(|s| {
        for half in fresh.chunks(128) {
            let real = &real;
            s.spawn(move || real.warm(half));
        }
    });
    let embedder_per_s = fresh.len() as f64 / t.elapsed().as_secs_f64();

    let mut sizes = vec![1_000usize, 10_000, 50_000];
    if large {
        sizes.push(200_000);
    }
    let scope = Scope::parse("project:bench")?;
    let queries: Vec<String> =
        (0..50).map(|i| format!("what happened with {}?", TOPICS[i % TOPICS.len()])).collect();
    real.warm(&queries)?;
    let mut out = BTreeMap::new();
    println!(
        "| records | record vectors | write p50/p95 ms | ingest/s | embedder/s | search p50/p95 ms | dense / lexical / entity / total µs (p50) | cold start s | warm start p50/p95 s | RSS MB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &sizes {
        let texts: Vec<String> = (0..n).map(text).collect();
        let real_vectors = n <= 10_000;
        let embedder: Arc<dyn Embedder> = if real_vectors {
            real.warm(&texts)?;
            real.clone()
        } else {
            Arc::new(SyntheticEmbedder {
                real: real.clone(),
                synthetic: texts
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.clone(), unit_vector(i as u64 + 1, dims)))
                    .collect(),
            })
        };
        let w = world(embedder, &scope, Utc::now()).await?;
        let mut writes = Vec::with_capacity(n);
        let started = Instant::now();
        for (i, t) in texts.iter().enumerate() {
            let one = Instant::now();
            write_turn(&w, &scope, t, None, Utc::now()).await?;
            writes.push(one.elapsed());
            if i % 1000 == 999 {
                eprint!("\r  ingest {}/{n}", i + 1);
            }
        }
        eprintln!();
        let ingest_per_s = n as f64 / started.elapsed().as_secs_f64();
        let mut searches = Vec::new();
        let mut stages: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for q in &queries {
            let t = Instant::now();
            let response = w.retriever.search(&principal(), &SearchRequest::new(q.clone())).await?;
            searches.push(t.elapsed());
            let (_, _, trace) = w.store.trace(&response.search_id).await?.context("trace written")?;
            let trace: Value = serde_json::from_str(&trace)?;
            for (stage, us) in trace["timings_us"].as_object().into_iter().flatten() {
                stages.entry(stage.clone()).or_default().push(us.as_u64().unwrap_or(0));
            }
        }
        let median = |stage: &str| -> u64 {
            let mut v = stages.get(stage).cloned().unwrap_or_default();
            v.sort_unstable();
            v.get(v.len() / 2).copied().unwrap_or(0)
        };
        let rss = rss_mb();
        let path = w.path.clone();
        // Close the pools but keep `w` (it owns the temporary directory) until the end.
        w.store.clone().close().await?;
        // Cold start: open + migrate check + rebuild the index; then five warm starts.
        let model = real.info().clone();
        let mut starts = Vec::new();
        for _ in 0..6 {
            let t = Instant::now();
            let store = SqliteStore::open(&StoreConfig::new(&path)).await?;
            let (index, _) = ExactIndex::rebuild(&store, &model).await?;
            starts.push(t.elapsed());
            anyhow::ensure!(retold_domain::VectorIndex::live_len(&index) == n, "rebuild lost vectors");
            store.close().await?;
        }
        let cold = starts.remove(0).as_secs_f64();
        let warm = pct(starts);
        let (wp, sp) = (pct(writes), pct(searches));
        println!(
            "| {n} | {} | {:.2} / {:.2} | {ingest_per_s:.0} | {embedder_per_s:.0} | {:.2} / {:.2} | {} / {} / {} / {} | {cold:.3} | {:.3} / {:.3} | {rss} |",
            if real_vectors { "model" } else { "random" },
            wp.0,
            wp.1,
            sp.0,
            sp.1,
            median("dense"),
            median("lexical"),
            median("entity"),
            median("total"),
            warm.0 / 1e3,
            warm.1 / 1e3,
        );
        out.insert(
            n.to_string(),
            json!({
                "search_ms": ms(sp), "write_ms": ms(wp), "ingest_per_s": ingest_per_s.round(),
                "embedder_per_s": embedder_per_s.round(), "cold_start_s": (cold * 1000.0).round() / 1000.0,
                "warm_start_s": {"p50": (warm.0 / 1e3 * 1000.0).round() / 1000.0, "p95": (warm.1 / 1e3 * 1000.0).round() / 1000.0},
                "rss_mb": rss, "record_vectors": if real_vectors { "model" } else { "random normalised" },
                "stage_us_p50": stages.keys().map(|k| (k.clone(), Value::from(median(k)))).collect::<serde_json::Map<_, _>>(),
            }),
        );
    }
    println!(
        "\nwrite = one memory_write through the ingestor (policy, entities, embedding from the on-disk cache, one transaction, index update); search = memory_search end to end including the query embedding by the real model."
    );
    Ok(json!({"sizes": out}))
}

pub(crate) async fn http(clients: usize, seconds: u64) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let key = "bench-admin-key";
    let settings = retold_http::Settings::load_with_env(
        None,
        [
            ("RETOLD__SERVER__DATA_DIR".to_owned(), dir.path().display().to_string()),
            ("RETOLD__AUTH__ADMIN_KEY".to_owned(), key.to_owned()),
        ],
    )?;
    let embedder = retold_http::load_embedder(&settings).await?;
    let built = retold_http::build(&settings, embedder).await?;
    let app = retold_http::app(built.state, &settings.server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build()?;
    let base2 = base.clone();
    let host_key: String = tokio::task::spawn_blocking(move || -> Result<String> {
        let admin = |path: &str, body: Value| {
            client.post(format!("{base2}{path}")).bearer_auth(key).json(&body).send()?.error_for_status()?.json::<Value>()
        };
        admin("/v1/admin/grants", json!({"agent_id": "bench", "scope": "project:bench", "can_read": true, "can_write": true}))?;
        let host = admin("/v1/admin/host-keys", json!({"name": "bench"}))?["key"].as_str().unwrap_or_default().to_owned();
        for n in 0..500 {
            client
                .post(format!("{base2}/v1/memory/write"))
                .bearer_auth(&host)
                .json(&json!({"principal": {"agent_id": "bench", "user_id": "u"}, "type": "episodic", "content": text(n), "scope": "project:bench", "source_kind": "system"}))
                .send()?
                .error_for_status()?;
        }
        Ok(host)
    })
    .await??;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let results: Vec<(Vec<Duration>, usize)> = tokio::task::spawn_blocking(move || {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    let base = base.clone();
                    let key = host_key.clone();
                    s.spawn(move || {
                        let client = reqwest::blocking::Client::new();
                        let (mut latencies, mut errors, mut i) = (Vec::new(), 0usize, c);
                        while Instant::now() < deadline {
                            i += clients;
                            let body = json!({"principal": {"agent_id": "bench", "user_id": "u"}, "query": format!("what happened with {}?", TOPICS[i % TOPICS.len()])});
                            let t = Instant::now();
                            match client.post(format!("{base}/v1/memory/search")).bearer_auth(&key).json(&body).send() {
                                Ok(r) if r.status().is_success() => latencies.push(t.elapsed()),
                                _ => errors += 1,
                            }
                        }
                        (latencies, errors)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("client thread")).collect()
        })
    })
    .await?;
    let elapsed = started.elapsed().as_secs_f64();
    let errors: usize = results.iter().map(|r| r.1).sum();
    let latencies: Vec<Duration> = results.into_iter().flat_map(|r| r.0).collect();
    let ok = latencies.len();
    let (p50, p95) = pct(latencies);
    println!("| clients | seconds | requests/s | p50 ms | p95 ms | errors |\n|---|---|---|---|---|---|");
    println!("| {clients} | {seconds} | {:.1} | {p50:.2} | {p95:.2} | {errors} |", ok as f64 / elapsed);
    Ok(
        json!({"http": {"clients": clients, "seconds": seconds, "requests_per_s": (ok as f64 / elapsed * 10.0).round() / 10.0, "latency_ms": ms((p50, p95)), "errors": errors}}),
    )
}
