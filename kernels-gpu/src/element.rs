//! Element types of the library kernels on the device: `f32`, and fp16 and bf16 carried as
//! their 16-bit patterns, with exact widening to f32 and round-to-nearest-even narrowing; and
//! the FP8 operand types (e4m3, e5m2), which only `wgmma` reads.

use core::arch::asm;

/// A matrix element type: its storage and its conversions to and from the f32 the kernels
/// accumulate in.
pub trait Element: Copy {
    /// Bytes per element.
    const BYTES: u32;
    /// The stored value widened to f32 (exact for all three types).
    fn to_f32(self) -> f32;
    /// `x` rounded to nearest even.
    fn from_f32(x: f32) -> Self;
}

impl Element for f32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        x
    }
}

/// An IEEE binary16 value as its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct F16(pub u16);

/// A bfloat16 value as its bits (the upper half of an f32).
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct Bf16(pub u16);

impl Element for F16 {
    const BYTES: u32 = 2;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        let out: f32;
        // SAFETY: a pure register conversion.
        unsafe { asm!("cvt.f32.f16 {o}, {i};", o = out(reg32) out, i = in(reg16) self.0) };
        out
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        let out: u16;
        // SAFETY: a pure register conversion.
        unsafe { asm!("cvt.rn.f16.f32 {o}, {i};", o = out(reg16) out, i = in(reg32) x) };
        F16(out)
    }
}

impl Element for Bf16 {
    const BYTES: u32 = 2;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        let out: u16;
        // SAFETY: a pure register conversion (sm_80 and newer, PTX 7.0).
        unsafe { asm!("cvt.rn.bf16.f32 {o}, {i};", o = out(reg16) out, i = in(reg32) x) };
        Bf16(out)
    }
}

/// An FP8 E4M3 value as its bits (4 exponent bits, bias 7, 3 mantissa bits, no infinities,
/// largest finite ±448): an operand type only, read by `wgmma … .e4m3` as it is stored.
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct E4m3(pub u8);

/// An FP8 E5M2 value as its bits (5 exponent bits, bias 15, 2 mantissa bits, IEEE-style
/// infinities and NaNs, largest finite ±57 344): an operand type only, read by
/// `wgmma … .e5m2` as it is stored.
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct E5m2(pub u8);
