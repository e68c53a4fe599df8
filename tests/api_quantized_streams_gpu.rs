//! One `QuantizedWeights` used through two `Gemm`s on two streams at once: each stream's
//! products are queued back to back, interleaved with the other's, without synchronizing, so
//! the kernels of the two streams overlap on the device. Every output is checked against the
//! f64 reference, so buffers that the two streams' launches shared (a split-K workspace, its
//! arrival counters, the prefill expansion) would show up as wrong outputs.
//!
//! The layer, 4096 × 1024, is small enough that the decode kernels split every output tile
//! among many blocks (so they use the workspace and counters), at m = 1 and 16 (decode), 64
//! (batched decode) and 300 (prefill).
//!
//! Needs a CUDA GPU: `cargo test --release --test api_quantized_streams_gpu -- --ignored`.

mod common;

use common::{gemm_on, quantized_tolerance, random};
use cudarc::driver::{CudaContext, CudaSlice};
use half::f16;
use rust_gemm::quant::fast::{ActivationType, weight_rounding};
use rust_gemm::quant::format::quantize;
use rust_gemm::{Group, QuantizedWeights, WeightFormat};

/// Products queued on each stream before the outputs are read back.
const ROUNDS: usize = 24;

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn one_quantized_weights_on_two_streams_at_once() {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let streams = [
        ctx.new_stream().expect("a stream"),
        ctx.new_stream().expect("a stream"),
    ];
    let gemms = [gemm_on(&streams[0]), gemm_on(&streams[1])];
    let (k, n, group) = (4096, 1024, 128);
    let format = WeightFormat::Unsigned(4);
    let w: Vec<f32> = random(k * n, 0x5157).iter().map(|&v| v as f32).collect();
    let qw = QuantizedWeights::quantize(&gemms[0], &w, k, n, format, Group::Rows(group))
        .expect("quantize");
    let reference = quantize(&w, k, n, format, group, false).expect("reference");
    gemms[0].synchronize().expect("upload");

    for m in [1, 16, 64, 300] {
        let path = qw.path(&gemms[0], m);
        let used = reference.dequantize_as(weight_rounding(path, format, ActivationType::F16));
        // Each stream its own activations, so that a product that read the other stream's
        // partial sums or expansion would be wrong.
        let xs: Vec<Vec<f16>> = (0..2)
            .map(|s| {
                random(m * k, 0xA000 + 16 * m as u64 + s)
                    .iter()
                    .map(|&v| f16::from_f64(v))
                    .collect()
            })
            .collect();
        let x_dev: Vec<CudaSlice<f16>> = (0..2)
            .map(|s| streams[s].clone_htod(&xs[s]).expect("x"))
            .collect();
        let mut ys: Vec<Vec<CudaSlice<f16>>> = (0..2)
            .map(|s| {
                (0..ROUNDS)
                    .map(|_| streams[s].clone_htod(&vec![f16::NAN; m * n]).expect("y"))
                    .collect()
            })
            .collect();
        // Warm up on each stream alone: scratch is made and kernels load outside the overlap.
        for s in 0..2 {
            qw.matmul(&gemms[s], &x_dev[s], &mut ys[s][0], m)
                .expect("warm-up");
            gemms[s].synchronize().expect("warm-up");
        }
        // Interleaved: stream 0's round r, then stream 1's, then stream 0's round r + 1, ...
        let [ys0, ys1] = &mut ys[..] else {
            unreachable!("two streams")
        };
        for (y0, y1) in ys0.iter_mut().zip(ys1.iter_mut()) {
            qw.matmul(&gemms[0], &x_dev[0], y0, m).expect("matmul");
            qw.matmul(&gemms[1], &x_dev[1], y1, m).expect("matmul");
        }
        for s in 0..2 {
            let expected = expected_outputs(&xs[s], &used, m, n, k);
            for (round, y_dev) in ys[s].iter().enumerate() {
                let y = streams[s].clone_dtoh(y_dev).expect("y back");
                check(&y, &expected, k, m, n).unwrap_or_else(|e| {
                    panic!(
                        "m {m} ({path:?}), stream {s}, round {round} of {ROUNDS}: {e}\n\
                         (the two streams' launches shared something they both write)"
                    )
                });
            }
        }
        println!(
            "m {m:>3} ({path:?}): {ROUNDS} products on each of two streams, overlapping, all \
             within tolerance (reproducible: {})",
            qw.reproducible::<f16>(&gemms[0], m).expect("reproducible")
        );
    }
}

