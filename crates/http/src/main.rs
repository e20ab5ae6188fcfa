//! The `retold` binary.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use retold_http::{Settings, init_telemetry, serve};

const USAGE: &str = "usage: retold serve [--listen ADDR] [--data-dir DIR] [--config FILE]";

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        bail!("{USAGE}");
    };
    if command != "serve" {
        bail!("unknown command {command:?}\n{USAGE}");
    }
    let mut listen: Option<SocketAddr> = None;
    let mut data_dir: Option<PathBuf> = None;
    let mut config: Option<PathBuf> = None;
    let mut rest = rest.iter();
    while let Some(flag) = rest.next() {
        let mut value = || rest.next().with_context(|| format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--listen" => listen = Some(value()?.parse().context("--listen takes HOST:PORT")?),
            "--data-dir" => data_dir = Some(PathBuf::from(value()?)),
            "--config" => config = Some(PathBuf::from(value()?)),
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    let mut settings = Settings::load(config.as_deref())?;
    if let Some(listen) = listen {
        settings.server.listen = listen;
    }
    if let Some(dir) = data_dir {
        settings.server.data_dir = dir.to_string_lossy().into_owned();
    }
    let _telemetry = init_telemetry(&settings.telemetry)?;
    serve(settings).await
}
