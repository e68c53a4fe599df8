//! `QuantizedWeights` fuzzed on the GPU: random formats (u1–u8, i2–i8, small floats e1–e5),
//! group sizes (32 to 512 rows, or one group per column), zero points (unsigned formats),
//! shapes, fp16 or bf16 activations, and for each weight matrix one decode batch (m ≤ 16) and
//! one batch of m > 16 (batched decode or prefill), activations and outputs as views into
//! longer buffers. Each product is checked
//! against the f64 product with the weights as the path uses them
//! (`Quantized::dequantize_as`); the output's tail must stay untouched. About one weight
//! request in twenty asks for a group the format cannot serve and must be refused with a typed
//! error.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_quantized_fuzz_gpu -- --ignored --nocapture`.
//! `FUZZ_SEED`, `FUZZ_CASES` (weight matrices, default 1100, two products each),
//! `FUZZ_CASE` (replay one), `FUZZ_SUMMARY=path` (the summary as JSON).

mod common;

use common::fuzz::{indices_from_env, seed_from_env};
use common::{Rng, quantized_tolerance, random};
use cudarc::driver::{CudaContext, CudaStream};
use half::{bf16, f16};
use rust_gemm::quant::fast::{ActivationType, weight_rounding};
use rust_gemm::quant::format::{Quantized, quantize};
use rust_gemm::{Gemm, GemmError, Group, QuantizedActivation, QuantizedWeights, WeightFormat};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Multiply-adds per product at most (keeps the f64 reference of the run to seconds).
const MULTIPLY_ADDS: usize = 3_000_000;

/// One generated weight matrix and its two products.
#[derive(Clone, Debug)]
struct QuantCase {
    format: WeightFormat,
    group: Group,
    zero_points: bool,
    k: usize,
    n: usize,
    /// A decode batch and a prefill batch.
    ms: [usize; 2],
    /// Whether the group is one the format cannot serve (a refusal is expected).
    bad_group: bool,
    /// The activations' (and output's) type.
    activation: ActivationType,
}

fn generate(seed: u64, index: u64) -> QuantCase {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    let format = match rng.range(0..=9) {
        0..=3 => WeightFormat::Unsigned(rng.range(1..=8) as u32),
        4..=6 => WeightFormat::Signed(rng.range(2..=8) as u32),
        _ => {
            let exponent = rng.range(1..=5);
            WeightFormat::Float {
                exponent: exponent as u32,
                mantissa: rng.range(0..=7 - exponent) as u32,
            }
        }
    };
    let zero_points = matches!(format, WeightFormat::Unsigned(_)) && rng.chance(0.4);
    let n = (700f64.powf(rng.unit())).round().max(1.0) as usize;
    let bad_group = rng.chance(0.05);
    let (group, k) = if bad_group {
        // 48 rows divide k = 480 but fit no chunk of k; 100 rows do not divide k = 256.
        if rng.chance(0.5) {
            (Group::Rows(48), 480)
        } else {
            (Group::Rows(100), 256)
        }
    } else if rng.chance(0.25) {
        let k = (2000f64.powf(rng.unit())).round().max(1.0) as usize;
        (Group::PerChannel, k)
    } else {
        let rows = rng.pick(&[32, 64, 128, 256, 512]);
        let groups = rng.range(1..=(4096 / rows).min(16));
        (Group::Rows(rows), rows * groups)
    };
    let decode_m = rng.range(1..=16);
    let prefill_m = rng.range(17..=300).min((MULTIPLY_ADDS / (n * k)).max(17));
    // Drawn last, so that the other fields of a seed's cases do not depend on it.
    let activation = if rng.chance(0.5) {
        ActivationType::Bf16
    } else {
        ActivationType::F16
    };
    QuantCase {
        format,
        group,
        zero_points,
        k,
        n,
        ms: [decode_m, prefill_m],
        bad_group,
        activation,
    }
}

/// Runs one weight matrix's products; returns the paths taken, or why it failed.
fn run(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    case: &QuantCase,
    seed: u64,
) -> Result<Vec<String>, String> {
    let (k, n) = (case.k, case.n);
    let w: Vec<f32> = random(k * n, seed).iter().map(|&x| x as f32).collect();
    let made = if case.zero_points {
        QuantizedWeights::quantize_with_zero_points(gemm, &w, k, n, case.format, case.group)
    } else {
        QuantizedWeights::quantize(gemm, &w, k, n, case.format, case.group)
    };
    let qw = match (made, case.bad_group) {
        (Ok(qw), false) => qw,
        (Err(GemmError::GroupSize { .. } | GemmError::UnsupportedGroup { .. }), true) => {
            return Ok(vec!["refused".into()]);
        }
        (Err(e), _) => return Err(format!("quantize: {e}")),
        (Ok(_), true) => return Err("a group the format cannot serve was accepted".into()),
    };
    let rows = match case.group {
        Group::Rows(rows) => rows,
        Group::PerChannel => k,
    };
    let reference = quantize(&w, k, n, case.format, rows, case.zero_points)
        .map_err(|e| format!("reference quantize: {e}"))?;
    let mut paths = Vec::new();
    for (j, &m) in case.ms.iter().enumerate() {
        let seed = seed + 1 + j as u64;
        paths.push(match case.activation {
            ActivationType::F16 => product::<f16>(stream, gemm, &qw, &reference, case, m, seed),
            ActivationType::Bf16 => product::<bf16>(stream, gemm, &qw, &reference, case, m, seed),
        }?);
    }
    Ok(paths)
}

