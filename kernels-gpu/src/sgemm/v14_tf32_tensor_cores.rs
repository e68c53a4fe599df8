//! # v14 — TF32 tensor cores (`mma.sync` m16n8k8)
//!
//! **Idea.** Stop multiplying on the FMA units. A tensor core multiplies a 16×8 tile by an 8×8
//! tile in one warp-wide instruction, `mma.sync.m16n8k8.tf32`: 2 048 flops where an FFMA does
//! 2 per thread. The inputs are rounded to TF32 (fp32's 8-bit exponent, 10 mantissa bits:
//! `cvt.rna.tf32.f32`), the products are exact, and the sums stay in fp32. Each warp owns a
//! 64×64 tile of C: 4 × 8 tiles of 16×8, 128 fp32 accumulators per thread, spread over the
//! warp as the PTX ISA's fragment layout says (see [`crate::tensor_core`]).
//!
//! **Fixes.** v13 had reached the FFMA pipe's limits (89–91% of cuBLAS SGEMM, no faster way to
//! do fp32 multiplies). The H100's tensor cores do TF32 several times faster than its FMA units
//! do fp32, at the price of input precision: a TF32 result differs from fp32 by about 2⁻¹¹
//! relative to the terms (see `host/src/verify.rs`), which is what cuBLAS's own TF32 mode
//! gives and what the host's TF32 check allows.
//!
//! The feed is v13's: a 4-stage `cp.async` pipeline, 16-byte copies (4-byte copies where
//! rows are not 16-byte aligned), zeros for elements outside the matrices, grouped order.
//! Fragments are read from shared memory one 32-bit word at a time; the rows are *padded* so
//! that the eight rows a fragment load touches fall in different banks: A rows are
//! 16 + 4 floats long (thread (g, q) reads bank `20g + q mod 32`: all 32 distinct), B rows
//! 128 + 8 (bank `8q + g`: distinct). v15 solves the same problem by swizzling instead.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 148.5 TFLOP/s, 3.2× v13 but 37% of
//! cuBLAS in TF32 mode (404 TFLOP/s); 35% at 8192³. What holds it back: 32 scalar shared loads
//! and 32 `cvt` per 32 `mma`, and `mma.sync` itself (see v15).
//!
//! Launch: 128 threads (4 warps, 2 × 2 warp tiles), grid ⌈m/128⌉·⌈n/128⌉ (1-D, grouped),
//! [`gemm_geometry::v14::SHARED_BYTES_KN`] of dynamic shared memory (4 stages of padded 128×16
//! A and 16×128 B). The numbers live in [`gemm_geometry::v14`], where the host reads them too.
//!
//! **As a library kernel.** The same body serves [`gemm_v14_tf32_kn`] (B stored `[k, n]`) and
//! [`gemm_v14_tf32_nk`] (B stored `[n, k]`, `C = A·Bᵀ`), which take a [`GemmArgs`]: leading
//! dimensions, a batch along grid z, and the fused epilogue of [`crate::epilogue`] at the store.
//! An `[n, k]` B is kept in shared memory as it is stored, `[n][k]` padded like A
//! (`K_MAJOR_STRIDE`): the B fragment of m16n8k8 is "col", thread (g, q) holding (k = q, n = g)
//! and (k = q + 4, n = g), so from an `[n][k]` tile it is read exactly as A's fragment is
//! (bank `20g + q`, conflict-free), and the tile is filled by the same 16-byte copies along k as
//! A's, with no transposition anywhere. The 16-byte copies are taken only where the addresses
//! allow them, decided at run time (per batch item) from the arguments; elsewhere 4-byte
//! copies, so any leading dimension and any 4-byte aligned base work.
//!
//! Both entries support split-K ([`crate::split_k`]): with `args.splits > 1` grid z walks the
//! slices of k of every batch item, and each block stores its tile's raw fp32 accumulators
//! into the workspace instead of C. The body is the same; only the item's A, B, k and target
//! differ.

