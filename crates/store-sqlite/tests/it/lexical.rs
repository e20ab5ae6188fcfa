//! The lexical channel equals the reference it replaced: BM25 joined to a table of eligible
//! keys before the cut, and one FTS5 MATCH per term for the matched terms (FTS5 itself says
//! which terms matched; a term's forms OR-ed). Same corpus, same queries, same eligible sets: same hits, ranks,
//! scores and matched terms.

use std::collections::{BTreeMap, HashMap, HashSet};

use retold_domain::{
    Entity, EntityId, EntityKind, EntityStatus, LexicalTerm, LinkRole, MatchedTerm, Name, RecordEntityLink,
    RecordKey, Scope, WriteUnit,
};
use retold_test_kit::contract::fixtures::{filter, t};
use retold_test_kit::prelude::*;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement, TransactionTrait};

use crate::{event, open, record};

const TEXTS: &[&str] = &[
    "The OAuth refresh token expired after one hour.",
    "Préférence: café au lait, naïve façade, Zoë's résumé.",
    "Build failed in crates/http/src/lib.rs with E0277 on line 42.",
    "snake_case_name and camelCaseName and dotted.module.name appear here.",
    "日本語のテキストと English words mixed together.",
    "Deploy pipeline moved to Thursdays; the staging server needs a warm cache.",
    "The deploy of the pipeline failed: exit code 137 (OOM).",
    "Aditya prefers concise technical explanations.",
    "Use `cargo xtask setup` before `cargo run --release`.",
    "Memory system notes: the memory CLI ships weekly.",
    "Zoë met Aditya in São Paulo on 2026-08-12.",
    "An empty-ish line: -- ... ;;",
    "Tokens like v2.26, 8443 and x86_64 are identifiers.",
    "OAuth service refresh failures spike on Mondays.",
    "Straße and STRASSE and strasse differ under unicode61.",
];

const QUERIES: &[&[(&str, bool)]] = &[
    &[("oauth", false), ("refresh", false), ("failure", false)],
    &[("preference", false), ("cafe", false), ("zoe", false)],
    &[("crates/http/src/lib.rs", true), ("E0277", true)],
    &[("snake_case_name", true), ("camelCaseName", true), ("dotted.module.name", true)],
    &[("日本語のテキストと", false), ("english", false)],
    &[("deploy", false), ("pipeline", false), ("thursdays", false)],
    &[("memory", false), ("system", false), ("cli", false)],
    &[("aditya", false), ("sao", false), ("paulo", false), ("2026-08-12", true)],
    &[("x86_64", true), ("v2.26", true), ("8443", false)],
    &[("strasse", false), ("straße", false)],
    &[("nothing", false), ("matches", false), ("this", false)],
    // Terms with other forms (`text|form|…`), as stemming gives them.
    &[("failures|failure|failed", false), ("deploy|deploys", false)],
    &[("mondays|monday", false), ("thursday|thursdays", false), ("tokens|token", false)],
    &[("services|service", false), ("explanation|explanations", false), ("preferred|prefers", false)],
];

/// `text|form|…` is a term with other forms.
fn terms(q: &[(&str, bool)]) -> Vec<LexicalTerm> {
    q.iter()
        .map(|(t, i)| {
            let mut forms = t.split('|');
            let mut term = LexicalTerm::new(forms.next().unwrap(), *i);
            term.forms = forms.map(str::to_owned).collect();
            term
        })
        .collect()
}

/// A term as FTS5 query text: the OR of its forms.
fn either(term: &LexicalTerm) -> String {
    format!("({})", term.all_forms().map(quote).collect::<Vec<_>>().join(" OR "))
}

fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

fn sql(text: &str, values: Vec<sea_orm::Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Sqlite, text, values)
}

