//! A private PostgreSQL server for the tests and benchmarks: a fresh cluster from Debian's
//! packages in `<target>/tmp/postgres`, on a free local port and its own socket directory,
//! trust authentication for the role `retold`. `cargo xtask ci` starts it, passes its URL to
//! the tests in `RETOLD_TEST_POSTGRES_URL` and stops it afterwards, whatever the tests did.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// `cargo xtask postgres start|stop|url`.
pub(crate) fn run(args: &[String]) -> Result<()> {
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["start"] => {
            let url = start()?;
            println!("export {}={url}", retold_provision::TEST_POSTGRES_URL);
            Ok(())
        }
        ["stop"] => stop(),
        ["url"] => {
            println!("{}", fs::read_to_string(dir().join("url")).context("no server started")?.trim());
            Ok(())
        }
        _ => bail!("usage: cargo xtask postgres start|stop|url"),
    }
}

/// The cluster's directory (data, socket, log, url).
fn dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    let target = if target.is_absolute() { target } else { crate::workspace_root().join(target) };
    target.join("tmp").join("postgres")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Run one of PostgreSQL's programs; as root through `runuser -u postgres` (the server
/// refuses to run as root; Debian's package creates the `postgres` user).
fn pg(program: &str, args: &[&str]) -> Result<()> {
    let path = retold_provision::postgres_bin().join(program);
    if !path.exists() {
        bail!(
            "{} is missing: run `cargo xtask setup` (installs Debian's postgresql package) or set RETOLD_POSTGRES_BIN",
            path.display()
        );
    }
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&path);
        c
    } else {
        Command::new(&path)
    };
    // initdb and pg_ctl narrate every step on stdout; failures go to stderr.
    let status = command
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running {}", path.display()))?;
    if !status.success() {
        bail!("{program} {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Start a fresh cluster (a running one in the same directory is stopped and wiped first) and
/// return its URL.
pub(crate) fn start() -> Result<String> {
    crate::setup::postgres_server()?;
    let dir = dir();
    if dir.join("data").join("postmaster.pid").exists() {
        let _ = stop();
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(&dir)?;
    if is_root() {
        let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status()?;
        if !status.success() {
            bail!("chown postgres {} failed", dir.display());
        }
    }
    let data = dir.join("data");
    let data_s = data.display().to_string();
    pg(
        "initdb",
        &["-D", &data_s, "-U", "retold", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "-N"],
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB \
         -c log_lock_waits=on -c log_checkpoints=on -c log_min_duration_statement=2000",
        dir.display()
    );
    let log = dir.join("server.log").display().to_string();
    pg("pg_ctl", &["-D", &data_s, "-o", &options, "-l", &log, "-w", "-t", "60", "start"])?;
    let url = format!("postgres://retold@127.0.0.1:{port}/postgres");
    fs::write(dir.join("url"), &url)?;
    eprintln!("xtask postgres: started {url} (data in {data_s}, log {log})");
    Ok(url)
}

/// Stop the cluster, when one runs.
pub(crate) fn stop() -> Result<()> {
    let data = dir().join("data");
    if !data.join("postmaster.pid").exists() {
        return Ok(());
    }
    pg("pg_ctl", &["-D", &data.display().to_string(), "-m", "fast", "-w", "stop"])
}
