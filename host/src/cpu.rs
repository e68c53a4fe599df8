//! Random inputs and the CPU reference product.
//!
//! The reference accumulates in f64, so its own rounding error (about 1e-16 relative) is far
//! below anything an fp32 kernel can reach: differences are the kernel's. Alongside `A·B` it
//! computes `|A|·|B|`, which bounds the rounding error of *any* fp32 summation order (see
//! [`crate::verify`]).

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
