//! Result records, the table printed at the end of a run, and the report folder
//! (`results.json` and `results.md`).

use crate::GemmShape;
use crate::check::verify::Verification;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One implementation measured at one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Rung name (`v0`...) or `cublas`.
    pub rung: String,
    /// The rung's idea in a few words.
    pub idea: String,
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Reduction length.
    pub k: usize,
    /// Median time of one launch, milliseconds.
    pub time_ms: Option<f64>,
    /// `2·m·n·k / time`, in GFLOP/s.
    pub gflops: Option<f64>,
    /// The cuBLAS baseline of the same precision at the same shape (SGEMM with TF32 off for
    /// fp32 rungs), in GFLOP/s.
    pub reference_gflops: Option<f64>,
    /// `gflops / reference_gflops`, in percent.
    pub percent_of_reference: Option<f64>,
    /// Relative Frobenius error against the reference product.
    pub rel_error: Option<f64>,
    /// Largest absolute error of one element.
    pub max_abs_error: Option<f64>,
    /// The relative error the result had to stay under.
    pub tolerance: Option<f64>,
    /// What the result was compared with (`cpu-f64` or `cublas`).
    pub reference: Option<String>,
    /// Verification passed.
    pub passed: bool,
    /// Why the rung did not run at this shape (its documented limits), if it did not.
    pub skipped: Option<String>,
    /// The GPU.
    pub device: String,
    /// Seed of the random inputs.
    pub seed: u64,
    /// Timed launches behind the median.
    pub reps: usize,
    /// Element types and arithmetic: `fp32`, `tf32` or `fp16` (records written before the
    /// tensor-core rungs have none and read as `fp32`).
    #[serde(default = "fp32_label")]
    pub precision: String,
    /// The `.target` of the PTX module the kernel ran from (`sm_90a`, or `sm_80` for the
    /// portable module); records written before there were two modules have none (they are
    /// `sm_90a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx_target: Option<String>,
    /// Dequant GEMM records only: the weight format and what the benchmark measured.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub dequant: Option<DequantInfo>,
    /// Shape-suite records only (`sgemm-ladder shapes`): the suite's shape, B's layout, the
    /// kernel dispatch chose and what the run measured.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
}

/// What a shape-suite record adds to a ladder record. Its `rung` is `dispatch` (the library's
/// `Gemm::matmul`), its `precision` `fp32` (exact), `tf32`, `fp16` or `bf16`; time, GFLOP/s,
/// cuBLAS's rate in the same precision and B layout, and the verification are in the common
/// fields. Every field name differs from the common fields and from [`DequantInfo`]'s, since
/// both are flattened into one JSON object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// The suite's group (`square`, `llm`, `ragged`).
    pub suite_group: String,
    /// The shape's name in the suite (`llama-70b.mlp-up.m16`).
    pub shape_name: String,
    /// B's layout: `kn` (B stored `[k, n]`) or `nk` (stored `[n, k]`, C = A·Bᵀ).
    pub b_layout: String,
    /// The kernel dispatch chose (`v18`, `v15`, `v14`, `v13`, `general`); none when the case
    /// did not run.
    #[serde(default)]
    pub kernel: Option<String>,
    /// The split-K slices of k it ran in (absent or 1: no split).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub splits: Option<u32>,
    /// The tiles it computed as a stream-K tail (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_k_tiles: Option<u32>,
    /// Its PTX entry point.
    #[serde(default)]
    pub kernel_entry: Option<String>,
    /// cuBLAS's median time at the same shape, precision and B layout, milliseconds.
    #[serde(default)]
    pub cublas_ms: Option<f64>,
    /// `cublas_ms / time_ms`: our rate over cuBLAS's (above 1: faster than cuBLAS).
    #[serde(default)]
    pub ratio: Option<f64>,
    /// Bytes of A, B and C, each moved once: the least any kernel must move.
    pub moved_bytes: u64,
    /// `moved_bytes` over our time, GB/s.
    #[serde(default)]
    pub achieved_gbs: Option<f64>,
    /// The run's device-to-device copy bandwidth (1 GiB, read plus write), GB/s.
    #[serde(default)]
    pub copy_gbs: Option<f64>,
    /// `achieved_gbs / copy_gbs`: how close to the memory's speed our kernel ran.
    #[serde(default)]
    pub copy_share: Option<f64>,
    /// The same share for cuBLAS.
    #[serde(default)]
    pub cublas_copy_share: Option<f64>,
    /// At most 16 rows or columns of C and at least 2²⁴ elements in the larger operand
    /// (decode-like matrix–vector products): bound by memory on any GPU, held to the copy
    /// bandwidth rather than to a FLOP rate.
    pub memory_bound: bool,
}

