//! Thin products on tensor cores, fp16 and bf16: C has at most [`THIN_MAX`] rows (`thin_m`)
//! or columns (`thin_n`), and every row of every operand starts on a 16-byte boundary (the
//! host's dispatch checks it; other calls run the FMA kernels of [`crate::thin`]).
//!
//! Why: the FMA kernels widen every streamed element to f32 and spend one FMA on it per row of
//! the small operand, so at 8 rows they are bound by arithmetic and registers, not by DRAM
//! (13–44% of the copy bandwidth on the H100 at m = 8, against 36–81% at m = 1). Here one
//! `mma.sync` m16n8k16 multiplies 16 streamed rows by all 8 small rows at once: 8 rows cost
//! what one costs, the tensor cores run at a few percent of their rate, and each thread keeps
//! its registers for loads in flight.
//!
//! Two bodies, numbers in [`gemm_geometry::thin`] (the host reads them too), and a wide
//! variant of the first:
//!
//! * **dot rows** (`thin_m` with B `[n, k]`, `thin_n` with B `[n, k]`): the streamed rows are
//!   contiguous along k (B's rows for `thin_m`, A's for `thin_n`), and so are the small
//!   operand's. The `mma`'s A operand is 16 streamed rows, its B operand the 8 small rows
//!   (both K-major, as `mma.sync`'s `row.col` wants them), its 16×8 result the tile of C (of
//!   Cᵀ for `thin_m`). Lane `(g, q)` (`g = lane / 4`, `q = lane % 4`) loads 16 bytes, elements
//!   `8q .. 8q + 8` of the step's 32, of streamed rows `g` and `g + 8` and of small row `g`, and
//!   feeds them to two `mma`s as they are: the fragment layout wants elements `2q, 2q + 1` and
//!   `2q + 8, 2q + 9` of a 16-wide slice of k, and since a dot product does not care in which
//!   order k is walked, the `mma`s are simply told that the lane's first two words are those
//!   elements and its last two the next `mma`'s. Both operands are relabelled the same way, so
//!   the sum is the same, with no shuffle and full 16-byte loads.
//! * **wide dot rows** (`thin_m16_mma`: `thin_m` with B `[n, k]` and m ≤ [`WIDE_MAX`]):
//!   the same with two n8 tiles of small rows, rows `g` and `g + 8` of A per lane, four `mma`s
//!   per step. Separate entries, so that their registers are allocated apart from the 8-row
//!   ones; their small rows are read just before each step rather than with the streamed
//!   loads (in flight with them, they spilled). At the H100's m = 16 LLM layers they run at
//!   1.03–1.31× cuBLAS, where v18 ran at 0.68–1.04× (`docs/results/thin-m16`). There is no
//!   wide column body: with all 16 rows of A in the `mma` it spilled at four steps in flight
//!   and ran below v18 at two.
//! * **column tiles** (`thin_m` with B `[k, n]`): B's rows are contiguous along n, so a lane's
//!   16-byte load holds 8 columns of one row of k, where the `mma` wants 2 rows of k of one
//!   column. Each warp stores its step of B (16 rows × 32 columns) to its own 1 KiB of shared
//!   memory, XOR-swizzled so that neither the stores nor the reads conflict, and reads the B
//!   fragments back with `ldmatrix.trans`; A's rows give the A fragment (rows 8–15 zero). The
//!   result's first 8 rows are C's rows, and lane `(g, q)` holds columns `8j + 2q, 8j + 2q + 1`
//!   of row `g` in n-tile `j`. Where n is large, 2 or 4 warps of a block sit side by side
//!   along n ([`kn_column_warps`], which the kernel reads back from its grid), so that a block
//!   reads 128 or 256 bytes of each row of B instead of 64: at n = 28672 and 57344 that took
//!   B from 65–82% to 85–92% of the copy bandwidth (`docs/results/thin-kn-wide`).
//!
//! In both, a block's [`MMA_WARPS`] warps work on the same tile of C (of one column warp's 32
//! columns, in the column body), warp `w` on steps `w, w + 8, w + 16, …` of k (`w / c`, in
//! steps of `8 / c`, with `c` column warps), so the block reads long runs of each row, each with
//! [`MMA_DOT_UNROLL`] or [`MMA_KN_UNROLL`] steps of loads in flight. At the end, the warps'
//! partial tiles go to shared memory and are added in warp order: no atomics, results
//! bit-identical from run to run. Only the column body sums across blocks, and only under
//! split-K (slices of k along grid z, raw sums into the workspace, the reduction kernel of
//! [`crate::split_k`] adding them in a fixed order). The last, partial step of k is read element
//! by element with zeros past k (zeros in both operands: 0 · 0 adds nothing). Lanes past the
//! small operand's rows, or past the streamed operand's, read its last row instead: those
//! lanes only produce rows or columns of the tile that are never stored.
//!
//! Launch: [`MMA_THREADS`] threads (1-D); grid x = ⌈big / per block⌉ ([`MMA_DOT_ROWS`]
//! streamed rows, or [`MMA_KN_COLUMNS`] columns of C), y = 1, z = min(batch, 65 535) (the
//! column body under split-K: min(splits·batch, 65 535)) (a block walks x and z in grid-sized
//! steps); dynamic shared memory [`MMA_DOT_SHARED_BYTES`] or
//! [`MMA_KN_SHARED_BYTES`]. Preconditions: `m, n, k, batch ≥ 1`; the thin dimension at most
//! [`THIN_MAX`]; A's, B's and C's base addresses multiples of 16 bytes, their leading
//! dimensions and (with batch > 1) batch strides multiples of 8 elements.

