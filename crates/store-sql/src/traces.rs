//! Search traces written off the request's path, for both stores.
//!
//! A search hands its trace to a writer task and answers; the task turns every trace that
//! is waiting into JSON and writes them in one transaction (the store supplies the INSERT),
//! so searches wait for neither. Until a trace is written it is answered from memory, so
//! `trace` finds it right after the search; the stores' `close` waits until every handed
//! trace is written.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use retold_domain::{Result as DomainResult, SearchTrace};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement, TransactionTrait};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::convert::millis;
use crate::error::StoreError;

/// The store's INSERT of one trace row (its SQL, in its dialect).
pub type InsertTrace = fn(&str, &Row) -> Statement;

/// One trace as it is written.
#[derive(Debug)]
pub struct Row {
    pub at: i64,
    pub agent_id: String,
    pub user_id: String,
    pub trace: String,
}

/// The row a trace is written as (its JSON built here, off the search's path).
fn row(trace: &SearchTrace) -> Row {
    Row {
        at: millis(trace.at),
        agent_id: trace.agent_id.as_str().to_owned(),
        user_id: trace.user_id.as_str().to_owned(),
        trace: trace_json(trace),
    }
}

enum Message {
    Written(String),
    Flush(oneshot::Sender<()>),
}

/// The writer task's handle: the queue and the traces not yet written.
pub struct TraceWriter {
    queue: mpsc::UnboundedSender<Message>,
    pending: Arc<Mutex<HashMap<String, Arc<SearchTrace>>>>,
}

impl std::fmt::Debug for TraceWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceWriter").finish_non_exhaustive()
    }
}

/// Most traces written in one transaction.
const BATCH: usize = 256;

impl TraceWriter {
    /// Start the writer task on `writer` (a pool, or SQLite's one writer connection).
    pub fn start(writer: DatabaseConnection, insert: InsertTrace) -> Self {
        let (queue, mut inbox) = mpsc::unbounded_channel::<Message>();
        let pending: Arc<Mutex<HashMap<String, Arc<SearchTrace>>>> = Arc::default();
        let shared = pending.clone();
        tokio::spawn(async move {
            while let Some(first) = inbox.recv().await {
                let mut ids = Vec::new();
                let mut flushes = Vec::new();
                let mut next = Some(first);
                while let Some(message) = next.take() {
                    match message {
                        Message::Written(id) => ids.push(id),
                        Message::Flush(done) => flushes.push(done),
                    }
                    if ids.len() < BATCH {
                        next = inbox.try_recv().ok();
                    }
                }
                if !ids.is_empty() {
                    let handed: Vec<(String, Arc<SearchTrace>)> = {
                        let pending = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        ids.iter().filter_map(|id| pending.get(id).map(|p| (id.clone(), p.clone()))).collect()
                    };
                    let rows: Vec<(String, Row)> =
                        handed.into_iter().map(|(id, trace)| (id, row(&trace))).collect();
                    if let Err(error) = write_batch(&writer, insert, &rows).await {
                        tracing::error!(%error, traces = rows.len(), "search_log traces could not be written");
                    }
                    let mut pending = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    for id in &ids {
                        pending.remove(id);
                    }
                }
                for done in flushes {
                    let _ = done.send(());
                }
            }
        });
        Self { queue, pending }
    }

    /// Hand a trace to the writer.
    pub fn hand(&self, trace: SearchTrace) -> DomainResult<()> {
        let id = trace.id.as_str().to_owned();
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), Arc::new(trace));
        self.queue
            .send(Message::Written(id))
            .map_err(|_| retold_domain::DomainError::backend("search_log", "the trace writer has stopped"))
    }

    /// A trace handed but not written yet.
    pub fn waiting(&self, id: &str) -> Option<Row> {
        let trace = self.pending.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
        trace.map(|trace| row(&trace))
    }

    /// Wait until every trace handed so far is written.
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.queue.send(Message::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }
}

