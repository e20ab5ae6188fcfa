//! The index must return exactly the brute-force top-k over eligible live rows.

use std::collections::BTreeSet;

use proptest::prelude::*;
use retold_domain::{Centring, RecordId, RecordKey, SentenceWeight, VectorIndex};
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

        let got: Vec<RecordId> = index.search(&query, &keys, k, Centring::NONE).unwrap().into_iter().map(|h| h.record_id).collect();
        let want = brute_force(&rows, &dead, &eligible, &query, k);
        prop_assert_eq!(&got, &want);

        // Compaction changes nothing observable.
        index.compact();
        let again: Vec<RecordId> = index.search(&query, &keys, k, Centring::NONE).unwrap().into_iter().map(|h| h.record_id).collect();
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
    let hits = index.search(&[1.0, 0.0], &[RecordKey(1), RecordKey(3)], 10, Centring::NONE).unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.record_id.as_str()).collect();
    assert_eq!(ids, ["mem_00000003"]);
    assert!(index.vector(RecordKey(1)).is_none());
    assert_eq!(index.search(&[1.0, 0.0], &[], 10, Centring::NONE).unwrap(), []);
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
fn sentences_attached_after_a_write_rank_its_row_as_if_upserted_with_them() {
    let sentences = [0.0, 1.0, 0.6, 0.8];
    let with = ExactIndex::new(2);
    let later = ExactIndex::new(2);
    for key in 1..=3u64 {
        let vector = [1.0, 0.1 * key as f32];
        with.upsert_with(RecordKey(key), &id(key), &vector, if key == 2 { &sentences } else { &[] }).unwrap();
        later.upsert(RecordKey(key), &id(key), &vector).unwrap();
    }
    assert!(later.attach_sentences(RecordKey(2), &sentences).unwrap());
    let all = [RecordKey(1), RecordKey(2), RecordKey(3)];
    let search = |index: &ExactIndex| {
        index.search_with(&[0.0, 1.0], &all, 3, Centring::NONE, SentenceWeight::new(1.0).unwrap()).unwrap()
    };
    assert_eq!(search(&later), search(&with));
    assert_eq!(search(&later)[0].record_id, id(2), "its best sentence is the query");
    // A row not there, or dead (forgotten meanwhile), takes none.
    assert!(!later.attach_sentences(RecordKey(9), &sentences).unwrap());
    later.mark_dead(RecordKey(3));
    assert!(!later.attach_sentences(RecordKey(3), &sentences).unwrap());
    assert!(search(&later).iter().all(|h| h.record_id != id(3)));
}

#[test]
fn wrong_dimensions_are_refused() {
    let index = ExactIndex::new(3);
    assert!(index.upsert(RecordKey(1), &id(1), &[1.0, 0.0]).is_err());
    assert!(index.upsert(RecordKey(1), &id(1), &[f32::NAN, 0.0, 0.0]).is_err());
    assert!(index.search(&[1.0], &[RecordKey(1)], 1, Centring::NONE).is_err());
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
        let got: Vec<RecordId> = index
            .search(&query, &keys, k, Centring::NONE)
            .unwrap()
            .into_iter()
            .map(|h| h.record_id)
            .collect();
        assert_eq!(got, brute_force(&rows, &dead, &eligible, &query, k), "query {query:?}");
    }
}

/// `n` rows around one shared direction (e1), each with a small distinct part, like the
/// turns of one conversation.
fn shared_direction_rows(n: u64) -> Vec<(u64, Vec<f32>)> {
    (0..n)
        .map(|i| {
            let (a, b) = (if i % 2 == 0 { 0.05 } else { -0.05 }, if i % 4 < 2 { 0.05 } else { -0.05 });
            (100 + i, normalised(&[1.0, a, b]))
        })
        .collect()
}

