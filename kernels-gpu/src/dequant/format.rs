//! Device-side decoding of the weight formats defined in `host/src/quant.rs`: the same
//! arithmetic, so that the GPU and the CPU reference agree bit for bit on every weight.

use core::arch::asm;

/// Format kinds, as passed by the host.
pub const UNSIGNED: u32 = 0;
/// Two's-complement integers.
pub const SIGNED: u32 = 1;
/// Small floats eXmY.
pub const FLOAT: u32 = 2;
/// IEEE fp16 (unquantized).
pub const F16: u32 = 3;

/// A weight format: kind, total bits, and for small floats the exponent and mantissa widths.
#[derive(Clone, Copy)]
pub struct Format {
    /// One of [`UNSIGNED`], [`SIGNED`], [`FLOAT`], [`F16`].
    pub kind: u32,
    /// Bits per code (16 for fp16).
    pub bits: u32,
    /// Exponent bits (small floats).
    pub exponent: u32,
    /// Mantissa bits (small floats).
    pub mantissa: u32,
}

/// fp16 bits to f32 (`cvt.f32.f16`).
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    let out: f32;
    unsafe {
        asm!("cvt.f32.f16 {out}, {h};", out = out(reg32) out, h = in(reg16) bits, options(pure, nomem, nostack))
    };
    out
}

/// f32 to fp16 bits, rounding to nearest even (`cvt.rn.f16.f32`).
#[inline(always)]
pub fn f32_to_f16(value: f32) -> u16 {
    let out: u16;
    unsafe {
        asm!("cvt.rn.f16.f32 {h}, {f};", h = out(reg16) out, f = in(reg32) value, options(pure, nomem, nostack))
    };
    out
}

/// `2^e` for exponents in f32's normal range, built from its bits.
#[inline(always)]
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

impl Format {
    /// The value of `code` before scaling (unsigned: before subtracting a zero point).
    #[inline(always)]
    pub fn decode(&self, code: u32) -> f32 {
        match self.kind {
            UNSIGNED => code as f32,
            SIGNED => {
                let shift = 32 - self.bits;
                ((code << shift) as i32 >> shift) as f32
            }
            FLOAT => {
                let (e, m) = (self.exponent, self.mantissa);
                let negative = (code >> (e + m)) & 1 == 1;
                let field = (code >> m) & ((1 << e) - 1);
                let fraction = (code & ((1 << m) - 1)) as f32 * pow2(-(m as i32));
                let bias = (1i32 << (e - 1)) - 1;
                let magnitude = if field == 0 {
                    fraction * pow2(1 - bias)
                } else {
                    (1.0 + fraction) * pow2(field as i32 - bias)
                };
                if negative { -magnitude } else { magnitude }
            }
            _ => f16_to_f32(code as u16),
        }
    }
}

/// Code number `index` of a densely packed, least-significant-bit-first stream of
/// `bits`-wide codes, reading only the bytes that hold it (a code of up to 16 bits spans at
/// most 3 bytes).
///
/// # Safety
/// `stream` must be readable for every byte that holds code `index` (bytes `index·bits/8` up to
/// `(index + 1)·bits/8`, rounded up), and `bits` must be 1 to 16.
#[inline(always)]
pub unsafe fn packed_code(stream: *const u8, index: usize, bits: u32) -> u32 {
    let first_bit = index * bits as usize;
    let (byte, shift) = (first_bit / 8, (first_bit % 8) as u32);
    let mut window = (unsafe { *stream.add(byte) }) as u32;
    if shift + bits > 8 {
        window |= ((unsafe { *stream.add(byte + 1) }) as u32) << 8;
    }
    if shift + bits > 16 {
        window |= ((unsafe { *stream.add(byte + 2) }) as u32) << 16;
    }
    (window >> shift) & ((1 << bits) - 1)
}
