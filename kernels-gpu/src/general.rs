//! The general GEMM kernel: the library's fallback, correct for every input the API accepts.
//!
//! It computes what [`GemmArgs`] defines (batch, leading dimensions, `[k, n]` or `[n, k]` B,
//! alpha, beta, bias, activation) for f32, fp16 and bf16, and assumes nothing about alignment
//! beyond each element's natural one: every global access is a scalar load or store of one
//! element, at a 64-bit offset, guarded by its own bounds check. Dispatch falls back to it when
//! a fast kernel's preconditions (16-byte rows, leading dimensions in multiples of 8, TMA's
//! limits) are not met.
//!
//! It is a ladder-style kernel of moderate speed (v8's ideas with scalar loads): 64×64 block
//! tiles, 256 threads of 4×4 outputs, 16-deep slices of A and B widened to f32 and staged
//! k-major in shared memory, double-buffered through registers (step t + 1's loads are in flight
//! while step t is multiplied), one barrier per step. The numbers live in
//! [`gemm_geometry::general`], which the host reads too.
//!
//! One generic body, `general`, monomorphized per element type and B layout into the entries
//! `gemm_general_{f32,f16,bf16}_{kn,nk}`. It supports split-K ([`crate::split_k`]): with
//! `args.splits > 1` it walks the slices of k of every batch item along grid z and stores each
//! tile's raw fp32 product into the workspace (fp32 whatever the element type, scalar stores).
//!
//! Launch: [`THREADS`] threads (1-D), grid [`gemm_geometry::general::grid`]`(m, n, batch)`
//! (x over column tiles, y over row tiles, z over batch items, each capped at CUDA's limit: a
//! block walks its tiles and items in grid-sized steps), [`SHARED_BYTES`] bytes of dynamic
//! shared memory. Preconditions: `m, n, batch ≥ 1` (otherwise do not launch); addresses as
//! [`GemmArgs`] describes them, each aligned to its element size (4 bytes for f32, 2 for
//! fp16/bf16); no other alignment, leading-dimension or stride condition. Under split-K
//! (`args.splits > 1`, `k_chunk` as `gemm_geometry::split_k::slices` gives it) the grid is
//! `grid(m, n, items)` with `items = split_k::items(args)` = `splits·batch` (< 2³²), and
//! `args.workspace` must hold `splits·batch·m·n` fp32 (4-byte aligned, overlapping nothing the
//! kernel reads); C is then neither read nor written.

use crate::device::{
    load_global_b16, opaque_mad, outer_product, read4, shared_f32, sync_threads, thread_x,
    thread_x_each_time, write4,
};
use crate::element::{Bf16, Element, F16};
use crate::split_k;
use core::simd::f32x4;
use gemm_geometry::GemmArgs;
use gemm_geometry::general::{
    B_SLICE_OFFSET_FLOATS, BLOCK_TILE_M, BLOCK_TILE_N, C_TILE_ROW_FLOATS, LOADS_PER_THREAD,
    OperandOrder, STAGE_FLOATS, THREAD_TILE_M, THREAD_TILE_N, THREADS, TILE_K, TILE_ROW_FLOATS,
    thread_tile_origin,
};
use seq_macro::seq;

#[cfg(doc)]
use gemm_geometry::general::{C_TILE_FLOATS, SHARED_BYTES};

const _: () = assert!(LOADS_PER_THREAD == 4 && THREAD_TILE_M == 4 && THREAD_TILE_N == 4);
const _: () = assert!(BLOCK_TILE_M == BLOCK_TILE_N);

/// An element type the general kernel reads from global memory with `ld.global` (the
/// addresses come from integers in [`GemmArgs`], so LLVM would otherwise emit generic loads,
/// which must first find out which memory the address lies in).
trait GlobalLoad: Element {
    /// The element at the global-memory byte address `at`, widened to f32.
    ///
    /// # Safety
    /// `at` must be the address of a readable `Self` in global memory, aligned to its size.
    unsafe fn load_global(at: u64) -> f32;
}

