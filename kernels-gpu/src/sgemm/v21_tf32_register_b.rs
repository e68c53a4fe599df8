//! # v21 — TF32 with B from registers: C computed transposed, no copy of B
//!
//! **Idea.** TF32 `wgmma` reads its shared-memory operands only K-major, which a row-major
//! `[k, n]` B is not (v19 copies B transposed first). But the instruction's *first* operand may
//! come from registers, and registers can be loaded in any order. So compute the transpose,
//! Cᵀ = Bᵀ·Aᵀ: B's tile, loaded by the consumer threads from shared memory into `wgmma`'s A
//! fragments, is the register operand; A's tile, stored `[m, k]` and so K-major as the
//! instruction's second operand wants, is read through a descriptor exactly as v19 reads its
//! B copy. Each consumer warpgroup computes 64 columns of C (the instruction's M) × 256 rows of
//! C (its N) with `wgmma.m64n256k8.f32.tf32.tf32`; a block tile is 256 × 128, 32 deep per stage
//! (`gemm_geometry::v21`), the same 48 KiB stage, four stages, producer warp and persistent
//! grid as v18/v19.
//!
//! **What it costs instead of the copy.** Per stage each consumer thread loads 16 fp32 of B
//! (`ld.shared`, four per k8 slice: columns `l / 4` and `l / 4 + 8`, k `l % 4` and `l % 4 +
//! 4`), 16 KiB per stage for the block, on the same shared-memory port the `wgmma`s read A's
//! tile from (32 KiB per warpgroup): 80 KiB per stage, as v19 reads (each of its warpgroups
//! reads the whole 32 KiB B tile). B arrives in four 32-column boxes (128-byte rows, 128-byte
//! swizzle); the loads have 2-way bank conflicts (rows k and k + 1 put columns c and c + 4 in
//! the same banks). Sixteen 8-column boxes (32-byte rows, no swizzle) made them conflict-free,
//! but twice as many rows per stage through the TMA ran at 65% of cuBLAS. C's stores are
//! transposed: each thread holds columns of C, so a warp's store covers 4 rows × 32 bytes
//! instead of v19's 8 rows × 32 bytes of pairs. Groups of 4 tile rows (v9's order with
//! `GROUP_TILE_ROWS`): 1 024 rows of A, as v17–v19's groups of 8 × 128 rows.
//!
//! **One group in flight per warpgroup.** A running `wgmma` group reads its A registers until it
//! completes, and ptxas serializes every `wgmma` of a kernel that writes such registers (the
//! next stage's fragment loads) while a group may still be running. So each warpgroup waits for
//! its own group (`wgmma.wait_group 0`) before it loads the next stage's fragments, and
//! releases the stage at once; the other warpgroup's group keeps the tensor cores busy in the
//! meantime. Loading the next fragments under the running group (two register sets) ran 7
//! points slower at 4096³, serialized.
//!
//! **Registers.** 128 accumulators, 16 fragment registers and the addresses: the producer is a
//! whole warpgroup that drops to 40 registers (`setmaxnreg.dec`) and the two consumer
//! warpgroups rise to 232 (`setmaxnreg.inc`), above the 168 a thread of a 384-thread block gets
//! at launch (kept from the two-set version, which needed it; not re-measured without).
//!
//! **Fixes.** v19's copy of B (8·k·n bytes each call, 9% of its time at 4096³) and its
//! scratch buffer.
//!
//! **Measured** (H100, `docs/results/h100-tf32-register-b`, three runs, A and B `[k, n]` to C):
//! 4096³ 393–404 TFLOP/s, **98.7% of cuBLAS TF32** (98.4–100.1%; v19 82%), 8192³ 380–393
//! TFLOP/s, **92.6%** (90.0–96.2%; v19 83%).
//!
//! Launch: one block of `gemm_geometry::v21::THREADS` (384) threads per SM (persistent, as
//! v18), up to ⌈m/256⌉·⌈n/128⌉; `SHARED_BYTES` of dynamic shared memory. The last argument is
//! the address of two tensor maps (fp32, 128-byte swizzle, zero fill): A `[m, k]` (box 32 ×
//! 256) and B `[k, n]` (box 32 × 32). Both need rows on 16-byte boundaries: k and n multiples
//! of 4.

