//! Host and device read one geometry (`gemm-geometry`); this checks that what the host launches
//! matches what the PTX declares: each library kernel's threads per block against its
//! `.maxntid` (the launch bounds `build.rs` writes from the device crate's `launch_bounds!`),
//! its entry point present, and its dynamic shared memory within what the launch may ask; and
//! that every ladder rung and autotune candidate launches the block, tile and shared memory of
//! its module in `gemm-geometry`, the numbers its kernel is compiled with.

use gemm_geometry as geometry;
use rust_gemm::api::dispatch::{KERNELS, REDUCTION_ENTRIES};
use rust_gemm::ladder::rungs::{SharedMem, V11_CANDIDATES};
use rust_gemm::{GemmShape, PTX, RUNGS, Rung};

/// Hopper's opt-in limit of dynamic shared memory per block, the largest of any GPU the
/// kernels are built for.
const MAX_SHARED_BYTES: usize = 227 * 1024;

/// The `.maxntid` x of `entry` in `ptx`, if the entry exists.
fn max_threads(ptx: &str, entry: &str) -> Option<Option<u32>> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let body = &ptx[start..];
    let header_end = body.find('{').unwrap_or(body.len());
    Some(
        body[..header_end]
            .lines()
            .find_map(|line| line.trim().strip_prefix(".maxntid "))
            .and_then(|rest| rest.split(',').next())
            .and_then(|x| x.trim().parse().ok()),
    )
}

#[test]
fn library_kernels_launch_the_threads_their_ptx_declares() {
    for spec in KERNELS {
        let declared = max_threads(PTX, spec.entry)
            .unwrap_or_else(|| panic!("{} is not in the PTX", spec.entry))
            .unwrap_or_else(|| panic!("{} has no .maxntid (launch_bounds!)", spec.entry));
        assert_eq!(
            declared, spec.threads,
            "{}: the host launches {} threads, the PTX declares {}",
            spec.entry, spec.threads, declared
        );
        assert!(
            spec.shared_bytes as usize <= MAX_SHARED_BYTES,
            "{}",
            spec.entry
        );
    }
}

#[test]
fn split_k_reductions_launch_the_threads_their_ptx_declares() {
    for entry in REDUCTION_ENTRIES {
        let declared = max_threads(PTX, entry)
            .unwrap_or_else(|| panic!("{entry} is not in the PTX"))
            .unwrap_or_else(|| panic!("{entry} has no .maxntid (launch_bounds!)"));
        assert_eq!(declared, gemm_geometry::split_k::REDUCE_THREADS, "{entry}");
    }
}

#[test]
fn the_transpose_kernel_launches_the_threads_its_ptx_declares() {
    let entry = rust_gemm::runtime::transpose::TRANSPOSE_ENTRY;
    let declared = max_threads(PTX, entry)
        .unwrap_or_else(|| panic!("{entry} is not in the PTX"))
        .unwrap_or_else(|| panic!("{entry} has no .maxntid (launch_bounds!)"));
    assert_eq!(declared, gemm_geometry::v19::TRANSPOSE_THREADS);
}

/// Every kernel of the ladder: each rung that is one kernel, and each autotune candidate.
fn ladder_kernels() -> impl Iterator<Item = &'static Rung> {
    RUNGS
        .iter()
        .filter(|r| r.candidates.is_empty())
        .chain(RUNGS.iter().flat_map(|r| r.candidates))
}

#[test]
fn ladder_rungs_launch_the_threads_their_ptx_declares() {
    for rung in ladder_kernels() {
        let declared = max_threads(PTX, rung.entry)
            .unwrap_or_else(|| panic!("{} ({}) is not in the PTX", rung.entry, rung.name));
        // Entries without launch bounds (v0–v9, v11's candidates) declare nothing to compare.
        if let Some(declared) = declared {
            let (x, y) = rung.block_dim;
            assert_eq!(declared, x * y, "{}: launch {}×{}", rung.name, x, y);
        }
    }
}

/// What `gemm-geometry` says a ladder kernel launches.
struct Geometry {
    /// Threads per block along x and y.
    block: (u32, u32),
    /// The block tile: rows and columns of C.
    tile: (u32, u32),
    /// Dynamic shared memory, in bytes, for the k asked.
    shared_bytes: usize,
}

