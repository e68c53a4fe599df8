//! `sgemm-ladder dequant-layers`: a sequence of quantized layers through the library's API,
//! queued eagerly (one call per layer) against the same calls captured into a CUDA graph and
//! replayed with one launch, and each layer alone; the records go into the report folder's
//! layers.json.

use crate::dequant::DequantActivation;
use crate::options::{PtxChoice, ReportDir, Timing, seed_or_random};
use crate::output::{self, say};
use anyhow::{Context, Result, bail};
use clap::Args;
use rust_gemm::harness::layers_bench::{
    LayersBench, LayersCase, LayersOptions, LayersRecord, open_capturable,
};
use rust_gemm::quant::format::WeightFormat;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

/// A sequence of quantized layers (x → layer 1 → layer 2 → …) through the library's API at
/// decode-sized batches: the eager calls, one per layer, against the same calls captured into a
/// CUDA graph (rust_gemm::Gemm::capture) and replayed with one launch, and each layer alone.
/// Medians of CUDA-event times, each repetition after an L2 flush from an idle device, so that
/// the host's launch gaps count. The replay's output is checked against the eager one's. Adds
/// the records to layers.json in the report folder (replacing earlier ones of the same
/// sequence, format and m).
#[derive(Args, Debug)]
#[command(
    mut_arg("reps", |arg| arg
        .default_value("50")
        .help("Timed repetitions of each (eager sequence, graph launch, each layer alone, in turn); medians are reported")),
    mut_arg("warmup", |arg| arg
        .help("Untimed repetitions before timing (warm-up also lasts at least 50 ms of GPU time)")),
)]
pub struct LayersArgs {
    /// Weight format of every layer: u1–u8, i2–i8, eXmY (e2m1, e4m3...), f16.
    #[arg(long, default_value = "u4")]
    format: String,

    /// Rows of k per scale: a number, or `per-channel`.
    #[arg(long, default_value = "128")]
    group: String,

    /// Rows of activations (batch), comma-separated; each gets its own graph.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    m: Vec<usize>,

    /// The layers in order, comma-separated, each KxN (its input's width, then its output's);
    /// each layer's N must be the next one's K.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4096x14336,14336x4096,4096x4096"
    )]
    layers: Vec<String>,

    /// Activations' (and outputs') type.
    #[arg(long, value_enum, default_value_t = DequantActivation::F16)]
    activation: DequantActivation,

    #[command(flatten)]
    timing: Timing,

    /// Seed of the random weights and activations (printed); random by default.
    #[arg(long)]
    seed: Option<u64>,

    #[command(flatten)]
    report: ReportDir,

    #[command(flatten)]
    ptx: PtxChoice,
}

/// The records file in the report folder.
const LAYERS_FILE: &str = "layers.json";

