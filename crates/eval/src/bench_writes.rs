//! `bench writes`: where a write's time goes, what an import sustains beside the raw embedder,
//! and what HTTP adds to a search, against a real `retold serve` with every embedding computed
//! (no cache), one client.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::bench_pipeline::{pct3, quantiles, serve};

/// The stages `memory_write` answers in `Server-Timing`, in order.
const STAGES: [&str; 7] = ["access", "evidence", "entities", "embed", "current_fact", "commit", "index"];
/// Lines per import request (what `retold import` sends by default).
const IMPORT_BATCH: usize = 256;

fn locomo() -> Result<Value> {
    let data = crate::workspace_root().join("../shared/data/locomo-dev.json");
    serde_json::from_str(
        &std::fs::read_to_string(&data).with_context(|| format!("{} (LoCoMo dev)", data.display()))?,
    )
    .context("LoCoMo dev is JSON")
}

/// A conversation's turns as `memory_write` bodies, as a host writes turns: the speaker as
/// subject, the end of the turn before as context, the session's date, a session citation.
pub(crate) fn turn_bodies(
    sample: &str,
    conversation: &Value,
    principal: &Value,
    scope: &str,
) -> Result<Vec<Value>> {
    let turns = crate::eval::locomo_turns(sample, conversation)?;
    let mut bodies = Vec::with_capacity(turns.len());
    let mut previous: Option<(String, String)> = None;
    for (dia, speaker, content, at) in turns {
        let session = dia.split(':').next().unwrap_or_default().to_owned();
        let context = previous.as_ref().filter(|(s, _)| *s == session).map(|(_, before)| {
            retold_domain::text::last_chars(before, crate::eval::CONTEXT_CHARS).to_owned()
        });
        bodies.push(json!({"principal": principal, "type": "episodic", "content": content, "scope": scope,
            "source_kind": "system", "event_at": at.to_rfc3339(), "context": context,
            "subject": {"name": speaker, "kind": "person"},
            "source_ref": format!("session:sess_{sample}_{}<turn:{}>", session.trim_start_matches('D'), dia.split(':').nth(1).unwrap_or("1"))}));
        previous = Some((session, content));
    }
    Ok(bodies)
}

/// A one-line fact with a current-fact key of its own.
fn fact(n: usize, principal: &Value, scope: &str) -> Value {
    const THINGS: [&str; 10] = [
        "editor", "shell", "terminal", "font", "theme", "browser", "keyboard", "language", "database",
        "cloud",
    ];
    const VALUES: [&str; 10] = [
        "Helix",
        "fish",
        "WezTerm",
        "Iosevka",
        "Solarized",
        "Firefox",
        "a split ergo board",
        "Rust",
        "PostgreSQL",
        "Hetzner",
    ];
    let thing = THINGS[n % THINGS.len()];
    let value = VALUES[(n / THINGS.len() + n) % VALUES.len()];
    json!({"principal": principal, "type": "semantic", "scope": scope, "source_kind": "system",
        "content": format!("For project {n}, Kai's preferred {thing} is {value}."),
        "subject": {"name": "Kai", "kind": "person"}, "attribute": format!("preferred_{thing}_project_{n}")})
}

/// A ~4 kB tool output: a test run's log with identifiers, timings and a failure.
fn tool_output(n: usize, principal: &Value, scope: &str) -> Value {
    let mut log = format!("$ cargo test -p service-{n} --all-targets\n");
    let mut line = 0;
    while log.len() < 4000 {
        line += 1;
        let outcome = if line % 23 == 0 { "FAILED" } else { "ok" };
        log.push_str(&format!(
            "test tests::handler_{n}_{line}::returns_{}_for_req_{:08x} ... {outcome} ({}.{:02}s)\n",
            ["200", "404", "409", "422"][line % 4],
            (n * 7919 + line * 104_729) % 0xffff_ffff,
            line % 3,
            (n + line) % 100
        ));
    }
    log.push_str(&format!("error: test failed, to rerun pass `-p service-{n} --lib`"));
    json!({"principal": principal, "type": "episodic", "scope": scope, "source_kind": "tool_result",
        "source_ref": "tool:cargo-test", "content": log, "tags": ["ci", format!("service-{n}")]})
}

