//! # v13 — `cp.async` multi-stage pipeline
//!
//! **Idea.** Copy the tiles from global to shared memory with `cp.async` (SASS `LDGSTS`): the
//! copy engine moves the bytes in the background, without the values ever passing through the
//! thread's registers, and `cp.async.wait_group` says when a group of copies has landed. With
//! no registers tied up in flight, the block keeps several steps of k in flight at once: four
//! stages here, three steps ahead of the math. The transposed A tile is written by 4-byte
//! copies straight into its transposed places, B by 16-byte copies. The compute and the store
//! are v10's (`multiply_eight`, `store_warp_tile`).
//!
//! **Fixes.** v10 could only look one step ahead: the next tile waited in registers between
//! its global load and its shared store, and at the 128-register budget that two blocks per SM
//! need there was no room for more. Here three steps of loads are always in flight behind the
//! math for the price of shared memory (4 stages × 16.3 KiB), not registers. And with no
//! registers holding loads, the tile can be 16 deep: 1024 FFMAs per barrier instead of 512.
//!
//! Per step: wait until this thread's copies of step t have landed, barrier (everyone's copies
//! of t are visible, and everyone has finished step t − 1, whose stage is now free), queue the
//! copies of step t + 3 into that stage, multiply step t. One barrier per step. Elements
//! outside A or B are copied as zeros (the copy's `ignore-src` predicate): ragged shapes need
//! no other code.
//!
//! **Keeping the copies cheap.** Each thread issues 10 copies per step (8 × 4 bytes of A,
//! 2 × 16 bytes of B), and at the 128-register cap every register and instruction they take
//! is felt. So a thread's copies sit one stride apart from a per-thread base (A: rows
//! `thread / 8 + 32·g`, k `thread % 8` and `+ 8`; B: rows `thread / 32 + 8·i`), and each
//! source address is one `mad.wide` from that base ([`byte_offset`]) rather than a 64-bit
//! pointer kept per copy; blocks wholly inside C skip the row and column checks, and only the
//! blocks on the bottom and right edges take the checked path. A warp's A copy covers 4 rows ×
//! 8 k, whose transposed places fall in 32 different banks.
//!
//! **How it got here** (H100, 4096³, % of cuBLAS): the first version (3 stages, 8 deep, a
//! `% 3` stage index, a generic-to-shared conversion per copy) ran *slower* than v10, 79.7%;
//! converting the shared base once, rotating stage counters and a fourth stage: 84.2%; the
//! cheap copies above: 80–83% at 8 deep (below the old 8-deep kernel), but 90–92% at 16 deep, where before they spilled
//! registers (Nsight Compute: the 16-deep kernel issues as many instructions as cuBLAS's and
//! loses the rest to barrier waits and dispatch stalls, see `docs/ladder.md`).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 46.8 TFLOP/s, **90.9% of cuBLAS**,
//! the best fp32 rung (46.7 TFLOP/s, 89.9%, at 8192³; 90.2% at 8192×1024×4096 and
//! 1024×8192×8192; at 1000³ 18.0 TFLOP/s where v10 does 11.6).
//!
//! Launch: 256 threads (1-D), grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped order), 4 stages of
//! `16·(128 + 4) + 16·128` floats = 66 560 bytes of dynamic shared memory.

use super::v09_grouped_order::grouped_block_origin;
use super::v10_warp_tiling::{
    A_PADDING, Epilogue, lane_origin, multiply_eight, stage_floats, store_warp_tile, threads,
    warp_tile_n,
};
use crate::device::{
    byte_offset, commit_async_copies, copy_async_4_if, copy_async_16_if, shared_address,
    shared_f32, sync_threads, thread_x, wait_async_copies,
};
use seq_macro::seq;

crate::launch_bounds!(sgemm_v13_async_copies, 256, 2);

/// v13: v10's warp tiles fed by a 4-stage `cp.async` pipeline, 128×128 tiles 16 deep.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v13_async_copies(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { pipelined::<128, 128, 16, 8, 4>(a, b, c, m, n, k, &Epilogue::STORE) };
}

/// The pipelined warp-tiled GEMM: `STAGES` shared-memory stages filled by `cp.async`. Blocks
/// whose tile lies wholly inside C (and whose B rows allow 16-byte copies) take a path without
/// row and column checks; the blocks on the bottom and right edges take the checked one.
#[inline(always)]
pub unsafe fn pipelined<
    const BLOCK_TILE_M: u32,
    const BLOCK_TILE_N: u32,
    const TILE_K: u32,
    const THREAD_TILE_N: usize,
    const STAGES: u32,
