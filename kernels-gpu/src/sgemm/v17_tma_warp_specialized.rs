//! # v17 — TMA copies and a producer warp (warp specialization)
//!
//! **Idea.** Give the copying to hardware and to a warp of its own. One thread of a ninth warp
//! (the *producer*) asks the tensor memory accelerator (TMA) for each stage's tiles: five
//! copy instructions per 48 KiB stage (one 128×64 box of A, four 64×64 slabs of B), every
//! address, bounds check and zero fill done by the TMA unit, the tiles written directly in the
//! 128-byte-swizzled layout `wgmma` reads. The two *consumer* warpgroups only wait and multiply.
//! The two sides talk through transaction barriers in shared memory (`mbarrier`): `full[s]`
//! completes when the bytes of stage `s` have landed, `empty[s]` when all 256 consumer threads
//! have retired the `wgmma` that read it, so the producer may refill it.
//!
//! **Fixes.** v16's 256 threads each computed addresses and issued 12 `cp.async` per stage,
//! then all met at a block-wide barrier: the tensor cores idled while every thread copied and
//! waited. Here no consumer instruction is spent on copying, and no block-wide barrier remains
//! in the main loop: each consumer waits only for the stage it needs, up to 4 stages ahead.
//!
//! **Requirement.** TMA reads rows that start at 16-byte boundaries: `k` and `n` must be
//! multiples of 8 (the host refuses other shapes with a message saying so); ragged `m`, `n`,
//! `k` otherwise work, because the TMA fills everything outside the matrices with zeros.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 665.8 TFLOP/s, 89% of cuBLAS fp16
//! (748 TFLOP/s); 94% at 8192³.
//!
//! Launch: 288 threads (2 consumer warpgroups of 64 rows each, then the producer warp), grid
//! ⌈m/128⌉·⌈n/256⌉ (1-D, grouped), [`SHARED_BYTES`] of dynamic shared memory; one extra
//! argument after `(a, b, c, m, n, k)`: the address of the TMA tensor maps of A (box 64 × 128)
//! and B (box 64 × 64), 128 bytes each, built by the host (`cuTensorMapEncodeTiled`, fp16,
//! 128-byte swizzle).

use super::v09_grouped_order::{GROUP_M, grouped_tile};
use crate::device::{
    block_x, grid_dim_x, shared_address, shared_f32, store_f16x2_or_partial, sync_threads, thread_x,
};
use crate::tensor_core::{
    pack_f16x2, pin_accumulators, swizzled_descriptor, warpgroup_commit, warpgroup_fence,
    warpgroup_wait, wgmma_m64n256k16_f16,
};
use crate::tma::{
    barrier_arrive, barrier_arrive_expect_bytes, barrier_init, barrier_wait, fence_barrier_init,
    tma_load_2d,
};
use seq_macro::seq;

const BLOCK_TILE_M: u32 = 128;
const BLOCK_TILE_N: u32 = 256;
const TILE_K: u32 = 64;
const STAGES: u32 = 4;
const CONSUMER_THREADS: u32 = 256;
/// Rows of the block tile each consumer warpgroup owns.
const WARPGROUP_ROWS: u32 = 64;
/// Every row of both tiles is 128 bytes: 64 halves of k for A, 64 halves of n for B.
const ROW_BYTES: u32 = 128;
const A_BYTES: u32 = BLOCK_TILE_M * ROW_BYTES;
/// One 64-column slab of the B tile: `TILE_K` rows of 128 bytes.
const B_SLAB_BYTES: u32 = TILE_K * ROW_BYTES;
const STAGE_BYTES: u32 = A_BYTES + (BLOCK_TILE_N / 64) * B_SLAB_BYTES;
/// Dynamic shared memory per block, in bytes: 1 KiB of alignment slack, the stages, and the
/// `full` and `empty` barriers (8 bytes each).
pub const SHARED_BYTES: u32 = 1024 + STAGES * STAGE_BYTES + 2 * STAGES * 8;

crate::launch_bounds!(hgemm_v17_tma_warp_specialized, 288, 1);

/// v17: fp16 GEMM, TMA producer warp feeding two `wgmma` consumer warpgroups through
/// `mbarrier`s, 128×256×64 block tiles, 4 stages. `a`, `b`, `c` hold fp16 bit patterns;
/// `maps` the two tensor maps (A, then B).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v17_tma_warp_specialized(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    unsafe { tma_wgmma(a, b, c, m, n, k, maps) };
}