/// Milliseconds of each stage in a `Server-Timing` value, and the texts it embedded and left
/// to follow the answer.
fn stages_of(timing: &str) -> (Vec<f64>, usize, usize) {
    let mut durations = vec![0.0; STAGES.len()];
    let (mut embedded, mut after) = (0, 0);
    for part in timing.split(", ") {
        let mut fields = part.split(';');
        let name = fields.next().unwrap_or_default();
        for field in fields {
            if let Some(d) = field.strip_prefix("dur=")
                && let Some(at) = STAGES.iter().position(|s| *s == name)
            {
                durations[at] = d.parse().unwrap_or(0.0);
            }
            if let Some(desc) = field.strip_prefix("desc=\"") {
                let count = desc.split(' ').next().and_then(|c| c.parse().ok()).unwrap_or(0);
                if name == "embed" {
                    embedded = count;
                } else if name == "sentences" {
                    after = count;
                }
            }
        }
    }
    (durations, embedded, after)
}

fn median(values: Vec<f64>) -> f64 {
    let [p50] = quantiles(values, [0.5]);
    p50
}

pub(crate) async fn writes(n: usize) -> Result<Value> {
    let _ = retold_http::hosted_stages(&retold_http::Settings::load(None)?)?;
    let data = locomo()?;
    let principal = json!({"agent_id": "bench", "user_id": "host"});
    let scope = "agent:bench/host";
    let key = "bench-admin-key";
    let dir = tempfile::tempdir()?;
    let (server, base) = serve(dir.path(), key, &[])?;
    let first = &data[0];
    let turns: Vec<Value> =
        turn_bodies("conv0", &first["conversation"], &principal, scope)?.into_iter().take(n).collect();
    let raw = raw_embedder_on(&turns).await?;
    // A host's agent writes a turn, then waits for its model: a write every 150 ms. One
    // client sending the next as soon as the last is answered is the busiest a host gets.
    let paced = Duration::from_millis(150);
    let kinds: Vec<(&str, Duration, Vec<Value>)> = vec![
        ("LoCoMo turn (speaker, context, date)", paced, turns.clone()),
        ("LoCoMo turn, back to back", Duration::ZERO, turns),
        ("one-line fact (subject, attribute)", paced, (0..n).map(|i| fact(i, &principal, scope)).collect()),
        ("4 kB tool output", paced, (0..n).map(|i| tool_output(i, &principal, scope)).collect()),
    ];
    let host_base = base.clone();
    let stage_rows = tokio::task::spawn_blocking(move || -> Result<(String, Vec<Value>)> {
        let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build()?;
        let host = crate::bench_pipeline::host_key(&client, &host_base, key)?;
        let mut rows = Vec::new();
        println!("\nOne `memory_write` at a time over loopback (every 150 ms, or back to back), each embedded by the server; medians of the stages it answers in Server-Timing (ms):");
        println!("| record | sent | writes | texts embedded | sentences after | p50 / p95 ms | {} | HTTP and the rest |", STAGES.join(" | "));
        println!("|---|---|---|---|---|---|{}---|", "---|".repeat(STAGES.len()));
        for (kind, pace, bodies) in &kinds {
            let mut totals = Vec::new();
            let mut per_stage: Vec<Vec<f64>> = vec![Vec::new(); STAGES.len()];
            let mut rest = Vec::new();
            let (mut embedded, mut after) = (Vec::new(), Vec::new());
            for body in bodies {
                let started = Instant::now();
                let response = client.post(format!("{host_base}/v1/memory/write")).bearer_auth(&host).json(body).send()?;
                let took = started.elapsed();
                let status = response.status();
                let timing = response.headers().get("server-timing").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                anyhow::ensure!(status.is_success(), "memory_write: {status} {}", response.text().unwrap_or_default());
                let (durations, e, a) = stages_of(&timing);
                let total = took.as_secs_f64() * 1000.0;
                rest.push(total - durations.iter().sum::<f64>());
                for (at, d) in durations.into_iter().enumerate() {
                    per_stage[at].push(d);
                }
                totals.push(took);
                embedded.push(e as f64);
                after.push(a as f64);
                std::thread::sleep(pace.saturating_sub(took));
            }
            let (p50, p95, _) = pct3(totals);
            let stage_medians: Vec<f64> = per_stage.into_iter().map(median).collect();
            let rest = median(rest);
            let sent = if pace.is_zero() { "back to back".to_owned() } else { format!("every {} ms", pace.as_millis()) };
            println!(
                "| {kind} | {sent} | {} | {:.0} | {:.0} | {p50:.1} / {p95:.1} | {} | {rest:.2} |",
                bodies.len(),
                median(embedded.clone()),
                median(after.clone()),
                stage_medians.iter().map(|m| format!("{m:.2}")).collect::<Vec<_>>().join(" | ")
            );
            let stages: serde_json::Map<String, Value> =
                STAGES.iter().zip(&stage_medians).map(|(s, m)| ((*s).to_owned(), json!(m))).collect();
            rows.push(json!({"record": kind, "pace_ms": pace.as_millis(), "writes": bodies.len(), "p50_ms": p50, "p95_ms": p95,
                "texts_embedded": median(embedded), "sentences_after": median(after), "stage_p50_ms": stages, "rest_p50_ms": rest}));
        }
        Ok((host, rows))
    })
    .await??;
    drop(server);
    let (_, stage_rows) = stage_rows;
    let import = import_beside_the_embedder(&data, &principal, scope, key).await?;
    Ok(json!({"write_stages": stage_rows, "raw_embedder": raw, "import": import}))
}

