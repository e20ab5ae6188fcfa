//! Architecture invariants checked on every test run.

use std::process::Command;

/// Crates that must never appear in the pure crates' normal dependency trees.
const INFRASTRUCTURE: &[&str] = &[
    "sea-orm",
    "sea-query",
    "sqlx",
    "sqlx-core",
    "libsqlite3-sys",
    "axum",
    "hyper",
    "tokio",
    "ort",
    "ort-sys",
    "usearch",
    "tokenizers",
    "serde",
    "reqwest",
    "tower",
    "tower-http",
    "utoipa",
];

fn dependencies(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

fn assert_pure(package: &str) {
    let deps = dependencies(package);
    assert!(deps.iter().any(|d| d == package), "cargo tree did not list {package} itself: {deps:?}");
    let forbidden: Vec<_> = deps.iter().filter(|d| INFRASTRUCTURE.contains(&d.as_str())).collect();
    assert!(forbidden.is_empty(), "{package} must stay pure but depends on {forbidden:?}");
}

#[test]
fn domain_has_no_infrastructure_dependency() {
    assert_pure("retold-domain");
}

#[test]
fn policy_has_no_infrastructure_dependency() {
    assert_pure("retold-policy");
}

#[test]
fn domain_depends_on_no_other_workspace_crate() {
    let deps = dependencies("retold-domain");
    let inward: Vec<_> = deps.iter().filter(|d| d.starts_with("retold-") && *d != "retold-domain").collect();
    assert!(inward.is_empty(), "retold-domain must depend on nothing in the workspace: {inward:?}");
}

/// What `cargo xtask setup` must never compile: the service and its heavy dependencies.
const HEAVY: &[&str] = &[
    "retold-http",
    "retold-index",
    "retold-store-sqlite",
    "retold-store-postgres",
    "retold-ingest",
    "retold-retrieve",
    "ort",
    "usearch",
    "tokio",
    "sea-orm",
    "axum",
    "reqwest",
];

#[test]
fn xtask_links_no_part_of_the_service() {
    let deps = dependencies("xtask");
    assert!(deps.iter().any(|d| d == "xtask"), "cargo tree did not list xtask itself: {deps:?}");
    let heavy: Vec<_> = deps.iter().filter(|d| HEAVY.contains(&d.as_str())).collect();
    assert!(
        heavy.is_empty(),
        "xtask must stay light (setup on a fresh clone compiles only it) but depends on {heavy:?}; \
         put the work in retold-eval or a `retold` subcommand and run it through cargo"
    );
}

/// Crates a package's normal dependency tree must not contain, for every workspace crate:
/// the hexagon's rule (pure logic and services name ports, never an adapter) and each
/// adapter's room (no adapter drags in another's infrastructure).
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "retold-ingest",
        &[
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-app",
            "retold-retrieve",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "libsqlite3-sys",
            "axum",
            "hyper",
            "tokio",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "tower",
            "utoipa",
        ],
    ),
    (
        "retold-retrieve",
        &[
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-app",
            "retold-ingest",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "libsqlite3-sys",
            "axum",
            "hyper",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "tower",
            "utoipa",
        ],
    ),
    (
        "retold-app",
        &[
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "libsqlite3-sys",
            "axum",
            "hyper",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "tower",
            "utoipa",
            "serde",
        ],
    ),
    (
        "retold-store-sql",
        &[
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-test-kit",
            "axum",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "utoipa",
        ],
    ),
    (
        "retold-store-postgres",
        &[
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-store-sqlite",
            "retold-test-kit",
            "axum",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "utoipa",
        ],
    ),
    (
        "retold-store-sqlite",
        &[
            "retold-store-postgres",
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-test-kit",
            "axum",
            "ort",
            "usearch",
            "tokenizers",
            "reqwest",
            "utoipa",
        ],
    ),
    (
        "retold-index",
        &[
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-hosted",
            "retold-http",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "axum",
            "reqwest",
            "utoipa",
        ],
    ),
    (
        "retold-hosted",
        &[
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-index",
            "retold-http",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "axum",
            "ort",
            "usearch",
            "tokenizers",
            "utoipa",
        ],
    ),
    ("retold-http", &["retold-test-kit", "retold-eval", "tempfile", "proptest"]),
    // An adapter sits on the service's edges and never links the service crates.
    (
        "retold-adapter-mcp",
        &[
            "retold-domain",
            "retold-policy",
            "retold-ingest",
            "retold-retrieve",
            "retold-app",
            "retold-store-sqlite",
            "retold-store-postgres",
            "retold-store-sql",
            "retold-index",
            "retold-hosted",
            "retold-http",
            "retold-test-kit",
            "sea-orm",
            "sqlx",
            "ort",
            "usearch",
            "tokenizers",
        ],
    ),
];

#[test]
fn every_crate_keeps_to_its_room() {
    let mut broken = Vec::new();
    for (package, forbidden) in FORBIDDEN {
        let deps = dependencies(package);
        assert!(deps.iter().any(|d| d == package), "cargo tree did not list {package} itself: {deps:?}");
        let found: Vec<&String> = deps.iter().filter(|d| forbidden.contains(&d.as_str())).collect();
        if !found.is_empty() {
            broken.push(format!("{package} depends on {found:?}"));
        }
    }
    assert!(broken.is_empty(), "crates outside their room:\n{}", broken.join("\n"));
}

