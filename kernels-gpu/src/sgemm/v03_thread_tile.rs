//! # v3 — more work per thread
//!
//! **Idea.** A block of 16×16 threads computes a 64×64 tile of C, so each thread owns a 4×4
//! tile of outputs. The thread's outputs are *strided*: rows `ty + 16·i`, columns `tx + 16·j`,
//! so that a warp's loads and stores still touch consecutive addresses. Per step of k, the
//! thread loads 4 values of A and 4 of B from shared memory into registers and does 16 fmas.
//!
//! **Fixes.** In v2 every fma cost two shared-memory loads. Here 8 loads feed 16 fmas (4× the
//! arithmetic per load), and each global element staged in shared memory serves 64 outputs
//! instead of 32.
//!
//! **Still limited by** shared-memory loads (one per two fmas) and by scalar global loads: one
//! 4-byte load instruction per element staged (v4 fixes the latter).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 23.4 TFLOP/s, 45% of cuBLAS.
//!
//! Launch: block 16×16 threads, grid ⌈n/64⌉ × ⌈m/64⌉, 8 KiB of dynamic shared memory
//! ([`gemm_geometry::v03`]).

use crate::device::{
    at, block_x, block_y, fma, load_or_zero, shared_f32, sync_threads, thread_x, thread_y,
};
pub use gemm_geometry::v03::{BLOCK_TILE_M, BLOCK_TILE_N, THREADS_PER_SIDE, TILE_K};

/// Each thread computes `THREAD_TILE × THREAD_TILE` outputs (as an array length).
pub const THREAD_TILE: usize = gemm_geometry::v03::THREAD_TILE as usize;

/// v3: `C = A·B`, 64×64 block tiles, a strided 4×4 tile of C per thread.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v03_thread_tile(
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

    let mut acc = [[0.0f32; THREAD_TILE]; THREAD_TILE];
    let mut tile_k = 0;
    while tile_k < k {
        // 256 threads stage 64×16 + 16×64 elements: 4 of each per thread, coalesced along rows.
        for i in 0..THREAD_TILE as u32 {
            let row = ty + THREADS_PER_SIDE * i;
            unsafe {
                *a_tile.add(at(row, tx, TILE_K)) =
                    load_or_zero(a, m, k, first_row + row, tile_k + tx);
            }
            let (b_row, b_col) = (thread / BLOCK_TILE_N + 4 * i, thread % BLOCK_TILE_N);
            unsafe {
                *b_tile.add(at(b_row, b_col, BLOCK_TILE_N)) =
                    load_or_zero(b, k, n, tile_k + b_row, first_col + b_col);
            }
        }
        sync_threads();
        unsafe { accumulate_tile(&mut acc, a_tile, b_tile, tx, ty) };
        sync_threads();
        tile_k += TILE_K;
    }
    unsafe { store_tile(&acc, c, m, n, first_row + ty, first_col + tx) };
}

/// Adds the products of the staged tiles to the thread's strided 4×4 outputs. Shared by v4,
/// which changes only how the tiles are staged.
///
/// # Safety
/// Called from a ladder entry that upholds [the ladder's launch
/// contract](crate::sgemm#the-ladders-launch-contract): `a_tile` and `b_tile` must point to the
/// staged 64×16 and 16×64 tiles in shared memory, written before a barrier; `tx`, `ty` < 16.
#[inline(always)]
pub unsafe fn accumulate_tile(
    acc: &mut [[f32; THREAD_TILE]; THREAD_TILE],
    a_tile: *const f32,
    b_tile: *const f32,
    tx: u32,
    ty: u32,
) {
    for kk in 0..TILE_K {
        let mut a_frag = [0.0f32; THREAD_TILE];
        let mut b_frag = [0.0f32; THREAD_TILE];
        for i in 0..THREAD_TILE {
            let stride = THREADS_PER_SIDE * i as u32;
            unsafe {
                a_frag[i] = *a_tile.add(at(ty + stride, kk, TILE_K));
                b_frag[i] = *b_tile.add(at(kk, tx + stride, BLOCK_TILE_N));
            }
        }
        for i in 0..THREAD_TILE {
            for j in 0..THREAD_TILE {
                acc[i][j] = fma(a_frag[i], b_frag[j], acc[i][j]);
            }
        }
    }
}

/// Writes the thread's strided outputs (row `row + 16·i`, column `col + 16·j`) that fall inside C.
///
/// # Safety
/// `c` must point to a writable row-major `m × n` f32 matrix; only elements inside it are written.
#[inline(always)]
pub unsafe fn store_tile(
    acc: &[[f32; THREAD_TILE]; THREAD_TILE],
    c: *mut f32,
    m: u32,
    n: u32,
    row: u32,
    col: u32,
) {
    for i in 0..THREAD_TILE {
        for j in 0..THREAD_TILE {
            let (r, cc) = (
                row + THREADS_PER_SIDE * i as u32,
                col + THREADS_PER_SIDE * j as u32,
            );
            if r < m && cc < n {
                unsafe { *c.add(at(r, cc, n)) = acc[i][j] };
            }
        }
    }
}
