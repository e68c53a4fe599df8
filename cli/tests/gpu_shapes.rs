//! The shape suite on the GPU: the cuBLAS baselines in every precision and B layout against the
//! f64 CPU reference, and `sgemm-ladder shapes` end to end on the ragged group.
//!
//! These need a CUDA GPU and libcublas, so they are ignored by default:
//!
//! ```text
//! cargo test --test gpu_shapes -- --ignored
//! .carry/test-gpu_shapes --ignored     # staged binaries (scripts/stage-carry.sh)
//! ```

use rust_gemm::check::cpu::{random_matrix, reference_gemm, reference_gemm_nk};
use rust_gemm::check::verify::{ErrorModel, compare_with_model};
use rust_gemm::element::{Element, convert, widen};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::harness::report::Record;
use rust_gemm::{BLayout, DType, GemmShape, PTX};
use std::path::PathBuf;
use std::process::Command;

/// The `sgemm-ladder` binary: `$SGEMM_LADDER` if set; else the one cargo built for this test,
/// if it is there; else the one beside this test's executable (as in `.carry/`, where
/// `scripts/stage-carry.sh` puts the release binaries for a GPU machine without Rust).
fn sgemm_ladder() -> PathBuf {
    if let Some(path) = std::env::var_os("SGEMM_LADDER") {
        return path.into();
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_sgemm-ladder"));
    if built.exists() {
        return built;
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("sgemm-ladder")));
    beside.unwrap_or(built)
}

fn open_gpu() -> Gpu {
    Gpu::new(PTX).unwrap_or_else(|e| {
        panic!("the GPU tests were asked for, but the GPU could not be opened: {e}")
    })
}

/// `launch_cublas_gemm` in `dtype` with B in `layout`, on inputs rounded to `T`, against the
/// exact product of those inputs under the precision's error model.
fn check_cublas<T: Element>(gpu: &Gpu, dtype: DType, layout: BLayout, shape: &GemmShape) {
    let (a_len, b_len, c_len) = shape.elements();
    let a: Vec<T> = convert(&random_matrix(a_len, 11));
    let b: Vec<T> = convert(&random_matrix(b_len, 12));
    let (a_wide, b_wide) = (widen(&a), widen(&b));
    let reference = match layout {
        BLayout::Kn => reference_gemm(&a_wide, &b_wide, shape),
        BLayout::Nk => reference_gemm_nk(&a_wide, &b_wide, shape),
    };
    let (a_dev, b_dev) = (gpu.upload_raw(&a).unwrap(), gpu.upload_raw(&b).unwrap());
    let mut c = gpu.alloc_poisoned::<T>(c_len).unwrap();
    gpu.launch_cublas_gemm(dtype, layout, &a_dev, &b_dev, &mut c, shape)
        .unwrap();
    let got = widen(&gpu.download_raw(&c).unwrap());
    let v = compare_with_model(
        &got,
        &reference.product,
        &reference.magnitude,
        shape.k,
        &ErrorModel::for_dtype(dtype),
    );
    assert!(
        v.passed,
        "cuBLAS {} with B {} at {shape}: {v:?}",
        dtype.label(),
        layout.label()
    );
}

#[test]
#[ignore = "needs a CUDA GPU and libcublas: run with --ignored on a GPU machine"]
fn cublas_baselines_match_the_cpu_in_every_precision_and_layout() {
    let gpu = open_gpu();
    for (m, n, k) in [(67, 45, 131), (1, 300, 64), (130, 1, 17)] {
        let shape = GemmShape::new(m, n, k).unwrap();
        for layout in [BLayout::Kn, BLayout::Nk] {
            check_cublas::<f32>(&gpu, DType::F32, layout, &shape);
            check_cublas::<f32>(&gpu, DType::Tf32, layout, &shape);
            check_cublas::<half::f16>(&gpu, DType::F16, layout, &shape);
            check_cublas::<half::bf16>(&gpu, DType::Bf16, layout, &shape);
        }
    }
    // A mismatched element size is refused, not launched.
    let shape = GemmShape::new(2, 2, 2).unwrap();
    let a = gpu.upload(&[1.0f32; 4]).unwrap();
    let mut c = gpu.alloc_poisoned::<f32>(4).unwrap();
    assert!(
        gpu.launch_cublas_gemm(DType::Bf16, BLayout::Kn, &a, &a, &mut c, &shape)
            .is_err()
    );
}

#[test]
#[ignore = "needs a CUDA GPU and libcublas: run with --ignored on a GPU machine"]
fn shapes_runs_the_ragged_group_in_f16_and_writes_its_records() {
    let dir = std::env::temp_dir().join(format!("sgemm-ladder-gpu-shapes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let output = Command::new(sgemm_ladder())
        .args([
            "shapes",
            "--group",
            "ragged",
            "--precision",
            "f16",
            "--reps",
            "3",
            "--seed",
            "14",
            "--report-dir",
        ])
        .arg(&dir)
        .env_remove("NVIDIA_TF32_OVERRIDE")
        .output()
        .expect("run sgemm-ladder");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // One progress line per case, then the summary.
    assert_eq!(stdout.matches("/20] fp16").count(), 20, "{stdout}");
    assert!(
        stdout.contains("fp16: 20 cases, 20 passed, 0 failed"),
        "{stdout}"
    );

    let records: Vec<Record> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(records.len(), 20);
    for r in &records {
        let s = r.suite.as_ref().expect("a shape-suite record");
        let what = format!("{} B {}", s.shape_name, s.b_layout);
        assert_eq!(s.suite_group, "ragged", "{what}");
        assert_eq!(r.precision, "fp16", "{what}");
        assert!(r.passed && r.skipped.is_none(), "{what}: {r:?}");
        assert!((1..=3).contains(&r.reps), "{what}: {} reps", r.reps);
        assert!(s.kernel.is_some() && s.kernel_entry.is_some(), "{what}");
        assert!(
            s.kernel_entry
                .as_deref()
                .unwrap()
                .ends_with(&format!("_f16_{}", s.b_layout)),
            "{what}: {:?}",
            s.kernel_entry
        );
        let ratio = s.ratio.unwrap();
        assert!(ratio > 0.0 && ratio.is_finite(), "{what}: ratio {ratio}");
        assert!(
            s.copy_share.unwrap() > 0.0 && s.copy_gbs.unwrap() > 100.0,
            "{what}"
        );
        // Only 8192×8192×64 is past the CPU reference's 2³¹ multiply-adds.
        let expected = if r.m == 8192 { "cublas" } else { "cpu-f64" };
        assert_eq!(r.reference.as_deref(), Some(expected), "{what}");
    }
    for layout in ["kn", "nk"] {
        assert_eq!(
            records
                .iter()
                .filter(|r| r.suite.as_ref().unwrap().b_layout == layout)
                .count(),
            10
        );
    }
    let markdown = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(markdown.contains("## Shape suite"), "{markdown}");
    assert!(dir.join("plot-shapes.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