use crate::device::{
    block_x, block_z, grid_dim_x, grid_dim_z, shared_address, shared_f32, store_shared_16,
    sync_threads, sync_warp, thread_x,
};
use crate::element::{Bf16, F16};
use crate::split_k;
use crate::tensor_core::{HalfElement, load_matrix_x4_transposed};
use crate::thin::{load_b16, load_cached, load_streamed, store, store_item};
use core::arch::asm;
use gemm_geometry::GemmArgs;
use gemm_geometry::thin::{
    MMA_DOT_ROWS, MMA_DOT_STEP_K, MMA_DOT_UNROLL, MMA_KN_COLUMNS, MMA_KN_STAGE_BYTES,
    MMA_KN_STEP_K, MMA_KN_UNROLL, MMA_THREADS, MMA_WARPS, THIN_MAX, WIDE_MAX,
    kn_column_warps_of_grid,
};
use seq_macro::seq;

#[cfg(doc)]
use gemm_geometry::thin::{MMA_DOT_SHARED_BYTES, MMA_KN_SHARED_BYTES, kn_column_warps};

// The bodies below are unrolled for exactly these numbers.
const _: () = assert!(MMA_DOT_UNROLL == 4 && MMA_KN_UNROLL == 4 && MMA_WARPS == 8);
const _: () = assert!(MMA_DOT_STEP_K == 32 && MMA_KN_STEP_K == 16 && MMA_KN_COLUMNS == 32);
const _: () = assert!(WIDE_MAX == 2 * THIN_MAX && MMA_THREADS == 256);

/// Bytes of one fp16 or bf16 element.
const BYTES: u64 = 2;

/// The 32 bits at the global address `at`, through the read-only path (cached in L1: the
/// small operand, which every warp of the SM reads).
///
/// # Safety
/// `at` must be a 4-byte-aligned global address of 4 bytes that no one writes during the
/// kernel.
#[inline(always)]
unsafe fn load_cached_u32(at: u64) -> u32 {
    let value: u32;
    // SAFETY: as the caller promises. Not `pure`: the load must stay under its guard.
    unsafe {
        asm!(
            "ld.global.nc.b32 {v}, [{at}];",
            v = out(reg32) value, at = in(reg64) at,
            options(readonly, nostack),
        )
    };
    value
}

