//! The shape suite's benchmark: one shape of the suite through the library's dispatch
//! ([`Gemm::matmul`]) and through cuBLAS in the same precision and B layout, verified and timed
//! in the same run, turned into one [`Record`] per (layout, precision).
//!
//! Timing follows the project's rules: random inputs (never zeros), rotated over enough copies
//! that A and B of consecutive launches are not in the L2 cache; warm-up launches first (every
//! copy twice, and at least 50 ms of them, since the CPU reference before them lets the GPU's
//! clocks drop); then
//! CUDA events around each launch, our kernel and cuBLAS alternating so that both see the same
//! clocks and temperature, each output poisoned with NaN before its launch (outside the timed
//! region); the medians are reported. Large products stop after [`SuiteOptions::max_ms`] of
//! GPU time (at least [`MIN_TIMED_PAIRS`] pairs), small ones after [`SuiteOptions::reps`].
//!
//! Verification: against the f64 CPU product where m·n·k ≤ [`CPU_REFERENCE_MACS`], else
//! against cuBLAS SGEMM (exact fp32, TF32 off) on the same inputs widened to f32, with the
//! tolerance [`crate::check::verify`] derives for the precision and k.

use crate::check::cpu::{Reference, random_matrix, reference_gemm, reference_gemm_nk};
use crate::check::verify::{ErrorModel, Verification, compare_with_blas, compare_with_model};
use crate::element::Element;
use crate::harness::bench::{copy_bandwidth_gbs, input_sets_of, median};
use crate::harness::gpu::Gpu;
use crate::harness::report::{Record, SuiteInfo};
use crate::harness::suite::SuiteShape;
use crate::{BLayout, DType, Gemm, GemmElement, GemmError, GemmShape, MatmulDesc};
use cudarc::driver::CudaSlice;
use rayon::prelude::*;
use std::any::TypeId;

/// Products of at most this many multiply-adds (2³¹) are checked against the f64 CPU product;
/// larger ones against cuBLAS SGEMM.
pub const CPU_REFERENCE_MACS: f64 = 2_147_483_648.0;
/// Warm-up lasts at least this long (GPU time, ours and cuBLAS together).
pub const WARMUP_MS: f64 = 50.0;
/// ... unless this many warm-up pairs come first.
const MAX_WARMUP_PAIRS: usize = 1000;
/// The fewest timed pairs behind a median, whatever `max_ms` says (unless `reps` is smaller).
pub const MIN_TIMED_PAIRS: usize = 3;
/// Products with at most this many rows or columns of C count as memory-bound ...
pub const MEMORY_BOUND_ROWS: usize = 16;
/// ... when their larger operand holds at least this many elements (2²⁴: 32 MiB in 16 bits,
/// past launch latency: 1×1×1 and 65537×3×17 are bound by latency, not memory).
pub const MEMORY_BOUND_ELEMENTS: usize = 1 << 24;
/// Device memory left free beyond the buffers (cuBLAS's workspace, the driver's own).
const MEMORY_MARGIN: usize = 512 << 20;

/// Settings shared by every case of a run.
#[derive(Clone, Copy, Debug)]
pub struct SuiteOptions {
    /// Warm-up pairs (ours, then cuBLAS) at least; warm-up also lasts [`WARMUP_MS`].
    pub warmup: usize,
    /// Timed pairs at most.
    pub reps: usize,
    /// Stop timing once ours and cuBLAS's timed launches add up to this many milliseconds.
    pub max_ms: f64,
    /// Run this kernel instead of dispatch's choice (`MatmulDesc::kernel`); a case it refuses
    /// is recorded as skipped, with the reason.
    pub kernel: Option<&'static str>,
    /// Split k into about this many slices (`MatmulDesc::split_k`; 1: never); a case no kernel
    /// can split so is recorded as skipped.
    pub split_k: Option<u32>,
    /// Stream-K on or off (`MatmulDesc::stream_k`) instead of dispatch's choice; a case whose
    /// kernel has no stream-K tail is recorded as skipped when it is asked on.
    pub stream_k: Option<bool>,
}

/// The precision as records name it: `fp32` (exact), `tf32`, `fp16`, `bf16`.
pub fn precision_label(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "fp32",
        DType::Tf32 => "tf32",
        DType::F16 => "fp16",
        DType::Bf16 => "bf16",
    }
}

