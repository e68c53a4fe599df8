//! The SGEMM ladder: one file per rung, numbered in ladder order.
//!
//! Every entry point has the signature `(a, b, c, m, n, k)`: row-major `A` (m×k), `B` (k×n) and
//! `C` (m×n) in global memory, `C = A·B`. Launch geometry (block shape, grid, shared memory)
//! lives in the host's table of rungs, next to each rung's requirements.
//!
//! v00–v15 run on every GPU from sm_80 on and are in both PTX builds; v16–v18 use Hopper's
//! `wgmma` and TMA and exist only in the sm_90a build (see the crate documentation).

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
