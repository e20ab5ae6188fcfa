//! `cargo xtask bench index|store [--large] [--out FILE]`: speed and memory figures,
//! printed as a table and written as JSON. Always runs a release build (the xtask builds one).

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use retold_domain::chrono::{TimeZone, Utc};
use retold_domain::{
    AgentId, Centring, Confidence, Content, EligibilityFilter, EligibilityIndex, EmbeddingModelInfo,
    EmbeddingRow, EmbeddingSource, Inspection, MemoryRecord, MemoryType, PageRequest, RecordBrowse, RecordId,
    RecordKey, RecordWriter, Scope, SourceKind, Status, VectorIndex, WriteUnit,
};
use retold_index::{ExactIndex, OnnxEmbedder, OnnxEmbedderConfig};
use retold_store_sqlite::{SqliteStore, StoreConfig};
use serde_json::{Value, json};

use crate::bench_pipeline::{pct as percentiles, rss_mb};

struct Args {
    what: String,
    clients: usize,
    seconds: u64,
    large: bool,
    out: Option<std::path::PathBuf>,
    /// Only these store sizes (`--n 1000,50000`).
    sizes: Option<Vec<usize>>,
    /// Only these dimensions (`--dims 384`).
    dims: Option<Vec<usize>>,
    /// `bench http`: replicas of `retold serve` on one PostgreSQL database (`--replicas 2`);
    /// 1, the default, is one server on its SQLite file.
    replicas: usize,
}

fn list(value: Option<&String>, flag: &str) -> Result<Vec<usize>> {
    value
        .with_context(|| format!("{flag} needs a comma-separated list of numbers"))?
        .split(',')
        .map(|n| n.trim().parse::<usize>().with_context(|| format!("{flag}: {n:?} is not a number")))
        .collect()
}

