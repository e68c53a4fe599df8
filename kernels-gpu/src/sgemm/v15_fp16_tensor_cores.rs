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
//!   a constant stride per chunk and stage; inputs whose rows do not start on 16-byte
//!   boundaries (k or n not a multiple of 8, or misaligned bases or leading dimensions) take a
//!   separate, out-of-line path (16-bit loads), so its registers do not crowd the fast path;
//! * **copies queued early**: a stage's refill is queued after the first k-step of the step
//!   that follows its last use, not after the next barrier;
//! * **a coalesced epilogue**: results go out through shared memory in 16-byte stores (16-bit
//!   ones where C's rows are misaligned or a chunk straddles the last column).
//!
//! The pipeline is v13's (4 `cp.async` stages, zeros outside the matrices); launch order is
//! grouped.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 466.3 TFLOP/s, **61.2% of cuBLAS
//! fp16** (762 TFLOP/s; 63.0% in the previous build's run, 62.4% and 61.5% in earlier runs);
//! 62% at 8192³.
//!
//! **One body, five entries.** The same kernel serves the ladder entry
//! [`hgemm_v15_fp16_tensor_cores`] (contiguous fp16, `C = A·B`) and the library entries
//! `gemm_v15_{f16,bf16}_{kn,nk}` (fp16 or bf16; B stored `[k, n]` or `[n, k]`; any leading
//! dimensions; batch along grid z; the fused epilogue of [`GemmArgs`]). The element type is a
//! type parameter ([`HalfElement`]: which `mma.sync` and which fp32 → 16-bit rounding), the B
//! layout a const parameter: a `[n, k]` B tile is stored and swizzled like A's (rows of k), and
//! its fragments come from `ldmatrix` *without* `.trans`, since the `.col` operand of
//! `mma.sync.row.col` is exactly B stored n-major (the lanes point at the four 8×8 matrices
//! in the order that leaves each n8 tile's two fragment registers adjacent, as `mma.sync`
//! reads them). The ladder entry passes the constant arguments of a contiguous product, so
//! that everything the general case adds (leading dimensions, epilogue, batch) folds away and
//! its main loop is the same code as before (same PTX and SASS instruction mix).
//!
//! The library's epilogue works on the fp32 accumulators: when it is more than a plain store
//! (alpha ≠ 1, beta ≠ 0, a bias or an activation), the block stages its products in fp32
//! (128 KiB of the 192), and each thread combines one 8-column chunk at a time with C (read as
//! one 16-byte chunk, only when beta ≠ 0) and its eight bias values (read once), applies
//! [`GemmArgs::epilogue`], rounds once and stores. Batch items run one after the other in
//! each block (grid z strides the batch); the thread index is re-read per item so that LLVM
//! does not hoist the per-thread offsets out of that loop, which made them live across the
//! whole kernel and spilled.
//!
//! The library entries support split-K ([`crate::split_k`]): with `args.splits > 1` grid z walks
//! the slices of k of every batch item, and each block stages its tile's raw fp32 products in
//! shared memory (as the epilogue path does) and stores them, unrounded, into the workspace
//! instead of C. This is how dispatch serves the products v18 refuses (k or n not a multiple
//! of 8) whose few tiles cannot fill the device: 17×17×65537 is one tile of 128×256.
//!
//! Launch: 256 threads (8 warps, 2 × 4), grid ⌈m/128⌉·⌈n/256⌉ (1-D, grouped; library entries:
//! grid z = min(items, 65 535), items = `split_k::items(args)`, the batch without a split),
//! [`SHARED_BYTES`] (192 KiB) of dynamic shared memory; all in [`gemm_geometry::v15`].

use crate::device::{
    at, block_z, byte_offset, commit_async_copies, copy_async_16, load8_f16_or_zero,
    shared_address, shared_f32, store_shared_16, sync_threads, thread_x, wait_async_copies,
};
use crate::element::{Bf16, F16};
use crate::epilogue::tanh;
use crate::pipeline::StageRing;
use crate::split_k;
use crate::tensor_core::{HalfElement, load_matrix_x4, load_matrix_x4_transposed};
use crate::tile_order::grouped_block_origin;
use core::simd::{f32x2, f32x4, u32x4};
use gemm_geometry::GemmArgs;
use gemm_geometry::v15::{
    A_STAGE_BYTES, BLOCK_TILE_M, BLOCK_TILE_N, MIN_BLOCKS, STAGE_BYTES, STAGES, THREADS, TILE_K,
    WARP_TILE_M, WARP_TILE_N, WARPS_N,
};
use seq_macro::seq;

pub use gemm_geometry::v15::SHARED_BYTES;