use crate::device::{block_x, grid_dim_x, load_shared_u32, shared_address, shared_f32, thread_x};
use crate::pipeline::StageRing;
use crate::tensor_core::{
    pin_accumulators, swizzled_descriptor, warpgroup_commit, warpgroup_fence,
    warpgroup_registers_lower, warpgroup_registers_raise, warpgroup_wait,
    wgmma_m64n256k8_tf32_register_a,
};
use crate::tile_order::grouped_tile;
use crate::tma::{
    StageBarriers, barrier_arrive, barrier_arrive_expect_bytes, barrier_wait, tma_load_2d,
};
use gemm_geometry::v21::{
    A_TILE_BYTES, B_BOX, B_BOX_BYTES, B_BOXES_PER_STAGE, BLOCK_TILE_M, BLOCK_TILE_N,
    CONSUMER_REGISTERS, CONSUMER_THREADS, GROUP_TILE_ROWS, MIN_BLOCKS_PER_SM, PRODUCER_REGISTERS,
    STAGE_BYTES, STAGES, SWIZZLE_BYTES, TENSOR_MAP_BYTES, THREADS, TILE_K, WARPGROUP_COLUMNS,
};
use seq_macro::seq;

crate::launch_bounds!(sgemm_v21_tf32_register_b, THREADS, MIN_BLOCKS_PER_SM);

/// A swizzle atom of A's tile: 8 rows of 128 bytes (the descriptor's stride byte offset).
const ATOM_BYTES: u32 = 8 * SWIZZLE_BYTES;
/// The leading byte offset of a swizzled K-major operand is unused; 16 bytes (encoded 1).
const UNUSED_LEADING_BYTES: u32 = 16;
/// Bytes of one row (one k) of a B box: 32 fp32, one swizzle span.
const B_ROW_BYTES: u32 = SWIZZLE_BYTES;

