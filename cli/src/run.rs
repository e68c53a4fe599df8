//! The ladder run (`sgemm-ladder` with no subcommand): every rung verified against a
//! reference and timed against cuBLAS, at each shape; the report is rewritten as each shape
//! finishes.

use crate::folder::ReportFolder;
use crate::options::{PtxChoice, ReportDir, Timing, command_line, seed_or_random, select_rungs};
use crate::output::{self, say};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use rust_gemm::harness::bench::{BenchOptions, ReferencePolicy, run_shape};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::harness::report::{Record, text_table};
use rust_gemm::ladder::autotune::{Autotuner, Trial};
use rust_gemm::{GemmShape, Rung};
use std::path::PathBuf;

/// The options of the ladder run.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Square sizes S to benchmark (S×S×S), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4096")]
    sizes: Vec<usize>,

    /// More shapes MxNxK, comma-separated; the default set is ragged on purpose (no dimension a
    /// multiple of any tile). Pass --shapes "" for none.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1x1x1,127x129x131,1000x1000x1000,4097x31x513"
    )]
    shapes: Vec<String>,

    /// Rungs to run, comma-separated (see --list); all by default.
    #[arg(long, value_delimiter = ',')]
    rungs: Vec<String>,

    #[command(flatten)]
    timing: Timing,

    /// Seed of the random inputs (printed, so a run can be repeated); random by default.
    #[arg(long)]
    seed: Option<u64>,

    /// Reference product: the f64 CPU product, cuBLAS, or auto (CPU unless it would take
    /// over 30 s on this machine's cores).
    #[arg(long, value_enum, default_value_t = Reference::Auto)]
    reference: Reference,

    #[command(flatten)]
    report: ReportDir,

    #[command(flatten)]
    ptx: PtxChoice,

    /// Autotuned rungs (v11): search again and print every candidate's time, even for shapes
    /// the cache already knows.
    #[arg(long)]
    autotune: bool,

    /// The autotune cache (JSON, keyed by device and shape); default: autotune-cache.json in the report folder.
    #[arg(long)]
    tune_cache: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Reference {
    Auto,
    Cpu,
    Cublas,
}

/// Runs the ladder; returns whether every rung that ran passed verification.
pub fn run(args: RunArgs) -> Result<bool> {
    // Everything that can be checked without a GPU is checked first.
    let rungs = select_rungs(&args.rungs)?;
    let shapes = shapes(&args)?;
    if std::env::var("NVIDIA_TF32_OVERRIDE").is_ok_and(|v| v.trim() != "0") {
        bail!(
            "NVIDIA_TF32_OVERRIDE is set: cuBLAS would use TF32 and the fp32 comparison would be meaningless; unset it"
        );
    }
    let folder = ReportFolder::open(&args.report.report_dir)?;
    let seed = seed_or_random(args.seed);
    let options = BenchOptions {
        warmup: args.timing.warmup as usize,
        reps: args.timing.reps as usize,
        reference: match args.reference {
            Reference::Auto => ReferencePolicy::Auto,
            Reference::Cpu => ReferencePolicy::Cpu,
            Reference::Cublas => ReferencePolicy::Cublas,
        },
    };

    let gpu = Gpu::open_module(args.ptx.module())?;
    let info = gpu.info();
    say!(
        "device: {} (sm_{}{}, {} SMs, {} MiB L2), PTX {}, seed {seed}",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.l2_bytes >> 20,
        gpu.ptx_target()
    );

    // Rungs this GPU cannot run (Hopper-only ones elsewhere) are listed, not run.
    let rungs: Vec<&Rung> = rungs
        .into_iter()
        .filter(|rung| match gpu.rung_unavailable(rung) {
            Some(reason) => {
                say!("skipping {}: it {reason}", rung.name);
                false
            }
            None => true,
        })
        .collect();

    let cache = args
        .tune_cache
        .unwrap_or_else(|| folder.dir().join("autotune-cache.json"));
    let mut tuner = Autotuner::new(Some(cache)).map_err(anyhow::Error::msg)?;
    tuner.force = args.autotune;
    let mut show_search = |rung: &Rung, trials: &[Trial]| print_search(rung, trials);

    let command = command_line();
    let mut records: Vec<Record> = Vec::new();
    for (index, shape) in shapes.iter().enumerate() {
        let shape_seed = seed.wrapping_add(1000 * index as u64);
        let rows = run_shape(
            &gpu,
            shape,
            &rungs,
            &options,
            shape_seed,
            &mut tuner,
            &mut show_search,
        )
        .with_context(|| format!("at shape {shape}"))?;
        for r in &rows {
            say!(
                "  {shape:<18} {:<7} {:>10} GFLOP/s  rel error {:<9}  {}",
                r.rung,
                r.gflops.map_or("-".into(), |g| format!("{g:.0}")),
                r.rel_error.map_or("-".into(), |e| format!("{e:.2e}")),
                r.verdict()
            );
        }
        records.extend(rows);
        // After every shape, so that an interrupted run keeps what it measured.
        folder.write(&records, &command, &info.name)?;
    }

    say!("\n{}", text_table(&records));
    say!(
        "report written to {}/results.{{json,md}} and plot.svg",
        folder.dir().display()
    );

    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed())
        .map(|r| format!("{} at {}×{}×{}", r.rung, r.m, r.n, r.k))
        .collect();
    Ok(output::verification_passed(&failed))
}

/// Prints the autotuner's search: each candidate's time, the fastest marked.
fn print_search(rung: &Rung, trials: &[Trial]) {
    say!(
        "  autotune {}: timing {} candidates",
        rung.name,
        trials.len()
    );
    let best = trials
        .iter()
        .filter_map(|t| t.outcome.as_ref().ok())
        .fold(f64::INFINITY, |a, &b| a.min(b));
    for trial in trials {
        match &trial.outcome {
            Ok(ms) => say!(
                "    {:<12} {ms:>9.3} ms{}",
                trial.candidate,
                if *ms == best { "  <- fastest" } else { "" }
            ),
            Err(why) => say!("    {:<12} cannot run: {why}", trial.candidate),
        }
    }
}

/// The shapes of `--sizes` and `--shapes`, checked.
fn shapes(args: &RunArgs) -> Result<Vec<GemmShape>> {
    let mut shapes = Vec::new();
    for &size in &args.sizes {
        shapes.push(GemmShape::square(size).with_context(|| format!("--sizes {size}"))?);
    }
    for text in args.shapes.iter().filter(|s| !s.trim().is_empty()) {
        shapes.push(
            text.parse::<GemmShape>()
                .map_err(anyhow::Error::msg)
                .with_context(|| "--shapes")?,
        );
    }
    if shapes.is_empty() {
        bail!("nothing to run: give --sizes or --shapes");
    }
    Ok(shapes)
}
