//! Split-K: one product computed as several slices of k, each by its own blocks, so that a
//! product whose C has too few tiles to fill the GPU (16×4096×4096 is 16 tiles of v18's
//! 128×256 on 132 SMs) still keeps every SM busy when k is long.
//!
//! With `args.splits = s > 1`, a kernel that supports split-K computes, for every batch item
//! `z` and slice `p < s`, the raw product of that slice of k,
//!
//! ```text
//! P[p, z, i, j] = Σ_{l ∈ slice p} A_z[i, l] · B_z[l, j],   slice p = [p·k_chunk, min((p+1)·k_chunk, k))
//! ```
//!
//! and stores it in fp32 at `workspace[((p·batch + z)·m + i)·n + j]` ([`workspace_index`]:
//! dense, rows of n): no alpha, no epilogue, C untouched. The reduction kernel
//! (`gemm_split_k_reduce_<element>`) then adds the slices in an order fixed by s — p = 0, 1,
//! …, s−1 for s ≤ [`REDUCE_LOADS_IN_FLIGHT`], else four partial sums of every fourth slice
//! ([`reduce_lanes_per_element`]) — so the result is the same bit for bit on every run (no
//! atomics), and applies the epilogue of [`crate::GemmArgs`] to C.
//!
//! Kernels whose blocks walk batch items along grid z walk *virtual* items `zz < splits·batch`
//! instead (the host launches min(splits·batch, 65 535) z blocks): item `zz` is slice
//! `p = zz / batch` of batch item `z = zz % batch`, and its partial product goes to
//! `workspace[zz·m·n ..]` as a dense m×n fp32 matrix. A slice is then an ordinary product:
//! A advanced by `first` columns, B by `first` rows (`[k, n]`) or columns (`[n, k]`), k
//! replaced by the slice's length, C replaced by that workspace matrix (ldc = n) with a plain
//! store. `first` is a multiple of [`K_GRANULE`], so every alignment of A and B is kept.
//!
//! The host picks the slices with [`slices`], so that every slice is a whole number of
//! [`K_GRANULE`]s (a multiple of every kernel's k-tile) and none is empty.
//!
//! [`is_split`], [`items`], [`item_input`] and [`item_output`] are that walk's index
//! arithmetic, written once for the kernels (through `kernels-gpu`'s `split_k` module) and
//! tested here on the CPU.

use crate::GemmArgs;

/// Every slice but the last is a multiple of this many elements of k: a multiple of the k-tile
/// of every kernel that supports split-K (16 for v13/v14, 64 for v18), so no k-tile straddles
/// two slices.
pub const K_GRANULE: u32 = 64;

/// The most slices the host asks for. The dispatch's cost model weighs the workspace traffic
/// (4 bytes per element of C per slice) against the gain, so only products with few elements
/// of C and a long k come near this: 17×17×65537 asks for 256 and gets 205 slices of 320 (one
/// 32-row tile over 61 slices of 1088 under the cap before, 64, kept each block's 68 steps of
/// k in a row).
pub const MAX_SPLITS: u32 = 256;

/// Slices the reduction kernel loads before it adds them (in order): its loads of one element's
/// slices are then 16 in flight at once, not one after the other (with 256 slices and a few
/// hundred elements of C, one at a time took a memory latency per slice).
pub const REDUCE_LOADS_IN_FLIGHT: u32 = 16;

/// Threads per block of the reduction kernel.
pub const REDUCE_THREADS: u32 = 256;

/// The `min_blocks` of the reduction entries' launch bounds: ptxas keeps them within 85
/// registers (80 used, no spills on sm_80–sm_120), so that three blocks share an SM where the
/// reduction streams a large workspace. With no bound its 16 loads in flight took 141
/// registers on sm_90a, one block per SM; at 4 blocks (64 registers) it spilled.
pub const REDUCE_MIN_BLOCKS_PER_SM: u32 = 3;

/// Lanes that share one element of C in the reduction when it has more than
/// [`REDUCE_LOADS_IN_FLIGHT`] slices: each adds every fourth slice, and two shuffles add the
/// four partial sums.
pub const REDUCE_QUAD_LANES: u32 = 4;

/// Threads (lanes) the reduction gives each element of C for `splits` slices: 1 while one
/// round of [`REDUCE_LOADS_IN_FLIGHT`] loads covers them (the sum then runs in slice order),
/// else [`REDUCE_QUAD_LANES`].
pub const fn reduce_lanes_per_element(splits: u32) -> u32 {
    if splits > REDUCE_LOADS_IN_FLIGHT {
        REDUCE_QUAD_LANES
    } else {
        1
    }
}

