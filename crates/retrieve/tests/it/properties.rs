//! No result, explanation or trace candidate is ever outside the eligible set.

use retold_test_kit::prelude::*;
use std::collections::HashSet;

use proptest::prelude::*;
use retold_domain::EligibilityFilter;
use retold_retrieve::{RetrieveConfig, SearchRequest};

use crate::{principal, request, world};

const SCOPES: [&str; 5] = ["user:u1", "user:u2", "project:p", "org:o", "project:q"];
const TEXTS: [&str; 6] = [
    "The deploy failed with error E1234.",
    "Aditya prefers concise answers.",
    "The project uses Conventional Commits.",
    "Green tea every morning.",
    "The staging server listens on port 8443.",
    "Benchmarks run with a warm embedder.",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn nothing_outside_the_eligible_set_ever_appears(
        writes in prop::collection::vec((0usize..SCOPES.len(), 0usize..TEXTS.len()), 1..10),
        grants in prop::collection::vec((0usize..2, 0usize..SCOPES.len(), any::<bool>()), 0..5),
        searcher in (0usize..2, 0usize..2),
        query in 0usize..TEXTS.len(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let w = world(RetrieveConfig::default()).await;
            // A writer that may write everywhere.
            for scope in SCOPES {
                w.grant("writer", scope, true, true).await;
            }
            for (scope, text) in &writes {
                w.ingestor.write(&principal("writer", "u1"), &request(SCOPES[*scope], TEXTS[*text])).await.unwrap();
            }
            for (agent, scope, read) in &grants {
                w.grant(["a1", "a2"][*agent], SCOPES[*scope], *read, false).await;
            }
            let p = principal(["a1", "a2"][searcher.0], ["u1", "u2"][searcher.1]);
            let access = w.retriever.access(&p).await.unwrap();
            let eligible: HashSet<String> = w
                .store
                .eligible(&EligibilityFilter {
                    scopes: access.readable.clone(),
                    statuses: EligibilityFilter::statuses_for(false),
                    now: retold_domain::Clock::now(w.clock.as_ref()),
                    types: None,
                    event_from: None,
                    event_to: None,
                    include_conflicts: false,
                    origins: None,
                    excluded_session: None,
                })
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.id.to_string())
                .collect();
            let response = w.search(&p, SearchRequest::new(TEXTS[query])).await;
            for hit in &response.hits {
                assert!(eligible.contains(hit.record.id.as_str()));
                assert!(access.can_read(&hit.record.scope));
            }
            let trace = w.trace(&response.search_id).await;
            for (_, candidates) in trace["channels"].as_object().unwrap() {
                for c in candidates.as_array().unwrap() {
                    assert!(eligible.contains(c["record_id"].as_str().unwrap()), "{c}");
                }
            }
            for f in trace["fused"].as_array().unwrap() {
                assert!(eligible.contains(f["record_id"].as_str().unwrap()));
            }
            assert_eq!(trace["eligible_count"].as_u64().unwrap() as usize, eligible.len());
        });
    }
}
