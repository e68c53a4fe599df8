//! CUDA graphs of library calls (`Gemm::capture`, `GemmGraph::launch`): sequences of quantized
//! layers at decode, batched-decode and prefill batch sizes, and `Gemm::matmul` products,
//! captured once and replayed with new inputs, each replay checked against eager calls on the
//! same inputs; graphs outliving the weights and the `Gemm` they were captured from; and the
//! refusals, each a typed error that leaves the stream usable.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_graph_gpu -- --ignored`.

mod common;

use common::{quantized_tolerance, random};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use half::{bf16, f16};
use rust_gemm::quant::fast::{ActivationElement, Path};
use rust_gemm::quant::format::{WeightFormat, WeightRounding, quantize};
use rust_gemm::{
    BLayout, Epilogue, Gemm, GemmElement, GemmError, GemmGraph, Group, MatmulDesc,
    QuantizedActivation, QuantizedWeights,
};
use std::sync::Arc;

/// A context with cudarc's event tracking off, a stream of its own on it and a `Gemm` on that
/// stream: what a capture needs (with tracking on and several streams, every buffer access
/// would wait on events recorded outside the capture). Every buffer of these tests is used on
/// this one stream only, so nothing needs the tracking's ordering.
fn capturable() -> (Arc<CudaStream>, Gemm) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    // SAFETY: no buffer exists on this context object yet, and the tests use one stream.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().expect("a stream");
    let gemm = common::gemm_on(&stream);
    (stream, gemm)
}

/// One quantized layer: its weights and what bounds its products' rounding.
struct Layer {
    qw: QuantizedWeights,
    sums: Sums,
}

/// A layer's shape, `k × n`, and per column the sum of its weights' magnitudes (dequantized
/// exactly), which bounds how far two summation orders of a product can drift apart.
struct Sums {
    k: usize,
    n: usize,
    column_magnitude: Vec<f64>,
}

impl Layer {
    /// Random weights scaled by 1/√k, so that activations stay near 1 through a sequence.
    fn new(gemm: &Gemm, k: usize, n: usize, format: WeightFormat, seed: u64) -> Layer {
        let scale = 1.0 / (k as f64).sqrt();
        let w: Vec<f32> = random(k * n, seed)
            .iter()
            .map(|&v| (v * scale) as f32)
            .collect();
        let zero_points = matches!(format, WeightFormat::Unsigned(_));
        let group = 128;
        let qw = if zero_points {
            QuantizedWeights::quantize_with_zero_points(gemm, &w, k, n, format, Group::Rows(group))
        } else {
            QuantizedWeights::quantize(gemm, &w, k, n, format, Group::Rows(group))
        }
        .unwrap_or_else(|e| panic!("{format} {k}×{n}: {e}"));
        let exact = quantize(&w, k, n, format, group, zero_points)
            .unwrap()
            .dequantize_as(WeightRounding::Exact);
        let mut column_magnitude = vec![0.0f64; n];
        for row in exact.chunks_exact(n) {
            for (sum, &w) in column_magnitude.iter_mut().zip(row) {
                *sum += w.abs() as f64;
            }
        }
        Layer {
            qw,
            sums: Sums {
                k,
                n,
                column_magnitude,
            },
        }
    }
}

/// The layers every sequence runs: 4096 → 1024 → 12288 → 1024, in three formats. On an H100
/// at m = 16 and 64 the middle layer's 48 tiles are shared by two blocks each (its sums are
/// bit-reproducible), at m = 1 by five, and the others' 4 tiles by 32 or more.
fn layers(gemm: &Gemm) -> Vec<Layer> {
    let e2m1 = WeightFormat::Float {
        exponent: 2,
        mantissa: 1,
    };
    vec![
        Layer::new(gemm, 4096, 1024, WeightFormat::Unsigned(4), 11),
        Layer::new(gemm, 1024, 12288, e2m1, 12),
        Layer::new(gemm, 12288, 1024, WeightFormat::Signed(8), 13),
    ]
}

