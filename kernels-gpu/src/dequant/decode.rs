//! # Dequant GEMM for decode: streaming pre-packed low-bit weights through tensor cores
//!
//! **Idea.** At decode batch sizes (m = 1–16) `C = A · dequant(W)` is a matrix-vector product in
//! disguise: every weight is used by at most 16 rows of A, so the kernel's time is the time to
//! read W. Reading 4-bit weights instead of fp16 moves a quarter of the bytes; the whole design
//! is about turning those fewer bytes into the same fp16 tensor-core product without spending
//! more time on anything else:
//! * **pre-packed weights** ([`super::packed`]): each lane's bytes for one chunk are contiguous
//!   16-byte words, read with 128-bit copies, already in the order of its `mma` B fragments;
//! * **in-register conversion**: one shift and one `lop3` per plane put two codes in the two
//!   halves of a register; integers become fp16 by OR-ing the exponent of 1024, then one
//!   `sub.f16x2` and one `mul.f16x2` apply zero point and scale to both weights;
//! * **tensor cores**: `mma.sync.m16n8k16` with A's fragments from shared memory (`ldmatrix`,
//!   16 rows with rows past m zero), fp32 accumulation;
//! * **`cp.async` pipeline**: A, weights, scales (and zero points) of the next chunks are in
//!   flight while the current one is decoded, [`stages`]`(bits)` chunks deep;
//! * **stream-K split**: the work is a sequence of *units* (one chunk of k of one 16 × 256
//!   output tile), and each block takes an equal, contiguous share of it, so every SM gets the
//!   same number of chunks whatever the shape (with one block per tile, 224 tiles on 132 SMs
//!   would leave most SMs with two tiles and the rest with one). A tile whose units fall to
//!   several blocks is split along k: each adds its partial sums into an fp32 workspace with
//!   `red.add`, and the last to finish (counted with an atomic) converts the sum to fp16 and
//!   zeroes the workspace for the next call.
//!
//! **Measured** (H100, `docs/results/h100-dequant`, k × n = 8192 × 57344, m = 1–16): u4 with
//! group 128 in 96–98 µs, **3.29–3.37× cuBLAS fp16** (the ideal at equal bandwidth is 3.88×;
//! the goal was 3.5×), streaming at 84–85% of the copy bandwidth; u8 at 97–98% of its ideal
//! 1.97×. Below 4 bits the instruction count per weight and the per-chunk barrier, not the
//! bytes, set the time (u1: 82–91 µs). `docs/dequant.md` has the full sweep and the analysis.
//!
//! ## Batched decode (m = 17–256): the same kernel with 64-row tiles
//!
//! **Idea.** Past 16 rows the decode kernel would stream the weights once per 16 rows. With
//! [`BATCHED`] = 4 m16 tiles per block (64-row output tiles) every decoded weight serves 64 rows:
//! the weights stream once per 64 rows, and the decoding work per product falls by four. The
//! pipeline, work split and hand-over are the decode kernel's; what changes:
//! * **`dequant_batched_*` (any GPU, `mma.sync`)**: four A fragments per k16 tile, each decoded
//!   pair feeding four `mma`. The weights are scaled in fp16 as they are decoded (`fp16(value ·
//!   scale)`, as prefill uses them): per-group fp32 sums for 64 rows would need 64 more
//!   registers than a thread has. One block per SM (up to 255 registers), 160 KiB of shared
//!   memory at most (A100, Hopper; GPUs with about 100 KiB per block take prefill).
//! * **`dequant_batched_wgmma_*` (Hopper)**: the product is computed transposed, `Cᵀ = Wᵀ·Aᵀ`,
//!   so the decoded weights are `wgmma`'s register operand (M = 64 weight columns per
//!   instruction) and the activations its shared-memory operand (N = the 64 rows, K-major,
//!   which A in row-major order already is: stored in two 64-wide 128-byte-swizzle panels).
//!   The pre-packed layout needs no change: a warp's B fragments of n8 tiles `2j` and `2j + 1`
//!   are, register for register, the m16k16 A fragment of its 16 columns `16j …` of the warp
//!   (`a = [b₂ⱼ[0], b₂ⱼ₊₁[0], b₂ⱼ[1], b₂ⱼ₊₁[1]]`), so each warpgroup issues two
//!   `wgmma.m64n64k16` per k16 tile, with up to four k-tiles queued while its warps decode the
//!   next. The last `wgmma` of a chunk runs on across the barrier: the copies run one chunk
//!   less ahead, so the stage it reads is never the one being refilled.
//!
//! * **`dequant_batched128_int*` (Hopper, integer codes)**: the `wgmma` form with 8 m16 tiles
//!   (`wgmma.m64n128k16`, 128-row tiles), which the host takes for m > 128 at large layers only
//!   (where it measured faster).
//!
//! **Measured** (H100, `docs/results/h100-dequant-batched`, u4, group 128): at m = 64, 1.57–1.93×
//! cuBLAS fp16 at the 70B-sized layers (8192 × 28672, 28672 × 8192, 8192 × 57344) and 0.94–1.08×
//! at 4096 × 14336 / 14336 × 4096, where the expand-then-GEMM path it replaces ran at 0.47×; at
//! m = 128 0.82–1.06×; at m = 256 0.51–0.60× (0.65–0.68× at the large layers in the 128-row
//! form). What limits it: `wgmma` with N = 64 and the
//! weights from registers runs well below the tensor cores' rate (about 90 cycles per
//! instruction where 32 is the peak), and the 64-row tiles cost the same at m = 17.
//!
//! ## bf16 activations: the same kernels with `BF16`
//!
//! **Idea.** bf16 activations need bf16 weights (the tensor cores multiply two operands of one
//! type), and converting fp16 weights to bf16 would cost three conversions per pair, more than
//! decoding them. So each decoder builds bf16 directly ([`super::packed::decode_pair_bf16`]):
//! integers of up to 7 bits with bf16's own magic number (`0x4300 | code` is `128 + code`,
//! then one `fma.rn.bf16x2`, the same count as fp16), 8-bit integers through f32, small floats
//! placed in bf16's fields. Unscaled the weights equal fp16's exactly, so the decode kernel's
//! per-group fp32 scaling is unchanged; scaled (batched, prefill) they are `bf16(value ·
//! bf16(scale))`. The entries are `dequant_{decode,batched,batched_wgmma,expand}_bf16_*`;
//! the `mma.sync` batched form is in the portable module only (Hopper runs the `wgmma` form),
//! and the 128-row wide form has no bf16 entries.
//!
//! Launch: 256 threads (8 warps × 32 columns), a 1-D grid of any size up to the number of
//! units (the host launches as many as fit at a time: two blocks per SM for decode, one for
//! batched), [`shared_bytes`]`(bits, m_tiles)` of dynamic shared memory
//! (`batched_wgmma_shared_bytes(bits)` for the Hopper form). A is `m × k_pad` fp16 or bf16
//! (zeros past k).