const A_ROW_BYTES: u32 = TILE_K * 2;
const A_BYTES: u32 = A_STAGE_BYTES;
/// Bytes per row of a stage's B tile: `BLOCK_TILE_N` elements for B stored `[k, n]` (rows of
/// n), `TILE_K` for B stored `[n, k]` (rows of k, like A's tile).
const fn b_row_bytes(b_nk: bool) -> u32 {
    if b_nk { TILE_K * 2 } else { BLOCK_TILE_N * 2 }
}
/// Rows of the staged results, 16-bit: 16 bytes of padding put the eight rows of one
/// fragment-pair store in different banks.
const STAGED_ROW_BYTES: u32 = BLOCK_TILE_N * 2 + 16;
/// Rows of the staged results, fp32 (the epilogue path): 32 bytes of padding put the four rows
/// one half-warp's 8-byte stores touch in different banks.
const STAGED_F32_ROW_BYTES: u32 = BLOCK_TILE_N * 4 + 32;
/// 16-byte chunks of C each thread stores: the block's tile, 8 elements per chunk.
const CHUNKS_PER_THREAD: u32 = BLOCK_TILE_M * BLOCK_TILE_N / 8 / THREADS;
const _: () = {
    assert!(THREADS == 256 && BLOCK_TILE_M == 128 && BLOCK_TILE_N == 256 && TILE_K == 64);
    assert!(WARP_TILE_M == 64 && WARP_TILE_N == 64 && STAGES == 4);
    assert!(CHUNKS_PER_THREAD == 16);
    assert!(BLOCK_TILE_M * STAGED_F32_ROW_BYTES <= SHARED_BYTES);
    assert!(TILE_K * b_row_bytes(false) == TILE_K * BLOCK_TILE_N * 2);
    assert!(BLOCK_TILE_N * b_row_bytes(true) == TILE_K * BLOCK_TILE_N * 2);
};

/// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile with rows of
/// `row_bytes` (a multiple of 128): the chunk's position within its 128-byte line is XORed
/// with the row's index mod 8.
#[inline(always)]
fn swizzled(row: u32, chunk: u32, row_bytes: u32) -> u32 {
    row * row_bytes + (chunk ^ (row % 8)) * 16
}

crate::launch_bounds!(hgemm_v15_fp16_tensor_cores, THREADS, MIN_BLOCKS);

/// v15: fp16 `mma.sync` fed by `ldmatrix` from swizzled tiles, 128×256×64 block tiles, 64×64
/// per warp, fragments double-buffered in registers, 4-stage `cp.async`. `a`, `b`, `c` hold fp16
/// bit patterns: contiguous row-major `A` (m×k), `B` (k×n), `C` (m×n), `C = A·B`.
///
/// Any shape and any 2-byte-aligned addresses; the fast `cp.async` path needs `a` and `b`
/// 16-byte aligned and k and n multiples of 8, else the kernel takes the slow path (16-bit
/// loads), chosen at run time.
///
/// # Safety
/// `a`, `b`, `c` must point to `m·k`, `k·n`, `m·n` fp16 elements of device memory (C not
/// overlapping A or B); launch with [`gemm_geometry::v15`]'s geometry.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v15_fp16_tensor_cores(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
) {
    // Constant alpha 1, beta 0, no bias, no activation, lda = k, ldb = ldc = n: the epilogue
    // folds to a plain store and the strides to v15's own.
    let args = GemmArgs::contiguous(a as u64, b as u64, c as u64, m, n, k);
    // SAFETY: the caller's contract is the one `batch_item` needs, for the one batch item.
    unsafe { batch_item::<F16, false, false>(&args, a, b, c, k, thread_x()) }
}

crate::launch_bounds!(gemm_v15_f16_kn, THREADS, MIN_BLOCKS);
crate::launch_bounds!(gemm_v15_f16_nk, THREADS, MIN_BLOCKS);
crate::launch_bounds!(gemm_v15_bf16_kn, THREADS, MIN_BLOCKS);
crate::launch_bounds!(gemm_v15_bf16_nk, THREADS, MIN_BLOCKS);

/// Library GEMM, fp16, B stored `[k, n]`: for every batch item, `C = act(alpha·A·B + beta·C +
/// bias)` as [`GemmArgs`] defines it, fp16 A, B, C and bias, fp32 accumulation, the epilogue
/// on the fp32 values and one rounding to fp16 (to nearest even) at the end.
///
/// Launch ([`gemm_geometry::v15`]): `THREADS` (256) threads, grid
/// `(grid_x(m, n), 1, grid_z(batch))` = `(⌈m/128⌉·⌈n/256⌉, 1, min(batch, 65 535))`,
/// `SHARED_BYTES` (196 608) bytes of dynamic shared memory. m, n, k, batch ≥ 1.
///
/// Alignment: none beyond the elements' own 2 bytes, for any lda, ldb, ldc and batch strides.
/// Per batch item, the fast path (16-byte `cp.async` copies) runs when A's and B's item bases
/// are 16-byte aligned, lda and ldb are multiples of 8, k is a multiple of 8 and (for this
/// `[k, n]` B) n is a multiple of 8; otherwise a slow path with 16-bit loads (correct, several
/// times slower). C's results go out in 16-byte stores when C's item base is 16-byte aligned
/// and ldc a multiple of 8, else in 16-bit stores. For full speed, the host should give
/// 16-byte-aligned bases, leading dimensions and batch strides that are multiples of 8, and k,
/// n multiples of 8.
///
/// Split-K ([`crate::split_k`]): with `args.splits > 1` (and `k_chunk` as
/// `gemm_geometry::split_k::slices` gives it) grid z walks `splits·batch` virtual items
/// (`splits·batch < 2³²`), and each writes its slice's raw fp32 product to `args.workspace`
/// (`splits·batch·m·n` fp32, 4-byte aligned, overlapping nothing it reads) instead of C, which
/// is neither read nor written; 16-byte stores where a workspace row allows them, else 4.
///
/// # Safety
/// `args` must describe device memory as [`GemmArgs`] documents it (every element the shape,
/// leading dimensions and strides reach readable, C's writable, C not overlapping A, B or the
/// bias), with `lda ≥ k`, `ldb ≥ n`, `ldc ≥ n`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v15_f16_kn(args: GemmArgs) {
    // SAFETY: the caller's contract.
    unsafe { library_entry::<F16, false>(args) }
}