/// A sequence's device buffers at m rows: the input, each layer's output, and each layer's
/// output again for the eager checks.
struct Buffers<T: QuantizedActivation> {
    m: usize,
    x: CudaSlice<T>,
    outputs: Vec<CudaSlice<T>>,
    checks: Vec<CudaSlice<T>>,
}

impl<T: QuantizedActivation> Buffers<T> {
    fn new(stream: &Arc<CudaStream>, layers: &[Layer], m: usize) -> Self {
        let zeros = |len| stream.alloc_zeros::<T>(len).expect("fits");
        Buffers {
            m,
            x: zeros(m * layers[0].sums.k),
            outputs: layers.iter().map(|l| zeros(m * l.sums.n)).collect(),
            checks: layers.iter().map(|l| zeros(m * l.sums.n)).collect(),
        }
    }
}

/// Queues the sequence: x → layer 0 → outputs[0] → layer 1 → … (eagerly, or into a capture).
fn run_sequence<T: QuantizedActivation>(
    gemm: &Gemm,
    layers: &[Layer],
    x: &CudaSlice<T>,
    outputs: &mut [CudaSlice<T>],
    m: usize,
) -> Result<(), GemmError> {
    for (i, layer) in layers.iter().enumerate() {
        let (before, after) = outputs.split_at_mut(i);
        let input = if i == 0 { x } else { &before[i - 1] };
        layer.qw.matmul(gemm, input, &mut after[0], m)?;
    }
    Ok(())
}

/// Bits of an element, exact for every value (f16 and bf16 widen to f64 exactly).
fn bits<T: GemmElement>(v: T) -> u64 {
    v.to_f64().to_bits()
}

/// Checks one layer's output from a graph replay against the same layer run eagerly on the
/// same input (`input`, row-major `m × k`): bit for bit where the product is reproducible
/// (`QuantizedWeights::reproducible`), else within twice the accumulation error bound of any
/// summation order plus the output's rounding.
fn check_layer<T: QuantizedActivation>(
    what: &str,
    layer: &Sums,
    m: usize,
    input: &[T],
    replayed: &[T],
    eager: &[T],
    reproducible: bool,
) {
    let activation = <T as ActivationElement>::TYPE;
    let (k, n) = (layer.k, layer.n);
    for r in 0..m {
        let largest_input = input[r * k..(r + 1) * k]
            .iter()
            .fold(0.0f64, |big, v| big.max(v.to_f64().abs()));
        for c in 0..n {
            let (g, e) = (replayed[r * n + c], eager[r * n + c]);
            assert!(
                g.to_f64().is_finite(),
                "{what} ({r}, {c}): the replay left {} (its output was poisoned with NaN)",
                g.to_f64()
            );
            if reproducible {
                assert_eq!(
                    bits(g),
                    bits(e),
                    "{what} ({r}, {c}): replay {} vs eager {}",
                    g.to_f64(),
                    e.to_f64()
                );
            } else {
                // Σ|x·w| ≤ max|x| · Σ|w| (with room for the kernels' fp16/bf16 rounding of w).
                let magnitude = largest_input * layer.column_magnitude[c] * (1.0 + 1.0 / 64.0);
                let value = g.to_f64().abs().max(e.to_f64().abs());
                let allowed = 2.0 * quantized_tolerance(value, magnitude, k, activation);
                assert!(
                    (g.to_f64() - e.to_f64()).abs() <= allowed,
                    "{what} ({r}, {c}): replay {} vs eager {} (allowed {allowed:e})",
                    g.to_f64(),
                    e.to_f64()
                );
            }
        }
    }
}

/// Counts of layer products checked bit for bit and within the bound.
#[derive(Default, Debug)]
struct Checked {
    bitwise: usize,
    bounded: usize,
    /// Replays whose whole sequence was compared with an eager run of it, bit for bit.
    whole_sequences: usize,
}