/// Whether a product of this shape counts as memory-bound, held to the copy bandwidth: a
/// matrix–vector-like product (at most [`MEMORY_BOUND_ROWS`] rows or columns of C) whose larger
/// operand has at least [`MEMORY_BOUND_ELEMENTS`] elements.
pub fn memory_bound(shape: &GemmShape) -> bool {
    let (a, b, _) = shape.elements();
    shape.m.min(shape.n) <= MEMORY_BOUND_ROWS && a.max(b) >= MEMORY_BOUND_ELEMENTS
}

/// Multiply-adds of a product.
fn macs(shape: &GemmShape) -> f64 {
    shape.m as f64 * shape.n as f64 * shape.k as f64
}

/// `values` rounded to `T`, on all cores (B of the largest shapes holds 470 million values).
fn rounded<T: Element>(values: &[f32]) -> Vec<T> {
    values.par_iter().map(|&x| T::from_f32(x)).collect()
}

/// `values` widened to f32, on all cores.
fn widened<T: Element>(values: &[T]) -> Vec<f32> {
    values.par_iter().map(|&x| x.to_f32()).collect()
}

/// What a result is checked against.
enum Expected {
    /// The f64 CPU product of the inputs as the kernels see them.
    Cpu(Reference),
    /// cuBLAS SGEMM (TF32 off) of the same inputs widened to f32.
    Cublas(Vec<f32>),
}

impl Expected {
    fn check(&self, c: &[f32], k: usize, model: &ErrorModel) -> Verification {
        match self {
            Expected::Cpu(r) => compare_with_model(c, &r.product, &r.magnitude, k, model),
            Expected::Cublas(result) => compare_with_blas(c, result, k, model),
        }
    }
}

/// The inputs of one shape in one element type, on the device: A and B rotated over sets, C
/// for our kernel and C for cuBLAS, and set 0 widened to f32 on the host (for the reference).
struct Operands<T: Element> {
    a: Vec<CudaSlice<T>>,
    b: Vec<CudaSlice<T>>,
    c: CudaSlice<T>,
    c_blas: CudaSlice<T>,
    a0: Vec<f32>,
    b0: Vec<f32>,
}

/// The library on the harness's stream, and the copy bandwidth the records compare with.
pub struct SuiteBench<'g> {
    gpu: &'g Gpu,
    gemm: Gemm,
    /// Measured device-to-device copy bandwidth, GB/s (read plus write).
    pub copy_gbs: f64,
}

impl<'g> SuiteBench<'g> {
    /// Loads the library's kernels on `gpu`'s stream (the module built for the device) and
    /// measures the copy bandwidth.
    pub fn new(gpu: &'g Gpu) -> Result<Self, GemmError> {
        let gemm = Gemm::new(gpu.stream().clone())?;
        let copy_gbs = copy_bandwidth_gbs(gpu)?;
        Ok(SuiteBench {
            gpu,
            gemm,
            copy_gbs,
        })
    }

    /// The PTX module the library's kernels come from.
    pub fn ptx_target(&self) -> &str {
        self.gemm.runtime().ptx_target()
    }

    /// Runs `entry` in each of `layouts` and `precisions` on inputs drawn from `seed`: one record
    /// per case, each also passed to `on_case` as it finishes. Cases that do not fit in device
    /// memory get records that say so (`skipped`); a CUDA or library failure ends the run with
    /// an error. Every buffer is freed before this returns.
    pub fn run(
        &self,
        entry: &SuiteShape,
        layouts: &[BLayout],
        precisions: &[DType],
        options: &SuiteOptions,
        seed: u64,
        on_case: &mut dyn FnMut(&Record),
    ) -> Result<Vec<Record>, GemmError> {
        let mut records = Vec::new();
        // f32 and TF32 share their inputs and references.
        let fp32: Vec<DType> = precisions
            .iter()
            .copied()
            .filter(|d| matches!(d, DType::F32 | DType::Tf32))
            .collect();
        let mut run = |dtypes: &[DType], records: &mut Vec<Record>| -> Result<(), GemmError> {
            match dtypes.first() {
                None => Ok(()),
                Some(DType::F32 | DType::Tf32) => {
                    self.run_typed::<f32>(entry, layouts, dtypes, options, seed, on_case, records)
                }
                Some(DType::F16) => self.run_typed::<half::f16>(
                    entry, layouts, dtypes, options, seed, on_case, records,
                ),
                Some(DType::Bf16) => self.run_typed::<half::bf16>(
                    entry, layouts, dtypes, options, seed, on_case, records,
                ),
            }
        };
        run(&fp32, &mut records)?;
        for dtype in [DType::F16, DType::Bf16] {
            if precisions.contains(&dtype) {
                run(&[dtype], &mut records)?;
            }
        }
        Ok(records)
    }

