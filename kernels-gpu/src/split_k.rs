//! Split-K on the device: the walk over virtual items that the split-K kernels share, and the
//! second kernel, which adds the slices of k that a split-K launch left in the workspace in a
//! fixed order and finishes them with the fused epilogue into C.
//!
//! The layout of the workspace and the meaning of `splits` and `k_chunk` are in
//! `gemm_geometry::split_k`. Adding the slices in an order fixed by the slice count (not with
//! atomics in whatever order the blocks finish) makes a split-K product the same bit for bit on
//! every run: p = 0, 1, …, s − 1 up to `REDUCE_LOADS_IN_FLIGHT` slices, and past that four
//! partial sums (slices p ≡ 0, 1, 2, 3 mod 4, each in order) added as `(s0 + s1) + (s2 + s3)`.
//!
//! # The walk along grid z
//! A kernel that walks batch items along grid z supports split-K by walking
//! `zz < `[`items`]`(args)` instead (`splits·batch` with a split, `batch` without) and asking
//! [`item_operands`] what item `zz` reads (A, B, the length of k) and [`item_target`] where it
//! writes (C through the epilogue, or the workspace raw: [`output_value`]). Without a split the
//! item is batch item `zz`, whole, so one body serves both. The body is compiled twice, for
//! `SPLIT` = [`is_split`]`(args)` false and true, and the kernel picks one at its start: each
//! copy then folds the choices between C and the workspace away instead of holding selects of
//! them (pointers, strides) in registers through its main loop, and the non-split copy is the
//! plain batch walk. The index arithmetic is
//! `gemm_geometry::split_k::{item_input, item_output}`, tested on the CPU there.
//!
//! # Launch of the reduction (every `gemm_split_k_reduce_*` entry)
//! - Block: `gemm_geometry::split_k::REDUCE_THREADS` threads (x only); no shared memory.
//! - Grid: (any x ≥ 1, 1, 1): the blocks' lanes, `reduce_lanes_per_element(splits)` to an
//!   element of C (counted over batch items, rows and columns), walk the elements in steps of
//!   the grid. The host launches `gemm_geometry::split_k::reduce_blocks` blocks: enough to
//!   fill the device a few times over and no more.
//!
//! # Preconditions of the reduction
//! - `args.workspace`: 4-byte aligned, `splits·batch·m·n` fp32 values written by the split-K
//!   launch of the same arguments.
//! - `args.c`, `ldc`, `stride_c`, `bias`, and the epilogue fields as [`GemmArgs`] defines them
//!   (C aligned to its element).

use crate::device::{
    block_x, block_y, block_z, grid_dim_x, grid_dim_y, grid_dim_z, opaque_mad, shuffle_xor_u32,
    thread_x,
};
use crate::element::{Bf16, Element, F16};
use crate::epilogue::apply;
use gemm_geometry::GemmArgs;
use gemm_geometry::split_k::{
    REDUCE_LOADS_IN_FLIGHT, REDUCE_MIN_BLOCKS_PER_SM, REDUCE_QUAD_LANES, REDUCE_THREADS,
    item_input, item_output, reduce_lanes_per_element,
};
use seq_macro::seq;

/// [`REDUCE_LOADS_IN_FLIGHT`] as the reduction's loop counts.
const IN_FLIGHT: u64 = const {
    // The unrolled loop below is written for 16.
    assert!(REDUCE_LOADS_IN_FLIGHT == 16);
    REDUCE_LOADS_IN_FLIGHT as u64
};

pub use gemm_geometry::split_k::{is_split, items};

/// What virtual item `zz` reads: A's and B's first elements and its length of k.
#[derive(Clone, Copy)]
pub struct ItemOperands<E> {
    /// The item's `A[0, 0]` (row stride `args.lda`).
    pub a: *const E,
    /// The item's `B[0, 0]` (row stride `args.ldb`).
    pub b: *const E,
    /// The item's length of k (≥ 1 when `args.k` is).
    pub k: u32,
}

