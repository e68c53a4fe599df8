//! Launch geometry of v13 (`sgemm_v13_async_copies`, `gemm_v13_f32_kn`, `gemm_v13_f32_nk`):
//! v10's warp tiles (8 × 8 outputs per thread) fed by a `cp.async` pipeline of [`STAGES`]
//! shared-memory stages, each holding one [`TILE_K`]-deep step of the A and B tiles.
//!
//! Shared memory per stage, in floats: A transposed to `[TILE_K][A_STRIDE]`, then B as
//! `[TILE_K][B_STRIDE_KN]` (B stored `[k, n]`) or `[TILE_K][B_STRIDE_NK]` (B stored `[n, k]`,
//! transposed on its way in like A, so padded like A).

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 128;
/// Steps of k per pipeline stage.
pub const TILE_K: u32 = 16;
/// Shared-memory stages: copies run `STAGES − 1` steps ahead of the math.
pub const STAGES: u32 = 4;
/// Rows of C per thread.
pub const THREAD_TILE_M: u32 = 8;
/// Columns of C per thread.
pub const THREAD_TILE_N: u32 = 8;
/// Threads per block (1-D): 8 warps of 64 × 32 outputs.
pub const THREADS: u32 = (BLOCK_TILE_M / THREAD_TILE_M) * (BLOCK_TILE_N / THREAD_TILE_N);
/// Blocks per SM the kernels are built for (`.minnctapersm`): with [`THREADS`], a cap of 128
/// registers per thread.
pub const MIN_BLOCKS_PER_SM: u32 = 2;
/// Floats of padding after each row of a transposed (`[k][rows]`) tile: a warp's transposing
/// 4-byte copies (4 rows × 8 k) then land in 32 different banks, and rows stay 16-byte aligned.
pub const TRANSPOSED_PADDING: u32 = 4;
/// Row length, in floats, of the transposed A tile in shared memory.
pub const A_STRIDE: u32 = BLOCK_TILE_M + TRANSPOSED_PADDING;
/// Row length, in floats, of the B tile when B is stored `[k, n]` (copied as it is, 16 bytes
/// at a time: no padding needed).
pub const B_STRIDE_KN: u32 = BLOCK_TILE_N;
/// Row length, in floats, of the B tile when B is stored `[n, k]` (transposed like A).
pub const B_STRIDE_NK: u32 = BLOCK_TILE_N + TRANSPOSED_PADDING;
/// Floats of one stage, B stored `[k, n]`.
pub const STAGE_FLOATS_KN: u32 = TILE_K * A_STRIDE + TILE_K * B_STRIDE_KN;
/// Floats of one stage, B stored `[n, k]`.
pub const STAGE_FLOATS_NK: u32 = TILE_K * A_STRIDE + TILE_K * B_STRIDE_NK;
/// Dynamic shared memory of `sgemm_v13_async_copies` and `gemm_v13_f32_kn`, in bytes (66 560).
pub const SHARED_BYTES_KN: u32 = STAGES * STAGE_FLOATS_KN * 4;
/// Dynamic shared memory of `gemm_v13_f32_nk`, in bytes (67 584).
pub const SHARED_BYTES_NK: u32 = STAGES * STAGE_FLOATS_NK * 4;

/// Blocks along grid x for an `m × n` C: one per 128 × 128 tile, in grouped order (grid y is 1;
/// grid z walks the batch).
pub const fn grid_x(m: u32, n: u32) -> u32 {
    m.div_ceil(BLOCK_TILE_M) * n.div_ceil(BLOCK_TILE_N)
}

const _: () = assert!(THREADS == 256);
const _: () = assert!(SHARED_BYTES_KN == 66_560 && SHARED_BYTES_NK == 67_584);