use super::packed::{
    BLOCK_COLUMNS, FLOAT, HALF, INTEGER, N_TILES, PairConstants, WARP_COLUMNS, WARPS, WIDE_FLOAT,
    chunk_k, chunk_k_tiles, column_constants, decode_pair, fixed_float, half_to_f32, loads,
    through_half,
};
use crate::device::{
    block_x, commit_async_copies, copy_async_16, dynamic_shared_bytes, fma, grid_dim_x,
    load_shared_16, load_shared_u16, load_shared_u32, shared_address, shared_f32,
    store_f16x2_or_partial, store_shared_u32, sync_threads, thread_x, trap, wait_async_copies,
};
#[cfg(target_feature = "sm_90a")]
use crate::tensor_core::{
    fence_shared_for_async_proxy, pin_accumulators, swizzled_descriptor, warpgroup_commit,
    warpgroup_fence, warpgroup_wait, wgmma_m64n64k16_register_a, wgmma_m64n128k16_register_a,
};
use crate::tensor_core::{load_matrix_x4, mma_m16n8k16, pack_half2};
use seq_macro::seq;

pub use gemm_geometry::dequant::decode_shared_bytes as shared_bytes;
use gemm_geometry::dequant::{
    BATCHED_M_TILES as BATCHED, BATCHED_MIN_BLOCKS_PER_SM as BATCHED_BLOCKS,
    DECODE_GROUP_BYTES as GROUP_BYTES, DECODE_TILE_M as TILE_M, MIN_BLOCKS_PER_SM, THREADS,
    batched_wgmma_shared_bytes, decode_stage_bytes as stage_bytes, decode_stages as stages,
};

/// Byte offset of 16-byte piece `piece` of row `row` in A's stage tile (rows of `2·chunk_k`
/// bytes): pieces are XOR-swizzled within each 128-byte line (or within the row, when it is
/// shorter) so that the 8 rows one `ldmatrix` matrix spans fall into different banks.
#[inline(always)]
fn a_offset(row: u32, piece: u32, pieces_per_row: u32) -> u32 {
    let period = if pieces_per_row < 8 {
        pieces_per_row
    } else {
        8
    };
    row * pieces_per_row * 16 + (piece ^ (row % period)) * 16
}

/// Byte offset of 16-byte piece `piece` of row `row` of A's stage tile in the wgmma form: two
/// panels of 64 k (128 bytes a row, `block_rows` rows), each in `wgmma`'s 128-byte swizzle
/// (piece `p` of row `r` at `p ^ (r % 8)`), read as the K-major B operand of `Cᵀ = Wᵀ·Aᵀ`.
#[inline(always)]
fn swizzled_a_offset(row: u32, piece: u32, block_rows: u32) -> u32 {
    (piece / 8) * block_rows * 128 + row * 128 + ((piece % 8) ^ (row % 8)) * 16
}

/// The wgmma form's two accumulator sets of `HALF` registers (m64n64: 32, m64n128: 64; one set
/// per group of 16 columns of each warp), stored in the registers of the `mma` form's
/// accumulators for `M_TILES` m16 tiles.
#[inline(always)]
fn wgmma_view<const M_TILES: usize, const HALF: usize>(
    acc: &mut [[[f32; 4]; N_TILES]; M_TILES],
) -> &mut [[f32; HALF]; 2] {
    // (A compile-time constant: only the instances whose sizes match call it.)
    if M_TILES * N_TILES * 4 != 2 * HALF {
        trap();
    }
    // SAFETY: both are arrays of f32 (alignment 4) of the same size.
    unsafe { &mut *(acc as *mut [[[f32; 4]; N_TILES]; M_TILES] as *mut [[f32; HALF]; 2]) }
}

/// The kernel's scalar arguments.
#[derive(Clone, Copy)]
pub struct Shape {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of C.
    pub n: u32,
    /// Blocks of 256 columns (`n_pad / 256`).
    pub column_blocks: u32,
    /// Chunks along k (`k_pad / chunk_k`).
    pub k_chunks: u32,
    /// Rows of k per scale.
    pub group: u32,
}

/// The first unit of work (tile-major, chunk-minor) of block `block` of `blocks`, out of `units`.
#[inline(always)]
fn first_unit(block: u32, blocks: u32, units: u32) -> u32 {
    (block as u64 * units as u64 / blocks as u64) as u32
}

/// The block whose share holds unit `unit`.
#[inline(always)]
fn owner(unit: u32, blocks: u32, units: u32) -> u32 {
    (((unit as u64 + 1) * blocks as u64).div_ceil(units as u64) - 1) as u32
}

/// Where a copy or a computation is in the block's share: output tile (m tile, column block)
/// and chunk of k, advanced one chunk at a time without divisions.
#[derive(Clone, Copy)]
struct Cursor {
    m_tile: u32,
    column_block: u32,
    chunk: u32,
}

impl Cursor {
    fn at(unit: u32, shape: &Shape) -> Cursor {
        let tile = unit / shape.k_chunks;
        Cursor {
            m_tile: tile / shape.column_blocks,
            column_block: tile % shape.column_blocks,
            chunk: unit % shape.k_chunks,
        }
    }

    /// Moves to the next chunk; returns whether that starts a new tile.
    #[inline(always)]
    fn advance(&mut self, shape: &Shape) -> bool {
        self.chunk += 1;
        if self.chunk < shape.k_chunks {
            return false;
        }
        self.chunk = 0;
        self.column_block += 1;
        if self.column_block == shape.column_blocks {
            self.column_block = 0;
            self.m_tile += 1;
        }
        true
    }
}

