//! The dequant GEMM benchmark: times the fast kernels, with fp16 or bf16 activations, against
//! cuBLAS in the same type at the same shape, verifies them against the CPU, and turns each
//! measurement into a [`Record`].
//!
//! Weights are random codes (every code of every benchmarked format is a finite value) with
//! random scales and zero points, pre-packed without a row-major copy: the benchmark's matrices
//! hold up to 470 million weights. Timing follows the project's rules: warm-up launches (at
//! least 50 ms of them), then CUDA events around each launch, the L2 cache flushed and C
//! poisoned before each one, and the median reported.

use crate::check::cpu::random_matrix;
use crate::check::verify::{ErrorModel, compare_with_model};
pub use crate::harness::bench::copy_bandwidth_gbs;
use crate::harness::bench::median;
use crate::harness::gpu::Gpu;
use crate::harness::report::{DequantInfo, Record};
use crate::quant::fast::{
    ActivationElement, ActivationType, FastWeights, Path, Scratch, default_blocks, launch,
    launch_expand, weight_rounding,
};
use crate::quant::format::{WeightFormat, WeightRounding, fp16_scale};
use crate::quant::prepack::Prepacked;
use crate::{BLayout, GemmError, GemmShape};
use cudarc::driver::CudaSlice;
use half::f16;
use rayon::prelude::*;
use std::collections::HashMap;

/// One weight matrix to benchmark: format, group, zero points, and k × n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WeightCase {
    /// Weight format.
    pub format: WeightFormat,
    /// Rows per scale (k for per-channel).
    pub group: usize,
    /// Per-group zero points (unsigned formats).
    pub zero_points: bool,
    /// Reduction length.
    pub k: usize,
    /// Columns.
    pub n: usize,
}

/// Benchmark settings.
#[derive(Clone, Copy, Debug)]
pub struct DequantOptions {
    /// Untimed launches first.
    pub warmup: usize,
    /// Timed launches; the median is reported.
    pub reps: usize,
    /// Decode blocks (`None`: two per SM).
    pub blocks: Option<usize>,
    /// Force a path (`None`: [`Path::for_rows`]).
    pub path: Option<Path>,
    /// Seed of weights and activations.
    pub seed: u64,
    /// The activations' (and output's) type; the cuBLAS baseline runs in the same.
    pub activation: ActivationType,
}

/// Warm-up lasts at least this long (GPU time), beyond the asked-for launches.
const WARMUP_MS: f64 = 50.0;
/// ... unless this many launches come first.
const MAX_WARMUP_LAUNCHES: usize = 2000;

/// SplitMix64 as a hash, so each weight's code is a pure function of its position.
use crate::random::splitmix64 as mix;

/// Uniform in [lo, hi) from a hash.
fn uniform(h: u64, lo: f32, hi: f32) -> f32 {
    lo + (hi - lo) * ((h >> 40) as f32 / (1u64 << 24) as f32)
}

/// Random weights of one case, defined pointwise (nothing k × n is materialized on the host).
pub struct RandomWeights {
    /// What they are.
    pub case: WeightCase,
    seed: u64,
    /// `(k/group) × n` scales (empty for fp16).
    pub scales: Vec<f16>,
    /// `(k/group) × n` zero points.
    pub zeros: Option<Vec<u32>>,
}

impl RandomWeights {
    /// Draws scales and zero points; codes come from [`RandomWeights::code`]. Refuses formats
    /// whose largest value times the smallest fp16 scale overflows fp16 (e6 and e7 floats):
    /// random codes of those would not be weights anyone quantized.
    pub fn new(case: WeightCase, seed: u64) -> Result<Self, GemmError> {
        let format = WeightFormat::new(case.format)?;
        if format != WeightFormat::F16
            && format.max_value() * fp16_scale(1.0 / format.max_value()).to_f32() > 1024.0
        {
            return Err(GemmError::UnsupportedFormat(format!(
                "{format} in the benchmark: random codes would dequantize past fp16's range"
            )));
        }
        if format != WeightFormat::F16 && (case.group == 0 || !case.k.is_multiple_of(case.group)) {
            return Err(GemmError::GroupSize {
                group: case.group,
                k: case.k,
            });
        }
        let groups = if format == WeightFormat::F16 {
            0
        } else {
            case.k / case.group
        };
        let scale_noise = random_matrix(groups * case.n, seed ^ 0x5CA1E);
        let scales = scale_noise
            .iter()
            .map(|&u| fp16_scale((0.75 + 0.25 * u) / format.max_value()))
            .collect();
        let zero_points = case.zero_points && matches!(format, WeightFormat::Unsigned(_));
        let zeros = zero_points.then(|| {
            (0..groups * case.n)
                .map(|i| (mix(seed ^ 0x2E80 ^ i as u64) as u32) % (1 << format.bits()))
                .collect()
        });
        Ok(RandomWeights {
            case: WeightCase { format, ..case },
            seed,
            scales,
            zeros,
        })
    }

