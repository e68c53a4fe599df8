//! Thin products: C has at most [`THIN_MAX`] rows (`thin_m`) or columns (`thin_n`), so the
//! product is a matrix–vector product or a few of them side by side, and its time is the time
//! to read the large operand once from DRAM. These kernels stream that operand with 128-bit
//! loads at full width, keep the small operand in the cache, accumulate in f32, and apply the
//! whole epilogue of [`GemmArgs`] (alpha, beta, bias, activation) through [`crate::epilogue`].
//!
//! Two bodies, whose numbers live in [`gemm_geometry::thin`] (the host reads them too):
//!
//! * `dot_rows`: the streamed operand's rows are contiguous along k (`thin_m` with B
//!   `[n, k]`: B's rows; `thin_n`: A's rows). A warp owns [`DOT_ROWS_PER_WARP`] of them, its
//!   lanes read consecutive 16-byte chunks ([`DOT_UNROLL`] per row in flight) and each lane
//!   accumulates all (at most 8) dot products of its chunks with the small operand's rows; a
//!   butterfly of warp shuffles sums the lanes in a fixed order. In f32, with at most
//!   [`GEMV_MAX_SMALL`] small rows (the matrix–vector case), each lane keeps
//!   [`GEMV_LOADS_IN_FLIGHT`] loads in flight instead of 8 (`dot_rows_entry`, a branch uniform
//!   across the grid): 64 KiB per SM instead of 32, which took the m = 1 fp32 layers with B
//!   `[n, k]` from 52–76% to 63–106% of the copy bandwidth on the H200
//!   (`docs/results/gemv-in-flight`). For `thin_n` with B `[k, n]`,
//!   B's few columns are strided along k: the block stages [`STAGE_K`] rows of k of them at a
//!   time in shared memory, transposed to `[column][k]` f32 (zeros past k). The wide f32
//!   entry (`thin_m16`, 9 ≤ m ≤ [`WIDE_MAX`], B `[n, k]`) runs the same body with
//!   [`WIDE_DOT_ROWS_PER_WARP`] rows per warp and all 16 sums per row.
//! * `column_slices`: `thin_m` with B `[k, n]`, whose rows are contiguous along n. A block
//!   owns [`KN_CHUNKS`] (8) 16-byte column chunks and all of k (one slice of it under
//!   split-K); thread `t` reads chunk `t % 8` of rows `t / 8 + 32·s` ([`KN_UNROLL`] rows in
//!   flight, two blocks per SM in fp32), so a
//!   warp load covers 4 rows × 128 bytes, a whole cache line of each. The 32 slices' partial
//!   sums are reduced by shuffles within each warp, then across the warps in shared memory, in
//!   a fixed order. It supports split-K ([`crate::split_k`]): slices of k along grid z, raw
//!   sums into the workspace, the reduction kernel finishing them, for layers whose column
//!   blocks are fewer than the device's block slots. (Narrower rows stream B slower on the
//!   H100: 32 bytes per row, 16 rows per warp load, took the fp32 m = 1 and m = 8 LLM layers
//!   1.06–1.62× as long as 64 bytes
//!   (`docs/results/v13-short-m`, run 11), and 64 bytes, at one block per SM, reached 38–78%
//!   of the copy bandwidth where 128 bytes, at two, reach 84–100% at the 70B layers
//!   (`docs/results/thin-kn-rows`).)
//!
//! Results are bit-identical from run to run: no atomics, no reduction across blocks but the
//! split-K reduction of the column slices (slice by slice), every sum taken in one order.
//!
//! Alignment: none required. Each kernel decides from its arguments whether its 16-byte loads
//! are legal (base address, leading dimension and, with batch > 1, batch stride of every
//! operand read by vector loads a multiple of 16 bytes; an operand with a single row needs no
//! leading dimension check) and otherwise reads every element with a scalar load, in the same
//! loop structure (a branch uniform across the grid). Partial chunks at the end of k (or of n)
//! are read element by element. Offsets are computed in 64 bits.
//!
//! Launch: [`THREADS`] threads (1-D); grid x = ⌈big / per block⌉ (thin_m `[k, n]`:
//! [`gemm_geometry::thin::kn_block_columns`] columns of C per block; the others
//! [`DOT_ROWS_PER_BLOCK`] rows of the streamed operand per block, the wide entry
//! [`WIDE_DOT_ROWS_PER_BLOCK`]), y = 1, z = min(batch,
//! 65 535) (thin_m `[k, n]` under split-K: min(splits·batch, 65 535)) (a block walks x and z
//! in grid-sized steps); dynamic shared memory
//! [`KN_SHARED_BYTES`] (thin_m `[k, n]`), [`STAGED_SHARED_BYTES`] (thin_n `[k, n]`), 0 (the
//! others). Preconditions: `m, n, k, batch ≥ 1`; `m ≤ THIN_MAX` for `thin_m` (`m ≤ WIDE_MAX`
//! for the wide entry), `n ≤ THIN_MAX` for `thin_n`; addresses as [`GemmArgs`] describes them, each aligned to its element size.

use crate::device::{
    block_x, block_z, fma, grid_dim_x, grid_dim_z, opaque_mad, read4, shared_f32, sync_threads,
    sync_warp, thread_x, write4,
};
use crate::element::{Bf16, Element, F16};
use crate::epilogue;
use crate::split_k;
use core::arch::asm;
use core::simd::f32x4;
use gemm_geometry::GemmArgs;
use gemm_geometry::thin::{
    CHUNK_BYTES, DOT_ROWS_PER_WARP, DOT_UNROLL, GEMV_LOADS_IN_FLIGHT, GEMV_MAX_SMALL, KN_A_SLOT,
    KN_CHUNKS, KN_K_SLICES, KN_PARTIALS, KN_STEP_K, KN_UNROLL, MAX_CHUNK_ELEMENTS, STAGE_K,
    THIN_MAX, THREADS, WARPS, WIDE_DOT_ROWS_PER_WARP, WIDE_MAX, kn_min_blocks_per_sm,
};
use seq_macro::seq;

#[cfg(doc)]
use gemm_geometry::thin::{
    DOT_ROWS_PER_BLOCK, KN_SHARED_BYTES, STAGED_SHARED_BYTES, WIDE_DOT_ROWS_PER_BLOCK,
};

