//! A long turn whose one sentence answers is found by that sentence: the write path stores a
//! vector per sentence beside the record's own, and the dense channel ranks records by their
//! best sentence in a list of its own (`retrieval.fusion.sentences`); the record list ranks
//! records by their own vector.

use retold_domain::{Embedder as _, EmbeddingSource as _, RecordReader as _};
use retold_retrieve::{Channels, RetrieveConfig, SearchRequest};

use super::{episode, ids, principal};

const SCOPE: &str = "project:sentences";
const ANSWER: &str = "Nate: That's really cool Joanna! I hope it does well, and I've been doing great! \
                      The gaming party was a great success! We even played some Chess afterward just for fun.";
const QUERY: &str = "What board games has Nate played?";
const OTHERS: &[&str] = &[
    "Nate: I'm entering a video game tournament next month, wish me luck!",
    "Joanna: Do you like playing anything outside of video games, Nate?",
    "Nate: My turtles are doing great, they love the new tank.",
    "Joanna: I finished writing my screenplay last night, it felt amazing.",
    "Nate: I adopted another turtle last week, her name is Shelly.",
    "Nate: I've been teaching my friends how to make vegan ice cream.",
    "Joanna: Nate, what do you do when you are not gaming?",
];

/// The answering turn among the others, and the contents in the order a dense-only search
/// ranks them by each record's own vector (no sentence list).
async fn records_only() -> (Vec<String>, retold_test_kit::World, retold_domain::RecordId) {
    let mut config = RetrieveConfig::default();
    config.fusion_weights.sentences = 0.0;
    ranked(config).await
}

/// The answering turn among the others, and the contents in the order a dense-only search
/// with `config` ranks them.
async fn ranked(config: RetrieveConfig) -> (Vec<String>, retold_test_kit::World, retold_domain::RecordId) {
    let w = super::world(config).await;
    w.grant("s-agent", SCOPE, true, true).await;
    let p = principal("s-agent", "u");
    for other in OTHERS {
        w.write(&p, episode(SCOPE, other)).await;
    }
    let answer = w.write(&p, episode(SCOPE, ANSWER)).await;
    let mut search = SearchRequest::new(QUERY);
    search.channels = Channels { dense: true, lexical: false, entity: false, result_control: false };
    let mut order = Vec::new();
    for id in ids(&w.search(&p, search).await) {
        order.push(w.record(&id).await.content.as_str().to_owned());
    }
    (order, w, answer)
}

/// The record ids of one channel's list in a search's trace, in its order.
fn channel_list(trace: &serde_json::Value, channel: &str) -> Vec<String> {
    let list = trace["channels"][channel].as_array().unwrap_or_else(|| panic!("no {channel} list: {trace}"));
    list.iter().map(|c| c["record_id"].as_str().unwrap().to_owned()).collect()
}

/// Where `text` is in `order`.
fn rank(order: &[String], text: &str) -> usize {
    order.iter().position(|t| t == text).unwrap_or_else(|| panic!("{text:?} is not in {order:?}"))
}

#[tokio::test]
async fn each_sentence_of_a_long_turn_is_stored_with_its_speaker() {
    let (_, w, answer) = ranked(RetrieveConfig::default()).await;
    // The store holds one vector per sentence, each embedded with the speaker's label.
    let info = w.ports.embedder.info().clone();
    let scan = w.store.compatible_embeddings(&info.name, info.version, info.dims).await.unwrap();
    let key = w.store.key_of(&answer).await.unwrap().expect("stored");
    let row = scan.keys.iter().position(|k| *k == key).expect("its row is scanned");
    assert_eq!(scan.sentence_counts[row], 4);
    let before: usize = scan.sentence_counts[..row].iter().map(|&c| c as usize).sum();
    let dims = info.dims as usize;
    let last = &scan.sentences[(before + 3) * dims..(before + 4) * dims];
    let expected = retold_test_kit::embedder()
        .embed(&["Nate: We even played some Chess afterward just for fun.".to_owned()])
        .await
        .unwrap()
        .remove(0);
    let cosine: f32 = last.iter().zip(&expected).map(|(a, b)| a * b).sum();
    assert!(cosine > 0.9999, "the fourth sentence vector embeds the fourth sentence with its speaker");

    // The trace says what the sentence list ranked by.
    let p = principal("s-agent", "u");
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let trace = w.trace(&response.search_id).await.to_string();
    assert!(trace.contains("best sentence"), "{trace}");
}

#[tokio::test]
async fn a_one_sentence_record_without_a_context_has_no_sentence_vectors() {
    let (_, w, _) = ranked(RetrieveConfig::default()).await;
    let info = w.ports.embedder.info().clone();
    let scan = w.store.compatible_embeddings(&info.name, info.version, info.dims).await.unwrap();
    // Seven one-sentence turns and the answer's four sentences.
    assert_eq!(scan.sentence_counts.iter().filter(|&&c| c == 0).count(), OTHERS.len());
    assert_eq!(scan.sentences.len(), 4 * info.dims as usize);
}

