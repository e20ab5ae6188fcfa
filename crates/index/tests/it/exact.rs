//! The index must return exactly the brute-force top-k over eligible live rows.

use std::collections::BTreeSet;

use proptest::prelude::*;
use retold_domain::{RecordId, RecordKey, VectorIndex};
use retold_index::ExactIndex;

fn id(n: u64) -> RecordId {
    RecordId::new(format!("mem_{n:08}")).unwrap()
}

fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 { v.to_vec() } else { v.iter().map(|x| x / norm).collect() }
}

/// Brute force: score every eligible live row in f64, sort by (score desc, id asc).
fn brute_force(
    rows: &[(u64, Vec<f32>)],
    dead: &BTreeSet<u64>,
    eligible: &BTreeSet<u64>,
    query: &[f32],
    k: usize,
) -> Vec<RecordId> {
    let q = normalised(query);
    let mut scored: Vec<(f32, RecordId)> = rows
        .iter()
        .filter(|(key, _)| eligible.contains(key) && !dead.contains(key))
        .map(|(key, v)| {
            let v = normalised(v);
            (q.iter().zip(&v).map(|(a, b)| a * b).sum::<f32>(), id(*key))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|(_, id)| id).collect()
}

fn vector_strategy(dims: usize) -> impl Strategy<Value = Vec<f32>> {
    // Small integer components make exact score ties common, so the tie-break is exercised.
    prop::collection::vec((-3i8..=3).prop_map(f32::from), dims)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn search_equals_brute_force_over_eligible_live_rows(
        rows in prop::collection::vec(vector_strategy(8), 1..60),
        query in vector_strategy(8),
        eligible_bits in prop::collection::vec(any::<bool>(), 60),
        dead_bits in prop::collection::vec(prop::bool::weighted(0.2), 60),
        k in 1usize..12,
    ) {
        let index = ExactIndex::new(8);
        // Keys start at 1 like SQLite rowids, with gaps.
        let rows: Vec<(u64, Vec<f32>)> = rows.into_iter().enumerate().map(|(i, v)| (i as u64 * 2 + 1, v)).collect();
        for (key, v) in &rows {
            index.upsert(RecordKey(*key), &id(*key), v).unwrap();
        }
        let mut dead = BTreeSet::new();
        for ((key, _), is_dead) in rows.iter().zip(&dead_bits) {
            if *is_dead {
                index.mark_dead(RecordKey(*key));
                dead.insert(*key);
            }
        }
        let eligible: BTreeSet<u64> =
            rows.iter().zip(&eligible_bits).filter(|(_, e)| **e).map(|((key, _), _)| *key).collect();
        // Unknown keys in the eligible set are ignored.
        let mut keys: Vec<RecordKey> = eligible.iter().map(|k| RecordKey(*k)).collect();
        keys.push(RecordKey(10_000));

        let got: Vec<RecordId> = index.search(&query, &keys, k).unwrap().into_iter().map(|h| h.record_id).collect();
        let want = brute_force(&rows, &dead, &eligible, &query, k);
        prop_assert_eq!(&got, &want);

        // Compaction changes nothing observable.
        index.compact();
        let again: Vec<RecordId> = index.search(&query, &keys, k).unwrap().into_iter().map(|h| h.record_id).collect();
        prop_assert_eq!(again, want);
        prop_assert_eq!(index.live_len(), rows.len() - dead.len());
    }
}

#[test]
fn dead_and_ineligible_rows_are_never_returned() {
    let index = ExactIndex::new(2);
    index.upsert(RecordKey(1), &id(1), &[1.0, 0.0]).unwrap();
    index.upsert(RecordKey(2), &id(2), &[0.9, 0.1]).unwrap();
    index.upsert(RecordKey(3), &id(3), &[0.0, 1.0]).unwrap();
    index.mark_dead(RecordKey(1));
    let hits = index.search(&[1.0, 0.0], &[RecordKey(1), RecordKey(3)], 10).unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.record_id.as_str()).collect();
    assert_eq!(ids, ["mem_00000003"]);
    assert!(index.vector(RecordKey(1)).is_none());
    assert_eq!(index.search(&[1.0, 0.0], &[], 10).unwrap(), []);
}

#[test]
fn upsert_replaces_and_revives() {
    let index = ExactIndex::new(2);
    index.upsert(RecordKey(5), &id(5), &[1.0, 0.0]).unwrap();
    index.mark_dead(RecordKey(5));
    assert_eq!(index.live_len(), 0);
    index.upsert(RecordKey(5), &id(5), &[0.0, 2.0]).unwrap();
    assert_eq!(index.live_len(), 1);
    assert_eq!(index.rows(), 1);
    assert_eq!(index.vector(RecordKey(5)).unwrap(), [0.0, 1.0]);
}

#[test]
fn wrong_dimensions_are_refused() {
    let index = ExactIndex::new(3);
    assert!(index.upsert(RecordKey(1), &id(1), &[1.0, 0.0]).is_err());
    assert!(index.upsert(RecordKey(1), &id(1), &[f32::NAN, 0.0, 0.0]).is_err());
    assert!(index.search(&[1.0], &[RecordKey(1)], 1).is_err());
}

/// Above the size where the scan splits across two threads, with many exact ties across the
/// split point: still the brute-force answer.
#[test]
fn a_split_scan_equals_brute_force() {
    let index = ExactIndex::new(4);
    let rows: Vec<(u64, Vec<f32>)> = (1..=40_000u64)
        .map(|n| (n, vec![(n % 7) as f32 - 3.0, (n % 5) as f32, 1.0, (n % 3) as f32]))
        .collect();
    for (key, v) in &rows {
        index.upsert(RecordKey(*key), &id(*key), v).unwrap();
    }
    let dead: BTreeSet<u64> = (1..=40_000).filter(|n| n % 11 == 0).collect();
    for key in &dead {
        index.mark_dead(RecordKey(*key));
    }
    let eligible: BTreeSet<u64> = (1..=40_000).filter(|n| n % 13 != 0).collect();
    let keys: Vec<RecordKey> = eligible.iter().map(|k| RecordKey(*k)).collect();
    for (query, k) in
        [(vec![1.0, 0.5, 0.2, 0.0], 50), (vec![-1.0, 0.0, 1.0, 1.0], 7), (vec![0.0, 0.0, 1.0, 0.0], 100)]
    {
        let got: Vec<RecordId> =
            index.search(&query, &keys, k).unwrap().into_iter().map(|h| h.record_id).collect();
        assert_eq!(got, brute_force(&rows, &dead, &eligible, &query, k), "query {query:?}");
    }
}