/// What a dequant GEMM record adds to a ladder record (its `precision` is `dequant`; time,
/// GFLOP/s, cuBLAS's rate in the activations' type and the verification are in the common
/// fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DequantInfo {
    /// Weight format (`u4`, `i8`, `e2m1`, `f16`...).
    pub format: String,
    /// Rows of k per scale (k itself for per-channel scales and fp16 weights).
    pub group: usize,
    /// Unsigned formats with per-group zero points.
    pub zero_points: bool,
    /// Median time, microseconds.
    pub time_us: f64,
    /// cuBLAS in the activations' type (`cublasGemmEx`, fp16 or bf16 in and out, fp32
    /// compute) at the same shape, microseconds.
    pub reference_us: f64,
    /// `reference_us / time_us`.
    pub speedup: f64,
    /// Bytes the kernel must move (packed weights, scales, zero points, A, C).
    pub bytes: usize,
    /// `bytes / time`, GB/s.
    pub bandwidth_gbs: f64,
    /// `bandwidth_gbs` as a share of the measured device-to-device copy bandwidth.
    pub bandwidth_share: f64,
    /// The speedup over fp16 weights if both ran at the same bandwidth: the fp16 product's
    /// bytes over these.
    pub ideal_speedup: f64,
    /// Blocks of the decode kernel (0 for prefill).
    pub blocks: usize,
    /// Relative Frobenius error against the CPU product of the exact dequantized weights (the
    /// verified `rel_error` is against the weights as the path uses them: rounded to fp16 by
    /// the prefill expansion, exact in the decode kernel for integers and small floats).
    pub rel_error_unrounded: f64,
    /// Output elements compared with the CPU (a sample of rows and columns at large shapes).
    pub checked_elements: usize,
    /// Prefill only: the expansion to fp16 alone, microseconds (the rest is the GEMM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand_us: Option<f64>,
    /// The activations' (and output's) type: `f16` or `bf16` (`f16` in records from before
    /// bf16 activations, which have no such field).
    #[serde(default = "f16_label")]
    pub activation: String,
}

fn fp32_label() -> String {
    "fp32".to_string()
}

fn f16_label() -> String {
    "f16".to_string()
}

impl DequantInfo {
    /// Whether the activations were fp16 (what every record before bf16 measured).
    pub fn fp16_activations(&self) -> bool {
        self.activation == "f16"
    }
}

impl Record {
    /// An empty record for `rung` at `shape`, to be filled by the harness.
    pub fn new(
        rung: &str,
        idea: &str,
        shape: &GemmShape,
        device: &str,
        seed: u64,
        reps: usize,
    ) -> Self {
        Record {
            rung: rung.to_string(),
            idea: idea.to_string(),
            m: shape.m,
            n: shape.n,
            k: shape.k,
            time_ms: None,
            gflops: None,
            reference_gflops: None,
            percent_of_reference: None,
            rel_error: None,
            max_abs_error: None,
            tolerance: None,
            reference: None,
            passed: false,
            skipped: None,
            device: device.to_string(),
            seed,
            reps,
            precision: fp32_label(),
            ptx_target: None,
            dequant: None,
            suite: None,
        }
    }

    /// A record of the SGEMM ladder (a rung or its cuBLAS baseline), not of the dequant GEMM
    /// or of the shape suite.
    pub fn is_ladder(&self) -> bool {
        self.dequant.is_none() && self.suite.is_none()
    }

    /// What identifies a measurement: rung, shape, for dequant records the format, group, zero
    /// points and activation type, for shape-suite records the precision, B layout and the
    /// shape's name.
    pub fn key(&self) -> (String, usize, usize, usize, String) {
        let variant = match (&self.dequant, &self.suite) {
            // fp16 activations keep the key they had before bf16 ones existed.
            (Some(d), _) if d.fp16_activations() => {
                format!("{} g{} z{}", d.format, d.group, d.zero_points)
            }
            (Some(d), _) => format!(
                "{} g{} z{} {}",
                d.format, d.group, d.zero_points, d.activation
            ),
            // The suite's name too: square-4096 and llama-7b.attn.m4096 are both 4096³.
            (None, Some(s)) => format!("{} {} {}", self.precision, s.b_layout, s.shape_name),
            (None, None) => String::new(),
        };
        // Runs of the portable module are measurements of their own.
        let variant = match self.ptx_target.as_deref() {
            Some(target) if target != "sm_90a" => format!("{variant} {target}"),
            _ => variant,
        };
        (self.rung.clone(), self.m, self.n, self.k, variant)
    }

    /// Stores the outcome of verification.
    pub fn set_verification(&mut self, v: &Verification) {
        self.rel_error = Some(v.rel_error);
        self.max_abs_error = Some(v.max_abs_error);
        self.tolerance = Some(v.tolerance);
        self.reference = Some(v.reference.label().to_string());
        self.passed = v.passed;
    }

    /// Stores the median time and the rate it gives.
    pub fn set_time(&mut self, ms: f64, shape: &GemmShape) {
        self.time_ms = Some(ms);
        self.gflops = Some(shape.flops() / (ms * 1e-3) / 1e9);
    }

    /// Stores cuBLAS's time at the same shape and the share of its rate this record reaches.
    pub fn set_reference_time(&mut self, cublas_ms: f64) {
        let shape = GemmShape {
            m: self.m,
            n: self.n,
            k: self.k,
        };
        let reference = shape.flops() / (cublas_ms * 1e-3) / 1e9;
        self.reference_gflops = Some(reference);
        self.percent_of_reference = self.gflops.map(|g| 100.0 * g / reference);
    }

