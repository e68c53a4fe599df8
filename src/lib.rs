//! The SGEMM ladder: pure-Rust GPU kernels (built to PTX by `build.rs`) and the host library
//! that launches, verifies and benchmarks them.
//!
//! This crate adds one thing to [`gemm_host`]: the kernels' PTX, embedded at build time, one
//! module per architecture ([`ptx`]).

pub use gemm_host::*;

pub mod ptx;

/// The PTX of every kernel in `kernels-gpu`, built by rustc's nvptx64 backend for sm_90a
/// ([`ptx::PTX_SM90A`]; loads on compute capability 9.0 only). [`ptx::for_compute_capability`]
/// picks the module for other GPUs.
pub const PTX: &str = ptx::PTX_SM90A;
