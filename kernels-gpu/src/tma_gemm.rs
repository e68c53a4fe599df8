//! The TMA + `wgmma` GEMM body that v17 introduces and v18 runs persistently, and that the
//! library's fast fp16/bf16 entries (`gemm_v18_*`) instantiate: a producer warp feeding two
//! `wgmma` consumer warpgroups through `mbarrier`s, 128×256×64 block tiles, 4 stages (the
//! numbers live in `gemm_geometry::v17`, shared with the host). Hopper only (sm_90a).
//! `sgemm::v17_tma_warp_specialized` explains the idea; `sgemm::v18_persistent` the
//! persistent grid and the library entries' preconditions.
//!
//! ## One body for the ladder and the library
//!
//! [`tma_wgmma`] is the whole kernel, generic over the element type (fp16, bf16, or fp32 read
//! as TF32 by v19, B `[n, k]` only: [`WgmmaElement`]), the layout of B (`[k, n]` or `[n, k]`), the rank of the tensor maps (2-D for the ladder, 3-D
//! with the batch as third dimension for the library) and the store of a finished tile. The
//! ladder rungs (v17 and v18) instantiate it through [`ladder_tma_wgmma`] as fp16, `[k, n]`,
//! 2-D, plain fp16 stores. The library entries `gemm_v18_*` (in v18) instantiate the other
//! combinations with the fused epilogue ([`library_gemm`]).
//!
//! The block is generic too, through three numbers: consumer warpgroups (64 rows of the tile
//! each), accumulators per thread (N/2 for an N-column tile: 128 for v17's 256 columns, 32 for
//! 64) and pipeline stages. Every rung and entry above uses v17's (2, 128, 4: 128 × 256 tiles);
//! the library's small-tile entries `gemm_v18_m64_*` ([`crate::tma_gemm_m64`]) use (1, 32, 6):
//! 64 × 64 tiles, one `[k, n]` slab of B per stage, `wgmma … m64n64k16`; the mid-size entries
//! `gemm_v18_n128_*` ([`crate::tma_gemm_n128`]) use (2, 64, 6): 128 × 128 tiles, two slabs,
//! `wgmma … m64n128k16`. The layouts and descriptors below hold for all three (the sizes given
//! are v17's); only the counts of rows, slabs and accumulators change.
//!
//! ## Shared-memory layouts and `wgmma` descriptors (the math, for debugging)
//!
//! A stage is `A_TILE_BYTES` (16 KiB) of A then `B_TILE_BYTES` (32 KiB) of B, each 1 024-byte
//! aligned. Every tile is a stack of 128-byte rows written by the TMA with the 128-byte swizzle:
//! 16-byte chunk `c` of row `r` (relative to a 1 024-aligned base) lands at chunk
//! `c ^ (r % 8)`; the hardware computes the XOR from address bits 7–9 into bits 4–6, so TMA
//! writes and `wgmma` reads agree as long as every 8-row atom is 1 024-aligned (the
//! descriptor's base-offset field stays 0). A descriptor (see [`swizzled_descriptor`]) holds the
//! *unswizzled* address of the operand's first element, the leading byte offset (LBO) and the
//! stride byte offset (SBO), in 16-byte units, and swizzle mode 1 (128 B).
//!
//! - **A** (`[m, k]`, K-major): the box is 128 rows (m) × 64 k, row `r` at `128·r`. Warpgroup
//!   `w` reads rows `64·w ..`; the k16 slice `s` (k = 16s..16s+15) is chunks `2s, 2s+1` of each
//!   row, so the start address is `tile + 64·w·128 + 32·s`; SBO = 1 024 (from one 8-row group
//!   of m to the next); LBO unused for a swizzled K-major operand (the two 8-element core
//!   matrices of a k16 slice sit side by side inside the swizzled row), set to 16 (encoded 1).
//!   `imm-trans-a = 0`.
//! - **B `[k, n]`** (MN-major, ladder and `*_kn`): four boxes of 64 k-rows × 64 n (128 bytes),
//!   slab `j` (columns 64j..64j+63) at `A_TILE_BYTES + 8 192·j`. The k16 slice `s` starts at
//!   k-row `16s`: start `b_tile + 16s·128`; LBO = 8 192 (from one 64-column slab to the next
//!   along n); SBO = 1 024 (from one group of 8 k-rows to the next). `imm-trans-b = 1`.
//! - **B `[n, k]`** (K-major, `*_nk`): one box of 256 n-rows × 64 k, row `r` (column `r` of
//!   the tile) at `A_TILE_BYTES + 128·r`: the same form as A. The k16 slice `s` starts at
//!   `b_tile + 32·s`; SBO = 1 024 (8 n-rows to the next 8); LBO unused (16). The N = 256
//!   rows span 32 groups of 1 024 bytes, exactly the 32 KiB tile. `imm-trans-b = 0` (the PTX
//!   ISA's "B column-major", i.e. each column of B, one row of `[n, k]`, contiguous along k).
//!
//! The accumulators' layout does not depend on B's layout: thread `t` of a warpgroup holds
//! row `16·(t / 32) + (t % 32) / 4 + 8·((i / 2) % 2)`, column `8·(i / 4) + 2·(t % 4) + i % 2`
//! of its 64×256 slice in `acc[i]`.

use crate::cluster::{barrier_arrive_in, cluster_rank, cluster_sync, tma_load_2d_multicast};
use crate::device::{
    block_x, block_z, grid_dim_x, shared_address, shared_f32, shuffle_xor_u32,
    store_f16x2_or_partial, store_f16x4_or_partial, store2_or_partial, thread_x, trap,
};
use crate::element::{Bf16, E4m3, E5m2, Element, F16};
use crate::epilogue::apply;
use crate::pipeline::{StageRing, TeamTurns};
use crate::stream_k;
use crate::tensor_core::{
    B_K_MAJOR, B_MN_MAJOR, pack_bf16x2, pack_f16x2, pin_accumulators, swizzled_descriptor,
    warpgroup_commit, warpgroup_fence, warpgroup_registers_lower, warpgroup_registers_raise,
    warpgroup_wait, wgmma_m64n64k16, wgmma_m64n64k16_overwrite, wgmma_m64n128k16,
    wgmma_m64n128k16_overwrite, wgmma_m64n256k8_tf32, wgmma_m64n256k8_tf32_overwrite,
    wgmma_m64n256k16, wgmma_m64n256k16_overwrite, wgmma_m64n256k32_fp8,
    wgmma_m64n256k32_fp8_overwrite,
};
use crate::tile_order::{GROUP_M, grouped_tile};
use crate::tma::{
    StageBarriers, barrier_arrive, barrier_arrive_expect_bytes, barrier_wait, tma_load_2d,
    tma_load_3d,
};
use gemm_geometry::GemmArgs;
use gemm_geometry::stream_k::{block_holding, block_start, flag_bytes};
use gemm_geometry::v17::{
    B_KN_BOX, STAGES, SWIZZLE_BYTES, TENSOR_MAP_BYTES, TILE_K, WARPGROUP_ROWS,
};
use gemm_geometry::v22;
use seq_macro::seq;

/// v17's block (ladder rungs v17–v20, the `gemm_v18_*` and `gemm_v19_*` entries) as
/// [`tma_wgmma`]'s generic numbers: two consumer warpgroups, 128 accumulators per thread.
pub const V17_WARPGROUPS: u32 = gemm_geometry::v17::CONSUMER_WARPGROUPS;
/// See [`V17_WARPGROUPS`].
pub const V17_ACC: usize = gemm_geometry::v17::ACCUMULATORS as usize;

/// Every row of both tiles is 128 bytes: 64 elements of k for A and `[n, k]` B, 64 of n for
/// `[k, n]` B.
const ROW_BYTES: u32 = SWIZZLE_BYTES;
/// One 64-column slab of a `[k, n]` B tile: `TILE_K` rows of 128 bytes.
const B_SLAB_BYTES: u32 = B_KN_BOX[1] * ROW_BYTES;
/// A swizzle atom: 8 rows of 128 bytes. The SBO of every operand here.
const ATOM_BYTES: u32 = 8 * ROW_BYTES;
/// The LBO of a swizzled K-major operand is not used by the hardware; 16 bytes (encoded 1).
const UNUSED_LEADING_BYTES: u32 = 16;

/// The ladder's instance of [`tma_wgmma`] on v17's block: one product, 2-D tensor maps (A,
/// then B, as the host's `tensor_maps_for` builds them), plain stores of `C` (m×n, row-major,
/// elements `E`). fp16 with B `[k, n]` for v17 and v18, TF32 with B's `[n, k]` copy (`B_NK`)
/// for v19. The tiles are `block_x, block_x + grid_dim_x, …` (grouped order): v17 launches one
/// block per tile, so the tile loop runs once; v18 and v19 launch one block per SM and let each
/// loop over many.
///
/// # Safety
/// `maps` must hold the two tensor maps described in the rung's documentation
/// (`sgemm::v17_tma_warp_specialized`, `sgemm::v19_tf32_wgmma`) for these `m`, `n`, `k`; `c`
/// must hold `m·n` elements (256-byte aligned, as device allocations are); the launch must be
/// the one described there (v18's and v19's grids may be smaller).
#[inline(always)]
pub unsafe fn ladder_tma_wgmma<E: WgmmaElement, const B_NK: bool>(
    c: *mut E,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    // SAFETY: the caller's contract.
    unsafe {
        ladder_tma_wgmma_on::<E, B_NK, 1, 1, V17_WARPGROUPS, STAGES>(c, m, n, k, maps);
    }
}

