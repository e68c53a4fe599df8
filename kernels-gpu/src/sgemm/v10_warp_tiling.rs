//! # v10 — warp tiling
//!
//! **Idea.** Add a level between the block and the thread: the 128×128 block tile is split into
//! 2×4 warp tiles of 64×32, and inside a warp the 32 lanes sit as 8 rows × 4 columns. Each
//! lane still owns 8×8 outputs, but as 2×2 sub-tiles of 4×4 spaced 32 rows and 16 columns apart
//! instead of one contiguous 8×8 block. The kernel is generic over the block tile
//! (`BLOCK_TILE_M`, `BLOCK_TILE_N`, `TILE_K`), which is what the autotuned rung (v11) searches.
//!
//! **Fixes.** Bank conflicts. In v7–v9 a quarter-warp's eight B vectors were 32 bytes apart
//! and collided 2-way. Here the lanes of a quarter-warp (2 lane rows × 4 lane columns) read 2
//! consecutive A vectors and 4 consecutive B vectors: distinct banks or broadcasts, no
//! conflict. The transposed A tile gets 4 floats of padding per row, so the transposing stores
//! of the two k halves land in different banks too. A warp's loads also cover a compact 64×32
//! region, so each vector it reads serves more of its lanes. It keeps v8's double buffering and
//! v9's grouped order.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 41.9 TFLOP/s, 80.5% of cuBLAS
//! (42.3 TFLOP/s, 81.8%, at 8192³).
//!
//! Launch ([`gemm_geometry::v10`]): (BLOCK_TILE_M/64)·(BLOCK_TILE_N/(4·THREAD_TILE_N))·32
//! threads (1-D; 256 for v10's 128×128×8 tile), grid ⌈m/BLOCK_TILE_M⌉·⌈n/BLOCK_TILE_N⌉ (1-D),
//! `2·TILE_K·(BLOCK_TILE_M + 4 + BLOCK_TILE_N)·4` bytes of dynamic shared memory.

use super::v07_transposed_a::join8;
use crate::device::{
    at, load4_or_zero, outer_product, read4, shared_f32, store4_or_partial, sync_threads, thread_x,
    write4,
};
use crate::ladder_epilogue::Epilogue;
use crate::tile_order::grouped_block_origin;
use core::simd::f32x4;
use gemm_geometry::v10::{
    A_PADDING, LANE_COLS, MIN_BLOCKS_PER_SM, TILE, WARP_TILE_M, stage_floats, threads, warp_tile_n,
};
use seq_macro::seq;

/// Most float4s one thread stages per operand per step; bounds the register arrays.
const MAX_LOADS: usize = 4;

/// Whether v10's tile (and v12's) issues the next stage's global loads halfway through a
/// stage's k steps rather than before them ([`warp_tiled`]'s `LOADS_MIDWAY`). Not on sm_90a,
/// the build the ladder was measured with. In the portable build, yes: issued first, ptxas
/// 13.0 for sm_120 cannot fit the kernel into the 128 registers that 2 blocks of 256 threads per
/// SM leave (it spills 12 bytes); issued midway, it fits on every architecture of that build
/// without spilling, and the loads still have 4 k steps (256 fmas per lane) to arrive in.
pub const LOADS_MIDWAY: bool = cfg!(not(target_feature = "sm_90a"));

crate::launch_bounds!(sgemm_v10_warp_tiling, TILE.threads(), MIN_BLOCKS_PER_SM);

/// v10: warp-tiled, double-buffered, grouped, 128×128 block tiles 8 deep.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v10_warp_tiling(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe {
        warp_tiled::<
            { TILE.block_tile_m },
            { TILE.block_tile_n },
            { TILE.tile_k },
            { TILE.thread_tile_n as usize },
            LOADS_MIDWAY,
        >(a, b, c, m, n, k, &Epilogue::STORE)
    };
}

