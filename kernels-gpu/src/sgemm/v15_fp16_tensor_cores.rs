//! # v15 — FP16 tensor cores: `ldmatrix`, swizzled shared memory, `mma.sync` m16n8k16
//!
//! **Idea.** Half-precision inputs (fp16 A and B, fp32 accumulation, fp16 C): the tensor core
//! takes a 16×8×16 tile per `mma.sync`, twice v14's work per instruction, and every byte moved
//! carries twice the elements. Fragments come out of shared memory with `ldmatrix`, which
//! reads four 8×8 matrices in one warp-wide instruction and hands each thread exactly the
//! registers `mma.sync` expects; `ldmatrix.trans` does the same for the row-major B tile,
//! transposing on the way.
//!
//! **Fixes.** v14 read its fragments one 32-bit word per thread per instruction and padded its
//! rows to dodge bank conflicts. Here 6 `ldmatrix` feed 16 `mma` per warp and k-step, and the
//! tiles are *swizzled* rather than padded: both tiles have rows of a multiple of 128 bytes
//! (A: 128 × 64 halves, B: 64 × 128 halves), and 16-byte chunk `c` of row `r` is stored at
//! chunk `c ^ (r % 8)` within its 128-byte line. The eight rows one 8×8 matrix spans (same
//! logical chunk) then land in eight different groups of four banks, and no byte of shared
//! memory is wasted on padding.
//!
//! The pipeline is v13's (`cp.async`, zeros outside the matrices), 3 stages of 64-deep tiles,
//! with 16-byte copies where rows are 16-byte aligned (k, n multiples of 8) and 16-bit loads
//! otherwise; launch order is grouped. Each of the 8 warps owns a 32×64 tile of the 128×128
//! block tile, which keeps a thread at 128 registers, so two blocks (16 warps) share an SM and
//! one block's barrier overlaps the other's math.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 320.1 TFLOP/s, **43% of cuBLAS fp16**
//! (750 TFLOP/s), short of the 60% the issue asks; 44% at 8192³.
//!
//! **What limits it.** Measured alternatives all landed at 40–43%: 128×256 block tiles with
//! 64×64 warp tiles (226 registers, 8 warps per SM), 32-deep tiles, 4 stages, 16 warps of one
//! block. Nsight Compute on the 128×256 version: the tensor pipe is active 50% of the time,
//! and the largest stall is `wait` (fixed-latency dependencies between one warp's
//! `mma.sync`); more warps per SM did not raise it. cuBLAS runs `wgmma` kernels on this GPU,
//! as v16 onward do; no `mma.sync` variant tried here kept the tensor pipe busier.
//!
//! Launch: 256 threads, grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped), [`SHARED_BYTES`] of dynamic
//! shared memory.

use super::v09_grouped_order::grouped_block_origin;
use crate::device::{
    at, commit_async_copies, copy_async_16, load8_f16_or_zero, shared_address, shared_f32,
    store_f16x2_or_partial, store_shared_16, sync_threads, thread_x, wait_async_copies,
};
use crate::tensor_core::{load_matrix_x4, load_matrix_x4_transposed, mma_f16_m16n8k16, pack_f16x2};
use seq_macro::seq;

const BLOCK_TILE_M: u32 = 128;
const BLOCK_TILE_N: u32 = 128;
const TILE_K: u32 = 64;
const STAGES: u32 = 3;
const WARP_TILE_M: u32 = 32;
const WARP_TILE_N: u32 = 64;
const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE_N;
const THREADS: u32 = (BLOCK_TILE_M / WARP_TILE_M) * WARPS_N * 32;
/// Bytes per row of the A tile (`TILE_K` halves) and of the B tile (`BLOCK_TILE_N` halves).
const A_ROW_BYTES: u32 = TILE_K * 2;
const B_ROW_BYTES: u32 = BLOCK_TILE_N * 2;
const A_BYTES: u32 = BLOCK_TILE_M * A_ROW_BYTES;
const STAGE_BYTES: u32 = A_BYTES + TILE_K * B_ROW_BYTES;
/// Dynamic shared memory per block, in bytes.
pub const SHARED_BYTES: u32 = STAGES * STAGE_BYTES;

/// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile with rows of
/// `row_bytes` (a multiple of 128): the chunk's position within its 128-byte line is XORed
/// with the row's index mod 8.
#[inline(always)]
fn swizzled(row: u32, chunk: u32, row_bytes: u32) -> u32 {
    row * row_bytes + (chunk ^ (row % 8)) * 16
}

crate::launch_bounds!(hgemm_v15_fp16_tensor_cores, 256, 2);

