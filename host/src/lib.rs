//! Host side of the SGEMM ladder.
//!
//! - [`rungs`]: the one table of rungs (kernel entry, launch geometry, requirements) that the
//!   CLI, the tests and the benches all read.
//! - [`shape`]: GEMM shapes and their validation.
//! - [`cpu`]: random matrices and the CPU reference (f64 accumulation, multi-threaded).
//! - [`element`]: the element types kernels take (`f32`, fp16 as `u16` bits).
//! - [`dequant`]: uploading quantized weights and launching the reference dequantizing GEMM.
//! - [`dequant_bench`]: the dequant GEMM benchmark against cuBLAS fp16.
//! - [`dequant_fast`]: the fast dequant kernels (decode and prefill) on pre-packed weights.
//! - [`verify`]: error norms and the tolerance a result must meet.
//! - [`gpu`]: the CUDA runtime (through cudarc): module loading, launches, cuBLAS, timing.
//! - [`autotune`]: picks the fastest candidate kernel per device and shape, with a JSON cache.
//! - [`bench`]: the harness that verifies and times rungs against cuBLAS.
//! - [`sweep`]: randomized verification of every kernel over many shapes, from one seed.
//! - [`plot`]: GFLOP/s against size for every rung and cuBLAS, as SVG.
//! - [`quant`]: low-bit weight formats, quantizer, dequantizer and dense packing (the
//!   semantics the dequantizing GEMM of issue 4 is checked against).
//! - [`prepack`]: the pre-packed weight layout of the fast dequant kernels.
//! - [`report`]: result records, the printed table, Markdown and JSON.

pub mod autotune;
pub mod bench;
pub mod cpu;
pub mod dequant;
pub mod dequant_bench;
pub mod dequant_fast;
pub mod element;
pub mod error;
pub mod gpu;
pub mod plot;
pub mod prepack;
pub mod quant;
pub mod report;
pub mod rungs;
pub mod shape;
pub mod sweep;
pub mod verify;

pub use error::GemmError;
pub use rungs::{RUNGS, Rung};
pub use shape::GemmShape;
