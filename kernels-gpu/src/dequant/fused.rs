//! # Fused dequant GEMM (Hopper): the weights decoded into shared memory, full-width `wgmma`
//!
//! **Idea.** Past a few dozen rows of A the product is no longer a matter of streaming the
//! weights; it is a GEMM whose B operand happens to arrive packed. So run v18's GEMM, and let
//! the warpgroup that would have issued B's TMA copies *make* B instead: it copies the packed
//! weights of the next chunk (`cp.async`, 16-byte words, the decode kernel's pre-packed layout),
//! decodes them in registers with the decode kernel's conversion ([`decode_pair`], scaled:
//! `fp16(value · scale)`), and writes them into the stage as the K-major, 128-byte-swizzled
//! `[n, k]` tile that `wgmma` reads. Two consumer warpgroups multiply 128 × 256 output tiles
//! with `wgmma.m64n256k16` from both shared-memory operands, exactly v18's main loop
//! (`tma_gemm::multiply_stage`), so no fp16 copy of W is ever written to global memory and the
//! decoding runs beside the tensor cores instead of between them.
//!
//! **What it fixes.** Prefill used to expand all of W to fp16 (a full write and read of
//! `2·k·n` bytes) before v18; the batched-decode kernel decodes in the consumer warps and
//! waits on each decode (`wgmma` with N = 64 at about a third of the tensor cores' rate).
//!
//! **The block** (`gemm_geometry::dequant::FUSED_*`): 384 threads, one block per SM,
//! persistent over the output tiles (grouped order, as v18).
//! * Threads 0–255: two consumer warpgroups, 64 rows each.
//! * Threads 256–383: the producer warpgroup. Each of its warps decodes two of the block's
//!   eight 32-column slices (`warp` and `warp + 4`): the lane's words of those slices are the
//!   very words a decode-kernel lane of those warps reads, so each producer lane copies and
//!   reads only its own words and needs no barrier for them; the scales of a chunk are copied
//!   by a few lanes of the warp and read by all after a warp barrier.
//! * A stage is 64 k (half a chunk): A's `128 × 64` fp16 (copied with `cp.async` into the
//!   128-byte swizzle, rows past m zero-filled) then W's decoded `256 × 64`. Its `full`
//!   barrier counts 128 arrivals that fire when each producer thread's copies of A have landed
//!   (`cp.async.mbarrier.arrive.noinc`) and 128 after each has written its decoded weights; its
//!   `empty` barrier the 256 consumer threads.
//!
//! Launch: `FUSED_THREADS` threads, `fused_shared_bytes(bits)` of dynamic shared memory, a
//! 1-D grid of at most one block per output tile (the host launches one per SM). The
//! arguments are the decode entries' (the workspace and counters are not used: each tile is
//! summed whole by one block). A is `m × k_pad`, 16-byte aligned, zeros past k.

use super::decode::Shape;
use super::packed::{
    BLOCK_COLUMNS, N_TILES, PairConstants, WARPS, column_constants, decode_pair, loads,
};
use crate::device::{
    block_x, commit_async_copies, copy_async_16, dynamic_shared_bytes, grid_dim_x, load_shared_16,
    load_shared_u16, shared_address, shared_f32, store_shared_u32, sync_warp, thread_x, trap,
    wait_async_copies,
};
use crate::element::{Bf16, F16};
use crate::pipeline::StageRing;
use crate::tensor_core::{
    fence_shared_for_async_proxy, pin_accumulators, warpgroup_commit, warpgroup_fence,
    warpgroup_wait,
};
use crate::tile_order::{GROUP_M, grouped_tile};
use crate::tma::{
    barrier_arrive, barrier_arrive_on_copies, barrier_init, barrier_wait, fence_barrier_init,
};
use crate::tma_gemm::{WgmmaElement, multiply_stage};
use gemm_geometry::dequant::{
    DECODE_GROUP_BYTES, FUSED_A_STAGE_BYTES, FUSED_BARRIER_BYTES, FUSED_CONSUMER_WARPGROUPS,
    FUSED_PACKED_SLOTS, FUSED_STAGE_BYTES, FUSED_STAGE_K, FUSED_TILE_M, chunk_k,
    fused_packed_bytes, fused_shared_bytes, fused_stages,
};
use seq_macro::seq;

