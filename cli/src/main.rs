//! `sgemm-ladder`: runs every rung of the SGEMM ladder on the GPU, verifies each against a
//! reference, times it against cuBLAS and writes a report.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use rust_gemm::check::sweep::{all_kernels, check_shape, random_shapes};
use rust_gemm::harness::bench::{BenchOptions, ReferencePolicy, run_shape};
use rust_gemm::harness::dequant_bench::{DequantBench, DequantOptions, RandomWeights, WeightCase};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::harness::report::{Record, dequant_text_table, text_table, write_report};
use rust_gemm::ladder::autotune::{Autotuner, Trial};
use rust_gemm::quant::fast::Path as DequantKernel;
use rust_gemm::quant::format::WeightFormat;
use rust_gemm::{GemmShape, PTX, RUNGS, Rung};
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the SGEMM ladder on the GPU: every rung verified against a reference and timed against
/// cuBLAS SGEMM (TF32 off). Prints a table and writes results.json and results.md.
#[derive(Parser, Debug)]
#[command(name = "sgemm-ladder", version)]
struct Cli {
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
    #[arg(long, value_delimiter = ',', global = true)]
    rungs: Vec<String>,

    /// Timed launches per rung and shape; the median is reported.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..), global = true)]
    reps: u32,

    /// Untimed warm-up launches before timing.
    #[arg(long, default_value_t = 3, global = true)]
    warmup: u32,

    /// Seed of the random inputs (printed, so a run can be repeated); random by default.
    #[arg(long, global = true)]
    seed: Option<u64>,

    /// Reference product: the f64 CPU product, cuBLAS, or auto (CPU unless it would take
    /// over 30 s on this machine's cores).
    #[arg(long, value_enum, default_value_t = Reference::Auto)]
    reference: Reference,

    /// Folder for results.json and results.md.
    #[arg(long, default_value = "report", global = true)]
    report_dir: PathBuf,

    /// Autotuned rungs (v11): search again and print every candidate's time, even for shapes
    /// the cache already knows.
    #[arg(long)]
    autotune: bool,

    /// The autotune cache (JSON, keyed by device and shape); default: <report-dir>/autotune-cache.json.
    #[arg(long)]
    tune_cache: Option<PathBuf>,