#[test]
fn centring_ranks_by_what_sets_a_record_apart_and_reports_the_plain_cosine() {
    let index = ExactIndex::new(3);
    let mut rows = shared_direction_rows(80);
    // The hub: the shared direction plus something the query does not ask about.
    rows.push((1, normalised(&[1.0, 0.0, 0.3])));
    // The match: little of the shared direction, much of what the query asks.
    rows.push((2, normalised(&[0.3, 1.0, 0.0])));
    for (key, v) in &rows {
        index.upsert(RecordKey(*key), &id(*key), v).unwrap();
    }
    let keys: Vec<RecordKey> = rows.iter().map(|(k, _)| RecordKey(*k)).collect();
    let query = normalised(&[1.0, 0.3, 0.0]);

    let plain = index.search(&query, &keys, 3, Centring::NONE).unwrap();
    assert!(
        plain.iter().all(|h| h.record_id != id(2)),
        "plain cosine favours the records nearest the shared direction: {plain:?}"
    );
    assert!(plain.iter().all(|h| h.centred.is_none()));

    // k = 10: the match is plain cosine's last row, inside the reordered pool of 10 × k.
    let centred = index.search(&query, &keys, 10, Centring::new(1.0).unwrap()).unwrap();
    assert_eq!(centred[0].record_id, id(2), "{centred:?}");
    let cosine: f32 = query.iter().zip(normalised(&[0.3, 1.0, 0.0])).map(|(a, b)| a * b).sum();
    assert!((centred[0].score - cosine).abs() < 1e-5, "the hit reports its plain cosine");
    assert!(centred[0].centred.is_some_and(|c| c > centred[0].score));
}

#[test]
fn centring_leaves_a_small_eligible_set_in_plain_cosine_order() {
    let index = ExactIndex::new(3);
    let rows = shared_direction_rows(retold_index::CENTRING_MIN_ROWS as u64 - 1);
    for (key, v) in &rows {
        index.upsert(RecordKey(*key), &id(*key), v).unwrap();
    }
    let keys: Vec<RecordKey> = rows.iter().map(|(k, _)| RecordKey(*k)).collect();
    let query = normalised(&[1.0, 0.2, -0.1]);
    let plain = index.search(&query, &keys, 10, Centring::NONE).unwrap();
    assert_eq!(index.search(&query, &keys, 10, Centring::new(1.0).unwrap()).unwrap(), plain);
}

#[test]
fn records_outside_the_eligible_set_never_change_a_centred_search() {
    let eligible_rows = shared_direction_rows(90);
    let alone = ExactIndex::new(3);
    let among_others = ExactIndex::new(3);
    for (key, v) in &eligible_rows {
        alone.upsert(RecordKey(*key), &id(*key), v).unwrap();
        among_others.upsert(RecordKey(*key), &id(*key), v).unwrap();
    }
    // Another scope's records, in a very different direction, interleaved by key.
    for i in 0..200u64 {
        among_others.upsert(RecordKey(1_000 + i), &id(1_000 + i), &normalised(&[-0.2, 0.1, 1.0])).unwrap();
    }
    let keys: Vec<RecordKey> = eligible_rows.iter().map(|(k, _)| RecordKey(*k)).collect();
    let centring = Centring::new(1.0).unwrap();
    for query in [[1.0, 0.3, 0.0], [0.2, -1.0, 0.4], [0.0, 0.0, 1.0]] {
        let query = normalised(&query);
        let expected = alone.search(&query, &keys, 10, centring).unwrap();
        assert!(expected.iter().all(|h| h.centred.is_some()));
        assert_eq!(among_others.search(&query, &keys, 10, centring).unwrap(), expected);
    }
}