// The bodies below are unrolled for exactly these numbers (the dot-rows body for at most
// MAX_SMALL small rows and MAX_ROWS streamed rows per warp).
const _: () = assert!(THIN_MAX == 8 && DOT_ROWS_PER_WARP == 2 && DOT_UNROLL == 4);
const _: () = assert!(WIDE_MAX <= MAX_SMALL && WIDE_DOT_ROWS_PER_WARP <= MAX_ROWS);
/// The most small rows the dot-rows body holds sums for (the wide f32 entry's 16).
const MAX_SMALL: u32 = 16;
/// The most streamed rows per warp of the dot-rows body (the wide f32 entry's 4).
const MAX_ROWS: u32 = 4;
/// 16-byte loads of the streamed operand each lane of the dot-rows body keeps in flight (but
/// on the matrix–vector path): [`DOT_UNROLL`] chunks of each of [`DOT_ROWS_PER_WARP`] rows.
const DOT_LOADS_IN_FLIGHT: u32 = DOT_UNROLL * DOT_ROWS_PER_WARP;
/// The most chunks per streamed row a lane of the dot-rows body loads before using any (the
/// matrix–vector path's `GEMV_LOADS_IN_FLIGHT / DOT_ROWS_PER_WARP`).
const MAX_UNROLL: u32 = 8;
const _: () = assert!(GEMV_LOADS_IN_FLIGHT / DOT_ROWS_PER_WARP <= MAX_UNROLL);
const _: () = assert!(GEMV_MAX_SMALL <= THIN_MAX);
const _: () = assert!(KN_UNROLL == 8 && MAX_CHUNK_ELEMENTS == 8);
/// Outputs of one block of the column-slices body: every (chunk, row of C, chunk element).
const KN_OUTPUTS: u32 = KN_CHUNKS * THIN_MAX * MAX_CHUNK_ELEMENTS;
// Its store takes two passes of the block's threads; its reduction, one partial per warp.
const _: () = assert!(KN_OUTPUTS == 2 * THREADS && THREADS / 32 == 8);
/// Slices of k (groups of [`KN_CHUNKS`] threads) per warp in the column-slices body.
const KN_SLICES_PER_WARP: u32 = 32 / KN_CHUNKS;
const _: () = assert!(KN_STEP_K == KN_K_SLICES * KN_UNROLL);
// A warp's step reads KN_SLICES_PER_WARP · KN_UNROLL rows of B: one column of A per lane.
const _: () = assert!(KN_SLICES_PER_WARP * KN_UNROLL == 32);
const _: () = assert!(STAGE_K == 4 * 256 && CHUNK_BYTES == 16);

/// 16 bytes of the streamed operand at the global address `at`, through the read-only path
/// without allocating in L1 (each byte is read once; L1 is left to the small operand).
///
/// # Safety
/// `at` must be a 16-byte-aligned global address of 16 bytes that no one writes during the
/// kernel.
#[inline(always)]
pub(crate) unsafe fn load_streamed(at: u64) -> [u32; 4] {
    let (x, y, z, w): (u32, u32, u32, u32);
    // SAFETY: as the caller promises. Not `pure`: the load must stay under its guard.
    unsafe {
        asm!(
            "ld.global.nc.L1::no_allocate.v4.u32 {{{x}, {y}, {z}, {w}}}, [{at}];",
            x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
            at = in(reg64) at,
            options(readonly, nostack),
        )
    };
    [x, y, z, w]
}

/// 16 bytes of the small operand at the global address `at`, through the read-only path (it
/// stays in L1, where every warp of the SM reads it again).
///
/// # Safety
/// As [`load_streamed`].
#[inline(always)]
pub(crate) unsafe fn load_cached(at: u64) -> [u32; 4] {
    let (x, y, z, w): (u32, u32, u32, u32);
    // SAFETY: as the caller promises. Not `pure`: the load must stay under its guard.
    unsafe {
        asm!(
            "ld.global.nc.v4.u32 {{{x}, {y}, {z}, {w}}}, [{at}];",
            x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
            at = in(reg64) at,
            options(readonly, nostack),
        )
    };
    [x, y, z, w]
}

/// An element type of the thin kernels: how a 16-byte chunk widens to f32, and one element's
/// load.
pub(crate) trait ThinElement: Element {
    /// Elements per 16-byte chunk.
    const CHUNK: u32;
    /// The chunk's elements widened to f32 (the first [`ThinElement::CHUNK`]; the rest 0).
    fn widen(raw: [u32; 4]) -> [f32; 8];
    /// The element at the global address `at`, widened to f32 (read-only path).
    ///
    /// # Safety
    /// `at` must be the global address of a `Self` aligned to its size that no one writes
    /// during the kernel.
    unsafe fn load_scalar(at: u64) -> f32;
}

impl ThinElement for f32 {
    const CHUNK: u32 = 4;
    #[inline(always)]
    fn widen(raw: [u32; 4]) -> [f32; 8] {
        let mut out = [0.0; 8];
        seq!(i in 0..4 {
            out[i] = f32::from_bits(raw[i]);
        });
        out
    }
    #[inline(always)]
    unsafe fn load_scalar(at: u64) -> f32 {
        let value: f32;
        // SAFETY: as the caller promises. Not `pure`: the load must stay under its guard.
        unsafe {
            asm!("ld.global.nc.f32 {v}, [{at}];", v = out(reg32) value, at = in(reg64) at,
                options(readonly, nostack))
        };
        value
    }
}

/// `ld.global.nc.b16` of the 16 bits at `at`.
///
/// # Safety
/// `at` must be a 2-byte-aligned global address that no one writes during the kernel.
#[inline(always)]
pub(crate) unsafe fn load_b16(at: u64) -> u16 {
    let bits: u16;
    // SAFETY: as the caller promises. Not `pure`: the load must stay under its guard.
    unsafe {
        asm!("ld.global.nc.b16 {v}, [{at}];", v = out(reg16) bits, at = in(reg64) at,
            options(readonly, nostack))
    };
    bits
}

impl ThinElement for F16 {
    const CHUNK: u32 = 8;
    #[inline(always)]
    fn widen(raw: [u32; 4]) -> [f32; 8] {
        let mut out = [0.0; 8];
        seq!(i in 0..4 {
            out[2 * i] = F16(raw[i] as u16).to_f32();
            out[2 * i + 1] = F16((raw[i] >> 16) as u16).to_f32();
        });
        out
    }
    #[inline(always)]
    unsafe fn load_scalar(at: u64) -> f32 {
        // SAFETY: as the caller promises.
        F16(unsafe { load_b16(at) }).to_f32()
    }
}

