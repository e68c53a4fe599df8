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
//! math for the price of shared memory (4 stages × 8.3 KiB), not registers.
//!
//! Per step: wait until this thread's copies of step t have landed, barrier (everyone's copies
//! of t are visible, and everyone has finished step t − 1, whose stage is now free), queue the
//! copies of step t + 3 into that stage, multiply step t. One barrier per step. Elements
//! outside A or B are copied with a source size of 0, which fills zeros: ragged shapes need no
//! other code.
//!
//! **What it costs.** The transposing copies of A are 4 bytes each (4 per thread per step, each
//! with its own address and bounds check) where v10 had one 16-byte load and four shared
//! stores; the first version, 3 stages with a `% 3` stage index and a generic-to-shared address
//! conversion per copy, ran *slower* than v10 (79.7% of cuBLAS at 4096³ in a first measurement). Converting the
//! shared base address once, rotating stage counters and a fourth stage made it the fastest
//! rung at large sizes. Deeper tiles (16) or 8×16 thread tiles measured slower here.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 43.1 TFLOP/s, 84% of cuBLAS, the
//! best fp32 rung (43.4 TFLOP/s, 84%, at 8192³; at 1000³ 17.7 TFLOP/s where v10 does 12.0).
//!
//! Launch: 256 threads (1-D), grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped order), 4 stages of
//! `8·(128 + 4) + 8·128` floats = 33 280 bytes of dynamic shared memory.

use super::v09_grouped_order::grouped_block_origin;
use super::v10_warp_tiling::{
    A_PADDING, Epilogue, lane_origin, multiply_eight, stage_floats, store_warp_tile, threads,
    warp_tile_n,
};
use crate::device::{
    at, commit_async_copies, copy_async_4, copy_async_16, shared_address, shared_f32, sync_threads,
    thread_x, wait_async_copies,
};
use seq_macro::seq;

crate::launch_bounds!(sgemm_v13_async_copies, 256, 2);

/// v13: v10's warp tiles fed by a 4-stage `cp.async` pipeline, 128×128 tiles 8 deep.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v13_async_copies(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { pipelined::<128, 128, 8, 8, 4>(a, b, c, m, n, k, &Epilogue::STORE) };
}

/// The pipelined warp-tiled GEMM: `STAGES` shared-memory stages filled by `cp.async`.
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
    let block_threads = const { threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) };
    // 4-byte copies of A and 16-byte copies of B per thread per step.
    let a_copies =
        const { BLOCK_TILE_M * TILE_K / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) };
    let b_copies =
        const { BLOCK_TILE_N * TILE_K / 4 / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N) };
    const {
        let t = threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N);
        assert!(STAGES >= 2 && STAGES <= 4 && TILE_K.is_multiple_of(8));
        assert!((BLOCK_TILE_M * TILE_K).is_multiple_of(t) && BLOCK_TILE_M * TILE_K / t <= 16);
        assert!(
            (BLOCK_TILE_N * TILE_K / 4).is_multiple_of(t) && BLOCK_TILE_N * TILE_K / 4 / t <= 4
        );
        assert!(BLOCK_TILE_N.is_multiple_of(warp_tile_n(THREAD_TILE_N)));
    }
    let a_stride = BLOCK_TILE_M + A_PADDING;

    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let thread = thread_x();
    let (row0, col0) = lane_origin(thread, BLOCK_TILE_N, THREAD_TILE_N);

    let stages = shared_f32();
    // Whole 16-byte copies of B need rows of a multiple of 4 floats; otherwise 4-byte ones.
    let b_rows_aligned = n.is_multiple_of(4);
    // Copies address shared memory in its own 32-bit space: convert the base once, and keep
    // each copy's destination as a byte offset from it.
    let stages_address = shared_address(stages);
    let stage_bytes = stage_floats(BLOCK_TILE_M, BLOCK_TILE_N, TILE_K) * 4;
    let b_offset = TILE_K * a_stride * 4;

    // Queue the copies of step `step` into the stage at byte `stage_start`. Elements outside
    // A or B arrive as zeros.
    // Inlined by force: called from two places and large, LLVM would otherwise outline it
    // and pass the stage pointers through a stack frame.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        seq!(i in 0..16 {
            if i < a_copies {
                // Consecutive threads take consecutive k of one row: 32-byte runs of A.
                let index = thread + i * block_threads;
                let (row, kk) = (index / TILE_K, index % TILE_K);
                let (gr, gk) = (first_row + row, tile_k + kk);
                let valid = gr < m && gk < k;
                let src = if valid { unsafe { a.add(at(gr, gk, k)) } } else { a };
                let dst = stage_start + (kk * a_stride + row) * 4;
                unsafe { copy_async_4(dst, src, valid) };
            }
        });
        seq!(i in 0..4 {
            if i < b_copies {
                let index = thread + i * block_threads;
                let (row, col) = (index / (BLOCK_TILE_N / 4), index % (BLOCK_TILE_N / 4) * 4);
                let (gr, gc) = (tile_k + row, first_col + col);
                let dst = stage_start + b_offset + (row * BLOCK_TILE_N + col) * 4;
                if b_rows_aligned {
                    // n % 4 == 0 and gc % 4 == 0: the four lie wholly inside or wholly outside.
                    let valid = gr < k && gc < n;
                    let src = if valid { unsafe { b.add(at(gr, gc, n)) } } else { b };
                    unsafe { copy_async_16(dst, src, valid) };
                } else {
                    seq!(q in 0..4 {
                        let valid = gr < k && gc + q < n;
                        let src = if valid { unsafe { b.add(at(gr, gc + q, n)) } } else { b };
                        unsafe { copy_async_4(dst + 4 * q, src, valid) };
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
        let mut kk = 0;
        while kk < TILE_K {
            unsafe {
                multiply_eight::<BLOCK_TILE_N, THREAD_TILE_N>(
                    &mut acc, a_tile, b_tile, a_stride, kk, row0, col0,
                )
            };
            kk += 8;
        }
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