/// Brute force of a centred search in f64: the mean of the eligible live rows (all of them
/// while there are at most 4,096), taken from the query and from each of the plain cosine's
/// first `pool` rows, then cosine.
fn brute_force_centred(
    rows: &[(u64, Vec<f32>)],
    query: &[f32],
    share: f64,
    pool: usize,
) -> Vec<(RecordId, f64)> {
    let rows: Vec<(u64, Vec<f64>)> =
        rows.iter().map(|(k, v)| (*k, normalised(v).iter().map(|x| f64::from(*x)).collect())).collect();
    let plain = |v: &[f64]| normalised(query).iter().zip(v).map(|(q, x)| f64::from(*q) * x).sum::<f64>();
    let dims = query.len();
    let mut mean = vec![0.0f64; dims];
    for (_, v) in &rows {
        mean.iter_mut().zip(v).for_each(|(m, x)| *m += x);
    }
    mean.iter_mut().for_each(|m| *m *= share / rows.len() as f64);
    let q: Vec<f64> = normalised(query).iter().zip(&mean).map(|(q, m)| f64::from(*q) - m).collect();
    let cos = |a: &[f64], b: &[f64]| {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        dot / (norm(a) * norm(b))
    };
    let mut by_plain: Vec<&(u64, Vec<f64>)> = rows.iter().collect();
    by_plain.sort_by(|a, b| plain(&b.1).total_cmp(&plain(&a.1)).then_with(|| id(a.0).cmp(&id(b.0))));
    let mut scored: Vec<(RecordId, f64)> = by_plain
        .into_iter()
        .take(pool)
        .map(|(k, v)| (id(*k), cos(&q, &v.iter().zip(&mean).map(|(x, m)| x - m).collect::<Vec<_>>())))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    #[test]
    /// Also after records are given new vectors and others are marked dead (the scan reads
    /// each row's `i8` copy, which must follow), after compaction, and in an index rebuilt
    /// from a boot scan of the live rows.
    fn a_centred_search_returns_the_brute_force_centred_top_k(
        rows in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 8), 80..160),
        replaced in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 8), 0..30),
        query in prop::collection::vec(-1.0f32..1.0, 8),
        share in 0.1f64..=1.0,
        k in 1usize..12,
    ) {
        prop_assume!(rows.iter().chain(&replaced).all(|v| v.iter().any(|x| x.abs() > 0.05)));
        prop_assume!(query.iter().any(|x| x.abs() > 0.05));
        let mut rows: Vec<(u64, Vec<f32>)> = rows.into_iter().enumerate().map(|(i, v)| (i as u64 + 1, v)).collect();
        let index = ExactIndex::new(8);
        for (key, v) in &rows {
            index.upsert(RecordKey(*key), &id(*key), v).unwrap();
        }
        // Every third record gets a new vector; every seventh is dead (still asked for).
        for (row, v) in rows.iter_mut().step_by(3).zip(replaced) {
            index.upsert(RecordKey(row.0), &id(row.0), &v).unwrap();
            row.1 = v;
        }
        let keys: Vec<RecordKey> = rows.iter().map(|(k, _)| RecordKey(*k)).collect();
        for key in keys.iter().filter(|k| k.0 % 7 == 0) {
            index.mark_dead(*key);
        }
        rows.retain(|(key, _)| key % 7 != 0);
        let pool = k * retold_index::CENTRING_POOL;
        let truth = brute_force_centred(&rows, &query, f64::from(share as f32), pool);
        let kth = truth[k.min(truth.len()) - 1].1;
        let rebuilt = || {
            ExactIndex::from_scan(retold_domain::EmbeddingScan {
                dims: 8,
                keys: rows.iter().map(|(k, _)| RecordKey(*k)).collect(),
                ids: rows.iter().map(|(k, _)| id(*k)).collect(),
                vectors: rows.iter().flat_map(|(_, v)| v.clone()).collect(),
                sentence_counts: Vec::new(),
                sentences: Vec::new(),
                incompatible: 0,
            })
            .unwrap()
        };
        let booted = rebuilt();
        for (pass, index) in [("before compaction", &index), ("after compaction", &index), ("rebuilt at boot", &booted)] {
            let got = index.search(&query, &keys, k, Centring::new(share as f32).unwrap()).unwrap();
            prop_assert_eq!(got.len(), k.min(rows.len()), "{}", pass);
            for hit in &got {
                let expected = truth.iter().find(|(id, _)| *id == hit.record_id).expect("a hit from the pool").1;
                let centred = f64::from(hit.centred.unwrap());
                prop_assert!((centred - expected).abs() < 1e-3, "{}: {} vs {}", pass, centred, expected);
                // Among the true top k, up to float rounding.
                prop_assert!(expected >= kth - 1e-3, "{}: {} below the k-th {}", pass, expected, kth);
                let (_, v) = rows.iter().find(|(key, _)| id(*key) == hit.record_id).unwrap();
                let plain: f32 = normalised(&query).iter().zip(normalised(v)).map(|(a, b)| a * b).sum();
                prop_assert!((hit.score - plain).abs() < 1e-4, "{}", pass);
            }
            index.compact();
        }
    }
}

