//! A 4-bit quantized linear layer: weights quantized once to u4 with fp16 scales per group of
//! 128 rows and pre-packed on the GPU, then multiplied by fp16 activations at a decode batch
//! (m = 1 and 16: the decode kernel) and a prefill batch (m = 256: dequantize, then a
//! tensor-core GEMM). Each result is checked against an f64 product with the dequantized
//! weights, and timed.
//!
//! `cargo run --release --example quantized_linear` (needs an NVIDIA GPU and driver).

use cudarc::driver::CudaContext;
use half::f16;
use rust_gemm::quant::format::quantize;
use rust_gemm::{Gemm, Group, QuantizedWeights, WeightFormat};
use std::error::Error;

fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let gemm = Gemm::new(stream.clone())?;
    let (k, n) = (4096, 4096);
    let (format, group) = (WeightFormat::Unsigned(4), 128);
    let w = random(k * n, 7);
    let qw = QuantizedWeights::quantize(&gemm, &w, k, n, format, Group::Rows(group))?;
    // The weights as the kernels use them, for the CPU check.
    let dequantized = quantize(&w, k, n, format, group, false)?.dequantize();
    println!(
        "{format} weights, groups of {group}: {k}×{n} ({:.1} MiB packed instead of {:.1} MiB in fp16)",
        (k * n) as f64 * 4.5 / 8.0 / (1 << 20) as f64,
        (k * n * 2) as f64 / (1 << 20) as f64
    );
    for m in [1, 16, 256] {
        let x: Vec<f16> = random(m * k, m as u64)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let x_dev = stream.clone_htod(&x)?;
        let mut y_dev = stream.alloc_zeros::<f16>(m * n)?;
        qw.matmul(&gemm, &x_dev, &mut y_dev, m)?; // warm-up
        let timed = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (ctx.new_event(timed)?, ctx.new_event(timed)?);
        start.record(&stream)?;
        qw.matmul(&gemm, &x_dev, &mut y_dev, m)?;
        stop.record(&stream)?;
        stop.synchronize()?;
        let us = start.elapsed_ms(&stop)? as f64 * 1000.0;
        let y = stream.clone_dtoh(&y_dev)?;
        let mut worst = 0.0f64;
        for i in (0..m).step_by(m.div_ceil(8)) {
            for j in 0..n {
                let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
                for l in 0..k {
                    let term = x[i * k + l].to_f64() * dequantized[l * n + j] as f64;
                    sum += term;
                    magnitude += term.abs();
                }
                // fp16 output (2⁻¹¹), fp16 weights on the prefill path (2⁻¹¹ per term), fp32
                // accumulation.
                let allowed = 2f64.powi(-11) * (sum.abs() + magnitude)
                    + (k as f64 + 4.0) * 2f64.powi(-24) * magnitude
                    + 1e-4;
                worst = worst.max((y[i * n + j].to_f64() - sum).abs() / allowed);
            }
        }
        println!(
            "m = {m:>3}: {:?} path, {us:.1} µs, largest error / allowed {worst:.3} ({})",
            qw.path(&gemm, m),
            if worst <= 1.0 { "ok" } else { "FAILED" }
        );
        if worst > 1.0 {
            return Err(format!("m = {m}: result outside the tolerance").into());
        }
    }
    Ok(())
}
