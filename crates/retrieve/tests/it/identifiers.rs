//! Records that differ in one identifier (build logs, tickets, error reports): a search for
//! the identifier finds its own record first, every time. Before, an exact lexical match could
//! tie in RRF with a dense-only record, lose the tie, and then be collapsed as a
//! "near-duplicate" of a record that does not contain the query at all.

use retold_retrieve::{RetrieveConfig, SearchRequest};

use crate::{ids, principal, request, world};

fn token(n: u64) -> String {
    format!("tok{:08x}", n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32)
}

#[tokio::test]
async fn a_search_for_an_identifier_finds_its_own_record_first() {
    let w = world(RetrieveConfig::default()).await;
    let p = principal("probe-agent", "ops");
    w.grant("probe-agent", "project:probe", true, true).await;
    let mut written = Vec::new();
    for n in 0..300u64 {
        let content = format!(
            "Crash probe {} from client {} write {}: the build cache lives on disk.",
            token(n),
            n % 4,
            n / 4
        );
        written.push(w.write(&p, request("project:probe", &content)).await);
    }
    let mut misses = Vec::new();
    for n in (0..300u64).step_by(3) {
        let found = ids(&w.search(&p, SearchRequest::new(token(n))).await);
        if found.first() != Some(&written[n as usize]) {
            misses.push((token(n), found.iter().position(|id| *id == written[n as usize])));
        }
    }
    assert!(
        misses.is_empty(),
        "{} of 100 identifier searches did not rank their record first: {misses:?}",
        misses.len()
    );
}
