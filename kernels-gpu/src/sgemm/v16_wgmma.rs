//! # v16 — Hopper warpgroup MMA (`wgmma`, sm_90a)
//!
//! **Idea.** Hopper's tensor cores are fed by `wgmma.mma_async`: four warps (a *warpgroup*)
//! issue one instruction for a 64×256×16 tile, the operands come straight from shared memory
//! through 64-bit *matrix descriptors* (no `ldmatrix`, no fragment registers), and the
//! instruction runs asynchronously: the warpgroup issues the four k-steps of a stage, commits
//! them as a group, and only waits for the group of the *previous* stage, so the tensor cores
//! never wait for the issuing threads.
//!
//! **Fixes.** v15's `mma.sync` is Ampere's instruction: on the H100 it reaches only part of the
//! tensor cores' rate, and every 16×8×16 tile costs the warp an instruction plus its share of
//! `ldmatrix` traffic through the register file. Here each warpgroup multiplies its 64×256
//! slice of the block tile with 4 instructions per 64-deep stage, reading A and B from shared
//! memory directly.
//!
//! **Layout.** `wgmma` reads the hardware's 128-byte swizzle: rows of 128 bytes in atoms of 8
//! rows (1 024 bytes, 1 024-aligned) where 16-byte chunk `c` of row `r` sits at `c ^ (r % 8)`.
//! A (128×64, K-major) is exactly that, one row per m. B stays row-major (k×n, "N-major",
//! `imm-trans-b = 1`): each 64-column block of the 64×256 B tile is a slab of 64 k-rows of
//! 128 bytes; the descriptor's leading offset steps from slab to slab (8 KiB), its stride
//! offset from one 8-row group to the next (1 KiB). Both tiles are filled by 16-byte
//! `cp.async` straight from row-major global memory (16-bit loads where rows are not 16-byte
//! aligned), then `fence.proxy.async` hands the bytes from the ordinary memory proxy to the
//! async proxy `wgmma` reads through, and a barrier makes everyone's copies visible.
//!
//! **Pipeline.** 4 stages of 48 KiB. At step t: wait for this thread's copies of step t,
//! fence, barrier; queue the copies of step t + 2 into the stage of step t − 2 (whose
//! `wgmma` group every warpgroup retired before the barrier); issue the 4 `wgmma` of step t and
//! commit; wait until only that group is pending (so step t − 1's are done).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 468.7 TFLOP/s, 62% of cuBLAS fp16
//! (762 TFLOP/s), about as fast as the final v15 at this size (466.3); 67% at 8192³.
//!
//! Launch: 256 threads (2 warpgroups, 64 rows each), grid ⌈m/128⌉·⌈n/256⌉ (1-D, grouped),
//! `gemm_geometry::v16::SHARED_BYTES` of dynamic shared memory (4 stages plus 1 KiB to align
//! the first to 1 024).

use crate::device::{
    at, commit_async_copies, copy_async_16, load8_f16_or_zero, shared_address, shared_f32,
    store_f16x2_or_partial, store_shared_16, sync_threads, thread_x, wait_async_copies,
};
use crate::pipeline::StageRing;
use crate::tensor_core::{
    fence_shared_for_async_proxy, pack_f16x2, pin_accumulators, swizzled_descriptor,
    warpgroup_commit, warpgroup_fence, warpgroup_wait, wgmma_m64n128k16_f16, wgmma_m64n256k16_f16,
};
use crate::tile_order::grouped_block_origin;
use seq_macro::seq;

use gemm_geometry::v16::{
    A_BYTES, B_SLAB_BYTES, BLOCK_TILE_M, MIN_BLOCKS_PER_SM, ROW_BYTES, STAGES, THREADS, TILE_K,
    WARPGROUP_ROWS, shared_bytes,
};

/// Byte offset of 16-byte chunk `chunk` (8 halves of k) of row `row` in the A tile.
#[inline(always)]
fn a_offset(row: u32, chunk: u32) -> u32 {
    row * ROW_BYTES + (chunk ^ (row % 8)) * 16
}

/// Byte offset of 16-byte chunk `chunk` (8 halves of n, 0..32) of k-row `row` in the B tile.
#[inline(always)]
fn b_offset(row: u32, chunk: u32) -> u32 {
    A_BYTES + chunk / 8 * B_SLAB_BYTES + row * ROW_BYTES + ((chunk % 8) ^ (row % 8)) * 16
}

crate::launch_bounds!(hgemm_v16_wgmma, THREADS, MIN_BLOCKS_PER_SM);

/// v16: fp16 GEMM on `wgmma.m64n256k16`, 128×256×64 block tiles, 4-stage `cp.async`.
/// `a`, `b`, `c` hold fp16 bit patterns.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), for fp16: `a`,
/// `b`, `c` hold `m·k`, `k·n`, `m·n` fp16 elements, 16-byte aligned, with the module's launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v16_wgmma(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { wgmma_pipeline::<{ gemm_geometry::v16::BLOCK_TILE_N }, STAGES>(a, b, c, m, n, k) }
}

