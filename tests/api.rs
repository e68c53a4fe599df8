//! The API's checks and dispatch without a GPU: every invalid description is refused with its
//! typed error before any launch, and the kernel choice is a pure function of the device's
//! properties and the call.

use rust_gemm::api::dispatch::{
    DeviceCaps, GridKind, KERNELS, MAX_WORKSPACE_BYTES, REDUCTION_ENTRIES, ShapeClass, choose,
    choose_plan, choose_split,
};
use rust_gemm::api::problem::{Buffers, Problem, Request, validate};
use rust_gemm::{Activation, BLayout, DType, Gemm, GemmError};

fn request(dtype: DType, m: usize, n: usize, k: usize) -> Request {
    Request::contiguous(dtype, BLayout::Kn, m, n, k)
}

/// Buffers of exactly the needed lengths at well-separated, 256-byte-aligned addresses.
fn buffers(a: usize, b: usize, c: usize) -> Buffers {
    Buffers {
        a: (1 << 32, a),
        b: (2 << 32, b),
        c: (3 << 32, c),
        bias: None,
    }
}

fn every_entry() -> Vec<String> {
    KERNELS
        .iter()
        .map(|k| k.entry)
        .chain(REDUCTION_ENTRIES)
        .map(str::to_string)
        .collect()
}

fn hopper() -> DeviceCaps {
    DeviceCaps {
        compute_capability: (9, 0),
        sm_count: 132,
        max_shared_per_block: 227 * 1024,
        entries: every_entry(),
    }
}

fn ampere() -> DeviceCaps {
    DeviceCaps {
        compute_capability: (8, 6),
        sm_count: 82,
        max_shared_per_block: 99 * 1024,
        entries: every_entry(),
    }
}

#[test]
fn defaults_are_contiguous_row_major() {
    let p = validate(&request(DType::F32, 3, 5, 7), buffers(21, 35, 15)).unwrap();
    assert_eq!((p.lda, p.ldb, p.ldc), (7, 5, 5));
    assert_eq!(p.strides, (0, 0, 0));
    let mut r = request(DType::F16, 3, 5, 7);
    r.b_layout = BLayout::Nk;
    r.batch = 2;
    let p = validate(&r, buffers(42, 70, 30)).unwrap();
    assert_eq!((p.lda, p.ldb, p.ldc), (7, 7, 5));
    assert_eq!(p.strides, (21, 35, 15));
}

#[test]
fn zero_and_huge_sizes_are_refused() {
    for (m, n, k) in [(0, 1, 1), (1, 0, 1), (1, 1, 0)] {
        let err = validate(&request(DType::F32, m, n, k), buffers(1, 1, 1)).unwrap_err();
        assert!(matches!(err, GemmError::ZeroDimension { .. }), "{err}");
    }
    let mut r = request(DType::F32, 1, 1, 1);
    r.batch = 0;
    assert!(matches!(
        validate(&r, buffers(1, 1, 1)),
        Err(GemmError::ZeroBatch)
    ));
    let err = validate(&request(DType::F32, 1 << 31, 1, 1), buffers(1, 1, 1)).unwrap_err();
    assert!(
        matches!(err, GemmError::DimensionTooLarge { name: "m", .. }),
        "{err}"
    );
}

#[test]
fn leading_dimensions_below_the_row_are_refused() {
    let mut r = request(DType::F32, 4, 8, 16);
    r.lds = (Some(15), None, None);
    let err = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap_err();
    assert!(
        matches!(
            err,
            GemmError::LeadingDimension {
                operand: "A",
                ld: 15,
                min: 16,
                ..
            }
        ),
        "{err}"
    );
    r.lds = (None, Some(7), None);
    let err = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::LeadingDimension { operand: "B", .. }
    ));
    // [n, k]: B's rows have k elements, so ldb = 8 (= n) is too small there.
    r.b_layout = BLayout::Nk;
    r.lds = (None, Some(8), None);
    let err = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::LeadingDimension {
            operand: "B",
            min: 16,
            ..
        }
    ));
    r.lds = (None, None, Some(7));
    let err = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::LeadingDimension { operand: "C", .. }
    ));
}

#[test]
fn short_buffers_are_refused_with_what_was_needed() {
    // A 4×16 with lda 20 needs 3·20 + 16 = 76 elements.
    let mut r = request(DType::F32, 4, 8, 16);
    r.lds = (Some(20), None, None);
    assert!(validate(&r, buffers(76, 128, 32)).is_ok());
    let err = validate(&r, buffers(75, 128, 32)).unwrap_err();
    assert!(
        matches!(
            err,
            GemmError::BufferTooShort {
                operand: "A",
                needed: 76,
                len: 75
            }
        ),
        "{err}"
    );
    let err = validate(&r, buffers(76, 127, 32)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::BufferTooShort { operand: "B", .. }
    ));
    let err = validate(&r, buffers(76, 128, 31)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::BufferTooShort { operand: "C", .. }
    ));
    let mut with_bias = buffers(76, 128, 32);
    with_bias.bias = Some((4 << 32, 7));
    let err = validate(&r, with_bias).unwrap_err();
    assert!(matches!(
        err,
        GemmError::BufferTooShort {
            operand: "bias",
            needed: 8,
            len: 7
        }
    ));
    // Batches: (batch - 1)·stride + one item.
    r.batch = 3;
    r.strides = Some((100, 0, 40));
    assert!(validate(&r, buffers(276, 128, 112)).is_ok());
    let err = validate(&r, buffers(276, 128, 111)).unwrap_err();
    assert!(matches!(
        err,
        GemmError::BufferTooShort {
            operand: "C",
            needed: 112,
            ..
        }
    ));
}

#[test]
fn overlapping_batch_items_of_c_are_refused() {
    let mut r = request(DType::F32, 4, 8, 16);
    r.batch = 2;
    r.strides = Some((64, 128, 31));
    let err = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap_err();
    assert!(
        matches!(
            err,
            GemmError::BatchStride {
                operand: "C",
                stride: 31,
                min: 32
            }
        ),
        "{err}"
    );
}

#[test]
fn c_overlapping_an_input_is_refused() {
    let r = request(DType::F32, 4, 4, 4);
    // C starts inside A's 64 bytes.
    let mut b = buffers(16, 16, 16);
    b.c = (b.a.0 + 60, 16);
    let err = validate(&r, b).unwrap_err();
    assert!(matches!(err, GemmError::Overlap { operand: "A" }), "{err}");
    // Touching is not overlapping.
    b.c = (b.a.0 + 64, 16);
    assert!(validate(&r, b).is_ok());
    let mut b = buffers(16, 16, 16);
    b.bias = Some((b.c.0 + 8, 4));
    let err = validate(&r, b).unwrap_err();
    assert!(
        matches!(err, GemmError::Overlap { operand: "bias" }),
        "{err}"
    );
}

#[test]
fn sizes_that_overflow_are_refused() {
    let mut r = request(DType::F32, 1 << 30, 4, 4);
    r.lds = (Some((1 << 31) - 1), None, None);
    r.batch = 1 << 30;
    let err = validate(&r, buffers(usize::MAX, usize::MAX, usize::MAX)).unwrap_err();
    assert!(
        matches!(err, GemmError::SizeOverflow { operand: "A" }),
        "{err}"
    );
}

fn problem(dtype: DType, layout: BLayout, m: usize, n: usize, k: usize) -> Problem {
    let mut r = request(dtype, m, n, k);
    r.b_layout = layout;
    validate(&r, buffers(m * k, n * k, m * n)).unwrap()
}

#[test]
fn every_call_gets_a_kernel_on_every_supported_device() {
    for caps in [hopper(), ampere()] {
        for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                for (m, n, k) in [(1, 1, 1), (3, 5, 7), (4096, 4096, 4096), (33, 8191, 1025)] {
                    let p = problem(dtype, layout, m, n, k);
                    let plan = choose(&caps, &p, None).unwrap();
                    assert_eq!(plan.kernel.dtype, dtype);
                    assert_eq!(plan.kernel.b_layout, layout);
                    assert!(plan.kernel.arch.supported_by(caps.compute_capability));
                    assert!(!plan.reason.is_empty());
                }
            }
        }
    }
}

#[test]
fn misaligned_rows_fall_back_to_a_kernel_without_alignment_needs() {
    let caps = hopper();
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        let mut r = request(dtype, 256, 256, 256);
        r.lds = (Some(257), None, None);
        let p = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap();
        let plan = choose(&caps, &p, None).unwrap();
        assert_eq!(
            plan.kernel.row_alignment, 0,
            "{dtype:?}: {}",
            plan.kernel.name
        );
        // An odd base address (a view at an odd element offset) does the same.
        let mut b = buffers(1 << 20, 1 << 20, 1 << 20);
        b.a.0 += dtype.bytes() as u64;
        let p = validate(&request(dtype, 256, 256, 256), b).unwrap();
        assert_eq!(choose(&caps, &p, None).unwrap().kernel.row_alignment, 0);
    }
}

#[test]
fn hopper_only_kernels_are_never_chosen_elsewhere() {
    for caps in [
        ampere(),
        DeviceCaps {
            compute_capability: (12, 0),
            ..ampere()
        },
    ] {
        for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                let plan = choose(&caps, &problem(dtype, layout, 4096, 4096, 4096), None).unwrap();
                assert!(
                    plan.kernel.arch.supported_by(caps.compute_capability),
                    "{} on {:?}",
                    plan.kernel.name,
                    caps.compute_capability
                );
            }
        }
    }
}

#[test]
fn kernels_missing_from_the_ptx_are_passed_over() {
    let mut caps = hopper();
    caps.entries
        .retain(|e| e.starts_with("gemm_general") && !e.starts_with("gemm_general_mma"));
    let plan = choose(
        &caps,
        &problem(DType::F16, BLayout::Kn, 4096, 4096, 4096),
        None,
    )
    .unwrap();
    assert_eq!(plan.kernel.name, "general");
    caps.entries.clear();
    let err = choose(&caps, &problem(DType::F16, BLayout::Kn, 64, 64, 64), None).unwrap_err();
    assert!(matches!(err, GemmError::NoKernel { .. }), "{err}");
}

