//! Geometry of the general GEMM kernel (`kernels-gpu/src/general.rs`, entries
//! `gemm_general_<dtype>_<blayout>`): the library's fallback, correct for every input the API
//! accepts whatever its alignment, which dispatch uses when a fast kernel's preconditions are
//! not met.
//!
//! One block of [`THREADS`] threads computes a [`BLOCK_TILE_M`]×[`BLOCK_TILE_N`] tile of C; each
//! thread owns a [`THREAD_TILE_M`]×[`THREAD_TILE_N`] patch of it (see [`thread_tile_origin`]).
//! Per step along k, the block stages a [`TILE_K`]-deep slice of A and one of B in shared
//! memory, both stored k-major (`[k][m]` and `[k][n]`, rows padded to [`TILE_ROW_FLOATS`]) and
//! widened to f32, in two stages ([`STAGES`]): the global loads of step t + 1 are in flight
//! while step t is multiplied. Which element each thread loads is [`OperandOrder::slot`].
//!
//! The device code and the host (its launch, and the CPU model of the tiling in this file's
//! tests) read these constants and functions, so they cannot disagree.

/// Rows of C per block tile.
pub const BLOCK_TILE_M: u32 = 64;
/// Columns of C per block tile.
pub const BLOCK_TILE_N: u32 = 64;
/// Depth along k of the A and B slices staged per step.
pub const TILE_K: u32 = 16;
/// Rows of C per thread.
pub const THREAD_TILE_M: u32 = 4;
/// Columns of C per thread (consecutive, so a thread reads its B fragment with one 128-bit
/// shared-memory load).
pub const THREAD_TILE_N: u32 = 4;
/// Threads across a block tile's columns.
pub const THREADS_PER_TILE_ROW: u32 = BLOCK_TILE_N / THREAD_TILE_N;
/// Threads per block (one-dimensional): one per thread tile.
pub const THREADS: u32 = (BLOCK_TILE_M / THREAD_TILE_M) * THREADS_PER_TILE_ROW;
/// The `min_blocks` of the entries' launch bounds: ptxas keeps them within
/// `65536 / (THREADS · MIN_BLOCKS_PER_SM)` registers per thread, 128. With 3 blocks (80
/// registers) the f32 `[k, n]` entry spilled 4 bytes on sm_86 and sm_89; with 2 no entry
/// spills on any architecture the kernels are built for.
pub const MIN_BLOCKS_PER_SM: u32 = 2;
/// Floats from one k row of a staged slice to the next: the wider of the two block-tile sides
/// plus 4. The padding spreads the stores of a k-contiguous slice (consecutive threads write
/// consecutive k, so one row apart) over 16 banks instead of 1; a multiple of 4 keeps every
/// fragment 16-byte aligned for 128-bit reads.
pub const TILE_ROW_FLOATS: u32 = max(BLOCK_TILE_M, BLOCK_TILE_N) + 4;
/// Shared-memory stages (double buffering).
pub const STAGES: u32 = 2;
/// Floats of shared memory per stage: the A slice, then the B slice.
pub const STAGE_FLOATS: u32 = 2 * TILE_K * TILE_ROW_FLOATS;
/// Offset in floats of the B slice within a stage.
pub const B_SLICE_OFFSET_FLOATS: u32 = TILE_K * TILE_ROW_FLOATS;
/// Bytes of dynamic shared memory per block, to pass at launch (17 408: under the 48 KiB that
/// needs no opt-in attribute).
pub const SHARED_BYTES: u32 = STAGES * STAGE_FLOATS * 4;
/// Floats from one row of the block's C tile to the next when it is staged in shared memory
/// for the stores (the kernel's `store_block_tile`): 64 plus 4, so that the 16 threads writing
/// a row's 4-float pieces and those of the row 4 below fall on different banks, and every
/// piece stays 16-byte aligned.
pub const C_TILE_ROW_FLOATS: u32 = BLOCK_TILE_N + 4;
/// Floats of the staged C tile: it reuses the stages' shared memory, which it must fit.
pub const C_TILE_FLOATS: u32 = BLOCK_TILE_M * C_TILE_ROW_FLOATS;
const _: () = assert!(C_TILE_FLOATS * 4 <= SHARED_BYTES);

/// Elements of A (and of B) each thread loads per step.
pub const LOADS_PER_THREAD: u32 = BLOCK_TILE_M * TILE_K / THREADS;

/// CUDA's largest grid x.
pub const MAX_GRID_X: u32 = (1 << 31) - 1;
/// CUDA's largest grid y and z.
pub const MAX_GRID_YZ: u32 = 65_535;

