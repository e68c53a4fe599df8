//! The table of rungs: the single place that says which kernels exist, how each is launched and
//! what it requires. The CLI, the tests and the benches all read [`RUNGS`]; adding a rung means
//! adding its file under `kernels-gpu/src/sgemm/` and one row here.

use crate::ptx::Arch;
use crate::runtime::MapKind;
use crate::{GemmError, GemmShape};
use gemm_geometry as geometry;

/// How much dynamic shared memory a rung's block needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMem {
    /// None.
    None,
    /// A fixed number of bytes, whatever the shape.
    Fixed(usize),
    /// `bytes_per_k × k` bytes: the block stages whole panels of length k.
    PerK {
        /// Bytes per unit of k.
        bytes_per_k: usize,
    },
}

/// How blocks are laid out over the tiles of C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridOrder {
    /// A 2-D grid: block (x, y) computes tile row y, tile column x.
    RowMajor,
    /// A 1-D grid of one block per tile; the kernel maps its index to a tile in grouped order.
    Grouped,
    /// Persistent blocks: the kernel loops over the tiles in grouped order, from its block
    /// index in steps of the grid size. [`Rung::launch`] reports one block per tile (the
    /// work); the runtime launches `min(tiles, SMs)` of them ([`Launch::persistent`]).
    Persistent,
}

/// What a rung multiplies and how: the element type of A, B and C, and the arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// fp32 A, B, C; fp32 multiply-adds (FFMA). Compared with cuBLAS SGEMM, TF32 off.
    Fp32,
    /// fp32 A, B, C; inputs cut to TF32 for the tensor cores (v14 rounds, v19's `wgmma`
    /// truncates), fp32 accumulation. Compared with cuBLAS in TF32 mode.
    Tf32,
    /// fp16 A, B, C (passed as `u16` bit patterns); fp32 accumulation on the tensor cores.
    /// Compared with cuBLAS fp16 (`cublasGemmEx`, fp32 compute).
    Fp16,
    /// FP8 e4m3 A `[m, k]` and B `[n, k]` (B taken transposed: FP8 `wgmma` reads it K-major
    /// only), per-tensor scales, fp32 accumulation on the tensor cores, fp16 C. Compared with
    /// cuBLASLt's FP8 GEMM (the same layouts and scales, fast accumulation).
    Fp8E4m3,
    /// As [`Precision::Fp8E4m3`] with e5m2 operands.
    Fp8E5m2,
}

impl Precision {
    /// Every precision, in ladder order.
    pub const ALL: [Precision; 5] = [
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Fp8E4m3,
        Precision::Fp8E5m2,
    ];

    /// Short label for reports: `fp32`, `tf32`, `fp16`, `fp8-e4m3`, `fp8-e5m2`.
    pub fn label(&self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Fp16 => "fp16",
            Precision::Fp8E4m3 => "fp8-e4m3",
            Precision::Fp8E5m2 => "fp8-e5m2",
        }
    }

    /// The name of the cuBLAS baseline for this precision in reports.
    pub fn baseline(&self) -> &'static str {
        match self {
            Precision::Fp32 => "cublas",
            Precision::Tf32 => "cublas-tf32",
            Precision::Fp16 => "cublas-fp16",
            Precision::Fp8E4m3 => "cublaslt-fp8-e4m3",
            Precision::Fp8E5m2 => "cublaslt-fp8-e5m2",
        }
    }

    /// The baseline's description.
    pub fn baseline_idea(&self) -> &'static str {
        match self {
            Precision::Fp32 => "cuBLAS SGEMM, TF32 off",
            Precision::Tf32 => "cuBLAS GEMM, TF32 tensor cores",
            Precision::Fp16 => "cuBLAS GEMM, fp16 in/out, fp32 accumulation",
            Precision::Fp8E4m3 => "cuBLASLt FP8 e4m3 (B [n, k]), fp16 out, fast accumulation",
            Precision::Fp8E5m2 => "cuBLASLt FP8 e5m2 (B [n, k]), fp16 out, fast accumulation",
        }
    }

    /// Bytes per element of A and B.
    pub fn element_bytes(&self) -> usize {
        match self {
            Precision::Fp32 | Precision::Tf32 => 4,
            Precision::Fp16 => 2,
            Precision::Fp8E4m3 | Precision::Fp8E5m2 => 1,
        }
    }

    /// Bytes per element of C: that of A and B, except FP8's fp16 output.
    pub fn output_bytes(&self) -> usize {
        match self {
            Precision::Fp8E4m3 | Precision::Fp8E5m2 => 2,
            other => other.element_bytes(),
        }
    }

    /// Whether this precision's rungs take B stored `[n, k]` (C = A·Bᵀ): the FP8 ones, as
    /// cuBLASLt's FP8 GEMM and the Triton tutorial's fp8 run do.
    pub fn takes_b_nk(&self) -> bool {
        matches!(self, Precision::Fp8E4m3 | Precision::Fp8E5m2)
    }
}

