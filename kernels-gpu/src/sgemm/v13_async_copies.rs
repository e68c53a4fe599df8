//! # v13 — `cp.async` multi-stage pipeline
//!
//! **Idea.** Copy the tiles from global to shared memory with `cp.async` (SASS `LDGSTS`): the
//! copy engine moves the bytes in the background, without the values ever passing through the
//! thread's registers, and `cp.async.wait_group` says when a group of copies has landed. With
//! no registers tied up in flight, the block keeps several steps of k in flight at once: four
//! stages here, three steps ahead of the math. The transposed A tile is written by 4-byte
//! copies straight into its transposed places, B by 16-byte copies. The compute and the store
//! are v10's (`multiply_eight`, `store_warp_tile`).
//!
//! **Fixes.** v10 could only look one step ahead: the next tile waited in registers between
//! its global load and its shared store, and at the 128-register budget that two blocks per SM
//! need there was no room for more. Here three steps of loads are always in flight behind the
//! math for the price of shared memory (4 stages × 16.3 KiB), not registers. And with no
//! registers holding loads, the tile can be 16 deep: 1024 FFMAs per barrier instead of 512.
//!
//! Per step: wait until this thread's copies of step t have landed, barrier (everyone's copies
//! of t are visible, and everyone has finished step t − 1, whose stage is now free), queue the
//! copies of step t + 3 into that stage, multiply step t. One barrier per step. Elements
//! outside A or B are copied as zeros (the copy's `ignore-src` predicate): ragged shapes need
//! no other code.
//!
//! **Keeping the copies cheap.** Each thread issues 10 copies per step (8 × 4 bytes of A,
//! 2 × 16 bytes of B), and at the 128-register cap every register and instruction they take
//! is felt. So a thread's copies sit one stride apart from a per-thread base (A: rows
//! `thread / 8 + 32·g`, k `thread % 8` and `+ 8`; B: rows `thread / 32 + 8·i`), and each
//! source address is one `mad.wide` from that base ([`byte_offset`]) rather than a 64-bit
//! pointer kept per copy; blocks wholly inside C skip the row and column checks, and only the
//! blocks on the bottom and right edges take the checked path. A warp's A copy covers 4 rows ×
//! 8 k, whose transposed places fall in 32 different banks.
//!
//! **How it got here** (H100, 4096³, % of cuBLAS): the first version (3 stages, 8 deep, a
//! `% 3` stage index, a generic-to-shared conversion per copy) ran *slower* than v10, 79.7%;
//! converting the shared base once, rotating stage counters and a fourth stage: 84.2%; the
//! cheap copies above: 80–83% at 8 deep (below the old 8-deep kernel), but 90–92% at 16 deep, where before they spilled
//! registers (Nsight Compute: the 16-deep kernel issues as many instructions as cuBLAS's and
//! loses the rest to barrier waits and dispatch stalls, see `docs/ladder.md`).
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 46.4 TFLOP/s, **89.2% of cuBLAS**
//! (52.0 TFLOP/s), the best fp32 rung (46.7 TFLOP/s, 90.3%, at 8192³; 92.1% at 8192×1024×4096
//! and 89.4% at 1024×8192×8192; at 1000³ 17.9 TFLOP/s where v10 does 11.8). In the previous
//! build's run it did 46.8 TFLOP/s, 90.9% of cuBLAS's 51.5: v13 lost 0.8% while cuBLAS gained
//! 1%. Between the two builds the ladder entry came to share its body with the library entries;
//! its main loop's instruction mix is unchanged (same FFMA/LDS/LDGSTS counts), registers
//! 125 → 128.
//!
//! Launch: 256 threads (1-D), grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped order), 4 stages of
//! `16·(128 + 4) + 16·128` floats = 66 560 bytes of dynamic shared memory. The numbers live in
//! [`gemm_geometry::v13`], where the host reads them too.
//!
//! **As a library kernel.** The same body serves [`gemm_v13_f32_kn`] (B stored `[k, n]`) and
//! [`gemm_v13_f32_nk`] (B stored `[n, k]`, `C = A·Bᵀ`), which take a [`GemmArgs`]: leading
//! dimensions, a batch along grid z, and the fused epilogue of [`crate::epilogue`] at the store.
//! An `[n, k]` B is copied the way A is, 4 bytes at a time into its transposed place, so its
//! shared tile is `[k][n]` as before and the math does not change; its rows are padded like
//! A's ([`gemm_geometry::v13::B_STRIDE_NK`]), without which a warp's transposing copies would
//! write 8 times into each of 4 banks. The 16-byte copies of a `[k, n]` B and the 16-byte
//! stores of C are taken only where the addresses allow them, decided at run time (per batch
//! item) from the arguments; elsewhere 4-byte copies and stores, so any leading dimension and
//! any 4-byte aligned base work.
//!
//! Both entries support split-K ([`crate::split_k`]): with `args.splits > 1` grid z walks the
//! slices of k of every batch item, and each block stores its tile's raw fp32 accumulators
//! into the workspace instead of C. The body is the same; only the item's A, B, k and target
//! differ.
//!
//! **Short-m variants** (library only, not rungs). With m ≤ 64 a 128-row tile is at least half
//! empty, and its empty rows' FFMAs (on the zeros the copies filled in) cost as much as the
//! full ones: at m = 16 and m = 64 the H100 ran v13 at the same time per layer, 0.26–0.83 of
//! cuBLAS. The body is generic over the block's rows, threads and warp shape, so the same
//! code also runs as `gemm_v13_m64_f32_{kn,nk}` (64 × 128 tiles, 4 warps of 64 × 32, four blocks
//! per SM) and `gemm_v13_m32_f32_{kn,nk}` (32 × 128 tiles, 2 warps of 32 × 64: lanes 4 rows ×
//! 8 columns, [`lane_origin_in`]; up to 8 float4 copies of a `[k, n]` B per thread; five
//! blocks per SM). Geometry: `gemm_geometry::v13::M64_*`, `M32_*`. Dispatch takes them for
//! f32 products with m ≤ 64 and m ≤ 32 (`docs/results/v13-short-m`, H100, with split-K):
//! B `[k, n]`, m = 16: 0.91–2.03× cuBLAS; m = 64: 0.86–1.02×. B `[n, k]` is slower (0.60–0.84
//! at m = 16, 0.66–1.30 at m = 64): its 4-byte transposing copies of B are 4× the copies of a
//! `[k, n]` B, and with 32 or 64 rows there are fewer FFMAs to hide them behind.
//!
//! The 64-row variant is also faster than v13 itself with B `[k, n]` at large shapes: 4096³
//! in 2.94 ms against 3.13 (0.92 of cuBLAS against 0.86), 1.04–1.26× from 2176³ to 8192³, and
//! 1.07–1.18× at k ≤ 64 once both store a plain product without the epilogue
//! (`store_plain_or_epilogue`), so dispatch runs every `[k, n]` product with more than 32
//! rows on it. Its barrier waits for 4 warps, not 8 (the stall "What limits v13" in
//! `docs/ladder.md` blames), and four blocks per SM make the last wave finer. The rung keeps
//! its 128 × 128 tile.

