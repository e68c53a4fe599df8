//! `QuantizedWeights` on the GPU: formats, group sizes, zero points and batch sizes on both
//! paths (decode and prefill), against the f64 product with the weights as the kernels use
//! them; and the refusals.
//!
//! Needs a CUDA GPU: `cargo test --test api_quantized_gpu -- --ignored`.

mod common;

use common::{quantized_tolerance, random};
use cudarc::driver::CudaContext;
use half::{bf16, f16};
use rust_gemm::quant::fast::{ActivationElement, Path, weight_rounding};
use rust_gemm::quant::format::quantize;
use rust_gemm::{GemmError, Group, QuantizedActivation, QuantizedWeights, WeightFormat};

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn quantized_products_match_the_reference() {
    check_quantized_products::<f16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn quantized_products_with_bf16_activations_match_the_reference() {
    check_quantized_products::<bf16>();
}

/// Formats, groups and zero points at batch sizes across every path, with activations and
/// output of type `T`, against the f64 product with the weights as each path uses them.
fn check_quantized_products<T: QuantizedActivation>() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let gemm = common::gemm_on(&stream);
    let activation = <T as ActivationElement>::TYPE;
    let cases = [
        (WeightFormat::Unsigned(4), 128, false, 256, 300),
        (WeightFormat::Unsigned(4), 64, true, 512, 257),
        (WeightFormat::Signed(8), 32, false, 256, 96),
        (WeightFormat::Unsigned(3), 128, true, 384, 130),
        (
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1,
            },
            128,
            false,
            256,
            64,
        ),
        (
            WeightFormat::Float {
                exponent: 5,
                mantissa: 2,
            },
            256,
            false,
            512,
            40,
        ),
        (WeightFormat::Unsigned(2), 512, false, 512, 33),
    ];
    for (i, &(format, group, zero_points, k, n)) in cases.iter().enumerate() {
        let w: Vec<f32> = random(k * n, 100 + i as u64)
            .iter()
            .map(|&x| x as f32)
            .collect();
        let qw = if zero_points {
            QuantizedWeights::quantize_with_zero_points(&gemm, &w, k, n, format, Group::Rows(group))
        } else {
            QuantizedWeights::quantize(&gemm, &w, k, n, format, Group::Rows(group))
        }
        .unwrap_or_else(|e| panic!("{format} g{group}: {e}"));
        let reference = quantize(&w, k, n, format, group, zero_points).unwrap();
        // Decode (m ≤ 16, and m = 17 too at these small layers with codes of at most 4 bits),
        // batched decode (one 64-row block, ragged blocks, several blocks) and prefill.
        for m in [1, 5, 16, 17, 64, 65, 200, 300] {
            let x: Vec<T> = random(m * k, 7 * m as u64 + i as u64)
                .iter()
                .map(|&v| T::from_f64(v))
                .collect();
            let x_dev = stream.clone_htod(&x).unwrap();
            let mut y_dev = stream
                .clone_htod(&vec![T::from_f64(f64::NAN); m * n])
                .unwrap();
            qw.matmul(&gemm, &x_dev, &mut y_dev, m).unwrap();
            let y = stream.clone_dtoh(&y_dev).unwrap();
            let path = qw.path(&gemm, m);
            let used = reference.dequantize_as(weight_rounding(path, format, activation));
            for r in 0..m {
                for c in 0..n {
                    let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
                    for l in 0..k {
                        let term = x[r * k + l].to_f64() * used[l * n + c] as f64;
                        sum += term;
                        magnitude += term.abs();
                    }
                    let allowed = quantized_tolerance(sum, magnitude, k, activation);
                    let got = y[r * n + c].to_f64();
                    assert!(
                        (got - sum).abs() <= allowed,
                        "{activation} {format} g{group} zp {zero_points} m {m} ({path:?}) ({r}, {c}): {got} vs {sum}"
                    );
                }
            }
        }
        assert_eq!(qw.path(&gemm, 1), Path::Decode);
        assert_eq!(qw.path(&gemm, 300), Path::Prefill);
        // The batched kernel needs 160 KiB of shared memory at most: A100 and Hopper have it.
        if gemm.runtime().info().max_shared_per_block >= 160 * 1024 {
            assert_eq!(qw.path(&gemm, 64), Path::Batched);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bad_quantization_requests_are_refused() {
    let ctx = CudaContext::new(0).unwrap();
    let gemm = common::gemm_on(&ctx.default_stream());
    let w = vec![0.5f32; 256 * 64];
    let err = QuantizedWeights::quantize_with_zero_points(
        &gemm,
        &w,
        256,
        64,
        WeightFormat::Signed(4),
        Group::Rows(128),
    )
    .err()
    .unwrap();
    assert!(
        matches!(err, GemmError::ZeroPointsNeedUnsigned { .. }),
        "{err}"
    );
    let err = QuantizedWeights::quantize(
        &gemm,
        &w,
        256,
        64,
        WeightFormat::Unsigned(4),
        Group::Rows(100),
    )
    .err()
    .unwrap();
    assert!(matches!(err, GemmError::GroupSize { .. }), "{err}");
    let err = QuantizedWeights::quantize(
        &gemm,
        &w[1..],
        256,
        64,
        WeightFormat::Unsigned(4),
        Group::PerChannel,
    )
    .err()
    .unwrap();
    assert!(matches!(err, GemmError::BufferSize { .. }), "{err}");
    let err = QuantizedWeights::quantize(
        &gemm,
        &w,
        0,
        64,
        WeightFormat::Unsigned(4),
        Group::PerChannel,
    )
    .err()
    .unwrap();
    assert!(matches!(err, GemmError::ZeroDimension { .. }), "{err}");
}
