//! `retold import FILE`: a file of memories sent to a running service's `POST
//! /v1/memory/import` in batches, with a progress bar, the refused lines listed with their
//! line numbers on stderr, and a summary on stdout. Memory stays bounded by one batch for a
//! JSON lines file of any size. Every item is written at most once, so running the command
//! again resumes an interrupted import.
//!
//! A file `retold export` wrote (its first line says so) is restored as it was through the
//! admin's `POST /v1/admin/import`: ids, statuses, history, entities and links.
//!
//! `--from mem0` reads Mem0's export (`get_all`'s JSON: `{"results": [...]}` or a list, or one
//! memory per line) and maps each memory as `docs/import.md` says.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

/// Most lines one request takes (the service refuses more).
const MAX_LINES: u16 = 1000;
/// Most bytes one batch sends, under the service's default 1 MiB body limit.
const MAX_BATCH_BYTES: usize = 768 * 1024;
/// How often a batch is sent again after the service failed it (it resumes where it stopped).
const ATTEMPTS: u32 = 4;

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The memories: JSON lines of memory_write bodies, each with an optional import_id (its
    /// id where it came from); or, with --from mem0, Mem0's export.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The file's format.
    #[arg(long, value_enum, default_value_t = Format::Retold)]
    from: Format,
    /// The running service's base URL.
    #[arg(long, env = "RETOLD_URL", default_value = "http://127.0.0.1:8420")]
    url: String,
    /// A host key (created with POST /v1/admin/host-keys), for memory_write lines and Mem0.
    #[arg(long, env = "RETOLD_HOST_KEY", hide_env_values = true)]
    key: Option<String>,
    /// The admin key, for a file `retold export` wrote (restored as it was).
    #[arg(long, env = "RETOLD_ADMIN_KEY", hide_env_values = true)]
    admin_key: Option<String>,
    /// Lines per request, 1 to 1000 (a batch is also cut at 768 KiB).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..=i64::from(MAX_LINES)))]
    batch: u16,
    /// Mem0: the agent the memories are written as.
    #[arg(long, default_value = "mem0-import")]
    agent: String,
    /// Mem0: the user of memories that have no user_id (they are refused without one).
    #[arg(long)]
    user: Option<String>,
    /// Mem0: where a user's memories go: private (agent:<agent>/<user>, writable without a
    /// grant) or user (user:<user>, shared by the user's agents; needs a grant per user).
    #[arg(long, value_enum, default_value_t = Mem0Scope::Private)]
    scope: Mem0Scope,
    /// Mem0: the source kind of the imported memories. session_summary (the default) is what
    /// they are: a model's distillation of conversations, confirmed, ranked below what a user
    /// or the system states.
    #[arg(long, default_value = "session_summary")]
    source_kind: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Retold,
    Mem0,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mem0Scope {
    Private,
    User,
}

/// One line to send, with what names it in messages (`line 12`, `memory 3 (id …)`).
struct Item {
    label: String,
    line: String,
}

/// What went wrong, as one line for stderr.
#[derive(Debug)]
pub(crate) struct ImportError(String);

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImportError {}

type Failure = Box<dyn std::error::Error>;

pub(crate) fn run(args: &ImportArgs) -> Result<(), Failure> {
    retold_hosted::install_tls_provider();
    let file =
        std::fs::File::open(&args.file).map_err(|e| ImportError(format!("{}: {e}", args.file.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let started = Instant::now();
    let client = reqwest::blocking::Client::builder().timeout(None).build()?;
    let url = format!("{}/v1/memory/import", args.url.trim_end_matches('/'));
    let mut summary = Summary::default();
    if args.from == Format::Retold && is_export(&args.file)? {
        return restore(&client, args, file, size, started);
    }
    let Some(key) = args.key.as_deref() else {
        return Err(Box::new(ImportError("a host key is required: --key or RETOLD_HOST_KEY".into())));
    };
    match args.from {
        Format::Retold => {
            let bar = bar(size, "bytes")?;
            let lines = BufReader::new(file).lines().enumerate().map(|(at, line)| {
                line.map(|line| {
                    bar.inc(line.len() as u64 + 1);
                    Item { label: format!("line {}", at + 1), line }
                })
            });
            send_all(&client, &url, key, args.batch, lines, &mut summary)?;
            bar.finish_and_clear();
        }
        Format::Mem0 => {
            let mut text = String::new();
            BufReader::new(file).read_to_string(&mut text)?;
            let memories = mem0_memories(&text)?;
            let bar = bar(memories.len() as u64, "memories")?;
            let mut mapped = Vec::new();
            for (label, memory) in memories {
                match mem0_line(&memory, args) {
                    Ok(line) => mapped.push(Ok(Item { label, line: line.to_string() })),
                    Err(reason) => {
                        bar.inc(1);
                        eprintln!("{label}: invalid: {reason}");
                        summary.count("invalid");
                    }
                }
            }
            let mapped = mapped.into_iter().inspect(|_| bar.inc(1));
            send_all(&client, &url, key, args.batch, mapped, &mut summary)?;
            bar.finish_and_clear();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let lines: usize = summary.counts.values().sum();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "file": args.file.display().to_string(),
            "lines": lines,
            "counts": summary.counts,
            "seconds": (seconds * 100.0).round() / 100.0,
            "per_second": if seconds > 0.0 { (lines as f64 / seconds).round() } else { 0.0 },
        }))?
    );
    let refused = summary.counts.get("invalid").copied().unwrap_or(0)
        + summary.counts.get("rejected").copied().unwrap_or(0);
    if refused > 0 {
        return Err(Box::new(ImportError(format!(
            "{refused} of {lines} lines were not imported (listed above); the others were"
        ))));
    }
    Ok(())
}

#[derive(Default)]
struct Summary {
    counts: BTreeMap<String, usize>,
}

impl Summary {
    fn count(&mut self, outcome: &str) {
        *self.counts.entry(outcome.to_owned()).or_insert(0) += 1;
    }
}

fn bar(length: u64, unit: &str) -> Result<indicatif::ProgressBar, Failure> {
    Ok(indicatif::ProgressBar::new(length).with_style(indicatif::ProgressStyle::with_template(&format!(
        "importing {{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, {{eta}} left)"
    ))?))
}

/// Send `items` in batches; blank lines are skipped.
fn send_all(
    client: &reqwest::blocking::Client,
    url: &str,
    key: &str,
    lines_per_batch: u16,
    items: impl Iterator<Item = std::io::Result<Item>>,
    summary: &mut Summary,
) -> Result<(), Failure> {
    let mut batch: Vec<Item> = Vec::new();
    let mut bytes = 0;
    for item in items {
        let item = item?;
        if item.line.trim().is_empty() {
            continue;
        }
        if !batch.is_empty()
            && (batch.len() >= usize::from(lines_per_batch) || bytes + item.line.len() + 1 > MAX_BATCH_BYTES)
        {
            send(client, url, key, &std::mem::take(&mut batch), summary)?;
            bytes = 0;
        }
        bytes += item.line.len() + 1;
        batch.push(item);
    }
    if !batch.is_empty() {
        send(client, url, key, &batch, summary)?;
    }
    Ok(())
}

/// One batch, sent again after a failure of the service (what it wrote stays written, and
/// is answered `already_imported` the next time).
fn send(
    client: &reqwest::blocking::Client,
    url: &str,
    key: &str,
    batch: &[Item],
    summary: &mut Summary,
) -> Result<(), Failure> {
    let body = batch.iter().map(|i| i.line.as_str()).collect::<Vec<_>>().join("\n");
    let answer = match post_batch(client, url, key, &body)? {
        Ok(answer) => answer,
        Err((status, answer)) => {
            let (code, detail) = problem(&answer);
            if status == reqwest::StatusCode::PAYLOAD_TOO_LARGE && batch.len() == 1 {
                eprintln!("{}: not imported: {code}: {detail}", batch[0].label);
                summary.count("invalid");
                return Ok(());
            }
            return Err(Box::new(ImportError(format!("{url} answered {status} {code}: {detail}"))));
        }
    };
    for item in answer["items"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let outcome = item["outcome"].as_str().unwrap_or("unknown");
        summary.count(outcome);
        if matches!(outcome, "invalid" | "rejected") {
            let at = item["line"].as_u64().unwrap_or(0) as usize;
            let label = batch.get(at.wrapping_sub(1)).map_or("a line", |i| i.label.as_str());
            let field = item["field"].as_str().map(|f| format!(" ({f})")).unwrap_or_default();
            eprintln!(
                "{label}: {outcome}: {}{field}: {}",
                item["code"].as_str().unwrap_or("unknown"),
                item["detail"].as_str().unwrap_or("")
            );
        }
    }
    Ok(())
}

/// POST one batch of lines, again after a failure of the service or the connection (what it
/// wrote stays written, and a batch sent again writes nothing twice), at most `ATTEMPTS`
/// times: the service's answer, or the refusal (status and problem) it answered.
fn post_batch(
    client: &reqwest::blocking::Client,
    url: &str,
    key: &str,
    body: &str,
) -> Result<Result<Value, (reqwest::StatusCode, Value)>, Failure> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let sent = client
            .post(url)
            .bearer_auth(key)
            .header("content-type", "application/x-ndjson")
            .body(body.to_owned())
            .send();
        let failed = match sent {
            Ok(response) => {
                let status = response.status();
                let answer: Value = response.json().unwrap_or(Value::Null);
                if status.is_success() {
                    return Ok(Ok(answer));
                }
                if !status.is_server_error() {
                    return Ok(Err((status, answer)));
                }
                let (code, detail) = problem(&answer);
                format!("{url} answered {status} {code}: {detail}")
            }
            Err(e) => format!("could not reach {url}: {e}"),
        };
        if attempt >= ATTEMPTS {
            return Err(Box::new(ImportError(format!(
                "{failed}; run the same command again to resume (what was imported is skipped)"
            ))));
        }
        std::thread::sleep(Duration::from_millis(500 * u64::from(attempt)));
    }
}

