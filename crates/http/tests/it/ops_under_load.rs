//! Operations while the service is busy (`cargo xtask reliability ops`): 8 clients run the load
//! mix (searches 50%, gets 20%, writes 20%, session turns 10%) against the real `retold serve`
//! while the operations run, first one after another (erasure of a user with compaction,
//! `RETOLD_OPS_ERASURES` times, then snapshot, verify, expiry, retention, due-review flagging),
//! then re-embedding to a second model in its own process, then overlapping (an erasure, a
//! snapshot and a check at once). Pass: no request failed; every acknowledged write is there
//! afterwards, every erased user's record is a tombstone; no erased user's byte is left in the
//! store's files; the store checks clean; a user the operations never touched gets the same
//! search results before and after. Prints the load mix's latency during each operation beside
//! the quiet figure. Then the switch to the second model, which is offline: the service is
//! stopped, switched and started on it, and every acknowledged write is there again.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::e2e::{start, start_configured};
use crate::load::percentile;
use crate::operations::files_holding;
use crate::reembed::retold;

const KEY: &str = "ops-load-admin-key";
const CLIENTS: usize = 8;
const AGENT: &str = "ops-agent";

/// The phases the load's latency is reported by, in order.
const PHASES: [&str; 9] =
    ["quiet", "erase", "snapshot", "verify", "expire", "retention", "flag-reviews", "reembed", "overlapping"];

/// The second model ([`crate::reembed::NEXT`]), calibrated for both versions so the switch is
/// allowed.
fn next_model_config() -> String {
    use crate::reembed::{NEXT, calibration_entry, served_version};
    format!("{NEXT}calibrations:\n{}{}", calibration_entry(served_version()), calibration_entry(3))
}

struct Api {
    http: Client,
    url: String,
}

