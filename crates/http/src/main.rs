//! The `retold` binary: `retold serve|ops|openapi|version`, `--help` on every level.
//!
//! Exit codes: 0 done; 1 the service could not start or failed (one message on stderr);
//! 2 the command line was wrong (clap's usage message).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

mod import_cli;

use clap::{Args, Parser, Subcommand, ValueEnum};
use retold_http::{LogFormat, ServeError, Settings, init_telemetry, serve};

/// Retold: long-term memory for AI agents, served over HTTP.
#[derive(Debug, Parser)]
#[command(name = "retold", version, propagate_version = true, arg_required_else_help = true)]
struct Cli {
    /// Log lines on stderr: auto is human-readable text on a terminal and JSON otherwise.
    /// Overrides telemetry.log_format.
    #[arg(long, global = true, value_enum, value_name = "FORMAT", display_order = 900)]
    log_format: Option<LogFormatArg>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the service and run until SIGINT or SIGTERM.
    Serve(ServeArgs),
    /// Run a maintenance operation: on a running service with the admin key, or offline on the
    /// store file (reembed, calibrate, switch-model, restore).
    Ops(OpsArgs),
    /// Serve the five memory tools over MCP's stdio transport for one principal, on the
    /// embedded store (for desktop MCP clients; `serve` offers MCP over HTTP at /mcp).
    Mcp(McpArgs),
    /// Import memories into a running service (POST /v1/memory/import): JSON lines of
    /// memory_write bodies, or Mem0's export with --from mem0. Bad lines are listed with
    /// their line numbers and never stop the rest; run again to resume (nothing is written
    /// twice).
    Import(import_cli::ImportArgs),
    /// Export a user's or a scope's memories from a running service (GET /v1/admin/export)
    /// as JSON lines: records with their history, entities, links and conflicts, no
    /// embeddings. `retold import` restores the file into any store as it was.
    Export(ExportArgs),
    /// Print the OpenAPI document (JSON) that the service serves at /openapi.json.
    Openapi,
    /// Print the version.
    Version,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on, HOST:PORT (overrides server.listen).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Data directory holding the SQLite file (overrides server.data_dir).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// A YAML file layered over the embedded defaults; RETOLD__SECTION__KEY variables
    /// override both.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("whose").required(true).multiple(false))]
struct ExportArgs {
    /// Every record of a user: `user:<u>` and every `agent:*/<u>`.
    #[arg(long, group = "whose")]
    user: Option<String>,
    /// Every record of one scope (`project:p`, …).
    #[arg(long, group = "whose")]
    scope: Option<String>,
    /// Write here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The running service's base URL.
    #[arg(long, env = "RETOLD_URL", default_value = "http://127.0.0.1:8420")]
    url: String,
    /// The admin key.
    #[arg(long, env = "RETOLD_ADMIN_KEY", hide_env_values = true)]
    admin_key: String,
}

#[derive(Debug, Args)]
struct McpArgs {
    /// The agent every call acts as.
    #[arg(long = "agent", env = "RETOLD_AGENT_ID", value_name = "AGENT")]
    agent_id: String,
    /// The user every call acts for.
    #[arg(long = "user", env = "RETOLD_USER_ID", value_name = "USER")]
    user_id: String,
    /// The project, if any.
    #[arg(long = "project", env = "RETOLD_PROJECT_ID", value_name = "PROJECT")]
    project_id: Option<String>,
    /// A host key allowed to act as the agent; without one, a key is created on the first
    /// start and kept in the data directory.
    #[arg(long, env = "RETOLD_HOST_KEY", hide_env_values = true)]
    key: Option<String>,
    /// Data directory holding the SQLite file (overrides server.data_dir).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// A YAML file layered over the embedded defaults.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct OpsArgs {
    /// The running service's base URL.
    #[arg(long, env = "RETOLD_URL", default_value = "http://127.0.0.1:8420", global = true)]
    url: String,
    /// The admin key.
    #[arg(long, env = "RETOLD_ADMIN_KEY", hide_env_values = true, global = true)]
    admin_key: Option<String>,
    #[command(subcommand)]
    operation: Operation,
}

#[derive(Debug, Subcommand)]
enum Operation {
    /// Erase a record, a user or a scope for good (content, evidence, embeddings, FTS rows,
    /// the search traces and audit details that quote it), then compact the store so the
    /// bytes are gone. Prints what was removed and the store's size before and after.
    /// Blocks writes while it compacts (searches go on): 100 records (a scope) took 0.4 s at
    /// 10k records, 1.5 s at 50k, writes waiting up to 0.4 s / 1.3 s (docs/operations.md).
    #[command(group = clap::ArgGroup::new("target").required(true).multiple(false))]
    Erase {
        /// One record (`mem_…`).
        #[arg(long, group = "target")]
        record: Option<String>,
        /// Every record of a user (`user:<u>`, every `agent:*/<u>`), their session turns and the
        /// entities of those scopes.
        #[arg(long, group = "target")]
        user: Option<String>,
        /// Every record of one scope (`project:p`, …) and its entities.
        #[arg(long, group = "target")]
        scope: Option<String>,
        /// Only count what would be erased.
        #[arg(long)]
        dry_run: bool,
        /// Also erase the records inside earlier snapshots that still hold them.
        #[arg(long)]
        rewrite_snapshots: bool,
    },
    /// Move provisional and confirmed records whose expires_at passed to expired. Writes wait
    /// only for its one transaction (milliseconds when little is due).
    Expire {
        /// Only list what is due.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete session turns older than operations.transcript_retention_days, in sessions whose
    /// extraction has run (records keep their own evidence), and search traces older than
    /// operations.search_trace_retention_days. Writes wait only for its deleting transactions
    /// (milliseconds when little is due).
    Retention {
        /// Only count what would be deleted.
        #[arg(long)]
        dry_run: bool,
        /// Also sessions whose extraction has not run.
        #[arg(long)]
        force: bool,
    },
    /// Flag records that need a person's look into the review queue (list and resolve them
    /// with GET /v1/admin/reviews and POST /v1/admin/reviews/{id}/resolve). Writes wait only
    /// for its one transaction (10 ms at 50k records).
    FlagReviews,
    /// Take a consistent snapshot while writes continue (into the data directory's
    /// snapshots/), then check it. Does not block writes: 0.4 s at 10k records, 1.5 s at 50k.
    Snapshot,
    /// Check the live store: integrity, and FTS rows and embeddings against records. Does not
    /// block writes (one read transaction): 0.25 s at 10k records, 1.0 s at 50k.
    Verify,
    /// Embed every live record with FILE's embedding model into staged vectors beside the
    /// served ones (offline, on the store file; the running service keeps serving its model).
    /// Resumable: an interrupted run keeps what it staged. Then calibrate and switch-model.
    Reembed {
        /// A configuration naming the new model (its embedding section) and the data directory.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Overrides FILE's server.data_dir.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Records per model run and per transaction.
        #[arg(long, default_value_t = 256)]
        batch: usize,
        /// Also when the store already serves FILE's model: embed every record again with it,
        /// so records written before sentence vectors (or under a smaller
        /// embedding.sentence_vectors) get theirs. Then switch-model, as for a new model.
        #[arg(long)]
        refresh: bool,
    },
    /// Compute the thresholds that depend on the embedding model (dense, duplicate-collapse,
    /// entailment and same-meaning floors) for FILE's model, from labelled pairs and LoCoMo
    /// dev; write them into FILE's `calibrations` and into the doc's table.
    Calibrate {
        /// The configuration naming the model; its `calibrations` list is rewritten.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// LoCoMo dev data.
        #[arg(long, value_name = "PATH", default_value = "../shared/data/locomo-dev.json")]
        locomo: PathBuf,
        /// The calibration document whose table gets the model's row.
        #[arg(long, value_name = "PATH", default_value = "docs/calibration.md")]
        doc: PathBuf,
    },
    /// With the service stopped: embed what the last reembed missed, then replace every stored
    /// vector with the staged vectors of FILE's model in one transaction. Refused without a
    /// calibration for that model in FILE, and while a service runs on the data directory.
    SwitchModel {
        /// The configuration naming the new model; start the service with it afterwards.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Overrides FILE's server.data_dir.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Restore a snapshot into a new data directory (offline: no service needed), then check it.
    Restore {
        /// The snapshot file.
        #[arg(long, value_name = "FILE")]
        snapshot: PathBuf,
        /// The new data directory; refused when it already holds a database.
        #[arg(long, value_name = "DIR")]
        data_dir: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormatArg {
    Auto,
    Text,
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(arg: LogFormatArg) -> Self {
        match arg {
            LogFormatArg::Auto => Self::Auto,
            LogFormatArg::Text => Self::Text,
            LogFormatArg::Json => Self::Json,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), Box<dyn std::error::Error>> = match cli.command {
        Command::Serve(args) => run_serve(args, cli.log_format).map_err(Into::into),
        Command::Ops(args) => run_ops(args),
        Command::Mcp(args) => run_mcp(args).map_err(Into::into),
        Command::Import(args) => import_cli::run(&args),
        Command::Export(args) => run_export(&args),
        Command::Openapi => {
            println!("{}", retold_http::openapi_json());
            Ok(())
        }
        Command::Version => {
            println!("retold {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("retold: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What an operation failed with, as one line.
#[derive(Debug)]
struct OpsError(String);

impl std::fmt::Display for OpsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpsError {}

/// `retold ops …`: one call of the admin API, the answer printed as JSON. Operations run in
/// the service, which owns the index; the command is its client.
fn run_ops(args: OpsArgs) -> Result<(), Box<dyn std::error::Error>> {
    match &args.operation {
        Operation::Restore { snapshot, data_dir } => return restore(snapshot, data_dir),
        Operation::Reembed { config, data_dir, batch, refresh } => {
            return reembed(config, data_dir.as_deref(), (*batch, *refresh));
        }
        Operation::Calibrate { config, locomo, doc } => return calibrate(config, locomo, doc),
        Operation::SwitchModel { config, data_dir } => return switch_model(config, data_dir.as_deref()),
        _ => {}
    }
    let key = args
        .admin_key
        .ok_or_else(|| OpsError("the admin key is required: --admin-key or RETOLD_ADMIN_KEY".into()))?;
    let (path, body) = match args.operation {
        Operation::Erase { record, user, scope, dry_run, rewrite_snapshots } => (
            "/v1/admin/ops/erase",
            serde_json::json!({"record_id": record, "user_id": user, "scope": scope, "dry_run": dry_run,
                "rewrite_snapshots": rewrite_snapshots}),
        ),
        Operation::Expire { dry_run } => ("/v1/admin/ops/expire", serde_json::json!({"dry_run": dry_run})),
        Operation::Retention { dry_run, force } => {
            ("/v1/admin/ops/retention", serde_json::json!({"dry_run": dry_run, "force": force}))
        }
        Operation::FlagReviews => ("/v1/admin/ops/flag-reviews", serde_json::json!({})),
        Operation::Snapshot => ("/v1/admin/ops/snapshot", serde_json::json!({})),
        Operation::Verify => ("/v1/admin/ops/verify", serde_json::json!({})),
        Operation::Restore { .. }
        | Operation::Reembed { .. }
        | Operation::Calibrate { .. }
        | Operation::SwitchModel { .. } => unreachable!("offline operations run above"),
    };
    retold_hosted::install_tls_provider();
    let url = format!("{}{path}", args.url.trim_end_matches('/'));
    // Long operations (an erasure with its compaction, a snapshot) show that they are running
    // on a terminal; the counts come in the JSON answer.
    let spinner = indicatif::ProgressBar::new_spinner().with_message(format!("{path} running"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    // No client timeout: an erasure of a large store compacts for as long as it takes (the
    // blocking client's default would give up after 30 s while the operation goes on).
    let response = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()?
        .post(&url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .map_err(|e| OpsError(format!("could not reach {url}: {e}")))?;
    spinner.finish_and_clear();
    let status = response.status();
    let answer: serde_json::Value =
        response.json().map_err(|e| OpsError(format!("{url} answered {status} without JSON: {e}")))?;
    if !status.is_success() {
        let detail = answer["detail"].as_str().unwrap_or("no detail");
        let code = answer["code"].as_str().unwrap_or("unknown");
        return Err(Box::new(OpsError(format!("{url} answered {status} {code}: {detail}"))));
    }
    println!("{}", serde_json::to_string_pretty(&answer)?);
    let check = answer.get("check").unwrap_or(&answer);
    if check.get("ok").is_some_and(|ok| ok == false) {
        return Err(Box::new(OpsError("the check failed (see above)".into())));
    }
    Ok(())
}

/// `retold export`: the admin endpoint's JSON lines, into a file or standard output.
fn run_export(args: &ExportArgs) -> Result<(), Box<dyn std::error::Error>> {
    retold_hosted::install_tls_provider();
    let url = format!("{}/v1/admin/export", args.url.trim_end_matches('/'));
    // Ids and scopes hold letters, digits and `_ . @ + - : /`; of those only `+` means
    // something else in a query.
    let escaped = |value: &str| -> String {
        value
            .chars()
            .map(|c| match c {
                '+' | '%' | '&' | '#' | ' ' | '=' | '?' => format!("%{:02X}", c as u32),
                c => c.to_string(),
            })
            .collect()
    };
    if args.user.as_deref().is_some_and(|u| u == "." || u == "..") {
        // A URL path cannot carry them (clients resolve dot segments).
        return Err(Box::new(OpsError(format!(
            "the user id {:?} cannot be exported by path; export its scopes with --scope",
            args.user.as_deref().unwrap_or_default()
        ))));
    }
    let url = match (&args.user, &args.scope) {
        (Some(user), _) => format!("{url}/users/{}", escaped(user).replace('/', "%2F")),
        (_, Some(scope)) => format!("{url}?scope={}", escaped(scope)),
        _ => unreachable!("clap requires one"),
    };
    let mut response = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()?
        .get(&url)
        .bearer_auth(&args.admin_key)
        .send()
        .map_err(|e| OpsError(format!("could not reach {url}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        let answer: serde_json::Value = response.json().unwrap_or_default();
        return Err(Box::new(OpsError(format!(
            "{url} answered {status} {}: {}",
            answer["code"].as_str().unwrap_or("unknown"),
            answer["detail"].as_str().unwrap_or("no detail")
        ))));
    }
    match &args.out {
        Some(path) => {
            let mut file =
                std::fs::File::create(path).map_err(|e| OpsError(format!("{}: {e}", path.display())))?;
            response.copy_to(&mut file)?;
        }
        None => {
            response.copy_to(&mut std::io::stdout().lock())?;
        }
    }
    Ok(())
}

/// The runtime an offline model operation runs on: two workers, like the service.
fn offline_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
}

/// A target configuration, with the data directory overridden when asked.
fn target_settings(
    config: &std::path::Path,
    data_dir: Option<&std::path::Path>,
) -> Result<Settings, ServeError> {
    let mut settings = Settings::load(Some(config))?;
    if let Some(dir) = data_dir {
        settings.server.data_dir = dir.to_string_lossy().into_owned();
    }
    Ok(settings)
}

fn model_json(m: &retold_domain::EmbeddingModelInfo) -> serde_json::Value {
    serde_json::json!({"name": m.name, "version": m.version, "dims": m.dims})
}

/// `retold ops reembed`, with a progress bar on a terminal.
fn reembed(
    config: &std::path::Path,
    data_dir: Option<&std::path::Path>,
    (batch, refresh): (usize, bool),
) -> Result<(), Box<dyn std::error::Error>> {
    let settings = target_settings(config, data_dir)?;
    let bar = indicatif::ProgressBar::new(0).with_style(indicatif::ProgressStyle::with_template(
        "re-embedding {bar:40} {pos}/{len} records ({per_sec}, {eta} left)",
    )?);
    let runtime = offline_runtime()?;
    let outcome =
        runtime.block_on(retold_http::model_ops::reembed(&settings, (batch, refresh), |counts| {
            bar.set_length(counts.live);
            bar.set_position(counts.staged);
        }))?;
    bar.finish_and_clear();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "target": model_json(&outcome.target),
            "embedded": outcome.embedded,
            "already_staged": outcome.already_staged,
            "discarded": outcome.discarded,
            "live": outcome.counts.live,
            "staged": outcome.counts.staged,
            "seconds": (outcome.seconds * 100.0).round() / 100.0,
            "records_per_second": if outcome.seconds > 0.0 { (outcome.embedded as f64 / outcome.seconds).round() } else { 0.0 },
        }))?
    );
    Ok(())
}

/// `retold ops calibrate`.
fn calibrate(
    config: &std::path::Path,
    locomo: &std::path::Path,
    doc: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let settings = Settings::load(Some(config))?;
    let runtime = offline_runtime()?;
    let report = runtime.block_on(async {
        let model = retold_http::model_ops::load_model(&settings).await?;
        retold_http::model_ops::calibrate(model.as_ref(), locomo)
            .await
            .map_err(|e| Box::new(OpsError(e)) as Box<dyn std::error::Error>)
    })?;
    retold_http::model_ops::write_calibration(config, &settings.calibrations, &report.calibration)?;
    retold_http::model_ops::write_calibration_doc(doc, &report)?;
    let c = &report.calibration;
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "model": {"name": c.model, "version": c.version, "dims": c.dims},
            "dense_floor": c.dense_floor,
            "duplicate_collapse_floor": c.duplicate_collapse_floor,
            "entail_floor": c.entail_floor,
            "same_meaning_floor": c.same_meaning_floor,
            "locomo_questions": report.questions,
            "evidence_cosine_p10_p50_p95": report.evidence_cosines,
            "other_turn_cosine_p10_p50_p95": report.other_cosines,
            "pairs": report.pairs.iter().map(|p| serde_json::json!({"table": p.table, "label": p.label, "a": p.a, "b": p.b, "score": (p.score * 1000.0).round() / 1000.0})).collect::<Vec<_>>(),
            "written": [config.display().to_string(), doc.display().to_string()],
        }))?
    );
    Ok(())
}

/// `retold ops switch-model`.
fn switch_model(
    config: &std::path::Path,
    data_dir: Option<&std::path::Path>,
) -> Result<(), Box<dyn std::error::Error>> {
    let settings = target_settings(config, data_dir)?;
    let runtime = offline_runtime()?;
    let outcome = runtime.block_on(retold_http::model_ops::switch_model(&settings))?;
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "to": model_json(&outcome.to),
            "switched": outcome.switched,
            "caught_up": outcome.caught_up,
        }))?
    );
    Ok(())
}

/// `retold ops restore`: copy a snapshot into a new data directory and check the copy.
fn restore(snapshot: &std::path::Path, data_dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let settings = Settings::load(None)?;
    let target = retold_http::store_config(&settings, data_dir).path;
    if target.exists() {
        return Err(Box::new(OpsError(format!(
            "{} exists already; restore into a new data directory",
            target.display()
        ))));
    }
    if !snapshot.is_file() {
        return Err(Box::new(OpsError(format!("no snapshot at {}", snapshot.display()))));
    }
    std::fs::create_dir_all(data_dir)?;
    std::fs::copy(snapshot, &target)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let check = runtime.block_on(retold_store_sqlite::SqliteStore::verify_file(&target))?;
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "restored": target.display().to_string(),
            "check": {"ok": check.is_ok(), "integrity": check.integrity, "live": check.live,
                "missing_fts": check.missing_fts, "orphan_fts": check.orphan_fts,
                "missing_embeddings": check.missing_embeddings, "orphan_embeddings": check.orphan_embeddings},
        }))?
    );
    if !check.is_ok() {
        return Err(Box::new(OpsError("the restored store failed its check (see above)".into())));
    }
    Ok(())
}

/// `retold mcp`: logs go to stderr (stdout carries the protocol).
fn run_mcp(args: McpArgs) -> Result<(), ServeError> {
    let mut settings = Settings::load(args.config.as_deref())?;
    if let Some(dir) = args.data_dir {
        settings.server.data_dir = dir.to_string_lossy().into_owned();
    }
    let _telemetry = init_telemetry(&settings.telemetry)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(retold_http::serve_mcp_stdio(
        settings,
        &args.agent_id,
        &args.user_id,
        args.project_id.as_deref(),
        args.key,
    ))
}

fn run_serve(args: ServeArgs, log_format: Option<LogFormatArg>) -> Result<(), ServeError> {
    let mut settings = Settings::load(args.config.as_deref())?;
    if let Some(listen) = args.listen {
        settings.server.listen = listen;
    }
    if let Some(dir) = args.data_dir {
        settings.server.data_dir = dir.to_string_lossy().into_owned();
    }
    if let Some(format) = log_format {
        settings.telemetry.log_format = format.into();
    }
    let _telemetry = init_telemetry(&settings.telemetry)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve(settings))
}
