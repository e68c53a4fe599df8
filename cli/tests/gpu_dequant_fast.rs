//! GPU tests of the fast dequant kernels (decode, batched decode, prefill, fused) on pre-packed
//! weights: every weight format × group size × aligned and ragged shapes × block counts, with
//! fp16 and bf16 activations, against the f64 CPU product of A and the dequantized weights
//! exactly as each path uses them (`weight_rounding`, `Quantized::dequantize_as`): rounded,
//! `fp16(value · scale)` or `bf16(value · bf16(scale))`, where the path does that (prefill,
//! batched decode; small floats with wide exponents), else exact. The error model is fp32
//! accumulation and output rounding only, so a single wrong weight bit fails. Ignored by
//! default; on a GPU machine run `cargo test --test gpu_dequant_fast -- --ignored`
//! (`RUST_GEMM_TEST_PTX=sm80` for the portable module).

use half::bf16;
use rust_gemm::GemmError;
use rust_gemm::GemmShape;
use rust_gemm::check::cpu::{random_matrix, reference_gemm};
use rust_gemm::check::verify::{ErrorModel, compare_with_model};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::quant::fast::{
    ActivationElement, FastWeights, Path, Scratch, entries, launch, launch_decode_kernel,
    weight_rounding,
};
use rust_gemm::quant::format::{Quantized, WeightFormat, quantize};
use rust_gemm::quant::prepack::Prepacked;

mod dequant_common;
use dequant_common::{activations, formats, open_gpu};

/// Runs `path` on `quantized` with `m` random rows of fp16 activations and checks it; returns
/// a failure message.
fn check(
    gpu: &Gpu,
    quantized: &Quantized,
    m: usize,
    path: Path,
    blocks: Option<usize>,
    seed: u64,
) -> Option<String> {
    check_kernel::<u16>(gpu, quantized, m, path, false, blocks, seed)
}

/// [`check`] with activations and output of type `T` (fp16 bits or bf16), or with `wide` the
/// batched kernel's wide form (128-row tiles, fp16 only) whatever the shape (on `blocks`,
/// default 2), where the module has it for the format.
fn check_kernel<T: ActivationElement>(
    gpu: &Gpu,
    quantized: &Quantized,
    m: usize,
    path: Path,
    wide: bool,
    blocks: Option<usize>,
    seed: u64,
) -> Option<String> {
    let (n, k) = (quantized.n, quantized.k);
    let weights = FastWeights::upload(gpu, &Prepacked::new(quantized).unwrap()).unwrap();
    let a_host: Vec<T> = activations(m * k, seed);
    let a = gpu.upload_raw(&a_host).unwrap();
    let mut c = gpu.upload_raw(&vec![T::from_f32(f32::NAN); m * n]).unwrap();
    let mut scratch = Scratch::default();
    // Twice: the second call checks that shared tiles leave the workspace and counters clean.
    let wide_kernel = if wide {
        Some(weights.wide_batched_kernel(gpu)?)
    } else {
        None
    };
    for _ in 0..2 {
        gpu.poison(&mut c).unwrap();
        match wide_kernel {
            Some(kernel) => {
                let blocks = blocks.unwrap_or(2);
                launch_decode_kernel(gpu, kernel, &a, &weights, &mut c, m, blocks, &mut scratch)
            }
            None => launch(gpu, path, &a, &weights, &mut c, m, blocks, &mut scratch),
        }
        .unwrap();
    }
    let out: Vec<f32> = gpu
        .download_raw(&c)
        .unwrap()
        .into_iter()
        .map(T::to_f32)
        .collect();
    let a32: Vec<f32> = a_host.iter().map(|x| x.to_f32()).collect();
    let used = quantized.dequantize_as(weight_rounding(path, quantized.format, T::TYPE));
    let reference = reference_gemm(&a32, &used, &GemmShape { m, n, k });
    let v = compare_with_model(
        &out,
        &reference.product,
        &reference.magnitude,
        k,
        &ErrorModel::for_dtype(T::TYPE.dtype()),
    );
    (!v.passed).then(|| {
        format!(
            "{}{} group {} {path:?} {} activations blocks {blocks:?} at {m}×{n}×{k}: rel error {:.3e} (tolerance {:.3e}), {} out of bound",
            quantized.format,
            if quantized.zeros.is_some() { " with zero points" } else { "" },
            quantized.group,
            T::TYPE,
            v.rel_error,
            v.tolerance,
            v.elements_out_of_bound
        )
    })
}

