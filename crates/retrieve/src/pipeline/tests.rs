//! Each result-control stage on its own.

use retold_domain::chrono::{TimeDelta, TimeZone, Utc};
use retold_domain::{
    AgentId, Confidence, Content, DropStage, MatchedTerm, MemoryRecord, MemoryType, RecordId, RecordKey,
    Scope, SourceKind, Status, Timestamp, TraceDrop,
};

use super::control::{self, Candidate};
use crate::config::RetrieveConfig;
use crate::request::{DenseMatch, EntityMatch, LexicalMatch};

fn now() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 9, 3, 12, 0, 0).unwrap()
}

fn candidate(n: u64, content: &str) -> Candidate {
    let record = MemoryRecord {
        id: RecordId::new(format!("mem_{n:04}")).unwrap(),
        memory_type: MemoryType::Semantic,
        version: 1,
        content: Content::new(content).unwrap(),
        key: None,
        scope: Scope::parse("user:aditya").unwrap(),
        source_kind: SourceKind::System,
        source_ref: None,
        creator_agent_id: AgentId::new("research-agent").unwrap(),
        evidence: None,
        created_at: now(),
        event_at: Some(now()),
        expires_at: None,
        confidence: Confidence::new(0.9).unwrap(),
        status: Status::Confirmed,
        supersedes_id: None,
        reinforcements: 0,
        last_reinforced_at: None,
        tags: vec![],
        context: None,
        origin: retold_domain::Origin::Memory,
        speaker: None,
    };
    let rrf = 1.0 / (60.0 + n as f64);
    Candidate::fused(
        record.id.clone(),
        RecordKey(n),
        (n as usize - 1, rrf),
        record,
        &mut super::ChannelHits::default(),
    )
}

fn dense(mut c: Candidate, cosine: f32) -> Candidate {
    c.dense = Some(DenseMatch { rank: 1, cosine });
    c
}

fn lexical(mut c: Candidate, matched: usize, of: usize) -> Candidate {
    let term = |i: usize| MatchedTerm { term: format!("t{i}"), identifier: false, alias: false };
    c.lexical =
        Some(LexicalMatch { rank: 1, bm25: 1.0, matched: (0..matched).map(term).collect(), query_terms: of });
    c
}

/// Found only by the dense channel's list of the query's time.
fn by_date(mut c: Candidate, cosine: f32) -> Candidate {
    c.window = Some(DenseMatch { rank: 1, cosine });
    c
}

fn in_window(mut c: Candidate) -> Candidate {
    c.in_window = Some(("last month".to_owned(), 2.0));
    c
}

fn stages(drops: &[TraceDrop]) -> Vec<(String, DropStage)> {
    drops.iter().map(|d| (d.record_id.to_string(), d.stage)).collect()
}

#[test]
fn the_gate_passes_entity_and_multi_channel_matches_and_holds_single_channels_to_their_floors() {
    let config = RetrieveConfig::default();
    let entity = about(candidate(1, "a"), "ent_a", retold_domain::LinkRole::About);
    let cases = [
        (entity, Ok("passed: entity match, and the query names nothing else")),
        (lexical(dense(candidate(2, "b"), 0.05), 1, 4), Ok("passed: 2 channels")),
        (dense(candidate(3, "c"), 0.31), Ok("passed dense threshold")),
        (dense(candidate(4, "d"), 0.29), Err("dense-only cosine 0.29 below the floor 0.30")),
        (lexical(candidate(5, "e"), 1, 2), Ok("passed lexical term share")),
        (
            lexical(candidate(6, "f"), 1, 3),
            Err("lexical-only match of 1/3 terms below the share 0.50 and under 2 terms"),
        ),
        (candidate(7, "g"), Err("no channel matched")),
        // A long question's evidence shares two of its seven terms: enough.
        (lexical(candidate(8, "h"), 2, 7), Ok("passed lexical: 2 terms")),
        // Inside the time the query names, one channel's match is enough; outside, not.
        (in_window(dense(candidate(9, "i"), 0.12)), Ok("passed: one channel, in the query's window")),
        (in_window(lexical(candidate(10, "j"), 1, 5)), Ok("passed: one channel, in the query's window")),
        (in_window(candidate(11, "k")), Err("no channel matched")),
        // Found only in the list of the query's time, a record needs the dense floor.
        (in_window(by_date(candidate(12, "l"), 0.31)), Ok("passed: one channel, in the query's window")),
        (in_window(by_date(candidate(13, "m"), 0.12)), Err("dense-only cosine 0.12 below the floor 0.30")),
    ];
    for (c, expected) in &cases {
        let verdict = control::gate_verdict(c, &config, &[]);
        assert_eq!(verdict.as_deref().map_err(String::as_str), *expected, "{}", c.id);
    }
    let mut drops = Vec::new();
    let kept = control::gate(cases.into_iter().map(|(c, _)| c).collect(), &config, &[], &mut drops);
    assert_eq!(
        kept.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["mem_0001", "mem_0002", "mem_0003", "mem_0005", "mem_0008", "mem_0009", "mem_0010", "mem_0012"]
    );
    assert_eq!(stages(&drops).iter().map(|(_, s)| *s).collect::<Vec<_>>(), [DropStage::Gate; 5]);
}