/// [`ladder_tma_wgmma`] on any block of [`tma_wgmma`]: clusters of `CLUSTER` blocks (v23: 2),
/// `TEAMS` teams of `WARPGROUPS` consumer warpgroups each (v22, v23: two of one), `STAGES`
/// stages, 128 accumulators per thread.
///
/// # Safety
/// That of [`ladder_tma_wgmma`], with the block's tensor maps and launch
/// (`sgemm::v22_pingpong` for v22's).
#[inline(always)]
pub unsafe fn ladder_tma_wgmma_on<
    E: WgmmaElement,
    const B_NK: bool,
    const CLUSTER: u32,
    const TEAMS: u32,
    const WARPGROUPS: u32,
    const STAGES: u32,
>(
    c: *mut E,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    let problem = Problem::one(m, n, k);
    // Inlined into the body like the code it replaces (a call would spill the accumulators).
    let store = #[inline(always)]
    |acc: &[f32; 128], _z: u32, row: u32, first_col: u32| {
        if E::IS_F16 {
            // fp16 (v17, v18): four values per store (see `store_f16_quads`).
            // SAFETY: `c` holds the m×n fp16 matrix, 256-byte aligned.
            unsafe { store_f16_quads(c as *mut u16, m, n, acc, row, first_col, None) };
            return;
        }
        seq!(j in 0..32 {
            let col = first_col + 8 * j;
            // SAFETY: `store_dense_pair` skips elements outside the m×n matrix `c` (`col` is
            // even).
            unsafe {
                E::store_dense_pair(c, m, n, row, col, acc[4 * j], acc[4 * j + 1]);
                E::store_dense_pair(c, m, n, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
            }
        });
    };
    // SAFETY: the caller's contract is the body's.
    unsafe {
        tma_wgmma::<E, B_NK, false, false, CLUSTER, TEAMS, WARPGROUPS, V17_ACC, STAGES>(
            &problem, maps, store,
        )
    };
}

/// The FP8 ladder rung's instance of [`tma_wgmma`] (v20): operands `O` ([`E4m3`] or [`E5m2`]),
/// A `[m, k]` and B `[n, k]` behind 2-D tensor maps, `C = fp16(scale_a · scale_b · A·Bᵀ)`
/// stored plainly (m×n, row-major). The tiles as in [`ladder_tma_wgmma`].
///
/// # Safety
/// `maps` must hold the two tensor maps of `sgemm::v20_fp8_wgmma` for these `m`, `n`, `k`;
/// `scales` must point to two readable f32 (`scale_a`, `scale_b`); `c` must hold `m·n` fp16
/// values (8-byte aligned); the launch must be v18's.
#[inline(always)]
pub unsafe fn ladder_fp8_tma_wgmma<O: WgmmaOperand>(
    c: *mut F16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
    scales: *const f32,
) {
    let problem = Problem::one(m, n, k);
    // One register for the whole kernel: the product of the two per-tensor scales, applied to
    // the fp32 accumulators before they are rounded to fp16 (as cuBLASLt applies its A and B
    // scale pointers).
    // SAFETY: the caller's contract (two readable f32).
    let scale = unsafe { scales.read() * scales.add(1).read() };
    let store = #[inline(always)]
    |acc: &[f32; 128], _z: u32, row: u32, first_col: u32| {
        // SAFETY: `c` holds the m×n fp16 matrix (the caller's contract).
        unsafe { store_f16_quads(c as *mut u16, m, n, acc, row, first_col, Some(scale)) };
    };
    // SAFETY: the caller's contract is the body's (B `[n, k]`, 2-D maps, one product).
    unsafe {
        tma_wgmma::<O, true, false, false, 1, 1, V17_WARPGROUPS, V17_ACC, STAGES>(
            &problem, maps, store,
        )
    };
}

/// Stores this thread's 128 accumulators of a tile (layout in the module documentation: rows
/// `row` and `row + 8`, columns `first_col + 8j, +1`), times `scale` if any, as fp16 into the
/// dense row-major m×n matrix `c`, skipping elements outside it: four fp16 (8 bytes) per store
/// instead of two. The four lanes of a quad hold columns 2q, 2q + 1 of every 8-column block j;
/// lanes q and q ^ 1 swap one pair, so that the even lane holds columns 4·(q / 2) .. + 3 of
/// block 2p and the odd lane the same of block 2p + 1. A warp's store then covers 32
/// contiguous bytes of each of its 8 rows (whole sectors), where pairs covered 16: half the
/// store instructions and half the sectors, for one shuffle per store.
///
/// # Safety
/// `c` must point to a writable m×n fp16 matrix, 8-byte aligned; every lane of the warp must
/// call this together (it shuffles), with the accumulator layout of the module documentation.
#[inline(always)]
unsafe fn store_f16_quads(
    c: *mut u16,
    m: u32,
    n: u32,
    acc: &[f32; 128],
    row: u32,
    first_col: u32,
    scale: Option<f32>,
) {
    let scaled = #[inline(always)]
    |x: f32| match scale {
        Some(scale) => scale * x,
        None => x,
    };
    let odd = quad_is_odd(first_col);
    let col = quad_first_col(first_col);
    let swap = #[inline(always)]
    |block_even: u32, block_odd: u32| quad_swap(odd, block_even, block_odd);
    seq!(p in 0..16 {
        // Blocks j = 2p and 2p + 1: accumulators 8p.. and 8p + 4.. (rows row, row + 8).
        let (low, high) = swap(
            pack_f16x2(scaled(acc[8 * p]), scaled(acc[8 * p + 1])),
            pack_f16x2(scaled(acc[8 * p + 4]), scaled(acc[8 * p + 5])),
        );
        let (low_8, high_8) = swap(
            pack_f16x2(scaled(acc[8 * p + 2]), scaled(acc[8 * p + 3])),
            pack_f16x2(scaled(acc[8 * p + 6]), scaled(acc[8 * p + 7])),
        );
        // SAFETY: `store_f16x4_or_partial` skips elements outside the m×n matrix `c`
        // (`col + 16p` is a multiple of 4; `c` is 8-byte aligned).
        unsafe {
            store_f16x4_or_partial(c, m, n, row, col + 16 * p, low, high);
            store_f16x4_or_partial(c, m, n, row + 8, col + 16 * p, low_8, high_8);
        }
    });
}

/// Whether this lane (whose first accumulator column is `first_col` = the tile's column +
/// 2·(lane % 4)) is the odd lane of its pair in the quad stores (see [`store_f16_quads`]).
#[inline(always)]
fn quad_is_odd(first_col: u32) -> bool {
    (first_col >> 1) & 1 == 1
}

/// The first column of this lane's four-element stores in 8-column block 0 (the even lane of
/// a pair) or block 1 (the odd lane), for blocks 2p and 2p + 1 add 16p: columns
/// 4·(q / 2) .. + 3 of the block, q = lane % 4.
#[inline(always)]
fn quad_first_col(first_col: u32) -> u32 {
    let quad_lane = (first_col >> 1) & 3;
    first_col - 2 * quad_lane + 4 * (quad_lane >> 1) + if quad_is_odd(first_col) { 8 } else { 0 }
}

/// The exchange of the quad stores: this lane holds one packed pair of block 2p
/// (`block_even`) and one of block 2p + 1 (`block_odd`); the odd lane of the pair sends its
/// block-2p pair and the even one its block-2p+1 pair. Returns the two pairs this lane stores
/// side by side (low columns first). Every lane of the warp must call this together.
#[inline(always)]
fn quad_swap(odd: bool, block_even: u32, block_odd: u32) -> (u32, u32) {
    let (keep, send) = if odd {
        (block_odd, block_even)
    } else {
        (block_even, block_odd)
    };
    let received = shuffle_xor_u32(send, 1);
    if odd {
        (received, keep)
    } else {
        (keep, received)
    }
}

/// The operand types of the TMA + `wgmma` GEMM: what a stage holds and which `wgmma` reads it.
/// fp16 and bf16 (either B layout), fp32 read as TF32 and the FP8 types (B `[n, k]` only: TF32
/// and FP8 `wgmma` read both operands K-major).
pub trait WgmmaOperand {
    /// Elements of k per stage: one 128-byte swizzled row (64 for 16-bit types, 32 for fp32,
    /// 128 for FP8).
    const TILE_K: u32;
    /// One `wgmma` on a 32-byte k-slice of each operand (k16 for 16-bit types, k8 for TF32,
    /// k32 for FP8), with `imm-trans-b = TRANS_B` (TF32 and FP8: [`B_K_MAJOR`] only).
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    unsafe fn mma<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool);
    /// [`WgmmaOperand::mma`]'s output-only form (see [`wgmma_m64n256k16_overwrite`]).
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    unsafe fn mma_overwrite<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64);
    /// [`WgmmaOperand::mma`] on a 64-column tile (`wgmma … m64n64`, 32 accumulators), for the
    /// small-tile entries (`gemm_v18_m64_*`). Only fp16 and bf16 have them: the others trap.
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    #[inline(always)]
    unsafe fn mma_n64<const TRANS_B: u32>(
        _acc: &mut [f32; 32],
        _a: u64,
        _b: u64,
        _accumulate: bool,
    ) {
        trap()
    }
    /// [`WgmmaOperand::mma_n64`]'s output-only form.
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    #[inline(always)]
    unsafe fn mma_n64_overwrite<const TRANS_B: u32>(_acc: &mut [f32; 32], _a: u64, _b: u64) {
        trap()
    }
    /// [`WgmmaOperand::mma`] on a 128-column tile (`wgmma … m64n128`, 64 accumulators), for the
    /// mid-size entries (`gemm_v18_n128_*`). Only fp16 and bf16 have them: the others trap.
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    #[inline(always)]
    unsafe fn mma_n128<const TRANS_B: u32>(
        _acc: &mut [f32; 64],
        _a: u64,
        _b: u64,
        _accumulate: bool,
    ) {
        trap()
    }
    /// [`WgmmaOperand::mma_n128`]'s output-only form.
    ///
    /// # Safety
    /// That of [`wgmma_m64n256k16`].
    #[inline(always)]
    unsafe fn mma_n128_overwrite<const TRANS_B: u32>(_acc: &mut [f32; 64], _a: u64, _b: u64) {
        trap()
    }
}

