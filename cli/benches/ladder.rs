//! Criterion benches of every kernel (each rung, each v11 candidate) and of cuBLAS (fp32, TF32, fp16) at 2048³, timed on the GPU with CUDA events
//! through `iter_custom`. Without a GPU they print why and measure nothing.

use criterion::{Criterion, criterion_group, criterion_main};
use rust_gemm::check::cpu::random_matrix;
use rust_gemm::check::sweep::all_kernels;
use rust_gemm::element::Element;
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::ladder::rungs::Precision;
use rust_gemm::{GemmShape, PTX};
use std::time::Duration;

fn ladder(c: &mut Criterion) {
    let gpu = match Gpu::new(PTX) {
        Ok(gpu) => gpu,
        Err(err) => {
            eprintln!("benches/ladder: SKIPPED, no GPU: {err}");
            return;
        }
    };
    let shape = GemmShape::square(2048).expect("valid shape");
    let (a_len, b_len, c_len) = shape.elements();
    let a = gpu.upload(&random_matrix(a_len, 1)).expect("upload A");
    let b = gpu.upload(&random_matrix(b_len, 2)).expect("upload B");
    let mut out = gpu.alloc_poisoned(c_len).expect("allocate C");
    let mut group = c.benchmark_group(format!("sgemm {shape}"));
    group.sample_size(20);
    group.bench_function("cublas", |bencher| {
        bencher.iter_custom(|iters| {
            let ms = gpu
                .time_ms(|| {
                    (0..iters).try_for_each(|_| gpu.launch_cublas(&a, &b, &mut out, &shape))
                })
                .expect("cuBLAS launch");
            Duration::from_secs_f64(ms * 1e-3)
        })
    });
    // fp16 operands for the fp16 rungs and their cuBLAS baseline; TF32 rungs share the fp32 ones.
    let to_f16 = |v: Vec<f32>| -> Vec<u16> { v.iter().map(|&x| u16::from_f32(x)).collect() };
    let a16 = gpu
        .upload_raw(&to_f16(random_matrix(a_len, 1)))
        .expect("upload A");
    let b16 = gpu
        .upload_raw(&to_f16(random_matrix(b_len, 2)))
        .expect("upload B");
    let mut out16 = gpu.alloc_poisoned::<u16>(c_len).expect("allocate C");
    group.bench_function("cublas-tf32", |bencher| {
        bencher.iter_custom(|iters| {
            let ms = gpu
                .time_ms(|| {
                    (0..iters).try_for_each(|_| {
                        gpu.launch_cublas_as(Precision::Tf32, &a, &b, &mut out, &shape)
                    })
                })
                .expect("cuBLAS launch");
            Duration::from_secs_f64(ms * 1e-3)
        })
    });
    group.bench_function("cublas-fp16", |bencher| {
        bencher.iter_custom(|iters| {
            let ms = gpu
                .time_ms(|| {
                    (0..iters).try_for_each(|_| {
                        gpu.launch_cublas_as(Precision::Fp16, &a16, &b16, &mut out16, &shape)
                    })
                })
                .expect("cuBLAS launch");
            Duration::from_secs_f64(ms * 1e-3)
        })
    });
    // Every kernel: each plain rung, and each candidate of the autotuned rung (`v11/128x64x8`).
    for (label, rung) in all_kernels() {
        if let Some(reason) = gpu.rung_unavailable(rung) {
            eprintln!("benches/ladder: skipping {label}: it {reason}");
            continue;
        }
        if rung
            .launch(&shape, gpu.info().max_shared_per_block)
            .is_err()
        {
            eprintln!("benches/ladder: {label} cannot run {shape}, skipped");
            continue;
        }
        group.bench_function(label, |bencher| {
            bencher.iter_custom(|iters| {
                let ms = gpu
                    .time_ms(|| {
                        (0..iters).try_for_each(|_| match rung.precision {
                            Precision::Fp16 => {
                                gpu.launch_rung(rung, &a16, &b16, &mut out16, &shape)
                            }
                            _ => gpu.launch_rung(rung, &a, &b, &mut out, &shape),
                        })
                    })
                    .expect("rung launch");
                Duration::from_secs_f64(ms * 1e-3)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, ladder);
criterion_main!(benches);
