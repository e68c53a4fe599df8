//! Launch geometry of v13 (`sgemm_v13_async_copies`, `gemm_v13_f32_kn`, `gemm_v13_f32_nk`; its
//! library variants with 64- and 32-row tiles, `M64_*` and `M32_*`, at the end):
//! v10's warp tiles (8 × 8 outputs per thread) fed by a `cp.async` pipeline of [`STAGES`]
//! shared-memory stages, each holding one [`TILE_K`]-deep step of the A and B tiles.
//!
//! Shared memory per stage, in floats: A transposed to `[TILE_K][A_STRIDE]`, then B as
//! `[TILE_K][B_STRIDE_KN]` (B stored `[k, n]`) or `[TILE_K][B_STRIDE_NK]` (B stored `[n, k]`,
//! transposed on its way in like A, so padded like A). The `*_kmajor` entries (64 and 32 rows)
//! take B `[n, k]`
//! as it is stored instead, 16 bytes at a time: B's tile is then `[BLOCK_TILE_N][TILE_K]` with
//! a little padding ([`b_k_major_index`]).

/// Rows of C per block.
pub const BLOCK_TILE_M: u32 = 128;
/// Columns of C per block.
pub const BLOCK_TILE_N: u32 = 128;
/// Steps of k per pipeline stage.
pub const TILE_K: u32 = 16;
/// Shared-memory stages: copies run `STAGES − 1` steps ahead of the math.
pub const STAGES: u32 = 4;
/// Rows of C per thread.
pub const THREAD_TILE_M: u32 = 8;
/// Columns of C per thread.
pub const THREAD_TILE_N: u32 = 8;
/// Threads per block (1-D): 8 warps of 64 × 32 outputs.
pub const THREADS: u32 = threads(BLOCK_TILE_M);
/// Blocks per SM the kernels are built for (`.minnctapersm`): with [`THREADS`], a cap of 128
/// registers per thread.
pub const MIN_BLOCKS_PER_SM: u32 = 2;
/// Floats of padding after each row of a transposed (`[k][rows]`) tile: a warp's transposing
/// 4-byte copies (4 rows × 8 k) then land in 32 different banks, and rows stay 16-byte aligned.
pub const TRANSPOSED_PADDING: u32 = 4;
/// Row length, in floats, of the transposed A tile in shared memory.
pub const A_STRIDE: u32 = a_stride(BLOCK_TILE_M);
/// Row length, in floats, of the B tile when B is stored `[k, n]` (copied as it is, 16 bytes
/// at a time: no padding needed).
pub const B_STRIDE_KN: u32 = BLOCK_TILE_N;
/// Row length, in floats, of the B tile when B is stored `[n, k]` (transposed like A).
pub const B_STRIDE_NK: u32 = BLOCK_TILE_N + TRANSPOSED_PADDING;
/// Floats of one stage, B stored `[k, n]`.
pub const STAGE_FLOATS_KN: u32 = stage_floats(BLOCK_TILE_M, false);
/// Floats of one stage, B stored `[n, k]`.
pub const STAGE_FLOATS_NK: u32 = stage_floats(BLOCK_TILE_M, true);
/// Dynamic shared memory of `sgemm_v13_async_copies` and `gemm_v13_f32_kn`, in bytes (66 560).
pub const SHARED_BYTES_KN: u32 = STAGES * STAGE_FLOATS_KN * 4;
/// Dynamic shared memory of `gemm_v13_f32_nk`, in bytes (67 584).
pub const SHARED_BYTES_NK: u32 = STAGES * STAGE_FLOATS_NK * 4;

/// Threads per block (1-D) of a block `block_rows` × [`BLOCK_TILE_N`], each owning
/// [`THREAD_TILE_M`] × [`THREAD_TILE_N`] outputs.
pub const fn threads(block_rows: u32) -> u32 {
    (block_rows / THREAD_TILE_M) * (BLOCK_TILE_N / THREAD_TILE_N)
}

/// Row length, in floats, of the transposed A tile of a block `block_rows` tall.
pub const fn a_stride(block_rows: u32) -> u32 {
    block_rows + TRANSPOSED_PADDING
}

/// Floats of one stage of a block `block_rows` tall: its A tile, then B's (`b_nk`: B stored
/// `[n, k]`).
pub const fn stage_floats(block_rows: u32, b_nk: bool) -> u32 {
    TILE_K * a_stride(block_rows) + TILE_K * if b_nk { B_STRIDE_NK } else { B_STRIDE_KN }
}

/// Blocks along grid x for an `m × n` C: one per 128 × 128 tile, in grouped order (grid y is 1;
/// grid z walks the batch).
pub const fn grid_x(m: u32, n: u32) -> u32 {
    m.div_ceil(BLOCK_TILE_M) * n.div_ceil(BLOCK_TILE_N)
}

