//! Comparing a GPU result with a reference, and the tolerance it must meet.
//!
//! Two checks, both needed:
//!
//! 1. **Relative Frobenius error** `‖C − R‖ ≤ 16 · u · √k · max(‖R‖, ‖|A|·|B|‖ / √k)`, with
//!    `u = 2⁻²⁴` the fp32 unit roundoff. Each output is a sum of k rounded fp32 operations; with
//!    inputs of random sign the rounding errors behave like a random walk, so the typical error
//!    is about `u·√k` relative to the size of the terms. For random inputs `‖|A|·|B|‖ / √k` is
//!    about `‖R‖` and the test reads `‖C − R‖ / ‖R‖ ≤ 16·u·√k` (about 6e-5 at k = 4096). Where
//!    the outputs nearly cancel (a single dot product, 1×1×k, can land near 0), `‖R‖` says
//!    nothing about the size of the rounding errors and the terms' magnitude takes over. The
//!    factor 16 leaves room for any summation order and still catches every systematic
//!    mistake: one missing 16-wide k-tile out of 4096 already gives `√(16/4096) ≈ 6%`.
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

/// How a precision's arithmetic may move a result away from the exact product of the inputs it
/// was given, beyond fp32 accumulation (which every rung has):
///
/// * **Input rounding inside the kernel** (TF32: A and B are cut to 10 mantissa bits: rounded
///   to nearest by v14's `cvt.rna.tf32.f32`, truncated by `wgmma` (v19), which reads the fp32
///   bits and ignores the low 13; truncation's error is below one TF32 ulp, so `u_in = 2⁻¹⁰`
///   covers both). Each product `â·b̂` is then off by at most `(2·u_in + u_in²)·|a·b|`, so the
///   elementwise bound gains `(2·u_in + u_in²)·(|A|·|B|)`. Summed over k, these errors have
///   random signs and cancel like a random walk: relative to the terms' size the Frobenius
///   error is about `u_in`, independent of k, and the tolerance gains `4·u_in` (2⁻⁸ ≈ 0.4%
///   for TF32). A systematic mistake is still far outside: one missing 16-wide k-tile of 4096
///   is a 6% error.
/// * **Output rounding** (fp16 C: `u_out = 2⁻¹¹`, plus fp16's subnormal step `tiny = 2⁻²⁴`
///   for results near 0): one more rounding of each element, `u_out·|r| + tiny`, and `2·u_out`
///   on the Frobenius tolerance.
/// * **Narrow accumulation inside the tensor cores** (FP8 `wgmma` on Hopper: each k32
///   instruction's products are added into accumulators that keep only about 14 significant
///   bits, as the DeepSeek-V3 report measured, and the cut truncates rather than rounds). Each
///   of the `⌈k / step⌉` additions may lose `u_acc` of the running sum, whose size is at most
///   `|A|·|B|`; truncation errors share a sign, so they add up linearly rather than cancel: the
///   elementwise bound and the Frobenius tolerance both gain `⌈k / step⌉ · u_acc` (relative to
///   `|A|·|B|`). With `u_acc = 2⁻¹³` that is 1.6% at k = 4096, while one missing 128-deep
///   k-tile of 4096 is still an 18% Frobenius error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorModel {
    /// Unit roundoff of the rounding the kernel applies to A and B (0: none).
    pub input_unit_roundoff: f64,
    /// Unit roundoff of the output type (0: fp32 output).
    pub output_unit_roundoff: f64,
    /// The output type's smallest subnormal step (0: fp32 output).
    pub output_tiny: f64,
    /// Narrow accumulation in the tensor cores: the unit roundoff of each addition and the k it
    /// adds at once (`None`: fp32 accumulation only).
    pub narrow_accumulation: Option<NarrowAccumulation>,
}

/// The tensor cores' narrow accumulation of [`ErrorModel::narrow_accumulation`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NarrowAccumulation {
    /// The relative error one addition into the accumulators may make.
    pub unit_roundoff: f64,
    /// The k of one addition (one instruction's products).
    pub step_k: usize,
}