/// Writes a new random x, poisons the outputs, replays `graph`, and checks every layer's output
/// against the layer run eagerly on the replay's own input; where every layer is reproducible,
/// also the whole sequence run eagerly from x.
fn replay_and_check<T: QuantizedActivation>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    layers: &[Layer],
    buffers: &mut Buffers<T>,
    graph: &GemmGraph,
    seed: u64,
    checked: &mut Checked,
) {
    let m = buffers.m;
    let what = |i: usize| {
        format!(
            "{} m {m} layer {i} ({}×{}, {:?}), seed {seed}",
            <T as ActivationElement>::TYPE,
            layers[i].sums.k,
            layers[i].sums.n,
            layers[i].qw.path(gemm, m)
        )
    };
    let x: Vec<T> = random(m * layers[0].sums.k, seed)
        .iter()
        .map(|&v| T::from_f64(v))
        .collect();
    // Outside the graph: what changes from one replay to the next is what the buffers hold.
    stream.memcpy_htod(&x, &mut buffers.x).unwrap();
    for output in &mut buffers.outputs {
        let len = output.len();
        stream
            .memcpy_htod(&vec![T::from_f64(f64::NAN); len], output)
            .unwrap();
    }
    // SAFETY: every buffer the graph uses is alive in `buffers` and used on this stream only.
    unsafe { graph.launch() }.unwrap();
    let replayed: Vec<Vec<T>> = buffers
        .outputs
        .iter()
        .map(|o| stream.clone_dtoh(o).unwrap())
        .collect();
    let mut all_reproducible = true;
    for (i, layer) in layers.iter().enumerate() {
        let input = if i == 0 {
            &buffers.x
        } else {
            &buffers.outputs[i - 1]
        };
        layer
            .qw
            .matmul(gemm, input, &mut buffers.checks[i], m)
            .unwrap();
        let eager = stream.clone_dtoh(&buffers.checks[i]).unwrap();
        let input = if i == 0 { &x } else { &replayed[i - 1] };
        let reproducible = layer.qw.reproducible::<T>(gemm, m).unwrap();
        all_reproducible &= reproducible;
        check_layer(
            &what(i),
            &layer.sums,
            m,
            input,
            &replayed[i],
            &eager,
            reproducible,
        );
        if reproducible {
            checked.bitwise += 1;
        } else {
            checked.bounded += 1;
        }
    }
    if all_reproducible {
        // The whole sequence eagerly from x, into the check buffers: the same bits as the replay.
        let Buffers { x, checks, .. } = buffers;
        run_sequence(gemm, layers, x, checks, m).unwrap();
        let last = stream.clone_dtoh(checks.last().unwrap()).unwrap();
        let replayed = replayed.last().unwrap();
        for (j, (g, e)) in replayed.iter().zip(&last).enumerate() {
            assert_eq!(
                bits(*g),
                bits(*e),
                "{} m {m}, whole sequence, element {j}: replay {} vs eager {}",
                <T as ActivationElement>::TYPE,
                g.to_f64(),
                e.to_f64()
            );
        }
        checked.whole_sequences += 1;
    }
}

