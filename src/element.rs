//! The element types the kernels read and write: `f32`, fp16 carried as its `u16` bit pattern
//! (the kernels see raw bits; [`half::f16`] does the conversions on the host) or as
//! [`half::f16`], and [`half::bf16`]; and the two FP8 formats as their bytes, [`Fp8E4m3`] and
//! [`Fp8E5m2`] (conversions written here, with saturation).

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

/// An OCP FP8 E4M3 ("E4M3FN") number as its 8-bit pattern: 1 sign bit, 4 exponent bits with
/// bias 7, 3 mantissa bits. This is NVIDIA's `__nv_fp8_e4m3` and PTX's `e4m3`: there are no
/// infinities, the all-ones patterns `S.1111.111` (0x7F, 0xFF) are NaN, the largest finite value
/// is ±448 (`S.1111.110`) and the smallest subnormal is 2⁻⁹.
///
/// [`Element::from_f32`] rounds to nearest even and saturates out-of-range values (infinities
/// included) to ±448, as `cvt.rn.satfinite.e4m3x2.f32` does; [`Element::to_f32`] is exact.
#[repr(transparent)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Fp8E4m3(pub u8);

/// An OCP FP8 E5M2 number as its 8-bit pattern: 1 sign bit, 5 exponent bits with bias 15, 2
/// mantissa bits. This is NVIDIA's `__nv_fp8_e5m2` and PTX's `e5m2`, laid out like the top byte
/// of an IEEE fp16: exponent field 31 holds ±infinity (mantissa 0) and NaNs, the largest finite
/// value is ±57344 (`S.11110.11`) and the smallest subnormal is 2⁻¹⁶.
///
/// [`Element::from_f32`] rounds to nearest even and saturates out-of-range finite values and
/// infinities to ±57344, as `cvt.rn.satfinite.e5m2x2.f32` does; [`Element::to_f32`] is exact
/// (infinities decode to infinities).
#[repr(transparent)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Fp8E5m2(pub u8);

// SAFETY: both types are `#[repr(transparent)]` wrappers of a `u8`, so they have the size,
// alignment and bit validity of `u8` (every one of the 256 patterns is a value), which is what a
// kernel or cuBLASLt reading `CUDA_R_8F_E4M3` / `CUDA_R_8F_E5M2` bytes sees.
unsafe impl DeviceRepr for Fp8E4m3 {}
// SAFETY: as above: a transparent `u8`.
unsafe impl DeviceRepr for Fp8E5m2 {}
// SAFETY: a transparent `u8`, for which all-zero bits are valid (they encode +0.0).
unsafe impl cudarc::driver::ValidAsZeroBits for Fp8E4m3 {}
// SAFETY: a transparent `u8`, for which all-zero bits are valid (they encode +0.0).
unsafe impl cudarc::driver::ValidAsZeroBits for Fp8E5m2 {}

impl Fp8E4m3 {
    /// The largest finite value, 448 (`0x7E`).
    pub const MAX_FINITE: f32 = 448.0;
}

impl Fp8E5m2 {
    /// The largest finite value, 57344 (`0x7B`).
    pub const MAX_FINITE: f32 = 57344.0;
}

/// The e4m3 (E4M3FN) format, rounded to nearest even with saturation.
impl Element for Fp8E4m3 {
    const BYTES: usize = 1;
    const NAME: &'static str = "fp8-e4m3";
    fn from_f32(x: f32) -> Self {
        Fp8E4m3(E4M3.encode(x))
    }
    fn to_f32(self) -> f32 {
        E4M3.decode(self.0)
    }
}

/// The e5m2 format, rounded to nearest even with saturation.
impl Element for Fp8E5m2 {
    const BYTES: usize = 1;
    const NAME: &'static str = "fp8-e5m2";
    fn from_f32(x: f32) -> Self {
        Fp8E5m2(E5M2.encode(x))
    }
    fn to_f32(self) -> f32 {
        E5M2.decode(self.0)
    }
}

/// What distinguishes the two FP8 formats: both are 1 sign bit, `8 - 1 - man_bits` exponent
/// bits and `man_bits` mantissa bits, with subnormals at exponent field 0. They differ in how
/// the top of the range is spent: e4m3 keeps only its all-ones pattern for NaN (and so reaches
/// 448 instead of 240), e5m2 keeps IEEE's infinities and NaNs in exponent field 31.
struct Fp8Params {
    /// Mantissa bits (3 for e4m3, 2 for e5m2).
    man_bits: u32,
    /// Exponent bias (7, 15).
    bias: i32,
    /// The magnitude bits of the largest finite value (0x7E, 0x7B): what saturation returns.
    max_finite: u8,
    /// Whether exponent field all-ones holds infinities and NaNs (e5m2, IEEE-like) rather than
    /// normal numbers with only the all-ones pattern a NaN (e4m3).
    ieee_specials: bool,
}