/// In a store of many conversations a speaker's turns are many: "What did Joanna research?"
/// is answered by the turns its words find, not by any turn of Joanna's; "What about
/// Joanna?" names nothing else, and her records are the answer.
#[test]
fn an_entity_match_alone_passes_only_a_query_that_names_nothing_else() {
    let config = RetrieveConfig::default();
    let entity = about(candidate(1, "a"), "ent_joanna", retold_domain::LinkRole::About);
    assert_eq!(
        control::gate_verdict(&entity, &config, &["research".to_owned()]),
        Err("entity match alone, and the query names more than its entities (research)".to_owned())
    );
    assert!(control::gate_verdict(&entity, &config, &[]).is_ok());
    // With another channel's match it passes as two channels, whatever the query names.
    let both = lexical(entity, 1, 3);
    assert_eq!(
        control::gate_verdict(&both, &config, &["research".to_owned()]).as_deref(),
        Ok("passed: 2 channels")
    );
}

#[test]
fn freshness_lowers_only_old_episodes_and_never_below_the_floor() {
    let config = RetrieveConfig::default();
    let mut old = candidate(1, "old episode");
    old.record.memory_type = MemoryType::Episodic;
    old.record.event_at = Some(now() - TimeDelta::days(3650));
    let semantic = candidate(2, "a fact");
    let mut fresh = candidate(3, "today's episode");
    fresh.record.memory_type = MemoryType::Episodic;
    let mut list = vec![old, semantic, fresh];
    control::freshness(&mut list, now(), &config);
    control::apply_factors(&mut list);
    let by_id = |id: &str| list.iter().find(|c| c.id.as_str() == id).unwrap();
    let (factor, days) = by_id("mem_0001").freshness.unwrap();
    assert_eq!(days, 3650);
    assert!(
        factor >= config.episodic_freshness_floor && factor < config.episodic_freshness_floor + 0.01,
        "{factor}"
    );
    assert!(by_id("mem_0002").freshness.is_none(), "semantic records keep their score");
    assert_eq!(by_id("mem_0003").freshness.unwrap().0, 1.0);
    // A ten-year-old episode at fused rank 1 (x0.80) falls behind ranks 2 and 3 of the same
    // RRF range, which differ from it by less than 20%.
    assert_eq!(list.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["mem_0002", "mem_0003", "mem_0001"]);
}

#[test]
fn the_budget_keeps_whole_records_and_the_limit_counts_survivors() {
    let long = "x".repeat(400); // 100 + 12 tokens
    let list: Vec<Candidate> = (1..=5).map(|n| candidate(n, &long)).collect();
    let mut drops = Vec::new();
    let kept = control::budget(list.clone(), 10, Some(250), (&[], 0), &mut drops);
    assert_eq!(kept.len(), 2, "112 + 112 fit in 250, a third would not");
    assert_eq!(stages(&drops).iter().map(|(_, s)| *s).collect::<Vec<_>>(), [DropStage::Budget; 3]);

    let mut drops = Vec::new();
    let kept = control::budget(list.clone(), 3, None, (&[], 0), &mut drops);
    assert_eq!(kept.len(), 3);
    assert_eq!(drops.iter().map(|d| d.stage).collect::<Vec<_>>(), [DropStage::Limit; 2]);

    let mut drops = Vec::new();
    let kept = control::budget(list[..1].to_vec(), 10, Some(1), (&[], 0), &mut drops);
    assert_eq!(kept.len(), 1, "the first record is kept even over the budget");

    // A record that does not fit is skipped; a later, shorter one still fits.
    let mut list = list;
    list[3] = candidate(4, &"y".repeat(40)); // 10 + 12 tokens
    let mut drops = Vec::new();
    let kept = control::budget(list, 10, Some(250), (&[], 0), &mut drops);
    assert_eq!(kept.iter().map(|c| c.key.0).collect::<Vec<_>>(), [1, 2, 4], "224 + 22 fit in 250");
}