/// v21: TF32 GEMM, C = A·B with A `[m, k]` and B `[k, n]` read as they are (no transposed copy).
/// `a` and `b` are not read: the host passes their tensor maps.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract) for f32,
/// except that `maps` (64-byte aligned) holds the two tensor maps of the module documentation,
/// encoded for these `m`, `n`, `k` (k and n multiples of 4); the module's launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v21_tf32_register_b(
    _a: *const f32,
    _b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    let (tiles_m, tiles_n) = (m.div_ceil(BLOCK_TILE_M), n.div_ceil(BLOCK_TILE_N));
    let tiles = tiles_m * tiles_n;
    let steps = k.div_ceil(TILE_K);
    let thread = thread_x();
    let stages = (shared_address(shared_f32()) + 1023) & !1023;
    // `full`: the producer's one arrival plus the stage's bytes; `empty`: every consumer thread.
    let barriers = StageBarriers::<STAGES>::at(stages + STAGES * STAGE_BYTES);
    // SAFETY: SHARED_BYTES holds the barriers after the stages; every thread calls this.
    unsafe { barriers.init(thread, CONSUMER_THREADS) };
    let (full, empty) = (|stage| barriers.full(stage), |stage| barriers.empty(stage));
    // (first row of C, first column of C) of a tile, in v9's grouped order (groups of 4 tile
    // rows: `GROUP_TILE_ROWS`).
    let origin = |tile: u32| {
        let (tile_row, tile_col) = grouped_tile(tile, tiles_m, tiles_n, GROUP_TILE_ROWS);
        (tile_row * BLOCK_TILE_M, tile_col * BLOCK_TILE_N)
    };

    // Producer: the last warpgroup gives most of its registers to the consumers; one of its
    // threads queues every stage's copies.
    if thread >= CONSUMER_THREADS {
        warpgroup_registers_lower::<PRODUCER_REGISTERS>();
        if thread == CONSUMER_THREADS {
            let (map_a, map_b) = (maps, maps.wrapping_add(TENSOR_MAP_BYTES as usize));
            let mut ring = StageRing::<STAGES>::new();
            let mut tile = block_x();
            while tile < tiles {
                let (first_row, first_col) = origin(tile);
                for step in 0..steps {
                    // SAFETY: the maps are the module's; the stage's barriers and boxes lie in
                    // the dynamic shared memory.
                    unsafe {
                        produce_stage(
                            stages,
                            barriers,
                            &ring,
                            [map_a, map_b],
                            first_row,
                            first_col,
                            step,
                        )
                    };
                    ring.advance();
                }
                tile += grid_dim_x();
            }
        }
        return;
    }

    // Consumers: warpgroup w owns columns 64w .. 64w + 63 of the tile (the instruction's M).
    warpgroup_registers_raise::<CONSUMER_REGISTERS>();
    let warpgroup = thread / 128;
    let (warp, lane) = (thread % 128 / 32, thread % 32);
    // This thread's B fragment inside a stage's B tile: its column `c` = 64w + 16·warp + l / 4
    // lies in box c / 32, 16-byte chunk (c % 32) / 4, word c % 4 of every row; its row k = l % 4
    // (+ 4, + 8·slice) stores chunk j at j ^ (k % 8) (the 128-byte swizzle). Column c + 8 is
    // chunk + 2 (chunk's bit 1 is clear), k + 4 flips bit 2 of k % 8: both are XORs of the
    // address's bits 5 and 6, applied in `multiply_stage`.
    let column = 16 * warp + lane / 4;
    let fragment = A_TILE_BYTES
        + (WARPGROUP_COLUMNS * warpgroup + column) / B_BOX[0] * B_BOX_BYTES
        + B_ROW_BYTES * (lane % 4)
        + 16 * ((column % B_BOX[0] / 4) ^ (lane % 4))
        + 4 * (column % 4);
    let mut ring = StageRing::<STAGES>::new();
    // Zeroed once; each tile's first `wgmma` ignores it (`accumulate` false), as in v18.
    let mut acc = [0.0f32; 128];
    let mut tile = block_x();
    while tile < tiles {
        let (first_row, first_col) = origin(tile);
        for step in 0..steps {
            let stage = ring.index();
            // SAFETY: an initialized barrier whose phase the producer completes.
            unsafe { barrier_wait(full(stage), ring.phase()) };
            let start = stages + stage * STAGE_BYTES;
            // SAFETY: the stage's bytes have landed (waited above); the warpgroup calls this
            // together.
            unsafe { multiply_stage(&mut acc, start, start + fragment, step > 0) };
            // This step's group is done (A read by `wgmma`, B by the loads before it): hand
            // the stage back to the producer. Waiting here, not one group later, is what lets
            // the next stage's fragment loads run with no `wgmma` in flight (else ptxas
            // serializes every `wgmma`); the other warpgroup's group keeps the tensor cores
            // busy meanwhile.
            warpgroup_wait::<0>();
            // SAFETY: an initialized barrier.
            unsafe { barrier_arrive(empty(stage)) };
            ring.advance();
        }
        pin_accumulators::<128, 128>(&mut acc);
        let column = first_col + WARPGROUP_COLUMNS * warpgroup + 16 * warp + lane / 4;
        let row = first_row + 2 * (lane % 4);
        // SAFETY: `c` holds the m×n matrix; the store skips elements outside it.
        unsafe { store_transposed(c, m, n, &acc, row, column) };
        tile += grid_dim_x();
    }
}