impl NarrowAccumulation {
    /// FP8 `wgmma` (m64nNk32) on Hopper: 32 products per addition, about 14 bits kept.
    pub const HOPPER_FP8: NarrowAccumulation = NarrowAccumulation {
        unit_roundoff: 1.0 / 8192.0,
        step_k: 32,
    };

    /// The relative error of a whole dot product of length `k`, linear in the additions.
    pub fn relative_error(&self, k: usize) -> f64 {
        k.div_ceil(self.step_k) as f64 * self.unit_roundoff
    }
}

impl ErrorModel {
    /// fp32 in, fp32 accumulation, fp32 out.
    pub const FP32: ErrorModel = ErrorModel {
        input_unit_roundoff: 0.0,
        output_unit_roundoff: 0.0,
        output_tiny: 0.0,
        narrow_accumulation: None,
    };
    /// fp32 in, cut to TF32 for the tensor cores (rounded to nearest or truncated), fp32
    /// accumulation and out.
    pub const TF32: ErrorModel = ErrorModel {
        input_unit_roundoff: 1.0 / 1024.0,
        output_unit_roundoff: 0.0,
        output_tiny: 0.0,
        narrow_accumulation: None,
    };
    /// fp16 in (exact in the reference), fp32 accumulation, fp16 out.
    pub const FP16: ErrorModel = ErrorModel {
        input_unit_roundoff: 0.0,
        output_unit_roundoff: 1.0 / 2048.0,
        output_tiny: 1.0 / (1u64 << 24) as f64,
        narrow_accumulation: None,
    };

    /// bf16 in (exact in the reference), fp32 accumulation, bf16 out: 8 significant bits
    /// (`u_out = 2⁻⁸`) and the smallest bf16 subnormal, `2⁻¹³³`.
    pub const BF16: ErrorModel = ErrorModel {
        input_unit_roundoff: 0.0,
        output_unit_roundoff: 1.0 / 256.0,
        output_tiny: 1.0 / (1u128 << 127) as f64 / 64.0,
        narrow_accumulation: None,
    };

    /// FP8 in (e4m3 or e5m2, exact in the reference), the tensor cores' narrow accumulation
    /// ([`NarrowAccumulation::HOPPER_FP8`]), fp16 out.
    pub const FP8_TO_FP16: ErrorModel = ErrorModel {
        narrow_accumulation: Some(NarrowAccumulation::HOPPER_FP8),
        ..ErrorModel::FP16
    };

    /// The model for a library call's element type and arithmetic.
    pub fn for_dtype(dtype: crate::DType) -> ErrorModel {
        match dtype {
            crate::DType::F32 => ErrorModel::FP32,
            crate::DType::Tf32 => ErrorModel::TF32,
            crate::DType::F16 => ErrorModel::FP16,
            crate::DType::Bf16 => ErrorModel::BF16,
        }
    }

    /// The model for a rung's precision.
    pub fn for_precision(precision: crate::ladder::rungs::Precision) -> ErrorModel {
        match precision {
            crate::ladder::rungs::Precision::Fp32 => ErrorModel::FP32,
            crate::ladder::rungs::Precision::Tf32 => ErrorModel::TF32,
            crate::ladder::rungs::Precision::Fp16 => ErrorModel::FP16,
            crate::ladder::rungs::Precision::Fp8E4m3 | crate::ladder::rungs::Precision::Fp8E5m2 => {
                ErrorModel::FP8_TO_FP16
            }
        }
    }

    /// Relative error of one product of rounded inputs, `2·u_in + u_in²`.
    fn product_roundoff(&self) -> f64 {
        let u = self.input_unit_roundoff;
        2.0 * u + u * u
    }

    /// Relative error (to `|A|·|B|`) of the narrow accumulation over length `k`; 0 without.
    fn accumulation_error(&self, k: usize) -> f64 {
        self.narrow_accumulation
            .map_or(0.0, |narrow| narrow.relative_error(k))
    }
}

/// Compares `c` with the f64 CPU reference `product`, elementwise against `γ_k·magnitude`.
pub fn compare_with_cpu(c: &[f32], product: &[f64], magnitude: &[f64], k: usize) -> Verification {
    compare_with_model(c, product, magnitude, k, &ErrorModel::FP32)
}