/// The first `count` (at most 2 used) 16-bit elements at the global address `at`, packed low
/// first, zeros after them.
///
/// # Safety
/// The first `min(count, 2)` elements at `at` must be readable, 2-byte aligned, unwritten
/// during the kernel.
#[inline(always)]
unsafe fn pair_prefix(at: u64, count: u32) -> u32 {
    // SAFETY: element 0 exists when count ≥ 1, element 1 when count ≥ 2.
    let low = if count > 0 {
        unsafe { load_b16(at) as u32 }
    } else {
        0
    };
    let high = if count > 1 {
        unsafe { load_b16(at + BYTES) as u32 }
    } else {
        0
    };
    low | high << 16
}

/// The first `count` (at most 8 used) 16-bit elements at the global address `at`, as the 4
/// words a 16-byte load would give, zeros after them.
///
/// # Safety
/// As [`pair_prefix`], for the first `min(count, 8)` elements.
#[inline(always)]
unsafe fn chunk_prefix(at: u64, count: u32) -> [u32; 4] {
    let mut out = [0u32; 4];
    seq!(i in 0..4 {
        // SAFETY: elements 2i, 2i + 1 exist where count exceeds them.
        out[i] = unsafe { pair_prefix(at + 2 * i as u64 * BYTES, count.saturating_sub(2 * i)) };
    });
    out
}

/// One dot-rows step: the lane's 16 bytes of its two streamed rows (`big`) and of its small
/// rows (`small`, one per n8 tile) as m16n8k16 `mma`s, the first half on words 0–1 and the
/// second on words 2–3 (each half into its own accumulators, so that the two do not wait on
/// each other).
#[inline(always)]
fn dot_step<E: HalfElement, const TILES: usize>(
    acc: &mut [[[f32; 4]; TILES]; 2],
    big: &[[u32; 4]; 2],
    small: &[[u32; 4]; TILES],
) {
    seq!(h in 0..2 {
        let a = [big[0][2 * h], big[1][2 * h], big[0][2 * h + 1], big[1][2 * h + 1]];
        for t in 0..TILES {
            E::mma_m16n8k16(&mut acc[h][t], &a, &[small[t][2 * h], small[t][2 * h + 1]]);
        }
    });
}