/// Threads of the consumer warpgroups (they come first in the block).
const CONSUMER_THREADS: u32 = FUSED_CONSUMER_WARPGROUPS * 128;
/// Accumulators per consumer thread: a 64 × 256 slice per warpgroup.
const ACC: usize = 128;
/// Bytes per swizzled row of a stage (64 fp16 of k).
const ROW_BYTES: u32 = FUSED_STAGE_K * 2;

/// The fused dequant-GEMM for one (element, bits, decoder, stages): dispatches on the group
/// size to a body whose decode loop knows how many k16 tiles share a scale (2, 4, or 8 for a
/// group of a whole chunk or more).
///
/// # Safety
/// As the decode entries' (`super::decode`): A `m × k_pad` of `E` (16-byte aligned, zeros past
/// k), the weights, scales and offsets pre-packed for this `BITS`/`KIND` (offsets null or
/// valid), C `m × n` of `E` (4-byte aligned); the launch as the module documentation says,
/// every thread of the block calling this.
#[inline(always)]
pub unsafe fn fused_gemm<
    E: WgmmaElement,
    const BITS: u32,
    const KIND: u32,
    const BF16: bool,
    const STAGES: u32,
>(
    a: *const u16,
    weights: *const u8,
    scales: *const u16,
    offsets: *const u16,
    c: *mut u16,
    shape: Shape,
    constants: PairConstants,
) {
    match shape.group {
        32 => unsafe {
            body::<E, BITS, KIND, BF16, STAGES, 2>(a, weights, scales, offsets, c, shape, constants)
        },
        64 => unsafe {
            body::<E, BITS, KIND, BF16, STAGES, 4>(a, weights, scales, offsets, c, shape, constants)
        },
        g if g >= chunk_k(BITS) => unsafe {
            body::<E, BITS, KIND, BF16, STAGES, 8>(a, weights, scales, offsets, c, shape, constants)
        },
        _ => trap(),
    }
}

/// # Safety
/// That of [`fused_gemm`], with `GROUP_TILES` matching `shape`'s group as it chooses it.
#[inline(always)]
unsafe fn body<
    E: WgmmaElement,
    const BITS: u32,
    const KIND: u32,
    const BF16: bool,
    const STAGES: u32,
    const GROUP_TILES: u32,
