//! The SGEMM ladder: one file per rung, numbered in ladder order.
//!
//! Every entry point has the signature `(a, b, c, m, n, k)`: row-major `A` (m×k), `B` (k×n) and
//! `C` (m×n) in global memory, `C = A·B`. Launch geometry (block shape, tiles, shared memory) is
//! written once, in the rung's module of `gemm_geometry` (one shared by the rungs that keep a
//! shape: v3–v4, v5–v9, v10–v12), which the kernels and the host's table of rungs both read.
//!
//! v00–v15 run on every GPU from sm_80 on and are in both PTX builds; v16–v18 use Hopper's
//! `wgmma` and TMA and exist only in the sm_90a build (see the crate documentation), like v19
//! and v21 (TF32) and v20 (FP8).
//!
//! # The ladder's launch contract
//! Every ladder entry point (`sgemm_v00_*` … `hgemm_v18_*`, not the library's `gemm_*`
//! entries, which take a [`gemm_geometry::GemmArgs`] and state their own contract) is an
//! `unsafe` kernel whose caller, the host, must guarantee:
//! - **Memory.** `a`, `b` and `c` are device pointers to contiguous row-major matrices of
//!   exactly `m·k`, `k·n` and `m·n` elements (f32 up to v14, fp16 bit patterns from v15 on),
//!   readable (A, B) and writable (C) for the whole launch; C does not overlap A or B, and no
//!   other work touches C while the kernel runs.
//! - **Alignment.** Every base is aligned to its element size; rungs that use 128-bit accesses
//!   or 16-byte `cp.async`/TMA copies (v4 on) also need 16-byte-aligned bases, which device
//!   allocations (256-byte aligned) give. A rung's own module documentation names any further
//!   requirement (e.g. v17's `k`, `n` multiples of 8); its entry's `# Safety` section repeats
//!   the alignment it assumes.
//! - **Launch.** Exactly the block shape, grid and at least the dynamic shared memory that the
//!   rung's module documentation gives under "Launch" (from `gemm_geometry`, which the host's
//!   table of rungs launches): the kernels index tiles from the block and thread indices, use every thread of
//!   a block in barriers and warp- or warpgroup-collective instructions, and address shared
//!   memory up to the size they assume without checking it.
//! - **Shape.** `m`, `n`, `k` ≥ 1, small enough that `m·k`, `k·n`, `m·n` fit the allocations;
//!   ragged sizes (not multiples of the tile) are handled inside the kernels.

pub mod v00_global_memory;
pub mod v01_shared_panels;
pub mod v02_shared_tiles;
pub mod v03_thread_tile;
pub mod v04_float4_loads;
pub mod v05_register_blocking;
pub mod v06_vector_fragments;
pub mod v07_transposed_a;
pub mod v08_double_buffering;
pub mod v09_grouped_order;
pub mod v10_warp_tiling;
pub mod v11_autotuned;
pub mod v12_fused_epilogue;
pub mod v13_async_copies;
pub mod v14_tf32_tensor_cores;
pub mod v15_fp16_tensor_cores;
#[cfg(target_feature = "sm_90a")]
pub mod v16_wgmma;
#[cfg(target_feature = "sm_90a")]
pub mod v17_tma_warp_specialized;
#[cfg(target_feature = "sm_90a")]
pub mod v18_persistent;
#[cfg(target_feature = "sm_90a")]
pub mod v19_tf32_wgmma;
#[cfg(target_feature = "sm_90a")]
pub mod v20_fp8_wgmma;
#[cfg(target_feature = "sm_90a")]
pub mod v21_tf32_register_b;
#[cfg(target_feature = "sm_90a")]
pub mod v22_pingpong;
#[cfg(target_feature = "sm_90a")]
pub mod v23_clusters;