fn parse(args: &[String]) -> Result<Args> {
    let mut parsed = Args {
        what: String::new(),
        clients: 8,
        seconds: 30,
        large: false,
        out: None,
        sizes: None,
        dims: None,
        replicas: 1,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--large" => parsed.large = true,
            "--n" => parsed.sizes = Some(list(it.next(), "--n")?),
            "--dims" => parsed.dims = Some(list(it.next(), "--dims")?),
            "--out" => parsed.out = Some(it.next().context("--out needs a file")?.into()),
            "--clients" => parsed.clients = it.next().context("--clients needs a number")?.parse()?,
            "--seconds" => parsed.seconds = it.next().context("--seconds needs a number")?.parse()?,
            "--replicas" => parsed.replicas = it.next().context("--replicas needs a number")?.parse()?,
            "index" | "store" | "stores" | "pipeline" | "http" | "ops" | "turns" | "writes" | "roundtrip"
                if parsed.what.is_empty() =>
            {
                parsed.what = arg.clone()
            }
            other => bail!(
                "unknown bench argument {other:?}; usage: cargo xtask bench [pipeline|index|store|stores|http|ops|turns|writes|roundtrip] [--large] [--n N,..] [--dims D,..] [--clients C] [--seconds S] [--out FILE]"
            ),
        }
    }
    if parsed.what.is_empty() {
        parsed.what = "pipeline".into();
    }
    Ok(parsed)
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let args = parse(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let report = match args.what.as_str() {
        "index" => runtime.block_on(bench_index(&args))?,
        "store" => runtime.block_on(bench_store())?,
        "stores" => runtime.block_on(crate::bench_pipeline::stores(
            args.sizes.clone().unwrap_or_else(|| vec![10_000, 50_000]),
        ))?,
        "ops" => {
            let sizes = args.sizes.clone().unwrap_or_else(|| vec![10_000, 50_000]);
            runtime.block_on(crate::bench_pipeline::ops(&sizes))?
        }
        "roundtrip" => runtime.block_on(crate::bench_writes::roundtrip(
            args.sizes.as_ref().and_then(|s| s.first().copied()).unwrap_or(50_000),
        ))?,
        "writes" => runtime.block_on(crate::bench_writes::writes(
            args.sizes.as_ref().and_then(|s| s.first().copied()).unwrap_or(100),
        ))?,
        "turns" => runtime.block_on(crate::bench_pipeline::turns(
            args.sizes.as_ref().and_then(|s| s.first().copied()).unwrap_or(300),
        ))?,
        "http" if args.replicas == 2 => runtime.block_on(crate::bench_pipeline::http_replicas(
            args.clients,
            args.seconds,
            args.sizes.as_ref().and_then(|s| s.first().copied()).unwrap_or(10_000),
        ))?,
        "http" if args.replicas == 1 => runtime.block_on(crate::bench_pipeline::http(
            args.clients,
            args.seconds,
            args.sizes.as_ref().and_then(|s| s.first().copied()).unwrap_or(50_000),
        ))?,
        "http" => bail!("--replicas takes 1 (one server on SQLite) or 2 (two on one PostgreSQL database)"),
        _ => runtime.block_on(crate::bench_pipeline::pipeline(args.large, args.sizes.clone()))?,
    };
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn vector(&mut self, dims: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dims).map(|_| self.next_f32()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

fn ms(p: (f64, f64)) -> Value {
    json!({"p50": round(p.0), "p95": round(p.1)})
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn id(n: usize) -> RecordId {
    RecordId::new(format!("mem_{n:026}")).expect("valid id")
}

fn record(n: usize, scope: &Scope, content: String) -> MemoryRecord {
    let at = Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()
        + retold_domain::chrono::TimeDelta::seconds(n as i64);
    MemoryRecord {
        id: id(n),
        memory_type: MemoryType::Semantic,
        version: 1,
        content: Content::new(content).expect("non-empty"),
        key: None,
        scope: scope.clone(),
        source_kind: SourceKind::System,
        source_ref: None,
        creator_agent_id: AgentId::new("bench").unwrap(),
        evidence: None,
        created_at: at,
        event_at: Some(at),
        expires_at: None,
        confidence: Confidence::new(0.9).unwrap(),
        status: Status::Confirmed,
        supersedes_id: None,
        reinforcements: 0,
        last_reinforced_at: None,
        tags: vec![],
        context: None,
        origin: retold_domain::Origin::Memory,
        speaker: None,
    }
}

const WORDS: &[&str] = &[
    "memory",
    "agent",
    "project",
    "commit",
    "vector",
    "index",
    "search",
    "token",
    "error",
    "refresh",
    "oauth",
    "schema",
    "policy",
    "grant",
    "scope",
    "session",
    "episode",
    "fact",
    "preference",
    "release",
    "benchmark",
    "latency",
    "cache",
];

fn sentence(rng: &mut Rng, n: usize) -> String {
    let words: Vec<&str> =
        (0..12).map(|_| WORDS[((rng.next_f32() + 1.0) * 11.0) as usize % WORDS.len()]).collect();
    format!("record {n}: {}", words.join(" "))
}

/// Sentence vectors per record in the bench's sentence-weighed index.
const SENTENCES_PER_RECORD: usize = 3;

async fn bench_index(args: &Args) -> Result<Value> {
    let mut sizes = vec![1_000, 10_000, 50_000];
    if args.large {
        sizes.push(200_000);
    }
    let sizes = args.sizes.clone().unwrap_or(sizes);
    let all_dims = args.dims.clone().unwrap_or_else(|| vec![384, 1024]);
    let queries = 40;
    let k = 10;
    let full_centring = Centring::new(1.0)?;
    let mut rows = Vec::new();
    println!(
        "| n | dims | eligible | masked search p50/p95 ms | centred search p50/p95 ms | centred, record + sentence lists p50/p95 ms | plain scan p50/p95 ms | ratio p50 | GB/s | usearch exact p50 ms | usearch filtered p50 ms (recall@10) | cold start s | warm start p50/p95 s | RSS MB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &dims in &all_dims {
        for &n in &sizes {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (n as u64) ^ ((dims as u64) << 32));
            let vectors: Vec<Vec<f32>> = (0..n).map(|_| rng.vector(dims)).collect();
            // Cold and warm start from a real SQLite file (sizes the seed targets: up to 50k).
            let (cold, warm) = if n <= 50_000 {
                start_times(&vectors, dims).await?
            } else {
                (f64::NAN, (f64::NAN, f64::NAN))
            };
            let index = ExactIndex::with_capacity(dims, n);
            for (i, v) in vectors.iter().enumerate() {
                index.upsert(RecordKey(i as u64 + 1), &id(i + 1), v)?;
            }
            let rss = rss_mb();
            // The shipped dense search: the same records, each also with
            // `SENTENCES_PER_RECORD` sentence vectors, ranked as the retriever ranks them: the
            // record list by the own vector and the sentence list by the best sentence, in one
            // pass (LoCoMo's turns have 3.2 sentences; a one-sentence record has none).
            let sentenced = (n <= 50_000).then(|| ExactIndex::with_capacity(dims, n));
            if let Some(sentenced) = &sentenced {
                for (i, v) in vectors.iter().enumerate() {
                    let sentences: Vec<f32> =
                        (0..SENTENCES_PER_RECORD).flat_map(|_| rng.vector(dims)).collect();
                    sentenced.upsert_with(RecordKey(i as u64 + 1), &id(i + 1), v, &sentences)?;
                }
            }
            let lists = [retold_domain::SentenceWeight::NONE, retold_domain::SentenceWeight::BEST];
            let qs: Vec<Vec<f32>> = (0..queries).map(|_| rng.vector(dims)).collect();
            // usearch, for the side-by-side (HNSW build is slow: only up to 50k at 384 dims).
            let usearch = if dims == 384 && n <= 50_000 { Some(build_usearch(&vectors)?) } else { None };
            for eligible_share in [1.0f64, 0.1] {
                let eligible: Vec<RecordKey> =
                    (1..=n as u64).filter(|k| eligible_share >= 1.0 || k % 10 == 3).map(RecordKey).collect();
                let eligible_set: std::collections::HashSet<u64> = eligible.iter().map(|k| k.0).collect();
                let mut masked = Vec::new();
                let mut centred = Vec::new();
                let mut with_sentences = Vec::new();
                let mut plain = Vec::new();
                let mut exact_u = Vec::new();
                let mut filtered_u = Vec::new();
                let mut recall_hits = 0usize;
                for q in &qs {
                    let t = Instant::now();
                    let hits = index.search(q, &eligible, k, Centring::NONE)?;
                    masked.push(t.elapsed());
                    let t = Instant::now();
                    std::hint::black_box(index.search(q, &eligible, k, full_centring)?);
                    centred.push(t.elapsed());
                    if let Some(sentenced) = &sentenced {
                        let t = Instant::now();
                        std::hint::black_box(sentenced.search_lists(
                            q,
                            &eligible,
                            k,
                            full_centring,
                            &lists,
                        )?);
                        with_sentences.push(t.elapsed());
                    }
                    let t = Instant::now();
                    std::hint::black_box(index.plain_scan_baseline(q, k));
                    plain.push(t.elapsed());
                    if let Some(u) = &usearch {
                        if eligible_share >= 1.0 {
                            let t = Instant::now();
                            std::hint::black_box(u.exact_search(q, k)?);
                            exact_u.push(t.elapsed());
                        }
                        let t = Instant::now();
                        let found = u.filtered_search(q, k, |key| eligible_set.contains(&key))?;
                        filtered_u.push(t.elapsed());
                        let truth: std::collections::HashSet<u64> =
                            hits.iter().map(|h| h.record_key.0).collect();
                        recall_hits += found.keys.iter().filter(|key| truth.contains(key)).count();
                    }
                }
                let m = percentiles(masked);
                let c = percentiles(centred);
                let cs = (!with_sentences.is_empty()).then(|| percentiles(with_sentences));
                let p = percentiles(plain);
                let scanned_bytes = (eligible.len() * dims * 4) as f64;
                let gbps = scanned_bytes / (m.0 / 1e3) / 1e9;
                let exact_u = (!exact_u.is_empty()).then(|| percentiles(exact_u));
                let filtered_u = (!filtered_u.is_empty()).then(|| percentiles(filtered_u));
                let recall = usearch.as_ref().map(|_| recall_hits as f64 / (queries * k) as f64);
                println!(
                    "| {n} | {dims} | {:.0}% | {:.3} / {:.3} | {:.3} / {:.3} | {} | {:.3} / {:.3} | {:.2} | {:.1} | {} | {} | {} | {} | {rss} |",
                    eligible_share * 100.0,
                    m.0,
                    m.1,
                    c.0,
                    c.1,
                    cs.map_or("-".into(), |cs| format!("{:.3} / {:.3}", cs.0, cs.1)),
                    p.0,
                    p.1,
                    m.0 / p.0,
                    gbps,
                    exact_u.map_or("-".into(), |e| format!("{:.3}", e.0)),
                    filtered_u.map_or("-".into(), |f| format!("{:.3} ({:.2})", f.0, recall.unwrap_or(0.0))),
                    if cold.is_nan() { "-".into() } else { format!("{cold:.3}") },
                    if warm.0.is_nan() { "-".into() } else { format!("{:.3} / {:.3}", warm.0, warm.1) },
                );
                rows.push(json!({
                    "n": n, "dims": dims, "eligible": eligible_share,
                    "search_ms": ms(m), "centred_search_ms": ms(c),
                    "centred_sentences_search_ms": cs.map(ms), "sentences_per_record": SENTENCES_PER_RECORD, "plain_scan_ms": ms(p), "ratio_p50": round(m.0 / p.0), "gb_per_s": round(gbps),
                    "usearch_exact_ms": exact_u.map(ms), "usearch_filtered_ms": filtered_u.map(ms),
                    "usearch_filtered_recall_at_10": recall,
                    "cold_start_s": (!cold.is_nan()).then_some(round(cold)),
                    "warm_start_s": (!warm.0.is_nan()).then(|| json!({"p50": round(warm.0), "p95": round(warm.1)})),
                    "rss_mb": rss,
                }));
            }
        }
    }
    let embedder = if args.sizes.is_none() && args.dims.is_none() { bench_embedder()? } else { Value::Null };
    Ok(json!({"index": rows, "embedder": embedder}))
}

fn build_usearch(vectors: &[Vec<f32>]) -> Result<usearch::Index> {
    let options = usearch::IndexOptions {
        dimensions: vectors[0].len(),
        metric: usearch::MetricKind::IP,
        quantization: usearch::ScalarKind::F32,
        ..Default::default()
    };
    let index = usearch::Index::new(&options)?;
    index.reserve(vectors.len())?;
    for (i, v) in vectors.iter().enumerate() {
        index.add(i as u64 + 1, v)?;
    }
    Ok(index)
}

/// Write `vectors` as records with embeddings into a fresh SQLite file, then time
/// open + rebuild: the first time (cold) and five more times (warm p50/p95).
async fn start_times(vectors: &[Vec<f32>], dims: usize) -> Result<(f64, (f64, f64))> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.db");
    let model = EmbeddingModelInfo { name: "bench".into(), version: 1, dims: dims as u32 };
    {
        let store = SqliteStore::open(&StoreConfig::new(&path)).await?;
        let scope = Scope::parse("project:bench")?;
        for (chunk_index, chunk) in vectors.chunks(1_000).enumerate() {
            let mut unit = WriteUnit::default();
            for (i, v) in chunk.iter().enumerate() {
                let n = chunk_index * 1_000 + i + 1;
                unit.inserts.push(record(n, &scope, format!("record {n}")));
                unit.embeddings.push(EmbeddingRow {
                    record_id: id(n),
                    model: model.name.clone(),
                    version: 1,
                    dims: dims as u32,
                    vector: v.clone(),
                    sentences: Vec::new(),
                    sentences_pending: false,
                });
            }
            store.apply(unit).await?;
        }
        store.close().await?;
    }
    let mut times = Vec::new();
    for run in 0..6 {
        let t = Instant::now();
        let store = SqliteStore::open(&StoreConfig::new(&path)).await?;
        let opened = t.elapsed();
        let (index, report) = ExactIndex::rebuild(&store, &model).await?;
        times.push(t.elapsed());
        if run == 0 && std::env::var_os("RETOLD_BENCH_BREAKDOWN").is_some() {
            let t2 = Instant::now();
            let scan = store.compatible_embeddings(&model.name, 1, dims as u32).await?;
            let scanned = t2.elapsed();
            let t3 = Instant::now();
            std::hint::black_box(ExactIndex::from_scan(scan)?);
            eprintln!(
                "n={} dims={dims}: open {:?}, open+rebuild {:?}; again: scan {:?}, build {:?}",
                vectors.len(),
                opened,
                times[0],
                scanned,
                t3.elapsed()
            );
        }
        anyhow::ensure!(
            report.loaded == vectors.len() && index.live_len() == vectors.len(),
            "rebuild lost rows"
        );
        store.close().await?;
    }
    let cold = times.remove(0).as_secs_f64();
    let (p50, p95) = percentiles(times);
    Ok((cold, (p50 / 1e3, p95 / 1e3)))
}

fn bench_embedder() -> Result<Value> {
    // Two workers: the batch throughput below is what two threads reach with a session each.
    let embedder = OnnxEmbedder::load(OnnxEmbedderConfig {
        workers: 2,
        threads: 1,
        ..OnnxEmbedderConfig::provisioned()
    })?;
    let mut rng = Rng(42);
    let (mut single, mut pair, mut one_run) = (Vec::new(), Vec::new(), Vec::new());
    let (mut record, mut with_sentences) = (Vec::new(), Vec::new());
    for n in 0..40 {
        let text = vec![sentence(&mut rng, n)];
        let t = Instant::now();
        embedder.embed_blocking(&text)?;
        single.push(t.elapsed());
        // A query that names a person (`retrieval.dense_name_weight`): it, then itself without
        // the name, as the dense channel embeds them; measured beside the single text.
        let without = vec![text[0].split_once(' ').map_or("", |(_, rest)| rest).to_owned()];
        let t = Instant::now();
        embedder.embed_blocking(&text)?;
        embedder.embed_blocking(&without)?;
        pair.push(t.elapsed());
        // A query that says "I" or "you": it and itself less its pronouns, in one request
        // (one run above embedding.batch_size 1).
        let both = vec![text[0].clone(), without[0].clone()];
        let t = Instant::now();
        embedder.embed_blocking(&both)?;
        one_run.push(t.elapsed());
        // A four-sentence record as the write path embeds it: alone (sentence vectors off),
        // and with its sentences in the same run (`embedding.sentence_vectors`).
        let content =
            (0..4).map(|i| format!("{}.", sentence(&mut rng, n * 4 + i))).collect::<Vec<_>>().join(" ");
        let alone = vec![content.clone()];
        let t = Instant::now();
        embedder.embed_blocking(&alone)?;
        record.push(t.elapsed());
        let all = retold_domain::IndexedText {
            origin: retold_domain::Origin::Memory,
            speaker: None,
            content: &content,
            context: None,
        }
        .embedded_texts(16);
        let t = Instant::now();
        embedder.embed_blocking(&all)?;
        with_sentences.push(t.elapsed());
    }
    let batch: Vec<String> = (0..512).map(|n| sentence(&mut rng, n)).collect();
    // Two threads, as a server with two workers runs bulk batches.
    let t = Instant::now();
    std::thread::scope(|s| {
        for half in batch.chunks(256) {
            let embedder = &embedder;
            s.spawn(move || embedder.embed_blocking(half).map(|_| ()));
        }
    });
    let per_s = batch.len() as f64 / t.elapsed().as_secs_f64();
    let (q, named, pronoun) = (percentiles(single), percentiles(pair), percentiles(one_run));
    let (record, with_sentences) = (percentiles(record), percentiles(with_sentences));
    println!(
        "\nembedder (all-MiniLM-L6-v2, the default files): query p50 {:.2} ms, p95 {:.2} ms; a query that names \
         a person (it, then itself less the name) p50 {:.2} ms, p95 {:.2} ms; a query with pronouns (it and \
         itself less them, one request) p50 {:.2} ms, p95 {:.2} ms; a four-sentence record alone p50 {:.2} ms, \
         p95 {:.2} ms, with its sentences (one request) p50 {:.2} ms, p95 {:.2} ms; batch {:.0} texts/s",
        q.0,
        q.1,
        named.0,
        named.1,
        pronoun.0,
        pronoun.1,
        record.0,
        record.1,
        with_sentences.0,
        with_sentences.1,
        per_s
    );
    Ok(json!({"query_ms": ms(q), "named_query_ms": ms(named), "pronoun_query_ms": ms(pronoun),
        "record_ms": ms(record), "record_with_sentences_ms": ms(with_sentences), "batch_per_s": round(per_s)}))
}

async fn bench_store() -> Result<Value> {
    let mut sizes = BTreeMap::new();
    println!(
        "| rows | insert records/s (one transaction each, with FTS row) | eligible-id query p50 / p95 ms |"
    );
    println!("|---|---|---|");
    let mut rng = Rng(7);
    for n in [1_000usize, 10_000, 50_000] {
        let dir = tempfile::tempdir()?;
        let store = SqliteStore::open(&StoreConfig::new(dir.path().join("bench.db"))).await?;
        let scopes: Vec<Scope> = (0..10).map(|i| Scope::parse(&format!("project:p{i}")).unwrap()).collect();
        let t = Instant::now();
        for i in 1..=n {
            let r = record(i, &scopes[i % scopes.len()], sentence(&mut rng, i));
            store.apply(WriteUnit { inserts: vec![r], ..WriteUnit::default() }).await?;
        }
        let per_s = n as f64 / t.elapsed().as_secs_f64();
        let filter = EligibilityFilter {
            scopes: scopes[..5].to_vec(),
            statuses: EligibilityFilter::statuses_for(false),
            now: Utc::now(),
            types: None,
            event_from: None,
            event_to: None,
            include_conflicts: false,
            origins: None,
            excluded_session: None,
        };
        let mut times = Vec::new();
        for _ in 0..30 {
            let t = Instant::now();
            let ids = store.eligible(&filter).await?;
            times.push(t.elapsed());
            anyhow::ensure!(ids.len() == n / 2, "expected half the rows eligible, got {}", ids.len());
        }
        let q = percentiles(times);
        println!("| {n} | {per_s:.0} | {:.2} / {:.2} |", q.0, q.1);
        let browse = bench_browse(&store, &scopes[3], n).await?;
        sizes.insert(
            n.to_string(),
            json!({"insert_per_s": round(per_s), "eligible_ms": ms(q), "browse_ms": browse}),
        );
        store.close().await?;
    }
    println!(
        "\ninspector record pages (`GET /v1/admin/records`: one page of 50 and the total count), p50 / p95 ms:"
    );
    println!("| rows | first page | last page | one scope + status | a common word | rare words | an id |");
    println!("|---|---|---|---|---|---|---|");
    for (n, size) in &sizes {
        let b = &size["browse_ms"];
        let cell = |k: &str| format!("{} / {}", b[k]["p50"], b[k]["p95"]);
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} |",
            cell("first"),
            cell("last"),
            cell("scope_status"),
            cell("common_word"),
            cell("rare_words"),
            cell("id")
        );
    }
    Ok(json!({"store": sizes}))
}