#[test]
fn forcing_a_kernel_runs_it_or_says_why_not() {
    let caps = hopper();
    let p = problem(DType::F32, BLayout::Kn, 64, 64, 64);
    let plan = choose(&caps, &p, Some("general")).unwrap();
    assert_eq!(plan.kernel.name, "general");
    assert_eq!(plan.reason, "forced by the description");
    let err = choose(&caps, &p, Some("v99")).unwrap_err();
    assert!(matches!(err, GemmError::UnknownKernel { .. }), "{err}");
    // A fast kernel refuses misaligned rows instead of running elsewhere.
    if let Some(fast) = KERNELS
        .iter()
        .find(|k| k.dtype == DType::F32 && k.b_layout == BLayout::Kn && k.row_alignment > 0)
    {
        let mut r = request(DType::F32, 64, 64, 64);
        r.lds = (Some(65), None, None);
        let p = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap();
        let err = choose(&caps, &p, Some(fast.name)).unwrap_err();
        assert!(matches!(err, GemmError::KernelRefused { .. }), "{err}");
    }
}

#[test]
fn every_kernel_has_a_general_fallback_for_its_type_and_layout() {
    for spec in KERNELS {
        assert!(
            KERNELS.iter().any(|k| k.dtype == spec.dtype
                && k.b_layout == spec.b_layout
                && k.row_alignment == 0
                && k.name == "general"),
            "{} has no fallback",
            spec.entry
        );
    }
    assert!(!Gemm::kernels().is_empty());
}

#[test]
fn activations_reach_the_argument_block() {
    let mut r = request(DType::F32, 2, 2, 2);
    r.activation = Some(Activation::LeakyRelu(0.25));
    r.alpha = 2.0;
    r.beta = -1.0;
    let p = validate(&r, buffers(4, 4, 4)).unwrap();
    let args = rust_gemm::api::kernel_args(&p, 0);
    assert_eq!(args.activation, 2);
    assert_eq!(args.slope, 0.25);
    assert_eq!((args.alpha, args.beta), (2.0, -1.0));
    assert_eq!((args.lda, args.ldb, args.ldc), (2, 2, 2));
}

/// The thread-safety the API promises (docs/library.md): a `Gemm`, quantized weights, a plan,
/// a description and an error can be sent to and shared between threads; a CUDA graph can be
/// sent, not shared.
#[test]
fn public_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Gemm>();
    send_sync::<rust_gemm::QuantizedWeights>();
    send_sync::<rust_gemm::api::dispatch::Plan>();
    send_sync::<rust_gemm::MatmulDesc<'static, f32>>();
    send_sync::<rust_gemm::MatmulDesc<'static, half::bf16>>();
    send_sync::<rust_gemm::Epilogue<'static, half::f16>>();
    send_sync::<GemmError>();
    send_sync::<rust_gemm::runtime::Runtime>();
    // A graph may move to another thread, but not be shared: CUDA wants the calls on one graph
    // made one at a time.
    fn send<T: Send>() {}
    send::<rust_gemm::GemmGraph>();
    // `GemmGraph: !Sync`: were it Sync, both impls would apply and the call would be ambiguous.
    trait AmbiguousIfSync<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSync<()> for T {}
    impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}
    <rust_gemm::GemmGraph as AmbiguousIfSync<_>>::check();
}

/// The thin kernel a thin call must get: for fp16 and bf16 calls whose rows of A and B start
/// on 16-byte boundaries the tensor-core ones (`thin_m_mma` when m ≤ 8, `thin_m16_mma` when
/// m ≤ 16 and B is `[n, k]`, else `thin_n_mma` when n ≤ 8 and B is `[n, k]`), otherwise `thin_m`
/// when m ≤ 8 (it is listed first), then for f32 and TF32 `thin_m16` when m ≤ 16 and B is
/// `[n, k]` ([`wide_f32`]), else `thin_n`.
fn expected_thin(p: &Problem) -> Option<&'static str> {
    let tensor_cores = matches!(p.dtype, DType::F16 | DType::Bf16) && p.input_rows_aligned_to(16);
    if p.m <= 8 {
        Some(if tensor_cores { "thin_m_mma" } else { "thin_m" })
    } else if p.m <= 16 && tensor_cores && p.b_layout == BLayout::Nk {
        Some("thin_m16_mma")
    } else if p.m <= 16 && wide_f32(p) {
        Some("thin_m16")
    } else if p.n <= 8 {
        Some(if tensor_cores && p.b_layout == BLayout::Nk {
            "thin_n_mma"
        } else {
            "thin_n"
        })
    } else {
        None
    }
}

/// Whether dispatch takes the wide f32 thin kernel `thin_m16` for `p` when m ≤ 16: f32 or TF32,
/// B `[n, k]`, rows of A and B on 16-byte boundaries, and at least an eighth of the SMs' worth
/// of blocks of 32 rows of B (`dispatch::passed_over`; 16 blocks covers both test devices).
fn wide_f32(p: &Problem) -> bool {
    matches!(p.dtype, DType::F32 | DType::Tf32)
        && p.b_layout == BLayout::Nk
        && p.input_rows_aligned_to(16)
        && p.n.div_ceil(32) * p.batch >= 16
}

/// Whether dispatch passes the FMA `thin_m` over for `p` (`dispatch::passed_over`): fp16 or
/// bf16, m ≤ 8, B `[k, n]` on rows that `thin_m_mma` refuses, k ≤ `TINY_THIN_M_MAX_K` and
/// n ≤ `TINY_THIN_M_MAX_N`.
fn tiny_fp16_kn(p: &Problem) -> bool {
    matches!(p.dtype, DType::F16 | DType::Bf16)
        && p.m <= 8
        && p.b_layout == BLayout::Kn
        && !p.input_rows_aligned_to(16)
        && p.k <= rust_gemm::api::dispatch::TINY_THIN_M_MAX_K
        && p.n <= rust_gemm::api::dispatch::TINY_THIN_M_MAX_N
}

/// Whether dispatch passes the FMA `thin_n` over for `p` (`dispatch::passed_over`): m > 8,
/// n ≤ 8, k ≤ `SHORT_K`, not TF32, and no tensor-core or wide thin kernel takes it.
fn short_thin_n(p: &Problem) -> bool {
    // fp16/bf16 with aligned rows and B [n, k]: thin_m16_mma or thin_n_mma comes first.
    let tensor_cores = matches!(p.dtype, DType::F16 | DType::Bf16)
        && p.input_rows_aligned_to(16)
        && p.b_layout == BLayout::Nk;
    // f32 with B [n, k] and m ≤ 16: thin_m16 comes first where dispatch takes it.
    let wide_f32 = p.dtype == DType::F32 && p.m <= 16 && wide_f32(p);
    p.m > 8
        && p.n <= 8
        && p.k <= rust_gemm::api::dispatch::SHORT_K
        && p.dtype != DType::Tf32
        && !tensor_cores
        && !wide_f32
}

#[test]
fn thin_products_go_to_the_thin_kernels() {
    for caps in [hopper(), ampere()] {
        for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                for (m, n, k) in [
                    (1, 4096, 4096),
                    (1, 28672, 8192),
                    (8, 4096, 4096),
                    (3, 7, 1),
                    (4096, 1, 4096),
                    (3000, 5, 33),
                    (65537, 3, 256),
                    (3000, 5, 257),
                    (9, 8, 4097),
                    (1, 1, 1),
                    (9, 9, 64),
                    (16, 4096, 4096),
                    (12, 11008, 4096),
                    (16, 3, 4096),
                    (17, 4096, 4096),
                    (4096, 4096, 4096),
                ] {
                    let p = problem(dtype, layout, m, n, k);
                    let plan = choose(&caps, &p, None).unwrap();
                    if short_thin_n(&p) && p.m.div_ceil(256) * p.batch * 2 >= caps.sm_count {
                        // The short-rows kernel, where its blocks fill half the SMs.
                        assert_eq!(
                            plan.kernel.name, "thin_n_rows",
                            "{m}×{n}×{k}: {}",
                            plan.reason
                        );
                        continue;
                    }
                    if short_thin_n(&p) {
                        // Measured faster there: general (f32) or v15/v18 (fp16, bf16).
                        assert_eq!(plan.kernel.shape, ShapeClass::Any, "{m}×{n}×{k}");
                        if dtype == DType::F32 {
                            assert_eq!(plan.kernel.name, "general", "{m}×{n}×{k}");
                        }
                        assert!(
                            plan.reason.contains("thin_n: n ≤ 8 with k ≤ 256"),
                            "{}",
                            plan.reason
                        );
                        // Forced, thin_n still runs it.
                        let forced = choose(&caps, &p, Some("thin_n")).unwrap();
                        assert_eq!(forced.kernel.name, "thin_n");
                        continue;
                    }
                    if tiny_fp16_kn(&p) {
                        // Measured faster there: the general kernels.
                        assert_eq!(plan.kernel.shape, ShapeClass::Any, "{m}×{n}×{k}");
                        assert!(plan.reason.contains("thin_m: k ≤ 32"), "{}", plan.reason);
                        continue;
                    }
                    let expected = expected_thin(&p);
                    let first = KERNELS
                        .iter()
                        .find(|k| k.dtype == dtype && k.b_layout == layout)
                        .unwrap()
                        .name;
                    match expected {
                        Some(name) => {
                            assert_eq!(plan.kernel.name, name, "{dtype:?} {layout:?} {m}×{n}×{k}");
                            // f32 and TF32 both run the exact f32 entries.
                            let element = match dtype {
                                DType::Tf32 => "f32",
                                other => other.label(),
                            };
                            assert_eq!(
                                plan.kernel.entry,
                                format!("gemm_{name}_{element}_{}", layout.label()),
                            );
                            // The tensor-core column body's blocks widen along n.
                            let grid = if name == "thin_m_mma" && layout == BLayout::Kn {
                                GridKind::ThinWideColumns
                            } else {
                                GridKind::Thin
                            };
                            assert_eq!(plan.kernel.grid, grid);
                            if name == first {
                                let fastest = format!(
                                    "the fastest {} kernel for B {}",
                                    dtype.label(),
                                    layout.label()
                                );
                                // The f32 column-slices kernel splits k where its column
                                // blocks fill at most half the device (`thin_split`).
                                if plan.splits > 1 {
                                    assert!(
                                        plan.reason.starts_with(&format!("{fastest}; k split")),
                                        "{}",
                                        plan.reason
                                    );
                                } else {
                                    assert_eq!(plan.reason, fastest);
                                }
                            } else if m > 8 {
                                // thin_m_mma or thin_m passed over.
                                assert!(
                                    plan.reason
                                        .contains("_m: serves only thin products with m ≤ 8")
                                        || plan.reason.contains(
                                            "thin_m_mma: serves only thin products with m ≤ 8"
                                        ),
                                    "{}",
                                    plan.reason
                                );
                            } else {
                                // An fp16/bf16 call that the tensor-core kernel refuses.
                                assert!(
                                    plan.reason.contains(
                                        "thin_m_mma: needs every row of A and B to start on a \
                                         16-byte boundary"
                                    ),
                                    "{}",
                                    plan.reason
                                );
                            }
                        }
                        None => {
                            // A tiled kernel: for f32, v13's 32-row variant (m ≤ 32) or
                            // 64-row one (m ≤ 64, or B [k, n] with k > 64), else v13.
                            assert_eq!(plan.kernel.shape, ShapeClass::Any, "{m}×{n}×{k}");
                            if dtype == DType::F32 {
                                assert_eq!(
                                    plan.kernel.name,
                                    expected_v13(&caps, &p),
                                    "{m}×{n}×{k}"
                                );
                            }
                            // The reason names the thin kernels passed over.
                            assert!(
                                plan.reason
                                    .contains("thin_m: serves only thin products with m ≤ 8"),
                                "{}",
                                plan.reason
                            );
                            assert!(
                                plan.reason
                                    .contains("thin_n: serves only thin products with n ≤ 8"),
                                "{}",
                                plan.reason
                            );
                        }
                    }
                }
            }
        }
    }
}

