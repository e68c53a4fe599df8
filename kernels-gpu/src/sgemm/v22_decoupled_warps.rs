//! # v22 — warps that do not wait for each other
//!
//! **Idea.** v13's warps meet at a block barrier every step of k: the barrier says both that
//! every thread's copies of step t have landed and that every warp has finished step t − 1,
//! whose stage the next copies overwrite. Here each stage has two `mbarrier`s instead
//! ([`CopyBarriers`]): a `full` one, on which each thread arrives when its own copies into the
//! stage have landed (`cp.async.mbarrier.arrive.noinc`: the hardware arrives for it), and an
//! `empty` one, on which each thread arrives when it has finished reading the stage. A warp
//! waits only for the stage it is about to read, and before copying into a stage, only until
//! every warp is done with that stage's previous step. The copies run [`Variant::ahead`] steps
//! ahead of the math in a ring of [`Variant::stages`]; the stages between are slack, so a warp
//! may run a step ahead of the slowest without waiting at all.
//!
//! **Fixes.** Nsight Compute put v13's lost issue slots at the start of each step: the barrier,
//! then the first shared loads (`docs/ladder.md`, "What limits v13").
//!
//! Launch: as v13 (1-D blocks of [`Variant::threads`], grouped 1-D grid), with
//! [`Variant::shared_bytes`] of dynamic shared memory ([`gemm_geometry::v22`]).

use super::v10_warp_tiling::store_warp_tile;
use super::v13_async_copies::{Operands, pipelined};
use crate::device::thread_x;
use crate::ladder_epilogue::Epilogue;
use crate::tile_order::grouped_block_origin;
use gemm_geometry::v13::BLOCK_TILE_N;
use gemm_geometry::v22::{M64, M64_S3_A1, RUNG, S4_A3, S5_A3, V13_ORDER, Variant, ONE_BLOCK, M64_TWO_BLOCKS, M64_THREE_BLOCKS};

#[allow(unused_imports)]
use crate::pipeline::CopyBarriers;

/// The ladder body of one variant.
///
/// # Safety
/// The ladder's launch contract with `VARIANT`'s launch.
#[inline(always)]
unsafe fn decoupled<
    const ROWS: u32,
    const THREADS: u32,
    const STAGES: u32,
    const AHEAD: u32,
    const SCALAR_C: bool,
>(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let (first_row, first_col) = grouped_block_origin(m, n, ROWS, BLOCK_TILE_N);
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
    // SAFETY: the ladder's launch contract (contiguous, 16-byte aligned matrices; this
    // variant's block and shared memory).
    unsafe {
        pipelined::<false, ROWS, THREADS, 8, STAGES, AHEAD>(
            &operands,
            thread_x(),
            first_row,
            first_col,
            &#[inline(always)]
            |acc, row, col| {
                if SCALAR_C {
                    store_scalars(acc, c, m, n, row, col)
                } else {
                    store_warp_tile(acc, c, m, n, row, col, &Epilogue::STORE)
                }
            },
        )
    };
}

/// Writes a lane's accumulators one element at a time (v10's places: rows 32 apart in groups
/// of 4, columns 16 apart in groups of 4).
#[inline(always)]
fn store_scalars(acc: &[[f32; 8]; 8], c: *mut f32, m: u32, n: u32, row: u32, col: u32) {
    seq_macro::seq!(i in 0..8 {
        let r = row + (i / 4) * 32 + i % 4;
        if r < m {
            seq_macro::seq!(j in 0..8 {
                let cc = col + (j / 4) * 16 + j % 4;
                if cc < n {
                    // SAFETY: an element inside C.
                    unsafe { c.add((r * n + cc) as usize).write(acc[i][j]) };
                }
            });
        }
    });
}

macro_rules! variant_entry {
    ($name:ident, $variant:path) => {
        variant_entry!($name, $variant, false);
    };
    ($name:ident, $variant:path, $scalar:expr) => {
        crate::launch_bounds!($name, { $variant.threads() }, { $variant.min_blocks_per_sm });

        #[doc = concat!("v22 with [`", stringify!($variant), "`].")]
        ///
        /// # Safety
        /// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract),
        /// with `a`, `b`, `c` 16-byte aligned and the variant's launch.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const f32,
            b: *const f32,
            c: *mut f32,
            m: u32,
            n: u32,
            k: u32,
        ) {
            const V: Variant = $variant;
            // SAFETY: forwarded.
            unsafe {
                decoupled::<{ V.block_tile_m }, { V.threads() }, { V.stages }, { V.ahead }, $scalar>(
                    a, b, c, m, n, k,
                )
            };
        }
    };
}

variant_entry!(sgemm_v22_decoupled_warps, RUNG);
variant_entry!(sgemm_v22_s5_a3, S5_A3);
variant_entry!(sgemm_v22_s4_a3, S4_A3);
variant_entry!(sgemm_v22_m64, M64);
variant_entry!(sgemm_v22_m64_s3_a1, M64_S3_A1);
variant_entry!(sgemm_v22_scalar_c, RUNG, true);
variant_entry!(sgemm_v22_v13_scalar_c, V13_ORDER, true);
variant_entry!(sgemm_v22_one_block, ONE_BLOCK, true);
variant_entry!(sgemm_v22_m64_two_blocks, M64_TWO_BLOCKS, true);
variant_entry!(sgemm_v22_m64_three_blocks, M64_THREE_BLOCKS, true);
