//! The web inspector in a real browser: `crates/http/inspector/tests/inspector.mjs`
//! (playwright-core driving Debian's Chromium, both installed by `cargo xtask setup`) against
//! the real `retold serve`. The script seeds data, walks every page and asserts; this runs it,
//! prints its steps and leaves its screenshots in `target/tmp/inspector/`.

use std::path::Path;

use retold_hosted::fake::FakeProvider;

use crate::e2e;

const ADMIN: &str = "inspector-admin-key";

#[test]
fn the_inspector_works_in_a_real_browser_against_the_real_server() {
    let dir = tempfile::tempdir().unwrap();
    // Session extraction answered by the fake provider, as in `extraction.rs`, so a session
    // page shows an extraction run with every candidate's review and outcome.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let provider = runtime.block_on(FakeProvider::start()).unwrap();
    provider.respond_with(crate::extraction::respond);
    let server = e2e::start_with(
        dir.path(),
        ADMIN,
        &[
            ("RETOLD__HOSTED__ANTHROPIC__BASE_URL", &provider.base_url()),
            ("RETOLD__HOSTED__ANTHROPIC__API_KEY", "test-key"),
        ],
    );
    let turns: Vec<_> = crate::extraction::TURNS
        .iter()
        .map(|(role, content)| serde_json::json!({"role": role, "content": content}))
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspector");
    let chromium = retold_provision::chromium();
    assert!(chromium.exists(), "{} is missing: run `cargo xtask setup`", chromium.display());
    let output = std::process::Command::new("node")
        .arg(root.join("inspector/tests/inspector.mjs"))
        .current_dir(root.join("inspector/tests"))
        .env("RETOLD_URL", &server.url)
        .env("RETOLD_ADMIN_KEY", ADMIN)
        .env("ARTIFACTS", &artifacts)
        .env("EXTRACTION_TURNS", serde_json::Value::from(turns).to_string())
        .env("CHROMIUM", &chromium)
        .env("HOME", dir.path())
        .output()
        .expect("node runs (run `cargo xtask setup`)");
    let transcript =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    println!("{transcript}screenshots: {}", artifacts.display());
    assert!(output.status.success(), "the browser test failed:\n{transcript}");
    for shot in ["records", "record", "trace", "session", "conflict-resolved", "operations"] {
        assert!(artifacts.join(format!("{shot}.png")).exists(), "no {shot}.png");
    }
    server.stop();
}