use super::v10_warp_tiling::{lane_origin_in, multiply_lane_steps, store_warp_tile};
use crate::device::{
    block_z, byte_offset, commit_async_copies, copy_async_4_if, copy_async_16_if, grid_dim_z,
    shared_address, shared_f32, sync_threads, thread_x, thread_x_each_time, wait_async_copies,
    write4,
};
use crate::k_major_b;
use crate::ladder_epilogue::Epilogue;
use crate::pipeline::StageRing;
use crate::split_k;
use crate::tile_order::grouped_block_origin;
use core::simd::f32x4;
use gemm_geometry::GemmArgs;
use gemm_geometry::v10::{A_PADDING, threads, warp_tile_n};
use gemm_geometry::v13::{
    A_STRIDE, B_STRIDE_KN, B_STRIDE_NK, BLOCK_TILE_M, BLOCK_TILE_N, M32_BLOCK_TILE_M,
    M32_LANE_ROWS, M32_MIN_BLOCKS_PER_SM, M32_THREADS, M64_BLOCK_TILE_M,
    M64_K_MAJOR_MIN_BLOCKS_PER_SM, M64_MIN_BLOCKS_PER_SM, M64_THREADS, MIN_BLOCKS_PER_SM,
    STAGE_FLOATS_KN, STAGE_FLOATS_NK, STAGES, THREADS, TILE_K, TRANSPOSED_PADDING,
    stage_floats_k_major,
};
use seq_macro::seq;

/// Columns of C per thread, as the register arrays want it.
const THREAD_TILE_N: usize = gemm_geometry::v13::THREAD_TILE_N as usize;
/// A lane's accumulators: 8 rows × [`THREAD_TILE_N`] columns (see [`store_warp_tile`]).
type Accumulators = [[f32; THREAD_TILE_N]; 8];

// The geometry crate's numbers are the ones v10's compute and copies are written for.
const _: () = {
    assert!(threads(BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32) == THREADS);
    assert!(TRANSPOSED_PADDING == A_PADDING && gemm_geometry::v13::THREAD_TILE_M == 8);
    assert!(STAGES >= 2 && STAGES <= 4 && TILE_K.is_multiple_of(8) && TILE_K <= 32);
    assert!(THREADS.is_multiple_of(BLOCK_TILE_N / 4));
    // Transposing copies (A, and B stored [n, k]): thread t takes k `t % 8` (+ 8, …) of rows
    // `t / 8 + 32·g`; at most 16 row groups per thread.
    assert!(BLOCK_TILE_M.is_multiple_of(THREADS / 8) && BLOCK_TILE_M / (THREADS / 8) <= 16);
    assert!(BLOCK_TILE_N.is_multiple_of(THREADS / 8) && BLOCK_TILE_N / (THREADS / 8) <= 16);
    // 16-byte copies of B stored [k, n]: at most 4 per thread.
    assert!((BLOCK_TILE_N * TILE_K / 4).is_multiple_of(THREADS));
    assert!(BLOCK_TILE_N * TILE_K / 4 / THREADS <= 4);
    // The same for the 64-row variant (its threads, its rows; the same columns and depth).
    assert!(threads(M64_BLOCK_TILE_M, BLOCK_TILE_N, THREAD_TILE_N as u32) == M64_THREADS);
    assert!(M64_BLOCK_TILE_M.is_multiple_of(M64_THREADS / 8));
    assert!(M64_BLOCK_TILE_M / (M64_THREADS / 8) <= 16);
    assert!(BLOCK_TILE_N.is_multiple_of(M64_THREADS / 8));
    assert!(BLOCK_TILE_N / (M64_THREADS / 8) <= 16);
    assert!(M64_THREADS.is_multiple_of(BLOCK_TILE_N / 4));
    assert!((BLOCK_TILE_N * TILE_K / 4).is_multiple_of(M64_THREADS));
    assert!(BLOCK_TILE_N * TILE_K / 4 / M64_THREADS <= 4);
    assert!((M64_BLOCK_TILE_M + TRANSPOSED_PADDING).is_multiple_of(4));
    // And for the 32-row variant, whose warps are 32 × 64 (lanes 4 × 8) and which copies up to
    // 8 float4 of a [k, n] B per thread.
    assert!(
        M32_THREADS
            == M32_BLOCK_TILE_M / (8 * M32_LANE_ROWS)
                * (BLOCK_TILE_N / (32 / M32_LANE_ROWS * THREAD_TILE_N as u32))
                * 32
    );
    assert!(M32_BLOCK_TILE_M.is_multiple_of(M32_THREADS / 8));
    assert!(M32_BLOCK_TILE_M / (M32_THREADS / 8) <= 16);
    assert!(BLOCK_TILE_N.is_multiple_of(M32_THREADS / 8));
    assert!(BLOCK_TILE_N / (M32_THREADS / 8) <= 16);
    assert!(M32_THREADS.is_multiple_of(BLOCK_TILE_N / 4));
    assert!((BLOCK_TILE_N * TILE_K / 4).is_multiple_of(M32_THREADS));
    assert!(BLOCK_TILE_N * TILE_K / 4 / M32_THREADS <= 8);
    assert!((M32_BLOCK_TILE_M + TRANSPOSED_PADDING).is_multiple_of(4));
    assert!(BLOCK_TILE_N.is_multiple_of(warp_tile_n(THREAD_TILE_N as u32)));
    // Every row of a tile, and each stage, starts on a 16-byte boundary (16-byte copies and
    // the float4 reads of `multiply_eight`).
    assert!(A_STRIDE.is_multiple_of(4) && B_STRIDE_KN.is_multiple_of(4));
    assert!(B_STRIDE_NK.is_multiple_of(4) && STAGE_FLOATS_KN.is_multiple_of(4));
    assert!(STAGE_FLOATS_NK.is_multiple_of(4));
};