/// What virtual item `zz < items(args)` reads, for elements `E` and B stored `[n, k]` when
/// `B_NK`, else `[k, n]`: its batch item's A and B, advanced to the first k of its slice.
/// `SPLIT` must be [`is_split`]`(args)`. Offsets are 64-bit. A slice starts at a multiple of
/// `K_GRANULE` of k, so A, and an `[n, k]` B, keep their alignment; a `[k, n]` B moves by whole
/// rows.
#[inline(always)]
pub fn item_operands<E: Element, const B_NK: bool, const SPLIT: bool>(
    args: &GemmArgs,
    zz: u32,
) -> ItemOperands<E> {
    let input = item_input(args, zz, B_NK, SPLIT);
    ItemOperands {
        a: (args.a as *const E).wrapping_add(input.a_offset as usize),
        b: (args.b as *const E).wrapping_add(input.b_offset as usize),
        k: input.k,
    }
}

/// The walk of a kernel launched over (column tiles, row tiles, virtual items), as the general
/// kernels are: virtual items `zz < items(args)` along grid z, in each the block tiles of
/// `block_tile_m × block_tile_n` along grid y (rows) and x (columns), each axis in grid-sized
/// steps. Calls `tile(item, zz, first_row, first_col)` for each, with the item's operands
/// ([`item_operands`]). Every loop bound is the same for all threads of a block, so a `tile`
/// with barriers is reached by every thread. `SPLIT` must be [`is_split`]`(args)`.
#[inline(always)]
pub fn for_each_tile<E: Element, const B_NK: bool, const SPLIT: bool>(
    args: &GemmArgs,
    (block_tile_m, block_tile_n): (u32, u32),
    mut tile: impl FnMut(&ItemOperands<E>, u32, u32, u32),
) {
    let (tiles_m, tiles_n) = (args.m.div_ceil(block_tile_m), args.n.div_ceil(block_tile_n));
    let mut zz = block_z();
    while zz < items(args) {
        let item = item_operands::<E, B_NK, SPLIT>(args, zz);
        let mut tile_row = block_y();
        while tile_row < tiles_m {
            // < m ≤ 2³² − 1: tile_row < ⌈m / block_tile_m⌉.
            let first_row = tile_row * block_tile_m;
            let mut tile_col = block_x();
            while tile_col < tiles_n {
                tile(&item, zz, first_row, tile_col * block_tile_n);
                tile_col += grid_dim_x();
            }
            tile_row += grid_dim_y();
        }
        zz += grid_dim_z();
    }
}

/// Where virtual item `zz` writes its tile.
#[derive(Clone, Copy)]
pub struct ItemTarget {
    /// The raw fp32 product goes to the workspace, with no epilogue (a split); else the
    /// finished value goes to C, in C's element type.
    pub partial: bool,
    /// Byte address of the item's element (0, 0): in the workspace (fp32) when `partial`, else
    /// in C.
    pub at: u64,
    /// Elements from one row to the next: `n` (dense) in the workspace, `ldc` in C.
    pub ld: u32,
}

impl ItemTarget {
    /// Bytes of one stored element: 4 (fp32) in the workspace, else C's element's.
    #[inline(always)]
    pub fn element_bytes<E: Element>(&self) -> u32 {
        if self.partial { 4 } else { E::BYTES }
    }
}

/// Where virtual item `zz < items(args)` writes, for C of elements `E`: the dense `m × n` fp32
/// matrix `workspace[zz·m·n ..]` with a split, else batch item `zz` of C. `SPLIT` must be
/// [`is_split`]`(args)`.
#[inline(always)]
pub fn item_target<E: Element, const SPLIT: bool>(args: &GemmArgs, zz: u32) -> ItemTarget {
    let output = item_output(args, zz, SPLIT);
    let (base, bytes) = if output.partial {
        (args.workspace, 4)
    } else {
        (args.c, E::BYTES as u64)
    };
    ItemTarget {
        partial: output.partial,
        at: base.wrapping_add(output.offset * bytes),
        ld: output.ld,
    }
}

/// The value a kernel stores for accumulator `acc` of column `col`: `acc` itself into the
/// workspace (`target.partial`; C is not read), else C's final value through the epilogue
/// (`c_at` is the element's place in C, read when beta ≠ 0).
///
/// # Safety
/// Unless `target.partial`: as [`apply`].
#[inline(always)]
pub unsafe fn output_value<E: Element>(
    args: &GemmArgs,
    target: &ItemTarget,
    acc: f32,
    c_at: *const E,
    col: u32,
) -> f32 {
    if target.partial {
        acc
    } else {
        // SAFETY: the caller's contract.
        unsafe { apply::<E>(args, acc, c_at, col) }
    }
}

