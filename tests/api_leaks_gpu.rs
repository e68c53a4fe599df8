//! No leaks: 100 000 library calls (`LEAK_CALLS`) of every element type, both B layouts, the
//! TMA kernels on more distinct views than their tensor-map cache holds (so it fills, clears and
//! fills again), and quantized decode and prefill products. Device memory in use is the same
//! after the warm-up and after the last call, and once every handle is dropped it is back to
//! what it was before the first; the process's resident host memory grows by no more than a few
//! MiB over the run.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_leaks_gpu -- --ignored --nocapture`.

mod common;

use common::random;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use half::{bf16, f16};
use rust_gemm::{Epilogue, Gemm, GemmElement, Group, MatmulDesc, QuantizedWeights, WeightFormat};
use std::sync::Arc;

/// Device memory in use, in bytes (total − free, after the stream is idle).
fn device_in_use(ctx: &Arc<CudaContext>) -> u64 {
    ctx.synchronize().expect("synchronize");
    let (free, total) = cudarc::driver::result::mem_get_info().expect("mem_get_info");
    (total - free) as u64
}

/// The process's resident set, in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// Operands for one element type: A and B with room for offset views, C, a bias.
struct Operands<T> {
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
    bias: CudaSlice<T>,
}

const SIDE: usize = 128;
/// Distinct view offsets (in 16-byte steps): more than the 64 tensor-map pairs cached.
const OFFSETS: usize = 80;

fn operands<T: GemmElement>(stream: &Arc<CudaStream>, seed: u64) -> Operands<T> {
    let values = |len: usize, seed: u64| -> Vec<T> {
        random(len, seed).iter().map(|&x| T::from_f64(x)).collect()
    };
    let room = SIDE * SIDE + OFFSETS * 8;
    Operands {
        a: stream.clone_htod(&values(room, seed)).expect("upload"),
        b: stream.clone_htod(&values(room, seed + 1)).expect("upload"),
        c: stream.alloc_zeros(SIDE * SIDE).expect("alloc"),
        bias: stream.clone_htod(&values(SIDE, seed + 2)).expect("upload"),
    }
}

/// One call of element type `T`, its variant chosen by `i`.
fn call<T: GemmElement>(gemm: &Gemm, ops: &mut Operands<T>, i: usize, tf32: bool) {
    // Offsets in whole 16-byte steps keep the rows aligned for TMA; each one is a new view.
    let offset = (i / 4 % OFFSETS) * 16 / std::mem::size_of::<T>();
    let a = ops.a.slice(offset..offset + SIDE * SIDE);
    let b = ops.b.slice(offset..offset + SIDE * SIDE);
    let mut desc = MatmulDesc::<T>::new(SIDE, SIDE, SIDE);
    if i % 2 == 1 {
        desc = desc.b_transposed();
    }
    if i % 3 == 0 {
        desc = desc
            .epilogue(Epilogue::bias(&ops.bias).gelu_tanh())
            .beta(0.5);
    }
    if tf32 {
        desc = desc.tf32();
    }
    gemm.matmul(&a, &b, &mut ops.c, &desc)
        .unwrap_or_else(|e| panic!("call {i}: {e}"));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_hundred_thousand_calls_leak_nothing() {
    let calls: usize = std::env::var("LEAK_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let before = device_in_use(&ctx);
    {
        let gemm = common::gemm_on(&stream);
        let (k, n) = (1024, 256);
        let w: Vec<f32> = random(k * n, 5).iter().map(|&x| x as f32).collect();
        let qw = QuantizedWeights::quantize(
            &gemm,
            &w,
            k,
            n,
            WeightFormat::Unsigned(4),
            Group::Rows(128),
        )
        .expect("quantize");
        let x = stream
            .clone_htod(&vec![f16::from_f32(0.25); 64 * k])
            .expect("x");
        let mut y = stream.alloc_zeros::<f16>(64 * n).expect("y");
        let mut f32s = operands::<f32>(&stream, 1);
        let mut f16s = operands::<f16>(&stream, 2);
        let mut bf16s = operands::<bf16>(&stream, 3);
        let mut run = |i: usize| match i % 10 {
            0..=1 => call(&gemm, &mut f32s, i, false),
            2 => call(&gemm, &mut f32s, i, true),
            3..=5 => call(&gemm, &mut f16s, i, false),
            6..=8 => call(&gemm, &mut bf16s, i, false),
            _ => {
                // Decode and prefill in turn.
                let m = if i % 20 == 9 { 4 } else { 64 };
                qw.matmul(&gemm, &x, &mut y, m)
                    .unwrap_or_else(|e| panic!("quantized call {i}: {e}"));
            }
        };
        // Warm-up: every path once, the tensor-map cache filled, scratch buffers made.
        let warm_up = 2_000.min(calls);
        for i in 0..warm_up {
            run(i);
        }
        gemm.synchronize().expect("no fault");
        let (device_warm, host_warm) = (device_in_use(&ctx), resident_bytes());
        let started = std::time::Instant::now();
        for i in warm_up..calls {
            run(i);
            if i % 1000 == 999 {
                // Keep the queue short: a leak, not a backlog, is what is measured.
                gemm.synchronize().expect("no fault");
            }
        }
        gemm.synchronize().expect("no fault");
        let seconds = started.elapsed().as_secs_f64();
        let (device_end, host_end) = (device_in_use(&ctx), resident_bytes());
        eprintln!(
            "{calls} calls ({:.1} µs each): device memory in use {before} B before, \
             {device_warm} B after the warm-up, {device_end} B after the last call; resident \
             host memory {host_warm} B after the warm-up, {host_end} B at the end",
            seconds * 1e6 / (calls - warm_up).max(1) as f64
        );
        assert_eq!(
            device_end, device_warm,
            "device memory in use grew over the calls"
        );
        let growth = host_end.saturating_sub(host_warm);
        assert!(
            growth <= 4 << 20,
            "resident host memory grew by {growth} bytes over the calls"
        );
    }
    let after = device_in_use(&ctx);
    eprintln!("device memory in use after every handle is dropped: {after} B (before: {before} B)");
    assert_eq!(after, before, "device memory was not all returned");
}
