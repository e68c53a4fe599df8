//! Launch geometry of v15, the `mma.sync` m16n8k16 kernel (fp16 and bf16): the ladder entry
//! `hgemm_v15_fp16_tensor_cores` and the library entries `gemm_v15_{f16,bf16}_{kn,nk}`.
//!
//! A block of [`THREADS`] threads (8 warps, [`WARPS_M`] × [`WARPS_N`], each computing a
//! [`WARP_TILE_M`] × [`WARP_TILE_N`] tile) computes one [`BLOCK_TILE_M`] × [`BLOCK_TILE_N`]
//! tile of C, walking k in steps of [`TILE_K`] through a [`STAGES`]-deep ring of shared-memory
//! stages filled by `cp.async`. The grid is 1-D over the tiles of C, in grouped order
//! ([`grid_x`]), and batch items go along grid z ([`grid_z`]).

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 256;
/// Depth along k of one pipeline stage (four m16n8k16 k-steps).
pub const TILE_K: u32 = 64;
/// Pipeline stages in shared memory.
pub const STAGES: u32 = 4;
/// Rows of C per warp.
pub const WARP_TILE_M: u32 = 64;
/// Columns of C per warp.
pub const WARP_TILE_N: u32 = 64;
/// Warps along m.
pub const WARPS_M: u32 = BLOCK_TILE_M / WARP_TILE_M;
/// Warps along n.
pub const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE_N;
/// Threads per block (`blockDim.x`; the block is 1-D).
pub const THREADS: u32 = WARPS_M * WARPS_N * 32;
/// The `min_blocks` of the kernels' launch bounds: one block per SM (it takes 192 KiB of
/// shared memory and up to 255 registers per thread).
pub const MIN_BLOCKS: u32 = 1;
/// Bytes per element of A, B and C (fp16 or bf16).
pub const ELEMENT_BYTES: u32 = 2;
/// Bytes of one stage's A tile: `BLOCK_TILE_M` rows of `TILE_K` elements.
pub const A_STAGE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile: `TILE_K × BLOCK_TILE_N` elements, in either B layout.
pub const B_STAGE_BYTES: u32 = TILE_K * BLOCK_TILE_N * ELEMENT_BYTES;
/// Bytes of one pipeline stage (A tile, then B tile).
pub const STAGE_BYTES: u32 = A_STAGE_BYTES + B_STAGE_BYTES;
/// Dynamic shared memory per block, in bytes (192 KiB: needs the max-dynamic-shared-memory
/// function attribute, above the default 48 KiB).
pub const SHARED_BYTES: u32 = STAGES * STAGE_BYTES;
/// The most grid z blocks a launch may have (CUDA's limit); the kernels loop over the rest.
pub const MAX_GRID_Z: u32 = 65_535;

/// Grid x for an `m × n` C: one block per `BLOCK_TILE_M × BLOCK_TILE_N` tile,
/// `⌈m/128⌉ · ⌈n/256⌉`.
pub const fn grid_x(m: u32, n: u32) -> u32 {
    m.div_ceil(BLOCK_TILE_M) * n.div_ceil(BLOCK_TILE_N)
}

/// Grid z for `batch` items: `min(batch, 65 535)` (the kernels step through the batch by the
/// grid's z size).
pub const fn grid_z(batch: u32) -> u32 {
    if batch < MAX_GRID_Z {
        batch
    } else {
        MAX_GRID_Z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_is_consistent() {
        assert_eq!(THREADS, 256);
        assert_eq!(SHARED_BYTES, 192 * 1024);
        assert_eq!(grid_x(4096, 4096), 32 * 16);
        assert_eq!(grid_x(129, 257), 2 * 2);
        assert_eq!(grid_z(1), 1);
        assert_eq!(grid_z(100_000), 65_535);
    }
}
