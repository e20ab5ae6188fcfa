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
