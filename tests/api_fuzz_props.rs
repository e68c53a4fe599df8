//! The CPU side of the API fuzzer (`tests/common/fuzz.rs`), run in CI: for every generated
//! call, validation accepts exactly the defect-free ones and refuses each defect with its typed
//! error; C placed over an input is refused as an overlap; and dispatch, on the device
//! properties of an H100, an A100, an RTX 4090 and an RTX 5090, picks a kernel that accepts the
//! call after every faster one that refuses it, with a grid inside CUDA's limits, the same
//! kernel every time, and honours or refuses a forced kernel exactly as its refusal says.
//!
//! `FUZZ_SEED` and `FUZZ_CASES` (default 20 000) select the calls; `FUZZ_CASE` replays one.

mod common;

use common::fuzz::{Call, indices_from_env, seed_from_env};
use rust_gemm::api::dispatch::{
    AlignedMatrices, DeviceCaps, GridKind, KERNELS, MAX_WORKSPACE_BYTES, REDUCTION_ENTRIES, choose,
    kernel_problem, passed_over, refusal,
};
use rust_gemm::api::problem::{Problem, validate};
use rust_gemm::ptx::Arch;
use rust_gemm::{DType, GemmError};

/// Allocations far apart, each 256-byte aligned as cudaMalloc returns them.
const BASES: [u64; 4] = [1 << 40, 2 << 40, 3 << 40, 4 << 40];

fn caps(capability: (i32, i32), sm_count: usize, shared_kib: usize) -> DeviceCaps {
    DeviceCaps {
        compute_capability: capability,
        sm_count,
        max_shared_per_block: shared_kib * 1024,
        // The module such a device loads: every kernel on Hopper, the portable ones elsewhere.
        entries: KERNELS
            .iter()
            .filter(|k| k.arch.supported_by(capability))
            .map(|k| k.entry)
            .chain(REDUCTION_ENTRIES)
            .map(str::to_string)
            .collect(),
    }
}

fn devices() -> [DeviceCaps; 4] {
    [
        caps((9, 0), 132, 227),
        caps((8, 0), 108, 163),
        caps((8, 9), 128, 99),
        caps((12, 0), 170, 99),
    ]
}

/// Dispatch's decision for `problem` on `device`, checked against the rules it promises.
fn check_dispatch(call: &Call, device: &DeviceCaps, problem: &Problem) {
    let context = || format!("{call:?} on {:?}", device.compute_capability);
    let candidates: Vec<_> = KERNELS
        .iter()
        .filter(|k| k.dtype == problem.dtype && k.b_layout == problem.b_layout)
        .collect();
    assert!(!candidates.is_empty(), "{}", context());
    let chosen = choose(device, problem, None)
        .unwrap_or_else(|e| panic!("{}: dispatch found no kernel: {e}", context()));
    let position = candidates
        .iter()
        .position(|k| k.entry == chosen.kernel.entry)
        .unwrap_or_else(|| panic!("{}: {} is not a candidate", context(), chosen.kernel.entry));
    for faster in &candidates[..position] {
        assert!(
            refusal(faster, device, problem).is_some()
                || passed_over(faster, device, problem).is_some(),
            "{}: {} accepts the call but {} was chosen",
            context(),
            faster.entry,
            chosen.kernel.entry
        );
    }
    assert_eq!(
        refusal(chosen.kernel, device, problem),
        None,
        "{}",
        context()
    );
    if chosen.kernel.arch == Arch::Sm90a {
        assert_eq!(device.compute_capability, (9, 0), "{}", context());
    }
    let (x, y, z) = chosen.grid;
    assert!(
        x >= 1 && x <= i32::MAX as u32 && (1..=65_535).contains(&y) && (1..=65_535).contains(&z),
        "{}: grid {:?}",
        context(),
        chosen.grid
    );
    if chosen.splits > 1 {
        // A split: a kernel that makes it, slices that cover k without an empty one, a
        // workspace within bounds, and a persistent grid of at most one block per SM.
        let k = problem.k as u32;
        assert!(chosen.kernel.split_k, "{}", context());
        assert_eq!(
            chosen.k_chunk % gemm_geometry::split_k::K_GRANULE,
            0,
            "{}",
            context()
        );
        assert!((chosen.splits - 1) * chosen.k_chunk < k && chosen.splits * chosen.k_chunk >= k);
        let bytes = 4 * chosen.splits as u64 * (problem.batch * problem.m * problem.n) as u64;
        assert!(bytes <= MAX_WORKSPACE_BYTES, "{}", context());
        if chosen.kernel.grid == GridKind::Persistent {
            assert!(x as usize <= device.sm_count, "{}", context());
        }
    } else {
        assert_eq!(chosen.k_chunk, 0, "{}", context());
    }
    if chosen.kernel.row_alignment > 0 {
        // What the kernel reads: B's transposed copy (always aligned) for v19 on B `[k, n]`.
        let read = kernel_problem(chosen.kernel, problem, 0);
        // A, B and C, or (the tensor-core thin kernels) A and B only, or (v13's K-major
        // entries) B only.
        let aligned = match chosen.kernel.aligned {
            AlignedMatrices::All => read.rows_aligned_to(chosen.kernel.row_alignment),
            AlignedMatrices::Inputs => read.input_rows_aligned_to(chosen.kernel.row_alignment),
            AlignedMatrices::B => read.b_rows_aligned_to(chosen.kernel.row_alignment),
        };
        assert!(aligned, "{}", context());
    }
    assert_eq!(
        choose(device, problem, None).unwrap().kernel.entry,
        chosen.kernel.entry,
        "{}: dispatch is not deterministic",
        context()
    );
    if let Some(name) = call.kernel {
        let spec = candidates
            .iter()
            .find(|k| k.name == name)
            .expect("the generator forces known names");
        match (
            choose(device, problem, Some(name)),
            refusal(spec, device, problem),
        ) {
            (Ok(plan), None) => assert_eq!(plan.kernel.entry, spec.entry, "{}", context()),
            (Err(GemmError::KernelRefused { kernel, reason }), Some(why)) => {
                assert_eq!((kernel, reason), (spec.name, why), "{}", context())
            }
            (got, why) => panic!("{}: forced {name}: {got:?}, refusal {why:?}", context()),
        }
    }
}