use crate::device::{
    at, block_z, commit_async_copies, copy_async_4, copy_async_16, grid_dim_z, shared_address,
    shared_f32, store2_or_partial, sync_threads, thread_x, thread_x_each_time, wait_async_copies,
};
use crate::pipeline::StageRing;
use crate::split_k;
use crate::tensor_core::{mma_tf32_m16n8k8, to_tf32};
use crate::tile_order::grouped_block_origin;
use gemm_geometry::GemmArgs;
use gemm_geometry::v14::{
    A_FLOATS, B_STRIDE_KN, BLOCK_TILE_M, BLOCK_TILE_N, K_MAJOR_STRIDE, MIN_BLOCKS_PER_SM,
    STAGE_FLOATS_KN, STAGE_FLOATS_NK, STAGES, THREADS, TILE_K, WARP_TILE, WARPS_N,
};
use seq_macro::seq;

/// A warp's accumulators, per thread: 4 × 8 tiles of 16 × 8, four values each (rows `g` and
/// `g + 8`, columns `2q` and `2q + 1`; see [`crate::tensor_core`]).
type Accumulators = [[[f32; 4]; 8]; 4];

// What the copies and fragment loads below are written for.
const _: () = {
    assert!(BLOCK_TILE_M == 2 * WARP_TILE && BLOCK_TILE_N == 2 * WARP_TILE && WARP_TILE == 64);
    assert!(TILE_K == 16 && STAGES >= 2 && STAGES <= 4);
    // Four 16-byte copies per thread for each tile: 128 rows × 16 k, or 16 rows × 128 n.
    assert!(BLOCK_TILE_M * TILE_K / 4 == 4 * THREADS);
    assert!(BLOCK_TILE_N * TILE_K / 4 == 4 * THREADS);
    // Rows and stages start on 16-byte boundaries.
    assert!(K_MAJOR_STRIDE.is_multiple_of(4) && B_STRIDE_KN.is_multiple_of(4));
    assert!(STAGE_FLOATS_KN.is_multiple_of(4) && STAGE_FLOATS_NK.is_multiple_of(4));
};

crate::launch_bounds!(sgemm_v14_tf32_tensor_cores, THREADS, MIN_BLOCKS_PER_SM);

/// v14: TF32 `mma.sync`, 128×128 block tiles 16 deep, 64×64 per warp, 4-stage `cp.async`.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), with `a`, `b`,
/// `c` 16-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v14_tf32_tensor_cores(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
    // Contiguous row-major matrices from `cudaMalloc` (256-byte aligned): rows allow 16-byte
    // copies exactly when their lengths are multiples of 4.
    let operands = Operands {
        a,
        b,
        lda: k,
        ldb: n,
        m,
        n,
        k,
        a_aligned_16: true,
        b_aligned_16: true,
    };
    // SAFETY: the host passes A (m×k), B (k×n) and C (m×n), contiguous and 16-byte aligned,
    // and launches THREADS threads with SHARED_BYTES_KN of dynamic shared memory.
    let (acc, row, col) =
        unsafe { tf32_tile::<false>(&operands, thread_x(), first_row, first_col) };
    seq!(mi in 0..4 {
        seq!(ni in 0..8 {
            let (r, cc) = (row + mi * 16, col + ni * 8);
            let tile = &acc[mi][ni];
            // SAFETY: `store2_or_partial` writes only elements inside C.
            unsafe {
                store2_or_partial(c, m, n, r, cc, tile[0], tile[1]);
                store2_or_partial(c, m, n, r + 8, cc, tile[2], tile[3]);
            }
        });
    });
}

crate::launch_bounds!(gemm_v14_tf32_kn, THREADS, MIN_BLOCKS_PER_SM);

