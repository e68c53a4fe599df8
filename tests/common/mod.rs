//! What the API tests share: random inputs, an f64 reference of everything a `MatmulDesc`
//! describes, and the tolerance each element type earns.

#![allow(dead_code)]

use cudarc::driver::{CudaContext, CudaStream};
use rust_gemm::{Activation, BLayout, DType, Gemm};
use std::sync::Arc;

/// A new stream on device 0 and a `Gemm` on it, with the PTX module that
/// `RUST_GEMM_TEST_PTX` names (`sm80`: the portable one, as an Ampere or Ada GPU loads it;
/// `sm90a`), or the device's own when it is unset; so the whole suite runs on either module.
pub fn open_gemm() -> (Arc<CudaStream>, Gemm) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let gemm = gemm_on(&stream);
    (stream, gemm)
}

/// A `Gemm` on `stream` with the module `RUST_GEMM_TEST_PTX` names (see [`open_gemm`]).
pub fn gemm_on(stream: &Arc<CudaStream>) -> Gemm {
    match rust_gemm::ptx::test_module().expect("RUST_GEMM_TEST_PTX") {
        None => Gemm::new(stream.clone()).expect("the kernels load"),
        Some(module) => {
            let runtime = rust_gemm::runtime::Runtime::with_ptx(stream.clone(), module.text)
                .expect("the module loads");
            Gemm::from_runtime(runtime)
        }
    }
}

pub mod fuzz;
pub mod fuzz_run;

/// The library's SplitMix64 (crate-private there, so included as source).
#[path = "../../src/random.rs"]
mod random;

/// SplitMix64 (the library's): a small, fast, seedable generator, the same on every machine, so that a seed
/// printed by a failing test replays the same case.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends on every bit of `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ random::GAMMA)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let z = random::splitmix64(self.0);
        self.0 = self.0.wrapping_add(random::GAMMA);
        z
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn signed_unit(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// Uniform in `range` (inclusive).
    pub fn range(&mut self, range: std::ops::RangeInclusive<usize>) -> usize {
        let (low, high) = (*range.start(), *range.end());
        low + (self.next_u64() % (high - low + 1) as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0..=items.len() - 1)]
    }
}

/// Deterministic values uniform in [-1, 1), different per `seed`.
pub fn random(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| rng.signed_unit()).collect()
}

/// One strided-batched product as the API describes it, with every value already widened to
/// f64 (the inputs as the kernel sees them: already rounded to the element type).
pub struct Case<'a> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub strides: (usize, usize, usize),
    pub b_layout: BLayout,
    pub alpha: f64,
    pub beta: f64,
    pub activation: Option<Activation>,
    pub a: &'a [f64],
    pub b: &'a [f64],
    /// C before the call (read when beta ≠ 0).
    pub c: &'a [f64],
    pub bias: Option<&'a [f64]>,
}

/// The activation in f64, as `GemmArgs::epilogue` defines it.
pub fn activate(activation: Option<Activation>, x: f64) -> f64 {
    match activation {
        None => x,
        Some(Activation::Relu) => x.max(0.0),
        Some(Activation::LeakyRelu(slope)) => {
            if x > 0.0 {
                x
            } else {
                slope as f64 * x
            }
        }
        Some(Activation::GeluTanh) => {
            let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
            0.5 * x * (1.0 + inner.tanh())
        }
    }
}

