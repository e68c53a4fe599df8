//! # v17 — TMA copies and a producer warp (warp specialization)
//!
//! **Idea.** Give the copying to hardware and to a warp of its own. One thread of a ninth warp
//! (the *producer*) asks the tensor memory accelerator (TMA) for each stage's tiles: five
//! copy instructions per 48 KiB stage (one 128×64 box of A, four 64×64 slabs of B), every
//! address, bounds check and zero fill done by the TMA unit, the tiles written directly in the
//! 128-byte-swizzled layout `wgmma` reads. The two *consumer* warpgroups only wait and multiply.
//! The two sides talk through transaction barriers in shared memory (`mbarrier`): `full[s]`
//! completes when the bytes of stage `s` have landed, `empty[s]` when all 256 consumer threads
//! have retired the `wgmma` that read it, so the producer may refill it.
//!
//! **Fixes.** v16's 256 threads each computed addresses and issued 12 `cp.async` per stage,
//! then all met at a block-wide barrier: the tensor cores idled while every thread copied and
//! waited. Here no consumer instruction is spent on copying, and no block-wide barrier remains
//! in the main loop: each consumer waits only for the stage it needs, up to 4 stages ahead.
//!
//! **Requirement.** TMA reads rows that start at 16-byte boundaries: `k` and `n` must be
//! multiples of 8 (the host refuses other shapes with a message saying so); ragged `m`, `n`,
//! `k` otherwise work, because the TMA fills everything outside the matrices with zeros.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 663.8 TFLOP/s, 87% of cuBLAS fp16
//! (762 TFLOP/s; 89% in the previous build's run); 94% at 8192³. With four fp16 per store (a later build,
//! `docs/results/h100-v18-quad-store`): 98.2% at 4096³ and 97.8% at 8192³ (medians of three).
//!
//! Launch: 288 threads (2 consumer warpgroups of 64 rows each, then the producer warp), grid
//! ⌈m/128⌉·⌈n/256⌉ (1-D, grouped), [`SHARED_BYTES`] of dynamic shared memory; one extra
//! argument after `(a, b, c, m, n, k)`: the address of the TMA tensor maps of A (box 64 × 128)
//! and B (box 64 × 64), 128 bytes each, built by the host (`cuTensorMapEncodeTiled`, fp16,
//! 128-byte swizzle). The numbers live in `gemm_geometry::v17`, shared with the host.
//!
//! The body, shared with v18 and the library entries, lives in [`crate::tma_gemm`], with the
//! shared-memory layouts and `wgmma` descriptor math.

use crate::element::F16;
use crate::tma_gemm::ladder_tma_wgmma;
use gemm_geometry::v17::THREADS;

pub use gemm_geometry::v17::SHARED_BYTES;

crate::launch_bounds!(hgemm_v17_tma_warp_specialized, THREADS, 1);

/// v17: fp16 GEMM, TMA producer warp feeding two `wgmma` consumer warpgroups through
/// `mbarrier`s, 128×256×64 block tiles, 4 stages. `a`, `b`, `c` hold fp16 bit patterns;
/// `maps` the two tensor maps (A, then B).
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), for fp16, with
/// the module's Requirement (`k`, `n` multiples of 8), `maps` the two tensor maps (A, then B)
/// encoded as the module documentation says for these `a`, `b`, `m`, `n`, `k`, 64-byte aligned, and
/// the module's launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v17_tma_warp_specialized(
    _a: *const u16,
    _b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    unsafe { ladder_tma_wgmma::<F16, false>(c as *mut F16, m, n, k, maps) };
}
