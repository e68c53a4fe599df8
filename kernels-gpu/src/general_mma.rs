//! The general tensor-core kernel: fp16/bf16 `mma.sync` for every input the API accepts,
//! whatever its alignment, in 64×64 block tiles.
//!
//! **Why.** The fast fp16/bf16 kernels need rows on 16-byte boundaries (v18's TMA, the `cp.async`
//! paths of v15 and the thin kernels); the suite's ragged shapes (k or n odd: 127×129×131,
//! 4097×31×513, 33×8191×1025, 2047×2049×33, 17×17×65537) have none, and went to v15's 16-bit-load
//! path, whose 128×256 tiles leave most SMs idle on such products and whose few blocks are
//! latency-bound (0.28–0.54 of cuBLAS). The general kernel has the right tiles but multiplies
//! with FMAs at a tenth of the tensor cores' rate. This kernel takes the general kernel's walk,
//! tiles and scalar loads and multiplies with `mma.sync`.
//!
//! **How.** 128 threads (4 warps, 2 × 2) per 64×64 tile of C, 32×32 per warp (2 m16 × 4 n8
//! `mma` tiles). Per 32-deep step of k each thread loads 16 elements of A and 16 of B with
//! `ld.global.b16`, each under its own bounds check (zeros outside the matrices), one warp
//! reading 32 consecutive elements per load; the next step's loads are in flight while the
//! current one is multiplied (register double buffering, two shared-memory stages, one barrier
//! per step). The slices are staged as 16-bit values in the layouts `ldmatrix` reads (rows along
//! k for A and for B stored `[n, k]`, rows along n for B stored `[k, n]`, read with
//! `ldmatrix.trans`), each row padded by 16 bytes so that an 8×8 matrix's rows hit distinct
//! banks. Results go through shared memory (fp32) and out element by element, a warp's 32
//! stores to consecutive columns of one row, through the fused epilogue (or raw into the
//! split-K workspace). The numbers live in [`gemm_geometry::general_mma`], which the host reads
//! too.
//!
//! **Measured** (H100, `docs/results/general-mma`): 97 TFLOP/s at 4096³ fp16 (v18 reaches ~670,
//! so dispatch keeps aligned products off it), and against v15's element-load path at the same
//! shapes 1.03–2.6× faster (but 0.91× at 17×17×65537 with B `[n, k]`): 127×129×131 in 16–17 µs (v15 26), 4097×31×513 24–26 µs (35–40),
//! 2047×2049×33 20 µs (35–36), 1023³ 46 µs (118–123), 4095³ 1.4–1.6 ms (1.6–1.7). The fp16
//! shape suite's geometric mean went from 0.887 to 0.927 of cuBLAS, bf16's from 0.899 to 0.944.
//! A first version packed each pair of loaded 16-bit values into one register as they arrived:
//! that consumed every load at once, so a thread waited for its 32 loads one after another
//! (22 TFLOP/s at 4096³).
//!
//! One generic body, monomorphized per element type and B layout into the entries
//! `gemm_general_mma_{f16,bf16}_{kn,nk}`. It supports split-K ([`crate::split_k`]) as the
//! general kernel does.
//!
//! Launch: [`THREADS`] threads (1-D), grid [`gemm_geometry::general_mma::grid`]`(m, n, items)`
//! (x over column tiles, y over row tiles, z over batch or split-K items, each capped at CUDA's
//! limit: a block walks its tiles and items in grid-sized steps), [`SHARED_BYTES`] bytes of
//! dynamic shared memory, compute capability 8.0. Preconditions: those of the general kernel
//! (`crate::general`): `m, n, batch ≥ 1`; addresses as [`GemmArgs`] describes them, each
//! aligned to 2 bytes; under split-K `args.workspace` holds `splits·batch·m·n` fp32.