/// The decode dequant-GEMM, one instance per (bits, decoder kind): dispatches to a body for
/// one group per chunk (groups of at least `chunk_k` rows, or per-channel), whose k-tile loop
/// loads its scales once, and a body for several (groups of 32 or 64 rows). Both keep the
/// k-tile loop free of branches, so the compiler can overlap the `ldmatrix`, conversions and
/// `mma` of consecutive k-tiles.
///
/// # Safety
/// The pointers and `shape` must be as the entry point's documentation (and the module's) says: A
/// `m × k_pad` fp16, the pre-packed weights, scales and offsets (`groups × n_pad` fp16, offsets
/// null or valid) for this `BITS`/`KIND`, C `m × n` fp16 writable, the zeroed fp32 workspace (`m ×
/// n_pad`) and zeroed per-tile counters; the launch must be the module's (256 threads,
/// [`shared_bytes`]`(BITS)` of dynamic shared memory), every thread of the block calling it (it
/// contains barriers).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn decode_gemm<
    const BITS: u32,
    const KIND: u32,
    const M_TILES: usize,
    const WGMMA: bool,
    const BF16: bool,
>(
    a: *const u16,
    weights: *const u8,
    scales: *const u16,
    offsets: *const u16,
    c: *mut u16,
    workspace: *mut f32,
    counters: *mut u32,
    shape: Shape,
    constants: PairConstants,
) {
    // k-tiles per group: 8 stands for "one group per chunk" (the host allows groups of 32, 64,
    // or multiples of the chunk).
    match shape.group {
        32 if chunk_k(BITS) > 32 => unsafe {
            body::<BITS, KIND, 2, M_TILES, WGMMA, BF16>(
                a, weights, scales, offsets, c, workspace, counters, shape, constants,
            )
        },
        64 if chunk_k(BITS) > 64 => unsafe {
            body::<BITS, KIND, 4, M_TILES, WGMMA, BF16>(
                a, weights, scales, offsets, c, workspace, counters, shape, constants,
            )
        },
        g if g >= chunk_k(BITS) => unsafe {
            body::<BITS, KIND, 8, M_TILES, WGMMA, BF16>(
                a, weights, scales, offsets, c, workspace, counters, shape, constants,
            )
        },
        _ => trap(),
    }
}

/// # Safety
/// That of [`decode_gemm`], with `GROUP_TILES` matching `shape`'s group as `decode_gemm` chooses
/// it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn body<
    const BITS: u32,
    const KIND: u32,
    const GROUP_TILES: u32,
    const M_TILES: usize,
    const WGMMA: bool,
    const BF16: bool,
