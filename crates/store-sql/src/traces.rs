//! Search traces written off the request's path, for both stores.
//!
//! A search hands its trace to a writer task and answers; the task turns every trace that
//! is waiting into JSON and writes them in one transaction (the store supplies the INSERT),
//! so searches wait for neither. Until a trace is written it is answered from memory, so `trace` finds it right after
//! the search; the stores' `close` waits until every handed trace is written.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use retold_domain::{Result as DomainResult, SearchTrace};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement, TransactionTrait};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::error::StoreError;

/// The store's INSERT of one trace row (its SQL, in its dialect).
pub type InsertTrace = fn(&str, &Row) -> Statement;

/// One trace as it is written.
#[derive(Debug, Clone)]
pub struct Row {
    pub at: i64,
    pub agent_id: String,
    pub user_id: String,
    pub trace: String,
}

/// One trace handed to the writer: the search's own trace, and its time as the store keeps
/// times.
#[derive(Debug)]
pub struct Pending {
    pub at: i64,
    pub trace: SearchTrace,
}

impl Pending {
    /// The row it is written as (its JSON built here, off the search's path).
    pub fn row(&self) -> Row {
        Row {
            at: self.at,
            agent_id: self.trace.agent_id.as_str().to_owned(),
            user_id: self.trace.user_id.as_str().to_owned(),
            trace: trace_json(&self.trace).to_string(),
        }
    }
}

enum Message {
    Written(String),
    Flush(oneshot::Sender<()>),
}

/// The writer task's handle: the queue and the traces not yet written.
pub struct TraceWriter {
    queue: mpsc::UnboundedSender<Message>,
    pending: Arc<Mutex<HashMap<String, Arc<Pending>>>>,
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
        let pending: Arc<Mutex<HashMap<String, Arc<Pending>>>> = Arc::default();
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
                    let handed: Vec<(String, Arc<Pending>)> = {
                        let pending = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        ids.iter().filter_map(|id| pending.get(id).map(|p| (id.clone(), p.clone()))).collect()
                    };
                    let rows: Vec<(String, Row)> = handed.into_iter().map(|(id, p)| (id, p.row())).collect();
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
    pub fn hand(&self, id: String, pending: Pending) -> DomainResult<()> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), Arc::new(pending));
        self.queue
            .send(Message::Written(id))
            .map_err(|_| retold_domain::DomainError::backend("search_log", "the trace writer has stopped"))
    }

    /// A trace handed but not written yet.
    pub fn waiting(&self, id: &str) -> Option<Row> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
        pending.map(|p| p.row())
    }

    /// Wait until every trace handed so far is written.
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.queue.send(Message::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }
}

/// The JSON a trace is stored as.
pub fn trace_json(trace: &SearchTrace) -> Value {
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
