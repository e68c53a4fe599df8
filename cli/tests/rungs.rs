//! The table of rungs against the PTX it launches, and the launch geometry it computes. Needs no
//! GPU. Written over [`RUNGS`] (and the candidate kernels of autotuned rungs), so a new row is
//! covered as soon as it is added.

use rust_gemm::ladder::rungs::{GridOrder, MAX_GRID_X, MAX_GRID_Y, SharedMem};
use rust_gemm::shape::MAX_DIMENSION;
use rust_gemm::{GemmError, GemmShape, PTX, RUNGS, Rung};
use std::collections::HashSet;

/// Opt-in shared memory per block on an H100 / H200 (227 KiB).
const H100_MAX_SHARED: usize = 232_448;

/// Every kernel the host can launch: each rung, and each candidate of an autotuned rung.
fn kernels() -> Vec<&'static Rung> {
    RUNGS
        .iter()
        .flat_map(|rung| std::iter::once(rung).chain(rung.candidates))
        .collect()
}

fn shape(m: usize, n: usize, k: usize) -> GemmShape {
    GemmShape::new(m, n, k).unwrap_or_else(|e| panic!("test shape {m}×{n}×{k}: {e}"))
}

/// The parameter types of `entry` in the PTX, in order (`u64`, `u32`...).
fn entry_params(entry: &str) -> Vec<String> {
    let header = format!(".visible .entry {entry}(");
    let start = PTX
        .find(&header)
        .unwrap_or_else(|| panic!("entry {entry} is not in the PTX"));
    PTX[start + header.len()..]
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with(')'))
        .filter(|line| line.starts_with(".param"))
        .map(|line| {
            line.split_whitespace()
                .nth(1)
                .expect("a type after .param")
                .trim_start_matches('.')
                .to_string()
        })
        .collect()
}

#[test]
fn rung_names_are_unique() {
    assert!(!RUNGS.is_empty());
    let mut names = HashSet::new();
    for rung in RUNGS {
        assert!(!rung.name.is_empty() && !rung.idea.is_empty() && !rung.entry.is_empty());
        assert!(names.insert(rung.name), "rung name {} repeats", rung.name);
        assert!(
            !rung.name.contains(',') && !rung.name.contains(char::is_whitespace),
            "rung name {:?} cannot be given to --rungs",
            rung.name
        );
        let mut candidates = HashSet::new();
        for candidate in rung.candidates {
            assert!(
                candidates.insert(candidate.name),
                "rung {}: candidate {} repeats",
                rung.name,
                candidate.name
            );
            assert!(
                candidate.candidates.is_empty(),
                "rung {}: candidate {} has candidates of its own",
                rung.name,
                candidate.name
            );
        }
    }
}

#[test]
fn ptx_targets_sm_90a_with_ptx_8() {
    let directive = |name: &str| {
        PTX.lines()
            .map(str::trim)
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} directive in the PTX"))
            .to_string()
    };
    // sm_90a: the wgmma rung needs Hopper's architecture-specific instructions, PTX 8.0 or newer.
    assert_eq!(directive(".target"), ".target sm_90a");
    assert_eq!(directive(".address_size"), ".address_size 64");
    let version = directive(".version");
    let number: f64 = version
        .trim_start_matches(".version ")
        .parse()
        .unwrap_or_else(|_| panic!("unreadable {version}"));
    assert!(number >= 8.0, "{version}: wgmma needs PTX 8.0");
}

#[test]
fn every_rung_has_its_entry_in_the_ptx() {
    for rung in kernels() {
        let header = format!(".visible .entry {}(", rung.entry);
        assert_eq!(
            PTX.matches(&header).count(),
            1,
            "rung {}: PTX must define `{header}` exactly once",
            rung.name
        );
    }
}

#[test]
fn every_entry_takes_a_b_c_m_n_k() {
    // The host launches every rung with (a, b, c: device pointers; m, n, k: u32), followed by
    // (alpha, beta, leaky_slope: f32; activation: u32) for rungs with a fused epilogue, or by
    // the address of the TMA tensor maps (u64) for TMA rungs.
    for rung in kernels() {
        let mut expected = vec!["u64", "u64", "u64", "u32", "u32", "u32"];
        if rung.epilogue_args {
            expected.extend(["f32", "f32", "f32", "u32"]);
        }
        if rung.tensor_maps.is_some() {
            expected.push("u64");
        }
        if rung.precision.takes_b_nk() {
            // FP8 (v20): the address of the two per-tensor scales.
            expected.push("u64");
        }
        assert_eq!(
            entry_params(rung.entry),
            expected,
            "rung {} ({}) has the wrong parameter list",
            rung.name,
            rung.entry
        );
    }
}

