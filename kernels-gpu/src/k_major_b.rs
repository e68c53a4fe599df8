//! B stored `[n, k]`, staged K-major for v13's FMA warp tiles (the library entries
//! `gemm_v13*_f32_nk_kmajor`).
//!
//! Entries with 64 and 32 rows of C per block; not v13's own 128-row tiles, whose cap of 128
//! registers the K-major math does not fit (it spilled there and ran at 0.70–0.73 of cuBLAS
//! where v13 ran at 0.80–0.86, `docs/results/f32-k-major`).
//!
//! v13's `[n, k]` entries transpose B on its way into shared memory, 4 bytes per `cp.async`, so
//! that the math reads it as it reads a `[k, n]` B. That is four times the copies of a `[k, n]`
//! B (16 bytes each), and with 32 or 64 rows of C per block there are too few FFMAs to hide
//! them: fp32 with B `[n, k]` ran at 0.65–0.76 of cuBLAS at the m = 64 layers where B `[k, n]`
//! ran at 0.86–1.02 (`docs/results/thin-m16-f32`). Here B keeps its layout: each thread
//! copies 16 bytes of k of a row of B ([`BCopies`]), and the math reads a lane's 8
//! columns of C as 8 rows of B, two steps of k per 8-byte read ([`multiply_k_major_stage`]):
//! 8 reads of B per 2 steps, where a `[k, n]` B takes 2 per step. The tile's layout and why it
//! is padded: [`gemm_geometry::v13::b_k_major_index`].
//!
//! The copies need every row of B to start on a 16-byte boundary (B's base, `ldb` and the batch
//! stride multiples of 16 bytes): the host checks that before it picks these entries. A piece
//! of k that runs past k reads only its first bytes (`cp.async`'s source size), so any k works.

use crate::device::{
    at, byte_offset, copy_async_16_if, copy_async_16_partial, outer_product, read2, read4,
};
use crate::sgemm::v07_transposed_a::join8;
use gemm_geometry::v13::{BLOCK_TILE_N, K_MAJOR_GROUP_ROWS, TILE_K, b_k_major_index};
use seq_macro::seq;

/// Floats of k per copy: one 16-byte piece.
const PIECE: u32 = 4;
/// Steps of k per read of B in the math ([`multiply_k_major_stage`]).
const READ: u32 = 2;

/// One thread's share of the copies of B `[n, k]` into the K-major tile: its first row of B
/// (column of C) and piece of k, and the rows it may read. Its other rows follow
/// `BLOCK_THREADS / 4` apart ([`BCopies::issue`]).
#[derive(Clone, Copy)]
pub struct BCopies {
    /// B's first element: the (valid, unread) source of copies that read nothing.
    b: *const f32,
    /// This thread's first row at its piece of k of step 0.
    start: *const f32,
    /// B's row stride, in floats.
    ld: u32,
    /// The first float of k of this thread's piece within a step.
    thread_k: u32,
    /// Rows of B from this thread's first one to B's last (0 if it lies past n).
    rows_left: u32,
    /// This thread's first place in a stage's B tile, in bytes from the tile's start.
    place: u32,
}

impl BCopies {
    /// The copies of thread `thread` for the block whose first column of C is `first_col`, B
    /// being `n` rows of stride `ld` from `b`.
    #[inline(always)]
    pub fn new(b: *const f32, ld: u32, n: u32, first_col: u32, thread: u32) -> Self {
        let pieces = TILE_K / PIECE;
        let (row, thread_k) = (thread / pieces, thread % pieces * PIECE);
        Self {
            b,
            // A 64-bit product: any row of any B the host accepts.
            start: b.wrapping_add((first_col + row) as usize * ld as usize + thread_k as usize),
            ld,
            thread_k,
            rows_left: n.saturating_sub(first_col + row),
            place: b_k_major_index(row, thread_k) * 4,
        }
    }

