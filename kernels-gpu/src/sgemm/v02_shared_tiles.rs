//! # v2 — shared-memory tiles sliding along k
//!
//! **Idea.** A block of 32×32 threads computes a 32×32 tile of C. It walks k in steps of 32:
//! each step, every thread copies one element of a 32×32 tile of A and one of B into shared
//! memory, the block meets at a barrier, and each thread adds 32 products to its sum.
//!
//! **Fixes.** v1's panels grew with k. These tiles take a fixed 8 KiB whatever k is, so any k
//! works, blocks have 1024 threads, and several blocks share an SM — while an SM computes one
//! block's tile, another block's loads are in flight. Each element staged in shared memory is
//! read 32 times, cutting global traffic by 32× against v0.
//!
//! **Still slow because** every fma needs two shared-memory loads: the inner loop is bound by
//! shared-memory bandwidth, not by arithmetic (v3).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 8.6 TFLOP/s, 17% of cuBLAS.
//!
//! Launch: block 32×32 threads, grid ⌈n/32⌉ × ⌈m/32⌉, 8 KiB of dynamic shared memory
//! ([`gemm_geometry::v02`]).

use crate::device::{
    at, block_x, block_y, fma, load_or_zero, shared_f32, sync_threads, thread_x, thread_y,
};
use gemm_geometry::v02::TILE;

/// v2: `C = A·B` with 32×32 shared-memory tiles stepping along k.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v02_shared_tiles(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared_f32(); // TILE × TILE
    let b_tile = unsafe { a_tile.add((TILE * TILE) as usize) }; // TILE × TILE
    let (tx, ty) = (thread_x(), thread_y());
    let row = block_y() * TILE + ty;
    let col = block_x() * TILE + tx;

    let mut sum = 0.0f32;
    let mut tile_k = 0;
    while tile_k < k {
        unsafe {
            *a_tile.add(at(ty, tx, TILE)) = load_or_zero(a, m, k, row, tile_k + tx);
            *b_tile.add(at(ty, tx, TILE)) = load_or_zero(b, k, n, tile_k + ty, col);
        }
        sync_threads();
        for i in 0..TILE {
            unsafe {
                sum = fma(
                    *a_tile.add(at(ty, i, TILE)),
                    *b_tile.add(at(i, tx, TILE)),
                    sum,
                );
            }
        }
        // Nobody may overwrite the tiles while a slower warp still reads them.
        sync_threads();
        tile_k += TILE;
    }
    if row < m && col < n {
        unsafe { *c.add(at(row, col, n)) = sum };
    }
}
