//! The real models, provisioned by `cargo xtask setup`, checked against references computed
//! once with Python onnxruntime (`tests/fixtures/make_reference.py`): the default (int8
//! compute, one text a run) and the pinned model it is derived from (f32 compute, batched).

use std::sync::OnceLock;

use retold_domain::Embedder;
use retold_index::{IndexError, OnnxEmbedder, OnnxEmbedderConfig};

fn config() -> OnnxEmbedderConfig {
    OnnxEmbedderConfig::provisioned()
}

/// The pinned model in padded batches of 4.
fn pinned_config() -> OnnxEmbedderConfig {
    OnnxEmbedderConfig { batch_size: 4, ..OnnxEmbedderConfig::pinned() }
}

fn embedder() -> &'static OnnxEmbedder {
    static EMBEDDER: OnceLock<OnnxEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| OnnxEmbedder::load(config()).expect("model provisioned by `cargo xtask setup`"))
}

fn pinned() -> &'static OnnxEmbedder {
    static EMBEDDER: OnceLock<OnnxEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| {
        OnnxEmbedder::load(pinned_config()).expect("model provisioned by `cargo xtask setup`")
    })
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

struct Reference {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn reference(text: &str) -> Reference {
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let sentences =
        json["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect();
    let vectors = json["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect())
        .collect();
    Reference { sentences, vectors }
}

/// `embedder`'s vectors for the fixture's sentences, asked in one request, against the
/// Python reference: every number within 1e-4.
fn assert_matches(embedder: &OnnxEmbedder, fixture: &str) {
    let reference = reference(fixture);
    let got = embedder.embed_blocking(&reference.sentences).unwrap();
    assert_eq!(got.len(), reference.vectors.len());
    let mut worst = 0.0f32;
    for (g, r) in got.iter().zip(&reference.vectors) {
        assert_eq!(g.len(), 384);
        for (a, b) in g.iter().zip(r) {
            worst = worst.max((a - b).abs());
        }
    }
    assert!(worst < 1e-4, "largest difference from the reference is {worst}");
}

#[test]
fn the_default_model_matches_its_python_reference() {
    // Six texts in one request: each runs alone (batch_size 1), as the reference was made.
    assert_matches(embedder(), include_str!("../fixtures/reference_minilm_int8_compute.json"));
}

#[test]
fn the_pinned_model_matches_its_python_reference_in_padded_batches() {
    // Batches of 4 with padding, so padding must not change the result.
    assert_matches(pinned(), include_str!("../fixtures/reference_minilm.json"));
}

/// The default model is the pinned one computing in int8 (`cargo xtask setup` rewrites its
/// MatMuls): the same weights, so each vector stays close to the pinned model's, and a broken
/// rewrite (a wrong scale, a transposed weight) shows as a collapsed cosine.
#[test]
fn the_default_model_stays_close_to_the_model_it_is_derived_from() {
    let texts: Vec<String> = [
        "Melanie: I went camping with my kids at the lake last weekend.",
        "deploy 2024-05-03T10:00Z failed: migration 0042 timed out on payments-service",
        "Prefer short answers with code first.",
        "Café crème at the Zürich office costs 4.50 CHF.",
        "The OAuth refresh token expired after one hour.",
    ]
    .map(String::from)
    .to_vec();
    let (int8, f32) = (embedder().embed_blocking(&texts).unwrap(), pinned().embed_blocking(&texts).unwrap());
    for (i, (a, b)) in int8.iter().zip(&f32).enumerate() {
        assert!(cosine(a, b) > 0.98, "{:?}: cosine {} to the pinned model's vector", texts[i], cosine(a, b));
    }
}

#[test]
fn paraphrases_score_higher_than_unrelated_sentences() {
    let texts: Vec<String> = [
        "Aditya prefers concise technical explanations.",
        "Aditya likes short, technical answers.",
        "The project uses Conventional Commits.",
        "Commit messages follow the Conventional Commits format.",
        "The OAuth refresh token expired after one hour.",
    ]
    .map(String::from)
    .to_vec();
    let v = embedder().embed_blocking(&texts).unwrap();
    for (a, b, unrelated) in [(0, 1, [2, 3, 4]), (2, 3, [0, 1, 4])] {
        for unrelated in unrelated {
            assert!(
                cosine(&v[a], &v[b]) > cosine(&v[a], &v[unrelated]) + 0.2,
                "{:?} ~ {:?} should beat {:?}",
                texts[a],
                texts[b],
                texts[unrelated]
            );
        }
    }
}

#[test]
fn vectors_are_unit_length_and_deterministic() {
    let texts = vec!["one".to_owned(), "a much longer sentence about the memory service".to_owned()];
    let a = embedder().embed_blocking(&texts).unwrap();
    let b = embedder().embed_blocking(&texts[1..]).unwrap();
    for v in &a {
        assert!((cosine(v, v) - 1.0).abs() < 1e-5);
    }
    assert!(a[1].iter().zip(&b[0]).all(|(x, y)| (x - y).abs() < 1e-6));
}

#[test]
fn long_inputs_are_truncated_not_refused() {
    let long = "memory ".repeat(5_000);
    let v = embedder().embed_blocking(&[long]).unwrap();
    assert_eq!(v[0].len(), 384);
}

#[tokio::test]
async fn the_port_embeds_concurrently_without_blocking_the_runtime() {
    let embedder = embedder().clone();
    assert_eq!(embedder.info().dims, 384);
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let embedder = embedder.clone();
            tokio::spawn(async move { embedder.embed(&[format!("sentence number {i}")]).await.unwrap() })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap()[0].len(), 384);
    }
}

/// Concurrent callers share ONNX runs (one session, many waiting requests): a vector must
/// not depend on the requests it shared a run with, or a query's vector, and so its search
/// results, would depend on the load. Runs hold more than one text only above batch_size 1,
/// so this runs the pinned model, whose vectors do not depend on their batch.
#[test]
fn a_shared_run_gives_every_caller_the_vectors_it_would_get_alone() {
    pinned(); // ONNX Runtime is loaded once per process; share it.
    let shared =
        OnnxEmbedder::load(OnnxEmbedderConfig { workers: 1, batch_size: 8, ..pinned_config() }).unwrap();
    let texts: Vec<String> = (0..24)
        .map(|i| match i % 3 {
            0 => format!("what happened with topic {i}?"),
            1 => format!(
                "a much longer note number {i} about the deploy that failed because the migration was missing"
            ),
            _ => format!("hi {i}"),
        })
        .collect();
    let alone: Vec<Vec<f32>> =
        texts.iter().map(|t| shared.embed_blocking(std::slice::from_ref(t)).unwrap().remove(0)).collect();
    let runs_before = shared.runs();
    let start = std::sync::Barrier::new(texts.len());
    let together: Vec<(usize, Vec<f32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..texts.len())
            .map(|i| {
                let (shared, text, start) = (&shared, &texts[i], &start);
                s.spawn(move || {
                    start.wait();
                    (i, shared.embed_blocking(std::slice::from_ref(text)).unwrap().remove(0))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let runs = shared.runs() - runs_before;
    assert!(runs < texts.len() as u64, "{} callers ran alone ({runs} runs): nothing was shared", texts.len());
    for (i, vector) in together {
        assert_eq!(vector, alone[i], "text {i} got another vector when it shared a run");
    }
    // And a batch call answers in order, each vector its own text's.
    let batch = shared.embed_blocking(&texts).unwrap();
    assert_eq!(batch, alone);
}

#[test]
fn wrong_dims_are_refused_with_the_key_named() {
    embedder(); // ONNX Runtime is loaded once per process; share it.
    let err = OnnxEmbedder::load(OnnxEmbedderConfig { dims: 1024, workers: 1, ..config() }).unwrap_err();
    assert!(matches!(err, IndexError::Config(_)), "{err}");
    assert!(err.to_string().contains("embedding.dims"), "{err}");
}

#[test]
fn missing_files_name_the_file_and_the_fix() {
    let err = OnnxEmbedder::load(OnnxEmbedderConfig { model_dir: "/nonexistent/model".into(), ..config() })
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/nonexistent/model/model.onnx") && text.contains("cargo xtask setup"), "{text}");

    let err = OnnxEmbedder::load(OnnxEmbedderConfig {
        runtime_library: "/nonexistent/libonnxruntime.so".into(),
        ..config()
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/nonexistent/libonnxruntime.so") && text.contains("cargo xtask setup"), "{text}");
}
