//! Every rung and cuBLAS on the GPU, checked element by element against the f64 CPU reference.
//!
//! These need a CUDA GPU (compute capability 9.0 or newer), so they are ignored by default:
//!
//! ```text
//! cargo test --test gpu_ladder -- --ignored
//! ```

use rust_gemm::check::cpu::{random_matrix, reference_gemm};
use rust_gemm::check::sweep::{Case, Fp8Case};
use rust_gemm::check::verify::{ErrorModel, Verification, compare_with_cpu};
use rust_gemm::element::{Fp8E4m3, Fp8E5m2};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::ladder::rungs::Precision;
use rust_gemm::{GemmError, GemmShape, Rung};

/// Ragged on purpose: no dimension a multiple of any tile, plus tile-aligned 256³, a single
/// element, tall-and-skinny and a long reduction.
const SHAPES: [(usize, usize, usize); 10] = [
    (1, 1, 1),
    (127, 129, 131),
    (1000, 1000, 1000),
    (4097, 31, 513),
    (256, 256, 256),
    (33, 4, 1029),
    // Ragged, but k and n multiples of 8, as TMA rungs need.
    (127, 136, 264),
    (1, 8, 8),
    // Ragged m and n, k a multiple of 16 (FP8 rows) with a partial last 128-deep k-tile.
    (129, 250, 528),
    // k and n multiples of 4 (fp32 rows): a partial 32-deep k-step, and n = 20 ends inside
    // v21's third 8-column box of B (the other thirteen lie wholly outside).
    (300, 20, 36),
];