/// The expected C (same layout and length as `case.c`, untouched elements kept) and, per
/// element, the magnitude the error is measured against: `|alpha|·Σ|a·b| + |beta·c| + |bias|`.
/// The rows of C are shared among the machine's cores; each element is summed over k in order
/// on one thread, so the result does not depend on how many there are.
pub fn reference(case: &Case) -> (Vec<f64>, Vec<f64>) {
    let mut out = case.c.to_vec();
    let mut magnitude = vec![0.0; case.c.len()];
    let rows: Vec<(usize, usize)> = (0..case.batch)
        .flat_map(|z| (0..case.m).map(move |i| (z, i)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per_thread = rows.len().div_ceil(threads).max(1);
    // Each thread returns (offset of the row in C, its values, their magnitudes).
    let done: Vec<(usize, Vec<f64>, Vec<f64>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = rows
            .chunks(per_thread)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(z, i)| row(case, z, i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("reference thread"))
            .collect()
    });
    for (at, values, magnitudes) in done {
        out[at..at + case.n].copy_from_slice(&values);
        magnitude[at..at + case.n].copy_from_slice(&magnitudes);
    }
    (out, magnitude)
}

/// Row `i` of batch item `z` of [`reference`]: its offset in C, values and magnitudes.
fn row(case: &Case, z: usize, i: usize) -> (usize, Vec<f64>, Vec<f64>) {
    let (oa, ob, oc) = (z * case.strides.0, z * case.strides.1, z * case.strides.2);
    let first = oc + i * case.ldc;
    let (mut values, mut magnitudes) = (Vec::with_capacity(case.n), Vec::with_capacity(case.n));
    for j in 0..case.n {
        let (mut sum, mut abs) = (0.0, 0.0);
        for l in 0..case.k {
            let a = case.a[oa + i * case.lda + l];
            let b = match case.b_layout {
                BLayout::Kn => case.b[ob + l * case.ldb + j],
                BLayout::Nk => case.b[ob + j * case.ldb + l],
            };
            sum += a * b;
            abs += (a * b).abs();
        }
        let at = first + j;
        let old = if case.beta != 0.0 { case.c[at] } else { 0.0 };
        let bias = case.bias.map_or(0.0, |b| b[j]);
        let x = case.alpha * sum + case.beta * old + bias;
        values.push(activate(case.activation, x));
        magnitudes.push(case.alpha.abs() * abs + (case.beta * old).abs() + bias.abs());
    }
    (first, values, magnitudes)
}

/// Unit roundoff of the output's element type.
pub fn output_roundoff(dtype: DType) -> f64 {
    match dtype {
        DType::F32 | DType::Tf32 => f64::powi(2.0, -24),
        DType::F16 => f64::powi(2.0, -11),
        DType::Bf16 => f64::powi(2.0, -8),
    }
}

/// The largest error element (i, j) may have: fp32 accumulation of k terms in any order
/// (`(k + 4)·2⁻²⁴` of the magnitude, the rigorous γ bound with room for the epilogue's few
/// operations), TF32's rounding of both inputs (`2·2⁻¹¹`), the output's rounding (half an ulp
/// of the result, plus the smallest normal for values that round to subnormals), the device's
/// tanh (`1e-6` of the magnitude), all times 1.2 for the activations' slope (GELU's derivative
/// stays under 1.13).
pub fn tolerance(dtype: DType, k: usize, magnitude: f64, expected: f64) -> f64 {
    // TF32 cuts A and B to 10 mantissa bits: v14 rounds (u = 2⁻¹¹), `wgmma` (v19) truncates
    // (u = 2⁻¹⁰); each product is then off by at most 2u + u² (`src/check/verify.rs`).
    let inputs = if dtype == DType::Tf32 {
        let u = f64::powi(2.0, -10);
        2.0 * u + u * u
    } else {
        0.0
    };
    let accumulation = (k as f64 + 4.0) * f64::powi(2.0, -24);
    let tiny = match dtype {
        DType::F16 => f64::powi(2.0, -14),
        DType::Bf16 => f64::powi(2.0, -126),
        _ => f64::powi(2.0, -126),
    };
    1.2 * ((accumulation + inputs + 1e-6) * magnitude)
        + output_roundoff(dtype) * expected.abs()
        + tiny
}

/// The largest error of one output of a dequantizing GEMM (fp32 accumulation, output in the
/// activations' type) whose value with the weights as the path uses them
/// (`Quantized::dequantize_as`) is `sum`, with `magnitude = Σ|x·w|` over `k` terms: the
/// output's rounding (fp16 or bf16), fp32 accumulation in any order, plus the output type's
/// smallest normal for results near zero.
pub fn quantized_tolerance(
    sum: f64,
    magnitude: f64,
    k: usize,
    activation: rust_gemm::quant::fast::ActivationType,
) -> f64 {
    use rust_gemm::quant::fast::ActivationType;
    let (output_roundoff, smallest_normal) = match activation {
        ActivationType::F16 => (f64::powi(2.0, -11), f64::powi(2.0, -14)),
        ActivationType::Bf16 => (f64::powi(2.0, -8), f64::powi(2.0, -126)),
    };
    output_roundoff * sum.abs()
        + (k as f64 + 4.0) * f64::powi(2.0, -24) * magnitude * 1.2
        + smallest_normal
}