    /// The code of weight `(row, col)`: uniform over the format's codes (fp16 weights: uniform
    /// in [-1, 1)).
    pub fn code(&self, row: usize, col: usize) -> u32 {
        let h = mix(self.seed ^ mix((row as u64) << 32 | col as u64));
        match self.case.format {
            WeightFormat::F16 => f16::from_f32(uniform(h, -1.0, 1.0)).to_bits() as u32,
            f => (h as u32) & ((1u32 << f.bits()) - 1),
        }
    }

    /// The dequantized weight `(row, col)`, `(value − zero) · scale` in f32.
    pub fn weight(&self, row: usize, col: usize) -> f32 {
        self.weight_as(row, col, WeightRounding::Exact)
    }

    /// The weight `(row, col)` as a kernel that rounds by `rounding` multiplies by it.
    pub fn weight_as(&self, row: usize, col: usize, rounding: WeightRounding) -> f32 {
        let f = self.case.format;
        let value = f.decode(self.code(row, col));
        if f == WeightFormat::F16 {
            return rounding.weight(value, f16::ONE);
        }
        let g = (row / self.case.group) * self.case.n + col;
        let zero = self.zeros.as_ref().map_or(0.0, |z| z[g] as f32);
        rounding.weight(value - zero, self.scales[g])
    }

    /// Columns `cols` of the weights as `rounding` gives them, all of k each (in parallel).
    fn columns_as(&self, cols: &[usize], rounding: WeightRounding) -> Vec<Vec<f64>> {
        cols.par_iter()
            .map(|&col| {
                (0..self.case.k)
                    .map(|row| self.weight_as(row, col, rounding) as f64)
                    .collect()
            })
            .collect()
    }

    /// Pre-packs them (in parallel).
    pub fn prepack(&self) -> Result<Prepacked, GemmError> {
        let c = &self.case;
        let group = if c.format == WeightFormat::F16 {
            c.k
        } else {
            c.group
        };
        Prepacked::from_codes(
            c.format,
            group,
            c.k,
            c.n,
            &self.scales,
            self.zeros.as_deref(),
            |row, col| self.code(row, col),
        )
    }
}

/// Evenly spaced indices of `0..len`, at most `count`, always with the first and the last.
fn sample(len: usize, count: usize) -> Vec<usize> {
    if len <= count {
        return (0..len).collect();
    }
    let mut out: Vec<usize> = (0..count).map(|i| i * (len - 1) / (count - 1)).collect();
    out.dedup();
    out
}

/// State kept across cases: the L2 flush buffer and the copy bandwidth.
pub struct DequantBench<'g> {
    gpu: &'g Gpu,
    flush: CudaSlice<u8>,
    /// Measured device-to-device copy bandwidth, GB/s.
    pub copy_gbs: f64,
}

impl<'g> DequantBench<'g> {
    /// Measures the copy bandwidth and allocates the flush buffer (twice the L2 cache).
    pub fn new(gpu: &'g Gpu) -> Result<Self, GemmError> {
        let flush = gpu.upload_raw(&vec![0u8; 2 * gpu.info().l2_bytes.max(1 << 20)])?;
        Ok(DequantBench {
            gpu,
            flush,
            copy_gbs: copy_bandwidth_gbs(gpu)?,
        })
    }

    fn flush_l2(&mut self) -> Result<(), GemmError> {
        self.gpu
            .stream()
            .memset_zeros(&mut self.flush)
            .map_err(|e| GemmError::cuda("flushing the L2 cache", e))
    }