crate::launch_bounds!(sgemm_v13_async_copies, THREADS, MIN_BLOCKS_PER_SM);

/// v13: v10's warp tiles fed by a 4-stage `cp.async` pipeline, 128×128 tiles 16 deep.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v13_async_copies(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    // Contiguous row-major matrices from `cudaMalloc` (256-byte aligned), so B's rows allow
    // 16-byte copies exactly when n is a multiple of 4.
    let operands = Operands {
        a,
        b,
        lda: k,
        ldb: n,
        m,
        n,
        k,
        b_aligned_16: true,
    };
    // SAFETY: the host passes A (m×k), B (k×n) and C (m×n), contiguous and 16-byte aligned,
    // and launches THREADS threads with SHARED_BYTES_KN of dynamic shared memory.
    unsafe {
        pipelined::<false, BLOCK_TILE_M, THREADS, 8>(
            &operands,
            thread_x(),
            first_row,
            first_col,
            // Inlined by force, like `issue` below: left to LLVM, it is inlined only after
            // the accumulators have been given a place in local memory.
            &#[inline(always)]
            |acc, row, col| store_warp_tile(acc, c, m, n, row, col, &Epilogue::STORE),
        )
    };
}

crate::launch_bounds!(gemm_v13_f32_kn, THREADS, MIN_BLOCKS_PER_SM);

/// Library fp32 GEMM, B stored `[k, n]`: for each batch item,
/// `C = act(alpha·A·B + beta·C + bias)` as [`GemmArgs`] defines it, exact fp32 (FFMA).
///
/// Launch: [`THREADS`] threads (1-D), grid `(v13::grid_x(m, n), 1, min(items, 65535))` (items: `split_k::items(args)`, the batch without a split),
/// [`gemm_geometry::v13::SHARED_BYTES_KN`] bytes of dynamic shared memory (over 48 KiB: the
/// function's max-dynamic-shared-memory attribute must allow it).
///
/// # Safety
/// `args` must describe valid device memory: A, B, C (and the bias, if not 0) of every batch
/// item inside their allocations, for the leading dimensions and strides given (`lda ≥ k`,
/// `ldb ≥ n`, `ldc ≥ n`), C not overlapping A, B or the bias; `m`, `n` ≥ 1 (the host launches
/// nothing otherwise). Alignment: every base address only 4-byte aligned (f32). Where B's
/// batch base is 16-byte aligned and `ldb` and `n` are multiples of 4, B is copied 16 bytes at a
/// time, else 4; where C's batch base is 16-byte aligned and `ldc` a multiple of 4, C is
/// written 16 bytes at a time, else 4. Those choices are made here, so they are not
/// preconditions.
///
/// Split-K ([`crate::split_k`]): with `args.splits > 1` (and `k_chunk` as
/// `gemm_geometry::split_k::slices` gives it) grid z walks `splits·batch` virtual items
/// (`splits·batch < 2³²`), and each writes its slice's raw fp32 product to `args.workspace`
/// (`splits·batch·m·n` fp32, 4-byte aligned, overlapping nothing it reads) instead of C, which
/// is neither read nor written; 16-byte stores where a workspace row allows them, else 4.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_f32_kn(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<false, false, BLOCK_TILE_M, THREADS, 8>(&args) };
}

crate::launch_bounds!(gemm_v13_f32_nk, THREADS, MIN_BLOCKS_PER_SM);

/// Library fp32 GEMM, B stored `[n, k]` (`C = act(alpha·A·Bᵀ + beta·C + bias)`, B a PyTorch
/// `nn.Linear` weight), exact fp32 (FFMA).
///
/// Launch: [`THREADS`] threads (1-D), grid `(v13::grid_x(m, n), 1, min(items, 65535))` (items: `split_k::items(args)`, the batch without a split),
/// [`gemm_geometry::v13::SHARED_BYTES_NK`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_f32_kn`], with B `[n, k]` (`ldb ≥ k`). A and B are both copied 4 bytes at a
/// time (transposed on the way), so they need only 4-byte alignment; C and split-K as there.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_f32_nk(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true, false, BLOCK_TILE_M, THREADS, 8>(&args) };
}

crate::launch_bounds!(gemm_v13_m64_f32_kn, M64_THREADS, M64_MIN_BLOCKS_PER_SM);

/// [`gemm_v13_f32_kn`] with 64-row block tiles (64 × 128, [`M64_THREADS`] threads): for
/// products with at most 64 rows of C, where every 128-row tile would be at least half empty
/// and its empty rows' FFMAs would cost as much as the full ones.
///
/// Launch: [`M64_THREADS`] threads (1-D), grid `(⌈m/64⌉·⌈n/128⌉, 1, min(items, 65535))`,
/// [`gemm_geometry::v13::M64_SHARED_BYTES_KN`] bytes of dynamic shared memory (over 48 KiB).
///
/// # Safety
/// As [`gemm_v13_f32_kn`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m64_f32_kn(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<false, false, M64_BLOCK_TILE_M, M64_THREADS, 8>(&args) };
}