>(
    a: *const u16,
    weights: *const u8,
    scales: *const u16,
    offsets: *const u16,
    c: *mut u16,
    workspace: *mut f32,
    counters: *mut u32,
    shape: Shape,
    constants: PairConstants,
) {
    const { assert!(M_TILES == 1 || M_TILES == 2 || M_TILES == 4 || M_TILES == 8) };
    // The wgmma form: 64 rows (the instruction's N), 128-row chunks (two 64-wide swizzle panels).
    // (The `mma.sync` form's loops cover up to 4 tiles; 8 is for the wgmma form only.)
    const { assert!(WGMMA || M_TILES <= 4) };
    const { assert!(!WGMMA || ((M_TILES == 4 || M_TILES == 8) && chunk_k(BITS) == 128)) };
    let stages = stages(BITS, M_TILES as u32);
    let stage_size = stage_bytes(BITS, M_TILES as u32);
    let needed = if WGMMA {
        batched_wgmma_shared_bytes(BITS, M_TILES as u32)
    } else {
        shared_bytes(BITS, M_TILES as u32)
    };
    if dynamic_shared_bytes() < needed {
        trap();
    }
    let ck = chunk_k(BITS);
    let loads = loads(BITS);
    let Shape {
        m,
        n,
        column_blocks,
        k_chunks,
        group,
    } = shape;
    let thread = thread_x();
    let (warp, lane) = (thread / 32, thread % 32);
    let n_pad = column_blocks * BLOCK_COLUMNS;
    let k_pad = k_chunks * ck;
    // Output tiles are `block_rows × 256`.
    let block_rows = TILE_M * M_TILES as u32;
    let m_tiles = m.div_ceil(block_rows);
    // This block's share of the units (one chunk of one output tile each), tile-major.
    let units = m_tiles * column_blocks * k_chunks;
    let (block, blocks) = (block_x(), grid_dim_x());
    let first = first_unit(block, blocks, units);
    let steps = first_unit(block + 1, blocks, units) - first;

    // Groups per chunk: one, or 2 or 4 groups of GROUP_TILES k-tiles.
    const { assert!(GROUP_TILES == 2 || GROUP_TILES == 4 || GROUP_TILES == 8) };
    #[allow(non_snake_case)]
    let ONE_GROUP = GROUP_TILES == 8;
    let groups_in_chunk = if ONE_GROUP { 1 } else { ck / group };
    let chunks_per_group = if ONE_GROUP { group / ck } else { 1 };
    // With one m16 tile, integers and small floats through fp16 go into the tensor cores
    // unscaled and each group's fp32 sums are scaled as the group ends (see `decode_pair`). With
    // more, that would keep a second set of accumulators (64 registers at four tiles, past the
    // 255 a thread has): the weights are scaled in fp16 instead, `fp16(value · scale)` as
    // prefill uses them, one `mul.f16x2` per pair shared by all the tiles.
    let post_scale = (KIND == INTEGER || through_half(KIND)) && M_TILES == 1;
    let rebias = if through_half(KIND) {
        half_to_f32(constants.rebias & 0xFFFF)
    } else {
        1.0
    };

    let w_offset = block_rows * ck * 2;
    let s_offset = w_offset + WARPS * loads * 512;
    let o_offset = s_offset + GROUP_BYTES;
    // (wgmma: the stages start on a 1 024-byte boundary, as its swizzle needs; stage sizes are
    // multiples of 1 024.)
    let smem = if WGMMA {
        (shared_address(shared_f32()) + 1023) & !1023
    } else {
        shared_address(shared_f32())
    };
    let flag = smem + stages * stage_size;

    // Copy roles. A: `block_rows` rows × ck/8 pieces, thread t taking pieces t, t + 256, …
    // (up to four). Weights: this lane's `loads` words. Scales and offsets: 32 pieces (256
    // columns) per group of the chunk.
    let a_pieces_per_row = ck / 8;
    let a_rounds = (block_rows * a_pieces_per_row).div_ceil(THREADS);
    let (a_row, a_piece) = (thread / a_pieces_per_row, thread % a_pieces_per_row);
    let a_rows_per_round = THREADS / a_pieces_per_row;
    let lane_words = ((warp * loads) * 32 + lane) * 16;
    let chunk_bytes = (WARPS * loads * 512) as usize;
    let w_lane = weights.wrapping_add(lane_words as usize);
    let (s_group, s_piece) = (thread / 32, thread % 32);
    let s_copies = s_group < groups_in_chunk;
    let s_dst = (s_group * BLOCK_COLUMNS + s_piece * 8) * 2;
    let has_offsets = !offsets.is_null();

    // The copy cursor runs `stages - 1` chunks ahead of the compute cursor. Its group index is
    // counted forward rather than divided.
    let mut next = Cursor::at(first, &shape);
    let group_of = |chunk: u32| {
        if ONE_GROUP {
            (
                chunk / chunks_per_group,
                chunks_per_group - chunk % chunks_per_group,
            )
        } else {
            (chunk * groups_in_chunk, 1)
        }
    };
    let (mut issue_group, mut issue_left) = group_of(next.chunk);
    let mut issue = #[inline(always)]
    |step: u32| {
        if step < steps {
            let stage = smem + (step % stages) * stage_size;
            seq!(r in 0..8 {
                let tile_row = a_row + r * a_rows_per_round;
                if r < a_rounds && tile_row < block_rows {
                    let row = next.m_tile * block_rows + tile_row;
                    let valid = row < m;
                    let src = if valid {
                        a.wrapping_add(
                            row as usize * k_pad as usize + (next.chunk * ck + a_piece * 8) as usize,
                        )
                    } else {
                        a
                    };
                    let dst = if WGMMA {
                        swizzled_a_offset(tile_row, a_piece, block_rows)
                    } else {
                        a_offset(tile_row, a_piece, a_pieces_per_row)
                    };
                    unsafe { copy_async_16(stage + dst, src, valid) };
                }
            });
            let w_chunk = w_lane
                .wrapping_add((next.column_block * k_chunks + next.chunk) as usize * chunk_bytes);
            seq!(j in 0..8 {
                if j < loads {
                    unsafe {
                        copy_async_16(stage + w_offset + lane_words + j * 512, w_chunk.wrapping_add(j as usize * 512), true)
                    };
                }
            });
            if KIND != HALF && s_copies {
                let at = (issue_group + s_group) as usize * n_pad as usize
                    + (next.column_block * BLOCK_COLUMNS + s_piece * 8) as usize;
                unsafe { copy_async_16(stage + s_offset + s_dst, scales.wrapping_add(at), true) };
                if has_offsets {
                    unsafe {
                        copy_async_16(stage + o_offset + s_dst, offsets.wrapping_add(at), true)
                    };
                }
            }
            if next.advance(&shape) {
                (issue_group, issue_left) = group_of(0);
            } else if ONE_GROUP {
                issue_left -= 1;
                if issue_left == 0 {
                    issue_group += 1;
                    issue_left = chunks_per_group;
                }
            } else {
                issue_group += groups_in_chunk;
            }
        }
        commit_async_copies();
    };

    let (lane_row, lane_piece) = (lane % 16, lane / 16);
    // This lane's `ldmatrix` addresses in A's stage tile (`a_offset`): the XOR swizzle repeats
    // every `a_pattern` k-tiles (two pieces each), so one offset per k-tile of that pattern is
    // kept, and the other k-tiles and m16 tiles are constants away from one of them. (Computed
    // in full for each k-tile, ptxas rebuilt every address from the stage index: three
    // instructions per `ldmatrix`.)
    let a_period = if a_pieces_per_row < 8 {
        a_pieces_per_row
    } else {
        8
    };
    let a_pattern = a_period / 2;
    let mut a_lane = [0u32; 4];
    seq!(j in 0..4 {
        if j < a_pattern {
            a_lane[j] = a_offset(lane_row, 2 * j + lane_piece, a_pieces_per_row);
        }
    });
    let column_in_block = warp * WARP_COLUMNS + lane / 4;
    let accumulator_column = warp * WARP_COLUMNS + 2 * (lane % 4);
    let mut acc = [[[0.0f32; 4]; N_TILES]; M_TILES];
    let kt_count = chunk_k_tiles(BITS);
    let mut current = Cursor::at(first, &shape);

    // Copies run `ahead` chunks ahead of the computation: all but the stage being read, and in
    // the wgmma form also but the stage the previous chunk's last wgmma may still be reading (it
    // is left running across the barrier, so the tensor cores never drain between chunks).
    let ahead = if WGMMA { stages - 2 } else { stages - 1 };
    if ahead == 0 {
        trap();
    }
    for step in 0..ahead {
        issue(step);
    }
    for step in 0..steps {
        match ahead {
            1 => wait_async_copies::<0>(),
            2 => wait_async_copies::<1>(),
            3 => wait_async_copies::<2>(),
            4 => wait_async_copies::<3>(),
            5 => wait_async_copies::<4>(),
            6 => wait_async_copies::<5>(),
            _ => wait_async_copies::<6>(),
        }
        if WGMMA {
            // wgmma reads A through the async proxy.
            #[cfg(target_feature = "sm_90a")]
            fence_shared_for_async_proxy();
        }
        sync_threads();
        // The stage written now was last read before this barrier.
        issue(step + ahead);
        let stage = smem + (step % stages) * stage_size;
        let mut words = [0u32; 32];
        seq!(j in 0..8 {
            if j < loads {
                let v = unsafe { load_shared_16(stage + w_offset + lane_words + j * 512) };
                words[4 * j] = v[0];
                words[4 * j + 1] = v[1];
                words[4 * j + 2] = v[2];
                words[4 * j + 3] = v[3];
            }
        });
        // Scales (and offsets) of k-tile `kt`'s group for the four n8 tiles; offsets are read
        // even without zero points (the area exists) and then not used, which keeps this
        // branch-free.
        let group_constants = #[inline(always)]
        |kt: u32| {
            let slot = kt / GROUP_TILES;
            let mut column = [constants; N_TILES];
            let mut scale32 = [[0.0f32; 2]; N_TILES];
            if KIND != HALF {
                seq!(nt in 0..4 {
                    // B fragments hold column lane/4 of each n8 tile...
                    let at = (slot * BLOCK_COLUMNS + column_in_block + 8 * nt) * 2;
                    let s = unsafe { load_shared_u16(stage + s_offset + at) };
                    let o = unsafe { load_shared_u16(stage + o_offset + at) };
                    column[nt] = column_constants::<BITS, KIND, BF16>(&constants, s, o, has_offsets);
                    // ...accumulators columns 2·(lane%4) and the next.
                    let at = (slot * BLOCK_COLUMNS + accumulator_column + 8 * nt) * 2;
                    let pair = unsafe { load_shared_u32(stage + s_offset + at) };
                    scale32[nt] = [half_to_f32(pair & 0xFFFF) * rebias, half_to_f32(pair >> 16) * rebias];
                });
            }
            (column, scale32)
        };
        let (mut column, mut scale32) = group_constants(0);
        // One group's products, before its scale.
        let mut group_sum = [[[0.0f32; 4]; N_TILES]; M_TILES];
        seq!(kt in 0..8 {
            if kt < kt_count {
                if kt > 0 && kt % GROUP_TILES == 0 {
                    if post_scale {
                        seq!(mt in 0..4 {
                            if mt < M_TILES {
                                add_group(&mut acc[mt], &mut group_sum[mt], &scale32);
                            }
                        });
                    }
                    (column, scale32) = group_constants(kt);
                }
                if WGMMA {
                    // The weights of this k-tile, scaled, as two wgmma A fragments (see the
                    // module docs), then `Cᵀ += Wᵀ·Aᵀ` for both: the tensor cores work on this
                    // k-tile while the warp decodes the next ones.
                    #[cfg(target_feature = "sm_90a")]
                    {
                        let mut b = [[0u32; 2]; N_TILES];
                        seq!(nt in 0..4 {
                            let k = &column[nt];
                            let pair = (kt * 4 + nt) * 2;
                            b[nt] = [
                                decode_pair::<BITS, KIND, true, BF16>(&words, pair, k),
                                decode_pair::<BITS, KIND, true, BF16>(&words, pair + 1, k),
                            ];
                        });
                        let fragments = [
                            [b[0][0], b[1][0], b[0][1], b[1][1]],
                            [b[2][0], b[3][0], b[2][1], b[3][1]],
                        ];
                        let panel = stage + (kt / 4) * block_rows * 128 + (kt % 4) * 32;
                        let activations = swizzled_descriptor(panel, 16, 1024);
                        warpgroup_fence();
                        if M_TILES == 4 {
                            let halves = wgmma_view::<M_TILES, 32>(&mut acc);
                            unsafe {
                                wgmma_m64n64k16_register_a::<BF16>(&mut halves[0], &fragments[0], activations);
                                wgmma_m64n64k16_register_a::<BF16>(&mut halves[1], &fragments[1], activations);
                            }
                        } else {
                            let halves = wgmma_view::<M_TILES, 64>(&mut acc);
                            unsafe {
                                wgmma_m64n128k16_register_a::<BF16>(&mut halves[0], &fragments[0], activations);
                                wgmma_m64n128k16_register_a::<BF16>(&mut halves[1], &fragments[1], activations);
                            }
                        }
                        warpgroup_commit();
                        // Up to four k-tiles in the tensor cores' queue; the fragments of the
                        // oldest are free once it is done.
                        warpgroup_wait::<3>();
                    }
                } else {
                // Each m16 tile's A fragment; every decoded weight below serves all of them.
                // (Loops over the tiles are unrolled by `seq!`: the arrays stay in registers.)
                let mut a_frag = [[0u32; 4]; M_TILES];
                seq!(mt in 0..4 {
                    if mt < M_TILES {
                        // `a_offset(16·mt + lane_row, 2·kt + lane_piece, …)`: see `a_lane`.
                        let at = a_lane[(kt % a_pattern) as usize]
                            + (kt / a_pattern) * a_period * 16
                            + mt * TILE_M * a_pieces_per_row * 16;
                        a_frag[mt] = unsafe { load_matrix_x4(stage + at) };
                    }
                });
                seq!(nt in 0..4 {
                    let k = &column[nt];
                    let pair = (kt * 4 + nt) * 2;
                    if post_scale {
                        let b = [
                            decode_pair::<BITS, KIND, false, BF16>(&words, pair, k),
                            decode_pair::<BITS, KIND, false, BF16>(&words, pair + 1, k),
                        ];
                        seq!(mt in 0..4 {
                            if mt < M_TILES {
                                mma_m16n8k16::<BF16>(&mut group_sum[mt][nt], &a_frag[mt], &b);
                            }
                        });
                    } else {
                        let b = [
                            decode_pair::<BITS, KIND, true, BF16>(&words, pair, k),
                            decode_pair::<BITS, KIND, true, BF16>(&words, pair + 1, k),
                        ];
                        seq!(mt in 0..4 {
                            if mt < M_TILES {
                                mma_m16n8k16::<BF16>(&mut acc[mt][nt], &a_frag[mt], &b);
                            }
                        });
                    }
                });
                }
            }
        });
        if post_scale {
            seq!(mt in 0..4 {
                if mt < M_TILES {
                    add_group(&mut acc[mt], &mut group_sum[mt], &scale32);
                }
            });
        }
        // At the end of a tile, or of this block's share, hand the sums over.
        let tile = current;
        if current.advance(&shape) || step + 1 == steps {
            if WGMMA {
                // The accumulators are read now: every wgmma of the tile has to be done.
                #[cfg(target_feature = "sm_90a")]
                {
                    warpgroup_wait::<0>();
                    if M_TILES == 4 {
                        let halves = wgmma_view::<M_TILES, 32>(&mut acc);
                        pin_accumulators::<32, 32>(&mut halves[0]);
                        pin_accumulators::<32, 32>(&mut halves[1]);
                    } else {
                        let halves = wgmma_view::<M_TILES, 64>(&mut acc);
                        pin_accumulators::<64, 64>(&mut halves[0]);
                        pin_accumulators::<64, 64>(&mut halves[1]);
                    }
                }
            }
            let tile_index = tile.m_tile * column_blocks + tile.column_block;
            let tile_start = tile_index * k_chunks;
            let shared_by = owner(tile_start + k_chunks - 1, blocks, units)
                - owner(tile_start, blocks, units)
                + 1;
            unsafe {
                finish_tile::<M_TILES, WGMMA, BF16>(
                    &acc,
                    c,
                    workspace,
                    counters,
                    flag,
                    m,
                    n,
                    n_pad,
                    tile.m_tile,
                    tile.column_block,
                    tile_index,
                    shared_by,
                )
            };
            acc = [[[0.0f32; 4]; N_TILES]; M_TILES];
        }
    }
    wait_async_copies::<0>();
}

