//! The scoring kernel. Eight independent accumulators let the compiler vectorise the
//! loop (a single running sum would force strict left-to-right float addition).

/// Dot product of two equal-length slices.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// `(a · x, b · x)` in one pass over `x` (a centred scan needs both, and `x` is what comes
/// from memory).
#[inline]
pub(crate) fn dot2(a: &[f32], b: &[f32], x: &[f32]) -> (f32, f32) {
    debug_assert!(a.len() == x.len() && b.len() == x.len());
    const LANES: usize = 8;
    let (mut acc_a, mut acc_b) = ([0.0f32; LANES], [0.0f32; LANES]);
    let (chunks_a, chunks_b, chunks_x) =
        (a.chunks_exact(LANES), b.chunks_exact(LANES), x.chunks_exact(LANES));
    let tail = chunks_x.remainder().len();
    let (mut tail_a, mut tail_b) = (0.0f32, 0.0f32);
    for i in x.len() - tail..x.len() {
        tail_a += a[i] * x[i];
        tail_b += b[i] * x[i];
    }
    for ((ca, cb), cx) in chunks_a.zip(chunks_b).zip(chunks_x) {
        for i in 0..LANES {
            acc_a[i] += ca[i] * cx[i];
            acc_b[i] += cb[i] * cx[i];
        }
    }
    (acc_a.iter().sum::<f32>() + tail_a, acc_b.iter().sum::<f32>() + tail_b)
}
