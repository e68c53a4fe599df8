//! Thin products with short rows: C has at most [`THIN_MAX`] columns (`thin_n`) and k is short
//! (dispatch sends it k ≤ 256), so A is a tall stack of short rows, 65537 × 17 for instance.
//!
//! Why: the dot-rows body of [`crate::thin`] gives each warp two rows of A and spreads a row's
//! 16-byte chunks over its lanes, so a 68-byte row keeps 5 of 32 lanes busy, and the general
//! kernels spend a 64 × 64 tile of arithmetic on three columns. Here one block owns
//! [`ROWS_PER_BLOCK`] rows of A and C, one per thread, and walks k in slices of
//! [`ROWS_SLICE_K`]:
//!
//! * **stage**: each warp copies the slice of 32 of the block's rows, one row per load with a
//!   lane per column (a warp load reads one row's slice, contiguous), widened to f32 into
//!   shared memory rows of [`ROWS_TILE_ROW_FLOATS`] words; one thread per (k, column) pair
//!   copies the slice of B as `[k][THIN_MAX]` f32, zeros past k and n;
//! * **multiply**: thread `t` walks its own staged row (bank `(33·t + kk) mod 32`: no two
//!   lanes meet) against B's rows, read by every lane at the same address (a broadcast), into
//!   [`THIN_MAX`] f32 sums;
//! * **store**: thread `t` writes its row's n outputs through the epilogue.
//!
//! Each sum is taken in one order (k ascending), with no atomics: results are bit-identical
//! from run to run. Loads are element by element, so no alignment beyond the element's is
//! needed. Offsets are computed in 64 bits.
//!
//! Launch: [`THREADS`] threads (1-D); grid x = ⌈m / [`ROWS_PER_BLOCK`]⌉, y = 1, z = min(batch,
//! 65 535) (a block walks x and z in grid-sized steps); dynamic shared memory
//! [`ROWS_SHARED_BYTES`]. Preconditions: `m, n, k, batch ≥ 1`, `n ≤ THIN_MAX`; addresses as
//! [`GemmArgs`] describes them, each aligned to its element size.

use crate::device::{
    block_x, block_z, fma, grid_dim_x, grid_dim_z, opaque_mad, shared_f32, sync_threads, thread_x,
};
use crate::element::{Bf16, F16};
use crate::thin::{ThinElement, store};
use gemm_geometry::GemmArgs;
use gemm_geometry::thin::{
    ROWS_PER_BLOCK, ROWS_SLICE_K, ROWS_TILE_ROW_FLOATS, THIN_MAX, THREADS, WARPS,
};
use seq_macro::seq;

#[cfg(doc)]
use gemm_geometry::thin::ROWS_SHARED_BYTES;

// The body below is unrolled for exactly these numbers.
const _: () = assert!(THIN_MAX == 8 && ROWS_SLICE_K == 32 && WARPS == 8);
const _: () = assert!(ROWS_PER_BLOCK == THREADS && ROWS_SLICE_K * THIN_MAX == THREADS);
/// Rows of A each warp stages per slice.
const ROWS_PER_WARP: u32 = ROWS_PER_BLOCK / WARPS;
/// Where B's staged slice starts in the dynamic shared memory, in f32 words.
const B_TILE_OFFSET: u32 = ROWS_PER_BLOCK * ROWS_TILE_ROW_FLOATS;