/// A problem answer's code and detail.
fn problem(answer: &Value) -> (&str, &str) {
    (answer["code"].as_str().unwrap_or("unknown"), answer["detail"].as_str().unwrap_or("no detail"))
}

/// Mem0's memories, each with what names it: `get_all`'s JSON (`{"results": [...]}`, or the
/// list itself), or one memory per line.
fn mem0_memories(text: &str) -> Result<Vec<(String, Value)>, Failure> {
    let label = |at: usize, memory: &Value| match memory["id"].as_str() {
        Some(id) => format!("memory {} (id {id})", at + 1),
        None => format!("memory {}", at + 1),
    };
    if let Ok(whole) = serde_json::from_str::<Value>(text) {
        let list = match whole {
            Value::Array(list) => Some(list),
            Value::Object(mut object) => match object.remove("results") {
                Some(Value::Array(list)) => Some(list),
                _ => None,
            },
            _ => None,
        };
        if let Some(list) = list {
            return Ok(list.into_iter().enumerate().map(|(at, m)| (label(at, &m), m)).collect());
        }
    }
    let mut memories = Vec::new();
    for (at, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let memory: Value = serde_json::from_str(line)
            .map_err(|e| ImportError(format!("line {}: not a Mem0 memory (JSON): {e}", at + 1)))?;
        memories.push((format!("line {}", at + 1), memory));
    }
    Ok(memories)
}

