//! `retrieval.lexical_stemming`: a query word also matches its inflections in the store
//! (counted as the word itself); identifiers always match exactly.

use retold_domain::Channel;
use retold_retrieve::{RetrieveConfig, SearchRequest};

use crate::{principal, request, world};

/// The lexical channel's candidates for `query` as (content, detail), over four records.
async fn lexical(config: RetrieveConfig, query: &str) -> Vec<(String, String)> {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    let mut content = std::collections::HashMap::new();
    for text in [
        "We hiked the ridge trail on Sunday.",
        "Weekly hikes keep the team sane.",
        "The hiker app crashed on start.",
        "Deploys run from deploy_prod.sh every morning.",
    ] {
        content.insert(w.write(&p, request("project:chat", text)).await.to_string(), text.to_owned());
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

#[tokio::test]
async fn a_query_word_matches_its_inflections_when_stemming_is_on() {
    let off = RetrieveConfig::default();
    assert!(!off.lexical_stemming, "off by default");
    let on = RetrieveConfig { lexical_stemming: true, ..RetrieveConfig::default() };
    let found = lexical(on.clone(), "hiking").await;
    let mut texts: Vec<&str> = found.iter().map(|(t, _)| t.as_str()).collect();
    texts.sort();
    // "hiker" is another word (its stem is "hiker"), so it stays out.
    assert_eq!(
        texts,
        ["We hiked the ridge trail on Sunday.", "Weekly hikes keep the team sane."],
        "{found:?}"
    );
    assert!(found.iter().all(|(_, d)| d == "terms 1/1: hiking"), "reported as the word asked: {found:?}");

    assert!(lexical(off, "hiking").await.is_empty(), "off: only the exact word matches");

    // An identifier is never stemmed: deploy_prod.sh matches, "deploy_prod.s" does not.
    let exact = lexical(on.clone(), "deploy_prod.sh").await;
    assert_eq!(exact.len(), 1, "{exact:?}");
    assert!(lexical(on, "deploy_prod.s").await.is_empty());
}
