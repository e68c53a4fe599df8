//! Random inputs and the CPU reference product.
//!
//! The reference accumulates in f64, so its own rounding error (about 1e-16 relative) is far
//! below anything an fp32 kernel can reach: differences are the kernel's. Alongside `A·B` it
//! computes `|A|·|B|`, which bounds the rounding error of *any* fp32 summation order (see
//! [`crate::check::verify`]).

use crate::GemmShape;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// Rows of C one task computes: each row of B fetched from memory serves this many rows.
const ROWS_PER_TASK: usize = 8;
/// Columns of C handled at once, so the f64 accumulators stay in the core's cache.
const COLS_PER_PASS: usize = 256;
/// Elements generated per random stream (streams run in parallel, each seeded from `seed`).
const RANDOM_CHUNK: usize = 1 << 16;

/// `len` values drawn uniformly from [-1, 1), reproducible from `seed` whatever the number of
/// threads. Never zeros: zero inputs hide unwritten outputs and wrong indexing.
pub fn random_matrix(len: usize, seed: u64) -> Vec<f32> {
    let mut values = vec![0.0f32; len];
    values
        .par_chunks_mut(RANDOM_CHUNK)
        .enumerate()
        .for_each(|(chunk, out)| {
            let mut rng =
                SmallRng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for v in out.iter_mut() {
                *v = rng.random_range(-1.0f32..1.0);
            }
        });
    values
}

/// The exact-as-possible product and the magnitude product of one GEMM.
#[derive(Clone, Debug)]
pub struct Reference {
    /// `A·B`, accumulated in f64, row-major m×n.
    pub product: Vec<f64>,
    /// `|A|·|B|`, row-major m×n: scales the rounding-error bound of each element.
    pub magnitude: Vec<f64>,
}

/// `A·B` and `|A|·|B|` in f64 for row-major `a` (m×k) and `b` (k×n), on all cores.
///
/// Panics if the buffers do not match `shape`.
pub fn reference_gemm(a: &[f32], b: &[f32], shape: &GemmShape) -> Reference {
    let GemmShape { m, n, k } = *shape;
    assert_eq!(a.len(), m * k, "A must be m×k");
    assert_eq!(b.len(), k * n, "B must be k×n");
    let mut product = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    product
        .par_chunks_mut(ROWS_PER_TASK * n)
        .zip(magnitude.par_chunks_mut(ROWS_PER_TASK * n))
        .enumerate()
        .for_each(|(task, (product_rows, magnitude_rows))| {
            let first_row = task * ROWS_PER_TASK;
            let rows = product_rows.len() / n;
            for first_col in (0..n).step_by(COLS_PER_PASS) {
                let width = COLS_PER_PASS.min(n - first_col);
                let mut sum = vec![0.0f64; rows * width];
                let mut abs_sum = vec![0.0f64; rows * width];
                for p in 0..k {
                    let b_row = &b[p * n + first_col..p * n + first_col + width];
                    for r in 0..rows {
                        let x = a[(first_row + r) * k + p] as f64;
                        let sum_row = &mut sum[r * width..(r + 1) * width];
                        let abs_row = &mut abs_sum[r * width..(r + 1) * width];
                        for ((s, t), &y) in sum_row.iter_mut().zip(abs_row.iter_mut()).zip(b_row) {
                            let y = y as f64;
                            *s += x * y;
                            *t += (x * y).abs();
                        }
                    }
                }
                for r in 0..rows {
                    let out = r * n + first_col..r * n + first_col + width;
                    product_rows[out.clone()].copy_from_slice(&sum[r * width..(r + 1) * width]);
                    magnitude_rows[out].copy_from_slice(&abs_sum[r * width..(r + 1) * width]);
                }
            }
        });
    Reference { product, magnitude }
}

/// Outputs of C one task of [`reference_gemm_nk`] computes.
const OUTPUTS_PER_TASK: usize = 64;