#[test]
fn duplicate_collapse_keeps_the_higher_ranked_twin() {
    let list = vec![candidate(1, "a"), candidate(2, "b"), candidate(3, "c")];
    let vectors = |key: RecordKey| match key.0 {
        1 => Some(vec![1.0, 0.0]),
        2 => Some(vec![0.99, 0.141]),
        _ => Some(vec![0.0, 1.0]),
    };
    let mut drops = Vec::new();
    let kept = control::collapse_duplicates(list, vectors, 0.95, &mut drops);
    assert_eq!(kept.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["mem_0001", "mem_0003"]);
    assert_eq!(drops.len(), 1);
    assert_eq!(drops[0].stage, DropStage::Duplicate);
    assert!(drops[0].reason.starts_with("near-duplicate of mem_0001"), "{}", drops[0].reason);
}

#[test]
fn records_that_differ_in_an_identifier_name_or_number_are_not_duplicates() {
    let same_vector = |_: RecordKey| Some(vec![1.0, 0.0]);
    let cases = [
        ("Build tok3f9a failed on disk.", "Build tok77b2 failed on disk.", 2),
        ("Deploy moved to Tuesday.", "Deploy moved to Thursday.", 2),
        ("Port 8443 is open.", "Port 8080 is open.", 2),
        ("The cache lives in crates/http/src.", "The cache lives in crates/index/src.", 2),
        ("The build cache lives on disk.", "The build cache lives on the disk.", 1),
    ];
    for (a, b, kept) in cases {
        let mut drops = Vec::new();
        let out = control::collapse_duplicates(
            vec![candidate(1, a), candidate(2, b)],
            same_vector,
            0.95,
            &mut drops,
        );
        assert_eq!(out.len(), kept, "{a:?} vs {b:?}");
    }
}

#[test]
fn an_rrf_tie_goes_to_the_better_evidenced_record() {
    use std::collections::HashMap;

    use super::{ChannelHits, break_ties_by_evidence};
    let id = |n: u32| RecordId::new(format!("mem_{n:04}")).unwrap();
    // mem_0001: dense-only rank 1. mem_0002: lexical rank 1 with its identifier matched.
    let hits = ChannelHits {
        dense: HashMap::from([(id(1), DenseMatch { rank: 1, cosine: 0.8 })]),
        lexical: HashMap::from([(
            id(2),
            LexicalMatch {
                rank: 1,
                bm25: 3.0,
                matched: vec![MatchedTerm { term: "tok3f9a".into(), identifier: true, alias: false }],
                query_terms: 1,
            },
        )]),
        ..ChannelHits::default()
    };
    let mut fused = crate::fusion::rrf(&[vec![id(1)], vec![id(2)]], 60);
    assert_eq!(fused[0].1, fused[1].1, "the tie");
    assert_eq!(fused[0].0, id(1), "plain RRF breaks it by id");
    break_ties_by_evidence(&mut fused, &hits);
    assert_eq!(fused.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>(), [id(2), id(1)]);

    // A match in the list of the query's time counts as the dense channel's: mem_0003,
    // found there and by the lexical channel, wins a tie with the lexical-only mem_0002.
    let lexical = |n: u32| (id(n), LexicalMatch { rank: 1, bm25: 3.0, matched: vec![], query_terms: 1 });
    let two = ChannelHits {
        window: HashMap::from([(id(3), DenseMatch { rank: 1, cosine: 0.5 })]),
        lexical: HashMap::from([lexical(2), lexical(3)]),
        ..ChannelHits::default()
    };
    let mut fused = crate::fusion::rrf(&[vec![id(2)], vec![id(3)]], 60);
    assert_eq!(fused[0].0, id(2), "plain RRF breaks it by id");
    break_ties_by_evidence(&mut fused, &two);
    assert_eq!(fused[0].0, id(3));
}