impl ThinElement for Bf16 {
    const CHUNK: u32 = 8;
    #[inline(always)]
    fn widen(raw: [u32; 4]) -> [f32; 8] {
        let mut out = [0.0; 8];
        seq!(i in 0..4 {
            out[2 * i] = f32::from_bits(raw[i] << 16);
            out[2 * i + 1] = f32::from_bits(raw[i] & 0xffff_0000);
        });
        out
    }
    #[inline(always)]
    unsafe fn load_scalar(at: u64) -> f32 {
        // SAFETY: as the caller promises.
        Bf16(unsafe { load_b16(at) }).to_f32()
    }
}

/// Whether every row of an operand (base `base`, `rows` rows `ld` elements apart, batch items
/// `stride` elements apart) starts on a 16-byte boundary. Products are taken modulo 2⁶⁴,
/// which keeps their residue modulo 16.
#[inline(always)]
fn rows_aligned(base: u64, rows: u32, ld: u32, stride: u64, batch: u32, bytes: u32) -> bool {
    let bytes = bytes as u64;
    base % 16 == 0
        && (rows == 1 || (ld as u64 * bytes) % 16 == 0)
        && (batch == 1 || stride.wrapping_mul(bytes) % 16 == 0)
}

/// `value` summed over the 32 lanes of the warp by a butterfly (xor 16, 8, 4, 2, 1): every
/// lane gets the same sum, always added in the same order. Every lane must call it.
#[inline(always)]
fn warp_sum(value: f32) -> f32 {
    let mut sum = value;
    seq!(step in 0..5 {
        sum += shuffle_xor(sum, 16 >> step);
    });
    sum
}

/// `value` of lane `lane ^ mask` (all 32 lanes take part).
#[inline(always)]
fn shuffle_xor(value: f32, mask: u32) -> f32 {
    let out: f32;
    // SAFETY: a warp-collective register exchange; every lane of the warp executes it.
    unsafe {
        asm!(
            "shfl.sync.bfly.b32 {o}, {i}, {mask}, 0x1f, 0xffffffff;",
            o = out(reg32) out, i = in(reg32) value, mask = in(reg32) mask,
            options(nomem, nostack),
        )
    };
    out
}

/// Writes `act(alpha·acc + beta·C + bias)` to element (`row`, `col`) of the batch item of C at
/// byte address `c_item`.
///
/// # Safety
/// (`row`, `col`) must lie inside that item of C as `args` describes it.
#[inline(always)]
pub(crate) unsafe fn store<E: Element>(args: &GemmArgs, c_item: u64, row: u32, col: u32, acc: f32) {
    let at = c_item + (row as u64 * args.ldc as u64 + col as u64) * E::BYTES as u64;
    let at = at as *mut E;
    // SAFETY: inside C, as the caller promises; the bias has n > col elements when present.
    unsafe {
        let value = epilogue::apply::<E>(args, acc, at, col);
        at.write(E::from_f32(value));
    }
}

/// Stores the sum `acc` of element (`row`, `col`) of a split-K virtual item where its target
/// says ([`split_k::item_target`]): raw into the item's dense `m × n` fp32 matrix of the
/// workspace under a split, else into C through the epilogue ([`store`]).
///
/// # Safety
/// `row < m`, `col < n`, and `target` is the target of the launch's item being computed.
#[inline(always)]
pub(crate) unsafe fn store_item<E: Element>(
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    row: u32,
    col: u32,
    acc: f32,
) {
    if target.partial {
        let at = target.at + (row as u64 * target.ld as u64 + col as u64) * 4;
        // SAFETY: element (row, col) of the item's dense m × n fp32 matrix in the workspace.
        unsafe { (at as *mut f32).write(acc) };
    } else {
        // SAFETY: row < m and col < n, in the item's batch item of C.
        unsafe { store::<E>(args, target.at, row, col, acc) };
    }
}

/// Which product the dot-rows body computes.
const THIN_M_NK: u32 = 0;
/// `thin_n` with the small operand (B) read from global memory: B `[n, k]`, or B `[k, n]` of
/// one contiguous column.
const THIN_N_NK: u32 = 1;
/// `thin_n` with B `[k, n]` staged in shared memory.
const THIN_N_KN: u32 = 2;

/// Where one warp's streamed rows and the small operand lie, for one batch item.
#[derive(Clone, Copy)]
struct DotItem {
    /// Byte address of each of the warp's streamed rows (the first `ROWS` of the body;
    /// meaningful where `valid`).
    rows: [u64; MAX_ROWS as usize],
    /// Which of the warp's rows exist.
    valid: [bool; MAX_ROWS as usize],
    /// Byte address of the small operand's batch item.
    small: u64,
    /// Bytes from one small row to the next (global small operand).
    small_ld_bytes: u64,
    /// Rows of the small operand (≤ the body's `SMALL`).
    small_count: u32,
    /// The reduction length.
    k: u32,
    /// Whether 16-byte loads are legal.
    vector: bool,
    /// Bytes from one streamed row to the next.
    big_ld_bytes: u64,
}

impl DotItem {
    /// Byte address of the warp's streamed row `r` of a body with `ROWS` rows per warp. The
    /// wide body computes it where it loads (one `mad` per load) instead of holding four
    /// 64-bit addresses across the k loop, which cost it the registers it spilled on
    /// sm_80–sm_89.
    #[inline(always)]
    fn row<const ROWS: u32>(&self, r: usize) -> u64 {
        if ROWS > DOT_ROWS_PER_WARP {
            opaque_mad(r as u64, self.big_ld_bytes, self.rows[0])
        } else {
            self.rows[r]
        }
    }
}

