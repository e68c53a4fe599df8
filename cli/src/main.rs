//! `sgemm-ladder`: runs every rung of the SGEMM ladder on the GPU, verifies each against a
//! reference, times it against cuBLAS and writes a report; its subcommands verify every kernel
//! on random shapes, benchmark the dequant GEMM (alone, and as a sequence of layers eagerly and
//! as a CUDA graph), run the shape suite through the library's dispatch and rebuild reports.
//!
//! This file parses the command line and dispatches; each subcommand lives in its own module.
//! Exit status: 0 when everything that ran passed verification, 1 when something failed it,
//! 2 for an error (bad arguments, no GPU, I/O), 141 when standard output closed early.

mod dequant;
mod folder;
mod layers;
mod list;
mod options;
mod output;
mod report;
mod run;
mod shapes;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Run the SGEMM ladder on the GPU: every rung verified against a reference and timed against
/// cuBLAS SGEMM (TF32 off). Prints a table and writes results.json and results.md into
/// --report-dir (checked before any GPU work), rewritten as each shape finishes.
#[derive(Parser, Debug)]
#[command(
    name = "sgemm-ladder",
    version,
    // The ladder run's options belong to it alone: `sgemm-ladder --reps 5 verify` is refused.
    args_conflicts_with_subcommands = true,
    after_help = "Exit status: 0 when everything that ran passed verification, 1 when something failed it, 2 for an error (bad arguments, no GPU, I/O), 141 when standard output closed early."
)]
struct Cli {
    #[command(flatten)]
    run: run::RunArgs,

    /// List the rungs and exit (needs no GPU).
    #[arg(long)]
    list: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Verify(verify::VerifyArgs),
    Dequant(dequant::DequantArgs),
    DequantLayers(layers::LayersArgs),
    Shapes(shapes::ShapesArgs),
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Verify(args)) => verify::run(args),
        Some(Command::Dequant(args)) => dequant::run(args),
        Some(Command::DequantLayers(args)) => layers::run(args),
        Some(Command::Shapes(args)) => shapes::run(args),
        Some(Command::Report(args)) => report::run(args),
        None if cli.list => {
            list::run();
            Ok(true)
        }
        None => run::run(cli.run),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            output::error(format_args!("sgemm-ladder: error: {err:#}"));
            ExitCode::from(output::ERROR)
        }
    }
}
