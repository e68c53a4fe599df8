//! Geometry of the thin-product kernels (`kernels-gpu/src/thin.rs`, entries
//! `gemm_thin_{m,n}_<dtype>_<blayout>`): products where one side of C has at most
//! [`THIN_MAX`] elements, so that the time is the time to read the other, large operand once
//! from DRAM (matrix–vector products and their few-row or few-column relatives).
//!
//! Two body shapes serve the four (family, B layout) pairs:
//!
//! * **dot rows** (`thin_m` with B `[n, k]`, `thin_n` with either B layout): the streamed
//!   operand is a set of rows contiguous along k (B's rows for `thin_m`, A's rows for
//!   `thin_n`). Each warp owns [`DOT_ROWS_PER_WARP`] of them; its lanes take consecutive
//!   16-byte chunks of those rows ([`CHUNK_BYTES`]), so one warp load reads 512 contiguous
//!   bytes, [`DOT_UNROLL`] chunks per row in flight per lane, and compute all (at most
//!   [`THIN_MAX`]) dot products with the small operand at once, reduced across the warp by
//!   shuffles in a fixed order. No shared memory, except for `thin_n` with B `[k, n]`, whose
//!   few columns are not contiguous along k: the block stages them, [`STAGE_K`] rows of k at a
//!   time, transposed to `[column][k]` f32 rows in shared memory ([`STAGED_SHARED_BYTES`]).
//! * **column slices** (`thin_m` with B `[k, n]`): B's rows are contiguous along n. A block
//!   owns [`KN_CHUNKS`] 16-byte column chunks of B (`KN_CHUNKS · 16 / element bytes`
//!   columns of C) and all of k (or, split in k, one slice of it), cut into [`KN_K_SLICES`]
//!   interleaved slices, one per group of [`KN_CHUNKS`] threads: a warp load reads 4 rows ×
//!   128 bytes (one whole cache line per row), and few columns per block keep the grid large.
//!   Each thread keeps [`KN_UNROLL`] rows of B in flight, two blocks per SM in fp32
//!   ([`kn_min_blocks_per_sm`]); each lane loads one column of A per step of [`KN_STEP_K`] rows and the warp shares them through its own
//!   slot of shared memory, and the slices' partial sums are reduced by warp shuffles and then
//!   across warps in shared memory ([`KN_SHARED_BYTES`]), always in the same order. The
//!   width of a block's rows was measured on the H100 (fp32, m = 1 and 8, the suite's nine
//!   LLM layers, a CUDA prototype of this body, `docs/results/thin-kn-rows`): 32 bytes (2
//!   chunks) streamed B 1.06–1.62× slower than 64 bytes; 64 bytes reached 70–86% of the copy
//!   bandwidth at the large layers and 128 bytes 92–98%; 256 and 512 bytes leave too few
//!   blocks unless k is split.
//!
//! Every reduction has a fixed order (no atomics; across blocks only the split-K reduction of
//! the column slices, in slice order), so results are bit-identical from run to run. The
//! device code and the host (dispatch's grid) read these constants, so they cannot disagree.

/// The most rows of C (`thin_m`) or columns of C (`thin_n`) these kernels serve.
pub const THIN_MAX: u32 = 8;
/// Threads per block (one-dimensional), every thin kernel.
pub const THREADS: u32 = 256;
/// Warps per block.
pub const WARPS: u32 = THREADS / 32;
/// The `min_blocks` of the dot-rows entries' launch bounds (the column-slices entries have
/// [`kn_min_blocks_per_sm`]). With 2 (at most 128 registers per thread) ptxas 13.0 spilled in
/// most of them on sm_80–sm_89 (up to 188 bytes in the f32 entries) and some on sm_90 and
/// sm_120; with 1 none spills, at 148–255 registers, so one block of 8 warps is resident per
/// SM (two where an entry needs at most 128). Each thread then keeps 8 loads of 16 bytes in
/// flight ([`DOT_UNROLL`] × [`DOT_ROWS_PER_WARP`]): 32 KiB per SM.
pub const MIN_BLOCKS_PER_SM: u32 = 1;
/// Bytes of one vector load (`ld.global.v4.b32`): 4 f32 or 8 fp16/bf16 elements.
pub const CHUNK_BYTES: u32 = 16;