/// The small operand's chunk `q` of row `s`, widened: from the staged tile (`STAGED`, which
/// holds k from `k0`, zeros past k), else from global memory (16 bytes when `full`, else
/// element by element up to k).
///
/// # Safety
/// `item` must describe readable memory as [`dot_rows`] does; for `STAGED`, the tile must be
/// staged for the k range holding chunk `q`.
#[inline(always)]
unsafe fn small_chunk<E: ThinElement, const STAGED: bool, const SMALL: u32>(
    item: &DotItem,
    s: u32,
    q: u32,
    full: bool,
    k0: u32,
) -> [f32; 8] {
    let v = E::CHUNK;
    if STAGED {
        let at = unsafe { shared_f32().add((s * STAGE_K + q * v - k0) as usize) };
        let mut out = [0.0; 8];
        // SAFETY: q·v − k0 + v ≤ STAGE_K (the chunk lies in the staged tile), 16-byte aligned.
        let low = unsafe { read4(at) }.to_array();
        seq!(e in 0..4 {
            out[e] = low[e];
        });
        if v == 8 {
            let high = unsafe { read4(at.add(4)) }.to_array();
            seq!(e in 0..4 {
                out[4 + e] = high[e];
            });
        }
        return out;
    }
    // The wide body computes each small row's address where it loads it: left to itself,
    // LLVM keeps all 16 row pointers alive across the k loop, and ptxas spilled them (120–168
    // bytes, every architecture).
    let row = if SMALL > THIN_MAX {
        opaque_mad(s as u64, item.small_ld_bytes, item.small)
    } else {
        item.small + s as u64 * item.small_ld_bytes
    };
    if full {
        // SAFETY: a whole chunk inside row s, 16-byte aligned (item.vector).
        E::widen(unsafe { load_cached(row + q as u64 * CHUNK_BYTES as u64) })
    } else {
        scalar_chunk::<E>(row, q, item.k)
    }
}

/// Chunk `q` of the row at byte address `row` (k elements), element by element, zeros past k.
#[inline(always)]
fn scalar_chunk<E: ThinElement>(row: u64, q: u32, k: u32) -> [f32; 8] {
    let mut out = [0.0; 8];
    let first = q * E::CHUNK;
    seq!(e in 0..8 {
        if e < E::CHUNK && first + e < k {
            // SAFETY: element first + e < k of a row of k readable elements.
            out[e] = unsafe { E::load_scalar(row + (first + e) as u64 * E::BYTES as u64) };
        }
    });
    out
}

/// The dot-rows body's sums: `[small row][streamed row]`, the first `SMALL` × `ROWS` used.
type DotSums = [[f32; MAX_ROWS as usize]; MAX_SMALL as usize];
/// One chunk of each of the warp's streamed rows, widened (the first `ROWS` used).
type DotChunks = [[f32; 8]; MAX_ROWS as usize];

/// Adds chunk `q` of the warp's `ROWS` streamed rows (`big`, widened) times chunk `q` of every
/// small row (at most `SMALL`) into `acc[s][r]`.
///
/// # Safety
/// As [`small_chunk`].
#[inline(always)]
unsafe fn accumulate<E: ThinElement, const STAGED: bool, const ROWS: u32, const SMALL: u32>(
    item: &DotItem,
    q: u32,
    full: bool,
    k0: u32,
    big: &DotChunks,
    acc: &mut DotSums,
) {
    // The wide body computes all SMALL sums whatever m is, reading row min(s, m − 1) for the
    // rows past m (their sums are never stored): a branch per small row kept each load of A
    // behind the previous row's FMAs, and the m = 16 layers streamed B at 9–17% of the copy
    // bandwidth.
    let wide = SMALL > THIN_MAX;
    seq!(s in 0..16 {
        if s < SMALL && (wide || s < item.small_count) {
            let row = if wide { Ord::min(s, item.small_count - 1) } else { s };
            let small = unsafe { small_chunk::<E, STAGED, SMALL>(item, row, q, full, k0) };
            seq!(r in 0..4 {
                if r < ROWS {
                    seq!(e in 0..8 {
                        if e < E::CHUNK {
                            acc[s][r] = fma(big[r][e], small[e], acc[s][r]);
                        }
                    });
                }
            });
        }
    });
}

/// This lane's share of chunks `q_begin..q_end` (of all rows' chunks): chunks
/// `q_begin + lane + 32·i`. Whole chunks go `unroll` at a time per row with 16-byte loads when
/// legal, so that every lane keeps `IN_FLIGHT` loads in flight whatever `ROWS` is (8:
/// 4 chunks of 2 rows, or 2 of 4; the matrix–vector path's 16: 8 chunks of 2 rows); the rest
/// (the partial last chunk, or everything when vector loads are not legal) one at a time.
///
/// # Safety
/// As [`small_chunk`], for every chunk in the range.
#[inline(always)]
unsafe fn lane_chunks<
    E: ThinElement,
    const STAGED: bool,
    const ROWS: u32,
    const SMALL: u32,
    const IN_FLIGHT: u32,
>(
    item: &DotItem,
    q_begin: u32,
    q_end: u32,
    k0: u32,
    lane: u32,
    acc: &mut DotSums,
) {
    let full_chunks = item.k / E::CHUNK;
    let full_end = if q_end < full_chunks {
        q_end
    } else {
        full_chunks
    };
    let unroll = const { IN_FLIGHT / ROWS };
    let mut q = q_begin + lane;
    if item.vector {
        while q + 32 * (unroll - 1) < full_end {
            // Every load of the group goes out before any is used.
            let mut raw = [[[0u32; 4]; MAX_UNROLL as usize]; MAX_ROWS as usize];
            seq!(r in 0..4 {
                if r < ROWS && item.valid[r] {
                    seq!(u in 0..8 {
                        if u < unroll {
                        let at = item.row::<ROWS>(r) + (q + 32 * u) as u64 * CHUNK_BYTES as u64;
                        // SAFETY: a whole chunk of an existing row, 16-byte aligned.
                        raw[r][u] = unsafe { load_streamed(at) };
                        }
                    });
                }
            });
            seq!(u in 0..8 {
                if u < unroll {
                let mut big: DotChunks = [[0.0; 8]; MAX_ROWS as usize];
                seq!(r in 0..4 {
                    if r < ROWS {
                        big[r] = E::widen(raw[r][u]);
                    }
                });
                unsafe {
                    accumulate::<E, STAGED, ROWS, SMALL>(item, q + 32 * u, true, k0, &big, acc)
                };
                }
            });
            q += 32 * unroll;
        }
    }
    while q < q_end {
        let full = item.vector && q < full_chunks;
        let mut big: DotChunks = [[0.0; 8]; MAX_ROWS as usize];
        seq!(r in 0..4 {
            if r < ROWS && item.valid[r] {
                big[r] = if full {
                    // SAFETY: a whole chunk of an existing row, 16-byte aligned.
                    E::widen(unsafe { load_streamed(item.row::<ROWS>(r) + q as u64 * CHUNK_BYTES as u64) })
                } else {
                    scalar_chunk::<E>(item.row::<ROWS>(r), q, item.k)
                };
            }
        });
        unsafe { accumulate::<E, STAGED, ROWS, SMALL>(item, q, full, k0, &big, acc) };
        q += 32;
    }
}