>(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    epilogue: &Epilogue,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let interior =
        first_row + BLOCK_TILE_M <= m && first_col + BLOCK_TILE_N <= n && n.is_multiple_of(4);
    if interior {
        unsafe {
            pipelined_tile::<BLOCK_TILE_M, BLOCK_TILE_N, TILE_K, THREAD_TILE_N, STAGES, false>(
                a, b, c, m, n, k, first_row, first_col, epilogue,
            )
        }
    } else {
        unsafe {
            pipelined_tile::<BLOCK_TILE_M, BLOCK_TILE_N, TILE_K, THREAD_TILE_N, STAGES, true>(
                a, b, c, m, n, k, first_row, first_col, epilogue,
            )
        }
    }
}

/// One block tile of [`pipelined`]; `EDGE` adds the row and column checks of blocks that hang
/// over the bottom or right edge of C. Steps of k past the end are checked on both paths.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn pipelined_tile<
    const BLOCK_TILE_M: u32,
    const BLOCK_TILE_N: u32,
    const TILE_K: u32,
    const THREAD_TILE_N: usize,
    const STAGES: u32,
    const EDGE: bool,
>(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    first_row: u32,
    first_col: u32,
    epilogue: &Epilogue,
) {
    // 16-byte copies of B per thread per step (A's are counted in `a_groups` × `a_halves`).
    let b_copies =
        const { BLOCK_TILE_N * TILE_K / 4 / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) };
    const {
        let t = threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N);
        assert!(STAGES >= 2 && STAGES <= 4 && TILE_K.is_multiple_of(8));
        assert!(t.is_multiple_of(BLOCK_TILE_N / 4) && TILE_K <= 32);
        assert!(BLOCK_TILE_M.is_multiple_of(t / 8) && BLOCK_TILE_M / (t / 8) <= 16);
        assert!(
            (BLOCK_TILE_N * TILE_K / 4).is_multiple_of(t) && BLOCK_TILE_N * TILE_K / 4 / t <= 4
        );
        assert!(BLOCK_TILE_N.is_multiple_of(warp_tile_n(THREAD_TILE_N)));
    }
    let a_stride = BLOCK_TILE_M + A_PADDING;
    // Thread t copies k `t % 8` (and `+ 8`, … for deeper tiles) of A's rows
    // `t / 8 + g·a_row_step`, and the float4 of B at column `(t % (BLOCK_TILE_N / 4))·4` of rows
    // `t / (BLOCK_TILE_N / 4) + i·b_row_step`: each copy is a constant multiple of a row away
    // from a per-thread base.
    let a_halves = const { TILE_K / 8 };
    let a_row_step = const { threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) / 8 };
    let a_groups = const {
        BLOCK_TILE_M * TILE_K / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) / (TILE_K / 8)
    };
    let b_row_step =
        const { threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) / (BLOCK_TILE_N / 4) };

    let thread = thread_x();
    let (row0, col0) = lane_origin(thread, BLOCK_TILE_N, THREAD_TILE_N);
    let (a_row, a_k) = (thread / 8, thread % 8);
    let (b_row, b_col) = (thread / (BLOCK_TILE_N / 4), thread % (BLOCK_TILE_N / 4) * 4);
    // Rows of A this thread may copy (edge blocks), and whether its float4 of B lies in C.
    let a_rows_left = m.saturating_sub(first_row + a_row);
    let b_col_inside = first_col + b_col < n;
    // Copies with nothing to read still need a valid source address: the thread's row start
    // for k past the end (its rows lie inside A on the interior path), A or B's first element
    // otherwise.
    let a_row_start = a.wrapping_add((first_row + a_row) as usize * k as usize);
    let a_thread = a_row_start.wrapping_add(a_k as usize);
    let b_thread = b.wrapping_add(b_row as usize * n as usize + (first_col + b_col) as usize);

    let stages = shared_f32();
    // Copies address shared memory in its own 32-bit space: convert the base once, and keep
    // each copy's destination as a byte offset from it.
    let stages_address = shared_address(stages);
    let stage_bytes = stage_floats(BLOCK_TILE_M, BLOCK_TILE_N, TILE_K) * 4;
    let a_destination = (a_k * a_stride + a_row) * 4;
    let b_destination = TILE_K * a_stride * 4 + (b_row * BLOCK_TILE_N + b_col) * 4;

    // Queue the copies of step `step` into the stage at byte `stage_start`. Elements outside
    // A or B arrive as zeros.
    // Inlined by force: called from two places and large, LLVM would otherwise outline it
    // and pass the stage pointers through a stack frame.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        seq!(h in 0..4 {
            if h < a_halves {
                let k_inside = tile_k + 8 * h + a_k < k;
                let base = if k_inside {
                    byte_offset(a_thread, step, TILE_K * 4).wrapping_add(8 * h as usize)
                } else {
                    a_row_start
                };
                seq!(g in 0..16 {
                    if g < a_groups {
                        // 4·rows × k floats: the element size rides on the constant, so that
                        // the 32-bit operands cannot overflow for any k below 2³¹.
                        let src = if g == 0 { base } else { byte_offset(base, 4 * g * a_row_step, k) };
                        let dst = stage_start + a_destination + (8 * h * a_stride + g * a_row_step) * 4;
                        if EDGE {
                            let valid = k_inside && g * a_row_step < a_rows_left;
                            unsafe { copy_async_4_if(dst, if valid { src } else { a }, valid) };
                        } else {
                            unsafe { copy_async_4_if(dst, src, k_inside) };
                        }
                    }
                });
            }
        });
        let b_step = b_thread.wrapping_add(tile_k as usize * n as usize);
        seq!(i in 0..4 {
            if i < b_copies {
                let src = if i == 0 { b_step } else { byte_offset(b_step, 4 * i * b_row_step, n) };
                let dst = stage_start + b_destination + i * b_row_step * BLOCK_TILE_N * 4;
                let row_inside = tile_k + b_row + i * b_row_step < k;
                if !EDGE {
                    unsafe { copy_async_16_if(dst, if row_inside { src } else { b }, row_inside) };
                } else if n.is_multiple_of(4) {
                    // n % 4 == 0 and the column % 4 == 0: the four lie wholly inside or outside.
                    let valid = row_inside && b_col_inside;
                    unsafe { copy_async_16_if(dst, if valid { src } else { b }, valid) };
                } else {
                    seq!(q in 0..4 {
                        let valid = row_inside && first_col + b_col + q < n;
                        let element = if valid { src.wrapping_add(q) } else { b };
                        unsafe { copy_async_4_if(dst + 4 * q, element, valid) };
                    });
                }
            }
        });
    };

    let steps = k.div_ceil(TILE_K);
    // Prologue: the first STAGES − 1 steps in flight. Every iteration commits one group, empty
    // or not, so that "all but the newest STAGES − 2 groups" always means "step t has landed".
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * stage_bytes);
        }
        commit_async_copies();
    }
    let mut acc = [[0.0f32; THREAD_TILE_N]; 8];
    // Stages rotate: read one, write the one STAGES − 1 ahead (counters, not `% STAGES`).
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    for step in 0..steps {
        // All but the newest STAGES − 2 groups done (a constant; the match folds away).
        match STAGES {
            2 => wait_async_copies::<0>(),
            3 => wait_async_copies::<1>(),
            _ => wait_async_copies::<2>(),
        }
        sync_threads();
        let ahead = step + STAGES - 1;
        if ahead < steps {
            issue(ahead, stages_address + write_stage * stage_bytes);
        }
        commit_async_copies();
        let a_tile = unsafe { stages.add((read_stage * stage_bytes / 4) as usize) };
        let b_tile = unsafe { a_tile.add((TILE_K * a_stride) as usize) };
        // Unrolled by hand: LLVM keeps a 16-deep step as a loop of two, which costs ptxas
        // registers at the 128-register cap.
        seq!(j in 0..4 {
            if j * 8 < TILE_K {
                unsafe {
                    multiply_eight::<BLOCK_TILE_N, THREAD_TILE_N>(
                        &mut acc, a_tile, b_tile, a_stride, j * 8, row0, col0,
                    )
                };
            }
        });
        read_stage = if read_stage + 1 == STAGES {
            0
        } else {
            read_stage + 1
        };
        write_stage = if write_stage + 1 == STAGES {
            0
        } else {
            write_stage + 1
        };
    }
    unsafe { store_warp_tile(&acc, c, m, n, first_row + row0, first_col + col0, epilogue) };
}
