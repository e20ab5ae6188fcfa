//! Arithmetic on embedding vectors that both the index and result control use.

/// Dot product of two equal-length slices. Eight independent accumulators let the compiler
/// vectorise the loop (a single running sum would force strict left-to-right float addition),
/// so the result may differ from an in-order sum in its last bits.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let chunks_a = a.chunks_exact(LANES);
    let chunks_b = b.chunks_exact(LANES);
    let tail: f32 = chunks_a.remainder().iter().zip(chunks_b.remainder()).map(|(x, y)| x * y).sum();
    for (ca, cb) in chunks_a.zip(chunks_b) {
        for i in 0..LANES {
            acc[i] += ca[i] * cb[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}
