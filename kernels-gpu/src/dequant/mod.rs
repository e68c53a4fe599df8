//! Weight-only-quantized GEMM: `C[m×n] (fp16) = A[m×k] (fp16) · dequant(W[k×n])`, fp32
//! accumulation. The formats, scales and packing are defined on the host (`host/src/quant.rs`);
//! [`format`] decodes them on the device, and each kernel is one file.

pub mod format;
pub mod reference;