/// Library TF32 GEMM, B stored `[k, n]`: for each batch item,
/// `C = act(alpha·A·B + beta·C + bias)` as [`GemmArgs`] defines it, with A and B rounded to
/// TF32 (`cvt.rna`) and fp32 accumulation.
///
/// Launch: [`THREADS`] threads (1-D), grid `(v14::grid_x(m, n), 1, min(items, 65535))` (items: `split_k::items(args)`, the batch without a split),
/// [`gemm_geometry::v14::SHARED_BYTES_KN`] bytes of dynamic shared memory (over 48 KiB: the
/// function's max-dynamic-shared-memory attribute must allow it).
///
/// # Safety
/// `args` must describe valid device memory: A, B, C (and the bias, if not 0) of every batch
/// item inside their allocations, for the leading dimensions and strides given (`lda ≥ k`,
/// `ldb ≥ n`, `ldc ≥ n`), C not overlapping A, B or the bias; `m`, `n` ≥ 1 (the host launches
/// nothing otherwise). Alignment: every base address only 4-byte aligned (f32). Where A's batch
/// base is 16-byte aligned and `lda` and `k` are multiples of 4, A is copied 16 bytes at a
/// time, else 4; B likewise with `ldb` and `n`; where C's batch base is 8-byte aligned and `ldc`
/// even, C is written 8 bytes at a time, else 4. Those choices are made here, so they are not
/// preconditions.
///
/// Split-K ([`crate::split_k`]): with `args.splits > 1` (and `k_chunk` as
/// `gemm_geometry::split_k::slices` gives it) grid z walks `splits·batch` virtual items
/// (`splits·batch < 2³²`), and each writes its slice's raw fp32 product to `args.workspace`
/// (`splits·batch·m·n` fp32, 4-byte aligned, overlapping nothing it reads) instead of C, which
/// is neither read nor written; 8-byte stores where a workspace row allows them (n even), else 4.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v14_tf32_kn(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<false>(&args) };
}

crate::launch_bounds!(gemm_v14_tf32_nk, THREADS, MIN_BLOCKS_PER_SM);

/// Library TF32 GEMM, B stored `[n, k]` (`C = act(alpha·A·Bᵀ + beta·C + bias)`, B a PyTorch
/// `nn.Linear` weight), A and B rounded to TF32, fp32 accumulation.
///
/// Launch: [`THREADS`] threads (1-D), grid `(v14::grid_x(m, n), 1, min(items, 65535))` (items: `split_k::items(args)`, the batch without a split),
/// [`gemm_geometry::v14::SHARED_BYTES_NK`] bytes of dynamic shared memory.
///
/// # Safety
/// As [`gemm_v14_tf32_kn`], with B `[n, k]` (`ldb ≥ k`): B is copied 16 bytes at a time where
/// its batch base is 16-byte aligned and `ldb` and `k` are multiples of 4, else 4. Split-K as
/// there.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v14_tf32_nk(args: GemmArgs) {
    // SAFETY: the caller's contract above.
    unsafe { library::<true>(&args) };
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
    /// A's first element is 16-byte aligned.
    a_aligned_16: bool,
    /// B's first element is 16-byte aligned.
    b_aligned_16: bool,
}

impl Operands {
    /// Whether A may be copied 16 bytes at a time: 16-byte aligned base, and `lda` and `k`
    /// multiples of 4 (a float4 at a k that is a multiple of 4 then lies wholly inside or
    /// wholly outside its row). For the ladder entry this folds to `k % 4 == 0`.
    #[inline(always)]
    fn a_vector(&self) -> bool {
        self.a_aligned_16 && self.lda.is_multiple_of(4) && self.k.is_multiple_of(4)
    }

    /// Whether B may be copied 16 bytes at a time: 16-byte aligned base, `ldb` a multiple of 4,
    /// and the length of its rows (n for `[k, n]`, k for `[n, k]`) too.
    #[inline(always)]
    fn b_vector<const B_NK: bool>(&self) -> bool {
        let row_length = if B_NK { self.k } else { self.n };
        self.b_aligned_16 && self.ldb.is_multiple_of(4) && row_length.is_multiple_of(4)
    }
}