use crate::device::{
    byte_offset, load_global_b16, opaque_mad, shared_address, shared_f32, store_shared_u16,
    sync_threads, thread_x,
};
use crate::element::{Bf16, Element, F16};
use crate::split_k;
use crate::tensor_core::{HalfElement, load_matrix_x4, load_matrix_x4_transposed};
use core::simd::f32x2;
use gemm_geometry::GemmArgs;
use gemm_geometry::general_mma::{
    BLOCK_TILE_M, BLOCK_TILE_N, K_ROW_BYTES, LOADS_PER_THREAD, N_ROW_BYTES, OperandOrder,
    SLICE_BYTES, STAGE_BYTES, THREADS, TILE_K, WARP_TILE_M, WARP_TILE_N, WARPS_N, slot,
    staged_offset,
};
use seq_macro::seq;

#[cfg(doc)]
use gemm_geometry::general_mma::SHARED_BYTES;

const _: () = assert!(LOADS_PER_THREAD == 16 && TILE_K == 32);
const _: () = assert!(WARP_TILE_M == 32 && WARP_TILE_N == 32);

/// The order of an operand: A and B stored `[n, k]` are k-contiguous, B stored `[k, n]` is not.
const fn order(k_contiguous: bool) -> OperandOrder {
    if k_contiguous {
        OperandOrder::KContiguous
    } else {
        OperandOrder::MnContiguous
    }
}

/// One thread's loads of one operand for one block tile (see [`gemm_geometry::general_mma::slot`]
/// for which elements): where its slot-0 element of the current step lies and how far the others
/// and the next step are. `K_CONTIGUOUS`: rows of the operand run along k (A, B stored `[n, k]`).
#[derive(Clone, Copy)]
struct SliceLoader<const K_CONTIGUOUS: bool> {
    /// Byte address of this thread's slot-0 element in the current step's slice. It may lie
    /// outside the matrix; it is only read when it does not.
    slot0: u64,
    /// Elements from one row of the operand to the next (its leading dimension). Slots step
    /// 4 rows (`8·ld` bytes, one row per warp); a step moves 64 bytes along the rows
    /// (k-contiguous) or 32 rows (`64·ld` bytes). Both offsets are one `mad.wide.u32` of `ld`
    /// each, so the loader holds no 64-bit strides: with them, the `[k, n]` entries spilled on
    /// sm_80 at 128 registers.
    ld: u32,
    /// Position along k of slot 0 in the slice.
    k0: u32,
    /// Position along m or n of slot 0 in the slice.
    mn0: u32,
    /// Rows (A) or columns (B) of C from the block tile's first to the matrix's end.
    mn_left: u32,
}

impl<const K_CONTIGUOUS: bool> SliceLoader<K_CONTIGUOUS> {
    /// The loader of `thread` for the block tile starting at row (A) or column (B)
    /// `first_mn < mn_extent` of an operand at byte address `base` with rows `ld` elements apart.
    #[inline(always)]
    fn new(base: u64, ld: u32, mn_extent: u32, first_mn: u32, thread: u32) -> Self {
        let (k0, mn0) = slot(order(K_CONTIGUOUS), thread, 0);
        let wide_ld = ld as u64;
        let (along_k, along_mn) = if K_CONTIGUOUS {
            (1, wide_ld)
        } else {
            (wide_ld, 1)
        };
        let mn = first_mn as u64 + mn0 as u64;
        const _: () = assert!(THREADS / 32 == 4);
        SliceLoader {
            slot0: base.wrapping_add((mn * along_mn + k0 as u64 * along_k) * 2),
            ld,
            k0,
            mn0,
            mn_left: mn_extent - first_mn,
        }
    }