    /// Warm-up launches of `work`: `options.warmup` of them, and more until they add up to
    /// [`WARMUP_MS`]. After the CPU work of packing a new matrix the GPU has idled long enough
    /// to lower its clocks, and a few 100 µs launches do not bring them back (the first batch
    /// size measured per matrix ran ~10% slow without this).
    fn warm_up(
        &self,
        options: &DequantOptions,
        mut work: impl FnMut() -> Result<(), GemmError>,
    ) -> Result<(), GemmError> {
        let mut warm_ms = self.gpu.time_ms(|| {
            for _ in 0..options.warmup {
                work()?;
            }
            Ok(())
        })?;
        let mut launches = options.warmup;
        while warm_ms < WARMUP_MS && launches < MAX_WARMUP_LAUNCHES {
            warm_ms += self.gpu.time_ms(&mut work)?;
            launches += 1;
        }
        Ok(())
    }

    /// Median milliseconds of `work`, each launch after an L2 flush and after poisoning the
    /// output `c`, which `work` writes.
    fn time<T: ActivationElement>(
        &mut self,
        options: &DequantOptions,
        c: &mut CudaSlice<T>,
        mut work: impl FnMut(&mut CudaSlice<T>) -> Result<(), GemmError>,
    ) -> Result<f64, GemmError> {
        self.warm_up(options, || work(c))?;
        let mut times = Vec::with_capacity(options.reps);
        for _ in 0..options.reps {
            self.flush_l2()?;
            self.gpu.poison(c)?;
            times.push(self.gpu.time_ms(|| work(c))?);
        }
        Ok(median(&times))
    }

    /// Median milliseconds of `work` and of `reference`, timed alternately (each launch after
    /// an L2 flush and after poisoning its output), so that both see the same clocks and
    /// temperature: long prefill runs heat the GPU enough to slow it by several percent.
    fn time_against<T: ActivationElement>(
        &mut self,
        options: &DequantOptions,
        c: &mut CudaSlice<T>,
        mut work: impl FnMut(&mut CudaSlice<T>) -> Result<(), GemmError>,
        c_reference: &mut CudaSlice<T>,
        mut reference: impl FnMut(&mut CudaSlice<T>) -> Result<(), GemmError>,
    ) -> Result<(f64, f64), GemmError> {
        self.warm_up(options, || work(c))?;
        self.warm_up(options, || reference(c_reference))?;
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..options.reps {
            self.flush_l2()?;
            self.gpu.poison(c)?;
            ours.push(self.gpu.time_ms(|| work(c))?);
            self.flush_l2()?;
            self.gpu.poison(c_reference)?;
            theirs.push(self.gpu.time_ms(|| reference(c_reference))?);
        }
        Ok((median(&ours), median(&theirs)))
    }

    /// Refuses a case the device cannot hold, before anything is drawn or packed on the host:
    /// the packed weights, up to three 16-bit expansions at once (cuBLAS's operand, prefill's,
    /// and the one the expansion is timed into), A, and C twice (ours and cuBLAS's) for the
    /// largest m. Also checks the shape itself (no zero, nothing past 2³¹ − 1).
    pub fn check_fits(&self, case: &WeightCase, rows: &[usize]) -> Result<(), GemmError> {
        let m_max = rows.iter().copied().max().unwrap_or(1);
        for &m in rows {
            GemmShape::new(m, case.n, case.k)?;
        }
        let bits = case.format.bits() as u128;
        let (k, n, m) = (case.k as u128, case.n as u128, m_max as u128);
        let needed = (k + 128) * (n + 256) * bits / 8 + 3 * k * n * 2 + m * k * 2 + 2 * m * n * 2;
        let free = self.gpu.free_memory()? as u128;
        if needed > free {
            return Err(GemmError::OutOfDeviceMemory {
                needed_bytes: needed.min(u64::MAX as u128) as u64,
                free_bytes: free as u64,
            });
        }
        Ok(())
    }

    /// Benchmarks `weights` at each of `rows` with `options.activation`s: one record per m.
    pub fn run(
        &mut self,
        weights: &RandomWeights,
        rows: &[usize],
        options: &DequantOptions,
    ) -> Result<Vec<Record>, GemmError> {
        // fp16 as bits, as the harness keeps it elsewhere; bf16 as its own type.
        match options.activation {
            ActivationType::F16 => self.run_as::<u16>(weights, rows, options),
            ActivationType::Bf16 => self.run_as::<half::bf16>(weights, rows, options),
        }
    }