crate::launch_bounds!(gemm_v13_m64_f32_nk, M64_THREADS, M64_MIN_BLOCKS_PER_SM);

/// [`gemm_v13_f32_nk`] with 64-row block tiles, as [`gemm_v13_m64_f32_kn`].
///
/// Launch: [`M64_THREADS`] threads (1-D), grid `(⌈m/64⌉·⌈n/128⌉, 1, min(items, 65535))`,
/// [`gemm_geometry::v13::M64_SHARED_BYTES_NK`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_f32_nk`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m64_f32_nk(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true, false, M64_BLOCK_TILE_M, M64_THREADS, 8>(&args) };
}

crate::launch_bounds!(gemm_v13_m32_f32_kn, M32_THREADS, M32_MIN_BLOCKS_PER_SM);

/// [`gemm_v13_f32_kn`] with 32-row block tiles (32 × 128, [`M32_THREADS`] threads in warps of
/// 32 × 64): for products with at most 32 rows of C, where a 64-row warp tile would be at least
/// half empty.
///
/// Launch: [`M32_THREADS`] threads (1-D), grid `(⌈m/32⌉·⌈n/128⌉, 1, min(items, 65535))`,
/// [`gemm_geometry::v13::M32_SHARED_BYTES_KN`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_f32_kn`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m32_f32_kn(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<false, false, M32_BLOCK_TILE_M, M32_THREADS, M32_LANE_ROWS>(&args) };
}

crate::launch_bounds!(gemm_v13_m32_f32_nk, M32_THREADS, M32_MIN_BLOCKS_PER_SM);

/// [`gemm_v13_f32_nk`] with 32-row block tiles, as [`gemm_v13_m32_f32_kn`].
///
/// Launch: [`M32_THREADS`] threads (1-D), grid `(⌈m/32⌉·⌈n/128⌉, 1, min(items, 65535))`,
/// [`gemm_geometry::v13::M32_SHARED_BYTES_NK`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_f32_nk`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m32_f32_nk(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true, false, M32_BLOCK_TILE_M, M32_THREADS, M32_LANE_ROWS>(&args) };
}

crate::launch_bounds!(
    gemm_v13_m64_f32_nk_kmajor,
    M64_THREADS,
    M64_K_MAJOR_MIN_BLOCKS_PER_SM
);

/// [`gemm_v13_m64_f32_nk`] with B copied as it is stored, 16 bytes at a time, into a K-major
/// tile ([`crate::k_major_b`]) instead of transposed 4 bytes at a time; 3 blocks per SM
/// ([`gemm_geometry::v13::M64_K_MAJOR_MIN_BLOCKS_PER_SM`]), not 4.
///
/// Launch: as [`gemm_v13_m64_f32_nk`], with
/// [`gemm_geometry::v13::M64_SHARED_BYTES_NK_KMAJOR`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_f32_nk`], and every row of B starts on a 16-byte boundary: B's base address
/// 16-byte aligned, `ldb` a multiple of 4 (unless n is 1) and, with a batch, B's batch stride
/// a multiple of 4.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m64_f32_nk_kmajor(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true, true, M64_BLOCK_TILE_M, M64_THREADS, 8>(&args) };
}

crate::launch_bounds!(
    gemm_v13_m32_f32_nk_kmajor,
    M32_THREADS,
    M32_MIN_BLOCKS_PER_SM
);

/// [`gemm_v13_m32_f32_nk`] with B staged K-major, as [`gemm_v13_m64_f32_nk_kmajor`] (5 blocks
/// per SM, as its sibling).
///
/// Launch: as [`gemm_v13_m32_f32_nk`], with
/// [`gemm_geometry::v13::M32_SHARED_BYTES_NK_KMAJOR`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v13_m64_f32_nk_kmajor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v13_m32_f32_nk_kmajor(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true, true, M32_BLOCK_TILE_M, M32_THREADS, M32_LANE_ROWS>(&args) };
}

/// One batch item's operands, as the pipeline reads them.
#[derive(Clone, Copy)]
struct Operands {
    /// A's first element (`[m, k]`, row stride `lda`).
    a: *const f32,
    /// B's first element (`[k, n]` or `[n, k]`, row stride `ldb`).
    b: *const f32,
    lda: u32,
    ldb: u32,
    m: u32,
    n: u32,
    k: u32,
    /// B's first element is 16-byte aligned.
    b_aligned_16: bool,
}

impl Operands {
    /// Whether B stored `[k, n]` may be copied 16 bytes at a time: its base is 16-byte aligned
    /// and `ldb` and `n` are multiples of 4 (so a float4 at a column that is a multiple of 4
    /// lies wholly inside or wholly outside a row). Evaluated where it is used rather than
    /// held: for the ladder entry it folds to `n % 4 == 0`, which costs no register.
    #[inline(always)]
    fn b_vector(&self) -> bool {
        self.b_aligned_16 && self.ldb.is_multiple_of(4) && self.n.is_multiple_of(4)
    }
}

/// The library entries: walk the batch (or, under split-K, the slices of every batch item)
/// along grid z, run the pipeline on each item, and store through the fused epilogue (or raw
/// into the split-K workspace; see [`crate::split_k`]).
///
/// # Safety
/// As [`gemm_v13_f32_kn`] (`B_NK` false) or [`gemm_v13_f32_nk`] (`B_NK` true).
#[inline(always)]
unsafe fn library<
    const B_NK: bool,
    const B_K_MAJOR: bool,
    const BLOCK_ROWS: u32,
    const BLOCK_THREADS: u32,
    const LANE_ROWS: u32,