#[tokio::test]
async fn the_sentence_list_ranks_the_turn_that_answers_above_turns_that_only_mention_the_subject() {
    let (alone, _, _) = records_only().await;
    // The shipped configuration: the record list by each record's own vector, the sentence
    // list beside it.
    let shipped = RetrieveConfig::default();
    assert!(shipped.fusion_weights.sentences > 0.0);
    let (listed, w, answer) = ranked(shipped).await;
    for question in [OTHERS[1], OTHERS[6]] {
        assert!(rank(&alone, ANSWER) > rank(&alone, question), "alone: {alone:#?}");
        assert!(rank(&listed, ANSWER) < rank(&listed, question), "with the sentence list: {listed:#?}");
    }

    // The trace holds the list: the answer first by its best sentence, then the one-sentence
    // turns (no sentence vectors: their sentence is the record) in the record list's order.
    let p = principal("s-agent", "u");
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let trace = w.trace(&response.search_id).await;
    let (records, sentences) = (channel_list(&trace, "dense"), channel_list(&trace, "sentences"));
    assert_eq!(sentences.len(), OTHERS.len() + 1, "{trace}");
    assert_eq!(sentences[0], answer.as_str(), "{trace}");
    let others =
        |list: &[String]| list.iter().filter(|id| **id != answer.as_str()).cloned().collect::<Vec<_>>();
    assert_eq!(others(&sentences), others(&records), "{trace}");
    // Its result says where each list ranked it.
    let hit = response.hits.iter().find(|h| h.record.id == answer).expect("the answer is a result");
    assert_eq!(hit.sentence.as_ref().map(|s| s.rank), Some(1));
    assert!(hit.explanation.contains("best sentence rank 1"), "{}", hit.explanation);

    // Without it (weight 0), no such list runs.
    let mut off = RetrieveConfig::default();
    off.fusion_weights.sentences = 0.0;
    let (_, w, _) = ranked(off).await;
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let trace = w.trace(&response.search_id).await;
    assert!(trace["channels"].get("sentences").is_none(), "{trace}");
}

/// A store whose records have no sentence vectors (one-sentence lines, or a store written
/// before them) gets no sentence list: it would be the record list again, fused twice. The
/// trace says so.
#[tokio::test]
async fn without_sentence_vectors_the_record_list_is_not_fused_twice() {
    let w = super::world(RetrieveConfig::default()).await;
    w.grant("s-agent", SCOPE, true, true).await;
    let p = principal("s-agent", "u");
    for other in OTHERS {
        w.write(&p, episode(SCOPE, other)).await;
    }
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let trace = w.trace(&response.search_id).await;
    assert!(trace["channels"]["dense"].as_array().is_some_and(|l| l.len() == OTHERS.len()), "{trace}");
    assert!(trace["channels"].get("sentences").is_none(), "{trace}");
    let notes = trace["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["note"]
            .as_str()
            .unwrap()
            .starts_with("no record the sentence list found has sentence vectors")),
        "{trace}"
    );
    assert!(response.hits.iter().all(|h| h.sentence.is_none()));
    // One record with sentence vectors brings the list back.
    w.write(&p, episode(SCOPE, ANSWER)).await;
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let trace = w.trace(&response.search_id).await;
    assert!(
        trace["channels"]["sentences"].as_array().is_some_and(|l| l.len() == OTHERS.len() + 1),
        "{trace}"
    );
}

/// The list of the records inside the time a query names ranks them by their best sentence
/// too: over a day that holds every record, it is the sentence list again, and the long turn
/// that answers in one sentence ranks above turns it trails by their own vectors.
#[tokio::test]
async fn the_list_of_the_querys_time_ranks_that_days_records_by_their_best_sentence() {
    let w = super::world(RetrieveConfig::default()).await;
    w.grant("s-agent", SCOPE, true, true).await;
    let p = principal("s-agent", "u");
    let now = retold_domain::Clock::now(w.clock.as_ref());
    let dated = |content: &str| {
        let mut e = episode(SCOPE, content);
        e.event_at = Some(now);
        e
    };
    for other in OTHERS {
        w.write(&p, dated(other)).await;
    }
    let answer = w.write(&p, dated(ANSWER)).await;
    let query = format!("What board games has Nate played on {}?", now.format("%-d %B %Y"));
    let response = w.search(&p, SearchRequest::new(query)).await;
    let trace = w.trace(&response.search_id).await;
    let (records, sentences, window) =
        (channel_list(&trace, "dense"), channel_list(&trace, "sentences"), channel_list(&trace, "window"));
    assert_eq!(window.len(), OTHERS.len() + 1, "every record of the day: {trace}");
    assert_eq!(window, sentences, "{trace}");
    let at = |list: &[String]| list.iter().position(|id| *id == answer.as_str()).unwrap();
    assert!(at(&window) < at(&records), "{trace}");
    let hit = response.hits.iter().find(|h| h.record.id == answer).expect("the answer is a result");
    assert_eq!(hit.window.as_ref().map(|m| m.rank as usize), Some(at(&window) + 1));
}

