//! Browsing for operators (`Inspection`): pages of records, sessions, searches, conflicts and
//! operation events, newest first, filtered and counted in SQL.

use async_trait::async_trait;
use retold_domain::chrono::{DateTime, Utc};
use retold_domain::{
    AgentId, AuditEvent, COUNT_CAP, ConflictLink, Inspection, MemoryRecord, PageRequest, RecordBrowse,
    RecordId, Result as DomainResult, SearchId, SearchSummary, SessionSummary, UserId,
};
use sea_orm::{ConnectionTrait, Value};

use crate::convert::{self, RECORD_COLUMNS};
use crate::error::{StoreError, corrupt};
use crate::store::{PostgresStore, stmt};

fn page_values(page: PageRequest) -> [Value; 2] {
    [(page.limit.min(i64::MAX as usize) as i64).into(), (page.offset.min(i64::MAX as usize) as i64).into()]
}

/// What an operator types, as a `to_tsquery('retold', …)` text: every whitespace-separated
/// word, or the start of one (the last word may be half typed), each a quoted prefix term
/// (`'word':*`, quotes and backslashes escaped, so nothing typed is tsquery syntax), all
/// required (` & `). Inside the quotes PostgreSQL's parser tokenises the word as it tokenised
/// the documents, so a host, path, version or e-mail address stays one lexeme on both sides.
/// None when nothing in it is a word.
fn prefix_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| format!("'{}':*", w.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

/// The first string after every string that starts with `prefix` (`ops.` -> `ops/`) in
/// code point order (byte order of UTF-8, PostgreSQL's `"C"` collation), for a range.
fn prefix_end(prefix: &str) -> String {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = char::from_u32(last as u32 + 1) {
            chars.push(next);
            return chars.into_iter().collect();
        }
    }
    String::from(char::MAX)
}

