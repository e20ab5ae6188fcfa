//! Golden tests over a fixed corpus: rankings and explanations.

use retold_domain::chrono::TimeDelta;
use retold_domain::{MemoryType, Name, RecordId, Scope, SourceKind};
use retold_retrieve::{Channels, RerankerPlacement, RetrieveConfig, SearchRequest};
use retold_test_kit::prelude::*;

use crate::{World, about, episode, ids, principal, request, world};

const SCOPE: &str = "project:golden";

struct Corpus {
    error: RecordId,
    concise: RecordId,
    tea: RecordId,
    old_deploy: RecordId,
    new_deploy: RecordId,
    staging: [RecordId; 2],
}

async fn corpus(w: &World) -> Corpus {
    w.grant("golden-agent", SCOPE, true, true).await;
    let p = principal("golden-agent", "u");
    let error = w
        .write(
            &p,
            request(
                SCOPE,
                "Build failed with error E0599: no method named `get` found for struct SqliteStore.",
            ),
        )
        .await;
    let concise =
        w.write(&p, about(request(SCOPE, "Aditya prefers concise technical explanations."), "Aditya")).await;
    let tea = w.write(&p, about(request(SCOPE, "He drinks green tea every morning."), "Zoltan Kovacs")).await;
    let zoltan = w
        .store
        .find_by_name(&[Scope::parse(SCOPE).unwrap()], &Name::new("Zoltan Kovacs").unwrap())
        .await
        .unwrap();
    w.store.add_alias(&zoltan[0].id, Name::new("Zoli").unwrap(), crate_event()).await.unwrap();
    for filler in [
        "The project uses Conventional Commits.",
        "The OAuth refresh token expired after one hour.",
        "Run the benchmark with a warm embedder, then record per-stage timings.",
        "The office coffee machine is on the third floor.",
        "Release notes are published every second Friday.",
        "The CI pipeline caches cargo registries between runs.",
    ] {
        w.write(&p, request(SCOPE, filler)).await;
    }
    let mut episode = request(SCOPE, "Deploy to production failed because the database migration timed out.");
    episode.memory_type = MemoryType::Episodic;
    episode.event_at = Some(retold_domain::Clock::now(w.clock.as_ref()) - TimeDelta::days(400));
    let old_deploy = w.write(&p, episode).await;
    let mut episode = request(SCOPE, "Deploy to production failed because the cache warmup timed out.");
    episode.memory_type = MemoryType::Episodic;
    episode.event_at = Some(retold_domain::Clock::now(w.clock.as_ref()) - TimeDelta::days(2));
    let new_deploy = w.write(&p, episode).await;
    let staging = [
        w.write(&p, request(SCOPE, "The staging server listens on port 8443.")).await,
        w.write(&p, request(SCOPE, "The staging server listens on port 8443 only.")).await,
    ];
    Corpus { error, concise, tea, old_deploy, new_deploy, staging }
}

fn crate_event() -> retold_domain::AuditEvent {
    retold_domain::AuditEvent {
        id: retold_domain::EventId::new("evt_alias_zoli").unwrap(),
        at: retold_domain::chrono::Utc::now(),
        kind: retold_domain::EventKind::EntityAliasAdded,
        record_id: None,
        actor: None,
        details: Default::default(),
    }
}

fn only(dense: bool, lexical: bool, entity: bool) -> Channels {
    Channels { dense, lexical, entity, result_control: true }
}

