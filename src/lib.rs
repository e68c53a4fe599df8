//! # rust-gemm
//!
//! GPU matrix multiplication written entirely in Rust: the kernels are a `#![no_std]` crate
//! compiled to PTX by rustc's `nvptx64-nvidia-cuda` backend (by this crate's build script), and
//! this library launches them through [cudarc] on the caller's own stream and buffers.
//!
//! The modules, by concern:
//! - [`runtime`]: the kernels' module, launches, device memory and events (no cuBLAS).
//! - [`ladder`]: the table of rungs (one per kernel of the teaching ladder) and their launches.
//! - [`quant`]: low-bit weight formats, the pre-packed layout and the dequant kernels.
//! - [`check`] (feature `harness`): random inputs, the f64 CPU reference, verification, sweeps.
//! - [`harness`] (feature `harness`): cuBLAS baselines, timing, records, reports and plots.
//! - [`shape`], [`element`], [`error`], [`ptx`]: the types every part shares.

pub mod element;
pub mod error;
pub mod ladder;
pub mod ptx;
pub mod quant;
pub mod runtime;
pub mod shape;
#[cfg(test)]
mod test_inputs;

#[cfg(feature = "harness")]
pub mod check;
#[cfg(feature = "harness")]
pub mod harness;

pub use error::GemmError;
pub use ladder::rungs::{RUNGS, Rung};
pub use ptx::PTX;
pub use shape::GemmShape;
