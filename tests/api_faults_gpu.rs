//! Faults are reported, typed, and name what failed:
//!
//! - device memory exhausted (the test first allocates everything it can): quantizing weights
//!   that no longer fit is a typed error carrying the driver's out-of-memory error as its
//!   `source()`, and the same `Gemm` goes on working, on buffers it already has and, once memory
//!   is freed, for new weights;
//! - a kernel that faults (an `unsafe` view on an address that maps nothing) is reported by
//!   `Gemm::synchronize` as `GemmError::KernelFault` naming the kernel, in a child process (a
//!   fault ends the CUDA context, so it must not share one with other tests) that must finish
//!   within two minutes: a fault is an error, never a hang.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_faults_gpu -- --ignored --nocapture`.

mod common;

use common::random;
use cudarc::driver::{CudaContext, CudaSlice, DriverError, sys::CUresult};
use rust_gemm::{GemmError, Group, MatmulDesc, QuantizedWeights, WeightFormat};
use std::error::Error;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The two tests take turns: the child process of one must not start while the other holds
/// all device memory.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether `error`'s source chain holds the driver's out-of-memory error.
fn is_out_of_memory(error: &GemmError) -> bool {
    let mut source = error.source();
    while let Some(s) = source {
        if let Some(driver) = s.downcast_ref::<DriverError>() {
            return driver.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        }
        source = s.source();
    }
    false
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn out_of_memory_is_a_typed_error_and_the_handle_survives() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let gemm = common::gemm_on(&stream);
    let (m, n, k) = (64, 64, 64);
    let a = stream.clone_htod(&vec![1.0f32; m * k]).unwrap();
    let b = stream.clone_htod(&vec![0.5f32; k * n]).unwrap();
    let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
    // Weights made while memory is free; their prefill path needs a 32 MiB scratch expansion,
    // made on first use.
    let (wk, wn) = (4096, 4096);
    let w: Vec<f32> = random(wk * wn, 3).iter().map(|&x| x as f32).collect();
    let early = QuantizedWeights::quantize(
        &gemm,
        &w,
        wk,
        wn,
        WeightFormat::Unsigned(4),
        Group::Rows(128),
    )
    .expect("fits while memory is free");
    let pm = 32;
    let x = stream
        .clone_htod(&vec![half::f16::from_f32(1.0); pm * wk])
        .unwrap();
    let mut y = stream.alloc_zeros::<half::f16>(pm * wn).unwrap();
    // Take every byte the device will give, in ever smaller pieces.
    let mut filler: Vec<CudaSlice<u8>> = Vec::new();
    for piece in [1usize << 30, 64 << 20, 4 << 20, 1 << 20] {
        // SAFETY: the filler is never read; it only holds memory.
        while let Ok(block) = unsafe { stream.alloc::<u8>(piece) } {
            filler.push(block);
        }
    }
    stream.synchronize().unwrap();
    let held: usize = filler.iter().map(|f| f.len()).sum();
    eprintln!("holding {} MiB of device memory", held >> 20);
    let quantize = || {
        QuantizedWeights::quantize(
            &gemm,
            &w,
            wk,
            wn,
            WeightFormat::Unsigned(8),
            Group::Rows(128),
        )
    };
    let err = quantize().err().expect("16 MiB of weights cannot fit");
    eprintln!("quantize with the device full: {err}");
    // Either the library's own check (what the weights need against what is free) or the
    // driver's refusal, kept as the error's source.
    assert!(
        matches!(err, GemmError::OutOfDeviceMemory { .. }) || is_out_of_memory(&err),
        "not a typed out-of-memory error: {err:?}"
    );
    let err = early
        .matmul(&gemm, &x, &mut y, pm)
        .expect_err("the prefill scratch cannot fit");
    eprintln!("prefill with the device full: {err}");
    assert!(
        matches!(err, GemmError::OutOfDeviceMemory { .. }) || is_out_of_memory(&err),
        "not a typed out-of-memory error: {err:?}"
    );
    // The handle still works on buffers it already has.
    gemm.matmul(&a, &b, &mut c, &MatmulDesc::new(m, n, k))
        .expect("a call that needs no memory");
    assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 32.0));
    drop(filler);
    stream.synchronize().unwrap();
    let qw = quantize().expect("fits once memory is freed");
    let x = stream
        .clone_htod(&vec![half::f16::from_f32(1.0); wk])
        .unwrap();
    let mut y = stream.alloc_zeros::<half::f16>(wn).unwrap();
    qw.matmul(&gemm, &x, &mut y, 1).expect("decode");
    gemm.synchronize().expect("no fault");
}

/// The child: one call on a view of an unmapped address, then `synchronize`.
#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn kernel_fault_child() {
    if std::env::var("FAULT_CHILD").is_err() {
        return; // Only meaningful in the child process the next test starts.
    }
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a stream");
    let gemm = common::gemm_on(&stream);
    let (m, n, k) = (256, 256, 256);
    // SAFETY: deliberately not sound for the device: the address maps nothing, so the kernel
    // faults when it reads A. The slice is leaked, never freed.
    let bogus = unsafe { stream.upgrade_device_ptr::<f32>(0x7f00_0000_0000, m * k) };
    let b = stream.clone_htod(&vec![0.5f32; k * n]).unwrap();
    let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
    let desc = MatmulDesc::new(m, n, k);
    let planned = gemm.plan(&bogus, &b, &c, &desc).unwrap().kernel.entry;
    gemm.matmul(&bogus, &b, &mut c, &desc)
        .expect("the launch itself is accepted");
    let err = gemm.synchronize().expect_err("the kernel faults");
    println!("FAULT_REPORT planned={planned} error={err}");
    match &err {
        GemmError::KernelFault { kernel, .. } if *kernel == planned => {
            println!("FAULT_OK");
        }
        other => println!("FAULT_WRONG {other:?}"),
    }
    // The context is gone: leave without running destructors that would call into it.
    std::mem::forget((bogus, b, c, gemm));
    std::process::exit(0);
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn a_kernel_fault_names_the_kernel_and_does_not_hang() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "kernel_fault_child", "--ignored", "--nocapture"])
        .env("FAULT_CHILD", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            panic!("the faulting call did not return within two minutes: a hang");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    eprintln!(
        "child ({status}, {:.1} s):\n{out}",
        started.elapsed().as_secs_f64()
    );
    assert!(status.success(), "the child failed");
    assert!(
        out.contains("FAULT_OK"),
        "the fault was not reported as KernelFault naming the kernel"
    );
}
