//! `sgemm-ladder shapes`: the shape suite (issue 14) through the library's dispatch and through
//! cuBLAS in the same precision and B layout, each case verified and timed in the same run; the
//! records are merged into the report folder's results.json as each shape finishes.

use crate::folder::{ReportFolder, merged};
use crate::options::{ReportDir, Timing, command_line, seed_or_random};
use crate::output::{self, say};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use rust_gemm::DType;
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::harness::report::Record;
use rust_gemm::harness::suite::{SuiteShape, groups, parse_suite};
use rust_gemm::harness::suite_bench::{SuiteBench, SuiteOptions};
use rust_gemm::harness::suite_report::{SUITE_PLOT, case_label, summary_text};
use std::path::PathBuf;

/// The suite `shapes` runs unless `--suite` names another file.
pub const SUITE: &str = include_str!("../shapes/suite.txt");

/// The shape suite: square, LLM-layer and ragged shapes through the library's dispatch
/// (rust_gemm::Gemm::matmul) and through cuBLAS in the same precision and B layout, verified
/// and timed alternately in the same run. Reports the ratio per shape, and per precision the
/// geometric mean and the worst shape; records are added to results.json in the report folder
/// (replacing earlier ones of the same shape, precision and layout) as each shape finishes.
#[derive(Args, Debug)]
#[command(
    mut_arg("reps", |arg| arg
        .default_value("50")
        .help("Timed launches of each side (ours and cuBLAS, alternating) at most; the medians are reported")),
    mut_arg("warmup", |arg| arg
        .help("Untimed warm-up launches of each side at least (warm-up also lasts at least 50 ms of GPU time)")),
    mut_arg("report_dir", |arg| arg.visible_alias("out")),
)]
pub struct ShapesArgs {
    /// Groups of the suite to run, comma-separated (square, llm, ragged); all by default.
    #[arg(long, value_delimiter = ',')]
    group: Vec<String>,

    /// Precisions, comma-separated: f32 (exact fp32), tf32, f16, bf16.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "f32,tf32,f16,bf16"
    )]
    precision: Vec<Precision>,

    /// B layouts, comma-separated: kn (B stored [k, n]), nk (stored [n, k]); each shape runs in
    /// those of its suite layouts that are given. Both by default.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "kn,nk")]
    layout: Vec<Layout>,

    /// Only shapes whose name or MxNxK (e.g. 16x28672x8192) contains one of these texts,
    /// comma-separated.
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,

    /// Only shapes of at most this many floating-point operations per product (2·m·n·k), e.g.
    /// 1e12.
    #[arg(long)]
    max_flops: Option<f64>,

    /// Stop timing a case once its timed launches (ours and cuBLAS together) add up to this
    /// many milliseconds of GPU time, after at least 3 of each: large products get fewer
    /// repetitions than --reps.
    #[arg(long, default_value_t = 1000.0)]
    max_ms: f64,

    /// The suite file (one shape a line: group name m n k layouts); default: the suite
    /// embedded from cli/shapes/suite.txt.
    #[arg(long)]
    suite: Option<PathBuf>,

    /// Run this kernel (a name of `rust_gemm::Gemm::kernels()`, e.g. v18, v15, general)
    /// instead of dispatch's choice; cases it refuses are recorded as skipped. For measuring
    /// what dispatch should choose.
    #[arg(long)]
    kernel: Option<String>,

    /// Split k into about this many slices (1: never split) instead of dispatch's choice;
    /// cases no kernel can split so are recorded as skipped.
    #[arg(long)]
    split_k: Option<u32>,

    /// Stream-K on (`true`) or off (`false`) instead of dispatch's choice: the persistent TMA
    /// kernels compute their last tiles in shares of k; cases whose kernel cannot are recorded
    /// as skipped when it is asked on.
    #[arg(long)]
    stream_k: Option<bool>,

    /// Print the selected cases and exit (needs no GPU).
    #[arg(long)]
    list: bool,

    #[command(flatten)]
    timing: Timing,

    /// Seed of the random inputs (printed, so a run can be repeated); random by default.
    #[arg(long)]
    seed: Option<u64>,

    #[command(flatten)]
    report: ReportDir,
}

/// A precision on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Precision {
    /// fp32 A, B, C, exact fp32 arithmetic (cuBLAS with TF32 off).
    F32,
    /// fp32 A, B, C, inputs rounded to TF32 on the tensor cores, fp32 accumulation.
    Tf32,
    /// fp16 A, B, C, fp32 accumulation.
    F16,
    /// bf16 A, B, C, fp32 accumulation.
    Bf16,
}