>(
    args: &GemmArgs,
) {
    // SAFETY: forwarded, with `SPLIT` as `is_split` says.
    unsafe {
        if split_k::is_split(args) {
            walk::<B_NK, B_K_MAJOR, true, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(args)
        } else {
            walk::<B_NK, B_K_MAJOR, false, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(args)
        }
    }
}

/// [`library`]'s walk over the virtual items along grid z, compiled once per `SPLIT`
/// (`split_k::is_split(args)`; see [`crate::split_k`]).
///
/// # Safety
/// As [`library`], and `SPLIT` must be `split_k::is_split(args)`.
#[inline(always)]
unsafe fn walk<
    const B_NK: bool,
    const B_K_MAJOR: bool,
    const SPLIT: bool,
    const BLOCK_ROWS: u32,
    const BLOCK_THREADS: u32,
    const LANE_ROWS: u32,
>(
    args: &GemmArgs,
) {
    let (m, n) = (args.m, args.n);
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_ROWS, BLOCK_TILE_N);
    let mut zz = block_z();
    while zz < split_k::items(args) {
        let item = split_k::item_operands::<f32, B_NK, SPLIT>(args, zz);
        let operands = Operands {
            a: item.a,
            b: item.b,
            lda: args.lda,
            ldb: args.ldb,
            m,
            n,
            k: item.k,
            b_aligned_16: (item.b as usize).is_multiple_of(16),
        };
        // Not hoisted out of the batch loop (see `thread_x_each_time`).
        let thread = thread_x_each_time();
        // One store after both paths (the ladder entry has one per path): the epilogue is long
        // (GELU's tanh, an IEEE division), and this way the kernel holds one copy of it.
        // SAFETY: the caller's contract (valid operands of item zz); `interior` picks the path
        // whose copies stay inside.
        let (acc, row, col) = unsafe {
            if interior::<B_NK, B_K_MAJOR, BLOCK_ROWS>(&operands, first_row, first_col) {
                pipelined_tile::<B_NK, B_K_MAJOR, false, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(
                    &operands, thread, first_row, first_col,
                )
            } else {
                pipelined_tile::<B_NK, B_K_MAJOR, true, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(
                    &operands, thread, first_row, first_col,
                )
            }
        };
        // Worked out after the k loop, so that nothing of it is held across.
        let target = split_k::item_target::<f32, SPLIT>(args, zz);
        // The K-major entries keep the one path (see `store_plain_or_epilogue`).
        // SAFETY: the target is item zz's C (or its workspace matrix); only elements inside
        // m × n are written.
        unsafe {
            if B_K_MAJOR {
                store_with_epilogue::<LANE_ROWS>(&acc, args, &target, row, col)
            } else {
                store_plain_or_epilogue::<LANE_ROWS>(&acc, args, &target, row, col)
            }
        };
        zz += grid_dim_z();
        // The next item's first copies go into stages that slower warps may still be reading.
        sync_threads();
    }
}

/// Whether the block tile at (`first_row`, `first_col`) may take the path without row and
/// column checks: it lies wholly inside C and, for B stored `[k, n]`, B's rows allow 16-byte
/// copies, or, for B `[n, k]` staged K-major, k is a multiple of 4 (no piece of k runs past
/// its end). The blocks on the bottom and right edges take the checked one.
#[inline(always)]
fn interior<const B_NK: bool, const B_K_MAJOR: bool, const BLOCK_ROWS: u32>(
    operands: &Operands,
    first_row: u32,
    first_col: u32,
) -> bool {
    first_row + BLOCK_ROWS <= operands.m
        && first_col + BLOCK_TILE_N <= operands.n
        && (B_NK || operands.b_vector())
        && (!B_K_MAJOR || operands.k.is_multiple_of(4))
}

/// The pipelined warp-tiled GEMM of one block tile (at `first_row`, `first_col`) of the ladder
/// entry, handing the lane's accumulators and its first row and column of C to `store`, on the
/// path [`interior`] picks. `B_NK`: B is stored `[n, k]`.
///
/// # Safety
/// `operands` must describe valid matrices (A `m × k`, B `k × n` or `n × k`, with their row
/// strides), `b_aligned_16` must hold only when B's base is 16-byte aligned, and the block must have
/// [`THREADS`] threads and the stage bytes of its B layout in dynamic shared memory.
#[inline(always)]
unsafe fn pipelined<
    const B_NK: bool,
    const BLOCK_ROWS: u32,
    const BLOCK_THREADS: u32,
    const LANE_ROWS: u32,
>(
    operands: &Operands,
    thread: u32,
    first_row: u32,
    first_col: u32,
    store: &impl Fn(&Accumulators, u32, u32),
) {
    // SAFETY: forwarded; `interior` holds exactly when the unchecked path's copies stay inside.
    unsafe {
        if interior::<B_NK, false, BLOCK_ROWS>(operands, first_row, first_col) {
            let (acc, row, col) =
                pipelined_tile::<B_NK, false, false, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(
                    operands, thread, first_row, first_col,
                );
            store(&acc, row, col);
        } else {
            let (acc, row, col) =
                pipelined_tile::<B_NK, false, true, BLOCK_ROWS, BLOCK_THREADS, LANE_ROWS>(
                    operands, thread, first_row, first_col,
                );
            store(&acc, row, col);
        }
    }
}