/// fp16 and bf16 thin calls go to the tensor-core kernels exactly when A's and B's rows are
/// 16-byte aligned, whatever C's rows are; a single-row A needs no leading dimension.
#[test]
fn tensor_core_thin_kernels_need_aligned_rows_of_a_and_b_only() {
    let caps = ampere();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let chosen = |m: usize, n: usize, k: usize, lds, a_offset: u64| {
                let mut r = request(dtype, m, n, k);
                r.b_layout = layout;
                r.lds = lds;
                let mut b = buffers(1 << 26, 1 << 26, 1 << 26);
                b.a.0 += a_offset;
                let p = validate(&r, b).unwrap();
                choose(&caps, &p, None).unwrap().kernel.name
            };
            // C's leading dimension 4097 does not matter; nor A's with one row.
            assert_eq!(
                chosen(1, 4096, 4096, (Some(4099), None, Some(4097)), 0),
                "thin_m_mma"
            );
            assert_eq!(
                chosen(8, 4096, 4096, (None, None, Some(4101)), 0),
                "thin_m_mma"
            );
            // A's leading dimension with several rows, and A's address, do.
            assert_eq!(chosen(8, 4096, 4096, (Some(4100), None, None), 0), "thin_m");
            assert_eq!(chosen(8, 4096, 4096, (None, None, None), 8), "thin_m");
            // thin_n: only with B [n, k]; B [k, n] goes to the FMA kernel even with aligned rows.
            let ldb = match layout {
                BLayout::Kn => 8,
                BLayout::Nk => 4096,
            };
            let thin_n = chosen(4096, 5, 4096, (None, Some(ldb), None), 0);
            let expected = if layout == BLayout::Nk {
                "thin_n_mma"
            } else {
                "thin_n"
            };
            assert_eq!(thin_n, expected, "{dtype:?} {layout:?}");
        }
    }
}

#[test]
fn thin_kernels_need_no_alignment() {
    let caps = hopper();
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // A view at an odd element offset, and odd leading dimensions.
            let mut r = request(dtype, 3, 4097, 4095);
            r.b_layout = layout;
            r.lds = (Some(4097), Some(4099), Some(4101));
            let mut b = buffers(1 << 26, 1 << 26, 1 << 26);
            b.a.0 += dtype.bytes() as u64;
            b.b.0 += dtype.bytes() as u64;
            let p = validate(&r, b).unwrap();
            let plan = choose(&caps, &p, None).unwrap();
            assert_eq!(plan.kernel.name, "thin_m", "{dtype:?} {layout:?}");
            assert_eq!(plan.kernel.row_alignment, 0);
        }
    }
}

#[test]
fn thin_grids_cover_the_streamed_operand() {
    let caps = hopper();
    for layout in [BLayout::Kn, BLayout::Nk] {
        // B [k, n]: 128 bytes of each row of B per block.
        for (dtype, kn_columns) in [
            (DType::F32, 32),
            (DType::Tf32, 32),
            (DType::F16, 64),
            (DType::Bf16, 64),
        ] {
            // thin_m: blocks along n (x), batch along z.
            let mut r = request(dtype, 1, 4097, 4096);
            r.b_layout = layout;
            r.batch = 70_000;
            // One B for every item (stride 0) keeps the buffers apart.
            r.strides = Some((4096, 0, 4097));
            let p = validate(&r, buffers(1 << 40, 1 << 40, 1 << 40)).unwrap();
            let plan = choose(&caps, &p, None).unwrap();
            let per_block = if layout == BLayout::Kn {
                kn_columns
            } else {
                16
            };
            // fp16/bf16 with B [n, k] (rows of A and B aligned) run on tensor cores, 16
            // streamed rows per block as well; B [k, n] with ldb 4097 does not.
            let name = if matches!(dtype, DType::F16 | DType::Bf16) && layout == BLayout::Nk {
                "thin_m_mma"
            } else {
                "thin_m"
            };
            assert_eq!(plan.kernel.name, name, "{dtype:?} {layout:?}");
            assert_eq!(
                plan.grid,
                (4097u32.div_ceil(per_block), 1, 65_535),
                "{dtype:?} {layout:?}"
            );
            // thin_n: blocks along m (x), 16 rows of A each.
            let mut r = request(dtype, 3001, 5, 4096);
            r.b_layout = layout;
            let p = validate(&r, buffers(1 << 30, 1 << 30, 1 << 30)).unwrap();
            let plan = choose(&caps, &p, None).unwrap();
            let name = if matches!(dtype, DType::F16 | DType::Bf16) && layout == BLayout::Nk {
                "thin_n_mma"
            } else {
                "thin_n"
            };
            assert_eq!(plan.kernel.name, name, "{dtype:?} {layout:?}");
            assert_eq!(plan.grid, (3001u32.div_ceil(16), 1, 1));
        }
    }
    // The wide f32 kernel (9 ≤ m ≤ 16, B [n, k]): 32 rows of B per block.
    for dtype in [DType::F32, DType::Tf32] {
        let p = problem(dtype, BLayout::Nk, 16, 4097, 4096);
        let plan = choose(&caps, &p, None).unwrap();
        assert_eq!(plan.kernel.name, "thin_m16", "{dtype:?}");
        assert_eq!(plan.kernel.entry, "gemm_thin_m16_f32_nk");
        assert_eq!(plan.grid, (4097u32.div_ceil(32), 1, 1));
        // Passed over (still run when forced): too few blocks to fill the device, and rows
        // off 16-byte boundaries (k = 4097).
        for (m, n, k, why) in [
            (
                16,
                64,
                65536,
                "thin_m16: 2 blocks of 32 rows of B cannot fill",
            ),
            (
                13,
                4097,
                4097,
                "thin_m16: a row of A or B does not start on a 16-byte",
            ),
        ] {
            let p = problem(dtype, BLayout::Nk, m, n, k);
            let plan = choose(&caps, &p, None).unwrap();
            assert_ne!(plan.kernel.name, "thin_m16", "{m}×{n}×{k}");
            assert!(plan.reason.contains(why), "{}", plan.reason);
            let forced = choose(&caps, &p, Some("thin_m16")).unwrap();
            assert_eq!(forced.kernel.name, "thin_m16");
        }
    }
    // Rows of A past grid y's limit (65 535 · 16) still fit along x.
    let p = problem(DType::F16, BLayout::Nk, 2_000_000, 1, 64);
    let plan = choose(&caps, &p, None).unwrap();
    assert_eq!(plan.grid, (125_000, 1, 1));
}

#[test]
fn forcing_a_thin_kernel_runs_it_or_says_why_not() {
    let caps = hopper();
    for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // Both thin kernels serve a call that is thin both ways; dispatch takes thin_m.
            let p = problem(dtype, layout, 5, 3, 100);
            assert_eq!(choose(&caps, &p, None).unwrap().kernel.name, "thin_m");
            let plan = choose(&caps, &p, Some("thin_n")).unwrap();
            assert_eq!(plan.kernel.name, "thin_n");
            assert_eq!(plan.reason, "forced by the description");
            let p = problem(dtype, layout, 9, 3, 100);
            let err = choose(&caps, &p, Some("thin_m")).unwrap_err();
            match err {
                GemmError::KernelRefused { kernel, reason } => {
                    assert_eq!(kernel, "thin_m");
                    assert_eq!(reason, "serves only thin products with m ≤ 8 (m is 9)");
                }
                other => panic!("{other}"),
            }
            let p = problem(dtype, layout, 3, 9, 100);
            assert!(choose(&caps, &p, Some("thin_m")).is_ok());
            let err = choose(&caps, &p, Some("thin_n")).unwrap_err();
            assert!(
                matches!(
                    err,
                    GemmError::KernelRefused {
                        kernel: "thin_n",
                        ..
                    }
                ),
                "{err}"
            );
        }
    }
}