/// e4m3 (E4M3FN): bias 7, largest finite `0.1111.110` = 1.75 · 2⁸ = 448.
const E4M3: Fp8Params = Fp8Params {
    man_bits: 3,
    bias: 7,
    max_finite: 0x7E,
    ieee_specials: false,
};

/// e5m2: bias 15, largest finite `0.11110.11` = 1.75 · 2¹⁵ = 57344.
const E5M2: Fp8Params = Fp8Params {
    man_bits: 2,
    bias: 15,
    max_finite: 0x7B,
    ieee_specials: true,
};

/// The magnitude bits both formats give a NaN made from f32 (`0x7F`: the only NaN of e4m3,
/// and one of e5m2's three NaN patterns). `from_f32` keeps the NaN's sign bit.
const FP8_NAN: u8 = 0x7F;

/// 2^`e` as an f32, exactly (for `e` in f32's normal range, which every FP8 exponent is in).
fn pow2(e: i32) -> f32 {
    debug_assert!((-126..=127).contains(&e));
    f32::from_bits(((e + 127) as u32) << 23)
}

/// `v / 2^shift` rounded to the nearest integer, ties to even (`shift` ≥ 1).
fn shift_right_round_even(v: u32, shift: u32) -> u32 {
    debug_assert!(shift >= 1);
    if shift > 32 {
        // v < 2³² ≤ 2^(shift−1): less than half a unit, so it rounds to 0.
        return 0;
    }
    let v = u64::from(v);
    let quotient = v >> shift;
    let remainder = v & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let up = remainder > half || (remainder == half && quotient & 1 == 1);
    (quotient + u64::from(up)) as u32
}

impl Fp8Params {
    /// The smallest normal exponent, 1 − bias: below 2^e_min the numbers are subnormal, spaced
    /// like the first normal binade.
    fn e_min(&self) -> i32 {
        1 - self.bias
    }

    /// `x` rounded to nearest even, saturated to ± the largest finite value (infinities too),
    /// NaN to a NaN; the sign bit is kept in every case (so −0.0 and negative values that round
    /// to zero give `0x80`).
    ///
    /// The rounding is done in integers on f32's own bits, so it is exact: `|x|` is written as
    /// `sig · 2^e` with `sig` < 2²⁴, and rounded to a multiple of the FP8 spacing `2^s` at its
    /// magnitude. That spacing is `2^(⌊log₂|x|⌋ − man_bits)` for normal values and the
    /// subnormal spacing `2^(e_min − man_bits)` below `2^e_min`, so one formula covers both.
    fn encode(&self, x: f32) -> u8 {
        let bits = x.to_bits();
        let sign = ((bits >> 24) & 0x80) as u8;
        if x.is_nan() {
            return sign | FP8_NAN;
        }
        let abs = bits & 0x7FFF_FFFF;
        if abs == 0x7F80_0000 {
            // ±∞: satfinite clamps it to the largest finite value (e4m3 has no infinity, and
            // the harness wants no infinities from e5m2 either).
            return sign | self.max_finite;
        }
        if abs == 0 {
            return sign;
        }
        // |x| = sig · 2^e exactly, sig < 2²⁴.
        let exp_field = (abs >> 23) as i32;
        let (sig, e) = if exp_field == 0 {
            (abs, -149) // an f32 subnormal: no implicit bit
        } else {
            ((abs & 0x007F_FFFF) | 0x0080_0000, exp_field - 150)
        };
        let log2 = e + (31 - sig.leading_zeros() as i32); // ⌊log₂|x|⌋
        let man = self.man_bits as i32;
        // The exponent of the spacing between FP8 values at |x| (clamped to the subnormal
        // spacing below the normal range). Always above e, as f32 has more mantissa bits.
        let s = log2.max(self.e_min()) - man;
        let n = shift_right_round_even(sig, (s - e) as u32);
        // |x| ≈ n · 2^s. Number the binades from the subnormal one: k = 0 for the subnormals
        // and the first normal binade (which share a spacing), k = biased exponent − 1 above.
        // Then the magnitude bits are k·2^man + n: in binade k ≥ 1, n ∈ [2^man, 2^(man+1)]
        // carries the implicit bit into the exponent field, and in binade 0, n < 2^man is a
        // subnormal mantissa while n ≥ 2^man lands in exponent field 1. Rounding up to
        // n = 2^(man+1) carries into the next exponent by the same addition.
        let k = (s - (self.e_min() - man)) as u32;
        let magnitude = (k << self.man_bits) + n;
        // Saturate finite values beyond the range (what `.satfinite` does after rounding).
        sign | magnitude.min(u32::from(self.max_finite)) as u8
    }