/// A row's score when its best sentence weighs `w`: `own + w (best − own)`, its own cosine
/// alone without sentences.
fn mixed(query: &[f32], own: &[f32], sentences: &[Vec<f32>], w: f32) -> f32 {
    let q = normalised(query);
    let cos = |v: &[f32]| q.iter().zip(&normalised(v)).map(|(a, b)| a * b).sum::<f32>();
    let own = cos(own);
    sentences.iter().map(|s| cos(s)).reduce(f32::max).map_or(own, |best| own + w * (best - own))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// With sentence vectors weighed in, the search is the brute-force top k of the mixed
    /// score (up to the sentences' quantisation), after records are replaced with more or
    /// fewer sentences, and after compaction.
    #[test]
    fn a_sentence_weighed_search_equals_brute_force(
        rows in prop::collection::vec((vector_strategy(6), prop::collection::vec(vector_strategy(6), 0..4)), 1..40),
        replaced in prop::collection::vec((vector_strategy(6), prop::collection::vec(vector_strategy(6), 0..5)), 0..10),
        query in vector_strategy(6),
        eligible_bits in prop::collection::vec(any::<bool>(), 40),
        // 1 (the sentence list: the best sentence alone) drawn on its own, as a range
        // almost never draws it.
        weight in prop_oneof![Just(1.0f32), 0.0f32..=1.0],
        k in 1usize..10,
    ) {
        let index = ExactIndex::new(6);
        let mut rows: Vec<(u64, Vec<f32>, Vec<Vec<f32>>)> =
            rows.into_iter().enumerate().map(|(i, (v, s))| (i as u64 + 1, v, s)).collect();
        for (key, v, s) in &rows {
            index.upsert_with(RecordKey(*key), &id(*key), v, &s.concat()).unwrap();
        }
        // Replace the first records' vectors and sentences (more or fewer than before).
        for (row, (v, s)) in rows.iter_mut().zip(replaced) {
            index.upsert_with(RecordKey(row.0), &id(row.0), &v, &s.concat()).unwrap();
            (row.1, row.2) = (v, s);
        }
        let eligible: Vec<RecordKey> =
            rows.iter().zip(&eligible_bits).filter(|(_, e)| **e).map(|(r, _)| RecordKey(r.0)).collect();
        let score = |key: &RecordId| {
            let row = rows.iter().find(|r| &id(r.0) == key).unwrap();
            mixed(&query, &row.1, &row.2, weight)
        };
        let mut want: Vec<(f32, RecordId)> = eligible.iter().map(|k| (score(&id(k.0)), id(k.0))).collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        want.truncate(k);
        let weight = SentenceWeight::new(weight).unwrap();
        for pass in ["before compaction", "after compaction"] {
            let got = index.search_with(&query, &eligible, k, Centring::NONE, weight).unwrap();
            prop_assert_eq!(got.len(), want.len(), "{}", pass);
            for (hit, (expected, _)) in got.iter().zip(&want) {
                // Sentence vectors are held as `i8`s (the query too, for them): a sentence's
                // cosine is off by at most (|q|₁ + |s|₁) / 254 ≤ 0.02 in 6 dimensions, so the
                // i-th hit's true score is within twice that of the i-th best true score.
                prop_assert!((score(&hit.record_id) - expected).abs() <= 0.04, "{}: {:?} vs {:?}", pass, got, want);
            }
            index.compact();
        }
    }
}