/// Stages rows `k0..k0 + STAGE_K` of B `[k, n]` (batch item at byte address `b_item`, rows
/// `ldb_bytes` apart, n ≤ 8 columns) into shared memory as `[column][k]` f32, zeros past k.
/// Thread `t` stages k rows `t + 256·p`, every column: 32 consecutive k of one column per warp
/// store, no bank conflicts; all its loads go out before any store.
///
/// # Safety
/// B must be readable as described; the launch's dynamic shared memory must hold
/// `STAGED_SHARED_BYTES`, which no thread reads until the barrier that follows.
#[inline(always)]
unsafe fn stage_columns<E: ThinElement>(
    b_item: u64,
    ldb_bytes: u64,
    n: u32,
    k: u32,
    k0: u32,
    thread: u32,
) {
    let mut values = [[0.0f32; 8]; 4];
    seq!(p in 0..4 {
        let kk = k0 + thread + 256 * p;
        if kk < k {
            let row = b_item + kk as u64 * ldb_bytes;
            seq!(j in 0..8 {
                if j < n {
                    // SAFETY: element (kk, j) of B, kk < k and j < n.
                    values[p][j] = unsafe { E::load_scalar(row + j * E::BYTES as u64) };
                }
            });
        }
    });
    let tile = shared_f32();
    seq!(p in 0..4 {
        seq!(j in 0..8 {
            if j < n {
                // SAFETY: j < 8 and thread + 256·p < STAGE_K: inside STAGED_SHARED_BYTES.
                unsafe { *tile.add((j * STAGE_K + thread + 256 * p) as usize) = values[p][j] };
            }
        });
    });
}

/// The dot-rows body (see the module documentation): `thin_m` with B `[n, k]` (`KIND`
/// [`THIN_M_NK`]) and `thin_n` ([`THIN_N_NK`]: B read from global memory; [`THIN_N_KN`]: B
/// `[k, n]` staged in shared memory). Each warp owns `ROWS` streamed rows and each lane holds
/// the sums of at most `SMALL` small rows for each: ([`DOT_ROWS_PER_WARP`], [`THIN_MAX`]) in
/// the 8-row entries, ([`WIDE_DOT_ROWS_PER_WARP`], [`WIDE_MAX`]) in the wide f32 one,
/// ([`DOT_ROWS_PER_WARP`], [`GEMV_MAX_SMALL`]) on the f32 matrix–vector path. Each lane keeps
/// `IN_FLIGHT` 16-byte loads in flight ([`DOT_LOADS_IN_FLIGHT`], or the matrix–vector path's
/// [`GEMV_LOADS_IN_FLIGHT`]).
///
/// # Safety
/// `args` must describe matrices readable (A, B, C when beta ≠ 0) and writable (C) as `E`,
/// with the shapes, strides and element alignment [`GemmArgs`] defines, the thin dimension at
/// most `SMALL`; the launch must be the module's for the entry (blocks of `ROWS` · 8 streamed
/// rows).
#[inline(always)]
unsafe fn dot_rows<
    E: ThinElement,
    const KIND: u32,
    const ROWS: u32,
    const SMALL: u32,
    const IN_FLIGHT: u32,
>(
    args: &GemmArgs,
) {
    const {
        assert!(ROWS <= MAX_ROWS && SMALL <= MAX_SMALL);
        assert!(ROWS * (IN_FLIGHT / ROWS) == IN_FLIGHT && IN_FLIGHT / ROWS <= MAX_UNROLL);
        assert!(SMALL <= THIN_MAX || KIND == THIN_M_NK);
    }
    let staged = KIND == THIN_N_KN;
    let thin_m = KIND == THIN_M_NK;
    let bytes = E::BYTES as u64;
    let thread = thread_x();
    let (lane, warp) = (thread % 32, thread / 32);
    // The streamed ("big") operand and the small one, by family.
    let (big_count, small_count) = if thin_m {
        (args.n, args.m)
    } else {
        (args.m, args.n)
    };
    let (big_base, big_ld, big_stride) = if thin_m {
        (args.b, args.ldb, args.stride_b)
    } else {
        (args.a, args.lda, args.stride_a)
    };
    let (small_base, small_ld, small_stride) = if thin_m {
        (args.a, args.lda, args.stride_a)
    } else {
        (args.b, args.ldb, args.stride_b)
    };
    let e_bytes = E::BYTES;
    let vector = rows_aligned(big_base, big_count, big_ld, big_stride, args.batch, e_bytes)
        && (staged
            || rows_aligned(
                small_base,
                small_count,
                small_ld,
                small_stride,
                args.batch,
                e_bytes,
            ));
    let rows_per_block = WARPS * ROWS;
    let groups = big_count.div_ceil(rows_per_block);
    let chunks = args.k.div_ceil(E::CHUNK);

    let mut z = block_z();
    while z < args.batch {
        // Byte addresses of batch item z (64-bit: z · stride may exceed 2³²).
        let big_item = big_base + z as u64 * big_stride * bytes;
        let small_item = small_base + z as u64 * small_stride * bytes;
        let c_item = args.c + z as u64 * args.stride_c * bytes;
        let mut group = block_x();
        while group < groups {
            // < big_count + 32 ≤ 2³¹ + 31: no wrap.
            let first = group * rows_per_block + warp * ROWS;
            let mut valid = [false; MAX_ROWS as usize];
            let mut rows = [0u64; MAX_ROWS as usize];
            seq!(r in 0..4 {
                if r < ROWS {
                    valid[r] = first + r < big_count;
                    rows[r] = big_item + (first + r) as u64 * big_ld as u64 * bytes;
                }
            });
            let item = DotItem {
                rows,
                valid,
                small: small_item,
                small_ld_bytes: small_ld as u64 * bytes,
                small_count,
                k: args.k,
                vector,
                big_ld_bytes: big_ld as u64 * bytes,
            };
            let mut acc: DotSums = [[0.0; MAX_ROWS as usize]; MAX_SMALL as usize];
            if staged {
                let mut k0 = 0;
                while k0 < args.k {
                    // Every thread is done with the previous tile before it is overwritten.
                    sync_threads();
                    // SAFETY: B's batch item z, as this function's contract says.
                    unsafe {
                        stage_columns::<E>(
                            small_item,
                            item.small_ld_bytes,
                            args.n,
                            args.k,
                            k0,
                            thread,
                        )
                    };
                    sync_threads();
                    // k0 < k < 2³¹: the tile's end does not wrap.
                    let tile_end = if args.k - k0 < STAGE_K {
                        args.k
                    } else {
                        k0 + STAGE_K
                    };
                    let (q_begin, q_end) = (k0 / E::CHUNK, tile_end.div_ceil(E::CHUNK));
                    // SAFETY: the tile holds k0..tile_end, the chunks q_begin..q_end.
                    unsafe {
                        lane_chunks::<E, true, ROWS, SMALL, IN_FLIGHT>(
                            &item, q_begin, q_end, k0, lane, &mut acc,
                        )
                    };
                    k0 += STAGE_K;
                }
            } else {
                // SAFETY: the item describes batch item z of the operands.
                unsafe {
                    lane_chunks::<E, false, ROWS, SMALL, IN_FLIGHT>(
                        &item, 0, chunks, 0, lane, &mut acc,
                    )
                };
            }
            // Lane (ROWS·s + r) mod 32 stores output (s, r): the warp's ≤ 16 outputs (64 in
            // the wide entry) 32 at a time.
            seq!(s in 0..16 {
                if s < SMALL && s < small_count {
                    seq!(r in 0..4 {
                        if r < ROWS {
                        let sum = warp_sum(acc[s][r]);
                        if valid[r] && lane == (ROWS * s + r) % 32 {
                            let big_index = first + r;
                            let (c_row, c_col) = if thin_m { (s, big_index) } else { (big_index, s) };
                            // SAFETY: c_row < m and c_col < n.
                            unsafe { store::<E>(args, c_item, c_row, c_col, sum) };
                        }
                        }
                    });
                }
            });
            group += grid_dim_x();
        }
        z += grid_dim_z();
    }
}