/// Rows of C per block of the 64-row variant (entries `gemm_v13_m64_f32_kn`,
/// `gemm_v13_m64_f32_nk`): one warp tile tall, for products with at most 64 rows of C, where a
/// 128-row tile leaves at least half of its rows (and its FFMAs) empty. Same warp tiles, same
/// 16-deep stages and the same columns per block as v13; half the threads.
pub const M64_BLOCK_TILE_M: u32 = 64;
/// Threads per block (1-D) of the 64-row variant: 4 warps of 64 × 32 outputs.
pub const M64_THREADS: u32 = threads(M64_BLOCK_TILE_M);
/// Blocks per SM the 64-row variant is built for: as many threads per SM as v13 (and the same
/// cap of 128 registers per thread), so as many warps hide the latency.
pub const M64_MIN_BLOCKS_PER_SM: u32 = 4;
/// Dynamic shared memory of `gemm_v13_m64_f32_kn`, in bytes (50 176).
pub const M64_SHARED_BYTES_KN: u32 = STAGES * stage_floats(M64_BLOCK_TILE_M, false) * 4;
/// Dynamic shared memory of `gemm_v13_m64_f32_nk`, in bytes (51 200).
pub const M64_SHARED_BYTES_NK: u32 = STAGES * stage_floats(M64_BLOCK_TILE_M, true) * 4;

/// Rows of C per block of the 32-row variant (entries `gemm_v13_m32_f32_kn`,
/// `gemm_v13_m32_f32_nk`), for products with at most 32 rows of C. Its warps are 32 × 64 (lanes
/// [`M32_LANE_ROWS`] rows × 8 columns, each still 8 × 8 outputs): a 64-row warp tile would
/// leave half of its rows empty.
pub const M32_BLOCK_TILE_M: u32 = 32;
/// Lane rows per warp of the 32-row variant (v13's: 8).
pub const M32_LANE_ROWS: u32 = 4;
/// Threads per block (1-D) of the 32-row variant: 2 warps of 32 × 64 outputs.
pub const M32_THREADS: u32 = threads(M32_BLOCK_TILE_M);
/// Blocks per SM the 32-row variant is built for: as many as its shared memory lets in on the
/// H100 (5 × 42 KiB), at most 204 registers per thread.
pub const M32_MIN_BLOCKS_PER_SM: u32 = 5;
/// Dynamic shared memory of `gemm_v13_m32_f32_kn`, in bytes (41 984).
pub const M32_SHARED_BYTES_KN: u32 = STAGES * stage_floats(M32_BLOCK_TILE_M, false) * 4;
/// Dynamic shared memory of `gemm_v13_m32_f32_nk`, in bytes (43 008).
pub const M32_SHARED_BYTES_NK: u32 = STAGES * stage_floats(M32_BLOCK_TILE_M, true) * 4;

/// Rows of a K-major B tile (B `[n, k]` copied as stored, entries `gemm_v13*_f32_nk_kmajor`)
/// between two paddings.
pub const K_MAJOR_GROUP_ROWS: u32 = 4;
/// Floats of padding after every [`K_MAJOR_GROUP_ROWS`] rows of a K-major B tile.
pub const K_MAJOR_GROUP_PADDING: u32 = 4;

/// Index, in floats from the tile's start, of B's row `row` (a column of C) and step `k` in a
/// K-major B tile: rows of [`TILE_K`] floats, 4 floats of padding after every 4 rows. A lane
/// reads two k of one row per 8-byte load, and the rows a half warp reads at once are 4 apart
/// (`4·j + q` for 4 or 8 values of j): without the padding they would all start on the same
/// bank (a row is 64 bytes, so rows 4 apart are 256 bytes apart); with it, row 4·j starts
/// 16·j bytes further into its 128-byte line, 8 different 16-byte places. Each 16-byte copy
/// lands in one piece (rows and the padding are multiples of 16 bytes), and the 8 copies of a
/// quarter warp (2 rows × 4 pieces of k) fill one 128-byte line.
pub const fn b_k_major_index(row: u32, k: u32) -> u32 {
    row * TILE_K + row / K_MAJOR_GROUP_ROWS * K_MAJOR_GROUP_PADDING + k
}

/// Floats of one stage of a block `block_rows` tall whose B tile is K-major: its transposed A
/// tile, then B's [`BLOCK_TILE_N`] rows.
pub const fn stage_floats_k_major(block_rows: u32) -> u32 {
    TILE_K * a_stride(block_rows) + b_k_major_index(BLOCK_TILE_N, 0)
}