impl Precision {
    fn dtype(self) -> DType {
        match self {
            Precision::F32 => DType::F32,
            Precision::Tf32 => DType::Tf32,
            Precision::F16 => DType::F16,
            Precision::Bf16 => DType::Bf16,
        }
    }
}

/// A B layout on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Layout {
    /// B stored [k, n].
    Kn,
    /// B stored [n, k] (C = A·Bᵀ, an nn.Linear weight).
    Nk,
}

impl Layout {
    fn b_layout(self) -> rust_gemm::BLayout {
        match self {
            Layout::Kn => rust_gemm::BLayout::Kn,
            Layout::Nk => rust_gemm::BLayout::Nk,
        }
    }
}

/// One shape with the layouts it runs in.
struct Selected {
    entry: SuiteShape,
    layouts: Vec<rust_gemm::BLayout>,
}

/// Returns whether every case that ran passed verification.
pub fn run(args: ShapesArgs) -> Result<bool> {
    // The suite, the selection and the report folder are checked before any GPU work.
    let suite = match &args.suite {
        None => parse_suite(SUITE).map_err(anyhow::Error::msg)?,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--suite {}: cannot read it", path.display()))?;
            parse_suite(&text)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("--suite {}", path.display()))?
        }
    };
    let selected = select(&suite, &args)?;
    let mut precisions: Vec<DType> = Vec::new();
    for p in &args.precision {
        if !precisions.contains(&p.dtype()) {
            precisions.push(p.dtype());
        }
    }
    let cases: usize = selected.iter().map(|s| s.layouts.len()).sum::<usize>() * precisions.len();
    if args.list {
        for s in &selected {
            let layouts: Vec<&str> = s.layouts.iter().map(|l| l.label()).collect();
            say!(
                "{:<8} {:<28} {:<20} {:.3e} flops  B {}",
                s.entry.group,
                s.entry.name,
                s.entry.shape.to_string(),
                s.entry.shape.flops(),
                layouts.join(",")
            );
        }
        let labels: Vec<&str> = precisions.iter().map(|d| d.label()).collect();
        say!(
            "{} shapes, {cases} cases ({} shape × layout, each in {})",
            selected.len(),
            cases / precisions.len(),
            labels.join(", ")
        );
        return Ok(true);
    }
    if args.max_ms.is_nan() || args.max_ms <= 0.0 {
        bail!("--max-ms {}: the time budget must be positive", args.max_ms);
    }
    if std::env::var("NVIDIA_TF32_OVERRIDE").is_ok_and(|v| v.trim() != "0") {
        bail!(
            "NVIDIA_TF32_OVERRIDE is set: cuBLAS would use TF32 and the fp32 comparison would be meaningless; unset it"
        );
    }
    let folder = ReportFolder::open(&args.report.report_dir)?;
    // The folder's other records (the ladder's, the dequant GEMM's) are kept; read them now, so
    // that a file that is not a results.json stops the run before it starts.
    let earlier = folder.read_results()?;

    let seed = seed_or_random(args.seed);
    let gpu = Gpu::open()?;
    let bench = SuiteBench::new(&gpu)?;
    let device = gpu.info().name.clone();
    say!(
        "device: {device}, library PTX {}, seed {seed}, device-to-device copy bandwidth {:.0} GB/s; {} shapes, {cases} cases",
        bench.ptx_target(),
        bench.copy_gbs,
        selected.len()
    );
    let options = SuiteOptions {
        warmup: args.timing.warmup as usize,
        reps: args.timing.reps as usize,
        max_ms: args.max_ms,
        // Lives for the whole run (a CLI process): leaked once, not per case.
        kernel: args
            .kernel
            .clone()
            .map(|name| &*Box::leak(name.into_boxed_str())),
        split_k: args.split_k,
        stream_k: args.stream_k,
    };
    let command = command_line();
    let mut records: Vec<Record> = Vec::new();
    let mut done = 0usize;
    for (index, s) in selected.iter().enumerate() {
        let shape_seed = seed.wrapping_add(1000 * index as u64);
        let mut progress = |r: &Record| {
            done += 1;
            say!("[{done:>3}/{cases}] {}", progress_line(r));
        };
        let new = bench
            .run(
                &s.entry,
                &s.layouts,
                &precisions,
                &options,
                shape_seed,
                &mut progress,
            )
            .with_context(|| format!("at shape {} ({})", s.entry.name, s.entry.shape))?;
        records.extend(new);
        // After every shape, so that an interrupted run keeps what it measured.
        folder.write(&merged(&earlier, &records), &command, &device)?;
    }
    say!("\n{}", summary_text(&records));
    say!(
        "report written to {}/results.{{json,md}} and {SUITE_PLOT}",
        folder.dir().display()
    );
    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed())
        .map(|r| format!("{} {}", r.precision, case_label(r)))
        .collect();
    Ok(output::verification_passed(&failed))
}

