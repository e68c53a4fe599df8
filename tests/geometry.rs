//! Host and device read one geometry (`gemm-geometry`); this checks that what the host launches
//! matches what the PTX declares: each library kernel's threads per block against its
//! `.maxntid` (the launch bounds `build.rs` writes from the device crate's `launch_bounds!`),
//! its entry point present, and its dynamic shared memory within what the launch may ask.

use rust_gemm::api::dispatch::KERNELS;
use rust_gemm::{PTX, RUNGS};

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
        // Hopper's opt-in limit, the largest of any GPU the kernels are built for.
        assert!(spec.shared_bytes <= 227 * 1024, "{}", spec.entry);
    }
}

#[test]
fn ladder_rungs_launch_the_threads_their_ptx_declares() {
    for rung in RUNGS.iter().filter(|r| r.candidates.is_empty()) {
        if let Some(Some(declared)) = max_threads(PTX, rung.entry) {
            let (x, y) = rung.block_dim;
            assert_eq!(declared, x * y, "{}: launch {}×{}", rung.name, x, y);
        }
    }
}
