use std::path::Path;

use super::*;

fn dests() -> Vec<PathBuf> {
    WHEELS.iter().flat_map(|w| w.members).map(Member::dest).collect()
}

#[test]
fn the_defaults_the_service_reads_are_files_setup_provisions() {
    let cache = cache_dir();
    let provisioned: Vec<PathBuf> = dests().iter().map(|d| cache.join(d)).collect();
    assert!(provisioned.contains(&default_runtime_library()), "{provisioned:?}");
    // The default model is derived from a pinned one: its source's files are provisioned.
    assert_eq!(default_model_dir(), cache.join(DERIVED_MODEL.dir));
    assert_eq!(pinned_model_dir(), cache.join(DERIVED_MODEL.source_dir));
    assert_ne!(DERIVED_MODEL.dir, DERIVED_MODEL.source_dir);
    for file in ["model.onnx", "tokenizer.json"] {
        assert!(provisioned.contains(&pinned_model_dir().join(file)), "{file}: {provisioned:?}");
        assert!(provisioned.contains(&default_reranker_dir().join(file)), "{file}: {provisioned:?}");
    }
}

#[test]
fn every_pin_is_a_sha256_and_every_destination_stays_in_the_cache() {
    let is_sha256 =
        |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    assert!(is_sha256(DERIVED_MODEL.model_sha256), "the derived model's pin");
    for wheel in WHEELS {
        assert!(wheel.requirement.contains("=="), "{} is not pinned", wheel.requirement);
        assert!(is_sha256(wheel.sha256), "{}", wheel.file);
        for member in wheel.members {
            assert!(is_sha256(member.sha256), "{}", member.inner);
            let dest = member.dest();
            assert!(dest.is_relative() && !dest.starts_with(Path::new("wheels")), "{dest:?}");
            assert!(dest.components().all(|c| matches!(c, std::path::Component::Normal(_))), "{dest:?}");
        }
    }
    let mut unique = dests();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), dests().len(), "two members share a destination");
}