/// v15: fp16 `mma.sync` fed by `ldmatrix` from swizzled tiles, 128×128×64 block tiles,
/// 32×64 per warp, 3-stage `cp.async`. `a`, `b`, `c` hold fp16 bit patterns.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v15_fp16_tensor_cores(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let thread = thread_x();
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, quad) = (lane / 4, lane % 4);
    let warp_row = warp / WARPS_N * WARP_TILE_M;
    let warp_col = warp % WARPS_N * WARP_TILE_N;

    let stages_address = shared_address(shared_f32());
    let a_rows_aligned = k.is_multiple_of(8);
    let b_rows_aligned = n.is_multiple_of(8);

    // Each thread copies 4 chunks of each tile per step.
    const {
        assert!(
            BLOCK_TILE_M * TILE_K / 8 == 4 * THREADS && TILE_K * BLOCK_TILE_N / 8 == 4 * THREADS
        )
    };
    // Queue the copies of step `step` into the stage at byte `stage_start`: 4 chunks of A and
    // 4 of B (8 halves each) per thread. Elements outside A or B arrive as zeros.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, chunk) = (index / (TILE_K / 8), index % (TILE_K / 8));
            let (gr, gk) = (first_row + row, tile_k + chunk * 8);
            let dst = stage_start + swizzled(row, chunk, A_ROW_BYTES);
            if a_rows_aligned {
                let valid = gr < m && gk < k;
                let src = if valid { unsafe { a.add(at(gr, gk, k)) } } else { a };
                unsafe { copy_async_16(dst, src, valid) };
            } else {
                unsafe { store_shared_16(dst, load8_f16_or_zero(a, m, k, gr, gk)) };
            }
        });
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, chunk) = (index / (BLOCK_TILE_N / 8), index % (BLOCK_TILE_N / 8));
            let (gr, gc) = (tile_k + row, first_col + chunk * 8);
            let dst = stage_start + A_BYTES + swizzled(row, chunk, B_ROW_BYTES);
            if b_rows_aligned {
                let valid = gr < k && gc < n;
                let src = if valid { unsafe { b.add(at(gr, gc, n)) } } else { b };
                unsafe { copy_async_16(dst, src, valid) };
            } else {
                unsafe { store_shared_16(dst, load8_f16_or_zero(b, k, n, gr, gc)) };
            }
        });
    };

    // The addresses each lane hands to `ldmatrix`, relative to the stage: for A, row
    // `lane % 16` of a 16-row tile at chunk `2·kstep + lane / 16`; for B (transposed), row
    // `16·kstep + lane % 16` at chunk `2·pair + lane / 16` of the warp's columns. Warp and tile
    // origins are multiples of 8 rows and 8 chunks, so they pass through the swizzle unchanged
    // and can be added afterwards.
    let (lane_row, lane_chunk) = (lane % 16, lane / 16);
    let a_lane = [
        swizzled(lane_row, lane_chunk, A_ROW_BYTES),
        swizzled(lane_row, 2 + lane_chunk, A_ROW_BYTES),
        swizzled(lane_row, 4 + lane_chunk, A_ROW_BYTES),
        swizzled(lane_row, 6 + lane_chunk, A_ROW_BYTES),
    ];
    let b_lane = [
        swizzled(lane_row, lane_chunk, B_ROW_BYTES),
        swizzled(lane_row, 2 + lane_chunk, B_ROW_BYTES),
        swizzled(lane_row, 4 + lane_chunk, B_ROW_BYTES),
        swizzled(lane_row, 6 + lane_chunk, B_ROW_BYTES),
    ];
    let a_warp = warp_row * A_ROW_BYTES;
    let b_warp = A_BYTES + warp_col * 2;

    let steps = k.div_ceil(TILE_K);
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * STAGE_BYTES);
        }
        commit_async_copies();
    }
    let mut acc = [[[0.0f32; 4]; 8]; 2];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    for step in 0..steps {
        // All but the newest STAGES − 2 groups done.
        wait_async_copies::<{ STAGES - 2 }>();
        sync_threads();
        let ahead = step + STAGES - 1;
        if ahead < steps {
            issue(ahead, stages_address + write_stage * STAGE_BYTES);
        }
        commit_async_copies();

        let stage = stages_address + read_stage * STAGE_BYTES;
        seq!(kstep in 0..4 {
            let mut a_frag = [[0u32; 4]; 2];
            seq!(mi in 0..2 {
                a_frag[mi] = unsafe {
                    load_matrix_x4(stage + a_warp + mi * 16 * A_ROW_BYTES + a_lane[kstep])
                };
            });
            let mut b_frag = [[0u32; 2]; 8];
            seq!(pair in 0..4 {
                let r = unsafe {
                    load_matrix_x4_transposed(stage + b_warp + kstep * 16 * B_ROW_BYTES + b_lane[pair])
                };
                b_frag[2 * pair] = [r[0], r[1]];
                b_frag[2 * pair + 1] = [r[2], r[3]];
            });
            seq!(mi in 0..2 {
                seq!(ni in 0..8 {
                    mma_f16_m16n8k16(&mut acc[mi][ni], &a_frag[mi], &b_frag[ni]);
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

    seq!(mi in 0..2 {
        seq!(ni in 0..8 {
            let row = first_row + warp_row + mi * 16 + group;
            let col = first_col + warp_col + ni * 8 + 2 * quad;
            let tile = &acc[mi][ni];
            unsafe {
                store_f16x2_or_partial(c, m, n, row, col, pack_f16x2(tile[0], tile[1]));
                store_f16x2_or_partial(c, m, n, row + 8, col, pack_f16x2(tile[2], tile[3]));
            }
        });
    });
}