/// One sentence of a long record that answers the query lifts the record above another
/// whose whole vector is nearer; weighed at 0 the sentences change nothing; a centred
/// search (enough rows for a mean) does the same, and reports the sentence's cosine.
#[test]
fn a_record_is_found_by_its_best_sentence() {
    let index = ExactIndex::new(3);
    let query = [1.0, 0.0, 0.0];
    // The long record: its own vector mostly elsewhere, one sentence on the query.
    index.upsert_with(RecordKey(1), &id(1), &[0.3, 1.0, 0.0], &[0.0, 1.0, 0.0, 1.0, 0.05, 0.0]).unwrap();
    // A record whose own vector is nearer, with no sentence that answers.
    index.upsert_with(RecordKey(2), &id(2), &[0.6, 1.0, 0.0], &[0.0, 1.0, 0.1, 0.0, 0.8, 1.0]).unwrap();
    let keys = [RecordKey(1), RecordKey(2)];
    let order = |w: f32| -> Vec<String> {
        let hits =
            index.search_with(&query, &keys, 2, Centring::NONE, SentenceWeight::new(w).unwrap()).unwrap();
        hits.iter().map(|h| h.record_id.as_str().to_owned()).collect()
    };
    assert_eq!(order(0.0), [id(2).as_str(), id(1).as_str()]);
    assert_eq!(order(0.5), [id(1).as_str(), id(2).as_str()]);
    let hits =
        index.search_with(&query, &keys, 1, Centring::NONE, SentenceWeight::new(0.5).unwrap()).unwrap();
    // The plain cosine the gate reads is the record's own; the sentence's is reported beside it.
    assert!((hits[0].score - 0.3 / (1.09f32).sqrt()).abs() < 1e-5, "{hits:?}");
    assert!((hits[0].sentence.unwrap() - 1.0 / (1.0025f32).sqrt()).abs() < 1e-5, "{hits:?}");
    // Weighed at 0 the search is the plain one, sentence cosines and all.
    let plain = index.search(&query, &keys, 2, Centring::NONE).unwrap();
    assert_eq!(plain, index.search_with(&query, &keys, 2, Centring::NONE, SentenceWeight::NONE).unwrap());
    assert!(plain.iter().all(|h| h.sentence.is_none()));

    // Centred: 100 more records around a shared direction, each with a sentence there too.
    for n in 3..103u64 {
        let v = [0.1, 1.0, 0.01 * n as f32];
        index.upsert_with(RecordKey(n), &id(n), &v, &v).unwrap();
    }
    let all: Vec<RecordKey> = (1..103).map(RecordKey).collect();
    let full = Centring::new(1.0).unwrap();
    let hits = index.search_with(&query, &all, 3, full, SentenceWeight::new(0.5).unwrap()).unwrap();
    assert_eq!(hits[0].record_id, id(1), "{hits:?}");
    assert!(hits[0].centred.is_some() && hits[0].sentence.is_some(), "{hits:?}");
}

#[test]
fn sentence_vectors_of_the_wrong_size_are_refused_and_change_nothing() {
    let index = ExactIndex::new(3);
    index.upsert_with(RecordKey(1), &id(1), &[1.0, 0.0, 0.0], &[0.0, 1.0, 0.0]).unwrap();
    assert!(index.upsert_with(RecordKey(1), &id(1), &[0.0, 0.0, 1.0], &[1.0, 0.0]).is_err());
    assert!(index.upsert_with(RecordKey(1), &id(1), &[0.0, 0.0, 1.0], &[f32::NAN, 0.0, 0.0]).is_err());
    assert_eq!(index.vector(RecordKey(1)).unwrap(), [1.0, 0.0, 0.0]);
    let hits = index
        .search_with(&[0.0, 1.0, 0.0], &[RecordKey(1)], 1, Centring::NONE, SentenceWeight::new(1.0).unwrap())
        .unwrap();
    assert_eq!(hits[0].sentence, Some(1.0));
}

