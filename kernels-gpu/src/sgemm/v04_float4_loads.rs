//! # v4 — 128-bit global loads
//!
//! **Idea.** Same tiles and thread tiles as v3, but each thread stages its share of the A and B
//! tiles with one 128-bit load each (`ld.global.v4.f32`, SASS `LDG.E.128`) and one 128-bit
//! shared-memory store, instead of four 32-bit loads and stores each.
//!
//! **Fixes.** v3 issued 8 global-load and 8 shared-store instructions per thread per step; now
//! it is 2 and 2. Fewer instructions in flight for the same bytes leaves issue slots for fmas and
//! lets each warp request whole 512-byte rows at once.
//!
//! **Requirements.** A 128-bit access must be 16-byte aligned: the base pointers must be (the host
//! checks; device allocations are 256-byte aligned) and rows must hold a multiple of 4 floats.
//! Rows of any other length, and groups of four that cross the matrix edge, fall back to scalar
//! loads inside [`load4_or_zero`], so ragged shapes stay correct, just slower.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 26.1 TFLOP/s, 50% of cuBLAS.
//!
//! Launch: block 16×16 threads, grid ⌈n/64⌉ × ⌈m/64⌉, 8 KiB of dynamic shared memory.

use super::v03_thread_tile::{
    BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE, THREADS_PER_SIDE, TILE_K, accumulate_tile, store_tile,
};
use crate::device::{
    at, block_x, block_y, load4_or_zero, shared_f32, sync_threads, thread_x, thread_y, write4,
};

/// v4: v3 with the A and B tiles staged through 128-bit loads.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a` and
/// `b` 16-byte aligned (see Requirements above).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v04_float4_loads(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared_f32(); // BLOCK_TILE_M × TILE_K
    let b_tile = unsafe { a_tile.add((BLOCK_TILE_M * TILE_K) as usize) }; // TILE_K × BLOCK_TILE_N
    let (tx, ty) = (thread_x(), thread_y());
    let thread = ty * THREADS_PER_SIDE + tx;
    let first_row = block_y() * BLOCK_TILE_M;
    let first_col = block_x() * BLOCK_TILE_N;
    // 256 threads, one float4 of each tile apiece: A is 64 rows of 4 float4s, B 16 rows of 16.
    let (a_row, a_col) = (thread / (TILE_K / 4), thread % (TILE_K / 4) * 4);
    let (b_row, b_col) = (thread / (BLOCK_TILE_N / 4), thread % (BLOCK_TILE_N / 4) * 4);

    let mut acc = [[0.0f32; THREAD_TILE]; THREAD_TILE];
    let mut tile_k = 0;
    while tile_k < k {
        unsafe {
            let a4 = load4_or_zero(a, m, k, first_row + a_row, tile_k + a_col);
            write4(a_tile.add(at(a_row, a_col, TILE_K)), a4);
            let b4 = load4_or_zero(b, k, n, tile_k + b_row, first_col + b_col);
            write4(b_tile.add(at(b_row, b_col, BLOCK_TILE_N)), b4);
        }
        sync_threads();
        unsafe { accumulate_tile(&mut acc, a_tile, b_tile, tx, ty) };
        sync_threads();
        tile_k += TILE_K;
    }
    unsafe { store_tile(&acc, c, m, n, first_row + ty, first_col + tx) };
}