/// One finished case, for the progress lines.
fn progress_line(r: &Record) -> String {
    let s = r.suite.as_ref().expect("a shape-suite record");
    let head = format!(
        "{:<4} {:<28} {:<18} B {}",
        r.precision,
        s.shape_name,
        format!("{}×{}×{}", r.m, r.n, r.k),
        s.b_layout
    );
    if let Some(reason) = &r.skipped {
        return format!("{head}  skipped: {reason}");
    }
    let time = |ms: Option<f64>| match ms {
        Some(ms) if ms < 1.0 => format!("{:>7.1} µs", ms * 1e3),
        Some(ms) => format!("{ms:>7.2} ms"),
        None => "-".to_string(),
    };
    format!(
        "{head}  {:<7}  ours {} {:>9.3} TFLOP/s  cuBLAS {} {:>9.3} TFLOP/s  {:>6.3}×  {:>5.1}% copy BW  {:>3} reps  rel error {:.2e}  {}",
        s.kernel.as_deref().unwrap_or("-"),
        time(r.time_ms),
        r.gflops.unwrap_or(f64::NAN) / 1e3,
        time(s.cublas_ms),
        r.reference_gflops.unwrap_or(f64::NAN) / 1e3,
        s.ratio.unwrap_or(f64::NAN),
        100.0 * s.copy_share.unwrap_or(f64::NAN),
        r.reps,
        r.rel_error.unwrap_or(f64::NAN),
        r.verdict()
    )
}

/// The shapes `--group`, `--filter`, `--max-flops` and `--layout` select, each with its
/// layouts; an error names the option that left nothing (or that names no group).
fn select(suite: &[SuiteShape], args: &ShapesArgs) -> Result<Vec<Selected>> {
    let known = groups(suite);
    for group in &args.group {
        if !known.contains(&group.as_str()) {
            bail!(
                "--group {group}: the suite has no such group (it has {})",
                known.join(", ")
            );
        }
    }
    if let Some(cap) = args.max_flops
        && (cap.is_nan() || cap <= 0.0)
    {
        bail!("--max-flops {cap}: the cap must be positive");
    }
    let in_groups: Vec<&SuiteShape> = suite
        .iter()
        .filter(|s| args.group.is_empty() || args.group.contains(&s.group))
        .collect();
    let patterns: Vec<&str> = args
        .filter
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    let matched: Vec<&SuiteShape> = in_groups
        .into_iter()
        .filter(|s| patterns.is_empty() || patterns.iter().any(|p| s.matches(p)))
        .collect();
    if matched.is_empty() {
        bail!(
            "--filter {}: no shape of the suite{} matches",
            args.filter.join(","),
            in_group_words(args)
        );
    }
    let capped: Vec<&SuiteShape> = matched
        .into_iter()
        .filter(|s| args.max_flops.is_none_or(|cap| s.shape.flops() <= cap))
        .collect();
    if capped.is_empty() {
        bail!(
            "--max-flops {}: every selected shape is larger (the smallest of the suite has {:.3e} flops)",
            args.max_flops.unwrap_or_default(),
            suite
                .iter()
                .map(|s| s.shape.flops())
                .fold(f64::INFINITY, f64::min)
        );
    }
    let wanted: Vec<rust_gemm::BLayout> = args.layout.iter().map(|l| l.b_layout()).collect();
    let selected: Vec<Selected> = capped
        .into_iter()
        .map(|s| Selected {
            entry: s.clone(),
            layouts: s
                .layouts
                .iter()
                .copied()
                .filter(|l| wanted.contains(l))
                .collect(),
        })
        .filter(|s| !s.layouts.is_empty())
        .collect();
    if selected.is_empty() {
        let labels: Vec<&str> = wanted.iter().map(|l| l.label()).collect();
        bail!(
            "--layout {}: no selected shape is listed in that layout",
            labels.join(",")
        );
    }
    Ok(selected)
}

