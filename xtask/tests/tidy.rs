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