/// The replaced implementation, verbatim in its SQL.
async fn reference(
    db: &DatabaseConnection,
    terms: &[LexicalTerm],
    eligible: &[RecordKey],
    k: usize,
) -> Vec<(String, u32, f64, Vec<MatchedTerm>)> {
    let query = terms.iter().map(either).collect::<Vec<_>>().join(" OR ");
    let txn = db.begin().await.unwrap();
    txn.execute_unprepared(
        "CREATE TEMP TABLE IF NOT EXISTS eligible_keys (key INTEGER PRIMARY KEY); DELETE FROM temp.eligible_keys;",
    )
    .await
    .unwrap();
    let json = format!("[{}]", eligible.iter().map(|k| k.0.to_string()).collect::<Vec<_>>().join(","));
    txn.execute_raw(sql(
        "INSERT OR IGNORE INTO temp.eligible_keys (key) SELECT value FROM json_each(?)",
        vec![json.into()],
    ))
    .await
    .unwrap();
    let rows = txn
        .query_all_raw(sql(
            "SELECT f.record_id AS record_id, bm25(records_fts, 0.0, 1.0, 2.0, 3.0) AS score FROM records_fts f \
             JOIN temp.eligible_keys e ON e.key = f.rowid WHERE records_fts MATCH ? ORDER BY score, f.rowid LIMIT ?",
            vec![query.into(), (k as i64).into()],
        ))
        .await
        .unwrap();
    let hits: Vec<(String, f64)> =
        rows.iter().map(|r| (r.try_get("", "record_id").unwrap(), r.try_get("", "score").unwrap())).collect();
    let ids_json =
        format!("[{}]", hits.iter().map(|(id, _)| format!("\"{id}\"")).collect::<Vec<_>>().join(","));
    let matching = |q: String| {
        let txn = &txn;
        let ids_json = ids_json.clone();
        async move {
            txn.query_all_raw(sql(
                "SELECT record_id FROM records_fts WHERE records_fts MATCH ? AND record_id IN (SELECT value FROM json_each(?))",
                vec![q.into(), ids_json.into()],
            ))
            .await
            .unwrap()
            .iter()
            .map(|r| r.try_get::<String>("", "record_id").unwrap())
            .collect::<HashSet<_>>()
        }
    };
    let mut matched: HashMap<String, Vec<MatchedTerm>> = HashMap::new();
    for term in terms {
        let any = matching(either(term)).await;
        let via_alias = matching(format!("aliases : {}", either(term))).await;
        for id in any {
            let alias = via_alias.contains(&id);
            matched.entry(id).or_default().push(MatchedTerm {
                term: term.text.clone(),
                identifier: term.identifier,
                alias,
            });
        }
    }
    txn.rollback().await.unwrap();
    hits.into_iter()
        .enumerate()
        .map(|(i, (id, score))| {
            let m = matched.remove(&id).unwrap_or_default();
            (id, i as u32 + 1, -score, m)
        })
        .collect()
}

