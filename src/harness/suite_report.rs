//! The shape suite's part of a report: per precision the geometric mean of the ratios to
//! cuBLAS and the worst shape, the memory-bound shapes against the copy bandwidth, and the table
//! of every case (plain text and Markdown).

use crate::harness::report::{Record, aligned_table, markdown_rows};
use std::fmt::Write as _;

/// File name of the shape suite's plot in a report folder.
pub const SUITE_PLOT: &str = "plot-shapes.svg";

/// Issue 14's bar for memory-bound shapes: this share of the device-to-device copy bandwidth.
pub const COPY_SHARE_BAR: f64 = 0.85;

/// Precisions in the order the report lists them (others follow in the order they appear).
const PRECISION_ORDER: [&str; 4] = ["fp32", "tf32", "fp16", "bf16"];

/// One precision's cases, summarized.
#[derive(Clone, Debug, PartialEq)]
pub struct PrecisionSummary {
    /// `fp32`, `tf32`, `fp16` or `bf16`.
    pub precision: String,
    /// Cases (shape × layout) recorded.
    pub cases: usize,
    /// Cases that ran and passed verification: the ones the means are over.
    pub passed: usize,
    /// Cases that ran and failed verification.
    pub failed: usize,
    /// Cases that did not run (their reason is in the record).
    pub skipped: usize,
    /// Geometric mean of the passed cases' ratios (our rate over cuBLAS's).
    pub geomean: Option<f64>,
    /// The passed case with the lowest ratio: its label and ratio.
    pub worst: Option<(String, f64)>,
    /// Geometric mean per suite group, groups in the order they first appear.
    pub by_group: Vec<(String, f64)>,
    /// Memory-bound cases that passed, and how many of them reach [`COPY_SHARE_BAR`].
    pub memory_bound: (usize, usize),
    /// The lowest share of the copy bandwidth among the passed memory-bound cases.
    pub memory_bound_lowest: Option<(String, f64)>,
}

/// `shape_name (B kn)`, how the summaries name a case.
pub fn case_label(r: &Record) -> String {
    let s = r.suite.as_ref().expect("a shape-suite record");
    format!("{} (B {})", s.shape_name, s.b_layout)
}

fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// The precisions of `records`' suite cases, in report order.
fn precisions(records: &[Record]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r.suite.is_some()) {
        if !seen.contains(&r.precision) {
            seen.push(r.precision.clone());
        }
    }
    let rank = |p: &String| {
        PRECISION_ORDER
            .iter()
            .position(|q| q == p)
            .unwrap_or(PRECISION_ORDER.len())
    };
    seen.sort_by_key(rank);
    seen
}

/// A summary per precision of the suite records among `records`.
pub fn summarize(records: &[Record]) -> Vec<PrecisionSummary> {
    precisions(records)
        .into_iter()
        .map(|precision| {
            let cases: Vec<&Record> = records
                .iter()
                .filter(|r| r.suite.is_some() && r.precision == precision)
                .collect();
            let passed: Vec<(&Record, f64)> = cases
                .iter()
                .filter(|r| r.skipped.is_none() && r.passed)
                .filter_map(|r| Some((*r, r.suite.as_ref()?.ratio?)))
                .collect();
            let ratios: Vec<f64> = passed.iter().map(|(_, ratio)| *ratio).collect();
            let worst = passed
                .iter()
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|(r, ratio)| (case_label(r), *ratio));
            let mut groups: Vec<String> = Vec::new();
            for (r, _) in &passed {
                let group = &r.suite.as_ref().expect("suite").suite_group;
                if !groups.contains(group) {
                    groups.push(group.clone());
                }
            }
            let by_group = groups
                .into_iter()
                .filter_map(|g| {
                    let of_group: Vec<f64> = passed
                        .iter()
                        .filter(|(r, _)| r.suite.as_ref().expect("suite").suite_group == g)
                        .map(|(_, ratio)| *ratio)
                        .collect();
                    Some((g, geomean(&of_group)?))
                })
                .collect();
            let shares: Vec<(&Record, f64)> = passed
                .iter()
                .filter_map(|(r, _)| {
                    let s = r.suite.as_ref()?;
                    s.memory_bound.then_some((*r, s.copy_share?))
                })
                .collect();
            let at_bar = shares.iter().filter(|(_, s)| *s >= COPY_SHARE_BAR).count();
            PrecisionSummary {
                cases: cases.len(),
                passed: passed.len(),
                failed: cases.iter().filter(|r| r.failed()).count(),
                skipped: cases.iter().filter(|r| r.skipped.is_some()).count(),
                geomean: geomean(&ratios),
                worst,
                by_group,
                memory_bound: (shares.len(), at_bar),
                memory_bound_lowest: shares
                    .iter()
                    .min_by(|x, y| x.1.total_cmp(&y.1))
                    .map(|(r, s)| (case_label(r), *s)),
                precision,
            }
        })
        .collect()
}

