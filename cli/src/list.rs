//! `sgemm-ladder --list`: the rungs, each with the architecture it needs and its autotune
//! candidates (needs no GPU).

use crate::output::say;
use rust_gemm::RUNGS;

/// Prints one line per rung (name, the architecture it needs, idea, entry point), each
/// candidate of an autotuned rung indented below it. `sm_80` rungs run on every GPU from
/// compute capability 8.0 on (the portable PTX module); `sm_90a` rungs on H100 and H200 only.
pub fn run() {
    say!("{:<4} {:<7} {:<38} entry point", "rung", "needs", "idea");
    for rung in RUNGS {
        say!(
            "{:<4} {:<7} {:<38} {}",
            rung.name,
            rung.arch.label(),
            rung.idea,
            rung.entry
        );
        for candidate in rung.candidates {
            // A candidate built for fewer architectures than its rung says so.
            let needs = if candidate.arch == rung.arch {
                String::new()
            } else {
                format!("(needs {})", candidate.arch.label())
            };
            say!(
                "       candidate {:<12} {:<15} {}",
                candidate.name,
                needs,
                candidate.entry
            );
        }
    }
}