impl GlobalLoad for f32 {
    #[inline(always)]
    unsafe fn load_global(at: u64) -> f32 {
        let value: f32;
        // SAFETY: as the caller promises. Not `pure`: the load must stay under its bounds check.
        unsafe {
            core::arch::asm!("ld.global.f32 {v}, [{at}];", v = out(reg32) value, at = in(reg64) at,
                options(readonly, nostack))
        };
        value
    }
}

impl GlobalLoad for F16 {
    #[inline(always)]
    unsafe fn load_global(at: u64) -> f32 {
        // SAFETY: as the caller promises.
        F16(unsafe { load_global_b16(at) }).to_f32()
    }
}

impl GlobalLoad for Bf16 {
    #[inline(always)]
    unsafe fn load_global(at: u64) -> f32 {
        // SAFETY: as the caller promises.
        Bf16(unsafe { load_global_b16(at) }).to_f32()
    }
}

/// One thread's loads of one operand (A, or B) for one block tile: where its slot-0 element of
/// the current step lies, how far the other slots and the next step are, and which slots lie
/// inside the matrix along m or n.
#[derive(Clone, Copy)]
struct SliceLoader {
    /// Byte address of this thread's slot-0 element in the current step's slice. It may lie
    /// outside the matrix (past k, or past m or n); it is only read when it does not.
    slot0: u64,
    /// Bytes from one slot's element to the next's.
    slot_bytes: u64,
    /// Bytes from one step's slice to the next's (`TILE_K` along k).
    step_bytes: u64,
    /// Position along k of slot 0 in the slice.
    k0: u32,
    /// Position along m or n of slot 0 in the slice.
    mn0: u32,
    /// How far along k one slot is from the previous one.
    slot_dk: u32,
    /// How far along m or n one slot is from the previous one.
    slot_dmn: u32,
    /// Rows (A) or columns (B) of C from the block tile's first to the matrix's end: slots at
    /// or past it read zeros.
    mn_left: u32,
}

impl SliceLoader {
    /// The loader of this thread for the block tile starting at row (A) or column (B)
    /// `first_mn < mn_extent`, of an operand of `E` elements at byte address `base`, with rows
    /// `ld` elements apart, lying in `order`.
    #[inline(always)]
    fn new<E: Element>(
        order: OperandOrder,
        base: u64,
        ld: u32,
        mn_extent: u32,
        first_mn: u32,
        thread: u32,
    ) -> SliceLoader {
        let (k0, mn0) = order.slot(BLOCK_TILE_M, thread, 0);
        let (slot_dk, slot_dmn) = order.slot_step(BLOCK_TILE_M);
        let bytes = E::BYTES as u64;
        let ld = ld as u64;
        // Elements from one k to the next and from one row (or column) of C to the next.
        let (along_k, along_mn) = match order {
            OperandOrder::KContiguous => (1, ld),
            OperandOrder::MnContiguous => (ld, 1),
        };
        // All in u64: first_mn + mn0 ≤ 2³² − 1, and row · ld may exceed 2³².
        let mn = first_mn as u64 + mn0 as u64;
        SliceLoader {
            slot0: base.wrapping_add((mn * along_mn + k0 as u64 * along_k) * bytes),
            slot_bytes: (slot_dk as u64 * along_k + slot_dmn as u64 * along_mn) * bytes,
            step_bytes: TILE_K as u64 * along_k * bytes,
            k0,
            mn0,
            slot_dk,
            slot_dmn,
            mn_left: mn_extent - first_mn,
        }
    }

    /// The `LOADS_PER_THREAD` elements this thread stages from the current step's slice,
    /// widened to f32, zeros for those outside the matrix (never read); then moves on to the
    /// next step. `k_left` is k minus the slice's first k index (≥ 1): comparing against it
    /// rather than adding, nothing can wrap even for k near 2³².
    ///
    /// # Safety
    /// The loader must describe, for element type `E`, a matrix readable along k up to the
    /// current slice's first index plus `k_left`.
    #[inline(always)]
    unsafe fn fetch<E: GlobalLoad>(&mut self, k_left: u32) -> [f32; 4] {
        let mut values = [0.0f32; 4];
        seq!(index in 0..4 {
            if self.k0 + index * self.slot_dk < k_left && self.mn0 + index * self.slot_dmn < self.mn_left {
                let at = if index == 0 {
                    self.slot0
                } else {
                    opaque_mad(index, self.slot_bytes, self.slot0)
                };
                // SAFETY: the slot's element lies inside the matrix (checked just above).
                values[index] = unsafe { E::load_global(at) };
            }
        });
        self.slot0 = self.slot0.wrapping_add(self.step_bytes);
        values
    }

