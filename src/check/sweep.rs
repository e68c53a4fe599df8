//! Randomized verification: many random shapes (ones and primes included), every kernel,
//! against the CPU reference, reproducible from one seed.

use crate::check::cpu::{Reference, random_matrix, reference_gemm, reference_gemm_nk};
use crate::check::verify::{ErrorModel, Verification, compare_with_model};
use crate::element::{Element, Fp8E4m3, Fp8E5m2, convert, widen};
use crate::harness::gpu::Gpu;
use crate::ladder::rungs::Precision;
use crate::{GemmError, GemmShape, RUNGS, Rung};
use cudarc::driver::CudaSlice;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Primes the sweep mixes in, around tile sizes and beyond.
const PRIMES: &[usize] = &[2, 3, 5, 7, 13, 31, 37, 61, 67, 127, 131, 257, 263, 509, 521];

/// Every kernel the host can launch, labelled: each plain rung, and each candidate of an
/// autotuned rung as `rung/candidate`.
pub fn all_kernels() -> Vec<(String, &'static Rung)> {
    let mut kernels = Vec::new();
    for rung in RUNGS {
        if rung.candidates.is_empty() {
            kernels.push((rung.name.to_string(), rung));
        }
        for candidate in rung.candidates {
            kernels.push((format!("{}/{}", rung.name, candidate.name), candidate));
        }
    }
    kernels
}

/// `count` shapes drawn from `seed`: each dimension is 1, a prime, or uniform in
/// `1..=max_dimension`, a third of the time each; in a quarter of the shapes n and k are then
/// rounded up to multiples of 16 (and may exceed `max_dimension` by up to 15). The same seed
/// gives the same shapes.
pub fn random_shapes(count: usize, max_dimension: usize, seed: u64) -> Vec<GemmShape> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let max_dimension = max_dimension.max(1);
    let primes: Vec<usize> = PRIMES
        .iter()
        .copied()
        .filter(|&p| p <= max_dimension)
        .collect();
    let dimension = |rng: &mut SmallRng| match rng.random_range(0..3) {
        0 => 1,
        1 if !primes.is_empty() => primes[rng.random_range(0..primes.len())],
        _ => rng.random_range(1..=max_dimension),
    };
    (0..count)
        .map(|_| {
            let (m, mut n, mut k) = (
                dimension(&mut rng),
                dimension(&mut rng),
                dimension(&mut rng),
            );
            // A quarter of the shapes get n and k rounded up to multiples of 16, the rows TMA
            // rungs need (fp16 v17–v18: 8; TF32 v19: k, 4; v21: 4; FP8 v20: k, 16), so that the sweep
            // exercises them too.
            if rng.random_range(0..4) == 0 {
                (n, k) = (n.next_multiple_of(16), k.next_multiple_of(16));
            }
            GemmShape::new(m, n, k).expect("dimensions are at least 1")
        })
        .collect()
}

/// One kernel at one shape.
#[derive(Clone, Debug)]
pub struct Check {
    /// Kernel label (`v3`, `v11/128x64x8`...).
    pub kernel: String,
    /// The shape.
    pub shape: GemmShape,
    /// The comparison, or why the kernel did not run this shape (its documented limits).
    pub outcome: Result<Verification, String>,
}

