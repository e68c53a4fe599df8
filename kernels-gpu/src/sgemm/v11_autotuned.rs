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
//! Launch: per candidate, as v10 with that candidate's tile ([`gemm_geometry::v11`] lists
//! them; the host's table launches them from there).

use super::v10_warp_tiling::warp_tiled;
use crate::ladder_epilogue::Epilogue;
use gemm_geometry::v11;

/// Defines one PTX entry running [`warp_tiled`] with the given block tile.
macro_rules! tuned_entry {
    ($name:ident, $tile:path) => {
        #[doc = concat!("v11 candidate: v10's kernel with the block tile [`", stringify!($tile), "`].")]
        ///
        /// # Safety
        /// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract),
        /// with `a`, `b`, `c` 16-byte aligned and this candidate's launch (as v10's, with its
        /// tile).
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const f32,
            b: *const f32,
            c: *mut f32,
            m: u32,
            n: u32,
            k: u32,
        ) {
            unsafe {
                warp_tiled::<
                    { $tile.block_tile_m },
                    { $tile.block_tile_n },
                    { $tile.tile_k },
                    { $tile.thread_tile_n as usize },
                    false,
                >(a, b, c, m, n, k, &Epilogue::STORE)
            };
        }
    };
}

// 128×128×8 is v10's own entry, `sgemm_v10_warp_tiling`, with its launch bounds.
tuned_entry!(sgemm_v11_tile_128x128x16, v11::TILE_128X128X16);
tuned_entry!(sgemm_v11_tile_128x64x8, v11::TILE_128X64X8);
tuned_entry!(sgemm_v11_tile_128x64x16, v11::TILE_128X64X16);
tuned_entry!(sgemm_v11_tile_64x128x8, v11::TILE_64X128X8);
tuned_entry!(sgemm_v11_tile_64x128x16, v11::TILE_64X128X16);
tuned_entry!(sgemm_v11_tile_64x64x16, v11::TILE_64X64X16);
tuned_entry!(sgemm_v11_tile_128x128x8_wide, v11::TILE_128X128X8_WIDE);
// sm_90a only: 128 accumulators, 32 registers of prefetched float4s and the fragments need all
// 255 registers a thread may have, and ptxas 13.0 fits them without spilling for sm_90 only
// (for sm_80 and sm_120 it spills, and any cap below 255 spills everywhere). The portable build
// leaves this candidate out rather than ship a spilling kernel; it never won a search.
#[cfg(target_feature = "sm_90a")]
tuned_entry!(sgemm_v11_tile_128x128x16_wide, v11::TILE_128X128X16_WIDE);
tuned_entry!(sgemm_v11_tile_64x128x8_wide, v11::TILE_64X128X8_WIDE);
tuned_entry!(sgemm_v11_tile_256x128x8_wide, v11::TILE_256X128X8_WIDE);
tuned_entry!(sgemm_v11_tile_128x256x8_wide, v11::TILE_128X256X8_WIDE);
tuned_entry!(sgemm_v11_tile_64x256x8_wide, v11::TILE_64X256X8_WIDE);