/// The library entries: walk the batch (or, under split-K, the slices of every batch item)
/// along grid z, run the pipeline on each item, and store through the fused epilogue (or raw
/// into the split-K workspace; see [`crate::split_k`]).
///
/// # Safety
/// As [`gemm_v14_tf32_kn`] (`B_NK` false) or [`gemm_v14_tf32_nk`] (`B_NK` true).
#[inline(always)]
unsafe fn library<const B_NK: bool>(args: &GemmArgs) {
    // SAFETY: forwarded, with `SPLIT` as `is_split` says.
    unsafe {
        if split_k::is_split(args) {
            walk::<B_NK, true>(args)
        } else {
            walk::<B_NK, false>(args)
        }
    }
}

/// [`library`]'s walk over the virtual items along grid z, compiled once per `SPLIT`
/// (`split_k::is_split(args)`; see [`crate::split_k`]).
///
/// # Safety
/// As [`library`], and `SPLIT` must be `split_k::is_split(args)`.
#[inline(always)]
unsafe fn walk<const B_NK: bool, const SPLIT: bool>(args: &GemmArgs) {
    let (m, n) = (args.m, args.n);
    let (first_row, first_col) = grouped_block_origin(m, n, BLOCK_TILE_M, BLOCK_TILE_N);
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
            a_aligned_16: (item.a as usize).is_multiple_of(16),
            b_aligned_16: (item.b as usize).is_multiple_of(16),
        };
        // SAFETY: the caller's contract (valid operands of item zz). The thread index is read
        // anew per item, so that nothing derived from it is held across the batch loop.
        let (acc, row, col) =
            unsafe { tf32_tile::<B_NK>(&operands, thread_x_each_time(), first_row, first_col) };
        // Worked out after the k loop, so that nothing of it is held across.
        let target = split_k::item_target::<f32, SPLIT>(args, zz);
        // Pairs of columns (2q, 2q + 1) as one 8-byte store.
        let vector = target.at.is_multiple_of(8) && target.ld.is_multiple_of(2);
        seq!(mi in 0..4 {
            seq!(ni in 0..8 {
                let (r, cc) = (row + mi * 16, col + ni * 8);
                let tile = &acc[mi][ni];
                // SAFETY: only elements inside the target's m × n are written (and read, when
                // it is C and beta ≠ 0).
                unsafe {
                    store_pair_with_epilogue(args, &target, r, cc, tile[0], tile[1], vector);
                    store_pair_with_epilogue(args, &target, r + 8, cc, tile[2], tile[3], vector);
                }
            });
        });
        zz += grid_dim_z();
        // The next item's first copies go into stages that slower warps may still be reading.
        sync_threads();
    }
}

/// Queues the copies of one step of a tile stored along k (A `[m, k]`; B `[n, k]`) into its
/// `[rows][K_MAJOR_STRIDE]` place at byte `destination` of shared memory: four chunks of 4
/// floats per thread, chunk `thread + i·THREADS` at (row, k) = (index / 4, index % 4 · 4) of
/// the tile, whose first row is `first_row` of the matrix. Elements outside `rows × k` arrive
/// as zeros. `vector`: one 16-byte copy per chunk (see [`Operands::a_vector`]), else four of
/// 4 bytes.
///
/// # Safety
/// `matrix` must hold `rows` rows of row stride `ld` (each with at least `k` elements), and
/// `vector` may be true only where its condition holds.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn copy_k_major(
    matrix: *const f32,
    ld: u32,
    rows: u32,
    k: u32,
    first_row: u32,
    tile_k: u32,
    vector: bool,
    thread: u32,
    destination: u32,
) {
    seq!(i in 0..4 {
        let index = thread + i * THREADS;
        let (row, kk) = (index / (TILE_K / 4), index % (TILE_K / 4) * 4);
        let (gr, gk) = (first_row + row, tile_k + kk);
        let dst = destination + (row * K_MAJOR_STRIDE + kk) * 4;
        if vector {
            let valid = gr < rows && gk < k;
            // SAFETY: an aligned float4 inside the matrix (k % 4 == 0), or nothing read.
            unsafe {
                let src = if valid { matrix.add(at(gr, gk, ld)) } else { matrix };
                copy_async_16(dst, src, valid)
            };
        } else {
            seq!(q in 0..4 {
                let valid = gr < rows && gk + q < k;
                // SAFETY: an element inside the matrix, or nothing read.
                unsafe {
                    let src = if valid { matrix.add(at(gr, gk + q, ld)) } else { matrix };
                    copy_async_4(dst + 4 * q, src, valid)
                };
            });
        }
    });
}