/// One Mem0 memory as a `memory_write` body with its import id (the mapping `docs/import.md`
/// gives).
fn mem0_line(memory: &Value, args: &ImportArgs) -> Result<Value, String> {
    let text = |name: &str| memory.get(name).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let content = text("memory").ok_or("no \"memory\" text")?;
    let id = text("id").ok_or("no \"id\"")?;
    let user =
        text("user_id").or(args.user.as_deref()).ok_or("no user_id (give --user for such memories)")?;
    let scope = match args.scope {
        Mem0Scope::Private => format!("agent:{}/{user}", args.agent),
        Mem0Scope::User => format!("user:{user}"),
    };
    let mut line = json!({
        "import_id": format!("mem0:{id}"),
        "principal": {"agent_id": args.agent, "user_id": user},
        "type": "semantic",
        "content": content,
        "scope": scope,
        "source_kind": args.source_kind,
        "source_ref": format!("mem0:{id}"),
    });
    // When its current text was written: updated_at, else created_at.
    if let Some(at) = text("updated_at").or(text("created_at")) {
        let at = chrono::DateTime::parse_from_rfc3339(at)
            .map_err(|e| format!("updated_at/created_at {at:?}: {e}"))?;
        line["event_at"] = json!(at.with_timezone(&chrono::Utc).to_rfc3339());
    }
    let mut tags: Vec<String> = Vec::new();
    if let Some(categories) = memory.get("categories").and_then(Value::as_array) {
        tags.extend(categories.iter().filter_map(Value::as_str).map(tag));
    }
    for (name, value) in [("agent", text("agent_id")), ("app", text("app_id")), ("run", text("run_id"))] {
        if let Some(value) = value {
            tags.push(tag(&format!("mem0-{name}:{value}")));
        }
    }
    tags.retain(|t| !t.is_empty());
    tags.dedup();
    tags.truncate(32);
    if !tags.is_empty() {
        line["tags"] = json!(tags);
    }
    Ok(line)
}