/// `acc += scale · group_sum`, per column (accumulators `i` and `i + 2` share column `i % 2`
/// of the pair), and clears `group_sum` for the next group.
#[inline(always)]
fn add_group(
    acc: &mut [[f32; 4]; N_TILES],
    group_sum: &mut [[f32; 4]; N_TILES],
    scale32: &[[f32; 2]; N_TILES],
) {
    seq!(nt in 0..4 {
        seq!(i in 0..4 {
            acc[nt][i] = fma(scale32[nt][i % 2], group_sum[nt][i], acc[nt][i]);
            group_sum[nt][i] = 0.0;
        });
    });
}

/// The wgmma form's part of [`finish_tile`]: accumulator `i` of set `j` is C's row `8·(i/4) +
/// 2·(lane%4) + i%2` of the tile and column `32·warp + 16·j + lane/4 + 8·((i/2)%2)` of the block
/// (`Cᵀ`'s layout), stored as one fp16 each (`shared_by == 1`) or added into the workspace.
/// `place` is the tile's first row and the warp's first column; `out` is C, the workspace, m,
/// n, n_pad and `shared_by`.
///
/// # Safety
/// As [`finish_tile`].
#[inline(always)]
unsafe fn store_transposed<const HALF: usize, const BF16: bool>(
    halves: &[[f32; HALF]; 2],
    place: (u32, u32),
    out: (*mut u16, *mut f32, u32, u32, u32, u32),
) {
    let (c, workspace, m, n, n_pad, shared_by) = out;
    let lane = thread_x() % 32;
    let row0 = place.0 + 2 * (lane % 4);
    let col0 = place.1 + lane / 4;
    seq!(j in 0..2 {
        seq!(i in 0..64 {
            if i < HALF {
                let (row, col) = (row0 + 8 * (i / 4) + i % 2, col0 + 16 * j + 8 * ((i / 2) % 2));
                let value = halves[j][i];
                if row < m {
                    if shared_by == 1 {
                        if col < n {
                            unsafe { *c.add(row as usize * n as usize + col as usize) = pack_half2::<BF16>(value, 0.0) as u16 };
                        }
                    } else {
                        let at = workspace.wrapping_add(row as usize * n_pad as usize + col as usize);
                        unsafe { add_f32(at, value) };
                    }
                }
            }
        });
    });
}