/// Scores each document by its position: the last first.
struct Reverse;

#[async_trait::async_trait]
impl retold_domain::Reranker for Reverse {
    async fn rerank(&self, _query: &str, documents: &[String]) -> retold_domain::Result<Vec<f64>> {
        Ok((0..documents.len()).map(|i| i as f64).collect())
    }
}

#[tokio::test]
async fn the_rerankers_order_is_fused_with_the_prior_order_and_freshness() {
    let ids = |list: &[Candidate]| list.iter().map(|c| c.key.0).collect::<Vec<_>>();
    let list: Vec<Candidate> = (1..=5).map(|n| candidate(n, "text")).collect();
    let rerank = |list: Vec<Candidate>, head: usize| async move {
        let mut notes = Vec::new();
        let out =
            control::rerank(&Reverse, std::time::Duration::from_secs(5), "q", list, (head, 5), &mut notes)
                .await;
        assert!(notes.is_empty(), "{notes:?}");
        out
    };
    // The first four are reranked (reversed), the fifth follows. Reranker rank r and prior
    // rank p score 1/(5 + r) + 1/(5 + p): 1 and 4 tie at 1/6 + 1/9, 2 and 3 at 1/7 + 1/8;
    // a tie keeps the reranker's order.
    let out = rerank(list.clone(), 4).await;
    assert_eq!(ids(&out), [4, 1, 3, 2, 5]);
    assert_eq!(out[0].reranked, Some((3.0, 1)));
    assert!((out[1].score - (1.0 / 6.0 + 1.0 / 9.0)).abs() < 1e-12);
    assert_eq!(out[4].reranked, None, "outside the head: not reranked");
    // An old episode's freshness factor applies again: at x0.8 the first falls behind 3 and 2.
    let mut list = list;
    list[0].freshness = Some((0.8, 400));
    assert_eq!(ids(&rerank(list, 4).await), [4, 3, 2, 1, 5]);
}

/// Candidate `n` dated `days` after a fixed day, matching query terms t0..t(`terms`-1).
fn dated(n: u64, days: i64, terms: usize) -> Candidate {
    let mut c = lexical(candidate(n, &format!("record {n}")), terms, 4);
    c.record.event_at = Some(now() - TimeDelta::days(100) + TimeDelta::days(days));
    c
}

fn order(candidates: &[Candidate]) -> Vec<String> {
    candidates.iter().map(|c| c.id.to_string()).collect()
}

/// Unit vectors: 1 and 3 are the same (cosine 1.0), 4 is 0.8 from each of them and 0.6
/// from 5, and 2 is orthogonal to all.
fn vector(key: RecordKey) -> Option<Vec<f32>> {
    match key.0 {
        1 | 3 => Some(vec![1.0, 0.0, 0.0]),
        2 => Some(vec![0.0, 1.0, 0.0]),
        4 => Some(vec![0.8, 0.0, 0.6]),
        _ => Some(vec![0.0, 0.0, 1.0]),
    }
}

const RULE: super::NewerFirst = super::NewerFirst { similarity: 0.5, score_share: 0.5, head: 5 };

/// A stemmer that drops a final "s": "t1s" is an inflection of "t1".
struct Plural;

impl retold_domain::WordStemmer for Plural {
    fn stem(&self, word: &str) -> String {
        word.strip_suffix('s').unwrap_or(word).to_owned()
    }
}

#[test]
fn the_newer_of_two_results_about_the_same_thing_ranks_just_above_the_older() {
    // 1 (oldest) and 4 are alike; 4 is newer and matches every term 1 matches.
    let mut candidates =
        vec![dated(1, 0, 2), dated(2, 5, 2), dated(3, 1, 1), dated(4, 30, 3), dated(5, 40, 2)];
    let mut notes = Vec::new();
    control::newer_first(&mut candidates, vector, (RULE, 10, &Plural), &mut notes);
    assert_eq!(order(&candidates), ["mem_0004", "mem_0001", "mem_0002", "mem_0003", "mem_0005"]);
    assert_eq!(candidates[0].newer_than.as_ref().map(|(id, _)| id.to_string()), Some("mem_0001".to_owned()));
    assert!((candidates[0].newer_than.as_ref().unwrap().1 - 0.8).abs() < 1e-6);
    assert!(super::explain::explain(&candidates[0]).contains("newer than mem_0001"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].stage, retold_domain::PipelineStage::NewerFirst);
    assert!(notes[0].note.starts_with("1 result ranked above"), "{}", notes[0].note);
    // 3 is newer than 1 and its vector the same, but it matches only t0 of 1's t0 and t1:
    // a narrower match is not about the same thing, and it stays where it was.
    assert!(candidates[3].newer_than.is_none());
}