/// The served model in this process over the turns' record texts (content and context), one
/// text per run as a write embeds it, every 150 ms and back to back: the floor of a turn's
/// write, and what the model's run costs when the machine's caches have gone cold between
/// writes.
async fn raw_embedder_on(turns: &[Value]) -> Result<Value> {
    let settings = retold_http::Settings::load(None)?;
    let model = retold_http::model_ops::load_model(&settings).await?;
    let texts: Vec<String> = turns
        .iter()
        .map(|body| {
            retold_domain::IndexedText {
                origin: retold_domain::Origin::Memory,
                speaker: None,
                content: body["content"].as_str().unwrap_or_default(),
                context: body["context"].as_str(),
            }
            .embedded_texts(0)
            .remove(0)
        })
        .collect();
    println!("\nThe raw embedder in process, one turn's record text per run (ms):");
    println!("| sent | runs | p50 / p95 ms |");
    println!("|---|---|---|");
    let mut rows = Vec::new();
    for pace in [Duration::from_millis(150), Duration::ZERO] {
        let mut took = Vec::with_capacity(texts.len());
        for text in &texts {
            let started = Instant::now();
            retold_domain::Embedder::embed(model.as_ref(), std::slice::from_ref(text)).await?;
            let elapsed = started.elapsed();
            took.push(elapsed);
            tokio::time::sleep(pace.saturating_sub(elapsed)).await;
        }
        let (p50, p95, _) = pct3(took);
        let sent =
            if pace.is_zero() { "back to back".to_owned() } else { format!("every {} ms", pace.as_millis()) };
        println!("| {sent} | {} | {p50:.1} / {p95:.1} |", texts.len());
        rows.push(json!({"pace_ms": pace.as_millis(), "runs": texts.len(), "p50_ms": p50, "p95_ms": p95}));
    }
    Ok(json!(rows))
}