/// The dot-rows body (see the module documentation): `thin_m` with B `[n, k]` (`THIN_M`) or
/// `thin_n` with B `[n, k]`, with `TILES` n8 tiles of small rows (1: at most [`THIN_MAX`], 2:
/// at most [`WIDE_MAX`]).
///
/// # Safety
/// As the module's preconditions: `args` must describe readable A, B (and C when beta ≠ 0)
/// and writable C of element type `E`, with at most `8 · TILES` small rows; the launch must be
/// the module's for the entry.
#[inline(always)]
unsafe fn dot_rows<E: HalfElement, const THIN_M: bool, const TILES: usize>(args: &GemmArgs) {
    let thread = thread_x();
    let (lane, warp) = (thread % 32, thread / 32);
    let (g, q) = (lane / 4, lane % 4);
    // The streamed ("big") operand and the small one.
    let (big_count, small_count) = if THIN_M {
        (args.n, args.m)
    } else {
        (args.m, args.n)
    };
    let (big_base, big_ld, big_stride) = if THIN_M {
        (args.b, args.ldb, args.stride_b)
    } else {
        (args.a, args.lda, args.stride_a)
    };
    let (small_base, small_ld, small_stride) = if THIN_M {
        (args.a, args.lda, args.stride_a)
    } else {
        (args.b, args.ldb, args.stride_b)
    };
    let k = args.k;
    let full_steps = k / MMA_DOT_STEP_K;
    let groups = big_count.div_ceil(MMA_DOT_ROWS);
    // Lane (g, q) reads small row g of each n8 tile; lanes past the small rows read the last
    // one: their columns of the tile are not stored.
    let small_row = |t: usize| {
        let row = g + 8 * t as u32;
        if row < small_count {
            row
        } else {
            small_count - 1
        }
    };
    let step_bytes = MMA_DOT_STEP_K as u64 * BYTES;
    let lane_bytes = q as u64 * 8 * BYTES;
    // Columns of the block's tile (small rows it can hold).
    let span = 8 * TILES as u32;
    let partials = shared_f32();

    let mut z = block_z();
    while z < args.batch {
        // Byte addresses of batch item z (64-bit: z · stride may exceed 2³²).
        let big_item = big_base + z as u64 * big_stride * BYTES;
        let small_item = small_base + z as u64 * small_stride * BYTES;
        let c_item = args.c + z as u64 * args.stride_c * BYTES;
        let mut small_start = [0u64; TILES];
        for t in 0..TILES {
            small_start[t] = small_item + small_row(t) as u64 * small_ld as u64 * BYTES;
        }
        let mut group = block_x();
        while group < groups {
            // < big_count + 16 ≤ 2³¹ + 15: no wrap.
            let first = group * MMA_DOT_ROWS;
            // Lanes past the streamed rows read the last one: their rows are not stored.
            let row_start = |r: u32| {
                let row = if first + r < big_count {
                    first + r
                } else {
                    big_count - 1
                };
                big_item + row as u64 * big_ld as u64 * BYTES
            };
            let rows = [row_start(g), row_start(g + 8)];
            // The lane's 16 bytes at `offset` of its streamed rows, and of its small rows (one
            // chunk per n8 tile).
            let load_big = |offset: u64| {
                // SAFETY: a whole step of k inside each row, 16-byte aligned (the callers pass
                // only whole steps; the module's preconditions).
                unsafe {
                    [
                        load_streamed(rows[0] + offset),
                        load_streamed(rows[1] + offset),
                    ]
                }
            };
            let load_small = |offset: u64| {
                let mut small = [[0u32; 4]; TILES];
                for t in 0..TILES {
                    // SAFETY: as `load_big`.
                    small[t] = unsafe { load_cached(small_start[t] + offset) };
                }
                small
            };
            let mut acc = [[[0.0f32; 4]; TILES]; 2];
            let mut step = warp;
            while step + MMA_WARPS * (MMA_DOT_UNROLL - 1) < full_steps {
                // Every streamed load of the group goes out before any is used. One tile of
                // small rows is loaded with them; two are read just before their step (L1
                // hits), so that they hold no registers across the group: in flight with the
                // streamed loads, they made the 16-row kernels spill.
                let mut big = [[[0u32; 4]; 2]; 4];
                let mut small = [[[0u32; 4]; TILES]; 4];
                seq!(u in 0..4 {
                    let offset = (step + MMA_WARPS * u) as u64 * step_bytes + lane_bytes;
                    big[u] = load_big(offset);
                    if TILES == 1 {
                        small[u] = load_small(offset);
                    }
                });
                seq!(u in 0..4 {
                    if TILES > 1 {
                        small[u] = load_small((step + MMA_WARPS * u) as u64 * step_bytes + lane_bytes);
                    }
                    dot_step::<E, TILES>(&mut acc, &big[u], &small[u]);
                });
                step += MMA_WARPS * MMA_DOT_UNROLL;
            }
            while step < full_steps {
                let offset = step as u64 * step_bytes + lane_bytes;
                let big = load_big(offset);
                dot_step::<E, TILES>(&mut acc, &big, &load_small(offset));
                step += MMA_WARPS;
            }
            if step == full_steps && !k.is_multiple_of(MMA_DOT_STEP_K) {
                // The partial last step: this warp's, element by element.
                let index = step * MMA_DOT_STEP_K + q * 8;
                let offset = index as u64 * BYTES;
                let count = k.saturating_sub(index);
                let mut small = [[0u32; 4]; TILES];
                // SAFETY: only elements below k of each row.
                let big = unsafe {
                    [
                        chunk_prefix(rows[0] + offset, count),
                        chunk_prefix(rows[1] + offset, count),
                    ]
                };
                for t in 0..TILES {
                    // SAFETY: as above.
                    small[t] = unsafe { chunk_prefix(small_start[t] + offset, count) };
                }
                dot_step::<E, TILES>(&mut acc, &big, &small);
            }
            // Lane (g, q) holds rows g, g + 8 and columns 8t + 2q, 8t + 2q + 1 of the warp's
            // 16 × span tile.
            for t in 0..TILES {
                seq!(i in 0..4 {
                    let row = warp * MMA_DOT_ROWS + g + 8 * (i / 2);
                    let at = row * span + 8 * t as u32 + 2 * q + i % 2;
                    // SAFETY: inside the entry's dot-rows shared memory (16 × span per warp).
                    unsafe { *partials.add(at as usize) = acc[0][t][i] + acc[1][t][i] };
                });
            }
            sync_threads();
            // One output per thread; neighbouring threads store neighbouring elements of C.
            let (r, s) = if THIN_M {
                (thread % MMA_DOT_ROWS, thread / MMA_DOT_ROWS)
            } else {
                (thread / span, thread % span)
            };
            if thread < MMA_DOT_ROWS * span && first + r < big_count && s < small_count {
                let mut sum = 0.0f32;
                seq!(w in 0..8 {
                    let at = (w * MMA_DOT_ROWS + r) * span + s;
                    // SAFETY: inside MMA_DOT_SHARED_BYTES, written before the barrier.
                    sum += unsafe { *partials.add(at as usize) };
                });
                let (c_row, c_col) = if THIN_M {
                    (s, first + r)
                } else {
                    (first + r, s)
                };
                // SAFETY: c_row < m and c_col < n.
                unsafe { store::<E>(args, c_item, c_row, c_col, sum) };
            }
            // The partials are read before the next group's are written.
            sync_threads();
            group += grid_dim_x();
        }
        z += grid_dim_z();
    }
}