/// Writes a block's sums for one output tile: straight to C as fp16 when the block computed
/// all of its k (`shared_by == 1`), else added into the fp32 workspace; the last of the
/// `shared_by` blocks to arrive converts the workspace's tile to fp16 and zeroes it.
///
/// # Safety
/// Called by all threads of the block together (it contains barriers and the block's arrival on
/// `counters`); `c`, `workspace` and `counters` as in [`decode_gemm`], with `m_tile`,
/// `column_block` and `tile_index` naming a tile of this launch and `shared_by` the number of
/// blocks that add into it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn finish_tile<const M_TILES: usize, const WGMMA: bool, const BF16: bool>(
    acc: &[[[f32; 4]; N_TILES]; M_TILES],
    c: *mut u16,
    workspace: *mut f32,
    counters: *mut u32,
    flag: u32,
    m: u32,
    n: u32,
    n_pad: u32,
    m_tile: u32,
    column_block: u32,
    tile_index: u32,
    shared_by: u32,
) {
    let thread = thread_x();
    let (warp, lane) = (thread / 32, thread % 32);
    let block_rows = TILE_M * M_TILES as u32;
    // This block's sums: stored as fp16 when it computed the whole tile, else added into the
    // workspace.
    if WGMMA {
        // Accumulator `i` of set `j` is C's row `8·(i/4) + 2·(lane%4) + i%2` of the tile and
        // column `32·warp + 16·j + lane/4 + 8·((i/2)%2)` of the block (`Cᵀ`'s layout): one
        // fp16 (or one fp32 addition) each.
        let mut acc = *acc;
        let place = (
            m_tile * block_rows,
            column_block * BLOCK_COLUMNS + warp * WARP_COLUMNS,
        );
        let out = (c, workspace, m, n, n_pad, shared_by);
        unsafe {
            if M_TILES == 4 {
                store_transposed::<32, BF16>(wgmma_view::<M_TILES, 32>(&mut acc), place, out);
            } else {
                store_transposed::<64, BF16>(wgmma_view::<M_TILES, 64>(&mut acc), place, out);
            }
        }
    } else {
        let col0 = column_block * BLOCK_COLUMNS + warp * WARP_COLUMNS + 2 * (lane % 4);
        seq!(mt in 0..4 {
            if mt < M_TILES {
                let (acc, row) = (&acc[mt], m_tile * block_rows + 16 * mt as u32 + lane / 4);
                seq!(nt in 0..4 {
                    let col = col0 + 8 * nt;
                    if shared_by == 1 {
                        unsafe {
                            store_f16x2_or_partial(c, m, n, row, col, pack_half2::<BF16>(acc[nt][0], acc[nt][1]));
                            store_f16x2_or_partial(c, m, n, row + 8, col, pack_half2::<BF16>(acc[nt][2], acc[nt][3]));
                        }
                    } else {
                        seq!(half in 0..2 {
                            let r = row + 8 * half;
                            if r < m {
                                let at = workspace.wrapping_add(r as usize * n_pad as usize + col as usize);
                                unsafe {
                                    add_f32(at, acc[nt][2 * half]);
                                    add_f32(at.wrapping_add(1), acc[nt][2 * half + 1]);
                                }
                            }
                        });
                    }
                });
            }
        });
    }
    if shared_by == 1 {
        return;
    }
    fence_gpu();
    sync_threads();
    if thread == 0 {
        let arrived = unsafe { arrive(counters.wrapping_add(tile_index as usize)) };
        unsafe { store_shared_u32(flag, (arrived == shared_by - 1) as u32) };
    }
    sync_threads();
    let last = unsafe { load_shared_u32(flag) } == 1;
    // Everyone has read the flag before the next tile may write it.
    sync_threads();
    if !last {
        return;
    }
    // The last block of this tile: the workspace holds the whole sum. Sixteen rows at a time,
    // every `take_f32` issued before the first store waits on one: the exchanges are L2 round
    // trips, and one row after another they cost 16 of them per m16 tile (about 4 µs of a
    // 27 µs product at 16 × 14336 × 4096 on the H100).
    const { assert!(TILE_M == 16) };
    let col = column_block * BLOCK_COLUMNS + thread;
    for rows in 0..M_TILES as u32 {
        let first_row = m_tile * block_rows + rows * TILE_M;
        let mut sums = [0.0f32; TILE_M as usize];
        seq!(i in 0..16 {
            if first_row + i < m {
                let at = workspace.wrapping_add((first_row + i) as usize * n_pad as usize + col as usize);
                sums[i] = unsafe { take_f32(at) };
            }
        });
        seq!(i in 0..16 {
            if first_row + i < m && col < n {
                unsafe {
                    *c.add((first_row + i) as usize * n as usize + col as usize) =
                        pack_half2::<BF16>(sums[i], 0.0) as u16
                };
            }
        });
    }
    if thread == 0 {
        unsafe { counters.add(tile_index as usize).write_volatile(0) };
    }
}

