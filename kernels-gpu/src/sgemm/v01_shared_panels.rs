//! # v1 — whole panels in shared memory
//!
//! **Idea.** A block of 4×8 threads computes a 4×8 tile of C. It first copies the whole 4×k
//! row-panel of A and the whole k×8 column-panel of B into shared memory, waits at a barrier,
//! then every thread computes its dot product from shared memory only.
//!
//! **Fixes.** In v0 each element of A is fetched by every block column and each element of B by
//! every block row, through the cache hierarchy, for every use. Here each block reads its
//! operands from global memory exactly once and reuses them from fast on-chip memory.
//!
//! **Why it does not scale.** The panels need `48·k` bytes of shared memory, so the block must
//! stay tiny (32 threads) and k is capped (about 4800 on the H100's 227 KiB; the host refuses
//! more). At 4096³ each block holds 192 KiB, one block of one warp fits on an SM, and the load
//! phase cannot overlap the compute phase: the SM idles most of the time. The rung is slower
//! than v0, which is the lesson: stage *tiles* that slide along k (v2), not whole panels.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 0.06 TFLOP/s, 0.1% of cuBLAS: 100× slower than v0, for the reasons above.
//!
//! Launch: block 8×4 threads, grid ⌈n/8⌉ × ⌈m/4⌉, `48·k` bytes of dynamic shared memory
//! ([`gemm_geometry::v01`]).

use crate::device::{
    at, block_x, block_y, fma, load_or_zero, shared_f32, sync_threads, thread_x, thread_y,
};
use gemm_geometry::v01::{BLOCK_TILE_M, BLOCK_TILE_N, THREADS};

/// v1: `C = A·B` with the block's full A and B panels staged in shared memory.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `48·k`
/// bytes of dynamic shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v01_shared_panels(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_panel = shared_f32(); // BLOCK_TILE_M × k, row-major
    let b_panel = unsafe { a_panel.add((BLOCK_TILE_M * k) as usize) }; // k × BLOCK_TILE_N
    let (tx, ty) = (thread_x(), thread_y());
    let thread = ty * BLOCK_TILE_N + tx;
    let first_row = block_y() * BLOCK_TILE_M;
    let first_col = block_x() * BLOCK_TILE_N;

    // Consecutive threads copy consecutive elements of each A row: coalesced.
    for r in 0..BLOCK_TILE_M {
        let mut i = thread;
        while i < k {
            unsafe {
                *a_panel.add(at(r, i, k)) = load_or_zero(a, m, k, first_row + r, i);
            }
            i += THREADS;
        }
    }
    // Each B row of the panel is 8 consecutive floats; the 4 thread rows take turns.
    let mut i = ty;
    while i < k {
        unsafe {
            *b_panel.add(at(i, tx, BLOCK_TILE_N)) = load_or_zero(b, k, n, i, first_col + tx);
        }
        i += BLOCK_TILE_M;
    }
    sync_threads();

    let mut sum = 0.0f32;
    for i in 0..k {
        unsafe {
            sum = fma(
                *a_panel.add(at(ty, i, k)),
                *b_panel.add(at(i, tx, BLOCK_TILE_N)),
                sum,
            );
        }
    }
    let (row, col) = (first_row + ty, first_col + tx);
    if row < m && col < n {
        unsafe { *c.add(at(row, col, n)) = sum };
    }
}
