//! The `retold` command line: usage text on every level, the version, the OpenAPI document,
//! and one clean message with a meaningful exit code when something is wrong.

use std::process::{Command, Output};

fn retold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retold"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the retold binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn help_lists_the_commands_and_the_global_log_format() {
    let out = retold(&["--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Usage: retold [OPTIONS] <COMMAND>"), "{text}");
    for command in ["serve", "openapi", "version"] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(command)), "{command} missing: {text}");
    }
    assert!(text.contains("--log-format <FORMAT>") && text.contains("auto, text, json"), "{text}");
}

#[test]
fn serve_help_lists_its_options() {
    let out = retold(&["serve", "--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Usage: retold serve [OPTIONS]"), "{text}");
    for option in ["--listen <ADDR>", "--data-dir <DIR>", "--config <FILE>", "--log-format <FORMAT>"] {
        assert!(text.contains(option), "{option} missing: {text}");
    }
}

#[test]
fn version_prints_the_package_version() {
    let expected = format!("retold {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["version"][..], &["--version"]] {
        let out = retold(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{args:?}");
    }
}

#[test]
fn openapi_prints_the_document_the_service_serves() {
    let out = retold(&["openapi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", retold_http::openapi_json()));
}

#[test]
fn a_failed_start_prints_one_clean_message_and_exits_1() {
    let out = retold(&["serve", "--config", "/nonexistent/retold.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stderr(&out);
    assert!(
        text.starts_with("retold: configuration: ") && text.contains("/nonexistent/retold.yaml"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "one line, no backtrace: {text}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_wrong_command_line_is_a_usage_error_with_exit_2() {
    for args in
        [&["frobnicate"][..], &["--log-format", "xml", "version"], &["serve", "--listen", "nowhere"], &[]]
    {
        let out = retold(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        // clap's message: an error and a pointer to --help, or the help itself.
        assert!(stderr(&out).contains("--help"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn ops_commands_run_against_the_real_service_and_fail_cleanly() {
    let out = retold(&["ops", "--help"]);
    let text = stdout(&out);
    for command in ["erase", "expire"] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(command)), "{command} missing: {text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let server = crate::e2e::start(dir.path(), "cli-admin-key");
    let host = server.host_key("cli-admin-key");
    let written: serde_json::Value = serde_json::from_str(&crate::e2e::curl(&[
        "-H",
        &format!("Authorization: Bearer {host}"),
        "-H",
        "Content-Type: application/json",
        "-X",
        "POST",
        &format!("{}/v1/memory/write", server.url),
        "-d",
        r#"{"principal": {"agent_id": "cli", "user_id": "u"}, "type": "semantic", "content": "The cli token is qwcli.", "scope": "agent:cli/u", "source_kind": "system"}"#,
    ]))
    .unwrap();
    let id = written["record_id"].as_str().unwrap();
    let ops = |args: &[&str], key: &str| {
        Command::new(env!("CARGO_BIN_EXE_retold"))
            .args(["ops"])
            .args(args)
            .env("RETOLD_URL", &server.url)
            .env("RETOLD_ADMIN_KEY", key)
            .output()
            .unwrap()
    };
    let out = ops(&["expire", "--dry-run"], "cli-admin-key");
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!((answer["dry_run"].as_bool(), answer["expired"].as_u64()), (Some(true), Some(0)), "{answer}");

    let out = ops(&["erase", "--record", id], "cli-admin-key");
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (answer["erased"].as_u64(), answer["removed"]["embeddings"].as_u64()),
        (Some(1), Some(1)),
        "{answer}"
    );
    assert!(answer["bytes_after"].as_u64().unwrap() > 0, "{answer}");

    let out = ops(&["erase", "--record", id], "not-the-key");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("401 Unauthorized unauthorized"), "{}", stderr(&out));
    server.stop();
}

/// POST `body` to the server as `key`.
fn post(server: &crate::e2e::Server, key: &str, path: &str, body: &serde_json::Value) -> serde_json::Value {
    serde_json::from_str(&crate::e2e::curl(&[
        "-H",
        &format!("Authorization: Bearer {key}"),
        "-H",
        "Content-Type: application/json",
        "-X",
        "POST",
        &format!("{}{path}", server.url),
        "-d",
        &body.to_string(),
    ]))
    .unwrap()
}

/// `retold import` against the real service: a JSON lines file with a bad line in the middle
/// (named by its line number, the rest imported), Mem0's `get_all` export in its published
/// shape (mapped as docs/import.md says), and the same files again (nothing written twice).
#[test]
fn import_sends_a_file_in_batches_names_bad_lines_and_resumes_without_writing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::e2e::start(dir.path(), "cli-admin-key");
    let host = server.host_key("cli-admin-key");
    let import = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_retold"))
            .arg("import")
            .args(args)
            .env("RETOLD_URL", &server.url)
            .env("RETOLD_HOST_KEY", &host)
            .output()
            .unwrap()
    };
    let write = |content: &str| {
        serde_json::json!({"principal": {"agent_id": "notes", "user_id": "kai"}, "type": "semantic",
            "content": content, "scope": "agent:notes/kai", "source_kind": "system"})
        .to_string()
    };
    let lines = [
        write("The on-call rota lives in the ops wiki."),
        "{\"principal\": {\"agent_id\": \"notes\"".to_owned(),
        String::new(),
        write("Kai's team deploys on Tuesdays and Thursdays."),
        write("The build cache is on the shared NFS volume."),
    ];
    let file = dir.path().join("notes.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    // Batches of two lines: three requests.
    let out = import(&[file.to_str().unwrap(), "--batch", "2"]);
    assert_eq!(out.status.code(), Some(1), "a refused line fails the run: {out:?}");
    let err = stderr(&out);
    assert!(err.contains("line 2: invalid: validation_failed (body)"), "{err}");
    assert!(err.contains("1 of 4 lines were not imported"), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["counts"], serde_json::json!({"created": 3, "invalid": 1}), "{summary}");

    // Mem0's export: get_all's {"results": [...]}.
    let mem0 = serde_json::json!({"results": [
        {"id": "6f6c8a5e-1f2b-4c1e-9d0a-0b5f2a1c3d4e", "memory": "Is vegetarian and allergic to peanuts",
         "hash": "a1b2", "metadata": null, "categories": ["food", "health"],
         "created_at": "2024-07-20T10:31:12.120531-07:00", "updated_at": "2024-07-21T08:00:00-07:00",
         "user_id": "alice"},
        {"id": "0c5d7e8f-9a1b-4c2d-8e3f-4a5b6c7d8e9f", "memory": "Prefers window seats on long flights",
         "hash": "c3d4", "metadata": {"source": "chat"}, "created_at": "2024-08-02T14:00:00Z",
         "updated_at": null, "user_id": "alice", "agent_id": "travel-bot"},
        {"id": "9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a", "memory": "Works night shifts",
         "hash": "e5f6", "metadata": null, "created_at": "2024-08-03T09:00:00Z", "updated_at": null}
    ]});
    let file = dir.path().join("mem0.json");
    std::fs::write(&file, mem0.to_string()).unwrap();
    let out = import(&["--from", "mem0", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(err.contains("memory 3 (id 9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a): invalid: no user_id"), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["counts"], serde_json::json!({"created": 2, "invalid": 1}), "{summary}");
    // Alice's memories, as the importing agent finds them for her.
    let found = post(
        &server,
        &host,
        "/v1/memory/search",
        &serde_json::json!({"principal": {"agent_id": "mem0-import", "user_id": "alice"}, "query": "what can alice not eat?"}),
    );
    let record = &found["results"][0]["record"];
    assert_eq!(record["content"], "Is vegetarian and allergic to peanuts", "{found}");
    assert_eq!(
        (record["scope_id"].as_str(), record["source_kind"].as_str(), record["status"].as_str()),
        (Some("mem0-import/alice"), Some("session_summary"), Some("confirmed"))
    );
    assert_eq!(record["source_ref"], "mem0:6f6c8a5e-1f2b-4c1e-9d0a-0b5f2a1c3d4e");
    assert_eq!(record["tags"], serde_json::json!(["food", "health"]));
    assert_eq!(record["event_at"], "2024-07-21T15:00:00Z", "{record}");

    // Again: nothing is written twice.
    let out = import(&["--from", "mem0", file.to_str().unwrap()]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["counts"], serde_json::json!({"already_imported": 2, "invalid": 1}), "{summary}");
    server.stop();
}

/// `retold export` writes a user's memories; `retold import` restores the file into another
/// service's empty store (it knows an export by its first line), and the same search finds
/// the same record there.
#[test]
fn export_then_import_moves_a_users_memories_to_another_service() {
    let dir = tempfile::tempdir().unwrap();
    let from = crate::e2e::start(&dir.path().join("from"), "cli-admin-key");
    let to = crate::e2e::start(&dir.path().join("to"), "cli-admin-key");
    let host = from.host_key("cli-admin-key");
    for content in
        ["The on-call rota lives in the ops wiki.", "Kai's team deploys on Tuesdays and Thursdays."]
    {
        post(
            &from,
            &host,
            "/v1/memory/write",
            &serde_json::json!({"principal": {"agent_id": "notes", "user_id": "kai"}, "type": "semantic",
                "content": content, "scope": "agent:notes/kai", "source_kind": "system"}),
        );
    }
    let file = dir.path().join("kai.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_retold"))
        .args(["export", "--user", "kai", "--out", file.to_str().unwrap()])
        .env("RETOLD_URL", &from.url)
        .env("RETOLD_ADMIN_KEY", "cli-admin-key")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3, "the header and two records");
    let out = Command::new(env!("CARGO_BIN_EXE_retold"))
        .args(["import", file.to_str().unwrap()])
        .env("RETOLD_URL", &to.url)
        .env("RETOLD_ADMIN_KEY", "cli-admin-key")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["restored"]["records"], 2, "{summary}");
    let search = serde_json::json!({"principal": {"agent_id": "notes", "user_id": "kai"}, "query": "when does the team deploy?"});
    let before = post(&from, &host, "/v1/memory/search", &search);
    let after = post(&to, &to.host_key("cli-admin-key"), "/v1/memory/search", &search);
    assert_eq!(after["results"][0]["record"]["id"], before["results"][0]["record"]["id"], "{after}");
    from.stop();
    to.stop();
}
