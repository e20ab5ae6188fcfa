//! The framework adapters (`crates/adapters/python`: `retold.adapters.base`, `.deepagents`,
//! `.crewai`): their pytest suites, each in its framework's environment from PyPI, against the
//! real `retold serve`, importing the two distributions as pip installed them. The suites
//! assert; this runs them and shows their transcript.

use std::path::{Path, PathBuf};

use retold_hosted::fake::FakeProvider;

use crate::e2e;

const ADMIN: &str = "adapters-admin-key";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What the fake provider answers when the orchestrator regenerates a draft.
const REGENERATED: &str = "I'll configure Helix, your preferred editor.";

/// Run `tests` (paths under crates/adapters/python) with the Python of the tool environment
/// `venv` against a fresh server on which agent `assistant` may write `user:jo`. The server
/// decides with a fit bundle whose regenerations the local fake provider answers.
fn pytest(venv: &str, tests: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let provider = runtime.block_on(FakeProvider::start()).unwrap();
    provider.respond_with(crate::orchestrator::answer(REGENERATED));
    let registry = crate::orchestrator::registry(dir.path(), true);
    let server = e2e::start_with(
        &dir.path().join("data"),
        ADMIN,
        &[
            ("RETOLD__ORCHESTRATOR__REGISTRY", registry.to_str().unwrap()),
            ("RETOLD__ORCHESTRATOR__BUNDLE", "fit-v1"),
            ("RETOLD__HOSTED__ANTHROPIC__BASE_URL", &provider.base_url()),
            ("RETOLD__HOSTED__ANTHROPIC__API_KEY", "test-key"),
            // The adapters end sessions; what extraction makes of them is tested elsewhere.
            ("RETOLD__INGESTION__EXTRACTION__ENABLED", "false"),
        ],
    );
    let key = server.host_key(ADMIN);
    server.grant(ADMIN, "assistant", "user:jo");
    let python = retold_provision::python_tool(venv).executable();
    let installed = install(&python, dir.path());
    let package = root().join("crates/adapters/python");
    let output = std::process::Command::new(&python)
        // -P: the working directory (the source tree) is not put on the path.
        .args([
            "-P",
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            "--tb=short",
            "-W",
            "ignore::DeprecationWarning",
        ])
        .args(tests)
        .current_dir(&package)
        .env("RETOLD_URL", &server.url)
        .env("RETOLD_KEY", &key)
        .env("RETOLD_ADMIN_KEY", ADMIN)
        .env("RETOLD_REGENERATED", REGENERATED)
        .env("RETOLD_ADAPTERS_INSTALLED", &installed)
        .env("PYTHONPATH", &installed)
        // CrewAI: no telemetry (there is no network), its storage inside the test's directory.
        .env("CREWAI_DISABLE_TELEMETRY", "true")
        .env("OTEL_SDK_DISABLED", "true")
        .env("CREWAI_STORAGE_DIR", dir.path().join("crewai"))
        .env("HOME", dir.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("{} runs (run `cargo xtask setup`): {e}", python.display()));
    let transcript =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    println!("{transcript}");
    assert!(output.status.success(), "pytest {tests:?} in the {venv} environment failed:\n{transcript}");
    server.stop();
}

/// `pip install` the two distributions (`retold-client`, `retold-adapters`) as a user would,
/// offline and without their dependencies (the environment has them), into `dir/site`; built
/// from copies so tests running at once never share a build directory.
fn install(python: &Path, dir: &Path) -> PathBuf {
    let sources = dir.join("src");
    for (from, to) in [("crates/adapters/clients/python", "client"), ("crates/adapters/python", "adapters")] {
        copy_tree(&root().join(from), &sources.join(to));
    }
    let site = dir.join("site");
    let output = std::process::Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"])
        .args(["--disable-pip-version-check", "--target"])
        .arg(&site)
        .arg(sources.join("client"))
        .arg(sources.join("adapters"))
        .env_remove("PIP_FIND_LINKS")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "pip install of the adapters failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    site
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name == "__pycache__" || name == "tests" {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &to.join(name));
        } else {
            std::fs::copy(&path, to.join(name)).unwrap();
        }
    }
}

#[test]
fn the_shared_adapter_base_works_against_the_real_server() {
    pytest("deepagents", &["tests/test_base.py"]);
}

#[test]
fn a_deepagents_agent_remembers_across_sessions_through_the_adapter() {
    pytest("deepagents", &["tests/test_deepagents.py"]);
}

#[test]
fn a_crewai_crew_remembers_across_sessions_through_the_adapter() {
    pytest("crewai", &["tests/test_crewai.py"]);
}
