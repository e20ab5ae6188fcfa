//! `retold-eval`: retrieval quality and speed of the real components, as markdown tables and
//! JSON (`--out FILE`).
//!
//! - `eval locomo|longmemeval|orchestrator [--data PATH] [--out FILE] [--limit N] [--bundle ID] [--record]`
//! - `bench [pipeline|index|store|http] [--large] [--n N,..] [--dims D,..] [--clients C]
//!   [--seconds S] [--out FILE]`
//!
//! Figures of a debug build mean nothing: `cargo xtask eval …` and `cargo xtask bench …` run
//! this binary as `cargo run --release -p retold-eval -- …`.

mod bench;
mod bench_pipeline;
mod bench_writes;
mod eval;
mod golden;
mod lme_protocol;
mod orchestrator;
mod replay;

use std::process::ExitCode;

const USAGE: &str = "usage: retold-eval eval locomo|longmemeval|orchestrator [--data PATH] [--out FILE] [--limit N] [--bundle ID] [--record]\n       \
     retold-eval bench [pipeline|index|store|http] [--large] [--n N,..] [--dims D,..] [--clients C] [--seconds S] [--out FILE]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if cfg!(debug_assertions) {
        eprintln!(
            "retold-eval: a debug build; its timings mean nothing (cargo xtask eval|bench builds release)"
        );
    }
    let result = match args.split_first().map(|(c, r)| (c.as_str(), r)) {
        Some(("eval", rest)) => eval::run(rest),
        Some(("bench", rest)) => bench::run(rest),
        Some(("help" | "--help" | "-h", _)) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some((other, _)) => Err(anyhow::anyhow!("unknown command {other:?}\n{USAGE}")),
        None => Err(anyhow::anyhow!("{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("retold-eval: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (two levels above this crate).
pub(crate) fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/eval lives in the workspace")
        .to_path_buf()
}