/// Captures the sequence at m = 1, 16, 64 and 300 (decode, batched decode where the device has
/// it, prefill) and replays each graph three times with new inputs; then, after the larger m
/// have grown the `Gemm`'s quantized scratch and split-K workspace, replays every graph again: each
/// kept the buffers it was captured with.
fn graph_sequences<T: QuantizedActivation>() {
    let (stream, gemm) = capturable();
    let layers = layers(&gemm);
    let mut checked = Checked::default();
    let mut graphs: Vec<(Buffers<T>, GemmGraph)> = Vec::new();
    let mut paths = Vec::new();
    for m in [1, 16, 64, 300] {
        let mut buffers = Buffers::<T>::new(&stream, &layers, m);
        for layer in &layers {
            layer.qw.reserve(&gemm, m).unwrap();
            paths.push(layer.qw.path(&gemm, m));
        }
        if layers.iter().any(|l| l.qw.path(&gemm, m) == Path::Prefill) {
            // The prefill GEMM makes its TMA descriptors and split-K workspace for these
            // buffers on its first call; decode needs nothing beyond `reserve`.
            let Buffers { x, outputs, .. } = &mut buffers;
            run_sequence(&gemm, &layers, x, outputs, m).unwrap();
        }
        let graph = {
            let Buffers { x, outputs, .. } = &mut buffers;
            gemm.capture(|gemm| run_sequence(gemm, &layers, x, outputs, m))
                .unwrap_or_else(|e| panic!("capturing m = {m}: {e}"))
        };
        graph.upload().unwrap();
        for replay in 0..3 {
            let seed = 1000 * m as u64 + replay;
            replay_and_check(
                &stream,
                &gemm,
                &layers,
                &mut buffers,
                &graph,
                seed,
                &mut checked,
            );
        }
        graphs.push((buffers, graph));
    }
    for (buffers, graph) in &mut graphs {
        let seed = 7 + buffers.m as u64;
        replay_and_check(&stream, &gemm, &layers, buffers, graph, seed, &mut checked);
    }
    gemm.synchronize().expect("no fault");
    eprintln!(
        "{}: paths {paths:?}; layer products checked bit for bit {}, within the bound {}; whole \
         sequences bit for bit {}",
        <T as ActivationElement>::TYPE,
        checked.bitwise,
        checked.bounded,
        checked.whole_sequences
    );
    assert!(paths.contains(&Path::Decode) && paths.contains(&Path::Prefill));
    // Prefill (m = 300) is always reproducible: its sequences were compared whole.
    assert!(checked.whole_sequences >= 4, "{checked:?}");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn quantized_sequences_replay_like_eager_calls_fp16() {
    graph_sequences::<f16>();
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn quantized_sequences_replay_like_eager_calls_bf16() {
    graph_sequences::<bf16>();
}

/// Random device values of type `T` and their host copy.
fn device_random<T: GemmElement>(
    stream: &Arc<CudaStream>,
    len: usize,
    seed: u64,
) -> (Vec<T>, CudaSlice<T>) {
    let host: Vec<T> = random(len, seed).iter().map(|&v| T::from_f64(v)).collect();
    let device = stream.clone_htod(&host).unwrap();
    (host, device)
}

/// `Gemm::matmul` products of every element type in one graph (split-K, TMA kernels, a bias
/// and GELU, TF32 with B `[k, n]`, whose kernel may copy B transposed first): after an eager
/// warm-up, each replay with new A's gives the bits eager calls give (the library's GEMMs
/// have no atomics).
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn matmul_products_replay_bit_for_bit() {
    let (stream, gemm) = capturable();
    let (m16, n16, k16) = (64, 4096, 4096);
    let (_, mut a16) = device_random::<f16>(&stream, m16 * k16, 1);
    let (_, b16) = device_random::<f16>(&stream, k16 * n16, 2);
    let mut c16 = stream.alloc_zeros::<f16>(m16 * n16).unwrap();
    let d16 = MatmulDesc::new(m16, n16, k16);
    let (mb, nb, kb) = (16, 2048, 4096);
    let (_, mut abf) = device_random::<bf16>(&stream, mb * kb, 3);
    let (_, bbf) = device_random::<bf16>(&stream, nb * kb, 4);
    let (_, bias) = device_random::<bf16>(&stream, nb, 5);
    let mut cbf = stream.alloc_zeros::<bf16>(mb * nb).unwrap();
    let dbf = MatmulDesc::new(mb, nb, kb)
        .b_layout(BLayout::Nk)
        .epilogue(Epilogue::bias(&bias).gelu_tanh());
    let (mt, nt, kt) = (256, 2048, 2048);
    let (_, mut at) = device_random::<f32>(&stream, mt * kt, 6);
    let (_, bt) = device_random::<f32>(&stream, kt * nt, 7);
    let mut ct = stream.alloc_zeros::<f32>(mt * nt).unwrap();
    let dt = MatmulDesc::new(mt, nt, kt).tf32();
    let (mf, nf, kf) = (33, 1000, 777);
    let (_, mut af) = device_random::<f32>(&stream, mf * kf, 8);
    let (_, bf) = device_random::<f32>(&stream, kf * nf, 9);
    let mut cf = stream.alloc_zeros::<f32>(mf * nf).unwrap();
    let df = MatmulDesc::new(mf, nf, kf);
    for (plan, what) in [
        (gemm.plan(&a16, &b16, &c16, &d16).unwrap(), "f16"),
        (gemm.plan(&abf, &bbf, &cbf, &dbf).unwrap(), "bf16"),
        (gemm.plan(&at, &bt, &ct, &dt).unwrap(), "tf32"),
        (gemm.plan(&af, &bf, &cf, &df).unwrap(), "f32"),
    ] {
        eprintln!("{what}: {}", plan.reason);
    }
    let mut products = |gemm: &Gemm| -> Result<(), GemmError> {
        gemm.matmul(&a16, &b16, &mut c16, &d16)?;
        gemm.matmul(&abf, &bbf, &mut cbf, &dbf)?;
        gemm.matmul(&at, &bt, &mut ct, &dt)?;
        gemm.matmul(&af, &bf, &mut cf, &df)
    };
    products(&gemm).unwrap();
    let graph = gemm.capture(&mut products).unwrap();
    drop(products);
    for replay in 0..3u64 {
        let seed = 100 + 10 * replay;
        stream
            .memcpy_htod(&device_random::<f16>(&stream, m16 * k16, seed).0, &mut a16)
            .unwrap();
        stream
            .memcpy_htod(
                &device_random::<bf16>(&stream, mb * kb, seed + 1).0,
                &mut abf,
            )
            .unwrap();
        stream
            .memcpy_htod(&device_random::<f32>(&stream, mt * kt, seed + 2).0, &mut at)
            .unwrap();
        stream
            .memcpy_htod(&device_random::<f32>(&stream, mf * kf, seed + 3).0, &mut af)
            .unwrap();
        // SAFETY: every buffer the graph uses is alive and used on this stream only.
        unsafe { graph.launch() }.unwrap();
        let replayed = (
            stream.clone_dtoh(&c16).unwrap(),
            stream.clone_dtoh(&cbf).unwrap(),
            stream.clone_dtoh(&ct).unwrap(),
            stream.clone_dtoh(&cf).unwrap(),
        );
        // The same calls eagerly, on the same buffers (beta = 0: C is not read).
        gemm.matmul(&a16, &b16, &mut c16, &d16).unwrap();
        gemm.matmul(&abf, &bbf, &mut cbf, &dbf).unwrap();
        gemm.matmul(&at, &bt, &mut ct, &dt).unwrap();
        gemm.matmul(&af, &bf, &mut cf, &df).unwrap();
        let eager = (
            stream.clone_dtoh(&c16).unwrap(),
            stream.clone_dtoh(&cbf).unwrap(),
            stream.clone_dtoh(&ct).unwrap(),
            stream.clone_dtoh(&cf).unwrap(),
        );
        assert_same_bits("f16", &replayed.0, &eager.0);
        assert_same_bits("bf16", &replayed.1, &eager.1);
        assert_same_bits("tf32", &replayed.2, &eager.2);
        assert_same_bits("f32", &replayed.3, &eager.3);
    }
    gemm.synchronize().expect("no fault");
}

fn assert_same_bits<T: GemmElement>(what: &str, replayed: &[T], eager: &[T]) {
    assert_eq!(replayed.len(), eager.len());
    for (i, (g, e)) in replayed.iter().zip(eager).enumerate() {
        assert!(g.to_f64().is_finite(), "{what} element {i}: {}", g.to_f64());
        assert_eq!(
            bits(*g),
            bits(*e),
            "{what} element {i}: replay {} vs eager {}",
            g.to_f64(),
            e.to_f64()
        );
    }
}

/// A graph keeps what it captured: after larger products have replaced the quantized scratch
/// and the `Gemm`'s workspace, and after the `QuantizedWeights` and the `Gemm` themselves are
/// dropped (the TMA descriptors and the kernels' module with them), each replay gives what the
/// eager call before the capture gave.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn graphs_outlive_the_buffers_they_captured() {
    let (stream, gemm) = capturable();
    let Layer { qw, sums } = Layer::new(&gemm, 2048, 4096, WeightFormat::Unsigned(4), 21);
    let (k, n) = (sums.k, sums.n);
    let mut graphs = Vec::new();
    for m in [1, 16, 300] {
        let (x_host, x) = device_random::<f16>(&stream, m * k, 30 + m as u64);
        let mut y = stream.alloc_zeros::<f16>(m * n).unwrap();
        qw.reserve(&gemm, m).unwrap();
        // Eagerly first (prefill makes its GEMM's state for these buffers), then captured.
        qw.matmul(&gemm, &x, &mut y, m).unwrap();
        let eager = stream.clone_dtoh(&y).unwrap();
        let reproducible = qw.reproducible::<f16>(&gemm, m).unwrap();
        let graph = gemm.capture(|gemm| qw.matmul(gemm, &x, &mut y, m)).unwrap();
        graphs.push((m, x_host, x, y, eager, reproducible, graph));
    }
    // Larger products grow the Gemm's quantized scratch and split-K workspace, replacing the
    // buffers the graphs use; then the weights and the Gemm go.
    for m in [64, 256, 2048] {
        let (_, x) = device_random::<f16>(&stream, m * k, 50 + m as u64);
        let mut y = stream.alloc_zeros::<f16>(m * n).unwrap();
        qw.matmul(&gemm, &x, &mut y, m).unwrap();
    }
    drop(qw);
    drop(gemm);
    for (m, x_host, _x, y, eager, reproducible, graph) in &mut graphs {
        let len = y.len();
        stream.memcpy_htod(&vec![f16::NAN; len], y).unwrap();
        // SAFETY: x and y are alive (in `graphs`) and used on this stream only.
        unsafe { graph.launch() }.unwrap();
        let replayed = stream.clone_dtoh(y).unwrap();
        let what = format!("m {m} after the weights and the Gemm were dropped");
        check_layer(&what, &sums, *m, x_host, &replayed, eager, *reproducible);
    }
    stream.synchronize().expect("no fault");
    // Prefill is reproducible: its replay was compared bit for bit.
    assert!(graphs.iter().any(|g| g.0 == 300 && g.5));
}

/// Capture refusals are typed errors that leave the stream usable, and a refused capture can be
/// prepared and retried.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn capture_refusals_are_typed_and_leave_the_stream_usable() {
    let unsupported = |result: Result<GemmGraph, GemmError>, needle: &str| match result {
        Err(GemmError::CaptureUnsupported { what }) => {
            assert!(what.contains(needle), "{needle:?} not in: {what}");
        }
        Err(other) => panic!("expected CaptureUnsupported ({needle}), got {other}"),
        Ok(_) => panic!("expected CaptureUnsupported ({needle}), got a graph"),
    };

    // The legacy default stream cannot be captured.
    let ctx = CudaContext::new(0).unwrap();
    let legacy = common::gemm_on(&ctx.default_stream());
    unsupported(legacy.capture(|_| Ok(())), "legacy default stream");
    drop(legacy);
    // Nor anything while cudarc's event tracking manages several streams (its default).
    let tracked_stream = ctx.new_stream().unwrap();
    assert!(ctx.is_managing_stream_synchronization());
    let tracked = common::gemm_on(&tracked_stream);
    unsupported(tracked.capture(|_| Ok(())), "event tracking");
    drop(tracked);

    let (stream, gemm) = capturable();
    let still_usable = |gemm: &Gemm| {
        assert!(
            !gemm.runtime().capturing().unwrap(),
            "the capture was left open"
        );
        gemm.synchronize().expect("the stream works");
    };
    let (k, n) = (1024, 1024);
    let w: Vec<f32> = random(k * n, 40).iter().map(|&v| v as f32 / 32.0).collect();
    let qw =
        QuantizedWeights::quantize(&gemm, &w, k, n, WeightFormat::Unsigned(4), Group::Rows(128))
            .unwrap();
    let m = 1;
    let (_, x) = device_random::<f16>(&stream, m * k, 41);
    let mut y = stream.alloc_zeros::<f16>(m * n).unwrap();

    // Unprepared scratch: the first product would allocate its workspace.
    unsupported(
        gemm.capture(|gemm| qw.matmul(gemm, &x, &mut y, m)),
        "allocating the decode workspace",
    );
    still_usable(&gemm);
    // Prepared, the same capture works and replays what an eager call computes.
    qw.reserve(&gemm, m).unwrap();
    let graph = gemm.capture(|gemm| qw.matmul(gemm, &x, &mut y, m)).unwrap();
    qw.matmul(&gemm, &x, &mut y, m).unwrap();
    let eager = stream.clone_dtoh(&y).unwrap();
    stream.memcpy_htod(&vec![f16::NAN; m * n], &mut y).unwrap();
    // SAFETY: x and y are alive and used on this stream only.
    unsafe { graph.launch() }.unwrap();
    let replayed = stream.clone_dtoh(&y).unwrap();
    if qw.reproducible::<f16>(&gemm, m).unwrap() {
        assert_same_bits("decode after reserve", &replayed, &eager);
    } else {
        assert!(replayed.iter().all(|v| v.is_finite()));
    }

    // Prefill without an eager call first: on Hopper its GEMM (v18) needs TMA descriptors for
    // these buffers, which a capture cannot upload.
    let mp = 300;
    let (_, xp) = device_random::<f16>(&stream, mp * k, 42);
    let mut yp = stream.alloc_zeros::<f16>(mp * n).unwrap();
    qw.reserve(&gemm, mp).unwrap();
    let prefill = gemm.capture(|gemm| qw.matmul(gemm, &xp, &mut yp, mp));
    if gemm.runtime().ptx_target() == "sm_90a" {
        unsupported(prefill, "TMA descriptors");
    } else if let Err(e) = prefill {
        assert!(matches!(e, GemmError::CaptureUnsupported { .. }), "{e}");
    }
    still_usable(&gemm);

    // A failing call inside: the capture returns its error, typed as it was.
    let short = stream.alloc_zeros::<f16>(k - 1).unwrap();
    match gemm.capture(|gemm| {
        qw.matmul(gemm, &x, &mut y, m)?;
        qw.matmul(gemm, &short, &mut y, m)
    }) {
        Err(GemmError::BufferSize { name: "A", .. }) => {}
        Err(other) => panic!("expected the call's BufferSize, got {other}"),
        Ok(_) => panic!("expected the call's BufferSize, got a graph"),
    }
    still_usable(&gemm);

    // Synchronizing inside a capture, and nested captures.
    unsupported(gemm.capture(|gemm| gemm.synchronize()), "synchronizing");
    still_usable(&gemm);
    unsupported(
        gemm.capture(|gemm| gemm.capture(|_| Ok(())).map(drop)),
        "already capturing",
    );
    still_usable(&gemm);

    // A call from another thread while this one captures is refused; this thread's calls are
    // captured.
    let mut y2 = stream.alloc_zeros::<f16>(m * n).unwrap();
    let graph = gemm
        .capture(|gemm| {
            let other = std::thread::scope(|s| {
                s.spawn(|| qw.matmul(gemm, &x, &mut y2, m))
                    .join()
                    .expect("no panic")
            });
            match other {
                Err(GemmError::CaptureUnsupported { what }) => {
                    assert!(what.contains("another thread"), "{what}")
                }
                other => panic!("expected CaptureUnsupported from the other thread, got {other:?}"),
            }
            qw.matmul(gemm, &x, &mut y, m)
        })
        .unwrap();
    // SAFETY: x and y are alive and used on this stream only.
    unsafe { graph.launch() }.unwrap();
    still_usable(&gemm);

    // A panic inside ends the capture too.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gemm.capture(|gemm| {
            qw.matmul(gemm, &x, &mut y, m)?;
            panic!("inside the capture")
        })
    }));
    assert!(panicked.is_err());
    still_usable(&gemm);
    let graph = gemm.capture(|gemm| qw.matmul(gemm, &x, &mut y, m)).unwrap();
    // SAFETY: x and y are alive and used on this stream only.
    unsafe { graph.launch() }.unwrap();
    still_usable(&gemm);
}
