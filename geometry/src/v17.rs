//! The geometry of the TMA + `wgmma` kernels (ladder rungs v17 and v18, and the library entries
//! `gemm_v18_{f16,bf16}_{kn,nk}` that share their body): block tile, pipeline, threads, shared
//! memory, and the TMA boxes the host's tensor-map encoder must use. Device and host read these
//! numbers from here, so they cannot disagree.
//!
//! Every tile row the TMA writes is [`SWIZZLE_BYTES`] = 128 bytes (64 fp16/bf16 elements) and
//! is stored with the 128-byte swizzle, the layout `wgmma` reads through its descriptors.
//! Boxes are given innermost dimension first, as `cuTensorMapEncodeTiled` takes them; the
//! library entries' maps have a third dimension (the batch) whose box size is 1.

/// Rows of C (and of A) per block tile.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C (and of B) per block tile.
pub const BLOCK_TILE_N: u32 = 256;
/// Depth of one pipeline stage along k.
pub const TILE_K: u32 = 64;
/// Pipeline stages (shared-memory buffers of one A tile and one B tile each).
pub const STAGES: u32 = 4;
/// Bytes per element (fp16 and bf16).
pub const ELEMENT_BYTES: u32 = 2;
/// The swizzle span: bytes per tile row in shared memory, and the innermost box extent in
/// bytes (`CU_TENSOR_MAP_SWIZZLE_128B` allows at most 128).
pub const SWIZZLE_BYTES: u32 = 128;
/// Elements per swizzled row: 64.
pub const SWIZZLE_ELEMENTS: u32 = SWIZZLE_BYTES / ELEMENT_BYTES;

/// Consumer warpgroups (each owns [`WARPGROUP_ROWS`] rows of the block tile).
pub const CONSUMER_WARPGROUPS: u32 = 2;
/// Rows of the block tile per consumer warpgroup (one `wgmma` m64 tile).
pub const WARPGROUP_ROWS: u32 = BLOCK_TILE_M / CONSUMER_WARPGROUPS;
/// fp32 accumulators per consumer thread: a warpgroup's 64 × 256 slice over its 128 threads.
pub const ACCUMULATORS: u32 = WARPGROUP_ROWS * BLOCK_TILE_N / 128;
/// Threads of the consumer warpgroups: 256.
pub const CONSUMER_THREADS: u32 = CONSUMER_WARPGROUPS * 128;
/// Threads of the producer warp (one of which issues the TMA copies).
pub const PRODUCER_THREADS: u32 = 32;
/// Threads per block: 288 (the consumers first, then the producer warp).
pub const THREADS: u32 = CONSUMER_THREADS + PRODUCER_THREADS;
/// Blocks per SM the launch bounds ask for.
pub const MIN_BLOCKS_PER_SM: u32 = 1;

/// TMA box of A (row-major `[m, k]`, ld = lda): `[k, rows]` = 64 × 128, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B stored `[k, n]` (ld = ldb): `[n, k]` = 64 × 64; four copies per stage side by
/// side along n (the 256 columns of the tile are four 64-column slabs).
pub const B_KN_BOX: [u32; 2] = [SWIZZLE_ELEMENTS, TILE_K];
/// Copies of [`B_KN_BOX`] per stage.
pub const B_KN_BOXES_PER_STAGE: u32 = BLOCK_TILE_N / SWIZZLE_ELEMENTS;
/// TMA box of B stored `[n, k]` (ld = ldb): `[k, n]` = 64 × 256, one copy per stage.
pub const B_NK_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_N];

/// Bytes of one stage's A tile (128 rows of 128 bytes).
pub const A_TILE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile (either layout: 64 × 256 elements).
pub const B_TILE_BYTES: u32 = BLOCK_TILE_N * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage, and the transaction bytes its `full` barrier expects: 48 KiB.
pub const STAGE_BYTES: u32 = A_TILE_BYTES + B_TILE_BYTES;
/// The swizzle atom (8 rows of 128 bytes) must start at a 1 024-byte boundary; dynamic shared
/// memory is only guaranteed 16-byte aligned, so this much slack is reserved.
pub const ALIGNMENT_SLACK: u32 = 1024;
/// Bytes of one `mbarrier`.
pub const BARRIER_BYTES: u32 = 8;
/// Dynamic shared memory per block: slack, the stages, then the `full` and `empty` barriers
/// (197 696 bytes; the host sets the kernel's max-dynamic-shared-memory attribute to it).
pub const SHARED_BYTES: u32 = ALIGNMENT_SLACK + STAGES * STAGE_BYTES + 2 * STAGES * BARRIER_BYTES;

/// Bytes of one CUDA tensor map (`CUtensorMap`).
pub const TENSOR_MAP_BYTES: u32 = 128;
/// Alignment of a tensor map in global memory.
pub const TENSOR_MAP_ALIGN: u32 = 64;
/// Tensor maps per kernel: A first, then B, back to back ([`TENSOR_MAP_BYTES`] apart).
pub const TENSOR_MAPS: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_fit_and_boxes_fill_them() {
        // The H100's (and H200's) limit of dynamic shared memory per block: 227 KiB.
        const { assert!(SHARED_BYTES <= 227 * 1024) };
        assert_eq!(SHARED_BYTES, 197_696);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(
            B_KN_BOXES_PER_STAGE * B_KN_BOX[0] * B_KN_BOX[1] * ELEMENT_BYTES,
            B_TILE_BYTES
        );
        assert_eq!(B_NK_BOX[0] * B_NK_BOX[1] * ELEMENT_BYTES, B_TILE_BYTES);
        // Every box's innermost extent is one swizzle span; no box dimension exceeds 256.
        for b in [A_BOX, B_KN_BOX, B_NK_BOX] {
            assert_eq!(b[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
            assert!(b[1] <= 256);
        }
        // Tiles keep the 1 024-byte alignment of the swizzle atoms.
        assert_eq!(A_TILE_BYTES % 1024, 0);
        assert_eq!(STAGE_BYTES % 1024, 0);
        assert_eq!(THREADS, 288);
        assert_eq!(ACCUMULATORS, 128);
    }
}
