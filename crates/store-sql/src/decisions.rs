//! The orchestrator's decisions as rows of `turn_decisions`, both ways.

use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    AgentId, DecisionId, DecisionTimings, Disposition, DomainError, Gap, GapKind, KeptReason, RecordId,
    SearchId, SessionId, TurnMemoryDecision, UserId,
};
use sea_orm::{QueryResult, Value};
use serde_json::json;

use crate::convert::millis;
use crate::error::{StoreError, corrupt};

/// Columns of `turn_decisions` in the order [`decision_values`] produces them.
pub const DECISION_COLUMNS: &str = "id, session_id, agent_id, user_id, created_at, bundle_id, disposition, \
     reason, failure, gaps, searches, admitted, timings, input_tokens, output_tokens, answer";

/// The values of a decision for an INSERT, in [`DECISION_COLUMNS`] order.
pub fn decision_values(d: &TurnMemoryDecision) -> Vec<Value> {
    let gaps: Vec<serde_json::Value> = d
        .gaps
        .iter()
        .map(|g| json!({"kind": g.kind.as_str(), "query": g.query, "evidence": g.evidence}))
        .collect();
    let t = &d.timings;
    let timings = json!({"plan_ms": t.plan_ms, "retrieve_ms": t.retrieve_ms, "admit_ms": t.admit_ms,
                         "regenerate_ms": t.regenerate_ms, "total_ms": t.total_ms});
    let (reason, failure): (Option<&str>, Option<&str>) = match &d.disposition {
        Disposition::Regenerated => (None, None),
        Disposition::DraftKept(KeptReason::Failed(why)) => (Some("failed"), Some(why.as_str())),
        Disposition::DraftKept(reason) => (Some(reason.code()), None),
    };
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    vec![
        d.id.as_str().into(),
        d.session_id.as_str().into(),
        d.agent_id.as_str().into(),
        d.user_id.as_str().into(),
        millis(d.created_at).into(),
        d.bundle_id.as_str().into(),
        d.disposition.as_str().into(),
        Value::from(reason.map(str::to_owned)),
        Value::from(failure.map(str::to_owned)),
        serde_json::Value::from(gaps).to_string().into(),
        ids_json(&d.searches).into(),
        ids_json(&d.admitted).into(),
        timings.to_string().into(),
        count(d.input_tokens).into(),
        count(d.output_tokens).into(),
        Value::from(d.answer.clone()),
    ]
}

const TABLE: &str = "turn_decisions";

fn ids_json<T: std::fmt::Display>(ids: &[T]) -> String {
    serde_json::Value::from(ids.iter().map(|i| i.to_string()).collect::<Vec<_>>()).to_string()
}

/// Build the domain decision from a `SELECT *` row.
pub fn decision_from_row(row: &QueryResult) -> Result<TurnMemoryDecision, StoreError> {
    let bad = |e: DomainError| corrupt(TABLE, e);
    let text = |c: &str| row.try_get::<String>("", c);
    let json_of = |c: &str| -> Result<serde_json::Value, StoreError> {
        serde_json::from_str(&text(c)?).map_err(|e| corrupt(TABLE, e))
    };
    let strings = |c: &str| -> Result<Vec<String>, StoreError> {
        serde_json::from_value(json_of(c)?).map_err(|e| corrupt(TABLE, e))
    };
    let gaps = json_of("gaps")?
        .as_array()
        .ok_or_else(|| corrupt(TABLE, "gaps is not a list"))?
        .iter()
        .map(|g| {
            Ok(Gap {
                kind: GapKind::parse(g["kind"].as_str().unwrap_or_default()).map_err(bad)?,
                query: g["query"].as_str().unwrap_or_default().to_owned(),
                evidence: g["evidence"].as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let timings = json_of("timings")?;
    let ms = |k: &str| timings[k].as_f64().unwrap_or(0.0);
    let disposition = match text("disposition")?.as_str() {
        "regenerated" => Disposition::Regenerated,
        _ => Disposition::DraftKept(match row.try_get::<Option<String>>("", "reason")?.as_deref() {
            Some("no_gaps") => KeptReason::NoGaps,
            Some("nothing_admitted") => KeptReason::NothingAdmitted,
            Some("unfit_bundle") => KeptReason::UnfitBundle,
            Some("failed") => {
                KeptReason::Failed(row.try_get::<Option<String>>("", "failure")?.unwrap_or_default())
            }
            other => return Err(corrupt(TABLE, format!("reason {other:?}"))),
        }),
    };
    let created_at: i64 = row.try_get("", "created_at")?;
    let tokens = |c: &str| -> Result<u64, StoreError> {
        u64::try_from(row.try_get::<i64>("", c)?).map_err(|e| corrupt(TABLE, e))
    };
    Ok(TurnMemoryDecision {
        id: DecisionId::new(text("id")?).map_err(bad)?,
        session_id: SessionId::new(text("session_id")?).map_err(bad)?,
        agent_id: AgentId::new(text("agent_id")?).map_err(bad)?,
        user_id: UserId::new(text("user_id")?).map_err(bad)?,
        created_at: DateTime::<Utc>::from_timestamp_millis(created_at)
            .ok_or_else(|| corrupt(TABLE, format!("bad time {created_at}")))?,
        bundle_id: text("bundle_id")?,
        disposition,
        gaps,
        searches: strings("searches")?
            .into_iter()
            .map(SearchId::new)
            .collect::<Result<_, _>>()
            .map_err(bad)?,
        admitted: strings("admitted")?
            .into_iter()
            .map(RecordId::new)
            .collect::<Result<_, _>>()
            .map_err(bad)?,
        timings: DecisionTimings {
            plan_ms: ms("plan_ms"),
            retrieve_ms: ms("retrieve_ms"),
            admit_ms: ms("admit_ms"),
            regenerate_ms: ms("regenerate_ms"),
            total_ms: ms("total_ms"),
        },
        input_tokens: tokens("input_tokens")?,
        output_tokens: tokens("output_tokens")?,
        answer: row.try_get("", "answer")?,
    })
}
