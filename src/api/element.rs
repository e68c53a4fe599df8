//! The element types the API multiplies: `f32`, [`half::f16`] and [`half::bf16`].

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// What the kernels compute with, for one call: the element type of A, B, C and the bias,
/// and for `f32` whether the tensor cores may round the inputs to TF32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// fp32 operands, exact fp32 multiply-adds.
    F32,
    /// fp32 operands cut to TF32 (10-bit mantissa; rounded or truncated, by kernel) for the
    /// tensor cores, fp32 accumulation.
    Tf32,
    /// IEEE fp16 operands, fp32 accumulation, fp16 output.
    F16,
    /// bfloat16 operands, fp32 accumulation, bf16 output.
    Bf16,
}

impl DType {
    /// Short name, as in kernel entry points (`f32`, `tf32`, `f16`, `bf16`).
    pub fn label(&self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::Tf32 => "tf32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
        }
    }

    /// Bytes per element.
    pub fn bytes(&self) -> usize {
        match self {
            DType::F32 | DType::Tf32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// A matrix element type the library multiplies. Implemented for `f32`, [`half::f16`] and
/// [`half::bf16`] only (sealed).
pub trait GemmElement:
    DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static + sealed::Sealed
{
    /// The element's [`DType`] (for `f32`: exact; [`crate::MatmulDesc::tf32`] asks for TF32).
    const DTYPE: DType;
    /// The value widened to f64 (exact).
    fn to_f64(self) -> f64;
    /// `x` rounded to this type (nearest even).
    fn from_f64(x: f64) -> Self;
}

impl GemmElement for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl GemmElement for half::f16 {
    const DTYPE: DType = DType::F16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(x: f64) -> Self {
        half::f16::from_f64(x)
    }
}

impl GemmElement for half::bf16 {
    const DTYPE: DType = DType::Bf16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(x: f64) -> Self {
        half::bf16::from_f64(x)
    }
}
