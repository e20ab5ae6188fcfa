//! The real `retold` binary on a real socket, a real SQLite file and the real model: the
//! README's session, a restart, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) url: String,
}

/// A test that fails before `stop` must not leave its server running (holding the test's
/// output pipe open, so the failure would never be reported).
impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Start `retold serve` on an ephemeral port and wait for the line that says where it listens.
pub(crate) fn start(data_dir: &std::path::Path, admin_key: &str) -> Server {
    start_with(data_dir, admin_key, &[])
}

pub(crate) fn start_with(data_dir: &std::path::Path, admin_key: &str, extra_env: &[(&str, &str)]) -> Server {
    start_configured(data_dir, admin_key, extra_env, None)
}

/// `start_with`, layering a configuration file over the defaults.
pub(crate) fn start_configured(
    data_dir: &std::path::Path,
    admin_key: &str,
    extra_env: &[(&str, &str)],
    config: Option<&std::path::Path>,
) -> Server {
    // `cargo xtask reliability load` measures the release build.
    let binary =
        std::env::var_os("RETOLD_TEST_BINARY").unwrap_or_else(|| env!("CARGO_BIN_EXE_retold").into());
    let mut command = Command::new(binary);
    if let Some(config) = config {
        command.arg("serve").arg("--config").arg(config);
    } else {
        command.arg("serve");
    }
    let mut child = command
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env("RETOLD__AUTH__ADMIN_KEY", admin_key)
        .env("RETOLD__TELEMETRY__LOG_FILTER", "warn")
        // A developer's provider keys would turn extraction on against the real provider.
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .envs(crate::backend_env(data_dir))
        .envs(extra_env.iter().copied())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the retold binary starts");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines.next().expect("retold printed where it listens").unwrap();
        if let Some(url) = line.strip_prefix("retold listening on ") {
            break url.trim().to_owned();
        }
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server { child, url }
}

impl Server {
    /// A new host key, created with the admin key.
    pub(crate) fn host_key(&self, admin_key: &str) -> String {
        let created: serde_json::Value = serde_json::from_str(&curl(&[
            "-H",
            &format!("Authorization: Bearer {admin_key}"),
            "-H",
            "Content-Type: application/json",
            "-X",
            "POST",
            &format!("{}/v1/admin/host-keys", self.url),
            "-d",
            r#"{"name": "e2e"}"#,
        ]))
        .unwrap();
        created["key"].as_str().unwrap().to_owned()
    }

    /// Grant `agent` reading and writing `scope`, with the admin key.
    pub(crate) fn grant(&self, admin_key: &str, agent: &str, scope: &str) {
        let body =
            serde_json::json!({"agent_id": agent, "scope": scope, "can_read": true, "can_write": true});
        let created = curl(&[
            "-H",
            &format!("Authorization: Bearer {admin_key}"),
            "-H",
            "Content-Type: application/json",
            "-d",
            &body.to_string(),
            &format!("{}/v1/admin/grants", self.url),
        ]);
        assert!(created.contains("grt_"), "{created}");
    }

    pub(crate) fn stop(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "retold exits cleanly on SIGTERM: {exit:?}");
    }
}

