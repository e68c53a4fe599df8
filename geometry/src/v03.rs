//! Launch geometry of v3 (`sgemm_v03_thread_tile`) and v4 (`sgemm_v04_float4_loads`, which
//! stages the same tiles with 128-bit loads): a block of [`THREADS_PER_SIDE`] ×
//! [`THREADS_PER_SIDE`] threads computes a [`BLOCK_TILE_M`] × [`BLOCK_TILE_N`] tile of C, each
//! thread a strided [`THREAD_TILE`] × [`THREAD_TILE`] tile of it, stepping along k through a
//! [`BLOCK_TILE_M`] × [`TILE_K`] tile of A and a [`TILE_K`] × [`BLOCK_TILE_N`] tile of B in
//! dynamic shared memory ([`SHARED_BYTES`]). The grid is 2-D, ⌈n / [`BLOCK_TILE_N`]⌉ × ⌈m /
//! [`BLOCK_TILE_M`]⌉.

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 64;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 64;
/// Depth of the A and B tiles staged per step along k.
pub const TILE_K: u32 = 16;
/// Threads along x and along y of the block.
pub const THREADS_PER_SIDE: u32 = 16;
/// Each thread computes `THREAD_TILE × THREAD_TILE` outputs.
pub const THREAD_TILE: u32 = BLOCK_TILE_M / THREADS_PER_SIDE;
/// Dynamic shared memory per block, in bytes: the A and B tiles in f32 (8 KiB).
pub const SHARED_BYTES: u32 = (BLOCK_TILE_M + BLOCK_TILE_N) * TILE_K * 4;

const _: () = assert!(BLOCK_TILE_N / THREADS_PER_SIDE == THREAD_TILE && THREAD_TILE == 4);
const _: () = assert!(SHARED_BYTES == 8 * 1024);
