//! Options and helpers that more than one subcommand shares.

use anyhow::Result;
use clap::Args;
use rust_gemm::{RUNGS, Rung};
use std::path::PathBuf;

/// How each kernel is timed (the ladder run and `dequant`).
#[derive(Args, Debug)]
pub struct Timing {
    /// Timed launches per kernel and shape; the median is reported.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,

    /// Untimed warm-up launches before timing.
    #[arg(long, default_value_t = 3)]
    pub warmup: u32,
}

/// Which embedded PTX module the kernels come from (the ladder run and `verify`).
#[derive(Args, Debug)]
pub struct PtxChoice {
    /// The PTX module: the one built for this GPU (auto: sm_90a on H100/H200, the portable
    /// sm_80 module elsewhere), or sm80 to run the portable module on any GPU from compute
    /// capability 8.0 on (as an Ampere or Ada GPU would), or sm90a.
    #[arg(long, value_enum, default_value_t = Module::Auto)]
    pub ptx: Module,
}

/// A choice of PTX module.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Module {
    /// The module built for the device.
    Auto,
    /// The portable `.target sm_80` module.
    Sm80,
    /// The Hopper `.target sm_90a` module.
    Sm90a,
}

impl PtxChoice {
    /// The module asked for (`None`: the device's).
    pub fn module(&self) -> Option<&'static rust_gemm::ptx::PtxModule> {
        match self.ptx {
            Module::Auto => None,
            Module::Sm80 => Some(&rust_gemm::ptx::PORTABLE),
            Module::Sm90a => Some(&rust_gemm::ptx::HOPPER),
        }
    }
}

/// Where the report goes (the ladder run, `dequant` and `report`).
#[derive(Args, Debug)]
pub struct ReportDir {
    /// Folder for results.json, results.md and the plots (created if missing).
    #[arg(long, default_value = "report")]
    pub report_dir: PathBuf,
}

/// The rungs named in `--rungs` (all when none is named), in the order given.
pub fn select_rungs(names: &[String]) -> Result<Vec<&'static Rung>> {
    if names.is_empty() {
        return Ok(RUNGS.iter().collect());
    }
    names
        .iter()
        .map(|name| Rung::by_name(name.trim()).map_err(Into::into))
        .collect()
}

/// `seed`, or a fresh one from the clock and the process id (printed by the caller, so that
/// the run can be repeated).
pub fn seed_or_random(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        use std::time::{SystemTime, UNIX_EPOCH};
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ (std::process::id() as u64).rotate_left(32)
    })
}

/// The command line as typed, for the report's header.
pub fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}
