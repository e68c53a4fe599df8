//! The grouped launch order of tiles (introduced by v9, used by every later rung and by the
//! library kernels): a 1-D block index mapped to a tile of C so that the blocks resident
//! together walk a group of [`GROUP_M`] tile rows column by column (the Triton tutorial's
//! `GROUP_SIZE_M` swizzle) and share few panels of A and B in L2. See
//! `sgemm::v09_grouped_order` for why, and for what it measured.

use crate::device::block_x;

/// Tile rows per group: the blocks resident at once span this many panels of A.
pub const GROUP_M: u32 = 8;

/// Maps the 1-D block index to (tile row, tile column) in grouped order: blocks fill a group
/// of `group_m` tile rows column by column, then move to the next group.
#[inline(always)]
pub fn grouped_tile(block: u32, tiles_m: u32, tiles_n: u32, group_m: u32) -> (u32, u32) {
    let blocks_per_group = group_m * tiles_n;
    let group = block / blocks_per_group;
    let first_tile_row = group * group_m;
    // The last group may have fewer rows.
    let rows_in_group = if tiles_m - first_tile_row < group_m {
        tiles_m - first_tile_row
    } else {
        group_m
    };
    let in_group = block % blocks_per_group;
    (
        first_tile_row + in_group % rows_in_group,
        in_group / rows_in_group,
    )
}

/// First row and column of the tile of C that this block (`block_x`) computes, in grouped
/// order, for `block_tile_m × block_tile_n` tiles.
#[inline(always)]
pub fn grouped_block_origin(m: u32, n: u32, block_tile_m: u32, block_tile_n: u32) -> (u32, u32) {
    let (tiles_m, tiles_n) = (m.div_ceil(block_tile_m), n.div_ceil(block_tile_n));
    let (tile_row, tile_col) = grouped_tile(block_x(), tiles_m, tiles_n, GROUP_M);
    (tile_row * block_tile_m, tile_col * block_tile_n)
}
