//! Comparing a GPU result with a reference, and the tolerance it must meet.
//!
//! Two checks, both needed:
//!
//! 1. **Relative Frobenius error** `‖C − R‖ / ‖R‖ ≤ 16 · u · √k`, with `u = 2⁻²⁴` the fp32 unit
//!    roundoff. Each output is a sum of k rounded fp32 operations; with inputs of random sign the
//!    rounding errors behave like a random walk, so the typical relative error is about `u·√k`
//!    (about 4e-6 at k = 4096). The factor 16 leaves room for any summation order and still
//!    catches every systematic mistake: one missing 16-wide k-tile out of 4096 already gives
//!    `√(16/4096) ≈ 6%`, a thousand times over the bound.
//! 2. **Every element within the proven bound** `|c − r| ≤ γ_k · (|A|·|B|)`, with
//!    `γ_k = k·u / (1 − k·u)` (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1):
//!    no fp32 dot product of length k, in any order, with or without fma, can be further off.
//!    This is what catches a single wrong, stale or unwritten (NaN-poisoned) element.
//!
//! When the reference is cuBLAS (fp32 itself) rather than the f64 CPU product, both sides carry
//! rounding error: the Frobenius bound doubles and the elementwise check needs `|A|·|B|`, which
//! only the CPU computes, so it becomes "every element finite".

use serde::{Deserialize, Serialize};

/// The fp32 unit roundoff, `2⁻²⁴`.
pub const FP32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;

/// Where the reference result came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceKind {
    /// The CPU product with f64 accumulation.
    CpuF64,
    /// cuBLAS SGEMM with TF32 off (for shapes too large for the CPU).
    Cublas,
}

impl ReferenceKind {
    /// Short label for tables.
    pub fn label(&self) -> &'static str {
        match self {
            ReferenceKind::CpuF64 => "cpu-f64",
            ReferenceKind::Cublas => "cublas",
        }
    }
}

/// The outcome of one comparison.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// `‖C − R‖_F / ‖R‖_F`.
    pub rel_error: f64,
    /// `max |c − r|` over all elements.
    pub max_abs_error: f64,
    /// The bound `rel_error` had to meet.
    pub tolerance: f64,
    /// Elements outside the elementwise bound (NaN or Inf counts as outside).
    pub elements_out_of_bound: usize,
    /// What the result was compared with.
    pub reference: ReferenceKind,
    /// Both checks passed.
    pub passed: bool,
}

/// The relative Frobenius tolerance for fp32 accumulation over length `k` (see the module docs).
pub fn fp32_tolerance(k: usize) -> f64 {
    16.0 * FP32_UNIT_ROUNDOFF * (k as f64).sqrt()
}

/// `γ_k = k·u/(1 − k·u)`, or infinity where `k·u ≥ 1` and the bound says nothing.
pub fn gamma(k: usize, unit_roundoff: f64) -> f64 {
    let ku = k as f64 * unit_roundoff;
    if ku < 1.0 {
        ku / (1.0 - ku)
    } else {
        f64::INFINITY
    }
}

/// Compares `c` with the f64 CPU reference `product`, elementwise against `γ_k·magnitude`.
pub fn compare_with_cpu(c: &[f32], product: &[f64], magnitude: &[f64], k: usize) -> Verification {
    assert_eq!(
        c.len(),
        product.len(),
        "result and reference differ in length"
    );
    assert_eq!(
        c.len(),
        magnitude.len(),
        "result and magnitudes differ in length"
    );
    let gamma = gamma(k, FP32_UNIT_ROUNDOFF);
    let out_of_bound = c
        .iter()
        .zip(product.iter().zip(magnitude))
        .filter(|&(&x, (&r, &mag))| {
            let err = (x as f64 - r).abs();
            !(err <= gamma * mag) // NaN compares false, so it counts as out of bound
        })
        .count();
    finish(
        c,
        product,
        out_of_bound,
        fp32_tolerance(k),
        ReferenceKind::CpuF64,
    )
}

/// Compares `c` with another fp32 result (cuBLAS): doubled tolerance, every element finite.
pub fn compare_with_fp32(c: &[f32], reference: &[f32], k: usize) -> Verification {
    assert_eq!(
        c.len(),
        reference.len(),
        "result and reference differ in length"
    );
    let product: Vec<f64> = reference.iter().map(|&r| r as f64).collect();
    let non_finite = c.iter().filter(|x| !x.is_finite()).count();
    finish(
        c,
        &product,
        non_finite,
        2.0 * fp32_tolerance(k),
        ReferenceKind::Cublas,
    )
}

fn finish(
    c: &[f32],
    reference: &[f64],
    elements_out_of_bound: usize,
    tolerance: f64,
    kind: ReferenceKind,
) -> Verification {
    let mut diff_sq = 0.0f64;
    let mut ref_sq = 0.0f64;
    let mut max_abs_error = 0.0f64;
    for (&x, &r) in c.iter().zip(reference) {
        let err = (x as f64 - r).abs();
        diff_sq += err * err; // a NaN anywhere makes the norm NaN, and NaN never passes
        ref_sq += r * r;
        // f64::max drops NaN; a NaN element must show in the report instead.
        max_abs_error = if err.is_nan() || max_abs_error.is_nan() {
            f64::NAN
        } else {
            max_abs_error.max(err)
        };
    }
    let rel_error = if ref_sq > 0.0 {
        (diff_sq / ref_sq).sqrt()
    } else {
        diff_sq.sqrt()
    };
    let passed = rel_error <= tolerance && elements_out_of_bound == 0;
    Verification {
        rel_error,
        max_abs_error,
        tolerance,
        elements_out_of_bound,
        reference: kind,
        passed,
    }
}