/// `red.global.add.f32`: adds `value` to `*at` in L2, atomically.
///
/// # Safety
/// `at` must be a 4-byte-aligned global-memory address of a writable f32.
#[inline(always)]
unsafe fn add_f32(at: *mut f32, value: f32) {
    unsafe {
        core::arch::asm!("red.global.add.f32 [{at}], {v};", at = in(reg64) at, v = in(reg32) value,
            options(nostack))
    };
}

/// Reads `*at` and leaves 0 there, atomically (`atom.exch`).
///
/// # Safety
/// `at` must be a 4-byte-aligned global-memory address of a writable f32.
#[inline(always)]
unsafe fn take_f32(at: *mut f32) -> f32 {
    let old: f32;
    unsafe {
        core::arch::asm!("atom.global.exch.b32 {old}, [{at}], 0;", old = out(reg32) old,
            at = in(reg64) at, options(nostack))
    };
    old
}

/// `fence.acq_rel.gpu` (`__threadfence()`): this thread's earlier writes are ordered before its
/// later ones for the whole GPU.
#[inline(always)]
fn fence_gpu() {
    unsafe { core::arch::asm!("fence.acq_rel.gpu;", options(nostack)) };
}

/// Counts this block in, returning how many had arrived before it (`atom.acq_rel.gpu.add`).
///
/// # Safety
/// `counter` must be a 4-byte-aligned global-memory address of a writable u32 counter.
#[inline(always)]
unsafe fn arrive(counter: *mut u32) -> u32 {
    let old: u32;
    unsafe {
        core::arch::asm!("atom.acq_rel.gpu.global.add.u32 {old}, [{at}], 1;", old = out(reg32) old,
            at = in(reg64) counter, options(nostack))
    };
    old
}

/// One kernel entry per (bits, decoder, m16 tiles per block, activation type):
/// `dequant_decode_<name>` (one tile, two blocks per SM), `dequant_batched_<name>`
/// (`BATCHED_M_TILES`, one block per SM) and their Hopper forms; `bf16` in the name: bf16
/// activations and output.
macro_rules! decode_entry {
    ($name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, 1, MIN_BLOCKS_PER_SM, false, false);
    };
    (bf16 $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, 1, MIN_BLOCKS_PER_SM, false, true);
    };
    (batched $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, BATCHED, BATCHED_BLOCKS, false, false);
    };
    (batched_bf16 $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, BATCHED, BATCHED_BLOCKS, false, true);
    };
    (batched_wgmma $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, BATCHED, BATCHED_BLOCKS, true, false);
    };
    (batched_wgmma_bf16 $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!($name, $bits, $kind, BATCHED, BATCHED_BLOCKS, true, true);
    };
    (wide_wgmma $name:ident, $bits:expr, $kind:expr) => {
        decode_entry!(
            $name,
            $bits,
            $kind,
            gemm_geometry::dequant::WIDE_BATCHED_M_TILES,
            BATCHED_BLOCKS,
            true,
            false
        );
    };
    (
        $name:ident,
        $bits:expr,
        $kind:expr,
        $m_tiles:expr,
        $blocks_per_sm:expr,
        $wgmma:expr,
        $bf16:expr
    ) => {
        crate::launch_bounds!($name, gemm_geometry::dequant::THREADS, $blocks_per_sm);
        /// Decode dequant-GEMM entry (see the module docs). Arguments: A (`m × k_pad` fp16, or
        /// bf16 for a `bf16` entry), pre-packed weights, scales and offsets (`groups × n_pad`
        /// fp16; offsets may be null), C (`m × n`, A's type), fp32 workspace (`m × n_pad`, zero) and one counter per output tile
        /// (zero) for tiles shared by several blocks, then m, n, column blocks, k chunks,
        /// group, and the format's constants.
        ///
        /// # Safety
        /// All pointers must be device memory of the sizes listed above (A `m × k_pad`, scales and
        /// offsets `groups × n_pad`, C `m × n`, workspace `m × n_pad`, one counter per output
        /// tile), pre-packed for this entry's format, the workspace and counters zero at launch
        /// (the kernel leaves them zero again); A, the weights, scales and offsets 16-byte aligned
        /// as the packer produces them; the launch as the module documentation says.
        #[allow(clippy::too_many_arguments)]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const u16,
            weights: *const u8,
            scales: *const u16,
            offsets: *const u16,
            c: *mut u16,
            workspace: *mut f32,
            counters: *mut u32,
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
                decode_gemm::<{ $bits }, { $kind }, { $m_tiles as usize }, { $wgmma }, { $bf16 }>(
                    a, weights, scales, offsets, c, workspace, counters, shape, constants,
                )
            }
        }
    };
}