/// Background work held until the test runs it, or drops it as a killed process would.
#[derive(Default)]
struct Held(std::sync::Mutex<Vec<retold_domain::BackgroundTask>>);

impl retold_domain::Background for Held {
    fn spawn(&self, task: retold_domain::BackgroundTask) {
        self.0.lock().unwrap().push(task);
    }
    fn settled(&self) -> retold_domain::BackgroundTask {
        Box::pin(async {})
    }
    fn gather(&self, _: std::time::Duration) -> retold_domain::BackgroundTask {
        Box::pin(async {})
    }
}

/// A write answers before its sentence vectors are embedded: the record is found from the
/// answer on (by its words and its own vector), its best sentence counts once the write's
/// task has attached them, and a task that never ran (a process stopped first) is made up by
/// the next start's `resume_pending_sentences`, once.
#[tokio::test]
async fn a_turn_is_found_before_its_sentence_vectors_and_a_task_that_never_ran_is_made_up() {
    use retold_domain::SentenceVectors as _;
    let held = std::sync::Arc::new(Held::default());
    let w = super::world(RetrieveConfig::default()).await;
    w.grant("s-agent", SCOPE, true, true).await;
    let w = w.with_ports(|ports| ports.background = held.clone());
    let p = principal("s-agent", "u");
    for other in OTHERS {
        w.write(&p, episode(SCOPE, other)).await;
    }
    let answer = w.write(&p, episode(SCOPE, ANSWER)).await;
    let info = w.ports.embedder.info().clone();
    let waiting = || async {
        w.store.pending_sentences(&info, 10).await.unwrap().into_iter().map(|i| i.id).collect::<Vec<_>>()
    };
    assert_eq!(waiting().await, std::slice::from_ref(&answer));
    let task = held.0.lock().unwrap().pop().expect("one task: the one record with sentences");

    // Found at once, before any sentence vector: by the answer's words and its own vector.
    let response = w.search(&p, SearchRequest::new("Was the gaming party a success?")).await;
    assert_eq!(ids(&response).first(), Some(&answer));
    assert!(response.hits.iter().all(|h| h.sentence.is_none()), "no sentence list yet");
    let hit = &response.hits[0];
    assert!(hit.lexical.is_some() && hit.dense.is_some(), "{hit:?}");

    // The task attaches them: the sentence list ranks the answer first by its last sentence.
    task.await;
    assert!(waiting().await.is_empty());
    let response = w.search(&p, SearchRequest::new(QUERY)).await;
    let hit = response.hits.iter().find(|h| h.record.id == answer).expect("a result");
    assert_eq!(hit.sentence.as_ref().map(|s| s.rank), Some(1));

    // A write whose task is lost waits in the store until the next start attaches it.
    let lost = w
        .write(&p, episode(SCOPE, "Joanna: I watched the finals. Nate won the chess match in ten moves."))
        .await;
    drop(held.0.lock().unwrap().pop().expect("its task"));
    assert_eq!(waiting().await, std::slice::from_ref(&lost));
    assert_eq!(w.ingestor.resume_pending_sentences().await.unwrap(), 1);
    assert_eq!(w.ingestor.resume_pending_sentences().await.unwrap(), 0, "attached once");
    let scan = w.store.compatible_embeddings(&info.name, info.version, info.dims).await.unwrap();
    let key = w.store.key_of(&lost).await.unwrap().expect("stored");
    let row = scan.keys.iter().position(|k| *k == key).expect("scanned");
    assert_eq!(scan.sentence_counts[row], 2);
    let response = w.search(&p, SearchRequest::new("Who won the chess match?")).await;
    let hit = response.hits.iter().find(|h| h.record.id == lost).expect("a result");
    assert!(hit.sentence.is_some(), "ranked by its best sentence too: {hit:?}");

    // The lost task did not leave the worker marked running: the next write starts another.
    let next = w
        .write(
            &p,
            episode(SCOPE, "Joanna: I went to the arcade after work. Nate beat me at air hockey twice."),
        )
        .await;
    assert_eq!(waiting().await, std::slice::from_ref(&next));
    let task = held.0.lock().unwrap().pop().expect("a new worker for the next write");
    task.await;
    assert!(waiting().await.is_empty());
}
