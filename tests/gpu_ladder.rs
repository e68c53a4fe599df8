//! Every rung and cuBLAS on the GPU, checked element by element against the f64 CPU reference.
//!
//! These need a CUDA GPU (compute capability 9.0 or newer), so they are ignored by default:
//!
//! ```text
//! cargo test --test gpu_ladder -- --ignored
//! ```

use rust_gemm::cpu::{random_matrix, reference_gemm};
use rust_gemm::gpu::Gpu;
use rust_gemm::verify::compare_with_cpu;
use rust_gemm::{GemmError, GemmShape, PTX, Rung};

/// Ragged on purpose: no dimension a multiple of any tile, plus tile-aligned 256³, a single
/// element, tall-and-skinny and a long reduction.
const SHAPES: [(usize, usize, usize); 6] = [
    (1, 1, 1),
    (127, 129, 131),
    (1000, 1000, 1000),
    (4097, 31, 513),
    (256, 256, 256),
    (33, 4, 1029),
];

fn open_gpu() -> Gpu {
    Gpu::new(PTX).unwrap_or_else(|e| {
        panic!("the GPU tests were asked for, but the GPU could not be opened: {e}")
    })
}

fn shape(m: usize, n: usize, k: usize) -> GemmShape {
    GemmShape::new(m, n, k).expect("valid test shape")
}

/// Fresh inputs for one case: seeds differ for every (shape, implementation) pair.
fn inputs(s: &GemmShape, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (a_len, b_len, _) = s.elements();
    (
        random_matrix(a_len, seed),
        random_matrix(b_len, seed ^ 0x5555_5555),
    )
}

/// Every kernel the host can launch, labelled (the same list `sgemm-ladder verify` checks).
fn kernels() -> Vec<(String, &'static Rung)> {
    rust_gemm::sweep::all_kernels()
}

/// Runs `rung` (cuBLAS for `None`) on fresh inputs into a NaN-poisoned C and checks the result
/// against the CPU reference; the error message says what went wrong.
fn check(
    gpu: &Gpu,
    label: &str,
    rung: Option<&Rung>,
    s: &GemmShape,
    seed: u64,
) -> Result<(), String> {
    let (a_host, b_host) = inputs(s, seed);
    let a = gpu.upload(&a_host).expect("upload A");
    let b = gpu.upload(&b_host).expect("upload B");
    let mut c = gpu.alloc_poisoned(s.m * s.n).expect("allocate C");
    match rung {
        Some(rung) => gpu.launch_rung(rung, &a, &b, &mut c, s),
        None => gpu.launch_cublas(&a, &b, &mut c, s),
    }
    .map_err(|e| format!("{label} at {s}: launch failed: {e}"))?;
    // A fault here poisons the context: later checks would fail too, so stop at once.
    let result = gpu
        .download(&c)
        .unwrap_or_else(|e| panic!("{label} at {s}: {e}"));
    let reference = reference_gemm(&a_host, &b_host, s);
    let v = compare_with_cpu(&result, &reference.product, &reference.magnitude, s.k);
    let summary = format!(
        "{label} at {s} (seed {seed}): rel error {:.3e} (tolerance {:.3e}), max abs error {:.3e}, {} elements outside the bound",
        v.rel_error, v.tolerance, v.max_abs_error, v.elements_out_of_bound
    );
    if v.passed {
        eprintln!("PASS {summary}");
        Ok(())
    } else {
        Err(summary)
    }
}

/// Panics listing every failure, if there is any.
fn assert_all_passed(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_rung_matches_the_cpu_reference() {
    let gpu = open_gpu();
    let max_shared = gpu.info().max_shared_per_block;
    let mut ran = 0;
    let mut failures = Vec::new();
    for (shape_index, &(m, n, k)) in SHAPES.iter().enumerate() {
        let s = shape(m, n, k);
        for (kernel_index, (label, rung)) in kernels().into_iter().enumerate() {
            if let Err(refusal) = rung.launch(&s, max_shared) {
                eprintln!("{label} at {s}: skipped: {refusal}");
                continue;
            }
            let seed = 1 + 1000 * shape_index as u64 + 10 * kernel_index as u64;
            if let Err(failure) = check(&gpu, &label, Some(rung), &s, seed) {
                failures.push(failure);
            }
            ran += 1;
        }
    }
    assert!(ran > 0, "no rung ran at any shape");
    assert_all_passed(&failures);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn cublas_matches_the_cpu_reference() {
    let gpu = open_gpu();
    let failures: Vec<String> = [shape(127, 129, 131), shape(4097, 31, 513)]
        .iter()
        .enumerate()
        .filter_map(|(index, s)| check(&gpu, "cublas", None, s, 77 + index as u64).err())
        .collect();
    assert_all_passed(&failures);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn mismatched_output_buffer_is_refused() {
    let gpu = open_gpu();
    let s = shape(64, 48, 32);
    let (a_host, b_host) = inputs(&s, 5);
    let a = gpu.upload(&a_host).expect("upload A");
    let b = gpu.upload(&b_host).expect("upload B");
    let mut short = gpu.alloc_poisoned(s.m * s.n - 1).expect("allocate C");
    for (label, rung) in kernels() {
        match gpu.launch_rung(rung, &a, &b, &mut short, &s) {
            Err(GemmError::BufferSize {
                name,
                expected,
                actual,
                ..
            }) => {
                assert_eq!(name, "C", "{label}");
                assert_eq!((expected, actual), (s.m * s.n, s.m * s.n - 1));
            }
            other => panic!("{label}: expected BufferSize, got {other:?}"),
        }
    }
    assert!(matches!(
        gpu.launch_cublas(&a, &b, &mut short, &s),
        Err(GemmError::BufferSize { name: "C", .. })
    ));
    // Nothing was launched: the buffer is still all NaN.
    let untouched = gpu.download(&short).expect("download C");
    assert!(untouched.iter().all(|x| x.is_nan()));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn refusals_come_before_the_launch() {
    // A rung that cannot take a shape returns the same refusal through the runtime as from
    // its table row, without launching.
    let gpu = open_gpu();
    let max_shared = gpu.info().max_shared_per_block;
    let s = shape(4, 4, 65_536);
    let (a_host, b_host) = inputs(&s, 9);
    let a = gpu.upload(&a_host).expect("upload A");
    let b = gpu.upload(&b_host).expect("upload B");
    let mut c = gpu.alloc_poisoned(16).expect("allocate C");
    let mut refused = 0;
    for (label, rung) in kernels() {
        if rung.launch(&s, max_shared).is_ok() {
            continue;
        }
        assert!(
            matches!(
                gpu.launch_rung(rung, &a, &b, &mut c, &s),
                Err(GemmError::SharedMemory { .. })
            ),
            "{label}"
        );
        refused += 1;
    }
    assert!(
        refused > 0,
        "no rung is limited by k = 65536 (v1 should be)"
    );
    let untouched = gpu.download(&c).expect("download C");
    assert!(
        untouched.iter().all(|x| x.is_nan()),
        "a refused launch wrote C"
    );
    let unknown = Rung::by_name("nope");
    assert!(matches!(unknown, Err(GemmError::UnknownRung { .. })));
}