    /// List the rungs and exit (needs no GPU).
    #[arg(long)]
    list: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Randomized verification: every kernel (each rung, each autotune candidate) on many random
    /// shapes, ones and primes included, against the f64 CPU reference. The seed is printed;
    /// `verify --seed S` with the same --count and --max-dim repeats the run exactly.
    Verify {
        /// Random shapes to check.
        #[arg(long, default_value_t = 200)]
        count: usize,
        /// Largest dimension drawn.
        #[arg(long, default_value_t = 600)]
        max_dim: usize,
    },
    /// The dequant GEMM (fp16 activations × low-bit weights): verifies and times the fast
    /// kernels against cuBLAS fp16 at the same shape, and adds the records to
    /// <report-dir>/results.json (replacing earlier ones of the same kernel, format and shape).
    /// --reps, --warmup, --seed and --report-dir apply here too.
    Dequant {
        /// Weight formats, comma-separated: u1–u8, i2–i8, eXmY (e2m1, e4m3...), f16.
        #[arg(long, value_delimiter = ',', default_value = "u4")]
        format: Vec<String>,
        /// Rows of k per scale: a number, or `per-channel`.
        #[arg(long, default_value = "128")]
        group: String,
        /// Per-group zero points (unsigned formats).
        #[arg(long)]
        zero_points: bool,
        /// Rows of A (batch), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,4,8,16")]
        m: Vec<usize>,
        /// Reduction length.
        #[arg(long, default_value_t = 8192)]
        k: usize,
        /// Columns of W and C.
        #[arg(long, default_value_t = 57344)]
        n: usize,
        /// Decode kernel blocks, each taking an equal share of the work (default: two per SM).
        #[arg(long)]
        blocks: Option<usize>,
        /// Kernel: decode, prefill, or auto (decode for m ≤ 16).
        #[arg(long, value_enum, default_value_t = DequantPath::Auto)]
        path: DequantPath,
        /// The full sweep: every width u1–u8 (group 128), i4, u4 with zero points and with
        /// groups 32/64/per-channel, e2m1/e3m2/e2m3/e4m3/e5m2, f16; at k×n = 8192×57344 (the
        /// Tilus paper's shape), 4096×14336 and 14336×4096 (a Llama-3-8B MLP's up and down
        /// projections); m = 1, 4, 8, 16, 4096. Overrides the options above.
        #[arg(long)]
        sweep: bool,
    },
    /// Rebuild results.json, results.md and the plots in --report-dir from one or more
    /// results.json files, merged in the order given; where files repeat a rung at a shape, the
    /// first record is kept (needs no GPU).
    Report {
        /// The results.json files to read.
        #[arg(long, num_args = 1.., required = true)]
        from: Vec<PathBuf>,
        /// The command that produced it, for the Markdown header.
        #[arg(long)]
        command: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DequantPath {
    Auto,
    Decode,
    Prefill,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Reference {
    Auto,
    Cpu,
    Cublas,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("sgemm-ladder: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Returns whether every rung that ran passed verification.
fn run(cli: Cli) -> Result<bool> {
    if cli.list {
        for rung in RUNGS {
            println!("{:<4} {:<38} {}", rung.name, rung.idea, rung.entry);
            for candidate in rung.candidates {
                println!(
                    "       candidate {:<28} {}",
                    candidate.name, candidate.entry
                );
            }
        }
        return Ok(true);
    }
    match &cli.command {
        Some(Command::Verify { count, max_dim }) => {
            // --seed: the seed of shapes and inputs.
            return verify(
                *count,
                *max_dim,
                cli.seed.unwrap_or_else(rand_seed),
                &cli.rungs,
            );
        }
        Some(Command::Report { from, command }) => {
            let mut records: Vec<Record> = Vec::new();
            for path in from {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let part: Vec<Record> = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a results.json", path.display()))?;
                records.extend(part);
            }
            // Files of overlapping runs: keep the first record of each rung and shape.
            let before = records.len();
            let mut seen = std::collections::HashSet::new();
            records.retain(|r| seen.insert(r.key()));
            if records.len() < before {
                println!(
                    "report: {} repeated records (same rung and shape as an earlier one) left out",
                    before - records.len()
                );
            }
            let device = records
                .first()
                .map_or("unknown device".to_string(), |r| r.device.clone());
            write_report(&cli.report_dir, &records, command, &device)?;
            println!("{}", text_table(&records));
            println!(
                "report written to {}/results.{{json,md}} and its plots",
                cli.report_dir.display()
            );
            return Ok(true);
        }
        Some(Command::Dequant {
            format,
            group,
            zero_points,
            m,
            k,
            n,
            blocks,
            path,
            sweep,
        }) => {
            let cases = if *sweep {
                sweep_cases()?
            } else {
                let mut cases = Vec::new();
                for f in format {
                    let format: WeightFormat = f.parse()?;
                    let group = match group.as_str() {
                        "per-channel" | "k" => *k,
                        g => g.parse().with_context(|| format!("--group {g}"))?,
                    };
                    let case = WeightCase {
                        format,
                        group,
                        zero_points: *zero_points,
                        k: *k,
                        n: *n,
                    };
                    cases.push((case, m.clone()));
                }
                cases
            };
            // Shapes, groups and formats are checked before any GPU work.
            for (case, rows) in &cases {
                for &m in rows {
                    GemmShape::new(m, case.n, case.k)?;
                }
                if case.format != WeightFormat::F16
                    && (case.group == 0 || !case.k.is_multiple_of(case.group))
                {
                    return Err(rust_gemm::GemmError::GroupSize {
                        group: case.group,
                        k: case.k,
                    }
                    .into());
                }
                rust_gemm::quant::prepack::check_group(case.format, case.group, case.k)?;
            }
            let path = match path {
                DequantPath::Auto => None,
                DequantPath::Decode => Some(DequantKernel::Decode),
                DequantPath::Prefill => Some(DequantKernel::Prefill),
            };
            return dequant(&cli, &cases, *blocks, path);
        }
        None => {}
    }
    let rungs = select_rungs(&cli.rungs)?;
    let shapes = shapes(&cli)?;
    if std::env::var("NVIDIA_TF32_OVERRIDE").is_ok_and(|v| v.trim() != "0") {
        bail!(
            "NVIDIA_TF32_OVERRIDE is set: cuBLAS would use TF32 and the fp32 comparison would be meaningless; unset it"
        );
    }
    let seed = cli.seed.unwrap_or_else(rand_seed);
    let options = BenchOptions {
        warmup: cli.warmup as usize,
        reps: cli.reps as usize,
        reference: match cli.reference {
            Reference::Auto => ReferencePolicy::Auto,
            Reference::Cpu => ReferencePolicy::Cpu,
            Reference::Cublas => ReferencePolicy::Cublas,
        },
    };

    let gpu = Gpu::new(PTX)?;
    let info = gpu.info();
    println!(
        "device: {} (sm_{}{}, {} SMs, {} MiB L2), seed {seed}",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.l2_bytes >> 20
    );

    let cache = cli
        .tune_cache
        .clone()
        .unwrap_or_else(|| cli.report_dir.join("autotune-cache.json"));
    let mut tuner = Autotuner::new(Some(cache)).map_err(anyhow::Error::msg)?;
    tuner.force = cli.autotune;
    let mut show_search = |rung: &Rung, trials: &[Trial]| print_search(rung, trials);

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
            println!(
                "  {shape:<18} {:<7} {:>10} GFLOP/s  rel error {:<9}  {}",
                r.rung,
                r.gflops.map_or("-".into(), |g| format!("{g:.0}")),
                r.rel_error.map_or("-".into(), |e| format!("{e:.2e}")),
                r.verdict()
            );
        }
        records.extend(rows);
    }

    println!("\n{}", text_table(&records));
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    write_report(&cli.report_dir, &records, &command, &info.name)
        .with_context(|| format!("writing the report to {}", cli.report_dir.display()))?;
    println!(
        "report written to {}/results.{{json,md}} and plot.svg",
        cli.report_dir.display()
    );

    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed())
        .map(|r| format!("{} at {}×{}×{}", r.rung, r.m, r.n, r.k))
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "sgemm-ladder: verification FAILED for {}",
            failed.join(", ")
        );
    }
    Ok(failed.is_empty())
}