/// (m, n, k, groups, blocks) of a decode-kernel test case.
type Case<'a> = (usize, usize, usize, &'a [usize], &'a [Option<usize>]);

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn decode_kernel_matches_the_cpu_for_every_format_group_shape_and_split() {
    // Aligned; ragged m and n with two groups per chunk; ragged k (A padded) with per-channel
    // scales; m past one tile. Block counts: one block for all (tiles in sequence), one block
    // per unit, and counts that split tiles unevenly.
    let cases: [Case; 4] = [
        (16, 256, 512, &[32, 64, 128, 512], &[Some(1), Some(3), None]),
        (3, 67, 384, &[64, 128], &[Some(1), Some(2)]),
        (5, 33, 131, &[131], &[Some(1), Some(2)]),
        (20, 520, 256, &[32], &[Some(5), Some(7), None]),
    ];
    check_decode_cases(Path::Decode, &cases);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn batched_decode_kernel_matches_the_cpu_for_every_format_group_shape_and_split() {
    // The 64-row blocks: one whole block; ragged m (one row past a block) and n with two groups
    // per chunk; ragged k with per-channel scales and a block mostly past m; three row blocks
    // with tiles split unevenly. On Hopper, m > 64 takes the wide form (128-row tiles) for the
    // integer formats: 65 and 150 exercise it.
    let cases: [Case; 4] = [
        (64, 256, 512, &[32, 64, 128, 512], &[Some(1), Some(3), None]),
        (65, 67, 384, &[64, 128], &[Some(1), Some(2)]),
        (17, 33, 131, &[131], &[Some(1), Some(2)]),
        (150, 520, 256, &[32], &[Some(5), Some(7), None]),
    ];
    check_decode_cases(Path::Batched, &cases);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn wide_batched_kernel_matches_the_cpu_for_integer_formats() {
    // The wide form (128-row tiles, Hopper, integer codes), which dispatch takes only for
    // large m and layers, forced at the batched cases' shapes: one tile mostly past m, m past
    // one tile, and tiles split between blocks.
    let gpu = open_gpu();
    if gpu.ptx_target() != "sm_90a" {
        eprintln!("SKIPPED: the wide batched kernel is in the Hopper module only");
        return;
    }
    let cases: [(usize, usize, usize, usize, Option<usize>); 4] = [
        (64, 256, 512, 128, Some(1)),
        (65, 67, 384, 64, Some(2)),
        (17, 33, 131, 131, None),
        (150, 520, 256, 32, Some(5)),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, group, blocks)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            if !matches!(format, WeightFormat::Unsigned(_) | WeightFormat::Signed(_)) {
                continue;
            }
            let seed = 7000 + 1000 * case as u64 + 10 * f as u64;
            let quantized =
                quantize(&random_matrix(k * n, seed), k, n, format, group, zeros).unwrap();
            checked += 1;
            failures.extend(check_kernel::<u16>(
                &gpu,
                &quantized,
                m,
                Path::Batched,
                true,
                blocks,
                seed + 1,
            ));
        }
    }
    eprintln!(
        "{checked} wide batched cases checked, {} failed",
        failures.len()
    );
    assert!(
        checked > 0 && failures.is_empty(),
        "{}",
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn fused_kernel_matches_the_cpu_for_integer_formats_and_both_activations() {
    // The fused kernel (Hopper, integer codes): one whole 128-row tile; m one row past a tile
    // with ragged n and two groups per chunk; ragged k (A padded) with per-channel scales and
    // a tile mostly past m; several tiles per block (1 and 2 blocks) with four groups per
    // chunk, ragged m and n. fp16 and bf16 activations.
    let gpu = open_gpu();
    if gpu.ptx_target() != "sm_90a" {
        eprintln!("SKIPPED: the fused kernel is in the Hopper module only");
        return;
    }
    let cases: [Case; 4] = [
        (128, 256, 512, &[32, 64, 128, 512], &[None]),
        (129, 67, 384, &[64, 128], &[Some(1), None]),
        (5, 33, 131, &[131], &[None]),
        (300, 520, 256, &[32], &[Some(1), Some(2), None]),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, groups, blocks)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            if !matches!(format, WeightFormat::Unsigned(_) | WeightFormat::Signed(_)) {
                continue;
            }
            for &group in groups {
                let seed = 9000 + 1000 * case as u64 + 10 * f as u64 + group as u64;
                let quantized =
                    quantize(&random_matrix(k * n, seed), k, n, format, group, zeros).unwrap();
                for &count in blocks {
                    checked += 2;
                    failures.extend(check_kernel::<u16>(
                        &gpu,
                        &quantized,
                        m,
                        Path::Fused,
                        false,
                        count,
                        seed + 1,
                    ));
                    failures.extend(check_kernel::<bf16>(
                        &gpu,
                        &quantized,
                        m,
                        Path::Fused,
                        false,
                        count,
                        seed + 2,
                    ));
                }
            }
        }
    }
    eprintln!("{checked} fused cases checked, {} failed", failures.len());
    assert!(
        checked > 0 && failures.is_empty(),
        "{}",
        failures.join("\n")
    );
}

