//! Re-embedding with floor-recalibration refusal, on the real binary and a real store: a run
//! beside the running service is killed with `kill -9` and resumed; the switch is refused
//! while the service runs and without a calibration, then done; the service refuses to start
//! on the old model, and starts on the new one with every record's vector.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use retold_domain::{EmbeddingModelInfo, EmbeddingSource, Reembedding};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use serde_json::{Value, json};

use crate::e2e::{start, start_configured};

const KEY: &str = "reembed-admin-key";

fn binary() -> std::ffi::OsString {
    std::env::var_os("RETOLD_TEST_BINARY").unwrap_or_else(|| env!("CARGO_BIN_EXE_retold").into())
}

pub(crate) fn retold(args: &[&str], data_dir: &std::path::Path) -> Output {
    Command::new(binary())
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("RETOLD__TELEMETRY__LOG_FILTER", "warn")
        .output()
        .expect("retold runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The next model: the same files with CLS pooling, so every vector changes, under a version
/// above the served one ([`crate::served_model`], 2).
pub(crate) const NEXT: &str = "embedding:\n  version: 3\n  pooling: cls\n";

fn next_model() -> EmbeddingModelInfo {
    EmbeddingModelInfo { name: "sentence-transformers/all-MiniLM-L6-v2".into(), version: 3, dims: 384 }
}

/// The served model's version.
pub(crate) fn served_version() -> u32 {
    crate::served_model().1
}

pub(crate) fn calibration_entry(version: u32) -> String {
    format!(
        "  - model: \"sentence-transformers/all-MiniLM-L6-v2\"\n    version: {version}\n    dims: 384\n    \
         dense_floor: 0.30\n    duplicate_collapse_floor: 0.95\n    entail_floor: 0.35\n    \
         same_meaning_floor: 0.90\n    source: \"test\"\n"
    )
}

struct Client {
    http: reqwest::blocking::Client,
    url: String,
    key: String,
}

impl Client {
    fn post(&self, path: &str, body: Value) -> Value {
        let response =
            self.http.post(format!("{}{path}", self.url)).bearer_auth(&self.key).json(&body).send().unwrap();
        let status = response.status();
        let body: Value = response.json().unwrap();
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    fn write(&self, n: usize) {
        self.post(
            "/v1/memory/write",
            json!({"principal": {"agent_id": "research-agent", "user_id": "aditya"}, "type": "semantic",
                "content": format!("Build {n} of the reembed probe cached artifact number {n}.{}",
                    // Every tenth record has a second sentence, so sentence vectors too.
                    if n.is_multiple_of(10) { " Its checksum matched the manifest." } else { "" }),
                "scope": "user:aditya", "source_kind": "system"}),
        );
    }

    fn search(&self, query: &str) -> Value {
        self.post(
            "/v1/memory/search",
            json!({"principal": {"agent_id": "research-agent", "user_id": "aditya"}, "query": query}),
        )
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_model_switch_is_staged_resumed_after_kill_9_refused_until_calibrated_and_then_served() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let next = dir.path().join("next.yaml");
    std::fs::write(&next, NEXT).unwrap();
    let server = start(&data, KEY);
    let host = server.host_key(KEY);
    retold_hosted::install_tls_provider();
    let client = Client { http: reqwest::blocking::Client::new(), url: server.url.clone(), key: host };
    let admin = Client { http: client.http.clone(), url: server.url.clone(), key: KEY.into() };
    admin.post(
        "/v1/admin/grants",
        json!({"agent_id": "research-agent", "scope": "user:aditya", "can_read": true, "can_write": true}),
    );
    let records = 400;
    for n in 0..records {
        client.write(n);
    }
    let rt = runtime();
    let store = rt.block_on(SqliteStore::open(&StoreConfig::new(data.join("retold.db")))).unwrap();
    let counts = || rt.block_on(store.reembed_counts(&next_model())).unwrap();
    assert_eq!(counts().live, records as u64);

    // A run beside the running service, killed with -9 once it has staged some.
    let mut child = Command::new(binary())
        .args(["ops", "reembed", "--batch", "4", "--config"])
        .arg(&next)
        .arg("--data-dir")
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while counts().staged < 40 {
        assert!(Instant::now() < deadline, "the re-embedding made no progress");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let interrupted = counts();
    assert!(interrupted.staged >= 40 && interrupted.staged < records as u64, "{interrupted:?}");
    // The service kept serving its model meanwhile.
    let found = client.search("reembed probe build 17");
    assert!(!found["results"].as_array().unwrap().is_empty(), "{found}");

    // Resumed: only what the first run did not stage is embedded.
    let out = retold(&["ops", "reembed", "--config", next.to_str().unwrap()], &data);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["already_staged"], interrupted.staged, "{report}");
    assert_eq!(report["embedded"], records as u64 - interrupted.staged, "{report}");
    assert_eq!((report["staged"].as_u64(), report["live"].as_u64()), (Some(400), Some(400)), "{report}");
    // Written after the run: staged at the switch.
    for n in records..records + 5 {
        client.write(n);
    }

    // Refused without a calibration for the new model; nothing changes.
    let out = retold(&["ops", "switch-model", "--config", next.to_str().unwrap()], &data);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("no calibration is recorded for sentence-transformers/all-MiniLM-L6-v2 v3"),
        "{}",
        text(&out)
    );
    let served = rt.block_on(store.stored_models()).unwrap();
    assert_eq!(served.len(), 1);
    assert_eq!((served[0].0.version, served[0].1), (served_version(), records as u64 + 5));
    // The service refuses the uncalibrated model too.
    let out = retold(&["serve", "--listen", "127.0.0.1:0", "--config", next.to_str().unwrap()], &data);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("no calibration is recorded"), "{}", text(&out));

    // A floor set by hand for the old model would survive the switch: refused.
    let overridden = format!(
        "{NEXT}retrieval:\n  gate:\n    dense_floor: 0.42\ncalibrations:\n{}{}",
        calibration_entry(served_version()),
        calibration_entry(3)
    );
    std::fs::write(&next, overridden).unwrap();
    let out = retold(&["ops", "switch-model", "--config", next.to_str().unwrap()], &data);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("retrieval.gate.dense_floor = 0.42 (calibrated 0.3)"), "{}", text(&out));

    // Calibrated, but refused while the service runs on the data directory.
    let calibrated =
        format!("{NEXT}calibrations:\n{}{}", calibration_entry(served_version()), calibration_entry(3));
    std::fs::write(&next, calibrated).unwrap();
    let out = retold(&["ops", "switch-model", "--config", next.to_str().unwrap()], &data);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("a retold service is running"), "{}", text(&out));
    server.stop();

    // Stopped: the switch embeds the five late records and swaps every vector in.
    let out = retold(&["ops", "switch-model", "--config", next.to_str().unwrap()], &data);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["switched"].as_u64(), report["caught_up"].as_u64()), (Some(405), Some(5)), "{report}");
    let served = rt.block_on(store.compatible_embeddings(&next_model().name, 3, 384)).unwrap();
    assert_eq!((served.keys.len(), served.incompatible), (405, 0));
    // The switch carried the records' sentence vectors of the new model: two for every
    // two-sentence record, none for the rest.
    let two = served.sentence_counts.iter().filter(|&&c| c == 2).count();
    assert_eq!(two, served.sentence_counts.iter().filter(|&&c| c > 0).count());
    assert!(two >= records / 10, "{two} records with sentence vectors");
    assert_eq!(served.sentences.len(), two * 2 * 384);
    rt.block_on(store.clone().close()).unwrap();

    // The old configuration is refused now: its vectors are gone.
    let out = retold(&["serve", "--listen", "127.0.0.1:0"], &data);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("the store holds vectors of sentence-transformers/all-MiniLM-L6-v2 v3"),
        "{}",
        text(&out)
    );

    // The new one serves every record, dense channel included.
    let server = start_configured(&data, KEY, &[], Some(&next));
    let client = Client { url: server.url.clone(), key: server.host_key(KEY), ..admin };
    let found = client.search("reembed probe build 402");
    let first = &found["results"][0];
    assert!(first["record"]["content"].as_str().unwrap().contains("Build 402 "), "{found}");
    assert!(first["explanation"].as_str().unwrap().contains("dense "), "{found}");
    server.stop();
}