/// One `wgmma` of [`WgmmaOperand`] `E` on this thread's `ACC` accumulators: m64n256 for 128,
/// m64n128 for 64, m64n64 for 32 (the accumulators of one warpgroup's 64 × N slice, N/2 per
/// thread), through the output-only form when `OVERWRITE` (then `accumulate` is ignored).
///
/// # Safety
/// That of [`wgmma_m64n256k16`]; `ACC` must be 128, 64 or 32 (anything else traps).
#[inline(always)]
unsafe fn mma_tile<E: WgmmaOperand, const TRANS_B: u32, const ACC: usize, const OVERWRITE: bool>(
    acc: &mut [f32; ACC],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let at = acc as *mut [f32; ACC];
    match ACC {
        128 => {
            // SAFETY: ACC is 128 here: the same array.
            let acc = unsafe { &mut *(at as *mut [f32; 128]) };
            // SAFETY (both): the caller's contract.
            if OVERWRITE {
                unsafe { E::mma_overwrite::<TRANS_B>(acc, a, b) }
            } else {
                unsafe { E::mma::<TRANS_B>(acc, a, b, accumulate) }
            }
        }
        64 => {
            // SAFETY: ACC is 64 here: the same array.
            let acc = unsafe { &mut *(at as *mut [f32; 64]) };
            // SAFETY (both): the caller's contract.
            if OVERWRITE {
                unsafe { E::mma_n128_overwrite::<TRANS_B>(acc, a, b) }
            } else {
                unsafe { E::mma_n128::<TRANS_B>(acc, a, b, accumulate) }
            }
        }
        32 => {
            // SAFETY: ACC is 32 here: the same array.
            let acc = unsafe { &mut *(at as *mut [f32; 32]) };
            // SAFETY (both): the caller's contract.
            if OVERWRITE {
                unsafe { E::mma_n64_overwrite::<TRANS_B>(acc, a, b) }
            } else {
                unsafe { E::mma_n64::<TRANS_B>(acc, a, b, accumulate) }
            }
        }
        _ => trap(),
    }
}

/// The element types whose operands and results have the same type (fp16, bf16, fp32 as
/// TF32): how a result pair is stored.
pub trait WgmmaElement: Element + WgmmaOperand {
    /// Whether this is fp16, whose ladder tiles are stored four values at a time.
    const IS_F16: bool = false;
    /// `low` and `high` rounded to this type and packed into one 32-bit word, `low` in the low
    /// half: the 16-bit types' quad stores ([`library_gemm`]). f32 never takes that path
    /// (`library_gemm` stores quads only when `BYTES` is 2); it traps.
    fn pack2(low: f32, high: f32) -> u32;
    /// Stores `low` and `high`, rounded to this type, at `at` and `at + 1` with one store.
    ///
    /// # Safety
    /// `at` must point to two writable elements, aligned to twice this type's size.
    unsafe fn store2(at: *mut Self, low: f32, high: f32);
    /// Stores `low` and `high`, rounded to this type, at (`row`, `col`) and (`row`, `col + 1`)
    /// of the dense row-major `rows × cols` matrix `c`, skipping elements outside it: one store
    /// when both lie inside and `cols` is even, else element by element.
    ///
    /// # Safety
    /// When `row < rows`, `c` must point to such a writable matrix, aligned to twice this
    /// type's size, and `col` must be even.
    #[allow(clippy::too_many_arguments)]
    unsafe fn store_dense_pair(
        c: *mut Self,
        rows: u32,
        cols: u32,
        row: u32,
        col: u32,
        low: f32,
        high: f32,
    );
}

/// A pair of 16-bit values as one 32-bit store.
///
/// # Safety
/// `at` must point to a writable, 4-byte aligned pair.
#[inline(always)]
unsafe fn store_packed<E>(at: *mut E, packed: u32) {
    unsafe { (at as *mut u32).write(packed) };
}

/// The 16-bit operand types (fp16: `$bf16` false, bf16: true): `wgmma … m64n256k16`,
/// `m64n128k16` and `m64n64k16` of that type, B in either layout.
macro_rules! half_operand {
    ($ty:ty, $bf16:literal) => {
        impl WgmmaOperand for $ty {
            const TILE_K: u32 = TILE_K;
            #[inline(always)]
            unsafe fn mma<const TRANS_B: u32>(
                acc: &mut [f32; 128],
                a: u64,
                b: u64,
                accumulate: bool,
            ) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n256k16::<$bf16, TRANS_B>(acc, a, b, accumulate) }
            }
            #[inline(always)]
            unsafe fn mma_overwrite<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n256k16_overwrite::<$bf16, TRANS_B>(acc, a, b) }
            }
            #[inline(always)]
            unsafe fn mma_n64<const TRANS_B: u32>(
                acc: &mut [f32; 32],
                a: u64,
                b: u64,
                accumulate: bool,
            ) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n64k16::<$bf16, TRANS_B>(acc, a, b, accumulate) }
            }
            #[inline(always)]
            unsafe fn mma_n64_overwrite<const TRANS_B: u32>(acc: &mut [f32; 32], a: u64, b: u64) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n64k16_overwrite::<$bf16, TRANS_B>(acc, a, b) }
            }
            #[inline(always)]
            unsafe fn mma_n128<const TRANS_B: u32>(
                acc: &mut [f32; 64],
                a: u64,
                b: u64,
                accumulate: bool,
            ) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n128k16::<$bf16, TRANS_B>(acc, a, b, accumulate) }
            }
            #[inline(always)]
            unsafe fn mma_n128_overwrite<const TRANS_B: u32>(acc: &mut [f32; 64], a: u64, b: u64) {
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n128k16_overwrite::<$bf16, TRANS_B>(acc, a, b) }
            }
        }
    };
}

half_operand!(F16, false);
half_operand!(Bf16, true);

impl WgmmaElement for F16 {
    const IS_F16: bool = true;
    #[inline(always)]
    fn pack2(low: f32, high: f32) -> u32 {
        pack_f16x2(low, high)
    }
    #[inline(always)]
    unsafe fn store2(at: *mut Self, low: f32, high: f32) {
        // SAFETY: the caller's contract.
        unsafe { store_packed(at, pack_f16x2(low, high)) }
    }
    #[inline(always)]
    unsafe fn store_dense_pair(
        c: *mut Self,
        rows: u32,
        cols: u32,
        row: u32,
        col: u32,
        low: f32,
        high: f32,
    ) {
        // SAFETY: the caller's contract (fp16 bits are stored as they are).
        unsafe {
            store_f16x2_or_partial(c as *mut u16, rows, cols, row, col, pack_f16x2(low, high))
        }
    }
}

impl WgmmaElement for Bf16 {
    #[inline(always)]
    fn pack2(low: f32, high: f32) -> u32 {
        pack_bf16x2(low, high)
    }
    #[inline(always)]
    unsafe fn store2(at: *mut Self, low: f32, high: f32) {
        // SAFETY: the caller's contract.
        unsafe { store_packed(at, pack_bf16x2(low, high)) }
    }
    #[inline(always)]
    unsafe fn store_dense_pair(
        c: *mut Self,
        rows: u32,
        cols: u32,
        row: u32,
        col: u32,
        low: f32,
        high: f32,
    ) {
        // SAFETY: the caller's contract (the 16-bit patterns are stored as they are).
        unsafe {
            store_f16x2_or_partial(c as *mut u16, rows, cols, row, col, pack_bf16x2(low, high))
        }
    }
}

impl WgmmaOperand for f32 {
    const TILE_K: u32 = gemm_geometry::v19::TILE_K;
    #[inline(always)]
    unsafe fn mma<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
        if TRANS_B != B_K_MAJOR {
            // Unreachable: no TF32 entry takes B `[k, n]` (the branch folds away).
            trap();
        }
        // SAFETY: the caller's contract.
        unsafe { wgmma_m64n256k8_tf32(acc, a, b, accumulate) }
    }
    #[inline(always)]
    unsafe fn mma_overwrite<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64) {
        if TRANS_B != B_K_MAJOR {
            trap();
        }
        // SAFETY: the caller's contract.
        unsafe { wgmma_m64n256k8_tf32_overwrite(acc, a, b) }
    }
}

