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
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 676.3 TFLOP/s, **88.8% of cuBLAS
//! fp16** (762 TFLOP/s; 90.5% in the previous build's run, 89.3–93.1% in earlier runs), the
//! best rung; 93% at 8192³, 95.5% at 1024×8192×8192. Only 1–2% over v17: Nsight Compute on
//! v17 (an earlier build) puts L2 at 47% and DRAM at 24% of peak, so block setup was a small part of the gap (see `docs/ladder.md`).
//! With four fp16 per store (`tma_gemm::store_f16_quads`, found on v20; a later build,
//! `docs/results/h100-v18-quad-store`, three runs): **99.8% of cuBLAS fp16 at 4096³** (732
//! TFLOP/s) and 98.6% at 8192³ (742).
//!
//! Launch: v17's, except the grid: min(⌈m/128⌉·⌈n/256⌉, SMs) blocks (the host's `Persistent`
//! grid order).
//!
//! # The library entries
//!
//! The same body (`crate::tma_gemm::tma_wgmma`) is the library's fast fp16/bf16 GEMM, persistent like this
//! rung: `gemm_v18_f16_kn`, `gemm_v18_f16_nk`, `gemm_v18_bf16_kn`, `gemm_v18_bf16_nk`, each
//! taking one [`GemmArgs`](gemm_geometry::GemmArgs). What they add to the rung:
//!
//! - **Any leading dimensions and offsets**, through the tensor maps: the kernel reads no A or B
//!   pointer, only the maps at `args.tensor_maps`, whose row strides are `lda·2` and `ldb·2`
//!   bytes. TMA zero-fills whatever lies outside the matrix, so m, n and k need not be
//!   multiples of anything.
//! - **B stored `[n, k]`** (`*_nk`, C = A·Bᵀ, an `nn.Linear` weight): one box of 256 n-rows ×
//!   64 k per stage and a K-major descriptor (`imm-trans-b = 0`); see v17's documentation for
//!   the descriptor math.
//! - **bf16** (`*_bf16_*`): `wgmma … .f32.bf16.bf16`, same shapes and layouts.
//! - **Batch**: 3-D tensor maps, the batch as the outermost dimension (stride = batch stride
//!   in bytes), so one map covers every item; the blocks walk the (batch item, tile) pairs.
//! - **The fused epilogue** of [`GemmArgs`](gemm_geometry::GemmArgs) (alpha, beta with C read only when beta ≠ 0,
//!   `bias[col]`, activation) on the fp32 accumulators, then rounding to fp16/bf16, C written with
//!   `ldc` and `stride_c`.
//! - **Split-K** (`args.splits` > 1, `gemm_geometry::split_k`): the blocks walk
//!   `splits · batch · tiles` work items; item `w`'s virtual batch item `zz = ⌊w / tiles⌋` is
//!   slice `zz / batch` of batch item `zz % batch`, whose k-steps the producer and the consumers
//!   both restrict to that slice. The tile's raw fp32 accumulators go to the workspace (64-bit
//!   pair stores when n is even) and `gemm_split_k_reduce_*` finishes C. For a product whose
//!   tiles cannot fill the SMs (16×4096×4096 is 16 tiles), this keeps every SM busy.
//!
//! ## Launch (every library entry)
//!
//! - Block: `gemm_geometry::v17::THREADS` = 288 threads (x only).
//! - Dynamic shared memory: `gemm_geometry::v17::SHARED_BYTES` = 197 696 bytes (set the
//!   function's max-dynamic-shared-memory attribute).
//! - Grid: (min(batch · ⌈m/128⌉ · ⌈n/256⌉, SMs), 1, 1). Any grid (x, 1, z) with x·z ≤ 2³¹
//!   is correct: block (x, z) takes the work items `z·grid_x + x`, then every
//!   `grid_x·grid_z`-th, item `w` being tile `w mod tiles` (grouped order) of batch item
//!   `⌊w / tiles⌋`. batch · tiles must not exceed 2³¹ − 1 (the kernel traps otherwise).
//!
//! ## Preconditions (the host checks them and routes other inputs elsewhere)
//!
//! - `args.tensor_maps`: the device address (64-byte aligned) of two 128-byte tensor maps,
//!   A's then B's, encoded as below for exactly these arguments.
//! - `args.a` and `args.b` 16-byte aligned; `lda` and `ldb` multiples of 8 elements (row
//!   strides multiples of 16 bytes, a TMA rule); when the batch has more than one item,
//!   `stride_a` and `stride_b` each 0 (operand shared by the batch) or a multiple of 8
//!   elements and at least m·lda (resp. the rows of B times ldb: items must not overlap, as
//!   the driver's description of strides assumes); every stride in bytes below 2⁴⁰. m, n, k,
//!   batch: any values below 2³¹ (the TMA coordinates are signed 32-bit); with m, n or batch 0
//!   the kernel does nothing (better not launched); k = 0 reads no map (any address will do)
//!   and stores the epilogue of a zero product.
//! - `args.c`: 2-byte aligned, any `ldc ≥ n` and `stride_c`. Decided at run time: when `c` is
//!   8-byte aligned and `ldc` and `stride_c` (if batch > 1) are multiples of 4, neighbouring
//!   lanes swap one pair and each stores four columns with one 8-byte store (as the ladder
//!   rung does, whole 32-byte sectors per warp and row; worth 0.927 → 0.952 of cuBLAS over
//!   the fp16 shape suite, median of three runs, `docs/results/v18-library-quads`); else
//!   column pairs with one 32-bit store when `c` is 4-byte aligned and `ldc` and `stride_c`
//!   are even; else element by element.
//! - `args.bias`: 0 or n elements of C's type (any alignment ≥ 2 bytes).
//!
//! ## The tensor maps (`cuTensorMapEncodeTiled`, see `host/src/tensor_map.rs`)
//!
//! Both maps: data type `FLOAT16` (`*_f16_*`) or `BFLOAT16` (`*_bf16_*`), rank 3, element
//! strides (1, 1, 1), interleave none, swizzle `128B`, L2 promotion 256 B, OOB fill none
//! (zeros). Dimensions innermost first; strides in bytes for dimensions 1 and 2:
//!
//! | map | dims | strides | box |
//! |---|---|---|---|
//! | A (`[m, k]`) | (k, m, batch_a) | (lda·2, stride_a·2) | (64, 128, 1) = `A_BOX` |
//! | B `*_kn` (`[k, n]`) | (n, k, batch_b) | (ldb·2, stride_b·2) | (64, 64, 1) = `B_KN_BOX` |
//! | B `*_nk` (`[n, k]`) | (k, n, batch_b) | (ldb·2, stride_b·2) | (64, 256, 1) = `B_NK_BOX` |
//!
//! `batch_a` = batch if `stride_a ≠ 0`, else 1 (the kernel then always asks for item 0; its
//! stride is never used but must still be legal, e.g. `m·lda·2` rounded up to 16); likewise B.