/// Import LoCoMo dev's other conversations' turns (as `memory_write` bodies) into a fresh
/// server in batches, beside the raw embedder over exactly the texts the import embeds; then
/// the same questions searched over HTTP and in process on the store the import made.
async fn import_beside_the_embedder(
    data: &Value,
    principal: &Value,
    scope: &str,
    key: &str,
) -> Result<Value> {
    // Conversations 2–5: the first one's turns were written in the stage part above.
    let mut bodies = Vec::new();
    for (at, sample) in data.as_array().context("a list")?.iter().enumerate().skip(1) {
        bodies.extend(turn_bodies(&format!("conv{at}"), &sample["conversation"], principal, scope)?);
    }
    // Questions about the imported conversations (2–5).
    let questions: Vec<String> = data
        .as_array()
        .context("a list")?
        .iter()
        .skip(1)
        .flat_map(|s| s["qa"].as_array().cloned().unwrap_or_default())
        .filter_map(|q| q["question"].as_str().map(str::to_owned))
        .step_by(7)
        .take(100)
        .collect();

    // The raw embedder, configured as the server's, over the same texts in the same batches.
    let settings = retold_http::Settings::load(None)?;
    let model = retold_http::model_ops::load_model(&settings).await?;
    let sentence_vectors = settings.embedding.sentence_vectors;
    let mut record_texts = Vec::new();
    let mut sentence_texts = Vec::new();
    for body in &bodies {
        let mut texts = retold_domain::IndexedText {
            origin: retold_domain::Origin::Memory,
            speaker: None,
            content: body["content"].as_str().unwrap_or_default(),
            context: body["context"].as_str(),
        }
        .embedded_texts(sentence_vectors);
        sentence_texts.push(texts.split_off(1));
        record_texts.push(texts.remove(0));
    }
    let started = Instant::now();
    for (records, sentences) in record_texts.chunks(IMPORT_BATCH).zip(sentence_texts.chunks(IMPORT_BATCH)) {
        retold_domain::Embedder::embed(model.as_ref(), records).await?;
        let sentences: Vec<String> = sentences.concat();
        if !sentences.is_empty() {
            retold_domain::Embedder::embed(model.as_ref(), &sentences).await?;
        }
    }
    let raw_s = started.elapsed().as_secs_f64();
    let texts = record_texts.len() + sentence_texts.iter().map(Vec::len).sum::<usize>();
    drop(model);

    let dir = tempfile::tempdir()?;
    let (server, base) = serve(dir.path(), key, &[])?;
    let lines: Vec<String> = bodies.iter().map(Value::to_string).collect();
    let key = key.to_owned();
    let queries = questions.clone();
    let who = principal.clone();
    let (import_s, counts, http_ms) =
        tokio::task::spawn_blocking(move || -> Result<(f64, Value, Vec<Duration>)> {
            let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(600)).build()?;
            let host = crate::bench_pipeline::host_key(&client, &base, &key)?;
            let mut counts = serde_json::Map::new();
            let started = Instant::now();
            for batch in lines.chunks(IMPORT_BATCH) {
                let answer: Value = client
                    .post(format!("{base}/v1/memory/import"))
                    .bearer_auth(&host)
                    .header("content-type", "application/x-ndjson")
                    .body(batch.join("\n"))
                    .send()?
                    .error_for_status()?
                    .json()?;
                for (outcome, n) in answer["counts"].as_object().cloned().unwrap_or_default() {
                    let sum =
                        counts.get(&outcome).and_then(Value::as_u64).unwrap_or(0) + n.as_u64().unwrap_or(0);
                    counts.insert(outcome, json!(sum));
                }
            }
            let import_s = started.elapsed().as_secs_f64();
            // Warm-up, then each question once.
            for query in queries.iter().take(5) {
                client
                    .post(format!("{base}/v1/memory/search"))
                    .bearer_auth(&host)
                    .json(&json!({"principal": who, "query": query}))
                    .send()?;
            }
            let mut took = Vec::new();
            for query in &queries {
                let started = Instant::now();
                client
                    .post(format!("{base}/v1/memory/search"))
                    .bearer_auth(&host)
                    .json(&json!({"principal": who, "query": query}))
                    .send()?
                    .error_for_status()?;
                took.push(started.elapsed());
            }
            Ok((import_s, Value::Object(counts), took))
        })
        .await??;
    drop(server);

    // The same questions in process, on the store the server left (its model, its index).
    let settings = retold_http::Settings::load_with_env(
        None,
        [("RETOLD__SERVER__DATA_DIR".to_owned(), dir.path().display().to_string())],
    )?;
    let built = retold_http::build(&settings, retold_http::model_ops::load_model(&settings).await?).await?;
    let retriever = built.state.services.retriever.clone();
    let who = retold_domain::Principal {
        agent_id: retold_domain::AgentId::new("bench")?,
        user_id: retold_domain::UserId::new("host")?,
        project_id: None,
        session_id: None,
    };
    for query in questions.iter().take(5) {
        retriever.search(&who, &retold_retrieve::SearchRequest::new(query.clone())).await?;
    }
    let mut in_process = Vec::new();
    for query in &questions {
        let started = Instant::now();
        retriever.search(&who, &retold_retrieve::SearchRequest::new(query.clone())).await?;
        in_process.push(started.elapsed());
    }
    drop(built);

    let items = bodies.len();
    let (raw_rate, import_rate) = (items as f64 / raw_s, items as f64 / import_s);
    println!(
        "\n{items} LoCoMo turns (conversations 2–5) as memory_write bodies, {texts} texts with their sentences, batches of {IMPORT_BATCH}:"
    );
    println!("| door | seconds | records/s | of the raw embedder |\n|---|---|---|---|");
    println!("| raw embedder, in process | {raw_s:.1} | {raw_rate:.1} | 1.00 |");
    println!("| POST /v1/memory/import | {import_s:.1} | {import_rate:.1} | {:.2} |", import_rate / raw_rate);
    println!("import outcomes: {counts}");
    let (h50, h95, _) = pct3(http_ms);
    let (i50, i95, _) = pct3(in_process);
    println!(
        "\n{} LoCoMo questions against the {items} imported records, one at a time (query embedded each time):",
        questions.len()
    );
    println!("| door | p50 ms | p95 ms | p50 ratio |\n|---|---|---|---|");
    println!("| in process (Retriever::search) | {i50:.1} | {i95:.1} | 1.00 |");
    println!("| POST /v1/memory/search | {h50:.1} | {h95:.1} | {:.2} |", h50 / i50);
    Ok(json!({"records": items, "texts": texts, "batch": IMPORT_BATCH,
        "raw_embedder": {"seconds": raw_s, "records_per_s": raw_rate},
        "import": {"seconds": import_s, "records_per_s": import_rate, "ratio": import_rate / raw_rate, "counts": counts},
        "search": {"queries": questions.len(), "in_process_ms": {"p50": i50, "p95": i95}, "http_ms": {"p50": h50, "p95": h95}, "ratio_p50": h50 / i50}}))
}

