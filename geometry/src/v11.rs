//! The block tiles v11 (`sgemm_v11_*`) chooses from: v10's warp-tiled kernel (geometry in
//! [`crate::v10`]) monomorphized over these tiles, one PTX entry each. The first candidate is
//! v10's own tile, [`crate::v10::TILE`], whose entry is `sgemm_v10_warp_tiling`.
//!
//! Each constant's name spells its tile, `TILE_<m>X<n>X<k>`, with `_WIDE` when each lane owns
//! 8 × 16 outputs instead of 8 × 8; the host's candidate names and entries spell them the same
//! way, and its tests check that they agree.

use crate::v10::BlockTile;

/// Builds a candidate tile.
const fn tile(block_tile_m: u32, block_tile_n: u32, tile_k: u32, thread_tile_n: u32) -> BlockTile {
    BlockTile {
        block_tile_m,
        block_tile_n,
        tile_k,
        thread_tile_n,
    }
}

/// 128 × 128, 16 deep.
pub const TILE_128X128X16: BlockTile = tile(128, 128, 16, 8);
/// 128 × 64, 8 deep.
pub const TILE_128X64X8: BlockTile = tile(128, 64, 8, 8);
/// 128 × 64, 16 deep.
pub const TILE_128X64X16: BlockTile = tile(128, 64, 16, 8);
/// 64 × 128, 8 deep.
pub const TILE_64X128X8: BlockTile = tile(64, 128, 8, 8);
/// 64 × 128, 16 deep.
pub const TILE_64X128X16: BlockTile = tile(64, 128, 16, 8);
/// 64 × 64, 16 deep.
pub const TILE_64X64X16: BlockTile = tile(64, 64, 16, 8);
/// 128 × 128, 8 deep, 8 × 16 outputs per lane.
pub const TILE_128X128X8_WIDE: BlockTile = tile(128, 128, 8, 16);
/// 128 × 128, 16 deep, 8 × 16 outputs per lane.
pub const TILE_128X128X16_WIDE: BlockTile = tile(128, 128, 16, 16);
/// 64 × 128, 8 deep, 8 × 16 outputs per lane.
pub const TILE_64X128X8_WIDE: BlockTile = tile(64, 128, 8, 16);
/// 256 × 128, 8 deep, 8 × 16 outputs per lane.
pub const TILE_256X128X8_WIDE: BlockTile = tile(256, 128, 8, 16);
/// 128 × 256, 8 deep, 8 × 16 outputs per lane.
pub const TILE_128X256X8_WIDE: BlockTile = tile(128, 256, 8, 16);
/// 64 × 256, 8 deep, 8 × 16 outputs per lane.
pub const TILE_64X256X8_WIDE: BlockTile = tile(64, 256, 8, 16);