/// The pipelined TF32 GEMM of the block tile at (`first_row`, `first_col`): returns the
/// thread's accumulators and the row and column of C that `acc[0][0][0]` belongs to (tile
/// `[mi][ni]` starts `16·mi` rows and `8·ni` columns further). `B_NK`: B is stored `[n, k]`.
///
/// # Safety
/// `operands` must describe valid matrices (A `m × k`, B `k × n` or `n × k`, with their row
/// strides), the `*_aligned_16` flags must hold only when true, and the block must have
/// [`THREADS`] threads and the stage bytes of its B layout in dynamic shared memory.
#[inline(always)]
unsafe fn tf32_tile<const B_NK: bool>(
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
        ..
    } = *operands;
    let stage_floats = if B_NK {
        STAGE_FLOATS_NK
    } else {
        STAGE_FLOATS_KN
    };
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, quad) = (lane / 4, lane % 4);
    let warp_row = warp / WARPS_N * WARP_TILE;
    let warp_col = warp % WARPS_N * WARP_TILE;

    let stages = shared_f32();
    let stages_address = shared_address(stages);
    let a_vector = operands.a_vector();
    let b_vector = operands.b_vector::<B_NK>();

    // Queue the copies of step `step` into the stage at byte `stage_start`: 4 chunks of
    // 4 floats of A and of B per thread. Elements outside A or B arrive as zeros.
    let issue = #[inline(always)]
    |step: u32, stage_start: u32| {
        let tile_k = step * TILE_K;
        // SAFETY: A is `m × k` with row stride lda.
        unsafe {
            copy_k_major(
                a,
                lda,
                m,
                k,
                first_row,
                tile_k,
                a_vector,
                thread,
                stage_start,
            )
        };
        if B_NK {
            // SAFETY: B is `n × k` with row stride ldb; its tile's rows are C's columns.
            unsafe {
                copy_k_major(
                    b,
                    ldb,
                    n,
                    k,
                    first_col,
                    tile_k,
                    b_vector,
                    thread,
                    stage_start + A_FLOATS * 4,
                )
            };
            return;
        }
        seq!(i in 0..4 {
            let index = thread + i * THREADS;
            let (row, col) = (index / (BLOCK_TILE_N / 4), index % (BLOCK_TILE_N / 4) * 4);
            let (gr, gc) = (tile_k + row, first_col + col);
            let dst = stage_start + (A_FLOATS + row * B_STRIDE_KN + col) * 4;
            if b_vector {
                let valid = gr < k && gc < n;
                // SAFETY: an aligned float4 inside B (n % 4 == 0), or nothing read.
                unsafe {
                    let src = if valid { b.add(at(gr, gc, ldb)) } else { b };
                    copy_async_16(dst, src, valid)
                };
            } else {
                seq!(q in 0..4 {
                    let valid = gr < k && gc + q < n;
                    // SAFETY: an element inside B, or nothing read.
                    unsafe {
                        let src = if valid { b.add(at(gr, gc + q, ldb)) } else { b };
                        copy_async_4(dst + 4 * q, src, valid)
                    };
                });
            }
        });
    };

    let steps = k.div_ceil(TILE_K);
    // Prologue: STAGES − 1 steps in flight, one (possibly empty) group committed per step.
    for s in 0..STAGES - 1 {
        if s < steps {
            issue(s, stages_address + s * stage_floats * 4);
        }
        commit_async_copies();
    }
    let mut acc = [[[0.0f32; 4]; 8]; 4];
    let mut read_stage = StageRing::<STAGES>::new();
    let mut write_stage = StageRing::<STAGES>::at(STAGES - 1);
    for step in 0..steps {
        wait_async_copies::<{ STAGES - 2 }>();
        sync_threads();
        let ahead = step + STAGES - 1;
        if ahead < steps {
            issue(
                ahead,
                stages_address + write_stage.index() * stage_floats * 4,
            );
        }
        commit_async_copies();

        // SAFETY: both tiles lie inside stage `read_stage` of the dynamic shared memory, filled
        // by every thread's copies before the barrier above.
        let a_tile = unsafe { stages.add((read_stage.index() * stage_floats) as usize) };
        let b_tile = unsafe { a_tile.add(A_FLOATS as usize) };
        seq!(kstep in 0..2 {
            let kk = kstep * 8;
            let mut a_frag = [[0u32; 4]; 4];
            seq!(mi in 0..4 {
                // SAFETY: rows and k inside the A tile.
                let top = unsafe { a_tile.add(((warp_row + mi * 16 + group) * K_MAJOR_STRIDE + kk + quad) as usize) };
                let bottom = unsafe { top.add(8 * K_MAJOR_STRIDE as usize) };
                a_frag[mi] = unsafe {
                    [to_tf32(*top), to_tf32(*bottom), to_tf32(*top.add(4)), to_tf32(*bottom.add(4))]
                };
            });
            let mut b_frag = [[0u32; 2]; 8];
            seq!(ni in 0..8 {
                // SAFETY: (k, n) inside the B tile, in its layout: b0 = (k = q, n = g),
                // b1 = (k = q + 4, n = g).
                b_frag[ni] = unsafe {
                    if B_NK {
                        let upper = b_tile.add(((warp_col + ni * 8 + group) * K_MAJOR_STRIDE + kk + quad) as usize);
                        [to_tf32(*upper), to_tf32(*upper.add(4))]
                    } else {
                        let upper = b_tile.add(((kk + quad) * B_STRIDE_KN + warp_col + ni * 8 + group) as usize);
                        [to_tf32(*upper), to_tf32(*upper.add(4 * B_STRIDE_KN as usize))]
                    }
                };
            });
            seq!(mi in 0..4 {
                seq!(ni in 0..8 {
                    mma_tf32_m16n8k8(&mut acc[mi][ni], &a_frag[mi], &b_frag[ni]);
                });
            });
        });
        read_stage.advance();
        write_stage.advance();
    }
    (
        acc,
        first_row + warp_row + group,
        first_col + warp_col + 2 * quad,
    )
}