    /// [`DequantBench::run`] with activations and output of type `T`.
    fn run_as<T: ActivationElement>(
        &mut self,
        weights: &RandomWeights,
        rows: &[usize],
        options: &DequantOptions,
    ) -> Result<Vec<Record>, GemmError> {
        let gpu = self.gpu;
        let case = weights.case;
        let activation = T::TYPE;
        self.check_fits(&case, rows)?;
        let packed = weights.prepack()?;
        let device_weights = FastWeights::upload(gpu, &packed)?;
        drop(packed);
        let mut scratch = Scratch::default();
        // cuBLAS multiplies by these very weights, expanded to T.
        let mut expanded: CudaSlice<T> = gpu.alloc_poisoned(case.k * case.n)?;
        launch_expand(gpu, &device_weights, &mut expanded)?;
        let sampled_cols = sample(case.n, 512);
        // Sampled columns of W, k-major per column, by rounding (exact, and as the kernels
        // use them), made when first needed.
        let mut columns: HashMap<WeightRounding, Vec<Vec<f64>>> = HashMap::new();
        let mut records = Vec::new();
        for &m in rows {
            let shape = GemmShape::new(m, case.n, case.k)?;
            let path = options.path.unwrap_or(device_weights.path(gpu, m));
            let blocks = match (path, options.blocks) {
                (Path::Decode | Path::Batched | Path::Fused, Some(blocks)) => blocks,
                (Path::Decode | Path::Batched | Path::Fused, None) => {
                    default_blocks(gpu, &device_weights, m, path, activation)?
                }
                (Path::Prefill, _) => 0,
            };
            let a_host: Vec<T> = random_matrix(m * case.k, options.seed ^ m as u64)
                .into_iter()
                .map(T::from_f32)
                .collect();
            let a = gpu.upload_raw(&a_host)?;
            let mut c: CudaSlice<T> = gpu.alloc_poisoned(m * case.n)?;
            let mut c_blas: CudaSlice<T> = gpu.alloc_poisoned(m * case.n)?;
            let (ms, reference_ms) = self.time_against(
                options,
                &mut c,
                |c| {
                    launch(
                        gpu,
                        path,
                        &a,
                        &device_weights,
                        c,
                        m,
                        Some(blocks),
                        &mut scratch,
                    )
                },
                &mut c_blas,
                |c| {
                    gpu.launch_cublas_gemm(
                        activation.dtype(),
                        BLayout::Kn,
                        &a,
                        &expanded,
                        c,
                        &shape,
                    )
                },
            )?;
            drop(c_blas);
            let out = gpu.download_raw(&c)?;
            let expand_us = match path {
                Path::Prefill => {
                    let mut w16: CudaSlice<T> = gpu.alloc_poisoned(case.k * case.n)?;
                    let t = self.time(options, &mut w16, |w16| {
                        launch_expand(gpu, &device_weights, w16)
                    })?;
                    Some(t * 1e3)
                }
                Path::Decode | Path::Batched | Path::Fused => None,
            };

            // Verification on sampled rows and columns, all of k.
            let sampled_rows = sample(m, 16);
            let rounding = weight_rounding(path, case.format, activation);
            for r in [rounding, WeightRounding::Exact] {
                columns
                    .entry(r)
                    .or_insert_with(|| weights.columns_as(&sampled_cols, r));
            }
            let (used_columns, exact_columns) =
                (&columns[&rounding], &columns[&WeightRounding::Exact]);
            let mut got = Vec::new();
            let (mut product, mut magnitude, mut unrounded) = (Vec::new(), Vec::new(), Vec::new());
            for &row in &sampled_rows {
                let a_row: Vec<f64> = a_host[row * case.k..(row + 1) * case.k]
                    .iter()
                    .map(|&x| x.to_f32() as f64)
                    .collect();
                for (j, &col) in sampled_cols.iter().enumerate() {
                    let (used, exact) = (&used_columns[j], &exact_columns[j]);
                    let (mut p, mut mag, mut u) = (0.0, 0.0, 0.0);
                    for i in 0..case.k {
                        p += a_row[i] * used[i];
                        mag += (a_row[i] * used[i]).abs();
                        u += a_row[i] * exact[i];
                    }
                    got.push(out[row * case.n + col].to_f32());
                    product.push(p);
                    magnitude.push(mag);
                    unrounded.push(u);
                }
            }
            let v = compare_with_model(
                &got,
                &product,
                &magnitude,
                case.k,
                &ErrorModel::for_dtype(activation.dtype()),
            );
            let unrounded_error = {
                let diff: f64 = got
                    .iter()
                    .zip(&unrounded)
                    .map(|(&g, &u)| (g as f64 - u).powi(2))
                    .sum();
                let norm: f64 = unrounded.iter().map(|u| u * u).sum();
                (diff / norm.max(f64::MIN_POSITIVE)).sqrt()
            };

            let a_bytes = 2 * m * case.k;
            let c_bytes = 2 * m * case.n;
            let bytes = device_weights.bytes + a_bytes + c_bytes;
            let fp16_bytes = 2 * case.k * case.n + a_bytes + c_bytes;
            let bandwidth = bytes as f64 / (ms * 1e-3) / 1e9;
            let idea = match (path, activation) {
                (Path::Decode, _) => {
                    "decode: packed weights, lop3 conversion, mma.sync, cp.async, split-K"
                }
                (Path::Batched, _) => {
                    "batched decode: 64-row blocks; Hopper: wgmma with the decoded weights as the register operand (C^T = W^T A^T), else mma.sync"
                }
                (Path::Fused, _) => {
                    "fused: a producer warpgroup decodes the packed weights into the swizzled shared tile that wgmma.m64n256k16 reads (128x256 tiles, persistent)"
                }
                (Path::Prefill, ActivationType::F16) => "prefill: expand to fp16, then v18/v15",
                (Path::Prefill, ActivationType::Bf16) => {
                    "prefill: expand to bf16, then the library's bf16 GEMM (v18/v15)"
                }
            };
            let mut record = Record::new(
                path.label(),
                idea,
                &shape,
                &gpu.info().name,
                options.seed,
                options.reps,
            );
            record.precision = "dequant".to_string();
            record.ptx_target = Some(gpu.ptx_target().to_string());
            record.set_verification(&v);
            record.set_time(ms, &shape);
            record.set_reference_time(reference_ms);
            record.dequant = Some(DequantInfo {
                format: case.format.to_string(),
                group: if case.format == WeightFormat::F16 {
                    case.k
                } else {
                    case.group
                },
                zero_points: weights.zeros.is_some(),
                time_us: ms * 1e3,
                reference_us: reference_ms * 1e3,
                speedup: reference_ms / ms,
                bytes,
                bandwidth_gbs: bandwidth,
                bandwidth_share: bandwidth / self.copy_gbs,
                ideal_speedup: fp16_bytes as f64 / bytes as f64,
                blocks,
                rel_error_unrounded: unrounded_error,
                checked_elements: got.len(),
                expand_us,
                activation: activation.label().to_string(),
            });
            records.push(record);
        }
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_both_ends() {
        assert_eq!(sample(5, 16), vec![0, 1, 2, 3, 4]);
        let s = sample(57344, 512);
        assert_eq!((s[0], *s.last().unwrap(), s.len()), (0, 57343, 512));
    }

    #[test]
    fn random_weights_match_their_packing() {
        for format in [
            WeightFormat::Unsigned(3),
            WeightFormat::Signed(5),
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1,
            },
            WeightFormat::F16,
        ] {
            let case = WeightCase {
                format,
                group: 64,
                zero_points: true,
                k: 192,
                n: 300,
            };
            let w = RandomWeights::new(case, 3).unwrap();
            let p = w.prepack().unwrap();
            for (row, col) in [(0, 0), (191, 299), (64, 17), (100, 256)] {
                assert_eq!(p.code(row, col), w.code(row, col));
            }
            assert!(w.weight(5, 7).is_finite());
        }
    }

    #[test]
    fn random_codes_cover_the_format() {
        let case = WeightCase {
            format: WeightFormat::Unsigned(4),
            group: 128,
            zero_points: false,
            k: 128,
            n: 256,
        };
        let w = RandomWeights::new(case, 1).unwrap();
        let mut seen = [false; 16];
        for row in 0..128 {
            for col in 0..8 {
                seen[w.code(row, col) as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn formats_past_fp16_range_are_refused() {
        let case = WeightCase {
            format: WeightFormat::Float {
                exponent: 7,
                mantissa: 0,
            },
            group: 128,
            zero_points: false,
            k: 128,
            n: 256,
        };
        assert!(RandomWeights::new(case, 1).is_err());
    }
}