#[tokio::test]
async fn the_lexical_channel_equals_the_reference_it_replaced() {
    let f = open().await;
    let store: &dyn Backend = &f.store;
    // Two entities with aliases, linked to some records, so the aliases column matters.
    let entity = |id: &str, name: &str| Entity {
        id: EntityId::new(id).unwrap(),
        kind: EntityKind::Project,
        canonical_name: Name::new(name).unwrap(),
        scope: Scope::parse("project:p").unwrap(),
        status: EntityStatus::Confirmed,
        merged_into: None,
        created_at: t(1),
    };
    store
        .create_entity(
            entity("ent_auth", "auth service"),
            vec![Name::new("OAuth service").unwrap()],
            event("entity.created", None),
        )
        .await
        .unwrap();
    store
        .create_entity(
            entity("ent_mem", "memory system"),
            vec![Name::new("Memory CLI").unwrap()],
            event("entity.created", None),
        )
        .await
        .unwrap();
    // 15 texts × 4 copies in two scopes: repeated terms make BM25 ties and real ranking.
    let mut n = 0;
    for copy in 0..4 {
        for (i, text) in TEXTS.iter().enumerate() {
            n += 1;
            let scope = if (i + copy) % 3 == 0 { "project:q" } else { "project:p" };
            let r = record(n, scope, &format!("{text} (copy {copy})"));
            let links = match i % 5 {
                0 => vec![RecordEntityLink {
                    record_id: r.id.clone(),
                    entity_id: EntityId::new("ent_auth").unwrap(),
                    role: LinkRole::About,
                }],
                3 => vec![RecordEntityLink {
                    record_id: r.id.clone(),
                    entity_id: EntityId::new("ent_mem").unwrap(),
                    role: LinkRole::Mentions,
                }],
                _ => vec![],
            };
            store.apply(WriteUnit { inserts: vec![r], links, ..WriteUnit::default() }).await.unwrap();
        }
    }
    let raw = Database::connect(format!("sqlite://{}?mode=ro", f.dir.path().join("retold.db").display()))
        .await
        .unwrap();
    let mut compared = BTreeMap::new();
    for scopes in [&["project:p", "project:q"][..], &["project:p"], &["project:q"]] {
        let eligible: Vec<RecordKey> =
            store.eligible(&filter(scopes)).await.unwrap().iter().map(|e| e.key).collect();
        // Also a sparse subset: every third eligible key.
        let sparse: Vec<RecordKey> = eligible.iter().copied().step_by(3).collect();
        for keys in [&eligible, &sparse] {
            for q in QUERIES {
                for k in [1, 5, 50] {
                    let expected = reference(&raw, &terms(q), keys, k).await;
                    let actual: Vec<_> = store
                        .search(&terms(q), keys, k)
                        .await
                        .unwrap()
                        .into_iter()
                        .map(|h| (h.record_id.to_string(), h.rank, h.score, h.matched))
                        .collect();
                    assert_eq!(actual, expected, "query {q:?}, {} eligible, k {k}", keys.len());
                    *compared.entry(expected.is_empty()).or_insert(0) += 1;
                }
            }
        }
    }
    assert!(compared[&false] > 100, "most comparisons have hits: {compared:?}");
}

/// The domain's one word splitter (`retold_domain::text::words`) is FTS5's unicode61
/// tokenizer: every text's words, folded as FTS5 folds (case, Latin diacritics), are exactly
/// the words `records_fts` indexed (read back through `records_vocab`).
#[tokio::test]
async fn the_domain_word_splitter_is_fts5s_unicode61() {
    use unicode_normalization::UnicodeNormalization;
    let f = open().await;
    let mut expected = std::collections::BTreeSet::new();
    for (n, text) in TEXTS.iter().enumerate() {
        let r = record(n as u32 + 1, "project:p", text);
        f.store.apply(WriteUnit { inserts: vec![r], ..WriteUnit::default() }).await.unwrap();
        for word in retold_domain::text::words(text) {
            let folded: String = word
                .nfd()
                .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
                .flat_map(char::to_lowercase)
                .collect();
            expected.insert(folded);
        }
    }
    let path = f.dir.path().join("retold.db");
    let raw = Database::connect(format!("sqlite://{}?mode=ro", path.display())).await.unwrap();
    let rows = raw.query_all_raw(sql("SELECT term FROM records_vocab", vec![])).await.unwrap();
    let indexed: std::collections::BTreeSet<String> =
        rows.iter().map(|row| row.try_get_by_index::<String>(0).unwrap()).collect();
    assert_eq!(indexed, expected);
    // The splitter keeps words as written; `unicode61_tokens` lowercases them.
    assert_eq!(
        retold_domain::text::words("Zoë's café, x86_64!").collect::<Vec<_>>(),
        ["Zoë", "s", "café", "x86", "64"]
    );
    assert_eq!(retold_domain::text::unicode61_tokens("Straße STRASSE"), ["straße", "strasse"]);
}