/// Streamed rows per warp in the dot-rows body: each lane's chunk of the small operand is
/// used for this many rows, which halves its (cached) reads per streamed byte.
pub const DOT_ROWS_PER_WARP: u32 = 2;
/// Streamed rows per block in the dot-rows body.
pub const DOT_ROWS_PER_BLOCK: u32 = WARPS * DOT_ROWS_PER_WARP;
/// Chunks per streamed row each lane loads before using any (its loads in flight:
/// `DOT_UNROLL · DOT_ROWS_PER_WARP` 16-byte loads).
pub const DOT_UNROLL: u32 = 4;
/// The most small rows (`thin_m`: rows of A; `thin_n`: columns of B) for which the f32
/// dot-rows entries (`gemm_thin_m_f32_nk`, `gemm_thin_n_f32_nk` and `gemm_thin_n_f32_kn`'s
/// single contiguous column) take their matrix–vector path: each lane keeps
/// [`GEMV_LOADS_IN_FLIGHT`] 16-byte loads of the streamed operand in flight instead of
/// `DOT_UNROLL · DOT_ROWS_PER_WARP`. With so few sums per lane the extra loads fit in the
/// registers the entry already has for its 8-row path, and at one block of 8 warps per SM (the
/// entries' [`MIN_BLOCKS_PER_SM`]) 8 loads per lane were 32 KiB in flight per SM, which kept
/// B `[n, k]` at 73–76% of the copy bandwidth at the three largest fp32 m = 1 70B layers on
/// the H200 where the column-slices body, with 64 KiB in flight, reached 90–98%
/// (`docs/results/f32-short-k`, run 3); with 16 loads per lane they stream it at 103–106%
/// (`docs/results/gemv-in-flight`; the copy bandwidth counts a copy's reads and writes).
pub const GEMV_MAX_SMALL: u32 = 2;
/// 16-byte loads of the streamed operand each lane keeps in flight on the matrix–vector path
/// ([`GEMV_MAX_SMALL`]): 64 KiB per SM at one block of 8 warps.
pub const GEMV_LOADS_IN_FLIGHT: u32 = 16;
/// Rows of k the `thin_n` `[k, n]` kernel stages per step.
pub const STAGE_K: u32 = 1024;
/// Dynamic shared memory of the `thin_n` `[k, n]` kernel: [`THIN_MAX`] staged columns of
/// [`STAGE_K`] f32 each. The lanes of a warp stage 32 consecutive k of one column at a time
/// (32 consecutive words, no bank conflict) and read 16 or 32 consecutive bytes each of one
/// column (conflict-free, or two-way for fp16/bf16's 32 bytes).
pub const STAGED_SHARED_BYTES: u32 = THIN_MAX * STAGE_K * 4;