impl WgmmaElement for f32 {
    #[inline(always)]
    fn pack2(_low: f32, _high: f32) -> u32 {
        // Unreachable: fp32 C is never stored in quads (the branch folds away).
        trap()
    }
    #[inline(always)]
    unsafe fn store2(at: *mut Self, low: f32, high: f32) {
        // SAFETY: the caller's contract (an 8-byte aligned pair).
        unsafe {
            core::arch::asm!(
                "st.v2.f32 [{at}], {{{low}, {high}}};",
                at = in(reg64) at,
                low = in(reg32) low,
                high = in(reg32) high,
                options(nostack),
            )
        };
    }
    #[inline(always)]
    unsafe fn store_dense_pair(
        c: *mut Self,
        rows: u32,
        cols: u32,
        row: u32,
        col: u32,
        low: f32,
        high: f32,
    ) {
        // SAFETY: the caller's contract.
        unsafe { store2_or_partial(c, rows, cols, row, col, low, high) }
    }
}

/// The FP8 operand types: the same stage and descriptors, `wgmma.m64n256k32` with the type
/// `$e5m2` selects (e5m2 or e4m3); B `[n, k]` only.
macro_rules! fp8_operand {
    ($ty:ty, $e5m2:literal) => {
        impl WgmmaOperand for $ty {
            const TILE_K: u32 = gemm_geometry::v20::TILE_K;
            #[inline(always)]
            unsafe fn mma<const TRANS_B: u32>(
                acc: &mut [f32; 128],
                a: u64,
                b: u64,
                accumulate: bool,
            ) {
                if TRANS_B != B_K_MAJOR {
                    // Unreachable: no FP8 entry takes B `[k, n]` (the branch folds away).
                    trap();
                }
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n256k32_fp8::<$e5m2>(acc, a, b, accumulate) }
            }
            #[inline(always)]
            unsafe fn mma_overwrite<const TRANS_B: u32>(acc: &mut [f32; 128], a: u64, b: u64) {
                if TRANS_B != B_K_MAJOR {
                    trap();
                }
                // SAFETY: the caller's contract.
                unsafe { wgmma_m64n256k32_fp8_overwrite::<$e5m2>(acc, a, b) }
            }
        }
    };
}

fp8_operand!(E4m3, false);
fp8_operand!(E5m2, true);

/// The extent of one product for [`tma_wgmma`]; the matrices themselves are behind the maps.
pub struct Problem {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of B and C.
    pub n: u32,
    /// The reduction length.
    pub k: u32,
    /// Batch items (3-D maps only; 1 with 2-D maps).
    pub batch: u32,
    /// Split-K slices (3-D maps only; 1 for none): the blocks walk `splits · batch` virtual
    /// items, slice `zz / batch` of batch item `zz % batch` (see `gemm_geometry::split_k`).
    pub splits: u32,
    /// The k-steps (of `TILE_K`) of every slice but the last; unused when `splits` is 1.
    pub chunk_steps: u32,
    /// Stream-K (3-D maps without a split only; 0 for none): the last `stream_k_tiles` work
    /// items are cut along k into shares of the blocks (see `gemm_geometry::stream_k`).
    pub stream_k_tiles: u32,
    /// The stream-K workspace (flags, then slots), when `stream_k_tiles` > 0.
    pub stream_k_workspace: u64,
    /// Whether A's tiles come from batch item `z` (else always from item 0: A shared by the
    /// whole batch, batch stride 0, encoded with a batch dimension of 1).
    pub a_follows_batch: bool,
    /// The same for B.
    pub b_follows_batch: bool,
}

impl Problem {
    /// One m×n×k product, no batch and no split: the ladder rungs' problem (2-D maps).
    #[inline(always)]
    pub fn one(m: u32, n: u32, k: u32) -> Self {
        Problem {
            m,
            n,
            k,
            batch: 1,
            splits: 1,
            chunk_steps: 0,
            stream_k_tiles: 0,
            stream_k_workspace: 0,
            a_follows_batch: false,
            b_follows_batch: false,
        }
    }
}

/// The walk of one block over its whole work items: item `w` is tile `w mod tiles` of batch
/// item `⌊w / tiles⌋`; the block takes its linear index over the grid (x, 1, z) first, then
/// steps of the grid's size, up to `whole` (all items but a stream-K tail). Without batch
/// (`BATCHED` false) this is the ladder's `tile = block_x; tile < tiles; tile += grid_dim_x`
/// exactly. Few registers on purpose: the walk stays live through the epilogue, next to the
/// 128 accumulators.
///
/// In clusters of `CLUSTER` blocks (v23), the cluster walks: its blocks take the same items,
/// each its own rows of the item's tile, so the index and the step are the cluster's.
struct Walk<const BATCHED: bool, const CLUSTER: u32> {
    item: u32,
    whole: u32,
    tiles: u32,
}

impl<const BATCHED: bool, const CLUSTER: u32> Walk<BATCHED, CLUSTER> {
    /// `whole` ≤ batch · tiles ≤ 2³¹, so that stepping cannot wrap.
    #[inline(always)]
    fn new(tiles: u32, whole: u32) -> Self {
        let first = if BATCHED { block_index() } else { block_x() } / CLUSTER;
        Walk {
            item: first,
            whole,
            tiles,
        }
    }

    #[inline(always)]
    fn valid(&self) -> bool {
        self.item < self.whole
    }

    /// The batch item of the current work item.
    #[inline(always)]
    fn z(&self) -> u32 {
        batch_of::<BATCHED>(self.item, self.tiles)
    }

    /// The tile (grouped-order index within its batch item) of the current work item.
    #[inline(always)]
    fn tile(&self) -> u32 {
        tile_of::<BATCHED>(self.item, self.tiles)
    }

    #[inline(always)]
    fn advance(&mut self) {
        self.item += if BATCHED { grid_blocks() } else { grid_dim_x() } / CLUSTER;
    }
}

/// The batch item of work item `item`.
#[inline(always)]
fn batch_of<const BATCHED: bool>(item: u32, tiles: u32) -> u32 {
    if BATCHED { item / tiles } else { 0 }
}

/// The tile (grouped-order index within its batch item) of work item `item`.
#[inline(always)]
fn tile_of<const BATCHED: bool>(item: u32, tiles: u32) -> u32 {
    if BATCHED { item % tiles } else { item }
}

/// The stream-K tail of a launch (`gemm_geometry::stream_k`): `tiles` items after the
/// `whole` ones, `steps` k-steps each, cut into equal shares of the grid's blocks. The block
/// walks the tail tiles of its share last to first ([`Tail::tiles_of_share`]), after its
/// whole items, in a loop of its own: the whole items' loop stays as lean in registers as
/// without stream-K.
#[derive(Clone, Copy)]
struct Tail {
    whole: u32,
    tiles: u32,
    steps: u32,
}

impl Tail {
    /// The tail's k-steps.
    #[inline(always)]
    fn total(self) -> u64 {
        self.tiles as u64 * self.steps as u64
    }

    /// This block's share `[start, end)` of the tail's steps.
    #[inline(always)]
    fn share(self) -> (u64, u64) {
        let (block, blocks) = (block_index(), grid_blocks());
        let total = self.total();
        (
            block_start(block, blocks, total),
            block_start(block + 1, blocks, total),
        )
    }

    /// The tail tiles this block's share touches, `(first, end)` (end exclusive; empty
    /// without a tail or with an empty share).
    #[inline(always)]
    fn tiles_of_share(self) -> (u32, u32) {
        if self.tiles == 0 {
            return (0, 0);
        }
        let (start, end) = self.share();
        if start == end {
            return (0, 0);
        }
        let steps = self.steps as u64;
        ((start / steps) as u32, ((end - 1) / steps) as u32 + 1)
    }

    /// The k-steps `[first, end)` of tail tile `tile` that this block computes.
    #[inline(always)]
    fn steps_of(self, tile: u32) -> (u32, u32) {
        let (start, end) = self.share();
        let tile_start = tile as u64 * self.steps as u64;
        let tile_end = tile_start + self.steps as u64;
        (
            (start.max(tile_start) - tile_start) as u32,
            (end.min(tile_end) - tile_start) as u32,
        )
    }
}

/// The block's linear index over the grid (x, 1, z).
#[inline(always)]
fn block_index() -> u32 {
    block_z() * grid_dim_x() + block_x()
}

/// The blocks of the grid (x, 1, z), read afresh (not hoisted out of a loop into a register
/// that would have to live through the epilogue).
#[inline(always)]
fn grid_blocks() -> u32 {
    let blocks: u32;
    // SAFETY: reads two special registers.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u32 x, z; mov.u32 x, %nctaid.x; mov.u32 z, %nctaid.z; mul.lo.u32 {blocks}, x, z; }}",
            blocks = out(reg32) blocks,
            options(nomem, nostack),
        )
    };
    blocks
}

