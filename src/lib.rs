//! # rust-gemm
//!
//! GPU matrix multiplication written entirely in Rust: the kernels are a `#![no_std]` crate
//! compiled to PTX by rustc's `nvptx64-nvidia-cuda` backend (by this crate's build script), and
//! this library launches them through [cudarc] on the caller's own stream and buffers.
//!
//! ```no_run
//! use rust_gemm::{Epilogue, Gemm, MatmulDesc};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = cudarc::driver::CudaContext::new(0)?;
//! let stream = ctx.default_stream(); // or any stream the caller owns
//! let gemm = Gemm::new(stream.clone())?; // loads the embedded PTX; needs no cuBLAS
//! let (m, n, k) = (64, 256, 512);
//! let x = stream.clone_htod(&vec![half::bf16::from_f32(0.5); m * k])?;
//! let w = stream.clone_htod(&vec![half::bf16::from_f32(0.25); n * k])?; // [n, k], nn.Linear
//! let bias = stream.clone_htod(&vec![half::bf16::from_f32(1.0); n])?;
//! let mut y = stream.alloc_zeros::<half::bf16>(m * n)?;
//! let desc = MatmulDesc::new(m, n, k).b_transposed().epilogue(Epilogue::bias(&bias).gelu_tanh());
//! println!("{}", gemm.plan(&x, &w, &y, &desc)?.reason);
//! gemm.matmul(&x, &w, &mut y, &desc)?;
//! # Ok(())
//! # }
//! ```
//!
//! The modules, by concern:
//! - [`api`]: the public API ([`Gemm`], [`MatmulDesc`], [`Epilogue`], [`QuantizedWeights`],
//!   [`GemmGraph`]) and its dispatch.
//! - [`runtime`]: the kernels' module, launches, device memory and events (no cuBLAS).
//! - [`ladder`]: the table of rungs (one per kernel of the teaching ladder) and their launches.
//! - [`quant`]: low-bit weight formats, the pre-packed layout and the dequant kernels.
//! - `check` (feature `harness`): random inputs, the f64 CPU reference, verification, sweeps.
//! - `harness` (feature `harness`): cuBLAS baselines, timing, records, reports and plots.
//! - [`shape`], [`element`], [`error`], [`ptx`]: the types every part shares.

pub mod api;
pub mod element;
pub mod error;
pub mod ladder;
pub mod ptx;
pub mod quant;
#[cfg(any(test, feature = "harness"))]
mod random;
pub mod runtime;
pub mod shape;

#[cfg(feature = "harness")]
pub mod check;
#[cfg(feature = "harness")]
pub mod harness;

pub use api::Gemm;
pub use api::desc::{Activation, BLayout, Epilogue, MatmulDesc};
pub use api::dispatch::Plan;
pub use api::element::{DType, GemmElement};
pub use api::graph::GemmGraph;
pub use api::quantized::{Group, QuantizedActivation, QuantizedWeights};
pub use error::GemmError;
pub use ladder::rungs::{RUNGS, Rung};
pub use ptx::PTX;
pub use quant::format::WeightFormat;
pub use shape::GemmShape;