/// The column-slices body: `thin_m` with B `[k, n]` (see the module documentation).
///
/// The block walks k in steps of [`KN_STEP_K`] rows, the same number of steps for every
/// thread. In each step a thread sends its [`KN_UNROLL`] loads of B (rows
/// `l0 + slice + KN_K_SLICES·u`) and, for every row i of C, one element of A: a warp's 32
/// lanes load exactly the 32 columns of A its rows of B need (lane `L` column
/// `l0 + 4·warp + L % 4 + KN_K_SLICES·(L / 4)`) and put them in the warp's own slot of shared
/// memory (one 32-byte record of 8 rows per column), from which each lane reads the record
/// of its row u with two 16-byte loads. A thread thus holds only one A value per row of C
/// across its loads of B (one per row of C and loaded row of B spilled at two blocks per SM),
/// no barrier holds the block's warps together (staging A for the whole block behind a
/// barrier cost 6–17 points of the copy bandwidth at the layers with one block per SM), and
/// a lane reads two 16-byte records per row of B where handing A over by shuffles took one
/// per row of C (at m = 8, 64 shuffles per step made the layers 7–19% slower;
/// `docs/results/thin-kn-rows`).
/// Each warp's slot has two buffers, used in turn, so one warp barrier per step suffices: a
/// lane writes a buffer only after the barrier that every lane reaches after its reads of that
/// buffer two steps earlier.
///
/// Split-K ([`crate::split_k`]): with `args.splits > 1` the block walks the virtual items
/// (slices of k of every batch item) along grid z instead of the batch items, and stores each
/// item's raw fp32 sums into the workspace; the reduction kernel adds the slices in a fixed
/// order and applies the epilogue. Where n has fewer column blocks than the device has block
/// slots (fp32 at n = 4096: 128 blocks for 264 slots), the slices fill the SMs that whole
/// columns of k leave idle. `SPLIT` must be [`split_k::is_split`]`(args)`
/// ([`column_slices_entry`] picks it).
///
/// # Safety
/// As [`dot_rows`], with `m ≤ THIN_MAX` and [`KN_SHARED_BYTES`] of dynamic shared memory;
/// under split-K the grid's z walks [`split_k::items`] and `args.workspace` holds
/// `splits·batch·m·n` fp32 (see [`crate::split_k`]).
#[inline(always)]
unsafe fn column_slices<E: ThinElement, const SPLIT: bool>(args: &GemmArgs) {
    let v = E::CHUNK;
    let bytes = E::BYTES as u64;
    let thread = thread_x();
    let (chunk, slice) = (thread % KN_CHUNKS, thread / KN_CHUNKS);
    let (lane, warp) = (thread % 32, thread / 32);
    // The column of A this lane loads for its warp, relative to the step's first row; the
    // column of this thread's row u was loaded by lane (slice % 4) + 4·u.
    let a_offset = KN_SLICES_PER_WARP * warp
        + lane % KN_SLICES_PER_WARP
        + KN_K_SLICES * (lane / KN_SLICES_PER_WARP);
    let a_source = slice % KN_SLICES_PER_WARP;
    let (m, n) = (args.m, args.n);
    // A slice of k starts on a whole row of B, so B's rows keep the alignment they have.
    let vector = rows_aligned(
        args.b,
        args.k,
        args.ldb,
        args.stride_b,
        args.batch,
        E::BYTES,
    );
    let block_columns = KN_CHUNKS * v;
    let groups = n.div_ceil(block_columns);
    let ldb_bytes = args.ldb as u64 * bytes;
    let lda_bytes = args.lda as u64 * bytes;
    let partials = shared_f32();
    // SAFETY: the warps' slots of A follow the partial sums inside KN_SHARED_BYTES.
    let a_slot = unsafe { partials.add((KN_PARTIALS + warp * KN_A_SLOT) as usize) };
    let mut buffer = 0;

    let mut zz = block_z();
    while zz < split_k::items(args) {
        // The virtual item's A and B from its first row of k, its length of k, and where it
        // writes (C, or its matrix of the workspace).
        let item = split_k::item_operands::<E, false, SPLIT>(args, zz);
        let target = split_k::item_target::<E, SPLIT>(args, zz);
        let (a_item, b_item, k) = (item.a as u64, item.b as u64, item.k);
        let mut group = block_x();
        while group < groups {
            // < n + 64 ≤ 2³¹ + 63: no wrap.
            let first_col = group * block_columns + chunk * v;
            let whole = vector && first_col + v <= n;
            // Byte address of this thread's chunk in B's row 0 (read only if first_col < n).
            let b_chunk = b_item + first_col as u64 * bytes;
            let mut acc = [[0.0f32; 8]; 8];
            let mut l0 = 0;
            while l0 < k {
                // Every load of the step goes out before any is used (whole chunks of a whole
                // step; the edges load as they are used, below).
                let fast = whole && k - l0 >= KN_STEP_K;
                let mut raw = [[0u32; 4]; 8];
                if fast {
                    seq!(u in 0..8 {
                        let at = b_chunk + (l0 + slice + KN_K_SLICES * u) as u64 * ldb_bytes;
                        // SAFETY: a whole, 16-byte-aligned chunk of B's row l0 + … < k.
                        raw[u] = unsafe { load_streamed(at) };
                    });
                }
                // SAFETY: A's batch item z; rows i < m, columns below k.
                let a = unsafe { a_column::<E>(a_item, lda_bytes, l0 + a_offset, m, k) };
                // SAFETY: this lane's record in the warp's buffer, inside KN_SHARED_BYTES,
                // 16-byte aligned (32-byte records after 16-byte-aligned partial sums).
                let records = unsafe { a_slot.add((buffer * 32 * THIN_MAX) as usize) };
                unsafe {
                    let mine = records.add((lane * THIN_MAX) as usize);
                    write4(mine, f32x4::from_array([a[0], a[1], a[2], a[3]]));
                    if m > 4 {
                        write4(mine.add(4), f32x4::from_array([a[4], a[5], a[6], a[7]]));
                    }
                }
                sync_warp();
                seq!(u in 0..8 {
                    let l = l0 + slice + KN_K_SLICES * u;
                    let b = if fast {
                        E::widen(raw[u])
                    } else {
                        // SAFETY: B's batch item z; only elements inside it are read.
                        unsafe { edge_row::<E>(b_chunk + l as u64 * ldb_bytes, l < k, whole, first_col, n) }
                    };
                    // A[i, l] for every row i (0 past k), the record of the lane that loaded it.
                    let record = (a_source + KN_SLICES_PER_WARP * u) * THIN_MAX;
                    let mut a_l = [0.0f32; 8];
                    // SAFETY: records written before the warp barrier, 16-byte aligned.
                    unsafe {
                        let low = read4(records.add(record as usize)).to_array();
                        a_l[..4].copy_from_slice(&low);
                        if m > 4 {
                            let high = read4(records.add(record as usize + 4)).to_array();
                            a_l[4..].copy_from_slice(&high);
                        }
                    }
                    seq!(i in 0..8 {
                        if i < m {
                            seq!(e in 0..8 {
                                if e < E::CHUNK {
                                    acc[i][e] = fma(a_l[i], b[e], acc[i][e]);
                                }
                            });
                        }
                    });
                });
                buffer ^= 1;
                // k < 2³¹: no wrap.
                l0 += KN_STEP_K;
            }
            // The 4 slices of each chunk in this warp (lanes equal modulo KN_CHUNKS), then the 8
            // warps.
            seq!(i in 0..8 {
                if i < m {
                    seq!(e in 0..8 {
                        if e < v {
                            seq!(step in 0..5 {
                                if (16 >> step) >= KN_CHUNKS {
                                    acc[i][e] += shuffle_xor(acc[i][e], 16 >> step);
                                }
                            });
                            if lane < KN_CHUNKS {
                                let at = ((warp * KN_CHUNKS + chunk) * THIN_MAX + i) * MAX_CHUNK_ELEMENTS + e;
                                // SAFETY: inside KN_SHARED_BYTES.
                                unsafe { *partials.add(at as usize) = acc[i][e] };
                            }
                        }
                    });
                }
            });
            sync_threads();
            // Output o = (c, i, e), element e of chunk c in row i, is finished by thread
            // o mod THREADS (KN_OUTPUTS / THREADS of them each).
            seq!(pass in 0..2 {
                let output = thread + THREADS * pass;
                let (c, i, e) = (
                    output / (THIN_MAX * MAX_CHUNK_ELEMENTS),
                    output / MAX_CHUNK_ELEMENTS % THIN_MAX,
                    output % MAX_CHUNK_ELEMENTS,
                );
                let col = group * block_columns + c * v + e;
                if i < m && e < v && col < n {
                    let mut sum = 0.0f32;
                    seq!(w in 0..8 {
                        let at = ((w * KN_CHUNKS + c) * THIN_MAX + i) * MAX_CHUNK_ELEMENTS + e;
                        // SAFETY: inside KN_SHARED_BYTES, written before the barrier.
                        sum += unsafe { *partials.add(at as usize) };
                    });
                    // SAFETY: i < m and col < n.
                    unsafe { store_item::<E>(args, &target, i, col, sum) };
                }
            });
            // The partials are read before the next group's are written.
            sync_threads();
            group += grid_dim_x();
        }
        zz += grid_dim_z();
    }
}