/// The inspector's record pages over `n` rows: each filter 30 times.
async fn bench_browse(store: &SqliteStore, scope: &Scope, n: usize) -> Result<Value> {
    let page = |offset: usize| PageRequest { limit: 50, offset };
    let cases = [
        ("first", RecordBrowse { scope: None, status: None, text: None, page: page(0) }),
        ("last", RecordBrowse { scope: None, status: None, text: None, page: page(n - 50) }),
        (
            "scope_status",
            RecordBrowse {
                scope: Some(scope.clone()),
                status: Some(Status::Confirmed),
                text: None,
                page: page(0),
            },
        ),
        (
            "common_word",
            RecordBrowse { scope: None, status: None, text: Some("agent".into()), page: page(0) },
        ),
        (
            "rare_words",
            RecordBrowse {
                scope: None,
                status: None,
                text: Some(format!("record {}:", n / 2)),
                page: page(0),
            },
        ),
        ("id", RecordBrowse { scope: None, status: None, text: Some(id(n / 2).to_string()), page: page(0) }),
    ];
    let mut out = serde_json::Map::new();
    for (name, filter) in cases {
        let mut times = Vec::new();
        for _ in 0..30 {
            let t = Instant::now();
            let (records, total) = store.browse_records(&filter).await?;
            times.push(t.elapsed());
            anyhow::ensure!(total == 0 || !records.is_empty(), "{name}: a page of nothing out of {total}");
        }
        out.insert(name.into(), ms(percentiles(times)));
    }
    Ok(Value::Object(out))
}