/// Compares a result that was accumulated in fp32 and then rounded to a narrower output type
/// (unit roundoff `output_unit_roundoff`, 2⁻¹¹ for fp16; 0 for fp32 output) with the f64
/// reference: the elementwise bound grows by one output rounding, `u_out·|r|`, plus the
/// output's smallest subnormal step `tiny`, and the Frobenius tolerance by `2·u_out`.
pub fn compare_rounded_output(
    c: &[f32],
    product: &[f64],
    magnitude: &[f64],
    k: usize,
    output_unit_roundoff: f64,
    tiny: f64,
) -> Verification {
    let model = ErrorModel {
        input_unit_roundoff: 0.0,
        output_unit_roundoff,
        output_tiny: tiny,
        narrow_accumulation: None,
    };
    compare_with_model(c, product, magnitude, k, &model)
}

/// Compares `c` with the f64 CPU reference under `model` (see [`ErrorModel`]): every element
/// within `(γ_k + (2u_in + u_in²)(1 + γ_k))·(1 + u_out)·|A||B| + u_out·|r| + tiny`, and the
/// relative Frobenius error within the fp32 tolerance plus `4·u_in` (both scaled as in the
/// module docs) plus `2·u_out`.
pub fn compare_with_model(
    c: &[f32],
    product: &[f64],
    magnitude: &[f64],
    k: usize,
    model: &ErrorModel,
) -> Verification {
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
    let u_out = model.output_unit_roundoff;
    let relative = (gamma + model.product_roundoff() * (1.0 + gamma) + model.accumulation_error(k))
        * (1.0 + u_out);
    let out_of_bound = c
        .iter()
        .zip(product.iter().zip(magnitude))
        .filter(|&(&x, (&r, &mag))| {
            let err = (x as f64 - r).abs();
            let bound = relative * mag + u_out * r.abs() + model.output_tiny;
            // A NaN compares as None, so it counts as out of bound.
            err.partial_cmp(&bound)
                .is_none_or(std::cmp::Ordering::is_gt)
        })
        .count();
    let tolerance =
        (fp32_tolerance(k) + 4.0 * model.input_unit_roundoff + model.accumulation_error(k))
            * frobenius_scale(product, magnitude, k)
            + 2.0 * u_out;
    finish(c, product, out_of_bound, tolerance, ReferenceKind::CpuF64)
}

/// How much looser than `‖R‖` the terms' own magnitude `‖|A|·|B|‖/√k` makes the Frobenius
/// tolerance (at least 1; see the module docs); an all-zero reference leaves only the
/// elementwise bound.
fn frobenius_scale(product: &[f64], magnitude: &[f64], k: usize) -> f64 {
    let reference_norm = product.iter().map(|r| r * r).sum::<f64>().sqrt();
    let magnitude_norm = magnitude.iter().map(|m| m * m).sum::<f64>().sqrt();
    let terms = (k.max(1) as f64).sqrt();
    if reference_norm > 0.0 {
        (magnitude_norm / terms / reference_norm).max(1.0)
    } else {
        f64::INFINITY
    }
}

/// Compares `c` with another fp32 result (cuBLAS): doubled tolerance, every element finite.
pub fn compare_with_fp32(c: &[f32], reference: &[f32], k: usize) -> Verification {
    compare_with_blas(c, reference, k, &ErrorModel::FP32)
}