/// The warp-tiled GEMM for any block tile whose sides are multiples of the warp tile and whose
/// depth is a multiple of 8, as long as each thread stages at most 4 float4s per operand. Each
/// lane owns 8 rows × `THREAD_TILE_N` columns (8 or 16) of C. The next stage's global loads
/// are issued before the stage's k steps, or, with `LOADS_MIDWAY`, after the first half of them
/// (fewer registers live at once, less time to hide the loads' latency).
///
/// # Safety
/// Called from a ladder entry that upholds [the ladder's launch
/// contract](crate::sgemm#the-ladders-launch-contract) with this tile's launch (threads, 1-D
/// grouped grid, dynamic shared memory as the module documentation says), `a`, `b`, `c` 16-byte
/// aligned, and `epilogue` reading C only if `c` is readable; every thread of the block calls it
/// (it contains barriers).
#[inline(always)]
pub unsafe fn warp_tiled<
    const BLOCK_TILE_M: u32,
    const BLOCK_TILE_N: u32,
    const TILE_K: u32,
    const THREAD_TILE_N: usize,
    const LOADS_MIDWAY: bool,
>(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    epilogue: &Epilogue,
) {
    let block_threads = const { threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32) };
    let a_loads = const {
        (BLOCK_TILE_M * TILE_K / 4 / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32))
            as usize
    };
    let b_loads = const {
        (BLOCK_TILE_N * TILE_K / 4 / threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32))
            as usize
    };
    const {
        assert!(THREAD_TILE_N == 8 || THREAD_TILE_N == 16);
        assert!(
            BLOCK_TILE_M.is_multiple_of(WARP_TILE_M)
                && BLOCK_TILE_N.is_multiple_of(warp_tile_n(THREAD_TILE_N as u32))
        );
        assert!(TILE_K.is_multiple_of(8));
        assert!(!LOADS_MIDWAY || (TILE_K / 2).is_multiple_of(4));
        let t = threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32);
        assert!(
            (BLOCK_TILE_M * TILE_K).is_multiple_of(4 * t)
                && (BLOCK_TILE_N * TILE_K).is_multiple_of(4 * t)
        );
        assert!((BLOCK_TILE_M * TILE_K / 4 / t) as usize <= MAX_LOADS);
        assert!((BLOCK_TILE_N * TILE_K / 4 / t) as usize <= MAX_LOADS);
    }
    let a_stride = BLOCK_TILE_M + A_PADDING;

    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let thread = thread_x();
    let (row0, col0) = lane_origin(thread, BLOCK_TILE_N, THREAD_TILE_N);

    let stages = shared_f32();
    let stage = |s: u32| {
        let a_tile =
            unsafe { stages.add((s * stage_floats(BLOCK_TILE_M, BLOCK_TILE_N, TILE_K)) as usize) };
        (a_tile, unsafe { a_tile.add((TILE_K * a_stride) as usize) })
    };

    // Global → registers: float4 number `thread + i·threads` of each tile. The loops are
    // unrolled over all MAX_LOADS slots so that every index is a constant (slots past the
    // tile's count fold away); a run-time index would move the arrays to local memory.
    let fetch = |tile_k: u32| {
        let mut a4 = [f32x4::splat(0.0); MAX_LOADS];
        let mut b4 = [f32x4::splat(0.0); MAX_LOADS];
        seq!(i in 0..4 {
            if i < a_loads {
                let index = thread + i as u32 * block_threads;
                let (row, col) = (index / (TILE_K / 4), index % (TILE_K / 4) * 4);
                a4[i] = unsafe { load4_or_zero(a, m, k, first_row + row, tile_k + col) };
            }
            if i < b_loads {
                let index = thread + i as u32 * block_threads;
                let (row, col) = (index / (BLOCK_TILE_N / 4), index % (BLOCK_TILE_N / 4) * 4);
                b4[i] = unsafe { load4_or_zero(b, k, n, tile_k + row, first_col + col) };
            }
        });
        (a4, b4)
    };
    // Registers → shared: A transposed into its padded rows, B as it is.
    let stash = |(a4, b4): ([f32x4; MAX_LOADS], [f32x4; MAX_LOADS]), s: u32| {
        let (a_tile, b_tile) = stage(s);
        seq!(i in 0..4 {
            if i < a_loads {
                let index = thread + i as u32 * block_threads;
                let (row, col) = (index / (TILE_K / 4), index % (TILE_K / 4) * 4);
                seq!(q in 0..4 {
                    unsafe { *a_tile.add(at(col + q, row, a_stride)) = a4[i][q] };
                });
            }
            if i < b_loads {
                let index = thread + i as u32 * block_threads;
                let (row, col) = (index / (BLOCK_TILE_N / 4), index % (BLOCK_TILE_N / 4) * 4);
                unsafe { write4(b_tile.add(at(row, col, BLOCK_TILE_N)), b4[i]) };
            }
        });
    };

    stash(fetch(0), 0);
    sync_threads();
    let mut acc = [[0.0f32; THREAD_TILE_N]; 8];
    let steps = k.div_ceil(TILE_K);
    for step in 0..steps {
        let has_next = step + 1 < steps;
        if LOADS_MIDWAY {
            let (a_tile, b_tile) = stage(step % 2);
            let mut kk = 0;
            while kk < TILE_K / 2 {
                unsafe {
                    multiply_steps::<BLOCK_TILE_N, THREAD_TILE_N, 4>(
                        &mut acc, a_tile, b_tile, a_stride, kk, row0, col0,
                    )
                };
                kk += 4;
            }
        }
        let next = if has_next {
            Some(fetch((step + 1) * TILE_K))
        } else {
            None
        };
        let (a_tile, b_tile) = stage(step % 2);
        if LOADS_MIDWAY {
            let mut kk = TILE_K / 2;
            while kk < TILE_K {
                unsafe {
                    multiply_steps::<BLOCK_TILE_N, THREAD_TILE_N, 4>(
                        &mut acc, a_tile, b_tile, a_stride, kk, row0, col0,
                    )
                };
                kk += 4;
            }
        } else {
            let mut kk = 0;
            while kk < TILE_K {
                unsafe {
                    multiply_eight::<BLOCK_TILE_N, THREAD_TILE_N>(
                        &mut acc, a_tile, b_tile, a_stride, kk, row0, col0,
                    )
                };
                kk += 8;
            }
        }
        if let Some(fetched) = next {
            stash(fetched, (step + 1) % 2);
        }
        sync_threads();
    }

    unsafe { store_warp_tile(&acc, c, m, n, first_row + row0, first_col + col0, epilogue) };
}

