//! The `retold` binary: `retold serve|openapi|version`, `--help` on every level.
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
    let result = match cli.command {
        Command::Serve(args) => run_serve(args, cli.log_format),
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
