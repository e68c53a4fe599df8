//! A bf16 linear layer as a transformer's MLP runs it: `y = GELU(x · Wᵀ + bias)` with the
//! weight stored `[out_features, in_features]` (PyTorch's `nn.Linear` layout), the bias and
//! the activation fused into the GEMM. Checked against an f64 CPU computation.
//!
//! `cargo run --release --example linear_layer` (needs an NVIDIA GPU and driver).

use cudarc::driver::CudaContext;
use half::bf16;
use rust_gemm::{Epilogue, Gemm, MatmulDesc};
use std::error::Error;

fn random(len: usize, seed: u64, scale: f64) -> Vec<bf16> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            bf16::from_f64(unit * scale)
        })
        .collect()
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?; // a stream of the caller's own
    let gemm = Gemm::new(stream.clone())?;
    // 32 tokens through a 4096 → 11008 projection (a Llama-7B MLP's first layer).
    let (tokens, in_features, out_features) = (32, 4096, 11008);
    let x = random(tokens * in_features, 1, 1.0);
    let w = random(
        out_features * in_features,
        2,
        1.0 / (in_features as f64).sqrt(),
    );
    let bias = random(out_features, 3, 0.1);
    let x_dev = stream.clone_htod(&x)?;
    let w_dev = stream.clone_htod(&w)?;
    let bias_dev = stream.clone_htod(&bias)?;
    let mut y_dev = stream.alloc_zeros::<bf16>(tokens * out_features)?;

    let desc = MatmulDesc::new(tokens, out_features, in_features)
        .b_transposed()
        .epilogue(Epilogue::bias(&bias_dev).gelu_tanh());
    let plan = gemm.plan(&x_dev, &w_dev, &y_dev, &desc)?;
    gemm.matmul(&x_dev, &w_dev, &mut y_dev, &desc)?;
    let y = stream.clone_dtoh(&y_dev)?;

    let mut worst = 0.0f64;
    for t in 0..tokens {
        for o in 0..out_features {
            let (mut sum, mut magnitude) = (0.0, 0.0);
            for i in 0..in_features {
                let term = x[t * in_features + i].to_f64() * w[o * in_features + i].to_f64();
                sum += term;
                magnitude += term.abs();
            }
            let expected = gelu(sum + bias[o].to_f64());
            let error = (y[t * out_features + o].to_f64() - expected).abs();
            // bf16 output: half an ulp (2⁻⁸ relative), plus fp32 accumulation.
            let allowed = 2f64.powi(-8) * expected.abs()
                + (in_features as f64 + 4.0)
                    * 2f64.powi(-24)
                    * (magnitude + bias[o].to_f64().abs())
                + 1e-6;
            worst = worst.max(error / allowed);
        }
    }
    println!(
        "bf16 linear layer {tokens}×{in_features} → {out_features} with bias and GELU: kernel {} ({})",
        plan.kernel.name, plan.reason
    );
    println!(
        "largest error / allowed error: {worst:.3} ({})",
        if worst <= 1.0 { "ok" } else { "FAILED" }
    );
    if worst > 1.0 {
        return Err("result outside the tolerance".into());
    }
    Ok(())
}