fn open_gpu() -> Gpu {
    Gpu::open_for_tests().unwrap_or_else(|e| {
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

/// Every kernel the host can launch on `gpu`'s module, labelled (the same list `sgemm-ladder
/// verify` checks); the rungs the module or device lacks are named and left out.
fn kernels(gpu: &Gpu) -> Vec<(String, &'static Rung)> {
    rust_gemm::check::sweep::all_kernels()
        .into_iter()
        .filter(|(label, rung)| match gpu.rung_unavailable(rung) {
            Some(reason) => {
                eprintln!("{label}: unavailable here: it {reason}");
                false
            }
            None => true,
        })
        .collect()
}

/// Runs `rung` (cuBLAS SGEMM for `None`) on fresh inputs into a NaN-poisoned C and checks the
/// result against the CPU reference under the rung's error model (fp16 rungs get the inputs
/// rounded to fp16 and are checked against the exact product of those); the error message
/// says what went wrong.
fn check(
    gpu: &Gpu,
    label: &str,
    rung: Option<&Rung>,
    s: &GemmShape,
    seed: u64,
) -> Result<(), String> {
    let (a_host, b_host) = inputs(s, seed);
    let v: Verification = match rung {
        Some(rung) => {
            let model = ErrorModel::for_precision(rung.precision);
            match rung.precision {
                Precision::Fp32 | Precision::Tf32 => Case::<f32>::new(gpu, &a_host, &b_host, s)
                    .and_then(|mut case| case.run(gpu, rung, s, &model)),
                Precision::Fp16 => Case::<u16>::new(gpu, &a_host, &b_host, s)
                    .and_then(|mut case| case.run(gpu, rung, s, &model)),
                // B's k·n random values taken as `[n, k]`.
                Precision::Fp8E4m3 => Fp8Case::<Fp8E4m3>::new(gpu, &a_host, &b_host, s)
                    .and_then(|mut case| case.run(gpu, rung, s, &model)),
                Precision::Fp8E5m2 => Fp8Case::<Fp8E5m2>::new(gpu, &a_host, &b_host, s)
                    .and_then(|mut case| case.run(gpu, rung, s, &model)),
            }
            .map_err(|e| format!("{label} at {s}: {e}"))?
        }
        None => {
            let a = gpu.upload(&a_host).expect("upload A");
            let b = gpu.upload(&b_host).expect("upload B");
            let mut c = gpu.alloc_poisoned(s.m * s.n).expect("allocate C");
            gpu.launch_cublas(&a, &b, &mut c, s)
                .map_err(|e| format!("{label} at {s}: launch failed: {e}"))?;
            let result = gpu
                .download(&c)
                .unwrap_or_else(|e| panic!("{label} at {s}: {e}"));
            let reference = reference_gemm(&a_host, &b_host, s);
            compare_with_cpu(&result, &reference.product, &reference.magnitude, s.k)
        }
    };
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
        for (kernel_index, (label, rung)) in kernels(&gpu).into_iter().enumerate() {
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
    let (a16, b16) = (
        gpu.upload_raw(&vec![0x3C00u16; s.m * s.k])
            .expect("upload A"),
        gpu.upload_raw(&vec![0x3C00u16; s.k * s.n])
            .expect("upload B"),
    );
    let mut short16 = gpu
        .alloc_poisoned::<u16>(s.m * s.n - 1)
        .expect("allocate C");
    let (a8, b8) = (
        gpu.upload_raw(&vec![Fp8E4m3(0x38); s.m * s.k]).unwrap(),
        gpu.upload_raw(&vec![Fp8E4m3(0x38); s.k * s.n]).unwrap(),
    );
    let (a8b, b8b) = (
        gpu.upload_raw(&vec![Fp8E5m2(0x3C); s.m * s.k]).unwrap(),
        gpu.upload_raw(&vec![Fp8E5m2(0x3C); s.k * s.n]).unwrap(),
    );
    let scales = gpu.upload(&[1.0f32, 1.0]).unwrap();
    for (label, rung) in kernels(&gpu) {
        let refusal = match rung.precision {
            Precision::Fp32 | Precision::Tf32 => gpu.launch_rung(rung, &a, &b, &mut short, &s),
            Precision::Fp16 => gpu.launch_rung(rung, &a16, &b16, &mut short16, &s),
            Precision::Fp8E4m3 => gpu.launch_rung_fp8(rung, &a8, &b8, &mut short16, &scales, &s),
            Precision::Fp8E5m2 => gpu.launch_rung_fp8(rung, &a8b, &b8b, &mut short16, &scales, &s),
        };
        match refusal {
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
    // Nothing was launched: the buffers are still all NaN.
    let untouched = gpu.download(&short).expect("download C");
    assert!(untouched.iter().all(|x| x.is_nan()));
    let untouched16 = gpu.download_raw(&short16).expect("download C");
    assert!(untouched16.iter().all(|&x| x == u16::MAX));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn buffers_of_the_wrong_element_type_are_refused() {
    let gpu = open_gpu();
    let s = shape(32, 32, 32);
    let (a_host, b_host) = inputs(&s, 6);
    let (a, b) = (gpu.upload(&a_host).unwrap(), gpu.upload(&b_host).unwrap());
    let mut c = gpu.alloc_poisoned::<f32>(s.m * s.n).unwrap();
    let (a16, b16) = (
        gpu.upload_raw(&vec![0x3C00u16; s.m * s.k]).unwrap(),
        gpu.upload_raw(&vec![0x3C00u16; s.k * s.n]).unwrap(),
    );
    let mut c16 = gpu.alloc_poisoned::<u16>(s.m * s.n).unwrap();
    let mut checked = [false; 2];
    for (label, rung) in kernels(&gpu) {
        let outcome = match rung.precision {
            Precision::Fp32 | Precision::Tf32 => gpu.launch_rung(rung, &a16, &b16, &mut c16, &s),
            // fp32 buffers for an FP8 rung: refused by the operand type too.
            Precision::Fp16 | Precision::Fp8E4m3 | Precision::Fp8E5m2 => {
                gpu.launch_rung(rung, &a, &b, &mut c, &s)
            }
        };
        match outcome {
            Err(GemmError::WrongElementType {
                expected, given, ..
            }) => {
                assert_ne!(expected, given, "{label}");
                checked[(rung.precision != Precision::Fp32 && rung.precision != Precision::Tf32)
                    as usize] = true;
            }
            other => panic!("{label}: expected WrongElementType, got {other:?}"),
        }
    }
    assert_eq!(
        checked,
        [true, true],
        "rungs of both element types were tried"
    );
    assert!(gpu.download(&c).unwrap().iter().all(|x| x.is_nan()));
    assert!(
        gpu.download_raw(&c16)
            .unwrap()
            .iter()
            .all(|&x| x == u16::MAX)
    );
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
    for (label, rung) in kernels(&gpu) {
        let Err(refusal) = rung.launch(&s, max_shared) else {
            continue;
        };
        let outcome = match rung.precision {
            Precision::Fp32 | Precision::Tf32 => gpu.launch_rung(rung, &a, &b, &mut c, &s),
            Precision::Fp16 => {
                let (a16, b16) = (
                    gpu.upload_raw(&vec![0x3C00u16; s.m * s.k]).unwrap(),
                    gpu.upload_raw(&vec![0x3C00u16; s.k * s.n]).unwrap(),
                );
                let mut c16 = gpu.alloc_poisoned::<u16>(s.m * s.n).unwrap();
                let outcome = gpu.launch_rung(rung, &a16, &b16, &mut c16, &s);
                assert!(
                    gpu.download_raw(&c16)
                        .unwrap()
                        .iter()
                        .all(|&x| x == u16::MAX)
                );
                outcome
            }
            Precision::Fp8E4m3 | Precision::Fp8E5m2 => {
                panic!("{label}: FP8 rungs take k = 65536 (a multiple of 16): no refusal expected")
            }
        };
        match outcome {
            Err(e) => assert_eq!(e.to_string(), refusal.to_string(), "{label}"),
            Ok(()) => panic!("{label} launched a shape its row refuses: {refusal}"),
        }
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

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn fp16_rungs_propagate_nan_and_inf_to_exactly_the_affected_elements() {
    let gpu = open_gpu();
    // n and k multiples of 8, so that TMA rungs take it too; none of any tile.
    let s = shape(131, 72, 88);
    let (nan_row, nan_col, inf_row) = (42, 17, 100);
    let (a_f32, b_f32) = inputs(&s, 21);
    let to_f16 = |v: &[f32]| -> Vec<u16> {
        // No zeros (after rounding): Inf · 0 would be NaN in the Inf row.
        v.iter()
            .map(|&x| half::f16::from_f32(x))
            .map(|h| {
                if h == half::f16::ZERO {
                    half::f16::ONE
                } else {
                    h
                }
                .to_bits()
            })
            .collect()
    };
    let (mut a_host, b_host_init) = (to_f16(&a_f32), to_f16(&b_f32));
    let mut b_host = b_host_init;
    a_host[nan_row * s.k + 5] = half::f16::NAN.to_bits();
    b_host[3 * s.n + nan_col] = half::f16::NAN.to_bits();
    a_host[inf_row * s.k + 9] = half::f16::INFINITY.to_bits();
    let a = gpu.upload_raw(&a_host).unwrap();
    let b = gpu.upload_raw(&b_host).unwrap();
    let mut tested = 0;
    for (label, rung) in kernels(&gpu)
        .into_iter()
        .filter(|(_, r)| r.precision == Precision::Fp16)
    {
        if let Err(refusal) = rung.launch(&s, gpu.info().max_shared_per_block) {
            eprintln!("{label} at {s}: skipped: {refusal}");
            continue;
        }
        // Poison with a finite value (1234 in fp16): NaN poison would hide an unwritten element.
        let mut c = gpu.upload_raw(&vec![0x64D2u16; s.m * s.n]).unwrap();
        gpu.launch_rung(rung, &a, &b, &mut c, &s).unwrap();
        let out = gpu.download_raw(&c).unwrap();
        let value = |i: usize, j: usize| half::f16::from_bits(out[i * s.n + j]).to_f32();
        check_nan_pattern(
            label.as_str(),
            &s,
            (nan_row, nan_col, inf_row),
            1234.0,
            value,
        );
        tested += 1;
    }
    assert!(tested > 0, "no fp16 rung in the table");
}

/// Asserts that C (its element (i, j) read by `value`) is NaN in row `nan_row` and column
/// `nan_col`, infinite in the rest of row `inf_row`, and finite and written (not `poison`)
/// everywhere else.
fn check_nan_pattern(
    label: &str,
    s: &GemmShape,
    (nan_row, nan_col, inf_row): (usize, usize, usize),
    poison: f32,
    value: impl Fn(usize, usize) -> f32,
) {
    for i in 0..s.m {
        for j in 0..s.n {
            let v = value(i, j);
            let ok = if i == nan_row || j == nan_col {
                v.is_nan()
            } else if i == inf_row {
                v.is_infinite()
            } else {
                v.is_finite() && v != poison
            };
            assert!(ok, "{label}: C[{i}][{j}] = {v}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn fp32_and_tf32_rungs_propagate_nan_and_inf_to_exactly_the_affected_elements() {
    let gpu = open_gpu();
    // n and k multiples of 8, so that TMA rungs take it too; none of any tile.
    let s = shape(131, 72, 88);
    let (nan_row, nan_col, inf_row) = (42, 17, 100);
    let (a_f32, b_f32) = inputs(&s, 22);
    // No zeros (Inf · 0 would be NaN in the Inf row), and none that TF32 truncates to zero.
    let nonzero = |v: Vec<f32>| -> Vec<f32> {
        v.into_iter()
            .map(|x| if x.abs() < 1e-3 { 1.0 } else { x })
            .collect()
    };
    let (mut a_host, mut b_host) = (nonzero(a_f32), nonzero(b_f32));
    // The quiet NaN keeps a mantissa bit above TF32's cut: truncated, it is still NaN.
    a_host[nan_row * s.k + 5] = f32::NAN;
    b_host[3 * s.n + nan_col] = f32::NAN;
    a_host[inf_row * s.k + 9] = f32::INFINITY;
    let a = gpu.upload(&a_host).unwrap();
    let b = gpu.upload(&b_host).unwrap();
    let mut tested = Vec::new();
    for (label, rung) in kernels(&gpu)
        .into_iter()
        .filter(|(_, r)| matches!(r.precision, Precision::Fp32 | Precision::Tf32))
    {
        if let Err(refusal) = rung.launch(&s, gpu.info().max_shared_per_block) {
            eprintln!("{label} at {s}: skipped: {refusal}");
            continue;
        }
        // Poison with a finite value: NaN poison would hide an unwritten element.
        let mut c = gpu.upload(&vec![1234.0f32; s.m * s.n]).unwrap();
        gpu.launch_rung(rung, &a, &b, &mut c, &s).unwrap();
        let out = gpu.download(&c).unwrap();
        check_nan_pattern(&label, &s, (nan_row, nan_col, inf_row), 1234.0, |i, j| {
            out[i * s.n + j]
        });
        tested.push(label);
    }
    for tf32 in ["v14", "v19", "v21"] {
        assert!(
            tested.iter().any(|label| label == tf32),
            "{tf32} was not tested: {tested:?}"
        );
    }
}
