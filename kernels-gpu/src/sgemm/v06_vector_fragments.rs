//! # v6 — float4 register fragments
//!
//! **Idea.** Same tiles and micro-tiles as v5, but each thread's row of 8 B values is read from
//! shared memory with two 128-bit loads (`ld.shared.v4.f32`, SASS `LDS.128`) instead of eight
//! 32-bit loads.
//!
//! **Fixes.** v5 spent 16 shared-memory load instructions per 64 fmas; B now takes 2 instead of
//! 8, so 10 per 64. The eight B values of a thread are contiguous and 16-byte aligned, which is
//! what a vector load needs.
//!
//! **Still limited by** the A column: its 8 values sit 8 floats apart in the row-major A tile,
//! so they cannot be read as a vector (v7 stores A transposed).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 26.5 TFLOP/s, 51% of cuBLAS.
//!
//! Launch: as v5.

use super::v05_register_blocking::{
    BLOCK_TILE_M, BLOCK_TILE_N, MicroTile, THREAD_TILE, TILE_K, load_tiles, store_micro_tile,
};
use crate::device::{
    at, block_x, block_y, outer_product, read4, shared_f32, sync_threads, thread_x,
};

const THREADS_PER_ROW: u32 = BLOCK_TILE_N / THREAD_TILE as u32;

/// v6: v5 with the B fragment read through 128-bit shared-memory loads.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v06_vector_fragments(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared_f32(); // BLOCK_TILE_M × TILE_K, row-major
    let b_tile = unsafe { a_tile.add((BLOCK_TILE_M * TILE_K) as usize) }; // TILE_K × BLOCK_TILE_N
    let thread = thread_x();
    let (thread_row, thread_col) = (thread / THREADS_PER_ROW, thread % THREADS_PER_ROW);
    let (first_row, first_col) = (block_y() * BLOCK_TILE_M, block_x() * BLOCK_TILE_N);

    let mut acc: MicroTile = [[0.0; THREAD_TILE]; THREAD_TILE];
    let mut tile_k = 0;
    while tile_k < k {
        unsafe {
            load_tiles(
                a, b, m, n, k, first_row, first_col, tile_k, a_tile, b_tile, thread,
            )
        };
        sync_threads();
        for kk in 0..TILE_K {
            let mut a_frag = [0.0f32; THREAD_TILE];
            for (i, value) in a_frag.iter_mut().enumerate() {
                *value = unsafe { *a_tile.add(at(thread_row * 8 + i as u32, kk, TILE_K)) };
            }
            let b_row = unsafe { b_tile.add(at(kk, thread_col * 8, BLOCK_TILE_N)) };
            let (low, high) = unsafe { (read4(b_row), read4(b_row.add(4))) };
            let b_frag = [
                low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3],
            ];
            outer_product(&mut acc, &a_frag, &b_frag);
        }
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