    /// The 16 elements this thread stages from the current step's slice (zeros outside the
    /// matrix, never read), then moves on to the next step. `k_left` is k minus the slice's
    /// first k index (≥ 1). Nothing here uses the loaded values: the loads stay in flight
    /// across the step's `mma`s, and only [`SliceLoader::stash`] waits for them. (Packing them
    /// in pairs as they arrive, to save registers, waited for each load in turn: 22 TFLOP/s at
    /// 4096³ on the H100.)
    ///
    /// # Safety
    /// The loader must describe a matrix of 16-bit elements readable along k up to the current
    /// slice's first index plus `k_left`.
    #[inline(always)]
    unsafe fn fetch(&mut self, k_left: u32) -> [u16; 16] {
        let mut values = [0u16; 16];
        seq!(s in 0..16 {
            // Slot s lies (dk, dmn) from slot 0 (thread 0's slot 0 is at (0, 0)): `across` rows
            // of the operand and `along` elements along its rows.
            let (dk, dmn) = slot(order(K_CONTIGUOUS), 0, s);
            let (along, across) = if K_CONTIGUOUS { (dk, dmn) } else { (dmn, dk) };
            if self.k0 + dk < k_left && self.mn0 + dmn < self.mn_left {
                let at = if across == 0 {
                    self.slot0
                } else {
                    byte_offset(self.slot0 as *const u16, 2 * across, self.ld) as u64
                } + along as u64 * 2;
                // SAFETY: the slot's element lies inside the matrix (checked just above).
                values[s] = unsafe { load_global_b16(at) };
            }
        });
        self.slot0 = if K_CONTIGUOUS {
            self.slot0.wrapping_add(TILE_K as u64 * 2)
        } else {
            byte_offset(self.slot0 as *const u16, TILE_K * 2, self.ld) as u64
        };
        values
    }

    /// Writes what [`SliceLoader::fetch`] returned into the staged slice at the shared-state-space
    /// address `slice`.
    ///
    /// # Safety
    /// `slice` must be the address of `SLICE_BYTES` of this block's shared memory.
    #[inline(always)]
    unsafe fn stash(&self, values: [u16; 16], slice: u32) {
        let first = slice + staged_offset(order(K_CONTIGUOUS), self.k0, self.mn0);
        seq!(s in 0..16 {
            let (dk, dmn) = slot(order(K_CONTIGUOUS), 0, s);
            // Linear in (k, mn): the offset of (k0 + dk, mn0 + dmn) is first plus that of (dk, dmn).
            let at = first + staged_offset(order(K_CONTIGUOUS), dk, dmn);
            // SAFETY: (k0 + dk, mn0 + dmn) lies inside the slice (the geometry's tests).
            unsafe { store_shared_u16(at, values[s] as u32) };
        });
    }
}

/// The per-lane `ldmatrix` byte offsets of one warp, within a stage, for the first k16 step of
/// the slice: A's two m16 tiles, then B's two pairs of n8 tiles. The second k16 step's are
/// these plus [`FragmentOffsets::K16_A`] and [`FragmentOffsets::k16_b`].
#[derive(Clone, Copy)]
struct FragmentOffsets {
    a: [u32; 2],
    b: [u32; 2],
}

impl FragmentOffsets {
    /// The offsets of `lane` of the warp whose tile starts at row `warp_row`, column `warp_col`
    /// of the block tile, for B stored `[n, k]` when `B_NK`.
    #[inline(always)]
    fn new<const B_NK: bool>(warp_row: u32, warp_col: u32, lane: u32) -> Self {
        // A (rows along k): lane l points at row l % 16 of the m16 tile, 16-byte chunk l / 16 of
        // the k16 step: the four matrices come out as the m16n8k16 A fragment.
        let a_lane = |mi: u32, ks: u32| {
            (warp_row + 16 * mi + lane % 16) * K_ROW_BYTES + (2 * ks + lane / 16) * 16
        };
        // B stored [n, k] (rows along k): lane l points at n-row 8·(l / 16) + l % 8, k-chunk
        // (l / 8) % 2, so the matrices come out as (n 0–7, k 0–7), (n 0–7, k 8–15),
        // (n 8–15, k 0–7), (n 8–15, k 8–15): each n8 tile's two registers adjacent.
        // B stored [k, n] (rows along n): lane l points at k-row l % 16, 8-column chunk l / 16
        // of the pair, read transposed.
        let b_lane = |pair: u32, ks: u32| {
            SLICE_BYTES
                + if B_NK {
                    (warp_col + 16 * pair + lane / 16 * 8 + lane % 8) * K_ROW_BYTES
                        + (2 * ks + lane / 8 % 2) * 16
                } else {
                    (16 * ks + lane % 16) * N_ROW_BYTES
                        + (warp_col + 16 * pair + 8 * (lane / 16)) * 2
                }
        };
        FragmentOffsets {
            a: [a_lane(0, 0), a_lane(1, 0)],
            b: [b_lane(0, 0), b_lane(1, 0)],
        }
    }

