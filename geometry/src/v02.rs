//! Launch geometry of v2 (`sgemm_v02_shared_tiles`): a block of [`TILE`] × [`TILE`] threads
//! computes a [`TILE`] × [`TILE`] tile of C, one element per thread, stepping along k through
//! [`TILE`] × [`TILE`] tiles of A and B in dynamic shared memory ([`SHARED_BYTES`]). The grid
//! is 2-D, ⌈n / [`TILE`]⌉ × ⌈m / [`TILE`]⌉.

/// Side of the square tiles of A, B and C a block handles, and of the thread block.
pub const TILE: u32 = 32;
/// Dynamic shared memory per block, in bytes: one A and one B tile of f32 (8 KiB).
pub const SHARED_BYTES: u32 = 2 * TILE * TILE * 4;

const _: () = assert!(SHARED_BYTES == 8 * 1024);