#[test]
fn thin_kernels_come_first_in_every_list() {
    for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let names: Vec<_> = KERNELS
                .iter()
                .filter(|k| k.dtype == dtype && k.b_layout == layout)
                .map(|k| k.name)
                .collect();
            // fp16 and bf16: the tensor-core thin kernels first (thin_n_mma only for B [n, k]),
            // then the FMA ones, which take the calls whose rows are not aligned.
            let thin: &[&str] = match (dtype, layout) {
                (DType::F16 | DType::Bf16, BLayout::Nk) => &[
                    "thin_m_mma",
                    "thin_m16_mma",
                    "thin_n_mma",
                    "thin_m",
                    "thin_n_rows",
                    "thin_n",
                ],
                (DType::F16 | DType::Bf16, BLayout::Kn) => {
                    &["thin_m_mma", "thin_m", "thin_n_rows", "thin_n"]
                }
                (DType::Tf32, BLayout::Nk) => &["thin_m", "thin_m16", "thin_n"],
                (DType::Tf32, BLayout::Kn) => &["thin_m", "thin_n"],
                (_, BLayout::Nk) => &["thin_m", "thin_m16", "thin_n_rows", "thin_n"],
                _ => &["thin_m", "thin_n_rows", "thin_n"],
            };
            assert_eq!(
                &names[..thin.len()],
                thin,
                "{dtype:?} {layout:?}: {names:?}"
            );
            assert!(names[thin.len()..].iter().all(|n| !n.starts_with("thin")));
        }
    }
    // The thin entries' shared memory and threads come from gemm-geometry.
    for spec in KERNELS
        .iter()
        .filter(|k| matches!(k.grid, GridKind::Thin | GridKind::ThinWideColumns))
    {
        let threads = if spec.name.ends_with("_mma") {
            gemm_geometry::thin::MMA_THREADS
        } else {
            gemm_geometry::thin::THREADS
        };
        assert_eq!(spec.threads, threads, "{}", spec.entry);
        assert!(spec.shared_bytes <= 48 * 1024, "{}", spec.entry);
    }
}

/// The f32 tiled kernel dispatch picks for `p` (no thin kernel applies): the general kernel for
/// small products, v13's 32-row variant for m ≤ 32, its 64-row one for m ≤ 64 and for every B
/// `[k, n]` (with B `[n, k]` on 16-byte rows, their K-major entries, the 64-row one also
/// above m = 64 with k > 64 unless v13's waves are fuller by more than
/// `K_MAJOR_TILE_SPEEDUP`), v13_m64 on a `[k, n]` copy of B `[n, k]` for m ≥ 1024 with
/// k > 64, else v13 (`dispatch::passed_over`).
fn expected_v13(caps: &DeviceCaps, p: &Problem) -> &'static str {
    use rust_gemm::api::dispatch::{V13_M64_SHORT_K, V13_VIA_KN_MIN_M};
    let k_major = p.b_layout == BLayout::Nk && p.b_rows_aligned_to(16);
    if rust_gemm::api::dispatch::small_f32_product(p) || unaligned_nk_general(p) {
        "general"
    } else if p.b_layout == BLayout::Nk && p.m >= V13_VIA_KN_MIN_M && p.k > V13_M64_SHORT_K {
        "v13_m64_via_kn"
    } else if p.m <= 32 && k_major {
        "v13_m32_kmajor"
    } else if p.m <= 32 {
        "v13_m32"
    } else if k_major && (p.m <= 64 || (p.k > V13_M64_SHORT_K && !k_major_waves_lose(caps, p))) {
        "v13_m64_kmajor"
    } else if p.m <= 64 || p.b_layout == BLayout::Kn {
        "v13_m64"
    } else {
        "v13"
    }
}

/// The thin kernels with B `[k, n]`, `thin_m` (f32, TF32) and `thin_m_mma` (fp16, bf16), split
/// k where their column blocks fill at most half of their block slots, in slices of at least
/// `THIN_MIN_SLICE_K` rows; `thin_m` in fp16 (rows off 16-byte boundaries) splits only when
/// asked.
#[test]
fn thin_kn_kernels_split_k_where_their_blocks_leave_the_device_half_idle() {
    use rust_gemm::api::dispatch::THIN_MIN_SLICE_K;
    let caps = hopper();
    for (dtype, (m, n, k), splits) in [
        (DType::F32, (1, 4096, 4096), 2),  // 128 blocks for 264 slots
        (DType::F32, (8, 4096, 14336), 2), // the same blocks, longer k
        (DType::Tf32, (1, 4096, 4096), 2), // the same exact f32 entry
        (DType::F32, (1, 2048, 4096), 4),  // 64 blocks
        (DType::F32, (1, 1024, 2048), 2),  // 32 blocks, but only two slices of 1024
        (DType::F32, (1, 4096, 1024), 1),  // k too short for two slices
        (DType::F32, (1, 8192, 8192), 1),  // 256 blocks: more than half
        // thin_m_mma: blocks of one warp's 32 columns up to n = 4096, then wider ones
        // (kn_column_warps) that keep at least 128 blocks.
        (DType::F16, (1, 4096, 4096), 1), // 128 blocks of one column warp: measured slower split
        (DType::Bf16, (8, 4096, 14336), 1), // the same blocks
        (DType::Bf16, (8, 8192, 28672), 4), // 128 blocks of two, k long enough for 4 × 4096
        (DType::F16, (1, 8192, 57344), 4), // the same blocks
        (DType::F16, (1, 8192, 16384), 4), // exactly 4 × THIN_LONG_SLICE_K
        (DType::F16, (1, 8192, 16383), 2), // one row short of it
        (DType::F16, (1, 8192, 8192), 2), // the same blocks, k too short for four
        (DType::F16, (1, 2048, 4096), 4), // 64 blocks of one
        (DType::Bf16, (4, 1024, 16384), 8), // 32 blocks of one
        (DType::F16, (1, 4096, 1024), 1), // k too short for two slices
        (DType::F16, (1, 11008, 4096), 1), // 172 blocks of two: more than half
        (DType::Bf16, (1, 28672, 8192), 1), // 224 blocks of four
    ] {
        let p = problem(dtype, BLayout::Kn, m, n, k);
        let plan = choose(&caps, &p, None).unwrap();
        let kernel = if dtype.bytes() == 2 {
            "thin_m_mma"
        } else {
            "thin_m"
        };
        assert_eq!(plan.kernel.name, kernel, "{m}×{n}×{k}");
        assert_eq!(plan.splits, splits, "{m}×{n}×{k}: {}", plan.reason);
        assert!(plan.splits == 1 || plan.k_chunk >= THIN_MIN_SLICE_K);
        assert_eq!(plan.grid.2, splits, "{m}×{n}×{k}");
        if splits > 1 {
            assert!(
                plan.reason.contains("column blocks would fill"),
                "{}",
                plan.reason
            );
        }
    }
    // fp16 on rows off 16-byte boundaries runs the same body: it splits when asked only.
    let mut r = request(DType::F16, 1, 4095, 4096);
    r.lds = (None, Some(4095), None);
    let p = validate(&r, buffers(4096, 4096 * 4095, 4095)).unwrap();
    let plan = choose(&caps, &p, None).unwrap();
    assert_eq!(
        (plan.kernel.name, plan.splits),
        ("thin_m", 1),
        "{}",
        plan.reason
    );
    let forced = choose_split(&caps, &p, Some("thin_m"), Some(3)).unwrap();
    assert_eq!((forced.splits, forced.grid.2), (3, 3));
}

/// fp16/bf16 with B `[k, n]` on rows off 16-byte boundaries (n odd here, so `thin_m_mma`
/// refuses): tiny products (k ≤ `TINY_THIN_M_MAX_K`, n ≤ `TINY_THIN_M_MAX_N`) pass the FMA
/// `thin_m` over for the general kernels (`general_mma` comes first), both measured faster
/// there on the H200; B `[n, k]`, longer k and wider n keep `thin_m`.
#[test]
fn tiny_fp16_kn_products_pass_the_fma_thin_kernel_over() {
    use rust_gemm::api::dispatch::{TINY_THIN_M_MAX_K, TINY_THIN_M_MAX_N};
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for ((m, n, k), layout, tiny) in [
            ((3, 5, 7), BLayout::Kn, true),
            ((7, 101, 9), BLayout::Kn, true),
            ((8, 9, 8), BLayout::Kn, true),
            ((2, 33, 17), BLayout::Kn, true),
            ((3, 5, TINY_THIN_M_MAX_K), BLayout::Kn, true),
            ((3, 5, TINY_THIN_M_MAX_K + 1), BLayout::Kn, false),
            ((3, TINY_THIN_M_MAX_N + 1, 7), BLayout::Kn, false),
            ((3, 5, 7), BLayout::Nk, false),
        ] {
            let p = problem(dtype, layout, m, n, k);
            let plan = choose(&caps, &p, None).unwrap();
            let expected = if tiny { "general_mma" } else { "thin_m" };
            assert_eq!(
                plan.kernel.name, expected,
                "{dtype:?} {m}×{n}×{k} {layout:?}: {}",
                plan.reason
            );
            if tiny {
                assert!(plan.reason.contains("thin_m"), "{}", plan.reason);
            }
        }
    }
}

/// Whether `p` has B `[n, k]` on rows off 16-byte boundaries, at most
/// `UNALIGNED_NK_GENERAL_MAX_M` rows and at least `UNALIGNED_NK_GENERAL_MIN_N` columns, where
/// the general kernel beat every v13 variant.
fn unaligned_nk_general(p: &Problem) -> bool {
    p.b_layout == BLayout::Nk
        && !p.b_rows_aligned_to(16)
        && p.m <= rust_gemm::api::dispatch::UNALIGNED_NK_GENERAL_MAX_M
        && p.n >= rust_gemm::api::dispatch::UNALIGNED_NK_GENERAL_MIN_N
}

/// Exact f32 with B `[n, k]` whose rows are not 16-byte aligned (k odd here), the K-major
/// entries refused: the general kernel up to 128 rows from 4096 columns, as measured on the
/// H200 (`docs/results/ragged-probe`, run 6), v13 above; B `[k, n]`, aligned rows and narrower
/// products keep their kernels.
#[test]
fn unaligned_nk_f32_with_few_rows_takes_the_general_kernel() {
    for ((m, n, k), layout, expected) in [
        ((33, 8191, 1025), BLayout::Nk, "general"), // 55 µs against v13_m64's 68–69
        ((64, 8191, 1025), BLayout::Nk, "general"), // 59 against 79–83
        ((100, 8191, 1025), BLayout::Nk, "general"), // 86 against v13's 106
        ((128, 4096, 1023), BLayout::Nk, "general"), // 57 against 63–68
        ((200, 8191, 1025), BLayout::Nk, "v13"),    // 149 against 163
        ((256, 2048, 2049), BLayout::Nk, "v13"),    // 89–91 against 100
        ((33, 8191, 1025), BLayout::Kn, "v13_m64"),
        ((33, 8192, 1024), BLayout::Nk, "v13_m64_kmajor"),
        ((17, 17, 65537), BLayout::Nk, "v13_m32"), // narrower than measured
    ] {
        let p = problem(DType::F32, layout, m, n, k);
        let plan = choose(&hopper(), &p, None).unwrap();
        assert_eq!(plan.kernel.name, expected, "{m}×{n}×{k}: {}", plan.reason);
        if expected == "general" {
            assert!(
                plan.reason.contains("on rows not 16-byte aligned"),
                "{}",
                plan.reason
            );
        }
    }
}