/// Adds the slices of every element of C and applies the epilogue: one thread per element
/// while the slices are few ([`reduce_by_threads`]), four lanes per element past
/// [`REDUCE_LOADS_IN_FLIGHT`] slices ([`reduce_by_quads`]), as
/// [`reduce_lanes_per_element`] says (the host sizes the grid from it too).
///
/// # Safety
/// See the module's preconditions and launch.
#[inline(always)]
unsafe fn reduce<E: Element>(args: &GemmArgs) {
    // The elements of C, counted over batch items, rows and columns: one slice's length.
    let per_slice = args.batch as u64 * args.m as u64 * args.n as u64;
    // SAFETY: the caller's contract.
    unsafe {
        if reduce_lanes_per_element(args.splits) == 1 {
            reduce_by_threads::<E>(args, per_slice)
        } else {
            reduce_by_quads::<E>(args, per_slice)
        }
    }
}

/// One thread per element of C: the slices in the order 0, 1, …, splits − 1, loaded
/// [`REDUCE_LOADS_IN_FLIGHT`] at a time before they are added (the loads do not wait for each
/// other; the sum's order is the same). Consecutive threads take consecutive elements, so
/// each load of a warp is 128 contiguous bytes.
///
/// # Safety
/// See the module's preconditions and launch.
#[inline(always)]
unsafe fn reduce_by_threads<E: Element>(args: &GemmArgs, per_slice: u64) {
    let mut element = block_x() as u64 * REDUCE_THREADS as u64 + thread_x() as u64;
    let step = grid_dim_x() as u64 * REDUCE_THREADS as u64;
    while element < per_slice {
        // SAFETY: element < batch·m·n; the caller's contract.
        unsafe {
            let acc = sum_slices(args, per_slice, element, 0, 1);
            finish::<E>(args, per_slice, element, acc);
        }
        element += step;
    }
}

/// Four lanes per element of C, for many slices: a warp takes 8 consecutive elements (32
/// contiguous bytes per slice, one memory sector) and lane `l` adds slices `l / 8`,
/// `l / 8 + 4`, … of element `l % 8` in that order; two butterfly shuffles then add the four
/// partial sums as `(s0 + s1) + (s2 + s3)`, the same on every run. With 256 slices and a few
/// hundred elements of C (17×17×65537), one thread per element had 16 rounds of loads in a
/// row; here each lane has 4.
///
/// # Safety
/// See the module's preconditions and launch; `per_slice` is batch·m·n.
#[inline(always)]
unsafe fn reduce_by_quads<E: Element>(args: &GemmArgs, per_slice: u64) {
    const LANES: u32 = 32;
    // The lane layout below: a warp is `REDUCE_QUAD_LANES` groups of `ELEMENTS_PER_WARP`
    // lanes, group g on lanes g·8 … g·8 + 7; the two shuffles that add the groups assume 4.
    const ELEMENTS_PER_WARP: u32 = LANES / REDUCE_QUAD_LANES;
    const _: () = assert!(REDUCE_QUAD_LANES == 4 && LANES.is_multiple_of(REDUCE_QUAD_LANES));
    let groups = REDUCE_QUAD_LANES as u64;
    let (lane, warp) = (thread_x() % LANES, thread_x() / LANES);
    let warps_per_block = (REDUCE_THREADS / LANES) as u64;
    let elements_per_warp = ELEMENTS_PER_WARP as u64;
    // The warp's first element; every lane of a warp walks the same elements (the shuffles
    // need the whole warp), and only lanes on an element load and store.
    let mut first = (block_x() as u64 * warps_per_block + warp as u64) * elements_per_warp;
    let step = grid_dim_x() as u64 * warps_per_block * elements_per_warp;
    let offset = (lane % ELEMENTS_PER_WARP) as u64;
    let group = (lane / ELEMENTS_PER_WARP) as u64;
    while first < per_slice {
        let element = first + offset;
        let inside = element < per_slice;
        // SAFETY: only read where element < batch·m·n; the caller's contract.
        let mut acc = if inside {
            unsafe { sum_slices(args, per_slice, element, group, groups) }
        } else {
            0.0
        };
        // Groups 0+1 and 2+3 first (lanes ELEMENTS_PER_WARP apart), then the two pairs.
        acc += f32::from_bits(shuffle_xor_u32(acc.to_bits(), ELEMENTS_PER_WARP));
        acc += f32::from_bits(shuffle_xor_u32(acc.to_bits(), 2 * ELEMENTS_PER_WARP));
        if inside && group == 0 {
            // SAFETY: element < batch·m·n; the caller's contract.
            unsafe { finish::<E>(args, per_slice, element, acc) };
        }
        first += step;
    }
}

