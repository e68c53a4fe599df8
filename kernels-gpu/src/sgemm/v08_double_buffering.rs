//! # v8 — double buffering
//!
//! **Idea.** Two pairs of shared-memory tiles. While the block multiplies the tiles of step t
//! from one pair, each thread already has its global loads for step t + 1 in flight into
//! registers; after the multiply it writes them into the other pair. One barrier per step.
//!
//! **Fixes.** In v7 every step went load → barrier → compute → barrier: the global-load
//! latency (hundreds of cycles) sat between the two barriers with nothing to hide it but other
//! blocks. Now it overlaps the 512 fmas of the current step, and the second barrier is gone:
//! the pair being written is never the pair being read, and the single barrier at the end of a
//! step guarantees every warp has finished reading the pair the next step will overwrite.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 38.6 TFLOP/s, 74% of cuBLAS.
//!
//! Launch: 256 threads (1-D), grid ⌈n/128⌉ × ⌈m/128⌉, 16 KiB of dynamic shared memory
//! ([`gemm_geometry::v05`]).

use super::v05_register_blocking::{
    BLOCK_TILE_M, BLOCK_TILE_N, MicroTile, THREAD_TILE, TILE_K, store_micro_tile,
};
use super::v07_transposed_a::{TileCorner, fetch_tiles, multiply_tiles, stash_tiles};
use crate::device::{block_x, block_y, shared_f32, sync_threads, thread_x};

const THREADS_PER_ROW: u32 = BLOCK_TILE_N / THREAD_TILE as u32;
/// Floats in one pair of tiles (A transposed, then B).
const STAGE_FLOATS: usize = gemm_geometry::v05::STAGE_FLOATS as usize;

/// v8: v7 with two shared-memory stages, the next step's loads overlapping this step's math.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v08_double_buffering(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = (block_y() * BLOCK_TILE_M, block_x() * BLOCK_TILE_N);
    unsafe { double_buffered(a, b, c, m, n, k, first_row, first_col) };
}

/// The double-buffered block-tile loop for the block whose tile of C starts at (`first_row`,
/// `first_col`). Shared by v9, which changes only which tile a block takes.
///
/// # Safety
/// Called from a ladder entry that upholds [the ladder's launch
/// contract](crate::sgemm#the-ladders-launch-contract) (16 KiB of dynamic shared memory, 256
/// threads, `a`, `b`, `c` 16-byte aligned), by every thread of the block (it contains barriers);
/// `first_row`, `first_col` the corner of a tile of C.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn double_buffered(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    first_row: u32,
    first_col: u32,
) {
    let stages = shared_f32();
    let stage = |s: u32| {
        let a_tile = unsafe { stages.add(s as usize * STAGE_FLOATS) };
        (a_tile, unsafe {
            a_tile.add((BLOCK_TILE_M * TILE_K) as usize)
        })
    };
    let thread = thread_x();
    let (thread_row, thread_col) = (thread / THREADS_PER_ROW, thread % THREADS_PER_ROW);
    let corner = TileCorner {
        first_row,
        first_col,
        thread,
    };

    let (a_tile, b_tile) = stage(0);
    unsafe {
        stash_tiles(
            fetch_tiles(a, b, m, n, k, &corner, 0),
            a_tile,
            b_tile,
            thread,
        )
    };
    sync_threads();

    let mut acc: MicroTile = [[0.0; THREAD_TILE]; THREAD_TILE];
    let steps = k.div_ceil(TILE_K);
    for step in 0..steps {
        let has_next = step + 1 < steps;
        // Issue the next step's global loads now; their latency hides behind the fmas below.
        let next = if has_next {
            unsafe { Some(fetch_tiles(a, b, m, n, k, &corner, (step + 1) * TILE_K)) }
        } else {
            None
        };
        let (a_tile, b_tile) = stage(step % 2);
        unsafe { multiply_tiles(&mut acc, a_tile, b_tile, thread_row * 8, thread_col * 8) };
        if let Some(fetched) = next {
            let (a_next, b_next) = stage((step + 1) % 2);
            unsafe { stash_tiles(fetched, a_next, b_next, thread) };
        }
        sync_threads();
    }
    unsafe {
        store_micro_tile(
            &acc,
            c,
            m,
            n,
            first_row + thread_row * 8,
            first_col + thread_col * 8,
        )
    };
}
