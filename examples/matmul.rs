//! Multiplies random f32 and f16 matrices on the GPU with the library's dispatch, checks each
//! result against an f64 product on the CPU, and prints the kernel chosen and its time.
//!
//! `cargo run --release --example matmul` (needs an NVIDIA GPU and driver).

use cudarc::driver::{CudaContext, CudaStream};
use rust_gemm::{Gemm, GemmElement, MatmulDesc};
use std::error::Error;
use std::sync::Arc;

/// Values uniform in [-1, 1), from a 64-bit linear congruential generator.
fn random(len: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Runs `C = A·B` for `T`, checks it, prints the plan and the time of one call.
fn run<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    (m, n, k): (usize, usize, usize),
    tolerance: f64,
) -> Result<(), Box<dyn Error>> {
    let a: Vec<T> = random(m * k, 1).into_iter().map(T::from_f64).collect();
    let b: Vec<T> = random(k * n, 2).into_iter().map(T::from_f64).collect();
    let a_dev = stream.clone_htod(&a)?;
    let b_dev = stream.clone_htod(&b)?;
    let mut c_dev = stream.alloc_zeros::<T>(m * n)?;
    let desc = MatmulDesc::new(m, n, k);
    let plan = gemm.plan(&a_dev, &b_dev, &c_dev, &desc)?;
    // Once to warm up (module load, first launch), then timed with CUDA events.
    gemm.matmul(&a_dev, &b_dev, &mut c_dev, &desc)?;
    let ctx = stream.context();
    // Events with timing (cudarc's default flags disable it).
    let timed = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (start, stop) = (ctx.new_event(timed)?, ctx.new_event(timed)?);
    start.record(stream)?;
    gemm.matmul(&a_dev, &b_dev, &mut c_dev, &desc)?;
    stop.record(stream)?;
    stop.synchronize()?;
    let ms = start.elapsed_ms(&stop)? as f64;
    let c = stream.clone_dtoh(&c_dev)?;

    // Check a sample of rows against an f64 product of the same (rounded) inputs.
    let mut worst = 0.0f64;
    for i in (0..m).step_by(m.div_ceil(16)) {
        for j in 0..n {
            let (mut sum, mut magnitude) = (0.0, 0.0);
            for l in 0..k {
                let term = a[i * k + l].to_f64() * b[l * n + j].to_f64();
                sum += term;
                magnitude += term.abs();
            }
            worst = worst.max((c[i * n + j].to_f64() - sum).abs() / magnitude.max(1e-30));
        }
    }
    let verdict = if worst <= tolerance { "ok" } else { "FAILED" };
    println!(
        "{:>4} {m}×{n}×{k}: kernel {} ({}), {ms:.3} ms, {:.1} TFLOP/s, worst error {worst:.2e} of the terms' magnitude: {verdict}",
        T::DTYPE.label(),
        plan.kernel.name,
        plan.reason,
        2.0 * (m * n * k) as f64 / ms / 1e9,
    );
    if worst > tolerance {
        return Err(format!("{} result off by {worst:e}", T::DTYPE.label()).into());
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let gemm = Gemm::new(stream.clone())?;
    let device = gemm.device();
    println!(
        "device: {} (compute capability {}.{}, {} SMs)",
        device.name, device.compute_capability.0, device.compute_capability.1, device.sm_count
    );
    for shape in [(4096, 4096, 4096), (1000, 1000, 1000), (127, 129, 131)] {
        // fp32 accumulation error grows like k·2⁻²⁴ at worst; fp16 output adds 2⁻¹¹.
        run::<f32>(&stream, &gemm, shape, shape.2 as f64 * 2f64.powi(-24) * 2.0)?;
        run::<half::f16>(
            &stream,
            &gemm,
            shape,
            shape.2 as f64 * 2f64.powi(-24) * 2.0 + 2f64.powi(-10),
        )?;
    }
    Ok(())
}