/// Library GEMM, fp16, B stored `[n, k]` (`C = A·Bᵀ`, a PyTorch `nn.Linear` weight): as
/// [`gemm_v15_f16_kn`], with `B[l, j] = b[j·ldb + l]`.
///
/// Launch: as [`gemm_v15_f16_kn`].
///
/// Alignment: as [`gemm_v15_f16_kn`], except that the fast path does not need n to be a
/// multiple of 8 (B's copies run along k): it runs when A's and B's item bases are 16-byte
/// aligned, lda and ldb are multiples of 8 and k is a multiple of 8.
///
/// # Safety
/// As [`gemm_v15_f16_kn`], with `ldb ≥ k`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v15_f16_nk(args: GemmArgs) {
    // SAFETY: the caller's contract.
    unsafe { library_entry::<F16, true>(args) }
}

/// Library GEMM, bf16, B stored `[k, n]`: as [`gemm_v15_f16_kn`] with bf16 A, B, C and bias
/// (`mma.sync` bf16, sm_80 and newer).
///
/// Launch and alignment: as [`gemm_v15_f16_kn`].
///
/// # Safety
/// As [`gemm_v15_f16_kn`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v15_bf16_kn(args: GemmArgs) {
    // SAFETY: the caller's contract.
    unsafe { library_entry::<Bf16, false>(args) }
}

/// Library GEMM, bf16, B stored `[n, k]`: as [`gemm_v15_f16_nk`] with bf16 A, B, C and bias
/// (`mma.sync` bf16, sm_80 and newer).
///
/// Launch and alignment: as [`gemm_v15_f16_nk`].
///
/// # Safety
/// As [`gemm_v15_f16_nk`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v15_bf16_nk(args: GemmArgs) {
    // SAFETY: the caller's contract.
    unsafe { library_entry::<Bf16, true>(args) }
}

/// The library entries: every virtual item `zz ≡ blockIdx.z (mod gridDim.z)` (the batch items,
/// or under split-K the slices of every batch item: [`crate::split_k`]), one after the other,
/// through [`batch_item`].
///
/// # Safety
/// `args` must describe device memory as [`GemmArgs`] documents it, for element type `E` and
/// B stored `[n, k]` when `B_NK`, else `[k, n]`; launch with [`gemm_geometry::v15`]'s geometry.
#[inline(always)]
unsafe fn library_entry<E: HalfElement, const B_NK: bool>(args: GemmArgs) {
    // SAFETY: forwarded, with `SPLIT` as `is_split` says.
    unsafe {
        if split_k::is_split(&args) {
            walk::<E, B_NK, true>(&args)
        } else {
            walk::<E, B_NK, false>(&args)
        }
    }
}

/// [`library_entry`]'s walk over the virtual items along grid z, compiled once per `SPLIT`
/// (`split_k::is_split(args)`), so that the copy without a split is the plain batch walk.
///
/// # Safety
/// As [`library_entry`], and `SPLIT` must be `split_k::is_split(args)`.
#[inline(always)]
unsafe fn walk<E: HalfElement, const B_NK: bool, const SPLIT: bool>(args: &GemmArgs) {
    let mut zz = block_z();
    // SAFETY: reads a special register.
    let z_step = unsafe { core::arch::nvptx::_grid_dim_z() };
    let items = split_k::items(args);
    while zz < items {
        // Element offsets in 64 bits: zz · stride may exceed 2³².
        let item = split_k::item_operands::<E, B_NK, SPLIT>(args, zz);
        let target = split_k::item_target::<E, SPLIT>(args, zz);
        let (a, b, c) = (
            item.a as *const u16,
            item.b as *const u16,
            target.at as *mut u16,
        );
        // SAFETY: `a`, `b` are item zz's operands, inside the memory `args` describes; `c` is
        // its C (no split) or its fp32 workspace matrix (`SPLIT`), which `SPLIT` tells apart.
        unsafe { batch_item::<E, B_NK, SPLIT>(args, a, b, c, item.k, thread_x_in_batch_loop()) };
        zz += z_step;
        if zz < items {
            // The next item's first copies overwrite the staging area this item's last stores
            // read from.
            sync_threads();
        }
    }
}

