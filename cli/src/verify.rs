//! `sgemm-ladder verify`: every kernel on many random shapes against the f64 CPU reference.

use crate::options::{PtxChoice, seed_or_random, select_rungs};
use crate::output::say;
use anyhow::{Context, Result};
use clap::Args;
use rust_gemm::check::sweep::{all_kernels, check_shape, random_shapes};
use rust_gemm::harness::gpu::Gpu;

/// Randomized verification: every kernel (each rung, each autotune candidate) on many random
/// shapes, ones and primes included, against the f64 CPU reference. The seed is printed;
/// `verify --seed S` with the same --count and --max-dim repeats the run exactly.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Random shapes to check.
    #[arg(long, default_value_t = 200)]
    count: usize,

    /// Largest dimension drawn.
    #[arg(long, default_value_t = 600)]
    max_dim: usize,

    /// Rungs whose kernels are checked (each with its autotune candidates), comma-separated
    /// (see --list); all by default.
    #[arg(long, value_delimiter = ',')]
    rungs: Vec<String>,

    /// Seed of the random shapes and inputs; random by default (and printed either way).
    #[arg(long)]
    seed: Option<u64>,

    #[command(flatten)]
    ptx: PtxChoice,
}

/// Returns whether every check passed.
pub fn run(args: VerifyArgs) -> Result<bool> {
    let VerifyArgs {
        count,
        max_dim,
        rungs,
        seed,
        ptx,
    } = args;
    let seed = seed_or_random(seed);
    let wanted = select_rungs(&rungs)?;
    let kernels: Vec<_> = all_kernels()
        .into_iter()
        .filter(|(label, _)| {
            wanted
                .iter()
                .any(|r| label.split('/').next() == Some(r.name))
        })
        .collect();
    let gpu = Gpu::open_module(ptx.module())?;
    let kernels: Vec<_> = kernels
        .into_iter()
        .filter(|(label, rung)| match gpu.rung_unavailable(rung) {
            Some(reason) => {
                say!("verify: skipping {label}: it {reason}");
                false
            }
            None => true,
        })
        .collect();
    say!(
        "verify: {count} random shapes (dimensions up to {max_dim}), {} kernels, seed {seed}, on {} (PTX {})",
        kernels.len(),
        gpu.info().name,
        gpu.ptx_target()
    );
    let (mut passed, mut failed, mut skipped) = (0usize, Vec::new(), 0usize);
    for (i, shape) in random_shapes(count, max_dim, seed).iter().enumerate() {
        let checks = check_shape(&gpu, &kernels, shape, seed.wrapping_add(i as u64 + 1))
            .with_context(|| format!("at shape {shape}"))?;
        for check in checks {
            match check.outcome {
                Ok(v) if v.passed => passed += 1,
                Ok(v) => failed.push(format!(
                    "{} at {}: rel error {:.3e} (tolerance {:.3e}), {} elements outside the bound",
                    check.kernel, check.shape, v.rel_error, v.tolerance, v.elements_out_of_bound
                )),
                Err(_) => skipped += 1,
            }
        }
    }
    for line in &failed {
        say!("FAIL {line}");
    }
    if !failed.is_empty() {
        say!(
            "reproduce with: sgemm-ladder verify --seed {seed} --count {count} --max-dim {max_dim}"
        );
    }
    say!(
        "verify: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    Ok(failed.is_empty())
}