    /// Bytes from a k16 step's A offsets to the next's: two 16-byte chunks along the row.
    const K16_A: u32 = 32;

    /// Bytes from a k16 step's B offsets to the next's: two chunks along a row of k (B stored
    /// `[n, k]`), 16 rows of n (`[k, n]`).
    const fn k16_b(b_nk: bool) -> u32 {
        if b_nk { 32 } else { 16 * N_ROW_BYTES }
    }
}

/// The body for element type `E` and B stored `[n, k]` when `B_NK`, else `[k, n]`.
///
/// # Safety
/// `args` must describe matrices readable (A, B, and C when beta ≠ 0) and writable (C, or the
/// split-K workspace) as `E` (the workspace as fp32) in device memory, with the shapes and
/// strides [`GemmArgs`] defines; the launch must follow the module documentation.
#[inline(always)]
unsafe fn general_mma<E: HalfElement, const B_NK: bool>(args: &GemmArgs) {
    // SAFETY: forwarded, with `SPLIT` as `is_split` says.
    unsafe {
        if split_k::is_split(args) {
            walk::<E, B_NK, true>(args)
        } else {
            walk::<E, B_NK, false>(args)
        }
    }
}

/// The walk over virtual items (grid z) and block tiles (grid y, x), as the general kernel's.
///
/// # Safety
/// As [`general_mma`], and `SPLIT` must be `split_k::is_split(args)`.
#[inline(always)]
unsafe fn walk<E: HalfElement, const B_NK: bool, const SPLIT: bool>(args: &GemmArgs) {
    let thread = thread_x();
    split_k::for_each_tile::<E, B_NK, SPLIT>(
        args,
        (BLOCK_TILE_M, BLOCK_TILE_N),
        |item, zz, first_row, first_col| {
            let a = SliceLoader::<true>::new(item.a as u64, args.lda, args.m, first_row, thread);
            let b = SliceLoader::<B_NK>::new(item.b as u64, args.ldb, args.n, first_col, thread);
            // SAFETY: the loaders describe item zz of A and B, readable by this function's
            // contract.
            let acc = unsafe { block_tile_product::<E, B_NK>(a, b, item.k, thread) };
            let target = split_k::item_target::<E, SPLIT>(args, zz);
            // SAFETY: the target is item zz's C (or its workspace matrix).
            unsafe { store_block_tile::<E>(args, &target, &acc, first_row, first_col, thread) };
        },
    );
}