    /// The exact value of `code` (NaN patterns give `f32::NAN`, e5m2's infinities ±∞).
    fn decode(&self, code: u8) -> f32 {
        let negative = code & 0x80 != 0;
        let magnitude = code & 0x7F;
        let exp_field = i32::from(magnitude >> self.man_bits);
        let mantissa = u32::from(magnitude) & ((1 << self.man_bits) - 1);
        let max_exp_field = (1i32 << (7 - self.man_bits)) - 1;
        let man = self.man_bits as i32;
        let value = if self.ieee_specials && exp_field == max_exp_field {
            if mantissa == 0 {
                f32::INFINITY
            } else {
                return f32::NAN;
            }
        } else if !self.ieee_specials && magnitude == 0x7F {
            return f32::NAN;
        } else if exp_field == 0 {
            // Subnormal: mantissa · 2^(e_min − man). Small integers times a power of two: exact.
            mantissa as f32 * pow2(self.e_min() - man)
        } else {
            ((1 << self.man_bits) | mantissa) as f32 * pow2(exp_field - self.bias - man)
        };
        if negative { -value } else { value }
    }
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

#[cfg(test)]
mod fp8_tests {
    use super::*;

    /// Every code's value as f64 (NaN for NaN codes), for the reference rounding.
    fn values<T: Element>(make: fn(u8) -> T) -> Vec<f64> {
        (0..=255u8).map(|c| f64::from(make(c).to_f32())).collect()
    }

    /// The reference rounding: scan every finite code with `x`'s sign and keep the nearest,
    /// ties to the even code (the one whose last mantissa bit is 0). Beyond the largest finite
    /// value the nearest finite code is the largest, which is what saturation gives.
    ///
    /// "Nearer" is decided exactly: of two values a < b, a is nearer to t when t < (a + b)/2,
    /// and that midpoint of two FP8 values is exact in f64 (as is t, an f32). Subtracting t
    /// instead would round for very large or very small t.
    fn nearest(table: &[f64], x: f32) -> u8 {
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let t = f64::from(x.abs());
        let mut best: Option<(u8, f64)> = None;
        for magnitude in 0..0x80u8 {
            let value = table[usize::from(magnitude)];
            if !value.is_finite() {
                continue;
            }
            let Some((_, best_value)) = best else {
                best = Some((magnitude, value));
                continue;
            };
            let mid = (value + best_value) / 2.0;
            let even = magnitude & 1 == 0;
            let nearer = if value < best_value {
                t < mid || (t == mid && even)
            } else {
                t > mid || (t == mid && even)
            };
            if nearer {
                best = Some((magnitude, value));
            }
        }
        sign | best.expect("some finite code").0
    }

    /// Checks `from_f32(x)` against the reference for `x` and `-x`.
    fn check_nearest<T: Element>(table: &[f64], bits_of: fn(T) -> u8, x: f32) {
        for x in [x, -x] {
            let got = bits_of(T::from_f32(x));
            let want = nearest(table, x);
            assert_eq!(
                got,
                want,
                "{}: {x:e} ({:#010x}) → {got:#04x} ({}), nearest is {want:#04x} ({})",
                T::NAME,
                x.to_bits(),
                table[usize::from(got)],
                table[usize::from(want)],
            );
        }
    }

    /// The brute-force comparison for one format: strided f32 bit patterns over the whole
    /// positive range, a denser stride over the format's own range, and every midpoint between
    /// consecutive finite values with its neighbours one f32 ulp either side.
    fn brute_force<T: Element>(make: fn(u8) -> T, bits_of: fn(T) -> u8, max_finite: f32) {
        let table = values(make);
        let mut count = 0usize;
        for bits in (0..0x7F80_0000u32).step_by(7919) {
            check_nearest(&table, bits_of, f32::from_bits(bits));
            count += 1;
        }
        // From a quarter of the smallest subnormal up to twice the largest finite value.
        let low = (table[1] as f32 / 4.0).to_bits();
        let high = (max_finite * 2.0).to_bits();
        for bits in (low..=high).step_by(251) {
            check_nearest(&table, bits_of, f32::from_bits(bits));
            count += 1;
        }
        let finite: Vec<f64> = table[..0x80]
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        for pair in finite.windows(2) {
            let mid = ((pair[0] + pair[1]) / 2.0) as f32;
            assert_eq!(
                f64::from(mid),
                (pair[0] + pair[1]) / 2.0,
                "midpoint exact in f32"
            );
            for x in [mid, mid.next_down(), mid.next_up()] {
                check_nearest(&table, bits_of, x);
                count += 1;
            }
        }
        // Just above the largest finite value: its own midpoint with the next (absent) code.
        let top = finite[finite.len() - 1] as f32;
        for x in [
            top.next_up(),
            top * 1.0625,
            top * 1.125,
            top * 4.0,
            f32::MAX,
        ] {
            check_nearest(&table, bits_of, x);
            count += 1;
        }
        assert!(count > 500_000, "{count} inputs checked");
    }

