//! Launch geometry of v10's warp-tiled kernel (`sgemm_v10_warp_tiling`), which v11's
//! candidates (see [`crate::v11`]) and v12 (`sgemm_v12_fused_epilogue`) run with other block
//! tiles or another epilogue.
//!
//! A block tile ([`BlockTile`]) is split into warp tiles of [`WARP_TILE_M`] rows ×
//! [`warp_tile_n`] columns; inside a warp the 32 lanes sit as 8 rows × [`LANE_COLS`] columns,
//! and each lane owns [`THREAD_TILE_M`] × `thread_tile_n` outputs. The grid is 1-D, one block
//! per tile of C in grouped order. Shared memory holds [`STAGES`] stages, each the A tile
//! transposed to `[tile_k][block_tile_m + A_PADDING]` followed by the B tile
//! `[tile_k][block_tile_n]`.

/// Rows of C one warp computes: 8 lane rows × [`THREAD_TILE_M`].
pub const WARP_TILE_M: u32 = 64;
/// Rows of C each lane owns (two sub-tiles of 4, 32 rows apart).
pub const THREAD_TILE_M: u32 = 8;
/// Lanes of a warp along columns (8 lane rows × 4 lane columns).
pub const LANE_COLS: u32 = 4;
/// Floats of padding after each row of the transposed A tile: the transposing stores of the
/// two k halves land in different banks, and rows stay 16-byte aligned.
pub const A_PADDING: u32 = 4;
/// Shared-memory stages (double buffering).
pub const STAGES: u32 = 2;

/// Columns of C one warp computes when each lane owns `thread_tile_n` columns (2 or 4
/// sub-tiles of 4, spaced 16 apart): [`LANE_COLS`] × `thread_tile_n`.
pub const fn warp_tile_n(thread_tile_n: u32) -> u32 {
    LANE_COLS * thread_tile_n
}

/// Threads per block (1-D) for a `block_tile_m × block_tile_n` block tile whose lanes own
/// `thread_tile_n` columns each: 32 per warp tile.
pub const fn threads(block_tile_m: u32, block_tile_n: u32, thread_tile_n: u32) -> u32 {
    (block_tile_m / WARP_TILE_M) * (block_tile_n / warp_tile_n(thread_tile_n)) * 32
}

/// Floats of shared memory per stage: the padded, transposed A tile, then the B tile.
pub const fn stage_floats(block_tile_m: u32, block_tile_n: u32, tile_k: u32) -> u32 {
    tile_k * (block_tile_m + A_PADDING) + tile_k * block_tile_n
}

/// One configuration of the warp-tiled kernel: the block tile and each lane's share of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockTile {
    /// Rows of C per block (a multiple of [`WARP_TILE_M`]).
    pub block_tile_m: u32,
    /// Columns of C per block (a multiple of `warp_tile_n(thread_tile_n)`).
    pub block_tile_n: u32,
    /// Steps of k per stage (a multiple of 8).
    pub tile_k: u32,
    /// Columns of C each lane owns: 8 or 16.
    pub thread_tile_n: u32,
}

impl BlockTile {
    /// Threads per block (1-D).
    pub const fn threads(&self) -> u32 {
        threads(self.block_tile_m, self.block_tile_n, self.thread_tile_n)
    }

    /// Dynamic shared memory per block, in bytes: [`STAGES`] stages of f32.
    pub const fn shared_bytes(&self) -> u32 {
        STAGES * stage_floats(self.block_tile_m, self.block_tile_n, self.tile_k) * 4
    }
}

/// v10's own tile (and v12's): 128 × 128, 8 deep, 8 × 8 outputs per lane.
pub const TILE: BlockTile = BlockTile {
    block_tile_m: 128,
    block_tile_n: 128,
    tile_k: 8,
    thread_tile_n: 8,
};
/// Blocks per SM v10 and v12 are built for (`.minnctapersm`): with 256 threads, a cap of 128
/// registers per thread.
pub const MIN_BLOCKS_PER_SM: u32 = 2;

const _: () = assert!(TILE.threads() == 256 && TILE.shared_bytes() == 16_640);