/// `threadIdx.x`, read afresh on every pass of the batch loop by an asm that LLVM must not
/// move: otherwise it hoists everything the body derives from the thread index (copy offsets,
/// fragment addresses, the epilogue's rows) out of the batch loop, and those values, live
/// across the whole body, spilled.
#[inline(always)]
fn thread_x_in_batch_loop() -> u32 {
    let thread: u32;
    // SAFETY: reads a special register. Not `pure`, so that it stays in the loop.
    unsafe {
        core::arch::asm!("mov.u32 {t}, %tid.x;", t = out(reg32) thread, options(nomem, nostack))
    };
    // SAFETY: blocks have THREADS threads along x (the launch contract); restores the range
    // LLVM knows for `threadIdx.x`.
    unsafe { core::hint::assert_unchecked(thread < THREADS) };
    thread
}

/// Chooses the path for one item (`a`, `b`, `c` already moved to it, `k` its length of k) at
/// run time: the `cp.async` body when A's and B's rows start on 16-byte boundaries and every
/// 16-byte chunk the copies read lies wholly inside or wholly outside the matrix, else the
/// 16-bit-load body, out of line. C's alignment decides only how the results are stored
/// (16-byte stores or narrower ones). `PARTIAL`: `c` is the item's fp32 workspace matrix
/// (rows of n), which gets the raw products (split-K), not C.
///
/// # Safety
/// As [`library_entry`], for this one item.
#[inline(always)]
unsafe fn batch_item<E: HalfElement, const B_NK: bool, const PARTIAL: bool>(
    args: &GemmArgs,
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    k: u32,
    thread: u32,
) {
    let rows_aligned = a as u64 % 16 == 0
        && b as u64 % 16 == 0
        && args.lda.is_multiple_of(8)
        && args.ldb.is_multiple_of(8);
    // Copies run along k for A (and for B stored [n, k]), along n for B stored [k, n].
    let chunks_whole = k.is_multiple_of(8) && (B_NK || args.n.is_multiple_of(8));
    if rows_aligned && chunks_whole {
        let c_vector = c_vector_before::<PARTIAL>(args, c);
        // SAFETY: the fast path's alignment conditions were just checked.
        unsafe { body::<E, B_NK, true, PARTIAL>(args, a, b, c, k, c_vector, thread) }
    } else {
        // SAFETY: the slow path has no alignment conditions beyond 2 bytes.
        unsafe {
            unaligned::<E, B_NK, PARTIAL>(
                a,
                b,
                c,
                args.m,
                args.n,
                k,
                args.lda,
                args.ldb,
                args.ldc,
                args.bias,
                args.alpha,
                args.beta,
                args.slope,
                args.activation,
            )
        }
    }
}

/// Whether the item's results go out in 16-byte stores: C's rows (`ldc` apart) start on
/// 16-byte boundaries, or, with `PARTIAL`, the fp32 workspace's rows (`n` apart) do.
#[inline(always)]
fn vector_stores<const PARTIAL: bool>(args: &GemmArgs, c: *mut u16) -> bool {
    c as u64 % 16 == 0
        && if PARTIAL {
            args.n.is_multiple_of(4)
        } else {
            args.ldc.is_multiple_of(8)
        }
}

/// [`vector_stores`] as [`body`] takes it: without `PARTIAL` worked out by the caller, before the
/// main loop (as the ladder entry always has); with it, `false` here and worked out by the
/// body after its main loop (held across it, it cost the `[n, k]` 16-bit-load path a spill).
#[inline(always)]
fn c_vector_before<const PARTIAL: bool>(args: &GemmArgs, c: *mut u16) -> bool {
    !PARTIAL && vector_stores::<PARTIAL>(args, c)
}

/// The path for rows that do not start on 16-byte boundaries or chunks that straddle an edge:
/// 16-bit loads, any alignment. Kept out of line so that its registers do not crowd the fast
/// path's, and given scalars rather than a `&GemmArgs` (a pointer to the kernel's parameters
/// would make the compiler copy them to local memory).
///
/// # Safety
/// As [`batch_item`], with the arguments of one item.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn unaligned<E: HalfElement, const B_NK: bool, const PARTIAL: bool>(
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldc: u32,
    bias: u64,
    alpha: f32,
    beta: f32,
    slope: f32,
    activation: u32,
) {
    let args = GemmArgs {
        a: a as u64,
        b: b as u64,
        c: c as u64,
        bias,
        tensor_maps: 0,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
        workspace: 0,
        m,
        n,
        k,
        batch: 1,
        lda,
        ldb,
        ldc,
        activation,
        alpha,
        beta,
        slope,
        splits: 1,
        k_chunk: 0,
        stream_k_tiles: 0,
    };
    let c_vector = c_vector_before::<PARTIAL>(&args, c);
    // SAFETY: the 16-bit-load body has no alignment conditions beyond 2 bytes.
    unsafe { body::<E, B_NK, false, PARTIAL>(&args, a, b, c, k, c_vector, thread_x()) }
}