/// Queues stage `ring.index()` of k-step `step` for the tile at (`first_row`, `first_col`):
/// waits until the consumers have released the stage (after the first round), then one box of A
/// (256 rows × 32 k) and four of B (32 k × 32 columns each, 4 KiB apart), all swizzled.
///
/// # Safety
/// `stages` is the 1 024-aligned start of the stage buffers in dynamic shared memory, `barriers`
/// their initialized barriers; `map_a`, `map_b` are the module's tensor maps.
#[inline(always)]
unsafe fn produce_stage(
    stages: u32,
    barriers: StageBarriers<STAGES>,
    ring: &StageRing<STAGES>,
    [map_a, map_b]: [*const u8; 2],
    first_row: u32,
    first_col: u32,
    step: u32,
) {
    let stage = ring.index();
    let (full, empty) = (barriers.full(stage), barriers.empty(stage));
    if ring.round() > 0 {
        // The consumers' release of this stage from the previous round.
        // SAFETY: an initialized barrier.
        unsafe { barrier_wait(empty, ring.phase() ^ 1) };
    }
    let start = stages + stage * STAGE_BYTES;
    let k_first = step * TILE_K;
    // SAFETY: the stage is free, 1 024-aligned; its barrier expects exactly these boxes' bytes
    // (zero-filled parts included).
    unsafe {
        barrier_arrive_expect_bytes(full, STAGE_BYTES);
        tma_load_2d(start, map_a, k_first, first_row, full);
        seq!(j in 0..4 {
            tma_load_2d(
                start + A_TILE_BYTES + j * B_BOX_BYTES,
                map_b,
                first_col + j * B_BOX[0],
                k_first,
                full,
            );
        });
    }
    const { assert!(B_BOXES_PER_STAGE == 4) };
}

/// One stage for this thread's warpgroup: loads its B fragments of the four k8 slices from
/// shared memory (`fragment`: the address of its first one), then issues the four `wgmma`
/// (Bᵀ slice from registers × Aᵀ slice through its descriptor) as one committed group.
/// `acc (+)=` the stage's product; the first slice overwrites when `accumulate` is false.
///
/// # Safety
/// The stage's tiles must have landed; all 128 threads of the warpgroup call this together.
#[inline(always)]
unsafe fn multiply_stage(acc: &mut [f32; 128], a_tile: u32, fragment: u32, accumulate: bool) {
    // Slice s: rows k = 8s + l % 4 (registers 0, 1) and + 4 (2, 3), 1 KiB per slice; columns
    // l / 4 (registers 0, 2) and + 8 (1, 3): chunk XOR 2 (bit 5), and k + 4: XOR 4 (bit 6).
    let load = |offset: u32| {
        // SAFETY: inside the stage's B tile (the caller's contract).
        unsafe { load_shared_u32(offset) }
    };
    let (plus_8, plus_4_rows) = (fragment ^ 32, (fragment ^ 64) + 4 * B_ROW_BYTES);
    let plus_both = (fragment ^ 96) + 4 * B_ROW_BYTES;
    let mut slices = [[0u32; 4]; 4];
    seq!(s in 0..4 {
        let k_row = 8 * s * B_ROW_BYTES;
        slices[s] = [
            load(fragment + k_row),
            load(plus_8 + k_row),
            load(plus_4_rows + k_row),
            load(plus_both + k_row),
        ];
    });
    warpgroup_fence();
    seq!(s in 0..4 {
        // A, K-major: slice s is 32 bytes into every 128-byte row; atoms 1 KiB apart.
        let a_desc = swizzled_descriptor(a_tile + 32 * s, UNUSED_LEADING_BYTES, ATOM_BYTES);
        // SAFETY: the caller's contract; the fragments were written before the fence.
        unsafe { wgmma_m64n256k8_tf32_register_a(acc, &slices[s], a_desc, accumulate || s > 0) };
    });
    warpgroup_commit();
}

/// Stores this thread's accumulators of Cᵀ into the row-major m×n matrix `c`: `acc[i]` is C's
/// element (`row + 8·(i / 4) + i % 2`, `column + 8·((i / 2) % 2)`), skipping those outside.
/// A warp's store covers 8 consecutive columns (32 bytes) of 4 rows.
///
/// # Safety
/// `c` must point to a writable m×n fp32 matrix.
#[inline(always)]
unsafe fn store_transposed(c: *mut f32, m: u32, n: u32, acc: &[f32; 128], row: u32, column: u32) {
    let store = |r: u32, col: u32, value: f32| {
        if r < m && col < n {
            // SAFETY: (r, col) lies inside the m×n matrix.
            unsafe { c.add(r as usize * n as usize + col as usize).write(value) };
        }
    };
    seq!(j in 0..32 {
        store(row + 8 * j, column, acc[4 * j]);
        store(row + 8 * j + 1, column, acc[4 * j + 1]);
        store(row + 8 * j, column + 8, acc[4 * j + 2]);
        store(row + 8 * j + 1, column + 8, acc[4 * j + 3]);
    });
}