#[tokio::test]
async fn an_exact_error_code_is_found_lexically_but_not_densely() {
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let p = principal("golden-agent", "u");
    let response = w.search(&p, SearchRequest::new("E0599")).await;
    let top = &response.hits[0];
    assert_eq!(top.record.id, c.error);
    let lexical = top.lexical.as_ref().expect("lexical match");
    assert_eq!((lexical.rank, lexical.matched.len(), lexical.matched[0].identifier), (1, 1, true));
    assert!(
        top.explanation.contains("lexical 1/1 terms (rank 1) [1 identifier, 0 alias]"),
        "{}",
        top.explanation
    );
    // The dense channel alone does not surface it: the code carries no meaning for the model.
    let mut dense_only = SearchRequest::new("E0599");
    dense_only.channels = only(true, false, false);
    let dense = w.search(&p, dense_only).await;
    assert!(
        !ids(&dense).contains(&c.error),
        "{:?}",
        dense.hits.iter().map(|h| &h.explanation).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_paraphrase_is_found_densely_but_not_lexically() {
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let response =
        // No word (or stem) in common with "Aditya prefers concise technical explanations.";
        // cosine 0.42 with all-MiniLM-L6-v2, well above the dense floor (0.30).
        w.search(&principal("golden-agent", "u"), SearchRequest::new("short and precise replies about engineering"))
            .await;
    let hit = response.hits.iter().find(|h| h.record.id == c.concise).expect("the paraphrase is found");
    assert!(hit.lexical.is_none(), "no shared word: {}", hit.explanation);
    assert!(hit.explanation.starts_with("matched: dense"), "{}", hit.explanation);
    assert!(hit.explanation.ends_with("gate: passed dense threshold"), "{}", hit.explanation);
    assert_eq!(response.hits[0].record.id, c.concise);
}

#[tokio::test]
async fn a_name_only_the_entity_channel_knows_finds_a_pronoun_record() {
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let p = principal("golden-agent", "u");
    let response = w.search(&p, SearchRequest::new("Tell me about Zoli")).await;
    let top = &response.hits[0];
    assert_eq!(top.record.id, c.tea);
    let entity = top.entity.as_ref().expect("entity match");
    assert_eq!((entity.rank, entity.role), (1, retold_domain::LinkRole::About));
    assert!(top.explanation.ends_with("gate: passed: 3 channels"), "{}", top.explanation);
    // The alias reached the lexical channel through the FTS aliases column, flagged as such.
    assert!(top.lexical.as_ref().unwrap().matched.iter().any(|m| m.alias && m.term == "zoli"));
    // Dense alone cannot connect "Zoli" to "He drinks green tea".
    let mut dense_only = SearchRequest::new("Tell me about Zoli");
    dense_only.channels = only(true, false, false);
    assert!(!ids(&w.search(&p, dense_only).await).contains(&c.tea));
    let mut entity_only = SearchRequest::new("Tell me about Zoli");
    entity_only.channels = only(false, false, true);
    let found = w.search(&p, entity_only).await;
    assert_eq!(ids(&found), std::slice::from_ref(&c.tea));
    // Alone, the entity match passes: the query names nothing besides Zoli.
    assert!(
        found.hits[0].explanation.ends_with("gate: passed: entity match, and the query names nothing else"),
        "{}",
        found.hits[0].explanation
    );
    // A query that asks something besides does not take an entity match alone.
    let mut asks_more = SearchRequest::new("Which coffee does Zoli drink?");
    asks_more.channels = only(false, false, true);
    assert!(ids(&w.search(&p, asks_more).await).is_empty());
}

#[tokio::test]
async fn an_old_episode_ranks_below_a_recent_one_unless_the_query_is_time_bounded() {
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let p = principal("golden-agent", "u");
    let response = w.search(&p, SearchRequest::new("deploy to production failed timed out")).await;
    let order = ids(&response);
    let new_at = order.iter().position(|id| *id == c.new_deploy).unwrap();
    let old_at = order.iter().position(|id| *id == c.old_deploy).unwrap();
    assert!(new_at < old_at, "{order:?}");
    let old = &response.hits[old_at];
    assert!(old.explanation.contains("freshness: x0.70 (episodic, 400 days old)"), "{}", old.explanation);
    // Time-bounded: no decay.
    let mut bounded = SearchRequest::new("deploy to production failed timed out");
    bounded.event_from = Some(retold_domain::Clock::now(w.clock.as_ref()) - TimeDelta::days(500));
    let bounded = w.search(&p, bounded).await;
    assert!(bounded.hits.iter().all(|h| !h.explanation.contains("freshness")));
}

#[tokio::test]
async fn a_query_that_names_its_time_ranks_the_episodes_of_that_time_first() {
    let query = "Which deploy to production failed and timed out a year ago?";
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let p = principal("golden-agent", "u");
    let response = w.search(&p, SearchRequest::new(query)).await;
    let order = ids(&response);
    let old_at = order.iter().position(|id| *id == c.old_deploy).unwrap();
    let new_at = order.iter().position(|id| *id == c.new_deploy).unwrap();
    assert!(old_at < new_at, "the 400-day-old episode is the one asked about: {order:?}");
    let old = &response.hits[old_at];
    assert!(
        old.explanation.contains("time: in the query's window \"a year ago\" x2.00"),
        "{}",
        old.explanation
    );
    assert!(response.hits.iter().all(|h| !h.explanation.contains("freshness")), "time-bounded: no decay");
    assert!(!response.hits[new_at].explanation.contains("time:"), "{}", response.hits[new_at].explanation);
    let trace = w.trace(&response.search_id).await;
    let notes = trace["notes"].to_string();
    assert!(notes.contains("the query names its time: a year ago ("), "{trace}");

    // Reading no time from queries, the same words rank by freshness again.
    let w = world(RetrieveConfig { query_time_boost: None, ..RetrieveConfig::default() }).await;
    let c = corpus(&w).await;
    let order = ids(&w.search(&p, SearchRequest::new(query)).await);
    let old_at = order.iter().position(|id| *id == c.old_deploy).unwrap();
    let new_at = order.iter().position(|id| *id == c.new_deploy).unwrap();
    assert!(new_at < old_at, "{order:?}");
}

/// A record of the day a query names is found in that day's own list, though the whole
/// store holds closer matches than it (`retrieval.fusion.window`); without that list it is
/// not a candidate at all.
#[tokio::test]
async fn a_record_of_the_time_the_query_names_comes_in_by_that_times_own_list() {
    let query = "What did I cook two weeks ago?";
    let run = |window: f64| async move {
        let mut config = RetrieveConfig { per_generator_k: 2, ..RetrieveConfig::default() };
        config.fusion_weights.window = window;
        let w = world(config).await;
        w.grant("golden-agent", SCOPE, true, true).await;
        let p = principal("golden-agent", "u");
        let now = retold_domain::Clock::now(w.clock.as_ref());
        let dated = |content: &str, days: i64| {
            let mut e = episode(SCOPE, content);
            e.event_at = Some(now - TimeDelta::days(days));
            e
        };
        for (filler, days) in [
            ("I love to cook pasta on weekends.", 60),
            ("I cooked dinner for my parents.", 90),
            ("My cookbook collection keeps growing.", 40),
            ("Cooking classes start at the community centre.", 30),
        ] {
            w.write(&p, dated(filler, days)).await;
        }
        let soup = w.write(&p, dated("Made a big pot of lentil soup for the neighbours.", 14)).await;
        let response = w.search(&p, SearchRequest::new(query)).await;
        let trace = w.trace(&response.search_id).await;
        (response, trace, soup)
    };
    let (response, trace, soup) = run(0.75).await;
    let hit = response.hits.iter().find(|h| h.record.id == soup).expect("the day's record is found");
    let window = hit.window.as_ref().expect("found by the list of the query's time");
    assert_eq!(window.rank, 1);
    assert!(hit.dense.is_none() && hit.lexical.is_none(), "no other list holds it: {}", hit.explanation);
    assert!(hit.explanation.contains("(rank 1 in the query's time)"), "{}", hit.explanation);
    assert!(hit.explanation.contains("time: in the query's window \"two weeks ago\""), "{}", hit.explanation);
    assert!(
        hit.explanation.contains("gate: passed: one channel, in the query's window"),
        "{}",
        hit.explanation
    );
    let window_list =
        trace["channels"]["window"].as_array().unwrap_or_else(|| panic!("no window list: {trace}"));
    assert_eq!(window_list.len(), 1, "only the day's record: {trace}");

    // Off, the record is in no list: the query's time cannot rank up what was not found.
    let (response, trace, soup) = run(0.0).await;
    assert!(response.hits.iter().all(|h| h.record.id != soup), "{:?}", ids(&response));
    assert!(trace["channels"].get("window").is_none(), "{trace}");
}

#[tokio::test]
async fn a_question_that_asks_when_ranks_the_record_that_names_a_time_first() {
    let query = "When did Maria hike the Blue Ridge trail?";
    let order = |config: RetrieveConfig| async move {
        let w = world(config).await;
        w.grant("golden-agent", SCOPE, true, true).await;
        let p = principal("golden-agent", "u");
        let plain = w.write(&p, request(SCOPE, "Maria hiked the Blue Ridge trail.")).await;
        let dated = w
            .write(
                &p,
                request(SCOPE, "Last weekend Maria and her dog went up the Blue Ridge trail to the top."),
            )
            .await;
        for filler in
            ["The project uses Conventional Commits.", "The office coffee machine is on the third floor."]
        {
            w.write(&p, request(SCOPE, filler)).await;
        }
        let response = w.search(&p, SearchRequest::new(query)).await;
        let trace = w.trace(&response.search_id).await;
        (ids(&response), plain, dated, response, trace)
    };
    let (ids_on, plain, dated, response, trace) = order(RetrieveConfig::default()).await;
    assert_eq!(
        ids_on[..2],
        [dated.clone(), plain.clone()],
        "the answer to when is the record that says when"
    );
    assert!(
        response.hits[0].explanation.contains("time: names a time, the question asks when x2.00"),
        "{}",
        response.hits[0].explanation
    );
    assert!(!response.hits[1].explanation.contains("time:"), "{}", response.hits[1].explanation);
    assert!(
        trace["notes"].to_string().contains("the question asks when: 1 candidates that name a time x2.00"),
        "{trace}"
    );

    // Left as they are, the closer wording ranks first.
    let (ids_off, plain, dated, response, _) =
        order(RetrieveConfig { asks_when_boost: 1.0, ..RetrieveConfig::default() }).await;
    assert_eq!(ids_off[..2], [plain, dated]);
    assert!(response.hits.iter().all(|h| !h.explanation.contains("asks when")));
}

#[tokio::test]
async fn of_two_records_about_the_same_thing_the_newer_ranks_first() {
    let query = "How many times a week does Aditya go to the gym?";
    let order = |config: RetrieveConfig| async move {
        let w = world(config).await;
        w.grant("golden-agent", SCOPE, true, true).await;
        let p = principal("golden-agent", "u");
        let now = retold_domain::Clock::now(w.clock.as_ref());
        let mut older =
            request(SCOPE, "Aditya goes to the gym three times a week: Tuesdays, Thursdays and Saturdays.");
        older.event_at = Some(now - TimeDelta::days(120));
        let older = w.write(&p, older).await;
        let mut newer = request(SCOPE, "These days Aditya is at the gym four times a week.");
        newer.event_at = Some(now - TimeDelta::days(3));
        let newer = w.write(&p, newer).await;
        for filler in
            ["The project uses Conventional Commits.", "The office coffee machine is on the third floor."]
        {
            w.write(&p, request(SCOPE, filler)).await;
        }
        let response = w.search(&p, SearchRequest::new(query)).await;
        let trace = w.trace(&response.search_id).await;
        // A search that filters its time asks about that time, not about what is current.
        let mut bounded = SearchRequest::new(query);
        bounded.event_from = Some(now - TimeDelta::days(500));
        assert_eq!(ids(&w.search(&p, bounded).await)[..2], [older.clone(), newer.clone()]);
        (ids(&response), older, newer, response, trace)
    };
    // By score alone the older, closer wording ranks first.
    let (plain, older, newer, response, _) =
        order(RetrieveConfig { newer_first: None, ..RetrieveConfig::default() }).await;
    assert_eq!(plain[..2], [older.clone(), newer.clone()]);
    assert!(response.hits.iter().all(|h| !h.explanation.contains("newer than")));

    let (shipped, older, newer, response, trace) = order(RetrieveConfig::default()).await;
    assert_eq!(shipped[..2], [newer, older.clone()], "the update comes before what it updates");
    assert!(
        response.hits[0].explanation.contains(&format!("time: newer than {older}, alike (cosine")),
        "{}",
        response.hits[0].explanation
    );
    let sorted = |ids: &[RecordId]| {
        let mut ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        ids.sort();
        ids
    };
    assert_eq!(sorted(&shipped), sorted(&plain), "the same records, in another order");
    assert!(trace["notes"].to_string().contains("ranked above an older one about the same thing"), "{trace}");
    assert!(
        trace["timings_us"].get("newer_first").is_some(),
        "the stage is timed under its own name: {trace}"
    );
}

#[tokio::test]
async fn near_duplicates_are_collapsed_keeping_the_higher_ranked() {
    let w = world(RetrieveConfig::default()).await;
    let c = corpus(&w).await;
    let response =
        w.search(&principal("golden-agent", "u"), SearchRequest::new("staging server port 8443")).await;
    let found: Vec<_> = ids(&response).into_iter().filter(|id| c.staging.contains(id)).collect();
    assert_eq!(found.len(), 1, "one of the twins is collapsed");
    let trace = w.trace(&response.search_id).await;
    let dropped: Vec<_> =
        trace["drops"].as_array().unwrap().iter().filter(|d| d["stage"] == "duplicate").collect();
    assert_eq!(dropped.len(), 1);
    assert_ne!(dropped[0]["record_id"].as_str().unwrap(), found[0].as_str());
    assert!(dropped[0]["reason"].as_str().unwrap().contains(found[0].as_str()));
}

#[tokio::test]
async fn the_token_budget_cuts_the_list_at_whole_records() {
    let w = world(RetrieveConfig { token_budget: 40, ..RetrieveConfig::default() }).await;
    corpus(&w).await;
    let response =
        w.search(&principal("golden-agent", "u"), SearchRequest::new("server production project")).await;
    assert!(!response.hits.is_empty());
    let spent: usize =
        response.hits.iter().map(|h| h.record.content.as_str().chars().count().div_ceil(4) + 12).sum();
    assert!(spent <= 40 || response.hits.len() == 1, "{spent}");
    let trace = w.trace(&response.search_id).await;
    assert!(trace["drops"].as_array().unwrap().iter().any(|d| d["stage"] == "budget"), "{trace}");
}

#[tokio::test]
async fn a_request_token_budget_replaces_the_configured_one() {
    let w = world(RetrieveConfig::default()).await;
    corpus(&w).await;
    let who = principal("golden-agent", "u");
    let unbudgeted = w.search(&who, SearchRequest::new("server production project")).await;
    assert!(unbudgeted.hits.len() > 1, "the corpus gives several results under the default budget");
    let trace = w.trace(&unbudgeted.search_id).await;
    let configured = RetrieveConfig::default().token_budget.to_string();
    assert_eq!(
        trace["request"]["token_budget"],
        configured.as_str(),
        "the configured budget is the one traced"
    );
    let mut tight = SearchRequest::new("server production project");
    tight.token_budget = Some(1);
    let cut = w.search(&who, tight).await;
    // Whole records only, and the first one always: a one-token budget keeps exactly it.
    assert_eq!(cut.hits.len(), 1);
    assert_eq!(cut.hits[0].record.id, unbudgeted.hits[0].record.id);
    let trace = w.trace(&cut.search_id).await;
    assert_eq!(trace["request"]["token_budget"], "1", "{trace}");
    assert!(trace["drops"].as_array().unwrap().iter().any(|d| d["stage"] == "budget"), "{trace}");
}

#[tokio::test]
async fn the_trace_holds_every_stage() {
    let w = world(RetrieveConfig::default()).await;
    corpus(&w).await;
    let response = w.search(&principal("golden-agent", "u"), SearchRequest::new("Aditya explanations")).await;
    let trace = w.trace(&response.search_id).await;
    assert_eq!(trace["principal"]["agent_id"], "golden-agent");
    assert_eq!(trace["request"]["query"], "Aditya explanations");
    assert_eq!(trace["rewrite_status"], "off");
    assert_eq!(trace["eligible_count"], 13);
    for channel in ["dense", "lexical", "entity"] {
        assert!(trace["channels"][channel].is_array(), "{channel}");
    }
    assert!(!trace["fused"].as_array().unwrap().is_empty());
    for stage in ["eligibility", "dense", "lexical", "entity", "fusion", "gate", "total"] {
        assert!(trace["timings_us"][stage].is_u64(), "{stage}");
    }
    assert_eq!(trace["results"].as_array().unwrap().len(), response.hits.len());
}

#[tokio::test]
async fn superseded_only_with_history_deleted_and_expired_never() {
    let w = world(RetrieveConfig::default()).await;
    w.grant("a", "project:p", true, true).await;
    let p = principal("a", "u");
    let mut first = about(request("project:p", "The release train leaves on Tuesdays."), "Release Train");
    first.attribute = Some(retold_domain::Attribute::new("release_day").unwrap());
    let old = w.write(&p, first.clone()).await;
    let mut second = first.clone();
    second.content = retold_domain::Content::new("The release train leaves on Thursdays.").unwrap();
    let new = w.write(&p, second).await;
    let query = || SearchRequest::new("When does the release train leave?");
    assert_eq!(ids(&w.search(&p, query()).await), std::slice::from_ref(&new));
    let mut history = query();
    history.include_history = true;
    let with_history = ids(&w.search(&p, history.clone()).await);
    assert!(with_history.contains(&old) && with_history.contains(&new), "{with_history:?}");

    let mut guess = request("project:p", "The release train might move to Wednesdays.");
    guess.source_kind = SourceKind::AgentInference;
    let guess = w.write(&p, guess).await;
    assert!(ids(&w.search(&p, query()).await).contains(&guess));
    w.days(31);
    assert!(!ids(&w.search(&p, history.clone()).await).contains(&guess), "expired never");

    w.ingestor.forget(&p, &new, "wrong").await.unwrap();
    assert!(!ids(&w.search(&p, history).await).contains(&new), "deleted never");
}

#[tokio::test]
async fn memory_get_shows_the_chain_and_hides_what_the_caller_cannot_read() {
    let w = world(RetrieveConfig::default()).await;
    w.grant("a", "project:p", true, true).await;
    let p = principal("a", "u");
    let mut first = about(request("project:p", "The release train leaves on Tuesdays."), "Release Train");
    first.attribute = Some(retold_domain::Attribute::new("release_day").unwrap());
    let old = w.write(&p, first.clone()).await;
    let mut second = first;
    second.content = retold_domain::Content::new("The release train leaves on Thursdays.").unwrap();
    let new = w.write(&p, second).await;
    let details = w.retriever.get(&p, std::slice::from_ref(&new)).await.unwrap();
    assert_eq!(
        details[0].supersedes.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        std::slice::from_ref(&old)
    );
    assert_eq!(details[0].links.len(), 1);
    let old_detail = w.retriever.get(&p, std::slice::from_ref(&old)).await.unwrap();
    assert_eq!(old_detail[0].superseded_by, std::slice::from_ref(&new));
    // Another principal without the grant: exactly like a missing id.
    let stranger = w.retriever.get(&principal("b", "u"), std::slice::from_ref(&new)).await.unwrap_err();
    let missing = w.retriever.get(&p, &[RecordId::new("mem_nothing").unwrap()]).await.unwrap_err();
    assert!(matches!(stranger, retold_domain::DomainError::NotFound { what: "record", .. }));
    assert!(matches!(missing, retold_domain::DomainError::NotFound { what: "record", .. }));
}

/// Scores documents by reversed position, or never answers, or fails.
enum TestReranker {
    Reverse,
    Hang,
    Fail,
}

#[async_trait::async_trait]
impl retold_domain::Reranker for TestReranker {
    async fn rerank(&self, _query: &str, documents: &[String]) -> retold_domain::Result<Vec<f64>> {
        match self {
            Self::Reverse => Ok((0..documents.len()).map(|i| i as f64).collect()),
            Self::Hang => std::future::pending().await,
            Self::Fail => Err(retold_domain::DomainError::backend("reranker", "unavailable")),
        }
    }
}

#[tokio::test]
async fn the_reranker_reorders_and_falls_back_to_rrf_order_on_timeout_or_failure() {
    let config = RetrieveConfig {
        reranker_enabled: true,
        reranker_timeout: std::time::Duration::from_millis(50),
        ..RetrieveConfig::default()
    };
    let query = || SearchRequest::new("deploy production staging server");
    let baseline = {
        let w = world(RetrieveConfig::default()).await;
        corpus(&w).await;
        ids(&w.search(&principal("golden-agent", "u"), query()).await)
    };
    assert!(baseline.len() >= 2);
    // Both placements: in place of the gate, what the reranker did not reorder (everything,
    // when it timed out or failed) is still gated, so the fallback is the RRF order exactly.
    let placements = [RerankerPlacement::AfterGate, RerankerPlacement::InsteadOfGate];
    for (placement, (reranker, reversed, reason)) in placements.into_iter().flat_map(|p| {
        [
            (TestReranker::Reverse, true, None),
            (TestReranker::Hang, false, Some("timed out")),
            (TestReranker::Fail, false, Some("failed")),
        ]
        .map(|case| (p, case))
    }) {
        let config = RetrieveConfig { reranker_placement: placement, ..config.clone() };
        let w = crate::world_with(config, Some(std::sync::Arc::new(reranker))).await;
        corpus(&w).await;
        let response = w.search(&principal("golden-agent", "u"), query()).await;
        let got = ids(&response);
        let trace = w.trace(&response.search_id).await;
        // The reranker removes nothing, whatever happens to it: every drop in a trace is real.
        let drops = trace["drops"].as_array().unwrap();
        assert!(drops.iter().all(|d| d["stage"] != "reranker"), "{drops:?}");
        let notes = trace["notes"].as_array().unwrap();
        if reversed {
            // Its order is fused with the RRF order and freshness (that rule is unit-tested in
            // the pipeline); every result says what the reranker made of it.
            assert!(
                response.hits.iter().all(|h| h.explanation.contains("; reranker: ")),
                "{:?}",
                response.hits
            );
            assert!(notes.iter().all(|n| n["stage"] != "reranker"), "{notes:?}");
            let mut sorted = got.clone();
            sorted.sort();
            if placement == RerankerPlacement::AfterGate {
                let last = response.hits.iter().find(|h| Some(&h.record.id) == baseline.last()).unwrap();
                assert!(last.explanation.ends_with("; reranker: 2.00 (rank 1)"), "{}", last.explanation);
                let mut expected = baseline.clone();
                expected.sort();
                assert_eq!(sorted, expected, "the same records, nothing dropped or added");
            } else {
                // No gate ahead of it: candidates the gate drops reach the results too.
                assert!(got.len() > baseline.len(), "{got:?} against {baseline:?}");
            }
        } else {
            assert_eq!(got, baseline, "RRF order kept ({placement:?})");
            let note = notes.iter().find(|n| n["stage"] == "reranker").unwrap();
            assert!(note["note"].as_str().unwrap().contains(reason.unwrap()), "{note}");
        }
    }
}

#[tokio::test]
async fn an_episode_that_says_little_ranks_below_the_one_that_answers() {
    let query = "What does Melanie paint?";
    let order = |config: RetrieveConfig| async move {
        let w = world(config).await;
        w.grant("golden-agent", SCOPE, true, true).await;
        let p = principal("golden-agent", "u");
        let short = w.write(&p, episode(SCOPE, "Melanie: Paint? Haha, me? Bye!")).await;
        let answer = w
            .write(
                &p,
                episode(
                    SCOPE,
                    "Melanie: Lately I have been painting sunsets over the lake with watercolours, and \
                     I finished a large one of our campsite at dawn, with the tents, the canoe and \
                     the mist over the water, after three careful evenings of layering blue and \
                     orange washes on heavy cotton paper.",
                ),
            )
            .await;
        for filler in
            ["The project uses Conventional Commits.", "The office coffee machine is on the third floor."]
        {
            w.write(&p, request(SCOPE, filler)).await;
        }
        let response = w.search(&p, SearchRequest::new(query)).await;
        (ids(&response), short, answer, response)
    };
    // By the channels alone, the turn that holds the query's words ranks first.
    let (plain, short, answer, response) = order(RetrieveConfig::default()).await;
    assert_eq!(plain[..2], [short.clone(), answer.clone()]);
    assert!(response.hits.iter().all(|h| !h.explanation.contains("substance")), "off by default");

    let substance = Some(retold_retrieve::Substance { words: 20, floor: 0.3 });
    let (on, short, answer, response) =
        order(RetrieveConfig { substance, ..RetrieveConfig::default() }).await;
    assert_eq!(on[..2], [answer, short], "the turn that says something comes first");
    assert!(
        response.hits[1].explanation.contains("substance: x0.44 (episodic, 4 content words)"),
        "{}",
        response.hits[1].explanation
    );
}