/// Queues one step's 4-byte copies of an operand stored as rows along k (A `[m, k]`, or B
/// `[n, k]`) into its transposed shared tile (`[k][stride]`, `stride` in floats): this thread
/// copies k `thread_k`, `thread_k + 8`, … of its rows `row_step` apart. `row_start` is its first
/// row's first element, `thread_start` that plus `thread_k`, `ld` the row stride; copies of
/// elements outside the matrix (k past the end; rows past `rows_left` when `EDGE`) write zeros.
///
/// # Safety
/// `matrix` (the operand's first element) and, for the rows counted in `rows_left` (all of
/// them when not `EDGE`), `row_start` must be valid addresses; `destination` is this thread's
/// first place in the tile of the stage being filled.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn copy_rows_transposed<const EDGE: bool, const ROWS: u32, const BLOCK_THREADS: u32>(
    matrix: *const f32,
    row_start: *const f32,
    thread_start: *const f32,
    ld: u32,
    k: u32,
    step: u32,
    thread_k: u32,
    rows_left: u32,
    destination: u32,
    stride: u32,
) {
    let halves = const { TILE_K / 8 };
    let row_step = const { BLOCK_THREADS / 8 };
    let row_groups = const { ROWS / (BLOCK_THREADS / 8) };
    let tile_k = step * TILE_K;
    seq!(h in 0..4 {
        if h < halves {
            let k_inside = tile_k + 8 * h + thread_k < k;
            let base = if k_inside {
                byte_offset(thread_start, step, TILE_K * 4).wrapping_add(8 * h as usize)
            } else {
                row_start
            };
            seq!(g in 0..16 {
                if g < row_groups {
                    // 4·rows × ld floats: the element size rides on the constant, so that the
                    // 32-bit operands cannot overflow for any ld below 2³¹.
                    let src = if g == 0 { base } else { byte_offset(base, 4 * g * row_step, ld) };
                    let dst = destination + (8 * h * stride + g * row_step) * 4;
                    if EDGE {
                        let valid = k_inside && g * row_step < rows_left;
                        // SAFETY: a valid source, or none read (`valid` false).
                        unsafe { copy_async_4_if(dst, if valid { src } else { matrix }, valid) };
                    } else {
                        // SAFETY: every row lies inside; k past the end reads nothing.
                        unsafe { copy_async_4_if(dst, src, k_inside) };
                    }
                }
            });
        }
    });
}

/// The pipelined warp-tiled GEMM of one block tile: returns the lane's accumulators and the row
/// and column of C its first one belongs to. `EDGE` adds the row and column checks of blocks
/// that hang over the bottom or right edge of C. Steps of k past the end are checked on both
/// paths.
///
/// # Safety
/// As [`pipelined`]; without `EDGE`, the tile must lie inside C and (for `[k, n]`)
/// [`Operands::b_vector`] must hold.
#[inline(always)]
unsafe fn pipelined_tile<
    const B_NK: bool,
    const B_K_MAJOR: bool,
    const EDGE: bool,
    const BLOCK_ROWS: u32,
    const BLOCK_THREADS: u32,
    const LANE_ROWS: u32,