/// The short-rows body (see the module documentation). `B_NK`: B is stored `[n, k]`.
///
/// # Safety
/// `args` must describe matrices readable (A, B, C when beta ≠ 0) and writable (C) as `E`,
/// with the shapes, strides and element alignment [`GemmArgs`] defines, n ≤ [`THIN_MAX`]; the
/// launch must be the module's.
#[inline(always)]
unsafe fn short_rows<E: ThinElement, const B_NK: bool>(args: &GemmArgs) {
    let bytes = E::BYTES as u64;
    let thread = thread_x();
    let (lane, warp) = (thread % 32, thread / 32);
    let tile = shared_f32();
    let groups = args.m.div_ceil(ROWS_PER_BLOCK);
    // The (k, column) pair of B this thread stages: one per thread.
    let (b_k, b_col) = (thread / THIN_MAX, thread % THIN_MAX);
    let (lda_bytes, ldb_bytes) = (args.lda as u64 * bytes, args.ldb as u64 * bytes);

    let mut z = block_z();
    while z < args.batch {
        // Byte addresses of batch item z (64-bit: z · stride may exceed 2³²).
        let a_item = args.a + z as u64 * args.stride_a * bytes;
        let b_item = args.b + z as u64 * args.stride_b * bytes;
        let c_item = args.c + z as u64 * args.stride_c * bytes;
        let mut group = block_x();
        while group < groups {
            // < m + 256 ≤ 2³¹ + 255: no wrap.
            let first = group * ROWS_PER_BLOCK;
            let mut acc = [0.0f32; THIN_MAX as usize];
            let mut k0 = 0;
            while k0 < args.k {
                // Stage: every thread is done with the previous slice before it is replaced.
                sync_threads();
                let kk = k0 + lane;
                // This warp's first row and how many of its 32 exist (≥ 1 past m: none load).
                let warp_row = first + warp * ROWS_PER_WARP;
                let rows_here = args.m.saturating_sub(warp_row);
                // Element (warp_row, kk): each load adds its row with one opaque `mad`, so that
                // LLVM keeps no 64-bit pointer per row across the k loop (32 of them spilled).
                let lane_at = a_item + warp_row as u64 * lda_bytes + kk as u64 * bytes;
                let mut staged = [0.0f32; ROWS_PER_WARP as usize];
                seq!(i in 0..32 {
                    if i < rows_here && kk < args.k {
                        let at = opaque_mad(i as u64, lda_bytes, lane_at);
                        // SAFETY: element (warp_row + i, kk) of A's batch item z: inside m × k.
                        staged[i] = unsafe { E::load_scalar(at) };
                    }
                });
                let b_row = k0 + b_k;
                let b_value = if b_row < args.k && b_col < args.n {
                    let at = if B_NK {
                        b_item + b_col as u64 * ldb_bytes + b_row as u64 * bytes
                    } else {
                        b_item + b_row as u64 * ldb_bytes + b_col as u64 * bytes
                    };
                    // SAFETY: element (b_row, b_col) of B's batch item z, inside k × n.
                    unsafe { E::load_scalar(at) }
                } else {
                    0.0
                };
                seq!(i in 0..32 {
                    let slot = (warp * ROWS_PER_WARP + i) * ROWS_TILE_ROW_FLOATS + lane;
                    // SAFETY: slot < ROWS_PER_BLOCK · ROWS_TILE_ROW_FLOATS, inside the
                    // dynamic shared memory (ROWS_SHARED_BYTES).
                    unsafe { *tile.add(slot as usize) = staged[i] };
                });
                // SAFETY: b_k < ROWS_SLICE_K and b_col < THIN_MAX: inside B's slice.
                unsafe { *tile.add((B_TILE_OFFSET + thread) as usize) = b_value };
                sync_threads();
                // Multiply: this thread's row against the slice of B (zeros past k and n).
                let own = thread * ROWS_TILE_ROW_FLOATS;
                seq!(c in 0..32 {
                    // SAFETY: inside the staged slice (own + c < ROWS_PER_BLOCK · 33).
                    let a = unsafe { *tile.add((own + c) as usize) };
                    seq!(j in 0..8 {
                        // SAFETY: B_TILE_OFFSET + c · 8 + j < B_TILE_OFFSET + 256.
                        let b = unsafe { *tile.add((B_TILE_OFFSET + c * THIN_MAX + j) as usize) };
                        acc[j] = fma(a, b, acc[j]);
                    });
                });
                k0 += ROWS_SLICE_K;
            }
            let row = first + thread;
            if row < args.m {
                seq!(j in 0..8 {
                    if j < args.n {
                        // SAFETY: row < m and j < n.
                        unsafe { store::<E>(args, c_item, row, j, acc[j]) };
                    }
                });
            }
            group += grid_dim_x();
        }
        z += grid_dim_z();
    }
}

/// One entry point per element type and B layout.
macro_rules! rows_entry {
    ($name:ident, $what:literal, $element:ty, $b_nk:literal) => {
        crate::launch_bounds!(
            $name,
            gemm_geometry::thin::THREADS,
            gemm_geometry::thin::ROWS_MIN_BLOCKS_PER_SM
        );

        #[doc = concat!("Thin product with short rows, ", $what, ". Launch as the module documentation says.")]
        ///
        /// # Safety
        /// `args` must describe valid device matrices of the entry's element type, as
        /// [`GemmArgs`] defines them, with n at most `THIN_MAX`; the launch must use the
        /// module's geometry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(args: GemmArgs) {
            // SAFETY: as this entry's contract.
            unsafe { short_rows::<$element, $b_nk>(&args) }
        }
    };
}

rows_entry!(gemm_thin_n_rows_f32_kn, "n ≤ 8, f32, B [k, n]", f32, false);
rows_entry!(gemm_thin_n_rows_f32_nk, "n ≤ 8, f32, B [n, k]", f32, true);
rows_entry!(gemm_thin_n_rows_f16_kn, "n ≤ 8, fp16, B [k, n]", F16, false);
rows_entry!(gemm_thin_n_rows_f16_nk, "n ≤ 8, fp16, B [n, k]", F16, true);
rows_entry!(
    gemm_thin_n_rows_bf16_kn,
    "n ≤ 8, bf16, B [k, n]",
    Bf16,
    false
);
rows_entry!(
    gemm_thin_n_rows_bf16_nk,
    "n ≤ 8, bf16, B [n, k]",
    Bf16,
    true
);