impl Api {
    fn call(&self, key: &str, path: &str, body: &Value) -> Result<Value, String> {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(key)
            .json(body)
            .send()
            .map_err(|e| format!("{path}: {e}"))?;
        let status = response.status();
        let text = response.text().map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{path}: {status}: {text}"));
        }
        serde_json::from_str(&text).map_err(|e| e.to_string())
    }

    fn admin(&self, path: &str, body: Value) -> Value {
        self.call(KEY, path, &body).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn principal(user: &str) -> Value {
    json!({"agent_id": AGENT, "user_id": user})
}

fn note(user: &str, content: String) -> Value {
    json!({"principal": principal(user), "type": "semantic", "content": content,
        "scope": format!("user:{user}"), "source_kind": "system"})
}

/// A victim's unique token: on disk before its erasure, nowhere after.
fn token(victim: usize) -> String {
    format!("gonetok{victim}zq")
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

struct Outcome {
    phase: usize,
    millis: f64,
    error: Option<String>,
}

#[test]
fn every_operation_runs_beside_eight_clients_without_a_failed_request_or_a_lost_write() {
    let erasures: usize = std::env::var("RETOLD_OPS_ERASURES").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = start(&data, KEY);
    retold_hosted::install_tls_provider();
    let api = Api {
        http: Client::builder().timeout(Duration::from_secs(120)).build().unwrap(),
        url: server.url.clone(),
    };
    let next = dir.path().join("next.yaml");
    std::fs::write(&next, next_model_config()).unwrap();
    let victims: Vec<String> = (0..=erasures).map(|v| format!("gone{v}")).collect();
    for user in victims.iter().map(String::as_str).chain(["keep", "still"]) {
        api.admin(
            "/v1/admin/grants",
            json!({"agent_id": AGENT, "scope": format!("user:{user}"), "can_read": true, "can_write": true}),
        );
    }
    let host =
        api.admin("/v1/admin/host-keys", json!({"name": "ops-load"}))["key"].as_str().unwrap().to_owned();
    let write = |body: &Value| api.call(&host, "/v1/memory/write", body).unwrap_or_else(|e| panic!("{e}"));

    // Each victim's notes (and one session turn), a user nobody touches, the load user's seed.
    let mut erased_ids: Vec<String> = Vec::new();
    for (v, victim) in victims.iter().enumerate() {
        for n in 0..5 {
            let content = format!("{victim} filed invoice {n} under the {} folder in the archive.", token(v));
            erased_ids.push(write(&note(victim, content))["record_id"].as_str().unwrap().to_owned());
        }
    }
    let still_notes = [
        "The greenhouse thermostat is set to eighteen degrees at night.",
        "Marta waters the orchids every Thursday morning.",
        "The compost bin by the shed is emptied in October.",
        "Seed packets are stored in the tin box on the top shelf.",
        "The tomato seedlings go outside after the last frost in May.",
        "The rain barrel overflow pipe was replaced last spring.",
    ];
    for content in still_notes {
        write(&note("still", content.to_owned()));
    }
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    for n in 0..32 {
        let content = format!("Load note {n}: the nightly build of service {n} runs at {} o'clock.", n % 12);
        let id = write(&note("keep", content.clone()))["record_id"].as_str().unwrap().to_owned();
        acked.lock().unwrap().push((id, content));
    }
    let still_queries =
        ["When are the orchids watered?", "Where are the seed packets?", "greenhouse temperature at night"];
    let still_results = |api: &Api| -> Vec<Vec<String>> {
        still_queries
            .iter()
            .map(|q| {
                let body = json!({"principal": principal("still"), "query": q, "limit": 5});
                let answer = api.call(&host, "/v1/memory/search", &body).unwrap_or_else(|e| panic!("{e}"));
                answer["results"].as_array().unwrap().iter().map(|r| r["record"]["id"].to_string()).collect()
            })
            .collect()
    };
    let before = still_results(&api);
    for (v, victim) in victims.iter().enumerate() {
        let session = api.call(&host, "/v1/sessions", &json!({"principal": principal(victim)})).unwrap();
        let turn = json!({"principal": principal(victim), "role": "user",
            "content": format!("Please remember the {} folder.", token(v))});
        let path = format!("/v1/sessions/{}/turns", session["id"].as_str().unwrap());
        api.call(&host, &path, &turn).unwrap_or_else(|e| panic!("{e}"));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let phase = Arc::new(AtomicUsize::new(0));
    let outcomes: Arc<Mutex<Vec<Outcome>>> = Arc::default();
    let mut took: Vec<(String, f64)> = Vec::new();
    std::thread::scope(|scope| {
        for c in 0..CLIENTS {
            let (api, host, acked, stop, phase, outcomes) = (&api, &host, &acked, &stop, &phase, &outcomes);
            scope.spawn(move || {
                let session = api
                    .call(host, "/v1/sessions", &json!({"principal": principal("keep")}))
                    .expect("a session for the client");
                let turns = format!("/v1/sessions/{}/turns", session["id"].as_str().unwrap());
                let mut n = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let at = phase.load(Ordering::Relaxed);
                    let started = Instant::now();
                    let result = match (c * 7 + n * 3) % 10 {
                        0..=4 => {
                            let body = json!({"principal": principal("keep"), "limit": 10,
                                "query": format!("when does the nightly build of service {} run?", n % 32)});
                            api.call(host, "/v1/memory/search", &body).map(|_| ())
                        }
                        5 | 6 => {
                            let id = {
                                let acked = acked.lock().unwrap();
                                acked[(c * 31 + n) % acked.len()].0.clone()
                            };
                            let body = json!({"principal": principal("keep"), "ids": [id]});
                            api.call(host, "/v1/memory/get", &body).map(|_| ())
                        }
                        7 | 8 => {
                            let content = format!("Client {c} noted item {n}: the queue {c}x{n} drained.");
                            api.call(host, "/v1/memory/write", &note("keep", content.clone())).map(|answer| {
                                let id = answer["record_id"].as_str().unwrap().to_owned();
                                acked.lock().unwrap().push((id, content));
                            })
                        }
                        _ => {
                            let content =
                                format!("Client {c} turn {n}: the report for batch {c}b{n} is ready.");
                            let body =
                                json!({"principal": principal("keep"), "role": "user", "content": content});
                            api.call(host, &turns, &body).map(|answer| {
                                if let Some(id) = answer["record_ids"][0].as_str() {
                                    acked.lock().unwrap().push((id.to_owned(), content));
                                }
                            })
                        }
                    };
                    let millis = started.elapsed().as_secs_f64() * 1000.0;
                    outcomes.lock().unwrap().push(Outcome { phase: at, millis, error: result.err() });
                }
            });
        }
        // However the operations end (a failed assertion too), the clients stop.
        let _stop = StopOnDrop(&stop);
        // A quick operation runs again until a second has passed, so the load has latency
        // figures beside it; an erasure (of a new user each time) and the overlap run once.
        let mut run = |name: &str, work: &mut dyn FnMut()| {
            phase.store(PHASES.iter().position(|p| *p == name).unwrap(), Ordering::Relaxed);
            let phase_began = Instant::now();
            loop {
                let started = Instant::now();
                work();
                took.push((name.to_owned(), started.elapsed().as_secs_f64() * 1000.0));
                let once = matches!(name, "quiet" | "erase" | "overlapping");
                if once || phase_began.elapsed() >= Duration::from_secs(1) {
                    break;
                }
            }
        };
        run("quiet", &mut || std::thread::sleep(Duration::from_secs(2)));
        for victim in &victims[..erasures] {
            run("erase", &mut || {
                let answer = api.admin("/v1/admin/ops/erase", json!({"user_id": victim}));
                assert_eq!(answer["erased"], 6, "five notes and a turn: {answer}");
            });
        }
        run("snapshot", &mut || {
            assert_eq!(api.admin("/v1/admin/ops/snapshot", json!({}))["check"]["ok"], true)
        });
        run("verify", &mut || {
            let check = api.admin("/v1/admin/ops/verify", json!({}));
            assert_eq!(check["ok"], true, "{check}");
        });
        run("expire", &mut || drop(api.admin("/v1/admin/ops/expire", json!({}))));
        run("retention", &mut || drop(api.admin("/v1/admin/ops/retention", json!({}))));
        run("flag-reviews", &mut || drop(api.admin("/v1/admin/ops/flag-reviews", json!({}))));
        // Re-embedding to the second model runs in its own process beside the service.
        run("reembed", &mut || {
            let out = retold(&["ops", "reembed", "--config", next.to_str().unwrap()], &data);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        });
        run("overlapping", &mut || {
            let last = &victims[erasures];
            std::thread::scope(|inner| {
                inner.spawn(|| {
                    let answer =
                        api.admin("/v1/admin/ops/erase", json!({"user_id": last, "rewrite_snapshots": true}));
                    assert_eq!(answer["erased"], 6, "{answer}");
                });
                inner.spawn(|| {
                    let snapshot = api.admin("/v1/admin/ops/snapshot", json!({}));
                    assert_eq!(snapshot["check"]["ok"], true, "{snapshot}");
                });
                inner.spawn(|| {
                    let check = api.admin("/v1/admin/ops/verify", json!({}));
                    assert_eq!(check["ok"], true, "{check}");
                });
            });
        });
    });

    let outcomes = outcomes.lock().unwrap();
    println!(
        "\n| during | requests | p50 ms | p99 ms | runs | operation ms p50 / max |\n|---|---|---|---|---|---|"
    );
    for (p, name) in PHASES.iter().enumerate() {
        let mut ms: Vec<f64> = outcomes.iter().filter(|o| o.phase == p).map(|o| o.millis).collect();
        ms.sort_by(f64::total_cmp);
        let mut op: Vec<f64> = took.iter().filter(|t| t.0 == *name).map(|t| t.1).collect();
        op.sort_by(f64::total_cmp);
        println!(
            "| {name} | {} | {:.1} | {:.1} | {} | {:.0} / {:.0} |",
            ms.len(),
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            op.len(),
            percentile(&op, 0.5),
            op.last().copied().unwrap_or(f64::NAN)
        );
    }
    let errors: Vec<&String> = outcomes.iter().filter_map(|o| o.error.as_ref()).collect();
    assert!(
        errors.is_empty(),
        "{} of {} requests failed, first: {:?}",
        errors.len(),
        outcomes.len(),
        &errors[..errors.len().min(3)]
    );

    // Every acknowledged write is there, as written; every erased record is a tombstone.
    let acked = acked.lock().unwrap();
    let every_write_is_there = |api: &Api| {
        for chunk in acked.chunks(50) {
            let ids: Vec<&str> = chunk.iter().map(|(id, _)| id.as_str()).collect();
            let answer = api
                .call(&host, "/v1/memory/get", &json!({"principal": principal("keep"), "ids": ids}))
                .unwrap_or_else(|e| panic!("{e}"));
            let records = answer["records"].as_array().unwrap();
            assert_eq!(records.len(), chunk.len(), "{answer}");
            for (record, (id, content)) in records.iter().zip(chunk) {
                assert_eq!(record["record"]["id"], json!(id));
                assert_eq!(record["record"]["content"], json!(content), "{record}");
            }
        }
    };
    every_write_is_there(&api);
    for (v, victim) in victims.iter().enumerate() {
        let ids = &erased_ids[v * 5..v * 5 + 5];
        let answer = api
            .call(&host, "/v1/memory/get", &json!({"principal": principal(victim), "ids": ids}))
            .unwrap_or_else(|e| panic!("{e}"));
        for record in answer["records"].as_array().unwrap() {
            assert_eq!(record["record"]["content"], "[erased]", "{record}");
        }
    }
    assert_eq!(still_results(&api), before, "the untouched user's results changed");
    let check = api.admin("/v1/admin/ops/verify", json!({}));
    assert!(check["ok"] == true && check["integrity"] == "ok", "{check}");
    // Not a byte of an erased user in the store's files or its snapshots.
    for v in 0..victims.len() {
        assert_eq!(files_holding(&data, token(v).as_bytes()), Vec::<String>::new(), "{}", token(v));
    }
    println!(
        "{CLIENTS} clients, {} requests, {} acknowledged writes checked, {} users erased",
        outcomes.len(),
        acked.len(),
        victims.len()
    );

    // The switch to the re-embedded model is offline (the service holds the data directory's
    // lock): stopped, switched (catching up what was written after the run), started on it.
    let down = Instant::now();
    server.stop();
    let out = retold(&["ops", "switch-model", "--config", next.to_str().unwrap()], &data);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let switched: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = start_configured(&data, KEY, &[], Some(&next));
    println!(
        "model switch: {} records switched ({} caught up), service down {:.1} s (stop, switch, start)",
        switched["switched"],
        switched["caught_up"],
        down.elapsed().as_secs_f64()
    );
    let api = Api { http: api.http.clone(), url: server.url.clone() };
    every_write_is_there(&api);
    assert!(
        still_results(&api).iter().all(|ids| !ids.is_empty()),
        "the new model finds the untouched user's notes"
    );
    assert_eq!(api.admin("/v1/admin/ops/verify", json!({}))["ok"], true);
    server.stop();
}