/// The f64 product of `x` (m × k) and the weights as the kernel uses them (k × n), with each
/// output's magnitude Σ|x·w|.
fn expected_outputs(x: &[f16], used: &[f32], m: usize, n: usize, k: usize) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, 0.0); m * n];
    for r in 0..m {
        let row = &mut out[r * n..(r + 1) * n];
        for l in 0..k {
            let a = x[r * k + l].to_f64();
            for (c, (sum, magnitude)) in row.iter_mut().enumerate() {
                let term = a * used[l * n + c] as f64;
                *sum += term;
                *magnitude += term.abs();
            }
        }
    }
    out
}

/// Checks every output against its expected value within the fp16 output's tolerance.
fn check(y: &[f16], expected: &[(f64, f64)], k: usize, m: usize, n: usize) -> Result<(), String> {
    let mut bad = 0usize;
    let mut first = None;
    for (i, (&got, &(sum, magnitude))) in y.iter().zip(expected).take(m * n).enumerate() {
        let got = got.to_f64();
        if got.is_nan()
            || (got - sum).abs() > quantized_tolerance(sum, magnitude, k, ActivationType::F16)
        {
            bad += 1;
            first.get_or_insert((i / n, i % n, got, sum));
        }
    }
    match first {
        None => Ok(()),
        Some((r, c, got, sum)) => Err(format!(
            "{bad} of {} outputs wrong; first y[{r}, {c}] = {got}, expected {sum}",
            m * n
        )),
    }
}

/// Weight matrices of different k through one `Gemm`, whose scratch they share: a product with
/// a long k leaves its A in the padded copy, and a later product with a k off the kernels'
/// 128-row chunks must not read that as its padding (the signed codes' padding decodes to
/// values that are not zero, so stale activations would change its outputs).
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn weights_of_different_k_share_one_gemm() {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let gemm = gemm_on(&stream);
    let group = 32;
    let layers: Vec<_> = [
        (1024, 40, WeightFormat::Signed(4)),
        (160, 24, WeightFormat::Signed(8)),
        (96, 56, WeightFormat::Unsigned(7)),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(k, n, format))| {
        let w: Vec<f32> = random(k * n, 0x600 + i as u64)
            .iter()
            .map(|&v| v as f32)
            .collect();
        let qw = QuantizedWeights::quantize(&gemm, &w, k, n, format, Group::Rows(group))
            .expect("quantize");
        (
            k,
            n,
            format,
            qw,
            quantize(&w, k, n, format, group, false).expect("reference"),
        )
    })
    .collect();
    for m in [1, 5, 16, 40] {
        // Longest k first, then the others, twice round: every product after the first finds
        // another layer's activations in the shared padded copy.
        for round in 0..2 {
            for (i, (k, n, format, qw, reference)) in layers.iter().enumerate() {
                let (k, n) = (*k, *n);
                let x: Vec<f16> = random(m * k, 0xB00 + 64 * round + 8 * i as u64 + m as u64)
                    .iter()
                    .map(|&v| f16::from_f64(4.0 * v))
                    .collect();
                let x_dev = stream.clone_htod(&x).expect("x");
                let mut y_dev = stream.clone_htod(&vec![f16::NAN; m * n]).expect("y");
                qw.matmul(&gemm, &x_dev, &mut y_dev, m).expect("matmul");
                let y = stream.clone_dtoh(&y_dev).expect("y back");
                let path = qw.path(&gemm, m);
                let used =
                    reference.dequantize_as(weight_rounding(path, *format, ActivationType::F16));
                check(&y, &expected_outputs(&x, &used, m, n, k), k, m, n).unwrap_or_else(|e| {
                    panic!("m {m} ({path:?}), layer {i} (k {k}, {format}), round {round}: {e}")
                });
            }
        }
        println!(
            "m {m:>2}: three layers of k = 1024, 160, 96 through one Gemm, twice round, all within tolerance"
        );
    }
}