/// The summaries as lines of text, one block per precision.
pub fn summary_text(records: &[Record]) -> String {
    let mut out = String::new();
    for s in summarize(records) {
        let groups: Vec<String> = s
            .by_group
            .iter()
            .map(|(g, m)| format!("{g} {m:.2}×"))
            .collect();
        let _ = writeln!(
            out,
            "{}: {} cases, {} passed, {} failed, {} skipped; geometric mean {} ({}); worst {}",
            s.precision,
            s.cases,
            s.passed,
            s.failed,
            s.skipped,
            s.geomean.map_or("-".to_string(), |g| format!("{g:.3}×")),
            groups.join(", "),
            s.worst
                .as_ref()
                .map_or("-".to_string(), |(label, r)| format!("{label} at {r:.3}×")),
        );
        if let Some((label, share)) = &s.memory_bound_lowest {
            let _ = writeln!(
                out,
                "{}: memory-bound shapes at ≥ {:.0}% of copy bandwidth: {} of {}; lowest {label} at {:.1}%",
                s.precision,
                100.0 * COPY_SHARE_BAR,
                s.memory_bound.1,
                s.memory_bound.0,
                100.0 * share
            );
        }
    }
    out
}

const HEADERS: [&str; 12] = [
    "shape",
    "M×N×K",
    "B",
    "precision",
    "kernel",
    "TFLOP/s",
    "cuBLAS TFLOP/s",
    "ratio",
    "% of copy BW",
    "reps",
    "rel error",
    "verified",
];

/// Three significant digits, for rates from 1e-6 to 1e3 TFLOP/s.
fn rate(gflops: Option<f64>) -> String {
    match gflops.map(|g| g / 1000.0) {
        None => "-".to_string(),
        Some(t) if t >= 100.0 => format!("{t:.0}"),
        Some(t) if t >= 10.0 => format!("{t:.1}"),
        Some(t) if t >= 1.0 => format!("{t:.2}"),
        Some(t) if t >= 0.001 => format!("{t:.3}"),
        Some(t) => format!("{t:.1e}"),
    }
}

fn cells(r: &Record) -> [String; 12] {
    let s = r.suite.as_ref().expect("a shape-suite record");
    let verdict = match (&r.skipped, r.passed) {
        (Some(reason), _) => format!("skipped: {reason}"),
        (None, true) => "PASS".to_string(),
        (None, false) => "FAIL".to_string(),
    };
    [
        s.shape_name.clone(),
        format!("{}×{}×{}", r.m, r.n, r.k),
        s.b_layout.clone(),
        r.precision.clone(),
        match (&s.kernel, s.splits) {
            (Some(kernel), Some(splits)) if splits > 1 => format!("{kernel} ×{splits} k"),
            (Some(kernel), _) => kernel.clone(),
            (None, _) => "-".to_string(),
        },
        rate(r.gflops),
        rate(r.reference_gflops),
        s.ratio.map_or("-".to_string(), |x| format!("{x:.3}")),
        s.copy_share
            .map_or("-".to_string(), |x| format!("{:.1}", 100.0 * x)),
        r.reps.to_string(),
        r.rel_error.map_or("-".to_string(), |e| format!("{e:.2e}")),
        verdict,
    ]
}

/// The suite records, precision by precision in report order, in the order they were recorded
/// within each.
fn ordered(records: &[Record]) -> Vec<&Record> {
    precisions(records)
        .iter()
        .flat_map(|p| {
            records
                .iter()
                .filter(move |r| r.suite.is_some() && &r.precision == p)
        })
        .collect()
}

/// Every suite case as an aligned plain-text table, then the summaries.
pub fn suite_text_table(records: &[Record]) -> String {
    let rows: Vec<[String; 12]> = ordered(records).into_iter().map(cells).collect();
    aligned_table(&HEADERS, &rows) + "\n" + &summary_text(records)
}

