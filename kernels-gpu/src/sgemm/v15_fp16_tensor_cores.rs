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
//! rows to dodge bank conflicts. Here 8 `ldmatrix` feed 32 `mma` per warp and k-step, and the
//! tiles are *swizzled* rather than padded: both tiles have rows of a multiple of 128 bytes
//! (A: 128 × 64 halves, B: 64 × 256 halves), and 16-byte chunk `c` of row `r` is stored at
//! chunk `c ^ (r % 8)` within its 128-byte line. The eight rows one 8×8 matrix spans (same
//! logical chunk) then land in eight different groups of four banks, and no byte of shared
//! memory is wasted on padding.
//!
//! **Keeping the tensor pipe fed.** A first version (128×128 tiles, 32×64 per warp, fragments
//! loaded right before use) reached 43% of cuBLAS: Nsight Compute counted almost four other
//! instructions per `mma.sync` and long waits on `ldmatrix` results, although `mma.sync` alone
//! runs at 653 TFLOP/s on this GPU (`docs/results/h100-mma-ceiling`). Three changes took it to
//! 62% at 4096³ and 63% at 8192³:
//! * **register double buffering**: while the warp multiplies k-step `j`, the `ldmatrix` of
//!   k-step `j + 1` are already in flight into the other half of the fragment registers; the
//!   block's one barrier per stage sits before the last k-step, so the next stage's first
//!   fragments load during the last `mma`s of the current one;
//! * **64×64 warp tiles** in a 128×256 block (8 `ldmatrix` per 32 `mma` instead of 6 per 16);
//! * **copy addresses computed once**: each thread's `cp.async` sources are a base pointer plus
//!   a constant stride per chunk and stage; shapes with k or n not a multiple of 8 take a
//!   separate, out-of-line path (16-bit loads), so its registers do not crowd the fast path;
//! * **copies queued early**: a stage's refill is queued after the first k-step of the step
//!   that follows its last use, not after the next barrier;
//! * **a coalesced epilogue**: results go out through shared memory in 16-byte stores.
//!
//! The pipeline is v13's (4 `cp.async` stages, zeros outside the matrices); launch order is
//! grouped.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 471.1 TFLOP/s, **63.0% of cuBLAS
//! fp16** (748 TFLOP/s; 62.4% and 61.5% in earlier runs of the same code); 61% at 8192³.
//!
//! Launch: 256 threads (8 warps, 2 × 4), grid ⌈m/128⌉·⌈n/256⌉ (1-D, grouped),
//! [`SHARED_BYTES`] (192 KiB) of dynamic shared memory.

use super::v09_grouped_order::grouped_block_origin;
use crate::device::{
    at, commit_async_copies, copy_async_16, load8_f16_or_zero, shared_address, shared_f32,
    store_f16x2_or_partial, store_shared_16, sync_threads, thread_x, wait_async_copies,
};
use crate::tensor_core::{load_matrix_x4, load_matrix_x4_transposed, mma_f16_m16n8k16, pack_f16x2};
use core::simd::u32x4;
use seq_macro::seq;

const BLOCK_TILE_M: u32 = 128;
const BLOCK_TILE_N: u32 = 256;
const TILE_K: u32 = 64;
const STAGES: u32 = 4;
const WARP_TILE_M: u32 = 64;
const WARP_TILE_N: u32 = 64;
const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE_N;
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

crate::launch_bounds!(hgemm_v15_fp16_tensor_cores, 256, 1);

/// v15: fp16 `mma.sync` fed by `ldmatrix` from swizzled tiles, 128×256×64 block tiles, 64×64
/// per warp, fragments double-buffered in registers, 4-stage `cp.async`. `a`, `b`, `c` hold fp16
/// bit patterns.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v15_fp16_tensor_cores(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
) {
    if k.is_multiple_of(8) && n.is_multiple_of(8) {
        unsafe { body::<true>(a, b, c, m, n, k) }
    } else {
        unsafe { ragged(a, b, c, m, n, k) }
    }
}

/// The ragged path, kept out of line so that its registers do not crowd the fast path's.
#[inline(never)]
unsafe fn ragged(a: *const u16, b: *const u16, c: *mut u16, m: u32, n: u32, k: u32) {
    unsafe { body::<false>(a, b, c, m, n, k) }
}

