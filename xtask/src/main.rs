//! Project automation: `cargo xtask <command>`.
//!
//! - `ci`: provisions what the tests need, then fmt --check, clippy -D warnings, every test.
//! - `setup`: provisions the ONNX Runtime library and the embedding model into the cache.
//! - `eval`, `bench`: run `retold-eval` as a release build (figures of a debug build mean
//!   nothing), passing the arguments through.
//! - `openapi`: writes `docs/openapi.json`.
//!
//! The xtask stays light (it links no part of the service), so `cargo xtask setup` on a fresh
//! clone compiles in seconds; `xtask/tests/tidy.rs` checks it.

mod int8;
mod postgres;
mod setup;

use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = args.split_first().map(|(c, r)| (c.as_str(), r)).unwrap_or(("help", &[]));
    match command {
        "ci" => ci(rest),
        "setup" => setup::run(rest),
        "postgres" => postgres::run(rest),
        "bench" => release_eval("bench", rest),
        "openapi" => openapi(rest),
        "clients" => clients(rest),
        "eval" => release_eval("eval", rest),
        "reliability" => reliability(rest),
        "help" | "--help" | "-h" => {
            print_help();
            Ok(())
        }
        other => {
            print_help();
            bail!("unknown command {other:?}")
        }
    }
}

fn print_help() {
    eprintln!(
        "usage: cargo xtask <command>\n\n\
         commands:\n  \
         setup   provision libonnxruntime and the embedding model into the cache (idempotent)\n  \
         ci      setup, then cargo fmt --check, clippy -D warnings and every test (with a private PostgreSQL server)\n  \
         postgres start|stop|url: the private PostgreSQL server the tests use (start prints its URL variable)\n  \
         reliability [crash|bad-input|authz|disk-full|fuzz|load|ops] [--trials N]: the reliability suite in full (default: every part)\n  \
         bench   [pipeline|index|store|stores|http|ops] [--large] [--out FILE]: speed and memory figures (release build; stores: SQLite beside PostgreSQL; http --replicas 2: two servers on one PostgreSQL database)\n  \
         openapi write docs/openapi.json (from `retold openapi`; CI fails when it drifts)\n  \
         clients regenerate the typed clients from docs/openapi.json into crates/adapters/clients (CI fails when they drift)\n  \
         eval    locomo|longmemeval [--data PATH] [--out FILE] [--limit N] [--store sqlite|postgres] [--trace DIR] [--question ID]: retrieval quality (release build)"
    );
}

fn ci(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("ci takes no arguments");
    }
    setup::for_tests()?;
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"])?;
    // The PostgreSQL store's tests (and the HTTP tests on PostgreSQL) need a server: a fresh
    // private one, stopped afterwards whether the tests passed or not.
    let url = postgres::start()?;
    let tested = test_with_postgres(&url);
    let stopped = postgres::stop();
    tested?;
    stopped?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// The HTTP tests that run a second time on PostgreSQL (`RETOLD_TEST_BACKEND=postgres`):
/// every end-to-end test of behaviour, not those of SQLite's own files (crash recovery of
/// the file, a full disk, byte-identical files after refused input, file snapshots, the
/// inspector's snapshot page) nor the slow framework adapters, which change nothing per store.
const POSTGRES_HTTP_TESTS: &[&str] = &[
    "api::",
    "e2e::",
    "idempotency::",
    "authz::",
    "activation::",
    "orchestrator::",
    "extraction::",
    "mcp::",
    "cli::",
    "telemetry::",
    "turns::",
    "import::",
];

/// Every test (the PostgreSQL store's own against the server at `url`), then the HTTP
/// end-to-end tests again on PostgreSQL.
fn test_with_postgres(url: &str) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let run = |args: &[&str], backend: Option<&str>| -> Result<()> {
        eprintln!(
            "$ {}cargo {}",
            backend.map(|b| format!("RETOLD_TEST_BACKEND={b} ")).unwrap_or_default(),
            args.join(" ")
        );
        let mut command = Command::new(&cargo);
        command.args(args).current_dir(workspace_root()).env(retold_provision::TEST_POSTGRES_URL, url);
        if let Some(backend) = backend {
            command.env("RETOLD_TEST_BACKEND", backend);
        }
        let status = command.status().with_context(|| format!("running cargo {}", args.join(" ")))?;
        if !status.success() {
            bail!("cargo {} failed ({status})", args.join(" "));
        }
        Ok(())
    };
    run(&["test", "--workspace", "--all-targets", "--locked"], None)?;
    let mut args = vec!["test", "-p", "retold-http", "--test", "it", "--locked", "--"];
    args.extend(POSTGRES_HTTP_TESTS);
    run(&args, Some("postgres"))
}

/// The reliability suite's parts: (name, test filter, what the full run sets). Each is an
/// integration test of the real service in `crates/http/tests/it`; `cargo xtask ci` runs them
/// all in a short form (their defaults).
type Part = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const RELIABILITY_PARTS: &[Part] = &[
    ("crash", "crash::", &[]),
    ("bad-input", "bad_input::", &[]),
    ("authz", "authz::", &[("RETOLD_AUTHZ_CASES", "10000")]),
    ("disk-full", "disk_full::", &[]),
    ("fuzz", "fuzz::", &[("RETOLD_FUZZ_EXAMPLES", "1000")]),
    ("load", "load::", &[("RETOLD_LOAD_SECS", "60")]),
    ("ops", "ops_under_load::", &[("RETOLD_OPS_ERASURES", "20")]),
];

