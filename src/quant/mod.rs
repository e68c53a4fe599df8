//! Quantized weights: the low-bit formats (quantizer, dequantizer, dense packing), the
//! pre-packed layout of the fast kernels, and their launchers.

pub mod fast;
pub mod format;
pub mod prepack;
#[cfg(feature = "harness")]
pub mod reference;
