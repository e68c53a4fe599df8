//! `sgemm-ladder report`: rebuilds a report folder from results.json files (needs no GPU).

use crate::folder::ReportFolder;
use crate::options::ReportDir;
use crate::output::say;
use anyhow::{Context, Result};
use clap::Args;
use rust_gemm::harness::report::{Record, text_table};
use std::collections::HashSet;
use std::path::PathBuf;

/// Rebuild results.json, results.md and the plots in --report-dir from one or more
/// results.json files, merged in the order given; where files repeat a rung at a shape, the
/// first record is kept (needs no GPU).
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The results.json files to read.
    #[arg(long, num_args = 1.., required = true)]
    from: Vec<PathBuf>,

    /// The command that produced them, for the Markdown header.
    #[arg(long)]
    command: String,

    #[command(flatten)]
    report: ReportDir,
}

/// Merges the files and writes the report; always returns `true` (nothing is verified).
pub fn run(args: ReportArgs) -> Result<bool> {
    let folder = ReportFolder::open(&args.report.report_dir)?;
    let mut records: Vec<Record> = Vec::new();
    for path in &args.from {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let part: Vec<Record> = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a results.json", path.display()))?;
        records.extend(part);
    }
    // Files of overlapping runs: keep the first record of each rung and shape.
    let before = records.len();
    let mut seen = HashSet::new();
    records.retain(|r| seen.insert(r.key()));
    if records.len() < before {
        say!(
            "report: {} repeated records (same rung and shape as an earlier one) left out",
            before - records.len()
        );
    }
    let device = records
        .first()
        .map_or("unknown device".to_string(), |r| r.device.clone());
    folder.write(&records, &args.command, &device)?;
    say!("{}", text_table(&records));
    say!(
        "report written to {}/results.{{json,md}} and its plots",
        folder.dir().display()
    );
    Ok(true)
}
