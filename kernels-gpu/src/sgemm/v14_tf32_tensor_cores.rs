//! # v14 — TF32 tensor cores (`mma.sync` m16n8k8)
//!
//! **Idea.** Stop multiplying on the FMA units. A tensor core multiplies a 16×8 tile by an 8×8
//! tile in one warp-wide instruction, `mma.sync.m16n8k8.tf32`: 2 048 flops where an FFMA does
//! 2 per thread. The inputs are rounded to TF32 (fp32's 8-bit exponent, 10 mantissa bits:
//! `cvt.rna.tf32.f32`), the products are exact, and the sums stay in fp32. Each warp owns a
//! 64×64 tile of C: 4 × 8 tiles of 16×8, 128 fp32 accumulators per thread, spread over the
//! warp as the PTX ISA's fragment layout says (see [`crate::tensor_core`]).
//!
//! **Fixes.** v13 had reached the FFMA pipe's limits (91% of cuBLAS SGEMM, no faster way to
//! do fp32 multiplies). The H100's tensor cores do TF32 several times faster than its FMA units
//! do fp32, at the price of input precision: a TF32 result differs from fp32 by about 2⁻¹¹
//! relative to the terms (see `host/src/verify.rs`), which is what cuBLAS's own TF32 mode
//! gives and what the host's TF32 check allows.
//!
//! The feed is v13's: a 4-stage `cp.async` pipeline, 16-byte copies (4-byte copies where
//! rows are not 16-byte aligned), zeros for elements outside the matrices, grouped order.
//! Fragments are read from shared memory one 32-bit word at a time; the rows are *padded* so
//! that the eight rows a fragment load touches fall in different banks: A rows are
//! 16 + 4 floats long (thread (g, q) reads bank `20g + q mod 32`: all 32 distinct), B rows
//! 128 + 8 (bank `8q + g`: distinct). v15 solves the same problem by swizzling instead.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 150.7 TFLOP/s, 3.2× v13 but 37% of
//! cuBLAS in TF32 mode (403 TFLOP/s); 35% at 8192³. What holds it back: 32 scalar shared loads
//! and 32 `cvt` per 32 `mma`, and `mma.sync` itself (see v15).
//!
//! Launch: 128 threads (4 warps, 2 × 2 warp tiles), grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped),
//! [`SHARED_BYTES`] of dynamic shared memory (4 stages of padded 128×16 A and 16×128 B).

use super::v09_grouped_order::grouped_block_origin;
use crate::device::{
    at, commit_async_copies, copy_async_4, copy_async_16, shared_address, shared_f32,
    store2_or_partial, sync_threads, thread_x, wait_async_copies,
};
use crate::tensor_core::{mma_tf32_m16n8k8, to_tf32};
use seq_macro::seq;

const BLOCK_TILE_M: u32 = 128;
const BLOCK_TILE_N: u32 = 128;
const TILE_K: u32 = 16;
const STAGES: u32 = 4;
const WARP_TILE: u32 = 64;
const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE;
const THREADS: u32 = (BLOCK_TILE_M / WARP_TILE) * WARPS_N * 32;
/// Padded row lengths in floats (see the module docs).
const A_STRIDE: u32 = TILE_K + 4;
const B_STRIDE: u32 = BLOCK_TILE_N + 8;
const A_FLOATS: u32 = BLOCK_TILE_M * A_STRIDE;
const STAGE_FLOATS: u32 = A_FLOATS + TILE_K * B_STRIDE;
/// Dynamic shared memory per block, in bytes.
pub const SHARED_BYTES: u32 = STAGES * STAGE_FLOATS * 4;

crate::launch_bounds!(sgemm_v14_tf32_tensor_cores, 128, 2);