/// `A·Bᵀ` and `|A|·|Bᵀ|` in f64 for row-major `a` (m×k) and `b_nk` (n×k: B stored `[n, k]`, as
/// an `nn.Linear` weight), on all cores. Each output is the dot product of a row of A and a
/// row of `b_nk`, both read contiguously; the outputs are spread over the cores in runs of
/// 64, so a single row of A (m = 1) still uses every core.
///
/// Panics if the buffers do not match `shape`.
pub fn reference_gemm_nk(a: &[f32], b_nk: &[f32], shape: &GemmShape) -> Reference {
    let GemmShape { m, n, k } = *shape;
    assert_eq!(a.len(), m * k, "A must be m×k");
    assert_eq!(b_nk.len(), n * k, "B must be n×k");
    let mut product = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    product
        .par_chunks_mut(OUTPUTS_PER_TASK)
        .zip(magnitude.par_chunks_mut(OUTPUTS_PER_TASK))
        .enumerate()
        .for_each(|(task, (products, magnitudes))| {
            let first = task * OUTPUTS_PER_TASK;
            for (offset, (p, g)) in products.iter_mut().zip(magnitudes).enumerate() {
                let (row, col) = ((first + offset) / n, (first + offset) % n);
                let a_row = &a[row * k..(row + 1) * k];
                let b_row = &b_nk[col * k..(col + 1) * k];
                let (mut sum, mut abs_sum) = (0.0f64, 0.0f64);
                for (&x, &y) in a_row.iter().zip(b_row) {
                    let term = x as f64 * y as f64;
                    sum += term;
                    abs_sum += term.abs();
                }
                *p = sum;
                *g = abs_sum;
            }
        });
    Reference { product, magnitude }
}

/// The reference for `activation(alpha·A·B + beta·C_in)` from the plain product's reference.
///
/// The returned magnitude is `|alpha|·|A|·|B| + |beta|·|C_in|`: the result is a dot product of
/// length k + 1 (the `beta·c` term is one more product) scaled by alpha, and a leaky ReLU with
/// `|slope| ≤ 1` shrinks errors, so `γ_{k+3}` times this magnitude bounds the fp32 error
/// (see [`crate::check::verify`]; pass `k + 3` there).
pub fn epilogue_reference(
    plain: &Reference,
    c_in: &[f32],
    alpha: f32,
    beta: f32,
    leaky_slope: Option<f32>,
) -> Reference {
    assert_eq!(
        plain.product.len(),
        c_in.len(),
        "C_in must match the product"
    );
    let (alpha, beta) = (alpha as f64, beta as f64);
    let activate = |x: f64| match leaky_slope {
        Some(slope) if x <= 0.0 => slope as f64 * x,
        _ => x,
    };
    let product = plain
        .product
        .iter()
        .zip(c_in)
        .map(|(&p, &c)| activate(alpha * p + beta * c as f64))
        .collect();
    let magnitude = plain
        .magnitude
        .iter()
        .zip(c_in)
        .map(|(&mag, &c)| alpha.abs() * mag + (beta * c as f64).abs())
        .collect();
    Reference { product, magnitude }
}

/// The textbook triple loop in f64, single-threaded: slow, obviously right, used to test
/// [`reference_gemm`].
pub fn naive_gemm(a: &[f32], b: &[f32], shape: &GemmShape) -> Vec<f64> {
    let GemmShape { m, n, k } = *shape;
    let mut c = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|p| a[i * k + p] as f64 * b[p * n + j] as f64)
                .sum();
        }
    }
    c
}

/// Multiply-adds the CPU reference can do per second per core, roughly (measured on this
/// project's 2-core machines); used to decide when the reference would take too long.
pub const REFERENCE_MACS_PER_CORE_SECOND: f64 = 1.0e9;