/// Top-left corner, inside the block tile, of the first 4×4 sub-tile of thread `thread`: warps
/// tile the block as 64 × `warp_tile_n` tiles, lanes sit 8 rows × 4 columns inside them; the
/// lane's other sub-tiles are 32 rows and 16 columns on. Shared by v13.
#[inline(always)]
pub fn lane_origin(thread: u32, block_tile_n: u32, thread_tile_n: usize) -> (u32, u32) {
    const _: () = assert!(WARP_TILE_M == 8 * 8 && LANE_COLS == 32 / 8);
    lane_origin_in::<8>(thread, block_tile_n, thread_tile_n)
}

/// [`lane_origin`] for warps whose lanes sit `LANE_ROWS` rows × `32 / LANE_ROWS` columns
/// (v10's own: 8 × 4; v13's 32-row variant: 4 × 8): warp tiles of `8·LANE_ROWS` rows ×
/// `(32 / LANE_ROWS)·thread_tile_n` columns, the lane's other sub-tiles `4·LANE_ROWS` rows and
/// `4·(32 / LANE_ROWS)` columns on. Shared by v13.
#[inline(always)]
pub fn lane_origin_in<const LANE_ROWS: u32>(
    thread: u32,
    block_tile_n: u32,
    thread_tile_n: usize,
) -> (u32, u32) {
    let lane_cols = const { 32 / LANE_ROWS };
    let (warp, lane) = (thread / 32, thread % 32);
    let warp_tile_n = lane_cols * thread_tile_n as u32;
    let warps_n = block_tile_n / warp_tile_n;
    (
        (warp / warps_n) * (8 * LANE_ROWS) + (lane / lane_cols) * 4,
        (warp % warps_n) * warp_tile_n + (lane % lane_cols) * 4,
    )
}

/// Eight steps of k (`kk..kk + 8`) of a lane's outer products: [`multiply_steps`] with 8.
/// Shared by v13, which changes only how the tiles get into shared memory.
///
/// # Safety
/// As [`multiply_steps`], for k steps `kk..kk + 8`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn multiply_eight<const BLOCK_TILE_N: u32, const THREAD_TILE_N: usize>(
    acc: &mut [[f32; THREAD_TILE_N]; 8],
    a_tile: *const f32,
    b_tile: *const f32,
    a_stride: u32,
    kk: u32,
    row0: u32,
    col0: u32,
) {
    unsafe {
        multiply_steps::<BLOCK_TILE_N, THREAD_TILE_N, 8>(
            acc, a_tile, b_tile, a_stride, kk, row0, col0,
        )
    };
}