decode_entry!(dequant_decode_int1, 1, INTEGER);
decode_entry!(dequant_decode_int2, 2, INTEGER);
decode_entry!(dequant_decode_int3, 3, INTEGER);
decode_entry!(dequant_decode_int4, 4, INTEGER);
decode_entry!(dequant_decode_int5, 5, INTEGER);
decode_entry!(dequant_decode_int6, 6, INTEGER);
decode_entry!(dequant_decode_int7, 7, INTEGER);
decode_entry!(dequant_decode_int8, 8, INTEGER);
decode_entry!(dequant_decode_float2, 2, FLOAT);
decode_entry!(dequant_decode_float3, 3, FLOAT);
decode_entry!(dequant_decode_float4, 4, FLOAT);
decode_entry!(dequant_decode_float5, 5, FLOAT);
decode_entry!(dequant_decode_float6, 6, FLOAT);
decode_entry!(dequant_decode_float7, 7, FLOAT);
decode_entry!(dequant_decode_float8, 8, FLOAT);
decode_entry!(dequant_decode_wide_float6, 6, WIDE_FLOAT);
decode_entry!(dequant_decode_wide_float7, 7, WIDE_FLOAT);
decode_entry!(dequant_decode_wide_float8, 8, WIDE_FLOAT);
decode_entry!(dequant_decode_half, 16, HALF);
// The common small floats (the OCP formats' element types), compiled for their widths.
decode_entry!(dequant_decode_e2m1, 4, fixed_float(2, 1));
decode_entry!(dequant_decode_e3m2, 6, fixed_float(3, 2));
decode_entry!(dequant_decode_e2m3, 6, fixed_float(2, 3));
decode_entry!(dequant_decode_e5m2, 8, fixed_float(5, 2));

// bf16 activations and output.
decode_entry!(bf16 dequant_decode_bf16_int1, 1, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int2, 2, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int3, 3, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int4, 4, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int5, 5, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int6, 6, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int7, 7, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_int8, 8, INTEGER);
decode_entry!(bf16 dequant_decode_bf16_float2, 2, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float3, 3, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float4, 4, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float5, 5, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float6, 6, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float7, 7, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_float8, 8, FLOAT);
decode_entry!(bf16 dequant_decode_bf16_wide_float6, 6, WIDE_FLOAT);
decode_entry!(bf16 dequant_decode_bf16_wide_float7, 7, WIDE_FLOAT);
decode_entry!(bf16 dequant_decode_bf16_wide_float8, 8, WIDE_FLOAT);
decode_entry!(bf16 dequant_decode_bf16_half, 16, HALF);
decode_entry!(bf16 dequant_decode_bf16_e2m1, 4, fixed_float(2, 1));
decode_entry!(bf16 dequant_decode_bf16_e3m2, 6, fixed_float(3, 2));
decode_entry!(bf16 dequant_decode_bf16_e2m3, 6, fixed_float(2, 3));
decode_entry!(bf16 dequant_decode_bf16_e5m2, 8, fixed_float(5, 2));

decode_entry!(batched dequant_batched_int1, 1, INTEGER);
decode_entry!(batched dequant_batched_int2, 2, INTEGER);
decode_entry!(batched dequant_batched_int3, 3, INTEGER);
decode_entry!(batched dequant_batched_int4, 4, INTEGER);
decode_entry!(batched dequant_batched_int5, 5, INTEGER);
decode_entry!(batched dequant_batched_int6, 6, INTEGER);
decode_entry!(batched dequant_batched_int7, 7, INTEGER);
decode_entry!(batched dequant_batched_int8, 8, INTEGER);
decode_entry!(batched dequant_batched_float2, 2, FLOAT);
decode_entry!(batched dequant_batched_float3, 3, FLOAT);
decode_entry!(batched dequant_batched_float4, 4, FLOAT);
decode_entry!(batched dequant_batched_float5, 5, FLOAT);
decode_entry!(batched dequant_batched_float6, 6, FLOAT);
decode_entry!(batched dequant_batched_float7, 7, FLOAT);
decode_entry!(batched dequant_batched_float8, 8, FLOAT);
decode_entry!(batched dequant_batched_wide_float6, 6, WIDE_FLOAT);
decode_entry!(batched dequant_batched_wide_float7, 7, WIDE_FLOAT);
decode_entry!(batched dequant_batched_wide_float8, 8, WIDE_FLOAT);
decode_entry!(batched dequant_batched_half, 16, HALF);
decode_entry!(batched_bf16 dequant_batched_bf16_half, 16, HALF);

/// The batched `mma.sync` form with bf16 activations, in the portable module only: on Hopper
/// every format but fp16 weights takes the `wgmma` form (each entry is large, and the module's
/// JIT time grows with every one).
#[cfg(not(target_feature = "sm_90a"))]
mod portable_bf16 {
    use super::*;
    decode_entry!(batched_bf16 dequant_batched_bf16_int1, 1, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int2, 2, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int3, 3, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int4, 4, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int5, 5, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int6, 6, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int7, 7, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_int8, 8, INTEGER);
    decode_entry!(batched_bf16 dequant_batched_bf16_float2, 2, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float3, 3, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float4, 4, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float5, 5, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float6, 6, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float7, 7, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_float8, 8, FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_wide_float6, 6, WIDE_FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_wide_float7, 7, WIDE_FLOAT);
    decode_entry!(batched_bf16 dequant_batched_bf16_wide_float8, 8, WIDE_FLOAT);
}

/// The batched kernel in its Hopper form, for every format but fp16 (whose 32-row chunks do not
/// fill the two 64-wide swizzle panels).
#[cfg(target_feature = "sm_90a")]
mod hopper {
    use super::*;
    decode_entry!(batched_wgmma dequant_batched_wgmma_int1, 1, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int2, 2, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int3, 3, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int4, 4, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int5, 5, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int6, 6, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int7, 7, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_int8, 8, INTEGER);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float2, 2, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float3, 3, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float4, 4, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float5, 5, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float6, 6, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float7, 7, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_float8, 8, FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_wide_float6, 6, WIDE_FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_wide_float7, 7, WIDE_FLOAT);
    decode_entry!(batched_wgmma dequant_batched_wgmma_wide_float8, 8, WIDE_FLOAT);
    // bf16 activations (no wide form: each entry is large).
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int1, 1, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int2, 2, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int3, 3, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int4, 4, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int5, 5, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int6, 6, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int7, 7, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_int8, 8, INTEGER);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float2, 2, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float3, 3, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float4, 4, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float5, 5, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float6, 6, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float7, 7, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_float8, 8, FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_wide_float6, 6, WIDE_FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_wide_float7, 7, WIDE_FLOAT);
    decode_entry!(batched_wgmma_bf16 dequant_batched_wgmma_bf16_wide_float8, 8, WIDE_FLOAT);
    // The wide form (128-row tiles, N = 128) for m > 64, for the integer formats only: each
    // entry is large, and the module's JIT time grows with every one.
    decode_entry!(wide_wgmma dequant_batched128_int1, 1, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int2, 2, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int3, 3, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int4, 4, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int5, 5, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int6, 6, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int7, 7, INTEGER);
    decode_entry!(wide_wgmma dequant_batched128_int8, 8, INTEGER);
}
