//! GPU tests of the fused epilogue (v12) and of NaN and Inf propagation through every kernel.
//!
//! They need a CUDA GPU, so they are ignored by default; on a GPU machine run
//! `cargo test --test gpu_epilogue -- --ignored`.

use rust_gemm::check::cpu::{epilogue_reference, random_matrix, reference_gemm};
use rust_gemm::check::sweep::all_kernels;
use rust_gemm::check::verify::compare_with_cpu;
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::ladder::rungs::Epilogue;
use rust_gemm::{GemmShape, RUNGS, Rung};

fn open_gpu() -> Gpu {
    Gpu::open_for_tests().unwrap_or_else(|e| panic!("these tests need a CUDA GPU: {e}"))
}

fn epilogue_rung() -> &'static Rung {
    RUNGS
        .iter()
        .find(|r| r.epilogue_args)
        .expect("a rung with a fused epilogue")
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn fused_epilogue_matches_the_cpu_reference() {
    let gpu = open_gpu();
    let rung = epilogue_rung();
    let epilogues = [
        Epilogue::STORE,
        Epilogue {
            alpha: 1.5,
            beta: 0.5,
            leaky_slope: Some(0.01),
        },
        Epilogue {
            alpha: -2.0,
            beta: 1.0,
            leaky_slope: Some(0.1),
        },
        Epilogue {
            alpha: 0.5,
            beta: -1.0,
            leaky_slope: None,
        },
        Epilogue {
            alpha: 1.0,
            beta: 0.0,
            leaky_slope: Some(0.0),
        },
    ];
    let shapes = [
        (127, 129, 131),
        (256, 256, 256),
        (1000, 1000, 1000),
        (4097, 31, 513),
        (1, 1, 1),
    ];
    let mut failures = Vec::new();
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        let shape = GemmShape::new(m, n, k).unwrap();
        for (j, epilogue) in epilogues.iter().enumerate() {
            let seed = 7000 + 100 * i as u64 + j as u64;
            let a_host = random_matrix(m * k, seed);
            let b_host = random_matrix(k * n, seed + 1);
            let c_host = random_matrix(m * n, seed + 2);
            let a = gpu.upload(&a_host).unwrap();
            let b = gpu.upload(&b_host).unwrap();
            let mut c = gpu.upload(&c_host).unwrap();
            gpu.launch_rung_with_epilogue(rung, &a, &b, &mut c, &shape, epilogue)
                .unwrap();
            let result = gpu.download(&c).unwrap();
            let plain = reference_gemm(&a_host, &b_host, &shape);
            let expected = epilogue_reference(
                &plain,
                &c_host,
                epilogue.alpha,
                epilogue.beta,
                epilogue.leaky_slope,
            );
            let v = compare_with_cpu(&result, &expected.product, &expected.magnitude, k + 3);
            let line = format!(
                "{} {epilogue:?} at {shape}: rel error {:.2e}, {} out of bound",
                rung.name, v.rel_error, v.elements_out_of_bound
            );
            eprintln!("{} {line}", if v.passed { "PASS" } else { "FAIL" });
            if !v.passed {
                failures.push(line);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn epilogue_is_refused_by_rungs_without_one() {
    let gpu = open_gpu();
    let shape = GemmShape::new(64, 64, 64).unwrap();
    let a = gpu.upload(&random_matrix(64 * 64, 1)).unwrap();
    let b = gpu.upload(&random_matrix(64 * 64, 2)).unwrap();
    let mut c = gpu.alloc_poisoned(64 * 64).unwrap();
    let plain = RUNGS
        .iter()
        .find(|r| !r.epilogue_args && r.candidates.is_empty())
        .unwrap();
    let scaled = Epilogue {
        alpha: 2.0,
        beta: 0.0,
        leaky_slope: None,
    };
    let err = gpu
        .launch_rung_with_epilogue(plain, &a, &b, &mut c, &shape, &scaled)
        .unwrap_err();
    assert!(err.to_string().contains("no fused epilogue"), "{err}");
}

/// A NaN in row r of A must make row r of C NaN and leave every other row finite; a NaN in
/// column j of B likewise for column j of C (IEEE: NaN · x = NaN, and NaN + y = NaN). An
/// infinity in row r' of A makes every element of row r' infinite (B has no zeros, and the
/// other terms are finite), or NaN where it meets the NaN column.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn nan_and_inf_propagate_to_exactly_the_affected_rows_and_columns() {
    let gpu = open_gpu();
    let (m, n, k) = (131, 67, 77);
    let shape = GemmShape::new(m, n, k).unwrap();
    let (nan_row, nan_col, inf_row) = (42, 17, 100);
    let mut a_host = random_matrix(m * k, 11);
    let mut b_host = random_matrix(k * n, 12);
    a_host[nan_row * k + 5] = f32::NAN;
    b_host[3 * n + nan_col] = f32::NAN;
    a_host[inf_row * k + 9] = f32::INFINITY;
    assert!(
        b_host.iter().all(|&x| x != 0.0),
        "B must have no zeros for the Inf row to stay infinite"
    );
    let a = gpu.upload(&a_host).unwrap();
    let b = gpu.upload(&b_host).unwrap();
    let mut failures = Vec::new();
    // fp16 rungs take other buffers; their NaN and Inf handling is checked in gpu_ladder.rs.
    for (_, rung) in all_kernels()
        .into_iter()
        .filter(|(_, r)| r.precision != rust_gemm::ladder::rungs::Precision::Fp16)
        .filter(|(_, r)| gpu.rung_unavailable(r).is_none())
    {
        if rung
            .launch(&shape, gpu.info().max_shared_per_block)
            .is_err()
        {
            continue;
        }
        // Poison with a finite value: NaN poison would hide an unwritten element here.
        let mut c = gpu.upload(&vec![12345.0f32; m * n]).unwrap();
        gpu.launch_rung(rung, &a, &b, &mut c, &shape).unwrap();
        let out = gpu.download(&c).unwrap();
        'check: for i in 0..m {
            for j in 0..n {
                let value = out[i * n + j];
                let (expected, ok) = if i == nan_row || j == nan_col {
                    ("NaN", value.is_nan())
                } else if i == inf_row {
                    ("±Inf", value.is_infinite())
                } else {
                    ("a finite product", value.is_finite() && value != 12345.0)
                };
                if !ok {
                    failures.push(format!(
                        "{} C[{i}][{j}] = {value}, expected {expected}",
                        rung.name
                    ));
                    break 'check;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