/// v14: TF32 `mma.sync`, 128×128 block tiles 16 deep, 64×64 per warp, 4-stage `cp.async`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v14_tf32_tensor_cores(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let thread = thread_x();
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, quad) = (lane / 4, lane % 4);
    let warp_row = warp / WARPS_N * WARP_TILE;
    let warp_col = warp % WARPS_N * WARP_TILE;

    let stages = shared_f32();
    let stages_address = shared_address(stages);
    let a_rows_aligned = k.is_multiple_of(4);
    let b_rows_aligned = n.is_multiple_of(4);

    // Queue the copies of step `step` into the stage at byte `stage_start`: 4 chunks of
    // 4 floats of A and of B per thread. Elements outside A or B arrive as zeros.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, kk) = (index / (TILE_K / 4), index % (TILE_K / 4) * 4);
            let (gr, gk) = (first_row + row, tile_k + kk);
            let dst = stage_start + (row * A_STRIDE + kk) * 4;
            if a_rows_aligned {
                let valid = gr < m && gk < k;
                let src = if valid { unsafe { a.add(at(gr, gk, k)) } } else { a };
                unsafe { copy_async_16(dst, src, valid) };
            } else {
                seq!(q in 0..4 {
                    let valid = gr < m && gk + q < k;
                    let src = if valid { unsafe { a.add(at(gr, gk + q, k)) } } else { a };
                    unsafe { copy_async_4(dst + 4 * q, src, valid) };
                });
            }
        });
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, col) = (index / (BLOCK_TILE_N / 4), index % (BLOCK_TILE_N / 4) * 4);
            let (gr, gc) = (tile_k + row, first_col + col);
            let dst = stage_start + (A_FLOATS + row * B_STRIDE + col) * 4;
            if b_rows_aligned {
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
        });
    };

    let steps = k.div_ceil(TILE_K);
    // Prologue: STAGES − 1 steps in flight, one (possibly empty) group committed per step.
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * STAGE_FLOATS * 4);
        }
        commit_async_copies();
    }
    let mut acc = [[[0.0f32; 4]; 8]; 4];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    for step in 0..steps {
        wait_async_copies::<{ STAGES - 2 }>();
        sync_threads();
        let ahead = step + STAGES - 1;
        if ahead < steps {
            issue(ahead, stages_address + write_stage * STAGE_FLOATS * 4);
        }
        commit_async_copies();

        let a_tile = unsafe { stages.add((read_stage * STAGE_FLOATS) as usize) };
        let b_tile = unsafe { a_tile.add(A_FLOATS as usize) };
        seq!(kstep in 0..2 {
            let kk = kstep * 8;
            let mut a_frag = [[0u32; 4]; 4];
            seq!(mi in 0..4 {
                let top = unsafe { a_tile.add(((warp_row + mi * 16 + group) * A_STRIDE + kk + quad) as usize) };
                let bottom = unsafe { top.add(8 * A_STRIDE as usize) };
                a_frag[mi] = unsafe {
                    [to_tf32(*top), to_tf32(*bottom), to_tf32(*top.add(4)), to_tf32(*bottom.add(4))]
                };
            });
            let mut b_frag = [[0u32; 2]; 8];
            seq!(ni in 0..8 {
                let upper = unsafe { b_tile.add(((kk + quad) * B_STRIDE + warp_col + ni * 8 + group) as usize) };
                b_frag[ni] = unsafe { [to_tf32(*upper), to_tf32(*upper.add(4 * B_STRIDE as usize))] };
            });
            seq!(mi in 0..4 {
                seq!(ni in 0..8 {
                    mma_tf32_m16n8k8(&mut acc[mi][ni], &a_frag[mi], &b_frag[ni]);
                });
            });
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

    seq!(mi in 0..4 {
        seq!(ni in 0..8 {
            let row = first_row + warp_row + mi * 16 + group;
            let col = first_col + warp_col + ni * 8 + 2 * quad;
            let tile = &acc[mi][ni];
            unsafe {
                store2_or_partial(c, m, n, row, col, tile[0], tile[1]);
                store2_or_partial(c, m, n, row + 8, col, tile[2], tile[3]);
            }
        });
    });
}
