//! # v7 — A tile stored transposed
//!
//! **Idea.** Stage the A tile transposed, as 8 rows (one per k) of 128 values (one per row of
//! C). A thread's column of 8 A values becomes 8 contiguous floats, read with two 128-bit loads
//! like the B row since v6. The global loads stay 128-bit along k; the transpose happens on
//! the way into shared memory, as four 32-bit stores.
//!
//! **Fixes.** v6 still needed 8 scalar loads for A per step of k; now a step is 4 vector loads
//! for 64 fmas.
//!
//! **Bank conflicts.** A warp is 2 thread-rows × 16 thread-columns. Its A reads hit 2 distinct
//! 16-byte vectors (both thread rows): broadcasts. Its B reads are 16 vectors 32 bytes apart;
//! a 128-bit load is served a quarter-warp at a time, whose 8 vectors span 256 bytes and so
//! touch every bank twice: a 2-way conflict. The transposing stores also collide 2-way. v10's
//! warp tiling lays threads out so that neither happens.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 36.1 TFLOP/s, 69% of cuBLAS.
//!
//! Launch: 256 threads (1-D), grid ⌈n/128⌉ × ⌈m/128⌉, 8 KiB of dynamic shared memory
//! ([`gemm_geometry::v05`]).

use super::v05_register_blocking::{
    BLOCK_TILE_M, BLOCK_TILE_N, MicroTile, THREAD_TILE, TILE_K, store_micro_tile,
};
use crate::device::{
    at, block_x, block_y, load4_or_zero, outer_product, read4, shared_f32, sync_threads, thread_x,
    write4,
};
use core::simd::f32x4;
use seq_macro::seq;

const THREADS_PER_ROW: u32 = BLOCK_TILE_N / THREAD_TILE as u32;

/// v7: v6 with the A tile transposed in shared memory, so both fragments are vector reads.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v07_transposed_a(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared_f32(); // TILE_K × BLOCK_TILE_M: A transposed
    let b_tile = unsafe { a_tile.add((BLOCK_TILE_M * TILE_K) as usize) }; // TILE_K × BLOCK_TILE_N
    let thread = thread_x();
    let (thread_row, thread_col) = (thread / THREADS_PER_ROW, thread % THREADS_PER_ROW);
    let (first_row, first_col) = (block_y() * BLOCK_TILE_M, block_x() * BLOCK_TILE_N);
    let corner = TileCorner {
        first_row,
        first_col,
        thread,
    };

    let mut acc: MicroTile = [[0.0; THREAD_TILE]; THREAD_TILE];
    let mut tile_k = 0;
    while tile_k < k {
        let fetched = unsafe { fetch_tiles(a, b, m, n, k, &corner, tile_k) };
        unsafe { stash_tiles(fetched, a_tile, b_tile, thread) };
        sync_threads();
        unsafe { multiply_tiles(&mut acc, a_tile, b_tile, thread_row * 8, thread_col * 8) };
        sync_threads();
        tile_k += TILE_K;
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

/// Where a block's tile of C starts, and which thread of the block this is.
pub struct TileCorner {
    /// First row of C the block computes.
    pub first_row: u32,
    /// First column of C the block computes.
    pub first_col: u32,
    /// The thread's index in the 1-D block.
    pub thread: u32,
}

/// Reads this thread's float4 of the A tile (row `thread / 2`, k offset `thread % 2 · 4`) and of
/// the B tile (row `thread / 32`, column `thread % 32 · 4`) for the step at `tile_k`.
///
/// # Safety
/// `a` (`m × k`) and `b` (`k × n`) must be readable row-major f32 matrices, 16-byte aligned;
/// `corner` the block's tile corner and thread index of this launch.
#[inline(always)]
pub unsafe fn fetch_tiles(
    a: *const f32,
    b: *const f32,
    m: u32,
    n: u32,
    k: u32,
    corner: &TileCorner,
    tile_k: u32,
) -> (f32x4, f32x4) {
    let t = corner.thread;
    let (a_row, a_col) = (t / (TILE_K / 4), t % (TILE_K / 4) * 4);
    let (b_row, b_col) = (t / (BLOCK_TILE_N / 4), t % (BLOCK_TILE_N / 4) * 4);
    unsafe {
        (
            load4_or_zero(a, m, k, corner.first_row + a_row, tile_k + a_col),
            load4_or_zero(b, k, n, tile_k + b_row, corner.first_col + b_col),
        )
    }
}

/// Writes what [`fetch_tiles`] read into shared memory: A transposed (four scalar stores), B
/// as it is (one vector store).
///
/// # Safety
/// `a_tile` and `b_tile` must be 16-byte-aligned shared-memory tiles of 8×128 floats each, not read
/// by other threads until a barrier; `thread` < 256.
#[inline(always)]
pub unsafe fn stash_tiles(
    (a4, b4): (f32x4, f32x4),
    a_tile: *mut f32,
    b_tile: *mut f32,
    thread: u32,
) {
    let (a_row, a_col) = (thread / (TILE_K / 4), thread % (TILE_K / 4) * 4);
    let (b_row, b_col) = (thread / (BLOCK_TILE_N / 4), thread % (BLOCK_TILE_N / 4) * 4);
    unsafe {
        seq!(q in 0..4 {
            *a_tile.add(at(a_col + q, a_row, BLOCK_TILE_M)) = a4[q];
        });
        write4(b_tile.add(at(b_row, b_col, BLOCK_TILE_N)), b4);
    }
}

/// Adds the products of one staged pair of tiles to the micro-tile whose corner is (`row`,
/// `col`) inside the block tile: per k, two vector reads of A, two of B, 64 fmas.
///
/// # Safety
/// `a_tile` and `b_tile` must be 16-byte-aligned staged tiles (8×128 floats each) in shared memory,
/// written before a barrier; `row`, `col` inside the block tile with room for the 8×8 micro-tile.
#[inline(always)]
pub unsafe fn multiply_tiles(
    acc: &mut MicroTile,
    a_tile: *const f32,
    b_tile: *const f32,
    row: u32,
    col: u32,
) {
    seq!(kk in 0..8 {
        let a_col = unsafe { a_tile.add(at(kk, row, BLOCK_TILE_M)) };
        let b_row = unsafe { b_tile.add(at(kk, col, BLOCK_TILE_N)) };
        let a_frag = unsafe { join8(read4(a_col), read4(a_col.add(4))) };
        let b_frag = unsafe { join8(read4(b_row), read4(b_row.add(4))) };
        outer_product(acc, &a_frag, &b_frag);
    });
}

/// Two float4 registers as one array of 8.
#[inline(always)]
pub fn join8(low: f32x4, high: f32x4) -> [f32; 8] {
    [
        low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3],
    ]
}