pub(crate) fn curl(args: &[&str]) -> String {
    let out = Command::new("curl").args(["-sS", "--fail-with-body"]).args(args).output().expect("curl runs");
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_readme_session_runs_against_the_real_server_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let key = "e2e-admin-key";
    let server = start(dir.path(), key);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/quickstart-session.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("RETOLD_URL", &server.url)
        .env("RETOLD_ADMIN_KEY", key)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The conversation, with no model key, is memory the moment it is recorded.
    assert!(stdout.contains("\"memory\":\"kept\""), "{stdout}");
    assert!(
        stdout.contains("My cat Biscuit is allergic to chicken, so I buy salmon kibble.\n  matched: "),
        "{stdout}"
    );
    assert!(stdout.contains("origin: a session turn, kept verbatim"), "{stdout}");
    assert!(stdout.contains("\"outcome\":\"created\""), "{stdout}");
    assert!(stdout.contains("Aditya prefers concise technical explanations.\n  matched: "), "{stdout}");

    // Write a few more through the API, search, restart, search again.
    let auth = format!("Authorization: Bearer {}", server.host_key(key));
    let post = |url: &str, body: &str| {
        curl(&["-H", &auth, "-H", "Content-Type: application/json", "-X", "POST", url, "-d", body])
    };
    let principal = r#""principal": {"agent_id": "research-agent", "user_id": "aditya""#;
    for fact in
        ["Aditya works from Berlin.", "Aditya reviews pull requests on Mondays.", "Aditya uses Neovim."]
    {
        post(
            &format!("{}/v1/memory/write", server.url),
            &format!(
                r#"{{{principal}}}, "type": "semantic", "content": "{fact}", "scope": "user:aditya", "source_kind": "system"}}"#
            ),
        );
    }
    let search = format!(r#"{{{principal}}}, "query": "What does Aditya do on Mondays?"}}"#);
    let results = |text: &str| -> Vec<(String, String)> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["record"]["id"].as_str().unwrap().to_owned(),
                    r["explanation"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let before = results(&post(&format!("{}/v1/memory/search", server.url), &search));
    assert!(before.len() >= 2, "{before:?}");
    server.stop();

    let server = start(dir.path(), key);
    let after = results(&post(&format!("{}/v1/memory/search", server.url), &search));
    assert_eq!(before, after, "every acknowledged write is back, ranked the same");
    server.stop();
}

#[test]
fn the_binary_extracts_an_ended_session_and_finishes_the_run_before_it_exits() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let provider = runtime.block_on(retold_hosted::fake::FakeProvider::start()).unwrap();
    provider.respond_with(crate::extraction::respond);
    let base_url = provider.base_url();
    let dir = tempfile::tempdir().unwrap();
    let key = "e2e-admin-key";
    let provider_env = [
        ("RETOLD__HOSTED__ANTHROPIC__BASE_URL", base_url.as_str()),
        ("RETOLD__HOSTED__ANTHROPIC__API_KEY", "sk-ant-e2e"),
    ];
    let server = start_with(dir.path(), key, &provider_env);
    let admin = format!("Authorization: Bearer {key}");
    let auth = format!("Authorization: Bearer {}", server.host_key(key));
    let post = |url: &str, body: &str| {
        curl(&["-H", &auth, "-H", "Content-Type: application/json", "-X", "POST", url, "-d", body])
    };
    let principal = r#"{"agent_id": "research-agent", "user_id": "aditya"}"#;
    let session: serde_json::Value = serde_json::from_str(&post(
        &format!("{}/v1/sessions", server.url),
        &format!(r#"{{"principal": {principal}}}"#),
    ))
    .unwrap();
    let sid = session["id"].as_str().unwrap().to_owned();
    for (role, content) in crate::extraction::TURNS {
        let body = serde_json::json!({"principal": serde_json::from_str::<serde_json::Value>(principal).unwrap(), "role": role, "content": content});
        post(&format!("{}/v1/sessions/{sid}/turns", server.url), &body.to_string());
    }
    // Ended without waiting: the run happens in the background, and SIGTERM right after must
    // let it finish, since the session is claimed.
    post(&format!("{}/v1/sessions/{sid}/end", server.url), &format!(r#"{{"principal": {principal}}}"#));
    server.stop();
    assert_eq!(provider.requests().len(), 2, "one extraction and one review call");

    let server = start_with(dir.path(), key, &provider_env);
    let events: serde_json::Value = serde_json::from_str(&curl(&[
        "-H",
        &admin,
        &format!("{}/v1/admin/sessions/{sid}/events", server.url),
    ]))
    .unwrap();
    let kinds: Vec<&str> =
        events["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session.started", "profile.assembled", "session.ended", "extraction.run"],
        "{events}"
    );
    assert_eq!(events["events"][3]["details"]["written"], "3");
    server.stop();
    assert_eq!(provider.requests().len(), 2, "the restarted service does not extract the session again");
}