    /// A rung that ran and failed verification (skipped rungs are not failures).
    pub fn failed(&self) -> bool {
        self.skipped.is_none() && !self.passed
    }

    /// `PASS`, `FAIL` or `skipped`.
    pub fn verdict(&self) -> &'static str {
        match (&self.skipped, self.passed) {
            (Some(_), _) => "skipped",
            (None, true) => "PASS",
            (None, false) => "FAIL",
        }
    }
}

const HEADERS: [&str; 10] = [
    "rung",
    "precision",
    "idea",
    "M×N×K",
    "time (ms)",
    "GFLOP/s",
    "% of cuBLAS (same precision)",
    "rel error",
    "max error",
    "check",
];

fn cells(r: &Record) -> [String; 10] {
    let num =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |x| format!("{x:.digits$}"));
    let sci = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2e}"));
    [
        r.rung.clone(),
        r.precision.clone(),
        r.idea.clone(),
        format!("{}×{}×{}", r.m, r.n, r.k),
        num(r.time_ms, 3),
        num(r.gflops, 0),
        num(r.percent_of_reference, 1),
        sci(r.rel_error),
        sci(r.max_abs_error),
        r.verdict().to_string(),
    ]
}

/// The results as aligned plain-text tables: the ladder's (with the reasons for skipped rungs
/// below it), the dequant GEMM's and the shape suite's, each when there are such records.
pub fn text_table(records: &[Record]) -> String {
    let ladder: Vec<Record> = records.iter().filter(|r| r.is_ladder()).cloned().collect();
    let mut parts = Vec::new();
    if !ladder.is_empty() || records.is_empty() {
        let rows: Vec<[String; 10]> = ladder.iter().map(cells).collect();
        parts.push(aligned_table(&HEADERS, &rows) + &skip_notes(&ladder));
    }
    if records.iter().any(|r| r.dequant.is_some()) {
        parts.push(dequant_text_table(records));
    }
    if records.iter().any(|r| r.suite.is_some()) {
        parts.push(crate::harness::suite_report::suite_text_table(records));
    }
    parts.join("\n")
}

const DEQUANT_HEADERS: [&str; 13] = [
    "kernel",
    "format",
    "group",
    "M×N×K",
    "blocks",
    "time (µs)",
    "cuBLAS fp16 (µs)",
    "speedup",
    "ideal",
    "GB/s",
    "% of copy BW",
    "rel error",
    "check",
];

/// The headers of the dequant tables: the baseline is cuBLAS fp16 while every record has fp16
/// activations, else cuBLAS in each row's activation type (named in its kernel cell).
fn dequant_headers(records: &[&Record]) -> [&'static str; 13] {
    let mut headers = DEQUANT_HEADERS;
    if records
        .iter()
        .any(|r| r.dequant.as_ref().is_some_and(|d| !d.fp16_activations()))
    {
        headers[6] = "cuBLAS same type (µs)";
    }
    headers
}

fn dequant_cells(r: &Record) -> [String; 13] {
    let d = r.dequant.as_ref().expect("a dequant record");
    let zero = if d.zero_points { "+zp" } else { "" };
    let kernel = if d.fp16_activations() {
        r.rung.clone()
    } else {
        format!("{} {}", r.rung, d.activation)
    };
    let group = if d.group >= r.k {
        "per-channel".to_string()
    } else {
        d.group.to_string()
    };
    [
        kernel,
        format!("{}{zero}", d.format),
        group,
        format!("{}×{}×{}", r.m, r.n, r.k),
        if d.blocks == 0 {
            "-".to_string()
        } else {
            d.blocks.to_string()
        },
        format!("{:.1}", d.time_us),
        format!("{:.1}", d.reference_us),
        format!("{:.2}×", d.speedup),
        format!("{:.2}×", d.ideal_speedup),
        format!("{:.0}", d.bandwidth_gbs),
        format!("{:.1}", 100.0 * d.bandwidth_share),
        r.rel_error.map_or("-".to_string(), |e| format!("{e:.2e}")),
        r.verdict().to_string(),
    ]
}

/// The dequant records as an aligned plain-text table.
pub fn dequant_text_table(records: &[Record]) -> String {
    let dequant: Vec<&Record> = records.iter().filter(|r| r.dequant.is_some()).collect();
    let rows: Vec<[String; 13]> = dequant.iter().map(|r| dequant_cells(r)).collect();
    aligned_table(&dequant_headers(&dequant), &rows)
}

/// `headers` and `rows` as plain text, each column padded to its widest cell, with a rule of
/// dashes under the headers.
pub(crate) fn aligned_table<const N: usize>(headers: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = headers.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&headers.map(String::from));
    out += &line(&widths.map(|w| "-".repeat(w)));
    for row in rows {
        out += &line(row);
    }
    out
}

/// `headers` and `rows` as a GitHub Markdown table.
pub(crate) fn markdown_rows<const N: usize>(
    headers: &[&str; N],
    rows: impl Iterator<Item = [String; N]>,
) -> String {
    let mut out = format!("| {} |\n|{}\n", headers.join(" | "), "---|".repeat(N));
    for row in rows {
        out += &format!("| {} |\n", row.join(" | "));
    }
    out
}

