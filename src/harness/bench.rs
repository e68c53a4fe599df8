//! The harness: for one shape, draw fresh random inputs, compute a reference, then verify and
//! time cuBLAS and every requested rung on the same inputs.
//!
//! Timing follows the project's rules: CUDA events around each launch only, warm-up launches
//! first, the median of `reps` timed launches, the output poisoned with NaN before every
//! launch (outside the timed region), and inputs rotated over enough copies that A and B of
//! consecutive launches are not already in the L2 cache.

use crate::check::cpu::{random_matrix, reference_gemm, reference_gemm_nk, reference_seconds};
use crate::check::sweep::made;
use crate::check::verify::{ErrorModel, Verification, compare_with_blas, compare_with_model};
use crate::element::{Element, Fp8E4m3, Fp8E5m2, convert, widen};
use crate::harness::cublaslt::Fp8Format;
use crate::harness::gpu::Gpu;
use crate::harness::report::Record;
use crate::ladder::autotune::{Autotuner, Trial};
use crate::ladder::rungs::Precision;
use crate::{GemmError, GemmShape, Rung};
use cudarc::driver::CudaSlice;

/// How to obtain the reference product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferencePolicy {
    /// The f64 CPU product where it takes at most [`CPU_REFERENCE_SECONDS`], cuBLAS beyond.
    Auto,
    /// Always the f64 CPU product.
    Cpu,
    /// Always cuBLAS SGEMM with TF32 off.
    Cublas,
}

/// The longest the automatic policy lets the CPU reference run, in estimated seconds.
pub const CPU_REFERENCE_SECONDS: f64 = 30.0;
/// At most this many copies of the inputs are rotated through.
pub const MAX_INPUT_SETS: usize = 8;

/// Settings shared by every shape of a run.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Untimed launches before timing.
    pub warmup: usize,
    /// Timed launches; the median is reported.
    pub reps: usize,
    /// Where the reference comes from.
    pub reference: ReferencePolicy,
}

/// How many copies of A and B to rotate through so that together they exceed twice the L2
/// cache: each launch then starts with its inputs out of cache, as in a real workload.
pub fn input_sets(shape: &GemmShape, l2_bytes: usize) -> usize {
    let (a, b, _) = shape.elements();
    input_sets_of(4 * (a + b), l2_bytes)
}

/// How many copies of inputs of `bytes` (A and B together) to rotate through so that together
/// they exceed twice the L2 cache, at most [`MAX_INPUT_SETS`].
pub fn input_sets_of(bytes: usize, l2_bytes: usize) -> usize {
    (2 * l2_bytes)
        .div_ceil(bytes.max(1))
        .clamp(1, MAX_INPUT_SETS)
}

/// Device-to-device copy bandwidth in GB/s (bytes read plus bytes written, over the time):
/// the median of 10 timed copies of 1 GiB (`cuMemcpyDtoDAsync`, far past any L2 cache), after
/// two untimed ones. The bar that memory-bound kernels are held to.
pub fn copy_bandwidth_gbs(gpu: &Gpu) -> Result<f64, GemmError> {
    let len = 1usize << 29;
    let src = gpu.upload_raw(&vec![0x3C00u16; len])?;
    let mut dst: CudaSlice<u16> = gpu.alloc_poisoned(len)?;
    let mut times = Vec::new();
    for rep in 0..12 {
        let ms = gpu.time_ms(|| {
            gpu.stream()
                .memcpy_dtod(&src, &mut dst)
                .map_err(|e| GemmError::cuda("copying", e))
        })?;
        if rep >= 2 {
            times.push(ms);
        }
    }
    Ok(2.0 * (2 * len) as f64 / (median(&times) * 1e-3) / 1e9)
}