    /// Queues step `step`'s copies into the B tile that starts at shared byte `b_tile`, 16 bytes
    /// at a time: k `step·TILE_K + thread_k ..+4` of this thread's rows. Pieces past k, or (when
    /// `EDGE`) on rows past B's last, arrive as zeros. Without `EDGE`, k must be a multiple of
    /// 4 and every row of the block's tile inside.
    ///
    /// # Safety
    /// `b` and this thread's rows (those inside n; all of the tile's when not `EDGE`) must be
    /// valid and 16-byte aligned at every multiple of 4 in k; `b_tile` must be the start of a
    /// stage's B tile in shared memory that no thread reads until the copies land.
    #[inline(always)]
    pub unsafe fn issue<const EDGE: bool, const BLOCK_THREADS: u32>(
        &self,
        k: u32,
        step: u32,
        b_tile: u32,
    ) {
        let row_step = const { BLOCK_THREADS / (TILE_K / PIECE) };
        let copies = const {
            let copies = BLOCK_TILE_N / (BLOCK_THREADS / (TILE_K / PIECE));
            // A whole number of padding groups between a thread's rows (so that its places are
            // one constant apart), and at most 16 copies per thread.
            assert!((BLOCK_THREADS / (TILE_K / PIECE)).is_multiple_of(K_MAJOR_GROUP_ROWS));
            assert!(copies * (BLOCK_THREADS / (TILE_K / PIECE)) == BLOCK_TILE_N && copies <= 16);
            copies
        };
        let place_step = const { b_k_major_index(BLOCK_THREADS / (TILE_K / PIECE), 0) * 4 };
        let first_k = step * TILE_K + self.thread_k;
        // Bytes of this thread's piece inside k: 16, or fewer at the end, or none past it.
        let inside_bytes = if first_k >= k {
            0
        } else {
            (4 * (k - first_k)).min(16)
        };
        let whole = first_k + PIECE <= k;
        let base = byte_offset(self.start, step, TILE_K * 4);
        let destination = b_tile + self.place;
        seq!(i in 0..16 {
            if i < copies {
                // 4·rows × ld floats: the element size rides on the constant.
                let src = if i == 0 { base } else { byte_offset(base, 4 * i * row_step, self.ld) };
                let dst = destination + i * place_step;
                if EDGE {
                    let bytes = if i * row_step < self.rows_left { inside_bytes } else { 0 };
                    // SAFETY: the piece's first `bytes` lie in a row of B; none read when 0.
                    unsafe { copy_async_16_partial(dst, if bytes > 0 { src } else { self.b }, bytes) };
                } else {
                    // SAFETY: interior: the row lies inside and k % 4 == 0, so the piece lies
                    // wholly inside B or wholly past k (nothing read).
                    unsafe { copy_async_16_if(dst, if whole { src } else { self.b }, whole) };
                }
            }
        });
    }
}

/// One stage ([`TILE_K`] steps of k) of a lane's outer products, A's tile transposed as in v13
/// and B's K-major: per two steps, 8 reads of B (the lane's columns `col0 + (j / 4)·col_gap +
/// j % 4`, two k each, 8 bytes) and 2 of A per step, then `8 × THREAD_TILE_N` FMAs per step.
/// Each read of B is a constant offset from one lane base.
///
/// A `[k, n]` B takes 4 shared reads per 64 FMAs; this takes 6, and would take 4 with 16-byte
/// reads of four steps, but every value read is held until its last step: the kernels take 168
/// registers with two steps or four (ptxas keeps the next reads in flight as well), which is why
/// the 64-row entry runs 3 blocks per SM (a cap of 170) instead of its sibling's 4 (a cap of
/// 128, where it spilled). With one step per read it still spilled at 128.
///
/// # Safety
/// `a_tile` (transposed, rows of `a_stride` floats) and `b_tile` (K-major,
/// [`b_k_major_index`]) must be 16-byte-aligned staged tiles in shared memory, written before a
/// barrier, holding the stage's steps and the rows and columns `row0`, `col0` reach; `col0` a
/// multiple of 4.
#[inline(always)]
pub unsafe fn multiply_k_major_stage<const THREAD_TILE_N: usize, const LANE_ROWS: u32>(
    acc: &mut [[f32; THREAD_TILE_N]; 8],
    a_tile: *const f32,
    b_tile: *const f32,
    a_stride: u32,
    row0: u32,
    col0: u32,
) {
    let (row_gap, col_gap) = const {
        assert!(THREAD_TILE_N == 8 && TILE_K.is_multiple_of(READ) && TILE_K <= 16);
        (4 * LANE_ROWS as usize, 4 * (32 / LANE_ROWS))
    };
    // The lane's two groups of four rows of B: a group starts at a multiple of 4, so row
    // `4·j + q` lies `b_k_major_index(q, k)` past the group's first (the padding follows the
    // group).
    // SAFETY: inside the tile (the caller's contract).
    let lane_b = unsafe {
        [
            b_tile.add(b_k_major_index(col0, 0) as usize),
            b_tile.add(b_k_major_index(col0 + col_gap, 0) as usize),
        ]
    };
    seq!(g in 0..8 {
        if g * READ < TILE_K {
            // Two steps of k of the lane's 8 columns.
            let mut b = [[0.0f32; READ as usize]; 8];
            seq!(j in 0..8 {
                // SAFETY: row col0 + (j / 4)·col_gap + j % 4, k 2g, 2g + 1 of the tile.
                b[j] = unsafe { read2(lane_b[j / 4].add(b_k_major_index(j % 4, g * READ) as usize)) };
            });
            seq!(u in 0..2 {
                // SAFETY: step 2g + u of the lane's rows of the transposed A tile.
                let a_frag = unsafe {
                    let a_row = a_tile.add(at(g * READ + u, row0, a_stride));
                    join8(read4(a_row), read4(a_row.add(row_gap)))
                };
                let mut b_frag = [0.0f32; THREAD_TILE_N];
                seq!(j in 0..8 { b_frag[j] = b[j][u]; });
                outer_product(acc, &a_frag, &b_frag);
            });
        }
    });
}