    /// The cases of `dtypes` (all of element type `T`) on one set of inputs.
    #[allow(clippy::too_many_arguments)]
    fn run_typed<T: GemmElement + Element>(
        &self,
        entry: &SuiteShape,
        layouts: &[BLayout],
        dtypes: &[DType],
        options: &SuiteOptions,
        seed: u64,
        on_case: &mut dyn FnMut(&Record),
        records: &mut Vec<Record>,
    ) -> Result<(), GemmError> {
        let shape = entry.shape;
        if let Some(reason) = self.lacks_memory::<T>(&shape)? {
            for &layout in layouts {
                for &dtype in dtypes {
                    let mut record = self.new_record::<T>(entry, layout, dtype, seed, 0);
                    record.skipped = Some(reason.clone());
                    on_case(&record);
                    records.push(record);
                }
            }
            return Ok(());
        }
        let mut operands = self.upload::<T>(&shape, seed)?;
        for &layout in layouts {
            let expected = self.expected(&mut operands, layout, &shape)?;
            for &dtype in dtypes {
                let record = self.measure(
                    entry,
                    layout,
                    dtype,
                    &mut operands,
                    &expected,
                    options,
                    seed,
                )?;
                on_case(&record);
                records.push(record);
            }
        }
        Ok(())
    }

    /// Why the shape's buffers in `T` do not fit in device memory now, if they do not: the
    /// input sets, two outputs, and for 16-bit types checked against cuBLAS, f32 copies of A, B
    /// and C.
    fn lacks_memory<T: Element>(&self, shape: &GemmShape) -> Result<Option<String>, GemmError> {
        let (a, b, c) = shape.elements();
        let sets = input_sets_of(T::BYTES * (a + b), self.gpu.info().l2_bytes);
        let mut needed = T::BYTES * (sets * (a + b) + 2 * c);
        if macs(shape) > CPU_REFERENCE_MACS && T::BYTES != 4 {
            needed += 4 * (a + b + c);
        }
        // Buffers of the previous case are freed in stream order: let the frees land first.
        self.gpu.synchronize()?;
        let free = self.gpu.free_memory()?;
        Ok((needed + MEMORY_MARGIN > free).then(|| {
            format!(
                "needs {:.1} GB of device memory, {:.1} GB are free",
                (needed + MEMORY_MARGIN) as f64 / 1e9,
                free as f64 / 1e9
            )
        }))
    }

