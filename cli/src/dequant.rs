//! `sgemm-ladder dequant`: the dequant GEMM (fp16 or bf16 activations × low-bit weights),
//! verified and timed against cuBLAS in the activations' type; its records are merged into the
//! report folder's results.json as each weight case finishes.

use crate::folder::{ReportFolder, merged};
use crate::options::{PtxChoice, ReportDir, Timing, command_line, seed_or_random};
use crate::output::{self, say};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use rust_gemm::harness::dequant_bench::{DequantBench, DequantOptions, RandomWeights, WeightCase};
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::harness::report::{DEQUANT_PLOT, Record, dequant_text_table};
use rust_gemm::quant::fast::{ActivationType, Path as DequantKernel};
use rust_gemm::quant::format::WeightFormat;
use rust_gemm::quant::prepack::check_group;
use rust_gemm::{GemmError, GemmShape};

/// The dequant GEMM (fp16 or bf16 activations × low-bit weights): verifies and times the fast
/// kernels against cuBLAS in the activations' type at the same shape, and adds the records to
/// results.json in the report folder (replacing earlier ones of the same kernel, format and shape)
/// as each weight matrix finishes.
#[derive(Args, Debug)]
#[command(mut_arg("warmup", |arg| arg.help(
    "Untimed warm-up launches before timing (at least this many; warm-up also lasts at least 50 ms of GPU time)"
)))]
pub struct DequantArgs {
    /// Weight formats, comma-separated: u1–u8, i2–i8, eXmY (e2m1, e4m3...), f16.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "u4",
        conflicts_with = "sweep"
    )]
    format: Vec<String>,

    /// Rows of k per scale: a number, or `per-channel`.
    #[arg(long, default_value = "128", conflicts_with = "sweep")]
    group: String,

    /// Per-group zero points (unsigned formats u1–u8 only).
    #[arg(long, conflicts_with = "sweep")]
    zero_points: bool,

    /// Rows of A (batch), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,4,8,16",
        conflicts_with = "sweep"
    )]
    m: Vec<usize>,

    /// Reduction length.
    #[arg(long, default_value_t = 8192, conflicts_with = "sweep")]
    k: usize,

    /// Columns of W and C.
    #[arg(long, default_value_t = 57344, conflicts_with = "sweep")]
    n: usize,

    /// Decode kernel blocks, each taking an equal share of the work (default: two per SM).
    #[arg(long)]
    blocks: Option<usize>,

    /// Kernel: decode, batched (decode with 64-row blocks), prefill, fused (Hopper, integer
    /// codes: the weights decoded inside a wgmma GEMM), or auto (decode for m ≤ 16, or m ≤ 32
    /// at layers under 2^27 weights with codes of at most 4 bits; batched up to 256 where the
    /// device has the shared memory, the fused kernel in its place from 193 rows where the
    /// module has it; else prefill).
    #[arg(long, value_enum, default_value_t = DequantPath::Auto)]
    path: DequantPath,

    /// Activations' (and output's) type: f16, or bf16 (against cuBLAS bf16). Also for --sweep.
    #[arg(long, value_enum, default_value_t = DequantActivation::F16)]
    activation: DequantActivation,

    /// The full sweep: u4 (group 128) at k×n = 8192×57344 (the Tilus paper's shape),
    /// 4096×14336 and 14336×4096 (a Llama-3-8B MLP's up and down projections), 8192×28672 and
    /// 28672×8192 (Llama-3-70B's) for m = 1, 4, 16, 32, 64, 128, 256, 1024, 4096; every other
    /// width u1–u8, i4, u4 with zero points and with groups 32/64/per-channel,
    /// e2m1/e3m2/e2m3/e4m3/e5m2 and f16 at the first three layers for m = 1, 16, 64 (and 256
    /// at the first). Replaces --format, --group, --zero-points, --m, --k and --n (which
    /// cannot be given with it).
    #[arg(long)]
    sweep: bool,

    #[command(flatten)]
    timing: Timing,

    /// Seed of the random weights and activations (printed, so a run can be repeated); random
    /// by default.
    #[arg(long)]
    seed: Option<u64>,

    #[command(flatten)]
    report: ReportDir,

    #[command(flatten)]
    ptx: PtxChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DequantPath {
    Auto,
    Decode,
    Batched,
    Prefill,
    Fused,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DequantActivation {
    F16,
    Bf16,
}

impl From<DequantActivation> for ActivationType {
    fn from(activation: DequantActivation) -> Self {
        match activation {
            DequantActivation::F16 => ActivationType::F16,
            DequantActivation::Bf16 => ActivationType::Bf16,
        }
    }
}

/// One weight matrix and the rows of A it is multiplied with.
type Case = (WeightCase, Vec<usize>);

/// Returns whether every case passed verification.
pub fn run(args: DequantArgs) -> Result<bool> {
    // Shapes, groups, formats and the report folder are checked before any GPU work.
    let cases = if args.sweep {
        sweep_cases()?
    } else {
        cases(&args)?
    };
    if args.blocks == Some(0) {
        bail!("--blocks 0: the decode kernel needs at least one block");
    }
    let path = match args.path {
        DequantPath::Auto => None,
        DequantPath::Decode => Some(DequantKernel::Decode),
        DequantPath::Batched => Some(DequantKernel::Batched),
        DequantPath::Prefill => Some(DequantKernel::Prefill),
        DequantPath::Fused => Some(DequantKernel::Fused),
    };
    let folder = ReportFolder::open(&args.report.report_dir)?;
    // The folder's other records (the ladder's, other formats') are kept; read them now, so
    // that a file that is not a results.json stops the run before it starts.
    let earlier = folder.read_results()?;

    let seed = seed_or_random(args.seed);
    let gpu = Gpu::open_module(args.ptx.module())?;
    let mut bench = DequantBench::new(&gpu)?;
    let device = gpu.info().name.clone();
    say!(
        "device: {device}, seed {seed}, device-to-device copy bandwidth {:.0} GB/s",
        bench.copy_gbs
    );
    let options = DequantOptions {
        warmup: args.timing.warmup as usize,
        reps: args.timing.reps as usize,
        blocks: args.blocks,
        path,
        seed,
        activation: args.activation.into(),
    };
    let command = command_line();
    // cuBLAS's type as this line has always named fp16.
    let cublas_type = match options.activation {
        ActivationType::F16 => "fp16",
        ActivationType::Bf16 => "bf16",
    };
    let mut records: Vec<Record> = Vec::new();
    for (i, (case, rows)) in cases.iter().enumerate() {
        let what = || {
            format!(
                "{} group {} at k={} n={}",
                case.format, case.group, case.k, case.n
            )
        };
        bench.check_fits(case, rows).with_context(what)?;
        let weights = RandomWeights::new(*case, seed.wrapping_add(i as u64))?;
        let new = bench.run(&weights, rows, &options).with_context(what)?;
        for r in &new {
            let d = r.dequant.as_ref().expect("dequant record");
            say!(
                "  {:<16} {:<5}{:<4} g{:<6} {:>5}×{}×{}  {:>9.1} µs  cuBLAS {} {:>9.1} µs  {:>5.2}× (ideal {:.2}×)  {:>5.0} GB/s  blocks {:<3} rel error {:.2e}  {}",
                r.rung,
                d.format,
                if d.zero_points { "+zp" } else { "" },
                d.group,
                r.m,
                r.n,
                r.k,
                d.time_us,
                cublas_type,
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
        // After every case, so that an interrupted run keeps what it measured.
        folder.write(&merged(&earlier, &records), &command, &device)?;
    }
    say!("\n{}", dequant_text_table(&records));
    say!(
        "report written to {}/results.{{json,md}} and {DEQUANT_PLOT}",
        folder.dir().display()
    );
    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed())
        .map(|r| {
            let d = r.dequant.as_ref().expect("dequant record");
            format!(
                "{} {} g{} {} at {}×{}×{}",
                r.rung, d.format, d.group, d.activation, r.m, r.n, r.k
            )
        })
        .collect();
    Ok(output::verification_passed(&failed))
}

/// The cases of `--format`, `--group`, `--zero-points`, `--m`, `--k` and `--n`, checked; an
/// error names the option it comes from.
fn cases(args: &DequantArgs) -> Result<Vec<Case>> {
    let zero =
        |flag: &str| anyhow::anyhow!("{flag} 0: every dimension of the product must be at least 1");
    if args.m.contains(&0) {
        return Err(zero("--m"));
    }
    if args.k == 0 {
        return Err(zero("--k"));
    }
    if args.n == 0 {
        return Err(zero("--n"));
    }
    for &m in &args.m {
        GemmShape::new(m, args.n, args.k)
            .with_context(|| format!("--m {m} --k {} --n {}", args.k, args.n))?;
    }
    let group = match args.group.as_str() {
        "per-channel" | "k" => args.k,
        g => g.parse().with_context(|| format!("--group {g}"))?,
    };
    if group == 0 {
        bail!(
            "--group {}: a group needs at least one row of k (give a size such as 128, or per-channel)",
            args.group
        );
    }
    let mut cases = Vec::new();
    for text in &args.format {
        let format: WeightFormat = text.parse().with_context(|| format!("--format {text}"))?;
        if args.zero_points && !matches!(format, WeightFormat::Unsigned(_)) {
            bail!(
                "--zero-points: {format} weights take no zero points (only the unsigned formats u1–u8 do; signed, float and f16 weights are centred on zero); leave out --zero-points or give a u format"
            );
        }
        let case = WeightCase {
            format,
            group,
            zero_points: args.zero_points,
            k: args.k,
            n: args.n,
        };
        check_case_group(&case).with_context(|| format!("--group {}", args.group))?;
        cases.push((case, args.m.clone()));
    }
    Ok(cases)
}

/// Checks that the case's group divides k and that the fast kernels take it (fp16 weights
/// have no groups).
fn check_case_group(case: &WeightCase) -> Result<(), GemmError> {
    if case.format == WeightFormat::F16 {
        return Ok(());
    }
    if !case.k.is_multiple_of(case.group) {
        return Err(GemmError::GroupSize {
            group: case.group,
            k: case.k,
        });
    }
    check_group(case.format, case.group, case.k)
}

/// The `dequant --sweep` cases, each with its rows: u4 with group 128 (the serving bars'
/// format) at the layers of issue 16 (k × n = 4096 × 14336, 14336 × 4096, 8192 × 28672,
/// 28672 × 8192 and 8192 × 57344) for every batch size from decode to prefill; every other
/// format at 8192 × 57344 (m = 1, 16, 64, 256) and at the two Llama-3-8B layers (m = 1, 16, 64).
fn sweep_cases() -> Result<Vec<Case>> {
    let mut formats: Vec<(WeightFormat, usize, bool)> = (1..=8)
        .filter(|&b| b != 4)
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
    let u4 = (WeightFormat::Unsigned(4), 128, false);
    let serving = vec![1, 4, 16, 32, 64, 128, 256, 1024, 4096];
    let mut cases = Vec::new();
    let mut push = |(format, group, zero_points): (WeightFormat, usize, bool),
                    (k, n): (usize, usize),
                    rows: &[usize]|
     -> Result<()> {
        let group = if group == 0 { k } else { group };
        let case = WeightCase {
            format,
            group,
            zero_points,
            k,
            n,
        };
        check_case_group(&case)?;
        cases.push((case, rows.to_vec()));
        Ok(())
    };
    for layer in [
        (8192, 57344),
        (4096, 14336),
        (14336, 4096),
        (8192, 28672),
        (28672, 8192),
    ] {
        push(u4, layer, &serving)?;
    }
    for &format in &formats {
        push(format, (8192, 57344), &[1, 16, 64, 256])?;
        push(format, (4096, 14336), &[1, 16, 64])?;
        push(format, (14336, 4096), &[1, 16, 64])?;
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sweep_case_is_valid() {
        let cases = sweep_cases().unwrap();
        assert_eq!(cases.len(), 5 + 18 * 3);
        for (case, rows) in &cases {
            assert!(!case.zero_points || matches!(case.format, WeightFormat::Unsigned(_)));
            for &m in rows {
                GemmShape::new(m, case.n, case.k).unwrap();
            }
        }
    }
}