#[async_trait]
impl Inspection for PostgresStore {
    async fn browse_records(&self, filter: &RecordBrowse) -> DomainResult<(Vec<MemoryRecord>, u64)> {
        let mut clauses = vec!["erased_at IS NULL".to_owned()];
        let mut values: Vec<Value> = Vec::new();
        if let Some(scope) = &filter.scope {
            clauses.push("scope_kind = ? AND scope_id = ?".into());
            values.push(scope.kind().as_str().into());
            values.push(scope.id().into());
        }
        if let Some(status) = filter.status {
            clauses.push("status = ?".into());
            values.push(status.as_str().into());
        }
        // Words go through the lexical rows (`records_fts.doc`, its GIN index), newest match
        // first, with the store's other filters applied in the same query, so a page (and a
        // count capped at COUNT_CAP) stops early however common the word; an id is looked up
        // as an id. The derived table has no ORDER BY so the planner flattens it into the join
        // (and picks the GIN index or a newest-first key scan); the outer query orders.
        let mut from = "records".to_owned();
        let mut order = "key DESC";
        let mut leading: Vec<Value> = Vec::new();
        if let Some(text) = filter.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            match prefix_query(text).filter(|_| RecordId::new(text.to_owned()).is_err()) {
                Some(query) => {
                    from = "(SELECT key AS k FROM records_fts WHERE doc @@ to_tsquery('retold', ?)) AS f \
                            JOIN records ON records.key = f.k"
                        .to_owned();
                    order = "f.k DESC";
                    leading.push(query.into());
                }
                None => {
                    clauses.push("id = ?".into());
                    values.push(text.into());
                }
            }
        }
        let where_sql = clauses.join(" AND ");
        let mut counted = [leading.clone(), values.clone()].concat();
        counted.push(((COUNT_CAP + 1) as i64).into());
        let count = self
            .db
            .query_one_raw(stmt(
                &format!(
                    "SELECT COUNT(*) AS n FROM (SELECT 1 FROM {from} WHERE {where_sql} LIMIT ?) AS capped"
                ),
                counted,
            ))
            .await
            .map_err(StoreError::from)?;
        let total: i64 = match count {
            Some(row) => row.try_get("", "n").map_err(StoreError::from)?,
            None => 0,
        };
        let mut paged = [leading, values].concat();
        paged.extend(page_values(filter.page));
        let rows = self
            .db
            .query_all_raw(stmt(
                &format!(
                    "SELECT records.key AS key, {RECORD_COLUMNS} FROM {from} WHERE {where_sql} ORDER BY {order} LIMIT ? OFFSET ?"
                ),
                paged,
            ))
            .await
            .map_err(StoreError::from)?;
        let records = rows.iter().map(convert::record_from_row).collect::<Result<Vec<_>, _>>()?;
        Ok((records, u64::try_from(total).unwrap_or(0)))
    }

    async fn recent_searches(&self, page: PageRequest) -> DomainResult<Vec<SearchSummary>> {
        self.traces.flush().await;
        let rows = self
            .db
            .query_all_raw(stmt(
                // The page first, then only its traces parsed as JSON (`json_array_length` of a
                // non-array is 0 in SQLite; `jsonb_array_length` would fail, hence the CASE).
                "SELECT id, at, agent_id, user_id, t ->> 'query' AS query, \
                 (t ->> 'eligible_count')::bigint AS eligible, \
                 CASE WHEN t -> 'results' IS NULL THEN NULL \
                      WHEN jsonb_typeof(t -> 'results') = 'array' THEN jsonb_array_length(t -> 'results')::bigint \
                      ELSE 0 END AS results, \
                 (t -> 'timings_us' ->> 'total')::bigint AS total \
                 FROM (SELECT id, at, agent_id, user_id, trace::jsonb AS t FROM search_log \
                       ORDER BY at DESC, id DESC LIMIT ? OFFSET ?) AS page \
                 ORDER BY at DESC, id DESC",
                page_values(page),
            ))
            .await
            .map_err(StoreError::from)?;
        let bad = |e: retold_domain::DomainError| corrupt("search_log", e);
        rows.iter()
            .map(|row| {
                let number = |c: &str| -> Result<u64, StoreError> {
                    Ok(row.try_get::<Option<i64>>("", c)?.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
                };
                let at: i64 = row.try_get("", "at")?;
                Ok(SearchSummary {
                    id: SearchId::new(row.try_get::<String>("", "id")?).map_err(bad)?,
                    at: DateTime::<Utc>::from_timestamp_millis(at)
                        .ok_or_else(|| corrupt("search_log", format!("bad timestamp {at}")))?,
                    agent_id: AgentId::new(row.try_get::<String>("", "agent_id")?).map_err(bad)?,
                    user_id: UserId::new(row.try_get::<String>("", "user_id")?).map_err(bad)?,
                    query: row.try_get::<Option<String>>("", "query")?.unwrap_or_default(),
                    eligible_count: number("eligible")?,
                    results: number("results")?,
                    total_us: number("total")?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()
            .map_err(Into::into)
    }

    async fn recent_sessions(&self, page: PageRequest) -> DomainResult<Vec<SessionSummary>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT id, agent_id, user_id, project_id, started_at, ended_at, scope_kind, scope_id, \
                 (SELECT COUNT(*) FROM session_turns t WHERE t.session_id = s.id) AS turns \
                 FROM sessions s ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
                page_values(page),
            ))
            .await
            .map_err(StoreError::from)?;
        rows.iter()
            .map(|row| {
                let turns: i64 = row.try_get("", "turns")?;
                Ok(SessionSummary {
                    session: crate::sessions::session_from_row(row)?,
                    turns: u32::try_from(turns).map_err(|e| corrupt("session_turns", e))?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()
            .map_err(Into::into)
    }

    async fn conflicts(&self, page: PageRequest) -> DomainResult<Vec<ConflictLink>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                "SELECT c.record_id, c.conflicting_id FROM record_conflicts c \
                 JOIN records r ON r.id = c.conflicting_id ORDER BY r.key DESC LIMIT ? OFFSET ?",
                page_values(page),
            ))
            .await
            .map_err(StoreError::from)?;
        let id = |row: &sea_orm::QueryResult, c: &str| -> Result<RecordId, StoreError> {
            RecordId::new(row.try_get::<String>("", c)?).map_err(|e| corrupt("record_conflicts", e))
        };
        rows.iter()
            .map(|row| {
                Ok(ConflictLink {
                    record_id: id(row, "record_id")?,
                    conflicting_id: id(row, "conflicting_id")?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()
            .map_err(Into::into)
    }

    async fn latest_events(&self, prefix: &str, limit: usize) -> DomainResult<Vec<AuditEvent>> {
        let rows = self
            .db
            .query_all_raw(stmt(
                // Compared byte-wise (`COLLATE "C"`), as SQLite compares: under a linguistic
                // collation punctuation is ignored at first, so `ops.backup` would sort after
                // `ops/` and fall out of the range.
                "SELECT id, at, kind, record_id, actor, details FROM events \
                 WHERE kind COLLATE \"C\" >= ? AND kind COLLATE \"C\" < ? ORDER BY seq DESC LIMIT ?",
                [prefix.into(), prefix_end(prefix).into(), (limit.min(i64::MAX as usize) as i64).into()],
            ))
            .await
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(convert::event_from_row).collect::<Result<Vec<_>, _>>()?)
    }
}
