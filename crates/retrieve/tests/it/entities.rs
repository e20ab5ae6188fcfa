//! The entity channel skips an entity linked to much of what the principal can see (a
//! conversation's speaker): it says nothing about which of those records a query wants.

use retold_domain::Channel;
use retold_retrieve::{RetrieveConfig, SearchRequest};

use crate::{about, principal, request, world};

async fn entity_hits(config: RetrieveConfig) -> Vec<String> {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..120 {
        w.write(&p, about(request("project:chat", &format!("Mel said line {n} of the chat.")), "Mel")).await;
    }
    for n in 0..3 {
        w.write(&p, about(request("project:chat", &format!("Zoe booked flight {n}.")), "Zoe")).await;
    }
    let response = w.search(&p, SearchRequest::new("What did Mel tell Zoe?")).await;
    let trace = w.trace(&response.search_id).await;
    trace["channels"][Channel::Entity.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["detail"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_speaker_linked_to_most_records_does_not_flood_the_entity_channel() {
    let listing = RetrieveConfig { entity_broad_corroborates: false, ..RetrieveConfig::default() };
    let entity = entity_hits(listing.clone()).await;
    assert_eq!(entity.len(), 3, "only Zoe's records: Mel is linked to 120 of 123 ({entity:?})");
    let all = entity_hits(RetrieveConfig { entity_max_share: 1.0, ..listing }).await;
    assert_eq!(all.len(), 50, "with every entity kept, Mel's records fill the channel");
}

/// The entity channel's ids and details for `query` over Mel's 120 lines, one of which
/// mentions the lighthouse, and Zoe's three flights.
async fn corroborated(config: RetrieveConfig, query: &str) -> Vec<(String, String)> {
    let w = world(config).await;
    let p = principal("chat-agent", "u");
    w.grant("chat-agent", "project:chat", true, true).await;
    for n in 0..120 {
        let line = if n == 60 {
            "Mel said the lighthouse tour was her favourite.".to_owned()
        } else {
            format!("Mel said line {n} of the chat.")
        };
        w.write(&p, about(request("project:chat", &line), "Mel")).await;
    }
    w.write(&p, request("project:chat", "The lighthouse closes in winter.")).await;
    let response = w.search(&p, SearchRequest::new(query)).await;
    let trace = w.trace(&response.search_id).await;
    trace["channels"][Channel::Entity.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["record_id"].as_str().unwrap().to_owned(), c["detail"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn a_broad_entity_the_query_names_corroborates_what_the_other_channels_found() {
    let on = RetrieveConfig::default();
    assert!(on.entity_broad_corroborates, "on by default");
    let named = corroborated(on.clone(), "What did Mel say about the lighthouse?").await;
    // Mel is broad (120 of 121 records), so the channel lists only Mel's records another
    // channel found, best first: the lighthouse line leads; the record about the lighthouse
    // that is not Mel's never appears.
    assert!(!named.is_empty() && named.len() <= 50, "{named:?}");
    assert!(named[0].1.contains("corroborates rank 1"), "{named:?}");
    assert!(named.iter().all(|(_, d)| d.contains("broad")), "{named:?}");
    let off = RetrieveConfig { entity_broad_corroborates: false, ..RetrieveConfig::default() };
    let off = corroborated(off, "What did Mel say about the lighthouse?").await;
    assert!(off.is_empty(), "off: a broad entity contributes nothing ({off:?})");
    let unnamed = corroborated(on, "What about the lighthouse?").await;
    assert!(unnamed.is_empty(), "a query that names no entity gets no entity candidates ({unnamed:?})");
}