/// ` in group square` (or nothing when every group is selected), for messages.
fn in_group_words(args: &ShapesArgs) -> String {
    match args.group.len() {
        0 => String::new(),
        1 => format!(" in group {}", args.group[0]),
        _ => format!(" in groups {}", args.group.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::collections::HashSet;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: ShapesArgs,
    }

    fn args(line: &[&str]) -> ShapesArgs {
        let argv = std::iter::once("shapes").chain(line.iter().copied());
        Wrapper::try_parse_from(argv).unwrap().args
    }

    fn count(selected: &[Selected], group: &str) -> (usize, usize) {
        let of_group: Vec<&Selected> = selected.iter().filter(|s| s.entry.group == group).collect();
        (
            of_group.len(),
            of_group.iter().map(|s| s.layouts.len()).sum(),
        )
    }

    #[test]
    fn the_embedded_suite_has_the_issues_shapes() {
        let suite = parse_suite(SUITE).unwrap();
        let all = select(&suite, &args(&[])).unwrap();
        // Square: 256 to 4096 in steps of 128 (31), then 5120, 6144, 8192; B [k, n] only.
        assert_eq!(count(&all, "square"), (34, 34));
        // LLM layers: 7 values of m × 9 (k, n) pairs, B both ways.
        assert_eq!(count(&all, "llm"), (63, 126));
        // Ragged and thin: 10 shapes, B both ways.
        assert_eq!(count(&all, "ragged"), (10, 20));
        assert_eq!(all.len(), 107);
        assert_eq!(groups(&suite), vec!["square", "llm", "ragged"]);
        let square: Vec<usize> = all
            .iter()
            .filter(|s| s.entry.group == "square")
            .map(|s| s.entry.shape.m)
            .collect();
        assert_eq!(square[..3], [256, 384, 512]);
        assert_eq!(square[30..], [4096, 5120, 6144, 8192]);
        // The largest product of the suite, and a few shapes by their dimensions.
        let named = |m, n, k| {
            all.iter()
                .any(|s| s.entry.shape == rust_gemm::GemmShape::new(m, n, k).unwrap())
        };
        assert!(named(4096, 57344, 8192) && named(1, 4096, 11008) && named(65537, 3, 17));
        assert!(named(17, 17, 65537) && named(33, 8191, 1025) && named(1, 1, 1));
        let llm_pairs: HashSet<(usize, usize)> = all
            .iter()
            .filter(|s| s.entry.group == "llm")
            .map(|s| (s.entry.shape.k, s.entry.shape.n))
            .collect();
        assert_eq!(llm_pairs.len(), 9);
    }

    #[test]
    fn options_narrow_the_selection() {
        let suite = parse_suite(SUITE).unwrap();
        let ragged = select(&suite, &args(&["--group", "ragged", "--layout", "nk"])).unwrap();
        assert_eq!(count(&ragged, "ragged"), (10, 10));
        let filtered = select(&suite, &args(&["--filter", "mlp-up.m16,x3x"])).unwrap();
        let names: Vec<&str> = filtered.iter().map(|s| s.entry.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "llama2-7b.mlp-up.m16",
                "llama3-8b.mlp-up.m16",
                "llama-70b.mlp-up.m16",
                "ragged-65537x3x17"
            ]
        );
        let small = select(&suite, &args(&["--max-flops", "1e9"])).unwrap();
        assert!(small.iter().all(|s| s.entry.shape.flops() <= 1e9));
        assert!(small.iter().any(|s| s.entry.name == "ragged-1x1x1"));
    }

    #[test]
    fn empty_selections_name_their_option() {
        let suite = parse_suite(SUITE).unwrap();
        for (line, expected) in [
            (&["--group", "cubes"][..], "--group cubes"),
            (
                &["--filter", "nothing-like-this"],
                "--filter nothing-like-this",
            ),
            (
                &["--group", "square", "--filter", "llama"],
                "in group square",
            ),
            (&["--max-flops", "1"], "--max-flops 1"),
            (&["--max-flops", "0"], "--max-flops 0"),
            (&["--group", "square", "--layout", "nk"], "--layout nk"),
        ] {
            let err = select(&suite, &args(line)).err().expect("refused");
            assert!(format!("{err:#}").contains(expected), "{line:?}: {err:#}");
        }
    }
}