#[test]
fn an_older_a_different_a_much_weaker_or_a_narrower_result_keeps_its_place() {
    let run = |mut candidates: Vec<Candidate>, limit: usize| {
        let mut notes = Vec::new();
        control::newer_first(&mut candidates, vector, (RULE, limit, &Plural), &mut notes);
        (order(&candidates), notes.len())
    };
    let as_given = |c: &[Candidate]| order(c);
    // Not newer: 4 is older than 1.
    let older = vec![dated(1, 30, 2), dated(2, 5, 2), dated(4, 0, 3)];
    assert_eq!(run(older.clone(), 10), (as_given(&older), 0));
    // Not alike: 2's vector is orthogonal to 1's, however new.
    let different = vec![dated(1, 0, 2), dated(2, 50, 3)];
    assert_eq!(run(different.clone(), 10), (as_given(&different), 0));
    // Much weaker: under half the older's score.
    let mut weak = vec![dated(1, 0, 2), dated(4, 30, 3)];
    weak[1].score = weak[0].score * 0.4;
    assert_eq!(run(weak.clone(), 10), (as_given(&weak), 0));
    // Narrower: the newer misses a query term the older matches.
    let narrower = vec![dated(1, 0, 2), dated(4, 30, 1)];
    assert_eq!(run(narrower.clone(), 10), (as_given(&narrower), 0));
    // Unless it holds that term inflected ("t1s" for the older's "t1"): then it moves up.
    let mut inflected = narrower;
    inflected[1].record.content = Content::new("record 4 says t1s").unwrap();
    assert_eq!(run(inflected, 10), (vec!["mem_0004".to_owned(), "mem_0001".to_owned()], 1));
    // Past the head (or the limit), nothing moves in: the results stay the same records.
    let deep = vec![
        dated(1, 0, 2),
        dated(2, 5, 2),
        dated(5, -1, 2),
        dated(6, -2, 2),
        dated(7, -3, 2),
        dated(4, 30, 3),
    ];
    assert_eq!(run(deep.clone(), 10), (as_given(&deep), 0));
    let within_limit = vec![dated(1, 0, 2), dated(2, 5, 2), dated(4, 30, 3)];
    assert_eq!(run(within_limit.clone(), 2), (as_given(&within_limit), 0));
}

/// `c` as the entity channel found it: linked to the query's `entity` in `role`.
fn about(mut c: Candidate, entity: &str, role: retold_domain::LinkRole) -> Candidate {
    c.entity = Some(EntityMatch { rank: 1, entity_id: retold_domain::EntityId::new(entity).unwrap(), role });
    c
}

/// An update is its speaker's own: another's newer words on the same thing (the agent's
/// reply, another speaker's turn) do not pass the statement of the person the query names
/// or points at, however alike and complete.
#[test]
fn another_speakers_newer_words_do_not_pass_the_named_persons_statement() {
    let run = |mut candidates: Vec<Candidate>| {
        let mut notes = Vec::new();
        control::newer_first(&mut candidates, vector, (RULE, 10, &Plural), &mut notes);
        order(&candidates)
    };
    let user = |c| about(c, "ent_user", retold_domain::LinkRole::About);
    let [older, newer] = ["mem_0001".to_owned(), "mem_0004".to_owned()];
    // 4 is newer than 1, alike (cosine 0.8), and matches every term 1 matches.
    let theirs = vec![user(dated(1, 0, 2)), user(dated(4, 30, 3))];
    assert_eq!(run(theirs), [newer.clone(), older.clone()]);
    let unlinked = vec![user(dated(1, 0, 2)), dated(4, 30, 3)];
    assert_eq!(run(unlinked), [older.clone(), newer.clone()]);
    let agent = |c| about(c, "ent_agent", retold_domain::LinkRole::About);
    let another = vec![user(dated(1, 0, 2)), agent(dated(4, 30, 3))];
    assert_eq!(run(another), [older.clone(), newer.clone()]);
    let mention =
        vec![user(dated(1, 0, 2)), about(dated(4, 30, 3), "ent_user", retold_domain::LinkRole::Mentions)];
    assert_eq!(run(mention), [older.clone(), newer.clone()]);
    // The person's own newer statement still passes someone else's words.
    let over_another = vec![dated(1, 0, 2), user(dated(4, 30, 3))];
    assert_eq!(run(over_another), [newer, older]);
}

