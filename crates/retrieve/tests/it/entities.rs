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
    let entity = entity_hits(RetrieveConfig::default()).await;
    assert_eq!(entity.len(), 3, "only Zoe's records: Mel is linked to 120 of 123 ({entity:?})");
    let all = entity_hits(RetrieveConfig { entity_max_share: 1.0, ..RetrieveConfig::default() }).await;
    assert_eq!(all.len(), 50, "with every entity kept, Mel's records fill the channel");
}