    /// Writes what [`SliceLoader::fetch`] returned to the operand's k-major slice at `slice`.
    ///
    /// # Safety
    /// `slice` must point to `TILE_K · TILE_ROW_FLOATS` floats of shared memory.
    #[inline(always)]
    unsafe fn stash(&self, values: [f32; 4], slice: *mut f32) {
        seq!(index in 0..4 {
            let at = (self.k0 + index * self.slot_dk) * TILE_ROW_FLOATS + self.mn0 + index * self.slot_dmn;
            // SAFETY: k < TILE_K and mn < BLOCK_TILE_M ≤ TILE_ROW_FLOATS.
            unsafe { *slice.add(at as usize) = values[index] };
        });
    }
}

/// The A and B slices of stage `stage` (0 or 1) of the block's dynamic shared memory.
#[inline(always)]
fn stage_slices(stage: u32) -> (*mut f32, *mut f32) {
    // SAFETY: the launch gives SHARED_BYTES = 2 stages of STAGE_FLOATS floats.
    unsafe {
        let a_slice = shared_f32().add((stage * STAGE_FLOATS) as usize);
        (a_slice, a_slice.add(B_SLICE_OFFSET_FLOATS as usize))
    }
}

/// The general kernel's body for element type `E` and B stored `[n, k]` when `B_NK`, else
/// `[k, n]` (see the module documentation).
///
/// # Safety
/// `args` must describe matrices readable (A, B, and C when beta ≠ 0) and writable (C, or the
/// split-K workspace) as `E` (the workspace as fp32) in device memory, with the shapes and
/// strides [`GemmArgs`] defines; the launch must be `THREADS` threads with `SHARED_BYTES` of
/// dynamic shared memory.
#[inline(always)]
unsafe fn general<E: GlobalLoad, const B_NK: bool>(args: &GemmArgs) {
    // SAFETY: forwarded, with `SPLIT` as `is_split` says.
    unsafe {
        if split_k::is_split(args) {
            walk::<E, B_NK, true>(args)
        } else {
            walk::<E, B_NK, false>(args)
        }
    }
}

/// [`general`]'s walk: the virtual items along grid z (batch items, or under split-K the
/// slices of each; see [`crate::split_k`]), and in each the block tiles along grid y and x.
/// Compiled once per `SPLIT`.
///
/// # Safety
/// As [`general`], and `SPLIT` must be `split_k::is_split(args)`.
#[inline(always)]
unsafe fn walk<E: GlobalLoad, const B_NK: bool, const SPLIT: bool>(args: &GemmArgs) {
    let thread = thread_x();
    let b_order = if B_NK {
        OperandOrder::KContiguous
    } else {
        OperandOrder::MnContiguous
    };

    split_k::for_each_tile::<E, B_NK, SPLIT>(
        args,
        (BLOCK_TILE_M, BLOCK_TILE_N),
        |item, zz, first_row, first_col| {
            let a = SliceLoader::new::<E>(
                OperandOrder::KContiguous,
                item.a as u64,
                args.lda,
                args.m,
                first_row,
                thread,
            );
            let b =
                SliceLoader::new::<E>(b_order, item.b as u64, args.ldb, args.n, first_col, thread);
            // SAFETY: the loaders describe item zz of A and B, as this function's contract
            // says they are readable.
            let acc = unsafe { block_tile_product::<E>(a, b, item.k, thread) };
            let target = split_k::item_target::<E, SPLIT>(args, zz);
            // SAFETY: the target is item zz's C (or its workspace matrix); rows and columns
            // are checked inside; every thread is done with shared memory
            // (`block_tile_product` ends with a barrier).
            unsafe { store_block_tile::<E>(args, &target, &acc, first_row, first_col) };
        },
    );
}

