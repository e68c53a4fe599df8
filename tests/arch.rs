//! Which kernels each GPU generation gets, without a GPU: the PTX module a compute capability
//! loads, the rungs available on it and the reason for each one refused, and the library
//! kernels dispatch can pick there.

use rust_gemm::RUNGS;
use rust_gemm::api::dispatch::KERNELS;
use rust_gemm::ptx::{Arch, HOPPER, PORTABLE, for_compute_capability};

/// (compute capability, the module it loads): A100, RTX 30, RTX 40 / L4, H100, RTX 50, T4.
const DEVICES: [((i32, i32), Option<&str>); 6] = [
    ((8, 0), Some("sm_80")),
    ((8, 6), Some("sm_80")),
    ((8, 9), Some("sm_80")),
    ((9, 0), Some("sm_90a")),
    ((12, 0), Some("sm_80")),
    ((7, 5), None),
];

#[test]
fn each_capability_loads_the_module_built_for_it() {
    for ((major, minor), target) in DEVICES {
        let module = for_compute_capability(major as u32, minor as u32);
        assert_eq!(module.map(|m| m.target), target, "{major}.{minor}");
    }
}

/// Every rung, and every autotune candidate (which may need more than its rung: one of v11's
/// is built for sm_90a only).
fn rungs_and_candidates() -> impl Iterator<Item = &'static rust_gemm::Rung> {
    RUNGS.iter().chain(RUNGS.iter().flat_map(|r| r.candidates))
}

#[test]
fn rungs_are_available_where_their_architecture_is_and_refused_with_a_reason_elsewhere() {
    for ((major, minor), target) in DEVICES {
        let Some(module) = for_compute_capability(major as u32, minor as u32) else {
            continue;
        };
        assert!(target.is_some());
        for rung in rungs_and_candidates() {
            let refusal = rung.unavailable_on((major, minor));
            let in_module = module.has_entry(rung.entry);
            match rung.arch {
                Arch::Sm80 => {
                    assert_eq!(refusal, None, "{} on {major}.{minor}", rung.name);
                    assert!(in_module, "{} missing from {}", rung.entry, module.target);
                }
                Arch::Sm90a if (major, minor) == (9, 0) => {
                    assert_eq!(refusal, None);
                    assert!(in_module, "{} missing from the sm_90a module", rung.entry);
                }
                Arch::Sm90a => {
                    assert_eq!(
                        refusal.as_deref(),
                        Some(format!("needs sm_90a (this device is {major}.{minor})").as_str())
                    );
                    assert!(!in_module, "{} in the portable module", rung.entry);
                }
            }
        }
    }
}

#[test]
fn hopper_only_rungs_are_v16_to_v23() {
    let hopper_only: Vec<_> = RUNGS
        .iter()
        .filter(|r| r.arch == Arch::Sm90a)
        .map(|r| r.name)
        .collect();
    assert_eq!(
        hopper_only,
        [
            "v16", "v17", "v18", "v19", "v20", "v20-e5m2", "v21", "v22", "v23"
        ]
    );
}

#[test]
fn library_kernels_sit_in_the_modules_their_architecture_says() {
    for spec in KERNELS {
        assert!(HOPPER.has_entry(spec.entry), "{}", spec.entry);
        assert_eq!(
            PORTABLE.has_entry(spec.entry),
            spec.arch == Arch::Sm80,
            "{} ({:?})",
            spec.entry,
            spec.arch
        );
    }
}