/// Byte offset of 16-byte chunk `chunk` (0–3) of row `row` in a warp's staging tile of the
/// column body: rows of 64 bytes, chunk XOR-ed with `(row / 2) % 4`, so that the 8 rows one
/// `ldmatrix` phase reads (one chunk of rows r … r + 7) and the 2 rows one store phase writes
/// fall in 8 different 16-byte bank groups.
#[inline(always)]
fn staged(row: u32, chunk: u32) -> u32 {
    row * (MMA_KN_STAGE_BYTES / MMA_KN_STEP_K) + (chunk ^ (row / 2 % 4)) * 16
}

/// Chunk `column .. column + 8` of B's row at byte address `at` (the chunk's start): one
/// 16-byte load when `whole`, else the columns below n element by element, zeros after.
///
/// # Safety
/// The row must be a row of B (k below k); when `whole`, the chunk lies inside it and `at` is
/// 16-byte aligned.
#[inline(always)]
unsafe fn b_chunk(at: u64, whole: bool, column: u32, n: u32) -> [u32; 4] {
    if whole {
        // SAFETY: as the caller promises.
        unsafe { load_streamed(at) }
    } else {
        // SAFETY: only columns below n.
        unsafe { chunk_prefix(at, n.saturating_sub(column)) }
    }
}

/// One column-body step: the lane's two chunks of B (rows g and g + 8 of the step) through
/// the warp's staging tile into B fragments, and four m16n8k16 `mma`s with A's rows.
///
/// # Safety
/// `store_at` and `load_at` must be this lane's addresses in this warp's staging tile (as
/// [`column_tiles`] computes them); every lane of the warp must call it together.
#[inline(always)]
unsafe fn column_step<E: HalfElement>(
    acc: &mut [[f32; 4]; 4],
    raw: &[[u32; 4]; 2],
    a: &[u32; 2],
    store_at: [u32; 2],
    load_at: [u32; 2],
) {
    // The warp's reads of the previous step are done before the tile is overwritten.
    sync_warp();
    // SAFETY: inside this warp's staging tile, 16-byte aligned.
    unsafe {
        store_shared_16(store_at[0], raw[0]);
        store_shared_16(store_at[1], raw[1]);
    }
    sync_warp();
    // SAFETY: the whole warp, each lane at a 16-byte row of the tile written above.
    let (low, high) = unsafe {
        (
            load_matrix_x4_transposed(load_at[0]),
            load_matrix_x4_transposed(load_at[1]),
        )
    };
    // A's rows 8–15 do not exist: zero.
    let a = [a[0], 0, a[1], 0];
    E::mma_m16n8k16(&mut acc[0], &a, &[low[0], low[1]]);
    E::mma_m16n8k16(&mut acc[1], &a, &[low[2], low[3]]);
    E::mma_m16n8k16(&mut acc[2], &a, &[high[0], high[1]]);
    E::mma_m16n8k16(&mut acc[3], &a, &[high[2], high[3]]);
}