#[test]
fn every_service_crate_is_checked() {
    // A new crate must say what it may not depend on.
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../crates"));
    let mut unchecked = Vec::new();
    let entries = std::fs::read_dir(root).unwrap().chain(std::fs::read_dir(root.join("adapters")).unwrap());
    for entry in entries {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        let Some(name) =
            text.lines().find_map(|l| l.strip_prefix("name = \"")).map(|n| n.trim_end_matches('"'))
        else {
            continue;
        };
        let exempt = ["retold-domain", "retold-policy", "retold-provision", "retold-eval", "retold-test-kit"];
        if !exempt.contains(&name) && !FORBIDDEN.iter().any(|(p, _)| *p == name) {
            unchecked.push(name.to_owned());
        }
    }
    assert!(unchecked.is_empty(), "add these crates to FORBIDDEN in xtask/tests/tidy.rs: {unchecked:?}");
}

/// The names a manifest section lists (`name.workspace = true`, `name = …`, `name = { … }`).
fn declared(manifest: &str, section: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            names.push(name.to_owned());
        }
    }
    names
}

/// Every `.rs` file below `dir`, read.
fn rust_sources(dir: &std::path::Path) -> String {
    let mut text = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return text };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&rust_sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    text
}

fn names_word(text: &str, ident: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(ident).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + ident.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[test]
fn every_declared_dependency_is_used() {
    // A dependency no source names only costs build time and review: a normal one must be
    // named in `src/`, a dev one anywhere in the crate (`src/` tests, `tests/`, `benches/`).
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut crates: Vec<std::path::PathBuf> = vec![root.join("xtask")];
    for dir in [root.join("crates"), root.join("crates/adapters")] {
        crates.extend(std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()));
    }
    let mut unused = Vec::new();
    for dir in crates {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let src = rust_sources(&dir.join("src"))
            + &std::fs::read_to_string(dir.join("build.rs")).unwrap_or_default();
        let all = format!("{src}{}{}", rust_sources(&dir.join("tests")), rust_sources(&dir.join("benches")));
        for (section, text) in [("dependencies", &src), ("dev-dependencies", &all)] {
            for name in declared(&manifest, section) {
                if !names_word(text, &name.replace('-', "_")) {
                    unused.push(format!("{}: [{section}] {name}", dir.display()));
                }
            }
        }
    }
    assert!(unused.is_empty(), "declared and never named:\n{}", unused.join("\n"));
}

/// The ports are split by the component that owns them, each file short enough to read in
/// one sitting; a file that grows past this is two components' ports (or a port with
/// methods its consumers do not need).
#[test]
fn every_ports_file_is_short() {
    const MOST_LINES: usize = 250;
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/domain/src/ports"));
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("crates/domain/src/ports is a directory") {
        let path = entry.unwrap().path();
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert!(lines <= MOST_LINES, "{} has {lines} lines (at most {MOST_LINES})", path.display());
        files += 1;
    }
    assert!(files > 1, "the ports are one file per owning component");
    assert!(
        !std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/domain/src/ports.rs")).exists(),
        "one ports.rs beside the directory"
    );
}

/// Each function in `crates/retrieve` and the lines it spans (declaration to closing brace),
/// by a scan that counts braces outside string literals and line comments (a `'"'` or a `//`
/// inside a string would mislead it; `crates/retrieve` has neither).
fn function_lengths(source: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let head = ["pub ", "pub(crate) ", "pub(super) ", "async ", "const ", "unsafe "]
            .iter()
            .fold(code, |rest, prefix| rest.strip_prefix(prefix).unwrap_or(rest));
        let head = head.strip_prefix("async ").unwrap_or(head);
        let Some(name) = head.strip_prefix("fn ") else { continue };
        let name: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let (mut depth, mut opened) = (0i32, false);
        for (offset, text) in lines[start..].iter().enumerate() {
            let code = text.split("//").next().unwrap_or("");
            let (mut in_string, mut escaped) = (false, false);
            for c in code.chars() {
                match (in_string, escaped, c) {
                    (true, true, _) => escaped = false,
                    (true, false, '\\') => escaped = true,
                    (_, false, '"') => in_string = !in_string,
                    (false, _, '{') => (depth, opened) = (depth + 1, true),
                    (false, _, '}') => depth -= 1,
                    _ => {}
                }
            }
            if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
                if opened {
                    out.push((name.clone(), offset + 1));
                }
                break;
            }
        }
    }
    out
}

/// The search pipeline stays readable: no function in `crates/retrieve` runs past 60 lines,
/// and no pattern takes a tuple apart whose first part is a tuple again (a named type says
/// what the parts are).
#[test]
fn retrieve_has_no_long_function_and_no_tuple_of_tuples() {
    const MOST_LINES: usize = 60;
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/retrieve/src"));
    let mut files = vec![dir.to_path_buf()];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for (name, lines) in function_lengths(&source) {
            assert!(
                lines <= MOST_LINES,
                "{}: fn {name} is {lines} lines (at most {MOST_LINES})",
                path.display()
            );
            checked += 1;
        }
        for (n, line) in source.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("(((") && !code.contains("let (("),
                "{}:{}: a tuple of tuples: {line}",
                path.display(),
                n + 1
            );
        }
    }
    assert!(checked > 100, "the scan found {checked} functions");
}

#[test]
fn the_function_scan_measures_what_it_should() {
    let source = "fn short() {\n    let s = \"{\";\n}\n\npub(crate) async fn long(\n    a: u32,\n) -> u32 {\n    // }\n    a\n}\nfn declared();\n";
    assert_eq!(function_lengths(source), [("short".to_owned(), 3), ("long".to_owned(), 6)]);
}