/// The TMA + `wgmma` GEMM over the tiles `block_x, block_x + grid_dim_x, …` (grouped order).
/// v17 launches one block per tile, so the tile loop runs once; v18 launches one block per SM
/// and lets each loop over many tiles.
#[inline(always)]
pub unsafe fn tma_wgmma(
    _a: *const u16,
    _b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    let thread = thread_x();
    let stages_address = (shared_address(shared_f32()) + 1023) & !1023;
    let barriers = stages_address + STAGES * STAGE_BYTES;
    let full = |stage: u32| barriers + 8 * stage;
    let empty = |stage: u32| barriers + 8 * (STAGES + stage);
    if thread == 0 {
        for stage in 0..STAGES {
            // `full`: the producer's one arrival plus the stage's bytes; `empty`: every
            // consumer thread.
            unsafe {
                barrier_init(full(stage), 1);
                barrier_init(empty(stage), CONSUMER_THREADS);
            }
        }
        fence_barrier_init();
    }
    sync_threads();

    let (tiles_m, tiles_n) = (m.div_ceil(BLOCK_TILE_M), n.div_ceil(BLOCK_TILE_N));
    let tiles = tiles_m * tiles_n;
    let tile_origin = |tile: u32| {
        let (tile_row, tile_col) = grouped_tile(tile, tiles_m, tiles_n, GROUP_M);
        (tile_row * BLOCK_TILE_M, tile_col * BLOCK_TILE_N)
    };
    let steps = k.div_ceil(TILE_K);
    // Both sides walk the same sequence of (tile, step) and so of (stage, round): the stage
    // ring and the barrier phases run on across tiles.
    let (mut stage, mut round) = (0, 0);
    if thread >= CONSUMER_THREADS {
        if thread == CONSUMER_THREADS {
            let (map_a, map_b) = (maps, unsafe { maps.add(128) });
            let mut tile = block_x();
            while tile < tiles {
                let (first_row, first_col) = tile_origin(tile);
                for step in 0..steps {
                    if round > 0 {
                        // The consumers' release of this stage from round − 1.
                        unsafe { barrier_wait(empty(stage), (round - 1) & 1) };
                    }
                    let start = stages_address + stage * STAGE_BYTES;
                    unsafe {
                        barrier_arrive_expect_bytes(full(stage), STAGE_BYTES);
                        tma_load_2d(start, map_a, step * TILE_K, first_row, full(stage));
                        seq!(slab in 0..4 {
                            tma_load_2d(
                                start + A_BYTES + slab * B_SLAB_BYTES,
                                map_b,
                                first_col + slab * 64,
                                step * TILE_K,
                                full(stage),
                            );
                        });
                    }
                    stage += 1;
                    if stage == STAGES {
                        stage = 0;
                        round += 1;
                    }
                }
                tile += grid_dim_x();
            }
        }
        return;
    }

    let warpgroup = thread / 128;
    let (warp, lane) = (thread % 128 / 32, thread % 32);
    // Zeroed once: each tile's first `wgmma` overwrites it (`accumulate` false), and writing
    // the accumulators between `wgmma`s with ordinary instructions would make ptxas serialize
    // them.
    let mut acc = [0.0f32; 128];
    let mut tile = block_x();
    while tile < tiles {
        let (first_row, first_col) = tile_origin(tile);
        let mut previous_stage = stage;
        for step in 0..steps {
            unsafe { barrier_wait(full(stage), round & 1) };
            let start = stages_address + stage * STAGE_BYTES;
            let a_tile = start + warpgroup * WARPGROUP_ROWS * ROW_BYTES;
            let b_tile = start + A_BYTES;
            warpgroup_fence();
            seq!(kstep in 0..4 {
                let a_desc = swizzled_descriptor(a_tile + kstep * 32, 16, 8 * ROW_BYTES);
                let b_desc = swizzled_descriptor(b_tile + kstep * 16 * ROW_BYTES, B_SLAB_BYTES, 8 * ROW_BYTES);
                unsafe { wgmma_m64n256k16_f16(&mut acc, a_desc, b_desc, step > 0 || kstep > 0) };
            });
            warpgroup_commit();
            // The previous step's group is done: hand its stage back to the producer.
            warpgroup_wait::<1>();
            if step > 0 {
                unsafe { barrier_arrive(empty(previous_stage)) };
            }
            previous_stage = stage;
            stage += 1;
            if stage == STAGES {
                stage = 0;
                round += 1;
            }
        }
        warpgroup_wait::<0>();
        pin_accumulators::<128>(&mut acc);
        // The last stage is free too: the producer may already fill it for the next tile
        // while this one is stored.
        unsafe { barrier_arrive(empty(previous_stage)) };

        let row = first_row + warpgroup * WARPGROUP_ROWS + 16 * warp + lane / 4;
        seq!(j in 0..32 {
            let col = first_col + 8 * j + 2 * (lane % 4);
            unsafe {
                store_f16x2_or_partial(c, m, n, row, col, pack_f16x2(acc[4 * j], acc[4 * j + 1]));
                store_f16x2_or_partial(c, m, n, row + 8, col, pack_f16x2(acc[4 * j + 2], acc[4 * j + 3]));
            }
        });
        tile += grid_dim_x();
    }
}
