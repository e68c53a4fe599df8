//! Launch geometry of v5 (`sgemm_v05_register_blocking`) and of the rungs that keep its tiles:
//! v6 (`sgemm_v06_vector_fragments`), v7 (`sgemm_v07_transposed_a`), v8
//! (`sgemm_v08_double_buffering`) and v9 (`sgemm_v09_grouped_order`).
//!
//! A block of [`THREADS`] threads (1-D) computes a [`BLOCK_TILE_M`] × [`BLOCK_TILE_N`] tile of
//! C, each thread a [`THREAD_TILE`] × [`THREAD_TILE`] micro-tile, stepping along k through an
//! A and a B tile [`TILE_K`] deep ([`STAGE_FLOATS`] floats together). v5–v7 keep one such
//! pair in shared memory ([`SHARED_BYTES`]), v8 and v9 two ([`DOUBLE_BUFFERED_SHARED_BYTES`]).
//! v5–v8 launch a 2-D grid of ⌈n / [`BLOCK_TILE_N`]⌉ × ⌈m / [`BLOCK_TILE_M`]⌉ blocks, v9 a
//! 1-D grid of one block per tile.

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 128;
/// Depth of the A and B tiles staged per step along k.
pub const TILE_K: u32 = 8;
/// Rows and columns of each thread's micro-tile.
pub const THREAD_TILE: u32 = 8;
/// Threads per block (1-D): one per micro-tile of the block tile, 16 × 16.
pub const THREADS: u32 = (BLOCK_TILE_M / THREAD_TILE) * (BLOCK_TILE_N / THREAD_TILE);
/// Floats of one stage: the A tile (`BLOCK_TILE_M × TILE_K`, transposed from v7 on) followed
/// by the B tile (`TILE_K × BLOCK_TILE_N`).
pub const STAGE_FLOATS: u32 = (BLOCK_TILE_M + BLOCK_TILE_N) * TILE_K;
/// Dynamic shared memory of v5, v6 and v7, in bytes: one stage (8 KiB).
pub const SHARED_BYTES: u32 = STAGE_FLOATS * 4;
/// Dynamic shared memory of v8 and v9, in bytes: two stages (16 KiB).
pub const DOUBLE_BUFFERED_SHARED_BYTES: u32 = 2 * STAGE_FLOATS * 4;

const _: () = assert!(THREADS == 256);
const _: () = assert!(SHARED_BYTES == 8 * 1024 && DOUBLE_BUFFERED_SHARED_BYTES == 16 * 1024);