/// The median of `values` (mean of the middle two for even counts). Panics on an empty slice.
pub fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "median of no values");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Device-resident inputs of one element type `T` for one shape, the output buffer (of `C`,
/// `T` unless FP8's fp16), and the reference they are checked against.
struct Operands<T: Element, C: Element = T> {
    a: Vec<CudaSlice<T>>,
    b: Vec<CudaSlice<T>>,
    c: CudaSlice<C>,
    check: Checker,
}

/// How the inputs of a precision are laid out and scaled.
#[derive(Clone, Copy)]
struct InputForm {
    /// B stored `[n, k]` (FP8) rather than `[k, n]`.
    b_nk: bool,
    /// The per-tensor scales `[scale_a, scale_b]` the product is multiplied by (FP8), or none.
    scales: Option<[f32; 2]>,
}

impl InputForm {
    /// B `[k, n]`, no scales: fp32, TF32, fp16.
    const PLAIN: InputForm = InputForm {
        b_nk: false,
        scales: None,
    };
    /// FP8: B `[n, k]`, and the scales of the checks (not 1, exact in binary).
    const FP8: InputForm = InputForm {
        b_nk: true,
        scales: Some(crate::check::sweep::FP8_SCALES),
    };

    /// `scale_a · scale_b`.
    fn scale(&self) -> f64 {
        self.scales.map_or(1.0, |[a, b]| a as f64 * b as f64)
    }
}

enum Checker {
    Cpu {
        product: Vec<f64>,
        magnitude: Vec<f64>,
    },
    Cublas {
        result: Vec<f32>,
    },
}

impl Checker {
    fn check(&self, c: &[f32], k: usize, model: &ErrorModel) -> Verification {
        match self {
            Checker::Cpu { product, magnitude } => {
                compare_with_model(c, product, magnitude, k, model)
            }
            Checker::Cublas { result } => compare_with_blas(c, result, k, model),
        }
    }
}

/// The operands of one run, made on first use: fp32 (for fp32 and TF32 rungs), fp16, and the
/// two FP8 formats (with fp16 C and the scales on the device).
struct Workspace<'a> {
    gpu: &'a Gpu,
    shape: &'a GemmShape,
    policy: ReferencePolicy,
    seed: u64,
    fp32: Option<Operands<f32>>,
    fp16: Option<Operands<u16>>,
    fp8_e4m3: Option<Operands<Fp8E4m3, u16>>,
    fp8_e5m2: Option<Operands<Fp8E5m2, u16>>,
    scales: Option<Fp8Scales>,
}

/// The FP8 scales on the device: `[scale_a, scale_b]` for the rungs, and each in a buffer of
/// its own for cuBLASLt (which needs every scale pointer 16-byte aligned).
#[derive(Clone)]
struct Fp8Scales {
    both: CudaSlice<f32>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
}

impl Workspace<'_> {
    /// The FP8 scales on the device (made on first use).
    fn scales(&mut self) -> Result<Fp8Scales, GemmError> {
        if self.scales.is_none() {
            let [a, b] = InputForm::FP8.scales.expect("FP8 inputs are scaled");
            self.scales = Some(Fp8Scales {
                both: self.gpu.upload(&[a, b])?,
                a: self.gpu.upload(&[a])?,
                b: self.gpu.upload(&[b])?,
            });
        }
        Ok(self.scales.clone().expect("just made"))
    }

    /// Verifies and times the FP8 rung `rung` (or cuBLASLt when None) on `T` operands.
    fn measure_fp8<T: Element>(
        &mut self,
        format: Fp8Format,
        operands: impl FnOnce(&mut Self) -> &mut Option<Operands<T, u16>>,
        rung: Option<&Rung>,
        options: &BenchOptions,
        model: &ErrorModel,
        record: &mut Record,
    ) -> Result<f64, GemmError> {
        let (gpu, shape, policy, seed) = (self.gpu, self.shape, self.policy, self.seed);
        let scales = self.scales()?;
        let operands = made(operands(self), || {
            prepare::<T, u16>(gpu, shape, policy, seed, InputForm::FP8)
        })?;
        measure(
            gpu,
            operands,
            shape,
            options,
            model,
            record,
            |a, b, c| match rung {
                Some(rung) => gpu.launch_rung_fp8(rung, a, b, c, &scales.both, shape),
                None => gpu.launch_cublaslt_fp8(format, a, b, c, &scales.a, &scales.b, shape),
            },
        )
    }

    fn fp32(&mut self) -> Result<&mut Operands<f32>, GemmError> {
        let (gpu, shape, policy, seed) = (self.gpu, self.shape, self.policy, self.seed);
        made(&mut self.fp32, || {
            prepare::<f32, f32>(gpu, shape, policy, seed, InputForm::PLAIN)
        })
    }

    fn fp16(&mut self) -> Result<&mut Operands<u16>, GemmError> {
        let (gpu, shape, policy, seed) = (self.gpu, self.shape, self.policy, self.seed);
        made(&mut self.fp16, || {
            prepare::<u16, u16>(gpu, shape, policy, seed, InputForm::PLAIN)
        })
    }

    /// Verifies and times `launch` (a rung, or cuBLAS when `rung` is None) on the operands of
    /// `precision`; returns the median milliseconds.
    fn measure(
        &mut self,
        precision: Precision,
        rung: Option<&Rung>,
        options: &BenchOptions,
        record: &mut Record,
    ) -> Result<f64, GemmError> {
        let (gpu, shape) = (self.gpu, self.shape);
        let model = ErrorModel::for_precision(precision);
        record.precision = precision.label().to_string();
        match precision {
            Precision::Fp32 | Precision::Tf32 => {
                let operands = self.fp32()?;
                measure(
                    gpu,
                    operands,
                    shape,
                    options,
                    &model,
                    record,
                    |a, b, c| match rung {
                        Some(rung) => gpu.launch_rung(rung, a, b, c, shape),
                        None if precision == Precision::Fp32 => gpu.launch_cublas(a, b, c, shape),
                        None => gpu.launch_cublas_as(precision, a, b, c, shape),
                    },
                )
            }
            Precision::Fp16 => {
                let operands = self.fp16()?;
                measure(
                    gpu,
                    operands,
                    shape,
                    options,
                    &model,
                    record,
                    |a, b, c| match rung {
                        Some(rung) => gpu.launch_rung(rung, a, b, c, shape),
                        None => gpu.launch_cublas_as(precision, a, b, c, shape),
                    },
                )
            }
            Precision::Fp8E4m3 => self.measure_fp8::<Fp8E4m3>(
                Fp8Format::E4m3,
                |work| &mut work.fp8_e4m3,
                rung,
                options,
                &model,
                record,
            ),
            Precision::Fp8E5m2 => self.measure_fp8::<Fp8E5m2>(
                Fp8Format::E5m2,
                |work| &mut work.fp8_e5m2,
                rung,
                options,
                &model,
                record,
            ),
        }
    }
}