/// The TMA + `wgmma` GEMM over this block's work items (see `Walk`), tiles of each item in
/// v9's grouped order. `E`: the element type; `B_NK`: B stored `[n, k]` (else `[k, n]`);
/// `BATCHED`: 3-D tensor maps whose third coordinate is the batch item (else 2-D maps and
/// batch 1); `TILE_ACC`: accumulators local to each tile, the first step of each tile peeled
/// so that its first `wgmma` overwrites them (the library's heavier epilogue needs the
/// registers they free), else the ladder's array that lives across tiles. `maps` holds the
/// tensor map of A, then that of B, [`TENSOR_MAP_BYTES`] apart.
/// `store(acc, z, row, col)` stores a finished tile: this thread's accumulators (layout in the
/// module documentation) belong to rows `row` and `row + 8` and columns `col + 8·j, +1` of
/// batch item `z` (`row`, `col` may lie beyond m, n).
///
/// The block: `WARPGROUPS` consumer warpgroups, `ACC` accumulators per thread (128, 64 or 32:
/// 256-, 128- or 64-column tiles), `STAGES` stages, as the geometry module of the instance
/// gives them (`gemm_geometry::v17`, `gemm_geometry::v18_n128`, `gemm_geometry::v18_m64`).
///
/// # Safety
/// Launch: that geometry module's `THREADS` threads, at least its `SHARED_BYTES` of dynamic
/// shared memory, a grid (x, 1, z) (z = 1 unless `BATCHED`); `maps` must point to the two
/// tensor maps, 64-byte aligned, encoded with that module's boxes as the entries'
/// documentation says, for this problem; `store` must be safe for every `(z, row, col)` it is
/// given.
#[inline(always)]
pub unsafe fn tma_wgmma<
    E: WgmmaOperand,
    const B_NK: bool,
    const BATCHED: bool,
    const TILE_ACC: bool,
    const CLUSTER: u32,
    const TEAMS: u32,
    const WARPGROUPS: u32,
    const ACC: usize,
    const STAGES: u32,
