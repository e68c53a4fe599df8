//! # v5 — register blocking: outer products
//!
//! **Idea.** A block of 256 threads computes a 128×128 tile of C; each thread owns a
//! contiguous 8×8 micro-tile held in 64 registers. Per step of k (tiles 8 deep), a thread loads
//! a column of 8 values of the A tile and a row of 8 values of the B tile into registers and
//! adds their outer product, 64 fmas, to its micro-tile.
//!
//! **Fixes.** v4 did 16 fmas per 8 shared-memory loads (2 per load); here it is 64 per 16
//! (4 per load), and each element staged from global memory serves 128 outputs instead of 64:
//! half the global traffic per flop. Global loads stay 128-bit, as in v4.
//!
//! **Why it is slower than v4.** Fewer loads per fma on paper, but every one of them now
//! collides in the shared-memory banks. A warp is 2 thread-rows × 16 thread-columns: its 16
//! B addresses are 8 floats apart, so they fall into 4 banks, a 4-way conflict; its 2 A
//! addresses are 64 floats apart, the same bank, a 2-way conflict. Per step of k a warp needs
//! 8·2 + 8·4 = 48 shared-memory wavefronts for 64 fmas, where v4's conflict-free strided
//! layout needed 8 for 16 (0.75 against 0.5 per fma). Register blocking only pays once the
//! fragments are read without conflicts: v6 and v7 fix that.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 18.9 TFLOP/s, 36% of cuBLAS: *slower* than v4, see below.
//!
//! Launch: 256 threads (1-D), grid ⌈n/128⌉ × ⌈m/128⌉, 8 KiB of dynamic shared memory
//! ([`gemm_geometry::v05`]).

use crate::device::{
    at, block_x, block_y, load4_or_zero, outer_product, shared_f32, store4_or_partial,
    sync_threads, thread_x, write4,
};
use core::simd::f32x4;
pub use gemm_geometry::v05::{BLOCK_TILE_M, BLOCK_TILE_N, TILE_K};
use seq_macro::seq;

/// Rows and columns of each thread's micro-tile (as an array length).
pub const THREAD_TILE: usize = gemm_geometry::v05::THREAD_TILE as usize;
const THREADS_PER_ROW: u32 = BLOCK_TILE_N / THREAD_TILE as u32;

/// A thread's 8×8 block of accumulators.
pub type MicroTile = [[f32; THREAD_TILE]; THREAD_TILE];

/// v5: `C = A·B`, 128×128 block tiles, an 8×8 register micro-tile per thread.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v05_register_blocking(
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
            let mut b_frag = [0.0f32; THREAD_TILE];
            for i in 0..THREAD_TILE {
                unsafe {
                    a_frag[i] = *a_tile.add(at(thread_row * 8 + i as u32, kk, TILE_K));
                    b_frag[i] = *b_tile.add(at(kk, thread_col * 8 + i as u32, BLOCK_TILE_N));
                }
            }
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

/// Stages the A tile (128×8, row-major) and the B tile (8×128) for the step at `tile_k`: one
/// 128-bit global load and one 128-bit shared store of each per thread. Shared by v6.
///
/// # Safety
/// Called from a ladder entry that upholds [the ladder's launch
/// contract](crate::sgemm#the-ladders-launch-contract): `a` (`m × k`) and `b` (`k × n`) readable,
/// 16-byte aligned; `a_tile` and `b_tile` 16-byte-aligned shared-memory tiles of 128×8 and 8×128
/// floats; `thread` < 256, all threads of the block staging their share.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn load_tiles(
    a: *const f32,
    b: *const f32,
    m: u32,
    n: u32,
    k: u32,
    first_row: u32,
    first_col: u32,
    tile_k: u32,
    a_tile: *mut f32,
    b_tile: *mut f32,
    thread: u32,
) {
    let (a_row, a_col) = (thread / (TILE_K / 4), thread % (TILE_K / 4) * 4);
    let (b_row, b_col) = (thread / (BLOCK_TILE_N / 4), thread % (BLOCK_TILE_N / 4) * 4);
    unsafe {
        write4(
            a_tile.add(at(a_row, a_col, TILE_K)),
            load4_or_zero(a, m, k, first_row + a_row, tile_k + a_col),
        );
        write4(
            b_tile.add(at(b_row, b_col, BLOCK_TILE_N)),
            load4_or_zero(b, k, n, tile_k + b_row, first_col + b_col),
        );
    }
}

/// Writes an 8×8 micro-tile whose top-left element is C(`row`, `col`), two 128-bit stores per
/// row where the row lies inside C, element by element at ragged edges. Shared by later rungs.
///
/// # Safety
/// `c` must point to a writable row-major `m × n` f32 matrix, 16-byte aligned; only elements inside
/// it are written.
#[inline(always)]
pub unsafe fn store_micro_tile(acc: &MicroTile, c: *mut f32, m: u32, n: u32, row: u32, col: u32) {
    // Unrolled: a loop over `acc` would index it at run time and move it to local memory.
    seq!(i in 0..8 {
        unsafe {
            let values = &acc[i];
            store4_or_partial(c, m, n, row + i, col, f32x4::from_array([values[0], values[1], values[2], values[3]]));
            store4_or_partial(c, m, n, row + i, col + 4, f32x4::from_array([values[4], values[5], values[6], values[7]]));
        }
    });
}