/// One rung of the ladder: a kernel entry point and everything needed to launch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rung {
    /// Short name, used on the command line and in reports (`v0`, `v1`, ...).
    pub name: &'static str,
    /// The rung's idea, in a few words.
    pub idea: &'static str,
    /// The kernel's entry point in the PTX.
    pub entry: &'static str,
    /// Threads per block along x and y.
    pub block_dim: (u32, u32),
    /// Rows of C each block computes.
    pub block_tile_m: u32,
    /// Columns of C each block computes.
    pub block_tile_n: u32,
    /// Dynamic shared memory per block.
    pub shared_mem: SharedMem,
    /// Whether A and B are read with 128-bit loads, which need 16-byte-aligned base addresses.
    pub vector_loads: bool,
    /// How blocks map to tiles of C.
    pub grid: GridOrder,
    /// For an autotuned rung, the kernels it chooses from (the host times them per shape, see
    /// `crate::ladder::autotune`, feature `harness`); empty for a rung that is one kernel.
    pub candidates: &'static [Rung],
    /// The kernel takes four more arguments after `(a, b, c, m, n, k)`: `alpha`, `beta`,
    /// `leaky_slope` and `activation` (see [`Epilogue`]).
    pub epilogue_args: bool,
    /// Element types and arithmetic.
    pub precision: Precision,
    /// For a kernel that loads its tiles with TMA: what its tensor maps of A and B describe. It
    /// takes one more argument, their address (built by the host, see [`crate::runtime`]). TMA
    /// needs rows that start at 16-byte boundaries: k and n multiples of 8 (fp16), 4 (fp32).
    pub tensor_maps: Option<MapKind>,
    /// The architecture the kernel needs: [`Arch::Sm80`] (in both PTX modules) or
    /// [`Arch::Sm90a`] (Hopper's `wgmma` and TMA, in the sm_90a module only).
    pub arch: Arch,
    /// Blocks per thread-block cluster along x (v23: 2; 1 elsewhere). The kernel declares it
    /// (`.reqnctapercluster`); `block_tile_m` is then the rows of a cluster's work item.
    pub cluster: u32,
}

/// `C = activation(alpha·A·B + beta·C)`, for rungs with `epilogue_args`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epilogue {
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of the existing C (0: C is not read).
    pub beta: f32,
    /// `Some(slope)`: leaky ReLU, `x` if `x > 0` else `slope·x`.
    pub leaky_slope: Option<f32>,
}

impl Epilogue {
    /// A plain product, `C = A·B`.
    pub const STORE: Epilogue = Epilogue {
        alpha: 1.0,
        beta: 0.0,
        leaky_slope: None,
    };
}