/// Estimated seconds [`reference_gemm`] needs for `shape` on this machine.
pub fn reference_seconds(shape: &GemmShape) -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
    shape.m as f64 * shape.n as f64 * shape.k as f64 / (REFERENCE_MACS_PER_CORE_SECOND * cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: usize, n: usize, k: usize) -> GemmShape {
        GemmShape::new(m, n, k).expect("valid test shape")
    }

    fn abs_all(values: &[f32]) -> Vec<f32> {
        values.iter().map(|v| v.abs()).collect()
    }

    /// Checks `reference_gemm` against the triple loop: the product, and the magnitude against
    /// the triple loop on |A| and |B|.
    fn check_against_naive(m: usize, n: usize, k: usize, seed: u64) {
        let s = shape(m, n, k);
        let a = random_matrix(m * k, seed);
        let b = random_matrix(k * n, seed.wrapping_add(1));
        let reference = reference_gemm(&a, &b, &s);
        let naive = naive_gemm(&a, &b, &s);
        let naive_magnitude = naive_gemm(&abs_all(&a), &abs_all(&b), &s);
        assert_eq!(reference.product.len(), m * n);
        assert_eq!(reference.magnitude.len(), m * n);
        for i in 0..m * n {
            let (row, col) = (i / n, i % n);
            // Both sum exact f64 products of f32 values; allow for a different order anyway.
            let bound = 1e-12 * naive_magnitude[i].max(1e-300);
            assert!(
                (reference.product[i] - naive[i]).abs() <= bound,
                "{s}: product[{row}][{col}] = {} but the triple loop gives {}",
                reference.product[i],
                naive[i]
            );
            assert!(
                (reference.magnitude[i] - naive_magnitude[i]).abs() <= bound,
                "{s}: magnitude[{row}][{col}] = {} but |A|·|B| gives {}",
                reference.magnitude[i],
                naive_magnitude[i]
            );
            assert!(
                reference.magnitude[i] >= reference.product[i].abs(),
                "{s}: |A|·|B| must bound |A·B| at [{row}][{col}]"
            );
        }
    }

    #[test]
    fn reference_matches_naive_on_small_and_ragged_shapes() {
        let shapes = [
            (1, 1, 1),
            (7, 5, 3),
            (33, 70, 17),
            // Rows not a multiple of ROWS_PER_TASK, columns past one COLS_PER_PASS.
            (9, 300, 5),
            (17, 513, 4),
            (ROWS_PER_TASK, COLS_PER_PASS, 2),
            (ROWS_PER_TASK + 1, COLS_PER_PASS + 1, 3),
            (1, 257, 31),
            (40, 1, 64),
        ];
        for (index, &(m, n, k)) in shapes.iter().enumerate() {
            check_against_naive(m, n, k, 100 + 10 * index as u64);
        }
    }

    /// `b` (k×n) stored as `[n, k]`.
    fn transposed(b: &[f32], k: usize, n: usize) -> Vec<f32> {
        (0..n * k).map(|i| b[(i % k) * n + i / k]).collect()
    }

    #[test]
    fn nk_reference_matches_the_kn_one() {
        // Ragged counts of outputs per task, one row, one column, long k.
        for (index, &(m, n, k)) in [
            (1, 1, 1),
            (3, 5, 7),
            (1, 300, 33),
            (2, OUTPUTS_PER_TASK + 1, 9),
            (70, 1, 200),
            (17, 23, 64),
        ]
        .iter()
        .enumerate()
        {
            let s = shape(m, n, k);
            let a = random_matrix(m * k, 500 + index as u64);
            let b = random_matrix(k * n, 600 + index as u64);
            let kn = reference_gemm(&a, &b, &s);
            let nk = reference_gemm_nk(&a, &transposed(&b, k, n), &s);
            for i in 0..m * n {
                let bound = 1e-12 * kn.magnitude[i].max(1e-300);
                assert!((kn.product[i] - nk.product[i]).abs() <= bound, "{s}: {i}");
                assert!(
                    (kn.magnitude[i] - nk.magnitude[i]).abs() <= bound,
                    "{s}: {i}"
                );
            }
        }
        // [1 2; 3 4] · [5 6; 7 8] with B stored [n, k] = [5 7; 6 8].
        let r = reference_gemm_nk(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 7.0, 6.0, 8.0],
            &shape(2, 2, 2),
        );
        assert_eq!(r.product, vec![19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    #[should_panic(expected = "B must be n×k")]
    fn nk_reference_rejects_mismatched_b() {
        reference_gemm_nk(&[1.0; 4], &[1.0; 7], &shape(2, 3, 2));
    }

    #[test]
    fn hand_computed_two_by_two() {
        let s = shape(2, 2, 2);
        // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]
        let a = [1.0f32, 2.0, 3.0, 4.0];
        let b = [5.0f32, 6.0, 7.0, 8.0];
        let reference = reference_gemm(&a, &b, &s);
        assert_eq!(reference.product, vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(reference.magnitude, vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(naive_gemm(&a, &b, &s), vec![19.0, 22.0, 43.0, 50.0]);

        // With signs: [1 -2; 3 4] · [5 6; -7 8]
        let a = [1.0f32, -2.0, 3.0, 4.0];
        let b = [5.0f32, 6.0, -7.0, 8.0];
        let reference = reference_gemm(&a, &b, &s);
        assert_eq!(reference.product, vec![19.0, -10.0, -13.0, 50.0]);
        assert_eq!(reference.magnitude, vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(naive_gemm(&a, &b, &s), vec![19.0, -10.0, -13.0, 50.0]);
    }

    #[test]
    fn hand_computed_non_square() {
        // A is 2×3, B is 3×1: [1 2 3; -1 0 0.5] · [2; -1; 4] = [12; 0]
        let s = shape(2, 1, 3);
        let a = [1.0f32, 2.0, 3.0, -1.0, 0.0, 0.5];
        let b = [2.0f32, -1.0, 4.0];
        let reference = reference_gemm(&a, &b, &s);
        assert_eq!(reference.product, vec![12.0, 0.0]);
        assert_eq!(reference.magnitude, vec![16.0, 4.0]);
        // 1×1×1
        let reference = reference_gemm(&[-3.0], &[0.5], &shape(1, 1, 1));
        assert_eq!(reference.product, vec![-1.5]);
        assert_eq!(reference.magnitude, vec![1.5]);
    }

    #[test]
    fn reference_accumulates_in_f64() {
        // 1 + 2⁻³⁰ − 1 rounds to 0 in f32 but not in f64.
        let tiny = (2.0f64).powi(-30) as f32;
        let s = shape(1, 1, 3);
        let reference = reference_gemm(&[1.0, tiny, -1.0], &[1.0, 1.0, 1.0], &s);
        assert_eq!(reference.product, vec![tiny as f64]);
    }

    #[test]
    #[should_panic(expected = "A must be m×k")]
    fn reference_rejects_mismatched_a() {
        reference_gemm(&[1.0; 5], &[1.0; 6], &shape(2, 3, 2));
    }

    #[test]
    #[should_panic(expected = "B must be k×n")]
    fn reference_rejects_mismatched_b() {
        reference_gemm(&[1.0; 4], &[1.0; 7], &shape(2, 3, 2));
    }

    #[test]
    fn random_matrix_is_reproducible_and_in_range() {
        // More than one RANDOM_CHUNK, so several parallel streams are involved.
        let len = 2 * RANDOM_CHUNK + 123;
        let first = random_matrix(len, 42);
        let second = random_matrix(len, 42);
        assert_eq!(first.len(), len);
        assert_eq!(first, second, "the same seed must give the same matrix");
        assert!(
            first.iter().all(|&v| (-1.0..1.0).contains(&v)),
            "values must lie in [-1, 1)"
        );
        assert!(first.iter().any(|&v| v != first[0]), "values must vary");
        let zeros = first.iter().filter(|&&v| v == 0.0).count();
        assert!(zeros * 1000 < len, "{zeros} zeros out of {len}");
        assert!(first.iter().any(|&v| v < -0.5) && first.iter().any(|&v| v > 0.5));
        let mean = first.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
        assert!(mean.abs() < 0.02, "mean {mean} is far from 0");
        // The parallel streams must not repeat each other.
        assert_ne!(
            first[..RANDOM_CHUNK],
            first[RANDOM_CHUNK..2 * RANDOM_CHUNK],
            "chunks must draw from different streams"
        );
    }

    #[test]
    fn random_matrix_depends_on_seed() {
        let a = random_matrix(1000, 1);
        let b = random_matrix(1000, 2);
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same < 10, "seeds 1 and 2 agree on {same} of 1000 values");
        // A prefix of a longer matrix is the shorter matrix (generation is per chunk).
        assert_eq!(random_matrix(10, 7)[..], random_matrix(20, 7)[..10]);
        assert!(random_matrix(0, 3).is_empty());
    }

    #[test]
    fn reference_time_estimate_scales_with_work() {
        let small = reference_seconds(&shape(100, 100, 100));
        let large = reference_seconds(&shape(200, 200, 200));
        assert!(small > 0.0);
        assert!((large / small - 8.0).abs() < 1e-9);
    }
}