/// Compares `c`, computed under `model`, with an fp32 cuBLAS result of the same inputs: both
/// carry fp32 rounding (doubled fp32 tolerance), `c` also the model's input and output
/// roundings (`4·u_in + 2·u_out`, with the terms' magnitude assumed about `‖R‖`, as for random
/// inputs); every element must be finite.
pub fn compare_with_blas(
    c: &[f32],
    reference: &[f32],
    k: usize,
    model: &ErrorModel,
) -> Verification {
    assert_eq!(
        c.len(),
        reference.len(),
        "result and reference differ in length"
    );
    let product: Vec<f64> = reference.iter().map(|&r| r as f64).collect();
    let non_finite = c.iter().filter(|x| !x.is_finite()).count();
    let tolerance = 2.0 * fp32_tolerance(k)
        + 4.0 * model.input_unit_roundoff
        + model.accumulation_error(k)
        + 2.0 * model.output_unit_roundoff;
    finish(c, &product, non_finite, tolerance, ReferenceKind::Cublas)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A single dot product whose terms cancel: the fp32 result (sequential fma, as the rungs
    /// compute it) is as good as fp32 allows, so it must pass; dropping one term must not.
    #[test]
    fn cancelling_dot_product_passes_and_a_missing_term_fails() {
        use crate::check::cpu::random_matrix;
        for seed in 0..200u64 {
            let k = 581;
            let a = random_matrix(k, seed);
            let mut b = random_matrix(k, seed + 1000);
            // Make the exact dot product tiny by adjusting the last term.
            let partial: f64 = (0..k - 1).map(|i| a[i] as f64 * b[i] as f64).sum();
            b[k - 1] = (-(partial - 1e-4) / a[k - 1] as f64) as f32;
            let exact: f64 = (0..k).map(|i| a[i] as f64 * b[i] as f64).sum();
            let magnitude: f64 = (0..k).map(|i| (a[i] as f64 * b[i] as f64).abs()).sum();
            let fp32 = (0..k).fold(0.0f32, |acc, i| a[i].mul_add(b[i], acc));
            let v = compare_with_cpu(&[fp32], &[exact], &[magnitude], k);
            assert!(
                v.passed,
                "seed {seed}: a correct fp32 dot product failed: {v:?}"
            );
            let missing = (0..k - 1).fold(0.0f32, |acc, i| a[i].mul_add(b[i], acc));
            let v = compare_with_cpu(&[missing], &[exact], &[magnitude], k);
            assert!(
                !v.passed,
                "seed {seed}: a dot product missing a term passed: {v:?}"
            );
        }
    }
    use crate::GemmShape;
    use crate::check::cpu::{random_matrix, reference_gemm};

    const U: f64 = FP32_UNIT_ROUNDOFF;

    /// Random A·B for `shape`: the f64 reference and its magnitudes, and the reference rounded
    /// to fp32 (the best result an fp32 kernel can return).
    fn case(m: usize, n: usize, k: usize, seed: u64) -> (Vec<f32>, Vec<f64>, Vec<f64>) {
        let shape = GemmShape::new(m, n, k).unwrap();
        let a = random_matrix(m * k, seed);
        let b = random_matrix(k * n, seed + 1);
        let reference = reference_gemm(&a, &b, &shape);
        let rounded = reference.product.iter().map(|&x| x as f32).collect();
        (rounded, reference.product, reference.magnitude)
    }

    #[test]
    fn unit_roundoff_is_two_to_the_minus_24() {
        assert_eq!(FP32_UNIT_ROUNDOFF, 2f64.powi(-24));
        assert_eq!(FP32_UNIT_ROUNDOFF, f32::EPSILON as f64 / 2.0);
    }

    #[test]
    fn tolerance_values() {
        assert_eq!(fp32_tolerance(1), 2f64.powi(-20));
        assert_eq!(fp32_tolerance(4), 2f64.powi(-19));
        assert_eq!(fp32_tolerance(4096), 2f64.powi(-14));
        let t = fp32_tolerance(1000);
        assert!((t - 16.0 * U * 1000f64.sqrt()).abs() < 1e-18);
        assert!(fp32_tolerance(2) > fp32_tolerance(1));
    }

    #[test]
    fn gamma_values() {
        assert_eq!(gamma(1, U), U / (1.0 - U));
        assert_eq!(gamma(3, 0.25), 3.0); // 0.75 / 0.25
        assert_eq!(gamma(1 << 23, U), 1.0); // k·u = 1/2
        let ku = 4096.0 * U;
        assert_eq!(gamma(4096, U), ku / (1.0 - ku));
        assert!(
            (gamma(4096, U) - ku).abs() < 1e-3 * ku,
            "γ ≈ k·u for small k·u"
        );
        // k·u ≥ 1: the bound says nothing.
        assert_eq!(gamma(1 << 24, U), f64::INFINITY);
        assert_eq!(gamma((1 << 24) + 1, U), f64::INFINITY);
        assert_eq!(gamma(2, 0.5), f64::INFINITY);
        assert_eq!(gamma(0, U), 0.0);
    }

    #[test]
    fn rounded_reference_passes() {
        for &(m, n, k) in &[(1, 1, 1), (7, 5, 3), (33, 70, 17), (64, 48, 300)] {
            let (c, product, magnitude) = case(m, n, k, 11);
            let v = compare_with_cpu(&c, &product, &magnitude, k);
            assert!(v.passed, "{m}×{n}×{k}: {v:?}");
            assert_eq!(v.elements_out_of_bound, 0);
            assert_eq!(v.reference, ReferenceKind::CpuF64);
            assert_eq!(v.tolerance, fp32_tolerance(k));
            // Rounding to fp32 is off by at most u relative, per element and in norm.
            assert!(v.rel_error <= U, "{v:?}");
            assert!(v.max_abs_error.is_finite());
        }
    }

    #[test]
    fn one_element_far_off_fails() {
        let (mut c, product, magnitude) = case(40, 30, 64, 3);
        c[17] += 1.0;
        let v = compare_with_cpu(&c, &product, &magnitude, 64);
        assert!(!v.passed, "{v:?}");
        assert_eq!(v.elements_out_of_bound, 1);
        assert!((v.max_abs_error - 1.0).abs() < 1e-3, "{v:?}");
    }

    #[test]
    fn elementwise_bound_catches_what_the_norm_misses() {
        // One element just outside γ_k·(|A|·|B|): too small to move the Frobenius norm past its
        // tolerance, but it must still fail.
        let k = 256;
        let (mut c, product, magnitude) = case(128, 128, k, 5);
        let i = 1234;
        let bound = gamma(k, U) * magnitude[i];
        c[i] = (product[i] + 3.0 * bound) as f32;
        let v = compare_with_cpu(&c, &product, &magnitude, k);
        assert!(
            v.rel_error <= v.tolerance,
            "the test needs a small norm error: {v:?}"
        );
        assert_eq!(v.elements_out_of_bound, 1, "{v:?}");
        assert!(!v.passed);
    }

    #[test]
    fn norm_catches_what_the_elementwise_bound_misses() {
        // product = [3, 4] (norm 5), result [3, 3]: relative error exactly 1/5. With k = 10⁶,
        // γ_k ≈ 0.06 and magnitudes of 1000·|r| (consistent with random terms: ‖|A||B|‖/√k =
        // ‖R‖), every element is inside its bound; only the norm check fails.
        let product = [3.0f64, 4.0];
        let magnitude = [3000.0f64, 4000.0];
        let k = 1_000_000;
        let v = compare_with_cpu(&[3.0, 3.0], &product, &magnitude, k);
        assert_eq!(v.rel_error, 0.2);
        assert_eq!(v.max_abs_error, 1.0);
        assert_eq!(v.elements_out_of_bound, 0);
        assert!(!v.passed, "{v:?}");

        let v = compare_with_cpu(&[3.0, 4.0], &product, &magnitude, k);
        assert_eq!(v.rel_error, 0.0);
        assert_eq!(v.max_abs_error, 0.0);
        assert!(v.passed);
    }

    #[test]
    fn relative_error_hand_example() {
        // diff = [0, 0.5, -0.5, 0] → ‖diff‖ = √0.5; ‖R‖ = √(1+4+9+16) = √30.
        let product = [1.0f64, 2.0, 3.0, 4.0];
        let magnitude = [10.0f64; 4];
        let c = [1.0f32, 2.5, 2.5, 4.0];
        let v = compare_with_cpu(&c, &product, &magnitude, 2);
        let expected = (0.5f64 / 30.0).sqrt();
        assert!((v.rel_error - expected).abs() < 1e-15, "{v:?}");
        assert_eq!(v.max_abs_error, 0.5);
        // |0.5| > γ_2·10 ≈ 1.2e-6 for two elements.
        assert_eq!(v.elements_out_of_bound, 2);
        assert!(!v.passed);
    }

    #[test]
    fn zero_reference_uses_absolute_norm() {
        let zeros = [0.0f64; 3];
        let v = compare_with_cpu(&[0.0, 0.0, 0.0], &zeros, &zeros, 5);
        assert!(v.passed, "{v:?}");
        assert_eq!(v.rel_error, 0.0);
        let v = compare_with_cpu(&[0.0, 3.0, 4.0], &zeros, &zeros, 5);
        assert_eq!(v.rel_error, 5.0);
        assert!(!v.passed);
    }

    #[test]
    fn nan_element_fails() {
        let (mut c, product, magnitude) = case(16, 16, 32, 9);
        c[5] = f32::NAN;
        let v = compare_with_cpu(&c, &product, &magnitude, 32);
        assert!(!v.passed);
        assert!(v.rel_error.is_nan(), "{v:?}");
        assert!(v.max_abs_error.is_nan(), "a NaN element must show: {v:?}");
        assert_eq!(v.elements_out_of_bound, 1);
        // NaN first or last must not be dropped by the max either.
        for i in [0, c.len() - 1] {
            let (mut c, ..) = case(16, 16, 32, 9);
            c[i] = f32::NAN;
            let v = compare_with_cpu(&c, &product, &magnitude, 32);
            assert!(!v.passed && v.max_abs_error.is_nan(), "NaN at {i}: {v:?}");
        }
    }

    #[test]
    fn poisoned_output_fails() {
        // What the harness leaves in C when a kernel writes nothing: all bits set.
        let (c, product, magnitude) = case(8, 8, 8, 1);
        let poison = vec![f32::from_bits(u32::MAX); c.len()];
        let v = compare_with_cpu(&poison, &product, &magnitude, 8);
        assert!(!v.passed);
        assert_eq!(v.elements_out_of_bound, c.len());
    }

    #[test]
    fn infinite_element_fails() {
        for bad in [f32::INFINITY, f32::NEG_INFINITY] {
            let (mut c, product, magnitude) = case(16, 16, 32, 2);
            c[3] = bad;
            let v = compare_with_cpu(&c, &product, &magnitude, 32);
            assert!(!v.passed, "{bad}: {v:?}");
            assert_eq!(v.elements_out_of_bound, 1);
        }
    }

    #[test]
    fn fp32_comparison_doubles_tolerance_and_needs_finite_values() {
        let (c, ..) = case(20, 20, 100, 4);
        let v = compare_with_fp32(&c, &c, 100);
        assert!(v.passed, "{v:?}");
        assert_eq!(v.tolerance, 2.0 * fp32_tolerance(100));
        assert_eq!(v.reference, ReferenceKind::Cublas);
        assert_eq!(v.rel_error, 0.0);

        // An error between one and two single tolerances passes only here.
        let mut scaled: Vec<f32> = c.iter().map(|&x| x * (1.0 + 1.5e-5)).collect();
        let tol = fp32_tolerance(100); // about 9.5e-6
        let v = compare_with_fp32(&scaled, &c, 100);
        assert!(v.rel_error > tol && v.rel_error <= 2.0 * tol, "{v:?}");
        assert!(v.passed, "{v:?}");

        scaled[7] = f32::NAN;
        let v = compare_with_fp32(&scaled, &c, 100);
        assert!(!v.passed);
        assert_eq!(v.elements_out_of_bound, 1);

        let mut inf = c.clone();
        inf[0] = f32::INFINITY;
        let v = compare_with_fp32(&inf, &c, 100);
        assert!(!v.passed);
        assert_eq!(v.elements_out_of_bound, 1);

        let mut off = c.clone();
        off[0] += 100.0;
        assert!(!compare_with_fp32(&off, &c, 100).passed);
    }

    /// The bf16 model: the exact product rounded to bf16 (what a kernel that accumulates in
    /// fp32 and rounds once returns, at best) passes; one k-term left out fails.
    #[test]
    fn bf16_output_rounding_passes_and_a_missing_term_fails() {
        assert_eq!(ErrorModel::BF16.output_tiny, 2f64.powi(-133));
        assert_eq!(ErrorModel::for_dtype(crate::DType::Bf16), ErrorModel::BF16);
        assert_eq!(ErrorModel::for_dtype(crate::DType::Tf32), ErrorModel::TF32);
        let (m, n, k) = (24, 40, 96);
        let shape = GemmShape::new(m, n, k).unwrap();
        let bf16 = |v: Vec<f32>| -> Vec<f32> {
            v.into_iter()
                .map(|x| half::bf16::from_f32(x).to_f32())
                .collect()
        };
        let a = bf16(random_matrix(m * k, 21));
        let b = bf16(random_matrix(k * n, 22));
        let reference = reference_gemm(&a, &b, &shape);
        let rounded: Vec<f32> = reference
            .product
            .iter()
            .map(|&x| half::bf16::from_f64(x).to_f32())
            .collect();
        let v = compare_with_model(
            &rounded,
            &reference.product,
            &reference.magnitude,
            k,
            &ErrorModel::BF16,
        );
        assert!(v.passed, "{v:?}");
        // The same product without its last term (l = k − 1), rounded to bf16.
        let missing: Vec<f32> = (0..m * n)
            .map(|idx| {
                let (i, j) = (idx / n, idx % n);
                let last = a[i * k + k - 1] as f64 * b[(k - 1) * n + j] as f64;
                half::bf16::from_f64(reference.product[idx] - last).to_f32()
            })
            .collect();
        let v = compare_with_model(
            &missing,
            &reference.product,
            &reference.magnitude,
            k,
            &ErrorModel::BF16,
        );
        assert!(!v.passed, "{v:?}");
    }

    #[test]
    #[should_panic(expected = "differ in length")]
    fn length_mismatch_panics() {
        compare_with_cpu(&[1.0, 2.0], &[1.0], &[1.0], 1);
    }

    #[test]
    fn reference_labels() {
        assert_eq!(ReferenceKind::CpuF64.label(), "cpu-f64");
        assert_eq!(ReferenceKind::Cublas.label(), "cublas");
    }

    /// `x` cut to `bits` significant bits, toward zero: the narrow accumulators' truncation.
    fn truncate(x: f64, bits: i32) -> f64 {
        if x == 0.0 {
            return 0.0;
        }
        let ulp = 2f64.powi(x.abs().log2().floor() as i32 - (bits - 1));
        (x / ulp).trunc() * ulp
    }

    /// Dot products of FP8-valued inputs accumulated as the model describes the tensor cores
    /// (each 32 products summed exactly, then added into an accumulator truncated to 14
    /// significant bits, at the unit roundoff the model allows): within the model, even at
    /// k = 8192; one 128-deep k-tile left out is not.
    #[test]
    fn fp8_model_admits_narrow_accumulation_and_catches_a_missing_tile() {
        use crate::check::cpu::random_matrix;
        use crate::element::{Element, Fp8E4m3};
        for k in [32, 528, 4096, 8192] {
            let outputs = 64;
            let (mut narrow, mut missing) = (Vec::new(), Vec::new());
            let (mut product, mut magnitude) = (Vec::new(), Vec::new());
            for output in 0..outputs {
                let seed = (k * 1000 + output) as u64;
                let fp8 = |v: Vec<f32>| -> Vec<f64> {
                    v.into_iter()
                        .map(|x| Fp8E4m3::from_f32(x).to_f32() as f64)
                        .collect()
                };
                let (a, b) = (fp8(random_matrix(k, seed)), fp8(random_matrix(k, seed + 7)));
                let terms: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
                product.push(terms.iter().sum::<f64>());
                magnitude.push(terms.iter().map(|t| t.abs()).sum::<f64>());
                let accumulate = |skip_tile: Option<usize>| {
                    terms
                        .chunks(32)
                        .enumerate()
                        .fold(0.0f64, |acc, (step, chunk)| {
                            if skip_tile == Some(step / 4) {
                                acc
                            } else {
                                truncate(acc + chunk.iter().sum::<f64>(), 14)
                            }
                        }) as f32
                };
                narrow.push(accumulate(None));
                missing.push(accumulate(Some(0)));
            }
            let model = ErrorModel::FP8_TO_FP16;
            let v = compare_with_model(&narrow, &product, &magnitude, k, &model);
            assert!(
                v.passed,
                "k = {k}: narrow accumulation failed the model: {v:?}"
            );
            if k >= 528 {
                let v = compare_with_model(&missing, &product, &magnitude, k, &model);
                assert!(!v.passed, "k = {k}: a missing k-tile passed: {v:?}");
            }
        }
    }
}