/// Every rung, in ladder order.
pub const RUNGS: &[Rung] = &[
    Rung {
        name: "v0",
        idea: "global memory",
        entry: "sgemm_v00_global_memory",
        block_dim: (geometry::v00::BLOCK_DIM_X, geometry::v00::BLOCK_DIM_Y),
        block_tile_m: geometry::v00::BLOCK_TILE_M,
        block_tile_n: geometry::v00::BLOCK_TILE_N,
        shared_mem: SharedMem::None,
        vector_loads: false,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v1",
        idea: "whole panels in shared memory",
        entry: "sgemm_v01_shared_panels",
        // x along the columns of the tile, y along its rows.
        block_dim: (geometry::v01::BLOCK_TILE_N, geometry::v01::BLOCK_TILE_M),
        block_tile_m: geometry::v01::BLOCK_TILE_M,
        block_tile_n: geometry::v01::BLOCK_TILE_N,
        // A panel 4×k plus B panel k×8, in f32.
        shared_mem: SharedMem::PerK {
            bytes_per_k: geometry::v01::SHARED_BYTES_PER_K as usize,
        },
        vector_loads: false,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v2",
        idea: "shared-memory tiles along k",
        entry: "sgemm_v02_shared_tiles",
        block_dim: (geometry::v02::TILE, geometry::v02::TILE),
        block_tile_m: geometry::v02::TILE,
        block_tile_n: geometry::v02::TILE,
        shared_mem: SharedMem::Fixed(geometry::v02::SHARED_BYTES as usize),
        vector_loads: false,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v3",
        idea: "4×4 outputs per thread",
        entry: "sgemm_v03_thread_tile",
        block_dim: (
            geometry::v03::THREADS_PER_SIDE,
            geometry::v03::THREADS_PER_SIDE,
        ),
        block_tile_m: geometry::v03::BLOCK_TILE_M,
        block_tile_n: geometry::v03::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v03::SHARED_BYTES as usize),
        vector_loads: false,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v4",
        idea: "float4 global loads",
        entry: "sgemm_v04_float4_loads",
        block_dim: (
            geometry::v03::THREADS_PER_SIDE,
            geometry::v03::THREADS_PER_SIDE,
        ),
        block_tile_m: geometry::v03::BLOCK_TILE_M,
        block_tile_n: geometry::v03::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v03::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v5",
        idea: "8×8 register tiles, outer products",
        entry: "sgemm_v05_register_blocking",
        block_dim: (geometry::v05::THREADS, 1),
        block_tile_m: geometry::v05::BLOCK_TILE_M,
        block_tile_n: geometry::v05::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v05::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v6",
        idea: "float4 B fragments from shared",
        entry: "sgemm_v06_vector_fragments",
        block_dim: (geometry::v05::THREADS, 1),
        block_tile_m: geometry::v05::BLOCK_TILE_M,
        block_tile_n: geometry::v05::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v05::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v7",
        idea: "A tile transposed in shared",
        entry: "sgemm_v07_transposed_a",
        block_dim: (geometry::v05::THREADS, 1),
        block_tile_m: geometry::v05::BLOCK_TILE_M,
        block_tile_n: geometry::v05::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v05::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v8",
        idea: "double buffering",
        entry: "sgemm_v08_double_buffering",
        block_dim: (geometry::v05::THREADS, 1),
        block_tile_m: geometry::v05::BLOCK_TILE_M,
        block_tile_n: geometry::v05::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v05::DOUBLE_BUFFERED_SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::RowMajor,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v9",
        idea: "grouped launch order (L2 reuse)",
        entry: "sgemm_v09_grouped_order",
        block_dim: (geometry::v05::THREADS, 1),
        block_tile_m: geometry::v05::BLOCK_TILE_M,
        block_tile_n: geometry::v05::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v05::DOUBLE_BUFFERED_SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    warp_tiled(
        "v10",
        "warp tiling, conflict-free fragments",
        "sgemm_v10_warp_tiling",
        geometry::v10::TILE,
    ),
    Rung {
        candidates: V11_CANDIDATES,
        ..warp_tiled(
            "v11",
            "autotuned block tile",
            "sgemm_v10_warp_tiling",
            geometry::v10::TILE,
        )
    },
    Rung {
        epilogue_args: true,
        ..warp_tiled(
            "v12",
            "fused epilogue (α, β, leaky ReLU)",
            "sgemm_v12_fused_epilogue",
            geometry::v10::TILE,
        )
    },
    Rung {
        name: "v13",
        idea: "cp.async 4-stage pipeline, 16 deep",
        entry: "sgemm_v13_async_copies",
        block_dim: (geometry::v13::THREADS, 1),
        block_tile_m: geometry::v13::BLOCK_TILE_M,
        block_tile_n: geometry::v13::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v13::SHARED_BYTES_KN as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v14",
        idea: "TF32 tensor cores (mma.sync m16n8k8)",
        entry: "sgemm_v14_tf32_tensor_cores",
        block_dim: (geometry::v14::THREADS, 1),
        block_tile_m: geometry::v14::BLOCK_TILE_M,
        block_tile_n: geometry::v14::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v14::SHARED_BYTES_KN as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Tf32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v15",
        idea: "FP16 mma.sync, ldmatrix, swizzle",
        entry: "hgemm_v15_fp16_tensor_cores",
        block_dim: (geometry::v15::THREADS, 1),
        block_tile_m: geometry::v15::BLOCK_TILE_M,
        block_tile_n: geometry::v15::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v15::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp16,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    },
    Rung {
        name: "v16",
        idea: "Hopper wgmma (sm_90a), async warpgroup MMA",
        entry: "hgemm_v16_wgmma",
        block_dim: (geometry::v16::THREADS, 1),
        block_tile_m: geometry::v16::BLOCK_TILE_M,
        block_tile_n: geometry::v16::BLOCK_TILE_N,
        // 4 stages of a 128×64 A tile and a 64×256 B tile in fp16, plus 1 KiB to align the
        // first stage to 1 024 bytes (the 128-byte swizzle's atom).
        shared_mem: SharedMem::Fixed(geometry::v16::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp16,
        tensor_maps: None,
        arch: Arch::Sm90a,
        cluster: 1,
    },
    v17_row(),
    Rung {
        name: "v18",
        idea: "persistent blocks, one per SM",
        entry: "hgemm_v18_persistent",
        grid: GridOrder::Persistent,
        ..v17_row()
    },
    Rung {
        name: "v19",
        idea: "TF32 on wgmma (v18's kernel), B transposed first",
        entry: "sgemm_v19_tf32_wgmma",
        grid: GridOrder::Persistent,
        precision: Precision::Tf32,
        // The same block, stages and shared memory as v17 (`geometry::v19` re-exports them).
        block_dim: (geometry::v19::THREADS, 1),
        shared_mem: SharedMem::Fixed(geometry::v19::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::Tf32Copy),
        ..v17_row()
    },
    Rung {
        name: "v20",
        idea: "FP8 e4m3 on wgmma (v18's kernel), B [n, k]",
        entry: "hgemm_v20_fp8_e4m3",
        grid: GridOrder::Persistent,
        precision: Precision::Fp8E4m3,
        // The same block, stages and shared memory as v17 (`geometry::v20` re-exports them).
        block_dim: (geometry::v20::THREADS, 1),
        shared_mem: SharedMem::Fixed(geometry::v20::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::Fp8),
        ..v17_row()
    },
    Rung {
        name: "v20-e5m2",
        idea: "v20 with e5m2 operands",
        entry: "hgemm_v20_fp8_e5m2",
        grid: GridOrder::Persistent,
        precision: Precision::Fp8E5m2,
        block_dim: (geometry::v20::THREADS, 1),
        shared_mem: SharedMem::Fixed(geometry::v20::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::Fp8),
        ..v17_row()
    },
    Rung {
        name: "v21",
        idea: "TF32, B from registers (Cᵀ = Bᵀ·Aᵀ), no copy",
        entry: "sgemm_v21_tf32_register_b",
        grid: GridOrder::Persistent,
        precision: Precision::Tf32,
        // v17's stages and shared memory; a producer warpgroup (setmaxnreg) and 256 × 128 tiles.
        block_dim: (geometry::v21::THREADS, 1),
        block_tile_m: geometry::v21::BLOCK_TILE_M,
        block_tile_n: geometry::v21::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v21::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::Tf32RegisterB),
        ..v17_row()
    },
    Rung {
        name: "v22",
        idea: "two consumer teams take turns (ping-pong), setmaxnreg",
        entry: "hgemm_v22_pingpong",
        grid: GridOrder::Persistent,
        // Two consumer warpgroups (one team each) and a producer warpgroup; 64 × 256 tiles.
        block_dim: (geometry::v22::THREADS, 1),
        block_tile_m: geometry::v22::BLOCK_TILE_M,
        block_tile_n: geometry::v22::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v22::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::F16Pingpong),
        ..v17_row()
    },
    Rung {
        name: "v23",
        idea: "v22 in clusters of 2, B multicast by TMA",
        entry: "hgemm_v23_clusters",
        grid: GridOrder::Persistent,
        block_dim: (geometry::v23::THREADS, 1),
        // A work item is a cluster's two tiles, one above the other.
        block_tile_m: geometry::v23::CLUSTER_TILE_M,
        block_tile_n: geometry::v23::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v23::SHARED_BYTES as usize),
        tensor_maps: Some(MapKind::F16Pingpong),
        cluster: geometry::v23::CLUSTER,
        ..v17_row()
    },
];