/// The `dequant --sweep` cases, each with its rows.
fn sweep_cases() -> Result<Vec<(WeightCase, Vec<usize>)>> {
    let mut formats: Vec<(WeightFormat, usize, bool)> = (1..=8)
        .map(|b| (WeightFormat::Unsigned(b), 128, false))
        .collect();
    formats.push((WeightFormat::Signed(4), 128, false));
    formats.push((WeightFormat::Unsigned(4), 128, true));
    formats.push((WeightFormat::Unsigned(4), 32, false));
    formats.push((WeightFormat::Unsigned(4), 64, false));
    formats.push((WeightFormat::Unsigned(4), 0, false));
    for f in ["e2m1", "e3m2", "e2m3", "e4m3", "e5m2"] {
        formats.push((f.parse()?, 128, false));
    }
    formats.push((WeightFormat::F16, 0, false));
    let mut cases = Vec::new();
    for (k, n) in [(8192, 57344), (4096, 14336), (14336, 4096)] {
        for &(format, group, zero_points) in &formats {
            let group = if group == 0 { k } else { group };
            let case = WeightCase {
                format,
                group,
                zero_points,
                k,
                n,
            };
            cases.push((case, vec![1, 4, 8, 16, 4096]));
        }
    }
    Ok(cases)
}

