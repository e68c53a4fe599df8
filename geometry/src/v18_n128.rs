//! The geometry of the library's mid-size TMA + `wgmma` entries
//! `gemm_v18_n128_{f16,bf16}_{kn,nk}`: v18's body (`kernels-gpu/src/tma_gemm.rs`) with
//! 128 × 128 block tiles, two consumer warpgroups of 64 rows each and six stages, one block
//! per SM.
//!
//! Why: between v18's 128 × 256 tiles and the small entries' 64 × 64 (`v18_m64`) lies a
//! range of products whose v18 tiles leave a wave mostly empty, yet whose 64 × 64 tiles
//! multiply at less than half v18's rate: 2176³ is 153 v18 tiles on 132 SMs (a second wave
//! of 21), 256 × 8192 × 8192 is 64 (half the SMs, or a split of k and its reduction).
//! 128 × 128 tiles number 289 and 128 there. Each tile keeps v18's 128 rows of A per byte of B
//! (the rows that share a B tile), and each stage is still whole 128-byte swizzled rows, so
//! the TMA boxes and descriptors are v17's with 128 columns of B instead of 256 (two `[k, n]`
//! slabs instead of four), multiplied by `wgmma … m64n128k16`: 64 accumulators per thread.
//!
//! Boxes are given innermost dimension first, as `cuTensorMapEncodeTiled` takes them; the maps
//! have a third dimension (the batch) whose box size is 1, as v18's library entries' do.

pub use crate::v17::{
    ALIGNMENT_SLACK, BARRIER_BYTES, CONSUMER_THREADS, CONSUMER_WARPGROUPS, ELEMENT_BYTES,
    PRODUCER_THREADS, SWIZZLE_BYTES, SWIZZLE_ELEMENTS, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES,
    TENSOR_MAPS, THREADS, TILE_K, WARPGROUP_ROWS,
};

/// Rows of C (and of A) per block tile: v17's, 64 per consumer warpgroup.
pub const BLOCK_TILE_M: u32 = CONSUMER_WARPGROUPS * WARPGROUP_ROWS;
/// Columns of C (and of B) per block tile: two swizzled rows of a `[k, n]` B.
pub const BLOCK_TILE_N: u32 = 2 * SWIZZLE_ELEMENTS;
/// fp32 accumulators per consumer thread: each warpgroup's 64 × 128 slice over 128 threads.
pub const ACCUMULATORS: u32 = WARPGROUP_ROWS * BLOCK_TILE_N / 128;
/// Pipeline stages (shared-memory buffers of one A tile and one B tile each): 32 KiB each, so
/// six take what v17's four do.
pub const STAGES: u32 = 6;
/// Blocks per SM the launch bounds ask for, and the persistent grid's blocks per SM. Two would
/// leave each thread 85 registers (65 536 over two blocks of 384, whole warpgroups counted),
/// too few beside 64 accumulators.
pub const MIN_BLOCKS_PER_SM: u32 = 1;

/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 64 × 128, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B stored `[k, n]`: `[n, k]` = 64 × 64 (v17's slab), two copies per stage.
pub const B_KN_BOX: [u32; 2] = [SWIZZLE_ELEMENTS, TILE_K];
/// `[k, n]` boxes per stage: the tile's 128 columns in slabs of 64.
pub const B_KN_BOXES_PER_STAGE: u32 = BLOCK_TILE_N / SWIZZLE_ELEMENTS;
/// TMA box of B stored `[n, k]`: `[k, n]` = 64 × 128, one copy per stage.
pub const B_NK_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_N];

/// Bytes of one stage's A tile (128 rows of 128 bytes).
pub const A_TILE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile (either layout: 128 × 64 elements).
pub const B_TILE_BYTES: u32 = BLOCK_TILE_N * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage, and the transaction bytes its `full` barrier expects: 32 KiB.
pub const STAGE_BYTES: u32 = A_TILE_BYTES + B_TILE_BYTES;
/// Dynamic shared memory per block: slack, the stages, then the `full` and `empty` barriers
/// (197 728 bytes, within the H100's 227 KiB per block).
pub const SHARED_BYTES: u32 = ALIGNMENT_SLACK + STAGES * STAGE_BYTES + 2 * STAGES * BARRIER_BYTES;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_fit_and_boxes_fill_them() {
        const { assert!(SHARED_BYTES <= 227 * 1024) };
        assert_eq!(SHARED_BYTES, 197_728);
        assert_eq!(ACCUMULATORS, 64);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(
            B_KN_BOXES_PER_STAGE * B_KN_BOX[0] * B_KN_BOX[1] * ELEMENT_BYTES,
            B_TILE_BYTES
        );
        assert_eq!(B_NK_BOX[0] * B_NK_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        for b in [A_BOX, B_KN_BOX, B_NK_BOX] {
            assert_eq!(b[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
            assert!(b[1] <= 256);
        }
        // Tiles keep the 1 024-byte alignment of the swizzle atoms.
        assert_eq!(A_TILE_BYTES % 1024, 0);
        assert_eq!(STAGE_BYTES % 1024, 0);
        assert_eq!(THREADS, 288);
    }
}