/// The pipelined `wgmma` GEMM: block tiles 128 × `BLOCK_TILE_N` (128 or 256) × 64, `STAGES`
/// stages (3 or 4). Measured on the H100: 128×256 with 4 stages is the fastest (128×128 with
/// 3 stages and two blocks per SM: 57% of cuBLAS at 4096³; with 4 stages: 52%).
///
/// # Safety
/// That of [`hgemm_v16_wgmma`], with the launch (threads, grid, dynamic shared memory) for this
/// `BLOCK_TILE_N` and `STAGES`; every thread of the block calls it (barriers and
/// warpgroup-collective `wgmma`).
#[inline(always)]
unsafe fn wgmma_pipeline<const BLOCK_TILE_N: u32, const STAGES: u32>(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
) {
    const { assert!((BLOCK_TILE_N == 128 || BLOCK_TILE_N == 256) && (STAGES == 3 || STAGES == 4)) };
    let stage_bytes = shared_bytes(BLOCK_TILE_N, 1) - 1024;
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let thread = thread_x();
    let warpgroup = thread / 128;
    let (warp, lane) = (thread % 128 / 32, thread % 32);

    // The first stage starts at the first 1 024-byte boundary of dynamic shared memory.
    let stages_address = (shared_address(shared_f32()) + 1023) & !1023;
    let a_rows_aligned = k.is_multiple_of(8);
    let b_rows_aligned = n.is_multiple_of(8);

    // Queue the copies of step `step` into the stage at byte `stage_start`: 4 chunks of A and
    // 8 of B (8 halves each) per thread. Elements outside A or B arrive as zeros.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, chunk) = (index / 8, index % 8);
            let (gr, gk) = (first_row + row, tile_k + chunk * 8);
            let dst = stage_start + a_offset(row, chunk);
            if a_rows_aligned {
                let valid = gr < m && gk < k;
                let src = if valid { unsafe { a.add(at(gr, gk, k)) } } else { a };
                unsafe { copy_async_16(dst, src, valid) };
            } else {
                unsafe { store_shared_16(dst, load8_f16_or_zero(a, k, m, k, gr, gk)) };
            }
        });
        seq!(i in 0..8 {
            if i < TILE_K * BLOCK_TILE_N / 8 / THREADS {
            let index = thread + i * THREADS;
            let (row, chunk) = (index / (BLOCK_TILE_N / 8), index % (BLOCK_TILE_N / 8));
            let (gr, gc) = (tile_k + row, first_col + chunk * 8);
            let dst = stage_start + b_offset(row, chunk);
            if b_rows_aligned {
                let valid = gr < k && gc < n;
                let src = if valid { unsafe { b.add(at(gr, gc, n)) } } else { b };
                unsafe { copy_async_16(dst, src, valid) };
            } else {
                unsafe { store_shared_16(dst, load8_f16_or_zero(b, n, k, n, gr, gc)) };
            }
            }
        });
    };

    let steps = k.div_ceil(TILE_K);
    // Two steps ahead: the stage being multiplied and the one whose `wgmma` may still be
    // running take the other two.
    let ahead_steps = STAGES - 2;
    for s in 0..ahead_steps {
        if s < steps {
            issue(s, stages_address + s * stage_bytes);
        }
        commit_async_copies();
    }
    let mut acc = [0.0f32; 128];
    let mut read_stage = StageRing::<STAGES>::new();
    let mut write_stage = StageRing::<STAGES>::at(ahead_steps);
    for step in 0..steps {
        // Groups committed so far cover steps 0 ..= step + AHEAD − 1: allow the newest
        // AHEAD − 1 to be in flight.
        match STAGES {
            3 => wait_async_copies::<0>(),
            _ => wait_async_copies::<1>(),
        }
        fence_shared_for_async_proxy();
        sync_threads();
        let ahead = step + ahead_steps;
        if ahead < steps {
            issue(ahead, stages_address + write_stage.index() * stage_bytes);
        }
        commit_async_copies();

        let stage = stages_address + read_stage.index() * stage_bytes;
        let a_tile = stage + warpgroup * WARPGROUP_ROWS * ROW_BYTES;
        let b_tile = stage + A_BYTES;
        warpgroup_fence();
        seq!(kstep in 0..4 {
            // A: 16 halves = 32 bytes further along each row; B: 16 k-rows further down.
            let a_desc = swizzled_descriptor(a_tile + kstep * 32, 16, 8 * ROW_BYTES);
            let b_desc = swizzled_descriptor(b_tile + kstep * 16 * ROW_BYTES, B_SLAB_BYTES, 8 * ROW_BYTES);
            let accumulate = step > 0 || kstep > 0;
            if BLOCK_TILE_N == 256 {
                unsafe { wgmma_m64n256k16_f16(&mut acc, a_desc, b_desc, accumulate) };
            } else {
                unsafe { wgmma_m64n128k16_f16(&mut acc, a_desc, b_desc, accumulate) };
            }
        });
        warpgroup_commit();
        // Step t − 1's group is done: its stage may be refilled after the next barrier.
        warpgroup_wait::<1>();
        read_stage.advance();
        write_stage.advance();
    }
    warpgroup_wait::<0>();
    if BLOCK_TILE_N == 256 {
        pin_accumulators::<128, 128>(&mut acc);
    } else {
        pin_accumulators::<64, 128>(&mut acc);
    }

    let row = first_row + warpgroup * WARPGROUP_ROWS + 16 * warp + lane / 4;
    seq!(j in 0..32 {
        if j < BLOCK_TILE_N / 8 {
        let col = first_col + 8 * j + 2 * (lane % 4);
        unsafe {
            store_f16x2_or_partial(c, m, n, row, col, pack_f16x2(acc[4 * j], acc[4 * j + 1]));
            store_f16x2_or_partial(c, m, n, row + 8, col, pack_f16x2(acc[4 * j + 2], acc[4 * j + 3]));
        }
        }
    });
}
