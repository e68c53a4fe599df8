//! The host cost of choosing a kernel, without a GPU: `dispatch::choose_plan` (every kernel's
//! refusal and cost-model checks, the reasons written out) against a replay from the plan
//! cache, for the Hopper and Ampere kernel tables at shapes from the shape suite. What a call
//! pays on the host before its launch, every call when its plan is not cached.
//!
//! `cargo bench --bench dispatch` (criterion; no GPU needed, none used).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rust_gemm::api::dispatch::{DeviceCaps, choose_plan};
use rust_gemm::api::plan_cache::PlanCache;
use rust_gemm::api::problem::{Buffers, Problem, Request, validate};
use rust_gemm::ptx::for_compute_capability;
use rust_gemm::{BLayout, DType};
use std::hint::black_box;

/// The device properties dispatch sees on an H100 and on an RTX 3090-class Ampere GPU, with
/// the entries of the module each loads (`ptx::for_compute_capability`).
fn devices() -> [(&'static str, DeviceCaps); 2] {
    let caps = |(major, minor): (u32, u32), sm_count, shared_kib: usize| DeviceCaps {
        compute_capability: (major as i32, minor as i32),
        sm_count,
        max_shared_per_block: shared_kib * 1024,
        entries: for_compute_capability(major, minor)
            .expect("a supported device")
            .entries
            .iter()
            .map(|e| e.to_string())
            .collect(),
    };
    [
        ("hopper", caps((9, 0), 132, 227)),
        ("ampere", caps((8, 6), 82, 99)),
    ]
}

fn problem(dtype: DType, b_layout: BLayout, (m, n, k): (usize, usize, usize)) -> Problem {
    let request = Request::contiguous(dtype, b_layout, m, n, k);
    let buffers = Buffers {
        a: (1 << 32, m * k),
        b: (2 << 32, n * k),
        c: (3 << 32, m * n),
        bias: None,
    };
    validate(&request, buffers).expect("a valid problem")
}

fn dispatch(c: &mut Criterion) {
    let shapes = [
        (1, 4096, 4096),
        (16, 8192, 28672),
        (1000, 1000, 1000),
        (4096, 4096, 4096),
    ];
    for (device, caps) in devices() {
        let mut group = c.benchmark_group(format!("choose_plan {device}"));
        for dtype in [DType::F32, DType::F16] {
            for shape in shapes {
                let p = problem(dtype, BLayout::Kn, shape);
                let id = format!("{dtype:?} {}x{}x{}", shape.0, shape.1, shape.2);
                group.bench_function(BenchmarkId::new("choose", &id), |bencher| {
                    bencher.iter(|| choose_plan(&caps, black_box(&p), None, None, None))
                });
                let mut cache = PlanCache::default();
                group.bench_function(BenchmarkId::new("cached", &id), |bencher| {
                    bencher.iter(|| {
                        cache.get_or_choose(black_box(&p), None, None, None, || {
                            choose_plan(&caps, &p, None, None, None)
                        })
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
