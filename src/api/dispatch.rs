//! Dispatch: which kernel runs a validated [`Problem`] on a device, and why.
//!
//! [`KERNELS`] lists the library's kernels, fastest first for each element type and B layout.
//! Each list starts with the thin-product kernels `thin_m` and `thin_n` ([`ShapeClass`]),
//! which serve only calls with at most [`THIN_MAX`](gemm_geometry::thin::THIN_MAX) rows or
//! columns of C: such a product is bound by reading its large operand once from DRAM, which
//! they do at full width where the tiled kernels would waste almost all of every tile. For
//! fp16 and bf16 calls whose rows of A and B start on 16-byte boundaries, the tensor-core thin
//! kernels `thin_m_mma` and `thin_n_mma` (B `[n, k]` only) come first: one `mma.sync` serves
//! all the thin rows at once, so m = 8 costs what m = 1 costs; `thin_m16_mma` (B `[n, k]`) does
//! the same for 9 ≤ m ≤ 16 (two tiles of 8 rows), where the tiled kernels waste 7/8 of a
//! 128-row tile, and `thin_m16` (f32 and TF32, B `[n, k]`) with FMAs. Then come the kernels for every shape, in the order of the measurements in `docs/results/` (at
//! large shapes the TMA + `wgmma` kernel v18 beats the `mma.sync` kernel v15, which beats the
//! general kernel; the `cp.async` fp32 kernel v13 beats the general one, and its 32- and 64-row
//! variants `v13_m32` and `v13_m64` come before it: they serve the products with at most that
//! many rows, where v13's 128-row tiles would be mostly empty, and `v13_m64` also every B
//! `[k, n]` product with k > 64, where it was measured faster than v13 at every shape (see
//! [`passed_over`]); for TF32 the `wgmma`
//! kernel v19 beats v14's `mma.sync`, on B `[k, n]` through a transposed copy of B where the
//! cost model says the copy pays, see [`passed_over`]). f32 and TF32 calls
//! share the exact f32 thin kernels: a memory-bound product gains nothing from TF32.
//! [`choose`] takes the first kernel whose requirements the device and the call meet, so every
//! valid call gets a kernel: the general kernels accept any alignment, any leading dimension
//! and any shape. The choice is a pure function of ([`DeviceCaps`], [`Problem`]), so it is
//! tested without a GPU, and [`Plan::reason`] says why each faster kernel was passed over.

use super::desc::BLayout;
use super::element::DType;
use super::problem::Problem;
use crate::GemmError;
pub use crate::ptx::Arch;
use crate::runtime::tensor_map::{self, MapElement, MatrixView};
use crate::runtime::transpose::TransposeSource;
use gemm_geometry as geometry;

/// What dispatch needs to know about the device and the loaded module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceCaps {
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: usize,
    /// The most dynamic shared memory one block may opt in to, in bytes.
    pub max_shared_per_block: usize,
    /// The kernel entry points the loaded PTX holds.
    pub entries: Vec<String>,
}

/// How a kernel's blocks cover the tiles of C and the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// One block per tile along x (the kernel maps it to a tile in grouped order), batch items
    /// along z (at most 65 535: the kernel walks the rest in steps of the grid).
    Grouped,
    /// Column tiles along x, row tiles along y, batch items along z, y and z capped at 65 535
    /// (the kernel walks the rest in steps of the grid).
    ColumnsRows,
    /// Persistent blocks, at most [`KernelSpec::blocks_per_sm`] per SM, each looping over
    /// (batch item, tile) pairs.
    Persistent,
    /// Thin products: one block per group of the streamed operand's rows or columns along x
    /// (`thin_m`: `block_tile_n` columns of C; `thin_n`: `block_tile_m` rows), batch items
    /// along z (at most 65 535: the kernel walks the rest in steps of the grid).
    Thin,
    /// As [`GridKind::Thin`] for `thin_m`, with blocks of
    /// [`kn_column_warps`](gemm_geometry::thin::kn_column_warps)`(n) · block_tile_n` columns of
    /// C (the tensor-core column body, which reads the width back from its grid).
    ThinWideColumns,
}

/// Which shapes a kernel serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeClass {
    /// Every shape.
    Any,
    /// Only m ≤ [`THIN_MAX`](gemm_geometry::thin::THIN_MAX) (C has at most that many rows).
    ThinM,
    /// Only n ≤ [`THIN_MAX`](gemm_geometry::thin::THIN_MAX) (C has at most that many
    /// columns).
    ThinN,
    /// Only m ≤ [`WIDE_MAX`](gemm_geometry::thin::WIDE_MAX) (the wide thin kernels, B
    /// `[n, k]`: `thin_m16` in f32, `thin_m16_mma` in fp16/bf16).
    WideThinM,
}

impl ShapeClass {
    /// Why a kernel of this class cannot serve `problem`, or `None` if it can.
    pub fn refusal(self, problem: &Problem) -> Option<String> {
        use geometry::thin::{THIN_MAX, WIDE_MAX};
        // The side of C the class bounds, its length, and the bound.
        let (side, length, max) = match self {
            ShapeClass::Any => return None,
            ShapeClass::ThinM => ("m", problem.m, THIN_MAX),
            ShapeClass::WideThinM => ("m", problem.m, WIDE_MAX),
            ShapeClass::ThinN => ("n", problem.n, THIN_MAX),
        };
        (length > max as usize)
            .then(|| format!("serves only thin products with {side} ≤ {max} ({side} is {length})"))
    }
}

/// Which matrices a kernel's [`KernelSpec::row_alignment`] applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignedMatrices {
    /// A, B and C ([`Problem::rows_aligned_to`]).
    All,
    /// A and B only, and only the leading dimension of one with more than one row
    /// ([`Problem::input_rows_aligned_to`]): the kernel's stores of C take any alignment of
    /// its element type.
    Inputs,
    /// B only ([`Problem::b_rows_aligned_to`]): v13's K-major entries, which copy B 16 bytes
    /// at a time and A 4 bytes at a time, and adapt their stores of C at run time.
    B,
}

/// One kernel the library can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Name in plans and for [`crate::MatmulDesc::kernel`] (the ladder rung it comes from, or
    /// `general`).
    pub name: &'static str,
    /// Entry point in the PTX.
    pub entry: &'static str,
    /// Element type and arithmetic.
    pub dtype: DType,
    /// B's layout.
    pub b_layout: BLayout,
    /// The architecture it needs.
    pub arch: Arch,
    /// Bytes every row start must be aligned to (base addresses, leading dimensions and batch
    /// strides; see [`Problem::rows_aligned_to`]); 0 for none beyond the element's own.
    pub row_alignment: usize,
    /// Which matrices `row_alignment` applies to.
    pub aligned: AlignedMatrices,
    /// Whether it reads A and B through TMA tensor maps that the host builds.
    pub tensor_maps: bool,
    /// Threads per block.
    pub threads: u32,
    /// Rows of C per block tile.
    pub block_tile_m: u32,
    /// Columns of C per block tile.
    pub block_tile_n: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// How blocks cover the work.
    pub grid: GridKind,
    /// Which shapes it serves.
    pub shape: ShapeClass,
    /// Whether it computes slices of k into a workspace when `GemmArgs::splits` > 1
    /// (`gemm_geometry::split_k`), so that dispatch may split a product whose tiles cannot fill
    /// the device.
    pub split_k: bool,
    /// Whether dispatch splits k by itself ([`auto_split`]) when the kernel has `split_k`; a
    /// split asked for with `MatmulDesc::split_k` runs either way. `v18_m64` only takes forced
    /// splits: its 64 × 64 tiles exist to fill the device without one, and split in four at
    /// 64 × 4096 × 4096 it ran 1.3–1.4× slower than unsplit on the H100 (fp16,
    /// `docs/results/v18-m64`: 0.62–0.69 of cuBLAS against 0.82–0.85).
    pub auto_split: bool,
    /// Whether it computes a tail of its work items in shares of k handed from block to block
    /// when `GemmArgs::stream_k_tiles` > 0 (`gemm_geometry::stream_k`): `v18_m64`, whose
    /// persistent grid is the device's block slots (see [`stream_k_tiles`]). v18 and v19 run
    /// the same body but without a tail (`tma_gemm::STREAM_K_MAX_ACC`: it spilled there).
    pub stream_k: bool,
    /// Blocks of this kernel that fit on one SM (its launch bounds' minimum): with the SM
    /// count, how many tiles fill the device once.
    pub blocks_per_sm: u32,
    /// Whether the host first copies B transposed into a scratch buffer and the kernel reads
    /// that copy, in the other layout ([`kernel_problem`]): v19 (TF32 `wgmma`, which reads B
    /// only K-major) on B `[k, n]`, and `v13_m64_via_kn` (f32) on B `[n, k]`.
    pub copies_b_transposed: bool,
    /// Its arithmetic rate per SM, in GFLOP/s, measured at 4096³ on the H100 (the ladder's
    /// table: the rate over 132 SMs), counting every multiply-add of its full tiles: what
    /// [`auto_split`]'s cost model divides the work by. 0 where the model is not used (the
    /// thin kernels: the one that splits k is split by `thin_split`'s count of its blocks).
    pub gflops_per_sm: u32,
}

/// The general kernels: any alignment, any shape.
const fn general(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    use geometry::general as g;
    let tile = (g::BLOCK_TILE_M, g::BLOCK_TILE_N);
    let (threads, shared, blocks) = (g::THREADS, g::SHARED_BYTES, g::MIN_BLOCKS_PER_SM);
    any_alignment(
        "general",
        entry,
        dtype,
        b_layout,
        (threads, tile, shared, blocks),
        GENERAL_GFLOPS_PER_SM,
    )
}

/// The general tensor-core kernels (fp16, bf16): any alignment, any shape, 64×64 tiles.
/// `blocks_per_sm` is the sm_90a module's (the portable one runs 3 per SM): the split-K
/// model's wave.
const fn general_mma(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    use geometry::general_mma as g;
    let tile = (g::BLOCK_TILE_M, g::BLOCK_TILE_N);
    let (threads, shared, blocks) = (g::THREADS, g::SHARED_BYTES, g::MIN_BLOCKS_PER_SM);
    any_alignment(
        "general_mma",
        entry,
        dtype,
        b_layout,
        (threads, tile, shared, blocks),
        GENERAL_MMA_GFLOPS_PER_SM,
    )
}

/// A kernel with no alignment needs beyond the element's, launched over (columns, rows, items)
/// (`GridKind::ColumnsRows`), that splits k: `launch` is (threads, block tile, shared bytes,
/// blocks per SM).
const fn any_alignment(
    name: &'static str,
    entry: &'static str,
    dtype: DType,
    b_layout: BLayout,
    launch: (u32, (u32, u32), u32, u32),
    gflops_per_sm: u32,
) -> KernelSpec {
    let (threads, (block_tile_m, block_tile_n), shared_bytes, blocks_per_sm) = launch;
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        aligned: AlignedMatrices::All,
        tensor_maps: false,
        threads,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid: GridKind::ColumnsRows,
        shape: ShapeClass::Any,
        split_k: true,
        auto_split: true,
        stream_k: false,
        blocks_per_sm,
        copies_b_transposed: false,
        gflops_per_sm,
    }
}

/// A kernel of the ladder's geometry: grouped tiles, no alignment needs beyond the element's
/// (its copies and stores pick their width from the arguments at run time).
#[allow(clippy::too_many_arguments)]
const fn ladder(
    name: &'static str,
    entry: &'static str,
    dtype: DType,
    b_layout: BLayout,
    threads: u32,
    (block_tile_m, block_tile_n): (u32, u32),
    shared_bytes: u32,
    blocks_per_sm: u32,
    gflops_per_sm: u32,
    split_k: bool,
) -> KernelSpec {
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        aligned: AlignedMatrices::All,
        tensor_maps: false,
        threads,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid: GridKind::Grouped,
        shape: ShapeClass::Any,
        split_k,
        auto_split: split_k,
        stream_k: false,
        blocks_per_sm,
        copies_b_transposed: false,
        gflops_per_sm,
    }
}

/// v13's 64- or 32-row variant (`name`) on B `[n, k]` staged K-major: B copied as it is
/// stored, 16 bytes at a time (`kernels-gpu/src/k_major_b.rs`), which needs B's rows on 16-byte
/// boundaries; otherwise its sibling with transposing 4-byte copies runs.
const fn v13_k_major(
    name: &'static str,
    entry: &'static str,
    threads: u32,
    tile: (u32, u32),
    shared_bytes: u32,
    blocks_per_sm: u32,
) -> KernelSpec {
    KernelSpec {
        row_alignment: 16,
        aligned: AlignedMatrices::B,
        ..ladder(
            name,
            entry,
            DType::F32,
            BLayout::Nk,
            threads,
            tile,
            shared_bytes,
            blocks_per_sm,
            V13_GFLOPS_PER_SM,
            true,
        )
    }
}

