//! Geometry of the general tensor-core kernel (`kernels-gpu/src/general_mma.rs`, entries
//! `gemm_general_mma_<f16|bf16>_<kn|nk>`): fp16/bf16 `mma.sync` with no alignment precondition
//! beyond the element's own, in small block tiles, for the products whose rows do not start on
//! 16-byte boundaries (k or n odd, say) or whose few tiles would leave v15's and v18's large
//! ones mostly idle.
//!
//! One block of [`THREADS`] threads (4 warps, 2 × 2) computes a [`BLOCK_TILE_M`]×[`BLOCK_TILE_N`]
//! tile of C, each warp a [`WARP_TILE_M`]×[`WARP_TILE_N`] quarter of it. Per step along k the
//! block loads a [`TILE_K`]-deep slice of A and of B element by element into registers (step
//! t + 1's loads are in flight while step t is multiplied), then stores them as 16-bit values
//! into one of two shared-memory stages, in the layouts `ldmatrix` reads:
//! - rows along k ([`K_ROW_BYTES`]): A, and B stored `[n, k]`;
//! - rows along n ([`N_ROW_BYTES`]): B stored `[k, n]` (read with `ldmatrix.trans`).
//!
//! Each row is padded by 16 bytes so that the eight rows one 8×8 `ldmatrix` matrix spans fall
//! into eight different groups of four banks. Which element a thread loads is
//! [`OperandOrder::slot`].
//!
//! The grid is the general kernel's: x over column tiles, y over row tiles, z over batch items
//! (or split-K items), each capped at CUDA's limit ([`grid`]).

pub use crate::general::OperandOrder;

/// Rows of C per block tile.
pub const BLOCK_TILE_M: u32 = 64;
/// Columns of C per block tile.
pub const BLOCK_TILE_N: u32 = 64;
/// Depth along k of the A and B slices staged per step: two `mma.sync` k16 steps.
pub const TILE_K: u32 = 32;
/// Rows of C per warp.
pub const WARP_TILE_M: u32 = 32;
/// Columns of C per warp.
pub const WARP_TILE_N: u32 = 32;
/// Warps across a block tile's columns.
pub const WARPS_N: u32 = BLOCK_TILE_N / WARP_TILE_N;
/// Threads per block (one-dimensional): one warp per warp tile.
pub const THREADS: u32 = 32 * (BLOCK_TILE_M / WARP_TILE_M) * WARPS_N;
/// The `min_blocks` of the entries' launch bounds in the sm_90a module: ptxas keeps them within
/// `65536 / (THREADS · MIN_BLOCKS_PER_SM)` = 128 registers per thread (124–126 used, no spills).
pub const MIN_BLOCKS_PER_SM: u32 = 4;
/// ... and in the portable (sm_80) module: 170 registers. At 128, ptxas spilled 4–12 bytes in
/// one entry or another on sm_80, sm_86 or sm_89 with every variant of the code tried.
pub const PORTABLE_MIN_BLOCKS_PER_SM: u32 = 3;
/// Elements of A (and of B) each thread loads per step.
pub const LOADS_PER_THREAD: u32 = BLOCK_TILE_M * TILE_K / THREADS;
/// Bytes of one staged row along k: `TILE_K` 16-bit elements and 16 bytes of padding.
pub const K_ROW_BYTES: u32 = TILE_K * 2 + 16;
/// Bytes of one staged row along n: `BLOCK_TILE_N` 16-bit elements and 16 bytes of padding.
pub const N_ROW_BYTES: u32 = BLOCK_TILE_N * 2 + 16;
/// Bytes of one operand's slice in a stage: the larger of the two layouts.
pub const SLICE_BYTES: u32 = max(BLOCK_TILE_M * K_ROW_BYTES, TILE_K * N_ROW_BYTES);
/// Shared-memory stages (double buffering).
pub const STAGES: u32 = 2;
/// Bytes of one stage: the A slice, then the B slice.
pub const STAGE_BYTES: u32 = 2 * SLICE_BYTES;
/// Bytes of dynamic shared memory per block, to pass at launch (20 480: under the 48 KiB that
/// needs no opt-in attribute).
pub const SHARED_BYTES: u32 = STAGES * STAGE_BYTES;

const fn max(a: u32, b: u32) -> u32 {
    if a > b { a } else { b }
}