#[test]
fn tma_rungs_refuse_rows_off_16_byte_boundaries() {
    let tma: Vec<_> = kernels()
        .into_iter()
        .filter(|r| r.tensor_maps.is_some())
        .collect();
    assert!(!tma.is_empty(), "no TMA rung in the table");
    for rung in tma {
        // Rows of 16 bytes: 8 fp16, 4 fp32 or 16 FP8 elements. A rung that transposes B first
        // (v19) reads B's copy, whose rows it pads, and one that takes B `[n, k]` (v20) reads
        // rows along k: only k matters there. v21 reads B `[k, n]` as it is: k and n.
        let multiple = 16 / rung.precision.element_bytes();
        for (m, n, k) in [(64, 64, 63), (64, 63, 64), (5, 129, 131), (64, 64, 36)] {
            let shape = GemmShape::new(m, n, k).unwrap();
            let b_rows_along_k = rung.transposes_b() || rung.precision.takes_b_nk();
            let off = k % multiple != 0 || (!b_rows_along_k && n % multiple != 0);
            match (rung.launch(&shape, H100_MAX_SHARED), off) {
                (
                    Err(GemmError::TmaRows {
                        k: kk,
                        n: nn,
                        multiple: mm,
                        ..
                    }),
                    true,
                ) => {
                    assert_eq!((kk, nn, mm), (k, n, multiple))
                }
                (Ok(_), false) => {}
                (other, _) => panic!(
                    "{} at {shape}: expected {}, got {other:?}",
                    rung.name,
                    if off { "TmaRows" } else { "a launch" }
                ),
            }
        }
        // Ragged m, and k and n multiples of 8 (k of 16) but not of any tile, are fine.
        for (m, n, k) in [(1, 8, 16), (1000, 1000, 1008), (127, 136, 80)] {
            let shape = GemmShape::new(m, n, k).unwrap();
            assert!(
                rung.launch(&shape, H100_MAX_SHARED).is_ok(),
                "{} at {shape}",
                rung.name
            );
        }
    }
}

#[test]
fn block_shapes_are_launchable() {
    for rung in kernels() {
        let (x, y) = rung.block_dim;
        let threads = x * y;
        assert!(
            (1..=1024).contains(&threads),
            "rung {}: {threads} threads per block",
            rung.name
        );
        assert!(rung.block_tile_m >= 1 && rung.block_tile_n >= 1);
        if let SharedMem::Fixed(bytes) = rung.shared_mem {
            assert!(
                bytes <= H100_MAX_SHARED,
                "rung {}: {bytes} bytes of shared memory fit no sm_90 block",
                rung.name
            );
        }
    }
}

#[test]
fn grid_covers_ragged_shapes_exactly() {
    let mut shapes = vec![
        shape(1, 1, 1),
        shape(127, 129, 131),
        shape(1000, 1000, 1000),
        shape(4097, 31, 513),
        shape(256, 256, 256),
        shape(33, 4, 1029),
        shape(1, 4099, 7),
        shape(4099, 1, 7),
    ];
    for rung in kernels() {
        let (tm, tn) = (rung.block_tile_m as usize, rung.block_tile_n as usize);
        for (bm, bn) in [(1, 1), (3, 5), (17, 2)] {
            for (dm, dn) in [(0, 0), (1, 1), (tm - 1, tn - 1)] {
                shapes.push(shape(bm * tm + dm, bn * tn + dn, 8));
                if bm * tm > dm && bn * tn > dn {
                    shapes.push(shape(bm * tm - dm, bn * tn - dn, 8));
                }
            }
        }
    }
    for rung in kernels() {
        let (tm, tn) = (rung.block_tile_m as u64, rung.block_tile_n as u64);
        for s in &shapes {
            let launch = match rung.launch(s, H100_MAX_SHARED) {
                Ok(launch) => launch,
                Err(GemmError::SharedMemory { .. }) => {
                    assert!(
                        matches!(rung.shared_mem, SharedMem::PerK { .. }),
                        "rung {} refused {s} for shared memory",
                        rung.name
                    );
                    continue;
                }
                Err(GemmError::TmaRows { .. }) if rung.tensor_maps.is_some() => continue,
                Err(e) => panic!("rung {} refused {s}: {e}", rung.name),
            };
            let (gx, gy) = (launch.grid.0 as u64, launch.grid.1 as u64);
            let (m, n) = (s.m as u64, s.n as u64);
            let at = format!("rung {} at {s}: grid {:?}", rung.name, launch.grid);
            assert!(gx >= 1 && gy >= 1, "{at}");
            // Tiles along each axis: the fewest that cover C, with no row or column of idle
            // blocks.
            let (tiles_n, tiles_m) = match rung.grid {
                GridOrder::RowMajor => (gx, gy),
                GridOrder::Grouped | GridOrder::Persistent => {
                    assert_eq!(gy, 1, "{at}: a grouped grid is one-dimensional");
                    let tiles = (n.div_ceil(tn), m.div_ceil(tm));
                    assert_eq!(gx, tiles.0 * tiles.1, "{at}: one block per tile");
                    tiles
                }
            };
            assert!(tiles_n * tn >= n, "{at} leaves columns uncovered");
            assert!(
                (tiles_n - 1) * tn < n,
                "{at} launches a column of idle blocks"
            );
            assert!(tiles_m * tm >= m, "{at} leaves rows uncovered");
            assert!((tiles_m - 1) * tm < m, "{at} launches a row of idle blocks");
            assert_eq!(launch.block, rung.block_dim, "{at}");
            assert_eq!(
                launch.shared_mem_bytes as usize,
                rung.shared_mem_bytes(s),
                "{at}"
            );
        }
    }
}