#[test]
fn validation_and_dispatch_over_generated_calls() {
    let seed = seed_from_env(0x5EED_2026);
    let (mut valid, mut refused, mut overlaps) = (0usize, 0usize, 0usize);
    let mut chosen = std::collections::BTreeMap::<&str, usize>::new();
    for index in indices_from_env(20_000) {
        let call = Call::generate(seed, index);
        let replay = || call.replay("api_fuzz_props");
        let outcome = validate(&call.request(), call.buffers(BASES));
        let problem = match (outcome, call.defect) {
            (Ok(problem), None) => problem,
            (Err(error), Some(_)) if call.expects(&error) => {
                refused += 1;
                continue;
            }
            (outcome, defect) => panic!(
                "{call:?}: defect {defect:?} but validation gave {outcome:?}\nreplay: {}",
                replay()
            ),
        };
        valid += 1;
        assert_eq!(
            (problem.lda, problem.ldb, problem.ldc),
            (call.lds[0], call.lds[1], call.lds[2]),
            "{call:?}"
        );
        if call.batch > 1 {
            let strides = (call.strides[0], call.strides[1], call.strides[2]);
            assert_eq!(problem.strides, strides, "{call:?}");
        }
        for device in &devices() {
            check_dispatch(&call, device, &problem);
        }
        // The kernel the call runs on the H100: dispatch's, or the one it forces (which is how
        // the generated calls, all small, reach v13 itself: dispatch gives small exact-f32
        // products to the general kernel).
        let hopper = &devices()[0];
        if let Ok(plan) = choose(hopper, &problem, call.kernel) {
            *chosen.entry(plan.kernel.entry).or_default() += 1;
        }
        // The same call with C moved onto A's or B's bytes must be refused as an overlap.
        let mut bases = BASES;
        let input = (index % 2) as usize;
        let shift = (index as usize * 7919) % call.needed(input);
        let size = call.dtype.bytes() as u64;
        let target = bases[input] + (call.offsets[input] + shift) as u64 * size;
        bases[2] = target - call.offsets[2] as u64 * size;
        match validate(&call.request(), call.buffers(bases)) {
            Err(GemmError::Overlap { operand }) => {
                assert_eq!(operand, ["A", "B"][input], "{call:?}");
                overlaps += 1;
            }
            other => panic!(
                "{call:?}: C over operand {input}: {other:?}\nreplay: {}",
                replay()
            ),
        }
    }
    eprintln!(
        "seed {seed:#x}: {valid} valid calls, {refused} refused as their defect says, \
         {overlaps} overlaps refused; kernels run on the H100 (chosen or forced): {chosen:?}"
    );
    if indices_from_env(20_000).count() >= 1000 {
        // The generator must reach every kernel and every defect, or the test proves little.
        for spec in KERNELS.iter().filter(|k| k.dtype != DType::Tf32) {
            assert!(
                chosen.contains_key(spec.entry) || spec.name == "general",
                "no generated call reached {}",
                spec.entry
            );
        }
        assert!(refused > 100, "only {refused} defects");
    }
}
