//! The library's mid-size TMA + `wgmma` entries, fp16 and bf16: v18's body
//! ([`crate::tma_gemm::tma_wgmma`]) on 128 × 128 block tiles, two consumer warpgroups and six
//! stages, one block per SM (`gemm_geometry::v18_n128`). Hopper only (sm_90a).
//!
//! **Why.** v18's 128 × 256 tiles come in coarse waves: 2176³ is 153 of them on 132 SMs, so
//! the second wave runs 21 tiles while 111 SMs wait, and 256 × 8192 × 8192 is 64, half the
//! SMs (dispatch splits its k in two and adds a reduction). The small entries' 64 × 64 tiles
//! fill any wave but read twice v18's shared-memory bytes per multiply-add and run at less
//! than half its rate. Tiles of 128 × 128 keep v18's 128 rows of A against every byte of B
//! and halve the wave's grain: 289 tiles at 2176³ (three waves, the last two-thirds full), 128
//! at 256 × 8192 × 8192 (one, unsplit).
//!
//! **What changes from v18.** Nothing in the body's logic: the same producer warp and
//! transaction barriers, the same 128-byte swizzled rows, TMA boxes (two `[k, n]` slabs of B
//! per stage instead of four, or a 128-row `[n, k]` box) and descriptors, the same fused
//! epilogue, batch and split-K. Each warpgroup issues `wgmma … m64n128k16` (64 accumulators per
//! thread, `wgmma_m64n128k16`) where v18's issue m64n256k16; a stage is 32 KiB instead of 48,
//! so six fit where v18 has four.
//!
//! ## Launch and preconditions
//!
//! Those of v18's library entries (`sgemm::v18_persistent`), with:
//!
//! - Block: `gemm_geometry::v18_n128::THREADS` = 288 threads (x only).
//! - Dynamic shared memory: `gemm_geometry::v18_n128::SHARED_BYTES` = 197 728 bytes.
//! - Grid: (min(batch · ⌈m/128⌉ · ⌈n/128⌉ · splits, SMs), 1, 1); any grid (x, 1, z) is correct,
//!   as for v18.
//! - The tensor maps' boxes: A `A_BOX` = (64, 128); B `[k, n]` `B_KN_BOX` = (64, 64); B
//!   `[n, k]` `B_NK_BOX` = (64, 128) (`gemm_geometry::v18_n128`), every other field as v18's.

use crate::element::{Bf16, F16};
use crate::tma_gemm::library_entry;

library_entry!(
    v18_n128,
    /// Mid-size persistent TMA + `wgmma` GEMM (128 × 128 tiles), fp16 A `[m, k]` and B
    /// `[k, n]`, fp16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_n128_f16_kn,
    F16,
    false
);
library_entry!(
    v18_n128,
    /// Mid-size persistent TMA + `wgmma` GEMM (128 × 128 tiles), fp16 A `[m, k]` and B
    /// `[n, k]` (C = A·Bᵀ), fp16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_n128_f16_nk,
    F16,
    true
);
library_entry!(
    v18_n128,
    /// Mid-size persistent TMA + `wgmma` GEMM (128 × 128 tiles), bf16 A `[m, k]` and B
    /// `[k, n]`, bf16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_n128_bf16_kn,
    Bf16,
    false
);
library_entry!(
    v18_n128,
    /// Mid-size persistent TMA + `wgmma` GEMM (128 × 128 tiles), bf16 A `[m, k]` and B
    /// `[n, k]` (C = A·Bᵀ), bf16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_n128_bf16_nk,
    Bf16,
    true
);
