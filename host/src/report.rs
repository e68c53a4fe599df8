//! Result records, the table printed at the end of a run, and the report folder
//! (`results.json` and `results.md`).

use crate::GemmShape;
use crate::verify::Verification;
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
    /// cuBLAS SGEMM (TF32 off) at the same shape, in GFLOP/s.
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
        }
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

const HEADERS: [&str; 9] = [
    "rung",
    "idea",
    "M×N×K",
    "time (ms)",
    "GFLOP/s",
    "% of cuBLAS",
    "rel error",
    "max error",
    "check",
];

fn cells(r: &Record) -> [String; 9] {
    let num =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |x| format!("{x:.digits$}"));
    let sci = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2e}"));
    [
        r.rung.clone(),
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

/// The results as an aligned plain-text table, with the reasons for skipped rungs below it.
pub fn text_table(records: &[Record]) -> String {
    let rows: Vec<[String; 9]> = records.iter().map(cells).collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
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
    let mut out = line(&HEADERS.map(String::from));
    out += &line(&widths.map(|w| "-".repeat(w)));
    for row in &rows {
        out += &line(row);
    }
    out + &skip_notes(records)
}

/// The results as a GitHub Markdown table, with the reasons for skipped rungs below it.
pub fn markdown_table(records: &[Record]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADERS.join(" | "),
        "---|".repeat(HEADERS.len())
    );
    for r in records {
        out += &format!("| {} |\n", cells(r).join(" | "));
    }
    out + &skip_notes(records)
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

/// Writes `results.json` (an array of records) and `results.md` (the command, the device and
/// the table) into `dir`, creating it if needed.
pub fn write_report(
    dir: &Path,
    records: &[Record],
    command: &str,
    device: &str,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(records).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json + "\n")?;
    let markdown = format!(
        "# SGEMM ladder results\n\n- Device: {device}\n- Command: `{command}`\n- Timing: CUDA events, median of the timed launches after warm-up; output poisoned with NaN before each launch; inputs rotated past the L2 cache.\n- Reference: `cpu-f64` is the CPU product with f64 accumulation; `cublas` marks shapes too large for it, checked against cuBLAS SGEMM (TF32 off).\n\n{}",
        markdown_table(records)
    );
    std::fs::write(dir.join("results.md"), markdown)
}