/// A tag from free text: lower case, spaces as `-`, at most 64 characters of what a tag holds.
fn tag(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_whitespace() { '-' } else { c })
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.' | '/'))
        .take(64)
        .collect()
}

/// Whether the file's first non-blank line is an export's (`{"item": "export", …}`).
fn is_export(path: &std::path::Path) -> Result<bool, Failure> {
    let file = std::fs::File::open(path).map_err(|e| ImportError(format!("{}: {e}", path.display())))?;
    for line in BufReader::new(file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let first: Option<Value> = serde_json::from_str(&line).ok();
        return Ok(first.is_some_and(|v| v["item"] == "export"));
    }
    Ok(false)
}

/// An export restored in batches through `POST /v1/admin/import` (each batch one transaction;
/// a batch sent again changes nothing, so a run again resumes).
fn restore(
    client: &reqwest::blocking::Client,
    args: &ImportArgs,
    file: std::fs::File,
    size: u64,
    started: Instant,
) -> Result<(), Failure> {
    let Some(key) = args.admin_key.as_deref() else {
        return Err(Box::new(ImportError(
            "this file is an export, restored with the admin key: --admin-key or RETOLD_ADMIN_KEY".into(),
        )));
    };
    let url = format!("{}/v1/admin/import", args.url.trim_end_matches('/'));
    let bar = bar(size, "bytes")?;
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut batch: Vec<String> = Vec::new();
    let mut bytes = 0;
    let mut lines = BufReader::new(file).lines().peekable();
    let mut first_line = 1;
    let mut number = 0;
    while let Some(line) = lines.next() {
        let line = line?;
        number += 1;
        bar.inc(line.len() as u64 + 1);
        bytes += line.len() + 1;
        batch.push(line);
        let last = lines.peek().is_none();
        if last || batch.len() >= usize::from(args.batch) || bytes > MAX_BATCH_BYTES {
            let answer = match post_batch(client, &url, key, &batch.join("\n"))? {
                Ok(answer) => answer,
                Err((status, answer)) => {
                    // The service numbers the lines of the batch; the file's number is what a
                    // reader looks for.
                    let (code, detail) = problem(&answer);
                    let detail = match detail
                        .strip_prefix("line ")
                        .and_then(|rest| rest.split_once(": "))
                        .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)))
                    {
                        Some((n, rest)) => format!("line {}: {rest}", first_line + n - 1),
                        None => format!("lines {first_line}–{number}: {detail}"),
                    };
                    return Err(Box::new(ImportError(format!("{url} answered {status} {code}: {detail}"))));
                }
            };
            for name in ["records", "entities", "conflicts", "already_present"] {
                *totals.entry(name.to_owned()).or_insert(0) += answer[name].as_u64().unwrap_or(0);
            }
            batch.clear();
            bytes = 0;
            first_line = number + 1;
        }
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "file": args.file.display().to_string(),
            "lines": number,
            "restored": totals,
            "seconds": (seconds * 100.0).round() / 100.0,
        }))?
    );
    Ok(())
}