/// 16-byte column chunks of B per block in the column-slices body (`thin_m`, `[k, n]`): 128
/// bytes of each row of B, one cache line.
pub const KN_CHUNKS: u32 = 8;
/// Slices of k per block in the column-slices body: thread `t` owns chunk `t % KN_CHUNKS`
/// and rows `t / KN_CHUNKS + s · KN_K_SLICES` of k.
pub const KN_K_SLICES: u32 = THREADS / KN_CHUNKS;
/// Rows of B each thread loads before using any in the column-slices body.
pub const KN_UNROLL: u32 = 8;
/// The `min_blocks` of the column-slices entries' launch bounds, by element bytes. fp32: two
/// blocks per SM (at most 128 registers) keep 64 KiB of B in flight ([`KN_UNROLL`] 16-byte
/// loads per thread), as the CUDA prototype that chose 128-byte rows ran. (With one, as the
/// other thin entries, and 64-byte rows, the fp32 layers streamed B at 38–78% of the copy
/// bandwidth on the H100, `docs/results/f32-via-kn`; the two changes were not measured
/// apart.) fp16/bf16 (whose
/// aligned calls run the tensor-core kernels instead): one, since in 128 registers their twice
/// as many sums spilled up to 44 bytes on sm_80–sm_89 (ptxas 13.0).
pub const fn kn_min_blocks_per_sm(element_bytes: u32) -> u32 {
    if element_bytes == 4 { 2 } else { 1 }
}
/// The most elements of one chunk (fp16/bf16: 8).
pub const MAX_CHUNK_ELEMENTS: u32 = 8;
/// Rows of k per step of the column-slices body: one row per slice and unrolled load.
pub const KN_STEP_K: u32 = KN_K_SLICES * KN_UNROLL;
/// f32 partial sums of the column-slices body: one per warp, chunk, row of C and chunk
/// element.
pub const KN_PARTIALS: u32 = WARPS * KN_CHUNKS * THIN_MAX * MAX_CHUNK_ELEMENTS;
/// f32 of one warp's slot of A in the column-slices body: two buffers of 32 records (one per
/// lane), each the [`THIN_MAX`] rows of one column of A.
pub const KN_A_SLOT: u32 = 2 * 32 * THIN_MAX;
/// Dynamic shared memory of the column-slices body: the partial sums, then every warp's slot
/// of A.
pub const KN_SHARED_BYTES: u32 = (KN_PARTIALS + WARPS * KN_A_SLOT) * 4;