/// The warp's 32×32 accumulators (`[m16 tile][n8 tile][mma.sync C register]`) of the block tile
/// the loaders read: the sum over all of k, one double-buffered `TILE_K` step at a time. Begins
/// and ends with every thread done with shared memory.
///
/// # Safety
/// As [`general_mma`]: the loaders must describe readable matrices with `k` along the reduction.
#[inline(always)]
unsafe fn block_tile_product<E: HalfElement, const B_NK: bool>(
    mut a: SliceLoader<true>,
    mut b: SliceLoader<B_NK>,
    k: u32,
    thread: u32,
) -> [[[f32; 4]; 4]; 2] {
    let mut acc = [[[0.0f32; 4]; 4]; 2];
    if k == 0 {
        return acc;
    }
    let (warp, lane) = (thread / 32, thread % 32);
    let offsets = FragmentOffsets::new::<B_NK>(
        warp / WARPS_N * WARP_TILE_M,
        warp % WARPS_N * WARP_TILE_N,
        lane,
    );
    let stages = shared_address(shared_f32());
    // SAFETY (every fetch and stash below): the fetched slice starts before k (k_left ≥ 1), and
    // the slices lie in the launch's shared memory.
    unsafe {
        let (a_first, b_first) = (a.fetch(k), b.fetch(k));
        a.stash(a_first, stages);
        b.stash(b_first, stages + SLICE_BYTES);
    }
    sync_threads();
    let mut next_k_left = k.saturating_sub(TILE_K);
    let mut stage = 0;
    loop {
        let has_next = next_k_left > 0;
        // The next step's global loads go out now; their latency hides behind the mmas below.
        let (mut a_next, mut b_next) = ([0u16; 16], [0u16; 16]);
        if has_next {
            unsafe {
                a_next = a.fetch(next_k_left);
                b_next = b.fetch(next_k_left);
            }
        }
        let base = stages + stage * STAGE_BYTES;
        seq!(ks in 0..2 {
            // k16 step ks: A's chunks and [n, k] B's move 32 bytes along a row, [k, n] B's 16 rows.
            let b_step = ks * const { FragmentOffsets::k16_b(B_NK) };
            let mut a_frag = [[0u32; 4]; 2];
            seq!(mi in 0..2 {
                // SAFETY: a 16-byte row of this stage's A slice per lane; warp-uniform.
                a_frag[mi] = unsafe { load_matrix_x4(base + offsets.a[mi] + ks * FragmentOffsets::K16_A) };
            });
            let mut b_frag = [[0u32; 2]; 4];
            seq!(pair in 0..2 {
                // SAFETY: as for A, in this stage's B slice.
                let r = unsafe {
                    if B_NK {
                        load_matrix_x4(base + offsets.b[pair] + b_step)
                    } else {
                        load_matrix_x4_transposed(base + offsets.b[pair] + b_step)
                    }
                };
                b_frag[2 * pair] = [r[0], r[1]];
                b_frag[2 * pair + 1] = [r[2], r[3]];
            });
            seq!(mi in 0..2 {
                seq!(ni in 0..4 {
                    E::mma_m16n8k16(&mut acc[mi][ni], &a_frag[mi], &b_frag[ni]);
                });
            });
        });
        if !has_next {
            break;
        }
        // The other stage was last read in the previous step, which ended with a barrier.
        stage ^= 1;
        let other = stages + stage * STAGE_BYTES;
        unsafe {
            a.stash(a_next, other);
            b.stash(b_next, other + SLICE_BYTES);
        }
        next_k_left = next_k_left.saturating_sub(TILE_K);
        sync_threads();
    }
    // Every thread is done reading shared memory before any moves on to a next tile's stash.
    sync_threads();
    acc
}

