//! `gemm_transpose_f32`: a batch of row-major fp32 matrices copied transposed, `dst[z][c][r] =
//! src[z][r][c]`. TF32 `wgmma` reads B only K-major (`[n, k]`), so the TF32 rung v19 and the
//! library's TF32 calls with B `[k, n]` first write such a copy of B and multiply by that.
//!
//! Each block moves 32 × 32 tiles through shared memory: a warp reads 32 consecutive elements
//! of one source row (one 128-byte line) and writes 32 consecutive elements of one destination
//! row, so both sides are coalesced. The tile's rows are 33 floats apart, so that the column a
//! warp reads back out of shared memory touches 32 different banks.
//!
//! # Launch
//! - Block: `gemm_geometry::v19::TRANSPOSE_THREADS` = 256 threads (x only: 8 warps, each
//!   taking every 8th row of the tile).
//! - Dynamic shared memory: `gemm_geometry::v19::TRANSPOSE_SHARED_BYTES`.
//! - Grid: (⌈cols/32⌉, ⌈rows/32⌉, any z ≥ 1 up to 65 535): block (x, y, z) moves tile (y, x)
//!   of items z, z + grid_z, … (at most 65 535 along y: `rows` ≤ 65 535 · 32 rows).
//!
//! # Preconditions
//! `src` holds `batch` items of `rows × cols` elements, row `r` of item `z` at `src + z·
//! stride_src + r·ld_src` (ld_src ≥ cols); `dst` holds `batch` items of `cols × rows`, row `c`
//! of item `z` at `dst + z·stride_dst + c·ld_dst` (ld_dst ≥ rows), not overlapping `src`.
//! Only those elements are written. 4-byte alignment suffices.

use crate::device::{block_x, block_y, block_z, grid_dim_z, shared_f32, sync_threads, thread_x};
use gemm_geometry::v19::{TRANSPOSE_THREADS, TRANSPOSE_TILE};

crate::launch_bounds!(gemm_transpose_f32, TRANSPOSE_THREADS, 1);

/// Warps per block: each moves every `ROW_STEP`-th row of a tile.
const ROW_STEP: u32 = TRANSPOSE_THREADS / TRANSPOSE_TILE;
/// Floats from one row of the shared tile to the next (one more than a row: no bank conflicts
/// on the transposed read).
const SHARED_ROW: u32 = TRANSPOSE_TILE + 1;

/// See the module documentation.
///
/// # Safety
/// The launch and the preconditions of the module documentation.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "ptx-kernel" fn gemm_transpose_f32(
    src: *const f32,
    dst: *mut f32,
    rows: u32,
    cols: u32,
    ld_src: u32,
    ld_dst: u32,
    stride_src: u64,
    stride_dst: u64,
    batch: u32,
) {
    let tile = shared_f32();
    let (lane, warp) = (thread_x() % TRANSPOSE_TILE, thread_x() / TRANSPOSE_TILE);
    let (first_row, first_col) = (block_y() * TRANSPOSE_TILE, block_x() * TRANSPOSE_TILE);
    let mut z = block_z();
    while z < batch {
        let src_item = src.wrapping_add((z as u64 * stride_src) as usize);
        let dst_item = dst.wrapping_add((z as u64 * stride_dst) as usize);
        // Read: lane = column within the tile, one source row per warp and step.
        let col = first_col + lane;
        let mut r = warp;
        while r < TRANSPOSE_TILE {
            let row = first_row + r;
            if row < rows && col < cols {
                let at = row as usize * ld_src as usize + col as usize;
                // SAFETY: (row, col) lies inside item z of src (the preconditions).
                let value = unsafe { src_item.add(at).read() };
                // SAFETY: r, lane < 32: inside the 32 × 33 tile of dynamic shared memory.
                unsafe { tile.add((r * SHARED_ROW + lane) as usize).write(value) };
            }
            r += ROW_STEP;
        }
        sync_threads();
        // Write: lane = source row within the tile, one source column (destination row) per
        // warp and step.
        let row = first_row + lane;
        let mut c = warp;
        while c < TRANSPOSE_TILE {
            let col = first_col + c;
            if row < rows && col < cols {
                // SAFETY: written above for this (lane, c) since row < rows and col < cols.
                let value = unsafe { tile.add((lane * SHARED_ROW + c) as usize).read() };
                // SAFETY: (col, row) lies inside item z of dst (the preconditions).
                unsafe {
                    dst_item
                        .add(col as usize * ld_dst as usize + row as usize)
                        .write(value)
                };
            }
            c += ROW_STEP;
        }
        // The next item's reads must not overwrite the tile before every warp has read it.
        sync_threads();
        z += grid_dim_z();
    }
}