/// `dequant`: returns whether every case passed verification.
fn dequant(
    cli: &Cli,
    cases: &[(WeightCase, Vec<usize>)],
    blocks: Option<usize>,
    path: Option<DequantKernel>,
) -> Result<bool> {
    let seed = cli.seed.unwrap_or_else(rand_seed);
    let gpu = Gpu::new(PTX)?;
    let mut bench = DequantBench::new(&gpu)?;
    println!(
        "device: {}, seed {seed}, device-to-device copy bandwidth {:.0} GB/s",
        gpu.info().name,
        bench.copy_gbs
    );
    let options = DequantOptions {
        warmup: cli.warmup as usize,
        reps: cli.reps as usize,
        blocks,
        path,
        seed,
    };
    let mut records: Vec<Record> = Vec::new();
    for (i, (case, rows)) in cases.iter().enumerate() {
        bench.check_fits(case, rows).with_context(|| {
            format!(
                "{} group {} at k={} n={}",
                case.format, case.group, case.k, case.n
            )
        })?;
        let weights = RandomWeights::new(*case, seed.wrapping_add(i as u64))?;
        let new = bench.run(&weights, rows, &options).with_context(|| {
            format!(
                "{} group {} at k={} n={}",
                case.format, case.group, case.k, case.n
            )
        })?;
        for r in &new {
            let d = r.dequant.as_ref().expect("dequant record");
            println!(
                "  {:<16} {:<5}{:<4} g{:<6} {:>5}×{}×{}  {:>9.1} µs  cuBLAS fp16 {:>9.1} µs  {:>5.2}× (ideal {:.2}×)  {:>5.0} GB/s  blocks {:<3} rel error {:.2e}  {}",
                r.rung,
                d.format,
                if d.zero_points { "+zp" } else { "" },
                d.group,
                r.m,
                r.n,
                r.k,
                d.time_us,
                d.reference_us,
                d.speedup,
                d.ideal_speedup,
                d.bandwidth_gbs,
                d.blocks,
                r.rel_error.unwrap_or(f64::NAN),
                r.verdict()
            );
        }
        records.extend(new);
    }
    println!("\n{}", dequant_text_table(&records));
    // Keep the folder's other records (the ladder's, other formats'), replacing repeats.
    let results = cli.report_dir.join("results.json");
    let mut all: Vec<Record> = match std::fs::read_to_string(&results) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a results.json", results.display()))?,
        Err(_) => Vec::new(),
    };
    let keys: std::collections::HashSet<_> = records.iter().map(Record::key).collect();
    all.retain(|r| !keys.contains(&r.key()));
    all.extend(records.iter().cloned());
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    write_report(&cli.report_dir, &all, &command, &gpu.info().name)
        .with_context(|| format!("writing the report to {}", cli.report_dir.display()))?;
    println!(
        "report written to {}/results.{{json,md}} and {}",
        cli.report_dir.display(),
        rust_gemm::harness::report::DEQUANT_PLOT
    );
    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed())
        .map(|r| {
            let d = r.dequant.as_ref().expect("dequant record");
            format!(
                "{} {} g{} at {}×{}×{}",
                r.rung, d.format, d.group, r.m, r.n, r.k
            )
        })
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "sgemm-ladder: verification FAILED for {}",
            failed.join(", ")
        );
    }
    Ok(failed.is_empty())
}

/// `verify`: returns whether every check passed.
fn verify(count: usize, max_dim: usize, seed: u64, names: &[String]) -> Result<bool> {
    let wanted = select_rungs(names)?;
    let kernels: Vec<_> = all_kernels()
        .into_iter()
        .filter(|(label, _)| {
            wanted
                .iter()
                .any(|r| label.split('/').next() == Some(r.name))
        })
        .collect();
    let gpu = Gpu::new(PTX)?;
    println!(
        "verify: {count} random shapes (dimensions up to {max_dim}), {} kernels, seed {seed}, on {}",
        kernels.len(),
        gpu.info().name
    );
    let (mut passed, mut failed, mut skipped) = (0usize, Vec::new(), 0usize);
    for (i, shape) in random_shapes(count, max_dim, seed).iter().enumerate() {
        let checks = check_shape(&gpu, &kernels, shape, seed.wrapping_add(i as u64 + 1))
            .with_context(|| format!("at shape {shape}"))?;
        for check in checks {
            match check.outcome {
                Ok(v) if v.passed => passed += 1,
                Ok(v) => failed.push(format!(
                    "{} at {}: rel error {:.3e} (tolerance {:.3e}), {} elements outside the bound",
                    check.kernel, check.shape, v.rel_error, v.tolerance, v.elements_out_of_bound
                )),
                Err(_) => skipped += 1,
            }
        }
    }
    for line in &failed {
        println!("FAIL {line}");
    }
    if !failed.is_empty() {
        println!(
            "reproduce with: sgemm-ladder verify --seed {seed} --count {count} --max-dim {max_dim}"
        );
    }
    println!(
        "verify: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    Ok(failed.is_empty())
}

fn print_search(rung: &Rung, trials: &[Trial]) {
    println!(
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
            Ok(ms) => println!(
                "    {:<12} {ms:>9.3} ms{}",
                trial.candidate,
                if *ms == best { "  <- fastest" } else { "" }
            ),
            Err(why) => println!("    {:<12} cannot run: {why}", trial.candidate),
        }
    }
}

fn select_rungs(names: &[String]) -> Result<Vec<&'static Rung>> {
    if names.is_empty() {
        return Ok(RUNGS.iter().collect());
    }
    names
        .iter()
        .map(|name| Rung::by_name(name.trim()).map_err(Into::into))
        .collect()
}

fn shapes(cli: &Cli) -> Result<Vec<GemmShape>> {
    let mut shapes = Vec::new();
    for &size in &cli.sizes {
        shapes.push(GemmShape::square(size).with_context(|| format!("--sizes {size}"))?);
    }
    for text in cli.shapes.iter().filter(|s| !s.trim().is_empty()) {
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

fn rand_seed() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (std::process::id() as u64).rotate_left(32)
}
