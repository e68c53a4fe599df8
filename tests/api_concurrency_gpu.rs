//! Eight host threads at once for a minute (`STRESS_SECONDS`, default 60), every result
//! checked, no deadlock (a watchdog fails the test if a phase overruns by a minute):
//!
//! 1. each thread with its own stream and its own `Gemm` (what the API recommends for
//!    concurrent work), running generated calls (`tests/common/fuzz.rs`) and products through
//!    one `QuantizedWeights` shared by all threads;
//! 2. all threads sharing one `Gemm` (its calls queue on its one stream in the order they are
//!    made), with their buffers on their own streams.
//!
//! The `Send`/`Sync` promises themselves are checked at compile time in `tests/api.rs`.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_concurrency_gpu -- --ignored --nocapture`.

mod common;

use common::fuzz::Call;
use common::fuzz_run::run;
use common::{quantized_tolerance, random};
use cudarc::driver::{CudaContext, CudaStream};
use half::f16;
use rust_gemm::quant::fast::{ActivationType, weight_rounding};
use rust_gemm::quant::format::{Quantized, quantize};
use rust_gemm::{Gemm, Group, QuantizedWeights, WeightFormat};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const THREADS: usize = 8;

/// The quantized weights every thread shares, with the host's copy of them (the reference).
struct SharedWeights {
    qw: QuantizedWeights,
    reference: Quantized,
    format: WeightFormat,
    k: usize,
    n: usize,
}

fn shared_weights(gemm: &Gemm) -> SharedWeights {
    let (k, n, group) = (512, 96, 128);
    let format = WeightFormat::Unsigned(4);
    let w: Vec<f32> = random(k * n, 77).iter().map(|&x| x as f32).collect();
    let qw =
        QuantizedWeights::quantize_with_zero_points(gemm, &w, k, n, format, Group::Rows(group))
            .expect("quantize");
    let reference = quantize(&w, k, n, format, group, true).expect("reference");
    SharedWeights {
        qw,
        reference,
        format,
        k,
        n,
    }
}

/// One product through the shared weights on `gemm`, checked.
fn quantized_product(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    shared: &SharedWeights,
    m: usize,
    seed: u64,
) -> Result<(), String> {
    let (k, n) = (shared.k, shared.n);
    let x: Vec<f16> = random(m * k, seed)
        .iter()
        .map(|&v| f16::from_f64(v))
        .collect();
    let x_dev = stream.clone_htod(&x).map_err(|e| e.to_string())?;
    let mut y_dev = stream
        .clone_htod(&vec![f16::NAN; m * n])
        .map_err(|e| e.to_string())?;
    shared
        .qw
        .matmul(gemm, &x_dev, &mut y_dev, m)
        .map_err(|e| e.to_string())?;
    let y = stream.clone_dtoh(&y_dev).map_err(|e| e.to_string())?;
    let path = shared.qw.path(gemm, m);
    let activation = ActivationType::F16;
    let used = shared
        .reference
        .dequantize_as(weight_rounding(path, shared.format, activation));
    for r in 0..m {
        for c in 0..n {
            let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
            for l in 0..k {
                let term = x[r * k + l].to_f64() * used[l * n + c] as f64;
                sum += term;
                magnitude += term.abs();
            }
            let got = y[r * n + c].to_f64();
            if (got - sum).abs() > quantized_tolerance(sum, magnitude, k, activation)
                || got.is_nan()
            {
                return Err(format!(
                    "quantized m {m}: y[{r}, {c}] = {got}, expected {sum}"
                ));
            }
        }
    }
    Ok(())
}

/// Runs generated calls (every eighth a quantized product) until `deadline`; returns the
/// number of checked calls.
fn work(
    thread: usize,
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    shared: &SharedWeights,
    deadline: Instant,
) -> usize {
    let seed = 0xC0C0_0000 + thread as u64;
    let mut done = 0u64;
    while Instant::now() < deadline {
        if done % 8 == 7 {
            let m = [1, 7, 16, 40][(done / 8 % 4) as usize];
            quantized_product(stream, gemm, shared, m, seed + done)
                .unwrap_or_else(|e| panic!("thread {thread}, call {done}: {e}"));
        } else {
            let call = Call::generate(seed, done);
            run(stream, gemm, &call).unwrap_or_else(|e| {
                panic!(
                    "thread {thread}, call {done}: {e}\n  {call:?}\n  replay: {}",
                    call.replay("api_fuzz_gpu")
                )
            });
        }
        done += 1;
    }
    done as usize
}

/// Runs `body(thread)` on THREADS threads, failing if they do not all finish by `limit`.
fn on_threads(
    limit: Duration,
    body: impl Fn(usize) -> usize + Send + Sync + 'static,
) -> Vec<usize> {
    let body = Arc::new(body);
    let (sender, receiver) = mpsc::channel();
    for thread in 0..THREADS {
        let (body, sender) = (body.clone(), sender.clone());
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(thread)));
            sender.send((thread, result)).expect("the test is waiting");
        });
    }
    let started = Instant::now();
    let mut counts = vec![0; THREADS];
    for _ in 0..THREADS {
        let left = limit.saturating_sub(started.elapsed());
        match receiver.recv_timeout(left) {
            Ok((thread, Ok(count))) => counts[thread] = count,
            Ok((thread, Err(panic))) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("thread {thread} failed: {message}");
            }
            Err(_) => panic!("threads still running after {limit:?}: a deadlock or a hang"),
        }
    }
    counts
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn eight_threads_for_a_minute() {
    let seconds: u64 = std::env::var("STRESS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let phase = Duration::from_secs(seconds.div_ceil(2));
    let slack = Duration::from_secs(60);
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let main_stream = ctx.new_stream().expect("a stream");
    let main_gemm = Arc::new(common::gemm_on(&main_stream));
    let shared = Arc::new(shared_weights(&main_gemm));

    // Phase 1: a stream and a Gemm per thread. Each Gemm loads the module first (the driver
    // caches the compiled PTX, so only the first load compiles).
    let gemms: Vec<_> = (0..THREADS)
        .map(|_| {
            let stream = ctx.new_stream().expect("a stream");
            let gemm = common::gemm_on(&stream);
            Arc::new((stream, gemm))
        })
        .collect();
    let deadline = Instant::now() + phase;
    let (own, weights) = (gemms.clone(), shared.clone());
    let counts = on_threads(phase + slack, move |t| {
        let (stream, gemm) = &*own[t];
        work(t, stream, gemm, &weights, deadline)
    });
    eprintln!("phase 1 (own stream and Gemm per thread): checked calls per thread {counts:?}");
    assert!(counts.iter().all(|&c| c > 0));

    // Phase 2: one Gemm shared by all threads; each thread's buffers live on its own stream.
    let deadline = Instant::now() + phase;
    let (gemm, weights, own) = (main_gemm.clone(), shared.clone(), gemms.clone());
    let counts = on_threads(phase + slack, move |t| {
        let stream = &own[t].0;
        work(t + THREADS, stream, &gemm, &weights, deadline)
    });
    eprintln!("phase 2 (one Gemm shared by all threads): checked calls per thread {counts:?}");
    assert!(counts.iter().all(|&c| c > 0));
    main_gemm.synchronize().expect("no fault");
}