/// The column body: `thin_m` with B `[k, n]` (see the module documentation).
///
/// Split-K ([`crate::split_k`]): with `args.splits > 1` the block walks the virtual items
/// (slices of k of every batch item) along grid z instead of the batch items and stores each
/// item's raw fp32 sums into the workspace, which the reduction kernel adds in a fixed order
/// and finishes. Where n has fewer column blocks than the device has block slots (n = 4096
/// and 8192: 128 blocks for the H100's and H200's 264 slots), the slices fill the SMs that
/// whole columns of k leave idle. `SPLIT` must be [`split_k::is_split`]`(args)`
/// ([`column_tiles_entry`] picks it).
///
/// # Safety
/// As [`dot_rows`]; under split-K the grid's z walks [`split_k::items`] and `args.workspace`
/// holds `splits·batch·m·n` fp32 (see [`crate::split_k`]).
#[inline(always)]
unsafe fn column_tiles<E: HalfElement, const SPLIT: bool>(args: &GemmArgs) {
    let thread = thread_x();
    let (lane, warp) = (thread % 32, thread / 32);
    let (g, q) = (lane / 4, lane % 4);
    let (m, n) = (args.m, args.n);
    // The block's warps: `column_warps` side by side along n (read from the grid the host
    // chose, `kn_column_warps`), each 32 columns wide; the `k_warps` in each column take
    // every `k_warps`-th step of k.
    let column_warps = kn_column_warps_of_grid(n, grid_dim_x());
    let k_warps = MMA_WARPS / column_warps;
    let (warp_column, warp_k) = (warp % column_warps, warp / column_warps);
    let block_columns = column_warps * MMA_KN_COLUMNS;
    let groups = n.div_ceil(block_columns);
    let ldb_bytes = args.ldb as u64 * BYTES;
    // Lanes past A's rows read the last one: their rows of the tile are not stored.
    let a_row = if g < m { g } else { m - 1 };
    let shared = shared_f32();
    // This warp's staging tile; the partial sums follow all of them.
    let stage = shared_address(shared) + warp * MMA_KN_STAGE_BYTES;
    // SAFETY: the partial sums start right after the staging tiles, inside the launch's
    // dynamic shared memory (MMA_KN_SHARED_BYTES).
    let partials = unsafe { shared.add((MMA_WARPS * MMA_KN_STAGE_BYTES / 4) as usize) };
    // This lane stores chunk q of rows g and g + 8; for `ldmatrix` it points at row lane % 16,
    // chunk lane / 16 (n-tiles 0 and 1), then chunk 2 + lane / 16 (n-tiles 2 and 3).
    let store_at = [stage + staged(g, q), stage + staged(g + 8, q)];
    let load_at = [
        stage + staged(lane % 16, lane / 16),
        stage + staged(lane % 16, 2 + lane / 16),
    ];

    let mut zz = block_z();
    while zz < split_k::items(args) {
        // The virtual item's A and B from its first row of k (a slice starts on a multiple of
        // 64 of k: A's rows keep their 16-byte alignment, B moves by whole rows), its length
        // of k, and where it writes (C, or its matrix of the workspace).
        let item = split_k::item_operands::<E, false, SPLIT>(args, zz);
        let target = split_k::item_target::<E, SPLIT>(args, zz);
        let (a_item, b_item, k) = (item.a as u64, item.b as u64, item.k);
        let full_steps = k / MMA_KN_STEP_K;
        let a_start = a_item + a_row as u64 * args.lda as u64 * BYTES;
        let mut group = block_x();
        while group < groups {
            // < n + 256 ≤ 2³¹ + 255: no wrap.
            let block_first_col = group * block_columns;
            let first_col = block_first_col + warp_column * MMA_KN_COLUMNS;
            let column = first_col + 8 * q;
            let whole = column + 8 <= n;
            // This lane's chunk in B's row 0 (read only where column < n).
            let b_lane = b_item + column as u64 * BYTES;
            let b_row = |row: u32| b_lane + row as u64 * ldb_bytes;
            let a_at = |index: u32| a_start + index as u64 * BYTES;
            let mut acc = [[0.0f32; 4]; 4];
            let mut step = warp_k;
            // Only the last block column can hold columns past n: the others take the
            // unrolled loop, with no element-by-element path in it to cost registers.
            let whole_block = first_col + MMA_KN_COLUMNS <= n;
            while whole_block && step + k_warps * (MMA_KN_UNROLL - 1) < full_steps {
                // Every load of the group goes out before any is used.
                let mut raw = [[[0u32; 4]; 2]; 4];
                let mut a = [[0u32; 2]; 4];
                seq!(u in 0..4 {
                    let k0 = (step + k_warps * u) * MMA_KN_STEP_K;
                    // SAFETY: rows k0 + g, k0 + 8 + g < k of B, whole 16-byte-aligned chunks
                    // (whole_block); elements k0 + 2q .. of A's row, 4-byte aligned (the
                    // module's preconditions).
                    unsafe {
                        raw[u] = [load_streamed(b_row(k0 + g)), load_streamed(b_row(k0 + 8 + g))];
                        a[u] = [load_cached_u32(a_at(k0 + 2 * q)), load_cached_u32(a_at(k0 + 8 + 2 * q))];
                    }
                });
                seq!(u in 0..4 {
                    // SAFETY: the lane's own addresses; the whole warp is here.
                    unsafe { column_step::<E>(&mut acc, &raw[u], &a[u], store_at, load_at) };
                });
                step += k_warps * MMA_KN_UNROLL;
            }
            while step < full_steps {
                let k0 = step * MMA_KN_STEP_K;
                // SAFETY: as above.
                unsafe {
                    let raw = [
                        b_chunk(b_row(k0 + g), whole, column, n),
                        b_chunk(b_row(k0 + 8 + g), whole, column, n),
                    ];
                    let a = [
                        load_cached_u32(a_at(k0 + 2 * q)),
                        load_cached_u32(a_at(k0 + 8 + 2 * q)),
                    ];
                    column_step::<E>(&mut acc, &raw, &a, store_at, load_at);
                }
                step += k_warps;
            }
            if step == full_steps && !k.is_multiple_of(MMA_KN_STEP_K) {
                // The partial last step: this warp's, rows and A's elements past k zero.
                let k0 = step * MMA_KN_STEP_K;
                let row = |r: u32| {
                    if r < k {
                        // SAFETY: row r < k of B.
                        unsafe { b_chunk(b_row(r), whole, column, n) }
                    } else {
                        [0; 4]
                    }
                };
                let raw = [row(k0 + g), row(k0 + 8 + g)];
                // SAFETY: only A's elements below k.
                let a = unsafe {
                    [
                        pair_prefix(a_at(k0 + 2 * q), k.saturating_sub(k0 + 2 * q)),
                        pair_prefix(a_at(k0 + 8 + 2 * q), k.saturating_sub(k0 + 8 + 2 * q)),
                    ]
                };
                // SAFETY: the lane's own addresses; the whole warp is here.
                unsafe { column_step::<E>(&mut acc, &raw, &a, store_at, load_at) };
            }
            // Lane (g, q) holds row g, columns 8j + 2q and 8j + 2q + 1 of n-tile j (rows
            // g + 8 of the `mma` tile are A's zero rows).
            seq!(j in 0..4 {
                seq!(e in 0..2 {
                    let at = (warp * THIN_MAX + g) * MMA_KN_COLUMNS + 8 * j + 2 * q + e;
                    // SAFETY: inside the partial sums of MMA_KN_SHARED_BYTES.
                    unsafe { *partials.add(at as usize) = acc[j][e] };
                });
            });
            sync_threads();
            // Thread t finishes outputs t, t + 256, … of the block's THIN_MAX × block_columns
            // tile (one with a single column warp), each the sum of its column's k warps in
            // warp order.
            let mut output = thread;
            while output < THIN_MAX * block_columns {
                let (r, c) = (output / block_columns, output % block_columns);
                let (column_warp, c_in_warp) = (c / MMA_KN_COLUMNS, c % MMA_KN_COLUMNS);
                if r < m && block_first_col + c < n {
                    let mut sum = 0.0f32;
                    let mut w = column_warp;
                    while w < MMA_WARPS {
                        // SAFETY: inside the partial sums, written before the barrier.
                        sum += unsafe {
                            *partials
                                .add(((w * THIN_MAX + r) * MMA_KN_COLUMNS + c_in_warp) as usize)
                        };
                        w += column_warps;
                    }
                    // SAFETY: r < m and block_first_col + c < n.
                    unsafe { store_item::<E>(args, &target, r, block_first_col + c, sum) };
                }
                output += MMA_THREADS;
            }
            // The partials are read before the next group's are written.
            sync_threads();
            group += grid_dim_x();
        }
        zz += grid_dim_z();
    }
}