/// The name of the v13 variant `spec` is, whichever way it copies B: v13's K-major entries
/// (`v13_m64_kmajor`, `v13_m32_kmajor`) follow the rules measured for the variant of the
/// same tiles.
fn v13_tiles_name(spec: &KernelSpec) -> &'static str {
    match spec.name.strip_suffix("_kmajor") {
        Some(name @ ("v13_m64" | "v13_m32")) => name,
        _ => spec.name,
    }
}

/// v18's persistent TMA + `wgmma` kernel (sm_90a): A and B through tensor maps. The TF32
/// instance (`v19`) has the same block, tiles and shared memory (`gemm_geometry::v19`
/// re-exports v17's); only its rate differs.
const fn tma(
    name: &'static str,
    entry: &'static str,
    dtype: DType,
    b_layout: BLayout,
    gflops_per_sm: u32,
) -> KernelSpec {
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm90a,
        // TMA reads rows that start on 16-byte boundaries. C is written with ordinary stores
        // that adapt to its alignment at run time (four 16-bit elements per store on 8-byte
        // aligned rows, pairs on 4-byte ones, else one by one), so it may start anywhere its
        // element type allows.
        row_alignment: 16,
        aligned: AlignedMatrices::Inputs,
        tensor_maps: true,
        threads: geometry::v17::THREADS,
        block_tile_m: geometry::v17::BLOCK_TILE_M,
        block_tile_n: geometry::v17::BLOCK_TILE_N,
        shared_bytes: geometry::v17::SHARED_BYTES,
        grid: GridKind::Persistent,
        shape: ShapeClass::Any,
        split_k: true,
        auto_split: true,
        stream_k: false,
        blocks_per_sm: geometry::v17::MIN_BLOCKS_PER_SM,
        // TF32 `wgmma` reads B only K-major: B `[k, n]` is copied first.
        copies_b_transposed: matches!(dtype, DType::Tf32) && matches!(b_layout, BLayout::Kn),
        gflops_per_sm,
    }
}

/// The small-tile entries of v18's body (`gemm_v18_m64_*`, sm_90a, fp16 and bf16): 64 × 64
/// tiles, one consumer warpgroup, two blocks per SM (`gemm_geometry::v18_m64`); v18's
/// alignment rules and tensor maps (with boxes of its tiles, [`tensor_map_views`]).
const fn tma_m64(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    use geometry::v18_m64 as g;
    KernelSpec {
        name: "v18_m64",
        threads: g::THREADS,
        block_tile_m: g::BLOCK_TILE_M,
        block_tile_n: g::BLOCK_TILE_N,
        shared_bytes: g::SHARED_BYTES,
        blocks_per_sm: g::MIN_BLOCKS_PER_SM,
        auto_split: false,
        stream_k: true,
        ..tma("v18_m64", entry, dtype, b_layout, V18_M64_GFLOPS_PER_SM)
    }
}

/// The mid-size entries of v18's body (`gemm_v18_n128_*`, sm_90a, fp16 and bf16): 128 × 128
/// tiles, v18's two consumer warpgroups and producer warp, one block per SM
/// (`gemm_geometry::v18_n128`); v18's alignment rules and tensor maps (with boxes of its
/// tiles, [`tensor_map_views`]). It splits k only when asked: dispatch takes it where its finer
/// waves beat v18's as v18 would run ([`mid_tiles_passed_over`]).
const fn tma_n128(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    use geometry::v18_n128 as g;
    KernelSpec {
        name: "v18_n128",
        threads: g::THREADS,
        block_tile_m: g::BLOCK_TILE_M,
        block_tile_n: g::BLOCK_TILE_N,
        shared_bytes: g::SHARED_BYTES,
        blocks_per_sm: g::MIN_BLOCKS_PER_SM,
        auto_split: false,
        ..tma("v18_n128", entry, dtype, b_layout, V18_N128_GFLOPS_PER_SM)
    }
}

/// A thin-product kernel (`kernels-gpu/src/thin.rs`, geometry in `gemm_geometry::thin`): no
/// alignment needs (each kernel takes its 16-byte loads only where the arguments allow them),
/// compute capability 8.0. `dtype` is the call's element type (f32 and TF32 calls both run the
/// exact f32 entries); the tile along the streamed operand is what one block covers.
const fn thin(
    entry: &'static str,
    dtype: DType,
    b_layout: BLayout,
    shape: ShapeClass,
) -> KernelSpec {
    use geometry::thin;
    let element_bytes = match dtype {
        DType::F32 | DType::Tf32 => 4,
        DType::F16 | DType::Bf16 => 2,
    };
    // The dot-rows body serves every pair but thin_m with B [k, n] (column slices).
    let dot_blocks = thin::MIN_BLOCKS_PER_SM;
    let column_slices = matches!(shape, ShapeClass::ThinM) && matches!(b_layout, BLayout::Kn);
    let (name, block_tile_m, block_tile_n, shared_bytes, blocks_per_sm) = match (shape, b_layout) {
        (ShapeClass::ThinN, BLayout::Kn) => (
            "thin_n",
            thin::DOT_ROWS_PER_BLOCK,
            thin::THIN_MAX,
            thin::STAGED_SHARED_BYTES,
            dot_blocks,
        ),
        (ShapeClass::ThinN, BLayout::Nk) => (
            "thin_n",
            thin::DOT_ROWS_PER_BLOCK,
            thin::THIN_MAX,
            0,
            dot_blocks,
        ),
        (_, BLayout::Kn) => (
            "thin_m",
            thin::THIN_MAX,
            thin::kn_block_columns(element_bytes),
            thin::KN_SHARED_BYTES,
            thin::kn_min_blocks_per_sm(element_bytes),
        ),
        // B [n, k] only: the wide column body was not built (thin_m16_mma's lost to v18).
        (ShapeClass::WideThinM, _) => (
            "thin_m16",
            thin::WIDE_MAX,
            thin::WIDE_DOT_ROWS_PER_BLOCK,
            0,
            dot_blocks,
        ),
        (_, BLayout::Nk) => (
            "thin_m",
            thin::THIN_MAX,
            thin::DOT_ROWS_PER_BLOCK,
            0,
            dot_blocks,
        ),
    };
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        aligned: AlignedMatrices::All,
        tensor_maps: false,
        threads: thin::THREADS,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid: GridKind::Thin,
        shape,
        // Only the column-slices body (thin_m, B [k, n]) splits k; dispatch splits it by
        // itself for f32 and TF32 calls only (measured there), see `thin_split`.
        split_k: column_slices,
        auto_split: column_slices && element_bytes == 4,
        stream_k: false,
        blocks_per_sm,
        copies_b_transposed: false,
        gflops_per_sm: 0,
    }
}

/// A short-rows thin kernel (`kernels-gpu/src/thin_rows.rs`, geometry in
/// `gemm_geometry::thin`, `ROWS_*`): n ≤ [`THIN_MAX`](gemm_geometry::thin::THIN_MAX), one row
/// of A per thread, k staged in slices of 32; no alignment needs, compute capability 8.0.
/// Listed before the FMA `thin_n` kernel; [`passed_over`] keeps it to k ≤ [`SHORT_K`].
const fn thin_rows(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    use geometry::thin;
    KernelSpec {
        name: "thin_n_rows",
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        aligned: AlignedMatrices::All,
        tensor_maps: false,
        threads: thin::THREADS,
        block_tile_m: thin::ROWS_PER_BLOCK,
        block_tile_n: thin::THIN_MAX,
        shared_bytes: thin::ROWS_SHARED_BYTES,
        grid: GridKind::Thin,
        shape: ShapeClass::ThinN,
        split_k: false,
        auto_split: false,
        stream_k: false,
        blocks_per_sm: thin::ROWS_MIN_BLOCKS_PER_SM,
        copies_b_transposed: false,
        gflops_per_sm: 0,
    }
}

/// A tensor-core thin-product kernel (`kernels-gpu/src/thin_mma.rs`, geometry in
/// `gemm_geometry::thin`, `MMA_*`): fp16 and bf16, rows of A and B on 16-byte boundaries (C
/// is stored element by element), compute capability 8.0. Listed before the FMA thin kernels
/// of the same family, which take the calls it refuses.
const fn thin_mma(
    entry: &'static str,
    dtype: DType,
    b_layout: BLayout,
    shape: ShapeClass,
) -> KernelSpec {
    use geometry::thin;
    let column_body = matches!(shape, ShapeClass::ThinM) && matches!(b_layout, BLayout::Kn);
    let (name, block_tile_m, block_tile_n, shared_bytes, grid) = match (shape, b_layout) {
        (ShapeClass::ThinN, _) => (
            "thin_n_mma",
            thin::MMA_DOT_ROWS,
            thin::THIN_MAX,
            thin::MMA_DOT_SHARED_BYTES,
            GridKind::Thin,
        ),
        // B [n, k] only: there is no wide column body.
        (ShapeClass::WideThinM, _) => (
            "thin_m16_mma",
            thin::WIDE_MAX,
            thin::MMA_DOT_ROWS,
            thin::MMA_WIDE_DOT_SHARED_BYTES,
            GridKind::Thin,
        ),
        // The column body: blocks widen along n where n allows.
        (_, BLayout::Kn) => (
            "thin_m_mma",
            thin::THIN_MAX,
            thin::MMA_KN_COLUMNS,
            thin::MMA_KN_SHARED_BYTES,
            GridKind::ThinWideColumns,
        ),
        (_, BLayout::Nk) => (
            "thin_m_mma",
            thin::THIN_MAX,
            thin::MMA_DOT_ROWS,
            thin::MMA_DOT_SHARED_BYTES,
            GridKind::Thin,
        ),
    };
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 16,
        aligned: AlignedMatrices::Inputs,
        tensor_maps: false,
        threads: thin::MMA_THREADS,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid,
        shape,
        // Only the column body (thin_m, B [k, n]) splits k, and dispatch splits it by itself
        // where its column blocks leave most block slots idle (`thin_split`).
        split_k: column_body,
        auto_split: column_body,
        stream_k: false,
        blocks_per_sm: thin::MMA_MIN_BLOCKS_PER_SM,
        copies_b_transposed: false,
        gflops_per_sm: 0,
    }
}

// Arithmetic rates per SM (GFLOP/s), from the ladder's H100 run at 4096³ (README, build
// 90120309; `docs/results/h100-ladder`) over its 132 SMs: v13 46 441, v14 148 535, v15 466 337,
// v18 676 266 GFLOP/s. The general kernel has no rung: its rate is from the shape suite's
// forced run at 4096³ fp16 (`docs/results/h100-split-k`, `general-rate`): 13 284 GFLOP/s.
const V13_GFLOPS_PER_SM: u32 = 352;
const V14_GFLOPS_PER_SM: u32 = 1125;
const V15_GFLOPS_PER_SM: u32 = 3533;
const V18_GFLOPS_PER_SM: u32 = 5123;
// v18_m64 (64 × 64 tiles of v18's body), forced over the fp16 suite's layers on the H100
// (`docs/results/v18-m64`, run 1): 307 TFLOP/s at 256×4096×4096 and 266 TFLOP/s at the
// compute-bound 1024×8192×28672, 2 015–2 326 GFLOP/s per SM; its small tiles read twice
// v18's bytes of shared memory per multiply-add, which caps it far below v18.
const V18_M64_GFLOPS_PER_SM: u32 = 2300;
// v18_n128 (128 × 128 tiles of v18's body): v18's rate times 0.865, their ratio at 4096³
// forced on the H200 in the same build (217.9 µs against v18's 188.4, fp16,
// `docs/results/v18-n128`, run 1): each stage's B tile serves half as many multiply-adds.
const V18_N128_GFLOPS_PER_SM: u32 = 4400;
// v19 (TF32 `wgmma`), the kernel alone (B `[n, k]`, no copy): 343 TFLOP/s at 4096³ through
// the library (`docs/results/h100-tf32-wgmma`, `copy-cost`); the copy is costed apart.
const V19_GFLOPS_PER_SM: u32 = 2600;

/// The TF32 `wgmma` entry, for both B layouts (B `[k, n]` through a transposed copy).
const V19_ENTRY: &str = "gemm_v19_tf32_nk";
/// v14's TF32 entry for B `[k, n]`, what a transposed copy for v19 must beat.
const V14_KN_ENTRY: &str = "gemm_v14_tf32_kn";
const GENERAL_GFLOPS_PER_SM: u32 = 100;
/// `general_mma`: 95.0 TFLOP/s at 4096³ fp16 forced on the H100 over 132 SMs
/// (`docs/results/general-mma`).
const GENERAL_MMA_GFLOPS_PER_SM: u32 = 720;