/// Runs every format over `cases` on the decode kernel of `path` and fails with the list of
/// mismatches.
fn check_decode_cases(path: Path, cases: &[Case]) {
    let gpu = open_gpu();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, groups, blocks)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            for &group in groups {
                let group = if format == WeightFormat::F16 {
                    k
                } else {
                    group
                };
                let seed = 1000 * case as u64 + 10 * f as u64 + group as u64;
                let w = random_matrix(k * n, seed);
                let quantized = quantize(&w, k, n, format, group, zeros).unwrap();
                for &count in blocks {
                    checked += 1;
                    failures.extend(check(&gpu, &quantized, m, path, count, seed + 1));
                }
            }
        }
    }
    eprintln!(
        "{checked} {path:?} cases checked, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn prefill_path_matches_the_cpu_for_every_format() {
    let gpu = open_gpu();
    // v18 (k and n multiples of 8) and v15 (ragged) behind the expansion.
    let cases: [(usize, usize, usize, usize); 2] = [(40, 264, 256, 64), (33, 67, 131, 131)];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, group)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            let group = if format == WeightFormat::F16 {
                k
            } else {
                group
            };
            let seed = 5000 + 1000 * case as u64 + 10 * f as u64;
            let quantized =
                quantize(&random_matrix(k * n, seed), k, n, format, group, zeros).unwrap();
            checked += 1;
            failures.extend(check(&gpu, &quantized, m, Path::Prefill, None, seed + 1));
        }
    }
    eprintln!("{checked} prefill cases checked, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bf16_activations_match_the_cpu_on_every_path() {
    // Every format on decode, batched decode and prefill with bf16 activations: aligned; ragged
    // m and n with two groups per chunk; one row past a 64-row block; ragged k (A padded) with
    // per-channel scales; prefill-sized m. Where the module has no wgmma form (sm_80, or fp16
    // weights), batched decode takes the mma.sync kernel.
    let gpu = open_gpu();
    let cases: [(usize, usize, usize, &[usize]); 5] = [
        (16, 256, 512, &[32, 128]),
        (3, 67, 384, &[64, 128]),
        (65, 67, 384, &[128]),
        (17, 33, 131, &[131]),
        (300, 40, 256, &[64]),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (case, &(m, n, k, groups)) in cases.iter().enumerate() {
        for (f, &(format, zeros)) in formats().iter().enumerate() {
            for &group in groups {
                let group = if format == WeightFormat::F16 {
                    k
                } else {
                    group
                };
                let seed = 11_000 + 1000 * case as u64 + 10 * f as u64 + group as u64;
                let quantized =
                    quantize(&random_matrix(k * n, seed), k, n, format, group, zeros).unwrap();
                for path in [Path::Decode, Path::Batched, Path::Prefill] {
                    checked += 1;
                    failures.extend(check_kernel::<bf16>(
                        &gpu,
                        &quantized,
                        m,
                        path,
                        false,
                        None,
                        seed + 1,
                    ));
                }
            }
        }
    }
    eprintln!("{checked} bf16 cases checked, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_code_of_the_small_floats_reaches_every_path() {
    // Random weights seldom reach a small float's subnormals or its largest exponents (the
    // quantizer scales each group's largest weight to the largest code). Here every column runs
    // through every code of the format, both signs, in a different order, so every code meets
    // every decoder: the generic entries, the ones compiled for e2m1/e3m2/e2m3/e5m2, batched
    // decode and the expansion, with fp16 and bf16 activations. Scales keep the weights within
    // ±64, so that fp16 products of 256 terms stay finite. Exponents of 6 and 7 bits need
    // scales below fp16's range for that and are left to the random tests.
    let gpu = open_gpu();
    let (k, n) = (256, 72);
    let mut failures = Vec::new();
    let mut checked = 0;
    for (f, &(format, _)) in formats().iter().enumerate() {
        let WeightFormat::Float { exponent, .. } = format else {
            continue;
        };
        if exponent > 5 {
            continue;
        }
        let codes_per_format = 1usize << format.bits();
        let codes = (0..k * n)
            .map(|i| ((i / n + 37 * (i % n)) % codes_per_format) as u32)
            .collect();
        let largest = format.max_value().log2().ceil() as i32;
        let scales = (0..(k / 128) * n)
            .map(|i| half::f16::from_f32(2f32.powi(6 - largest) * (1.0 + (i % 7) as f32 / 8.0)))
            .collect();
        let quantized = Quantized {
            format,
            group: 128,
            k,
            n,
            codes,
            scales,
            zeros: None,
        };
        for (m, path) in [(5, Path::Decode), (40, Path::Batched), (300, Path::Prefill)] {
            checked += 2;
            let seed = 21_000 + 10 * f as u64 + m as u64;
            failures.extend(check_kernel::<u16>(
                &gpu, &quantized, m, path, false, None, seed,
            ));
            failures.extend(check_kernel::<bf16>(
                &gpu, &quantized, m, path, false, None, seed,
            ));
        }
    }
    eprintln!(
        "{checked} every-code cases checked, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn every_fast_entry_loads() {
    let gpu = open_gpu();
    let hopper = gpu.ptx_target() == "sm_90a";
    for entry in entries() {
        // The batched kernel's wgmma forms are in the Hopper module only; there they replace
        // the bf16 mma.sync batched kernels, but for fp16 weights (which have no wgmma form).
        let hopper_only = entry.contains("wgmma")
            || entry.starts_with("dequant_batched128_")
            || entry.starts_with("dequant_fused_");
        let portable_only =
            entry.starts_with("dequant_batched_bf16_") && entry != "dequant_batched_bf16_half";
        if (hopper_only && !hopper) || (portable_only && hopper) {
            continue;
        }
        assert!(gpu.entries().iter().any(|e| e == entry), "{entry} missing");
        gpu.kernel(entry).expect("the entry loads");
    }
    drop(gpu);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bad_buffers_and_block_counts_are_refused() {
    let gpu = open_gpu();
    let (m, n, k) = (4, 32, 256);
    let quantized = quantize(
        &random_matrix(k * n, 7),
        k,
        n,
        WeightFormat::Unsigned(4),
        128,
        false,
    )
    .unwrap();
    let weights = FastWeights::upload(&gpu, &Prepacked::new(&quantized).unwrap()).unwrap();
    let mut scratch = Scratch::default();
    let short_a = gpu.upload_raw(&vec![0u16; m * k - 1]).unwrap();
    let a = gpu.upload_raw(&vec![0u16; m * k]).unwrap();
    let mut c = gpu.upload_raw(&vec![0u16; m * n]).unwrap();
    for path in [Path::Decode, Path::Batched, Path::Prefill] {
        assert!(matches!(
            launch(
                &gpu,
                path,
                &short_a,
                &weights,
                &mut c,
                m,
                None,
                &mut scratch
            ),
            Err(GemmError::BufferSize { name: "A", .. })
        ));
    }
    // k = 256 is two chunks of one tile: 2 units.
    for blocks in [0, 3] {
        let result = launch(
            &gpu,
            Path::Decode,
            &a,
            &weights,
            &mut c,
            m,
            Some(blocks),
            &mut scratch,
        );
        assert!(
            matches!(result, Err(GemmError::DecodeBlocks { .. })),
            "blocks {blocks}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn sanitizer_subset() {
    // A few formats over every kind of launch, small enough for compute-sanitizer's racecheck
    // (scripts/sanitize.sh): each decoder (integer in place and by planes, with and without zero
    // points, small floats through fp16 and f32 (on decode, e2m1 and e5m2 take the entries
    // compiled for their widths, e4m3 the generic one), fp16), groups of one and several per chunk,
    // ragged shapes, whole and shared tiles, the prefill expansion, and on Hopper the fused
    // kernel for the integer formats; each with fp16 and with bf16 activations.
    let gpu = open_gpu();
    let formats = [
        (WeightFormat::Unsigned(4), true),
        (WeightFormat::Unsigned(3), false),
        (WeightFormat::Signed(2), false),
        (
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1,
            },
            false,
        ),
        (
            WeightFormat::Float {
                exponent: 5,
                mantissa: 2,
            },
            false,
        ),
        (
            WeightFormat::Float {
                exponent: 4,
                mantissa: 3,
            },
            false,
        ),
        (WeightFormat::F16, false),
    ];
    let mut failures = Vec::new();
    for (f, &(format, zeros)) in formats.iter().enumerate() {
        for (m, n, k, group, blocks, path) in [
            (3, 67, 384, 64, Some(2), Path::Decode),
            (20, 520, 256, 256, Some(5), Path::Decode),
            (5, 33, 131, 131, None, Path::Decode),
            (70, 67, 384, 64, Some(2), Path::Batched),
            (33, 33, 131, 131, None, Path::Batched),
            (33, 67, 131, 131, None, Path::Prefill),
            (130, 67, 384, 64, Some(2), Path::Fused),
            (5, 33, 131, 131, None, Path::Fused),
        ] {
            // The fused kernel: integer codes, in the Hopper module only.
            let integer = matches!(format, WeightFormat::Unsigned(_) | WeightFormat::Signed(_));
            if path == Path::Fused && !(integer && gpu.ptx_target() == "sm_90a") {
                continue;
            }
            let group = if format == WeightFormat::F16 {
                k
            } else {
                group
            };
            let seed = 9000 + 10 * f as u64;
            let quantized =
                quantize(&random_matrix(k * n, seed), k, n, format, group, zeros).unwrap();
            failures.extend(check(&gpu, &quantized, m, path, blocks, seed + 1));
            failures.extend(check_kernel::<bf16>(
                &gpu,
                &quantized,
                m,
                path,
                false,
                blocks,
                seed + 2,
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