/// Threads per block of the tensor-core thin kernels (`kernels-gpu/src/thin_mma.rs`, entries
/// `gemm_thin_{m,n}_mma_<f16|bf16>_<blayout>`): fp16 and bf16 products whose rows start on
/// 16-byte boundaries. They multiply with `mma.sync` m16n8k16 instead of fp32 FMAs, so that up
/// to [`THIN_MAX`] rows cost what one row costs: the tensor cores do the arithmetic at a
/// small fraction of their rate and leave the threads free to keep loads in flight.
pub const MMA_THREADS: u32 = 256;
/// Warps per block of the tensor-core thin kernels. All of a block's warps work on the same
/// rows (or columns) of C, each on every [`MMA_WARPS`]-th step of k, and their partial sums
/// are added in shared memory in warp order.
pub const MMA_WARPS: u32 = MMA_THREADS / 32;
/// The `min_blocks` of the tensor-core thin kernels' launch bounds (at most 128 registers).
pub const MMA_MIN_BLOCKS_PER_SM: u32 = 2;
/// Streamed rows per block of the tensor-core dot-rows body (`thin_m` with B `[n, k]`,
/// `thin_n` with B `[n, k]`): the 16 rows of one m16n8k16 tile.
pub const MMA_DOT_ROWS: u32 = 16;
/// k per warp step of the tensor-core dot-rows body: each lane loads 16 bytes (8 elements) of
/// two of the 16 rows, so a step is 16 rows × 64 bytes and two `mma`s.
pub const MMA_DOT_STEP_K: u32 = 32;
/// Steps each warp of the dot-rows body loads before using any (1 KiB each per warp).
pub const MMA_DOT_UNROLL: u32 = 4;
/// Dynamic shared memory of the tensor-core dot-rows body: one f32 partial sum per warp,
/// streamed row and small row.
pub const MMA_DOT_SHARED_BYTES: u32 = MMA_WARPS * MMA_DOT_ROWS * THIN_MAX * 4;
/// The most thin rows of the wide thin kernels, `thin_m` with B `[n, k]` and
/// `THIN_MAX < m ≤ WIDE_MAX`: the tensor-core `gemm_thin_m16_mma_<f16|bf16>_nk` (two n8 tiles
/// of small rows in the dot-rows body) and the FMA `gemm_thin_m16_f32_nk` (the dot-rows body
/// with [`WIDE_DOT_ROWS_PER_WARP`] streamed rows per warp). Separate entries from the 8-row
/// ones, so that each is register-allocated alone: one tensor-core kernel holding both
/// spilled. (B `[k, n]` has none: a tensor-core column body with all 16 rows of A in the `mma`
/// spilled at four steps in flight and at two ran at 0.63–0.94× cuBLAS on the H100's m = 16
/// layers, below v18.)
pub const WIDE_MAX: u32 = 2 * THIN_MAX;
/// Streamed rows per warp of the FMA wide dot-rows body (`gemm_thin_m16_f32_nk`): each lane's
/// chunk of A (16 rows of it) is read from L1 once for this many rows of B, so L1 serves
/// 16 / 4 = 4 bytes of A per byte of B, as the 8-row body's 8 / 2 does. With 2, the reads of
/// A would double, close to L1's 128 bytes per cycle at the copy bandwidth.
pub const WIDE_DOT_ROWS_PER_WARP: u32 = 4;
/// Streamed rows per block of the FMA wide dot-rows body.
pub const WIDE_DOT_ROWS_PER_BLOCK: u32 = WARPS * WIDE_DOT_ROWS_PER_WARP;
/// Dynamic shared memory of the wide dot-rows body: one f32 partial sum per warp, streamed
/// row and small row.
pub const MMA_WIDE_DOT_SHARED_BYTES: u32 = MMA_WARPS * MMA_DOT_ROWS * WIDE_MAX * 4;
/// Columns of C per block of the tensor-core column body (`thin_m` with B `[k, n]`): each
/// lane loads 16 bytes of a row of B, 4 lanes a row, so a warp step reads 64 bytes of each of
/// [`MMA_KN_STEP_K`] rows.
pub const MMA_KN_COLUMNS: u32 = 32;
/// Rows of k per warp step of the tensor-core column body (the k of one m16n8k16 `mma`).
pub const MMA_KN_STEP_K: u32 = 16;
/// Steps each warp of the column body loads before using any (1 KiB each per warp).
pub const MMA_KN_UNROLL: u32 = 4;
/// Bytes of one warp's staging tile in the column body: one step of B, 16 rows × 64 bytes,
/// from which `ldmatrix.trans` reads the `mma` fragments.
pub const MMA_KN_STAGE_BYTES: u32 = MMA_KN_STEP_K * MMA_KN_COLUMNS * 2;
/// Dynamic shared memory of the tensor-core column body: every warp's staging tile, then one
/// f32 partial sum per warp, row of C and column.
pub const MMA_KN_SHARED_BYTES: u32 =
    MMA_WARPS * MMA_KN_STAGE_BYTES + MMA_WARPS * THIN_MAX * MMA_KN_COLUMNS * 4;

/// Most warps of a column-body block that sit side by side along n (what the kernel can run):
/// a block covers `column_warps ·` [`MMA_KN_COLUMNS`] columns, its warps on different columns
/// and, when fewer than [`MMA_WARPS`] sit side by side, the rest on different steps of k.
pub const MMA_KN_MAX_COLUMN_WARPS: u32 = 8;
/// The widest blocks [`kn_column_warps`] chooses: on the H100 (`docs/results/thin-kn-wide`),
/// four warps side by side read B at 88–93% of the copy bandwidth at n = 57344 where eight
/// read it at 87–89%.
pub const MMA_KN_CHOSEN_COLUMN_WARPS: u32 = 4;
/// Blocks the column body keeps, at least, when it widens them along n: about one per SM of an
/// H100. At n = 8192 two warps side by side (128 blocks) measured 0.84–0.93 of the copy
/// bandwidth against 0.79–0.88 with one (256 blocks); at n = 4096, 64 blocks of two were slower
/// than 128 of one.
pub const MMA_KN_MIN_BLOCKS: u32 = 128;

