//! `sgemm-ladder --list`: the rungs, each with its autotune candidates (needs no GPU).

use crate::output::say;
use rust_gemm::RUNGS;

/// Prints one line per rung (name, idea, entry point), each candidate of an autotuned rung
/// indented below it.
pub fn run() {
    for rung in RUNGS {
        say!("{:<4} {:<38} {}", rung.name, rung.idea, rung.entry);
        for candidate in rung.candidates {
            say!(
                "       candidate {:<28} {}",
                candidate.name,
                candidate.entry
            );
        }
    }
}
