//! # v11 — autotuned block tiles
//!
//! **Idea.** No new kernel code: v10's generic [`warp_tiled`] is monomorphized over a set of
//! block tiles (`BLOCK_TILE_M × BLOCK_TILE_N`, `TILE_K` deep), one PTX entry each. The host
//! times every candidate on the shape at hand the first time it sees that shape, keeps the
//! fastest in memory and in a JSON cache file keyed by device and shape, and launches it.
//!
//! **Fixes.** One tile does not suit every shape or GPU. Larger tiles reuse more data per
//! load but leave fewer blocks to spread over 132 SMs; deeper `TILE_K` halves the barriers per
//! flop but doubles the shared memory per stage. Measuring beats guessing.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 42.4 TFLOP/s, 81% of cuBLAS,
//! choosing a 128×256 tile 8 deep with 8×16 outputs per thread (a near tie with v10's tile);
//! at 1024³ it picks 64×128×16 and reaches 90% of cuBLAS where v10 reaches 61%.
//!
//! Launch: per candidate, as v10 with that candidate's tile (the host's table lists them).

use super::v10_warp_tiling::warp_tiled;
use crate::ladder_epilogue::Epilogue;

/// Defines one PTX entry running [`warp_tiled`] with the given block tile.
macro_rules! tuned_entry {
    ($name:ident, $block_tile_m:literal, $block_tile_n:literal, $tile_k:literal, $thread_tile_n:literal) => {
        #[doc = concat!("v11 candidate: ", stringify!($block_tile_m), "×", stringify!($block_tile_n), " block tile, ", stringify!($tile_k), " deep, 8×", stringify!($thread_tile_n), " outputs per thread.")]
        ///
        /// # Safety
        /// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract),
        /// with `a`, `b`, `c` 16-byte aligned and this candidate's launch (as v10's, with its
        /// tile).
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32) {
            unsafe { warp_tiled::<$block_tile_m, $block_tile_n, $tile_k, $thread_tile_n>(a, b, c, m, n, k, &Epilogue::STORE) };
        }
    };
}

// 128×128×8 is v10's own entry, `sgemm_v10_warp_tiling`, with its launch bounds.
tuned_entry!(sgemm_v11_tile_128x128x16, 128, 128, 16, 8);
tuned_entry!(sgemm_v11_tile_128x64x8, 128, 64, 8, 8);
tuned_entry!(sgemm_v11_tile_128x64x16, 128, 64, 16, 8);
tuned_entry!(sgemm_v11_tile_64x128x8, 64, 128, 8, 8);
tuned_entry!(sgemm_v11_tile_64x128x16, 64, 128, 16, 8);
tuned_entry!(sgemm_v11_tile_64x64x16, 64, 64, 16, 8);
tuned_entry!(sgemm_v11_tile_128x128x8_wide, 128, 128, 8, 16);
tuned_entry!(sgemm_v11_tile_128x128x16_wide, 128, 128, 16, 16);
tuned_entry!(sgemm_v11_tile_64x128x8_wide, 64, 128, 8, 16);
tuned_entry!(sgemm_v11_tile_256x128x8_wide, 256, 128, 8, 16);
tuned_entry!(sgemm_v11_tile_128x256x8_wide, 128, 256, 8, 16);
tuned_entry!(sgemm_v11_tile_64x256x8_wide, 64, 256, 8, 16);