>(
    problem: &Problem,
    maps: *const u8,
    store: impl Fn(&[f32; ACC], u32, u32, u32),
) {
    // The block's geometry, from its numbers: each consumer warpgroup owns 64 rows of its
    // team's tile, and a thread holds half a column of its warpgroup's 64 × N slice per row
    // pair: N = 2·ACC. Teams take the tiles in turn.
    let block_tile_m = WARPGROUPS * WARPGROUP_ROWS;
    let block_tile_n = 2 * ACC as u32;
    let team_threads = WARPGROUPS * 128;
    let consumer_threads = TEAMS * team_threads;
    // More than one team: v22's block (a producer warpgroup, whose registers `setmaxnreg`
    // moves to the consumers), and no stream-K tail.
    const { assert!(TEAMS == 1 || TEAMS * WARPGROUPS == v22::TEAMS * v22::TEAM_WARPGROUPS) };
    // Every tile row is one 128-byte swizzled row: A's tile then B's, per stage.
    let a_tile_bytes = block_tile_m * ROW_BYTES;
    let stage_bytes = (block_tile_m + block_tile_n) * ROW_BYTES;
    let (m, n, k) = (problem.m, problem.n, problem.k);
    // In clusters (v23) a work item is a column of `CLUSTER` tiles, one per block of the
    // cluster, which share B's columns: `tiles` counts those.
    // Clusters: the ladder's 2-D maps and B `[k, n]` only (v23).
    const { assert!(CLUSTER == 1 || (CLUSTER == 2 && !B_NK && !BATCHED)) };
    let (tiles_m, tiles_n) = (
        m.div_ceil(block_tile_m).div_ceil(CLUSTER),
        n.div_ceil(block_tile_n),
    );
    let tiles = tiles_m * tiles_n;
    let rank = if CLUSTER > 1 { cluster_rank() } else { 0 };
    let items = if BATCHED {
        if tiles == 0 || problem.batch == 0 {
            // Nothing to compute (and no division by zero in `Walk`); every thread leaves.
            return;
        }
        // splits · batch · tiles must stay below 2³¹ (item + grid size cannot wrap): far
        // beyond any C that fits in memory (2³¹ tiles of 32 768 elements), but refused loudly.
        match problem
            .splits
            .checked_mul(problem.batch)
            .and_then(|virtual_items| virtual_items.checked_mul(tiles))
        {
            Some(items) if items <= i32::MAX as u32 => items,
            _ => trap(),
        }
    } else {
        tiles
    };
    let steps = k.div_ceil(E::TILE_K);
    // The stream-K tail (library entries only). The host asks for one only without a split,
    // with k > 0 and within the items; anything else is refused loudly.
    let tail_tiles = if BATCHED { problem.stream_k_tiles } else { 0 };
    if tail_tiles > 0
        && (CLUSTER > 1 || TEAMS > 1 || problem.splits > 1 || steps == 0 || tail_tiles > items)
    {
        trap();
    }
    let tail = Tail {
        whole: items - tail_tiles,
        tiles: tail_tiles,
        steps,
    };
    let thread = thread_x();
    let stages_address = (shared_address(shared_f32()) + 1023) & !1023;
    // `full`: the producer's one arrival plus the stage's bytes; `empty`: every thread of the
    // team that multiplies the stage, or in clusters one thread per warp of that team in each
    // block of the cluster (both blocks' producers write the stage).
    let barriers = StageBarriers::<STAGES>::at(stages_address + STAGES * stage_bytes);
    let releases = if CLUSTER > 1 {
        team_threads / 32 * CLUSTER
    } else {
        team_threads
    };
    // SAFETY: SHARED_BYTES holds the barriers after the stages; every thread calls this.
    unsafe { barriers.init(thread, releases) };
    if CLUSTER > 1 {
        // The other block's producer and consumers signal these barriers.
        // SAFETY: every thread of the cluster gets here once, and once to the one at the end.
        unsafe { cluster_sync() };
    }
    let (full, empty) = (|stage| barriers.full(stage), |stage| barriers.empty(stage));

    let tile_origin = |tile: u32| {
        let (tile_row, tile_col) = grouped_tile(tile, tiles_m, tiles_n, GROUP_M);
        (
            (tile_row * CLUSTER + rank) * block_tile_m,
            tile_col * block_tile_n,
        )
    };
    // The k-steps of a whole item of virtual item `zz`: all of them without a split, else its
    // slice's.
    let step_range = #[inline(always)]
    |zz: u32| {
        if BATCHED && problem.splits > 1 {
            let first = zz / problem.batch * problem.chunk_steps;
            (first, steps.min(first + problem.chunk_steps))
        } else {
            (0, steps)
        }
    };
    // The batch item of virtual item `zz`.
    let batch_item = #[inline(always)]
    |zz: u32| {
        if BATCHED && problem.splits > 1 {
            zz % problem.batch
        } else {
            zz
        }
    };
    // Both sides walk the same sequence of (item, step) and so of (stage, round): the stage
    // ring and the barrier phases run on across tiles and batch items. First the whole items
    // (`Walk`), then the block's stream-K tail tiles, last to first.
    let mut ring = StageRing::<STAGES>::new();
    if thread >= consumer_threads {
        if TEAMS > 1 {
            // The whole producer warpgroup, together: its registers go to the consumers.
            warpgroup_registers_lower::<{ v22::PRODUCER_REGISTERS }>();
        }
        if thread == consumer_threads {
            let (map_a, map_b) = (maps, unsafe { maps.add(TENSOR_MAP_BYTES as usize) });
            // Loads steps [first_step, end_step) of work item `item` (virtual, with a split).
            let load = #[inline(always)]
            |ring: &mut StageRing<STAGES>, item: u32, first_step: u32, end_step: u32| {
                let (first_row, first_col) = tile_origin(tile_of::<BATCHED>(item, tiles));
                // The batch coordinate of each map: item 0 for an operand shared by the batch.
                let z = batch_item(batch_of::<BATCHED>(item, tiles));
                let z_a = if problem.a_follows_batch { z } else { 0 };
                let z_b = if problem.b_follows_batch { z } else { 0 };
                for step in first_step..end_step {
                    let stage = ring.index();
                    if ring.round() > 0 {
                        // The consumers' release of this stage from the previous round.
                        unsafe { barrier_wait(empty(stage), ring.phase() ^ 1) };
                    }
                    let start = stages_address + stage * stage_bytes;
                    let b_tile = start + a_tile_bytes;
                    let k_first = step * E::TILE_K;
                    // SAFETY: the stage is free (waited above), 1 024-aligned, and its
                    // barrier expects exactly the bytes of these boxes (zero-filled parts
                    // included).
                    unsafe {
                        barrier_arrive_expect_bytes(full(stage), stage_bytes);
                        // A: box (k 64, rows block_tile_m) at (k_first, first_row).
                        if BATCHED {
                            tma_load_3d(start, map_a, k_first, first_row, z_a, full(stage));
                        } else {
                            tma_load_2d(start, map_a, k_first, first_row, full(stage));
                        }
                        if B_NK {
                            // B [n, k]: one box (k 64, n-rows block_tile_n) at (k_first, first_col).
                            if BATCHED {
                                tma_load_3d(b_tile, map_b, k_first, first_col, z_b, full(stage));
                            } else {
                                tma_load_2d(b_tile, map_b, k_first, first_col, full(stage));
                            }
                        } else {
                            // B [k, n]: block_tile_n / 64 boxes (n 64, k-rows 64) at
                            // (first_col + 64j, k_first): four, or one for 64-column tiles.
                            // In clusters, each block loads its share of the slabs into
                            // every block of the cluster.
                            let slabs = block_tile_n / B_KN_BOX[0];
                            seq!(slab in 0..4 {
                                if slab < slabs {
                                    let slab_col = first_col + slab * B_KN_BOX[0];
                                    let slab_tile = b_tile + slab * B_SLAB_BYTES;
                                    if CLUSTER > 1 {
                                        if slab / (slabs / CLUSTER) == rank {
                                            let every_block = (1u16 << CLUSTER) - 1;
                                            tma_load_2d_multicast(slab_tile, map_b, slab_col, k_first, full(stage), every_block);
                                        }
                                    } else if BATCHED {
                                        tma_load_3d(slab_tile, map_b, slab_col, k_first, z_b, full(stage));
                                    } else {
                                        tma_load_2d(slab_tile, map_b, slab_col, k_first, full(stage));
                                    }
                                }
                            });
                        }
                    }
                    ring.advance();
                }
            };
            let mut walk = Walk::<BATCHED, CLUSTER>::new(tiles, tail.whole);
            while walk.valid() {
                let (first_step, end_step) = step_range(walk.z());
                load(&mut ring, walk.item, first_step, end_step);
                walk.advance();
            }
            let (first_tile, mut tile) = tail.tiles_of_share();
            while tile > first_tile {
                tile -= 1;
                let (first_step, end_step) = tail.steps_of(tile);
                load(&mut ring, tail.whole + tile, first_step, end_step);
            }
        }
        if CLUSTER > 1 {
            // SAFETY: every thread of the cluster, once at the end (see the start).
            unsafe { cluster_sync() };
        }
        return;
    }

    if TEAMS > 1 {
        warpgroup_registers_raise::<{ v22::CONSUMER_REGISTERS }>();
    }
    let team = thread / team_threads;
    let turns = TeamTurns { team_threads };
    let warpgroup = thread / 128 % WARPGROUPS;
    let (warp, lane) = (thread % 128 / 32, thread % 32);
    // Hands a multiplied stage back to the producer, or in clusters to both blocks' producers
    // (one thread per warp, after the warp's `wgmma`s have read it).
    let release = #[inline(always)]
    |stage: u32| {
        if CLUSTER > 1 {
            if lane == 0 {
                for block in 0..CLUSTER {
                    // SAFETY: every block of the cluster has this barrier, and none exits
                    // before the cluster's last barrier.
                    unsafe { barrier_arrive_in(empty(stage), block) };
                }
            }
        } else {
            // SAFETY: an initialized barrier of this block.
            unsafe { barrier_arrive(empty(stage)) };
        }
    };
    // Multiplies steps [first_step, end_step) of a tile into `acc` (from zero), then hands the
    // last stage back: the producer may already fill it for the next tile while this one is
    // stored. (With k = 0 this arrives on a stage no one waits for, which is harmless: the
    // producer issues no copies.) With `pass`, the turn goes to team `next_team` once the
    // last `wgmma`s are issued, before they complete: that team's first waits are then on
    // stages whose previous rounds this team has already waited for.
    let multiply = #[inline(always)]
    |acc: &mut [f32; ACC],
                    ring: &mut StageRing<STAGES>,
                    first_step: u32,
                    end_step: u32,
                    pass: bool,
                    next_team: u32| {
        let mut previous_stage = ring.index();
        let mut next_step = first_step;
        if TILE_ACC && end_step > first_step {
            // The first step, peeled: its first `wgmma` overwrites the accumulators.
            let stage = ring.index();
            unsafe { barrier_wait(full(stage), ring.phase()) };
            warpgroup_fence();
            // SAFETY: the stage's bytes have landed (`full` waited above); the warpgroup
            // issues this together.
            unsafe {
                multiply_stage::<E, B_NK, true, ACC>(
                    acc,
                    stages_address + stage * stage_bytes,
                    a_tile_bytes,
                    warpgroup,
                    false,
                )
            };
            warpgroup_commit();
            warpgroup_wait::<1>();
            previous_stage = stage;
            ring.advance();
            next_step += 1;
        }
        for step in next_step..end_step {
            let stage = ring.index();
            unsafe { barrier_wait(full(stage), ring.phase()) };
            warpgroup_fence();
            // SAFETY: as above.
            unsafe {
                multiply_stage::<E, B_NK, false, ACC>(
                    acc,
                    stages_address + stage * stage_bytes,
                    a_tile_bytes,
                    warpgroup,
                    step > first_step,
                )
            };
            warpgroup_commit();
            // The previous step's group is done: hand its stage back to the producer.
            warpgroup_wait::<1>();
            if step > first_step {
                release(previous_stage);
            }
            previous_stage = stage;
            ring.advance();
        }
        if TEAMS > 1 && pass {
            // SAFETY: the whole team passes, once for that team's one wait for the next
            // item.
            unsafe { turns.pass(next_team) };
        }
        warpgroup_wait::<0>();
        pin_accumulators::<ACC, ACC>(acc);
        release(previous_stage);
    };
    // This thread's first row of a tile starting at `first_row` (and `row + 8`), and first
    // column (then every 8th, and the next).
    let thread_row = |first_row: u32| first_row + warpgroup * WARPGROUP_ROWS + 16 * warp + lane / 4;
    let thread_col = |first_col: u32| first_col + 2 * (lane % 4);
    // The ladder (`TILE_ACC` false): zeroed once; each tile's first `wgmma` ignores it
    // (`accumulate` false), and writing the accumulators between `wgmma`s with ordinary
    // instructions would make ptxas serialize them. They stay live from tile to tile, which
    // the ladder's plain store can afford.
    let mut acc = [0.0f32; ACC];
    let mut walk = Walk::<BATCHED, CLUSTER>::new(tiles, tail.whole);
    // Items of this block's walk so far: item `turn` is team `turn % TEAMS`'s.
    let mut turn = 0;
    while walk.valid() {
        let (first_step, end_step) = step_range(walk.z());
        if turn % TEAMS != team {
            // Another team's tile: count its stages, multiply nothing.
            ring.skip(end_step - first_step);
            walk.advance();
            turn += 1;
            continue;
        }
        if TEAMS > 1 && turn > 0 {
            // SAFETY: the whole team waits; the team of item `turn − 1` passes after its
            // main loop, since this item follows it.
            unsafe { turns.wait(team) };
        }
        if TILE_ACC {
            // The library (`TILE_ACC`): a fresh array per tile, overwritten by the tile's first
            // `wgmma` (output-only operands, see `wgmma_m64n256k16_overwrite`), so that the
            // accumulators die as the epilogue consumes them and leave it registers. The zeros
            // survive only where no `wgmma` runs (k = 0), outside any `wgmma` pipeline.
            acc = [0.0f32; ACC];
        }
        let (first_row, first_col) = tile_origin(walk.tile());
        let z = walk.z();
        walk.advance();
        turn += 1;
        // The next item's team multiplies while this one stores.
        let pass = TEAMS > 1 && walk.valid();
        multiply(
            &mut acc,
            &mut ring,
            first_step,
            end_step,
            pass,
            turn % TEAMS,
        );
        store(&acc, z, thread_row(first_row), thread_col(first_col));
    }
    if CLUSTER > 1 {
        // SAFETY: every thread of the cluster, once at the end (see the start).
        unsafe { cluster_sync() };
    }
    if !BATCHED {
        return;
    }
    // The stream-K tail (only blocks of at most `STREAM_K_MAX_ACC` accumulators get one):
    // each tile's piece is handed over (published) or, by the block that ends the tile,
    // completed with the earlier pieces and stored.
    let (first_tile, mut tile) = tail.tiles_of_share();
    while tile > first_tile {
        tile -= 1;
        let mut acc = [0.0f32; ACC];
        let (first_step, end_step) = tail.steps_of(tile);
        multiply(&mut acc, &mut ring, first_step, end_step, false, 0);
        let item = tail.whole + tile;
        let (first_row, first_col) = tile_origin(tile_of::<BATCHED>(item, tiles));
        let row = thread_row(first_row);
        let row_inside = row < m;
        let blocks = grid_blocks();
        let flags = problem.stream_k_workspace as *mut u32;
        let slots = (problem.stream_k_workspace + flag_bytes(blocks)) as *mut f32;
        let slot = |block: u32| slots.wrapping_add((block * block_tile_m * block_tile_n) as usize);
        if end_step < steps {
            // Unfinished: publish the piece in this block's slot; no store.
            let block = block_index();
            // SAFETY: every consumer thread gets here together; the slot and flag are this
            // block's, in the workspace the host sized for this grid, and the flag is 0
            // (cleared by the previous launch's finisher, or made so).
            unsafe {
                stream_k::publish(
                    &acc,
                    slot(block),
                    flags.wrapping_add(block as usize),
                    thread,
                    consumer_threads,
                    row_inside,
                )
            };
            continue;
        }
        // Finishing: add the pieces before this one, block by block in order.
        let total = tail.total();
        let tile_start = tile as u64 * steps as u64;
        let mut step = tile_start;
        while step < tile_start + first_step as u64 {
            let block = block_holding(step, blocks, total);
            // SAFETY: `block` (a lower index than this block's) published the piece of this
            // tile that holds `step`, in its slot, in this launch.
            unsafe {
                stream_k::wait_and_add(
                    &mut acc,
                    slot(block),
                    flags.wrapping_add(block as usize),
                    thread,
                    consumer_threads,
                    row_inside,
                )
            };
            step = block_start(block + 1, blocks, total);
        }
        store(
            &acc,
            batch_of::<BATCHED>(item, tiles),
            row,
            thread_col(first_col),
        );
    }
}

/// The four `wgmma` (k16 slices) of one 64-deep stage starting at shared address `start`,
/// for the 64 rows of `warpgroup`: `acc (+)= A_slice · B_slice`, accumulating from the first
/// slice on when `accumulate`, and with `OVERWRITE` the first slice through the output-only
/// form (then `accumulate` must be false). Descriptors: see the module documentation.
///
/// # Safety
/// The stage's tiles must have landed; all 128 threads of the warpgroup call this together,
/// between [`warpgroup_fence`] and [`warpgroup_commit`].
#[inline(always)]
pub(crate) unsafe fn multiply_stage<
    E: WgmmaOperand,
    const B_NK: bool,
    const OVERWRITE: bool,
    const ACC: usize,