/// [`column_tiles`] with `SPLIT` as the arguments ask (each copy folds its choice of target
/// away, as the general kernels' split bodies do).
///
/// # Safety
/// As [`column_tiles`].
#[inline(always)]
unsafe fn column_tiles_entry<E: HalfElement>(args: &GemmArgs) {
    // SAFETY: the caller's contract; SPLIT is is_split(args).
    unsafe {
        if split_k::is_split(args) {
            column_tiles::<E, true>(args)
        } else {
            column_tiles::<E, false>(args)
        }
    }
}

/// One entry point per family, element type and B layout.
macro_rules! thin_mma_entry {
    ($name:ident, $what:literal, |$args:ident| $body:expr) => {
        crate::launch_bounds!(
            $name,
            gemm_geometry::thin::MMA_THREADS,
            gemm_geometry::thin::MMA_MIN_BLOCKS_PER_SM
        );

        #[doc = concat!("Thin product on tensor cores, ", $what, ". Launch as the module documentation says.")]
        ///
        /// # Safety
        /// `args` must describe valid device matrices of the entry's element type, as
        /// [`GemmArgs`] defines them, with the thin dimension at most what the entry says and the
        /// module's 16-byte row alignment of A and B; the launch must use the module's
        /// geometry for this entry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($args: GemmArgs) {
            let $args = &$args;
            // SAFETY: as this entry's contract.
            unsafe { $body }
        }
    };
}

