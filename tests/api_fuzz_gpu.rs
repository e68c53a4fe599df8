//! The API fuzzer on the GPU: ten thousand generated calls (`tests/common/fuzz.rs`: element
//! type, exact or TF32, B layout, leading dimensions, offset views, alpha/beta, bias and
//! activation, batch and strides, shapes from 1 to a few thousand, sometimes a forced kernel,
//! sometimes a deliberate defect) run through `Gemm::matmul`. Every element of every C
//! allocation is checked: the described elements against the f64 reference within the
//! precision's tolerance, every other one (before the view, padding between rows and batch
//! items, the tail) unchanged. A refused call must be refused with the defect's typed error and
//! leave C untouched.
//!
//! Needs a CUDA GPU: `cargo test --release --test api_fuzz_gpu -- --ignored --nocapture`.
//! `FUZZ_SEED` (default 0x5EED2026), `FUZZ_CASES` (default 10 000), `FUZZ_CASE` (replay one),
//! `RUST_GEMM_TEST_PTX=sm80` (the portable module instead of the device's own), `FUZZ_SUMMARY=path`
//! (writes the run's summary as JSON).

mod common;

use common::fuzz::{Call, indices_from_env, seed_from_env};
use common::fuzz_run::{Outcome, run};
use rust_gemm::Gemm;
use rust_gemm::api::dispatch::REDUCTION_ENTRIES;
use std::collections::BTreeMap;

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn ten_thousand_generated_calls() {
    let seed = seed_from_env(0x5EED_2026);
    let indices = indices_from_env(10_000);
    let (stream, gemm) = common::open_gemm();
    let started = std::time::Instant::now();
    let mut ran = BTreeMap::<&'static str, usize>::new();
    let mut refused = BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    let count = indices.end - indices.start;
    for index in indices {
        let call = Call::generate(seed, index);
        match run(&stream, &gemm, &call) {
            Ok(Outcome::Ran(entry, reduction)) => {
                for entry in std::iter::once(entry).chain(reduction) {
                    *ran.entry(entry).or_default() += 1;
                }
            }
            Ok(Outcome::Refused(error)) => *refused.entry(error).or_default() += 1,
            Err(message) => {
                eprintln!(
                    "FAILED case {index} of seed {seed:#x}: {message}\n  {call:?}\n  replay: {}",
                    call.replay("api_fuzz_gpu")
                );
                failures.push(index);
                if failures.len() >= 20 {
                    break;
                }
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let summary = json_summary(seed, count, &failures, &gemm, seconds, &ran, &refused);
    eprintln!("{summary}");
    if let Ok(path) = std::env::var("FUZZ_SUMMARY") {
        std::fs::write(&path, &summary).expect("write the summary");
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed",
        failures.len()
    );
    if count >= 2000 {
        // Every kernel the loaded module holds ran at least once, forced or chosen.
        for spec in Gemm::kernels() {
            if gemm.caps().entries.iter().any(|e| e == spec.entry) {
                assert!(ran.contains_key(spec.entry), "{} never ran", spec.entry);
            }
        }
        // And every split-K reduction (forced splits are 15% of the calls).
        for entry in REDUCTION_ENTRIES {
            assert!(ran.contains_key(entry), "{entry} never ran");
        }
    }
}

/// The run's summary as JSON.
fn json_summary(
    seed: u64,
    cases: u64,
    failures: &[u64],
    gemm: &Gemm,
    seconds: f64,
    ran: &BTreeMap<&'static str, usize>,
    refused: &BTreeMap<String, usize>,
) -> String {
    let map = |entries: Vec<(String, usize)>| {
        entries
            .iter()
            .map(|(k, v)| format!("    \"{k}\": {v}"))
            .collect::<Vec<_>>()
            .join(",\n")
    };
    format!(
        "{{\n  \"test\": \"api_fuzz_gpu\",\n  \"seed\": {seed},\n  \"cases\": {cases},\n  \
         \"failures\": {},\n  \"failed_cases\": {failures:?},\n  \"device\": \"{}\",\n  \
         \"ptx_target\": \"{}\",\n  \"seconds\": {seconds:.1},\n  \"ran\": {{\n{}\n  }},\n  \
         \"refused\": {{\n{}\n  }}\n}}\n",
        failures.len(),
        gemm.device().name,
        gemm.runtime().ptx_target(),
        map(ran.iter().map(|(k, v)| (k.to_string(), *v)).collect()),
        map(refused.iter().map(|(k, v)| (k.clone(), *v)).collect()),
    )
}