/// The JSON a trace is stored as. Written straight from the trace, without building a
/// `serde_json::Value` of it first (a map and a string per key and per number; 320 µs
/// against 32 µs for a trace of three channels' 50 candidates, release build), with every
/// object's keys in sorted order as that `Value` printed them; `tests` holds the `Value`
/// form and checks the two are byte for byte the same. A key a list holds twice (a stage
/// timed twice) keeps its last value.
fn trace_json(trace: &SearchTrace) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        at: String,
        channels: BTreeMap<&'a str, Vec<Candidate<'a>>>,
        drops: Vec<Removed<'a>>,
        eligible_count: u64,
        fused: Vec<Fused<'a>>,
        id: &'a str,
        notes: Vec<Note<'a>>,
        principal: Principal<'a>,
        query: &'a str,
        request: BTreeMap<&'a str, &'a str>,
        results: Vec<Shown<'a>>,
        rewrite_note: Option<&'a str>,
        rewrite_status: &'a str,
        timings_us: BTreeMap<&'a str, u64>,
    }
    #[derive(Serialize)]
    struct Candidate<'a> {
        detail: &'a str,
        rank: u32,
        record_id: &'a str,
        score: f64,
    }
    #[derive(Serialize)]
    struct Removed<'a> {
        reason: &'a str,
        record_id: &'a str,
        stage: &'a str,
    }
    #[derive(Serialize)]
    struct Fused<'a> {
        record_id: &'a str,
        score: f64,
    }
    #[derive(Serialize)]
    struct Note<'a> {
        note: &'a str,
        stage: &'a str,
    }
    #[derive(Serialize)]
    struct Principal<'a> {
        agent_id: &'a str,
        user_id: &'a str,
    }
    #[derive(Serialize)]
    struct Shown<'a> {
        explanation: &'a str,
        rank: u32,
        record_id: &'a str,
        score: f64,
    }
    let doc = Doc {
        at: trace.at.to_rfc3339(),
        channels: trace
            .channels
            .iter()
            .map(|(name, candidates)| {
                let candidates = candidates
                    .iter()
                    .map(|c| Candidate {
                        detail: &c.detail,
                        rank: c.rank,
                        record_id: c.record_id.as_str(),
                        score: c.score,
                    })
                    .collect();
                (name.as_str(), candidates)
            })
            .collect(),
        drops: trace
            .drops
            .iter()
            .map(|d| Removed { reason: &d.reason, record_id: d.record_id.as_str(), stage: d.stage.as_str() })
            .collect(),
        eligible_count: trace.eligible_count,
        fused: trace
            .fused
            .iter()
            .map(|(id, score)| Fused { record_id: id.as_str(), score: *score })
            .collect(),
        id: trace.id.as_str(),
        notes: trace.notes.iter().map(|n| Note { note: &n.note, stage: n.stage.as_str() }).collect(),
        principal: Principal { agent_id: trace.agent_id.as_str(), user_id: trace.user_id.as_str() },
        query: &trace.query,
        request: trace.request.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
        results: trace
            .results
            .iter()
            .map(|r| Shown {
                explanation: &r.explanation,
                rank: r.rank,
                record_id: r.record_id.as_str(),
                score: r.score,
            })
            .collect(),
        rewrite_note: trace.rewrite_note.as_deref(),
        rewrite_status: trace.rewrite_status.as_str(),
        timings_us: trace.timings_us.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
    };
    serde_json::to_string(&doc).expect("a trace of strings and numbers serialises")
}