/// `STEPS` steps of k (`kk..kk + STEPS`, at most 8) of a lane's outer products from one staged
/// pair of tiles: per step, 2 vector reads of the transposed A tile (rows `row0..+4` and
/// `row0 + 32..+4`), `THREAD_TILE_N / 4` of the B tile (columns `col0 + 16·s..+4`), and
/// `8 × THREAD_TILE_N` fmas.
///
/// # Safety
/// `a_tile` (transposed, rows of `a_stride` floats) and `b_tile` (rows of `BLOCK_TILE_N` floats)
/// must be 16-byte-aligned staged tiles in shared memory, written before a barrier, holding k steps
/// `kk..kk + STEPS` and the rows/columns `row0`, `col0` reach.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn multiply_steps<
    const BLOCK_TILE_N: u32,
    const THREAD_TILE_N: usize,
    const STEPS: u32,
>(
    acc: &mut [[f32; THREAD_TILE_N]; 8],
    a_tile: *const f32,
    b_tile: *const f32,
    a_stride: u32,
    kk: u32,
    row0: u32,
    col0: u32,
) {
    unsafe {
        multiply_lane_steps::<BLOCK_TILE_N, THREAD_TILE_N, STEPS, 8>(
            acc, a_tile, b_tile, a_stride, kk, row0, col0,
        )
    };
}

/// [`multiply_steps`] for lanes laid out as [`lane_origin_in`]`::<LANE_ROWS>` places them: the
/// A reads are `4·LANE_ROWS` rows apart, the B reads `4·(32 / LANE_ROWS)` columns apart.
///
/// # Safety
/// As [`multiply_steps`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn multiply_lane_steps<
    const BLOCK_TILE_N: u32,
    const THREAD_TILE_N: usize,
    const STEPS: u32,
    const LANE_ROWS: u32,
>(
    acc: &mut [[f32; THREAD_TILE_N]; 8],
    a_tile: *const f32,
    b_tile: *const f32,
    a_stride: u32,
    kk: u32,
    row0: u32,
    col0: u32,
) {
    let sub_tiles_n = const {
        assert!(STEPS <= 8);
        THREAD_TILE_N / 4
    };
    let (row_gap, col_gap) = const { (4 * LANE_ROWS as usize, 4 * (32 / LANE_ROWS) as usize) };
    seq!(u in 0..8 {
        if u < STEPS {
        let a_row = unsafe { a_tile.add(at(kk + u, row0, a_stride)) };
        let b_row = unsafe { b_tile.add(at(kk + u, col0, BLOCK_TILE_N)) };
        let a_frag = unsafe { join8(read4(a_row), read4(a_row.add(row_gap))) };
        let mut b_frag = [0.0f32; THREAD_TILE_N];
        seq!(s in 0..4 {
            if s < sub_tiles_n {
                let part = unsafe { read4(b_row.add(col_gap * s)) };
                seq!(q in 0..4 { b_frag[4 * s + q] = part[q]; });
            }
        });
        outer_product(acc, &a_frag, &b_frag);
        }
    });
}

/// Applies `epilogue` to a lane's accumulators and writes them to C, whose element
/// (`row`, `col`) is the lane's first: `acc[i][j]` goes to row `row + (i / 4)·32 + i % 4`,
/// column `col + (j / 4)·16 + j % 4`. Shared by v13.
///
/// # Safety
/// `c` must point to a writable row-major `m × n` f32 matrix, 16-byte aligned (readable too if
/// `epilogue` reads C); only elements inside it are written.
#[inline(always)]
pub unsafe fn store_warp_tile<const THREAD_TILE_N: usize>(
    acc: &[[f32; THREAD_TILE_N]; 8],
    c: *mut f32,
    m: u32,
    n: u32,
    row: u32,
    col: u32,
    epilogue: &Epilogue,
) {
    let sub_tiles_n = const { THREAD_TILE_N / 4 };
    seq!(i in 0..8 {
        let r = row + (i / 4) * 32 + i % 4;
        let values = &acc[i];
        seq!(s in 0..4 {
            if s < sub_tiles_n {
                let cc = col + 16 * s as u32;
                let part = f32x4::from_array([values[4 * s], values[4 * s + 1], values[4 * s + 2], values[4 * s + 3]]);
                let part = epilogue.apply(part, || unsafe { load4_or_zero(c, m, n, r, cc) });
                unsafe { store4_or_partial(c, m, n, r, cc, part) };
            }
        });
    });
}