/// The dequant records as a GitHub Markdown table.
pub fn dequant_markdown_table(records: &[Record]) -> String {
    let dequant: Vec<&Record> = records.iter().filter(|r| r.dequant.is_some()).collect();
    let rows = dequant.iter().map(|r| dequant_cells(r));
    markdown_rows(&dequant_headers(&dequant), rows)
}

/// The results as a GitHub Markdown table, with the reasons for skipped rungs below it.
pub fn markdown_table(records: &[Record]) -> String {
    let ladder: Vec<Record> = records.iter().filter(|r| r.is_ladder()).cloned().collect();
    let records = &ladder[..];
    markdown_rows(&HEADERS, records.iter().map(cells)) + &skip_notes(records)
}

fn skip_notes(records: &[Record]) -> String {
    let mut out = String::new();
    for r in records {
        if let Some(reason) = &r.skipped {
            let _ = writeln!(
                out,
                "\n{} at {}×{}×{} skipped: {reason}",
                r.rung, r.m, r.n, r.k
            );
        }
    }
    out
}

/// File name of the dequant plot in a report folder.
pub const DEQUANT_PLOT: &str = "plot-dequant.svg";
/// File name of the dequant plot against batch size in a report folder.
pub const DEQUANT_BATCH_PLOT: &str = "plot-dequant-batch.svg";