const fn max(a: u32, b: u32) -> u32 {
    if a > b { a } else { b }
}

const _: () = {
    assert!(
        BLOCK_TILE_M.is_multiple_of(THREAD_TILE_M) && BLOCK_TILE_N.is_multiple_of(THREAD_TILE_N)
    );
    assert!(THREADS == 256);
    // Both operands' slices hold the same number of elements, an exact multiple of THREADS.
    assert!(BLOCK_TILE_M == BLOCK_TILE_N);
    assert!(BLOCK_TILE_M * TILE_K == LOADS_PER_THREAD * THREADS);
    // The slot maps below need whole rows of threads along k and along m or n.
    assert!(
        THREADS.is_multiple_of(TILE_K)
            && THREADS.is_multiple_of(BLOCK_TILE_M)
            && THREADS.is_multiple_of(BLOCK_TILE_N)
    );
    assert!(TILE_ROW_FLOATS.is_multiple_of(4) && THREAD_TILE_M == 4 && THREAD_TILE_N == 4);
    assert!(SHARED_BYTES <= 48 * 1024);
};

/// The launch grid `[x, y, z]` for an `m×n` C and `batch` items: x over column tiles, y over row
/// tiles, z over batch items, each capped at CUDA's limit. A block walks its tiles and batch
/// items in steps of the grid's size along each axis, so the capped grid still covers every
/// (row tile, column tile, item); no tile is visited twice. A zero count gives a zero axis:
/// the host must not launch then (there is nothing to do).
pub const fn grid(m: u32, n: u32, batch: u32) -> [u32; 3] {
    [
        min(n.div_ceil(BLOCK_TILE_N), MAX_GRID_X),
        min(m.div_ceil(BLOCK_TILE_M), MAX_GRID_YZ),
        min(batch, MAX_GRID_YZ),
    ]
}

const fn min(a: u32, b: u32) -> u32 {
    if a < b { a } else { b }
}

/// The first row and column, within the block tile, of the thread tile of thread `thread`:
/// threads run across the columns first, so the 32 threads of a warp cover two thread rows
/// of the whole tile width.
pub const fn thread_tile_origin(thread: u32) -> (u32, u32) {
    (
        thread / THREADS_PER_TILE_ROW * THREAD_TILE_M,
        thread % THREADS_PER_TILE_ROW * THREAD_TILE_N,
    )
}

/// How an operand lies in global memory, which decides how the threads share out its loads:
/// consecutive threads read consecutive addresses either way, so the scalar loads of a warp
/// coalesce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandOrder {
    /// Consecutive elements of a row run along k: A, and B stored `[n, k]`.
    KContiguous,
    /// Consecutive elements run along m or n: B stored `[k, n]`.
    MnContiguous,
}

impl OperandOrder {
    /// The position `(k, mn)` within the staged `TILE_K × extent` slice (`extent` the block tile
    /// side along m or n, [`BLOCK_TILE_M`] or [`BLOCK_TILE_N`]) of the element that thread
    /// `thread` loads in its load `slot < LOADS_PER_THREAD`. Over all threads and slots this
    /// covers every position of the slice exactly once (tested below).
    ///
    /// k-contiguous: 16 threads read 16 consecutive k of one row; slots step 16 rows.
    /// mn-contiguous: 64 threads read 64 consecutive columns of one k row; slots step 4 k rows.
    pub const fn slot(self, extent: u32, thread: u32, slot: u32) -> (u32, u32) {
        match self {
            OperandOrder::KContiguous => {
                (thread % TILE_K, thread / TILE_K + slot * (THREADS / TILE_K))
            }
            OperandOrder::MnContiguous => {
                (thread / extent + slot * (THREADS / extent), thread % extent)
            }
        }
    }

