//! Reciprocal rank fusion (seed section 11).

use std::collections::HashMap;

use retold_domain::RecordId;

/// Fuse ranked lists: each list adds `1 / (k + rank)` to every record it contains (ranks
/// start at 1). Sorted by fused score, then by best single rank, then by id.
pub fn rrf(lists: &[Vec<RecordId>], k: u32) -> Vec<(RecordId, f64)> {
    let weighted: Vec<(f64, &[RecordId])> = lists.iter().map(|l| (1.0, l.as_slice())).collect();
    weighted_rrf(&weighted, k)
}

/// RRF with a weight per list: each list adds `weight / (k + rank)`. With every weight 1.0
/// this is the seed's plain RRF.
pub fn weighted_rrf(lists: &[(f64, &[RecordId])], k: u32) -> Vec<(RecordId, f64)> {
    let mut scores: HashMap<&RecordId, (f64, usize)> = HashMap::new();
    for (weight, list) in lists {
        for (index, id) in list.iter().enumerate() {
            let rank = index + 1;
            let entry = scores.entry(id).or_insert((0.0, usize::MAX));
            entry.0 += weight / (f64::from(k) + rank as f64);
            entry.1 = entry.1.min(rank);
        }
    }
    let mut fused: Vec<(&RecordId, f64, usize)> =
        scores.into_iter().map(|(id, (s, best))| (id, s, best)).collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then_with(|| a.0.cmp(b.0)));
    fused.into_iter().map(|(id, score, _)| (id.clone(), score)).collect()
}