/// The reduction's grid (x) for `elements` elements of C (over the batch) in `splits` slices
/// on `sm_count` SMs: a block per [`REDUCE_THREADS`] lanes of work, at most 8 per SM (each
/// thread walks the rest in steps of the grid), at least 1.
pub const fn reduce_blocks(elements: u64, splits: u32, sm_count: u32) -> u32 {
    let lanes = elements.saturating_mul(reduce_lanes_per_element(splits) as u64);
    let blocks = lanes.div_ceil(REDUCE_THREADS as u64);
    let most = 8 * if sm_count == 0 { 1 } else { sm_count } as u64;
    let blocks = if blocks < most { blocks } else { most };
    if blocks == 0 { 1 } else { blocks as u32 }
}

/// `(splits, k_chunk)` for cutting `k` into about `wanted` slices: `k_chunk` is a multiple of
/// [`K_GRANULE`] and every slice is non-empty (`splits` may come out smaller than `wanted`).
/// `(1, 0)` means no split (wanted ≤ 1, or k is at most one granule).
pub const fn slices(k: u32, wanted: u32) -> (u32, u32) {
    let granules = k.div_ceil(K_GRANULE);
    let wanted = if wanted > MAX_SPLITS {
        MAX_SPLITS
    } else {
        wanted
    };
    if wanted <= 1 || granules <= 1 {
        return (1, 0);
    }
    let chunk = granules.div_ceil(wanted) * K_GRANULE;
    let splits = k.div_ceil(chunk);
    if splits <= 1 { (1, 0) } else { (splits, chunk) }
}

/// The range `[first, end)` of k that slice `split` covers.
pub const fn slice(k: u32, k_chunk: u32, split: u32) -> (u32, u32) {
    let first = split * k_chunk;
    let end = first + k_chunk;
    (first, if end < k { end } else { k })
}

/// The index in the workspace of slice `split`, batch item `z`, row `i`, column `j`.
pub const fn workspace_index(
    split: u32,
    batch: u32,
    z: u32,
    m: u32,
    n: u32,
    i: u32,
    j: u32,
) -> u64 {
    ((split as u64 * batch as u64 + z as u64) * m as u64 + i as u64) * n as u64 + j as u64
}

/// The workspace's length in fp32 elements, or `None` if it overflows `u64`.
pub const fn workspace_elements(splits: u32, batch: u32, m: u32, n: u32) -> Option<u64> {
    let items = splits as u64 * batch as u64;
    match items.checked_mul(m as u64) {
        Some(rows) => rows.checked_mul(n as u64),
        None => None,
    }
}

/// Whether `args` ask for a split (more than one slice of k). The kernels test it once and
/// run a walk compiled for each answer, passing it as the `split` of [`item_input`] and
/// [`item_output`], so that without a split the walk is the plain batch walk, with no selects
/// between the two cases held through its main loop.
#[inline(always)]
pub const fn is_split(args: &GemmArgs) -> bool {
    args.splits > 1
}

/// The number of virtual items a kernel walks along grid z: `splits·batch` with a split,
/// `batch` without. The host keeps `splits·batch` below 2³² (it is a `u32`, like `batch`).
#[inline(always)]
pub const fn items(args: &GemmArgs) -> u32 {
    if is_split(args) {
        args.splits * args.batch
    } else {
        args.batch
    }
}

/// What virtual item `zz` reads: where its A and B start, in elements from `args.a` and
/// `args.b`, and its length of k.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemInput {
    /// Elements from `args.a` to the item's `A[0, 0]`: its batch item's A, `first` columns on.
    pub a_offset: u64,
    /// Elements from `args.b` to the item's `B[0, 0]`: its batch item's B, `first` rows on
    /// (`[k, n]`) or `first` columns on (`[n, k]`).
    pub b_offset: u64,
    /// The item's length of k: the slice's, or all of k without a split.
    pub k: u32,
}