/// Write `rows` in one transaction (IMMEDIATE on SQLite, so it never waits to upgrade a lock;
/// the mode means nothing to PostgreSQL).
async fn write_batch(
    writer: &DatabaseConnection,
    insert: InsertTrace,
    rows: &[(String, Row)],
) -> Result<(), StoreError> {
    let txn = writer
        .begin_with_options(sea_orm::TransactionOptions {
            sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
            ..Default::default()
        })
        .await?;
    for (id, row) in rows {
        txn.execute_raw(insert(id, row)).await?;
    }
    txn.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use retold_domain::{
        AgentId, Channel, DropStage, PipelineStage, RecordId, RewriteStatus, SearchId, SearchTrace,
        TraceCandidate, TraceDrop, TraceNote, TraceResult, UserId,
    };
    use serde_json::{Value, json};

    use super::trace_json;

    /// The form `trace_json` replaced: a `serde_json::Value` of the trace.
    fn as_value(trace: &SearchTrace) -> Value {
        let pairs = |items: &[(String, String)]| -> Value {
            items
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        json!({
            "id": trace.id.as_str(),
            "at": trace.at.to_rfc3339(),
            "principal": {"agent_id": trace.agent_id.as_str(), "user_id": trace.user_id.as_str()},
            "request": pairs(&trace.request),
            "query": trace.query,
            "rewrite_status": trace.rewrite_status.as_str(),
            "rewrite_note": trace.rewrite_note,
            "eligible_count": trace.eligible_count,
            "channels": trace.channels.iter().map(|(name, candidates)| (name.as_str().to_owned(), Value::from(
                candidates.iter().map(|c| json!({
                    "record_id": c.record_id.as_str(), "rank": c.rank, "score": c.score, "detail": c.detail,
                })).collect::<Vec<_>>()
            ))).collect::<serde_json::Map<_, _>>(),
            "fused": trace.fused.iter().map(|(id, score)| json!({"record_id": id.as_str(), "score": score})).collect::<Vec<_>>(),
            "drops": trace.drops.iter().map(|d| json!({"record_id": d.record_id.as_str(), "stage": d.stage.as_str(), "reason": d.reason})).collect::<Vec<_>>(),
            "notes": trace.notes.iter().map(|n| json!({"stage": n.stage.as_str(), "note": n.note})).collect::<Vec<_>>(),
            "results": trace.results.iter().map(|r| json!({
                "record_id": r.record_id.as_str(), "rank": r.rank, "score": r.score, "explanation": r.explanation,
            })).collect::<Vec<_>>(),
            "timings_us": trace.timings_us.iter().map(|(k, v)| (k.as_str().to_owned(), Value::from(*v))).collect::<serde_json::Map<_, _>>(),
        })
    }

    fn id(n: u32) -> RecordId {
        RecordId::new(format!("mem_{n:08}")).unwrap()
    }

    /// Byte for byte what the `Value` form printed: keys sorted at every level, a key given
    /// twice keeping its last value, a non-finite score as `null`, text escaped alike.
    #[test]
    fn the_json_is_the_one_a_value_of_the_trace_prints() {
        let candidate = |n: u32, score: f64| TraceCandidate {
            record_id: id(n),
            rank: n,
            score,
            detail: format!("terms 1/2: \"quoted\" \\ é {n}"),
        };
        let trace = SearchTrace {
            id: SearchId::from_body("0123456789abcdef0123456789").unwrap(),
            at: chrono::DateTime::from_timestamp_millis(1_765_000_000_123).unwrap(),
            agent_id: AgentId::new("agent-1").unwrap(),
            user_id: UserId::new("user-1").unwrap(),
            request: vec![
                ("query".into(), "what\nnow?".into()),
                ("limit".into(), "10".into()),
                ("limit".into(), "20".into()),
            ],
            query: "what now?".into(),
            rewrite_status: RewriteStatus::Off,
            rewrite_note: Some("none".into()),
            eligible_count: 3,
            channels: vec![
                (Channel::Lexical, vec![candidate(2, 7.25), candidate(1, f64::NAN)]),
                (Channel::Dense, vec![candidate(1, 0.5), candidate(3, -0.125)]),
            ],
            fused: vec![(id(1), 1.0 / 6.0), (id(2), f64::INFINITY)],
            drops: vec![TraceDrop {
                record_id: id(3),
                stage: DropStage::Gate,
                reason: "below the floor".into(),
            }],
            notes: vec![TraceNote { stage: PipelineStage::Dense, note: "a note".into() }],
            results: vec![TraceResult {
                record_id: id(1),
                rank: 1,
                score: 0.3,
                explanation: "dense #1".into(),
            }],
            timings_us: vec![
                (PipelineStage::Gate, 5),
                (PipelineStage::Dense, 1200),
                (PipelineStage::Gate, 7),
            ],
        };
        assert_eq!(trace_json(&trace), as_value(&trace).to_string());
        let empty = SearchTrace {
            channels: vec![],
            fused: vec![],
            drops: vec![],
            notes: vec![],
            results: vec![],
            request: vec![],
            timings_us: vec![],
            rewrite_note: None,
            ..trace
        };
        assert_eq!(trace_json(&empty), as_value(&empty).to_string());
    }
}