/// Writes `results.json` (an array of records), the plots (`plot-percent.svg`: % of cuBLAS per
/// rung at one size; `plot.svg` and `plot-tensor-cores.svg`: TFLOP/s against size, when at
/// least two square sizes were measured) and `results.md` (the command, the device, the plots
/// and the table) into `dir`, creating it if needed. Dequant GEMM records get their own table and
/// plots ([`DEQUANT_PLOT`], and [`DEQUANT_BATCH_PLOT`] where a format was measured at several m).
pub fn write_report(
    dir: &Path,
    records: &[Record],
    command: &str,
    device: &str,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(records).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json + "\n")?;
    let mut plot = String::new();
    let percent_plot = crate::harness::plot::PERCENT_PLOT;
    if crate::harness::plot::write_percent_plot(&dir.join(percent_plot), records, device)
        .map_err(std::io::Error::other)?
    {
        plot.push_str(&format!(
            "![% of cuBLAS per rung, each in its own precision]({percent_plot})\n\n"
        ));
    }
    for (file, title, precisions) in crate::harness::plot::PLOTS {
        let chosen: Vec<Record> = records
            .iter()
            .filter(|r| precisions.contains(&r.precision.as_str()))
            .cloned()
            .collect();
        let plotted = crate::harness::plot::write_plot(&dir.join(file), &chosen, title, device)
            .map_err(std::io::Error::other)?;
        if plotted {
            plot.push_str(&format!("![{title}: TFLOP/s against size]({file})\n\n"));
        }
    }
    let ladder: Vec<&Record> = records.iter().filter(|r| r.is_ladder()).collect();
    let dequant: Vec<Record> = records
        .iter()
        .filter(|r| r.dequant.is_some())
        .cloned()
        .collect();
    let suite: Vec<Record> = records
        .iter()
        .filter(|r| r.suite.is_some())
        .cloned()
        .collect();
    let title = match (ladder.is_empty(), dequant.is_empty(), suite.is_empty()) {
        (false, _, _) => "SGEMM ladder results",
        (true, false, true) => "Dequant GEMM results",
        (true, true, false) => "Shape suite results",
        (true, false, false) => "Dequant GEMM and shape suite results",
        (true, true, true) => "SGEMM ladder results",
    };
    let mut markdown = format!("# {title}\n\n- Device: {device}\n- Command: `{command}`\n");
    if !ladder.is_empty() {
        markdown += &format!(
            "- Timing: CUDA events, median of the timed launches after warm-up; output poisoned with NaN before each launch; inputs rotated past the L2 cache.\n- Reference: `cpu-f64` is the CPU product with f64 accumulation (of the inputs rounded to fp16, for fp16 rungs); `cublas` marks shapes too large for it, checked against cuBLAS SGEMM (TF32 off) on the same inputs.\n- Percentages are of the cuBLAS baseline of the same precision: `cublas` (SGEMM, TF32 off) for fp32 rungs, `cublas-tf32` for TF32 rungs, `cublas-fp16` (fp16 in and out, fp32 accumulation) for fp16 rungs, `cublaslt-fp8-e4m3` and `cublaslt-fp8-e5m2` (cuBLASLt's FP8 GEMM, B `[n, k]`, fp16 out, per-tensor scales, fast accumulation) for the FP8 rungs, whose reference is the f64 product of the FP8-rounded inputs times the scales.\n\n{plot}{}",
            markdown_table(records)
        );
    }
    if !dequant.is_empty() {
        // The plots compare with cuBLAS fp16: the fp16-activation records only.
        let fp16: Vec<Record> = dequant
            .iter()
            .filter(|r| {
                r.dequant
                    .as_ref()
                    .is_some_and(DequantInfo::fp16_activations)
            })
            .cloned()
            .collect();
        let plotted =
            crate::harness::plot::write_dequant_plot(&dir.join(DEQUANT_PLOT), &fp16, device)
                .map_err(std::io::Error::other)?;
        let mut figure = if plotted {
            format!("![speedup over cuBLAS fp16 against bit width]({DEQUANT_PLOT})\n\n")
        } else {
            String::new()
        };
        let batch_plotted = crate::harness::plot::write_dequant_batch_plot(
            &dir.join(DEQUANT_BATCH_PLOT),
            &fp16,
            device,
        )
        .map_err(std::io::Error::other)?;
        if batch_plotted {
            figure += &format!(
                "![speedup over cuBLAS fp16 against batch size]({DEQUANT_BATCH_PLOT})\n\n"
            );
        }
        let bf16 = if fp16.len() < dequant.len() {
            "- bf16 rows (kernel `… bf16`): bf16 activations and output, against cuBLAS bf16 (`cublasGemmEx`, bf16 in and out, fp32 compute) on the same weights expanded to bf16; checked with the weights as the kernels use them (exact in the decode kernel; elsewhere `bf16(value · bf16(scale))`, fp16 weights rounded to bf16) within fp32 accumulation and bf16 output rounding. The plots show the fp16 rows only.\n"
        } else {
            ""
        };
        markdown += &format!(
            "\n## Dequant GEMM: fp16 activations × low-bit weights\n\n- Timing: CUDA events around each launch, median of the timed launches after warm-up (at least 50 ms of it), the L2 cache flushed (a memset of twice its size) and C poisoned before each launch; cuBLAS fp16 (`cublasGemmEx`, fp16 in and out, fp32 compute) timed the same way at the same shape, on the same weights expanded to fp16, its launches alternating with the kernel's (so both see the same clocks and temperature).\n- Bandwidth: bytes of packed weights, scales and zero points, A and C, over the time; `% of copy BW` is its share of the measured device-to-device copy bandwidth. `ideal` is the speedup if both ran at the same bandwidth (fp16 weights' bytes over these).\n- Check: against the f64 CPU product of A and the dequantized weights as the kernel uses them (exact in the decode kernel, which scales fp32 sums; rounded to fp16 by the prefill expansion and for small floats with over 4 exponent bits), within fp32 accumulation and fp16 output rounding; at large shapes on a sample of rows and columns, all of k. `rel error` is that check's relative Frobenius error; `rel_error_unrounded` in the JSON is against the exact weights.\n{bf16}\n{figure}{}",
            dequant_markdown_table(&dequant)
        );
    }
    if !suite.is_empty() {
        let plot = crate::harness::suite_report::SUITE_PLOT;
        let plotted = crate::harness::plot::write_suite_plot(&dir.join(plot), &suite, device)
            .map_err(std::io::Error::other)?;
        markdown += "\n";
        markdown += &crate::harness::suite_report::suite_markdown(&suite, plotted.then_some(plot));
    }
    std::fs::write(dir.join("results.md"), markdown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verify::ReferenceKind;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn shape(m: usize, n: usize, k: usize) -> GemmShape {
        GemmShape::new(m, n, k).unwrap()
    }

    fn verification(passed: bool, rel_error: f64) -> Verification {
        Verification {
            rel_error,
            max_abs_error: rel_error * 10.0,
            tolerance: 1e-5,
            elements_out_of_bound: usize::from(!passed),
            reference: ReferenceKind::CpuF64,
            passed,
        }
    }

    /// cuBLAS, a passing rung, a failing rung and a skipped rung at 127×129×131.
    fn sample_records() -> Vec<Record> {
        let s = shape(127, 129, 131);
        let mut cublas = Record::new("cublas", "cuBLAS SGEMM, TF32 off", &s, "Test GPU", 7, 5);
        cublas.set_verification(&verification(true, 1.5e-7));
        cublas.set_time(0.5, &s);
        cublas.set_reference_time(0.5);
        let mut good = Record::new("v0", "global memory", &s, "Test GPU", 7, 5);
        good.set_verification(&verification(true, 2.5e-7));
        good.set_time(1.0, &s);
        good.set_reference_time(0.5);
        let mut bad = Record::new("v3", "4×4 outputs per thread", &s, "Test GPU", 7, 5);
        bad.set_verification(&verification(false, 0.25));
        bad.set_time(2.0, &s);
        bad.set_reference_time(0.5);
        let mut skipped = Record::new("v1", "whole panels in shared memory", &s, "Test GPU", 7, 5);
        skipped.skipped = Some("rung v1 needs 393216 bytes of shared memory".to_string());
        vec![cublas, good, bad, skipped]
    }

    /// A fresh folder under the system's temporary directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = std::env::temp_dir().join(format!(
                "gemm-host-{tag}-{}-{nanos}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            assert!(!path.exists(), "{} already exists", path.display());
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dequant_record() -> Record {
        let s = shape(16, 57344, 8192);
        let mut r = Record::new("dequant-decode", "decode", &s, "Test GPU", 3, 15);
        r.precision = "dequant".to_string();
        r.set_verification(&verification(true, 2e-4));
        r.set_time(0.1, &s);
        r.set_reference_time(0.3);
        r.dequant = Some(DequantInfo {
            format: "u4".to_string(),
            group: 128,
            zero_points: false,
            time_us: 100.0,
            reference_us: 300.0,
            speedup: 3.0,
            bytes: 240_000_000,
            bandwidth_gbs: 2400.0,
            bandwidth_share: 0.8,
            ideal_speedup: 3.9,
            blocks: 224,
            rel_error_unrounded: 3e-4,
            checked_elements: 8192,
            expand_us: None,
            activation: "f16".to_string(),
        });
        r
    }

    #[test]
    fn dequant_records_round_trip_flat_and_old_records_still_parse() {
        let r = dequant_record();
        let json = serde_json::to_value(&r).unwrap();
        // The dequant fields sit beside the common ones, as the results file promises.
        for field in [
            "format",
            "group",
            "time_us",
            "reference_us",
            "bandwidth_gbs",
            "rel_error",
            "passed",
            "device",
            "m",
            "n",
            "k",
        ] {
            assert!(json.get(field).is_some(), "{field} missing from {json}");
        }
        let back: Record = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, r);
        // A record from before bf16 activations (no `activation` field) reads as fp16.
        let mut old = json;
        old.as_object_mut().unwrap().remove("activation").unwrap();
        let back: Record = serde_json::from_value(old).unwrap();
        assert_eq!(back.dequant.unwrap().activation, "f16");
        let ladder = sample_records().remove(1);
        let text = serde_json::to_string(&ladder).unwrap();
        assert!(!text.contains("time_us"));
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back.dequant, None);
    }

    #[test]
    fn bf16_dequant_records_keep_their_own_key_and_say_so() {
        let fp16 = dequant_record();
        let mut bf16 = dequant_record();
        bf16.dequant.as_mut().unwrap().activation = "bf16".to_string();
        assert_ne!(fp16.key(), bf16.key());
        // fp16 records keep the key they had before bf16 existed.
        assert_eq!(fp16.key().4, "u4 g128 zfalse");
        let only_fp16 = dequant_text_table(std::slice::from_ref(&fp16));
        assert!(only_fp16.contains("cuBLAS fp16 (µs)"), "{only_fp16}");
        assert!(!only_fp16.contains("bf16"), "{only_fp16}");
        let both = dequant_text_table(&[fp16, bf16]);
        assert!(both.contains("dequant-decode bf16"), "{both}");
        assert!(both.contains("cuBLAS same type (µs)"), "{both}");
    }

    #[test]
    fn dequant_records_get_their_own_table_and_key() {
        let records = vec![sample_records().remove(1), dequant_record()];
        let text = text_table(&records);
        assert!(text.contains("cuBLAS fp16 (µs)") && text.contains("u4"));
        assert_ne!(records[0].key(), records[1].key());
        let markdown = markdown_table(&records);
        assert!(
            !markdown.contains("dequant-decode"),
            "the ladder table skips dequant records"
        );
    }

    /// Shape-suite records round-trip with their fields beside the common ones; dequant and
    /// ladder records (old ones included) read back without suite fields, and the suite
    /// records read back without dequant fields.
    #[test]
    fn suite_records_round_trip_flat_beside_the_others() {
        use crate::harness::suite_report::tests::suite_record;
        let suite = suite_record("l.m16", "llm", (16, 4096, 4096), "bf16", "nk", 0.9);
        let json = serde_json::to_value(&suite).unwrap();
        for field in [
            "shape_name",
            "suite_group",
            "b_layout",
            "kernel",
            "ratio",
            "copy_share",
            "memory_bound",
            "precision",
            "gflops",
        ] {
            assert!(json.get(field).is_some(), "{field} missing from {json}");
        }
        let back: Record = serde_json::from_value(json).unwrap();
        assert_eq!(back, suite);
        assert!(back.dequant.is_none() && !back.is_ladder());
        let dequant: Record =
            serde_json::from_value(serde_json::to_value(dequant_record()).unwrap()).unwrap();
        assert!(dequant.suite.is_none() && dequant.dequant.is_some());
        // A record written before there were suite records.
        let old = r#"{"rung":"v0","idea":"i","m":2,"n":3,"k":4,"time_ms":null,"gflops":null,
            "reference_gflops":null,"percent_of_reference":null,"rel_error":null,
            "max_abs_error":null,"tolerance":null,"reference":null,"passed":true,
            "skipped":null,"device":"d","seed":1,"reps":2}"#;
        let old: Record = serde_json::from_str(old).unwrap();
        assert!(old.is_ladder() && old.precision == "fp32");
        // The same shape in another precision or layout is another measurement.
        let other = |precision: &str, layout: &str| {
            suite_record("l.m16", "llm", (16, 4096, 4096), precision, layout, 0.9).key()
        };
        assert_ne!(other("bf16", "nk"), other("bf16", "kn"));
        assert_ne!(other("bf16", "nk"), other("fp16", "nk"));
        assert_eq!(other("bf16", "nk"), suite.key());
        let renamed = suite_record("square-16", "llm", (16, 4096, 4096), "bf16", "nk", 0.9);
        assert_ne!(renamed.key(), suite.key());
    }

    #[test]
    fn suite_records_get_their_own_section_and_stay_out_of_the_ladder() {
        use crate::harness::suite_report::{SUITE_PLOT, tests::suite_record};
        let dir = TempDir::new("suite");
        let mut records = sample_records();
        records.push(suite_record(
            "square-256",
            "square",
            (256, 256, 256),
            "fp32",
            "kn",
            0.7,
        ));
        records.push(suite_record(
            "square-512",
            "square",
            (512, 512, 512),
            "fp16",
            "kn",
            1.1,
        ));
        write_report(&dir.0, &records, "cmd", "Test GPU").unwrap();
        let markdown = std::fs::read_to_string(dir.0.join("results.md")).unwrap();
        assert!(markdown.starts_with("# SGEMM ladder results"), "{markdown}");
        assert!(markdown.contains("## Shape suite"), "{markdown}");
        assert!(markdown.contains(&format!("]({SUITE_PLOT})")), "{markdown}");
        assert!(dir.0.join(SUITE_PLOT).exists());
        assert!(!markdown_table(&records).contains("dispatch"));
        let text = text_table(&records);
        assert!(text.contains("square-512") && text.contains("v0"), "{text}");
        // Suite records alone.
        let only = TempDir::new("suite-only");
        write_report(&only.0, &records[4..], "cmd", "Test GPU").unwrap();
        let markdown = std::fs::read_to_string(only.0.join("results.md")).unwrap();
        assert!(markdown.starts_with("# Shape suite results"), "{markdown}");
        assert!(!markdown.contains("| rung |"), "{markdown}");
        // The ladder's plots draw no suite record: square suite shapes are not rungs.
        assert!(!only.0.join(crate::harness::plot::PERCENT_PLOT).exists());
    }

    #[test]
    fn new_record_is_empty_and_unpassed() {
        let r = Record::new("v2", "idea", &shape(2, 3, 4), "dev", 9, 20);
        assert_eq!((r.m, r.n, r.k), (2, 3, 4));
        assert_eq!((r.rung.as_str(), r.device.as_str()), ("v2", "dev"));
        assert_eq!((r.seed, r.reps), (9, 20));
        assert!(!r.passed);
        assert!(r.gflops.is_none() && r.rel_error.is_none() && r.skipped.is_none());
        // Never verified counts as failed: nothing passes by default.
        assert!(r.failed());
        assert_eq!(r.verdict(), "FAIL");
    }

    #[test]
    fn failed_and_verdict() {
        let s = shape(4, 4, 4);
        let mut r = Record::new("v0", "idea", &s, "dev", 0, 1);
        r.set_verification(&verification(true, 1e-7));
        assert!(!r.failed());
        assert_eq!(r.verdict(), "PASS");
        r.set_verification(&verification(false, 1.0));
        assert!(r.failed());
        assert_eq!(r.verdict(), "FAIL");
        // Skipped is not a failure, whatever `passed` says.
        r.skipped = Some("too big".into());
        assert!(!r.failed());
        assert_eq!(r.verdict(), "skipped");
        r.passed = true;
        assert!(!r.failed());
        assert_eq!(r.verdict(), "skipped");
    }

    #[test]
    fn verification_and_rates_are_stored() {
        let s = shape(1000, 1000, 1000);
        let mut r = Record::new("v4", "idea", &s, "dev", 0, 1);
        let v = Verification {
            rel_error: 1e-6,
            max_abs_error: 2e-5,
            tolerance: 3e-5,
            elements_out_of_bound: 0,
            reference: ReferenceKind::Cublas,
            passed: true,
        };
        r.set_verification(&v);
        assert_eq!(r.rel_error, Some(1e-6));
        assert_eq!(r.max_abs_error, Some(2e-5));
        assert_eq!(r.tolerance, Some(3e-5));
        assert_eq!(r.reference.as_deref(), Some("cublas"));
        assert!(r.passed);
        // 2·10⁹ flops in 1 ms: 2000 GFLOP/s; cuBLAS in 0.5 ms: 4000 GFLOP/s, so 50 %.
        r.set_time(1.0, &s);
        assert_eq!(r.time_ms, Some(1.0));
        assert!((r.gflops.unwrap() - 2000.0).abs() < 1e-9);
        r.set_reference_time(0.5);
        assert!((r.reference_gflops.unwrap() - 4000.0).abs() < 1e-9);
        assert!((r.percent_of_reference.unwrap() - 50.0).abs() < 1e-9);
        // Without a time of its own there is no percentage.
        let mut untimed = Record::new("v4", "idea", &s, "dev", 0, 1);
        untimed.set_reference_time(0.5);
        assert!(untimed.reference_gflops.is_some());
        assert!(untimed.percent_of_reference.is_none());
    }

    #[test]
    fn text_table_shows_rows_verdicts_and_skip_reasons() {
        let records = sample_records();
        let table = text_table(&records);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("rung") && lines[0].contains("GFLOP/s"),
            "{table}"
        );
        assert!(lines[1].starts_with("----"), "{table}");
        let row = |name: &str| {
            *lines
                .iter()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no row for {name} in\n{table}"))
        };
        assert!(row("cublas").ends_with("PASS"), "{table}");
        assert!(row("v0").ends_with("PASS") && row("v0").contains("127×129×131"));
        assert!(
            row("v0").contains("50.0"),
            "v0 runs at 50% of cuBLAS:\n{table}"
        );
        assert!(
            row("v3").ends_with("FAIL") && row("v3").contains("2.50e-1"),
            "{table}"
        );
        assert!(row("v1").ends_with("skipped"), "{table}");
        assert!(
            table.contains("v1 at 127×129×131 skipped: rung v1 needs 393216 bytes"),
            "{table}"
        );
        // Columns line up: every row starts each column at the header's offset.
        let col = lines[0].chars().count() - "check".len();
        for line in &lines[2..2 + records.len()] {
            let verdict = line.rsplit("  ").next().unwrap();
            assert_eq!(
                line.chars().count() - verdict.chars().count(),
                col,
                "misaligned row {line:?}"
            );
        }
    }

    #[test]
    fn markdown_table_shows_rows_verdicts_and_skip_reasons() {
        let records = sample_records();
        let table = markdown_table(&records);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("| rung | precision | idea |"),
            "{table}"
        );
        assert_eq!(lines[1], "|---|---|---|---|---|---|---|---|---|---|");
        let rows: Vec<&&str> = lines[2..].iter().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), records.len(), "{table}");
        for (row, record) in rows.iter().zip(&records) {
            assert!(row.starts_with(&format!("| {} |", record.rung)), "{row}");
            assert!(row.ends_with(&format!("| {} |", record.verdict())), "{row}");
            assert!(row.contains(&format!("| {} |", record.precision)), "{row}");
            assert_eq!(row.matches('|').count(), 11, "{row}");
        }
        assert!(
            table.contains("v1 at 127×129×131 skipped: rung v1 needs"),
            "{table}"
        );
        assert!(!markdown_table(&records[..3]).contains("skipped"));
    }

    #[test]
    fn write_report_writes_json_and_markdown() {
        let dir = TempDir::new("report");
        let target = dir.0.join("nested");
        let records = sample_records();
        let command = "sgemm-ladder --sizes 64 --shapes 127x129x131";
        write_report(&target, &records, command, "Test GPU").unwrap();

        let json = std::fs::read_to_string(target.join("results.json")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        let array = value.as_array().expect("a JSON array");
        assert_eq!(array.len(), records.len());
        for (entry, record) in array.iter().zip(&records) {
            for field in [
                "rung",
                "m",
                "n",
                "k",
                "gflops",
                "reference_gflops",
                "rel_error",
                "passed",
                "device",
            ] {
                assert!(
                    entry.get(field).is_some(),
                    "field {field} missing in {entry}"
                );
            }
            assert_eq!(entry["rung"], record.rung.as_str());
            assert_eq!(entry["m"], 127);
            assert_eq!(entry["n"], 129);
            assert_eq!(entry["k"], 131);
            assert_eq!(entry["passed"], record.passed);
            assert_eq!(entry["device"], "Test GPU");
        }
        assert_eq!(array[2]["rel_error"], 0.25);
        assert!(array[3]["gflops"].is_null());
        // Reads back (serde_json parses floats to within an ulp, not always exactly).
        let back: Vec<Record> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.len(), records.len());
        for (b, r) in back.iter().zip(&records) {
            assert_eq!(
                (&b.rung, b.passed, &b.skipped, b.seed),
                (&r.rung, r.passed, &r.skipped, r.seed)
            );
            let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * y.abs(),
                (x, y) => x == y,
            };
            assert!(close(b.gflops, r.gflops) && close(b.rel_error, r.rel_error));
            assert!(close(b.max_abs_error, r.max_abs_error), "{b:?}");
        }

        let markdown = std::fs::read_to_string(target.join("results.md")).unwrap();
        assert!(markdown.contains(&format!("`{command}`")), "{markdown}");
        assert!(markdown.contains("Device: Test GPU"), "{markdown}");
        assert!(markdown.contains(&markdown_table(&records)), "{markdown}");

        // Writing again replaces the files.
        write_report(&target, &records[..1], "again", "Test GPU").unwrap();
        let json = std::fs::read_to_string(target.join("results.json")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value.as_array().unwrap().len(), 1);
    }

    #[test]
    fn write_report_with_nan_error_is_still_valid_json() {
        // A NaN-poisoned result has a NaN relative error; JSON has no NaN.
        let dir = TempDir::new("nan");
        let mut records = sample_records();
        records[2].rel_error = Some(f64::NAN);
        records[2].max_abs_error = Some(f64::NAN);
        write_report(&dir.0, &records, "cmd", "dev").unwrap();
        let json = std::fs::read_to_string(dir.0.join("results.json")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(value[2]["passed"], false);
        assert!(text_table(&records).contains("NaN"));
    }

    #[test]
    fn write_report_fails_on_a_file_in_the_way() {
        let dir = TempDir::new("blocked");
        std::fs::create_dir_all(&dir.0).unwrap();
        let file = dir.0.join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        assert!(write_report(&file, &sample_records(), "cmd", "dev").is_err());
    }
}