/// v17's row, which v18 shares but for its entry and grid.
const fn v17_row() -> Rung {
    Rung {
        name: "v17",
        idea: "TMA producer warp, mbarrier pipeline",
        entry: "hgemm_v17_tma_warp_specialized",
        // Two consumer warpgroups and one producer warp.
        block_dim: (geometry::v17::THREADS, 1),
        block_tile_m: geometry::v17::BLOCK_TILE_M,
        block_tile_n: geometry::v17::BLOCK_TILE_N,
        shared_mem: SharedMem::Fixed(geometry::v17::SHARED_BYTES as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp16,
        tensor_maps: Some(MapKind::F16),
        arch: Arch::Sm90a,
        cluster: 1,
    }
}

/// The block tiles v11 chooses from: v10's kernel monomorphized over tile sizes.
pub const V11_CANDIDATES: &[Rung] = &[
    warp_tiled(
        "128x128x8",
        "128×128 tile, 8 deep",
        "sgemm_v10_warp_tiling",
        geometry::v10::TILE,
    ),
    warp_tiled(
        "128x128x16",
        "128×128 tile, 16 deep",
        "sgemm_v11_tile_128x128x16",
        geometry::v11::TILE_128X128X16,
    ),
    warp_tiled(
        "128x64x8",
        "128×64 tile, 8 deep",
        "sgemm_v11_tile_128x64x8",
        geometry::v11::TILE_128X64X8,
    ),
    warp_tiled(
        "128x64x16",
        "128×64 tile, 16 deep",
        "sgemm_v11_tile_128x64x16",
        geometry::v11::TILE_128X64X16,
    ),
    warp_tiled(
        "64x128x8",
        "64×128 tile, 8 deep",
        "sgemm_v11_tile_64x128x8",
        geometry::v11::TILE_64X128X8,
    ),
    warp_tiled(
        "64x128x16",
        "64×128 tile, 16 deep",
        "sgemm_v11_tile_64x128x16",
        geometry::v11::TILE_64X128X16,
    ),
    warp_tiled(
        "64x64x16",
        "64×64 tile, 16 deep",
        "sgemm_v11_tile_64x64x16",
        geometry::v11::TILE_64X64X16,
    ),
    warp_tiled(
        "128x128x8w",
        "128×128 tile, 8 deep, 8×16 per thread",
        "sgemm_v11_tile_128x128x8_wide",
        geometry::v11::TILE_128X128X8_WIDE,
    ),
    // In the sm_90a module only: ptxas fits this tile's 255 registers without spilling for
    // sm_90 alone (see kernels-gpu/src/sgemm/v11_autotuned.rs), so other GPUs tune without it.
    Rung {
        arch: Arch::Sm90a,
        cluster: 1,
        ..warp_tiled(
            "128x128x16w",
            "128×128 tile, 16 deep, 8×16 per thread",
            "sgemm_v11_tile_128x128x16_wide",
            geometry::v11::TILE_128X128X16_WIDE,
        )
    },
    warp_tiled(
        "64x128x8w",
        "64×128 tile, 8 deep, 8×16 per thread",
        "sgemm_v11_tile_64x128x8_wide",
        geometry::v11::TILE_64X128X8_WIDE,
    ),
    warp_tiled(
        "256x128x8w",
        "256×128 tile, 8 deep, 8×16 per thread",
        "sgemm_v11_tile_256x128x8_wide",
        geometry::v11::TILE_256X128X8_WIDE,
    ),
    warp_tiled(
        "128x256x8w",
        "128×256 tile, 8 deep, 8×16 per thread",
        "sgemm_v11_tile_128x256x8_wide",
        geometry::v11::TILE_128X256X8_WIDE,
    ),
    warp_tiled(
        "64x256x8w",
        "64×256 tile, 8 deep, 8×16 per thread",
        "sgemm_v11_tile_64x256x8_wide",
        geometry::v11::TILE_64X256X8_WIDE,
    ),
];

/// A row for v10's warp-tiled kernel with the block tile `tile` (threads and shared memory as
/// [`geometry::v10`] computes them).
const fn warp_tiled(
    name: &'static str,
    idea: &'static str,
    entry: &'static str,
    tile: geometry::v10::BlockTile,
) -> Rung {
    Rung {
        name,
        idea,
        entry,
        block_dim: (tile.threads(), 1),
        block_tile_m: tile.block_tile_m,
        block_tile_n: tile.block_tile_n,
        shared_mem: SharedMem::Fixed(tile.shared_bytes() as usize),
        vector_loads: true,
        grid: GridOrder::Grouped,
        candidates: &[],
        epilogue_args: false,
        precision: Precision::Fp32,
        tensor_maps: None,
        arch: Arch::Sm80,
        cluster: 1,
    }
}

/// CUDA's limit on blocks along grid y (grid x allows 2³¹ − 1).
pub const MAX_GRID_Y: u64 = 65_535;
/// CUDA's limit on blocks along grid x.
pub const MAX_GRID_X: u64 = i32::MAX as u64;

/// Grid, block and shared memory for one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Persistent blocks ([`GridOrder::Persistent`]): `grid` counts tiles, and at most one
    /// block per SM is launched.
    pub persistent: bool,
    /// Blocks along x and y (work items, one cluster each, for a clustered rung).
    pub grid: (u32, u32),
    /// Blocks per thread-block cluster (1: no clusters): the launch has `cluster` blocks per
    /// work item along x, and its grid's x is a multiple of it.
    pub cluster: u32,
    /// Threads per block along x and y.
    pub block: (u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl Rung {
    /// Looks a rung up by name.
    pub fn by_name(name: &str) -> Result<&'static Rung, GemmError> {
        RUNGS
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| GemmError::UnknownRung {
                name: name.to_string(),
                known: RUNGS.iter().map(|r| r.name).collect::<Vec<_>>().join(", "),
            })
    }

    /// Why the rung cannot run on a device of compute capability `capability`, or `None`
    /// if it can.
    pub fn unavailable_on(&self, capability: (i32, i32)) -> Option<String> {
        if self.arch.supported_by(capability) {
            None
        } else {
            Some(format!(
                "needs {} (this device is {}.{})",
                self.arch.label(),
                capability.0,
                capability.1
            ))
        }
    }

    /// Dynamic shared memory for `shape`, in bytes.
    pub fn shared_mem_bytes(&self, shape: &GemmShape) -> usize {
        match self.shared_mem {
            SharedMem::None => 0,
            SharedMem::Fixed(bytes) => bytes,
            SharedMem::PerK { bytes_per_k } => bytes_per_k * shape.k,
        }
    }

    /// The launch for `shape` on a device that allows `max_shared_bytes` of shared memory per
    /// block, or the reason the rung cannot run it.
    pub fn launch(&self, shape: &GemmShape, max_shared_bytes: usize) -> Result<Launch, GemmError> {
        let needed = self.shared_mem_bytes(shape);
        if needed > max_shared_bytes {
            let max_k = match self.shared_mem {
                SharedMem::PerK { bytes_per_k } => max_shared_bytes / bytes_per_k,
                _ => 0,
            };
            return Err(GemmError::SharedMemory {
                rung: self.name,
                k: shape.k,
                needed,
                limit: max_shared_bytes,
                max_k,
            });
        }
        let tiles_n = shape.n.div_ceil(self.block_tile_n as usize) as u64;
        let tiles_m = shape.m.div_ceil(self.block_tile_m as usize) as u64;
        let (blocks_x, blocks_y) = match self.grid {
            GridOrder::RowMajor => (tiles_n, tiles_m),
            GridOrder::Grouped | GridOrder::Persistent => (tiles_n * tiles_m, 1),
        };
        for (axis, blocks, limit) in [("x", blocks_x, MAX_GRID_X), ("y", blocks_y, MAX_GRID_Y)] {
            if blocks > limit {
                return Err(GemmError::GridTooLarge {
                    rung: self.name,
                    axis,
                    blocks,
                    limit,
                });
            }
        }
        let per_16_bytes = 16 / self.precision.element_bytes();
        // B's rows run along n when it is stored `[k, n]` and read as it is; along k when the
        // rung takes B `[n, k]` or reads a transposed copy.
        let b_rows_along_k = self.transposes_b() || self.precision.takes_b_nk();
        let rows_off = !shape.k.is_multiple_of(per_16_bytes)
            || (!b_rows_along_k && !shape.n.is_multiple_of(per_16_bytes));
        if self.tensor_maps.is_some() && rows_off {
            return Err(GemmError::TmaRows {
                rung: self.name,
                multiple: per_16_bytes,
                k: shape.k,
                n: shape.n,
            });
        }
        Ok(Launch {
            persistent: self.grid == GridOrder::Persistent,
            cluster: self.cluster,
            grid: (blocks_x as u32, blocks_y as u32),
            block: self.block_dim,
            shared_mem_bytes: needed as u32,
        })
    }

    /// Whether the launcher first copies B transposed (`[n, k]`) and the kernel reads that copy:
    /// v19, since TF32 `wgmma` reads shared-memory operands only K-major (v21 loads B into
    /// registers instead).
    pub fn transposes_b(&self) -> bool {
        self.tensor_maps == Some(MapKind::Tf32Copy)
    }

    /// Checks that the base addresses of A and B suit the rung's loads.
    pub fn check_alignment(&self, a_address: u64, b_address: u64) -> Result<(), GemmError> {
        if !self.vector_loads {
            return Ok(());
        }
        for (name, address) in [("A", a_address), ("B", b_address)] {
            if address % 16 != 0 {
                return Err(GemmError::Misaligned {
                    rung: self.name,
                    name,
                    offset_bytes: address % 16,
                });
            }
        }
        Ok(())
    }
}