/// What virtual item `zz < items(args)` reads; `b_nk`: B is stored `[n, k]`; `split` must be
/// [`is_split`]`(args)`. Without a split, item `zz` is batch item `zz`, whole.
#[inline(always)]
pub const fn item_input(args: &GemmArgs, zz: u32, b_nk: bool, split: bool) -> ItemInput {
    if !split {
        return ItemInput {
            a_offset: zz as u64 * args.stride_a,
            b_offset: zz as u64 * args.stride_b,
            k: args.k,
        };
    }
    // zz = slice·batch + z. Found by subtraction, at most `splits − 1 < MAX_SPLITS` steps,
    // rather than by a division: on the GPU that is a long sequence through the floating-point
    // unit whose result ptxas cannot keep in the block-uniform registers, so every address
    // derived from it would take per-thread registers in the kernels' main loops. A single
    // item (the common case) needs no steps: zz is the slice.
    let (mut slice_index, mut z) = if args.batch == 1 { (zz, 0) } else { (0, zz) };
    while z >= args.batch {
        z -= args.batch;
        slice_index += 1;
    }
    let (first, end) = slice(args.k, args.k_chunk, slice_index);
    // A row of a [k, n] B is `ldb` elements; along k in an [n, k] B, or in A, one element.
    let b_first = if b_nk {
        first as u64
    } else {
        first as u64 * args.ldb as u64
    };
    ItemInput {
        a_offset: z as u64 * args.stride_a + first as u64,
        b_offset: z as u64 * args.stride_b + b_first,
        k: end - first,
    }
}

/// Where virtual item `zz` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemOutput {
    /// The item's raw fp32 product goes to the workspace (a split), with no epilogue; else its
    /// finished result goes to C through the epilogue.
    pub partial: bool,
    /// Elements from the start of the workspace (`partial`) or of C to the item's element
    /// (0, 0).
    pub offset: u64,
    /// Elements from one row to the next: `n` in the workspace, `ldc` in C.
    pub ld: u32,
}