const V13_TILE: (u32, u32) = (geometry::v13::BLOCK_TILE_M, geometry::v13::BLOCK_TILE_N);
const V13_M64_TILE: (u32, u32) = (geometry::v13::M64_BLOCK_TILE_M, geometry::v13::BLOCK_TILE_N);
const V13_M32_TILE: (u32, u32) = (geometry::v13::M32_BLOCK_TILE_M, geometry::v13::BLOCK_TILE_N);
const V15_TILE: (u32, u32) = (geometry::v15::BLOCK_TILE_M, geometry::v15::BLOCK_TILE_N);
const V14_TILE: (u32, u32) = (geometry::v14::BLOCK_TILE_M, geometry::v14::BLOCK_TILE_N);

/// v13's 64-row variant on f32 with B `[k, n]`: its own entry in [`KERNELS`], and the kernel
/// `v13_m64_via_kn` runs on a `[k, n]` copy of B `[n, k]`.
const V13_M64_F32_KN: KernelSpec = ladder(
    "v13_m64",
    "gemm_v13_m64_f32_kn",
    DType::F32,
    BLayout::Kn,
    geometry::v13::M64_THREADS,
    V13_M64_TILE,
    geometry::v13::M64_SHARED_BYTES_KN,
    geometry::v13::M64_MIN_BLOCKS_PER_SM,
    V13_GFLOPS_PER_SM,
    true,
);