/// Above m = 64, B `[n, k]` on 16-byte rows: `v13_m64_kmajor` where it was measured faster than
/// v13 on the H100 (`docs/results/f32-k-major`, runs 2 and 3), v13 where its waves were so much
/// fuller that it was faster (`dispatch::k_major_wave_loses`).
#[test]
fn k_major_above_m64_follows_the_measured_waves() {
    for ((m, n, k), expected) in [
        ((256, 11008, 4096), "v13_m64_kmajor"), // 652 µs against v13's 856
        ((256, 28672, 8192), "v13_m64_kmajor"), // 2970 against 3385
        ((1000, 1000, 1000), "v13_m64_kmajor"), // 86 against 101
        ((256, 4096, 4096), "v13_m64_kmajor"),  // 245 against 241: even
        ((256, 14336, 4096), "v13"),            // 1099 against 859
        ((256, 8192, 8192), "v13"),             // 981 against 847
        ((256, 8192, 28672), "v13"),            // 0.71 of cuBLAS (v13: 0.80 in earlier suites)
    ] {
        let p = problem(DType::F32, BLayout::Nk, m, n, k);
        let plan = choose(&hopper(), &p, None).unwrap();
        assert_eq!(plan.kernel.name, expected, "{m}×{n}×{k}: {}", plan.reason);
        if expected == "v13" {
            assert!(
                plan.reason
                    .contains("v13_m64_kmajor: m > 64: its waves fill"),
                "{}",
                plan.reason
            );
        }
    }
}

/// Whether v13's waves fill more than `K_MAJOR_TILE_SPEEDUP` times the share of block slots
/// that `v13_m64_kmajor`'s do (each split as dispatch would split it).
fn k_major_waves_lose(caps: &DeviceCaps, p: &Problem) -> bool {
    use rust_gemm::api::dispatch::{K_MAJOR_TILE_SPEEDUP, wave_fill};
    let spec = |name| {
        KERNELS
            .iter()
            .find(|k| k.name == name && k.dtype == DType::F32 && k.b_layout == BLayout::Nk)
            .unwrap()
    };
    wave_fill(spec("v13"), caps, p)
        > K_MAJOR_TILE_SPEEDUP * wave_fill(spec("v13_m64_kmajor"), caps, p)
}

#[test]
fn f32_products_take_v13_m32_v13_m64_or_v13() {
    use gemm_geometry::v13::{M32_BLOCK_TILE_M, M32_THREADS, M64_BLOCK_TILE_M, M64_THREADS};
    for caps in [hopper(), ampere()] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // The variants come right before v13 in the f32 lists, narrowest first, after the
            // thin kernels; every one serves every shape.
            let names: Vec<_> = KERNELS
                .iter()
                .filter(|k| k.dtype == DType::F32 && k.b_layout == layout)
                .map(|k| k.name)
                .collect();
            // With B [n, k], v13_m64 on a [k, n] copy of B comes first (m ≥ 1024 only), then
            // the K-major entries (B's rows on 16-byte boundaries).
            let tiled: &[&str] = match layout {
                BLayout::Kn => &["v13_m32", "v13_m64", "v13", "general"],
                BLayout::Nk => &[
                    "v13_m64_via_kn",
                    "v13_m32_kmajor",
                    "v13_m64_kmajor",
                    "v13_m32",
                    "v13_m64",
                    "v13",
                    "general",
                ],
            };
            let thin = names.iter().take_while(|n| n.starts_with("thin")).count();
            assert_eq!(names[thin..], *tiled, "{names:?}");
            // (No small products: those take the general kernel, tested below.)
            for (m, n, k) in [
                (9, 4096, 4096),
                (16, 28672, 8192),
                (32, 11008, 4096),
                (33, 8191, 300),
                (64, 4096, 14336),
                (65, 4096, 4096),
                // B [n, k] rows off 16-byte boundaries (k % 4 ≠ 0): the transposing entries.
                (32, 4096, 4095),
                (40, 4096, 4097),
                (4096, 4096, 4096),
                (1000, 1000, 1000),
                (4095, 2049, 64),
                (2047, 2049, 65),
            ] {
                let p = problem(DType::F32, layout, m, n, k);
                let plan = choose(&caps, &p, None).unwrap();
                // B [n, k] with m ≤ 16 goes to the wide thin kernel first.
                if layout == BLayout::Nk && m <= 16 {
                    assert_eq!(plan.kernel.name, "thin_m16", "{m}×{n}×{k}");
                    continue;
                }
                let name = expected_v13(&caps, &p);
                assert_eq!(plan.kernel.name, name, "{m}×{n}×{k}: {}", plan.reason);
                if name == "general" {
                    // Unaligned B [n, k] with few rows: tested above.
                    continue;
                }
                let (rows, threads) = match name {
                    "v13_m32" | "v13_m32_kmajor" => (M32_BLOCK_TILE_M, M32_THREADS),
                    "v13_m64" | "v13_m64_via_kn" | "v13_m64_kmajor" => {
                        (M64_BLOCK_TILE_M, M64_THREADS)
                    }
                    _ => (
                        gemm_geometry::v13::BLOCK_TILE_M,
                        gemm_geometry::v13::THREADS,
                    ),
                };
                assert_eq!(plan.kernel.block_tile_m, rows);
                assert_eq!(plan.kernel.threads, threads);
                // One tile of rows per 128 columns; the slices of k along z.
                assert_eq!(
                    plan.grid,
                    (
                        (m.div_ceil(rows as usize) * n.div_ceil(128)) as u32,
                        1,
                        plan.splits
                    ),
                    "{m}×{n}×{k}"
                );
                // The reason says why each faster variant was passed over (v13_m64_via_kn comes
                // before the variants: with it, none was passed over).
                if m > 32 && name != "v13_m64_via_kn" {
                    assert!(
                        plan.reason
                            .contains("m32: m > 32: v13_m64 or v13 was measured faster")
                            || plan
                                .reason
                                .contains("m32_kmajor: m > 32: v13_m64 or v13 was measured faster"),
                        "{}",
                        plan.reason
                    );
                }
                if name == "v13" {
                    // Only with B [n, k]: with B [k, n], v13_m64 serves every shape.
                    assert_eq!(layout, BLayout::Nk, "{m}×{n}×{k}");
                    let why = "v13_m64: m > 64 with B [n, k]: v13 was measured faster";
                    assert!(plan.reason.contains(why), "{}", plan.reason);
                }
                // Forced, each variant runs any shape.
                for forced in ["v13_m32", "v13_m64", "v13"] {
                    assert_eq!(choose(&caps, &p, Some(forced)).unwrap().kernel.name, forced);
                }
            }
            // A long k with few column tiles is split, like v13's.
            let plan = choose(&caps, &problem(DType::F32, layout, 64, 4096, 14336), None).unwrap();
            assert!(plan.splits > 1, "{}", plan.reason);
        }
    }
    // TF32 calls never take them (v19/v14 first; exact f32 only through the general kernel).
    for layout in [BLayout::Kn, BLayout::Nk] {
        let plan = choose(
            &hopper(),
            &problem(DType::Tf32, layout, 64, 4096, 4096),
            None,
        )
        .unwrap();
        assert!(!plan.kernel.name.starts_with("v13"));
    }
}

#[test]
fn small_f32_products_take_the_general_kernel() {
    use rust_gemm::api::dispatch::small_f32_product;
    for caps in [hopper(), ampere()] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // At most 2^26 multiply-adds with k ≤ 1024, or k ≤ 64 with at most 2^22 outputs.
            for (m, n, k) in [
                (384, 384, 384),
                (4097, 31, 513),
                (256, 256, 1024),
                (33, 17, 9),
                (128, 128, 128),
                (127, 129, 131),
                (256, 256, 256),
                (17, 9, 256),
                (2047, 2049, 33),
                (2048, 2048, 64),
                (1024, 4096, 1),
            ] {
                let p = problem(DType::F32, layout, m, n, k);
                assert!(small_f32_product(&p), "{m}×{n}×{k}");
                let plan = choose(&caps, &p, None).unwrap();
                assert_eq!(plan.kernel.name, "general", "{m}×{n}×{k}: {}", plan.reason);
                assert!(
                    plan.reason.contains("v13: a small product"),
                    "{}",
                    plan.reason
                );
                // Forced, v13 still runs it.
                assert_eq!(choose(&caps, &p, Some("v13")).unwrap().kernel.name, "v13");
            }
            // Just past either bound, and TF32 calls, keep their kernels.
            for (m, n, k) in [
                (256, 256, 1025),
                (512, 512, 257),
                (2048, 2049, 64),
                (2048, 2048, 65),
                (8192, 8192, 64),
                (17, 17, 65537),
            ] {
                let p = problem(DType::F32, layout, m, n, k);
                assert!(!small_f32_product(&p), "{m}×{n}×{k}");
                let plan = choose(&caps, &p, None).unwrap();
                assert!(
                    plan.kernel.name.starts_with("v13"),
                    "{m}×{n}×{k}: {}",
                    plan.reason
                );
            }
            let plan = choose(&caps, &problem(DType::Tf32, layout, 256, 256, 256), None).unwrap();
            assert!(!plan.reason.contains("a small product"), "{}", plan.reason);
        }
    }
    // A batch of small products is one large product.
    let mut r = request(DType::F32, 256, 256, 256);
    r.batch = 8;
    let p = validate(&r, buffers(8 * 256 * 256, 8 * 256 * 256, 8 * 256 * 256)).unwrap();
    assert!(!small_f32_product(&p));
    assert!(
        choose(&hopper(), &p, None)
            .unwrap()
            .kernel
            .name
            .starts_with("v13")
    );
}