/// Where virtual item `zz < items(args)` writes (`split` must be [`is_split`]`(args)`): with a
/// split, the dense `m × n` fp32 matrix at `workspace[zz·m·n ..]` (`zz·m·n` is
/// [`workspace_index`] of slice `zz / batch`, batch item `zz % batch`, element (0, 0)); else
/// batch item `zz` of C.
#[inline(always)]
pub const fn item_output(args: &GemmArgs, zz: u32, split: bool) -> ItemOutput {
    if split {
        ItemOutput {
            partial: true,
            offset: zz as u64 * args.m as u64 * args.n as u64,
            ld: args.n,
        }
    } else {
        ItemOutput {
            partial: false,
            offset: zz as u64 * args.stride_c,
            ld: args.ldc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_grid_gives_every_element_its_lanes() {
        // One lane per element up to one round of loads in flight, four past it.
        assert_eq!(reduce_lanes_per_element(2), 1);
        assert_eq!(reduce_lanes_per_element(REDUCE_LOADS_IN_FLIGHT), 1);
        assert_eq!(
            reduce_lanes_per_element(REDUCE_LOADS_IN_FLIGHT + 1),
            REDUCE_QUAD_LANES
        );
        // 17×17 elements in 205 slices: 1156 lanes, 5 blocks; a large C is capped at 8 per SM,
        // and an empty one still gets a block.
        assert_eq!(reduce_blocks(289, 205, 132), 5);
        assert_eq!(reduce_blocks(289, 3, 132), 2);
        assert_eq!(reduce_blocks(1 << 30, 3, 132), 8 * 132);
        assert_eq!(reduce_blocks(0, 3, 132), 1);
        assert_eq!(reduce_blocks(u64::MAX, 300, 0), 8);
        // A warp's lanes cover 32 / REDUCE_QUAD_LANES = 8 elements: 32 bytes of a slice.
        assert_eq!(32 / REDUCE_QUAD_LANES * 4, 32);
    }

    #[test]
    fn slices_cover_k_exactly_and_none_is_empty() {
        for k in [1, 63, 64, 65, 127, 128, 129, 1000, 1025, 4096, 65537] {
            for wanted in 1..=80 {
                let (splits, chunk) = slices(k, wanted);
                assert!(splits >= 1 && splits <= wanted.clamp(1, MAX_SPLITS));
                if splits == 1 {
                    assert_eq!(chunk, 0);
                    continue;
                }
                assert_eq!(chunk % K_GRANULE, 0);
                let mut next = 0;
                for p in 0..splits {
                    let (first, end) = slice(k, chunk, p);
                    assert_eq!(first, next, "k {k} wanted {wanted}");
                    assert!(end > first, "empty slice: k {k} wanted {wanted} p {p}");
                    next = end;
                }
                assert_eq!(next, k);
            }
        }
    }

    /// Runs the grid-z walk as a kernel would, on the CPU: every virtual item multiplies what
    /// [`item_input`] says and stores where [`item_output`] says; then the slices are added in
    /// the reduction's order. The sum must be the plain product, for both B layouts.
    #[test]
    fn virtual_items_cover_every_slice_of_every_batch_item() {
        extern crate std;
        use std::vec;
        let (m, n, k, batch) = (3u32, 5u32, 300u32, 3u32);
        let (lda, ldb_kn, ldb_nk, ldc) = (k + 3, n + 2, k + 1, n + 4);
        // Integer-valued entries: every sum is exact in f64, whatever the order.
        let value = |seed: u64, at: u64| ((seed * 31 + at * 17) % 13) as f64 - 6.0;
        for b_nk in [false, true] {
            let ldb = if b_nk { ldb_nk } else { ldb_kn };
            let (stride_a, stride_b) = ((m * lda) as u64 + 7, (k.max(n) * ldb) as u64 + 5);
            let a: std::vec::Vec<f64> = (0..stride_a * batch as u64).map(|i| value(1, i)).collect();
            let b: std::vec::Vec<f64> = (0..stride_b * batch as u64).map(|i| value(2, i)).collect();
            let (splits, k_chunk) = slices(k, 3);
            assert!(splits == 3 && k % k_chunk != 0, "a ragged last slice");
            let mut args = GemmArgs::contiguous(0, 0, 0, m, n, k);
            (args.batch, args.lda, args.ldb, args.ldc) = (batch, lda, ldb, ldc);
            (args.stride_a, args.stride_b, args.stride_c) = (stride_a, stride_b, (m * ldc) as u64);
            (args.splits, args.k_chunk) = (splits, k_chunk);
            let mut workspace =
                vec![f64::NAN; workspace_elements(splits, batch, m, n).unwrap() as usize];
            assert_eq!(items(&args), splits * batch);
            let mut slices_seen = 0;
            for zz in 0..items(&args) {
                let input = item_input(&args, zz, b_nk, is_split(&args));
                let output = item_output(&args, zz, is_split(&args));
                assert!(output.partial && output.ld == n);
                slices_seen += input.k;
                for i in 0..m as u64 {
                    for j in 0..n as u64 {
                        let mut acc = 0.0;
                        for l in 0..input.k as u64 {
                            let b_at = if b_nk {
                                j * ldb as u64 + l
                            } else {
                                l * ldb as u64 + j
                            };
                            acc += a[(input.a_offset + i * lda as u64 + l) as usize]
                                * b[(input.b_offset + b_at) as usize];
                        }
                        workspace[(output.offset + i * output.ld as u64 + j) as usize] = acc;
                    }
                }
            }
            assert_eq!(slices_seen, k * batch);
            for z in 0..batch {
                for i in 0..m {
                    for j in 0..n {
                        let reduced: f64 = (0..splits)
                            .map(|p| workspace[workspace_index(p, batch, z, m, n, i, j) as usize])
                            .sum();
                        let direct: f64 = (0..k as u64)
                            .map(|l| {
                                let b_at = if b_nk {
                                    j as u64 * ldb as u64 + l
                                } else {
                                    l * ldb as u64 + j as u64
                                };
                                a[(z as u64 * stride_a + i as u64 * lda as u64 + l) as usize]
                                    * b[(z as u64 * stride_b + b_at) as usize]
                            })
                            .sum();
                        assert_eq!(reduced, direct, "b_nk {b_nk} z {z} i {i} j {j}");
                    }
                }
            }
            // Without a split, item z is batch item z, whole, written to C.
            args.splits = 1;
            assert!(!is_split(&args) && items(&args) == batch);
            let input = item_input(&args, 2, b_nk, false);
            assert_eq!(
                input,
                ItemInput {
                    a_offset: 2 * stride_a,
                    b_offset: 2 * stride_b,
                    k
                }
            );
            let output = item_output(&args, 2, false);
            assert_eq!(
                output,
                ItemOutput {
                    partial: false,
                    offset: 2 * args.stride_c,
                    ld: ldc
                }
            );
        }
    }

    #[test]
    fn workspace_is_dense_slices_then_items() {
        let (batch, m, n) = (3, 5, 7);
        assert_eq!(workspace_index(0, batch, 0, m, n, 0, 1), 1);
        assert_eq!(workspace_index(0, batch, 0, m, n, 1, 0), 7);
        assert_eq!(workspace_index(0, batch, 1, m, n, 0, 0), 35);
        assert_eq!(workspace_index(1, batch, 0, m, n, 0, 0), 105);
        assert_eq!(workspace_elements(2, batch, m, n), Some(210));
        assert_eq!(workspace_elements(u32::MAX, u32::MAX, u32::MAX, 2), None);
    }
}
