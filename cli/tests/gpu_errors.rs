//! GPU tests of the failure paths that need a device: out-of-memory and a PTX the driver
//! rejects. Ignored by default; on a GPU machine run `cargo test --test gpu_errors -- --ignored`.

use rust_gemm::harness::gpu::Gpu;
use rust_gemm::{GemmError, PTX};

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn allocation_larger_than_the_device_is_a_clear_error() {
    let gpu = Gpu::open_for_tests().expect("a CUDA GPU");
    let too_many = gpu.info().total_memory; // floats: 4× the device's bytes
    match gpu.alloc_poisoned::<f32>(too_many) {
        Err(GemmError::OutOfDeviceMemory {
            needed_bytes,
            free_bytes,
        }) => {
            assert!(needed_bytes > free_bytes);
        }
        Err(other) => panic!("expected OutOfDeviceMemory, got {other}"),
        Ok(_) => panic!("allocating 4× the device memory succeeded"),
    }
    // A length whose byte count overflows usize is refused the same way, not wrapped around.
    assert!(matches!(
        gpu.alloc_poisoned::<f32>(usize::MAX / 2),
        Err(GemmError::OutOfDeviceMemory { .. })
    ));
    // The GPU stays usable after a refusal.
    assert!(gpu.alloc_poisoned::<f32>(1024).is_ok());
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn ptx_the_driver_rejects_is_a_module_load_error() {
    // The same error path as a driver too old for the PTX's version.
    let version = PTX
        .lines()
        .find(|line| line.trim_start().starts_with(".version "))
        .expect("a .version directive");
    let bad = PTX.replacen(version, ".version 99.9", 1);
    assert_ne!(bad, PTX, "the version was not replaced");
    match Gpu::new(&bad) {
        Err(error @ GemmError::ModuleLoad { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains("99.9"),
                "the message names the PTX version: {message}"
            );
            assert!(
                std::error::Error::source(&error).is_some(),
                "the driver's error is kept as the source"
            );
            eprintln!("refused as expected: {message}");
        }
        Err(other) => panic!("expected ModuleLoad, got {other}"),
        Ok(_) => panic!("the driver accepted PTX version 99.9"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn autotuned_rung_is_not_launched_directly() {
    use rust_gemm::check::cpu::random_matrix;
    use rust_gemm::{GemmShape, RUNGS};
    let gpu = Gpu::open_for_tests().expect("a CUDA GPU");
    let tuned = RUNGS
        .iter()
        .find(|r| !r.candidates.is_empty())
        .expect("an autotuned rung");
    let shape = GemmShape::new(64, 64, 64).unwrap();
    let a = gpu.upload(&random_matrix(64 * 64, 1)).unwrap();
    let b = gpu.upload(&random_matrix(64 * 64, 2)).unwrap();
    let mut c = gpu.alloc_poisoned(64 * 64).unwrap();
    match gpu.launch_rung(tuned, &a, &b, &mut c, &shape) {
        Err(GemmError::NeedsTuning { rung }) => assert_eq!(rung, tuned.name),
        other => panic!("expected NeedsTuning, got {other:?}"),
    }
}
