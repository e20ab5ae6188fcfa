//! The `retold` binary: `retold serve|ops|openapi|version`, `--help` on every level.
//!
//! Exit codes: 0 done; 1 the service could not start or failed (one message on stderr);
//! 2 the command line was wrong (clap's usage message).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Run a maintenance operation on a running service, with the admin key.
    Ops(OpsArgs),
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
    /// Move provisional and confirmed records whose expires_at passed to expired.
    Expire {
        /// Only list what is due.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete session turns older than operations.transcript_retention_days, in sessions whose
    /// extraction has run; records keep their own evidence.
    Retention {
        /// Only count what would be deleted.
        #[arg(long)]
        dry_run: bool,
        /// Also sessions whose extraction has not run.
        #[arg(long)]
        force: bool,
    },
    /// Flag records that need a person's look into the review queue (list and resolve them
    /// with GET /v1/admin/reviews and POST /v1/admin/reviews/{id}/resolve).
    FlagReviews,
    /// Take a consistent snapshot while writes continue (into the data directory's
    /// snapshots/), then check it.
    Snapshot,
    /// Check the live store: integrity, and FTS rows and embeddings against records.
    Verify,
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
    if let Operation::Restore { snapshot, data_dir } = &args.operation {
        return restore(snapshot, data_dir);
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
        Operation::Restore { .. } => unreachable!("restore runs offline, above"),
    };
    retold_hosted::install_tls_provider();
    let url = format!("{}{path}", args.url.trim_end_matches('/'));
    let response = reqwest::blocking::Client::new()
        .post(&url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .map_err(|e| OpsError(format!("could not reach {url}: {e}")))?;
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
