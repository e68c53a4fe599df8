//! # v18 — persistent blocks: one block per SM, looping over tiles
//!
//! **Idea.** Launch only as many blocks as the GPU has SMs and let each walk the tiles of C
//! (in v9's grouped order, stride = number of blocks). The kernel is v17's: the producer warp
//! and the consumers already count stages and barrier phases as one running sequence, so it
//! carries on from one tile to the next without resetting anything, and the consumers hand
//! the last stage of a tile back before storing it.
//!
//! **Fixes.** In v17 every tile is a new block: barriers are initialized, the pipeline starts
//! empty, and the tensor cores wait for the first stage while the previous block on the SM is
//! still storing its 128×256 results. Here the producer fetches the next tile's first stages
//! during the consumers' epilogue, and the setup is paid once per SM.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 677.2 TFLOP/s, **90.5% of cuBLAS
//! fp16** (748 TFLOP/s; 89.3–93.1% in other runs of the same code), the best rung; 93% at
//! 8192³, 95% at 1024×8192×8192. Only 1–2% over v17: Nsight Compute on v17 puts L2 at 47% and
//! DRAM at 24% of peak, so block setup was a small part of the gap (see `docs/ladder.md`).
//!
//! Launch: v17's, except the grid: min(⌈m/128⌉·⌈n/256⌉, SMs) blocks (the host's `Persistent`
//! grid order).

use super::v17_tma_warp_specialized::tma_wgmma;

crate::launch_bounds!(hgemm_v18_persistent, 288, 1);

/// v18: v17's TMA + `wgmma` kernel with one block per SM, each looping over tiles.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v18_persistent(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    unsafe { tma_wgmma(a, b, c, m, n, k, maps) };
}
