//! # v12 — fused epilogue
//!
//! **Idea.** `C = alpha·A·B + beta·C`, then optionally a leaky ReLU (`x` if `x > 0`, else
//! `slope·x`, as in the Triton matrix-multiplication tutorial), applied to the accumulators in
//! registers just before the store. v10's kernel with its [`Epilogue`] set at run time.
//!
//! **Fixes.** Done as separate passes, scaling, adding `beta·C` and the activation would each
//! read and write all of C again: at 4096² that is 64 MiB per pass, about 20 µs of HBM traffic
//! each on an H100, for arithmetic the GEMM's threads can do on values they already hold. Fused,
//! the only extra traffic is reading C once when beta is not 0.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 41.8 TFLOP/s, 80% of cuBLAS, as
//! v10's 41.9, run with alpha 1, beta 0 and no activation: passing the epilogue at run time
//! costs nothing measurable. `tests/gpu_epilogue.rs` checks other epilogues (scaling, beta·C,
//! leaky ReLU) against the CPU reference at aligned and ragged shapes.
//!
//! Launch: as v10 (its tile, [`gemm_geometry::v10::TILE`]), with four more arguments: `alpha`, `beta`, `leaky_slope` and `activation`
//! (0: none, 1: leaky ReLU).

use super::v10_warp_tiling::{LOADS_MIDWAY, warp_tiled};
use crate::ladder_epilogue::Epilogue;
use gemm_geometry::v10::{MIN_BLOCKS_PER_SM, TILE};

crate::launch_bounds!(sgemm_v12_fused_epilogue, TILE.threads(), MIN_BLOCKS_PER_SM);

/// v12: `C = activation(alpha·A·B + beta·C)` with v10's 128×128×8 warp-tiled kernel.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned; `c` is read as well when `beta` ≠ 0.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v12_fused_epilogue(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
    leaky_slope: f32,
    activation: u32,
) {
    let epilogue = Epilogue {
        alpha,
        beta,
        leaky_slope: if activation == 1 {
            Some(leaky_slope)
        } else {
            None
        },
    };
    unsafe {
        warp_tiled::<
            { TILE.block_tile_m },
            { TILE.block_tile_n },
            { TILE.tile_k },
            { TILE.thread_tile_n as usize },
            LOADS_MIDWAY,
        >(a, b, c, m, n, k, &epilogue)
    };
}
