//! Load: 64 clients over loopback against the real `retold serve`, a mix of searches (60%),
//! gets (20%) and writes (20%), for `RETOLD_LOAD_SECS` seconds (CI runs 10 against the debug
//! build; `cargo xtask reliability load` runs 60 against the release build, which it names in
//! `RETOLD_TEST_BINARY`). Every request must succeed, and the server's RSS at the end must be
//! within 10% of its RSS after the warm-up (the first fifth of the run). Prints p50/p99 per
//! operation and throughput.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::e2e::start;

const KEY: &str = "load-admin-key";
const CLIENTS: usize = 64;
const TOPICS: [&str; 6] = [
    "The deploy runbook for the billing service lives in the team wiki",
    "Standups moved to half past nine on weekdays",
    "The staging database is refreshed from production every Sunday night",
    "Release notes are drafted in the shared changelog document",
    "The on-call rotation changes every Monday at noon",
    "Build caches are kept on the local disk of each runner",
];

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

struct Outcome {
    op: &'static str,
    millis: f64,
    error: Option<String>,
}

fn call(client: &Client, url: &str, key: &str, body: &Value) -> Result<Value, String> {
    let response = client.post(url).bearer_auth(key).json(body).send().map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response.text().map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

fn write_body(n: usize) -> Value {
    json!({"principal": {"agent_id": "load-agent", "user_id": "ops"}, "type": "episodic",
        "content": format!("{} (note {n}, token ld{n}q).", TOPICS[n % TOPICS.len()]),
        "scope": "project:load", "source_kind": "system"})
}

#[test]
fn sixty_four_clients_get_no_errors_and_memory_stays_flat() {
    let seconds: u64 = std::env::var("RETOLD_LOAD_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), KEY);
    retold_hosted::install_tls_provider();
    let client =
        Client::builder().timeout(Duration::from_secs(60)).pool_max_idle_per_host(CLIENTS).build().unwrap();
    let admin =
        |path: &str, body: Value| call(&client, &format!("{}{path}", server.url), KEY, &body).unwrap();
    admin(
        "/v1/admin/grants",
        json!({"agent_id": "load-agent", "scope": "project:load", "can_read": true, "can_write": true}),
    );
    let host = admin("/v1/admin/host-keys", json!({"name": "load"}))["key"].as_str().unwrap().to_owned();

    // Seed 256 records from 8 threads.
    let ids: Arc<Mutex<Vec<String>>> = Arc::default();
    std::thread::scope(|scope| {
        for t in 0..8 {
            let (client, url, host, ids) =
                (client.clone(), format!("{}/v1/memory/write", server.url), &host, &ids);
            scope.spawn(move || {
                for n in (t..256).step_by(8) {
                    let answer = call(&client, &url, host, &write_body(n)).expect("seeding");
                    ids.lock().unwrap().push(answer["record_id"].as_str().unwrap().to_owned());
                }
            });
        }
    });

    let pid = server.child.id();
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes: Arc<Mutex<Vec<Outcome>>> = Arc::default();
    let began = Instant::now();
    let warm = Duration::from_secs(seconds) / 5;
    let mut rss_after_warmup = 0;
    std::thread::scope(|scope| {
        for c in 0..CLIENTS {
            let (client, base, host, ids, stop, outcomes) =
                (client.clone(), server.url.clone(), &host, &ids, stop.clone(), &outcomes);
            scope.spawn(move || {
                let principal = json!({"agent_id": "load-agent", "user_id": "ops"});
                let mut n = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let roll = (c * 7919 + n * 104_729) % 10;
                    let started = Instant::now();
                    let (op, result) = match roll {
                        0..=5 => {
                            let query = format!("{}?", TOPICS[(c + n) % TOPICS.len()].to_lowercase());
                            let body = json!({"principal": principal, "query": query, "limit": 10});
                            ("search", call(&client, &format!("{base}/v1/memory/search"), host, &body))
                        }
                        6 | 7 => {
                            let id = {
                                let ids = ids.lock().unwrap();
                                ids[(c * 31 + n) % ids.len()].clone()
                            };
                            let body = json!({"principal": principal, "ids": [id]});
                            ("get", call(&client, &format!("{base}/v1/memory/get"), host, &body))
                        }
                        _ => {
                            let body = write_body(10_000 + c * 100_000 + n);
                            let result = call(&client, &format!("{base}/v1/memory/write"), host, &body);
                            if let Ok(answer) = &result {
                                ids.lock().unwrap().push(answer["record_id"].as_str().unwrap().to_owned());
                            }
                            ("write", result)
                        }
                    };
                    let millis = started.elapsed().as_secs_f64() * 1000.0;
                    outcomes.lock().unwrap().push(Outcome { op, millis, error: result.err() });
                }
            });
        }
        std::thread::sleep(warm);
        rss_after_warmup = rss_kib(pid);
        std::thread::sleep(Duration::from_secs(seconds).saturating_sub(warm));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = began.elapsed().as_secs_f64();
    let rss_end = rss_kib(pid);
    let outcomes = outcomes.lock().unwrap();
    let errors: Vec<&String> = outcomes.iter().filter_map(|o| o.error.as_ref()).collect();

    println!("\n| op | requests | p50 ms | p99 ms |\n|---|---|---|---|");
    for op in ["search", "get", "write", "all"] {
        let mut ms: Vec<f64> =
            outcomes.iter().filter(|o| op == "all" || o.op == op).map(|o| o.millis).collect();
        ms.sort_by(f64::total_cmp);
        println!("| {op} | {} | {:.1} | {:.1} |", ms.len(), percentile(&ms, 0.5), percentile(&ms, 0.99));
    }
    println!(
        "{CLIENTS} clients, {seconds} s: {:.1} req/s, {} errors; RSS after warm-up {} MiB, at the end {} MiB",
        outcomes.len() as f64 / elapsed,
        errors.len(),
        rss_after_warmup / 1024,
        rss_end / 1024
    );
    assert!(
        errors.is_empty(),
        "{} of {} requests failed, first: {}",
        errors.len(),
        outcomes.len(),
        errors[0]
    );
    assert!(outcomes.len() >= CLIENTS, "every client got answers: {}", outcomes.len());
    let growth = rss_end as f64 / rss_after_warmup as f64;
    assert!(growth <= 1.10, "RSS grew {:.1}% after the warm-up", (growth - 1.0) * 100.0);
    server.stop();
}