/// This thread's 4×4 accumulators of the block tile the loaders `a` and `b` read: the sum over
/// all of k, one double-buffered step of `TILE_K` at a time. Begins and ends with every thread
/// done with shared memory (a barrier ends each step), so consecutive tiles may reuse it.
///
/// # Safety
/// As [`general`]: the loaders must describe readable matrices with `k` along the reduction.
#[inline(always)]
unsafe fn block_tile_product<E: GlobalLoad>(
    mut a: SliceLoader,
    mut b: SliceLoader,
    k: u32,
    thread: u32,
) -> [[f32; 4]; 4] {
    let (row_in_tile, col_in_tile) = thread_tile_origin(thread);
    let mut acc = [[0.0f32; 4]; 4];
    if k == 0 {
        return acc;
    }
    // SAFETY (every fetch and stash below): the fetched slice starts before k (k_left ≥ 1),
    // and the slices lie in the launch's shared memory.
    unsafe {
        let (a_slice, b_slice) = stage_slices(0);
        let (a_first, b_first) = (a.fetch::<E>(k), b.fetch::<E>(k));
        a.stash(a_first, a_slice);
        b.stash(b_first, b_slice);
    }
    sync_threads();
    // k minus the first k index of the next step's slice, 0 once there is none.
    let mut next_k_left = k.saturating_sub(TILE_K);
    let mut stage = 0;
    loop {
        let has_next = next_k_left > 0;
        // The next step's global loads go out now; their latency hides behind the fmas below.
        let (mut a_next, mut b_next) = ([0.0f32; 4], [0.0f32; 4]);
        if has_next {
            unsafe {
                a_next = a.fetch::<E>(next_k_left);
                b_next = b.fetch::<E>(next_k_left);
            }
        }
        let (a_slice, b_slice) = stage_slices(stage);
        seq!(kk in 0..16 {
            // SAFETY: 16-byte aligned reads inside the stage (TILE_ROW_FLOATS and the thread
            // tile origins are multiples of 4 floats).
            let (a_fragment, b_fragment) = unsafe {
                (
                    read4(a_slice.add((kk * TILE_ROW_FLOATS + row_in_tile) as usize)).to_array(),
                    read4(b_slice.add((kk * TILE_ROW_FLOATS + col_in_tile) as usize)).to_array(),
                )
            };
            outer_product(&mut acc, &a_fragment, &b_fragment);
        });
        if !has_next {
            break;
        }
        // The other stage was last read in the previous step, which ended with a barrier.
        stage ^= 1;
        let (a_other, b_other) = stage_slices(stage);
        unsafe {
            a.stash(a_next, a_other);
            b.stash(b_next, b_other);
        }
        next_k_left = next_k_left.saturating_sub(TILE_K);
        sync_threads();
    }
    // Every thread is done reading shared memory before any moves on to a next tile's stash.
    sync_threads();
    acc
}

const _: () = assert!(TILE_K == 16, "the k loop above is unrolled 16 deep");

