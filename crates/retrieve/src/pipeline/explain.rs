//! Explanations and the request's description in the trace (seed section 11): the wire form
//! `matched: dense 0.71 (rank 2), lexical 3/3 terms (rank 1); fused rank: 1; gate: …`.

use super::Candidate;
use crate::request::{SearchHit, SearchRequest};

/// A kept candidate as the `index`-th (0-based) result, with its explanation.
pub(super) fn hit(c: Candidate, index: usize) -> SearchHit {
    let explanation = explain(&c);
    SearchHit {
        record: c.record,
        rank: index as u32 + 1,
        score: c.score,
        fused_rank: c.fused_rank,
        dense: c.dense,
        sentence: c.sentence,
        window: c.window,
        lexical: c.lexical,
        entity: c.entity,
        explanation,
        passage: c.passage,
    }
}

/// The request as the pipeline ran it: `limit` and `token_budget` are the ones applied (the
/// request's or the configured; `none` when result control is off).
pub(super) fn describe(
    request: &SearchRequest,
    limit: usize,
    budget: Option<usize>,
) -> Vec<(String, String)> {
    let mut out = vec![
        ("query".to_owned(), request.query.clone()),
        ("limit".to_owned(), limit.to_string()),
        ("token_budget".to_owned(), budget.map_or_else(|| "none".to_owned(), |b| b.to_string())),
    ];
    if let Some(types) = &request.types {
        out.push(("types".into(), types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(",")));
    }
    if let Some(from) = request.event_from {
        out.push(("event_from".into(), from.to_rfc3339()));
    }
    if let Some(to) = request.event_to {
        out.push(("event_to".into(), to.to_rfc3339()));
    }
    // The turns the host attached, oldest first: `context.1`, `context.2`, ...
    for (n, turn) in request.context.iter().enumerate() {
        out.push((format!("context.{}", n + 1), turn.clone()));
    }
    out.push(("include_history".into(), request.include_history.to_string()));
    if request.include_conflicts {
        out.push(("include_conflicts".into(), "true".into()));
    }
    if let Some(origins) = &request.origins {
        out.push(("origins".into(), origins.iter().map(|o| o.as_str()).collect::<Vec<_>>().join(",")));
    }
    if request.include_current_session {
        out.push(("include_current_session".into(), "true".into()));
    }
    let c = request.channels;
    out.push((
        "channels".into(),
        format!(
            "dense={} lexical={} entity={} result_control={}",
            c.dense, c.lexical, c.entity, c.result_control
        ),
    ));
    out
}

/// `matched: dense 0.71 (rank 2), lexical 3/3 terms (rank 1); fused rank: 1; gate: passed dense threshold`
pub(super) fn explain(c: &Candidate) -> String {
    let mut matched = Vec::new();
    if let Some(d) = c.dense_match() {
        let ranks: Vec<String> = [
            c.dense.as_ref().map(|d| format!("rank {}", d.rank)),
            c.sentence.as_ref().map(|s| format!("best sentence rank {}", s.rank)),
            c.window.as_ref().map(|w| format!("rank {} in the query's time", w.rank)),
        ]
        .into_iter()
        .flatten()
        .collect();
        matched.push(format!("dense {:.2} ({})", d.cosine, ranks.join("; ")));
    }
    if let Some(l) = &c.lexical {
        let identifiers = l.matched.iter().filter(|m| m.identifier).count();
        let aliases = l.matched.iter().filter(|m| m.alias).count();
        let mut note = format!("lexical {}/{} terms (rank {})", l.matched.len(), l.query_terms, l.rank);
        if identifiers > 0 || aliases > 0 {
            note.push_str(&format!(" [{identifiers} identifier, {aliases} alias]"));
        }
        matched.push(note);
    }
    if let Some(e) = &c.entity {
        matched.push(format!("entity {} {} (rank {})", e.role.as_str(), e.entity_id, e.rank));
    }
    let mut text = format!("matched: {}; fused rank: {}", matched.join(", "), c.fused_rank);
    for factor in c.score_factors() {
        text.push_str(&format!("; {}", factor.explained()));
    }
    if let Some((older, sim)) = &c.newer_than {
        text.push_str(&format!("; time: newer than {older}, alike (cosine {sim:.2}), ranked above it"));
    }
    if !c.gate.is_empty() {
        text.push_str(&format!("; gate: {}", c.gate));
    }
    if let Some((score, rank)) = c.reranked {
        text.push_str(&format!("; reranker: {score:.2} (rank {rank})"));
    }
    if let Some(winner) = &c.conflict_with {
        text.push_str(&format!("; conflict: provisional, lower-trust side of a conflict with {winner}"));
    }
    if let Some(p) = &c.passage {
        let length = c.record.content.as_str().chars().count();
        text.push_str(&format!("; shown: passage, characters {}-{} of {length}", p.start, p.end));
    }
    if c.record.origin == retold_domain::Origin::Turn {
        let cited = c.record.source_ref.as_ref().map_or_else(String::new, |r| format!(" {r}"));
        text.push_str(&format!("; origin: a session turn, kept verbatim{cited}"));
    }
    text
}

/// The trace's line for each result.
pub(super) fn trace_results(hits: &[SearchHit]) -> Vec<retold_domain::TraceResult> {
    hits.iter()
        .map(|h| retold_domain::TraceResult {
            record_id: h.record.id.clone(),
            rank: h.rank,
            score: h.score,
            explanation: h.explanation.clone(),
        })
        .collect()
}