#[test]
fn content_words_leave_out_stopwords_and_lone_letters() {
    assert_eq!(control::content_words("Bye, see you then!"), 2);
    assert_eq!(control::content_words("Hey Mel, what's up?"), 2);
    assert_eq!(control::content_words("I ran 5 km in 2023."), 4);
    assert_eq!(control::content_words(""), 0);
}

#[test]
fn an_episode_that_says_little_ranks_lower_and_a_statement_keeps_its_score() {
    let rule = crate::Substance { words: 20, floor: 0.3 };
    assert_eq!(rule.factor(0), 0.3);
    assert!((rule.factor(10) - 0.65).abs() < 1e-12);
    assert_eq!(rule.factor(20), 1.0);
    assert_eq!(rule.factor(200), 1.0);

    let episode = |n: u64, content: &str| {
        let mut c = candidate(n, content);
        c.record.memory_type = MemoryType::Episodic;
        c
    };
    let long = "Lately I have been painting sunsets over the lake with watercolours, and last \
                weekend I finished a large one of our campsite at dawn, with the tents, the canoe \
                and the mist over the water, after three careful evenings of layering blue and \
                orange washes on heavy cotton paper.";
    assert!(control::content_words(long) >= 20, "{}", control::content_words(long));
    let mut candidates = vec![
        episode(1, "Haha, yes! Bye!"),
        // A distilled statement is short by design: it keeps its score.
        candidate(2, "Aditya paints."),
        episode(3, long),
    ];
    let mut notes = Vec::new();
    control::substance(&mut candidates, rule, &mut notes);
    control::apply_factors(&mut candidates);
    assert_eq!(
        candidates.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["mem_0002", "mem_0003", "mem_0001"],
        "three content words keep 0.3 + 0.7 x 3/20 of the score: below both others"
    );
    let short = &candidates[2];
    assert_eq!(short.substance, Some((0.3 + 0.7 * 3.0 / 20.0, 3)));
    assert!((short.score - short.rrf * (0.3 + 0.7 * 3.0 / 20.0)).abs() < 1e-15);
    assert_eq!(candidates[0].substance, None);
    assert_eq!(candidates[1].substance, None);
    assert_eq!(candidates[0].score, candidates[0].rrf);
    assert_eq!(notes.len(), 1);
    assert!(notes[0].note.contains("1 episodes with fewer than 20 content words"), "{}", notes[0].note);
}

/// A broad entity (a conversation's speaker) lists its records that the other channels found
/// in the order those lists fuse in: a record three lists rank second leads one a single
/// list ranks first (interleaving the lists by rank put the single list's first ahead).
#[test]
fn a_broad_entity_lists_its_records_in_the_other_lists_fused_order() {
    use retold_domain::{Channel, EntityId, LinkRole};

    use super::ChannelHits;
    use super::channels::{Broad, ChannelList, corroborate};
    let id = |n: u32| RecordId::new(format!("mem_{n:04}")).unwrap();
    let speaker = EntityId::new("ent_mel").unwrap();
    // mem_0001: the lexical list's first only. mem_0002: second in all three lists.
    let mut hits = ChannelHits::default();
    hits.add::<()>(Channel::Dense, ChannelList { ids: vec![id(3), id(2)], ..ChannelList::default() });
    hits.add::<()>(Channel::Sentences, ChannelList { ids: vec![id(4), id(2)], ..ChannelList::default() });
    hits.add::<()>(Channel::Lexical, ChannelList { ids: vec![id(1), id(2)], ..ChannelList::default() });
    let broad: Broad = [1, 2]
        .into_iter()
        .map(|n| (id(n), (LinkRole::About, RecordKey(u64::from(n)), speaker.clone())))
        .collect();
    let config = RetrieveConfig::default();
    let order = hits.fused(&config.fusion_weights, config.rrf_k);
    let mut list = ChannelList::default();
    corroborate(&order, &broad, 50, &mut list);
    assert_eq!(list.ids, [id(2), id(1)]);
    assert_eq!(list.matches[&id(2)].rank, 1);
    assert!(
        list.trace[0].detail.contains("broad: corroborates rank 1 of the other lists fused"),
        "{:?}",
        list.trace[0]
    );
    // At most k.
    let mut list = ChannelList::default();
    corroborate(&order, &broad, 1, &mut list);
    assert_eq!(list.ids, [id(2)]);
}

