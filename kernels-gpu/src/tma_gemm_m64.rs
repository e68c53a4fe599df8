//! The library's small-tile TMA + `wgmma` entries, fp16 and bf16: v18's body
//! ([`crate::tma_gemm::tma_wgmma`]) on 64 × 64 block tiles, one consumer warpgroup and six
//! stages, two blocks per SM (`gemm_geometry::v18_m64`). Hopper only (sm_90a).
//!
//! **Why.** A product with few rows and a long k, such as an attention projection at a
//! serving batch (64 × 4096 × 4096), gives v18's 128 × 256 tiles too little to do: 16 tiles
//! for 132 SMs. Dispatch split its k into 8 slices, and the reduction of those slices took a
//! quarter of the time (`docs/results/h100-mid-m-probe`). Tiles of 64 × 64 number 64 there and
//! 256 at m = 256; each block streams its 64-column slab of B over the whole of k, as cuBLAS's
//! 64-row kernels do.
//!
//! **What changes from v18.** Nothing in the body's logic: the same producer warp and
//! transaction barriers, the same 128-byte swizzled rows, TMA boxes (one `[k, n]` slab of B
//! per stage instead of four) and descriptors, the same fused epilogue, batch and split-K. One
//! warpgroup issues `wgmma … m64n64k16` (32 accumulators per thread, `wgmma_m64n64k16`) where
//! v18's two issue m64n256k16; a stage is 16 KiB instead of 48, so six stages take 96 KiB and two
//! blocks share an SM, one storing its tile while the other multiplies.
//!
//! ## Launch and preconditions
//!
//! Those of v18's library entries (`sgemm::v18_persistent`), with:
//!
//! - Block: `gemm_geometry::v18_m64::THREADS` = 160 threads (x only).
//! - Dynamic shared memory: `gemm_geometry::v18_m64::SHARED_BYTES` = 99 424 bytes.
//! - Grid: (min(batch · ⌈m/64⌉ · ⌈n/64⌉ · splits, 2 · SMs), 1, 1); any grid (x, 1, z) is
//!   correct, as for v18.
//! - The tensor maps' boxes: A `A_BOX` = (64, 64); B `[k, n]` `B_KN_BOX` = (64, 64); B
//!   `[n, k]` `B_NK_BOX` = (64, 64) (`gemm_geometry::v18_m64`), every other field as v18's.

use crate::element::{Bf16, F16};
use crate::tma_gemm::library_entry;

library_entry!(
    v18_m64,
    /// Small-tile persistent TMA + `wgmma` GEMM, fp16 A `[m, k]` and B `[k, n]`, fp16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_m64_f16_kn,
    F16,
    false
);
library_entry!(
    v18_m64,
    /// Small-tile persistent TMA + `wgmma` GEMM, fp16 A `[m, k]` and B `[n, k]` (C = A·Bᵀ),
    /// fp16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_m64_f16_nk,
    F16,
    true
);
library_entry!(
    v18_m64,
    /// Small-tile persistent TMA + `wgmma` GEMM, bf16 A `[m, k]` and B `[k, n]`, bf16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_m64_bf16_kn,
    Bf16,
    false
);
library_entry!(
    v18_m64,
    /// Small-tile persistent TMA + `wgmma` GEMM, bf16 A `[m, k]` and B `[n, k]` (C = A·Bᵀ),
    /// bf16 C, fp32 accumulation and epilogue, batched.
    gemm_v18_m64_bf16_nk,
    Bf16,
    true
);