/// Blocks per SM `gemm_v13_m64_f32_nk_kmajor` is built for: 3, a cap of 170 registers, where
/// the K-major math takes 168 (at the 64-row variant's 4 blocks, a cap of 128, it spilled
/// 176–284 bytes). The 32-row variant's cap of 204 holds it as it is.
pub const M64_K_MAJOR_MIN_BLOCKS_PER_SM: u32 = 3;
/// Dynamic shared memory of `gemm_v13_m64_f32_nk_kmajor`, in bytes (52 224).
pub const M64_SHARED_BYTES_NK_KMAJOR: u32 = STAGES * stage_floats_k_major(M64_BLOCK_TILE_M) * 4;
/// Dynamic shared memory of `gemm_v13_m32_f32_nk_kmajor`, in bytes (44 032).
pub const M32_SHARED_BYTES_NK_KMAJOR: u32 = STAGES * stage_floats_k_major(M32_BLOCK_TILE_M) * 4;

const _: () = assert!(THREADS == 256 && M64_THREADS == 128 && M32_THREADS == 64);
const _: () = assert!(M64_SHARED_BYTES_NK_KMAJOR == 52_224 && M32_SHARED_BYTES_NK_KMAJOR == 44_032);
// The K-major variants' blocks per SM fit in the H100's shared memory.
const _: () =
    assert!(M64_K_MAJOR_MIN_BLOCKS_PER_SM * (M64_SHARED_BYTES_NK_KMAJOR + 1024) <= 228 * 1024);
const _: () = assert!(M32_MIN_BLOCKS_PER_SM * (M32_SHARED_BYTES_NK_KMAJOR + 1024) <= 228 * 1024);
const _: () = assert!(M32_SHARED_BYTES_KN == 41_984 && M32_SHARED_BYTES_NK == 43_008);
const _: () = assert!(M32_MIN_BLOCKS_PER_SM * (M32_SHARED_BYTES_NK + 1024) <= 228 * 1024);
const _: () = assert!(M64_SHARED_BYTES_KN == 50_176 && M64_SHARED_BYTES_NK == 51_200);
// Four blocks of the 64-row variant fit in the H100's 228 KiB of shared memory per SM, 1 KiB of
// it reserved per block (an A100's 164 KiB holds three; there the register cap is just lower
// than it needs to be).
const _: () = assert!(M64_MIN_BLOCKS_PER_SM * (M64_SHARED_BYTES_NK + 1024) <= 228 * 1024);
const _: () = assert!(SHARED_BYTES_KN == 66_560 && SHARED_BYTES_NK == 67_584);

#[cfg(test)]
mod tests {
    use super::*;

    /// The 16-byte place (0..8) of a shared byte address within its 128-byte line: two accesses
    /// of 8 or 16 bytes at the same offset in their places conflict (in one phase of a warp's
    /// access) when their places match but their lines differ.
    fn place(index: u32) -> u32 {
        index * 4 % 128 / 16
    }

    #[test]
    fn k_major_rows_do_not_overlap_and_stay_16_byte_aligned() {
        for row in 0..BLOCK_TILE_N {
            let start = b_k_major_index(row, 0);
            assert!(start.is_multiple_of(4), "row {row} starts at {start}");
            assert!(start + TILE_K <= b_k_major_index(row + 1, 0));
        }
    }

    #[test]
    fn k_major_reads_of_a_half_warp_fall_in_different_places() {
        // A lane's columns of C start at a multiple of 4 (`lane_origin_in`): a half warp reads
        // rows 4·j + q, 8 bytes of k each, for 4 consecutive j (4 lanes per row) or 8 (2 lanes
        // per row, the 32-row variant), the same q and k for all.
        for lanes_per_row in [4u32, 8] {
            for first in (0..BLOCK_TILE_N / 4).step_by(lanes_per_row as usize) {
                for q in 0..4 {
                    for k in (0..TILE_K).step_by(2) {
                        let mut seen = [false; 8];
                        for j in first..(first + lanes_per_row).min(BLOCK_TILE_N / 4) {
                            let at = place(b_k_major_index(4 * j + q, k)) as usize;
                            assert!(!seen[at], "rows from {first}·4 + {q}, k {k}: row {j}·4");
                            seen[at] = true;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn k_major_copies_of_a_quarter_warp_fill_one_line() {
        // Thread t copies row t / 4, k 4·(t % 4); 8 threads at a time.
        for first in (0..BLOCK_TILE_N * 4).step_by(8) {
            let mut seen = [false; 8];
            for t in first..first + 8 {
                seen[place(b_k_major_index(t / 4, 4 * (t % 4))) as usize] = true;
            }
            assert_eq!(seen, [true; 8], "threads from {first}");
        }
    }
}