>(
    acc: &mut [f32; ACC],
    start: u32,
    a_tile_bytes: u32,
    warpgroup: u32,
    accumulate: bool,
) {
    let a_tile = start + warpgroup * WARPGROUP_ROWS * ROW_BYTES;
    let b_tile = start + a_tile_bytes;
    seq!(kstep in 0..4 {
        // A, K-major: slice kstep is 32 bytes into every 128-byte row.
        let a_desc = swizzled_descriptor(a_tile + kstep * 32, UNUSED_LEADING_BYTES, ATOM_BYTES);
        let b_desc = if B_NK {
            // B [n, k], K-major: the same form as A.
            swizzled_descriptor(b_tile + kstep * 32, UNUSED_LEADING_BYTES, ATOM_BYTES)
        } else {
            // B [k, n], MN-major: slice kstep starts 16 k-rows down; slabs 8 KiB apart.
            swizzled_descriptor(b_tile + kstep * 16 * ROW_BYTES, B_SLAB_BYTES, ATOM_BYTES)
        };
        // SAFETY (all four): the caller's contract.
        if OVERWRITE && kstep == 0 {
            if B_NK {
                unsafe { mma_tile::<E, B_K_MAJOR, ACC, true>(acc, a_desc, b_desc, false) };
            } else {
                unsafe { mma_tile::<E, B_MN_MAJOR, ACC, true>(acc, a_desc, b_desc, false) };
            }
        } else if B_NK {
            unsafe { mma_tile::<E, B_K_MAJOR, ACC, false>(acc, a_desc, b_desc, accumulate || kstep > 0) };
        } else {
            unsafe { mma_tile::<E, B_MN_MAJOR, ACC, false>(acc, a_desc, b_desc, accumulate || kstep > 0) };
        }
    });
}