/// Warps of a column-body block side by side along n for a B `[k, n]` with `n` columns: the
/// widest of 1, 2 and 4 that still leaves [`MMA_KN_MIN_BLOCKS`] blocks. Wider blocks read
/// longer runs of each row of B (`64 · column_warps` bytes): with one warp per block, each
/// row of B is read 64 bytes at a time by each block, and at n ≥ 8192 the kernel read B at
/// 0.65–0.88 of the copy bandwidth, against 0.89–0.97 for the same bytes as B `[n, k]`.
pub const fn kn_column_warps(n: u32) -> u32 {
    let mut warps = MMA_KN_CHOSEN_COLUMN_WARPS;
    while warps > 1 && n.div_ceil(warps * MMA_KN_COLUMNS) < MMA_KN_MIN_BLOCKS {
        warps /= 2;
    }
    warps
}

/// Warps side by side along n in a column-body launch of `grid_x` blocks over `n` columns, as
/// the kernel derives it from its grid: the fewest of 1, 2, 4 and 8 with which the blocks cover
/// every column at once ([`MMA_KN_MAX_COLUMN_WARPS`] if none does; the blocks then loop). The
/// host's grid of `n.div_ceil(kn_column_warps(n) · MMA_KN_COLUMNS)` blocks gives back
/// [`kn_column_warps`]`(n)`.
pub const fn kn_column_warps_of_grid(n: u32, grid_x: u32) -> u32 {
    let mut warps = 1;
    while warps < MMA_KN_MAX_COLUMN_WARPS
        && (grid_x as u64) * ((warps * MMA_KN_COLUMNS) as u64) < n as u64
    {
        warps *= 2;
    }
    warps
}

/// Rows of A (and of C) per block of the short-rows body (`thin_n` with a short k,
/// `kernels-gpu/src/thin_rows.rs`, entries `gemm_thin_n_rows_<dtype>_<blayout>`): one per
/// thread. The dot-rows body gives each warp two rows of A and spreads a row's 16-byte chunks
/// over the lanes, so at k = 17 (a row of 68 bytes in f32) most lanes have nothing to read;
/// here the block stages its rows' slice of k in shared memory with whole warps on one row at
/// a time, and each thread then walks its own row.
pub const ROWS_PER_BLOCK: u32 = THREADS;
/// Columns of A (k) per staged slice of the short-rows body: one per lane of a warp's load.
pub const ROWS_SLICE_K: u32 = 32;
/// f32 words of one staged row of A: the slice and one word of padding, so that thread `t`
/// reading word `kk` of its row (bank `(33·t + kk) mod 32`) meets no other lane's bank.
pub const ROWS_TILE_ROW_FLOATS: u32 = ROWS_SLICE_K + 1;
/// Dynamic shared memory of the short-rows body: the block's rows of A for one slice of k,
/// then the slice's rows of B as `[k][THIN_MAX]` f32 (zeros past n and k).
pub const ROWS_SHARED_BYTES: u32 =
    (ROWS_PER_BLOCK * ROWS_TILE_ROW_FLOATS + ROWS_SLICE_K * THIN_MAX) * 4;
/// The `min_blocks` of the short-rows entries' launch bounds (at most 128 registers).
pub const ROWS_MIN_BLOCKS_PER_SM: u32 = 2;

/// Elements of `element_bytes` bytes per 16-byte chunk.
pub const fn chunk_elements(element_bytes: u32) -> u32 {
    CHUNK_BYTES / element_bytes
}

/// Columns of C per block of the column-slices body (`thin_m`, B `[k, n]`).
pub const fn kn_block_columns(element_bytes: u32) -> u32 {
    KN_CHUNKS * chunk_elements(element_bytes)
}

