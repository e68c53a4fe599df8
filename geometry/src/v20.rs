//! The geometry of the FP8 TMA + `wgmma` kernels (ladder rung v20, e4m3 and e5m2): v17's block,
//! pipeline and shared memory with 1-byte elements. A stage's tile rows are still one 128-byte
//! swizzle span, which now holds 128 elements of k, so a stage is 128 deep instead of 64 and
//! every byte count of v17 stays as it is.
//!
//! `wgmma` reads FP8 operands from shared memory only K-major (each row of A, and each column of
//! B, contiguous along k): B is taken `[n, k]`, the usual layout of an FP8 weight (the Triton
//! tutorial pre-transposes b for its fp8 run for the same reason).

pub use crate::v17::{
    A_TILE_BYTES, ALIGNMENT_SLACK, B_TILE_BYTES, BARRIER_BYTES, BLOCK_TILE_M, BLOCK_TILE_N,
    CONSUMER_THREADS, CONSUMER_WARPGROUPS, MIN_BLOCKS_PER_SM, PRODUCER_THREADS, SHARED_BYTES,
    STAGE_BYTES, STAGES, SWIZZLE_BYTES, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TENSOR_MAPS, THREADS,
    WARPGROUP_ROWS,
};

/// Bytes per element of A and B (e4m3 or e5m2).
pub const ELEMENT_BYTES: u32 = 1;
/// Bytes per element of C (fp16).
pub const OUTPUT_BYTES: u32 = 2;
/// Depth of one pipeline stage along k: one swizzled row, 128 elements.
pub const TILE_K: u32 = SWIZZLE_BYTES / ELEMENT_BYTES;
/// k of one FP8 `wgmma` (m64n256k32): a 32-byte slice of every swizzled row, as for fp16.
pub const INSTRUCTION_K: u32 = 32;
/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 128 × 128, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B stored `[n, k]`: `[k, n]` = 128 × 256, one copy per stage.
pub const B_NK_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_N];
/// The per-tensor scales the kernel reads: `scale_a`, `scale_b` (f32, device memory).
pub const SCALES: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_fill_v17s_stages() {
        assert_eq!(TILE_K, 128);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(B_NK_BOX[0] * B_NK_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        for b in [A_BOX, B_NK_BOX] {
            assert_eq!(b[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
            assert!(b[1] <= 256);
        }
        // Four instructions per stage, each reading 32 bytes of every row, as v17's do.
        assert_eq!(TILE_K / INSTRUCTION_K, 4);
        assert_eq!(INSTRUCTION_K * ELEMENT_BYTES, 32);
    }
}