/// The geometry of a ladder kernel for a given k; `None` for the kernels it does not cover.
fn geometry_of(rung: &Rung, k: usize) -> Option<Geometry> {
    use geometry::{v00, v01, v02, v03, v05, v10};
    let warp_tiled = |tile: v10::BlockTile| {
        (
            (tile.threads(), 1),
            (tile.block_tile_m, tile.block_tile_n),
            tile.shared_bytes() as usize,
        )
    };
    let v05_tiles = (v05::BLOCK_TILE_M, v05::BLOCK_TILE_N);
    let (block, tile, shared_bytes) = match rung.entry {
        "sgemm_v00_global_memory" => (
            (v00::BLOCK_DIM_X, v00::BLOCK_DIM_Y),
            (v00::BLOCK_TILE_M, v00::BLOCK_TILE_N),
            0,
        ),
        "sgemm_v01_shared_panels" => (
            (v01::BLOCK_TILE_N, v01::BLOCK_TILE_M),
            (v01::BLOCK_TILE_M, v01::BLOCK_TILE_N),
            v01::SHARED_BYTES_PER_K as usize * k,
        ),
        "sgemm_v02_shared_tiles" => (
            (v02::TILE, v02::TILE),
            (v02::TILE, v02::TILE),
            v02::SHARED_BYTES as usize,
        ),
        "sgemm_v03_thread_tile" | "sgemm_v04_float4_loads" => (
            (v03::THREADS_PER_SIDE, v03::THREADS_PER_SIDE),
            (v03::BLOCK_TILE_M, v03::BLOCK_TILE_N),
            v03::SHARED_BYTES as usize,
        ),
        "sgemm_v05_register_blocking" | "sgemm_v06_vector_fragments" | "sgemm_v07_transposed_a" => {
            ((v05::THREADS, 1), v05_tiles, v05::SHARED_BYTES as usize)
        }
        "sgemm_v08_double_buffering" | "sgemm_v09_grouped_order" => (
            (v05::THREADS, 1),
            v05_tiles,
            v05::DOUBLE_BUFFERED_SHARED_BYTES as usize,
        ),
        "sgemm_v10_warp_tiling" | "sgemm_v12_fused_epilogue" => warp_tiled(v10::TILE),
        entry if entry.starts_with("sgemm_v11_tile_") => warp_tiled(v11_tile(rung)),
        "sgemm_v13_async_copies" => (
            (geometry::v13::THREADS, 1),
            (geometry::v13::BLOCK_TILE_M, geometry::v13::BLOCK_TILE_N),
            geometry::v13::SHARED_BYTES_KN as usize,
        ),
        "sgemm_v14_tf32_tensor_cores" => (
            (geometry::v14::THREADS, 1),
            (geometry::v14::BLOCK_TILE_M, geometry::v14::BLOCK_TILE_N),
            geometry::v14::SHARED_BYTES_KN as usize,
        ),
        "hgemm_v15_fp16_tensor_cores" => (
            (geometry::v15::THREADS, 1),
            (geometry::v15::BLOCK_TILE_M, geometry::v15::BLOCK_TILE_N),
            geometry::v15::SHARED_BYTES as usize,
        ),
        "hgemm_v16_wgmma" => (
            (geometry::v16::THREADS, 1),
            (geometry::v16::BLOCK_TILE_M, geometry::v16::BLOCK_TILE_N),
            geometry::v16::SHARED_BYTES as usize,
        ),
        "hgemm_v17_tma_warp_specialized" | "hgemm_v18_persistent" => (
            (geometry::v17::THREADS, 1),
            (geometry::v17::BLOCK_TILE_M, geometry::v17::BLOCK_TILE_N),
            geometry::v17::SHARED_BYTES as usize,
        ),
        "sgemm_v19_tf32_wgmma" => (
            (geometry::v19::THREADS, 1),
            (geometry::v19::BLOCK_TILE_M, geometry::v19::BLOCK_TILE_N),
            geometry::v19::SHARED_BYTES as usize,
        ),
        "hgemm_v20_fp8_e4m3" | "hgemm_v20_fp8_e5m2" => (
            (geometry::v20::THREADS, 1),
            (geometry::v20::BLOCK_TILE_M, geometry::v20::BLOCK_TILE_N),
            geometry::v20::SHARED_BYTES as usize,
        ),
        "sgemm_v21_tf32_register_b" => (
            (geometry::v21::THREADS, 1),
            (geometry::v21::BLOCK_TILE_M, geometry::v21::BLOCK_TILE_N),
            geometry::v21::SHARED_BYTES as usize,
        ),
        "hgemm_v22_pingpong" => (
            (geometry::v22::THREADS, 1),
            (geometry::v22::BLOCK_TILE_M, geometry::v22::BLOCK_TILE_N),
            geometry::v22::SHARED_BYTES as usize,
        ),
        // A work item is the cluster's: one tile per block, stacked along m.
        "hgemm_v23_clusters" => (
            (geometry::v23::THREADS, 1),
            (geometry::v23::CLUSTER_TILE_M, geometry::v23::BLOCK_TILE_N),
            geometry::v23::SHARED_BYTES as usize,
        ),
        _ => return None,
    };
    Some(Geometry {
        block,
        tile,
        shared_bytes,
    })
}

