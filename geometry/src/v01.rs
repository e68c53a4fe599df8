//! Launch geometry of v1 (`sgemm_v01_shared_panels`): a block of [`BLOCK_TILE_N`] ×
//! [`BLOCK_TILE_M`] threads (x along columns, y along rows) computes a [`BLOCK_TILE_M`] ×
//! [`BLOCK_TILE_N`] tile of C from the whole [`BLOCK_TILE_M`] × k panel of A and k ×
//! [`BLOCK_TILE_N`] panel of B, both staged in dynamic shared memory
//! ([`SHARED_BYTES_PER_K`] · k bytes). The grid is 2-D, ⌈n / [`BLOCK_TILE_N`]⌉ × ⌈m /
//! [`BLOCK_TILE_M`]⌉.

/// Rows of C per block (and rows of the A panel; threads along y).
pub const BLOCK_TILE_M: u32 = 4;
/// Columns of C per block (and columns of the B panel; threads along x).
pub const BLOCK_TILE_N: u32 = 8;
/// Threads per block: one per element of the block's tile of C.
pub const THREADS: u32 = BLOCK_TILE_M * BLOCK_TILE_N;
/// Dynamic shared memory per unit of k, in bytes: one f32 of each A panel row and of each B
/// panel column (48).
pub const SHARED_BYTES_PER_K: u32 = (BLOCK_TILE_M + BLOCK_TILE_N) * 4;

const _: () = assert!(THREADS == 32 && SHARED_BYTES_PER_K == 48);