/// Returns whether every replay agreed with its eager run.
pub fn run(args: LayersArgs) -> Result<bool> {
    // Everything is checked before any GPU work.
    let case = case(&args)?;
    for &m in &args.m {
        if m == 0 {
            bail!("--m 0: every dimension of the product must be at least 1");
        }
    }
    let folder = crate::folder::ReportFolder::open(&args.report.report_dir)?;
    let path = folder.dir().join(LAYERS_FILE);
    let mut records = read_records(&path)?;

    let seed = seed_or_random(args.seed);
    let gemm = open_capturable(args.ptx.module())?;
    say!("device: {}, seed {seed}", gemm.device().name);
    say!(
        "{} g{}, {} activations, layers {}; medians of {} repetitions, L2 flushed before each",
        case.format,
        case.group.map_or("per-channel".into(), |g| g.to_string()),
        case.activation,
        args.layers.join(" → "),
        args.timing.reps
    );
    let mut bench = LayersBench::new(&gemm, &case, seed).context("packing the layers")?;
    let options = LayersOptions {
        warmup: args.timing.warmup as usize,
        reps: args.timing.reps as usize,
        seed,
    };
    say!(
        "{:>5}  {:<48} {:>10} {:>10} {:>12}  {:<32} replay vs eager",
        "m",
        "paths",
        "eager µs",
        "graph µs",
        "graph/eager",
        "layers alone µs (sum)"
    );
    let mut failed = Vec::new();
    for &m in &args.m {
        let record = bench.run(m, &options).with_context(|| format!("m = {m}"))?;
        let alone = record
            .layer_us
            .iter()
            .map(|t| format!("{t:.1}"))
            .collect::<Vec<_>>()
            .join(" + ");
        let check = if record.differing == 0 {
            "identical".to_string()
        } else {
            format!(
                "{} elements differ, by at most {:.1e} of the largest{}",
                record.differing,
                record.max_relative_difference,
                if record.reproducible {
                    " (every layer sums in a fixed order: FAILED)"
                } else {
                    " (decode tiles shared by 3+ blocks add in arrival order)"
                }
            )
        };
        say!(
            "{:>5}  {:<48} {:>10.1} {:>10.1} {:>11.2}×  {:<32} {}{}",
            m,
            record.paths.join(","),
            record.eager_us,
            record.graph_us,
            record.graph_us / record.eager_us,
            format!("{alone} = {:.1}", record.layer_sum_us),
            check,
            if record.passed { "" } else { "  FAILED" }
        );
        if !record.passed {
            failed.push(format!("m = {m}"));
        }
        records.retain(|r| !r.same_case(&record));
        records.push(record);
        // After every m, so that an interrupted run keeps what it measured.
        write_records(&path, &records)?;
    }
    say!("records written to {}", path.display());
    Ok(output::verification_passed(&failed))
}

/// The sequence the options describe, checked.
fn case(args: &LayersArgs) -> Result<LayersCase> {
    let format: WeightFormat = args
        .format
        .parse()
        .with_context(|| format!("--format {}", args.format))?;
    let group = match args.group.as_str() {
        "per-channel" | "k" => None,
        g => Some(g.parse().with_context(|| format!("--group {g}"))?),
    };
    if group == Some(0) {
        bail!(
            "--group 0: a group needs at least one row of k (give a size such as 128, or per-channel)"
        );
    }
    let mut layers = Vec::new();
    for text in &args.layers {
        let parsed = text
            .trim()
            .split_once(['x', 'X', '×'])
            .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
        let Some((k, n)) = parsed else {
            bail!("--layers {text}: each layer is KxN (for example 4096x14336)");
        };
        if k == 0 || n == 0 {
            bail!("--layers {text}: every dimension of the product must be at least 1");
        }
        layers.push((k, n));
    }
    for pair in layers.windows(2) {
        let ((k0, n0), (k1, n1)) = (pair[0], pair[1]);
        if n0 != k1 {
            bail!(
                "--layers {k0}x{n0},{k1}x{n1}: a layer's output ({n0} wide) is the next one's input, which is {k1} wide"
            );
        }
    }
    let case = LayersCase {
        format,
        group,
        activation: args.activation.into(),
        layers,
    };
    case.check()
        .with_context(|| format!("--format {} --group {}", args.format, args.group))?;
    Ok(case)
}

/// The records of `path`; none if there is no such file.
fn read_records(path: &Path) -> Result<Vec<LayersRecord>> {
    match fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a {LAYERS_FILE}", path.display())),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(Vec::new()),
        Err(err) => Err(err).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes `records` to `path` atomically (into a file beside it, then renamed over it).
fn write_records(path: &Path, records: &[LayersRecord]) -> Result<()> {
    let staging = path.with_extension(format!("json.{}", std::process::id()));
    let text = serde_json::to_string_pretty(records)?;
    fs::write(&staging, text + "\n")
        .and_then(|()| fs::rename(&staging, path))
        .with_context(|| format!("writing {}", path.display()))
}