#[test]
fn calibrate_scores_the_pairs_and_writes_the_configuration_and_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("next.yaml");
    // Another model identity over the same files, in a file with its own settings.
    std::fs::write(&config, "# the next model\nembedding:\n  version: 7\nretrieval:\n  default_limit: 12\n")
        .unwrap();
    let doc = dir.path().join("calibration.md");
    std::fs::write(&doc, "# Calibration\n\nHand-written notes stay.\n").unwrap();
    let locomo = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/fixtures/locomo-tiny.json");
    let run = || {
        let out = Command::new(binary())
            .args(["ops", "calibrate", "--config"])
            .arg(&config)
            .args(["--locomo", locomo, "--doc"])
            .arg(&doc)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let report = run();
    // The labelled pairs separate under MiniLM at the shipped values.
    assert_eq!(
        (&report["entail_floor"], &report["same_meaning_floor"], &report["duplicate_collapse_floor"]),
        (&json!(0.35), &json!(0.9), &json!(0.95)),
        "{report}"
    );
    assert_eq!(report["locomo_questions"], 5, "{report}");
    // Written into the configuration, which still holds its own settings and now calibrates
    // its model (the defaults' calibrations, versions 1 and 2, are kept beside it).
    let settings = retold_http::Settings::load(Some(&config)).unwrap();
    assert_eq!(settings.retrieval.default_limit, 12);
    let calibration = settings.calibration().expect("version 7 is calibrated");
    assert_eq!(calibration.dense_floor, report["dense_floor"].as_f64().unwrap());
    assert_eq!(settings.thresholds().unwrap().entail_floor, 0.35);
    assert!(settings.calibrations.iter().any(|c| c.version == 1));
    assert!(settings.calibrations.iter().any(|c| c.version == served_version()));
    // Into the table: one row per model, replaced on a re-run.
    run();
    let table = std::fs::read_to_string(&doc).unwrap();
    assert!(table.starts_with("# Calibration\n\nHand-written notes stay.\n"), "{table}");
    assert_eq!(table.matches("| sentence-transformers/all-MiniLM-L6-v2 | 7 | 384 |").count(), 1, "{table}");
    assert_eq!(retold_http::Settings::load(Some(&config)).unwrap().calibrations.len(), 3);
}