const _: () = {
    assert!(THREADS.is_multiple_of(32) && WARPS == 8);
    // One output per lane in the dot-rows store.
    assert!(THIN_MAX * DOT_ROWS_PER_WARP <= 32);
    // The slices of one chunk are the lanes `chunk` apart modulo KN_CHUNKS: 32 / KN_CHUNKS per
    // warp (a power of two, for the shuffle butterfly).
    assert!(KN_CHUNKS.is_power_of_two() && KN_CHUNKS <= 32 && KN_K_SLICES * KN_CHUNKS == THREADS);
    // Staged tiles start on chunk boundaries of every element type (and 32 chunks per warp).
    assert!(STAGE_K.is_multiple_of(32 * MAX_CHUNK_ELEMENTS));
    assert!(STAGED_SHARED_BYTES <= 48 * 1024 && KN_SHARED_BYTES <= 48 * 1024);
    // The tensor-core bodies: one m16n8k16 tile of rows, two `mma`s per dot-rows step (16
    // bytes per lane), four n8 tiles per column step, eight rows of C in the tile's first half.
    assert!(MMA_WARPS == 8 && MMA_DOT_ROWS == 16 && THIN_MAX == 8);
    assert!(MMA_DOT_STEP_K * 2 == 4 * CHUNK_BYTES && MMA_KN_COLUMNS * 2 == 4 * CHUNK_BYTES);
    assert!(MMA_DOT_SHARED_BYTES <= 48 * 1024 && MMA_KN_SHARED_BYTES <= 48 * 1024);
    // The wide dot-rows store: one output per thread.
    assert!(MMA_DOT_ROWS * WIDE_MAX == MMA_THREADS);
    // The FMA dot-rows body holds at most 16 small rows and 4 streamed rows per lane.
    assert!(WIDE_MAX <= 16 && WIDE_DOT_ROWS_PER_WARP <= 4);
    assert!(MMA_WIDE_DOT_SHARED_BYTES <= 48 * 1024);
    // The short-rows body: a warp stages one row's slice per load (a lane per column), B's
    // slice is one (k, column) pair per thread, and every thread owns one row.
    assert!(ROWS_SLICE_K == 32 && ROWS_SLICE_K * THIN_MAX == THREADS && ROWS_PER_BLOCK == THREADS);
    assert!(ROWS_SHARED_BYTES <= 48 * 1024);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_streamed_operand() {
        assert_eq!(kn_block_columns(4), 32);
        assert_eq!(kn_block_columns(2), 64);
        assert_eq!(DOT_ROWS_PER_BLOCK, 16);
        assert_eq!(WIDE_DOT_ROWS_PER_BLOCK, 32);
        assert_eq!(STAGED_SHARED_BYTES, 32_768);
        assert_eq!(KN_STEP_K, 256);
        assert_eq!(KN_SHARED_BYTES, 16_384 + 16_384);
        assert_eq!(MMA_DOT_SHARED_BYTES, 4096);
        assert_eq!(MMA_KN_SHARED_BYTES, 8192 + 8192);
        assert_eq!(ROWS_SHARED_BYTES, 256 * 33 * 4 + 32 * 8 * 4);
    }

    #[test]
    fn column_warps_widen_only_while_enough_blocks_remain_and_round_trip_through_the_grid() {
        for (n, warps) in [
            (1, 1),
            (4096, 1),
            (8100, 1),
            (8192, 2),
            (11008, 2),
            (14336, 2),
            (16256, 2),
            (16384, 4),
            (57344, 4),
            (1 << 30, 4),
        ] {
            assert_eq!(kn_column_warps(n), warps, "n = {n}");
        }
        for n in [
            1, 31, 32, 33, 4095, 8192, 8200, 12288, 14336, 16400, 24577, 28672, 49152, 57344, 65537,
        ] {
            let warps = kn_column_warps(n);
            let grid = n.div_ceil(warps * MMA_KN_COLUMNS);
            assert_eq!(kn_column_warps_of_grid(n, grid), warps, "n = {n}");
            // Launched with one warp per block's worth of columns, the kernel keeps one.
            assert_eq!(
                kn_column_warps_of_grid(n, n.div_ceil(MMA_KN_COLUMNS)),
                1,
                "n = {n}"
            );
        }
        // A grid too small for eight warps per block still reads as eight (the blocks loop).
        assert_eq!(kn_column_warps_of_grid(1 << 20, 1), 8);
    }
}