/// Runs every kernel in `kernels` on `shape` with fresh inputs drawn from `seed`, each into a
/// NaN-poisoned C, against one CPU reference per element type (fp16 rungs get the same random
/// values rounded to fp16, and the exact product of those). CUDA failures end the sweep with
/// an error.
pub fn check_shape(
    gpu: &Gpu,
    kernels: &[(String, &'static Rung)],
    shape: &GemmShape,
    seed: u64,
) -> Result<Vec<Check>, GemmError> {
    let (a_len, b_len, _) = shape.elements();
    let a_host = random_matrix(a_len, seed);
    let b_host = random_matrix(b_len, seed ^ 0xB);
    let mut fp32: Option<Case<f32>> = None;
    let mut fp16: Option<Case<u16>> = None;
    // FP8 rungs read B `[n, k]`: the same random values, taken as that layout.
    let mut e4m3: Option<Fp8Case<Fp8E4m3>> = None;
    let mut e5m2: Option<Fp8Case<Fp8E5m2>> = None;
    let mut checks = Vec::with_capacity(kernels.len());
    for (label, rung) in kernels {
        let outcome = match rung.launch(shape, gpu.info().max_shared_per_block) {
            Err(refusal) => Err(refusal.to_string()),
            Ok(_) => {
                let model = ErrorModel::for_precision(rung.precision);
                Ok(match rung.precision {
                    Precision::Fp32 | Precision::Tf32 => {
                        made(&mut fp32, || Case::new(gpu, &a_host, &b_host, shape))?
                            .run(gpu, rung, shape, &model)?
                    }
                    Precision::Fp16 => made(&mut fp16, || Case::new(gpu, &a_host, &b_host, shape))?
                        .run(gpu, rung, shape, &model)?,
                    Precision::Fp8E4m3 => {
                        made(&mut e4m3, || Fp8Case::new(gpu, &a_host, &b_host, shape))?
                            .run(gpu, rung, shape, &model)?
                    }
                    Precision::Fp8E5m2 => {
                        made(&mut e5m2, || Fp8Case::new(gpu, &a_host, &b_host, shape))?
                            .run(gpu, rung, shape, &model)?
                    }
                })
            }
        };
        checks.push(Check {
            kernel: label.clone(),
            shape: *shape,
            outcome,
        });
    }
    Ok(checks)
}

/// The value in `slot`, made by `make` the first time (each element type's inputs are uploaded
/// and their reference computed once per shape, for the first kernel that needs them).
pub(crate) fn made<T>(
    slot: &mut Option<T>,
    make: impl FnOnce() -> Result<T, GemmError>,
) -> Result<&mut T, GemmError> {
    if slot.is_none() {
        *slot = Some(make()?);
    }
    Ok(slot.as_mut().expect("just made"))
}

/// One shape's inputs in element type `T`, on the device, with their exact product.
pub struct Case<T: Element> {
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
    reference: Reference,
}

impl<T: Element> Case<T> {
    /// Rounds `a` and `b` to `T`, uploads them and computes the f64 product of the rounded
    /// values on the CPU.
    pub fn new(gpu: &Gpu, a: &[f32], b: &[f32], shape: &GemmShape) -> Result<Self, GemmError> {
        let (a, b): (Vec<T>, Vec<T>) = (convert(a), convert(b));
        let reference = reference_gemm(&widen(&a), &widen(&b), shape);
        Ok(Case {
            a: gpu.upload_raw(&a)?,
            b: gpu.upload_raw(&b)?,
            c: gpu.alloc_poisoned(shape.elements().2)?,
            reference,
        })
    }

    /// Launches `rung` into a freshly poisoned C and compares the result under `model`.
    pub fn run(
        &mut self,
        gpu: &Gpu,
        rung: &Rung,
        shape: &GemmShape,
        model: &ErrorModel,
    ) -> Result<Verification, GemmError> {
        gpu.poison(&mut self.c)?;
        gpu.launch_rung(rung, &self.a, &self.b, &mut self.c, shape)?;
        let result = widen(&gpu.download_raw(&self.c)?);
        Ok(compare_with_model(
            &result,
            &self.reference.product,
            &self.reference.magnitude,
            shape.k,
            model,
        ))
    }
}

/// The per-tensor scales `[scale_a, scale_b]` the FP8 checks and benchmarks use: not 1, so
/// that a kernel ignoring them fails, and exact in binary (as is their product, 0.9375), so
/// that the reference's scaling adds no rounding of its own.
pub const FP8_SCALES: [f32; 2] = [0.75, 1.25];

/// One shape's FP8 inputs (`T`: [`Fp8E4m3`] or [`Fp8E5m2`]) on the device, A `[m, k]` and B
/// `[n, k]`, the scales [`FP8_SCALES`], a fp16 C, and the exact product of the rounded inputs
/// times the scales.
pub struct Fp8Case<T: Element> {
    a: CudaSlice<T>,
    b_nk: CudaSlice<T>,
    c: CudaSlice<u16>,
    scales: CudaSlice<f32>,
    reference: Reference,
}

impl<T: Element> Fp8Case<T> {
    /// Rounds `a` (m×k) and `b_nk` (n×k: B stored `[n, k]`) to `T`, uploads them with the
    /// scales and computes `scale_a · scale_b · A·Bᵀ` of the rounded values on the CPU.
    pub fn new(gpu: &Gpu, a: &[f32], b_nk: &[f32], shape: &GemmShape) -> Result<Self, GemmError> {
        let (a, b_nk): (Vec<T>, Vec<T>) = (convert(a), convert(b_nk));
        let exact = reference_gemm_nk(&widen(&a), &widen(&b_nk), shape);
        let scale = FP8_SCALES[0] as f64 * FP8_SCALES[1] as f64;
        let reference = Reference {
            product: exact.product.iter().map(|p| p * scale).collect(),
            magnitude: exact.magnitude.iter().map(|g| g * scale).collect(),
        };
        Ok(Fp8Case {
            a: gpu.upload_raw(&a)?,
            b_nk: gpu.upload_raw(&b_nk)?,
            c: gpu.alloc_poisoned(shape.elements().2)?,
            scales: gpu.upload(&FP8_SCALES)?,
            reference,
        })
    }

    /// Launches the FP8 rung `rung` into a freshly poisoned C and compares the result under
    /// `model`.
    pub fn run(
        &mut self,
        gpu: &Gpu,
        rung: &Rung,
        shape: &GemmShape,
        model: &ErrorModel,
    ) -> Result<Verification, GemmError> {
        gpu.poison(&mut self.c)?;
        gpu.launch_rung_fp8(rung, &self.a, &self.b_nk, &mut self.c, &self.scales, shape)?;
        let result = widen(&gpu.download_raw(&self.c)?);
        Ok(compare_with_model(
            &result,
            &self.reference.product,
            &self.reference.magnitude,
            shape.k,
            model,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_shapes_are_reproducible_varied_and_in_range() {
        let shapes = random_shapes(400, 300, 7);
        assert_eq!(shapes, random_shapes(400, 300, 7), "same seed, same shapes");
        assert_ne!(
            shapes,
            random_shapes(400, 300, 8),
            "another seed, other shapes"
        );
        for s in &shapes {
            for d in [s.m, s.n, s.k] {
                assert!((1..=300 + 15).contains(&d), "{s}");
            }
        }
        let dims = || shapes.iter().flat_map(|s| [s.m, s.n, s.k]);
        assert!(dims().any(|d| d == 1), "ones");
        assert!(dims().any(|d| PRIMES.contains(&d) && d > 2), "primes");
        // Shapes TMA rungs can take (n and k multiples of 8), but not only those.
        let tma = shapes
            .iter()
            .filter(|s| s.n.is_multiple_of(8) && s.k.is_multiple_of(8))
            .count();
        assert!(
            (60..200).contains(&tma),
            "{tma} of 400 shapes have n, k multiples of 8"
        );
    }
}