/// The kernel for shapes whose rows are 16-byte aligned (`ALIGNED`: 16-byte `cp.async`) or not
/// (16-bit loads and 16-byte shared stores).
#[inline(always)]
unsafe fn body<const ALIGNED: bool>(
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

    // Copies: A chunk i of this thread is row thread/8 + 32i, chunk thread%8; B chunk i is row
    // thread/32 + 8i, chunk thread%32. Their shared offsets differ by whole swizzle periods.
    let (a_row, a_chunk) = (thread / 8, thread % 8);
    let (b_row, b_chunk) = (thread / 32, thread % 32);
    let a_dst = swizzled(a_row, a_chunk, A_ROW_BYTES);
    let b_dst = A_BYTES + swizzled(b_row, b_chunk, B_ROW_BYTES);
    let a_src = a.wrapping_add(at(first_row + a_row, a_chunk * 8, k));
    let b_src = b.wrapping_add(at(b_row, first_col + b_chunk * 8, n));
    let b_col_valid = first_col + b_chunk * 8 < n;
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        {
            // A: 4 chunks of 8 halves per thread.
            seq!(i in 0..4 {
                let dst = stage_start + a_dst + i * 32 * A_ROW_BYTES;
                let (gr, gk) = (first_row + a_row + 32 * i, tile_k + a_chunk * 8);
                if ALIGNED {
                    let valid = gr < m && gk < k;
                    let src = if valid { a_src.wrapping_add(tile_k as usize + (32 * i) as usize * k as usize) } else { a };
                    unsafe { copy_async_16(dst, src, valid) };
                } else {
                    unsafe { store_shared_16(dst, load8_f16_or_zero(a, m, k, gr, gk)) };
                }
            });
        }
        {
            // B: 8 chunks.
            seq!(i in 0..8 {
                let dst = stage_start + b_dst + i * 8 * B_ROW_BYTES;
                let (gr, gc) = (tile_k + b_row + 8 * i, first_col + b_chunk * 8);
                if ALIGNED {
                    let valid = gr < k && b_col_valid;
                    let src = if valid { b_src.wrapping_add((tile_k + 8 * i) as usize * n as usize) } else { b };
                    unsafe { copy_async_16(dst, src, valid) };
                } else {
                    unsafe { store_shared_16(dst, load8_f16_or_zero(b, k, n, gr, gc)) };
                }
            });
        }
    };

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
    // Fragments of k-step `kstep` (0..4) of the stage at `stage` into `a_frag`, `b_frag`.
    let load = #[inline(always)]
    |stage: u32,
                kstep: usize,
                a_frag: &mut [[u32; 4]; 4],
                b_frag: &mut [[u32; 2]; 8]| {
        seq!(mi in 0..4 {
            a_frag[mi] = unsafe { load_matrix_x4(stage + a_warp + mi * 16 * A_ROW_BYTES + a_lane[kstep]) };
        });
        seq!(pair in 0..4 {
            let r = unsafe {
                load_matrix_x4_transposed(stage + b_warp + kstep as u32 * 16 * B_ROW_BYTES + b_lane[pair])
            };
            b_frag[2 * pair] = [r[0], r[1]];
            b_frag[2 * pair + 1] = [r[2], r[3]];
        });
    };

    let steps = k.div_ceil(TILE_K);
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * STAGE_BYTES);
        }
        commit_async_copies();
    }
    wait_async_copies::<{ STAGES - 2 }>();
    sync_threads();

    let mut acc = [[[0.0f32; 4]; 8]; 4];
    let mut a_frag = [[[0u32; 4]; 4]; 2];
    let mut b_frag = [[[0u32; 2]; 8]; 2];
    load(stages_address, 0, &mut a_frag[0], &mut b_frag[0]);
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    for step in 0..steps {
        let stage = stages_address + read_stage * STAGE_BYTES;
        seq!(kstep in 0..4 {
            if kstep == 1 {
                // The stage step − 1 used was last read before the previous barrier: refill
                // it with step + 3 now, two k-steps before this step's barrier, so that the
                // copies overlap the math (measured: 2–4% faster than issuing them after the
                // barrier, and faster than at k-step 0 or 2).
                let ahead = step + STAGES - 1;
                if ahead < steps {
                    issue(ahead, stages_address + write_stage * STAGE_BYTES);
                }
                commit_async_copies();
            }
            if kstep == 3 {
                // Step + 1's tiles have landed (groups up to step + 3 are committed, so at most
                // the newest two may still be in flight): start on step + 1's first fragments.
                wait_async_copies::<{ STAGES - 2 }>();
                sync_threads();
                let next_stage = if read_stage + 1 == STAGES { 0 } else { read_stage + 1 };
                if step + 1 < steps {
                    load(stages_address + next_stage * STAGE_BYTES, 0, &mut a_frag[0], &mut b_frag[0]);
                }
            } else {
                load(stage, kstep + 1, &mut a_frag[(kstep + 1) % 2], &mut b_frag[(kstep + 1) % 2]);
            }
            seq!(mi in 0..4 {
                seq!(ni in 0..8 {
                    mma_f16_m16n8k16(&mut acc[mi][ni], &a_frag[kstep % 2][mi], &b_frag[kstep % 2][ni]);
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

    if !ALIGNED {
        seq!(mi in 0..4 {
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
        return;
    }
    // Aligned rows: stage the block's 128×256 fp16 results in shared memory (the pipeline's
    // stages are free once every copy has landed and every warp is past its last fragment
    // load), then write C in 16-byte pieces, each warp covering two whole 512-byte rows at a
    // time, instead of 4-byte pairs scattered over eight rows. Rows are padded by 16 bytes so
    // that the eight rows of one pair store fall in different banks.
    const STAGED_ROW_BYTES: u32 = BLOCK_TILE_N * 2 + 16;
    wait_async_copies::<0>();
    sync_threads();
    let staging = shared_f32() as *mut u8;
    seq!(mi in 0..4 {
        seq!(ni in 0..8 {
            let row = warp_row + mi * 16 + group;
            let col = warp_col + ni * 8 + 2 * quad;
            let tile = &acc[mi][ni];
            unsafe {
                let at_pair = staging.add((row * STAGED_ROW_BYTES + col * 2) as usize) as *mut u32;
                at_pair.write(pack_f16x2(tile[0], tile[1]));
                at_pair.add(2 * STAGED_ROW_BYTES as usize).write(pack_f16x2(tile[2], tile[3]));
            }
        });
    });
    sync_threads();
    seq!(i in 0..16 {
        let index = thread + i * 256;
        let (row, chunk) = (index / 32, index % 32);
        let (gr, gc) = (first_row + row, first_col + chunk * 8);
        if gr < m && gc < n {
            unsafe {
                let value = (staging.add((row * STAGED_ROW_BYTES + chunk * 16) as usize) as *const u32x4).read();
                (c.add(at(gr, gc, n)) as *mut u32x4).write(value);
            }
        }
    });
}
