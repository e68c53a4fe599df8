//! Dispatch: which kernel runs a validated [`Problem`] on a device, and why.
//!
//! [`KERNELS`] lists the library's kernels, fastest first for each element type and B layout.
//! Each list starts with the thin-product kernels `thin_m` and `thin_n` ([`ShapeClass`]),
//! which serve only calls with at most [`THIN_MAX`](gemm_geometry::thin::THIN_MAX) rows or
//! columns of C: such a product is bound by reading its large operand once from DRAM, which
//! they do at full width where the tiled kernels would waste almost all of every tile. Then
//! come the kernels for every shape, in the order of the measurements in `docs/results/` (at
//! large shapes the TMA + `wgmma` kernel v18 beats the `mma.sync` kernel v15, which beats the
//! general kernel; the `cp.async` fp32 kernel v13 beats the general one). f32 and TF32 calls
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
use crate::runtime::tensor_map::{self, MatrixView};
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
    /// Persistent blocks, at most one per SM, each looping over (batch item, tile) pairs.
    Persistent,
    /// Thin products: one block per group of the streamed operand's rows or columns along x
    /// (`thin_m`: `block_tile_n` columns of C; `thin_n`: `block_tile_m` rows), batch items
    /// along z (at most 65 535: the kernel walks the rest in steps of the grid).
    Thin,
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
}

impl ShapeClass {
    /// Why a kernel of this class cannot serve `problem`, or `None` if it can.
    pub fn refusal(self, problem: &Problem) -> Option<String> {
        let max = geometry::thin::THIN_MAX as usize;
        match self {
            ShapeClass::Any => None,
            ShapeClass::ThinM if problem.m > max => Some(format!(
                "serves only thin products with m ≤ {max} (m is {})",
                problem.m
            )),
            ShapeClass::ThinN if problem.n > max => Some(format!(
                "serves only thin products with n ≤ {max} (n is {})",
                problem.n
            )),
            _ => None,
        }
    }
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
}

/// The general kernels: any alignment, any shape.
const fn general(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    KernelSpec {
        name: "general",
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        tensor_maps: false,
        threads: geometry::general::THREADS,
        block_tile_m: geometry::general::BLOCK_TILE_M,
        block_tile_n: geometry::general::BLOCK_TILE_N,
        shared_bytes: geometry::general::SHARED_BYTES,
        grid: GridKind::ColumnsRows,
        shape: ShapeClass::Any,
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
) -> KernelSpec {
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        tensor_maps: false,
        threads,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid: GridKind::Grouped,
        shape: ShapeClass::Any,
    }
}

