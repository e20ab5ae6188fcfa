//! `retrieval.lexical_stemming`: a query word also matches its inflections in the store
//! (counted as the word itself) for every word (`all`) or for a word the exact search's hits
//! do not hold (`unmatched`, the default); identifiers always match exactly.

use retold_domain::Channel;
use retold_retrieve::{LexicalStemming, RetrieveConfig, SearchRequest};

use crate::{principal, request, world};

const HIKES: [&str; 4] = [
    "We hiked the ridge trail on Sunday.",
    "Weekly hikes keep the team sane.",
    "The hiker app crashed on start.",
    "Deploys run from deploy_prod.sh every morning.",
];

/// The lexical channel's candidates for `query` as (content, detail), over `readable`
/// written where the searcher reads and `unreadable` in a scope it cannot read.
async fn lexical_among(
    stemming: LexicalStemming,
    readable: &[&str],
    unreadable: &[&str],
    query: &str,
) -> Vec<(String, String)> {
    let w = world(RetrieveConfig { lexical_stemming: stemming, ..RetrieveConfig::default() }).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    let other = principal("ops-agent", "v");
    w.grant("ops-agent", "project:ops", true, true).await;
    let mut content = std::collections::HashMap::new();
    for text in readable {
        content.insert(w.write(&p, request("project:chat", text)).await.to_string(), (*text).to_owned());
    }
    for text in unreadable {
        w.write(&other, request("project:ops", text)).await;
    }
    let response = w.search(&p, SearchRequest::new(query)).await;
    let trace = w.trace(&response.search_id).await;
    trace["channels"][Channel::Lexical.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["record_id"].as_str().unwrap();
            (content[id].clone(), c["detail"].as_str().unwrap().to_owned())
        })
        .collect()
}

async fn lexical(stemming: LexicalStemming, query: &str) -> Vec<(String, String)> {
    lexical_among(stemming, &HIKES, &[], query).await
}

fn texts(found: &[(String, String)]) -> Vec<&str> {
    let mut texts: Vec<&str> = found.iter().map(|(t, _)| t.as_str()).collect();
    texts.sort();
    texts
}

#[tokio::test]
async fn a_query_word_matches_its_inflections_when_stemming_is_on() {
    assert_eq!(RetrieveConfig::default().lexical_stemming, LexicalStemming::Unmatched, "the default");
    for stemming in [LexicalStemming::All, LexicalStemming::Unmatched] {
        let found = lexical(stemming, "hiking").await;
        // "hiker" is another word (its stem is "hiker"), so it stays out.
        assert_eq!(
            texts(&found),
            ["We hiked the ridge trail on Sunday.", "Weekly hikes keep the team sane."],
            "{stemming:?}: {found:?}"
        );
        assert!(found.iter().all(|(_, d)| d == "terms 1/1: hiking"), "reported as the word asked: {found:?}");
        // An identifier is never stemmed: deploy_prod.sh matches, "deploy_prod.s" does not.
        let exact = lexical(stemming, "deploy_prod.sh").await;
        assert_eq!(exact.len(), 1, "{exact:?}");
        assert!(lexical(stemming, "deploy_prod.s").await.is_empty(), "{stemming:?}");
    }
    assert!(lexical(LexicalStemming::Off, "hiking").await.is_empty(), "off: only the exact word matches");
}

#[tokio::test]
async fn unmatched_stemming_leaves_a_word_the_hits_hold_exact() {
    // "hikes" is held by one record, so that is the whole match: the other inflections stay
    // out; with `all`, they come in.
    let held = lexical(LexicalStemming::Unmatched, "hikes").await;
    assert_eq!(texts(&held), ["Weekly hikes keep the team sane."], "{held:?}");
    let all = lexical(LexicalStemming::All, "hikes").await;
    assert_eq!(texts(&all).len(), 2, "{all:?}");
    // Per word: "sunday" is held, "hiking" is not, so only "hiking" is inflected.
    let mixed = lexical(LexicalStemming::Unmatched, "hiking on sunday").await;
    assert_eq!(
        texts(&mixed),
        ["We hiked the ridge trail on Sunday.", "Weekly hikes keep the team sane."],
        "{mixed:?}"
    );
}

#[tokio::test]
async fn what_another_scope_holds_does_not_change_what_stemming_finds() {
    // A record the searcher cannot read holds the exact word: the searcher's own records are
    // still found by its inflections, as if that record did not exist.
    let found = lexical_among(
        LexicalStemming::Unmatched,
        &HIKES,
        &["Hiking permits are renewed in March."],
        "hiking",
    )
    .await;
    assert_eq!(texts(&found), texts(&lexical(LexicalStemming::Unmatched, "hiking").await), "{found:?}");
    assert_eq!(found.len(), 2, "{found:?}");
}