/// `cp.async` of 16 bytes from global `src` to the shared-memory address `dst` if
/// `index < limit`, else 16 zero bytes, with `fallback` as the (unread) source address. The
/// comparison and the choice of address are part of the asm so that LLVM cannot hoist the
/// comparison out of the main loop as a loop-invariant predicate (one register each).
///
/// # Safety
/// `dst` must be a 16-byte-aligned shared address of this block, `fallback` a 16-byte-aligned
/// global address; when `index < limit`, `src` must point to 16 readable, 16-byte-aligned
/// bytes of global memory.
#[inline(always)]
unsafe fn copy_async_16_below(
    dst: u32,
    src: *const u16,
    fallback: *const u16,
    index: u32,
    limit: u32,
) {
    // SAFETY: the caller's contract; with the ignore-src predicate set, nothing is read.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred ignore; .reg .b64 source;",
            "setp.ge.u32 ignore, {index}, {limit};",
            "selp.b64 source, {fallback}, {src}, ignore;",
            "cp.async.cg.shared.global [{dst}], [source], 16, ignore; }}",
            dst = in(reg32) dst,
            src = in(reg64) src,
            fallback = in(reg64) fallback,
            index = in(reg32) index,
            limit = in(reg32) limit,
            options(nostack),
        )
    };
}