    /// How far `(k, mn)` moves from one load slot to the next: [`OperandOrder::slot`] is
    /// `slot(extent, thread, 0) + slot · slot_step(extent)` (tested below), so a thread's load
    /// addresses are one base plus multiples of one stride.
    pub const fn slot_step(self, extent: u32) -> (u32, u32) {
        match self {
            OperandOrder::KContiguous => (0, THREADS / TILE_K),
            OperandOrder::MnContiguous => (THREADS / extent, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    //! A CPU model of the kernel's tiling: the same grid, the same block walk, the same load
    //! slots, staging layout and thread tiles as the device code, run on small matrices with
    //! strides, batches and ragged edges against a naive product. It checks the index maps, not
    //! the device arithmetic.
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn grid_covers_every_tile_once() {
        for &m in &[
            1u32,
            2,
            63,
            64,
            65,
            127,
            128,
            129,
            1000,
            4_194_240,
            4_194_241,
            u32::MAX,
        ] {
            for &n in &[1u32, 63, 64, 65, 4096, u32::MAX] {
                let [x, y, z] = grid(m, n, 70_000);
                assert!(x >= 1 && y >= 1 && z >= 1);
                assert!(x <= MAX_GRID_X && y <= MAX_GRID_YZ && z <= MAX_GRID_YZ);
                let (tiles_m, tiles_n) = (m.div_ceil(BLOCK_TILE_M), n.div_ceil(BLOCK_TILE_N));
                // Every tile index t is reached by exactly one block, b = t mod grid, as the
                // t-th step of its walk; the tiles reach past the last row and column.
                assert!(u64::from(tiles_m) * u64::from(BLOCK_TILE_M) >= u64::from(m));
                assert!(u64::from(tiles_n) * u64::from(BLOCK_TILE_N) >= u64::from(n));
                assert!((y as u64) <= tiles_m as u64 && (x as u64) <= tiles_n as u64);
                // The last tile's first row and column still fit in u32 (no wrap on device).
                assert!(
                    u64::from(tiles_m - 1) * u64::from(BLOCK_TILE_M) + u64::from(BLOCK_TILE_M - 1)
                        <= u64::from(u32::MAX)
                );
            }
        }
        assert_eq!(grid(0, 5, 1), [1, 0, 1]);
        assert_eq!(grid(100, 200, 3), [4, 2, 3]);
    }

    #[test]
    fn load_slots_cover_each_slice_once() {
        for order in [OperandOrder::KContiguous, OperandOrder::MnContiguous] {
            let extent = BLOCK_TILE_M;
            let mut hits = vec![0u32; (TILE_K * extent) as usize];
            for thread in 0..THREADS {
                for slot in 0..LOADS_PER_THREAD {
                    let (k, mn) = order.slot(extent, thread, slot);
                    assert!(k < TILE_K && mn < extent, "{order:?} {thread} {slot}");
                    hits[(k * extent + mn) as usize] += 1;
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{order:?}");
        }
    }

    #[test]
    fn load_slots_are_one_base_plus_a_stride() {
        for order in [OperandOrder::KContiguous, OperandOrder::MnContiguous] {
            let (dk, dmn) = order.slot_step(BLOCK_TILE_M);
            for thread in 0..THREADS {
                let (k0, mn0) = order.slot(BLOCK_TILE_M, thread, 0);
                for slot in 0..LOADS_PER_THREAD {
                    assert_eq!(
                        order.slot(BLOCK_TILE_M, thread, slot),
                        (k0 + slot * dk, mn0 + slot * dmn)
                    );
                }
            }
        }
    }

    #[test]
    fn thread_tiles_cover_the_block_tile_once() {
        let mut hits = vec![0u32; (BLOCK_TILE_M * BLOCK_TILE_N) as usize];
        for thread in 0..THREADS {
            let (row, col) = thread_tile_origin(thread);
            for i in 0..THREAD_TILE_M {
                for j in 0..THREAD_TILE_N {
                    hits[((row + i) * BLOCK_TILE_N + col + j) as usize] += 1;
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1));
    }

    /// One problem for the model: shapes, leading dimensions, batch strides (all in elements).
    struct Problem {
        m: u32,
        n: u32,
        k: u32,
        batch: u32,
        lda: u32,
        ldb: u32,
        ldc: u32,
        stride_a: u64,
        stride_b: u64,
        stride_c: u64,
        b_order: OperandOrder,
    }

    /// A small deterministic generator (no dependencies): integers in -4..=4 so that every
    /// product and sum is exact in f32 and the model's result must equal the reference.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((self.0 >> 33) % 9) as f32 - 4.0
        }
    }

    /// Runs the model of the kernel over `problem` with a `grid` (possibly smaller than the
    /// full one, to exercise the block walks), reading A, B through bounds-checked slices and
    /// marking every C element written. Returns C.
    fn model(problem: &Problem, a: &[f32], b: &[f32], c_in: &[f32], grid: [u32; 3]) -> Vec<f32> {
        let p = problem;
        let mut c = c_in.to_vec();
        let mut written = vec![0u32; c.len()];
        let (tiles_m, tiles_n) = (p.m.div_ceil(BLOCK_TILE_M), p.n.div_ceil(BLOCK_TILE_N));
        for block_z in 0..grid[2] {
            for block_y in 0..grid[1] {
                for block_x in 0..grid[0] {
                    let mut z = block_z;
                    while z < p.batch {
                        let mut tile_row = block_y;
                        while tile_row < tiles_m {
                            let mut tile_col = block_x;
                            while tile_col < tiles_n {
                                block_tile(p, a, b, &mut c, &mut written, z, tile_row, tile_col);
                                tile_col += grid[0];
                            }
                            tile_row += grid[1];
                        }
                        z += grid[2];
                    }
                }
            }
        }
        // Every element of each m×n C_z written exactly once, nothing else touched.
        for z in 0..p.batch as u64 {
            for i in 0..p.m as u64 {
                for j in 0..p.n as u64 {
                    let at = (z * p.stride_c + i * p.ldc as u64 + j) as usize;
                    assert_eq!(written[at], 1, "C[{z}][{i}][{j}]");
                    written[at] = 0;
                }
            }
        }
        assert!(written.iter().all(|&w| w == 0), "wrote outside C");
        c
    }

    /// Loads one operand's slice into the model's shared memory, as each thread's slots do.
    #[allow(clippy::too_many_arguments)]
    fn stage_slice(
        shared: &mut [f32],
        order: OperandOrder,
        matrix: &[f32],
        base: u64,
        ld: u32,
        mn_extent: u32,
        first_mn: u32,
        tile_k: u32,
        k: u32,
    ) {
        // The device's address arithmetic (kernels-gpu/src/general.rs, `SliceLoader`), in
        // elements rather than bytes: slot 0's element at the tile's first step, moved on by
        // one step per TILE_K, plus the slot index times one stride.
        let ld = u64::from(ld);
        let (along_k, along_mn) = match order {
            OperandOrder::KContiguous => (1, ld),
            OperandOrder::MnContiguous => (ld, 1),
        };
        let (slot_dk, slot_dmn) = order.slot_step(BLOCK_TILE_M);
        let slot_stride = u64::from(slot_dk) * along_k + u64::from(slot_dmn) * along_mn;
        let step_stride = u64::from(TILE_K) * along_k;
        let (k_left, mn_left) = (k - tile_k, mn_extent - first_mn);
        for thread in 0..THREADS {
            let (k0, mn0) = order.slot(BLOCK_TILE_M, thread, 0);
            let slot0 = base
                + (u64::from(first_mn) + u64::from(mn0)) * along_mn
                + u64::from(k0) * along_k
                + u64::from(tile_k / TILE_K) * step_stride;
            for slot in 0..LOADS_PER_THREAD {
                let (k_local, mn_local) = (k0 + slot * slot_dk, mn0 + slot * slot_dmn);
                let value = if k_local < k_left && mn_local < mn_left {
                    // Indexing panics if the element lies outside the matrices' storage.
                    let at = slot0 + u64::from(slot) * slot_stride;
                    let (kk, mn) = (u64::from(tile_k + k_local), u64::from(first_mn + mn_local));
                    assert_eq!(at, base + kk * along_k + mn * along_mn);
                    matrix[at as usize]
                } else {
                    0.0
                };
                shared[(k_local * TILE_ROW_FLOATS + mn_local) as usize] = value;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn block_tile(
        p: &Problem,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        written: &mut [u32],
        z: u32,
        tile_row: u32,
        tile_col: u32,
    ) {
        let (first_row, first_col) = (tile_row * BLOCK_TILE_M, tile_col * BLOCK_TILE_N);
        let mut acc = vec![[[0.0f32; 4]; 4]; THREADS as usize];
        let mut a_slice = vec![f32::NAN; (TILE_K * TILE_ROW_FLOATS) as usize];
        let mut b_slice = vec![f32::NAN; (TILE_K * TILE_ROW_FLOATS) as usize];
        let mut tile_k = 0;
        while tile_k < p.k {
            let (a_base, b_base) = (z as u64 * p.stride_a, z as u64 * p.stride_b);
            let ka = OperandOrder::KContiguous;
            stage_slice(
                &mut a_slice,
                ka,
                a,
                a_base,
                p.lda,
                p.m,
                first_row,
                tile_k,
                p.k,
            );
            stage_slice(
                &mut b_slice,
                p.b_order,
                b,
                b_base,
                p.ldb,
                p.n,
                first_col,
                tile_k,
                p.k,
            );
            for thread in 0..THREADS {
                let (row, col) = thread_tile_origin(thread);
                for kk in 0..TILE_K {
                    for i in 0..4 {
                        for j in 0..4 {
                            let x = a_slice[(kk * TILE_ROW_FLOATS + row + i) as usize];
                            let y = b_slice[(kk * TILE_ROW_FLOATS + col + j) as usize];
                            acc[thread as usize][i as usize][j as usize] += x * y;
                        }
                    }
                }
            }
            tile_k += TILE_K;
        }
        for thread in 0..THREADS {
            let (row, col) = thread_tile_origin(thread);
            for i in 0..4 {
                for j in 0..4 {
                    let (r, cc) = (first_row + row + i, first_col + col + j);
                    if r < p.m && cc < p.n {
                        let at = z as u64 * p.stride_c + r as u64 * p.ldc as u64 + cc as u64;
                        c[at as usize] = acc[thread as usize][i as usize][j as usize];
                        written[at as usize] += 1;
                    }
                }
            }
        }
    }

    fn check(p: Problem, grid: [u32; 3]) {
        let mut rng = Lcg(u64::from(p.m) << 40 ^ u64::from(p.n) << 20 ^ u64::from(p.k));
        // Exactly the elements the API lets the kernel see, so an out-of-bounds read panics.
        // (A matrix with no rows or no columns has no elements: k = 0 leaves A and B empty.)
        let len = |stride: u64, rows: u32, ld: u32, cols: u32| {
            if rows == 0 || cols == 0 {
                return 0;
            }
            (u64::from(p.batch - 1) * stride
                + u64::from(rows - 1) * u64::from(ld)
                + u64::from(cols)) as usize
        };
        let a: Vec<f32> = (0..len(p.stride_a, p.m, p.lda, p.k))
            .map(|_| rng.next())
            .collect();
        let b_len = match p.b_order {
            OperandOrder::MnContiguous => len(p.stride_b, p.k, p.ldb, p.n),
            OperandOrder::KContiguous => len(p.stride_b, p.n, p.ldb, p.k),
        };
        let b: Vec<f32> = (0..b_len).map(|_| rng.next()).collect();
        let c_in = vec![f32::NAN; len(p.stride_c, p.m, p.ldc, p.n)];
        let c = model(&p, &a, &b, &c_in, grid);
        for z in 0..p.batch as u64 {
            for i in 0..p.m as u64 {
                for j in 0..p.n as u64 {
                    let mut sum = 0.0f32;
                    for l in 0..p.k as u64 {
                        let x = a[(z * p.stride_a + i * p.lda as u64 + l) as usize];
                        let y = match p.b_order {
                            OperandOrder::MnContiguous => {
                                b[(z * p.stride_b + l * p.ldb as u64 + j) as usize]
                            }
                            OperandOrder::KContiguous => {
                                b[(z * p.stride_b + j * p.ldb as u64 + l) as usize]
                            }
                        };
                        sum += x * y;
                    }
                    let got = c[(z * p.stride_c + i * p.ldc as u64 + j) as usize];
                    assert_eq!(got, sum, "C[{z}][{i}][{j}]");
                }
            }
        }
    }

    #[test]
    fn model_matches_the_product_at_ragged_shapes() {
        let shapes = [
            (1, 1, 1),
            (1, 1, 0),
            (1, 70, 33),
            (70, 1, 17),
            (65, 129, 16),
            (64, 64, 64),
            (3, 5, 40),
            (130, 67, 1),
        ];
        for &(m, n, k) in &shapes {
            for b_order in [OperandOrder::MnContiguous, OperandOrder::KContiguous] {
                for batch in [1u32, 3] {
                    let (lda, ldc) = (k + 3, n + 1);
                    let ldb = match b_order {
                        OperandOrder::MnContiguous => n + 2,
                        OperandOrder::KContiguous => k + 5,
                    };
                    let rows_b = if b_order == OperandOrder::MnContiguous {
                        k
                    } else {
                        n
                    };
                    let p = Problem {
                        m,
                        n,
                        k,
                        batch,
                        lda,
                        ldb,
                        ldc,
                        // Items overlap nothing but need not be packed: a gap of 7.
                        stride_a: u64::from(m) * u64::from(lda) + 7,
                        stride_b: u64::from(rows_b.max(1)) * u64::from(ldb) + 7,
                        stride_c: u64::from(m) * u64::from(ldc) + 7,
                        b_order,
                    };
                    let full = grid(m, n, batch);
                    check(p, full);
                }
            }
        }
    }

    #[test]
    fn model_with_a_capped_grid_walks_every_tile() {
        // A grid smaller than the tile counts along every axis, as when CUDA's limits cap it.
        let p = Problem {
            m: 200,
            n: 150,
            k: 20,
            batch: 3,
            lda: 20,
            ldb: 150,
            ldc: 150,
            stride_a: 200 * 20,
            stride_b: 0, // one B shared by all items
            stride_c: 200 * 150,
            b_order: OperandOrder::MnContiguous,
        };
        check(p, [2, 3, 2]);
    }
}