/// v18's persistent TMA + `wgmma` kernel (sm_90a): A and B through tensor maps.
const fn tma(entry: &'static str, dtype: DType, b_layout: BLayout) -> KernelSpec {
    KernelSpec {
        name: "v18",
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm90a,
        // TMA reads rows that start on 16-byte boundaries (C needs less, but is held to the
        // same rule here: one check for the whole call).
        row_alignment: 16,
        tensor_maps: true,
        threads: geometry::v17::THREADS,
        block_tile_m: geometry::v17::BLOCK_TILE_M,
        block_tile_n: geometry::v17::BLOCK_TILE_N,
        shared_bytes: geometry::v17::SHARED_BYTES,
        grid: GridKind::Persistent,
        shape: ShapeClass::Any,
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
    let (name, block_tile_m, block_tile_n, shared_bytes) = match (shape, b_layout) {
        (ShapeClass::ThinN, BLayout::Kn) => (
            "thin_n",
            thin::DOT_ROWS_PER_BLOCK,
            thin::THIN_MAX,
            thin::STAGED_SHARED_BYTES,
        ),
        (ShapeClass::ThinN, BLayout::Nk) => ("thin_n", thin::DOT_ROWS_PER_BLOCK, thin::THIN_MAX, 0),
        (_, BLayout::Kn) => (
            "thin_m",
            thin::THIN_MAX,
            thin::kn_block_columns(element_bytes),
            thin::KN_SHARED_BYTES,
        ),
        (_, BLayout::Nk) => ("thin_m", thin::THIN_MAX, thin::DOT_ROWS_PER_BLOCK, 0),
    };
    KernelSpec {
        name,
        entry,
        dtype,
        b_layout,
        arch: Arch::Sm80,
        row_alignment: 0,
        tensor_maps: false,
        threads: thin::THREADS,
        block_tile_m,
        block_tile_n,
        shared_bytes,
        grid: GridKind::Thin,
        shape,
    }
}

const V13_TILE: (u32, u32) = (geometry::v13::BLOCK_TILE_M, geometry::v13::BLOCK_TILE_N);
const V15_TILE: (u32, u32) = (geometry::v15::BLOCK_TILE_M, geometry::v15::BLOCK_TILE_N);
const V14_TILE: (u32, u32) = (geometry::v14::BLOCK_TILE_M, geometry::v14::BLOCK_TILE_N);

/// Every kernel, fastest first within each (element type, B layout).
pub const KERNELS: &[KernelSpec] = &[
    thin(
        "gemm_thin_m_f32_kn",
        DType::F32,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
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
        "gemm_thin_n_f32_nk",
        DType::F32,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    ladder(
        "v13",
        "gemm_v13_f32_kn",
        DType::F32,
        BLayout::Kn,
        geometry::v13::THREADS,
        V13_TILE,
        geometry::v13::SHARED_BYTES_KN,
    ),
    ladder(
        "v13",
        "gemm_v13_f32_nk",
        DType::F32,
        BLayout::Nk,
        geometry::v13::THREADS,
        V13_TILE,
        geometry::v13::SHARED_BYTES_NK,
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
        "gemm_thin_n_f32_nk",
        DType::Tf32,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    ladder(
        "v14",
        "gemm_v14_tf32_kn",
        DType::Tf32,
        BLayout::Kn,
        geometry::v14::THREADS,
        V14_TILE,
        geometry::v14::SHARED_BYTES_KN,
    ),
    ladder(
        "v14",
        "gemm_v14_tf32_nk",
        DType::Tf32,
        BLayout::Nk,
        geometry::v14::THREADS,
        V14_TILE,
        geometry::v14::SHARED_BYTES_NK,
    ),
    // Where v14 cannot run, exact fp32: more precise than TF32, never less.
    general("gemm_general_f32_kn", DType::Tf32, BLayout::Kn),
    general("gemm_general_f32_nk", DType::Tf32, BLayout::Nk),
    thin(
        "gemm_thin_m_f16_kn",
        DType::F16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_n_f16_kn",
        DType::F16,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_n_f16_nk",
        DType::F16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_n_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        ShapeClass::ThinN,
    ),
    thin(
        "gemm_thin_m_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinM,
    ),
    thin(
        "gemm_thin_n_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        ShapeClass::ThinN,
    ),
    tma("gemm_v18_f16_kn", DType::F16, BLayout::Kn),
    tma("gemm_v18_f16_nk", DType::F16, BLayout::Nk),
    tma("gemm_v18_bf16_kn", DType::Bf16, BLayout::Kn),
    tma("gemm_v18_bf16_nk", DType::Bf16, BLayout::Nk),
    ladder(
        "v15",
        "gemm_v15_f16_kn",
        DType::F16,
        BLayout::Kn,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
    ),
    general("gemm_general_f16_kn", DType::F16, BLayout::Kn),
    ladder(
        "v15",
        "gemm_v15_f16_nk",
        DType::F16,
        BLayout::Nk,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
    ),
    general("gemm_general_f16_nk", DType::F16, BLayout::Nk),
    ladder(
        "v15",
        "gemm_v15_bf16_kn",
        DType::Bf16,
        BLayout::Kn,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
    ),
    general("gemm_general_bf16_kn", DType::Bf16, BLayout::Kn),
    ladder(
        "v15",
        "gemm_v15_bf16_nk",
        DType::Bf16,
        BLayout::Nk,
        geometry::v15::THREADS,
        V15_TILE,
        geometry::v15::SHARED_BYTES,
    ),
    general("gemm_general_bf16_nk", DType::Bf16, BLayout::Nk),
];

/// The kernel chosen for a call, and the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The kernel.
    pub kernel: &'static KernelSpec,
    /// Why it was chosen: the faster kernels passed over, each with its reason.
    pub reason: String,
    /// Blocks along x, y and z.
    pub grid: (u32, u32, u32),
}

/// Why `spec` cannot run `problem` on `caps`, or `None` if it can.
pub fn refusal(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<String> {
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
    if spec.row_alignment > 0 && !problem.rows_aligned_to(spec.row_alignment) {
        return Some(format!(
            "needs every row of A, B and C to start on a {}-byte boundary (base addresses, \
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

/// The tensor maps of A and B for a TMA kernel: each view and box, checked against TMA's rules
/// (16-byte rows, strides, dimensions) by [`tensor_map::tiled_map_spec`].
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
    let (b_rows, b_cols, b_box) = match spec.b_layout {
        BLayout::Kn => (problem.k, problem.n, geometry::v17::B_KN_BOX),
        BLayout::Nk => (problem.n, problem.k, geometry::v17::B_NK_BOX),
    };
    let b = view(
        problem.buffers.b.0,
        b_rows,
        b_cols,
        problem.ldb,
        problem.strides.1,
    );
    for (v, [cols, rows]) in [(&a, geometry::v17::A_BOX), (&b, b_box)] {
        tensor_map::tiled_map_spec(v, cols, rows)?;
    }
    Ok([(a, geometry::v17::A_BOX), (b, b_box)])
}

/// The grid for `spec` on `problem`, or `None` if it exceeds CUDA's limits.
pub fn grid(spec: &KernelSpec, caps: &DeviceCaps, problem: &Problem) -> Option<(u32, u32, u32)> {
    const MAX_YZ: u64 = 65_535;
    let rows = problem.m.div_ceil(spec.block_tile_m as usize) as u64;
    let columns = problem.n.div_ceil(spec.block_tile_n as usize) as u64;
    let tiles = rows.checked_mul(columns)?;
    let z = (problem.batch as u64).min(MAX_YZ) as u32;
    let fits_x = |x: u64| u32::try_from(x).ok().filter(|&x| x <= i32::MAX as u32);
    match spec.grid {
        GridKind::Grouped => Some((fits_x(tiles)?, 1, z)),
        GridKind::ColumnsRows => Some((fits_x(columns)?, rows.min(MAX_YZ) as u32, z)),
        GridKind::Thin => match spec.shape {
            ShapeClass::ThinN => Some((fits_x(rows)?, 1, z)),
            _ => Some((fits_x(columns)?, 1, z)),
        },
        GridKind::Persistent => {
            let work = tiles.checked_mul(problem.batch as u64)?;
            u32::try_from(work).ok()?;
            Some((work.min(caps.sm_count.max(1) as u64) as u32, 1, 1))
        }
    }
}

/// The kernel for `problem` on `caps`: `forced` if given (refused with its reason if it cannot
/// run the call), else the first of [`KERNELS`] for the call's element type and B layout that
/// can.
pub fn choose(
    caps: &DeviceCaps,
    problem: &Problem,
    forced: Option<&str>,
) -> Result<Plan, GemmError> {
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
        });
    }
    let mut passed_over = Vec::new();
    for spec in candidates {
        match refusal(spec, caps, problem) {
            Some(reason) => passed_over.push(format!("{}: {reason}", spec.name)),
            None => {
                let reason = if passed_over.is_empty() {
                    format!(
                        "the fastest {} kernel for B {}",
                        problem.dtype.label(),
                        problem.b_layout.label()
                    )
                } else {
                    format!("faster kernels passed over: {}", passed_over.join("; "))
                };
                return Ok(Plan {
                    kernel: spec,
                    reason,
                    grid: grid(spec, caps, problem).expect("checked by refusal"),
                });
            }
        }
    }
    Err(GemmError::NoKernel {
        reason: passed_over.join("; "),
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