/// The kernel for one item: `A` (m×k, rows `lda` apart) at `a`, `B` at `b` (`[n, k]` with
/// rows `ldb` apart when `B_NK`, else `[k, n]`), `C` (m×n, rows `ldc` apart) at `c`; m, n,
/// strides and epilogue from `args` (its addresses, k and batch fields are not read), k from
/// `k`. `ASYNC`: 16-byte `cp.async` copies, which need A's and B's rows to start on 16-byte
/// boundaries and k (and n for `[k, n]` B) to be multiples of 8; else 16-bit loads and 16-byte
/// shared stores. `c_vector`: C's rows start on 16-byte boundaries, so whole chunks of 8
/// results go out in one 16-byte store ([`c_vector_before`]: with `PARTIAL` the body works it
/// out itself, and whole chunks go out in two). `PARTIAL`: `c` is an fp32 matrix
/// with rows of n (the split-K workspace), which gets the raw products, no epilogue.
///
/// # Safety
/// The operands must be readable (C writable) wherever the shape and strides say, and the
/// `ASYNC` and `c_vector` conditions must hold; launched with [`gemm_geometry::v15`]'s
/// geometry.
#[inline(always)]
unsafe fn body<E: HalfElement, const B_NK: bool, const ASYNC: bool, const PARTIAL: bool>(
    args: &GemmArgs,
    a: *const u16,
    b: *const u16,
    c: *mut u16,
    k: u32,
    c_vector: bool,
    thread: u32,
) {
    let (m, n) = (args.m, args.n);
    let (lda, ldb, ldc) = (args.lda, args.ldb, args.ldc);
    let b_row_bytes = const { b_row_bytes(B_NK) };
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, quad) = (lane / 4, lane % 4);
    let warp_row = warp / WARPS_N * WARP_TILE_M;
    let warp_col = warp % WARPS_N * WARP_TILE_N;
    let stages_address = shared_address(shared_f32());

    // Copies: A chunk i of this thread is row thread/8 + 32i, chunk thread%8. B chunk i is row
    // thread/32 + 8i, chunk thread%32 for B stored [k, n] (rows of 256 columns), and row
    // thread/8 + 32i, chunk thread%8 for B stored [n, k] (rows of 64 k, like A). Their shared
    // offsets differ by whole swizzle periods. Each copy's source is a per-thread base plus a
    // stride: the bases are computed once.
    let (a_row, a_chunk) = (thread / 8, thread % 8);
    let (b_row, b_chunk) = if B_NK {
        (thread / 8, thread % 8)
    } else {
        (thread / 32, thread % 32)
    };
    let a_dst = swizzled(a_row, a_chunk, A_ROW_BYTES);
    let b_dst = A_BYTES + swizzled(b_row, b_chunk, b_row_bytes);
    let a_src = a.wrapping_add(at(first_row + a_row, a_chunk * 8, lda));
    let b_src = if B_NK {
        b.wrapping_add(at(first_col + b_row, b_chunk * 8, ldb))
    } else {
        b.wrapping_add(at(b_row, first_col + b_chunk * 8, ldb))
    };
    let b_col_valid = first_col + b_chunk * 8 < n;
    // [n, k] B: rows of B from this thread's first copy row on (0 past the end); copy i is
    // inside B when 32·i is below it.
    let b_rows_left = n.saturating_sub(first_col + b_row);
    // The source of a copy that reads nothing (zero fill), rather than an address outside the
    // matrix: the operands' own bases (16-byte aligned on the `cp.async` path).
    let (unread_a, unread_b) = (a, b);
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        {
            // A: 4 chunks of 8 elements per thread.
            seq!(i in 0..4 {
                let dst = stage_start + a_dst + i * 32 * A_ROW_BYTES;
                let (gr, gk) = (first_row + a_row + 32 * i, tile_k + a_chunk * 8);
                if ASYNC {
                    // Whole chunks: k is a multiple of 8.
                    let valid = gr < m && gk < k;
                    let src = if valid { a_src.wrapping_add(tile_k as usize + (32 * i) as usize * lda as usize) } else { unread_a };
                    // SAFETY: `dst` is inside this stage's A tile; `src` is 16-byte aligned
                    // (aligned base, lda and k multiples of 8) and read only when `valid`.
                    unsafe { copy_async_16(dst, src, valid) };
                } else {
                    // SAFETY: `dst` is inside this stage's A tile; the load reads only
                    // elements inside A.
                    unsafe { store_shared_16(dst, load8_f16_or_zero(a, lda, m, k, gr, gk)) };
                }
            });
        }
        if B_NK {
            // B stored [n, k]: 8 chunks along k, of rows 32 apart.
            let b_step = b_src.wrapping_add(tile_k as usize);
            // Copy i reads when 32·i < rows_limit: inside B and inside k (whole chunks).
            let rows_limit = if tile_k + b_chunk * 8 < k {
                b_rows_left
            } else {
                0
            };
            seq!(i in 0..8 {
                let dst = stage_start + b_dst + i * 32 * b_row_bytes;
                let (gn, gk) = (first_col + b_row + 32 * i, tile_k + b_chunk * 8);
                if ASYNC {
                    // One `mad.wide` per copy from the step's base (64·i·ldb bytes, a 64-bit
                    // product) and the bounds test inside the copy's own asm: LLVM otherwise
                    // hoists eight 64-bit pointers and eight loop-invariant row predicates out
                    // of the main loop, and they spilled.
                    let src = byte_offset(b_step, 64 * i, ldb);
                    // SAFETY: as for A, with B's base and ldb; `src` is read only when
                    // 32·i < rows_limit, i.e. when the chunk lies inside B.
                    unsafe { copy_async_16_below(dst, src, unread_b, 32 * i, rows_limit) };
                } else {
                    // SAFETY: as for A.
                    unsafe { store_shared_16(dst, load8_f16_or_zero(b, ldb, n, k, gn, gk)) };
                }
            });
        } else {
            // B stored [k, n]: 8 chunks along n, of rows 8 apart.
            seq!(i in 0..8 {
                let dst = stage_start + b_dst + i * 8 * b_row_bytes;
                let (gr, gc) = (tile_k + b_row + 8 * i, first_col + b_chunk * 8);
                if ASYNC {
                    // Whole chunks: n is a multiple of 8.
                    let valid = gr < k && b_col_valid;
                    let src = if valid { b_src.wrapping_add((tile_k + 8 * i) as usize * ldb as usize) } else { unread_b };
                    // SAFETY: as for A, with B's base and ldb (and n a multiple of 8).
                    unsafe { copy_async_16(dst, src, valid) };
                } else {
                    // SAFETY: as for A.
                    unsafe { store_shared_16(dst, load8_f16_or_zero(b, ldb, k, n, gr, gc)) };
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
    // [k, n] B: lane l points at k-row l % 16, chunk l / 16 of a 16-column pair of n8 tiles
    // (indexed by pair). [n, k] B: lane l points at n-row 8·(l / 16) + l % 8, k-chunk
    // (l / 8) % 2 of the k-step (indexed by k-step), so that the four matrices come out as
    // (n 0–7, k 0–7), (n 0–7, k 8–15), (n 8–15, k 0–7), (n 8–15, k 8–15): the two n8 tiles'
    // fragments each in two consecutive registers, the register pair `mma.sync` reads (A's
    // order would interleave them and cost a move per `mma`).
    let b_lane = if B_NK {
        let (nk_row, nk_chunk) = (lane / 16 * 8 + lane % 8, lane / 8 % 2);
        [
            swizzled(nk_row, nk_chunk, b_row_bytes),
            swizzled(nk_row, 2 + nk_chunk, b_row_bytes),
            swizzled(nk_row, 4 + nk_chunk, b_row_bytes),
            swizzled(nk_row, 6 + nk_chunk, b_row_bytes),
        ]
    } else {
        [
            swizzled(lane_row, lane_chunk, b_row_bytes),
            swizzled(lane_row, 2 + lane_chunk, b_row_bytes),
            swizzled(lane_row, 4 + lane_chunk, b_row_bytes),
            swizzled(lane_row, 6 + lane_chunk, b_row_bytes),
        ]
    };
    let a_warp = warp_row * A_ROW_BYTES;
    let b_warp = A_BYTES
        + if B_NK {
            warp_col * b_row_bytes
        } else {
            warp_col * 2
        };
    // Fragments of k-step `kstep` (0..4) of the stage at `stage` into `a_frag`, `b_frag`.
    let load = #[inline(always)]
    |stage: u32,
                kstep: usize,
                a_frag: &mut [[u32; 4]; 4],
                b_frag: &mut [[u32; 2]; 8]| {
        seq!(mi in 0..4 {
            // SAFETY: a 16-byte row of this stage's A tile per lane; warp-uniform.
            a_frag[mi] = unsafe { load_matrix_x4(stage + a_warp + mi * 16 * A_ROW_BYTES + a_lane[kstep]) };
        });
        seq!(pair in 0..4 {
            if B_NK {
                // Untransposed: each 8×8 matrix of n-rows is the `.col` operand as stored.
                // SAFETY: as for A, in this stage's B tile.
                let r = unsafe {
                    load_matrix_x4(stage + b_warp + pair * 16 * b_row_bytes + b_lane[kstep])
                };
                b_frag[2 * pair] = [r[0], r[1]];
                b_frag[2 * pair + 1] = [r[2], r[3]];
            } else {
                // SAFETY: as for A, in this stage's B tile.
                let r = unsafe {
                    load_matrix_x4_transposed(stage + b_warp + kstep as u32 * 16 * b_row_bytes + b_lane[pair])
                };
                b_frag[2 * pair] = [r[0], r[1]];
                b_frag[2 * pair + 1] = [r[2], r[3]];
            }
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
    let mut read_stage = StageRing::<STAGES>::new();
    let mut write_stage = StageRing::<STAGES>::at(STAGES - 1);
    for step in 0..steps {
        let stage = stages_address + read_stage.index() * STAGE_BYTES;
        seq!(kstep in 0..4 {
            if kstep == 1 {
                // The stage step − 1 used was last read before the previous barrier: refill
                // it with step + 3 now, two k-steps before this step's barrier, so that the
                // copies overlap the math (measured: 2–4% faster than issuing them after the
                // barrier, and faster than at k-step 0 or 2).
                let ahead = step + STAGES - 1;
                if ahead < steps {
                    issue(ahead, stages_address + write_stage.index() * STAGE_BYTES);
                }
                commit_async_copies();
            }
            if kstep == 3 {
                // Step + 1's tiles have landed (groups up to step + 3 are committed, so at most
                // the newest two may still be in flight): start on step + 1's first fragments.
                wait_async_copies::<{ STAGES - 2 }>();
                sync_threads();
                let next_stage = read_stage.next().index();
                if step + 1 < steps {
                    load(stages_address + next_stage * STAGE_BYTES, 0, &mut a_frag[0], &mut b_frag[0]);
                }
            } else {
                load(stage, kstep + 1, &mut a_frag[(kstep + 1) % 2], &mut b_frag[(kstep + 1) % 2]);
            }
            seq!(mi in 0..4 {
                seq!(ni in 0..8 {
                    E::mma_m16n8k16(&mut acc[mi][ni], &a_frag[kstep % 2][mi], &b_frag[kstep % 2][ni]);
                });
            });
        });
        read_stage.advance();
        write_stage.advance();
    }

    // Stage the block's 128×256 results in shared memory (the pipeline's stages are free once
    // every copy has landed and every warp is past its last fragment load), then write C in
    // 16-byte chunks of 8 elements, each warp covering whole rows at a time, instead of 4-byte
    // pairs scattered over eight rows. A thread's chunks all have the same columns (chunk
    // lane of rows warp + 8i).
    wait_async_copies::<0>();
    sync_threads();
    let staging = shared_f32() as *mut u8;
    let chunk_col = first_col + lane * 8;
    if !PARTIAL && args.is_plain_store() {
        // The products themselves, rounded to E in the fragments' registers.
        seq!(mi in 0..4 {
            seq!(ni in 0..8 {
                let row = warp_row + mi * 16 + group;
                let col = warp_col + ni * 8 + 2 * quad;
                let tile = &acc[mi][ni];
                // SAFETY: rows `row` and `row + 8` of the staged tile, inside the block's
                // shared memory (128 rows of STAGED_ROW_BYTES); 4-byte aligned (`col` even).
                unsafe {
                    let at_pair = staging.add((row * STAGED_ROW_BYTES + col * 2) as usize) as *mut u32;
                    at_pair.write(E::pack2(tile[0], tile[1]));
                    at_pair.add(2 * STAGED_ROW_BYTES as usize).write(E::pack2(tile[2], tile[3]));
                }
            });
        });
        sync_threads();
        seq!(i in 0..16 {
            let row = warp + 8 * i;
            let gr = first_row + row;
            if gr < m && chunk_col < n {
                // SAFETY: the staged chunk is inside the staging tile (16-byte aligned: rows of
                // 528 bytes); (gr, chunk_col..) is inside C, and only its columns < n are
                // written; the 16-byte store is aligned when `c_vector`.
                unsafe {
                    let from = staging.add((row * STAGED_ROW_BYTES + lane * 16) as usize);
                    let to = c.add(at(gr, chunk_col, ldc));
                    if c_vector && chunk_col + 8 <= n {
                        (to as *mut u32x4).write((from as *const u32x4).read());
                    } else {
                        seq!(j in 0..8 {
                            if chunk_col + j < n {
                                to.add(j).write((from as *const u16).add(j).read());
                            }
                        });
                    }
                }
            }
        });
    } else {
        // The fp32 products, staged: raw into the split-K workspace (`PARTIAL`), or through
        // the fused epilogue before rounding to E, combined with C (read only when beta ≠ 0,
        // as whole chunks where C allows) and the bias, then rounded and stored.
        seq!(mi in 0..4 {
            seq!(ni in 0..8 {
                let row = warp_row + mi * 16 + group;
                let col = warp_col + ni * 8 + 2 * quad;
                let tile = &acc[mi][ni];
                // SAFETY: rows `row` and `row + 8` of the fp32 staged tile (128 rows of
                // STAGED_F32_ROW_BYTES, inside the block's shared memory); 8-byte aligned.
                unsafe {
                    let at_pair = staging.add((row * STAGED_F32_ROW_BYTES + col * 4) as usize) as *mut f32x2;
                    at_pair.write(f32x2::from_array([tile[0], tile[1]]));
                    at_pair
                        .byte_add(8 * STAGED_F32_ROW_BYTES as usize)
                        .write(f32x2::from_array([tile[2], tile[3]]));
                }
            });
        });
        sync_threads();
        if PARTIAL {
            let workspace = c as *mut f32;
            let workspace_vector = vector_stores::<PARTIAL>(args, c);
            for i in 0..CHUNKS_PER_THREAD {
                let row = warp + 8 * i;
                let gr = first_row + row;
                if gr < m && chunk_col < n {
                    // SAFETY: the staged chunk (32 bytes) is inside the staging tile, 16-byte
                    // aligned; (gr, chunk_col..) is inside the item's m × n workspace matrix
                    // (rows of n), written only at columns < n; the 16-byte stores are aligned
                    // when `workspace_vector` (base aligned, n a multiple of 4, chunk_col of 8).
                    unsafe {
                        let from = staging.add((row * STAGED_F32_ROW_BYTES + lane * 32) as usize)
                            as *const f32x4;
                        let to = workspace.add(at(gr, chunk_col, n));
                        if workspace_vector && chunk_col + 8 <= n {
                            (to as *mut f32x4).write(from.read());
                            (to as *mut f32x4).add(1).write(from.add(1).read());
                        } else {
                            let from = from as *const f32;
                            seq!(j in 0..8 {
                                if chunk_col + j < n {
                                    to.add(j).write(from.add(j).read());
                                }
                            });
                        }
                    }
                }
            }
            return;
        }
        // This thread's eight bias values, the same for all its chunks.
        let mut bias = [0.0f32; 8];
        if args.bias != 0 {
            let bias_at = args.bias as *const E;
            seq!(j in 0..8 {
                if chunk_col + j < n {
                    // SAFETY: the bias holds n elements of E.
                    bias[j] = unsafe { bias_at.add((chunk_col + j) as usize).read() }.to_f32();
                }
            });
        }
        for i in 0..CHUNKS_PER_THREAD {
            let row = warp + 8 * i;
            let gr = first_row + row;
            if gr < m && chunk_col < n {
                // SAFETY: the staged chunk (32 bytes) is inside the staging tile, 16-byte
                // aligned; (gr, chunk_col..) is inside C, read (when beta ≠ 0) and written only
                // at columns < n; the 16-byte accesses are aligned when `c_vector`.
                unsafe {
                    let from = staging.add((row * STAGED_F32_ROW_BYTES + lane * 32) as usize)
                        as *const f32x4;
                    let (low, high) = (from.read(), from.add(1).read());
                    let products = [
                        low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3],
                    ];
                    let to = c.add(at(gr, chunk_col, ldc));
                    if c_vector && chunk_col + 8 <= n {
                        let old = if args.beta != 0.0 {
                            (to as *const u32x4).read()
                        } else {
                            u32x4::splat(0)
                        };
                        let mut out = [0u32; 4];
                        seq!(p in 0..4 {
                            let old_low = E::from_bits(old[p] as u16).to_f32();
                            let old_high = E::from_bits((old[p] >> 16) as u16).to_f32();
                            out[p] = E::pack2(
                                args.epilogue(products[2 * p], old_low, bias[2 * p], tanh),
                                args.epilogue(products[2 * p + 1], old_high, bias[2 * p + 1], tanh),
                            );
                        });
                        (to as *mut u32x4).write(u32x4::from_array(out));
                    } else {
                        let to = to as *mut E;
                        seq!(j in 0..8 {
                            if chunk_col + j < n {
                                let old = if args.beta != 0.0 { to.add(j).read().to_f32() } else { 0.0 };
                                to.add(j).write(E::from_f32(args.epilogue(products[j], old, bias[j], tanh)));
                            }
                        });
                    }
                }
            }
        }
    }
}