/// A store written before sentence vectors (here: with `embedding.sentence_vectors: 0`) has
/// none. Re-embedding with the served model is refused with a pointer to `--refresh`, and so
/// is a switch to it with nothing staged (it would re-embed the whole store with the service
/// stopped). With `--refresh` every record is staged again beside the running service; the
/// switch embeds what was written meanwhile and gives each record of two sentences its two
/// sentence vectors, which the service then serves. A floor set by hand does not stop a
/// refresh: the model stays.
#[test]
fn a_refresh_gives_records_written_before_sentence_vectors_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let before = dir.path().join("before.yaml");
    std::fs::write(&before, "embedding:\n  sentence_vectors: 0\nretrieval:\n  fusion:\n    sentences: 0.0\n")
        .unwrap();
    let shipped = dir.path().join("shipped.yaml");
    std::fs::write(
        &shipped,
        "embedding:\n  sentence_vectors: 16\nretrieval:\n  gate:\n    dense_floor: 0.32\n",
    )
    .unwrap();
    let shipped = shipped.to_str().unwrap();
    let server = start_configured(&data, KEY, &[], Some(&before));
    retold_hosted::install_tls_provider();
    let admin = Client { http: reqwest::blocking::Client::new(), url: server.url.clone(), key: KEY.into() };
    admin.post(
        "/v1/admin/grants",
        json!({"agent_id": "research-agent", "scope": "user:aditya", "can_read": true, "can_write": true}),
    );
    let client = Client { key: server.host_key(KEY), ..admin };
    let records = 40;
    for n in 0..records {
        client.write(n);
    }
    server.stop();
    let rt = runtime();
    let store = rt.block_on(SqliteStore::open(&StoreConfig::new(data.join("retold.db")))).unwrap();
    let model = "sentence-transformers/all-MiniLM-L6-v2";
    let served = || rt.block_on(store.compatible_embeddings(model, served_version(), 384)).unwrap();
    assert_eq!(served().keys.len(), records);
    assert!(served().sentences.is_empty(), "written without sentence vectors");

    // Without `--refresh`: refused, both the re-embedding and a switch with nothing staged.
    for command in ["reembed", "switch-model"] {
        let out = retold(&["ops", command, "--config", shipped], &data);
        assert!(!out.status.success(), "{command}: {}", text(&out));
        assert!(
            text(&out).contains("already serves") && text(&out).contains("reembed --refresh"),
            "{}",
            text(&out)
        );
    }
    assert!(served().sentences.is_empty());

    // Beside the running service: every record staged again; one more written meanwhile.
    let server = start_configured(&data, KEY, &[], Some(&before));
    let client = Client { url: server.url.clone(), key: server.host_key(KEY), ..client };
    let out = retold(&["ops", "reembed", "--refresh", "--config", shipped], &data);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["embedded"].as_u64(), report["staged"].as_u64()), (Some(40), Some(40)), "{report}");
    client.write(records + 10);
    server.stop();
    // Staged only: the served rows are unchanged until the switch.
    assert!(served().sentences.is_empty());

    let out = retold(&["ops", "switch-model", "--config", shipped], &data);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["switched"].as_u64(), report["caught_up"].as_u64()), (Some(41), Some(1)), "{report}");
    let after = served();
    assert_eq!((after.keys.len(), after.incompatible), (records + 1, 0));
    // Every tenth record has two sentences (the late one too): two sentence vectors each;
    // the rest none.
    let counts: Vec<u32> = after.sentence_counts.clone();
    assert_eq!(counts.iter().filter(|&&c| c == 2).count(), records / 10 + 1, "{counts:?}");
    assert_eq!(counts.iter().filter(|&&c| c != 0 && c != 2).count(), 0, "{counts:?}");
    rt.block_on(store.clone().close()).unwrap();

    // The shipped configuration serves them, weighing sentences in.
    let server = start_configured(&data, KEY, &[], Some(std::path::Path::new(shipped)));
    let client =
        Client { http: reqwest::blocking::Client::new(), url: server.url.clone(), key: server.host_key(KEY) };
    let found = client.search("whose checksum matched the manifest?");
    let first = found["results"][0]["record"]["content"].as_str().unwrap_or_default();
    assert!(first.contains("Its checksum matched the manifest."), "{found}");
    // The dense channel weighed the refreshed records' sentences: its trace names them.
    let id = found["search_id"].as_str().unwrap();
    let trace: Value = client
        .http
        .get(format!("{}/v1/admin/search-log/{id}", client.url))
        .bearer_auth(KEY)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(trace.to_string().contains("best sentence"), "{trace}");
    server.stop();
}
