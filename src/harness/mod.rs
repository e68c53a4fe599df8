//! The benchmark harness: the GPU with cuBLAS baselines, timing of rungs against them, result
//! records, tables, reports and plots, and the dequant benchmark.

pub mod bench;
pub mod dequant_bench;
pub mod gpu;
pub mod plot;
pub mod report;