/// A synthetic note of an agent's memory: a project's decision, a tool result, a preference,
/// each with identifiers, so that a query names what it is after.
fn note(n: usize, principal: &Value, scope: &str) -> Value {
    const PROJECTS: [&str; 12] = [
        "atlas", "beacon", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris", "juniper",
        "kestrel", "lumen",
    ];
    const OWNERS: [&str; 8] = ["Priya", "Sam", "Noor", "Kai", "Lena", "Tomás", "Aiko", "Ravi"];
    const DONE: [&str; 8] = [
        "moved the build cache to the shared volume",
        "rotated the deploy key",
        "raised the request timeout to 45 seconds",
        "pinned the database driver to 0.9",
        "switched the queue to at-least-once delivery",
        "added a canary stage before production",
        "dropped the legacy CSV export",
        "enabled query logging on the replica",
    ];
    let project = PROJECTS[n % PROJECTS.len()];
    let owner = OWNERS[(n / PROJECTS.len()) % OWNERS.len()];
    let done = DONE[(n / 7) % DONE.len()];
    let ticket = 1000 + n;
    let content = match n % 3 {
        0 => format!("On {project}, {owner} {done} (ticket {project}-{ticket})."),
        1 => format!(
            "Tool result for {project}-{ticket}: {owner}'s run finished in {}.{} s with exit code {}.",
            n % 90,
            n % 10,
            n % 4
        ),
        _ => format!(
            "{owner} asked that {project} reviews mention ticket {project}-{ticket} and wait for two approvals."
        ),
    };
    json!({"principal": principal, "type": "semantic", "scope": scope, "source_kind": "system", "content": content,
        "tags": [project]})
}