/// Defines one library entry, `$name(args: GemmArgs)`, over [`library_gemm`] with the block of
/// the geometry module `gemm_geometry::$geometry` (`v17` for `gemm_v18_*`, `v18_n128` for
/// `gemm_v18_n128_*`, `v18_m64` for `gemm_v18_m64_*`): its threads and blocks per SM as launch bounds, its consumer
/// warpgroups, accumulators and stages as the body's numbers. The entry's documentation
/// refers to the invoking module's.
macro_rules! library_entry {
    ($geometry:ident, $(#[$doc:meta])* $name:ident, $element:ty, $b_nk:literal) => {
        crate::launch_bounds!(
            $name,
            gemm_geometry::$geometry::THREADS,
            gemm_geometry::$geometry::MIN_BLOCKS_PER_SM
        );

        $(#[$doc])*
        ///
        /// Launch, preconditions and tensor maps: see the module documentation.
        ///
        /// # Safety
        /// The preconditions of the module documentation must hold; the launch must be the one
        /// it describes.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(args: gemm_geometry::GemmArgs) {
            // SAFETY: the caller's contract.
            unsafe {
                crate::tma_gemm::library_gemm::<
                    $element,
                    $b_nk,
                    { gemm_geometry::$geometry::CONSUMER_WARPGROUPS },
                    { gemm_geometry::$geometry::ACCUMULATORS as usize },
                    { gemm_geometry::$geometry::STAGES },
                >(&args)
            };
        }
    };
}
pub(crate) use library_entry;

/// The most accumulators per thread of a block that takes a stream-K tail: the small tiles'
/// (`gemm_v18_m64_*`, 32). In v18's block (128 accumulators, 288 threads, which ptxas and the
/// hardware count as 384 and hold to 168 registers) the tail's loop and hand-over spilled (a
/// 64-byte stack frame, 96 bytes of spill stores); giving it more registers needs a producer
/// warpgroup that hands its registers to the consumers (`setmaxnreg`).
pub const STREAM_K_MAX_ACC: usize = 32;

/// The library entries' instance of [`tma_wgmma`] (`gemm_v18_{f16,bf16}_{kn,nk}`): 3-D tensor
/// maps at `args.tensor_maps` (batch as the third dimension), the fused epilogue of
/// [`GemmArgs`] on the fp32 accumulators before narrowing, C written with `ldc` and
/// `stride_c`. See `gemm_v18_f16_kn` for the launch and the preconditions.
///
/// # Safety
/// As for the entries.
#[inline(always)]
pub unsafe fn library_gemm<
    E: WgmmaElement,
    const B_NK: bool,
    const WARPGROUPS: u32,
    const ACC: usize,
    const STAGES: u32,
>(
    args: &GemmArgs,
) {
    let problem = Problem {
        m: args.m,
        n: args.n,
        k: args.k,
        batch: args.batch,
        splits: if args.splits > 1 { args.splits } else { 1 },
        // k_chunk is a multiple of K_GRANULE, itself a multiple of TILE_K (checked below at
        // compile time): slices start on k-steps.
        chunk_steps: args.k_chunk / E::TILE_K,
        // Stream-K only for the small tiles' 32 accumulators: next to v18's 128 (288 threads,
        // held to 168 registers each, whole warpgroups counted) the tail's hand-over spilled.
        stream_k_tiles: if ACC <= STREAM_K_MAX_ACC {
            args.stream_k_tiles
        } else {
            0
        },
        stream_k_workspace: args.workspace,
        a_follows_batch: args.stride_a != 0,
        b_follows_batch: args.stride_b != 0,
    };
    let (m, n) = (args.m, args.n);
    let (ldc, stride_c) = (args.ldc as u64, args.stride_c);
    let c = args.c as *mut E;
    // Pairs of neighbouring columns go out as one store (32-bit for 16-bit types, 64-bit for
    // f32) when every pair start is aligned to the pair: base aligned, ldc and the batch stride
    // even. Otherwise element by element (any C aligned to its element).
    let pair_bytes = 2 * E::BYTES as u64;
    let pairs =
        args.c.is_multiple_of(pair_bytes) && ldc % 2 == 0 && (args.batch == 1 || stride_c % 2 == 0);
    // Four neighbouring 16-bit columns go out as one 8-byte store (two lanes swapping one
    // pair, see `store_f16_quads`) when every quad start is 8-byte aligned: base aligned, ldc
    // and the batch stride multiples of 4. A warp's store then covers whole 32-byte sectors.
    let quads = E::BYTES == 2
        && args.c.is_multiple_of(4 * E::BYTES as u64)
        && ldc % 4 == 0
        && (args.batch == 1 || stride_c % 4 == 0);
    let plain = args.is_plain_store();
    let split = args.splits > 1;
    let workspace = args.workspace as *mut f32;
    // Workspace rows are n fp32 values: column pairs go out as one 64-bit store when n is even.
    let workspace_pairs = n % 2 == 0;
    let store = #[inline(always)]
    |acc: &[f32; ACC], z: u32, row: u32, first_col: u32| {
        if split {
            // `z` is the virtual item (slice, batch item), whose partial product is the dense
            // m×n fp32 matrix at `workspace + z·m·n`. Not dereferenced unless row < m.
            let ws_row =
                workspace.wrapping_add(((z as u64 * m as u64 + row as u64) * n as u64) as usize);
            // SAFETY: `store_partial_rows` stores only to rows < m and columns < n of it.
            unsafe {
                store_partial_rows(
                    acc,
                    ws_row,
                    (row < m, row + 8 < m),
                    n,
                    first_col,
                    workspace_pairs,
                )
            };
            return;
        }
        // 64-bit offsets: z·stride_c and row·ldc may pass 2³². Only this row's address stays
        // live through the stores (row + 8's is 8·ldc further): the epilogue runs next to the
        // 128 accumulators, with few registers to spare. Not dereferenced unless row < m.
        let c_row = c.wrapping_add((z as u64 * stride_c + row as u64 * ldc) as usize);
        let rows_inside = (row < m, row + 8 < m);
        // SAFETY: `store_rows` and `store_row_quads` store only to rows < m and columns < n
        // of this item of C.
        unsafe {
            if quads {
                if plain {
                    store_row_quads::<E, true, ACC>(args, acc, c_row, rows_inside, n, first_col);
                } else {
                    store_row_quads::<E, false, ACC>(args, acc, c_row, rows_inside, n, first_col);
                }
            } else if plain {
                store_rows::<E, true, ACC>(args, acc, c_row, rows_inside, n, first_col, pairs);
            } else {
                store_rows::<E, false, ACC>(args, acc, c_row, rows_inside, n, first_col, pairs);
            }
        }
    };
    let maps = args.tensor_maps as *const u8;
    // SAFETY: the entries' contract.
    unsafe {
        tma_wgmma::<E, B_NK, true, true, 1, 1, WARPGROUPS, ACC, STAGES>(&problem, maps, store)
    };
}

/// Stores this thread's `ACC` values of a tile: `acc[4j], acc[4j + 1]` at row `row`, columns
/// `first_col + 8j, +1` (address `c_row`), and `acc[4j + 2], acc[4j + 3]` at row `row + 8`
/// (`c_row + 8·ldc`), for j = 0..ACC/4 in order, through the epilogue (a plain store when
/// `PLAIN`), pairs as one 32-bit store when `pairs` allows, rows outside (`rows_inside`
/// false) and columns ≥ n skipped.
///
/// # Safety
/// Where `rows_inside` says so, `c_row` and `c_row + 8·ldc` must point to rows of C with at
/// least `n` elements.
#[inline(always)]
unsafe fn store_rows<E: WgmmaElement, const PLAIN: bool, const ACC: usize>(
    args: &GemmArgs,
    acc: &[f32; ACC],
    c_row: *mut E,
    rows_inside: (bool, bool),
    n: u32,
    first_col: u32,
    pairs: bool,
) {
    // Blocks j < ACC / 4 (32 for 256-column tiles, 8 for 64-column ones; the test folds).
    seq!(j in 0..32 {
        if 4 * j < ACC {
            // Each pair computes its column afresh from `first_col`: left alone, LLVM hoists all
            // 32 columns above the stores, 32 registers the epilogue does not have.
            let col = opaque(first_col) + 8 * j;
            // SAFETY (both): the caller's contract.
            if rows_inside.0 {
                unsafe { store_pair::<E, PLAIN>(args, c_row, n, col, pairs, acc[4 * j], acc[4 * j + 1]) };
            }
            if rows_inside.1 {
                let c_row_8 = c_row.wrapping_add(8 * args.ldc as usize);
                unsafe { store_pair::<E, PLAIN>(args, c_row_8, n, col, pairs, acc[4 * j + 2], acc[4 * j + 3]) };
            }
        }
    });
}

/// [`store_rows`] four 16-bit columns at a time, as [`store_f16_quads`] stores the ladder's
/// tiles: each value goes through the epilogue (its own C element and bias) in the lane that
/// holds it, then neighbouring lanes swap one packed pair and each stores four elements with
/// one 8-byte store (element by element where the quad crosses n). Every lane of the warp
/// calls this together (it shuffles); rows outside (`rows_inside` false) are computed and
/// exchanged but not stored.
///
/// # Safety
/// As [`store_rows`]; besides, `c_row` must be 8-byte aligned and `ldc` a multiple of 4, and
/// `E` a 16-bit type.
#[inline(always)]
unsafe fn store_row_quads<E: WgmmaElement, const PLAIN: bool, const ACC: usize>(
    args: &GemmArgs,
    acc: &[f32; ACC],
    c_row: *mut E,
    rows_inside: (bool, bool),
    n: u32,
    first_col: u32,
) {
    let odd = quad_is_odd(first_col);
    // The epilogue of the value for (`row`, `col`); C and the bias are read only inside.
    let finish = #[inline(always)]
    |value: f32, row: *mut E, inside: bool, col: u32| {
        if PLAIN || !inside || col >= n {
            value
        } else {
            // SAFETY: the row holds n elements and col < n (the caller's contract).
            unsafe { apply::<E>(args, value, row.add(col as usize), col) }
        }
    };
    let store = #[inline(always)]
    |row: *mut E, col: u32, low: u32, high: u32| {
        if col >= n {
            return;
        }
        // SAFETY (all below): col < n, and col + i is written only when < n.
        let at = unsafe { row.add(col as usize) } as *mut u16;
        if col + 4 <= n {
            // SAFETY: four elements inside the row, 8-byte aligned (base, ldc, col % 4 = 0).
            unsafe {
                core::arch::asm!(
                    "st.global.v2.b32 [{at}], {{{low}, {high}}};",
                    at = in(reg64) at,
                    low = in(reg32) low,
                    high = in(reg32) high,
                    options(nostack),
                )
            };
        } else {
            let values = [
                low as u16,
                (low >> 16) as u16,
                high as u16,
                (high >> 16) as u16,
            ];
            seq!(i in 0..3 {
                if col + i < n {
                    unsafe { at.add(i).write(values[i]) };
                }
            });
        }
    };
    // Block pairs p < ACC / 8 (16 for 256-column tiles, 4 for 64-column ones; the test folds).
    seq!(p in 0..16 {
        if 8 * p < ACC {
            // Blocks j = 2p and 2p + 1: accumulators 8p.. and 8p + 4.. (rows row, row + 8). The
            // columns are computed afresh from `first_col` (see `store_rows`).
            let col = opaque(first_col) + 16 * p;
            let c_row_8 = c_row.wrapping_add(8 * args.ldc as usize);
            let (low, high) = quad_swap(
                odd,
                E::pack2(
                    finish(acc[8 * p], c_row, rows_inside.0, col),
                    finish(acc[8 * p + 1], c_row, rows_inside.0, col + 1),
                ),
                E::pack2(
                    finish(acc[8 * p + 4], c_row, rows_inside.0, col + 8),
                    finish(acc[8 * p + 5], c_row, rows_inside.0, col + 9),
                ),
            );
            let (low_8, high_8) = quad_swap(
                odd,
                E::pack2(
                    finish(acc[8 * p + 2], c_row_8, rows_inside.1, col),
                    finish(acc[8 * p + 3], c_row_8, rows_inside.1, col + 1),
                ),
                E::pack2(
                    finish(acc[8 * p + 6], c_row_8, rows_inside.1, col + 8),
                    finish(acc[8 * p + 7], c_row_8, rows_inside.1, col + 9),
                ),
            );
            let quad_col = quad_first_col(opaque(first_col)) + 16 * p;
            if rows_inside.0 {
                store(c_row, quad_col, low, high);
            }
            if rows_inside.1 {
                store(c_row_8, quad_col, low_8, high_8);
            }
        }
    });
}

/// Stores this thread's `ACC` raw fp32 values of a tile into a split-K workspace (rows of `n`),
/// laid out as in [`store_rows`]: `acc[4j], acc[4j + 1]` at row `row` (address `ws_row`),
/// columns `first_col + 8j, +1`, and `acc[4j + 2], acc[4j + 3]` at row `row + 8`; pairs as one
/// 64-bit store when `pairs` (n even, so every pair is 8-byte aligned), rows outside
/// (`rows_inside` false) and columns ≥ n skipped.
///
/// # Safety
/// Where `rows_inside` says so, `ws_row` and `ws_row + 8·n` must point to rows of at least `n`
/// fp32 values, 8-byte aligned when `pairs`.
#[inline(always)]
unsafe fn store_partial_rows<const ACC: usize>(
    acc: &[f32; ACC],
    ws_row: *mut f32,
    rows_inside: (bool, bool),
    n: u32,
    first_col: u32,
    pairs: bool,
) {
    let store = #[inline(always)]
    |row: *mut f32, col: u32, v0: f32, v1: f32| {
        if col >= n {
            return;
        }
        // SAFETY (all three): col < n, and col + 1 is used only when < n.
        let at = unsafe { row.add(col as usize) };
        if pairs && col + 1 < n {
            // One 64-bit store (a `[f32; 2]` write is split into two: its alignment is 4).
            unsafe {
                core::arch::asm!(
                    "st.v2.f32 [{at}], {{{v0}, {v1}}};",
                    at = in(reg64) at,
                    v0 = in(reg32) v0,
                    v1 = in(reg32) v1,
                    options(nostack),
                )
            };
        } else {
            unsafe { at.write(v0) };
            if col + 1 < n {
                unsafe { at.add(1).write(v1) };
            }
        }
    };
    seq!(j in 0..32 {
        if 4 * j < ACC {
            let col = opaque(first_col) + 8 * j;
            if rows_inside.0 {
                store(ws_row, col, acc[4 * j], acc[4 * j + 1]);
            }
            if rows_inside.1 {
                store(ws_row.wrapping_add(8 * n as usize), col, acc[4 * j + 2], acc[4 * j + 3]);
            }
        }
    });
}

/// Slices of k start on k-steps of this body.
const _: () = assert!(gemm_geometry::split_k::K_GRANULE.is_multiple_of(TILE_K));

/// `x`, through an empty `asm!` the compiler cannot see through, merge or move: values
/// derived from the result are computed where they are used.
#[inline(always)]
fn opaque(x: u32) -> u32 {
    let y: u32;
    // SAFETY: a register move.
    unsafe {
        core::arch::asm!("mov.u32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(nomem, nostack))
    };
    y
}

/// Columns `col` and `col + 1` of the row at `c_row`: the epilogue of [`apply`] (unless
/// `PLAIN`: a plain store), narrowed to `E`, one 32-bit store if both columns are < n and
/// `pairs`, else each column < n on its own.
///
/// # Safety
/// `c_row` must point to a row of C with at least `n` elements.
#[inline(always)]
unsafe fn store_pair<E: WgmmaElement, const PLAIN: bool>(
    args: &GemmArgs,
    c_row: *mut E,
    n: u32,
    col: u32,
    pairs: bool,
    v0: f32,
    v1: f32,
) {
    if col >= n {
        return;
    }
    // SAFETY (all below): col < n, and col + 1 is used only when < n.
    let at = unsafe { c_row.add(col as usize) };
    let finish = #[inline(always)]
    |acc: f32, at: *mut E, col: u32| {
        if PLAIN {
            acc
        } else {
            unsafe { apply::<E>(args, acc, at, col) }
        }
    };
    if pairs && col + 1 < n {
        let at_next = unsafe { at.add(1) };
        unsafe { E::store2(at, finish(v0, at, col), finish(v1, at_next, col + 1)) };
    } else {
        unsafe { at.write(E::from_f32(finish(v0, at, col))) };
        if col + 1 < n {
            let at_next = unsafe { at.add(1) };
            unsafe { at_next.write(E::from_f32(finish(v1, at_next, col + 1))) };
        }
    }
}