    /// Random inputs in `T` (drawn in f32 from `seed`, then rounded), rotated over enough sets
    /// to pass the L2 cache, and two poisoned outputs. Set 0 is kept on the host, widened to
    /// f32, where the reference needs it (the CPU product, or cuBLAS SGEMM for 16-bit types).
    fn upload<T: Element>(&self, shape: &GemmShape, seed: u64) -> Result<Operands<T>, GemmError> {
        let gpu = self.gpu;
        let (a_len, b_len, c_len) = shape.elements();
        let sets = input_sets_of(T::BYTES * (a_len + b_len), gpu.info().l2_bytes);
        let keep = macs(shape) <= CPU_REFERENCE_MACS || TypeId::of::<T>() != TypeId::of::<f32>();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut a0, mut b0) = (Vec::new(), Vec::new());
        for set in 0..sets {
            let set_seed = seed.wrapping_add(2 * set as u64);
            let a_host: Vec<T> = rounded(&random_matrix(a_len, set_seed));
            let b_host: Vec<T> = rounded(&random_matrix(b_len, set_seed.wrapping_add(1)));
            a.push(gpu.upload_raw(&a_host)?);
            b.push(gpu.upload_raw(&b_host)?);
            if set == 0 && keep {
                a0 = widened(&a_host);
                b0 = widened(&b_host);
            }
        }
        Ok(Operands {
            a,
            b,
            c: gpu.alloc_poisoned(c_len)?,
            c_blas: gpu.alloc_poisoned(c_len)?,
            a0,
            b0,
        })
    }

    /// The reference for input set 0 with B in `layout`: the f64 CPU product for small shapes,
    /// else cuBLAS SGEMM (TF32 off) on the inputs widened to f32 (for f32 inputs, on the very
    /// buffers, into cuBLAS's output buffer, which the timing then overwrites).
    fn expected<T: Element>(
        &self,
        operands: &mut Operands<T>,
        layout: BLayout,
        shape: &GemmShape,
    ) -> Result<Expected, GemmError> {
        if macs(shape) <= CPU_REFERENCE_MACS {
            let (a, b) = (&operands.a0, &operands.b0);
            return Ok(Expected::Cpu(match layout {
                BLayout::Kn => reference_gemm(a, b, shape),
                BLayout::Nk => reference_gemm_nk(a, b, shape),
            }));
        }
        let gpu = self.gpu;
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            let c = &mut operands.c_blas;
            gpu.launch_cublas_gemm(DType::F32, layout, &operands.a[0], &operands.b[0], c, shape)?;
            return Ok(Expected::Cublas(widened(&gpu.download_raw(c)?)));
        }
        let (a, b) = (gpu.upload(&operands.a0)?, gpu.upload(&operands.b0)?);
        let mut c = gpu.alloc_poisoned::<f32>(shape.m * shape.n)?;
        gpu.launch_cublas_gemm(DType::F32, layout, &a, &b, &mut c, shape)?;
        Ok(Expected::Cublas(gpu.download(&c)?))
    }

    /// An empty record of one case.
    fn new_record<T: Element>(
        &self,
        entry: &SuiteShape,
        layout: BLayout,
        dtype: DType,
        seed: u64,
        reps: usize,
    ) -> Record {
        let shape = entry.shape;
        let (a, b, c) = shape.elements();
        let mut record = Record::new(
            "dispatch",
            "rust_gemm::Gemm::matmul",
            &shape,
            &self.gpu.info().name,
            seed,
            reps,
        );
        record.precision = precision_label(dtype).to_string();
        record.ptx_target = Some(self.ptx_target().to_string());
        record.suite = Some(SuiteInfo {
            suite_group: entry.group.clone(),
            shape_name: entry.name.clone(),
            b_layout: layout.label().to_string(),
            kernel: None,
            splits: None,
            stream_k_tiles: None,
            kernel_entry: None,
            cublas_ms: None,
            ratio: None,
            moved_bytes: (T::BYTES * (a + b + c)) as u64,
            achieved_gbs: None,
            copy_gbs: Some(self.copy_gbs),
            copy_share: None,
            cublas_copy_share: None,
            memory_bound: memory_bound(&shape),
        });
        record
    }

    /// Verifies our kernel on input set 0, then times it and cuBLAS alternately.
    #[allow(clippy::too_many_arguments)]
    fn measure<T: GemmElement + Element>(
        &self,
        entry: &SuiteShape,
        layout: BLayout,
        dtype: DType,
        operands: &mut Operands<T>,
        expected: &Expected,
        options: &SuiteOptions,
        seed: u64,
    ) -> Result<Record, GemmError> {
        let (gpu, shape) = (self.gpu, entry.shape);
        let mut desc = MatmulDesc::<T>::new(shape.m, shape.n, shape.k).b_layout(layout);
        if dtype == DType::Tf32 {
            desc = desc.tf32();
        }
        if let Some(name) = options.kernel {
            desc = desc.kernel(name);
        }
        if let Some(slices) = options.split_k {
            desc = desc.split_k(slices);
        }
        if let Some(on) = options.stream_k {
            desc = desc.stream_k(on);
        }
        let Operands {
            a, b, c, c_blas, ..
        } = operands;
        let plan = match self.gemm.plan(&a[0], &b[0], &*c, &desc) {
            Ok(plan) => plan,
            Err(refused @ (GemmError::KernelRefused { .. } | GemmError::NoKernel { .. }))
                if options.kernel.is_some()
                    || options.split_k.is_some()
                    || options.stream_k.is_some() =>
            {
                let mut record = self.new_record::<T>(entry, layout, dtype, seed, 0);
                record.skipped = Some(format!("the forced kernel, split or stream-K: {refused}"));
                return Ok(record);
            }
            Err(e) => return Err(e),
        };
        let ours = |a: &CudaSlice<T>, b: &CudaSlice<T>, c: &mut CudaSlice<T>| {
            self.gemm.matmul(a, b, c, &desc)
        };
        let theirs = |a: &CudaSlice<T>, b: &CudaSlice<T>, c: &mut CudaSlice<T>| {
            gpu.launch_cublas_gemm(dtype, layout, a, b, c, &shape)
        };

        gpu.poison(c)?;
        ours(&a[0], &b[0], c)?;
        let verification = expected.check(
            &widened(&gpu.download_raw(c)?),
            shape.k,
            &ErrorModel::for_dtype(dtype),
        );

        let sets = a.len();
        let (mut warm_ms, mut pairs) = (0.0, 0);
        // Every set twice at least: the library builds the TMA tensor maps of new buffers on
        // their first launch and caches them, and its cache starts over when full; after two
        // rounds over the sets, every map the timed launches need is built.
        let least = options.warmup.max(2 * sets);
        while pairs < least || (warm_ms < WARMUP_MS && pairs < MAX_WARMUP_PAIRS) {
            let s = pairs % sets;
            warm_ms += gpu.time_ms(|| {
                ours(&a[s], &b[s], c)?;
                theirs(&a[s], &b[s], c_blas)
            })?;
            pairs += 1;
        }
        let (mut mine, mut cublas) = (Vec::new(), Vec::new());
        let mut spent = 0.0;
        for rep in 0..options.reps {
            let s = rep % sets;
            gpu.poison(c)?;
            mine.push(gpu.time_ms(|| ours(&a[s], &b[s], c))?);
            gpu.poison(c_blas)?;
            cublas.push(gpu.time_ms(|| theirs(&a[s], &b[s], c_blas))?);
            spent += mine[rep] + cublas[rep];
            if mine.len() >= MIN_TIMED_PAIRS && spent >= options.max_ms {
                break;
            }
        }
        let (ms, cublas_ms) = (median(&mine), median(&cublas));

        let mut record = self.new_record::<T>(entry, layout, dtype, seed, mine.len());
        record.idea = if plan.splits > 1 {
            format!(
                "rust_gemm::Gemm::matmul → {} (k in {} slices)",
                plan.kernel.name, plan.splits
            )
        } else if plan.stream_k_tiles > 0 {
            format!(
                "rust_gemm::Gemm::matmul → {} (stream-K tail of {} tiles)",
                plan.kernel.name, plan.stream_k_tiles
            )
        } else {
            format!("rust_gemm::Gemm::matmul → {}", plan.kernel.name)
        };
        record.set_verification(&verification);
        record.set_time(ms, &shape);
        record.set_reference_time(cublas_ms);
        let info = record.suite.as_mut().expect("made by new_record");
        let moved = info.moved_bytes as f64;
        let gbs = |ms: f64| moved / (ms * 1e-3) / 1e9;
        let (achieved, cublas_gbs) = (gbs(ms), gbs(cublas_ms));
        info.kernel = Some(plan.kernel.name.to_string());
        info.kernel_entry = Some(plan.kernel.entry.to_string());
        info.splits = (plan.splits > 1).then_some(plan.splits);
        info.stream_k_tiles = (plan.stream_k_tiles > 0).then_some(plan.stream_k_tiles);
        info.cublas_ms = Some(cublas_ms);
        info.ratio = Some(cublas_ms / ms);
        info.achieved_gbs = Some(achieved);
        info.copy_share = Some(achieved / self.copy_gbs);
        info.cublas_copy_share = Some(cublas_gbs / self.copy_gbs);
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bound_means_few_rows_or_columns_of_a_large_product() {
        let shape = |m, n, k| GemmShape::new(m, n, k).unwrap();
        assert!(memory_bound(&shape(1, 57344, 8192)));
        assert!(memory_bound(&shape(16, 4096, 4096)));
        assert!(memory_bound(&shape(4096, 1, 4096)));
        assert!(!memory_bound(&shape(17, 17, 65537)));
        assert!(!memory_bound(&shape(64, 4096, 4096)));
        // Thin but small: launch latency, not memory.
        assert!(!memory_bound(&shape(65537, 3, 17)));
        assert!(!memory_bound(&shape(1, 1, 1)));
        assert!(!memory_bound(&shape(33, 8191, 1025)));
    }

    #[test]
    fn labels_follow_the_ladder_records() {
        assert_eq!(precision_label(DType::F32), "fp32");
        assert_eq!(precision_label(DType::Tf32), "tf32");
        assert_eq!(precision_label(DType::F16), "fp16");
        assert_eq!(precision_label(DType::Bf16), "bf16");
    }

    #[test]
    fn the_cpu_reference_stops_at_two_to_the_31_multiply_adds() {
        let shape = |m, n, k| GemmShape::new(m, n, k).unwrap();
        assert!(macs(&shape(1280, 1280, 1280)) <= CPU_REFERENCE_MACS);
        assert!(macs(&shape(1408, 1408, 1408)) > CPU_REFERENCE_MACS);
        assert!(macs(&shape(1, 57344, 8192)) <= CPU_REFERENCE_MACS);
        assert!(macs(&shape(8192, 8192, 64)) > CPU_REFERENCE_MACS);
    }
}