    #[test]
    fn fp8_known_values() {
        let e4m3 = |c: u8| Fp8E4m3(c).to_f32();
        assert_eq!(e4m3(0x38), 1.0);
        assert_eq!(e4m3(0x7E), 448.0);
        // Exponent field 14 with mantissa 111: where an IEEE-style e4m3 would stop.
        assert_eq!(e4m3(0x77), 240.0);
        assert_eq!(e4m3(0x78), 256.0); // exponent field 15 holds normal numbers in E4M3FN
        assert_eq!(e4m3(0x08), 2f32.powi(-6)); // smallest normal
        assert_eq!(e4m3(0x07), 7.0 * 2f32.powi(-9)); // largest subnormal
        assert_eq!(e4m3(0x01), 2f32.powi(-9)); // smallest subnormal
        assert_eq!(e4m3(0xC0), -2.0);
        assert_eq!(Fp8E4m3::MAX_FINITE, e4m3(0x7E));
        let e5m2 = |c: u8| Fp8E5m2(c).to_f32();
        assert_eq!(e5m2(0x3C), 1.0);
        assert_eq!(e5m2(0x7B), 57344.0);
        assert_eq!(e5m2(0x04), 2f32.powi(-14)); // smallest normal
        assert_eq!(e5m2(0x01), 2f32.powi(-16)); // smallest subnormal
        assert_eq!(e5m2(0x7C), f32::INFINITY);
        assert_eq!(e5m2(0xFC), f32::NEG_INFINITY);
        assert_eq!(Fp8E5m2::MAX_FINITE, e5m2(0x7B));
        assert_eq!(<Fp8E4m3 as Element>::from_f32(1.0), Fp8E4m3(0x38));
        assert_eq!(<Fp8E5m2 as Element>::from_f32(-1.0), Fp8E5m2(0xBC));
        assert_eq!((Fp8E4m3::BYTES, Fp8E4m3::NAME), (1, "fp8-e4m3"));
        assert_eq!((Fp8E5m2::BYTES, Fp8E5m2::NAME), (1, "fp8-e5m2"));
        assert_eq!(std::mem::size_of::<Fp8E4m3>(), 1);
        assert_eq!(std::mem::size_of::<Fp8E5m2>(), 1);
    }

    #[test]
    fn fp8_e5m2_is_the_top_byte_of_fp16() {
        // An independent check of the decoder: e5m2 has fp16's sign and exponent fields and
        // the first two of its mantissa bits.
        for code in 0..=255u8 {
            let ours = Fp8E5m2(code).to_f32();
            let f16 = half::f16::from_bits(u16::from(code) << 8).to_f32();
            assert!(
                ours == f16 || (ours.is_nan() && f16.is_nan()),
                "{code:#04x}: {ours} vs fp16 {f16}"
            );
        }
    }

    #[test]
    fn fp8_every_code_round_trips() {
        for code in 0..=255u8 {
            let value = Fp8E4m3(code).to_f32();
            let back = <Fp8E4m3 as Element>::from_f32(value);
            if code & 0x7F == 0x7F {
                assert!(value.is_nan() && back.to_f32().is_nan(), "e4m3 {code:#04x}");
            } else {
                assert_eq!(back, Fp8E4m3(code), "e4m3 {code:#04x} = {value}");
            }

            let value = Fp8E5m2(code).to_f32();
            let back = <Fp8E5m2 as Element>::from_f32(value);
            match code & 0x7F {
                // Infinity saturates to the largest finite value of its sign.
                0x7C => assert_eq!(back, Fp8E5m2((code & 0x80) | 0x7B), "e5m2 {code:#04x}"),
                0x7D..=0x7F => {
                    assert!(value.is_nan() && back.to_f32().is_nan(), "e5m2 {code:#04x}")
                }
                _ => assert_eq!(back, Fp8E5m2(code), "e5m2 {code:#04x} = {value}"),
            }
        }
    }