/// Every kernel, fastest first within each (element type, B layout).
pub const KERNELS: &[KernelSpec] = &[
    thin(
        "gemm_thin_m_f32_kn",
        DType::F32,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin_rows("gemm_thin_n_rows_f32_kn", DType::F32, BLayout::Kn),
    thin(
        "gemm_thin_n_f32_kn",
        DType::F32,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_f32_nk",
        DType::F32,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_m16_f32_nk",
        DType::F32,
        BLayout::Nk,
        ShapeClass::WideThinM,
    ),
    thin_rows("gemm_thin_n_rows_f32_nk", DType::F32, BLayout::Nk),
    thin(
        "gemm_thin_n_f32_nk",
        DType::F32,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    ladder(
        "v13_m32",
        "gemm_v13_m32_f32_kn",
        DType::F32,
        BLayout::Kn,
        geometry::v13::M32_THREADS,
        V13_M32_TILE,
        geometry::v13::M32_SHARED_BYTES_KN,
        geometry::v13::M32_MIN_BLOCKS_PER_SM,
        V13_GFLOPS_PER_SM,
        true,
    ),
    V13_M64_F32_KN,
    ladder(
        "v13",
        "gemm_v13_f32_kn",
        DType::F32,
        BLayout::Kn,
        geometry::v13::THREADS,
        V13_TILE,
        geometry::v13::SHARED_BYTES_KN,
        geometry::v13::MIN_BLOCKS_PER_SM,
        V13_GFLOPS_PER_SM,
        true,
    ),
    // B `[n, k]` copied to `[k, n]` first, then v13_m64's `[k, n]` kernel: v13's transposing
    // 4-byte copies of a `[n, k]` B cost it ~15% at large shapes (`copies_b_transposed`;
    // passed over where the copy does not pay, see `passed_over`).
    KernelSpec {
        name: "v13_m64_via_kn",
        b_layout: BLayout::Nk,
        copies_b_transposed: true,
        ..V13_M64_F32_KN
    },
    v13_k_major(
        "v13_m32_kmajor",
        "gemm_v13_m32_f32_nk_kmajor",
        geometry::v13::M32_THREADS,
        V13_M32_TILE,
        geometry::v13::M32_SHARED_BYTES_NK_KMAJOR,
        geometry::v13::M32_MIN_BLOCKS_PER_SM,
    ),
    v13_k_major(
        "v13_m64_kmajor",
        "gemm_v13_m64_f32_nk_kmajor",
        geometry::v13::M64_THREADS,
        V13_M64_TILE,
        geometry::v13::M64_SHARED_BYTES_NK_KMAJOR,
        geometry::v13::M64_K_MAJOR_MIN_BLOCKS_PER_SM,
    ),
    ladder(
        "v13_m32",
        "gemm_v13_m32_f32_nk",
        DType::F32,
        BLayout::Nk,
        geometry::v13::M32_THREADS,
        V13_M32_TILE,
        geometry::v13::M32_SHARED_BYTES_NK,
        geometry::v13::M32_MIN_BLOCKS_PER_SM,
        V13_GFLOPS_PER_SM,
        true,
    ),
    ladder(
        "v13_m64",
        "gemm_v13_m64_f32_nk",
        DType::F32,
        BLayout::Nk,
        geometry::v13::M64_THREADS,
        V13_M64_TILE,
        geometry::v13::M64_SHARED_BYTES_NK,
        geometry::v13::M64_MIN_BLOCKS_PER_SM,
        V13_GFLOPS_PER_SM,
        true,
    ),
    ladder(
        "v13",
        "gemm_v13_f32_nk",
        DType::F32,
        BLayout::Nk,
        geometry::v13::THREADS,
        V13_TILE,
        geometry::v13::SHARED_BYTES_NK,
        geometry::v13::MIN_BLOCKS_PER_SM,
        V13_GFLOPS_PER_SM,
        true,
    ),
    general("gemm_general_f32_kn", DType::F32, BLayout::Kn),
    general("gemm_general_f32_nk", DType::F32, BLayout::Nk),
    // TF32 calls: the exact f32 thin kernels (memory-bound: exactness costs nothing).
    thin(
        "gemm_thin_m_f32_kn",
        DType::Tf32,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_n_f32_kn",
        DType::Tf32,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_f32_nk",
        DType::Tf32,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_m16_f32_nk",
        DType::Tf32,
        BLayout::Nk,
        ShapeClass::WideThinM,
    ),
    thin(
        "gemm_thin_n_f32_nk",
        DType::Tf32,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    // TF32 on `wgmma` (B `[n, k]` only): a `[k, n]` B is first copied transposed
    // (`KernelSpec::transposes_b`), where the cost model says the copy pays.
    tma(
        "v19",
        V19_ENTRY,
        DType::Tf32,
        BLayout::Kn,
        V19_GFLOPS_PER_SM,
    ),
    tma(
        "v19",
        V19_ENTRY,
        DType::Tf32,
        BLayout::Nk,
        V19_GFLOPS_PER_SM,
    ),
    ladder(
        "v14",
        V14_KN_ENTRY,
        DType::Tf32,
        BLayout::Kn,
        geometry::v14::THREADS,
        V14_TILE,
        geometry::v14::SHARED_BYTES_KN,
        geometry::v14::MIN_BLOCKS_PER_SM,
        V14_GFLOPS_PER_SM,
        true,
    ),
    ladder(
        "v14",
        "gemm_v14_tf32_nk",
        DType::Tf32,
        BLayout::Nk,
        geometry::v14::THREADS,
        V14_TILE,
        geometry::v14::SHARED_BYTES_NK,
        geometry::v14::MIN_BLOCKS_PER_SM,
        V14_GFLOPS_PER_SM,
        true,
    ),
    // Where v14 cannot run, exact fp32: more precise than TF32, never less.
    general("gemm_general_f32_kn", DType::Tf32, BLayout::Kn),
    general("gemm_general_f32_nk", DType::Tf32, BLayout::Nk),
    thin_mma(
        "gemm_thin_m_mma_f16_kn",
        DType::F16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_m_f16_kn",
        DType::F16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin_rows("gemm_thin_n_rows_f16_kn", DType::F16, BLayout::Kn),
    thin(
        "gemm_thin_n_f16_kn",
        DType::F16,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin_mma(
        "gemm_thin_m_mma_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin_mma(
        "gemm_thin_m16_mma_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::WideThinM,
    ),
    thin_mma(
        "gemm_thin_n_mma_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin_rows("gemm_thin_n_rows_f16_nk", DType::F16, BLayout::Nk),
    thin(
        "gemm_thin_n_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    thin_mma(
        "gemm_thin_m_mma_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_m_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin_rows("gemm_thin_n_rows_bf16_kn", DType::Bf16, BLayout::Kn),
    thin(
        "gemm_thin_n_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin_mma(
        "gemm_thin_m_mma_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin_mma(
        "gemm_thin_m16_mma_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::WideThinM,
    ),
    thin_mma(
        "gemm_thin_n_mma_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin_rows("gemm_thin_n_rows_bf16_nk", DType::Bf16, BLayout::Nk),
    thin(
        "gemm_thin_n_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    tma_m64("gemm_v18_m64_f16_kn", DType::F16, BLayout::Kn),
    tma_n128("gemm_v18_n128_f16_kn", DType::F16, BLayout::Kn),
    tma(
        "v18",
        "gemm_v18_f16_kn",
        DType::F16,
        BLayout::Kn,
        V18_GFLOPS_PER_SM,
    ),
    tma_m64("gemm_v18_m64_f16_nk", DType::F16, BLayout::Nk),
    tma_n128("gemm_v18_n128_f16_nk", DType::F16, BLayout::Nk),
    tma(
        "v18",
        "gemm_v18_f16_nk",
        DType::F16,
        BLayout::Nk,
        V18_GFLOPS_PER_SM,
    ),
    tma_m64("gemm_v18_m64_bf16_kn", DType::Bf16, BLayout::Kn),
    tma_n128("gemm_v18_n128_bf16_kn", DType::Bf16, BLayout::Kn),
    tma(
        "v18",
        "gemm_v18_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        V18_GFLOPS_PER_SM,
    ),
    tma_m64("gemm_v18_m64_bf16_nk", DType::Bf16, BLayout::Nk),
    tma_n128("gemm_v18_n128_bf16_nk", DType::Bf16, BLayout::Nk),
    tma(
        "v18",
        "gemm_v18_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        V18_GFLOPS_PER_SM,
    ),
    ladder(
        "v15",
        "gemm_v15_f16_kn",
        DType::F16,
        BLayout::Kn,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
        geometry::v15::MIN_BLOCKS,
        V15_GFLOPS_PER_SM,
        true,
    ),
    general_mma("gemm_general_mma_f16_kn", DType::F16, BLayout::Kn),
    general("gemm_general_f16_kn", DType::F16, BLayout::Kn),
    ladder(
        "v15",
        "gemm_v15_f16_nk",
        DType::F16,
        BLayout::Nk,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
        geometry::v15::MIN_BLOCKS,
        V15_GFLOPS_PER_SM,
        true,
    ),
    general_mma("gemm_general_mma_f16_nk", DType::F16, BLayout::Nk),
    general("gemm_general_f16_nk", DType::F16, BLayout::Nk),
    ladder(
        "v15",
        "gemm_v15_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
        geometry::v15::MIN_BLOCKS,
        V15_GFLOPS_PER_SM,
        true,
    ),
    general_mma("gemm_general_mma_bf16_kn", DType::Bf16, BLayout::Kn),
    general("gemm_general_bf16_kn", DType::Bf16, BLayout::Kn),
    ladder(
        "v15",
        "gemm_v15_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
        geometry::v15::MIN_BLOCKS,
        V15_GFLOPS_PER_SM,
        true,
    ),
    general_mma("gemm_general_mma_bf16_nk", DType::Bf16, BLayout::Nk),
    general("gemm_general_bf16_nk", DType::Bf16, BLayout::Nk),
];

impl KernelSpec {
    /// Whether `problem`'s rows meet [`KernelSpec::row_alignment`] where
    /// [`KernelSpec::aligned`] says it applies.
    pub fn rows_aligned(&self, problem: &Problem) -> bool {
        self.row_alignment == 0
            || match self.aligned {
                AlignedMatrices::All => problem.rows_aligned_to(self.row_alignment),
                AlignedMatrices::Inputs => problem.input_rows_aligned_to(self.row_alignment),
                AlignedMatrices::B => problem.b_rows_aligned_to(self.row_alignment),
            }
    }

    /// Whether the host first copies B transposed into a scratch copy of the other layout and
    /// the kernel reads that ([`KernelSpec::copies_b_transposed`]): the TF32 `wgmma` kernel
    /// v19, which reads B only K-major, on a call with B `[k, n]`, and `v13_m64_via_kn` on an
    /// f32 call with B `[n, k]`. The kernel then sees [`kernel_problem`].
    pub fn transposes_b(&self) -> bool {
        self.copies_b_transposed
    }
}

/// What a kernel that [transposes B](KernelSpec::transposes_b) copies: `problem`'s B as it is
/// stored (`k` rows of `n` for B `[k, n]`, `n` rows of `k` for B `[n, k]`), every batch item
/// (only item 0 when B is shared by the batch, stride 0).
pub fn transpose_source(problem: &Problem) -> TransposeSource {
    let shared = problem.batch == 1 || problem.strides.1 == 0;
    let (rows, cols) = match problem.b_layout {
        BLayout::Kn => (problem.k, problem.n),
        BLayout::Nk => (problem.n, problem.k),
    };
    TransposeSource {
        address: problem.buffers.b.0,
        rows,
        cols,
        ld: problem.ldb,
        batch: if shared { 1 } else { problem.batch },
        stride: if shared { 0 } else { problem.strides.1 },
    }
}

/// What `spec`'s kernel reads: `problem` itself, or, for a kernel that
/// [transposes B](KernelSpec::transposes_b), `problem` with B replaced by its copy in the
/// other layout at `copy_address` (`[n, k]` with leading dimension k rounded up to 4, or
/// `[k, n]` with n rounded up to 4; items packed).
pub fn kernel_problem(spec: &KernelSpec, problem: &Problem, copy_address: u64) -> Problem {
    if !spec.transposes_b() {
        return *problem;
    }
    let source = transpose_source(problem);
    let mut copy = *problem;
    copy.b_layout = match problem.b_layout {
        BLayout::Kn => BLayout::Nk,
        BLayout::Nk => BLayout::Kn,
    };
    copy.ldb = source.copy_ld();
    copy.strides.1 = if source.batch > 1 {
        source.copy_item()
    } else {
        0
    };
    copy.buffers.b = (copy_address, source.copy_item() * source.batch);
    copy
}

/// The kernel chosen for a call, and the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The kernel.
    pub kernel: &'static KernelSpec,
    /// Why it was chosen: the faster kernels passed over, each with its reason.
    pub reason: String,
    /// Blocks along x, y and z.
    pub grid: (u32, u32, u32),
    /// Split-K slices of k (1: none). With more, the kernel writes the slices into the
    /// `Gemm`'s workspace and [`Plan::reduction`] finishes C.
    pub splits: u32,
    /// The length of every slice of k but the last (0 without a split).
    pub k_chunk: u32,
    /// Stream-K: the last work items computed in shares of k handed from block to block
    /// (0: none; never with a split). The kernel then uses the `Gemm`'s stream-K workspace.
    pub stream_k_tiles: u32,
}

impl Plan {
    /// The reduction kernel's entry point, when the plan splits k.
    pub fn reduction(&self) -> Option<&'static str> {
        (self.splits > 1).then(|| reduction_entry(self.kernel.dtype))
    }
}

/// The split-K reduction entries (`kernels-gpu/src/split_k.rs`), in every module: for f32
/// (and TF32), fp16 and bf16 C.
pub const REDUCTION_ENTRIES: [&str; 3] = [
    "gemm_split_k_reduce_f32",
    "gemm_split_k_reduce_f16",
    "gemm_split_k_reduce_bf16",
];

/// The split-K reduction entry that finishes C of element type `dtype`.
pub fn reduction_entry(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 | DType::Tf32 => REDUCTION_ENTRIES[0],
        DType::F16 => REDUCTION_ENTRIES[1],
        DType::Bf16 => REDUCTION_ENTRIES[2],
    }
}

/// The most workspace a split may take, in bytes: a split that needs more is not made.
pub const MAX_WORKSPACE_BYTES: u64 = 256 << 20;

/// Each slice of an automatic split covers at least this much of k: shorter slices spend
/// more on filling the pipeline and on the workspace than they gain. Two granules (128): at
/// 4097 × 31 × 513, whose 65 tiles of `general_mma` fill an eighth of an H200, three slices
/// of 192 took 18.4–19.7 µs where two (the most that slices of at least 256 allowed) took
/// 23.6–26.4 µs, fp16 and f32 alike (`docs/results/ragged-probe`, run 1). Only products with
/// few tiles and k under 256 · (wave / tiles) split further than before.
pub const MIN_SLICE_K: u32 = 2 * geometry::split_k::K_GRANULE;

/// The split-K slices dispatch chooses for `spec` on `problem`: `(splits, k_chunk)`, `(1, 0)`
/// for none. A kernel that supports split-K (and [`KernelSpec::auto_split`]) splits k when its tiles (over the batch) fill
/// less than one wave of the device, into as many slices as bring them to about one wave,
/// each at least [`MIN_SLICE_K`] long, within [`MAX_WORKSPACE_BYTES`]. Such a product has
/// too few tiles to keep the SMs busy however fast each one is; slices of k are more tiles.
pub fn auto_split(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> (u32, u32) {
    if !spec.split_k
        || !spec.auto_split
        || !caps
            .entries
            .iter()
            .any(|e| e == reduction_entry(spec.dtype))
    {
        return (1, 0);
    }
    if matches!(spec.grid, GridKind::Thin | GridKind::ThinWideColumns) {
        return thin_split(spec, caps, problem);
    }
    let tiles = tile_count(spec, problem);
    let wave = block_slots(spec, caps);
    if tiles == 0 || tiles * 2 > wave {
        return (1, 0);
    }
    let by_k = problem.k as u64 / MIN_SLICE_K as u64;
    let by_workspace =
        MAX_WORKSPACE_BYTES / (4 * (problem.m * problem.n) as u64 * problem.batch as u64).max(1);
    let wanted = (wave / tiles).min(by_k).min(by_workspace);
    let (splits, k_chunk) =
        geometry::split_k::slices(problem.k as u32, wanted.min(u32::MAX as u64) as u32);
    if splits > 1
        && split_seconds(spec, caps, problem, splits) < split_seconds(spec, caps, problem, 1)
    {
        (splits, k_chunk)
    } else {
        (1, 0)
    }
}

/// [`auto_split`] for the thin kernels with B `[k, n]`: the column-slices kernel (`thin_m`,
/// f32 and TF32) and the tensor-core column body (`thin_m_mma`, fp16 and bf16). Where their
/// column blocks (over the batch) fill at most half of their block slots, k is cut into as
/// many slices as fill them (at most one per [`THIN_MIN_SLICE_K`] rows of k), so that the SMs
/// that whole columns of k would leave idle stream B too. Their blocks are bound by memory,
/// not by arithmetic, so the FLOP-based cost model of the tiled kernels does not apply. At
/// 1 × 4096 × k, `thin_m` in f32 has 128 blocks for the H100's and H200's 264 slots: two
/// slices; `thin_m_mma` has as many there, of one warp each, and stays whole (measured, see
/// the body), but splits its 128 two-warp blocks at n = 8192 in two, or in four where k is
/// long enough for slices of [`THIN_LONG_SLICE_K`] rows.
fn thin_split(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> (u32, u32) {
    let blocks = thin_blocks(spec, problem);
    let slots = block_slots(spec, caps);
    if blocks == 0 || blocks * 2 > slots {
        return (1, 0);
    }
    // thin_m_mma with blocks one warp (32 columns) wide and more than a quarter of the slots
    // (n = 2049–4096): whole, it already has a block on about every SM, and split in two it
    // ran 1.0–1.25× slower on the H200 (1 × 4096 × 4096: 17.5–18.8 µs whole, 20.1–22.0 in
    // two slices; k = 11008 and 14336 within noise; `docs/results/ragged-probe`, run 10),
    // where 128 blocks two warps wide (n = 8192) ran 1.03–1.07× faster split in two, and 32–64
    // blocks (n ≤ 2048) 1.1–1.9× faster in four to eight slices.
    let column_warps = u32::try_from(problem.n).map_or(0, geometry::thin::kn_column_warps);
    let wide_columns = spec.grid == GridKind::ThinWideColumns;
    if wide_columns && column_warps == 1 && blocks * 4 > slots {
        return (1, 0);
    }
    let mut wanted = (slots / blocks).min(problem.k as u64 / THIN_MIN_SLICE_K as u64);
    // thin_m_mma with blocks two or more warps wide that two slices bring to one wave (n = 8192:
    // 128 blocks for 264 slots): four slices, two waves, where each keeps THIN_LONG_SLICE_K
    // rows. On the H200 (`docs/results/ragged-probe`, run 18, fp16 and bf16, two seeds each)
    // four ran 1×8192×28672 in 124.8–127.2 µs against two's 132.7–133.0 (88–89% of the copy
    // bandwidth against 84%) and 1×8192×57344 in 256.4–257.3 against 271.2–273.3; at k = 16384
    // and at m = 8 they tied (within 1–3%), and at k = 8192 (slices of 2048) two were faster
    // (40.7–42.5 µs against 43.1–44.1).
    if wide_columns
        && column_warps > 1
        && wanted == 2
        && problem.k as u64 >= 4 * THIN_LONG_SLICE_K as u64
    {
        wanted = 4;
    }
    let (splits, k_chunk) = geometry::split_k::slices(problem.k as u32, wanted as u32);
    if splits > 1 && split_refusal(spec, caps, problem, splits).is_none() {
        (splits, k_chunk)
    } else {
        (1, 0)
    }
}

/// The blocks of a thin kernel's launch over `problem`'s whole batch: its column (or row)
/// blocks, as [`split_grid`] launches them (the tensor-core column body widens its blocks
/// along n, `gemm_geometry::thin::kn_column_warps`).
fn thin_blocks(spec: &KernelSpec, problem: &Problem) -> u64 {
    match (spec.grid, u32::try_from(problem.n)) {
        (GridKind::ThinWideColumns, Ok(n)) => {
            (wide_column_blocks(spec, n) as u64).saturating_mul(problem.batch as u64)
        }
        _ => tile_count(spec, problem),
    }
}

/// The column blocks of a [`GridKind::ThinWideColumns`] launch over `n` columns (grid x):
/// `gemm_geometry::thin::kn_column_warps(n)` warps side by side, `spec.block_tile_n` columns
/// each, per block. The kernel reads its block width back from this grid.
fn wide_column_blocks(spec: &KernelSpec, n: u32) -> u32 {
    n.div_ceil(geometry::thin::kn_column_warps(n) * spec.block_tile_n)
}

/// The fewest rows of k in a slice of `thin_split`: four of the column-slices body's steps
/// of k (`gemm_geometry::thin::KN_STEP_K`, 256 rows), so that a slice's loads are mostly
/// whole steps and its reduction is small beside its stream of B.
pub const THIN_MIN_SLICE_K: u32 = 4 * geometry::thin::KN_STEP_K;

/// The rows of k each slice keeps where `thin_split` doubles the slices of the tensor-core
/// column body's wide blocks (two waves instead of one; measured faster from slices of 4096
/// rows at n = 8192, slower at 2048).
pub const THIN_LONG_SLICE_K: u32 = 4096;

/// The device's block slots for `spec`: SMs times the blocks of it that fit on one SM (at
/// least 1 each), the blocks that run at once: one wave of its tiles, and the grid of its
/// persistent launches.
pub fn block_slots(spec: &KernelSpec, caps: &DeviceCaps) -> u64 {
    (caps.sm_count.max(1) as u64).saturating_mul(spec.blocks_per_sm.max(1) as u64)
}

/// [`block_slots`] as the grid of a stream-K launch, which takes all of them whatever the
/// number of tiles.
fn stream_k_blocks(spec: &KernelSpec, caps: &DeviceCaps) -> u32 {
    block_slots(spec, caps).min(i32::MAX as u64) as u32
}

/// The tiles of `spec` over `problem`'s whole batch (saturating, not wrapping, on overflow).
fn tile_count(spec: &KernelSpec, problem: &Problem) -> u64 {
    (problem.m.div_ceil(spec.block_tile_m as usize) as u64)
        .saturating_mul(problem.n.div_ceil(spec.block_tile_n as usize) as u64)
        .saturating_mul(problem.batch as u64)
}

/// The split-K cost model's DRAM rate of the whole device, in bytes/s per SM (scaled by the
/// SM count): 2.0 TB/s on the H100's 132 SMs, what v18 reaches on the suite's memory-bound
/// layers. With the next two constants, it was fitted to the shape suite's fp16 runs with and
/// without split-K and checked in the run of `docs/results/h100-split-k` (the LLM layers at
/// m = 16, 64, 256): of the 32 cases it splits, 30 ran 1.08–2.42× faster than unsplit and
/// two (16×11008×4096, 3 slices) as fast (0.99×, 1.00×); on the 22 it leaves whole, forcing
/// 2 or 4 slices was never faster (12 measured: 0.72–1.00×), nor on 768³–1408³ and 1000³.
const MODEL_DEVICE_BYTES_PER_SM: f64 = 2.0e12 / 132.0;
/// ... the DRAM rate one SM's blocks reach alone, in bytes/s: 50 GB/s, so that ~40 busy SMs
/// saturate the device.
const MODEL_SM_BYTES: f64 = 50e9;
/// ... and the fixed cost of a split, in seconds: the reduction's launch and its pipeline fill.
const MODEL_SPLIT_SECONDS: f64 = 4e-6;

/// The cost model's estimate of `spec`'s time on `problem` in `splits` slices of k (1: no
/// split): the larger of its arithmetic time (every multiply-add of its full tiles, at
/// [`KernelSpec::gflops_per_sm`] per SM, over the blocks that run at once) and its memory
/// time (A, B and C or the workspace once from DRAM, at what the busy SMs can draw), plus,
/// with a split, the reduction's traffic and a fixed cost (4 µs). Only its comparisons
/// matter: it decides whether a split pays.
pub fn split_seconds(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem, splits: u32) -> f64 {
    let (m, n, k, batch) = (
        problem.m as f64,
        problem.n as f64,
        problem.k as f64,
        problem.batch as f64,
    );
    let element = problem.dtype.bytes() as f64;
    let tiles = tile_count(spec, problem) as f64;
    let splits = splits.max(1) as f64;
    let sms = caps.sm_count.max(1) as f64;
    let blocks_per_sm = spec.blocks_per_sm.max(1) as f64;
    let blocks = (tiles * splits).min(sms * blocks_per_sm);
    let busy_sms = (tiles * splits).min(sms);
    let padded_flops = 2.0 * tiles * (spec.block_tile_m * spec.block_tile_n) as f64 * k;
    let block_flops = spec.gflops_per_sm.max(1) as f64 * 1e9 / blocks_per_sm;
    let arithmetic = padded_flops / (blocks * block_flops);
    let device_bytes = MODEL_DEVICE_BYTES_PER_SM * sms;
    let output = if splits > 1.0 { 4.0 * splits } else { element };
    let bytes = batch * (element * (m + n) * k + output * m * n);
    let memory = bytes / (busy_sms * MODEL_SM_BYTES).min(device_bytes);
    let reduction = if splits > 1.0 {
        batch * m * n * (4.0 * splits + element) / device_bytes + MODEL_SPLIT_SECONDS
    } else {
        0.0
    };
    arithmetic.max(memory) + reduction
}

/// [`split_seconds`] with whole waves: the arithmetic time is that of the most tiles (or
/// slices) any block slot runs, `⌈tiles · splits / slots⌉` of them one after another, each at
/// the kernel's rate per block, instead of the work spread evenly over the slots. A product
/// of 153 v18 tiles on 132 SMs then costs two tiles' time, not 1.16. Used to compare tile
/// shapes whose waves differ in grain (`mid_tiles_passed_over`); the memory time and the
/// reduction are [`split_seconds`]'s.
pub fn wave_seconds(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem, splits: u32) -> f64 {
    let splits = splits.max(1);
    let items = tile_count(spec, problem).saturating_mul(splits as u64);
    let waves = items.div_ceil(block_slots(spec, caps)) as f64;
    let slice_k = if splits > 1 {
        geometry::split_k::slices(problem.k as u32, splits).1 as f64
    } else {
        problem.k as f64
    };
    let tile_flops = 2.0 * (spec.block_tile_m * spec.block_tile_n) as f64 * slice_k;
    let block_flops = spec.gflops_per_sm.max(1) as f64 * 1e9 / spec.blocks_per_sm.max(1) as f64;
    let arithmetic = waves * tile_flops / block_flops;
    // The evenly spread arithmetic of `split_seconds` never exceeds the whole waves', so its
    // total is the memory time plus the reduction wherever memory bounds it.
    arithmetic.max(split_seconds(spec, caps, problem, splits))
}

/// The cost model's estimate of `spec` on `problem` run as dispatch would run it, in the
/// slices of k [`auto_split`] chooses: `(seconds, slices)`.
fn dispatched_seconds(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> (f64, u32) {
    let splits = auto_split(spec, caps, problem).0;
    (split_seconds(spec, caps, problem, splits), splits)
}

/// Why `spec` cannot run `problem` in `splits` slices of k, or `None` if it can.
fn split_refusal(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
    splits: u32,
) -> Option<String> {
    if splits <= 1 {
        return None;
    }
    if !spec.split_k {
        return Some("does not split k".into());
    }
    if splits > geometry::split_k::MAX_SPLITS {
        return Some(format!(
            "splits k into at most {} slices ({splits} asked)",
            geometry::split_k::MAX_SPLITS
        ));
    }
    let entry = reduction_entry(spec.dtype);
    if !caps.entries.iter().any(|e| e == entry) {
        return Some(format!("{entry} is not in the loaded PTX"));
    }
    let bytes = geometry::split_k::workspace_elements(
        splits,
        problem.batch as u32,
        problem.m as u32,
        problem.n as u32,
    )
    .map(|elements| elements.saturating_mul(4));
    if bytes.is_none_or(|bytes| bytes > MAX_WORKSPACE_BYTES) {
        return Some(format!(
            "{splits} slices would need more than {MAX_WORKSPACE_BYTES} bytes of workspace"
        ));
    }
    None
}

/// The least m at which dispatch copies an f32 B `[n, k]` to `[k, n]` for `v13_m64_via_kn`
/// (and only with k > [`V13_M64_SHORT_K`]): the copy moves 8·n·k bytes once, which only a
/// product with many rows of A hides. Forced against v13 on the H100 at the suite's `[n, k]`
/// layers (`docs/results/f32-via-kn`): 1.03–1.17× faster at m = 1024, 1.13–1.17× at
/// m = 4096, but 0.80–0.88× at 7 of the 9 m = 256 layers; 0.97× at 8192×8192×64.
pub const V13_VIA_KN_MIN_M: usize = 1024;

/// The kernel named `name` for `spec`'s element type and B layout, if the table has one: the
/// kernel a rule weighs `spec` against.
fn sibling(spec: &KernelSpec, name: &str) -> Option<&'static KernelSpec> {
    KERNELS
        .iter()
        .find(|s| s.name == name && s.dtype == spec.dtype && s.b_layout == spec.b_layout)
}

/// Why dispatch passes over the small-tile kernel `v18_m64` for v18, or `None` if `spec` is not
/// `v18_m64` or is expected to be faster. Both are costed by [`split_seconds`] as dispatch
/// would run them: v18 split in k where [`auto_split`] would split it, `v18_m64` whole (it
/// does not split by itself, [`KernelSpec::auto_split`]). Its 64 × 64 tiles fill the device
/// without a split where v18's 128 × 256 tiles are too few, but multiply at less than half
/// v18's rate, so they win only where v18 cannot fill the device or its split costs more than
/// their slower arithmetic. Against both kernels forced over the fp16 suite's squares to
/// 2048³, its m ≤ 1024 layers and ragged shapes on the H100 (`docs/results/v18-m64`, run 1),
/// the rule picks the faster at 43 of the 52 shapes either runs (8192×8192×64 goes to v15).
/// Of the other 9: 1280³, 1408³ and 2048³ (two with an outlier cuBLAS time on one side); the
/// 16-row layers 16 × 8192 × 8192 and 16 × 8192 × 28672 (v18 6–8% faster) and 1000³; the
/// 16-row 4096-column layers at k = 11008 and 14336, where `v18_m64` ran split in four (a
/// split it no longer makes by itself); and 64 × 14336 × 4096, a tie in the model (both bound
/// by DRAM), which goes to v18, 9% slower there.
///
/// At m ≤ 16 (B `[k, n]`: with B `[n, k]` the thin kernels take these rows), `v18_m64` yields
/// to v18 wherever v18's tiles, split in k as [`auto_split`] cuts them, make at least three
/// quarters of a wave: with so few rows, `v18_m64` streams B markedly slower than at m = 64
/// (16 × 8192 × 28672: 177 µs against 127 µs at 64 rows) while v18's time hardly moves (140
/// against 147 µs in 4 slices), so the model, which prices both by their DRAM bytes, misjudges
/// them. On the H200 (`docs/results/ragged-probe`, run 2, fp16, each kernel forced), v18 split
/// in 4 was faster at 16 × 8192 × 8192 (52.3 µs against 59.6) and 16 × 8192 × 28672 (140.4
/// against 177.4), and at 16 × 11008 × 4096 they tied (43.2 µs in 2 slices against 45.7).
/// The cause (the zero-filled rows of A's boxes are the suspect) was not established.
fn small_tiles_passed_over(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
) -> Option<String> {
    if spec.name != "v18_m64" {
        return None;
    }
    let v18 = sibling(spec, "v18")?;
    // At most 16 rows, where v18's slices fill most of the device: v18 measured faster whatever
    // the model says (see the doc comment).
    if problem.m <= geometry::thin::WIDE_MAX as usize {
        let v18_splits = auto_split(v18, caps, problem).0;
        let items = tile_count(v18, problem).saturating_mul(v18_splits as u64);
        if items.saturating_mul(4) >= caps.sm_count as u64 * 3 {
            return Some(format!(
                "m ≤ {}: v18 in {v18_splits} slice(s) of k ({items} work items) fills the \
                 device, and with so few rows it was measured faster",
                geometry::thin::WIDE_MAX
            ));
        }
    }
    let ((own, own_splits), (other, other_splits)) = (
        dispatched_seconds(spec, caps, problem),
        dispatched_seconds(v18, caps, problem),
    );
    // A tie (both bound by the same DRAM traffic in the model) goes to v18, the kernel
    // measured at every shape.
    if own >= other {
        return Some(format!(
            "estimated {:.1} µs in {own_splits} slice(s) of k, not less than v18's {:.1} µs \
             in {other_splits}: its 64 × 64 tiles multiply at less than half v18's rate",
            own * 1e6,
            other * 1e6
        ));
    }
    // Against the mid-size tiles, where dispatch would take them: both in whole waves (a tie
    // goes to `v18_n128`, the faster kernel per tile).
    let mid = sibling(spec, "v18_n128")?;
    if refusal(mid, caps, problem).is_some() || mid_tiles_passed_over(mid, caps, problem).is_some()
    {
        return None;
    }
    let (own_waves, mid_waves) = (
        wave_seconds(spec, caps, problem, 1),
        wave_seconds(mid, caps, problem, 1),
    );
    (own_waves >= mid_waves).then(|| {
        format!(
            "estimated {:.1} µs in whole waves, not less than v18_n128's {:.1} µs",
            own_waves * 1e6,
            mid_waves * 1e6
        )
    })
}

/// Why dispatch passes over the mid-size kernel `v18_n128` for v18, or `None` if `spec` is not
/// `v18_n128` or is expected to be faster. Both are costed by [`wave_seconds`], v18 in the
/// slices of k [`auto_split`] would cut, `v18_n128` whole: its 128 × 128 tiles run at 0.865 of
/// v18's rate and in half its grain of work, so they win where v18's last wave is mostly
/// empty (2176³: 153 v18 tiles on 132 SMs, two waves, against 289 of its own, three half-size
/// ones) or where v18 must split k to fill the device (256 × 8192 × 8192: 64 tiles, or 128
/// of its own in one wave, no reduction). Never at m ≤ 64, where half of each tile's rows are
/// empty and `v18_m64` or the thin kernels were measured faster.
///
/// Measured on the H200, each kernel forced over 44 probe cases (fp16, squares 512–4096,
/// m = 64–1024 layers, ragged shapes; `docs/results/v18-n128`, run 1): with this rule and
/// [`small_tiles_passed_over`]'s against it, dispatch takes the fastest of v18, `v18_m64` and
/// `v18_n128` at 32 of the 40 cases all three ran. It changes the choice made before
/// `v18_n128` existed at 13 of them, each time for a faster kernel (1.04–1.56×: squares
/// 1152–1408 and 2176–3200, the m = 256 layers with n = 8192); the 8 it misses cost 2–33%
/// against the fastest and keep their earlier kernel (1000³ and 1024³ `v18_m64`; 1536³,
/// 3712³, 3840³ and the 1024 × 14336 × 4096 layers v18).
fn mid_tiles_passed_over(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
) -> Option<String> {
    if spec.name != "v18_n128" {
        return None;
    }
    let half_tile = geometry::v18_n128::BLOCK_TILE_M as usize / 2;
    if problem.m <= half_tile {
        return Some(format!(
            "m ≤ {half_tile}: at least half of each 128-row tile would be empty"
        ));
    }
    let v18 = sibling(spec, "v18")?;
    let v18_splits = auto_split(v18, caps, problem).0;
    let (own, other) = (
        wave_seconds(spec, caps, problem, 1),
        wave_seconds(v18, caps, problem, v18_splits),
    );
    // A tie goes to v18, the kernel measured at every shape.
    (own >= other).then(|| {
        format!(
            "estimated {:.1} µs in whole waves, not less than v18's {:.1} µs in {v18_splits} \
             slice(s) of k",
            own * 1e6,
            other * 1e6
        )
    })
}

/// Why dispatch passes over the wide FMA thin kernel `thin_m16` (f32 and TF32, 9 ≤ m ≤ 16, B
/// `[n, k]`), whose blocks each stream 32 rows of B along all of k (no split of k), and which
/// reads element by element where a row of A or B does not start on a 16-byte boundary. On the
/// H100 (`docs/results/thin-m16-f32`, against `v13_m32` split in k, the kernel it displaced):
/// 16×4097×4097 (rows not aligned) 0.46× cuBLAS against 0.73×; 16×64×65537 and 11×33×8191 (2
/// blocks) 0.04× and 0.16× against 0.48× and 0.59×; 13×1000×1000 (32 blocks) 1.10× against 0.71×.
/// Grids between 2 and 32 blocks were not measured: the bound is an eighth of the SMs.
fn thin_m16_passed_over(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<String> {
    if spec.name != "thin_m16" {
        return None;
    }
    if !problem.input_rows_aligned_to(16) {
        return Some(
            "a row of A or B does not start on a 16-byte boundary, where its element-by-element \
             loads were measured slower than v13_m32"
                .to_string(),
        );
    }
    let blocks = problem.n.div_ceil(spec.block_tile_n as usize) * problem.batch;
    let least = (caps.sm_count / 8).max(1);
    (blocks < least).then(|| {
        format!(
            "{blocks} blocks of {} rows of B cannot fill an eighth of the {} SMs (k is not \
             split), where v13_m32 split in k was measured faster",
            spec.block_tile_n, caps.sm_count
        )
    })
}

/// Whether the short-rows kernel `rows` fills enough of the device for `problem`: its blocks
/// (its tiles: one per [`ROWS_PER_BLOCK`](gemm_geometry::thin::ROWS_PER_BLOCK) rows of A, over
/// the batch) number at least half the SMs.
fn short_rows_fill(rows: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> bool {
    tile_count(rows, problem).saturating_mul(2) >= caps.sm_count as u64
}

/// The longest k at which the tensor-core `thin_n_mma` yields to `thin_n_rows` (fp16/bf16, B
/// `[n, k]`, rows on 16-byte boundaries): with 32 elements a row, 1 000 000 × 4 × 32 took
/// 271 µs on `thin_n_mma` and 143–146 µs on `thin_n_rows` on the H200; at k = 64 they tied
/// (65537 × 3 × 64: 25.9–27.2 against 23.1–25.1 µs) and at k = 256 `thin_n_mma` was 2.4×
/// faster (`docs/results/ragged-probe`, run 3).
pub const SHORT_ROWS_OVER_MMA_K: usize = 32;

/// Why dispatch passes over the short-rows kernel `thin_n_rows`, or `thin_n_mma` for it, or
/// `None`. Measured on the H200 (`docs/results/ragged-probe`, run 3; fp16 and bf16 alike):
/// one row per thread and k in staged slices of 32, it ran 65537 × 3 × 17 in 12.0–13.4 µs
/// where the general kernel took 25.5–27.1 µs (cuBLAS 17.5–20.1), and beat the general kernel
/// at every k ≤ 256 with 257 blocks or more (65537 × 3 × 256: 69–73 against 106–110 µs); each
/// slice costs it some 8 µs at full occupancy, so at k = 256 it stays at 0.53–0.61× cuBLAS.
/// With 17 blocks (4097 × 5 × 100) the general kernel was faster (15.6–17.2 against
/// 19.6–21.0 µs). So: not at k > [`SHORT_K`] (not measured), nor where its blocks fill less
/// than half the SMs (the boundary lies between the 17 and 257 blocks measured); and
/// `thin_n_mma` yields to it at k ≤ [`SHORT_ROWS_OVER_MMA_K`].
fn short_rows_passed_over(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
) -> Option<String> {
    match spec.name {
        "thin_n_rows" if problem.k > SHORT_K => Some(format!(
            "k > {SHORT_K}: its rows were measured only up to k = {SHORT_K}"
        )),
        "thin_n_rows" if !short_rows_fill(spec, caps, problem) => Some(format!(
            "its blocks of {} rows fill less than half of the {} SMs, where the general \
             kernel was measured faster",
            geometry::thin::ROWS_PER_BLOCK,
            caps.sm_count
        )),
        "thin_n_mma"
            if problem.k <= SHORT_ROWS_OVER_MMA_K
                && sibling(spec, "thin_n_rows")
                    .is_some_and(|rows| short_rows_fill(rows, caps, problem)) =>
        {
            Some(format!(
                "k ≤ {SHORT_ROWS_OVER_MMA_K}: thin_n_rows was measured faster on rows this short"
            ))
        }
        _ => None,
    }
}

/// The FMA column-slices kernel `thin_m` in fp16 and bf16 (B `[k, n]`; it runs there only on
/// rows off 16-byte boundaries, which `thin_m_mma` refuses) on tiny products, k ≤
/// [`TINY_THIN_M_MAX_K`] and n ≤ [`TINY_THIN_M_MAX_N`]: each forced on the H200
/// (`docs/results/ragged-probe`, run 11, fp16), it took 12–23 µs at 3×5×7, 5×3×7, 8×8×8,
/// 2×33×17 and 7×100×9, growing with m (0.53–0.88× cuBLAS), where `general_mma` (which
/// dispatch reaches next) took 8.9–10.7 µs (1.19–1.32×) and the FMA general kernel 8.1–9.3 µs
/// at every one of them. Launch-bound, as cuBLAS is at 9–14 µs there.
fn tiny_thin_m_passed_over(
    spec: &KernelSpec,
    _caps: &DeviceCaps,
    problem: &Problem,
) -> Option<String> {
    (spec.name == "thin_m"
        && matches!(spec.dtype, DType::F16 | DType::Bf16)
        && spec.b_layout == BLayout::Kn
        && problem.k <= TINY_THIN_M_MAX_K
        && problem.n <= TINY_THIN_M_MAX_N)
        .then(|| {
            format!(
                "k ≤ {TINY_THIN_M_MAX_K} and n ≤ {TINY_THIN_M_MAX_N} in fp16/bf16 with B [k, n]: \
                 the general kernels were measured faster"
            )
        })
}

/// The longest k of `tiny_thin_m_passed_over` (a rule of [`passed_over`]): the products
/// measured had k = 7–17.
pub const TINY_THIN_M_MAX_K: usize = 32;
/// The widest n of `tiny_thin_m_passed_over`: the products measured had n = 3–100.
pub const TINY_THIN_M_MAX_N: usize = 128;

/// Why dispatch, choosing by itself, passes over `spec` for `problem` although it could run
/// it (a forced kernel still runs): a shape class where a kernel later in [`KERNELS`] was
/// measured faster. `None` where nothing is known against it.
///
/// v13 and its variants for small exact-f32 products ([`small_f32_product`]), where the
/// general kernel was measured faster. v13's 32- and 64-row variants outside the shapes where
/// they were measured faster than v13 (`v13_variant_passed_over`). The FMA `thin_n` kernel (f32, fp16, bf16) and the fp32
/// kernel v13 (and its variants) when n ≤ 8 and k ≤ [`SHORT_K`]: the general kernel (or, for
/// fp16/bf16, v15) is faster there. (v18 is no longer passed over where all of k fits in one of
/// its k-tiles, k ≤ 64: that rule was measured on the H100 before v18 stored its tiles four
/// values at a time, 162 µs against v15's 72 µs at 8192×8192×64 fp16, `docs/results/h100-split-k`;
/// with the quad stores v18 took 58.8 µs there and v15 70.4 µs on the H200, fp16 and bf16 alike,
/// `docs/results/ragged-probe`.)
///
/// And v19 (TF32) on B `[k, n]` where the cost model ([`split_seconds`], DRAM at its fitted rate)
/// puts its transposed copy of B (8·k·n bytes moved) plus v19 above v14 alone.
///
/// And the wide FMA thin kernel `thin_m16` where its 16-byte loads are not legal or its grid
/// cannot fill an eighth of the SMs (`thin_m16_passed_over`); and the FMA `thin_m` in fp16 and
/// bf16 with B `[k, n]` on tiny products (`tiny_thin_m_passed_over`).
pub fn passed_over(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<String> {
    // The rules that each weigh one kernel (by name) against another, in turn; none of them
    // names a kernel the ones below name, so their order among those does not matter.
    type Rule = fn(&KernelSpec, &DeviceCaps, &Problem) -> Option<String>;
    let rules: [Rule; 5] = [
        small_tiles_passed_over,
        mid_tiles_passed_over,
        thin_m16_passed_over,
        short_rows_passed_over,
        tiny_thin_m_passed_over,
    ];
    if let Some(reason) = rules.iter().find_map(|rule| rule(spec, caps, problem)) {
        return Some(format!(
            "{reason} (passed over, not refused: it runs when forced)"
        ));
    }
    if spec.dtype == DType::F32
        && matches!(
            v13_tiles_name(spec),
            "v13" | "v13_m64" | "v13_m32" | "v13_m64_via_kn"
        )
        && small_f32_product(problem)
    {
        return Some(
            "a small product (at most 2^26 multiply-adds with k ≤ 1024, or k ≤ 64 with at most \
             2^22 elements of C): the general kernel was measured faster (passed over, not \
             refused: it runs when forced)"
                .to_string(),
        );
    }
    if let Some(reason) = v13_variant_passed_over(spec, caps, problem) {
        return Some(format!(
            "{reason} (passed over, not refused: it runs when forced)"
        ));
    }
    // Short k with n ≤ 8: the FMA thin_n kernel gives each warp two rows of a few chunks and
    // spends 85–117 µs at 65537×3×k for every k ≤ 256 on the H100, where the general kernel
    // takes 23–109 µs and v15 31–91 µs; for f32, v13 (40–147 µs) also trails the general
    // kernel (`docs/results/thin-m16/6-h100-short-k`). TF32 calls keep thin_n (their
    // alternatives there were not measured).
    let short_thin_n = problem.n <= geometry::thin::THIN_MAX as usize && problem.k <= SHORT_K;
    if short_thin_n
        && spec.dtype != DType::Tf32
        && matches!(
            v13_tiles_name(spec),
            "thin_n" | "v13" | "v13_m64" | "v13_m32" | "v13_m64_via_kn"
        )
    {
        return Some(format!(
            "n ≤ {} with k ≤ {SHORT_K}: {} measured faster (passed over, not refused: it \
             runs when forced)",
            geometry::thin::THIN_MAX,
            if spec.name == "thin_n" && spec.dtype != DType::F32 {
                "the general kernel and v15 were"
            } else {
                "the general kernel was"
            }
        ));
    }
    // v15 on inputs its cp.async path cannot copy: its 16-bit-load path, in 128×256 tiles,
    // was slower than general_mma at all but one such shape measured
    // (`docs/results/general-mma`, see `v15_loads_elements`).
    if spec.name == "v15" && v15_loads_elements(problem) {
        return Some(
            "A's or B's rows do not start on 16-byte boundaries (or k, or n with B [k, n], is \
             not a multiple of 8), where its 2-byte-load path was measured up to 2.6× \
             slower than general_mma (passed over, not refused: it runs when forced)"
                .to_string(),
        );
    }
    if spec.transposes_b()
        && spec.dtype == DType::F32
        && (problem.m < V13_VIA_KN_MIN_M || problem.k <= V13_M64_SHORT_K)
    {
        return Some(format!(
            "m < {V13_VIA_KN_MIN_M} or k ≤ {V13_M64_SHORT_K}, where copying B `[n, k]` to \
             `[k, n]` first was measured not to pay (passed over, not refused: it runs when \
             forced)"
        ));
    }
    if spec.transposes_b() && spec.dtype == DType::Tf32 {
        let source = transpose_source(problem);
        let copied = 8.0 * (source.rows * source.cols * source.batch) as f64;
        let copy_seconds = copied / (MODEL_DEVICE_BYTES_PER_SM * caps.sm_count.max(1) as f64);
        // Each kernel as dispatch would run it: split where its tiles cannot fill the device.
        let with_copy =
            copy_seconds + dispatched_seconds(spec, caps, &kernel_problem(spec, problem, 0)).0;
        let v14 = KERNELS.iter().find(|s| s.entry == V14_KN_ENTRY)?;
        let without = dispatched_seconds(v14, caps, problem).0;
        if with_copy > without {
            return Some(format!(
                "copying B transposed first ({:.1} µs) and v19 ({:.1} µs in all) is estimated \
                 slower than v14 ({:.1} µs) (passed over, not refused: it runs when forced)",
                copy_seconds * 1e6,
                with_copy * 1e6,
                without * 1e6
            ));
        }
    }
    None
}

/// Why dispatch passes over v13's 32- or 64-row variant for `problem`, or `None` if `spec` is
/// neither or nothing is known against it. Both run any shape; which one is fastest was
/// measured on the H100 (`docs/results/v13-short-m`, runs 7 and 8, each kernel forced at the
/// same shapes):
///
/// * `v13_m32` only for m ≤ 32: above, `v13_m64` was faster at 42 of the 45 shapes measured
///   (squares 256–2048, the ragged shapes, the m = 256 layers), and the other 3 by at most 13%.
/// * `v13_m64` with B `[k, n]` for every m: it was faster than v13 at every such shape
///   measured with k > 64 but 1280³ (1% slower): up to 1.55× at squares 256–2048, the ragged
///   shapes and the m = 256 layers, and 1.04–1.26× from 2176³ to 8192³ and at the m = 1024 and
///   4096 layers (4096³: 2.94 ms against 3.13). Its blocks are half as tall with four per SM
///   instead of two, so a barrier waits for 4 warps instead of 8 and the last wave is finer.
///   At k ≤ 64 v13 was 7–9% faster while both stored through the whole epilogue; since their
///   plain stores skip it, `v13_m64` is 1.07–1.18× faster there too (H200,
///   `docs/results/f32-short-k`, run 2: 8192×8192×16/32/64, 4096×4096×64,
///   16384×4096×64, 4096×2176×16).
/// * `v13_m64` with B `[n, k]` only for m ≤ 64: at 7 of the 9 m = 256 layers it ran at
///   0.84–0.91× v13's speed, its transposing 4-byte copies of B being twice as many per thread.
/// * Their K-major entries (B `[n, k]` on 16-byte rows) as their siblings, but `v13_m64_kmajor`
///   also above m = 64 with k > 64 (below [`V13_VIA_KN_MIN_M`], where the copy to `[k, n]` comes
///   first), unless v13's waves are fuller by more than [`K_MAJOR_TILE_SPEEDUP`]
///   ([`k_major_wave_loses`]). In `docs/results/f32-k-major` (run 2) it was faster than v13 at
///   5 of the 7 such shapes probed, 1.04–1.43× (1000³ 86 µs against 101, 256×11008×4096 652
///   against 856), and slower at 256×8192×8192 (0.86×) and 256×4096×14336 (0.98×); in run 3's
///   suite also at 256×14336×4096 (1099 µs against v13's 859 in the suite before) and
///   256×8192×28672, where its 64-row tiles fill 57–65% of its block slots and v13's 85–97%.
/// * None of them with B `[n, k]` on rows that are not 16-byte aligned at m ≤
///   [`UNALIGNED_NK_GENERAL_MAX_M`] and n ≥ [`UNALIGNED_NK_GENERAL_MIN_N`]: the general kernel
///   was faster there.
fn v13_variant_passed_over(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
) -> Option<String> {
    let rows = spec.block_tile_m as usize;
    let k_major = spec.name.ends_with("_kmajor");
    let name = v13_tiles_name(spec);
    if k_major
        && name == "v13_m64"
        && problem.m > rows
        && let Some(reason) = k_major_wave_loses(spec, caps, problem)
    {
        return Some(reason);
    }
    if spec.dtype == DType::F32
        && spec.b_layout == BLayout::Nk
        && matches!(spec.name, "v13" | "v13_m64" | "v13_m32")
        && problem.m <= UNALIGNED_NK_GENERAL_MAX_M
        && problem.n >= UNALIGNED_NK_GENERAL_MIN_N
        && sibling(spec, "v13_m64_kmajor").is_some_and(|k_major| !k_major.rows_aligned(problem))
    {
        return Some(format!(
            "m ≤ {UNALIGNED_NK_GENERAL_MAX_M} and n ≥ {UNALIGNED_NK_GENERAL_MIN_N} with B \
             [n, k] on rows not 16-byte aligned (the K-major entries cannot copy them): the \
             general kernel was measured faster"
        ));
    }
    match name {
        "v13_m32" if problem.m > rows => {
            Some(format!("m > {rows}: v13_m64 or v13 was measured faster"))
        }
        "v13_m64" if problem.m > rows && spec.b_layout == BLayout::Nk && !k_major => {
            Some(format!("m > {rows} with B [n, k]: v13 was measured faster"))
        }
        "v13_m64" if problem.m > rows && k_major && problem.k <= V13_M64_SHORT_K => Some(format!(
            "m > {rows} with k ≤ {V13_M64_SHORT_K}: v13 was measured faster"
        )),
        _ => None,
    }
}

/// The most rows at which an exact-f32 product with B `[n, k]` whose rows are not 16-byte
/// aligned (k not a multiple of 4, so the K-major entries are refused) goes to the general
/// kernel instead of v13 or its variants, which transpose B in 4-byte copies. Measured on the
/// H200 (`docs/results/ragged-probe`, run 6, each kernel forced at the same shapes): the general
/// kernel took 52–59 µs at m = 17, 33 and 64 × 8191 × 1025 where the best v13 variant took
/// 58–79, 85 against 106 at m = 100, 95–99 against 111–112 at 33 and 64 × 4096 × 4097, 85
/// against 104 at 33 × 16384 × 1025, 57 against 63 at 128 × 4096 × 1023; above, v13 won at
/// 200 × 8191 × 1025 (149 against 163), 256 × 2048 × 2049 (89–91 against 100) and
/// 1000 × 1000 × 1001 (83 against 87), and the general kernel at 512 × 1024 × 1025 (59
/// against 61–67) by less.
pub const UNALIGNED_NK_GENERAL_MAX_M: usize = 128;
/// The fewest columns at which [`UNALIGNED_NK_GENERAL_MAX_M`]'s rule applies: the narrowest
/// product measured (n = 4096). Narrower ones, such as 17×17×65537 (v13_m32 at 0.99× cuBLAS
/// in the suite), keep v13's variants.
pub const UNALIGNED_NK_GENERAL_MIN_N: usize = 4096;

/// How much faster `v13_m64_kmajor` runs a tile than v13 runs it from B `[n, k]` (transposing
/// B in 4-byte copies), block slot for block slot: 1.0–1.3× at the four m = 256 `[n, k]`
/// layers measured with both (`docs/results/f32-k-major`, runs 2 and 3, each time divided by
/// the share of block slots its waves fill, [`wave_fill`]); the middle of that range.
pub const K_MAJOR_TILE_SPEEDUP: f64 = 1.15;

/// The share of the device's block slots (SMs × blocks per SM) that `spec`'s blocks fill over
/// all their waves, split in k as [`auto_split`] would: 1.0 when the last wave is full, 0.57
/// for 448 blocks on 396 slots (two waves, the second one 13% full).
pub fn wave_fill(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> f64 {
    let splits = auto_split(spec, caps, problem).0.max(1) as u64;
    let blocks = tile_count(spec, problem).saturating_mul(splits).max(1);
    let wave = block_slots(spec, caps);
    blocks as f64 / (blocks.div_ceil(wave).saturating_mul(wave)) as f64
}

/// Why v13 (from B `[n, k]`) is expected to beat the K-major entry `spec` above its 64 rows,
/// or `None`: v13's 128-row tiles fill more of their block slots than `spec`'s 64-row tiles by
/// more than [`K_MAJOR_TILE_SPEEDUP`]. At m = 256, n = 14336 the 64-row entry has 448 tiles
/// for 396 slots (3 blocks on each of 132 SMs) where v13 has 224 for 264; at n = 8192 it has
/// 256 tiles that it does not split (more than half a wave) where v13 splits its 128 in two.
fn k_major_wave_loses(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<String> {
    let v13 = sibling(spec, "v13")?;
    let (own, v13_fill) = (
        wave_fill(spec, caps, problem),
        wave_fill(v13, caps, problem),
    );
    (v13_fill > K_MAJOR_TILE_SPEEDUP * own).then(|| {
        format!(
            "m > {}: its waves fill {:.0}% of its block slots where v13's fill {:.0}%, more than \
             {K_MAJOR_TILE_SPEEDUP}× as much (v13 was measured faster there)",
            spec.block_tile_m,
            own * 100.0,
            v13_fill * 100.0
        )
    })
}

/// Whether an exact-f32 `problem` is small enough that the general kernel beats v13 and its
/// variants, as measured on the H100 (`docs/results/f32-small-products`, each kernel
/// forced at the same shapes, both B layouts): v13's 128-, 64- or 32-row block tiles give so
/// small a product a handful of blocks whose latency is the whole time (one 128 × 128 tile
/// over k = 128 takes 31–38 µs), where the general kernel's small tiles spread it over the
/// SMs. The general kernel took 14–16 µs at 128³ and 127×129×131 (v13 and its variants
/// 31–45), 20–25 µs at 256³ (40–54) and 33–39 µs at 2048×2048×32, 2048×2048×33 and
/// 2047×2049×33 (38–60); at 8192×8192×64 it was slower (515 µs against v13's 366), so the
/// rule stops at m·n ≤ 2^22 there, and at 2^26 multiply-adds with k ≤ 1024 elsewhere
/// (`docs/results/split-256`, run 2, each kernel forced: the general kernel took 24 µs at
/// 384³ against 44–62, 28 µs at 4097×31×513 against 37–48, 19 µs at 512×512×256 against
/// 37–50, 22 µs at 256×256×1024 against 27–39, and was faster or within 1 µs of the best
/// v13 variant at 1024×64×1024, 128×512×1024 and 16×4096×1024; 512³, at 2^27, stays with
/// v13's variants).
pub fn small_f32_product(problem: &Problem) -> bool {
    // Over the whole batch: a batch of small products fills the device like one large one.
    let outputs = (problem.m as u64)
        .saturating_mul(problem.n as u64)
        .saturating_mul(problem.batch as u64);
    let k = problem.k as u64;
    let few_macs = outputs.saturating_mul(k) <= SMALL_PRODUCT_MACS && k <= SMALL_PRODUCT_MAX_K;
    let short_k = k <= 64 && outputs <= SMALL_SHORT_K_OUTPUTS;
    few_macs || short_k
}

/// Whether v15 would run `problem` on its 2-byte-load path: the condition its library entries
/// test on the device (`batch_item` in `kernels-gpu/src/sgemm/v15_fp16_tensor_cores.rs`) for
/// their `cp.async` path, negated. That path needs A's and B's rows on 16-byte boundaries
/// (base addresses, leading dimensions and, with a batch, batch strides multiples of 8
/// elements) and whole 16-byte chunks along the copied rows (k, and n for B `[k, n]`,
/// multiples of 8). Measured on the H100 (`docs/results/general-mma`, both kernels forced at
/// the same shapes, fp16): general_mma was 1.03–2.6× faster than that path at such shapes, from
/// 127×129×131 to 4095³, but for 17×17×65537 with B `[n, k]` (0.91× in the final build's run,
/// 1.21× in an earlier one).
pub fn v15_loads_elements(problem: &Problem) -> bool {
    let rows_aligned = problem.buffers.a.0.is_multiple_of(16)
        && problem.buffers.b.0.is_multiple_of(16)
        && problem.lda.is_multiple_of(8)
        && problem.ldb.is_multiple_of(8)
        && (problem.batch == 1
            || (problem.strides.0.is_multiple_of(8) && problem.strides.1.is_multiple_of(8)));
    let chunks_whole = problem.k.is_multiple_of(8)
        && (problem.b_layout == BLayout::Nk || problem.n.is_multiple_of(8));
    !(rows_aligned && chunks_whole)
}

/// The most multiply-adds (batch·m·n·k, k ≤ [`SMALL_PRODUCT_MAX_K`]) of a
/// [`small_f32_product`].
pub const SMALL_PRODUCT_MACS: u64 = 1 << 26;
/// The longest k of a [`small_f32_product`] bound by [`SMALL_PRODUCT_MACS`].
pub const SMALL_PRODUCT_MAX_K: u64 = 1024;
/// The most elements of C (batch·m·n) of a [`small_f32_product`] with k ≤ 64.
pub const SMALL_SHORT_K_OUTPUTS: u64 = 1 << 22;

/// The longest k at which dispatch passes `v13_m64_kmajor` over for v13 when m > 64 (B
/// `[n, k]`), and copies no `[n, k]` B to `[k, n]` for `v13_m64_via_kn`: measured at k = 33
/// and 64 (v13 faster), 131 (`v13_m64` faster), before the plain-store path (with it, `v13_m64`
/// with B `[k, n]` is taken at every k).
pub const V13_M64_SHORT_K: usize = 64;

/// The longest k at which [`passed_over`] sends products with n ≤ 8 (and m > 8) past the FMA
/// `thin_n` kernel and, for f32, past v13: the longest measured there (65537×3×256).
pub const SHORT_K: usize = 256;

/// Why `spec` cannot run `problem` on `caps`, or `None` if it can.
pub fn refusal(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<String> {
    // A kernel that transposes B reads the copy (any aligned address stands in for it here).
    let problem = &kernel_problem(spec, problem, 0);
    if let Some(reason) = spec.shape.refusal(problem) {
        return Some(reason);
    }
    if !spec.arch.supported_by(caps.compute_capability) {
        let (major, minor) = caps.compute_capability;
        return Some(format!(
            "needs {} (this device is {major}.{minor})",
            spec.arch.label()
        ));
    }
    if !caps.entries.iter().any(|e| e == spec.entry) {
        return Some(format!("{} is not in the loaded PTX", spec.entry));
    }
    if spec.shared_bytes as usize > caps.max_shared_per_block {
        return Some(format!(
            "needs {} bytes of shared memory per block, the device allows {}",
            spec.shared_bytes, caps.max_shared_per_block
        ));
    }
    if !spec.rows_aligned(problem) {
        let matrices = match spec.aligned {
            AlignedMatrices::All => "A, B and C",
            AlignedMatrices::Inputs => "A and B",
            AlignedMatrices::B => "B",
        };
        return Some(format!(
            "needs every row of {matrices} to start on a {}-byte boundary (base addresses, \
             leading dimensions and batch strides multiples of {} elements)",
            spec.row_alignment,
            spec.row_alignment / problem.dtype.bytes()
        ));
    }
    if spec.tensor_maps
        && let Err(reason) = tensor_map_views(spec, problem)
    {
        return Some(reason.to_string());
    }
    if grid(spec, caps, problem).is_none() {
        return Some("the grid would exceed CUDA's limits".into());
    }
    None
}

/// The tensor maps of A and B for `spec`'s TMA kernel: each view and box, checked against TMA's
/// rules (16-byte rows, strides, dimensions) by [`tensor_map::tiled_map_spec`]. Every box row
/// is one 128-byte swizzle span ([`tma_boxes`]).
pub fn tensor_map_views(
    spec: &KernelSpec,
    problem: &Problem,
) -> Result<[(MatrixView, [u32; 2]); 2], tensor_map::TensorMapError> {
    let batch = problem.batch as u64;
    let view = |address: u64, rows: usize, cols: usize, ld: usize, stride: usize| MatrixView {
        address,
        rows: rows as u64,
        cols: cols as u64,
        ld: ld as u64,
        batch,
        batch_stride: stride as u64,
    };
    let a = view(
        problem.buffers.a.0,
        problem.m,
        problem.k,
        problem.lda,
        problem.strides.0,
    );
    let (a_box, b_box) = tma_boxes(spec, problem.dtype, problem.b_layout);
    let (b_rows, b_cols) = match problem.b_layout {
        BLayout::Kn => (problem.k, problem.n),
        BLayout::Nk => (problem.n, problem.k),
    };
    let b = view(
        problem.buffers.b.0,
        b_rows,
        b_cols,
        problem.ldb,
        problem.strides.1,
    );
    let element = map_element(problem.dtype);
    for (v, [cols, rows]) in [(&a, a_box), (&b, b_box)] {
        tensor_map::tiled_map_spec(element, v, cols, rows)?;
    }
    Ok([(a, a_box), (b, b_box)])
}

/// The TMA boxes (innermost dimension first) of `spec`'s tensor maps of A and B for elements of
/// `dtype` and B stored as `b_layout`. Every box row is one 128-byte swizzle span, so a stage
/// is `128 / element bytes` deep in k: A's box is (that depth, the tile's rows); a `[k, n]`
/// B's is one slab (one span of n, that depth), which the kernel copies once per 64 columns of
/// its tile; a `[n, k]` B's is (that depth, the tile's columns). The geometry modules
/// (`gemm_geometry::v17`, `v19`, `v18_m64`) hold the same numbers, checked by a test.
pub fn tma_boxes(spec: &KernelSpec, dtype: DType, b_layout: BLayout) -> ([u32; 2], [u32; 2]) {
    let depth = geometry::v17::SWIZZLE_BYTES / dtype.bytes() as u32;
    let a_box = [depth, spec.block_tile_m];
    let b_box = match b_layout {
        BLayout::Kn => [depth, depth],
        BLayout::Nk => [depth, spec.block_tile_n],
    };
    (a_box, b_box)
}

/// The tensor maps' element type for calls of `dtype`.
pub fn map_element(dtype: DType) -> MapElement {
    match dtype {
        DType::F16 => MapElement::F16,
        DType::Bf16 => MapElement::Bf16,
        DType::F32 | DType::Tf32 => MapElement::F32,
    }
}

/// The grid for `spec` on `problem`, or `None` if it exceeds CUDA's limits.
pub fn grid(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<(u32, u32, u32)> {
    split_grid(spec, caps, problem, 1)
}

/// The grid for `spec` on `problem` cut into `splits` slices of k (the batch items become
/// `splits · batch` virtual items), or `None` if it exceeds CUDA's limits.
pub fn split_grid(
    spec: &KernelSpec,
    caps: &DeviceCaps,
    problem: &Problem,
    splits: u32,
) -> Option<(u32, u32, u32)> {
    const MAX_YZ: u64 = 65_535;
    let rows = problem.m.div_ceil(spec.block_tile_m as usize) as u64;
    let columns = problem.n.div_ceil(spec.block_tile_n as usize) as u64;
    let tiles = rows.checked_mul(columns)?;
    let items = (problem.batch as u64).checked_mul(splits.max(1) as u64)?;
    let z = items.min(MAX_YZ) as u32;
    let fits_x = |x: u64| u32::try_from(x).ok().filter(|&x| x <= i32::MAX as u32);
    match spec.grid {
        GridKind::Grouped => Some((fits_x(tiles)?, 1, z)),
        GridKind::ColumnsRows => Some((fits_x(columns)?, rows.min(MAX_YZ) as u32, z)),
        GridKind::Thin => match spec.shape {
            ShapeClass::ThinN => Some((fits_x(rows)?, 1, z)),
            _ => Some((fits_x(columns)?, 1, z)),
        },
        GridKind::ThinWideColumns => {
            let n = u32::try_from(problem.n).ok()?;
            Some((fits_x(wide_column_blocks(spec, n) as u64)?, 1, z))
        }
        GridKind::Persistent => {
            let work = tiles.checked_mul(items)?;
            u32::try_from(work).ok()?;
            Some((work.min(block_slots(spec, caps)) as u32, 1, 1))
        }
    }
}

/// The kernel for `problem` on `caps`: `forced` if given (refused with its reason if it cannot
/// run the call), else the first of [`KERNELS`] for the call's element type and B layout that
/// can; k split as [`auto_split`] decides.
pub fn choose(
    caps: &DeviceCaps,
    problem: &Problem,
    forced: Option<&str>,
) -> Result<Plan, GemmError> {
    choose_split(caps, problem, forced, None)
}

/// [`choose`], with the split-K slices forced when `forced_splits` is given (1: no split; a
/// kernel without split-K, or a split its limits refuse, is refused with the reason).
pub fn choose_split(
    caps: &DeviceCaps,
    problem: &Problem,
    forced: Option<&str>,
    forced_splits: Option<u32>,
) -> Result<Plan, GemmError> {
    choose_plan(caps, problem, forced, forced_splits, None)
}

/// [`choose_split`], and stream-K: `forced_stream_k` `Some(true)` asks for a stream-K tail
/// wherever the items do not fill whole waves (no automatic split then); otherwise there is
/// none. Dispatch never takes one by itself: on the H100, `v18_m64` with a tail ran 1.1–2×
/// slower than without at every square from 256³ to 2048³ (`docs/results/stream-k`). When it
/// is asked for, a forced kernel without a tail is refused, as is a forced split; dispatch's
/// own choice, if it has none, runs as it would.
pub fn choose_plan(
    caps: &DeviceCaps,
    problem: &Problem,
    forced: Option<&str>,
    forced_splits: Option<u32>,
    forced_stream_k: Option<bool>,
) -> Result<Plan, GemmError> {
    let plan = choose_kernel(caps, problem, forced, forced_splits)?;
    if forced_stream_k == Some(true) {
        match stream_k_refusal(plan.kernel, forced_splits) {
            None => {
                return Ok(with_stream_k(
                    plan,
                    caps,
                    problem,
                    "asked for by the description",
                ));
            }
            Some(reason) if forced.is_some() || forced_splits.is_some_and(|s| s > 1) => {
                return Err(GemmError::KernelRefused {
                    kernel: plan.kernel.name,
                    reason,
                });
            }
            // Dispatch's own choice has no tail: it runs as it would.
            Some(_) => {}
        }
    }
    let (splits, k_chunk) = match forced_splits {
        Some(wanted) => geometry::split_k::slices(problem.k as u32, wanted),
        None => auto_split(plan.kernel, caps, problem),
    };
    if splits <= 1 {
        return Ok(plan);
    }
    // `split_refusal` passed for the forced count; an automatic one stays within its limits.
    if let Some(reason) = split_refusal(plan.kernel, caps, problem, splits) {
        return Err(GemmError::KernelRefused {
            kernel: plan.kernel.name,
            reason,
        });
    }
    let Some(grid) = split_grid(plan.kernel, caps, problem, splits) else {
        return Ok(plan);
    };
    let reason = if matches!(plan.kernel.grid, GridKind::Thin | GridKind::ThinWideColumns) {
        format!(
            "{}; k split into {splits} slices of {k_chunk} (its {} column blocks would fill at \
             most half of its {} block slots)",
            plan.reason,
            thin_blocks(plan.kernel, problem),
            block_slots(plan.kernel, caps)
        )
    } else {
        format!(
            "{}; k split into {splits} slices of {k_chunk} (its tiles alone would fill less \
             than half of the device's {} SMs; estimated {:.1} µs instead of {:.1} µs)",
            plan.reason,
            caps.sm_count,
            1e6 * split_seconds(plan.kernel, caps, problem, splits),
            1e6 * split_seconds(plan.kernel, caps, problem, 1)
        )
    };
    Ok(Plan {
        grid,
        splits,
        k_chunk,
        reason,
        ..plan
    })
}

/// Why `spec` cannot take a stream-K tail (with `forced_splits`), or `None`.
fn stream_k_refusal(spec: &KernelSpec, forced_splits: Option<u32>) -> Option<String> {
    if !spec.stream_k {
        return Some("has no stream-K tail (only v18_m64 has)".into());
    }
    if forced_splits.is_some_and(|s| s > 1) {
        return Some("cannot split k and take a stream-K tail at once".into());
    }
    None
}

/// The stream-K tail of `spec` on `problem`
/// (`gemm_geometry::stream_k::tail_tiles` over all its [`block_slots`]); 0 without k.
pub fn stream_k_tiles(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> u32 {
    if problem.k == 0 || !spec.stream_k {
        return 0;
    }
    geometry::stream_k::tail_tiles(tile_count(spec, problem), stream_k_blocks(spec, caps))
}

/// `plan` with its stream-K tail (if its items leave one) and the grid it needs.
fn with_stream_k(plan: Plan, caps: &DeviceCaps, problem: &Problem, why: &str) -> Plan {
    let tiles = stream_k_tiles(plan.kernel, caps, problem);
    if tiles == 0 {
        return plan;
    }
    Plan {
        grid: (stream_k_blocks(plan.kernel, caps), 1, 1),
        stream_k_tiles: tiles,
        reason: format!(
            "{}; its last {tiles} tiles in shares of k over all {} blocks (stream-K: {why})",
            plan.reason,
            stream_k_blocks(plan.kernel, caps)
        ),
        ..plan
    }
}

/// The kernel of [`choose_split`], before k is split: a kernel that cannot make a forced
/// split is passed over (or refused, when forced itself).
fn choose_kernel(
    caps: &DeviceCaps,
    problem: &Problem,
    forced: Option<&str>,
    forced_splits: Option<u32>,
) -> Result<Plan, GemmError> {
    let splits = forced_splits
        .map(|wanted| geometry::split_k::slices(problem.k as u32, wanted).0)
        .unwrap_or(1);
    let refusal = |spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem| {
        refusal(spec, caps, problem).or_else(|| split_refusal(spec, caps, problem, splits))
    };
    let candidates = KERNELS
        .iter()
        .filter(|k| k.dtype == problem.dtype && k.b_layout == problem.b_layout);
    if let Some(name) = forced {
        let spec = candidates.clone().find(|k| k.name == name).ok_or_else(|| {
            GemmError::UnknownKernel {
                name: name.to_string(),
                known: kernel_names(problem.dtype, problem.b_layout),
            }
        })?;
        if let Some(reason) = refusal(spec, caps, problem) {
            return Err(GemmError::KernelRefused {
                kernel: spec.name,
                reason,
            });
        }
        return Ok(Plan {
            kernel: spec,
            reason: "forced by the description".into(),
            grid: grid(spec, caps, problem).expect("checked by refusal"),
            splits: 1,
            k_chunk: 0,
            stream_k_tiles: 0,
        });
    }
    let mut passed = Vec::new();
    for spec in candidates {
        match refusal(spec, caps, problem).or_else(|| passed_over(spec, caps, problem)) {
            Some(reason) => passed.push(format!("{}: {reason}", spec.name)),
            None => {
                let reason = if passed.is_empty() {
                    format!(
                        "the fastest {} kernel for B {}",
                        problem.dtype.label(),
                        problem.b_layout.label()
                    )
                } else {
                    format!("faster kernels passed over: {}", passed.join("; "))
                };
                return Ok(Plan {
                    kernel: spec,
                    reason,
                    grid: grid(spec, caps, problem).expect("checked by refusal"),
                    splits: 1,
                    k_chunk: 0,
                    stream_k_tiles: 0,
                });
            }
        }
    }
    Err(GemmError::NoKernel {
        reason: passed.join("; "),
    })
}

/// The names of the kernels for an element type and B layout, comma-separated.
pub fn kernel_names(dtype: DType, b_layout: BLayout) -> String {
    KERNELS
        .iter()
        .filter(|k| k.dtype == dtype && k.b_layout == b_layout)
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join(", ")
}