>(
    a: *const u16,
    weights: *const u8,
    scales: *const u16,
    offsets: *const u16,
    c: *mut u16,
    shape: Shape,
    constants: PairConstants,
) {
    const { assert!(E::IS_F16 != BF16) };
    const { assert!(STAGES == fused_stages(BITS)) };
    const { assert!(chunk_k(BITS) == 2 * FUSED_STAGE_K) };
    if dynamic_shared_bytes() < fused_shared_bytes(BITS) {
        trap();
    }
    let Shape {
        m,
        n,
        column_blocks,
        k_chunks,
        group,
    } = shape;
    let k_pad = k_chunks * chunk_k(BITS);
    let n_pad = column_blocks * BLOCK_COLUMNS;
    let tiles_m = m.div_ceil(FUSED_TILE_M);
    let tiles = tiles_m * column_blocks;
    let (block, blocks) = (block_x(), grid_dim_x());
    let my_tiles = if block < tiles {
        (tiles - block).div_ceil(blocks)
    } else {
        0
    };
    // Output tile of this block's `turn`-th tile: (first row, column block).
    let tile_at = |turn: u32| {
        let (tile_row, column_block) =
            grouped_tile(block + turn * blocks, tiles_m, column_blocks, GROUP_M);
        (tile_row * FUSED_TILE_M, column_block)
    };

    let stages_address = (shared_address(shared_f32()) + 1023) & !1023;
    let packed_bytes = fused_packed_bytes(BITS);
    let packed_address = stages_address + STAGES * FUSED_STAGE_BYTES;
    let barriers = packed_address + FUSED_PACKED_SLOTS * packed_bytes;
    let full = |stage: u32| barriers + FUSED_BARRIER_BYTES * stage;
    let empty = |stage: u32| barriers + FUSED_BARRIER_BYTES * (STAGES + stage);
    let thread = thread_x();
    if thread == 0 {
        for stage in 0..STAGES {
            // SAFETY: the barriers lie in this block's dynamic shared memory (checked above),
            // past the stages and slots; nothing uses them before the barrier below.
            unsafe {
                barrier_init(full(stage), 256);
                barrier_init(empty(stage), CONSUMER_THREADS);
            }
        }
        fence_barrier_init();
    }
    crate::device::sync_threads();

    if thread >= CONSUMER_THREADS {
        // ---- The producer warpgroup: A's copies and the decoded weights ----
        let p = thread - CONSUMER_THREADS;
        let (warp, lane) = (p / 32, p % 32);
        let words_per_slice = loads(BITS);
        let chunk_bytes = (WARPS * words_per_slice * 512) as usize;
        // This lane's word `j` of slice `slice`, as a byte offset within a chunk.
        let word_offset = |slice: u32, j: u32| ((slice * words_per_slice + j) * 32 + lane) * 16;
        let slices = [warp, warp + 4];
        let groups_in_chunk = if GROUP_TILES == 8 {
            1
        } else {
            chunk_k(BITS) / group
        };
        // Scale copies: lane `l` takes 16 bytes (8 columns) of group `l / 8` of the chunk,
        // columns `32·slices[(l / 4) % 2] + 8·(l % 4)`.
        let (scale_group, scale_slice, scale_piece) = (lane / 8, (lane / 4) % 2, lane % 4);
        let scale_column = 32 * (warp + 4 * scale_slice) + 8 * scale_piece;
        let has_offsets = !offsets.is_null();

        // Where the copies and the decoding are in this block's walk: the tile (`turn`), its
        // first row and column block, and the chunk, advanced one chunk at a time (the
        // grouped order's divisions only once per tile).
        #[derive(Clone, Copy)]
        struct Cursor {
            turn: u32,
            first_row: u32,
            column_block: u32,
            chunk: u32,
        }
        let start = |turn: u32| {
            // (Past the block's last tile there is no tile to place: the grouped order would
            // divide by zero there.)
            let (first_row, column_block) = if turn < my_tiles {
                tile_at(turn)
            } else {
                (0, 0)
            };
            Cursor {
                turn,
                first_row,
                column_block,
                chunk: 0,
            }
        };
        let advance = #[inline(always)]
        |cursor: &mut Cursor| {
            cursor.chunk += 1;
            if cursor.chunk == k_chunks {
                *cursor = start(cursor.turn + 1);
            }
        };

        // Copies the packed weights, scales and offsets of the chunk at `at` into slot `slot`,
        // and commits them as one group (an empty one past the block's last chunk).
        let issue_packed = #[inline(always)]
        |at: Cursor, slot: u32| {
            if at.turn < my_tiles {
                let slot = packed_address + slot * packed_bytes;
                let source = weights
                    .wrapping_add((at.column_block * k_chunks + at.chunk) as usize * chunk_bytes);
                seq!(s in 0..2 {
                    seq!(j in 0..8 {
                        if j < words_per_slice {
                            let at = word_offset(slices[s], j);
                            // SAFETY: inside the pre-packed weights of this column block and
                            // chunk; the slot is free (its last chunk was decoded by this lane
                            // and, for the scales, the warp has synchronized since).
                            unsafe { copy_async_16(slot + at, source.wrapping_add(at as usize), true) };
                        }
                    });
                });
                if scale_group < groups_in_chunk {
                    let first_group = at.chunk * chunk_k(BITS) / group;
                    let at = (first_group + scale_group) as usize * n_pad as usize
                        + (at.column_block * BLOCK_COLUMNS + scale_column) as usize;
                    let dst = slot
                        + WARPS * words_per_slice * 512
                        + (scale_group * BLOCK_COLUMNS + scale_column) * 2;
                    // SAFETY: inside the `groups × n_pad` scales (and offsets).
                    unsafe { copy_async_16(dst, scales.wrapping_add(at), true) };
                    if has_offsets {
                        unsafe {
                            copy_async_16(dst + DECODE_GROUP_BYTES, offsets.wrapping_add(at), true)
                        };
                    }
                }
            }
            commit_async_copies();
        };

        // The decoded pairs' addresses in a stage's W tile: column c's row at 128·c, k16 tile
        // t's two 16-byte pieces at `(2t + r) ^ (c % 8)`, the lane's pair at byte 4·(lane % 4).
        // This lane's columns all have c % 8 = lane / 4, and the row and pair offsets leave bits
        // 4–6 of the address free: so with `lane / 4` placed in those bits, piece `2t + r` is
        // one XOR away, and the n8 tile and slice are immediate offsets of the store.
        let lane_in_tile = (32 * warp + lane / 4) * ROW_BYTES + 4 * (lane % 4) + 16 * (lane / 4);
        let mut ring = StageRing::<STAGES>::new();
        let mut decoding = start(0);
        let mut copying = decoding;
        issue_packed(copying, 0);
        advance(&mut copying);
        let mut slot = 0;
        while decoding.turn < my_tiles {
            // Every lane is done with the slot the next chunk goes into (its scales included).
            sync_warp();
            issue_packed(copying, slot ^ 1);
            advance(&mut copying);
            wait_async_copies::<1>();
            // The scales other lanes copied are visible.
            sync_warp();
            let packed = packed_address + slot * packed_bytes;
            let scale_area = packed + WARPS * words_per_slice * 512;
            // A's copies: piece p % 8 of rows p / 8 + 16·r, into the 128-byte swizzle.
            let (piece, row_in_group) = (p % 8, p / 8);
            let a_row = |r: u32| row_in_group + 16 * r;
            let mut column = [[constants; N_TILES]; 2];
            // This lane's words of the chunk, both slices, read at once: the decoding below then
            // never waits on shared memory.
            let mut words = [[0u32; 32]; 2];
            seq!(s in 0..2 {
                seq!(j in 0..8 {
                    if j < words_per_slice {
                        // SAFETY: this lane's own copies, landed (waited above).
                        let v = unsafe { load_shared_16(packed + word_offset(slices[s], j)) };
                        words[s][4 * j] = v[0];
                        words[s][4 * j + 1] = v[1];
                        words[s][4 * j + 2] = v[2];
                        words[s][4 * j + 3] = v[3];
                    }
                });
            });
            seq!(half in 0..2 {
                let stage = ring.index();
                if ring.round() > 0 {
                    // SAFETY: an initialized barrier; the consumers release every stage once
                    // per round.
                    unsafe { barrier_wait(empty(stage), ring.phase() ^ 1) };
                }
                let a_tile = stages_address + stage * FUSED_STAGE_BYTES;
                let k_first = decoding.chunk * chunk_k(BITS) + half * FUSED_STAGE_K;
                seq!(r in 0..8 {
                    let row = decoding.first_row + a_row(r);
                    let valid = row < m;
                    let src = if valid {
                        a.wrapping_add(row as usize * k_pad as usize + (k_first + piece * 8) as usize)
                    } else {
                        a
                    };
                    let dst = a_tile + a_row(r) * ROW_BYTES + ((piece ^ (a_row(r) % 8)) * 16);
                    // SAFETY: the stage is free (waited above); rows past m are zero-filled.
                    unsafe { copy_async_16(dst, src, valid) };
                });
                // SAFETY: one of the 128 copy arrivals this phase expects.
                unsafe { barrier_arrive_on_copies(full(stage)) };
                // W: k16 tiles 4·half … 4·half + 3 of the chunk, both slices.
                let base = a_tile + FUSED_A_STAGE_BYTES + lane_in_tile;
                let mut piece_base = [0u32; 8];
                seq!(q in 0..8 {
                    piece_base[q] = base ^ (q * 16);
                });
                seq!(s in 0..2 {
                    let slice = slices[s];
                    seq!(t in 0..4 {
                        let kt = 4 * half + t;
                        // A new group's scales (once per chunk for groups of a chunk or more).
                        if kt % GROUP_TILES == 0 {
                            let group_slot = kt / GROUP_TILES;
                            seq!(nt in 0..4 {
                                let at = (group_slot * BLOCK_COLUMNS + 32 * slice + 8 * nt + lane / 4) * 2;
                                // SAFETY: inside the slot's scale (and offset) areas.
                                let (scale, offset) = unsafe {
                                    (
                                        load_shared_u16(scale_area + at),
                                        load_shared_u16(scale_area + DECODE_GROUP_BYTES + at),
                                    )
                                };
                                column[s][nt] = column_constants::<BITS, KIND, BF16>(&constants, scale, offset, has_offsets);
                            });
                        }
                        seq!(nt in 0..4 {
                            let pair = (kt * 4 + nt) * 2;
                            let low = decode_pair::<BITS, KIND, true, BF16>(&words[s], pair, &column[s][nt]);
                            let high = decode_pair::<BITS, KIND, true, BF16>(&words[s], pair + 1, &column[s][nt]);
                            let offset = 4 * s * 32 * ROW_BYTES + 8 * nt * ROW_BYTES;
                            // SAFETY: inside the stage's W tile, which is free (waited above).
                            unsafe {
                                store_shared_u32(piece_base[2 * t] + offset, low);
                                store_shared_u32(piece_base[2 * t + 1] + offset, high);
                            }
                        });
                    });
                });
                // `wgmma` reads the weights through the async proxy.
                fence_shared_for_async_proxy();
                // SAFETY: one of the 128 decode arrivals this phase expects.
                unsafe { barrier_arrive(full(stage)) };
                ring.advance();
            });
            advance(&mut decoding);
            slot ^= 1;
        }
        // The last chunk's A copies are in no group yet.
        commit_async_copies();
        wait_async_copies::<0>();
        return;
    }

    // ---- The consumer warpgroups: v18's main loop over the stages ----
    let warpgroup = thread / 128;
    let (warp, lane) = (thread % 128 / 32, thread % 32);
    let steps = 2 * k_chunks;
    let mut ring = StageRing::<STAGES>::new();
    let mut acc = [0.0f32; ACC];
    for turn in 0..my_tiles {
        let (first_row, column_block) = tile_at(turn);
        let mut previous_stage = ring.index();
        for step in 0..steps {
            let stage = ring.index();
            // SAFETY: an initialized barrier; the producer fills every stage once per round.
            unsafe { barrier_wait(full(stage), ring.phase()) };
            // A arrived through `cp.async` (the generic proxy); `wgmma` reads it through the
            // async one.
            fence_shared_for_async_proxy();
            warpgroup_fence();
            // SAFETY: the stage's A and W have landed (waited above); the warpgroup issues
            // this together.
            unsafe {
                multiply_stage::<E, true, false, ACC>(
                    &mut acc,
                    stages_address + stage * FUSED_STAGE_BYTES,
                    FUSED_A_STAGE_BYTES,
                    warpgroup,
                    step > 0,
                )
            };
            warpgroup_commit();
            // The previous step's group is done: hand its stage back to the producer.
            warpgroup_wait::<1>();
            if step > 0 {
                // SAFETY: one of the 256 consumer arrivals the phase expects.
                unsafe { barrier_arrive(empty(previous_stage)) };
            }
            previous_stage = stage;
            ring.advance();
        }
        warpgroup_wait::<0>();
        pin_accumulators::<ACC, ACC>(&mut acc);
        // SAFETY: as above.
        unsafe { barrier_arrive(empty(previous_stage)) };
        // Accumulator i of this thread: row 16·warp + lane/4 + 8·((i/2)%2) of the warpgroup's
        // 64, column 8·(i/4) + 2·(lane%4) + i%2 of the tile.
        let row = first_row + warpgroup * 64 + 16 * warp + lane / 4;
        let col = column_block * BLOCK_COLUMNS + 2 * (lane % 4);
        seq!(j in 0..32 {
            // SAFETY: C is `m × n` of E, 4-byte aligned; rows ≥ m and columns ≥ n are skipped.
            unsafe {
                E::store_dense_pair(c as *mut E, m, n, row, col + 8 * j, acc[4 * j], acc[4 * j + 1]);
                E::store_dense_pair(c as *mut E, m, n, row + 8, col + 8 * j, acc[4 * j + 2], acc[4 * j + 3]);
            }
        });
    }
}