thin_mma_entry!(gemm_thin_m_mma_f16_nk, "m ≤ 8, fp16, B [n, k]", |args| {
    dot_rows::<F16, true, 1>(args)
});
thin_mma_entry!(gemm_thin_m_mma_bf16_nk, "m ≤ 8, bf16, B [n, k]", |args| {
    dot_rows::<Bf16, true, 1>(args)
});
thin_mma_entry!(gemm_thin_n_mma_f16_nk, "n ≤ 8, fp16, B [n, k]", |args| {
    dot_rows::<F16, false, 1>(args)
});
thin_mma_entry!(gemm_thin_n_mma_bf16_nk, "n ≤ 8, bf16, B [n, k]", |args| {
    dot_rows::<Bf16, false, 1>(args)
});
thin_mma_entry!(gemm_thin_m_mma_f16_kn, "m ≤ 8, fp16, B [k, n]", |args| {
    column_tiles_entry::<F16>(args)
});
thin_mma_entry!(gemm_thin_m_mma_bf16_kn, "m ≤ 8, bf16, B [k, n]", |args| {
    column_tiles_entry::<Bf16>(args)
});
thin_mma_entry!(
    gemm_thin_m16_mma_f16_nk,
    "m ≤ 16, fp16, B [n, k]",
    |args| dot_rows::<F16, true, 2>(args)
);
thin_mma_entry!(
    gemm_thin_m16_mma_bf16_nk,
    "m ≤ 16, bf16, B [n, k]",
    |args| dot_rows::<Bf16, true, 2>(args)
);