/// The tile of a v11 candidate, found by the name its entry spells
/// (`sgemm_v11_tile_<m>x<n>x<k>[_wide]`, `sgemm_v10_warp_tiling` for v10's own).
fn v11_tile(candidate: &Rung) -> geometry::v10::BlockTile {
    use geometry::v11::*;
    let tiles = [
        ("sgemm_v10_warp_tiling", geometry::v10::TILE),
        ("sgemm_v11_tile_128x128x16", TILE_128X128X16),
        ("sgemm_v11_tile_128x64x8", TILE_128X64X8),
        ("sgemm_v11_tile_128x64x16", TILE_128X64X16),
        ("sgemm_v11_tile_64x128x8", TILE_64X128X8),
        ("sgemm_v11_tile_64x128x16", TILE_64X128X16),
        ("sgemm_v11_tile_64x64x16", TILE_64X64X16),
        ("sgemm_v11_tile_128x128x8_wide", TILE_128X128X8_WIDE),
        ("sgemm_v11_tile_128x128x16_wide", TILE_128X128X16_WIDE),
        ("sgemm_v11_tile_64x128x8_wide", TILE_64X128X8_WIDE),
        ("sgemm_v11_tile_256x128x8_wide", TILE_256X128X8_WIDE),
        ("sgemm_v11_tile_128x256x8_wide", TILE_128X256X8_WIDE),
        ("sgemm_v11_tile_64x256x8_wide", TILE_64X256X8_WIDE),
    ];
    tiles
        .iter()
        .find(|(entry, _)| *entry == candidate.entry)
        .unwrap_or_else(|| panic!("{} is no v11 candidate", candidate.entry))
        .1
}

#[test]
fn ladder_rungs_launch_the_geometry_their_kernels_are_built_with() {
    let k = 304;
    // n and k multiples of 8, as the TMA rungs need (and k of 16, as v20 needs); m ragged.
    let shape = GemmShape::new(257, 264, k).unwrap();
    for rung in ladder_kernels() {
        let Geometry {
            block,
            tile,
            shared_bytes: shared,
        } = geometry_of(rung, k)
            .unwrap_or_else(|| panic!("{} ({}): no geometry", rung.name, rung.entry));
        assert_eq!(rung.block_dim, block, "{}: block", rung.name);
        assert_eq!(
            (rung.block_tile_m, rung.block_tile_n),
            tile,
            "{}: tile",
            rung.name
        );
        let launch = rung.launch(&shape, MAX_SHARED_BYTES).unwrap();
        assert_eq!(launch.block, block, "{}: launched block", rung.name);
        assert_eq!(
            launch.shared_mem_bytes as usize, shared,
            "{}: launched shared memory",
            rung.name
        );
        if let SharedMem::Fixed(bytes) = rung.shared_mem {
            assert!(bytes <= MAX_SHARED_BYTES, "{}", rung.name);
        }
    }
}

#[test]
fn v11_candidates_are_named_for_their_tiles() {
    assert_eq!(V11_CANDIDATES[0].entry, "sgemm_v10_warp_tiling");
    for candidate in V11_CANDIDATES {
        let tile = v11_tile(candidate);
        let wide = match tile.thread_tile_n {
            8 => false,
            16 => true,
            other => panic!("{}: {other} columns per lane", candidate.name),
        };
        let spelled = format!(
            "{}x{}x{}",
            tile.block_tile_m, tile.block_tile_n, tile.tile_k
        );
        let name = format!("{spelled}{}", if wide { "w" } else { "" });
        assert_eq!(candidate.name, name);
        if candidate.entry != "sgemm_v10_warp_tiling" {
            let entry = format!(
                "sgemm_v11_tile_{spelled}{}",
                if wide { "_wide" } else { "" }
            );
            assert_eq!(candidate.entry, entry);
        }
        let idea = format!(
            "{}×{} tile, {} deep{}",
            tile.block_tile_m,
            tile.block_tile_n,
            tile.tile_k,
            if wide { ", 8×16 per thread" } else { "" }
        );
        assert_eq!(candidate.idea, idea, "{}", candidate.name);
    }
}