/// Runs cuBLAS and `rungs` on `shape` with inputs drawn from `seed`. Returns one record for
/// cuBLAS SGEMM (named "cublas") followed by one per rung; before the first rung of another
/// precision (TF32, fp16) comes a record for that precision's cuBLAS baseline
/// ("cublas-tf32", "cublas-fp16"), and each rung's percentage is of its own baseline. A rung
/// that cannot take this shape (its limits) gets a record that says why; a CUDA failure ends
/// the run with an error. Autotuned rungs are resolved through `tuner`; `on_search` sees each
/// new search's trials.
pub fn run_shape(
    gpu: &Gpu,
    shape: &GemmShape,
    rungs: &[&'static Rung],
    options: &BenchOptions,
    seed: u64,
    tuner: &mut Autotuner,
    on_search: &mut dyn FnMut(&Rung, &[Trial]),
) -> Result<Vec<Record>, GemmError> {
    let mut work = Workspace {
        gpu,
        shape,
        policy: options.reference,
        seed,
        fp32: None,
        fp16: None,
        fp8_e4m3: None,
        fp8_e5m2: None,
        scales: None,
    };
    let device = gpu.info().name.clone();
    let new_record = |rung: &str, idea: &str| Record {
        ptx_target: Some(gpu.ptx_target().to_string()),
        ..Record::new(rung, idea, shape, &device, seed, options.reps)
    };

    let mut records = Vec::new();
    // Baseline times, by precision, measured when first needed (fp32 always); `None` where the
    // baseline refused the shape (cuBLASLt's FP8 GEMM has limits of its own: its record says
    // why, and the rungs of that precision are timed without a percentage).
    let mut baselines: Vec<(Precision, Option<f64>)> = Vec::new();
    let mut baseline = |work: &mut Workspace, records: &mut Vec<Record>, precision: Precision| {
        if let Some(&(_, ms)) = baselines.iter().find(|(p, _)| *p == precision) {
            return Ok::<Option<f64>, GemmError>(ms);
        }
        let mut record = new_record(precision.baseline(), precision.baseline_idea());
        let ms = match work.measure(precision, None, options, &mut record) {
            Ok(ms) => {
                record.set_reference_time(ms);
                Some(ms)
            }
            Err(GemmError::Cublas(refusal)) if precision.takes_b_nk() => {
                record.skipped = Some(refusal);
                None
            }
            Err(e) => return Err(e),
        };
        records.push(record);
        baselines.push((precision, ms));
        Ok(ms)
    };
    baseline(&mut work, &mut records, Precision::Fp32)?;

    for &rung in rungs {
        let mut trials = Vec::new();
        let kernel = tuner.pick(gpu, rung, shape, &mut trials)?;
        if !trials.is_empty() {
            on_search(rung, &trials);
        }
        let mut record = new_record(rung.name, rung.idea);
        record.precision = kernel.precision.label().to_string();
        if !rung.candidates.is_empty() {
            record.idea = format!("{} → {}", rung.idea, kernel.name);
        }
        if let Err(refusal) = kernel.launch(shape, gpu.info().max_shared_per_block) {
            record.skipped = Some(refusal.to_string());
            records.push(record);
            continue;
        }
        let baseline_ms = baseline(&mut work, &mut records, kernel.precision)?;
        work.measure(kernel.precision, Some(kernel), options, &mut record)?;
        if let Some(baseline_ms) = baseline_ms {
            record.set_reference_time(baseline_ms);
        }
        records.push(record);
    }
    Ok(records)
}

/// Verifies one implementation on input set 0, then times it over all sets; fills `record`
/// and returns the median time in milliseconds.
fn measure<T: Element, C: Element>(
    gpu: &Gpu,
    inputs: &mut Operands<T, C>,
    shape: &GemmShape,
    options: &BenchOptions,
    model: &ErrorModel,
    record: &mut Record,
    mut launch: impl FnMut(&CudaSlice<T>, &CudaSlice<T>, &mut CudaSlice<C>) -> Result<(), GemmError>,
) -> Result<f64, GemmError> {
    gpu.poison(&mut inputs.c)?;
    launch(&inputs.a[0], &inputs.b[0], &mut inputs.c)?;
    let result = widen(&gpu.download_raw(&inputs.c)?);
    record.set_verification(&inputs.check.check(&result, shape.k, model));

    let sets = inputs.a.len();
    for i in 0..options.warmup {
        launch(&inputs.a[i % sets], &inputs.b[i % sets], &mut inputs.c)?;
    }
    let mut times = Vec::with_capacity(options.reps);
    for i in 0..options.reps {
        gpu.poison(&mut inputs.c)?;
        let (a, b) = (&inputs.a[i % sets], &inputs.b[i % sets]);
        let c = &mut inputs.c;
        times.push(gpu.time_ms(|| launch(a, b, c))?);
    }
    let ms = median(&times);
    record.set_time(ms, shape);
    Ok(ms)
}

/// Random inputs of element type `T` (drawn in f32 from `seed`, then rounded to `T`; B `[n, k]`
/// when `form.b_nk`), a poisoned output of `C`, and the reference for set 0: the f64 CPU
/// product of the rounded values, or cuBLAS SGEMM (TF32 off) on them widened back to f32,
/// times `form`'s scales.
fn prepare<T: Element, C: Element>(
    gpu: &Gpu,
    shape: &GemmShape,
    policy: ReferencePolicy,
    seed: u64,
    form: InputForm,
) -> Result<Operands<T, C>, GemmError> {
    let (a_len, b_len, c_len) = shape.elements();
    // The older precisions rotate as many sets as fp32 inputs would need (how their committed
    // results were measured); FP8's copies are a quarter of that, so they count their bytes.
    let sets = if form.b_nk {
        input_sets_of(T::BYTES * (a_len + b_len), gpu.info().l2_bytes)
    } else {
        input_sets(shape, gpu.info().l2_bytes)
    };
    let needed = T::BYTES * sets * (a_len + b_len) + C::BYTES * c_len;
    let free = gpu.free_memory()?;
    if needed > free {
        return Err(GemmError::OutOfDeviceMemory {
            needed_bytes: needed as u64,
            free_bytes: free as u64,
        });
    }
    let a_host: Vec<T> = convert(&random_matrix(a_len, seed));
    let b_host: Vec<T> = convert(&random_matrix(b_len, seed.wrapping_add(1)));
    let mut a = vec![gpu.upload_raw(&a_host)?];
    let mut b = vec![gpu.upload_raw(&b_host)?];
    for set in 1..sets {
        let set_seed = seed.wrapping_add(2 * set as u64);
        a.push(gpu.upload_raw(&convert::<T>(&random_matrix(a_len, set_seed)))?);
        b.push(gpu.upload_raw(&convert::<T>(&random_matrix(
            b_len,
            set_seed.wrapping_add(1),
        )))?);
    }
    let c = gpu.alloc_poisoned::<C>(c_len)?;
    let use_cpu = match policy {
        ReferencePolicy::Cpu => true,
        ReferencePolicy::Cublas => false,
        ReferencePolicy::Auto => reference_seconds(shape) <= CPU_REFERENCE_SECONDS,
    };
    let (a_wide, b_wide) = (widen(&a_host), widen(&b_host));
    let scale = form.scale();
    let check = if use_cpu {
        let reference = if form.b_nk {
            reference_gemm_nk(&a_wide, &b_wide, shape)
        } else {
            reference_gemm(&a_wide, &b_wide, shape)
        };
        Checker::Cpu {
            product: reference.product.iter().map(|p| p * scale).collect(),
            magnitude: reference
                .magnitude
                .iter()
                .map(|g| g * scale.abs())
                .collect(),
        }
    } else {
        let (a32, b32) = (gpu.upload(&a_wide)?, gpu.upload(&b_wide)?);
        let mut c32 = gpu.alloc_poisoned::<f32>(c_len)?;
        if form.b_nk {
            gpu.launch_cublas_gemm(
                crate::DType::F32,
                crate::BLayout::Nk,
                &a32,
                &b32,
                &mut c32,
                shape,
            )?;
        } else {
            gpu.launch_cublas(&a32, &b32, &mut c32, shape)?;
        }
        Checker::Cublas {
            result: gpu
                .download(&c32)?
                .iter()
                .map(|&r| (r as f64 * scale) as f32)
                .collect(),
        }
    };
    Ok(Operands { a, b, c, check })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[5.0]), 5.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[9.0, 1.0, 8.0, 2.0, 7.0]), 7.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[1.0, 100.0]), 50.5);
        assert_eq!(median(&[-1.0, -3.0, -2.0]), -2.0);
        // Outliers do not move it.
        assert_eq!(median(&[1.0, 1.1, 1.2, 1.3, 1000.0]), 1.2);
        // The input is left as it was.
        let values = [3.0, 1.0, 2.0];
        median(&values);
        assert_eq!(values, [3.0, 1.0, 2.0]);
    }

    #[test]
    #[should_panic(expected = "median of no values")]
    fn median_of_nothing_panics() {
        median(&[]);
    }

    #[test]
    fn input_sets_rotate_past_the_l2_cache() {
        let square = |s| GemmShape::square(s).unwrap();
        // 4096³: A and B are 128 MiB, already over twice a 50 MiB L2.
        assert_eq!(input_sets(&square(4096), 50 * MIB), 1);
        // 2048³: 32 MiB per set, 100 MiB needed → 4 sets.
        assert_eq!(input_sets(&square(2048), 50 * MIB), 4);
        // Exactly twice the L2 in one set.
        assert_eq!(input_sets(&square(2048), 16 * MIB), 1);
        assert_eq!(input_sets(&square(2048), 16 * MIB + 1), 2);
        // Tiny shapes are capped.
        assert_eq!(input_sets(&square(1), 50 * MIB), MAX_INPUT_SETS);
        assert_eq!(input_sets(&square(1024), 50 * MIB), MAX_INPUT_SETS);
        assert_eq!(MAX_INPUT_SETS, 8);
        // No L2 at all: one set.
        assert_eq!(input_sets(&square(64), 0), 1);
        // By bytes: fp16 inputs of 2048³ are 16 MiB a set, 100 MiB needed → 7 sets.
        assert_eq!(input_sets_of(2 * 2 * 2048 * 2048, 50 * MIB), 7);
        assert_eq!(input_sets_of(0, 50 * MIB), MAX_INPUT_SETS);
        // Only A and B count, not C.
        let tall = GemmShape::new(4096, 4096, 1).unwrap(); // A + B = 32 KiB
        assert_eq!(input_sets(&tall, 50 * MIB), MAX_INPUT_SETS);
        for (size, l2) in [(1, 1), (100, 40 * MIB), (3000, 60 * MIB), (8192, 1)] {
            let sets = input_sets(&square(size), l2);
            assert!((1..=MAX_INPUT_SETS).contains(&sets), "{size}, {l2}: {sets}");
        }
    }
}
