//! LongMemEval's retrieval scoring as its authors wrote it (`src/retrieval/eval_utils.py` and
//! `run_retrieval.py` of xiaowu0162/LongMemEval, turn granularity), so that our figures can be
//! set beside published systems'. Their protocol indexes the user turns only, leaves out
//! abstention questions and questions with no user turn that holds the answer, and scores
//! recall and nDCG over turn ids and over the sessions those turns belong to.
//!
//! Their choices are kept where they differ from ours (`eval.rs`): the DCG weighs the first two
//! ranks alike (`rel₁ + Σᵢ≥₂ relᵢ / log₂ i`); a session is found when one of its answer turns
//! is, and the session list is read until it holds `k` distinct ids, where an answer session's
//! turns without the answer count as a session of their own ("noans").
//!
//! Two differences remain, both said in `docs/quality.md`: the authors rank every turn of the
//! corpus, a search returns at most `retrieval.max_limit` (50) and the default fewer when its
//! gate drops candidates, so a turn below that is not found (and a session list shorter than
//! `k` distinct sessions is read to its end); and user turns with empty content are not stored.

use std::collections::HashSet;

/// A user turn's id in the authors' corpus: `<session>_<n>`, `n` its 1-based place in the
/// whole session (assistant turns counted). In an answer session (its id holds "answer") a turn
/// without the answer is renamed "noans", so that only the answer turns are correct.
pub(crate) fn corpus_id(session: &str, place: usize, has_answer: bool) -> String {
    let id = format!("{session}_{place}");
    if session.contains("answer") && !has_answer { id.replace("answer", "noans") } else { id }
}

/// The ids that are correct answers: those that still hold "answer".
pub(crate) fn correct(corpus: &[String]) -> HashSet<String> {
    corpus.iter().filter(|id| id.contains("answer")).cloned().collect()
}

/// Recall of any and of all correct ids, and nDCG, at one cut-off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scores {
    pub(crate) recall_any: f64,
    pub(crate) recall_all: f64,
    pub(crate) ndcg_any: f64,
}

/// `dcg`: the first relevance as it is, the i-th (1-based, i ≥ 2) divided by log₂ i.
fn dcg(relevances: &[f64], k: usize) -> f64 {
    relevances
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, r)| if i == 0 { *r } else { r / ((i + 1) as f64).log2() })
        .sum()
}

/// `evaluate_retrieval`: `ranked` the retrieved ids best first (a prefix of the authors' full
/// ranking of `corpus`), `corpus` every id of the haystack (for the ideal ranking).
pub(crate) fn evaluate(ranked: &[String], correct: &HashSet<String>, corpus: &[String], k: usize) -> Scores {
    let recalled: HashSet<&String> = ranked.iter().take(k).collect();
    let found = |doc: &String| recalled.contains(doc);
    let relevance = |doc: &String| f64::from(u8::from(correct.contains(doc)));
    let actual: Vec<f64> = ranked.iter().take(k).map(relevance).collect();
    let mut ideal: Vec<f64> = corpus.iter().map(relevance).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let ideal_dcg = dcg(&ideal, k);
    Scores {
        recall_any: f64::from(u8::from(correct.iter().any(found))),
        recall_all: f64::from(u8::from(correct.iter().all(found))),
        ndcg_any: if ideal_dcg == 0.0 { 0.0 } else { dcg(&actual, k) / ideal_dcg },
    }
}

/// `evaluate_retrieval_turn2session`: the turn ranking scored over sessions, reading on until
/// the first `k'` turns hold `k` distinct (stripped) ids.
pub(crate) fn evaluate_sessions(
    ranked: &[String],
    correct: &HashSet<String>,
    corpus: &[String],
    k: usize,
) -> Scores {
    fn strip(id: &str) -> String {
        id.rsplit_once('_').map_or("", |(session, _)| session).to_owned()
    }
    let ranked: Vec<String> = ranked.iter().map(|id| strip(id)).collect();
    let corpus: Vec<String> = corpus.iter().map(|id| strip(id)).collect();
    let correct: HashSet<String> = correct.iter().map(|id| strip(id)).collect();
    let distinct = |n: usize| ranked.iter().take(n).collect::<HashSet<_>>().len();
    let mut effective_k = k;
    while effective_k <= corpus.len() && distinct(effective_k) < k {
        effective_k += 1;
    }
    evaluate(&ranked, &correct, &corpus, effective_k)
}