/// [`column_slices`] with `SPLIT` as the arguments ask (each copy folds its choice of target
/// away, as the general kernels' split bodies do).
///
/// # Safety
/// As [`column_slices`].
#[inline(always)]
unsafe fn column_slices_entry<E: ThinElement>(args: &GemmArgs) {
    // SAFETY: the caller's contract; SPLIT is is_split(args).
    unsafe {
        if split_k::is_split(args) {
            column_slices::<E, true>(args)
        } else {
            column_slices::<E, false>(args)
        }
    }
}

/// Element `l` of A's rows `i < m` (batch item at byte address `a_item`, rows `lda_bytes`
/// apart), widened; zeros past k and past m.
///
/// # Safety
/// A must be readable as described.
#[inline(always)]
unsafe fn a_column<E: ThinElement>(
    a_item: u64,
    lda_bytes: u64,
    l: u32,
    m: u32,
    k: u32,
) -> [f32; 8] {
    let column = a_item + l as u64 * E::BYTES as u64;
    let mut values = [0.0f32; 8];
    seq!(i in 0..8 {
        if i < m && l < k {
            // SAFETY: element (i, l) of A, i < m and l < k.
            values[i] = unsafe { E::load_scalar(column + i * lda_bytes) };
        }
    });
    values
}

/// One row of a thread's chunk of B at byte address `row`, widened, at the edges of the
/// column-slices body: zeros when the row is past k (`inside` false); else 16 bytes when the
/// chunk is `whole`, else element by element up to column n.
///
/// # Safety
/// When `inside`, the row must be readable from column `first_col`, which is below n.
#[inline(always)]
unsafe fn edge_row<E: ThinElement>(
    row: u64,
    inside: bool,
    whole: bool,
    first_col: u32,
    n: u32,
) -> [f32; 8] {
    let mut b = [0.0f32; 8];
    if inside {
        if whole {
            // SAFETY: a whole, 16-byte-aligned chunk inside the row.
            b = E::widen(unsafe { load_streamed(row) });
        } else {
            seq!(e in 0..8 {
                if e < E::CHUNK && first_col + e < n {
                    // SAFETY: element first_col + e < n of the row.
                    b[e] = unsafe { E::load_scalar(row + e * E::BYTES as u64) };
                }
            });
        }
    }
    b
}

