//! The geometry of the TF32 TMA + `wgmma` kernels (ladder rung v19 and the library entry
//! `gemm_v19_tf32_nk`): v17's block, pipeline and shared memory with fp32 elements. A stage's
//! tile rows are still one 128-byte swizzle span, which now holds 32 elements of k, so a stage
//! is 32 deep instead of 64 and every byte count of v17 stays as it is.
//!
//! `wgmma` reads TF32 operands from shared memory only K-major (each row of A, and each column
//! of B, contiguous along k): B must be `[n, k]`. The ladder's `[k, n]` B is transposed into a
//! `[n, k]` copy first (`gemm_transpose_f32`, geometry below).

pub use crate::v17::{
    A_TILE_BYTES, ALIGNMENT_SLACK, B_TILE_BYTES, BARRIER_BYTES, BLOCK_TILE_M, BLOCK_TILE_N,
    CONSUMER_THREADS, CONSUMER_WARPGROUPS, MIN_BLOCKS_PER_SM, PRODUCER_THREADS, SHARED_BYTES,
    STAGE_BYTES, STAGES, SWIZZLE_BYTES, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TENSOR_MAPS, THREADS,
    WARPGROUP_ROWS,
};

/// Bytes per element (fp32, read by the tensor cores as TF32).
pub const ELEMENT_BYTES: u32 = 4;
/// Depth of one pipeline stage along k: one swizzled row, 32 elements.
pub const TILE_K: u32 = SWIZZLE_BYTES / ELEMENT_BYTES;
/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 32 × 128, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B stored `[n, k]`: `[k, n]` = 32 × 256, one copy per stage.
pub const B_NK_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_N];

/// Threads per block of the transpose kernel `gemm_transpose_f32`: 32 × 8.
pub const TRANSPOSE_THREADS: u32 = 256;
/// The square tile each transpose block moves through shared memory: 32 × 32 elements (a
/// warp reads one row of it and writes one column, both as whole 128-byte lines).
pub const TRANSPOSE_TILE: u32 = 32;
/// Dynamic shared memory of the transpose kernel: one tile whose rows are padded to 33 floats
/// (so that reading a column touches 32 different banks).
pub const TRANSPOSE_SHARED_BYTES: u32 = TRANSPOSE_TILE * (TRANSPOSE_TILE + 1) * 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_fill_v17s_stages() {
        assert_eq!(TILE_K, 32);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(B_NK_BOX[0] * B_NK_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        for b in [A_BOX, B_NK_BOX] {
            assert_eq!(b[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
            assert!(b[1] <= 256);
        }
        assert_eq!(TRANSPOSE_THREADS % TRANSPOSE_TILE, 0);
    }
}