#[cfg(test)]
mod tests {
    use super::{Scores, corpus_id, correct, evaluate, evaluate_sessions};

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_an_answer_session_s_answer_turns_keep_the_answer_in_their_id() {
        assert_eq!(corpus_id("answer_d39b7977_1", 3, true), "answer_d39b7977_1_3");
        assert_eq!(corpus_id("answer_d39b7977_1", 5, false), "noans_d39b7977_1_5");
        assert_eq!(corpus_id("sharegpt_x9", 1, false), "sharegpt_x9_1");
        let corpus = ids(&["answer_a_1", "noans_a_3", "s_1", "answer_b_2"]);
        assert_eq!(correct(&corpus), ids(&["answer_a_1", "answer_b_2"]).into_iter().collect());
    }

    #[test]
    fn turn_scores_weigh_the_first_two_ranks_alike_as_the_authors_dcg_does() {
        let corpus = ids(&["answer_a_1", "s_1", "s_2", "answer_b_1", "s_3"]);
        let right = correct(&corpus);
        // The two answers at ranks 1 and 2: ideal.
        let best = evaluate(&ids(&["answer_b_1", "answer_a_1", "s_1"]), &right, &corpus, 5);
        assert_eq!(best, Scores { recall_any: 1.0, recall_all: 1.0, ndcg_any: 1.0 });
        // One answer at rank 2 alone: DCG 1 (rank 2 is not discounted) of an ideal 2.
        let one = evaluate(&ids(&["s_1", "answer_a_1", "s_2", "s_3"]), &right, &corpus, 5);
        assert_eq!(one, Scores { recall_any: 1.0, recall_all: 0.0, ndcg_any: 0.5 });
        // At rank 3 it is divided by log2 3.
        let third = evaluate(&ids(&["s_1", "s_2", "answer_a_1"]), &right, &corpus, 5);
        assert!((third.ndcg_any - (1.0 / 3f64.log2()) / 2.0).abs() < 1e-12);
        // Below the cut-off it is not found.
        let none = evaluate(&ids(&["s_1", "s_2", "answer_a_1"]), &right, &corpus, 2);
        assert_eq!(none, Scores { recall_any: 0.0, recall_all: 0.0, ndcg_any: 0.0 });
    }

    #[test]
    fn session_scores_read_on_until_k_distinct_sessions() {
        // Sessions: a (answer turn 2, other turn 4), s, t. Ranked: s's two turns, then a's
        // answer turn: at k = 2 the first two turns hold one session, so the third is read too.
        let corpus = ids(&["noans_a_4", "answer_a_2", "s_1", "s_3", "t_1"]);
        let right = correct(&corpus);
        let ranked = ids(&["s_1", "s_3", "answer_a_2", "t_1"]);
        let at2 = evaluate_sessions(&ranked, &right, &corpus, 2);
        assert_eq!((at2.recall_any, at2.recall_all), (1.0, 1.0));
        // Relevance is per turn: the answer turn at rank 3, divided by log2 3, of an ideal 1.
        assert!((at2.ndcg_any - 1.0 / 3f64.log2()).abs() < 1e-12);
        // An answer session's turn without the answer is a session of its own: ranked first it
        // fills one of the k places and finds nothing.
        let noans_first = evaluate_sessions(&ids(&["noans_a_4", "s_1", "answer_a_2"]), &right, &corpus, 2);
        assert_eq!(noans_first.recall_any, 0.0);
    }
}