>(
    operands: &Operands,
    thread: u32,
    first_row: u32,
    first_col: u32,
) -> (Accumulators, u32, u32) {
    let Operands {
        a,
        b,
        lda,
        ldb,
        m,
        n,
        k,
        b_aligned_16: _,
    } = *operands;
    // 16-byte copies of a [k, n] B per thread per step, and the rows between them.
    let b_copies = const { BLOCK_TILE_N * TILE_K / 4 / BLOCK_THREADS };
    let b_row_step = const { BLOCK_THREADS / (BLOCK_TILE_N / 4) };
    // The transposed A tile's row length, and a stage's floats: v13's constants for its own
    // 128 rows, the same formulas for the 64-row variant.
    let a_stride = const { BLOCK_ROWS + TRANSPOSED_PADDING };
    let stage_floats = if B_K_MAJOR {
        const { stage_floats_k_major(BLOCK_ROWS) }
    } else {
        TILE_K * a_stride + TILE_K * if B_NK { B_STRIDE_NK } else { B_STRIDE_KN }
    };

    let (row0, col0) = lane_origin_in::<LANE_ROWS>(thread, BLOCK_TILE_N, THREAD_TILE_N);
    // Thread t copies k `t % 8` (and `+ 8`) of A's rows `t / 8 + (threads / 8)·g` (and of B's,
    // for B stored [n, k]), or the float4 of a [k, n] B at column `(t % 32)·4` of rows
    // `t / 32 + (threads / 32)·i` (v13's 256 threads: rows `t / 8 + 32·g`, `t / 32 + 8·i`): each
    // copy is a constant multiple of a row away from a per-thread base.
    let (copy_row, copy_k) = (thread / 8, thread % 8);
    let (b_row, b_col) = (thread / (BLOCK_TILE_N / 4), thread % (BLOCK_TILE_N / 4) * 4);
    // Rows of A (of an [n, k] B) this thread may copy (edge blocks), and whether its float4 of
    // a [k, n] B lies in C.
    let a_rows_left = m.saturating_sub(first_row + copy_row);
    let b_rows_left = n.saturating_sub(first_col + copy_row);
    let b_col_inside = first_col + b_col < n;
    // Copies with nothing to read still need a valid source address: the thread's row start
    // for k past the end (its rows lie inside on the interior path), the operand's first
    // element otherwise. Offsets are 64-bit products.
    let a_row_start = a.wrapping_add((first_row + copy_row) as usize * lda as usize);
    let a_thread = a_row_start.wrapping_add(copy_k as usize);
    let b_row_start = b.wrapping_add((first_col + copy_row) as usize * ldb as usize);
    let b_thread_nk = b_row_start.wrapping_add(copy_k as usize);
    let b_thread = b.wrapping_add(b_row as usize * ldb as usize + (first_col + b_col) as usize);
    // B [n, k] staged K-major: this thread's rows and piece of k.
    let b_k_major = k_major_b::BCopies::new(b, ldb, n, first_col, thread);

    let stages = shared_f32();
    // Copies address shared memory in its own 32-bit space: convert the base once, and keep
    // each copy's destination as a byte offset from it.
    let stages_address = shared_address(stages);
    let stage_bytes = stage_floats * 4;
    let a_destination = (copy_k * a_stride + copy_row) * 4;
    let b_tile_bytes = TILE_K * a_stride * 4;
    let b_destination_nk = b_tile_bytes + (copy_k * B_STRIDE_NK + copy_row) * 4;
    let b_destination = b_tile_bytes + (b_row * B_STRIDE_KN + b_col) * 4;

    // Queue the copies of step `step` into the stage at byte `stage_start`. Elements outside
    // A or B arrive as zeros.
    // Inlined by force: called from two places and large, LLVM would otherwise outline it
    // and pass the stage pointers through a stack frame.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        // SAFETY: the row starts are valid wherever a copy reads (see `copy_rows_transposed`).
        unsafe {
            copy_rows_transposed::<EDGE, BLOCK_ROWS, BLOCK_THREADS>(
                a,
                a_row_start,
                a_thread,
                lda,
                k,
                step,
                copy_k,
                a_rows_left,
                stage_start + a_destination,
                a_stride,
            )
        };
        if B_NK && B_K_MAJOR {
            // SAFETY: B's rows are 16-byte aligned at every multiple of 4 in k (the entry's
            // contract); the rows past `b_rows_left_k_major` are read only on the edge path.
            unsafe { b_k_major.issue::<EDGE, BLOCK_THREADS>(k, step, stage_start + b_tile_bytes) };
            return;
        }
        if B_NK {
            // SAFETY: as for A, with B's rows (the columns of C).
            unsafe {
                copy_rows_transposed::<EDGE, BLOCK_TILE_N, BLOCK_THREADS>(
                    b,
                    b_row_start,
                    b_thread_nk,
                    ldb,
                    k,
                    step,
                    copy_k,
                    b_rows_left,
                    stage_start + b_destination_nk,
                    B_STRIDE_NK,
                )
            };
            return;
        }
        // B stored [k, n]: 16-byte copies along its rows.
        let tile_k = step * TILE_K;
        let b_step = b_thread.wrapping_add(tile_k as usize * ldb as usize);
        seq!(i in 0..8 {
            if i < b_copies {
                let src = if i == 0 { b_step } else { byte_offset(b_step, 4 * i * b_row_step, ldb) };
                let dst = stage_start + b_destination + i * b_row_step * B_STRIDE_KN * 4;
                let row_inside = tile_k + b_row + i * b_row_step < k;
                if !EDGE {
                    // SAFETY: interior: the float4 lies in B (16-byte aligned, `b_vector`)
                    // whenever its row does; rows past k read nothing.
                    unsafe { copy_async_16_if(dst, if row_inside { src } else { b }, row_inside) };
                } else if operands.b_vector() {
                    // n % 4 == 0 and the column % 4 == 0: the four lie wholly inside or outside.
                    let valid = row_inside && b_col_inside;
                    // SAFETY: an aligned float4 inside B, or nothing read.
                    unsafe { copy_async_16_if(dst, if valid { src } else { b }, valid) };
                } else {
                    seq!(q in 0..4 {
                        let valid = row_inside && first_col + b_col + q < n;
                        let element = if valid { src.wrapping_add(q) } else { b };
                        // SAFETY: an element inside B, or nothing read.
                        unsafe { copy_async_4_if(dst + 4 * q, element, valid) };
                    });
                }
            }
        });
    };

    let steps = k.div_ceil(TILE_K);
    // Prologue: the first STAGES − 1 steps in flight. Every iteration commits one group, empty
    // or not, so that "all but the newest STAGES − 2 groups" always means "step t has landed".
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * stage_bytes);
        }
        commit_async_copies();
    }
    let mut acc = [[0.0f32; THREAD_TILE_N]; 8];
    // Stages rotate: read one, write the one STAGES − 1 ahead.
    let mut read_stage = StageRing::<STAGES>::new();
    let mut write_stage = StageRing::<STAGES>::at(STAGES - 1);
    for step in 0..steps {
        // All but the newest STAGES − 2 groups done (a constant; the match folds away).
        match STAGES {
            2 => wait_async_copies::<0>(),
            3 => wait_async_copies::<1>(),
            _ => wait_async_copies::<2>(),
        }
        sync_threads();
        let ahead = step + STAGES - 1;
        if ahead < steps {
            issue(ahead, stages_address + write_stage.index() * stage_bytes);
        }
        commit_async_copies();
        // SAFETY: both tiles lie inside the stage `read_stage` of the dynamic shared memory.
        let a_tile = unsafe { stages.add((read_stage.index() * stage_bytes / 4) as usize) };
        let b_tile = unsafe { a_tile.add((TILE_K * a_stride) as usize) };
        if B_K_MAJOR {
            // SAFETY: as below, with B's tile K-major.
            unsafe {
                k_major_b::multiply_k_major_stage::<THREAD_TILE_N, LANE_ROWS>(
                    &mut acc, a_tile, b_tile, a_stride, row0, col0,
                )
            };
        } else {
            // Unrolled by hand: LLVM keeps a 16-deep step as a loop of two, which costs ptxas
            // registers at the 128-register cap. The B tile's row length is a constant of the
            // layout (multiply_eight's first parameter).
            seq!(j in 0..4 {
                if j * 8 < TILE_K {
                    // SAFETY: reads inside the stage's tiles, which every thread's copies and
                    // the barrier above have filled.
                    unsafe {
                        if B_NK {
                            multiply_lane_steps::<B_STRIDE_NK, THREAD_TILE_N, 8, LANE_ROWS>(
                                &mut acc, a_tile, b_tile, a_stride, j * 8, row0, col0,
                            )
                        } else {
                            multiply_lane_steps::<B_STRIDE_KN, THREAD_TILE_N, 8, LANE_ROWS>(
                                &mut acc, a_tile, b_tile, a_stride, j * 8, row0, col0,
                            )
                        }
                    };
                }
            });
        }
        read_stage.advance();
        write_stage.advance();
    }
    (acc, first_row + row0, first_col + col0)
}

