//! Weight-only-quantized GEMM: `C[m×n] (fp16) = A[m×k] (fp16) · dequant(W[k×n])`, fp32
//! accumulation. The formats, scales and packing are defined on the host (`host/src/quant.rs`);
//! [`format`] decodes them on the device, and each kernel is one file:
//! * [`reference`](mod@reference): one thread per output, reading the dense code stream; the executable
//!   definition;
//! * [`packed`]: the pre-packed layout and the in-register conversion the fast kernels share;
//! * [`decode`]: decode batch sizes (m ≤ 16), tensor cores, `cp.async`, split-K;
//! * [`dequantize`]: prefill, which expands the weights to fp16 for the v18 tensor-core GEMM;
//! * `fused` (Hopper): the weights decoded into shared memory inside a v18-style `wgmma` GEMM.

pub mod decode;
pub mod dequantize;
pub mod format;
#[cfg(target_feature = "sm_90a")]
pub mod fused;
pub mod packed;
pub mod reference;