/// Sentences are centred only when there are enough of them to have a common direction: a
/// centred search over many records, few of which have sentence vectors, ranks those by
/// their plain sentence cosine (the same as without centring).
#[test]
fn a_few_sentence_vectors_among_many_records_are_not_centred() {
    let index = ExactIndex::new(3);
    for n in 1..=100u64 {
        index.upsert(RecordKey(n), &id(n), &[0.1, 1.0, 0.01 * n as f32]).unwrap();
    }
    // Two records with one sentence each: the mean of two would make them cancel out.
    index.upsert_with(RecordKey(101), &id(101), &[0.0, 1.0, 0.0], &[1.0, 0.1, 0.0]).unwrap();
    index.upsert_with(RecordKey(102), &id(102), &[0.0, 1.0, 0.0], &[0.9, 0.0, 0.4]).unwrap();
    let all: Vec<RecordKey> = (1..=102).map(RecordKey).collect();
    let weight = SentenceWeight::new(0.5).unwrap();
    let hits = index.search_with(&[1.0, 0.0, 0.0], &all, 102, Centring::new(1.0).unwrap(), weight).unwrap();
    let sentence = |n: u64| hits.iter().find(|h| h.record_id == id(n)).and_then(|h| h.sentence).unwrap();
    // Plain cosines: 1 / √1.01 and 0.9 / √0.97.
    assert!((sentence(101) - 1.0 / 1.01f32.sqrt()).abs() < 0.02, "{hits:?}");
    assert!((sentence(102) - 0.9 / 0.97f32.sqrt()).abs() < 0.02, "{hits:?}");
}

/// A change the index takes after an eligible set was prepared for a search.
#[derive(Debug, Clone)]
enum Change {
    None,
    Replace(usize, Vec<f32>, Vec<f32>),
    Dead(usize),
    Add(Vec<f32>),
    Compact(usize),
}

fn change() -> impl Strategy<Value = Change> {
    let v = || prop::collection::vec(-1.0f32..1.0, 8);
    prop_oneof![
        Just(Change::None),
        (0usize..200, v(), v()).prop_map(|(at, own, sentence)| Change::Replace(at, own, sentence)),
        (0usize..200).prop_map(Change::Dead),
        v().prop_map(Change::Add),
        (0usize..200).prop_map(Change::Compact),
    ]
}

/// One write to an index, kept to build a fresh index with the same rows.
#[derive(Debug, Clone)]
enum Write {
    Put(RecordKey, Vec<f32>, Vec<f32>),
    Dead(RecordKey),
    Compact,
}

fn apply(index: &ExactIndex, write: &Write) {
    match write {
        Write::Put(key, own, sentences) => index.upsert_with(*key, &id(key.0), own, sentences).unwrap(),
        Write::Dead(key) => index.mark_dead(*key),
        Write::Compact => index.compact(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    /// What `prepare` computed ahead of the query (the eligible rows, the record and sentence
    /// means a centred search subtracts) gives the very search an index built afresh with
    /// the same writes gives, also when the index changed between `prepare` and the search:
    /// a replaced vector moves the means, a dead record leaves the rows, compaction moves
    /// every row.
    #[test]
    fn a_prepared_search_equals_one_on_a_fresh_index(
        rows in prop::collection::vec(
            (prop::collection::vec(-1.0f32..1.0, 8), prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 8), 0..3)),
            70..120,
        ),
        changes in prop::collection::vec((change(), any::<bool>(), any::<bool>()), 1..5),
        query in prop::collection::vec(-1.0f32..1.0, 8),
        weight in prop_oneof![Just(0.0f32), 0.1f32..=1.0],
        k in 1usize..8,
    ) {
        prop_assume!(query.iter().any(|x| x.abs() > 0.05));
        let prepared = ExactIndex::new(8);
        let mut writes: Vec<Write> = Vec::new();
        let write = |w: Write, writes: &mut Vec<Write>| {
            apply(&prepared, &w);
            writes.push(w);
        };
        let keys: Vec<RecordKey> = (1..=rows.len() as u64).map(RecordKey).collect();
        for (key, (own, sentences)) in keys.iter().zip(&rows) {
            write(Write::Put(*key, own.clone(), sentences.concat()), &mut writes);
        }
        let fresh = |writes: &[Write]| {
            let index = ExactIndex::new(8);
            writes.iter().for_each(|w| apply(&index, w));
            index
        };
        let weight = SentenceWeight::new(weight).unwrap();
        // Every other record: a second eligible set, below `CENTRING_MIN_ROWS` rows when the
        // store is small (no mean), prepared beside the first.
        let half: Vec<RecordKey> = keys.iter().copied().step_by(2).collect();
        let mut next = keys.len() as u64;
        for (change, centred, whole) in changes {
            let centring = if centred { Centring::new(0.8).unwrap() } else { Centring::NONE };
            let keys = if whole { &keys } else { &half };
            prepared.prepare(keys, centring, &[weight]);
            // Searched as prepared, nothing changed since: then prepared again.
            prop_assert_eq!(
                prepared.search_with(&query, keys, k, centring, weight).unwrap(),
                fresh(&writes).search_with(&query, keys, k, centring, weight).unwrap()
            );
            prepared.prepare(keys, centring, &[weight]);
            match &change {
                Change::None => {}
                Change::Replace(at, own, sentence) => {
                    write(Write::Put(keys[at % keys.len()], own.clone(), sentence.clone()), &mut writes);
                }
                Change::Dead(at) => write(Write::Dead(keys[at % keys.len()]), &mut writes),
                // A record written after the eligible set was read: not in it.
                Change::Add(own) => {
                    next += 1;
                    write(Write::Put(RecordKey(next), own.clone(), own.clone()), &mut writes);
                }
                Change::Compact(at) => {
                    write(Write::Dead(keys[at % keys.len()]), &mut writes);
                    write(Write::Compact, &mut writes);
                }
            }
            prop_assert_eq!(
                prepared.search_with(&query, keys, k, centring, weight).unwrap(),
                fresh(&writes).search_with(&query, keys, k, centring, weight).unwrap(),
                "after {:?}", change
            );
        }
    }
}