/// One entry point per family, element type and B layout.
macro_rules! thin_entry {
    ($name:ident, $what:literal, |$args:ident| $body:expr) => {
        thin_entry!(
            $name,
            $what,
            gemm_geometry::thin::MIN_BLOCKS_PER_SM,
            |$args| $body
        );
    };
    ($name:ident, $what:literal, $min_blocks:expr, |$args:ident| $body:expr) => {
        crate::launch_bounds!($name, gemm_geometry::thin::THREADS, $min_blocks);

        #[doc = concat!("Thin product, ", $what, ". Launch as the module documentation says.")]
        ///
        /// # Safety
        /// `args` must describe valid device matrices of the entry's element type, as
        /// [`GemmArgs`] defines them, with the thin dimension at most `THIN_MAX`; the launch
        /// must use the module's geometry for this entry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($args: GemmArgs) {
            let $args = &$args;
            // SAFETY: as this entry's contract.
            unsafe { $body }
        }
    };
}

/// The `thin_n` body for B `[k, n]`: one contiguous column (n = 1, ldb = 1) is read like a row
/// of B `[n, k]`; otherwise the columns are staged in shared memory.
///
/// # Safety
/// As [`dot_rows`].
#[inline(always)]
unsafe fn thin_n_kn<E: ThinElement>(args: &GemmArgs) {
    if args.n == 1 && args.ldb == 1 {
        unsafe { dot_rows_entry::<E, THIN_N_NK>(args) }
    } else {
        unsafe { dot_rows::<E, THIN_N_KN, DOT_ROWS_PER_WARP, THIN_MAX, DOT_LOADS_IN_FLIGHT>(args) }
    }
}

/// The dot-rows body of the 8-row entries with the small operand read from global memory
/// (`thin_m` and `thin_n` with B `[n, k]`, `thin_n` with one contiguous column of B `[k, n]`):
/// in f32, a small operand of at most [`GEMV_MAX_SMALL`] rows takes the matrix–vector path
/// ([`GEMV_LOADS_IN_FLIGHT`] loads per lane in flight), a branch uniform across the grid. The
/// fp16/bf16 entries, whose aligned calls run the tensor-core thin kernels, keep one body.
///
/// # Safety
/// As [`dot_rows`], with the thin dimension at most [`THIN_MAX`].
#[inline(always)]
unsafe fn dot_rows_entry<E: ThinElement, const KIND: u32>(args: &GemmArgs) {
    let small_count = if KIND == THIN_M_NK { args.m } else { args.n };
    if E::BYTES == 4 && small_count <= GEMV_MAX_SMALL {
        unsafe {
            dot_rows::<E, KIND, DOT_ROWS_PER_WARP, GEMV_MAX_SMALL, GEMV_LOADS_IN_FLIGHT>(args)
        }
    } else {
        unsafe { dot_rows::<E, KIND, DOT_ROWS_PER_WARP, THIN_MAX, DOT_LOADS_IN_FLIGHT>(args) }
    }
}

thin_entry!(
    gemm_thin_m_f32_kn,
    "m ≤ 8, f32, B [k, n]",
    kn_min_blocks_per_sm(4),
    |args| column_slices_entry::<f32>(args)
);
thin_entry!(
    gemm_thin_m_f16_kn,
    "m ≤ 8, fp16, B [k, n]",
    kn_min_blocks_per_sm(2),
    |args| column_slices_entry::<F16>(args)
);
thin_entry!(
    gemm_thin_m_bf16_kn,
    "m ≤ 8, bf16, B [k, n]",
    kn_min_blocks_per_sm(2),
    |args| column_slices_entry::<Bf16>(args)
);
thin_entry!(gemm_thin_m_f32_nk, "m ≤ 8, f32, B [n, k]", |args| {
    dot_rows_entry::<f32, THIN_M_NK>(args)
});
thin_entry!(gemm_thin_m_f16_nk, "m ≤ 8, fp16, B [n, k]", |args| {
    dot_rows_entry::<F16, THIN_M_NK>(args)
});
thin_entry!(gemm_thin_m_bf16_nk, "m ≤ 8, bf16, B [n, k]", |args| {
    dot_rows_entry::<Bf16, THIN_M_NK>(args)
});
thin_entry!(gemm_thin_m16_f32_nk, "8 < m ≤ 16, f32, B [n, k]", |args| {
    dot_rows::<f32, THIN_M_NK, WIDE_DOT_ROWS_PER_WARP, WIDE_MAX, DOT_LOADS_IN_FLIGHT>(args)
});
thin_entry!(gemm_thin_n_f32_kn, "n ≤ 8, f32, B [k, n]", |args| {
    thin_n_kn::<f32>(args)
});
thin_entry!(gemm_thin_n_f16_kn, "n ≤ 8, fp16, B [k, n]", |args| {
    thin_n_kn::<F16>(args)
});
thin_entry!(gemm_thin_n_bf16_kn, "n ≤ 8, bf16, B [k, n]", |args| {
    thin_n_kn::<Bf16>(args)
});
thin_entry!(gemm_thin_n_f32_nk, "n ≤ 8, f32, B [n, k]", |args| {
    dot_rows_entry::<f32, THIN_N_NK>(args)
});
thin_entry!(gemm_thin_n_f16_nk, "n ≤ 8, fp16, B [n, k]", |args| {
    dot_rows_entry::<F16, THIN_N_NK>(args)
});
thin_entry!(gemm_thin_n_bf16_nk, "n ≤ 8, bf16, B [n, k]", |args| {
    dot_rows_entry::<Bf16, THIN_N_NK>(args)
});