/// One fused entry per (bits, decoder, activation type): `dequant_fused_<name>` (fp16) and
/// `dequant_fused_bf16_<name>`, with the decode entries' arguments.
macro_rules! fused_entry {
    ($name:ident, $element:ty, $bf16:literal, $bits:expr, $kind:expr) => {
        crate::launch_bounds!($name, gemm_geometry::dequant::FUSED_THREADS, 1);
        /// Fused dequant-GEMM entry (see the module docs). Arguments: those of the decode
        /// entries (`super::decode`); the workspace and counters are not used.
        ///
        /// # Safety
        /// As the decode entries': device memory of the sizes they list, pre-packed for this
        /// entry's format; the launch as the module documentation says.
        #[allow(clippy::too_many_arguments)]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const u16,
            weights: *const u8,
            scales: *const u16,
            offsets: *const u16,
            c: *mut u16,
            _workspace: *mut f32,
            _counters: *mut u32,
            m: u32,
            n: u32,
            column_blocks: u32,
            k_chunks: u32,
            group: u32,
            offset: u32,
            exponent: u32,
            mantissa: u32,
            rebias: u32,
        ) {
            let shape = Shape {
                m,
                n,
                column_blocks,
                k_chunks,
                group,
            };
            let constants = PairConstants::of_format(offset, exponent, mantissa, rebias);
            unsafe {
                fused_gemm::<$element, { $bits }, { $kind }, $bf16, { fused_stages($bits) }>(
                    a, weights, scales, offsets, c, shape, constants,
                )
            }
        }
    };
}

