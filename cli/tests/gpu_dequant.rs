//! GPU tests of the reference dequant-GEMM: every weight format × group size × aligned and
//! ragged shapes against the f64 CPU reference of `host/src/quant.rs`'s semantics, and NaN
//! propagation. Ignored by default; on a GPU machine run
//! `cargo test --test gpu_dequant -- --ignored`.

use half::f16;
use rust_gemm::GemmError;
use rust_gemm::check::cpu::random_matrix;
use rust_gemm::check::verify::compare_rounded_output;
use rust_gemm::quant::format::{WeightFormat, quantize};
use rust_gemm::quant::reference::{DeviceWeights, launch_reference, reference_product};

const FP16_UNIT_ROUNDOFF: f64 = 1.0 / 2048.0;
const FP16_SMALLEST_SUBNORMAL: f64 = 1.0 / (1u64 << 24) as f64;

mod dequant_common;
use dequant_common::{activations, formats, open_gpu};

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn reference_kernel_matches_the_cpu_semantics_for_every_format() {
    let gpu = open_gpu();
    // (m, n, k, groups): aligned, ragged m and n, and a prime k with per-channel scales.
    let cases: [(usize, usize, usize, &[usize]); 3] = [
        (16, 256, 512, &[32, 64, 128, 512]),
        (3, 67, 384, &[32, 128]),
        (5, 33, 131, &[131]),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, groups)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            for &group in groups {
                let seed = 1000 * case as u64 + 10 * f as u64 + group as u64;
                let w = random_matrix(k * n, seed);
                let quantized = quantize(&w, k, n, format, group, zeros).unwrap();
                let a_host = activations::<f16>(m * k, seed + 1);
                let a = gpu
                    .upload_raw(&a_host.iter().map(|x| x.to_bits()).collect::<Vec<u16>>())
                    .unwrap();
                let weights = DeviceWeights::upload(&gpu, &quantized).unwrap();
                // Poison C with fp16 NaN.
                let mut c = gpu.upload_raw(&vec![0x7E00u16; m * n]).unwrap();
                launch_reference(&gpu, &a, &weights, &mut c, m).unwrap();
                let out: Vec<f32> = gpu
                    .download_raw(&c)
                    .unwrap()
                    .into_iter()
                    .map(|b| f16::from_bits(b).to_f32())
                    .collect();
                let reference = reference_product(&a_host, &quantized, m);
                let v = compare_rounded_output(
                    &out,
                    &reference.product,
                    &reference.magnitude,
                    k,
                    FP16_UNIT_ROUNDOFF,
                    FP16_SMALLEST_SUBNORMAL,
                );
                checked += 1;
                if !v.passed {
                    failures.push(format!(
                        "{format}{} group {group} at {m}×{n}×{k}: rel error {:.3e} (tolerance {:.3e}), {} out of bound",
                        if zeros { " with zero points" } else { "" },
                        v.rel_error,
                        v.tolerance,
                        v.elements_out_of_bound
                    ));
                }
            }
        }
    }
    eprintln!(
        "{checked} format × group × shape cases checked, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn nan_in_a_row_of_activations_reaches_exactly_that_row() {
    let gpu = open_gpu();
    let (m, n, k) = (6, 40, 128);
    let quantized = quantize(
        &random_matrix(k * n, 5),
        k,
        n,
        WeightFormat::Unsigned(4),
        32,
        true,
    )
    .unwrap();
    let mut a_host = activations::<f16>(m * k, 6);
    a_host[2 * k + 17] = f16::NAN;
    let a = gpu
        .upload_raw(&a_host.iter().map(|x| x.to_bits()).collect::<Vec<u16>>())
        .unwrap();
    let weights = DeviceWeights::upload(&gpu, &quantized).unwrap();
    let mut c = gpu.upload_raw(&vec![0u16; m * n]).unwrap();
    launch_reference(&gpu, &a, &weights, &mut c, m).unwrap();
    let out = gpu.download_raw(&c).unwrap();
    for (i, bits) in out.iter().enumerate() {
        let value = f16::from_bits(*bits);
        // A zero weight times NaN is NaN too, so the whole row is NaN.
        assert_eq!(
            value.is_nan(),
            i / n == 2,
            "C[{}][{}] = {value}",
            i / n,
            i % n
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn mismatched_activations_are_refused() {
    let gpu = open_gpu();
    let (m, n, k) = (4, 32, 64);
    let quantized = quantize(
        &random_matrix(k * n, 7),
        k,
        n,
        WeightFormat::Signed(4),
        32,
        false,
    )
    .unwrap();
    let weights = DeviceWeights::upload(&gpu, &quantized).unwrap();
    let a = gpu.upload_raw(&vec![0u16; m * k - 1]).unwrap();
    let mut c = gpu.upload_raw(&vec![0u16; m * n]).unwrap();
    assert!(matches!(
        launch_reference(&gpu, &a, &weights, &mut c, m),
        Err(GemmError::BufferSize { name: "A", .. })
    ));
}