#[test]
fn shared_memory_matches_the_table() {
    let s = shape(100, 100, 300);
    for rung in kernels() {
        let expected = match rung.shared_mem {
            SharedMem::None => 0,
            SharedMem::Fixed(bytes) => bytes,
            SharedMem::PerK { bytes_per_k } => bytes_per_k * 300,
        };
        assert_eq!(rung.shared_mem_bytes(&s), expected, "rung {}", rung.name);
        // With no shared memory at all, only rungs that need none can launch.
        let result = rung.launch(&s, 0);
        match rung.shared_mem {
            SharedMem::None => assert!(result.is_ok(), "rung {}: {result:?}", rung.name),
            _ => assert!(
                matches!(result, Err(GemmError::SharedMemory { limit: 0, .. })),
                "rung {}: {result:?}",
                rung.name
            ),
        }
    }
}

#[test]
fn panel_rungs_are_limited_by_k() {
    let panel_rungs: Vec<(&Rung, usize)> = kernels()
        .into_iter()
        .filter_map(|r| match r.shared_mem {
            SharedMem::PerK { bytes_per_k } => Some((r, bytes_per_k)),
            _ => None,
        })
        .collect();
    assert!(
        !panel_rungs.is_empty(),
        "the ladder should have a rung whose shared memory grows with k (v1)"
    );

    // The first such rung (v1) runs 4096³ on an H100 but not k = 8192.
    let (v1, bytes_per_k) = panel_rungs[0];
    v1.launch(&shape(4096, 4096, 4096), H100_MAX_SHARED)
        .unwrap_or_else(|e| panic!("rung {} must accept k = 4096: {e}", v1.name));
    match v1.launch(&shape(4096, 4096, 8192), H100_MAX_SHARED) {
        Err(GemmError::SharedMemory {
            rung,
            k,
            needed,
            limit,
            max_k,
        }) => {
            assert_eq!(rung, v1.name);
            assert_eq!(k, 8192);
            assert_eq!(needed, bytes_per_k * 8192);
            assert_eq!(limit, H100_MAX_SHARED);
            assert_eq!(max_k, H100_MAX_SHARED / bytes_per_k);
        }
        other => panic!(
            "rung {} must refuse k = 8192 for shared memory, got {other:?}",
            v1.name
        ),
    }

    // Every such rung: the k it reports as its limit is exactly where refusal starts.
    for (rung, bytes_per_k) in panel_rungs {
        let max_k = H100_MAX_SHARED / bytes_per_k;
        assert!(
            rung.launch(&shape(64, 64, max_k), H100_MAX_SHARED).is_ok(),
            "rung {} at its max k = {max_k}",
            rung.name
        );
        match rung.launch(&shape(64, 64, max_k + 1), H100_MAX_SHARED) {
            Err(GemmError::SharedMemory {
                max_k: reported, ..
            }) => assert_eq!(reported, max_k),
            other => panic!("rung {} at k = {}: {other:?}", rung.name, max_k + 1),
        }
    }
}