#[test]
fn few_tiles_with_long_k_are_split() {
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // 16 tiles of 128×256 on 132 SMs: 8 slices of 512 bring them to 128 blocks (v18
            // forced: at m = 16 with aligned rows dispatch takes thin_m16_mma).
            let plan = choose(&caps, &problem(dtype, layout, 16, 4096, 4096), Some("v18")).unwrap();
            assert_eq!(plan.kernel.name, "v18");
            assert_eq!((plan.splits, plan.k_chunk), (8, 512), "{}", plan.reason);
            assert_eq!(plan.grid, (128, 1, 1));
            assert!(plan.reduction().is_some());
            assert!(plan.reason.contains("8 slices"), "{}", plan.reason);
            // 17×16×65536: one tile, so as many slices as bring it to a wave, each at least
            // MIN_SLICE_K long, at most MAX_SPLITS.
            let plan = choose(&caps, &problem(dtype, layout, 17, 16, 65536), None).unwrap();
            let wave = caps.sm_count as u32 * plan.kernel.blocks_per_sm;
            let wanted = wave
                .min(65536 / rust_gemm::api::dispatch::MIN_SLICE_K)
                .min(gemm_geometry::split_k::MAX_SPLITS);
            let expected = gemm_geometry::split_k::slices(65536, wanted);
            assert_eq!((plan.splits, plan.k_chunk), expected, "{}", plan.reason);
            assert!(plan.splits > 64, "{}", plan.reason);
            // A full wave of tiles, or a short k, is never split.
            for (m, n, k) in [(4096, 4096, 4096), (17, 4096, 255), (1024, 8192, 8192)] {
                let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                assert_eq!(plan.splits, 1, "{m}×{n}×{k}: {}", plan.reason);
                assert_eq!(plan.reduction(), None);
            }
        }
    }
}

