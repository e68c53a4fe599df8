//! Launch geometry of v16 (`hgemm_v16_wgmma`): fp16 `wgmma.m64n256k16` on Hopper (sm_90a),
//! block tiles [`BLOCK_TILE_M`] × [`BLOCK_TILE_N`] × [`TILE_K`], [`STAGES`] `cp.async` stages.
//!
//! Every row of both shared tiles is [`ROW_BYTES`] (64 halves: of k for A, of n for B), stored
//! with the 128-byte swizzle; B is split into 64-column slabs of [`B_SLAB_BYTES`].

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block (the kernel body also builds for 128).
pub const BLOCK_TILE_N: u32 = 256;
/// Steps of k per pipeline stage.
pub const TILE_K: u32 = 64;
/// Shared-memory stages.
pub const STAGES: u32 = 4;
/// Rows of the block tile each warpgroup (128 threads) owns.
pub const WARPGROUP_ROWS: u32 = 64;
/// Threads per block (1-D): one warpgroup per [`WARPGROUP_ROWS`] rows, 2 warpgroups.
pub const THREADS: u32 = BLOCK_TILE_M / WARPGROUP_ROWS * 128;
/// Blocks per SM the kernel is built for (`.minnctapersm`).
pub const MIN_BLOCKS_PER_SM: u32 = 1;
/// Bytes of every row of both tiles: 64 halves of k for A, 64 halves of n for B.
pub const ROW_BYTES: u32 = 128;
/// Bytes of the A tile of one stage.
pub const A_BYTES: u32 = BLOCK_TILE_M * ROW_BYTES;
/// Bytes of one 64-column slab of the B tile: [`TILE_K`] rows of [`ROW_BYTES`].
pub const B_SLAB_BYTES: u32 = TILE_K * ROW_BYTES;
/// Bytes reserved to align the first stage to 1 024 (the 128-byte swizzle's atom).
pub const ALIGN_BYTES: u32 = 1024;

/// Dynamic shared memory per block, in bytes: `stages` stages for a block tile `block_tile_n`
/// wide, plus [`ALIGN_BYTES`] to align them to 1 024.
pub const fn shared_bytes(block_tile_n: u32, stages: u32) -> u32 {
    stages * (A_BYTES + (block_tile_n / 64) * B_SLAB_BYTES) + ALIGN_BYTES
}

/// Dynamic shared memory of `hgemm_v16_wgmma`, in bytes (197 632: 4 stages of a 128 × 64 A
/// tile and a 64 × 256 B tile in fp16, plus 1 KiB).
pub const SHARED_BYTES: u32 = shared_bytes(BLOCK_TILE_N, STAGES);
const _: () = assert!(SHARED_BYTES == 4 * (128 * 64 + 64 * 256) * 2 + 1024);
