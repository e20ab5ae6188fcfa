//! Databases on the private PostgreSQL server of the tests (`cargo xtask postgres start`;
//! `cargo xtask ci` starts one and sets `RETOLD_TEST_POSTGRES_URL`).

use std::sync::atomic::{AtomicU32, Ordering};

/// The server's URL (a database on it, usually `postgres`). Panics with the command to run
/// when no server was started: a PostgreSQL test never passes without PostgreSQL.
pub fn server_url() -> String {
    std::env::var("RETOLD_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "RETOLD_TEST_POSTGRES_URL is not set: the PostgreSQL tests need a server. Run \
             `eval $(cargo xtask postgres start)` first (or `cargo xtask ci`, which starts one)"
        )
    })
}

/// A new, empty database on the test server; returns its URL.
pub fn fresh_database() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let server = server_url();
    let name = format!("retold_t{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let output = std::process::Command::new("psql")
        .args([server.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c"])
        .arg(format!("CREATE DATABASE {name}"))
        .output()
        .expect("running psql (Debian's postgresql-client, installed with the server)");
    assert!(
        output.status.success(),
        "CREATE DATABASE {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let base = server.rsplit_once('/').map_or(server.as_str(), |(base, _)| base);
    format!("{base}/{name}")
}
