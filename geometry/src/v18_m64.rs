//! The geometry of the library's small-tile TMA + `wgmma` entries `gemm_v18_m64_{f16,bf16}_{kn,nk}`:
//! v18's body (`kernels-gpu/src/tma_gemm.rs`) with 64 × 64 block tiles, one consumer warpgroup
//! and six stages, two blocks per SM.
//!
//! Why: at 64 × 4096 × 4096 v18's 128 × 256 tiles are 16, and only a split of k into 8 slices
//! (plus a reduction kernel that took a quarter of the time) let them fill the H100; cuBLAS runs
//! such layers on 64 × 32 tiles, one per SM, each block streaming its slab of B over the whole
//! of k (`docs/results/h100-mid-m-probe`). Here the 64 × 64 tiles number 64 at m = 64 and
//! 256 at m = 256, and every stage is still whole 128-byte swizzled rows of 64 elements, so
//! the TMA boxes and the `wgmma` descriptors are v17's (one `[k, n]` slab of B instead of
//! four), with `wgmma … m64n64k16`: 32 accumulators per thread instead of 128.
//!
//! Boxes are given innermost dimension first, as `cuTensorMapEncodeTiled` takes them; the maps
//! have a third dimension (the batch) whose box size is 1, as v18's library entries' do.

pub use crate::v17::{
    ALIGNMENT_SLACK, BARRIER_BYTES, ELEMENT_BYTES, PRODUCER_THREADS, SWIZZLE_BYTES,
    SWIZZLE_ELEMENTS, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TENSOR_MAPS, TILE_K, WARPGROUP_ROWS,
};

/// Consumer warpgroups: one, which owns the whole tile.
pub const CONSUMER_WARPGROUPS: u32 = 1;
/// Rows of C (and of A) per block tile: one `wgmma` m64 tile.
pub const BLOCK_TILE_M: u32 = CONSUMER_WARPGROUPS * WARPGROUP_ROWS;
/// Columns of C (and of B) per block tile: one swizzled row of a `[k, n]` B.
pub const BLOCK_TILE_N: u32 = SWIZZLE_ELEMENTS;
/// fp32 accumulators per consumer thread: the 64 × 64 tile over 128 threads.
pub const ACCUMULATORS: u32 = BLOCK_TILE_M * BLOCK_TILE_N / CONSUMER_THREADS;
/// Pipeline stages (shared-memory buffers of one A tile and one B tile each).
pub const STAGES: u32 = 6;
/// Threads of the consumer warpgroup: 128.
pub const CONSUMER_THREADS: u32 = CONSUMER_WARPGROUPS * 128;
/// Threads per block: 160 (the consumers first, then the producer warp).
pub const THREADS: u32 = CONSUMER_THREADS + PRODUCER_THREADS;
/// Blocks per SM the launch bounds ask for, and the persistent grid's blocks per SM.
pub const MIN_BLOCKS_PER_SM: u32 = 2;

/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 64 × 64, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B stored `[k, n]`: `[n, k]` = 64 × 64, one copy per stage (v17's slab).
pub const B_KN_BOX: [u32; 2] = [SWIZZLE_ELEMENTS, TILE_K];
/// TMA box of B stored `[n, k]`: `[k, n]` = 64 × 64, one copy per stage.
pub const B_NK_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_N];

/// Bytes of one stage's A tile (64 rows of 128 bytes).
pub const A_TILE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile (either layout: 64 × 64 elements).
pub const B_TILE_BYTES: u32 = BLOCK_TILE_N * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage, and the transaction bytes its `full` barrier expects: 16 KiB.
pub const STAGE_BYTES: u32 = A_TILE_BYTES + B_TILE_BYTES;
/// Dynamic shared memory per block: slack, the stages, then the `full` and `empty` barriers
/// (99 424 bytes: two blocks fit the H100's 228 KiB per SM).
pub const SHARED_BYTES: u32 = ALIGNMENT_SLACK + STAGES * STAGE_BYTES + 2 * STAGES * BARRIER_BYTES;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_blocks_fit_and_boxes_fill_the_stages() {
        // The H100's shared memory per SM (228 KiB), of which the driver keeps 1 KiB per block.
        const { assert!(MIN_BLOCKS_PER_SM * (SHARED_BYTES + 1024) <= 228 * 1024) };
        assert_eq!(SHARED_BYTES, 99_424);
        assert_eq!(ACCUMULATORS, 32);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(B_KN_BOX[0] * B_KN_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        assert_eq!(B_NK_BOX[0] * B_NK_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        for b in [A_BOX, B_KN_BOX, B_NK_BOX] {
            assert_eq!(b[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
        }
        // Tiles keep the 1 024-byte alignment of the swizzle atoms.
        assert_eq!(A_TILE_BYTES % 1024, 0);
        assert_eq!(STAGE_BYTES % 1024, 0);
        assert_eq!(THREADS, 160);
    }
}