use super::packed::INTEGER;

fused_entry!(dequant_fused_int1, F16, false, 1, INTEGER);
fused_entry!(dequant_fused_int2, F16, false, 2, INTEGER);
fused_entry!(dequant_fused_int3, F16, false, 3, INTEGER);
fused_entry!(dequant_fused_int4, F16, false, 4, INTEGER);
fused_entry!(dequant_fused_int5, F16, false, 5, INTEGER);
fused_entry!(dequant_fused_int6, F16, false, 6, INTEGER);
fused_entry!(dequant_fused_int7, F16, false, 7, INTEGER);
fused_entry!(dequant_fused_int8, F16, false, 8, INTEGER);
fused_entry!(dequant_fused_bf16_int1, Bf16, true, 1, INTEGER);
fused_entry!(dequant_fused_bf16_int2, Bf16, true, 2, INTEGER);
fused_entry!(dequant_fused_bf16_int3, Bf16, true, 3, INTEGER);
fused_entry!(dequant_fused_bf16_int4, Bf16, true, 4, INTEGER);
fused_entry!(dequant_fused_bf16_int5, Bf16, true, 5, INTEGER);
fused_entry!(dequant_fused_bf16_int6, Bf16, true, 6, INTEGER);
fused_entry!(dequant_fused_bf16_int7, Bf16, true, 7, INTEGER);
fused_entry!(dequant_fused_bf16_int8, Bf16, true, 8, INTEGER);