/// Writes columns `col` and `col + 1` (`col` even) of row `row` of `target` (one item's C, row
/// stride `target.ld`, through the library's epilogue; or its split-K workspace matrix, raw:
/// [`split_k::output_value`]), skipping elements outside `m × n`. `vector`: the target's base
/// is 8-byte aligned and its row stride even, so the pair is one 8-byte store.
///
/// # Safety
/// `target` must hold `m` rows of `target.ld` elements (the last needing only `n`); the bias,
/// if any, `n` elements.
#[inline(always)]
unsafe fn store_pair_with_epilogue(
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    row: u32,
    col: u32,
    v0: f32,
    v1: f32,
    vector: bool,
) {
    let n = args.n;
    if row >= args.m {
        return;
    }
    let at_col =
        (target.at as *mut f32).wrapping_add(row as usize * target.ld as usize + col as usize);
    let (inside0, inside1) = (col < n, col + 1 < n);
    // The epilogue once per element (it is long: GELU's tanh), then one store path.
    // SAFETY: each element is read (C, beta ≠ 0) and written only when inside the target; the
    // pair store is 8-byte aligned (`vector`, `col` even).
    unsafe {
        let out0 = if inside0 {
            split_k::output_value::<f32>(args, target, v0, at_col, col)
        } else {
            0.0
        };
        let out1 = if inside1 {
            split_k::output_value::<f32>(args, target, v1, at_col.add(1), col + 1)
        } else {
            0.0
        };
        if vector && inside1 {
            (at_col as *mut core::simd::f32x2).write(core::simd::f32x2::from_array([out0, out1]));
        } else {
            if inside0 {
                at_col.write(out0);
            }
            if inside1 {
                at_col.add(1).write(out1);
            }
        }
    }
}