/// The sum of `element`'s slices `first, first + every, …` below `args.splits`, in that
/// order, loaded [`REDUCE_LOADS_IN_FLIGHT`] at a time.
///
/// # Safety
/// `per_slice` is batch·m·n, `element < per_slice`; the module's preconditions.
#[inline(always)]
unsafe fn sum_slices(args: &GemmArgs, per_slice: u64, element: u64, first: u64, every: u64) -> f32 {
    let splits = args.splits as u64;
    // The element's place in slice 0, and the bytes from one slice to the next.
    let (origin, slice_bytes) = (args.workspace + 4 * element, 4 * per_slice);
    let read = |split: u64| {
        // Each address computed where it is loaded: left to LLVM, the 16 offsets of a round
        // were hoisted out of the loop as 64-bit registers (141 in all, or spills at 64).
        let at = opaque_mad(split, slice_bytes, origin) as *const f32;
        // SAFETY: split < splits and element < batch·m·n: inside the workspace.
        unsafe { at.read() }
    };
    let mut acc = 0.0f32;
    let mut split = first;
    while split + (IN_FLIGHT - 1) * every < splits {
        // Unrolled by hand: an array's iterator kept the values in local memory.
        let mut values = [0.0f32; IN_FLIGHT as usize];
        seq!(i in 0..16 { values[i] = read(split + i * every); });
        seq!(i in 0..16 { acc += values[i]; });
        split += IN_FLIGHT * every;
    }
    while split < splits {
        acc += read(split);
        split += every;
    }
    acc
}

/// Writes C's `element` (counted over batch items, rows and columns) from its sum `acc`
/// through the epilogue.
///
/// # Safety
/// `per_slice` is batch·m·n, `element < per_slice`; the module's preconditions.
#[inline(always)]
unsafe fn finish<E: Element>(args: &GemmArgs, per_slice: u64, element: u64, acc: f32) {
    let (m, n) = (args.m as u64, args.n as u64);
    let c = args.c as *mut E;
    // The element's (batch item, row, column): 32-bit divisions where they suffice (the
    // 64-bit ones are long emulated sequences).
    let (item_row, col) = if per_slice <= u32::MAX as u64 {
        let e = element as u32;
        ((e / n as u32) as u64, (e % n as u32) as u64)
    } else {
        (element / n, element % n)
    };
    let (z, row) = (item_row / m, item_row % m);
    let offset = z * args.stride_c + row * args.ldc as u64 + col;
    // SAFETY: z < batch, row < m, col < n: an element of C as the arguments describe it.
    unsafe {
        let at = c.add(offset as usize);
        let value = apply::<E>(args, acc, at, col as u32);
        at.write(E::from_f32(value));
    }
}

/// One reduction entry per element type of C.
macro_rules! reduce_entry {
    ($name:ident, $element:ty, $what:literal) => {
        crate::launch_bounds!($name, REDUCE_THREADS, REDUCE_MIN_BLOCKS_PER_SM);

        #[doc = concat!("Split-K reduction into ", $what, " C: adds the workspace's slices in ")]
        #[doc = "order and applies the epilogue. Launch as the module documentation says."]
        ///
        /// # Safety
        /// The module's preconditions must hold for `args`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(args: GemmArgs) {
            // SAFETY: this entry's contract.
            unsafe { reduce::<$element>(&args) }
        }
    };
}

reduce_entry!(gemm_split_k_reduce_f32, f32, "f32");
reduce_entry!(gemm_split_k_reduce_f16, F16, "fp16");
reduce_entry!(gemm_split_k_reduce_bf16, Bf16, "bf16");