/// The shape suite's section of results.md: how it was measured, the summary per precision,
/// the plot (`figure`: its file name, if drawn) and a table per precision.
pub fn suite_markdown(records: &[Record], figure: Option<&str>) -> String {
    let mut out = String::from(
        "## Shape suite: the library's dispatch against cuBLAS\n\n\
         - Each case is one shape of the suite (`cli/shapes/suite.txt`) in one precision and B layout, run through `rust_gemm::Gemm::matmul` (the kernel dispatch chose is named) and through `cublasGemmEx` in the same precision and layout (fp32: exact, TF32 off; tf32: `CUBLAS_COMPUTE_32F_FAST_TF32`; fp16 and bf16: 16-bit A, B, C with fp32 accumulation; B `[n, k]` as `transa = T`).\n\
         - Timing: CUDA events around each launch after warm-up (at least 50 ms), ours and cuBLAS alternating on the same inputs, each output poisoned with NaN before its launch, inputs rotated past the L2 cache; medians of `reps` pairs (fewer for large products, which stop after a time budget).\n\
         - `ratio` is cuBLAS's time over ours (above 1: faster than cuBLAS); the geometric means are over the cases that passed verification.\n\
         - `% of copy BW`: the bytes of A, B and C, each moved once, over our time, as a share of the measured device-to-device copy bandwidth; memory-bound shapes (at most 16 rows or columns of C, and at least 2²⁴ elements in the larger operand) are held to 85% of it.\n\
         - Verified against the f64 CPU product where m·n·k ≤ 2³¹, else against cuBLAS SGEMM (TF32 off) on the same inputs, with the tolerance of the precision and k (`src/check/verify.rs`).\n\n",
    );
    let summaries = summarize(records);
    let groups: Vec<String> = {
        let mut g: Vec<String> = Vec::new();
        for s in &summaries {
            for (name, _) in &s.by_group {
                if !g.contains(name) {
                    g.push(name.clone());
                }
            }
        }
        g
    };
    let _ = write!(
        out,
        "| precision | cases | passed | failed | skipped | geometric mean |{} worst shape | memory-bound at ≥ 85% of copy BW | lowest share |\n|---|---|---|---|---|---|{}---|---|---|\n",
        groups.iter().map(|g| format!(" {g} |")).collect::<String>(),
        "---|".repeat(groups.len())
    );
    for s in &summaries {
        let by_group: String = groups
            .iter()
            .map(|g| {
                let mean = s.by_group.iter().find(|(name, _)| name == g);
                mean.map_or(" - |".to_string(), |(_, m)| format!(" {m:.3} |"))
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |{by_group} {} | {} of {} | {} |",
            s.precision,
            s.cases,
            s.passed,
            s.failed,
            s.skipped,
            s.geomean.map_or("-".to_string(), |g| format!("{g:.3}")),
            s.worst
                .as_ref()
                .map_or("-".to_string(), |(label, r)| format!("{label}: {r:.3}")),
            s.memory_bound.1,
            s.memory_bound.0,
            s.memory_bound_lowest
                .as_ref()
                .map_or("-".to_string(), |(label, share)| format!(
                    "{label}: {:.1}%",
                    100.0 * share
                )),
        );
    }
    if let Some(file) = figure {
        let _ = write!(
            out,
            "\n![ratio to cuBLAS against the product's size, per precision]({file})\n"
        );
    }
    for precision in precisions(records) {
        let rows = records
            .iter()
            .filter(|r| r.suite.is_some() && r.precision == precision)
            .map(cells);
        let _ = write!(
            out,
            "\n### {precision}\n\n{}",
            markdown_rows(&HEADERS, rows)
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::GemmShape;
    use crate::harness::report::SuiteInfo;

    /// A passed suite record with this ratio and copy share.
    pub(crate) fn suite_record(
        name: &str,
        group: &str,
        (m, n, k): (usize, usize, usize),
        precision: &str,
        layout: &str,
        ratio: f64,
    ) -> Record {
        let shape = GemmShape::new(m, n, k).unwrap();
        let mut r = Record::new(
            "dispatch",
            "rust_gemm::Gemm::matmul → v18",
            &shape,
            "Test GPU",
            1,
            9,
        );
        r.precision = precision.to_string();
        r.passed = true;
        r.rel_error = Some(1e-4);
        r.set_time(1.0, &shape);
        r.set_reference_time(ratio);
        r.suite = Some(SuiteInfo {
            suite_group: group.to_string(),
            shape_name: name.to_string(),
            b_layout: layout.to_string(),
            kernel: Some("v18".to_string()),
            splits: None,
            stream_k_tiles: None,
            kernel_entry: Some("gemm_v18_f16_kn".to_string()),
            cublas_ms: Some(ratio),
            ratio: Some(ratio),
            moved_bytes: 1000,
            achieved_gbs: Some(2800.0),
            copy_gbs: Some(3000.0),
            copy_share: Some(2800.0 / 3000.0),
            cublas_copy_share: Some(0.9),
            memory_bound: crate::harness::suite_bench::memory_bound(&shape),
        });
        r
    }

    fn records() -> Vec<Record> {
        let mut failed = suite_record("ragged-3x5x7", "ragged", (3, 5, 7), "fp16", "kn", 9.0);
        failed.passed = false;
        let mut skipped = suite_record(
            "square-8192",
            "square",
            (8192, 8192, 8192),
            "fp32",
            "kn",
            1.0,
        );
        skipped.skipped = Some("needs 9.0 GB of device memory".to_string());
        vec![
            suite_record("square-256", "square", (256, 256, 256), "fp32", "kn", 0.5),
            suite_record("square-256", "square", (256, 256, 256), "fp16", "kn", 0.8),
            suite_record("l.m1", "llm", (1, 4096, 4096), "fp16", "nk", 2.0),
            suite_record("l.m1", "llm", (1, 4096, 4096), "fp16", "kn", 0.25),
            failed,
            skipped,
        ]
    }

    #[test]
    fn summaries_take_geometric_means_over_passed_cases() {
        let summaries = summarize(&records());
        assert_eq!(summaries.len(), 2);
        let (fp32, fp16) = (&summaries[0], &summaries[1]);
        assert_eq!(fp32.precision, "fp32");
        assert_eq!(
            (fp32.cases, fp32.passed, fp32.failed, fp32.skipped),
            (2, 1, 0, 1)
        );
        assert!((fp32.geomean.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(fp16.precision, "fp16");
        assert_eq!(
            (fp16.cases, fp16.passed, fp16.failed, fp16.skipped),
            (4, 3, 1, 0)
        );
        // (0.8 · 2 · 0.25)^(1/3) = 0.4^(1/3); the failed 9× case is left out.
        assert!((fp16.geomean.unwrap() - 0.4f64.cbrt()).abs() < 1e-12);
        assert_eq!(fp16.worst, Some(("l.m1 (B kn)".to_string(), 0.25)));
        assert_eq!(fp16.by_group.len(), 2);
        assert!((fp16.by_group[1].1 - 0.5f64.sqrt()).abs() < 1e-12);
        // Both m = 1 cases are memory-bound and at 93% of the copy bandwidth.
        assert_eq!(fp16.memory_bound, (2, 2));
    }

    #[test]
    fn tables_list_every_case_with_its_kernel_and_verdict() {
        let records = records();
        let text = suite_text_table(&records);
        assert!(text.starts_with("shape"), "{text}");
        assert!(text.contains("skipped: needs 9.0 GB"), "{text}");
        assert!(text.contains("FAIL") && text.contains("PASS"), "{text}");
        assert!(text.contains("fp16: 4 cases, 3 passed, 1 failed"), "{text}");
        assert!(text.contains("worst l.m1 (B kn) at 0.250×"), "{text}");
        let markdown = suite_markdown(&records, Some(SUITE_PLOT));
        assert!(markdown.contains("### fp32") && markdown.contains("### fp16"));
        assert!(markdown.contains(&format!("]({SUITE_PLOT})")));
        let rows = markdown
            .lines()
            .filter(|l| l.starts_with("| square-256 |") || l.starts_with("| l.m1 |"))
            .count();
        assert_eq!(rows, 4, "{markdown}");
        for line in markdown.lines().filter(|l| l.starts_with("| l.m1 |")) {
            assert_eq!(line.matches('|').count(), HEADERS.len() + 1, "{line}");
            assert!(
                line.contains("| v18 |") && line.contains("| 93.3 |"),
                "{line}"
            );
        }
        // Precisions in report order: fp32, tf32, fp16, bf16.
        let fp32 = markdown.find("### fp32").unwrap();
        assert!(fp32 < markdown.find("### fp16").unwrap());
    }

    #[test]
    fn rates_keep_three_significant_digits() {
        assert_eq!(rate(Some(512_000.0)), "512");
        assert_eq!(rate(Some(51_234.0)), "51.2");
        assert_eq!(rate(Some(1_500.0)), "1.50");
        assert_eq!(rate(Some(3.0)), "0.003");
        assert_eq!(rate(Some(0.0002)), "2.0e-7");
        assert_eq!(rate(None), "-");
    }
}
