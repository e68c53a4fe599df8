//! The public API on the GPU: every element type × B layout × epilogue × alpha/beta × batch ×
//! offset views and leading dimensions larger than the row, at aligned and ragged shapes,
//! through every kernel dispatch can choose, against the f64 CPU reference. Elements outside
//! the described matrices (padding between rows and batch items) must stay untouched.
//!
//! The thin-product kernels (`thin_m`, `thin_n`) have their own sweep at the shapes they serve
//! (`thin_*` tests below), and the kernels for every shape are forced only where they apply.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_gpu -- --ignored` (release: the CPU
//! reference of the thin sweeps multiplies matrices of 4097 × 4097).

mod common;

use common::{Case, random, reference, tolerance};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use rust_gemm::api::dispatch::ShapeClass;
use rust_gemm::{Activation, BLayout, DType, Epilogue, Gemm, GemmElement, GemmError, MatmulDesc};
use std::sync::Arc;

fn open() -> (Arc<CudaStream>, Gemm) {
    common::open_gemm()
}

/// The portable (sm_80) module on this GPU, as an Ampere or Ada GPU would load it: the driver
/// JIT-compiles it for the device, and dispatch sees only its kernels.
fn open_portable() -> (Arc<CudaStream>, Gemm) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let runtime =
        rust_gemm::runtime::Runtime::with_ptx(stream.clone(), rust_gemm::ptx::PORTABLE.text)
            .expect("the portable module loads");
    (stream, Gemm::from_runtime(runtime))
}

/// Rounds `values` to `T` and back: what the kernel sees.
fn rounded<T: GemmElement>(values: &[f64]) -> (Vec<T>, Vec<f64>) {
    let typed: Vec<T> = values.iter().map(|&x| T::from_f64(x)).collect();
    let back = typed.iter().map(|x| x.to_f64()).collect();
    (typed, back)
}

#[derive(Clone, Copy, Debug)]
struct Variant {
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    layout: BLayout,
    /// Extra elements per row (ld = row + pad), or `None` for rows padded to a multiple of 8
    /// elements plus 8 (every row start 16-byte aligned, as TMA needs).
    pad: Option<usize>,
    /// Elements between batch items beyond one item's extent.
    gap: usize,
    /// Elements before the first one of each buffer (a view at this offset).
    offset: usize,
    alpha: f32,
    beta: f32,
    bias: bool,
    activation: Option<Activation>,
    tf32: bool,
    /// Split-K slices forced through `MatmulDesc::split_k` (`None`: dispatch's choice).
    split_k: Option<u32>,
    /// Elements added to C's offset and to ldc only (A and B keep theirs): 1–3 move C's rows
    /// off the 8-byte boundaries of the 16-bit kernels' four-element stores.
    c_skew: usize,
    /// Stream-K forced on or off through `MatmulDesc::stream_k` (`None`: dispatch's choice).
    stream_k: Option<bool>,
}

/// Runs `variant` through `kernel` (or dispatch's choice) and checks every element of C.
/// Returns the kernel that ran, or `None` if a forced kernel refused the call.
fn check<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    v: Variant,
    kernel: Option<&str>,
    seed: u64,
) -> Option<String> {
    let (b_rows, b_cols) = match v.layout {
        BLayout::Kn => (v.k, v.n),
        BLayout::Nk => (v.n, v.k),
    };
    let ld = |cols: usize| match v.pad {
        Some(pad) => cols + pad,
        None => cols.div_ceil(8) * 8 + 8,
    };
    let (lda, ldb, ldc) = (ld(v.k), ld(b_cols), ld(v.n) + v.c_skew);
    // Where C's view starts (A's, B's and the bias's start at `v.offset`).
    let c_offset = v.offset + v.c_skew;
    // Batch items apart by one item plus a gap, so the gaps are checked too.
    let strides = (v.m * lda + v.gap, b_rows * ldb + v.gap, v.m * ldc + v.gap);
    let len =
        |stride: usize, rows: usize, ld: usize| v.offset + (v.batch - 1) * stride + rows * ld + 9;
    let (a, a64) = rounded::<T>(&random(len(strides.0, v.m, lda), seed));
    let (b, b64) = rounded::<T>(&random(len(strides.1, b_rows, ldb), seed + 1));
    let (c0, c064) = rounded::<T>(&random(len(strides.2, v.m, ldc) + v.c_skew, seed + 2));
    let (bias, bias64) = rounded::<T>(&random(v.n + v.offset, seed + 3));
    let upload = |x: &[T]| -> CudaSlice<T> { stream.clone_htod(x).expect("upload") };
    let (a_dev, b_dev, bias_dev) = (upload(&a), upload(&b), upload(&bias));
    let mut c_dev = upload(&c0);
    let a_view = a_dev.slice(v.offset..);
    let b_view = b_dev.slice(v.offset..);
    let bias_view = bias_dev.slice(v.offset..);
    let mut desc = MatmulDesc::<T>::new(v.m, v.n, v.k)
        .b_layout(v.layout)
        .lda(lda)
        .ldb(ldb)
        .ldc(ldc)
        .alpha(v.alpha)
        .beta(v.beta);
    if v.batch > 1 {
        desc = desc
            .batch(v.batch)
            .batch_strides(strides.0, strides.1, strides.2);
    }
    let mut epilogue = if v.bias {
        Epilogue::bias(&bias_view)
    } else {
        Epilogue::none()
    };
    if let Some(act) = v.activation {
        epilogue = epilogue.activation(act);
    }
    desc = desc.epilogue(epilogue);
    if v.tf32 {
        desc = desc.tf32();
    }
    if let Some(name) = kernel {
        desc = desc.kernel(name);
    }
    if let Some(slices) = v.split_k {
        desc = desc.split_k(slices);
    }
    if let Some(on) = v.stream_k {
        desc = desc.stream_k(on);
    }
    let mut c_view = c_dev.slice_mut(c_offset..);
    let plan = match gemm.plan(&a_view, &b_view, &c_view, &desc) {
        Ok(plan) => plan,
        Err(GemmError::KernelRefused { .. }) if kernel.is_some() => return None,
        // A forced split that no kernel for this call can make.
        Err(GemmError::NoKernel { .. }) if v.split_k.is_some() => return None,
        Err(e) => panic!("{v:?}: plan failed: {e}"),
    };
    gemm.matmul(&a_view, &b_view, &mut c_view, &desc)
        .unwrap_or_else(|e| panic!("{v:?}: {e}"));
    let out = stream
        .clone_dtoh(&c_dev)
        .expect("download (a kernel may have faulted)");
    let out: Vec<f64> = out.iter().map(|x| x.to_f64()).collect();
    let case = Case {
        m: v.m,
        n: v.n,
        k: v.k,
        batch: v.batch,
        lda,
        ldb,
        ldc,
        strides,
        b_layout: v.layout,
        alpha: v.alpha as f64,
        beta: v.beta as f64,
        activation: v.activation,
        a: &a64[v.offset..],
        b: &b64[v.offset..],
        c: &c064[c_offset..],
        bias: v.bias.then(|| &bias64[v.offset..]),
    };
    let (expected, magnitude) = memoized_reference::<T>(&case, v, seed);
    let dtype = if v.tf32 { DType::Tf32 } else { T::DTYPE };
    assert!(
        out[..c_offset] == c064[..c_offset],
        "{v:?} via {}: elements before the view were written",
        plan.kernel.entry
    );
    for (i, (&got, (&want, &mag))) in out[c_offset..]
        .iter()
        .zip(expected.iter().zip(&magnitude))
        .enumerate()
    {
        let tol = tolerance(dtype, v.k, mag, want);
        assert!(
            (got - want).abs() <= tol,
            "{v:?} via {} (seed {seed}): element {i} is {got}, expected {want} (tolerance {tol:e})",
            plan.kernel.entry
        );
    }
    if plan.splits > 1 {
        Some(format!("{} in {} slices", plan.kernel.entry, plan.splits))
    } else if plan.stream_k_tiles > 0 {
        Some(format!(
            "{} with a stream-K tail of {}",
            plan.kernel.entry, plan.stream_k_tiles
        ))
    } else {
        Some(plan.kernel.entry.to_string())
    }
}

