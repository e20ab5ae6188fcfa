//! The real reranker (cross-encoder/ms-marco-MiniLM-L-12-v2, int8), provisioned by
//! `cargo xtask setup`, against scores computed once with Python onnxruntime and the same
//! `tokenizer.json` (pairs encoded unpadded, truncated at 256 tokens).

use std::sync::OnceLock;

use retold_domain::Reranker;
use retold_index::{IndexError, OnnxReranker, OnnxRerankerConfig};

fn reranker() -> &'static OnnxReranker {
    static RERANKER: OnceLock<OnnxReranker> = OnceLock::new();
    RERANKER.get_or_init(|| {
        OnnxReranker::load(OnnxRerankerConfig::provisioned())
            .expect("reranker provisioned by `cargo xtask setup`")
    })
}

const QUERY: &str = "how do I bake bread";
const DOCUMENTS: [&str; 4] = [
    "Mix flour, water, salt and yeast, let the dough rise, then bake it at 220 C for 35 minutes.",
    "The stock market fell sharply on Tuesday after the rate decision.",
    "Bread baking requires an oven.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
];
/// Python onnxruntime 1.32, one pair per run.
const REFERENCE: [f64; 4] = [2.2240774631500244, -11.288749694824219, 4.171170711517334, -11.306282043457031];

/// How far a score may be from the reference: 3% of it (at least 0.03). The model is
/// quantised to int8, and ONNX Runtime picks its integer matrix kernels by the processor's
/// instruction set, so the same pair scores slightly differently on another machine: an
/// AVX2-only AMD EPYC gives [2.2156, -11.0831, 4.1006, -11.1001], 0.4-1.8% from the reference
/// (deterministic on each machine). A wrong tokenizer, input order or truncation moves
/// scores by far more.
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 0.03 * want.abs().max(1.0)
}

#[tokio::test]
async fn scores_match_the_python_reference() {
    let documents: Vec<String> = DOCUMENTS.map(str::to_owned).to_vec();
    let scores = reranker().rerank(QUERY, &documents).await.unwrap();
    assert_eq!(scores.len(), 4);
    for (got, want) in scores.iter().zip(REFERENCE) {
        assert!(close(*got, want), "{scores:?} against {REFERENCE:?}");
    }
}

#[tokio::test]
async fn documents_that_answer_the_query_outscore_those_that_do_not() {
    let documents: Vec<String> = DOCUMENTS.map(str::to_owned).to_vec();
    let scores = reranker().rerank(QUERY, &documents).await.unwrap();
    assert!(scores[0] > scores[1] + 5.0 && scores[2] > scores[3] + 5.0, "{scores:?}");
    assert!(reranker().rerank(QUERY, &[]).await.unwrap().is_empty());
}

#[test]
fn a_missing_model_names_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let error = OnnxReranker::load(OnnxRerankerConfig {
        model_dir: dir.path().to_owned(),
        ..OnnxRerankerConfig::provisioned()
    })
    .unwrap_err();
    assert!(matches!(error, IndexError::MissingFile { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("model.onnx") && message.contains("cargo xtask setup"), "{message}");
}

#[test]
fn an_embedding_model_is_not_taken_for_a_cross_encoder() {
    // all-MiniLM-L6-v2 gives a vector per token, not one score per pair.
    let error = OnnxReranker::load(OnnxRerankerConfig {
        model_dir: retold_index::default_model_dir(),
        ..OnnxRerankerConfig::provisioned()
    })
    .unwrap_err();
    assert!(error.to_string().contains("one score per pair"), "{error}");
}

#[tokio::test]
async fn a_search_that_stops_waiting_stops_the_scoring() {
    // A fresh reranker, so no other test's pairs count.
    let reranker = OnnxReranker::load(OnnxRerankerConfig::provisioned()).unwrap();
    let before = reranker.pairs_scored();
    let documents: Vec<String> = (0..400).map(|i| format!("{} ({i})", DOCUMENTS[i % 4])).collect();
    let waited =
        tokio::time::timeout(std::time::Duration::from_millis(20), reranker.rerank(QUERY, &documents)).await;
    assert!(waited.is_err(), "400 pairs take longer than 20 ms");
    // The next search gets the session; the abandoned one scored only a few pairs more.
    let one = reranker.rerank(QUERY, &documents[..1]).await.unwrap();
    assert_eq!(one.len(), 1);
    let scored = reranker.pairs_scored() - before;
    assert!(scored < 100, "the abandoned search kept scoring: {scored} pairs");
}