use crate::element::{Bf16, F16};
use crate::tma_gemm::{ladder_tma_wgmma, library_entry};
use gemm_geometry::v17::{MIN_BLOCKS_PER_SM, THREADS};

crate::launch_bounds!(hgemm_v18_persistent, THREADS, MIN_BLOCKS_PER_SM);

/// v18: v17's TMA + `wgmma` kernel with one block per SM, each looping over tiles.
///
/// # Safety
/// That of
/// [`hgemm_v17_tma_warp_specialized`](super::v17_tma_warp_specialized::hgemm_v17_tma_warp_specialized),
/// except the grid: any number of blocks up to the number of tiles (the module documentation says
/// which).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v18_persistent(
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

library_entry!(
    v17,
    /// Persistent TMA + `wgmma` GEMM, fp16 A `[m, k]` and B `[k, n]`, fp16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_f16_kn,
    F16,
    false
);
library_entry!(
    v17,
    /// Persistent TMA + `wgmma` GEMM, fp16 A `[m, k]` and B `[n, k]` (C = A·Bᵀ), fp16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_f16_nk,
    F16,
    true
);
library_entry!(
    v17,
    /// Persistent TMA + `wgmma` GEMM, bf16 A `[m, k]` and B `[k, n]`, bf16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_bf16_kn,
    Bf16,
    false
);
library_entry!(
    v17,
    /// Persistent TMA + `wgmma` GEMM, bf16 A `[m, k]` and B `[n, k]` (C = A·Bᵀ), bf16 C, fp32
    /// accumulation and epilogue, batched.
    gemm_v18_bf16_nk,
    Bf16,
    true
);