/// `cargo xtask reliability [PART ...] [--trials N]`: the reliability suite's parts in their
/// full form (default: every part, 50 crash trials), then a table of what held.
fn reliability(args: &[String]) -> Result<()> {
    let names: Vec<&str> = RELIABILITY_PARTS.iter().map(|p| p.0).collect();
    let mut parts: Vec<&str> = Vec::new();
    let mut trials = "50".to_owned();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--trials" => trials = it.next().context("--trials needs a number")?.clone(),
            part if names.contains(&part) => {
                parts.push(names[names.iter().position(|n| *n == part).unwrap()])
            }
            other => bail!(
                "unknown reliability argument {other:?}; usage: cargo xtask reliability [{}] [--trials N]",
                names.join("|")
            ),
        }
    }
    if parts.is_empty() {
        parts = names.clone();
    }
    setup::for_tests()?;
    let release_parts = ["fuzz", "load", "ops"];
    if parts.iter().any(|p| release_parts.contains(p)) {
        // The load part measures the release build; the fuzz part runs 20k requests.
        cargo(&["build", "--release", "-p", "retold-http", "--bin", "retold"])?;
    }
    let mut held = Vec::new();
    for part in parts {
        let (_, filter, env) = RELIABILITY_PARTS.iter().find(|p| p.0 == part).expect("a known part");
        let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
        command
            .args(["test", "-p", "retold-http", "--test", "it", filter, "--", "--nocapture"])
            .env("RETOLD_CRASH_TRIALS", &trials)
            .envs(env.iter().copied())
            .current_dir(workspace_root());
        if release_parts.contains(&part) {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("target"));
            command.env("RETOLD_TEST_BINARY", target.join("release/retold"));
        }
        let status = command.status().with_context(|| format!("running the {part} part"))?;
        held.push((part, status.success()));
    }
    println!("\n| part | held |\n|---|---|");
    for (part, ok) in &held {
        println!("| {part} | {} |", if *ok { "yes" } else { "NO" });
    }
    if held.iter().any(|(_, ok)| !ok) {
        bail!("a reliability part failed");
    }
    Ok(())
}

/// `cargo run --release -p retold-eval -- <command> <args>`: evaluations and benchmarks
/// link the whole service, so they live in their own crate and always build in release.
fn release_eval(command: &str, args: &[String]) -> Result<()> {
    if command == "bench"
        && args.first().is_some_and(|a| a == "http" || a == "turns" || a == "writes" || a == "roundtrip")
    {
        // The HTTP benchmarks drive the real `retold serve`, the release binary beside it.
        cargo(&["build", "--release", "-p", "retold-http", "--bin", "retold"])?;
    }
    let mut cargo_args = vec!["run", "--release", "-p", "retold-eval", "--", command];
    cargo_args.extend(args.iter().map(String::as_str));
    let on_postgres = args.windows(2).any(|w| w[0] == "--store" && w[1] == "postgres")
        || (command == "bench" && args.iter().any(|a| a == "stores"))
        || args.windows(2).any(|w| w[0] == "--replicas" && w[1] != "1");
    if !on_postgres {
        return cargo(&cargo_args);
    }
    // PostgreSQL runs get a private server for the run (stopped afterwards).
    let url = postgres::start()?;
    let ran = {
        let cargo_bin = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        eprintln!("$ cargo {}", cargo_args.join(" "));
        Command::new(cargo_bin)
            .args(&cargo_args)
            .current_dir(workspace_root())
            .env(retold_provision::TEST_POSTGRES_URL, &url)
            .status()
            .context("running retold-eval")
    };
    let stopped = postgres::stop();
    let ran = ran?;
    stopped?;
    if !ran.success() {
        bail!("retold-eval {command} failed ({ran})");
    }
    Ok(())
}

/// `cargo xtask clients`: regenerate the typed clients from `docs/openapi.json` (run
/// `cargo xtask openapi` first after an API change) with `scripts/generate-clients.sh`.
fn clients(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("clients takes no arguments");
    }
    setup::for_tests()?;
    let generator = retold_provision::python_tool("openapi-python-client").executable();
    let status = std::process::Command::new("bash")
        .arg(workspace_root().join("scripts/generate-clients.sh"))
        .env("OPENAPI_PYTHON_CLIENT", generator)
        .current_dir(workspace_root())
        .status()
        .context("running scripts/generate-clients.sh")?;
    if !status.success() {
        bail!("scripts/generate-clients.sh failed ({status})");
    }
    eprintln!("wrote {}", workspace_root().join("crates/adapters/clients").display());
    Ok(())
}

fn openapi(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("openapi takes no arguments");
    }
    // The document comes from the binary, so the xtask never links the service.
    let json = cargo_stdout(&["run", "--quiet", "-p", "retold-http", "--bin", "retold", "--", "openapi"])?;
    let path = workspace_root().join("docs/openapi.json");
    let mut text = json.trim_end().to_owned();
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Run cargo with the workspace root as working directory; fail when it fails.
pub(crate) fn cargo(args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Run cargo like [`cargo`], returning what it printed on stdout.
fn cargo_stdout(args: &[&str]) -> Result<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let out = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    if !out.status.success() {
        bail!("cargo {} failed ({})", args.join(" "), out.status);
    }
    String::from_utf8(out.stdout).context("the output is not UTF-8")
}

/// The workspace root (the parent of this crate).
pub(crate) fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}