/// Writes a lane's accumulators to `target` (one item's C, row stride `target.ld`, through the
/// library's epilogue; or its split-K workspace matrix, raw: [`split_k::output_value`]),
/// skipping elements outside `m × n`. `acc[i][j]` goes to row `row + (i / 4)·4·LANE_ROWS + i % 4`,
/// column `col + (j / 4)·4·(32 / LANE_ROWS) + j % 4` (for v13's lanes, `LANE_ROWS` 8: 32 rows
/// and 16 columns apart, as in [`store_warp_tile`]). Where the target's base is
/// 16-byte aligned and its row stride a multiple of 4, four columns from a multiple of 4 are
/// one 16-byte store.
///
/// # Safety
/// `target` must hold `m` rows of `target.ld` elements (the last needing only `n`); the bias,
/// if any, `n` elements.
#[inline(always)]
unsafe fn store_with_epilogue<const LANE_ROWS: u32>(
    acc: &Accumulators,
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    row: u32,
    col: u32,
) {
    let (m, n) = (args.m, args.n);
    let c = target.at as *mut f32;
    let vector = target.at.is_multiple_of(16) && target.ld.is_multiple_of(4);
    // The lane's sub-tiles are this far apart (`lane_origin_in`).
    let (row_gap, col_gap) = const { (4 * LANE_ROWS, 4 * (32 / LANE_ROWS)) };
    seq!(i in 0..8 {
        let r = row + (i / 4) * row_gap + i % 4;
        if r < m {
            let c_row = c.wrapping_add(r as usize * target.ld as usize);
            seq!(s in 0..2 {
                let cc = col + col_gap * s;
                let at = c_row.wrapping_add(cc as usize);
                // The epilogue once per element (it is long: GELU's tanh), then one store path.
                let mut out = [0.0f32; 4];
                seq!(q in 0..4 {
                    if cc + q < n {
                        // SAFETY: an element of row r inside C (read only when beta ≠ 0).
                        out[q] = unsafe {
                            split_k::output_value::<f32>(args, target, acc[i][4 * s + q], at.wrapping_add(q), cc + q)
                        };
                    }
                });
                if vector && cc + 4 <= n {
                    // SAFETY: four elements of row r inside the target, 16-byte aligned.
                    unsafe { write4(at, f32x4::from_array(out)) };
                } else {
                    seq!(q in 0..4 {
                        if cc + q < n {
                            // SAFETY: an element of row r inside the target.
                            unsafe { at.wrapping_add(q).write(out[q]) };
                        }
                    });
                }
            });
        }
    });
}

/// [`store_with_epilogue`] for v13 and its 32- and 64-row variants: a plain store (alpha 1,
/// beta 0, no bias, no activation: [`GemmArgs::is_plain_store`]) and a split's raw sums store
/// the accumulators as they are, on a path of their own, without the epilogue's per-element
/// tests of beta, the bias and the activation; anything else goes through the epilogue as
/// there. Where k is a few steps long that epilogue was much of a tile's work: at 8192×8192×64
/// this path took v13 from 23.2 to 34.6 TFLOP/s and `v13_m64` to 38.2 (H200,
/// `docs/results/f32-short-k`).
///
/// The K-major entries keep [`store_with_epilogue`] itself, whose walk [`store_lane`] repeats:
/// built on `store_lane`, even with the epilogue's path alone, their code came out of LLVM in
/// another order, and with both paths ptxas scheduled their main loop so that they ran 4–21%
/// slower at the large `[n, k]` layers (27.1 TFLOP/s against 34.2 at 64×57344×8192). As they
/// are, their PTX is the same as before the plain path.
///
/// # Safety
/// As [`store_with_epilogue`].
#[inline(always)]
unsafe fn store_plain_or_epilogue<const LANE_ROWS: u32>(
    acc: &Accumulators,
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    row: u32,
    col: u32,
) {
    let epilogue = |value, at, column| {
        // SAFETY: `store_lane` calls it on elements inside C (read only when beta ≠ 0), their
        // columns inside the bias.
        unsafe { split_k::output_value::<f32>(args, target, value, at, column) }
    };
    // SAFETY: forwarded; the plain path reads nothing.
    unsafe {
        if target.partial || args.is_plain_store() {
            store_lane::<LANE_ROWS>(acc, args, target, row, col, |value, _, _| value);
        } else {
            store_lane::<LANE_ROWS>(acc, args, target, row, col, epilogue);
        }
    }
}

/// [`store_with_epilogue`]'s walk over the lane's elements: `value(acc, place, column)` gives
/// each element's stored value (called once per element inside `m × n`).
///
/// # Safety
/// As [`store_with_epilogue`], and `value` must be safe to call on every element inside.
#[inline(always)]
unsafe fn store_lane<const LANE_ROWS: u32>(
    acc: &Accumulators,
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    row: u32,
    col: u32,
    value: impl Fn(f32, *const f32, u32) -> f32,
) {
    let (m, n) = (args.m, args.n);
    let c = target.at as *mut f32;
    let vector = target.at.is_multiple_of(16) && target.ld.is_multiple_of(4);
    // The lane's sub-tiles are this far apart (`lane_origin_in`).
    let (row_gap, col_gap) = const { (4 * LANE_ROWS, 4 * (32 / LANE_ROWS)) };
    seq!(i in 0..8 {
        let r = row + (i / 4) * row_gap + i % 4;
        if r < m {
            let c_row = c.wrapping_add(r as usize * target.ld as usize);
            seq!(s in 0..2 {
                let cc = col + col_gap * s;
                let at = c_row.wrapping_add(cc as usize);
                // The value once per element (the epilogue is long: GELU's tanh), then one
                // store path.
                let mut out = [0.0f32; 4];
                seq!(q in 0..4 {
                    if cc + q < n {
                        out[q] = value(acc[i][4 * s + q], at.wrapping_add(q), cc + q);
                    }
                });
                if vector && cc + 4 <= n {
                    // SAFETY: four elements of row r inside the target, 16-byte aligned.
                    unsafe { write4(at, f32x4::from_array(out)) };
                } else {
                    seq!(q in 0..4 {
                        if cc + q < n {
                            // SAFETY: an element of row r inside the target.
                            unsafe { at.wrapping_add(q).write(out[q]) };
                        }
                    });
                }
            });
        }
    });
}
