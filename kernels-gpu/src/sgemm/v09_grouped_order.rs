//! # v9 — grouped launch order for L2 reuse
//!
//! **Idea.** The kernel is v8's; only the mapping from block index to tile of C changes. With a
//! 2-D grid, blocks are scheduled row of tiles after row of tiles, so the blocks in flight at
//! any moment share a few A row-panels but need *every* B column-panel. Here the grid is 1-D
//! and consecutive blocks walk a group of `GROUP_M` tile rows column by column (the Triton
//! tutorial's `GROUP_SIZE_M` swizzle), so the blocks resident together touch `GROUP_M` panels
//! of A and only a few panels of B.
//!
//! **Fixes.** Fewer distinct panels in flight means more of them are still in the 50 MiB L2
//! when the next block asks, and fewer bytes come from HBM.
//!
//! **Why it gains nothing here.** Measured at 4096³ and 8192³ it is within noise of v8. The
//! resident blocks all walk k at about the same pace, so at any moment they share a thin k-slice
//! of their panels, which fits in L2 in either order. And even with no reuse at all between
//! tile rows, 8192³ would read B from HBM once per tile row: 64 · 256 MiB = 16 GiB, about 5 ms
//! at 3.35 TB/s against a 28 ms kernel. This kernel is bound by instruction issue, not by
//! memory, so the order of its blocks barely matters. The swizzle is kept (v10 builds on it):
//! it costs nothing and matters for kernels that run nearer the memory roof, like the
//! tensor-core GEMMs.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 38.9 TFLOP/s, 76% of cuBLAS: the same as v8, see below.
//!
//! Launch: 256 threads (1-D), grid ⌈m/128⌉·⌈n/128⌉ (1-D), 16 KiB of dynamic shared memory.

use super::v05_register_blocking::{BLOCK_TILE_M, BLOCK_TILE_N};
use super::v08_double_buffering::double_buffered;
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

/// First row and column of the tile of C that this block computes, in grouped order, for
/// `block_tile_m × block_tile_n` tiles. Shared by v10 and v13.
#[inline(always)]
pub fn grouped_block_origin(m: u32, n: u32, block_tile_m: u32, block_tile_n: u32) -> (u32, u32) {
    let (tiles_m, tiles_n) = (m.div_ceil(block_tile_m), n.div_ceil(block_tile_n));
    let (tile_row, tile_col) = grouped_tile(block_x(), tiles_m, tiles_n, GROUP_M);
    (tile_row * block_tile_m, tile_col * block_tile_n)
}

/// v9: v8 with blocks mapped to tiles of C in grouped order.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v09_grouped_order(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    unsafe { double_buffered(a, b, c, m, n, k, first_row, first_col) };
}