#[test]
fn a_forced_split_is_made_refused_or_passed_over() {
    let caps = hopper();
    let p = problem(DType::F16, BLayout::Kn, 256, 256, 1000);
    // Forced: 3 slices of 384, 384, 232 (v18's 64 × 64-tile sibling: 2 tiles of v18's, 16 of
    // its own).
    let plan = choose_split(&caps, &p, None, Some(3)).unwrap();
    assert_eq!(
        (plan.kernel.name, plan.splits, plan.k_chunk),
        ("v18_m64", 3, 384)
    );
    // 1: never split, even where dispatch would.
    let small = problem(DType::F16, BLayout::Kn, 16, 4096, 4096);
    assert_eq!(
        choose_split(&caps, &small, None, Some(1)).unwrap().splits,
        1
    );
    // A kernel that cannot split k, forced with a split, is refused with the reason
    // (thin_m_mma's dot-rows body, B [n, k]; its column body, B [k, n], splits).
    let thin = problem(DType::F16, BLayout::Nk, 4, 4096, 4096);
    let err = choose_split(&caps, &thin, Some("thin_m_mma"), Some(4)).unwrap_err();
    assert!(
        matches!(&err, GemmError::KernelRefused { kernel: "thin_m_mma", reason } if reason.contains("split")),
        "{err}"
    );
    // general_mma splits where v18 refuses the product and v15 would load it element by
    // element (k not a multiple of 8): 17×17×65537 is one tile.
    let ragged = problem(DType::F16, BLayout::Kn, 17, 17, 65537);
    let plan = choose(&caps, &ragged, None).unwrap();
    assert_eq!(plan.kernel.name, "general_mma", "{}", plan.reason);
    assert!(plan.splits > 1, "{}", plan.reason);
    // Without the TMA kernel (misaligned rows), a forced split passes over every kernel
    // that cannot make it and says so.
    let mut r = request(DType::F16, 256, 256, 1000);
    r.lds = (Some(1001), None, None);
    let misaligned = validate(&r, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap();
    let plan = choose_split(&caps, &misaligned, None, Some(4));
    match plan {
        Ok(plan) => assert!(plan.kernel.split_k && plan.kernel.row_alignment == 0),
        Err(GemmError::NoKernel { reason }) => assert!(reason.contains("split"), "{reason}"),
        Err(e) => panic!("{e}"),
    }
    // More slices than the workspace allows are refused.
    let wide = problem(DType::F16, BLayout::Kn, 4096, 4096, 8192);
    let slices = (MAX_WORKSPACE_BYTES / (4 * 4096 * 4096)) as u32 + 1;
    let err = choose_split(&caps, &wide, Some("v18"), Some(slices)).unwrap_err();
    assert!(matches!(err, GemmError::KernelRefused { .. }), "{err}");
}

#[test]
fn split_plans_respect_their_limits_on_every_shape() {
    let caps = hopper();
    for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            for m in [1, 9, 16, 100, 256, 1000] {
                for n in [9, 100, 1000, 4096] {
                    for k in [1, 64, 65, 300, 4096, 65537] {
                        let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                        if plan.splits == 1 {
                            assert_eq!(plan.k_chunk, 0);
                            continue;
                        }
                        assert!(plan.kernel.split_k);
                        assert_eq!(plan.k_chunk % gemm_geometry::split_k::K_GRANULE, 0);
                        // Every slice is non-empty and together they cover k.
                        let k = k as u32;
                        assert!((plan.splits - 1) * plan.k_chunk < k);
                        assert!(plan.splits * plan.k_chunk >= k);
                        assert!(plan.k_chunk >= rust_gemm::api::dispatch::MIN_SLICE_K);
                        let bytes = 4 * plan.splits as u64 * (m * n) as u64;
                        assert!(bytes <= MAX_WORKSPACE_BYTES);
                        assert!(
                            plan.grid.0 as usize
                                <= caps.sm_count * plan.kernel.blocks_per_sm as usize
                                || plan.kernel.grid != GridKind::Persistent
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn one_k_tile_goes_to_v18_which_stores_quads() {
    // Measured on the H200 (docs/results/ragged-probe, run 1): 8192×8192×64, v18 58.8 µs (fp16)
    // and 58.6 µs (bf16), v15 70.4 and 70.5 µs. (On the H100 before v18's quad stores, v15 won.)
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let short = problem(dtype, layout, 8192, 8192, 64);
            let plan = choose(&caps, &short, None).unwrap();
            assert_eq!(plan.kernel.name, "v18", "{}", plan.reason);
            let forced = choose(&caps, &short, Some("v15")).unwrap();
            assert_eq!(forced.kernel.name, "v15");
        }
    }
}

#[test]
fn the_split_model_agrees_with_the_measured_suite() {
    // fp16 on the H100, the shape suite run with and without split-K
    // (docs/results/h100-split-k): products the split made faster, and ones it made slower.
    // All ran v18, forced here: at m = 16 dispatch now takes thin_m16_mma.
    let caps = hopper();
    let faster = [
        (16, 4096, 4096),
        (64, 4096, 4096),
        (256, 4096, 4096),
        (16, 4096, 11008),
        (256, 4096, 14336),
        (16, 8192, 8192),
        (256, 8192, 28672),
    ];
    let slower = [
        (768, 768, 768),
        (1024, 1024, 1024),
        (1408, 1408, 1408),
        (1000, 1000, 1000),
        (64, 11008, 4096),
        (64, 14336, 4096),
        (16, 14336, 4096),
    ];
    for layout in [BLayout::Kn, BLayout::Nk] {
        let v18 = |m, n, k| choose(&caps, &problem(DType::F16, layout, m, n, k), Some("v18"));
        for (m, n, k) in faster {
            let plan = v18(m, n, k).unwrap();
            assert!(plan.splits > 1, "{m}×{n}×{k}: {}", plan.reason);
        }
        for (m, n, k) in slower {
            let plan = v18(m, n, k).unwrap();
            assert_eq!(plan.splits, 1, "{m}×{n}×{k}: {}", plan.reason);
        }
    }
}

#[test]
fn misaligned_half_products_take_general_mma_and_aligned_ones_keep_v15() {
    use rust_gemm::api::dispatch::v15_loads_elements;
    // Hopper's 227 KiB of shared memory per block hold v15's 192 KiB; no Ampere or Ada GPU's
    // do (163 KiB at most), so there every fp16/bf16 tiled product goes to general_mma.
    for caps in [hopper(), ampere()] {
        let hopper = caps.compute_capability == (9, 0);
        for dtype in [DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                // k odd, n odd (B [k, n] only), and a leading dimension off by one: v15 would
                // take its 2-byte-load path, so general_mma runs.
                let mut odd_lda = request(dtype, 300, 264, 264);
                odd_lda.b_layout = layout;
                odd_lda.lds = (Some(265), None, None);
                let odd_lda = validate(&odd_lda, buffers(1 << 20, 1 << 20, 1 << 20)).unwrap();
                for p in [
                    problem(dtype, layout, 127, 129, 131),
                    problem(dtype, layout, 4095, 4095, 4095),
                    problem(dtype, layout, 300, 264, 264 + 3),
                    odd_lda,
                ] {
                    assert!(v15_loads_elements(&p), "{:?}", (p.m, p.n, p.k));
                    let plan = choose(&caps, &p, None).unwrap();
                    assert_eq!(plan.kernel.name, "general_mma", "{}", plan.reason);
                    if hopper {
                        assert!(
                            plan.reason.contains("v15: A's or B's rows"),
                            "{}",
                            plan.reason
                        );
                    }
                    // Forced, v15 still runs it (where it fits).
                    if hopper {
                        assert_eq!(choose(&caps, &p, Some("v15")).unwrap().kernel.name, "v15");
                    }
                }
                // n odd matters only for B [k, n] (v15 copies [n, k] B along k).
                let n_odd = problem(dtype, layout, 300, 263, 264);
                assert_eq!(v15_loads_elements(&n_odd), layout == BLayout::Kn);
                // Aligned rows: a TMA kernel (v18 or its 64- and 128-row tiles) where it runs,
                // even at k ≤ 64 (one k-tile), else general_mma.
                for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 64), (128, 128, 64)] {
                    let p = problem(dtype, layout, m, n, k);
                    assert!(!v15_loads_elements(&p));
                    let plan = choose(&caps, &p, None).unwrap();
                    if hopper {
                        assert!(
                            plan.kernel.name.starts_with("v18"),
                            "{m}×{n}×{k}: {}",
                            plan.reason
                        );
                    } else {
                        assert_eq!(
                            plan.kernel.name, "general_mma",
                            "{m}×{n}×{k}: {}",
                            plan.reason
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn f32_products_with_b_nk_and_many_rows_copy_b_to_kn_first() {
    use rust_gemm::api::dispatch::{V13_M64_SHORT_K, V13_VIA_KN_MIN_M, kernel_problem};
    for caps in [hopper(), ampere()] {
        // Many rows of A and k > 64: B [n, k] is copied to [k, n] and v13_m64's [k, n] kernel
        // reads the copy.
        for (m, n, k) in [(1024, 4096, 4096), (4096, 11008, 4096), (4097, 31, 1025)] {
            let p = problem(DType::F32, BLayout::Nk, m, n, k);
            let plan = choose(&caps, &p, None).unwrap();
            assert_eq!(
                plan.kernel.name, "v13_m64_via_kn",
                "{m}×{n}×{k}: {}",
                plan.reason
            );
            assert_eq!(plan.kernel.entry, "gemm_v13_m64_f32_kn");
            assert!(plan.kernel.transposes_b());
            let read = kernel_problem(plan.kernel, &p, 256);
            assert_eq!(read.b_layout, BLayout::Kn);
            assert_eq!((read.ldb, read.buffers.b.0), (n.next_multiple_of(4), 256));
        }
        // Fewer rows, or k ≤ 64: the copy was measured not to pay; forced, it still runs.
        for (m, n, k) in [
            (V13_VIA_KN_MIN_M - 1, 4096, 4096),
            (256, 4096, 4096),
            (8192, 8192, V13_M64_SHORT_K),
        ] {
            let p = problem(DType::F32, BLayout::Nk, m, n, k);
            let plan = choose(&caps, &p, None).unwrap();
            assert_ne!(plan.kernel.name, "v13_m64_via_kn", "{m}×{n}×{k}");
            assert!(
                plan.reason.contains("v13_m64_via_kn: m < "),
                "{m}×{n}×{k}: {}",
                plan.reason
            );
            let forced = choose(&caps, &p, Some("v13_m64_via_kn")).unwrap();
            assert_eq!(forced.kernel.name, "v13_m64_via_kn");
        }
        // B [k, n] never takes it.
        let p = problem(DType::F32, BLayout::Kn, 4096, 4096, 4096);
        assert_ne!(
            choose(&caps, &p, None).unwrap().kernel.name,
            "v13_m64_via_kn"
        );
    }
}

/// The tensor-core column body (`thin_m_mma`, B `[k, n]`) launches one block per
/// `kn_column_warps(n)` warps' worth of columns, and the kernel, which reads its width back
/// from the grid, reads the same width.
#[test]
fn wide_column_blocks_are_launched_as_the_kernel_reads_them() {
    use gemm_geometry::thin::{MMA_KN_COLUMNS, kn_column_warps, kn_column_warps_of_grid};
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for n in [8, 104, 4096, 8104, 8192, 8200, 14336, 16400, 28672, 57344] {
            let p = problem(dtype, BLayout::Kn, 8, n, 4096);
            let plan = choose(&caps, &p, Some("thin_m_mma")).unwrap();
            let (x, y, z) = rust_gemm::api::dispatch::grid(plan.kernel, &caps, &p).unwrap();
            let warps = kn_column_warps(n as u32);
            assert_eq!(
                (x, y, z),
                ((n as u32).div_ceil(warps * MMA_KN_COLUMNS), 1, 1),
                "n = {n}"
            );
            assert_eq!(kn_column_warps_of_grid(n as u32, x), warps, "n = {n}");
        }
    }
}

#[test]
fn mid_m_products_take_the_small_tiles_where_the_cost_model_says() {
    // Forced against v18 on the H100 (docs/results/v18-m64, run 1, fp16, ratios to cuBLAS kn/nk):
    // 64×4096×4096 0.82/0.85 against v18's 0.73/0.71, 256×4096×4096 1.11/1.16 against
    // 0.73/0.70, 512³ 1.46 against 1.07; but 1024×4096×4096 0.63/0.67 against 1.11/1.06,
    // 256×11008×4096 0.81/0.84 against 0.94/0.96, 256×4096×14336 0.71/0.77 against 0.91/0.91.
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            for (m, n, k) in [(64, 4096, 4096), (256, 4096, 4096), (512, 512, 512)] {
                let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                assert_eq!(plan.kernel.name, "v18_m64", "{m}×{n}×{k}: {}", plan.reason);
                assert!(plan.grid.0 as usize <= 2 * caps.sm_count, "{:?}", plan.grid);
            }
            for (m, n, k) in [
                (1024, 4096, 4096),
                (256, 11008, 4096),
                (256, 4096, 14336),
                (4096, 4096, 4096),
            ] {
                let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                assert_eq!(plan.kernel.name, "v18", "{m}×{n}×{k}: {}", plan.reason);
                assert!(
                    plan.reason.contains("v18_m64") && plan.reason.contains("less than half"),
                    "{}",
                    plan.reason
                );
            }
        }
    }
}

#[test]
fn mid_size_products_take_the_128_by_128_tiles_where_their_waves_are_faster() {
    // Forced against v18 and v18_m64 on the H200 (docs/results/v18-n128, run 1, fp16, µs):
    // 2176³ 45.1 against v18's 53.5; 256×8192×8192 57.2/61.6 (kn/nk) against 89.3/84.8;
    // 1152³ 16.2 against v18_m64's 19.3; but 4096³ 217.9 against v18's 188.4, 2048³ 33.2
    // against 31.1, 256×4096×4096 29.7 against v18_m64's 24.6.
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            for (m, n, k) in [
                (2176, 2176, 2176),
                (256, 8192, 8192),
                (256, 8192, 28672),
                (1152, 1152, 1152),
                (3072, 3072, 3072),
            ] {
                let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                assert_eq!(plan.kernel.name, "v18_n128", "{m}×{n}×{k}: {}", plan.reason);
                // Unsplit, one block per SM at most (128 tiles at 256 × 8192).
                assert_eq!(plan.splits, 1);
                assert!(plan.grid.0 as usize <= caps.sm_count, "{:?}", plan.grid);
            }
            for (m, n, k, expected) in [
                (4096, 4096, 4096, "v18"),
                (2048, 2048, 2048, "v18"),
                (1024, 8192, 8192, "v18"),
                (256, 4096, 4096, "v18_m64"),
                (512, 512, 512, "v18_m64"),
                (64, 8192, 8192, "v18_m64"),
            ] {
                let plan = choose(&caps, &problem(dtype, layout, m, n, k), None).unwrap();
                assert_eq!(plan.kernel.name, expected, "{m}×{n}×{k}: {}", plan.reason);
            }
            // Never at m ≤ 64 by itself (half of each tile empty); forced, it runs.
            let short = problem(dtype, layout, 64, 28672, 8192);
            let plan = choose(&caps, &short, None).unwrap();
            assert_ne!(plan.kernel.name, "v18_n128", "{}", plan.reason);
            assert!(
                plan.reason.contains("half of each 128-row tile"),
                "{}",
                plan.reason
            );
            assert_eq!(
                choose(&caps, &short, Some("v18_n128")).unwrap().kernel.name,
                "v18_n128"
            );
        }
    }
}

#[test]
fn a_stream_k_tail_only_when_asked_for() {
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let small = Some("v18_m64");
            // 1152³ on v18_m64: 18 × 18 = 324 tiles of 64 × 64 on 264 block slots (two per
            // SM), all of them the tail (one wave and a bit), over every slot.
            let p = problem(dtype, layout, 1152, 1152, 1152);
            let plan = choose_plan(&caps, &p, small, None, Some(true)).unwrap();
            assert_eq!((plan.stream_k_tiles, plan.grid), (324, (264, 1, 1)));
            assert_eq!(plan.splits, 1);
            assert!(plan.reason.contains("stream-K"), "{}", plan.reason);
            // Never by itself (measured slower), nor when asked off.
            for stream_k in [None, Some(false)] {
                let off = choose_plan(&caps, &p, small, None, stream_k).unwrap();
                assert_eq!((off.stream_k_tiles, off.grid), (0, (264, 1, 1)));
            }
            let whole = problem(dtype, layout, 2048, 2048, 2048);
            // Asked for: the last partial wave and one more (232 + 264 of 1 024).
            let on = choose_plan(&caps, &whole, small, None, Some(true)).unwrap();
            assert_eq!((on.stream_k_tiles, on.grid), (232 + 264, (264, 1, 1)));
            // Whole waves have no tail, even when asked for.
            let waves = problem(dtype, layout, 1536, 704, 576);
            let on = choose_plan(&caps, &waves, small, None, Some(true)).unwrap();
            assert_eq!(on.stream_k_tiles, 0, "{}", on.reason);
            // v18's block has no tail: refused when forced with one, as is a tail with a split.
            for (kernel, splits) in [(Some("v18"), None), (small, Some(2))] {
                let err = choose_plan(&caps, &p, kernel, splits, Some(true)).unwrap_err();
                assert!(matches!(err, GemmError::KernelRefused { .. }), "{err}");
            }
        }
    }
    // Dispatch's own choice without a tail runs as it would when one is asked for.
    for dtype in [DType::F32, DType::F16] {
        let p = problem(dtype, BLayout::Kn, 2176, 2176, 2176);
        let plan = choose_plan(&caps, &p, None, None, Some(true)).unwrap();
        assert_eq!(plan.stream_k_tiles, 0);
        assert!(!plan.kernel.stream_k, "{}", plan.kernel.name);
    }
}

#[test]
fn tma_boxes_are_the_geometry_modules() {
    use gemm_geometry::{v17, v18_m64, v18_n128, v19};
    use rust_gemm::api::dispatch::tma_boxes;
    let mut seen = 0;
    for spec in KERNELS.iter().filter(|s| s.tensor_maps) {
        let (a, b_nk, b_kn) = match (spec.name, spec.dtype) {
            ("v18", _) => (v17::A_BOX, v17::B_NK_BOX, Some(v17::B_KN_BOX)),
            ("v18_m64", _) => (v18_m64::A_BOX, v18_m64::B_NK_BOX, Some(v18_m64::B_KN_BOX)),
            ("v18_n128", _) => (
                v18_n128::A_BOX,
                v18_n128::B_NK_BOX,
                Some(v18_n128::B_KN_BOX),
            ),
            // v19 reads B only [n, k] (a [k, n] B is copied transposed first).
            ("v19", DType::Tf32) => (v19::A_BOX, v19::B_NK_BOX, None),
            other => panic!("a TMA kernel without a geometry check: {other:?}"),
        };
        assert_eq!(
            tma_boxes(spec, spec.dtype, BLayout::Nk),
            (a, b_nk),
            "{}",
            spec.entry
        );
        if let Some(b_kn) = b_kn {
            assert_eq!(
                tma_boxes(spec, spec.dtype, BLayout::Kn),
                (a, b_kn),
                "{}",
                spec.entry
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 14);
}

#[test]
fn the_plan_cache_replays_equal_calls_only() {
    use rust_gemm::api::plan_cache::{PLAN_CACHE, PlanCache};
    let caps = hopper();
    let mut cache = PlanCache::default();
    let mut chosen = 0;
    let mut plan_for = |cache: &mut PlanCache, p: &Problem, kernel: Option<&str>| {
        cache
            .get_or_choose(p, kernel, None, None, || {
                chosen += 1;
                choose(&caps, p, kernel)
            })
            .unwrap()
    };
    let p = problem(DType::F16, BLayout::Kn, 2176, 2176, 2176);
    let first = plan_for(&mut cache, &p, None);
    assert_eq!(plan_for(&mut cache, &p, None), first);
    // Other buffers of the same alignment (every address moved by a multiple of 256 bytes,
    // as a fresh allocation would be) replay the plan.
    let mut reallocated = p;
    reallocated.buffers.a.0 += 5 << 20;
    reallocated.buffers.b.0 += 256;
    reallocated.buffers.c.0 -= 1 << 30;
    assert_eq!(plan_for(&mut cache, &reallocated, None), first);
    // Forced differently, or on buffers of another alignment (here: B one element further, no
    // longer 16-byte aligned), is another call.
    let forced = plan_for(&mut cache, &p, Some("v18"));
    assert_eq!(forced.kernel.name, "v18");
    let mut moved = p;
    moved.buffers.b.0 += 2;
    let misaligned = plan_for(&mut cache, &moved, None);
    assert!(!misaligned.kernel.tensor_maps, "{}", misaligned.kernel.name);
    drop(plan_for);
    assert_eq!((chosen, cache.len()), (3, 3));
    // Refusals are not kept; the oldest plan goes first.
    let err = cache.get_or_choose(&p, Some("nonsense"), None, None, || {
        choose(&caps, &p, Some("nonsense"))
    });
    assert!(err.is_err());
    assert_eq!(cache.len(), 3);
    for m in 1..=PLAN_CACHE {
        let q = problem(DType::F16, BLayout::Kn, m, 64, 64);
        cache
            .get_or_choose(&q, None, None, None, || choose(&caps, &q, None))
            .unwrap();
    }
    assert_eq!(cache.len(), PLAN_CACHE);
    let mut rechosen = false;
    cache
        .get_or_choose(&p, None, None, None, || {
            rechosen = true;
            choose(&caps, &p, None)
        })
        .unwrap();
    assert!(rechosen, "the first plan should have been evicted");
}

#[test]
fn plans_depend_on_addresses_only_modulo_the_cache_key_alignment() {
    // The plan cache replays a plan for any call whose addresses agree with the planned one's
    // modulo KEY_ADDRESS_ALIGNMENT: that holds only while dispatch reads nothing more of an
    // address. Every kernel family, at base offsets of every alignment below it, moved by
    // multiples of it, must get the same plan, reason included.
    use rust_gemm::api::plan_cache::{KEY_ADDRESS_ALIGNMENT, key};
    let shapes = [
        (1, 4096, 4096),
        (3, 5, 7),
        (16, 8192, 8192),
        (33, 8191, 1025),
        (1000, 1000, 1000),
        (2176, 2176, 2176),
        (4097, 31, 513),
        (65537, 3, 17),
        (8192, 8192, 64),
    ];
    for caps in [hopper(), ampere()] {
        for dtype in [DType::F32, DType::Tf32, DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                for &(m, n, k) in &shapes {
                    // In elements, so that every address stays a multiple of the element.
                    for offset in [0, 1, 2, 4, 8, 16, 32, 64] {
                        let bytes = dtype.bytes() as u64;
                        let mut p = problem(dtype, layout, m, n, k);
                        p.buffers.b.0 += offset * bytes;
                        p.buffers.c.0 += offset / 2 * bytes;
                        let planned = choose_plan(&caps, &p, None, None, None).unwrap();
                        for moved_by in [1, 3, 1 << 20] {
                            let mut q = p;
                            q.buffers.a.0 += moved_by * KEY_ADDRESS_ALIGNMENT;
                            q.buffers.b.0 += 2 * moved_by * KEY_ADDRESS_ALIGNMENT;
                            q.buffers.c.0 -= moved_by * KEY_ADDRESS_ALIGNMENT;
                            assert_eq!(key(&q), key(&p));
                            assert_eq!(
                                choose_plan(&caps, &q, None, None, None).unwrap(),
                                planned,
                                "{dtype:?} {layout:?} {m}x{n}x{k}, offset {offset}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn sixteen_row_kn_layers_take_v18_split_in_k_over_the_small_tiles() {
    // Measured on the H200 (docs/results/ragged-probe, run 2, fp16, forced): v18 in 4 slices
    // 52.3 µs at 16×8192×8192 and 140.4 µs at 16×8192×28672, v18_m64 59.6 and 177.4 µs. At 64
    // rows v18_m64 stays ahead (126.6 µs against v18's 146.6 at 64×8192×28672).
    let caps = hopper();
    for dtype in [DType::F16, DType::Bf16] {
        for (m, n, k) in [(16, 8192, 8192), (16, 8192, 28672), (12, 8192, 28672)] {
            let plan = choose(&caps, &problem(dtype, BLayout::Kn, m, n, k), None).unwrap();
            assert_eq!(plan.kernel.name, "v18", "{m}×{n}×{k}: {}", plan.reason);
            assert!(plan.splits > 1, "{m}×{n}×{k}: {}", plan.reason);
            assert!(plan.reason.contains("v18_m64: m ≤ 16"), "{}", plan.reason);
        }
        // Too few of v18's tiles, even split, to fill the device: the small tiles keep it.
        let small = choose(&caps, &problem(dtype, BLayout::Kn, 16, 512, 512), None).unwrap();
        assert_eq!(small.kernel.name, "v18_m64", "{}", small.reason);
        let rows64 = choose(&caps, &problem(dtype, BLayout::Kn, 64, 8192, 28672), None).unwrap();
        assert_eq!(rows64.kernel.name, "v18_m64", "{}", rows64.reason);
        // Forced, v18_m64 still runs the 16-row layers.
        let forced = choose(
            &caps,
            &problem(dtype, BLayout::Kn, 16, 8192, 28672),
            Some("v18_m64"),
        )
        .unwrap();
        assert_eq!(forced.kernel.name, "v18_m64");
    }
}

#[test]
fn few_tiles_over_a_short_k_split_into_slices_of_two_granules() {
    // 4097×31×513: 65 tiles of 64×64. Measured on the H200 (docs/results/ragged-probe, run 1):
    // three slices of 192 faster than two (fp16 general_mma 18.4 against 23.6 µs; f32 general
    // 23.9 against 27.8 µs).
    let caps = hopper();
    for (dtype, kernel) in [
        (DType::F16, "general_mma"),
        (DType::Bf16, "general_mma"),
        (DType::F32, "general"),
    ] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let plan = choose(&caps, &problem(dtype, layout, 4097, 31, 513), None).unwrap();
            assert_eq!(plan.kernel.name, kernel, "{}", plan.reason);
            assert_eq!(
                (plan.splits, plan.k_chunk),
                (3, 192),
                "{dtype:?} {layout:?}"
            );
        }
    }
}

#[test]
fn few_columns_over_a_short_k_take_the_short_rows_kernel() {
    for caps in [hopper(), ampere()] {
        for dtype in [DType::F32, DType::F16, DType::Bf16] {
            for layout in [BLayout::Kn, BLayout::Nk] {
                // 17 elements a row: no 16-byte rows, so no tensor-core thin kernel either.
                let short = choose(&caps, &problem(dtype, layout, 65537, 3, 17), None).unwrap();
                assert_eq!(short.kernel.name, "thin_n_rows", "{}", short.reason);
                assert_eq!(short.grid.0, 65537u32.div_ceil(256));
                let long = problem(dtype, layout, 65537, 3, 300);
                let plan = choose(&caps, &long, None).unwrap();
                assert_ne!(plan.kernel.name, "thin_n_rows", "{}", plan.reason);
                assert!(
                    plan.reason.contains("thin_n_rows: k > 256"),
                    "{}",
                    plan.reason
                );
                // Forced, it runs any k.
                let forced = choose(&caps, &long, Some("thin_n_rows")).unwrap();
                assert_eq!(forced.kernel.name, "thin_n_rows");
            }
        }
        // Too few blocks (4097 rows: 17 of 256): the general kernels, as before.
        for dtype in [DType::F32, DType::F16, DType::Bf16] {
            let few = choose(&caps, &problem(dtype, BLayout::Kn, 4097, 5, 100), None).unwrap();
            assert!(few.kernel.name.starts_with("general"), "{}", few.reason);
            assert!(
                few.reason.contains("thin_n_rows: its blocks"),
                "{}",
                few.reason
            );
        }
        // fp16/bf16 with B [n, k] and aligned rows: thin_n_mma yields at k ≤ 32 only.
        for dtype in [DType::F16, DType::Bf16] {
            let rows32 = choose(&caps, &problem(dtype, BLayout::Nk, 1_000_000, 4, 32), None);
            assert_eq!(rows32.unwrap().kernel.name, "thin_n_rows");
            let rows64 = choose(&caps, &problem(dtype, BLayout::Nk, 65537, 3, 64), None);
            assert_eq!(rows64.unwrap().kernel.name, "thin_n_mma");
        }
        // TF32 calls keep the exact FMA thin_n (the short-rows kernel has no TF32 entries).
        let tf32 = choose(
            &caps,
            &problem(DType::Tf32, BLayout::Kn, 65537, 3, 17),
            None,
        )
        .unwrap();
        assert_ne!(tf32.kernel.name, "thin_n_rows");
    }
}
