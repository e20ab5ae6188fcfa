//! Seed section 7: a lower-rank candidate that conflicts with a confirmed record is stored
//! provisional and linked; the confirmed record stays the normal search result, and the
//! candidate is for inspection (memory_get, or a search that asks for conflicts).

use retold_domain::{Attribute, EntityKind, Name, SourceKind, Status};
use retold_ingest::{EntityRef, WriteOutcome};
use retold_retrieve::{RetrieveConfig, SearchRequest};
use retold_test_kit::World;

use crate::{ids, principal, request};

async fn conflicted(w: &World) -> (retold_domain::RecordId, retold_domain::RecordId) {
    let p = principal("research-agent", "aditya");
    w.grant("research-agent", "user:aditya", true, true).await;
    let keyed = |content: &str, source: SourceKind| {
        let mut r = request("user:aditya", content);
        r.subject = Some(EntityRef::Name { name: Name::new("Aditya").unwrap(), kind: EntityKind::Person });
        r.attribute = Some(Attribute::new("explanation_style").unwrap());
        r.source_kind = source;
        r
    };
    let confirmed =
        w.write(&p, keyed("Aditya prefers concise technical explanations.", SourceKind::System)).await;
    let outcome = w
        .ingestor
        .write(&p, &keyed("Aditya prefers detailed architecture explanations.", SourceKind::AgentInference))
        .await
        .unwrap();
    let WriteOutcome::Conflicting { id, conflicts_with, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(conflicts_with, confirmed);
    (confirmed, id)
}

async fn check(w: World) {
    let (confirmed, candidate) = conflicted(&w).await;
    assert_eq!(w.record(&candidate).await.status, Status::Provisional);
    let p = principal("research-agent", "aditya");
    for query in ["How should I explain things to Aditya?", "detailed architecture explanations", "Aditya"] {
        let found = ids(&w.search(&p, SearchRequest::new(query)).await);
        assert!(found.contains(&confirmed), "{query}: {found:?}");
        assert!(!found.contains(&candidate), "{query}: the conflict loser is not a normal result: {found:?}");
    }
    let mut asking = SearchRequest::new("detailed architecture explanations");
    asking.include_conflicts = true;
    let response = w.search(&p, asking).await;
    let hit = response.hits.iter().find(|h| h.record.id == candidate).expect("returned when asked for");
    assert!(
        hit.explanation
            .contains(&format!("conflict: provisional, lower-trust side of a conflict with {confirmed}")),
        "{}",
        hit.explanation
    );
    let winner = response.hits.iter().find(|h| h.record.id == confirmed).expect("the confirmed record too");
    assert!(!winner.explanation.contains("conflict:"), "{}", winner.explanation);
    // memory_get shows the candidate with its conflict link.
    let detail = w.retriever.get(&p, std::slice::from_ref(&candidate)).await.unwrap();
    assert_eq!(detail[0].conflicts.len(), 1);
    assert_eq!(detail[0].conflicts[0].record_id, confirmed);
}

#[tokio::test]
async fn a_conflict_loser_is_excluded_from_default_search_in_every_channel() {
    check(World::builder().retrieve(RetrieveConfig::default()).build().await).await;
}

#[tokio::test]
async fn the_derived_eligibility_table_applies_the_same_rule() {
    check(World::builder().derived_eligibility().build().await).await;
}
