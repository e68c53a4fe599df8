//! Launch geometry of v0 (`sgemm_v00_global_memory`): one thread per element of C, in a 2-D
//! block of [`BLOCK_DIM_X`] × [`BLOCK_DIM_Y`] threads (x along the columns of C, y along its
//! rows), a 2-D grid of ⌈n / [`BLOCK_DIM_X`]⌉ × ⌈m / [`BLOCK_DIM_Y`]⌉ blocks, no shared memory.
//! The kernel reads its block shape at run time, so only the host launches these numbers.

/// Threads per block along x: columns of C per block (consecutive threads read consecutive
/// elements of B's row and write consecutive elements of C).
pub const BLOCK_DIM_X: u32 = 32;
/// Threads per block along y: rows of C per block.
pub const BLOCK_DIM_Y: u32 = 8;
/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = BLOCK_DIM_Y;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = BLOCK_DIM_X;