const _: () = {
    assert!(THREADS == 128 && BLOCK_TILE_M == BLOCK_TILE_N);
    assert!(LOADS_PER_THREAD == 16 && LOADS_PER_THREAD * THREADS == BLOCK_TILE_M * TILE_K);
    // The slot maps need a warp per k row (k-contiguous) and two per n row (mn-contiguous).
    assert!(TILE_K == 32 && BLOCK_TILE_N == 64);
    // 16-byte aligned rows for ldmatrix (that eight consecutive rows start in distinct bank
    // groups is tested below).
    assert!(K_ROW_BYTES.is_multiple_of(16) && N_ROW_BYTES.is_multiple_of(16));
    assert!(SHARED_BYTES <= 48 * 1024);
};

/// The launch grid `[x, y, z]` for an `m×n` C and `batch` items (see
/// [`crate::general::grid`], whose tiles are the same size).
pub const fn grid(m: u32, n: u32, batch: u32) -> [u32; 3] {
    crate::general::grid(m, n, batch)
}

/// The position `(k, mn)` within the staged `TILE_K × 64` slice of the element that thread
/// `thread` loads in load `slot < LOADS_PER_THREAD`, for an operand lying in `order`. Over all
/// threads and slots this covers every position once (tested below).
///
/// k-contiguous: the 32 lanes of a warp read 32 consecutive k of one row (64 bytes); slots step
/// 4 rows (one per warp). mn-contiguous: the lanes read 32 consecutive columns of one k row,
/// even slots the first 32 columns and odd slots the next; slot pairs step 4 k rows.
pub const fn slot(order: OperandOrder, thread: u32, slot: u32) -> (u32, u32) {
    let (warp, lane) = (thread / 32, thread % 32);
    let warps = THREADS / 32;
    match order {
        OperandOrder::KContiguous => (lane, warp + slot * warps),
        OperandOrder::MnContiguous => (warp + slot / 2 * warps, lane + slot % 2 * 32),
    }
}

/// Byte offset within an operand's staged slice of position `(k, mn)` in `order`: row `mn` of
/// [`K_ROW_BYTES`] for k-contiguous operands, row `k` of [`N_ROW_BYTES`] for mn-contiguous ones.
pub const fn staged_offset(order: OperandOrder, k: u32, mn: u32) -> u32 {
    match order {
        OperandOrder::KContiguous => mn * K_ROW_BYTES + k * 2,
        OperandOrder::MnContiguous => k * N_ROW_BYTES + mn * 2,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn load_slots_cover_each_slice_once_and_stay_inside_it() {
        for order in [OperandOrder::KContiguous, OperandOrder::MnContiguous] {
            let mut hits = vec![0u32; (TILE_K * BLOCK_TILE_M) as usize];
            let mut staged = vec![0u32; SLICE_BYTES as usize / 2];
            for thread in 0..THREADS {
                for s in 0..LOADS_PER_THREAD {
                    let (k, mn) = slot(order, thread, s);
                    assert!(k < TILE_K && mn < BLOCK_TILE_M, "{order:?} {thread} {s}");
                    hits[(k * BLOCK_TILE_M + mn) as usize] += 1;
                    let offset = staged_offset(order, k, mn);
                    assert!(offset + 2 <= SLICE_BYTES);
                    staged[offset as usize / 2] += 1;
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{order:?}");
            assert!(
                staged.iter().all(|&h| h <= 1),
                "{order:?}: two slots share a place"
            );
        }
    }

    #[test]
    fn a_warps_slot_reads_consecutive_addresses() {
        // Lanes 0..32 of one warp and one slot: consecutive k (k-contiguous) or consecutive mn
        // (mn-contiguous), so the warp's 16-bit loads coalesce into 64 bytes.
        for order in [OperandOrder::KContiguous, OperandOrder::MnContiguous] {
            for warp in 0..THREADS / 32 {
                for s in 0..LOADS_PER_THREAD {
                    let first = slot(order, warp * 32, s);
                    for lane in 0..32 {
                        let (k, mn) = slot(order, warp * 32 + lane, s);
                        match order {
                            OperandOrder::KContiguous => {
                                assert_eq!((k, mn), (first.0 + lane, first.1))
                            }
                            OperandOrder::MnContiguous => {
                                assert_eq!((k, mn), (first.0, first.1 + lane))
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ldmatrix_rows_fall_into_distinct_banks() {
        // The eight 16-byte rows one 8×8 matrix reads start 8 consecutive staged rows apart:
        // their 4-word bank groups must all differ.
        for row_bytes in [K_ROW_BYTES, N_ROW_BYTES] {
            let mut groups: std::vec::Vec<u32> =
                (0..8).map(|r| (r * row_bytes / 4) % 32 / 4).collect();
            groups.sort();
            groups.dedup();
            assert_eq!(groups.len(), 8, "rows of {row_bytes} bytes");
        }
    }
}