    #[test]
    fn fp8_e4m3_rounds_to_nearest_representable() {
        brute_force(Fp8E4m3, |x| x.0, Fp8E4m3::MAX_FINITE);
    }

    #[test]
    fn fp8_e5m2_rounds_to_nearest_representable() {
        brute_force(Fp8E5m2, |x| x.0, Fp8E5m2::MAX_FINITE);
    }

    #[test]
    fn fp8_ties_go_to_the_even_code() {
        let e4m3 = |x: f32| <Fp8E4m3 as Element>::from_f32(x).0;
        let sub = 2f32.powi(-9);
        assert_eq!(e4m3(0.5 * sub), 0x00); // between 0 and the smallest subnormal
        assert_eq!(e4m3(1.5 * sub), 0x02);
        assert_eq!(e4m3(2.5 * sub), 0x02);
        assert_eq!(e4m3(7.5 * sub), 0x08); // the largest subnormal rounds up into the normals
        assert_eq!(e4m3(1.0625), 0x38); // 1 + 2⁻⁴: halfway between 1 and 1.125
        assert_eq!(e4m3(1.1875), 0x3A); // halfway between 1.125 and 1.25
        assert_eq!(e4m3(1.9375), 0x40); // halfway between 1.875 and 2: carries into the exponent
        let e5m2 = |x: f32| <Fp8E5m2 as Element>::from_f32(x).0;
        assert_eq!(e5m2(1.125), 0x3C);
        assert_eq!(e5m2(1.375), 0x3E);
        assert_eq!(e5m2(1.5 * 2f32.powi(-16)), 0x02);
    }

    #[test]
    fn fp8_saturates() {
        let e4m3 = |x: f32| <Fp8E4m3 as Element>::from_f32(x).0;
        for (x, code) in [
            (448.0, 0x7E),
            (464.0, 0x7E), // halfway to the 480 that E4M3FN does not have
            (480.0, 0x7E),
            (1e6, 0x7E),
            (f32::MAX, 0x7E),
            (f32::INFINITY, 0x7E),
            (-500.0, 0xFE),
            (f32::NEG_INFINITY, 0xFE),
        ] {
            assert_eq!(e4m3(x), code, "e4m3 {x}");
        }
        let e5m2 = |x: f32| <Fp8E5m2 as Element>::from_f32(x).0;
        for (x, code) in [
            (57344.0, 0x7B),
            (61440.0, 0x7B), // halfway to 65536, which would round to infinity without satfinite
            (65536.0, 0x7B),
            (1e9, 0x7B),
            (f32::INFINITY, 0x7B),
            (-1e9, 0xFB),
            (f32::NEG_INFINITY, 0xFB),
        ] {
            assert_eq!(e5m2(x), code, "e5m2 {x}");
        }
    }

    #[test]
    fn fp8_signed_zero() {
        for (x, code) in [
            (0.0f32, 0x00u8),
            (-0.0, 0x80),
            (1e-30, 0x00),
            (-1e-30, 0x80),
        ] {
            assert_eq!(<Fp8E4m3 as Element>::from_f32(x).0, code, "e4m3 {x}");
            assert_eq!(<Fp8E5m2 as Element>::from_f32(x).0, code, "e5m2 {x}");
        }
        let neg = Fp8E4m3(0x80).to_f32();
        assert!(neg == 0.0 && neg.is_sign_negative());
        let neg = Fp8E5m2(0x80).to_f32();
        assert!(neg == 0.0 && neg.is_sign_negative());
        assert_eq!(Fp8E4m3::default().to_f32().to_bits(), 0);
    }

    #[test]
    fn fp8_nan() {
        for x in [f32::NAN, -f32::NAN, f32::from_bits(0x7F80_0001)] {
            let e4m3 = <Fp8E4m3 as Element>::from_f32(x);
            assert_eq!(e4m3.0 & 0x7F, 0x7F, "e4m3 NaN is the all-ones pattern");
            assert_eq!(e4m3.0 & 0x80 != 0, x.is_sign_negative());
            assert!(e4m3.to_f32().is_nan());
            let e5m2 = <Fp8E5m2 as Element>::from_f32(x);
            assert!(
                e5m2.0 & 0x7C == 0x7C && e5m2.0 & 0x03 != 0,
                "e5m2 NaN pattern"
            );
            assert!(e5m2.to_f32().is_nan());
        }
        assert!(Fp8E4m3(0x7F).to_f32().is_nan());
        assert!(Fp8E4m3(0xFF).to_f32().is_nan());
        for code in [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF] {
            assert!(Fp8E5m2(code).to_f32().is_nan(), "e5m2 {code:#04x}");
        }
    }
}