/// Stores the block's 64×64 tile of accumulators into `target` (first element at row
/// `first_row`, column `first_col`), those inside `m × n`, element by element (no alignment
/// assumed): into C through the epilogue, or raw as fp32 into the split-K workspace
/// ([`split_k::output_value`]).
///
/// The tile goes through shared memory first, so that a warp's stores are 32 consecutive
/// elements of one row. Stored straight from the 4×4 thread tiles, each store of a warp wrote
/// 4 bytes in every 16 across two rows: Nsight Compute counted 7.5 of 32 bytes used per
/// sector, L2 was the busiest unit (55%), and at 2047×2049×33 the kernel took twice
/// cuBLAS's time (42 µs against 20, `docs/results/waves-and-stores`).
///
/// # Safety
/// `target` must be an item's C as `args` describes it (writable, and readable when beta ≠ 0),
/// or its split-K workspace matrix (`m × n` fp32, writable); every thread of the block must
/// call this, after a barrier that ends all reads of shared memory.
#[inline(always)]
unsafe fn store_block_tile<E: Element>(
    args: &GemmArgs,
    target: &split_k::ItemTarget,
    acc: &[[f32; 4]; 4],
    first_row: u32,
    first_col: u32,
) {
    let tile = shared_f32();
    // Read anew: computed from the `thread` the main loop holds, these offsets would be
    // hoisted out of the walk over tiles and stay live across the main loop, which then
    // spilled on sm_86 and sm_89 (8 bytes).
    let thread = thread_x_each_time();
    let (row_in_tile, col_in_tile) = thread_tile_origin(thread);
    seq!(i in 0..4 {
        // SAFETY: row < 64 and col + 4 ≤ 64 ≤ C_TILE_ROW_FLOATS: inside the launch's shared
        // memory (`C_TILE_FLOATS`), 16-byte aligned (both multiples of 4 floats).
        unsafe {
            write4(
                tile.add(((row_in_tile + i) * C_TILE_ROW_FLOATS + col_in_tile) as usize),
                f32x4::from_array(acc[i]),
            )
        };
    });
    sync_threads();
    // Thread t stores column t % 64 of rows t / 64 + 4·r: a warp, 32 columns of one row.
    let (col, first) = (thread % BLOCK_TILE_N, thread / BLOCK_TILE_N);
    let rows_per_pass = THREADS / BLOCK_TILE_N;
    if first_col + col < args.n {
        let bytes = target.element_bytes::<E>() as u64;
        let row_bytes = target.ld as u64 * bytes;
        let column = target.at + (first_col + col) as u64 * bytes;
        seq!(r in 0..16 {
            let row = first + r * rows_per_pass;
            // Compared as a difference, so that nothing depends on first_row + row fitting.
            if row < args.m - first_row {
                // SAFETY: inside the tile written above, before the barrier.
                let sum = unsafe { *tile.add((row * C_TILE_ROW_FLOATS + col) as usize) };
                let at = opaque_mad((first_row + row) as u64, row_bytes, column);
                // SAFETY: (first_row + row, first_col + col) lies inside the m×n target
                // (checked above), an fp32 of the workspace or an `E` of C.
                unsafe {
                    let value = split_k::output_value::<E>(args, target, sum, at as *const E, first_col + col);
                    if target.partial {
                        (at as *mut f32).write(value);
                    } else {
                        (at as *mut E).write(E::from_f32(value));
                    }
                }
            }
        });
    }
    // Every thread has read the tile before any stashes the next tile's first slices.
    sync_threads();
}

const _: () = assert!(
    (BLOCK_TILE_M * BLOCK_TILE_N) / THREADS == 16 && THREADS.is_multiple_of(BLOCK_TILE_N),
    "store_block_tile's 16 passes"
);

/// One entry point of the general kernel per element type and B layout.
macro_rules! general_entry {
    ($name:ident, $element:ty, $b_nk:literal, $what:literal) => {
        crate::launch_bounds!(
            $name,
            gemm_geometry::general::THREADS,
            gemm_geometry::general::MIN_BLOCKS_PER_SM
        );

        #[doc = concat!("The general kernel, ", $what, ": correct for every input [`GemmArgs`] ")]
        #[doc = "describes, with no alignment precondition beyond the element's own. Launch as"]
        #[doc = "the module documentation says."]
        ///
        /// # Safety
        /// `args` must describe valid device matrices of the entry's element type, as
        /// [`GemmArgs`] defines them; the launch must use the module's geometry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(args: GemmArgs) {
            // SAFETY: as this entry's contract.
            unsafe { general::<$element, $b_nk>(&args) }
        }
    };
}

general_entry!(gemm_general_f32_kn, f32, false, "f32, B stored [k, n]");
general_entry!(gemm_general_f32_nk, f32, true, "f32, B stored [n, k]");
general_entry!(gemm_general_f16_kn, F16, false, "fp16, B stored [k, n]");
general_entry!(gemm_general_f16_nk, F16, true, "fp16, B stored [n, k]");
general_entry!(gemm_general_bf16_kn, Bf16, false, "bf16, B stored [k, n]");
general_entry!(gemm_general_bf16_nk, Bf16, true, "bf16, B stored [n, k]");