/// [`reference`] for `case`, which `check` built from `v` and `seed` with elements `T`: the
/// sweeps check the same inputs with every kernel and slice count, so the product is computed
/// once per (element type, variant without its forced split or stream-K, seed) and kept for
/// the next checks (a few dozen at most).
fn memoized_reference<T: GemmElement>(case: &Case, v: Variant, seed: u64) -> (Vec<f64>, Vec<f64>) {
    type Products = std::collections::HashMap<String, (Vec<f64>, Vec<f64>)>;
    thread_local! {
        static PRODUCTS: std::cell::RefCell<Products> = Default::default();
    }
    let inputs = Variant {
        split_k: None,
        stream_k: None,
        ..v
    };
    let key = format!("{} {inputs:?} {seed}", std::any::type_name::<T>());
    PRODUCTS.with_borrow_mut(|products| {
        if let Some(product) = products.get(&key) {
            return product.clone();
        }
        if products.len() >= 48 {
            products.clear();
        }
        let product = reference(case);
        products.insert(key, product.clone());
        product
    })
}

fn shapes() -> Vec<(usize, usize, usize)> {
    vec![
        (1, 1, 1),
        (3, 5, 7),
        (64, 64, 64),
        (128, 256, 128),
        (129, 257, 67),
        (200, 72, 300),
    ]
}

fn variants(tf32: bool) -> Vec<Variant> {
    let mut out = Vec::new();
    for (i, (m, n, k)) in shapes().into_iter().enumerate() {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let base = Variant {
                m,
                n,
                k,
                batch: 1,
                layout,
                pad: Some(0),
                gap: 0,
                offset: 0,
                alpha: 1.0,
                beta: 0.0,
                bias: false,
                activation: None,
                tf32,
                split_k: None,
                c_skew: 0,
                stream_k: None,
            };
            out.push(base);
            // Aligned padding, offset and batch gaps (rows stay 16-byte aligned: the TMA
            // kernels run it, ragged shapes included), with everything on.
            out.push(everything_on(base, i));
            // Ragged padding and an odd offset: only kernels without alignment needs.
            out.push(ragged_everything(base, i));
        }
    }
    out
}

/// Every variant through dispatch's choice and through every kernel forced in turn.
fn sweep<T: GemmElement>(tf32: bool) {
    let (stream, gemm) = open();
    sweep_on::<T>(&stream, &gemm, tf32);
}

