//! The benchmark harness: the GPU with cuBLAS baselines, timing of rungs against them, result
//! records, tables, reports and plots, the dequant benchmark and the shape suite (the library's
//! dispatch against cuBLAS on a public suite of shapes), and sequences of quantized layers
//! eagerly against their CUDA graph.

pub mod bench;
pub mod cublaslt;
pub mod dequant_bench;
pub mod gpu;
pub mod layers_bench;
pub mod plot;
pub mod report;
pub mod suite;
pub mod suite_bench;
pub mod suite_report;