/// The retriever's lists from one pass: each is the search with its weight alone.
fn lists_equal_searches_alone(
    index: &ExactIndex,
    query: &[f32],
    eligible: &[RecordKey],
    k: usize,
    centring: Centring,
) {
    for weights in [[0.0, 1.0], [0.5, 1.0], [1.0, 0.0], [0.3, 0.7]] {
        let weights = weights.map(|w| SentenceWeight::new(w).unwrap());
        let lists = index.search_lists(query, eligible, k, centring, &weights).unwrap();
        assert_eq!(lists.len(), weights.len());
        for (list, weight) in lists.iter().zip(weights) {
            assert_eq!(list, &index.search_with(query, eligible, k, centring, weight).unwrap(), "{weight:?}");
        }
    }
    assert_eq!(index.search_lists(query, eligible, k, centring, &[]).unwrap(), Vec::<Vec<_>>::new());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// `search_lists` ranks every list in one pass over the rows, the way `search_with`
    /// ranks it alone: centred or not, with the `i8` prefilter (a small k over many rows) or
    /// without, rows with and without sentence vectors.
    #[test]
    fn lists_from_one_pass_are_the_searches_alone(
        rows in prop::collection::vec((vector_strategy(8), prop::collection::vec(vector_strategy(8), 0..4)), 1..150),
        query in vector_strategy(8),
        centred in any::<bool>(),
        k in 1usize..12,
    ) {
        let index = ExactIndex::new(8);
        let keys: Vec<RecordKey> = (1..=rows.len() as u64).map(RecordKey).collect();
        for (key, (own, sentences)) in keys.iter().zip(&rows) {
            index.upsert_with(*key, &id(key.0), own, &sentences.concat()).unwrap();
        }
        let centring = if centred { Centring::new(1.0).unwrap() } else { Centring::NONE };
        lists_equal_searches_alone(&index, &query, &keys, k, centring);
    }
}

/// The same over enough rows that the scan runs in two halves on two threads.
#[test]
fn lists_from_one_parallel_pass_are_the_searches_alone() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 2001) as f32 / 1000.0 - 1.0
    };
    let index = ExactIndex::new(8);
    let keys: Vec<RecordKey> = (1..=17_000u64).map(RecordKey).collect();
    for key in &keys {
        let own: Vec<f32> = (0..8).map(|_| next()).collect();
        let sentences: Vec<f32> = (0..(key.0 % 4) * 8).map(|_| next()).collect();
        index.upsert_with(*key, &id(key.0), &own, &sentences).unwrap();
    }
    let query: Vec<f32> = (0..8).map(|_| next()).collect();
    for centring in [Centring::NONE, Centring::new(1.0).unwrap()] {
        lists_equal_searches_alone(&index, &query, &keys, 50, centring);
    }
}