fn sweep_on<T: GemmElement>(stream: &Arc<CudaStream>, gemm: &Gemm, tf32: bool) {
    let dtype = if tf32 { DType::Tf32 } else { T::DTYPE };
    let mut ran = std::collections::BTreeMap::<String, usize>::new();
    for (i, v) in variants(tf32).into_iter().enumerate() {
        let seed = 1000 + i as u64;
        let chosen = check::<T>(stream, gemm, v, None, seed).expect("dispatch always runs");
        *ran.entry(format!("{chosen} (dispatch)")).or_default() += 1;
        for spec in Gemm::kernels()
            .iter()
            .filter(|k| k.dtype == dtype && k.b_layout == v.layout)
        {
            if let Some(entry) = check::<T>(stream, gemm, v, Some(spec.name), seed) {
                *ran.entry(entry).or_default() += 1;
            }
        }
    }
    eprintln!("{dtype:?}: checks per kernel: {ran:?}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn f32_exact() {
    sweep::<f32>(false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn f32_tf32() {
    sweep::<f32>(true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn f16() {
    sweep::<half::f16>(false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn bf16() {
    sweep::<half::bf16>(false);
}

/// The TMA kernels' library entries store C four 16-bit elements at a time where C's rows
/// start on 8-byte boundaries, in pairs where they start on pair boundaries, element by element
/// otherwise; A and B must be 16-byte aligned, C need not. C moved by 0–3 elements (its base
/// and ldc), plain and with the whole epilogue (beta reads C), a batch, n ragged against the
/// quads, both layouts, with and without split-K (whose reduction stores C).
fn tma_c_alignment_sweep<T: GemmElement>(kernel: &str, tf32: bool) {
    let (stream, gemm) = open();
    let mut checks = 0;
    for (i, (m, n, k)) in [(129, 258, 72), (64, 256, 64), (200, 517, 136)]
        .into_iter()
        .enumerate()
    {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let base = Variant {
                pad: None,
                ..plain(m, n, k, layout, tf32)
            };
            for c_skew in 0..4 {
                for (j, v) in [base, everything_on(base, i)].into_iter().enumerate() {
                    for split_k in [None, Some(2)] {
                        let v = Variant {
                            c_skew,
                            split_k,
                            ..v
                        };
                        let seed = 11_000 + 100 * i as u64 + 10 * c_skew as u64 + j as u64;
                        let entry = check::<T>(&stream, &gemm, v, Some(kernel), seed)
                            .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                        assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                        checks += 1;
                    }
                }
            }
        }
    }
    eprintln!("{kernel}: C-alignment checks: {checks}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_c_alignment_f16() {
    tma_c_alignment_sweep::<half::f16>("v18", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_c_alignment_bf16() {
    tma_c_alignment_sweep::<half::bf16>("v18", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_c_alignment_f16() {
    tma_c_alignment_sweep::<half::f16>("v18_m64", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_c_alignment_bf16() {
    tma_c_alignment_sweep::<half::bf16>("v18_m64", false);
}

/// A persistent TMA kernel's library entries over more tiles than its grid has blocks, so
/// that every block walks several tiles and the stage ring and barrier phases run on from tile
/// to tile: ragged m, n and k, a long k, a batch, split-K, both layouts (the 16-bit type `T`),
/// against the f64 reference. `shapes` are (m, n, k, batch).
fn tma_many_tiles<T: GemmElement>(kernel: &str, shapes: [(usize, usize, usize, usize); 3]) {
    let (stream, gemm) = open();
    let mut checks = 0;
    for (i, (m, n, k, batch)) in shapes.into_iter().enumerate() {
        for layout in [BLayout::Kn, BLayout::Nk] {
            for split_k in [None, Some(3)] {
                let v = Variant {
                    batch,
                    split_k,
                    ..plain(m, n, k, layout, false)
                };
                let seed = 12_000 + 10 * i as u64 + split_k.unwrap_or(1) as u64;
                let entry = check::<T>(&stream, &gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                checks += 1;
            }
        }
    }
    eprintln!("{kernel}: many-tile checks: {checks}");
}

/// The small-tile entries (two blocks per SM, 264 on the H100): 5 × 65 = 325 tiles (n ragged);
/// 1 × 64 = 64 tiles over k = 4096 (64 k-steps each); a batch of 3 items of 3 × 41 tiles.
fn tma_m64_many_tiles<T: GemmElement>() {
    tma_many_tiles::<T>(
        "v18_m64",
        [
            (300, 4104, 520, 1),
            (64, 4096, 4096, 1),
            (130, 2600, 1000, 3),
        ],
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_many_tiles_f16() {
    tma_m64_many_tiles::<half::f16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_many_tiles_bf16() {
    tma_m64_many_tiles::<half::bf16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_n128_c_alignment_f16() {
    tma_c_alignment_sweep::<half::f16>("v18_n128", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_n128_c_alignment_bf16() {
    tma_c_alignment_sweep::<half::bf16>("v18_n128", false);
}

/// The mid-size entries (one block per SM, 132 on the H100): 3 × 65 = 195 tiles (m and n
/// ragged); 32 tiles over k = 4096; a batch of 3 items of 3 × 21 tiles (k ragged).
fn tma_n128_many_tiles<T: GemmElement>() {
    tma_many_tiles::<T>(
        "v18_n128",
        [
            (300, 8200, 520, 1),
            (128, 4096, 4096, 1),
            (260, 2600, 1000, 3),
        ],
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_n128_many_tiles_f16() {
    tma_n128_many_tiles::<half::f16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_n128_many_tiles_bf16() {
    tma_n128_many_tiles::<half::bf16>();
}

/// The small-tile TMA kernel with a stream-K tail (`gemm_geometry::stream_k`), against the
/// f64 reference: tails of every kind on the H100's 264 block slots —
/// fewer tiles than blocks (each tile in several pieces), one wave and a bit (shares of one
/// to two tiles), several waves (whole tiles first), a short k (fewer steps than blocks: empty
/// shares), a batch, ragged m, n and k, the full epilogue, C off its 8-byte boundaries, both
/// layouts. Then the same call twice more gives the same bits: the pieces are added in a
/// fixed order.
fn stream_k_sweep<T: GemmElement>(kernel: &str) {
    let (stream, gemm) = open();
    let mut checks = 0;
    for (i, (m, n, k, batch)) in [
        (300, 4104, 520, 1),
        (1000, 1000, 1000, 1),
        (2176, 2176, 200, 1),
        (129, 2600, 1999, 3),
        (16, 4096, 4096, 1),
        (700, 3000, 64, 1),
    ]
    .into_iter()
    .enumerate()
    {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // Rows padded to 16-byte boundaries (`pad: None`), as TMA needs.
            let base = Variant {
                batch,
                pad: None,
                stream_k: Some(true),
                ..plain(m, n, k, layout, false)
            };
            let full = Variant {
                c_skew: i % 4,
                ..everything_on(base, i)
            };
            for (j, v) in [base, full].into_iter().enumerate() {
                let seed = 13_000 + 10 * i as u64 + j as u64;
                let entry = check::<T>(&stream, &gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                checks += 1;
            }
        }
    }
    // Bit for bit from run to run, where several pieces meet in each tile.
    for (m, n, k) in [(2176, 2176, 2176), (256, 2048, 8192)] {
        let (a, _) = rounded::<T>(&random(m * k, 21));
        let (b, _) = rounded::<T>(&random(k * n, 22));
        let (a, b) = (
            stream.clone_htod(&a).unwrap(),
            stream.clone_htod(&b).unwrap(),
        );
        let desc = MatmulDesc::<T>::new(m, n, k)
            .kernel(kernel)
            .stream_k(true)
            .b_transposed();
        let plan = gemm.plan(&a, &b, &stream.alloc_zeros::<T>(m * n).unwrap(), &desc);
        assert!(plan.unwrap().stream_k_tiles > 0, "{m}×{n}×{k}: no tail");
        let first = c_bits(&stream, &gemm, &a, &b, &desc, m * n);
        for _ in 0..3 {
            assert!(
                first == c_bits(&stream, &gemm, &a, &b, &desc, m * n),
                "{kernel} {m}×{n}×{k}: stream-K runs differ"
            );
        }
        checks += 1;
    }
    eprintln!("{kernel}: stream-K checks: {checks}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_stream_k_f16() {
    stream_k_sweep::<half::f16>("v18_m64");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v18_m64_stream_k_bf16() {
    stream_k_sweep::<half::bf16>("v18_m64");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v19_c_alignment_tf32() {
    tma_c_alignment_sweep::<f32>("v19", true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn portable_module_every_type() {
    let (stream, gemm) = open_portable();
    assert!(
        !gemm
            .caps()
            .entries
            .iter()
            .any(|e| e.starts_with("gemm_v18")),
        "the portable module has no Hopper-only kernels"
    );
    sweep_on::<f32>(&stream, &gemm, false);
    sweep_on::<f32>(&stream, &gemm, true);
    sweep_on::<half::f16>(&stream, &gemm, false);
    sweep_on::<half::bf16>(&stream, &gemm, false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn beta_zero_never_reads_c() {
    // C full of NaN, beta 0: the result must be finite (BLAS semantics).
    let (stream, gemm) = open();
    let (m, n, k) = (70, 90, 33);
    let a = stream.clone_htod(&vec![0.5f32; m * k]).unwrap();
    let b = stream.clone_htod(&vec![0.25f32; k * n]).unwrap();
    let mut c = stream.clone_htod(&vec![f32::NAN; m * n]).unwrap();
    for spec in Gemm::kernels().iter().filter(|s| {
        s.dtype == DType::F32 && s.b_layout == BLayout::Kn && s.shape == ShapeClass::Any
    }) {
        gemm.matmul(&a, &b, &mut c, &MatmulDesc::new(m, n, k).kernel(spec.name))
            .unwrap();
        let out = stream.clone_dtoh(&c).unwrap();
        assert!(
            out.iter().all(|&x| x == 0.5 * 0.25 * k as f32),
            "{}",
            spec.name
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn nan_inputs_propagate() {
    let (stream, gemm) = open();
    let (m, n, k) = (64, 64, 64);
    let mut a_host = vec![1.0f32; m * k];
    a_host[5 * k + 3] = f32::NAN; // row 5
    let a = stream.clone_htod(&a_host).unwrap();
    let b = stream.clone_htod(&vec![1.0f32; k * n]).unwrap();
    let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
    for spec in Gemm::kernels().iter().filter(|s| {
        s.dtype == DType::F32 && s.b_layout == BLayout::Kn && s.shape == ShapeClass::Any
    }) {
        gemm.matmul(&a, &b, &mut c, &MatmulDesc::new(m, n, k).kernel(spec.name))
            .unwrap();
        let out = stream.clone_dtoh(&c).unwrap();
        for i in 0..m {
            for j in 0..n {
                assert_eq!(out[i * n + j].is_nan(), i == 5, "{} ({i}, {j})", spec.name);
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn tf32_kernels_never_read_c_at_beta_zero_and_propagate_nan() {
    // Every TF32 kernel for every shape, forced, both B layouts (v19 on B `[k, n]` through its
    // transposed copy): C full of NaN with beta 0 gives the exact product (0.5 · 0.25 · k is
    // exact in TF32), and a NaN in row 5 of A gives NaN in exactly row 5 of C.
    let (stream, gemm) = open();
    // n a multiple of 4: v19 needs C's rows on 16-byte boundaries.
    let (m, n, k) = (70, 92, 96);
    let mut a_host = vec![0.5f32; m * k];
    let a = stream.clone_htod(&a_host).unwrap();
    a_host[5 * k + 3] = f32::NAN;
    let a_nan = stream.clone_htod(&a_host).unwrap();
    let b = stream.clone_htod(&vec![0.25f32; k * n]).unwrap();
    let mut ran = Vec::new();
    for spec in Gemm::kernels()
        .iter()
        .filter(|s| s.dtype == DType::Tf32 && s.shape == ShapeClass::Any)
    {
        let desc = |desc: MatmulDesc<'static, f32>| match spec.b_layout {
            BLayout::Kn => desc,
            BLayout::Nk => desc.b_transposed(),
        };
        let mut c = stream.clone_htod(&vec![f32::NAN; m * n]).unwrap();
        let plain = desc(MatmulDesc::new(m, n, k)).tf32().kernel(spec.name);
        gemm.matmul(&a, &b, &mut c, &plain).unwrap();
        let out = stream.clone_dtoh(&c).unwrap();
        let expected = 0.5 * 0.25 * k as f32;
        assert!(
            out.iter().all(|&x| x == expected),
            "{} {:?}",
            spec.name,
            spec.b_layout
        );
        gemm.matmul(&a_nan, &b, &mut c, &plain).unwrap();
        let out = stream.clone_dtoh(&c).unwrap();
        for i in 0..m {
            for j in 0..n {
                let at = format!("{} {:?} ({i}, {j})", spec.name, spec.b_layout);
                assert_eq!(out[i * n + j].is_nan(), i == 5, "{at}");
            }
        }
        ran.push(format!("{} {:?}", spec.name, spec.b_layout));
    }
    eprintln!("TF32 kernels checked: {ran:?}");
    assert!(ran.iter().any(|r| r.starts_with("v19")), "v19 did not run");
}

/// `base` with everything on, rows still 16-byte aligned (the TMA and tensor-core thin kernels
/// run it, ragged shapes included): rows padded to a multiple of 8 elements plus 8, a batch of
/// 3 with gaps, a 16-byte offset, alpha, beta, the bias and the `i % 3`-th of ReLU, leaky ReLU
/// and GELU.
fn everything_on(base: Variant, i: usize) -> Variant {
    Variant {
        pad: None,
        gap: 8,
        offset: 8,
        batch: 3,
        alpha: 0.5,
        beta: -1.5,
        bias: true,
        activation: Some(
            [
                Activation::Relu,
                Activation::LeakyRelu(0.1),
                Activation::GeluTanh,
            ][i % 3],
        ),
        ..base
    }
}

/// Rows padded by 3 elements at an odd offset (only kernels without alignment needs run it,
/// on their scalar paths), a batch of 2 with gaps, beta 1, the bias on every other `i`, GELU.
fn ragged_everything(base: Variant, i: usize) -> Variant {
    Variant {
        pad: Some(3),
        gap: 5,
        offset: 1,
        batch: 2,
        beta: 1.0,
        bias: i % 2 == 0,
        activation: Some(Activation::GeluTanh),
        ..base
    }
}

/// A plain variant of one shape: contiguous rows, one item, alpha 1, beta 0.
fn plain(m: usize, n: usize, k: usize, layout: BLayout, tf32: bool) -> Variant {
    Variant {
        m,
        n,
        k,
        batch: 1,
        layout,
        pad: Some(0),
        gap: 0,
        offset: 0,
        alpha: 1.0,
        beta: 0.0,
        bias: false,
        activation: None,
        tf32,
        split_k: None,
        c_skew: 0,
        stream_k: None,
    }
}

/// The shapes each thin kernel serves, aligned and ragged: (m, n, k).
fn thin_shapes(kernel: &str) -> Vec<(usize, usize, usize)> {
    let sides = [1, 7, 33, 4096, 4097];
    let mut out = Vec::new();
    if kernel == "thin_m" || kernel == "thin_m16" {
        // m = 1 and 2: the f32 entries' matrix–vector path (`GEMV_MAX_SMALL`).
        let rows: &[usize] = if kernel == "thin_m" {
            &[1, 2, 3, 8]
        } else {
            &[1, 9, 16]
        };
        for &m in rows {
            for n in sides {
                for k in sides {
                    out.push((m, n, k));
                }
            }
        }
    } else {
        for n in [1, 2, 5, 8] {
            for m in [1, 7, 33, 1000, 2999] {
                for k in sides {
                    out.push((m, n, k));
                }
            }
        }
    }
    out
}

/// Whether an fp16/bf16 call with m ≤ 8 is one of the tiny `[k, n]` products for which dispatch
/// passes the FMA `thin_m` over for the general kernels (`dispatch::tiny_thin_m_passed_over`:
/// k ≤ `TINY_THIN_M_MAX_K`, n ≤ `TINY_THIN_M_MAX_N`).
fn tiny_kn(layout: BLayout, n: usize, k: usize) -> bool {
    layout == BLayout::Kn
        && k <= rust_gemm::api::dispatch::TINY_THIN_M_MAX_K
        && n <= rust_gemm::api::dispatch::TINY_THIN_M_MAX_N
}

/// Every shape of `thin_shapes(kernel)` forced through `kernel`, plain; then a subset with
/// everything on: rows padded to 16-byte multiples with a batch of 3, gaps and an aligned
/// offset (the vector path with ragged k), and rows padded by 3 elements at an odd offset with
/// a batch of 2 (the scalar path), with alpha, beta, bias and each activation. Dispatch must
/// choose the same kernel for each (`thin_m` when m ≤ 8, else `thin_m16` for the wide f32
/// kernel's sweep, else `thin_n`), except where it passes a kernel over for one measured
/// faster (`dispatch::passed_over`). `thin_m16` serves B `[n, k]` only.
fn thin_sweep<T: GemmElement>(kernel: &str, tf32: bool) {
    let (stream, gemm) = open();
    let mut checks = 0;
    let layouts: &[BLayout] = if kernel == "thin_m16" {
        &[BLayout::Nk]
    } else {
        &[BLayout::Kn, BLayout::Nk]
    };
    for &layout in layouts {
        for (i, (m, n, k)) in thin_shapes(kernel).into_iter().enumerate() {
            let seed = 5000 + i as u64;
            let base = plain(m, n, k, layout, tf32);
            let mut variants = vec![base];
            // The epilogue variants on shapes small enough for the CPU reference's batches.
            if m * n * k <= 3000 * 8 * 4097 {
                variants.push(everything_on(base, i));
                variants.push(ragged_everything(base, i));
            }
            for v in variants {
                let entry = check::<T>(&stream, &gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                checks += 1;
            }
            // Dispatch picks the thin kernel by itself, except the FMA thin_n at short k (not
            // TF32), which it passes over for the short-rows kernel where its blocks fill half
            // the SMs, else for a tiled kernel (`dispatch::passed_over`).
            let chosen = check::<T>(&stream, &gemm, base, None, seed).expect("dispatch runs");
            if m > 8 && k <= rust_gemm::api::dispatch::SHORT_K && !tf32 && kernel != "thin_m16" {
                assert!(
                    !chosen.starts_with("gemm_thin_n_f") && !chosen.starts_with("gemm_thin_n_b"),
                    "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
                );
                continue;
            }
            // fp16/bf16 with B [k, n] on tiny products: the FMA thin_m is passed over for the
            // general kernels (`dispatch::TINY_THIN_M_MAX_K`, `TINY_THIN_M_MAX_N`); thin_m_mma
            // still takes the calls whose rows it can load.
            if kernel == "thin_m" && T::DTYPE != DType::F32 && m <= 8 && tiny_kn(layout, n, k) {
                assert!(
                    chosen.starts_with("gemm_thin_m_mma_") || chosen.starts_with("gemm_general"),
                    "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
                );
                continue;
            }
            // thin_m16 where its rows are 16-byte aligned (k a multiple of 4: plain rows are
            // contiguous) and it has 16 blocks or more; elsewhere dispatch passes it over.
            if kernel == "thin_m16" && m > 8 && (k % 4 != 0 || n.div_ceil(32) < 16) {
                assert!(
                    !chosen.starts_with("gemm_thin_m16_"),
                    "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
                );
                continue;
            }
            let expected = if m <= 8 {
                "thin_m"
            } else if kernel == "thin_m16" {
                "thin_m16"
            } else {
                "thin_n"
            };
            assert!(
                chosen.starts_with(&format!("gemm_{expected}_")),
                "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
            );
        }
    }
    eprintln!("{kernel} ({:?}, tf32 {tf32}): {checks} checks", T::DTYPE);
}

/// The tensor-core thin kernel `kernel` (`thin_m_mma`; `thin_m16_mma` or `thin_n_mma`, for B
/// `[n, k]` only) forced at every shape of the FMA kernel's sweep (m ∈ {1, 9, 16} for
/// `thin_m16_mma`) with 16-byte-aligned rows: plain, and (where the CPU reference's batches
/// stay small) with a batch of 3, gaps, a 16-byte offset, alpha, beta, bias and each
/// activation. Dispatch must choose it by itself for the aligned call (`thin_m_mma` for
/// m ≤ 8), and pass it over (for the FMA kernel when m ≤ 8, a tiled one above) when A's rows
/// are not aligned, which forcing it refuses.
fn thin_mma_sweep<T: GemmElement>(kernel: &str) {
    let (stream, gemm) = open();
    let (family, layouts): (&str, &[BLayout]) = match kernel {
        "thin_m_mma" => ("thin_m", &[BLayout::Kn, BLayout::Nk]),
        "thin_m16_mma" => ("thin_m16", &[BLayout::Nk]),
        _ => ("thin_n", &[BLayout::Nk]),
    };
    let mut checks = 0;
    for &layout in layouts {
        for (i, (m, n, k)) in thin_shapes(family).into_iter().enumerate() {
            let seed = 7000 + i as u64;
            let base = Variant {
                pad: None,
                ..plain(m, n, k, layout, false)
            };
            let mut variants = vec![base];
            if m * n * k <= 3000 * 8 * 4097 {
                variants.push(everything_on(base, i));
            }
            for v in variants {
                let entry = check::<T>(&stream, &gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                checks += 1;
            }
            // Dispatch takes the m ≤ 8 kernels first when both apply; a misaligned call with
            // 8 < m ≤ 16 goes to a tiled kernel.
            let (expected, fallback) = if m <= 8 {
                ("thin_m_mma", "thin_m")
            } else if m <= 16 {
                ("thin_m16_mma", if n <= 8 { "thin_n" } else { "v15" })
            } else {
                (kernel, family)
            };
            let chosen = check::<T>(&stream, &gemm, base, None, seed).expect("dispatch runs");
            assert!(
                chosen.starts_with(&format!("gemm_{expected}_")),
                "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
            );
            // A view one element off 16 bytes: refused when forced, the FMA (or tiled) kernel
            // otherwise.
            let odd = Variant { offset: 1, ..base };
            assert!(check::<T>(&stream, &gemm, odd, Some(kernel), seed).is_none());
            let chosen = check::<T>(&stream, &gemm, odd, None, seed).expect("dispatch runs");
            // The FMA thin_n is passed over at short k, and the FMA thin_m on tiny products
            // with B [k, n] (`dispatch::passed_over`), for the general kernels.
            let tiny = fallback == "thin_m" && tiny_kn(layout, n, k);
            let fallback_runs = if fallback == "thin_n" && k <= rust_gemm::api::dispatch::SHORT_K {
                !chosen.starts_with("gemm_thin_")
            } else if tiny {
                chosen.starts_with("gemm_general")
            } else if fallback == "v15" {
                // Either tiled kernel: dispatch passes v15 over for `general_mma` where v15
                // would load element by element.
                chosen.starts_with("gemm_v15_") || chosen.starts_with("gemm_general_mma_")
            } else {
                chosen.starts_with(&format!("gemm_{fallback}_"))
            };
            // Never a tensor-core thin kernel (they need 16-byte rows); `general_mma`, which
            // takes any alignment, may serve the short-k cases.
            let thin_mma = chosen.starts_with("gemm_thin_") && chosen.contains("_mma_");
            assert!(
                fallback_runs && !thin_mma,
                "{m}×{n}×{k} {layout:?} misaligned: dispatch chose {chosen}"
            );
            checks += 2;
        }
    }
    eprintln!("{kernel} ({:?}): {checks} checks", T::DTYPE);
}

/// v13's 64-row variant (`v13_m64`, f32 with m ≤ 64) forced at aligned and ragged shapes, both
/// B layouts: m across one and two warp rows and a partial tile, n across partial column
/// tiles, k across partial 16-deep steps; plain, with everything on (batch, gaps, offsets,
/// alpha, beta, bias, activations), with ragged padding at an odd offset (4-byte copies and
/// stores), and split into 3 slices of k. Dispatch must choose it by itself where no thin
/// kernel applies; forced, it also runs taller products.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v13_m64_f32() {
    v13_short_m_sweep("v13_m64", &[1, 9, 33, 63, 64]);
}

/// v13's 32-row variant (`v13_m32`, f32 with m ≤ 32), as [`v13_m64_f32`].
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v13_m32_f32() {
    v13_short_m_sweep("v13_m32", &[1, 5, 17, 31, 32]);
}

/// The sweep of [`v13_m64_f32`] for `kernel` (`v13_m64` or `v13_m32`) at rows `rows`.
fn v13_short_m_sweep(kernel: &str, rows: &[usize]) {
    let (stream, gemm) = open();
    let mut checks = 0;
    let max_rows = *rows.iter().max().unwrap();
    for layout in [BLayout::Kn, BLayout::Nk] {
        let mut i = 0;
        for &m in rows {
            for n in [1, 127, 129, 515] {
                for k in [1, 17, 250, 1031] {
                    i += 1;
                    let seed = 9000 + i as u64;
                    let base = plain(m, n, k, layout, false);
                    let ragged = ragged_everything(base, i);
                    let split = Variant {
                        split_k: Some(3),
                        ..everything_on(base, i)
                    };
                    for v in [base, everything_on(base, i), ragged, split] {
                        let entry = check::<f32>(&stream, &gemm, v, Some(kernel), seed)
                            .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                        assert!(entry.starts_with(&format!("gemm_{kernel}_f32_")), "{entry}");
                        // Slices are whole 64-granules of k: 250 makes 2, 1031 makes 3.
                        if v.split_k.is_some() && k > gemm_geometry::split_k::K_GRANULE as usize {
                            assert!(entry.contains(" slices"), "{v:?}: {entry}");
                        }
                        checks += 1;
                    }
                    // Dispatch: the thin kernels where they apply (thin_n passed over at short
                    // k for the general kernel), the general kernel for small products
                    // (`dispatch::small_f32_product`: at most 2^26 multiply-adds with k ≤ 1024,
                    // all the shapes here but those with k = 1031), else the narrowest v13
                    // variant.
                    let chosen =
                        check::<f32>(&stream, &gemm, base, None, seed).expect("dispatch runs");
                    let small = (m * n * k) as u64 <= rust_gemm::api::dispatch::SMALL_PRODUCT_MACS
                        && k as u64 <= rust_gemm::api::dispatch::SMALL_PRODUCT_MAX_K;
                    let expected = if m <= 8 {
                        "gemm_thin_m_"
                    } else if (n <= 8 && k <= rust_gemm::api::dispatch::SHORT_K) || small {
                        "gemm_general_"
                    } else if n <= 8 {
                        "gemm_thin_n_"
                    } else if m <= 32 {
                        "gemm_v13_m32_"
                    } else {
                        "gemm_v13_m64_"
                    };
                    assert!(
                        chosen.starts_with(expected),
                        "{m}×{n}×{k} {layout:?}: dispatch chose {chosen}"
                    );
                    checks += 1;
                }
            }
        }
        // Taller products: forced, the variant runs them (any shape), edge tiles along m
        // included; dispatch takes it only where `dispatch::passed_over` says it is faster.
        for (i, (m, n, k)) in [(max_rows + 1, 129, 17), (3 * max_rows + 5, 257, 300)]
            .into_iter()
            .enumerate()
        {
            let base = plain(m, n, k, layout, false);
            for v in [base, everything_on(base, i), ragged_everything(base, i)] {
                let entry = check::<f32>(&stream, &gemm, v, Some(kernel), 9900 + i as u64)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_f32_")), "{entry}");
                checks += 1;
            }
        }
    }
    eprintln!("{kernel}: {checks} checks");
}

/// v13's K-major `[n, k]` entries (`v13_m32_kmajor`, `v13_m64_kmajor`), forced:
/// B's rows on 16-byte boundaries with k at every remainder mod 4 (pieces of k that run past
/// its end), edge tiles along m and n, a batch with everything on, and 3 slices of k. Rows of B
/// off 16-byte boundaries must be refused (dispatch then takes the transposing sibling), and
/// dispatch must take the K-major entry of the right height where nothing narrower applies.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v13_k_major_f32() {
    let (stream, gemm) = open();
    let mut checks = 0;
    let kernels = [
        (
            "v13_m32_kmajor",
            "gemm_v13_m32_f32_nk_kmajor",
            [1, 17, 32, 45],
        ),
        (
            "v13_m64_kmajor",
            "gemm_v13_m64_f32_nk_kmajor",
            [1, 33, 64, 130],
        ),
    ];
    let mut i = 0;
    for (kernel, entry, rows) in kernels {
        for m in rows {
            for n in [1, 129, 515] {
                for k in [4, 17, 250, 1031, 1032] {
                    i += 1;
                    let seed = 9700 + i as u64;
                    let base = plain(m, n, k, BLayout::Nk, false);
                    let variants = k_major_variants(m, n, k, i);
                    let aligned = variants[0];
                    for v in variants {
                        let ran = check::<f32>(&stream, &gemm, v, Some(kernel), seed)
                            .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                        assert!(ran.starts_with(entry), "{v:?}: {ran}");
                        checks += 1;
                    }
                    // Contiguous rows of k floats are aligned only when k % 4 == 0 (or B has
                    // one row).
                    let plain_ran = check::<f32>(&stream, &gemm, base, Some(kernel), seed);
                    let aligned_rows = k % 4 == 0 || n == 1;
                    assert_eq!(plain_ran.is_some(), aligned_rows, "{base:?}: {plain_ran:?}");
                    let ragged = ragged_everything(base, i);
                    let ragged_ran = check::<f32>(&stream, &gemm, ragged, Some(kernel), seed);
                    assert!(
                        ragged_ran.is_none(),
                        "{kernel} ran rows off 16-byte boundaries"
                    );
                    // Dispatch, where no thin kernel or small-product rule applies.
                    if m > 16 && n == 515 && k > 1024 {
                        // The 64-row entry also above m = 64 (k > 64, m < 1024).
                        let expected = match m {
                            ..=32 => "gemm_v13_m32_f32_nk_kmajor",
                            _ => "gemm_v13_m64_f32_nk_kmajor",
                        };
                        let chosen = check::<f32>(&stream, &gemm, aligned, None, seed)
                            .expect("dispatch runs");
                        assert!(
                            chosen.starts_with(expected),
                            "{aligned:?}: dispatch chose {chosen}"
                        );
                    }
                    checks += 1;
                }
            }
        }
    }
    eprintln!("v13 K-major: {checks} checks");
}

/// A few small shapes through every fp16/bf16 thin kernel (tensor-core and FMA), forced, with
/// 16-byte-aligned rows: partial steps of k, a partial block of columns, thin_n shapes; the FMA
/// kernels in f32 too; `thin_m` and `thin_m_mma` with B `[k, n]` split in k. Small enough for
/// compute-sanitizer's racecheck (`--kernel-regex kns=thin_`), and with no cuBLAS in the process.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_sanitizer_subset() {
    let (stream, gemm) = open();
    let both = [BLayout::Kn, BLayout::Nk];
    type Shapes = &'static [(usize, usize, usize)];
    let cases: [(&str, &[BLayout], Shapes); 7] = [
        (
            "thin_m_mma",
            &both,
            &[(8, 104, 1000), (3, 200, 48), (8, 64, 1024), (5, 8200, 40)],
        ),
        (
            "thin_m16_mma",
            &[BLayout::Nk],
            &[(16, 104, 1000), (9, 200, 48), (16, 64, 1024)],
        ),
        (
            "thin_n_mma",
            &[BLayout::Nk],
            &[(1000, 8, 40), (100, 5, 2000)],
        ),
        (
            "thin_m",
            &both,
            &[(8, 100, 1000), (3, 33, 40), (1, 70, 512), (2, 70, 4100)],
        ),
        (
            "thin_n",
            &both,
            &[(1000, 8, 40), (33, 5, 100), (100, 1, 4100), (70, 2, 2048)],
        ),
        (
            "thin_n_rows",
            &both,
            &[(1000, 8, 40), (300, 3, 17), (33, 5, 100)],
        ),
        (
            "thin_m16",
            &[BLayout::Nk],
            &[(16, 100, 1000), (9, 33, 40), (12, 70, 512)],
        ),
    ];
    for (kernel, layouts, shapes) in cases {
        for &layout in layouts {
            for (i, &(m, n, k)) in shapes.iter().enumerate() {
                let v = Variant {
                    pad: None,
                    ..plain(m, n, k, layout, false)
                };
                let seed = 9000 + i as u64;
                // thin_m16 (FMA) serves f32 only; fp16/bf16 have thin_m16_mma.
                if kernel != "thin_m16" {
                    check::<half::f16>(&stream, &gemm, v, Some(kernel), seed).expect("runs");
                    check::<half::bf16>(&stream, &gemm, v, Some(kernel), seed).expect("runs");
                }
                // The FMA kernels also serve f32 (their only kernels with two blocks per SM).
                if !kernel.ends_with("_mma") {
                    check::<f32>(&stream, &gemm, v, Some(kernel), seed).expect("runs");
                }
            }
        }
    }
    // The column-slices body split in k (its slices into the workspace, then the reduction).
    for (i, (m, n, k, slices)) in [(8, 100, 1000, 3), (1, 70, 1537, 2)]
        .into_iter()
        .enumerate()
    {
        let v = Variant {
            split_k: Some(slices),
            ..everything_on(plain(m, n, k, BLayout::Kn, false), i)
        };
        let seed = 9100 + i as u64;
        check::<f32>(&stream, &gemm, v, Some("thin_m"), seed).expect("runs");
        check::<half::f16>(&stream, &gemm, v, Some("thin_m"), seed).expect("runs");
        check::<half::bf16>(&stream, &gemm, v, Some("thin_m"), seed).expect("runs");
    }
    // The tensor-core column body split in k (n past a 32-column block, k past a 16-row step,
    // and blocks of four column warps at n = 8200).
    for (i, (m, n, k, slices)) in [(8, 104, 1000, 3), (1, 8200, 2056, 2)]
        .into_iter()
        .enumerate()
    {
        let v = Variant {
            split_k: Some(slices),
            ..everything_on(plain(m, n, k, BLayout::Kn, false), i)
        };
        let seed = 9200 + i as u64;
        check::<half::f16>(&stream, &gemm, v, Some("thin_m_mma"), seed).expect("runs");
        check::<half::bf16>(&stream, &gemm, v, Some("thin_m_mma"), seed).expect("runs");
    }
}

/// v13's K-major entries at a few shapes (interior and edge tiles, k at remainders 0 and 1 mod
/// 4 so that pieces run past k, a batch with everything on, 3 slices of k) for
/// compute-sanitizer (`--kernel-name kns=kmajor`), with no cuBLAS in the process.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn k_major_sanitizer_subset() {
    let (stream, gemm) = open();
    for (kernel, shapes) in [
        (
            "v13_m32_kmajor",
            [(32, 256, 128), (17, 129, 250), (45, 515, 1033)],
        ),
        (
            "v13_m64_kmajor",
            [(64, 256, 128), (33, 129, 250), (130, 515, 1033)],
        ),
    ] {
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let seed = 9800 + i as u64;
            for v in k_major_variants(m, n, k, i) {
                check::<f32>(&stream, &gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
            }
        }
    }
}

/// The K-major tests' three variants of one `[n, k]` shape (`plain`): rows padded to a
/// multiple of 8 elements (aligned whatever k is) first, everything on (`everything_on`), and
/// the aligned one split in 3 slices of k.
fn k_major_variants(m: usize, n: usize, k: usize, i: usize) -> [Variant; 3] {
    let base = plain(m, n, k, BLayout::Nk, false);
    let aligned = Variant { pad: None, ..base };
    let split = Variant {
        split_k: Some(3),
        ..aligned
    };
    [aligned, everything_on(base, i), split]
}

/// The sanitizer subsets' three variants of one shape: plain, ragged (`ragged_everything`)
/// and that ragged variant split in 3 slices of k.
fn plain_ragged_and_split(m: usize, n: usize, k: usize, layout: BLayout, i: usize) -> [Variant; 3] {
    let base = plain(m, n, k, layout, false);
    let ragged = ragged_everything(base, i);
    let split = Variant {
        split_k: Some(3),
        ..ragged
    };
    [base, ragged, split]
}

/// A few shapes through the general kernel, forced, f32, fp16 and bf16, both B layouts: plain,
/// ragged (odd leading dimensions and offset, batch, epilogue) and split in k, with partial
/// tiles along m, n and k and a C tile staged through shared memory for its stores. Small
/// enough for compute-sanitizer (`--kernel-name kns=gemm_general_`), with no cuBLAS in the
/// process.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn general_sanitizer_subset() {
    let (stream, gemm) = open();
    for layout in [BLayout::Kn, BLayout::Nk] {
        for (i, &(m, n, k)) in [(127, 129, 131), (3, 70, 33), (65, 5, 300), (130, 64, 17)]
            .iter()
            .enumerate()
        {
            let seed = 9900 + i as u64;
            for v in plain_ragged_and_split(m, n, k, layout, i) {
                check::<f32>(&stream, &gemm, v, Some("general"), seed).expect("runs");
                check::<half::f16>(&stream, &gemm, v, Some("general"), seed).expect("runs");
                check::<half::bf16>(&stream, &gemm, v, Some("general"), seed).expect("runs");
            }
        }
    }
}

/// A few shapes through `general_mma`, forced, fp16 and bf16, both B layouts: plain, ragged
/// (odd leading dimensions and offset, batch, epilogue) and split in k, with partial tiles along
/// m, n and k. Small enough for compute-sanitizer's racecheck (`--kernel-regex
/// kns=general_mma`), with no cuBLAS in the process.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn general_mma_sanitizer_subset() {
    let (stream, gemm) = open();
    for layout in [BLayout::Kn, BLayout::Nk] {
        for (i, &(m, n, k)) in [(127, 129, 131), (3, 70, 33), (65, 5, 300)]
            .iter()
            .enumerate()
        {
            let seed = 9700 + i as u64;
            for v in plain_ragged_and_split(m, n, k, layout, i) {
                check::<half::f16>(&stream, &gemm, v, Some("general_mma"), seed).expect("runs");
                check::<half::bf16>(&stream, &gemm, v, Some("general_mma"), seed).expect("runs");
            }
        }
    }
}

/// A few shapes through `v13_m64` and `v13_m32`, forced, plain and split: edge tiles along m,
/// n and k, for compute-sanitizer (`--kernel-regex kns=v13_m`), with no cuBLAS in the process.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn v13_short_m_sanitizer_subset() {
    let (stream, gemm) = open();
    for (kernel, rows) in [("v13_m64", [64, 33, 1]), ("v13_m32", [32, 17, 1])] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            for (i, (m, (n, k))) in rows
                .into_iter()
                .zip([(256, 300), (129, 1031), (3, 17)])
                .enumerate()
            {
                let base = plain(m, n, k, layout, false);
                let seed = 9500 + i as u64;
                check::<f32>(&stream, &gemm, base, Some(kernel), seed).expect("runs");
                let split = Variant {
                    split_k: Some(3),
                    ..everything_on(base, i)
                };
                check::<f32>(&stream, &gemm, split, Some(kernel), seed).expect("runs");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_mma_f16() {
    thin_mma_sweep::<half::f16>("thin_m_mma");
    thin_mma_sweep::<half::f16>("thin_n_mma");
}

/// `thin_m_mma` with B `[k, n]` at n large enough for blocks of two and four warps side by
/// side along n (`gemm_geometry::thin::kn_column_warps`), n ragged so that the last block's
/// warps lie partly or wholly past n, k ragged, plain and with everything on, fp16 and bf16;
/// and dispatch choosing it there.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_mma_wide_column_blocks() {
    use gemm_geometry::thin::kn_column_warps;
    let (stream, gemm) = open();
    let mut checks = 0;
    for (i, &(m, n, k)) in [
        (1, 8104, 40),
        (8, 8192, 263),
        (5, 8200, 96),
        (3, 16400, 40),
        (8, 16384, 48),
        (1, 24600, 263),
    ]
    .iter()
    .enumerate()
    {
        eprintln!("{m}×{n}×{k}: {} column warps", kn_column_warps(n as u32));
        let seed = 7700 + i as u64;
        let base = Variant {
            pad: None,
            ..plain(m, n, k, BLayout::Kn, false)
        };
        for v in [base, everything_on(base, i)] {
            for entry in [
                check::<half::f16>(&stream, &gemm, v, Some("thin_m_mma"), seed),
                check::<half::bf16>(&stream, &gemm, v, Some("thin_m_mma"), seed),
                check::<half::f16>(&stream, &gemm, v, None, seed),
            ] {
                let entry = entry.unwrap_or_else(|| panic!("thin_m_mma refused {v:?}"));
                assert!(entry.starts_with("gemm_thin_m_mma_"), "{entry}");
                checks += 1;
            }
        }
    }
    assert!(checks > 0);
    eprintln!("thin_m_mma wide column blocks: {checks} checks");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m16_mma_f16() {
    thin_mma_sweep::<half::f16>("thin_m16_mma");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m16_mma_bf16() {
    thin_mma_sweep::<half::bf16>("thin_m16_mma");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_mma_bf16() {
    thin_mma_sweep::<half::bf16>("thin_m_mma");
    thin_mma_sweep::<half::bf16>("thin_n_mma");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m_f32() {
    thin_sweep::<f32>("thin_m", false);
    thin_sweep::<f32>("thin_m", true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m16_f32() {
    thin_sweep::<f32>("thin_m16", false);
    thin_sweep::<f32>("thin_m16", true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m_f16() {
    thin_sweep::<half::f16>("thin_m", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m_bf16() {
    thin_sweep::<half::bf16>("thin_m", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_n_f32() {
    thin_sweep::<f32>("thin_n", false);
    thin_sweep::<f32>("thin_n", true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_n_rows_every_type() {
    // The short-rows kernel forced over the thin_n sweep (k up to 4097, past the slices of 32,
    // and every epilogue variant), in each element type (it has no TF32 entries).
    thin_sweep::<f32>("thin_n_rows", false);
    thin_sweep::<half::f16>("thin_n_rows", false);
    thin_sweep::<half::bf16>("thin_n_rows", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_n_f16() {
    thin_sweep::<half::f16>("thin_n", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_n_bf16() {
    thin_sweep::<half::bf16>("thin_n", false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_kernels_on_the_portable_module() {
    let (stream, gemm) = open_portable();
    // m = 1 and n = 2: the f32 entries' matrix–vector path.
    for (kernel, (m, n, k)) in [
        ("thin_m", (3, 4097, 4097)),
        ("thin_m", (1, 4097, 4097)),
        ("thin_n", (2999, 5, 4097)),
        ("thin_n", (2999, 2, 4097)),
        ("thin_m16", (13, 4097, 4097)),
    ] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // The wide f32 kernel serves B [n, k] only.
            if kernel == "thin_m16" && layout == BLayout::Kn {
                continue;
            }
            let v = Variant {
                pad: None,
                offset: 8,
                batch: 2,
                beta: 0.5,
                bias: true,
                activation: Some(Activation::GeluTanh),
                ..plain(m, n, k, layout, false)
            };
            for (seed, v) in [
                v,
                Variant {
                    pad: Some(3),
                    offset: 1,
                    ..v
                },
            ]
            .into_iter()
            .enumerate()
            {
                check::<f32>(&stream, &gemm, v, Some(kernel), seed as u64).expect("runs");
                if kernel == "thin_m16" {
                    continue;
                }
                check::<half::f16>(&stream, &gemm, v, Some(kernel), seed as u64).expect("runs");
                check::<half::bf16>(&stream, &gemm, v, Some(kernel), seed as u64).expect("runs");
            }
        }
    }
}

/// C of one call, as bits.
fn c_bits<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    desc: &MatmulDesc<'_, T>,
    c_len: usize,
) -> Vec<f64> {
    let mut c = stream.alloc_zeros::<T>(c_len).unwrap();
    gemm.matmul(a, b, &mut c, desc).unwrap();
    stream
        .clone_dtoh(&c)
        .unwrap()
        .iter()
        .map(|x| x.to_f64())
        .collect()
}

/// `kernel` (a thin kernel with B `[k, n]`) forced at 2, 3, 5 and 64 slices of k over each of
/// `shapes`, plain, everything-on and (where its rows may be unaligned: `thin_m`) ragged,
/// against the f64 reference, counting the entries in `ran`; then 3 slices run twice must give
/// the same bits.
fn forced_kn_splits<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    kernel: &str,
    shapes: &[(usize, usize, usize)],
    first_seed: u64,
    ran: &mut std::collections::BTreeMap<String, usize>,
) {
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        let seed = first_seed + i as u64;
        let base = plain(m, n, k, BLayout::Kn, false);
        let mut variants = vec![base, everything_on(base, i)];
        if kernel == "thin_m" {
            variants.push(ragged_everything(base, i));
        }
        for v in variants {
            for slices in [2, 3, 5, 64] {
                let v = Variant {
                    split_k: Some(slices),
                    ..v
                };
                let entry = check::<T>(stream, gemm, v, Some(kernel), seed)
                    .unwrap_or_else(|| panic!("{kernel} refused {v:?}"));
                assert!(entry.starts_with(&format!("gemm_{kernel}_")), "{entry}");
                *ran.entry(entry).or_default() += 1;
            }
        }
        let forced = Variant {
            split_k: Some(3),
            ..base
        };
        let first = run_bits::<T>(stream, gemm, forced, seed).expect("a kernel splits it");
        let second = run_bits::<T>(stream, gemm, forced, seed).expect("ran before");
        assert!(
            first == second,
            "{forced:?}: a split product changed between runs"
        );
    }
}

/// The thin kernels with B `[k, n]` split in k: the column-slices kernel (`thin_m`) and, in
/// fp16 and bf16, the tensor-core column body (`thin_m_mma`), forced with several slice counts
/// on plain, everything-on and (`thin_m`) ragged variants (partial column chunks, k past whole
/// steps, slices of unequal length), against the f64 reference; a split run twice gives the
/// same bits; and dispatch splits a matrix–vector product by itself.
fn thin_m_kn_split_for<T: GemmElement>() {
    let (stream, gemm) = open();
    let mut ran = std::collections::BTreeMap::<String, usize>::new();
    let column_slices = [
        (1, 4096, 4096),
        (3, 129, 2000),
        (8, 300, 1025),
        (1, 1, 1000),
        (5, 4097, 1537),
    ];
    forced_kn_splits::<T>(&stream, &gemm, "thin_m", &column_slices, 7100, &mut ran);
    if T::DTYPE != DType::F32 {
        // The tensor-core column body: rows on 16-byte boundaries (n and k multiples of 8),
        // n past whole 32-column blocks, k past whole 16-row steps, wide blocks (n = 8200).
        let column_body = [
            (1, 4096, 4096),
            (3, 264, 1000),
            (8, 8200, 2056),
            (5, 1032, 3000),
        ];
        forced_kn_splits::<T>(&stream, &gemm, "thin_m_mma", &column_body, 7300, &mut ran);
    }
    // Dispatch splits a matrix–vector product by itself: f32's thin_m at 1 × 4096 × 4096 (128
    // blocks of 32 columns) in two, thin_m_mma at 1 × 2048 × 8192 (64 blocks of one warp's
    // 32 columns) in four.
    let (kernel, (n, k), slices) = if T::DTYPE == DType::F32 {
        ("thin_m", (4096, 4096), 2)
    } else {
        ("thin_m_mma", (2048, 8192), 4)
    };
    let chosen = check::<T>(
        &stream,
        &gemm,
        plain(1, n, k, BLayout::Kn, false),
        None,
        7199,
    )
    .expect("dispatch runs");
    assert_eq!(
        chosen,
        format!("gemm_{kernel}_{}_kn in {slices} slices", T::DTYPE.label())
    );
    *ran.entry(format!("{chosen} (dispatch)")).or_default() += 1;
    eprintln!("{:?}: thin_m split checks: {ran:?}", T::DTYPE);
    assert!(ran.keys().any(|entry| entry.contains("slices")));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_m_kn_split_every_type() {
    thin_m_kn_split_for::<f32>();
    thin_m_kn_split_for::<half::f16>();
    thin_m_kn_split_for::<half::bf16>();
}

/// Two runs of the same thin call give the same bits: every reduction has a fixed order.
fn thin_runs_are_bit_identical_for<T: GemmElement>() {
    let (stream, gemm) = open();
    for (kernel, (m, n, k)) in [
        ("thin_m", (8, 4097, 8191)),
        ("thin_m16", (16, 4097, 8191)),
        ("thin_m", (1, 4096, 4096)),
        ("thin_n", (2999, 8, 8191)),
        ("thin_n", (4096, 1, 4096)),
        ("thin_n_rows", (2999, 8, 200)),
        ("thin_n_rows", (65537, 3, 17)),
    ] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // thin_m16 is the f32 kernel for B [n, k] only.
            if kernel == "thin_m16" && (layout == BLayout::Kn || T::DTYPE != DType::F32) {
                continue;
            }
            let b_len = n * k;
            let (a, _) = rounded::<T>(&random(m * k, 7));
            let (b, _) = rounded::<T>(&random(b_len, 8));
            let a = stream.clone_htod(&a).unwrap();
            let b = stream.clone_htod(&b).unwrap();
            let desc = MatmulDesc::<T>::new(m, n, k)
                .b_layout(layout)
                .kernel(kernel);
            let first = c_bits(&stream, &gemm, &a, &b, &desc, m * n);
            for _ in 0..3 {
                let again = c_bits(&stream, &gemm, &a, &b, &desc, m * n);
                // Compared as f64 widenings of the stored values, which are exact and
                // distinct for distinct bit patterns (no NaN here).
                assert!(
                    first == again,
                    "{kernel} {m}×{n}×{k} {layout:?}: runs differ"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_runs_are_bit_identical() {
    thin_runs_are_bit_identical_for::<f32>();
    thin_runs_are_bit_identical_for::<half::f16>();
    thin_runs_are_bit_identical_for::<half::bf16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn thin_beta_zero_never_reads_c_and_nan_inputs_propagate() {
    let (stream, gemm) = open();
    // The f32 matrix–vector path (m or n at most 2) with k long enough for its unrolled
    // 16-byte loads; the sums stay exact (powers of two).
    for (kernel, (m, n, k)) in [
        ("thin_m", (5, 90, 33)),
        ("thin_m", (1, 90, 2048)),
        ("thin_m", (2, 90, 2048)),
        ("thin_n", (70, 5, 33)),
        ("thin_n", (70, 1, 2048)),
        ("thin_n", (70, 2, 2048)),
        ("thin_n_rows", (70, 5, 33)),
    ] {
        for layout in [BLayout::Kn, BLayout::Nk] {
            // A NaN in row 2 of A (row m − 1 when m < 3), C full of NaN, beta 0: only that
            // row of C is NaN.
            let nan_row = 2.min(m - 1);
            let mut a_host = vec![0.5f32; m * k];
            a_host[nan_row * k + 3] = f32::NAN;
            let a = stream.clone_htod(&a_host).unwrap();
            let b = stream.clone_htod(&vec![0.25f32; k * n]).unwrap();
            let mut c = stream.clone_htod(&vec![f32::NAN; m * n]).unwrap();
            let desc = MatmulDesc::new(m, n, k).b_layout(layout).kernel(kernel);
            gemm.matmul(&a, &b, &mut c, &desc).unwrap();
            let out = stream.clone_dtoh(&c).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let x = out[i * n + j];
                    if i == nan_row {
                        assert!(x.is_nan(), "{kernel} {layout:?} ({i}, {j})");
                    } else {
                        assert_eq!(x, 0.5 * 0.25 * k as f32, "{kernel} {layout:?} ({i}, {j})");
                    }
                }
            }
        }
    }
}

/// Split-K shapes: few tiles, long k (aligned and ragged), and one that dispatch splits by
/// itself.
fn split_shapes() -> Vec<(usize, usize, usize)> {
    vec![
        (1, 1, 1000),
        (16, 512, 4096),
        (17, 300, 1025),
        (130, 257, 2000),
        (64, 512, 8192),
        (17, 17, 65537),
    ]
}

/// Every split-K kernel of `T` (with `tf32`), forced with several slice counts, on plain,
/// aligned-with-everything and ragged variants; each must match the reference, and a split
/// product must be the same bit for bit when run again. Dispatch must split the few-tile
/// shapes by itself on the kernels that can.
fn split_sweep<T: GemmElement>(tf32: bool) {
    let (stream, gemm) = open();
    let dtype = if tf32 { DType::Tf32 } else { T::DTYPE };
    let mut ran = std::collections::BTreeMap::<String, usize>::new();
    for (i, (m, n, k)) in split_shapes().into_iter().enumerate() {
        for layout in [BLayout::Kn, BLayout::Nk] {
            let seed = 9000 + i as u64;
            let base = plain(m, n, k, layout, tf32);
            let everything = Variant {
                pad: None,
                gap: 8,
                offset: 8,
                batch: 3,
                alpha: 0.5,
                beta: -1.5,
                bias: true,
                activation: Some(Activation::GeluTanh),
                ..base
            };
            let ragged = Variant {
                pad: Some(3),
                gap: 5,
                offset: 1,
                batch: 2,
                beta: 1.0,
                activation: Some(Activation::LeakyRelu(0.1)),
                ..base
            };
            for spec in Gemm::kernels()
                .iter()
                .filter(|s| s.split_k && s.dtype == dtype && s.b_layout == layout)
            {
                for (j, v) in [base, everything, ragged].into_iter().enumerate() {
                    for slices in [2, 5, 64, 256] {
                        let v = Variant {
                            split_k: Some(slices),
                            ..v
                        };
                        let seed = seed + 100 * j as u64;
                        if let Some(entry) = check::<T>(&stream, &gemm, v, Some(spec.name), seed) {
                            *ran.entry(entry).or_default() += 1;
                        }
                    }
                }
            }
            // Dispatch alone, and the same product twice: identical bits.
            let auto = check::<T>(&stream, &gemm, base, None, seed).expect("dispatch runs");
            *ran.entry(format!("{auto} (dispatch)")).or_default() += 1;
            let forced = Variant {
                split_k: Some(7),
                ..base
            };
            if let Some(first) = run_bits::<T>(&stream, &gemm, forced, seed) {
                let second = run_bits::<T>(&stream, &gemm, forced, seed).expect("ran before");
                assert!(
                    first == second,
                    "{forced:?}: a split product changed between runs"
                );
            }
        }
    }
    eprintln!("{dtype:?}: split-K checks: {ran:?}");
    assert!(
        ran.keys().any(|entry| entry.contains("slices")),
        "{dtype:?}: no split ran"
    );
}

/// C's bits after running `v` (contiguous, beta 0) once, or `None` if no kernel can split it
/// as forced.
fn run_bits<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    v: Variant,
    seed: u64,
) -> Option<Vec<u64>> {
    let b_len = v.k * v.n;
    let a = stream
        .clone_htod(&rounded::<T>(&random(v.m * v.k, seed)).0)
        .expect("upload");
    let b = stream
        .clone_htod(&rounded::<T>(&random(b_len, seed + 1)).0)
        .expect("upload");
    let mut c = stream.alloc_zeros::<T>(v.m * v.n).expect("alloc");
    let mut desc = MatmulDesc::<T>::new(v.m, v.n, v.k).b_layout(v.layout);
    if v.tf32 {
        desc = desc.tf32();
    }
    if let Some(slices) = v.split_k {
        desc = desc.split_k(slices);
    }
    match gemm.matmul(&a, &b, &mut c, &desc) {
        Ok(()) => {}
        Err(GemmError::NoKernel { .. }) => return None,
        Err(e) => panic!("{v:?}: {e}"),
    }
    let out = stream.clone_dtoh(&c).expect("download");
    Some(out.iter().map(|x| x.to_f64().to_bits()).collect())
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn split_k_f32() {
    split_sweep::<f32>(false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn split_k_tf32() {
    split_sweep::<f32>(true);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn split_k_f16() {
    split_sweep::<half::f16>(false);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn split_k_bf16() {
    split_sweep::<half::bf16>(false);
}