/// One product of `m` random rows of type `T` with `qw`, checked against `reference` (the same
/// quantization on the CPU); returns the path taken, or why it failed.
fn product<T: QuantizedActivation>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    qw: &QuantizedWeights,
    reference: &Quantized,
    case: &QuantCase,
    m: usize,
    seed: u64,
) -> Result<String, String> {
    let (k, n) = (case.k, case.n);
    let x: Vec<T> = random(m * k + 5, seed)
        .iter()
        .map(|&v| T::from_f32(v as f32))
        .collect();
    let x_dev = stream.clone_htod(&x).map_err(|e| e.to_string())?;
    let poison = vec![T::from_f32(f32::NAN); m * n + 5];
    let mut y_dev = stream.clone_htod(&poison).map_err(|e| e.to_string())?;
    // Views: x starts 3 elements in, y is longer than m × n.
    let x_view = x_dev.slice(3..);
    let mut y_view = y_dev.slice_mut(..m * n + 2);
    qw.matmul(gemm, &x_view, &mut y_view, m)
        .map_err(|e| format!("m {m}: {e}"))?;
    let y = stream.clone_dtoh(&y_dev).map_err(|e| e.to_string())?;
    let path = qw.path(gemm, m);
    let activation = T::TYPE;
    let used = reference.dequantize_as(weight_rounding(path, case.format, activation));
    for r in 0..m {
        for c in 0..n {
            let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
            for l in 0..k {
                let term = x[3 + r * k + l].to_f32() as f64 * used[l * n + c] as f64;
                sum += term;
                magnitude += term.abs();
            }
            let got = y[r * n + c].to_f32() as f64;
            let allowed = quantized_tolerance(sum, magnitude, k, activation);
            if (got - sum).abs() > allowed || got.is_nan() {
                return Err(format!(
                    "m {m} ({path:?}, {activation}): y[{r}, {c}] is {got}, expected {sum} \
                     (tolerance {allowed:e})"
                ));
            }
        }
    }
    if y[m * n..].iter().any(|v| !v.to_f32().is_nan()) {
        return Err(format!(
            "m {m} ({path:?}, {activation}): elements past m × n were written"
        ));
    }
    Ok(format!("{path:?}"))
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn generated_quantized_products() {
    let seed = seed_from_env(0x5EED_0004);
    let indices = indices_from_env(1100);
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let gemm = common::gemm_on(&stream);
    let started = std::time::Instant::now();
    let mut tally = BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    let count = indices.end - indices.start;
    for index in indices {
        let case = generate(seed, index);
        match run(&stream, &gemm, &case, seed.wrapping_add(index * 7)) {
            Ok(paths) => {
                for path in paths {
                    *tally.entry(path).or_default() += 1;
                }
                let format = match case.format {
                    WeightFormat::Unsigned(_) => "unsigned",
                    WeightFormat::Signed(_) => "signed",
                    _ => "float",
                };
                *tally.entry(format!("format {format}")).or_default() += 1;
                *tally
                    .entry(format!("activation {}", case.activation))
                    .or_default() += 1;
            }
            Err(message) => {
                eprintln!(
                    "FAILED case {index} of seed {seed:#x}: {message}\n  {case:?}\n  replay: \
                     FUZZ_SEED={seed} FUZZ_CASE={index} cargo test --release --test \
                     api_quantized_fuzz_gpu -- --ignored"
                );
                failures.push(index);
                if failures.len() >= 20 {
                    break;
                }
            }
        }
    }
    let products = ["Decode", "Batched", "Prefill"]
        .iter()
        .map(|path| tally.get(*path).unwrap_or(&0))
        .sum::<usize>();
    let summary = format!(
        "{{\n  \"test\": \"api_quantized_fuzz_gpu\",\n  \"seed\": {seed},\n  \"weight_matrices\": \
         {count},\n  \"products_checked\": {products},\n  \"failures\": {},\n  \"failed_cases\": \
         {failures:?},\n  \"device\": \"{}\",\n  \"seconds\": {:.1},\n  \"tally\": {:?}\n}}\n",
        failures.len(),
        gemm.device().name,
        started.elapsed().as_secs_f64(),
        tally
    );
    eprintln!("{summary}");
    if let Ok(path) = std::env::var("FUZZ_SUMMARY") {
        std::fs::write(&path, &summary).expect("write the summary");
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed",
        failures.len()
    );
    if count >= 1000 {
        assert!(products >= 2000, "only {products} products checked");
    }
}
