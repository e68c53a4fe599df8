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
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 38.6 TFLOP/s, 74% of cuBLAS: the same as v8, see below.
//!
//! The order itself, [`grouped_tile`], lives in [`crate::tile_order`] (re-exported here), since
//! every later rung uses it too.
//!
//! Launch: 256 threads (1-D), grid ⌈m/128⌉·⌈n/128⌉ (1-D), 16 KiB of dynamic shared memory
//! ([`gemm_geometry::v05`]).

use super::v05_register_blocking::{BLOCK_TILE_M, BLOCK_TILE_N};
use super::v08_double_buffering::double_buffered;
// The idea of this rung, kept in a module of its own because every later rung uses it.
pub use crate::tile_order::{GROUP_M, grouped_block_origin, grouped_tile};

/// v9: v8 with blocks mapped to tiles of C in grouped order.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
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