/// Stores the block's 64×64 results into `target`, those inside `m × n`: into C through the
/// epilogue, or raw as fp32 into the split-K workspace. Each warp first writes its accumulators
/// (thread `lane` holds rows `lane / 4` and `lane / 4 + 8` of each m16 tile, columns
/// `2·(lane % 4) + 0, 1` of each n8 tile) into the block's shared memory as fp32, then every
/// thread stores one element of 32 rows: a warp covers 32 consecutive columns of one row per
/// store, 64 contiguous bytes of fp16, where the accumulators' own layout would scatter each
/// store over eight rows. Begins after a barrier (the k loop's last) and ends with one, so
/// the shared memory is free before and after.
///
/// # Safety
/// `target` must be an item's C as `args` describes it (writable, and readable when beta ≠ 0),
/// or its split-K workspace matrix (`m × n` fp32, writable); shared memory must hold
/// `BLOCK_TILE_M · STAGED_ROW_FLOATS` floats.
#[inline(always)]
unsafe fn store_block_tile<E: Element>(
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    acc: &[[[f32; 4]; 4]; 2],
    first_row: u32,
    first_col: u32,
    thread: u32,
) {
    let staged = shared_f32();
    let (warp, lane) = (thread / 32, thread % 32);
    let row0 = warp / WARPS_N * WARP_TILE_M + lane / 4;
    let col0 = warp % WARPS_N * WARP_TILE_N + 2 * (lane % 4);
    seq!(mi in 0..2 {
        seq!(h in 0..2 {
            seq!(ni in 0..4 {
                let at = (row0 + 16 * mi + 8 * h) * STAGED_ROW_FLOATS + col0 + 8 * ni;
                let pair = f32x2::from_array([acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]]);
                // SAFETY: inside the staged tile; 8-byte aligned (even row length and column).
                unsafe { (staged.add(at as usize) as *mut f32x2).write(pair) };
            });
        });
    });
    sync_threads();
    let bytes = target.element_bytes::<E>() as u64;
    let row_bytes = target.ld as u64 * bytes;
    // Thread t stores column t % 64 of rows 2p + t / 64, p = 0 … 31.
    let col_in_tile = thread % BLOCK_TILE_N;
    let col = first_col + col_in_tile;
    if col < args.n {
        let col_at = target.at + col as u64 * bytes;
        for pass in 0..BLOCK_TILE_M * BLOCK_TILE_N / THREADS {
            let row_in_tile = pass * (THREADS / BLOCK_TILE_N) + thread / BLOCK_TILE_N;
            let row = first_row + row_in_tile;
            if row < args.m {
                let at = opaque_mad(row as u64, row_bytes, col_at);
                // SAFETY: (row, col) lies inside the m×n target (checked above), an fp32 of the
                // workspace or an `E` of C; the staged value was written before the barrier.
                unsafe {
                    let acc = *staged.add((row_in_tile * STAGED_ROW_FLOATS + col_in_tile) as usize);
                    let value = split_k::output_value::<E>(args, target, acc, at as *const E, col);
                    if target.partial {
                        (at as *mut f32).write(value);
                    } else {
                        (at as *mut E).write(E::from_f32(value));
                    }
                }
            }
        }
    }
    // Every thread is done with the staged tile before any moves on to the next tile's stash.
    sync_threads();
}

/// Floats from one row of the staged results to the next: 64 and 8 of padding, so that the
/// 8-byte accumulator writes of a half-warp (four rows, four column pairs) hit 32 distinct
/// banks.
const STAGED_ROW_FLOATS: u32 = BLOCK_TILE_N + 8;
const _: () =
    assert!(BLOCK_TILE_M * STAGED_ROW_FLOATS * 4 <= gemm_geometry::general_mma::SHARED_BYTES);

/// The entries' `min_blocks`: 4 per SM in the Hopper module, 3 in the portable one (see
/// [`gemm_geometry::general_mma::PORTABLE_MIN_BLOCKS_PER_SM`]).
const MIN_BLOCKS: u32 = if cfg!(target_feature = "sm_90a") {
    gemm_geometry::general_mma::MIN_BLOCKS_PER_SM
} else {
    gemm_geometry::general_mma::PORTABLE_MIN_BLOCKS_PER_SM
};

/// One entry point per element type and B layout.
macro_rules! general_mma_entry {
    ($name:ident, $element:ty, $b_nk:literal, $what:literal) => {
        crate::launch_bounds!($name, gemm_geometry::general_mma::THREADS, MIN_BLOCKS);

        #[doc = concat!("The general tensor-core kernel, ", $what, ": correct for every input ")]
        #[doc = "[`GemmArgs`] describes, with no alignment precondition beyond the element's own."]
        #[doc = "Launch as the module documentation says."]
        ///
        /// # Safety
        /// `args` must describe valid device matrices of the entry's element type, as
        /// [`GemmArgs`] defines them; the launch must use the module's geometry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(args: GemmArgs) {
            // SAFETY: as this entry's contract.
            unsafe { general_mma::<$element, $b_nk>(&args) }
        }
    };
}

general_mma_entry!(gemm_general_mma_f16_kn, F16, false, "fp16, B stored [k, n]");
general_mma_entry!(gemm_general_mma_f16_nk, F16, true, "fp16, B stored [n, k]");
general_mma_entry!(
    gemm_general_mma_bf16_kn,
    Bf16,
    false,
    "bf16, B stored [k, n]"
);
general_mma_entry!(
    gemm_general_mma_bf16_nk,
    Bf16,
    true,
    "bf16, B stored [n, k]"
);
