//! Launch geometry of v14 (`sgemm_v14_tf32_tensor_cores`, `gemm_v14_tf32_kn`,
//! `gemm_v14_tf32_nk`): TF32 `mma.sync` m16n8k8, 64 × 64 outputs per warp, fed by a
//! `cp.async` pipeline of [`STAGES`] shared-memory stages.
//!
//! Shared memory per stage, in floats: A as `[BLOCK_TILE_M][K_MAJOR_STRIDE]`, then B as
//! `[TILE_K][B_STRIDE_KN]` (B stored `[k, n]`) or `[BLOCK_TILE_N][K_MAJOR_STRIDE]` (B stored
//! `[n, k]`: the layout its fragments read along k, like A's). The paddings put the eight rows
//! one fragment load touches in different banks.

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 128;
/// Steps of k per pipeline stage.
pub const TILE_K: u32 = 16;
/// Shared-memory stages: copies run `STAGES − 1` steps ahead of the math.
pub const STAGES: u32 = 4;
/// Rows and columns of C per warp.
pub const WARP_TILE: u32 = 64;
/// Warps along n (and along m: 2 × 2).
pub const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE;
/// Threads per block (1-D): 4 warps.
pub const THREADS: u32 = (BLOCK_TILE_M / WARP_TILE) * WARPS_N * 32;
/// Blocks per SM the kernels are built for (`.minnctapersm`): a cap of 255 registers.
pub const MIN_BLOCKS_PER_SM: u32 = 2;
/// Row length, in floats, of a tile stored along k (A; B when stored `[n, k]`): 16 + 4, so that
/// thread (g, q) of a fragment load reads bank `20g + q mod 32`, all 32 distinct.
pub const K_MAJOR_STRIDE: u32 = TILE_K + 4;
/// Row length, in floats, of the B tile when B is stored `[k, n]`: 128 + 8, so that thread
/// (g, q) reads bank `8q + g`, all distinct.
pub const B_STRIDE_KN: u32 = BLOCK_TILE_N + 8;
/// Floats of the A tile of one stage.
pub const A_FLOATS: u32 = BLOCK_TILE_M * K_MAJOR_STRIDE;
/// Floats of one stage, B stored `[k, n]`.
pub const STAGE_FLOATS_KN: u32 = A_FLOATS + TILE_K * B_STRIDE_KN;
/// Floats of one stage, B stored `[n, k]`.
pub const STAGE_FLOATS_NK: u32 = A_FLOATS + BLOCK_TILE_N * K_MAJOR_STRIDE;
/// Dynamic shared memory of `sgemm_v14_tf32_tensor_cores` and `gemm_v14_tf32_kn`, in bytes
/// (75 776).
pub const SHARED_BYTES_KN: u32 = STAGES * STAGE_FLOATS_KN * 4;
/// Dynamic shared memory of `gemm_v14_tf32_nk`, in bytes (81 920).
pub const SHARED_BYTES_NK: u32 = STAGES * STAGE_FLOATS_NK * 4;

/// Blocks along grid x for an `m × n` C: one per 128 × 128 tile, in grouped order (grid y is 1;
/// grid z walks the batch).
pub const fn grid_x(m: u32, n: u32) -> u32 {
    m.div_ceil(BLOCK_TILE_M) * n.div_ceil(BLOCK_TILE_N)
}

const _: () = assert!(THREADS == 128);
const _: () = assert!(SHARED_BYTES_KN == 75_776 && SHARED_BYTES_NK == 81_920);
