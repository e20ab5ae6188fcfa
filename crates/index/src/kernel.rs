//! The scoring kernel: the f32 dot product (the domain's [`retold_domain::vectors::dot`],
//! which result control uses too) and the i8 one the quantised sentence vectors use.

pub(crate) use retold_domain::vectors::dot;

/// Dot product of two equal-length `i8` slices, exact in `i32` (a 384-number row sums at most
/// 384 × 127² < 2³¹).
pub(crate) type DotI8 = fn(&[i8], &[i8]) -> i32;

/// The fastest [`DotI8`] this CPU runs: an AVX2 kernel where the CPU has it (the build
/// targets baseline x86-64, whose SSE2 widens `i8`s slowly), else the portable loop. Chosen
/// once per search, not per row.
pub(crate) fn dot_i8_kernel() -> DotI8 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return avx2::dot_i8;
    }
    dot_i8
}

/// Sixteen accumulators let the compiler widen and vectorise the loop.
#[inline(always)]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    debug_assert_eq!(a.len(), b.len());
    const LANES: usize = 16;
    let mut acc = [0i32; LANES];
    let chunks_a = a.chunks_exact(LANES);
    let chunks_b = b.chunks_exact(LANES);
    let tail: i32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (ca, cb) in chunks_a.zip(chunks_b) {
        for i in 0..LANES {
            acc[i] += i32::from(ca[i]) * i32::from(cb[i]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_shuffle_epi32, _mm256_add_epi32,
        _mm256_castsi256_si128, _mm256_cvtepi8_epi16, _mm256_extracti128_si256, _mm256_madd_epi16,
        _mm256_setzero_si256,
    };

    /// [`super::dot_i8`] for AVX2; only handed out after the CPU was checked.
    pub(super) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
        // SAFETY: `dot_i8_kernel` returns this function only when
        // `is_x86_feature_detected!("avx2")` said the CPU runs AVX2.
        unsafe { compiled(a, b) }
    }

    /// Sixteen `i8`s of each side widened to `i16`, multiplied and summed in pairs into
    /// eight `i32`s (`vpmaddwd`, sixteen numbers an instruction); the portable loop compiles
    /// to 32-bit multiplies (`vpmulld`, eight numbers an instruction, and slow). A pair sums
    /// at most 2 × 128² < 2³¹, so it is exact.
    #[target_feature(enable = "avx2")]
    fn compiled(a: &[i8], b: &[i8]) -> i32 {
        debug_assert_eq!(a.len(), b.len());
        let n = a.len().min(b.len());
        let widened = |x: &[i8], at: usize| -> __m256i {
            debug_assert!(at + 16 <= x.len());
            // SAFETY: `at + 16 <= n <= x.len()` (both callers below), and `loadu` reads 16
            // bytes from any alignment.
            _mm256_cvtepi8_epi16(unsafe { _mm_loadu_si128(x.as_ptr().add(at).cast()) })
        };
        let (mut even, mut odd) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        let mut at = 0;
        while at + 32 <= n {
            even = _mm256_add_epi32(even, _mm256_madd_epi16(widened(a, at), widened(b, at)));
            odd = _mm256_add_epi32(odd, _mm256_madd_epi16(widened(a, at + 16), widened(b, at + 16)));
            at += 32;
        }
        if at + 16 <= n {
            even = _mm256_add_epi32(even, _mm256_madd_epi16(widened(a, at), widened(b, at)));
            at += 16;
        }
        let sum = _mm256_add_epi32(even, odd);
        let sum = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256::<1>(sum));
        let sum = _mm_add_epi32(sum, _mm_shuffle_epi32::<0b01_00_11_10>(sum));
        let sum = _mm_add_epi32(sum, _mm_shuffle_epi32::<0b10_11_00_01>(sum));
        let tail: i32 = a[at..n].iter().zip(&b[at..n]).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
        _mm_cvtsi128_si32(sum) + tail
    }
}

/// `vector` as `i8`s appended to `out`, and the scale that maps them back (`x ≈ q × scale`):
/// the largest magnitude becomes ±127. A zero vector is all zeros with scale 0.
pub(crate) fn quantise(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        out.extend(std::iter::repeat_n(0i8, vector.len()));
        return 0.0;
    }
    let scale = largest / 127.0;
    out.extend(vector.iter().map(|x| nearest((x / scale).clamp(-127.0, 127.0)) as i8));
    scale
}

/// `x` rounded to the nearest integer, ties to even, for |x| < 2^22: adding 1.5 × 2^23 leaves
/// no bits for a fraction, so the addition itself rounds. Unlike `f32::round` (a library call
/// per number on the baseline x86-64 target) it vectorises; a boot quantises every stored
/// sentence vector with it.
#[inline]
fn nearest(x: f32) -> f32 {
    const SHIFT: f32 = 12_582_912.0;
    (x + SHIFT) - SHIFT
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whichever kernel the CPU gets computes the exact integer dot product, tails and
    /// extremes included.
    #[test]
    fn nearest_rounds_to_the_nearest_integer_and_ties_to_even() {
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.49, 0.0),
            (0.5, 0.0),
            (0.51, 1.0),
            (1.5, 2.0),
            (2.5, 2.0),
            (-0.51, -1.0),
            (-1.5, -2.0),
            (126.6, 127.0),
            (-127.0, -127.0),
        ] {
            assert_eq!(nearest(x), want, "{x}");
        }
        // Away from ties it is `round`, over the whole range a scale maps to.
        for step in -127_000..=127_000 {
            let x = step as f32 / 1000.0 + 0.0003;
            assert_eq!(nearest(x), x.round(), "{x}");
        }
    }

    #[test]
    fn the_chosen_i8_kernel_is_exact() {
        let kernel = dot_i8_kernel();
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 48, 49, 384, 385, 1024] {
            let a: Vec<i8> = (0..len).map(|i| [127i8, -127, -128, 3, 0][i % 5]).collect();
            let b: Vec<i8> = (0..len).map(|i| [-128i8, -127, 127, 7, 1][(i * 3) % 5]).collect();
            let exact: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            assert_eq!((kernel(&a, &b), dot_i8(&a, &b)), (exact, exact), "length {len}");
        }
    }

    #[test]
    fn quantised_vectors_map_back_within_half_a_step() {
        let v = [0.6f32, -0.8, 0.0, 0.05];
        let mut q = Vec::new();
        let scale = quantise(&v, &mut q);
        assert_eq!(q[1], -127);
        for (x, q) in v.iter().zip(&q) {
            assert!((x - f32::from(*q) * scale).abs() <= scale / 2.0 + f32::EPSILON);
        }
        let mut zeros = Vec::new();
        assert_eq!((quantise(&[0.0; 3], &mut zeros), zeros), (0.0, vec![0i8; 3]));
    }
}
