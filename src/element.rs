//! The element types the kernels read and write: `f32`, fp16 carried as its `u16` bit pattern
//! (the kernels see raw bits; [`half::f16`] does the conversions on the host) or as
//! [`half::f16`], and [`half::bf16`].

use cudarc::driver::DeviceRepr;

/// A matrix element type a rung can take.
pub trait Element: DeviceRepr + Copy + Default + Unpin + Send + Sync + 'static {
    /// Bytes per element.
    const BYTES: usize;
    /// Its name in messages (`f32`, `fp16`).
    const NAME: &'static str;
    /// `x` rounded to this type (to nearest even).
    fn from_f32(x: f32) -> Self;
    /// The value as f32 (exact for both types).
    fn to_f32(self) -> f32;
}

impl Element for f32 {
    const BYTES: usize = 4;
    const NAME: &'static str = "f32";
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}

/// fp16 as bits.
impl Element for u16 {
    const BYTES: usize = 2;
    const NAME: &'static str = "fp16";
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x).to_bits()
    }
    fn to_f32(self) -> f32 {
        half::f16::from_bits(self).to_f32()
    }
}

/// fp16 as [`half::f16`], the same bits as `u16` to the kernels.
impl Element for half::f16 {
    const BYTES: usize = 2;
    const NAME: &'static str = "fp16";
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}

/// bfloat16 (8 exponent bits, 8 significant bits), as the library's bf16 kernels and cuBLAS's
/// `CUDA_R_16BF` take it.
impl Element for half::bf16 {
    const BYTES: usize = 2;
    const NAME: &'static str = "bf16";
    fn from_f32(x: f32) -> Self {
        half::bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}

/// An fp16 element type: its bits (`u16`, as the harness keeps them) or [`half::f16`] (as the
/// API takes them). The kernels see the same 16 bits either way.
pub trait Fp16Bits: Element {}
impl Fp16Bits for u16 {}
impl Fp16Bits for half::f16 {}

/// `values` rounded to `T`.
pub fn convert<T: Element>(values: &[f32]) -> Vec<T> {
    values.iter().map(|&x| T::from_f32(x)).collect()
}

/// `values` widened to f32.
pub fn widen<T: Element>(values: &[T]) -> Vec<f32> {
    values.iter().map(|&x| x.to_f32()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp16_bits_round_trip_and_round_to_nearest_even() {
        assert_eq!(<u16 as Element>::from_f32(1.0), 0x3C00);
        assert_eq!(<u16 as Element>::from_f32(-2.0), 0xC000);
        assert_eq!(0x3C00u16.to_f32(), 1.0);
        // 1 + 2⁻¹¹ lies halfway between 1 and 1 + 2⁻¹⁰: ties go to the even mantissa, 1.
        assert_eq!(<u16 as Element>::from_f32(1.0 + 1.0 / 2048.0), 0x3C00);
        assert_eq!(<u16 as Element>::from_f32(1.0 + 3.0 / 2048.0), 0x3C02);
        // Overflow saturates to infinity, as IEEE rounding says.
        assert_eq!(<u16 as Element>::from_f32(1e6), 0x7C00);
        let values = [0.5f32, -0.25, 0.1, 3.0];
        let round_trip = widen(&convert::<u16>(&values));
        for (x, y) in values.iter().zip(&round_trip) {
            assert!((x - y).abs() <= x.abs() / 2048.0, "{x} → {y}");
        }
        assert_eq!(widen(&convert::<f32>(&values)), values);
    }

    #[test]
    fn bf16_keeps_eight_significant_bits() {
        // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: ties to even, 1.
        assert_eq!(
            <half::bf16 as Element>::from_f32(1.0 + 1.0 / 256.0).to_f32(),
            1.0
        );
        assert_eq!(
            <half::bf16 as Element>::from_f32(1.0 + 3.0 / 256.0).to_f32(),
            1.0 + 1.0 / 64.0
        );
        // fp32's range: no overflow where fp16 would have one.
        assert_eq!(<half::bf16 as Element>::from_f32(1e6).to_f32(), 999_424.0);
        assert_eq!(<half::bf16 as Element>::BYTES, 2);
    }
}
