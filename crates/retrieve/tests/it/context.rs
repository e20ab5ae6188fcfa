//! A record written with its context (the turn before it) is embedded with that context and
//! found by what it answers; the context is never returned as its text.

use retold_domain::{Context, Embedder as _, RecordReader as _, VectorIndex as _};
use retold_retrieve::{Channels, RetrieveConfig, SearchRequest};

use super::{episode, ids, principal, world};

const SCOPE: &str = "project:context";
const REPLY: &str = "Melanie: Yes! Yesterday, actually. The first session is on Friday.";
const QUERY: &str = "Is Melanie taking pottery lessons?";
const ASKED: &str = "Caroline: Did you ever sign up for that pottery class you told me about?";

fn turn(content: &str, context: Option<&str>) -> retold_ingest::WriteRequest {
    let mut r = episode(SCOPE, content);
    r.context = context.map(|c| Context::new(c).unwrap());
    r
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The reply, written with or without what it answers, among other turns; its rank and its
/// cosine to the question in a dense-only search for the pottery class (none when not found).
async fn dense_rank_of_the_reply(
    context: Option<&str>,
) -> (Option<usize>, Option<f32>, retold_test_kit::World, retold_domain::RecordId) {
    // The record's own vector alone: what its context adds to it is measured here (its
    // sentence vectors, embedded without the context, are `sentences.rs`'s).
    let config = RetrieveConfig::default();
    let w = world(config).await;
    w.grant("ctx-agent", SCOPE, true, true).await;
    let p = principal("ctx-agent", "u");
    for other in [
        "Caroline: The adoption agency finally called me back this morning.",
        "Melanie: We went camping by the lake with the kids last weekend.",
        "Caroline: I have been painting a lot lately, mostly sunsets.",
        "Melanie: Swimming with the kids is the best part of my week.",
        "Melanie: I might sign up for a half marathon next spring.",
        "Melanie: My yoga class moved to Tuesday evenings, which suits me better.",
    ] {
        w.write(&p, turn(other, None)).await;
    }
    let reply = w.write(&p, turn(REPLY, context)).await;
    let mut search = SearchRequest::new(QUERY);
    search.channels = Channels { dense: true, lexical: false, entity: false, result_control: false };
    let found = w.search(&p, search).await;
    let rank = ids(&found).iter().position(|id| *id == reply);
    let cosine = rank.and_then(|r| found.hits[r].dense.as_ref()).map(|d| d.cosine);
    (rank, cosine, w, reply)
}

#[tokio::test]
async fn a_reply_is_embedded_with_its_context_and_found_by_what_it_answers() {
    let (with, with_cosine, w, reply) = dense_rank_of_the_reply(Some(ASKED)).await;
    let (_, without_cosine, _, _) = dense_rank_of_the_reply(None).await;
    assert_eq!(with, Some(0), "with its context the reply is the best dense match");
    // "Yes! Yesterday, actually." says nothing of pottery: alone it scores like any of
    // Melanie's turns (0.43 against 0.42 for her swimming), with the question it answers far
    // above them (0.64).
    // (Not found at all without it counts as no cosine: below the dense floor.)
    let (with_cosine, without_cosine) = (with_cosine.unwrap(), without_cosine.unwrap_or(0.0));
    assert!(
        with_cosine > without_cosine + 0.15,
        "its context lifts the reply's cosine to the question: {without_cosine} -> {with_cosine}"
    );

    // What the index holds is the vector of the content followed by the context.
    let record = w.record(&reply).await;
    assert_eq!(record.context.as_ref().map(Context::as_str), Some(ASKED));
    let key = w.store.key_of(&reply).await.unwrap().expect("stored");
    let stored = w.index.vector(key).expect("indexed");
    let expected = retold_test_kit::embedder().embed(&[format!("{REPLY}\n{ASKED}")]).await.unwrap().remove(0);
    assert!(cosine(&stored, &expected) > 0.9999, "the stored vector embeds content + context");

    // The lexical channel indexes the context too: "pottery" is only there.
    let p = principal("ctx-agent", "u");
    let mut lexical = SearchRequest::new("pottery");
    lexical.channels = Channels { dense: false, lexical: true, entity: false, result_control: false };
    assert_eq!(ids(&w.search(&p, lexical).await), std::slice::from_ref(&reply));

    // The default search finds it first too.
    let hit = w.search(&p, SearchRequest::new(QUERY)).await.hits.remove(0);
    assert_eq!(hit.record.id, reply);
}