/// `bench roundtrip`: `n` records imported into one server, exported, restored into an empty
/// second server; the same questions asked of both, their results compared record by record.
pub(crate) async fn roundtrip(n: usize) -> Result<Value> {
    let _ = retold_http::hosted_stages(&retold_http::Settings::load(None)?)?;
    let principal = json!({"agent_id": "bench", "user_id": "host"});
    let scope = "agent:bench/host";
    let key = "bench-admin-key";
    let lines: Vec<String> = (0..n).map(|i| note(i, &principal, scope).to_string()).collect();
    let queries: Vec<String> = (0..100)
        .map(|q| {
            let n = q * 97 % n.max(1);
            match q % 4 {
                0 => format!("what did we do about ticket {}?", 1000 + n),
                1 => "who rotated the deploy key?".to_owned(),
                2 => format!("what is the review rule on {}?", ["atlas", "ember", "iris", "lumen"][q % 4]),
                _ => format!("how long did the run for ticket {} take?", 1000 + n),
            }
        })
        .collect();
    let (from_dir, to_dir) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let (from, from_url) = serve(from_dir.path(), key, &[])?;
    let (to, to_url) = serve(to_dir.path(), key, &[])?;
    let who = principal.clone();
    let report = tokio::task::spawn_blocking(move || -> Result<Value> {
        let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(900)).build()?;
        let host_of = |base: &str| crate::bench_pipeline::host_key(&client, base, key);
        let (from_host, to_host) = (host_of(&from_url)?, host_of(&to_url)?);
        let started = Instant::now();
        for batch in lines.chunks(IMPORT_BATCH) {
            client.post(format!("{from_url}/v1/memory/import")).bearer_auth(&from_host)
                .header("content-type", "application/x-ndjson").body(batch.join("\n")).send()?.error_for_status()?;
        }
        let import_s = started.elapsed().as_secs_f64();
        let ask = |base: &str, host: &str| -> Result<Vec<Vec<String>>> {
            let mut all = Vec::new();
            for query in &queries {
                let found: Value = client.post(format!("{base}/v1/memory/search")).bearer_auth(host)
                    .json(&json!({"principal": who, "query": query, "limit": 10})).send()?.error_for_status()?.json()?;
                all.push(found["results"].as_array().cloned().unwrap_or_default().iter()
                    .map(|r| r["record"]["id"].as_str().unwrap_or_default().to_owned()).collect());
            }
            Ok(all)
        };
        let before = ask(&from_url, &from_host)?;
        let started = Instant::now();
        let exported = client.get(format!("{from_url}/v1/admin/export/users/host")).bearer_auth(key).send()?.error_for_status()?.text()?;
        let export_s = started.elapsed().as_secs_f64();
        let export_lines: Vec<&str> = exported.lines().collect();
        let started = Instant::now();
        let mut restored = 0;
        for batch in export_lines.chunks(1000) {
            let answer: Value = client.post(format!("{to_url}/v1/admin/import")).bearer_auth(key)
                .header("content-type", "application/x-ndjson").body(batch.join("\n")).send()?.error_for_status()?.json()?;
            restored += answer["records"].as_u64().unwrap_or(0);
        }
        let restore_s = started.elapsed().as_secs_f64();
        let after = ask(&to_url, &to_host)?;
        let same = before.iter().zip(&after).filter(|(a, b)| a == b).count();
        let same_sets = before.iter().zip(&after).filter(|(a, b)| {
            let (mut a, mut b) = ((*a).clone(), (*b).clone());
            a.sort();
            b.sort();
            a == b
        }).count();
        let again = client.get(format!("{to_url}/v1/admin/export/users/host")).bearer_auth(key).send()?.error_for_status()?.text()?;
        let same_export = without_export_time(&again)? == without_export_time(&exported)?;
        println!("\n{n} records imported into one `retold serve`, exported, restored into an empty second one; 100 questions asked of both (first 10 results):");
        println!("| step | seconds | records/s |\n|---|---|---|");
        println!("| import (POST /v1/memory/import) | {import_s:.1} | {:.0} |", n as f64 / import_s);
        println!("| export (GET /v1/admin/export) | {export_s:.1} | {:.0} |", n as f64 / export_s);
        println!("| restore (POST /v1/admin/import) | {restore_s:.1} | {:.0} |", restored as f64 / restore_s);
        println!("identical results (ids in order): {same} / {}; same records in any order: {same_sets} / {}; restored {restored}; export of the restored store identical: {same_export}",
            queries.len(), queries.len());
        Ok(json!({"records": n, "import_s": import_s, "export_s": export_s, "restore_s": restore_s, "restored": restored,
            "queries": queries.len(), "identical_in_order": same, "identical_as_sets": same_sets, "export_again_identical": same_export,
            "export_bytes": exported.len()}))
    })
    .await??;
    drop(from);
    drop(to);
    Ok(json!({"roundtrip": report}))
}

/// An export's lines as JSON, its header without the time it was made (the one field two
/// exports of the same store differ in); every other field, the header's record count
/// included, is compared.
fn without_export_time(export: &str) -> Result<Vec<Value>> {
    export
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).context("an export line is JSON")?;
            if value["item"] == "export"
                && let Some(header) = value.as_object_mut()
            {
                header.remove("at");
            }
            Ok(value)
        })
        .collect()
}