#[test]
fn grid_limits_are_enforced() {
    for rung in kernels() {
        let (tm, tn) = (rung.block_tile_m as usize, rung.block_tile_n as usize);
        // The largest shape that fits the grid, and one more row (or column) of tiles.
        let (fits, too_many, axis, limit) = match rung.grid {
            GridOrder::RowMajor => (
                shape(MAX_GRID_Y as usize * tm, 8, 16),
                shape(MAX_GRID_Y as usize * tm + 1, 8, 16),
                "y",
                MAX_GRID_Y,
            ),
            GridOrder::Grouped | GridOrder::Persistent => {
                // One block per tile along x: limit on tiles_m · tiles_n.
                let tiles_n = MAX_DIMENSION / tn;
                let tiles_m = MAX_GRID_X as usize / tiles_n;
                (
                    shape(tiles_m * tm, tiles_n * tn, 16),
                    shape((tiles_m + 1) * tm, tiles_n * tn, 16),
                    "x",
                    MAX_GRID_X,
                )
            }
        };
        let launch = rung
            .launch(&fits, H100_MAX_SHARED)
            .unwrap_or_else(|e| panic!("rung {}: {fits} fits the grid: {e}", rung.name));
        assert!(launch.grid.0 as u64 <= MAX_GRID_X && launch.grid.1 as u64 <= MAX_GRID_Y);

        match rung.launch(&too_many, H100_MAX_SHARED) {
            Err(GemmError::GridTooLarge {
                rung: name,
                axis: refused_axis,
                blocks,
                limit: refused_limit,
            }) => {
                assert_eq!(name, rung.name);
                assert_eq!(refused_axis, axis);
                assert!(blocks > limit, "{blocks} blocks");
                assert_eq!(refused_limit, limit);
            }
            other => panic!(
                "rung {} at {too_many}: expected GridTooLarge, got {other:?}",
                rung.name
            ),
        }
    }
}

#[test]
fn huge_m_is_refused_for_two_dimensional_grids() {
    // m so large that the rows of tiles pass CUDA's 65535 blocks along y.
    let mut checked = 0;
    for rung in kernels()
        .into_iter()
        .filter(|r| r.grid == GridOrder::RowMajor)
    {
        let s = shape((MAX_GRID_Y as usize + 1) * rung.block_tile_m as usize, 8, 1);
        match rung.launch(&s, H100_MAX_SHARED) {
            Err(GemmError::GridTooLarge {
                axis: "y", blocks, ..
            }) => assert_eq!(blocks, MAX_GRID_Y + 1),
            other => panic!("rung {} at {s}: {other:?}", rung.name),
        }
        checked += 1;
    }
    assert!(checked > 0, "no rung uses a two-dimensional grid");
}

#[test]
fn only_vector_rungs_need_alignment() {
    assert!(
        RUNGS.iter().any(|r| r.vector_loads),
        "the ladder should have a rung with 128-bit loads (v4)"
    );
    for rung in kernels() {
        rung.check_alignment(0x7f00_0000_1000, 0x7f00_0000_2000)
            .unwrap_or_else(|e| panic!("rung {}: aligned addresses refused: {e}", rung.name));
        for (a, b, bad, offset) in [
            (0x1004u64, 0x2000u64, "A", 4u64),
            (0x1000, 0x2008, "B", 8),
            (0x100c, 0x2000, "A", 12),
            (0x1001, 0x2001, "A", 1),
        ] {
            let result = rung.check_alignment(a, b);
            if rung.vector_loads {
                match result {
                    Err(GemmError::Misaligned {
                        rung: name,
                        name: operand,
                        offset_bytes,
                    }) => {
                        assert_eq!((name, operand, offset_bytes), (rung.name, bad, offset));
                    }
                    other => panic!(
                        "rung {} must refuse {a:#x}, {b:#x}: got {other:?}",
                        rung.name
                    ),
                }
            } else {
                assert!(
                    result.is_ok(),
                    "rung {} has no vector loads but refused {a:#x}, {b:#x}: {result:?}",
                    rung.name
                );
            }
        }
    }
}

#[test]
fn rungs_are_found_by_name() {
    for rung in RUNGS {
        let found = Rung::by_name(rung.name).unwrap();
        assert!(std::ptr::eq(found, rung) || found == rung);
        assert_eq!(found.entry, rung.entry);
    }
    for unknown in ["nope", "", "V0 ", "cublas"] {
        match Rung::by_name(unknown) {
            Err(GemmError::UnknownRung { name, known }) => {
                assert_eq!(name, unknown);
                for rung in RUNGS {
                    assert!(known.split(", ").any(|k| k == rung.name), "{known}");
                }
                let message = Rung::by_name(unknown).unwrap_err().to_string();
                assert!(message.contains(&format!("{unknown:?}")), "{message}");
            }
            other => panic!("{unknown:?}: expected UnknownRung, got {other:?}"),
        }
    }
}