/// A narrow entity's records (a person of one conversation in a store of many) are listed by
/// the query's relevance (the other lists fused), not by age: a newer turn of the same
/// speaker that no other list found comes after an older one the query's words found.
#[test]
fn a_narrow_entity_lists_its_records_by_relevance_then_newest() {
    use retold_domain::{Channel, EntityId, LinkRole};

    use super::ChannelHits;
    use super::channels::{ChannelList, NarrowLink, rank_narrow};
    let id = |n: u32| RecordId::new(format!("mem_{n:04}")).unwrap();
    let person = EntityId::new("ent_joanna").unwrap();
    let link = |n: u32, role: LinkRole, entities: usize| NarrowLink {
        id: id(n),
        role,
        entities,
        key: RecordKey(u64::from(n)),
        entity_id: person.clone(),
    };
    // Newest first by key: 9, 8, 7, 2, 1. The query's words found 2 (lexical first) and 1
    // (dense second).
    let mut hits = ChannelHits::default();
    hits.add::<()>(Channel::Dense, ChannelList { ids: vec![id(50), id(1)], ..ChannelList::default() });
    hits.add::<()>(Channel::Lexical, ChannelList { ids: vec![id(2)], ..ChannelList::default() });
    let config = RetrieveConfig::default();
    let order = hits.fused(&config.fusion_weights, config.rrf_k);
    let narrow = vec![
        link(9, LinkRole::About, 1),
        link(8, LinkRole::About, 1),
        link(2, LinkRole::About, 1),
        link(1, LinkRole::About, 1),
        link(7, LinkRole::Mentions, 1),
    ];
    let ChannelList { ids: list, trace, matches, keys } = rank_narrow(narrow, &order, 50);
    let lexical_first = order.iter().position(|(r, _)| *r == id(2)).unwrap();
    let dense_second = order.iter().position(|(r, _)| *r == id(1)).unwrap();
    let found_first = if lexical_first < dense_second { [id(2), id(1)] } else { [id(1), id(2)] };
    assert_eq!(list, [found_first[0].clone(), found_first[1].clone(), id(9), id(8), id(7)]);
    assert_eq!(matches[&list[0]].rank, 1);
    assert_eq!(keys[&id(9)], RecordKey(9));
    assert!(trace[0].detail.contains("of the other lists fused"), "{:?}", trace[0]);
    assert!(trace[2].detail.contains("no other list found it: newest first"), "{:?}", trace[2]);

    // What the other lists found comes first, whatever its role (1 only mentions Joanna).
    let narrow = vec![
        link(7, LinkRole::Mentions, 1),
        link(9, LinkRole::About, 1),
        link(2, LinkRole::About, 1),
        link(1, LinkRole::Mentions, 1),
    ];
    let list = rank_narrow(narrow, &order, 3).ids;
    assert_eq!(list, [found_first[0].clone(), found_first[1].clone(), id(9)], "at most k");
    // Among the found, a record linked to more of the query's entities leads one the other
    // lists ranked higher: the later-fused of 1 and 2 links two.
    let (earlier, later) = (found_first[0].clone(), found_first[1].clone());
    let number = |r: &RecordId| r.as_str()[4..].parse::<u32>().unwrap();
    let found_two =
        vec![link(number(&earlier), LinkRole::About, 1), link(number(&later), LinkRole::About, 2)];
    assert_eq!(rank_narrow(found_two, &order, 2).ids, [later, earlier], "two of the query's entities first");
    // Among the not found: more entities, then about before mentions, then newest first (3
    // is older than 10 but about Joanna; 4 links two of the query's entities).
    let unfound =
        vec![link(10, LinkRole::Mentions, 1), link(3, LinkRole::About, 1), link(4, LinkRole::Mentions, 2)];
    assert_eq!(rank_narrow(unfound, &order, 3).ids, [id(4), id(3), id(10)]);
}
