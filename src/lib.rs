//! The SGEMM ladder: pure-Rust GPU kernels (built to PTX by `build.rs`) and the host library
//! that launches, verifies and benchmarks them.
//!
//! This crate adds one thing to [`gemm_host`]: the kernels' PTX, embedded at build time.

pub use gemm_host::*;

/// The PTX of every kernel in `kernels-gpu`, built by rustc's nvptx64 backend for sm_90.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));
