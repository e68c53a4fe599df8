//! Low-bit weight formats and their CPU semantics: the definition every dequantizing kernel
//! is checked against.
//!
//! A weight matrix `W[k×n]` is quantized in groups of `group` consecutive rows (along k) per
//! column: each group has one fp16 scale (and, for unsigned formats, optionally one integer
//! zero point), and each weight becomes a `bits`-wide code. Codes are packed densely, with no
//! padding bits, least-significant bit first: code `i` occupies bits `i·bits .. (i+1)·bits` of
//! the byte stream, so 3-, 5-, 6- and 7-bit codes straddle bytes.
//!
//! Value of a code, before scaling:
//! - `u{b}` (b = 1..8): the unsigned integer, minus the group's zero point when zero points
//!   are used.
//! - `i{b}` (b = 2..8): two's complement, `-2^(b-1) ..= 2^(b-1) - 1`.
//! - `e{X}m{Y}` (1 + X + Y ≤ 8, X ≥ 1): sign, X exponent bits with bias `2^(X-1) - 1`, Y
//!   mantissa bits. Exponent field 0 encodes subnormals (`±0.m · 2^(1-bias)`), so zero is
//!   exact. **Every code is finite**: there are no infinities or NaNs, the largest exponent
//!   field is an ordinary binade (e4m3 then reaches ±480 and e5m2 ±114 688, where the OCP FP8
//!   formats would reserve codes for NaN or ∞). Quantization saturates at the largest
//!   magnitude and rounds to nearest, ties to even; `-0` decodes to 0.
//! - `f16`: IEEE half precision (the unquantized baseline; no scales).
//!
//! Dequantized weight = `value(code) · scale` (computed in f32 from the fp16 scale). Scales are
//! never below fp16's smallest normal number, 2⁻¹⁴ (see [`fp16_scale`]).

use crate::GemmError;
use half::{bf16, f16};
use std::fmt;
use std::str::FromStr;

/// A weight format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WeightFormat {
    /// Unsigned integer of 1..=8 bits.
    Unsigned(u32),
    /// Two's-complement integer of 2..=8 bits.
    Signed(u32),
    /// Small float: sign, `exponent` bits, `mantissa` bits (1 + exponent + mantissa ≤ 8).
    Float {
        /// Exponent bits (≥ 1).
        exponent: u32,
        /// Mantissa bits.
        mantissa: u32,
    },
    /// IEEE fp16, unquantized.
    F16,
}

impl WeightFormat {
    /// A checked format.
    pub fn new(format: WeightFormat) -> Result<Self, GemmError> {
        let ok = match format {
            WeightFormat::Unsigned(b) => (1..=8).contains(&b),
            WeightFormat::Signed(b) => (2..=8).contains(&b),
            WeightFormat::Float { exponent, mantissa } => {
                exponent >= 1 && 1 + exponent + mantissa <= 8
            }
            WeightFormat::F16 => true,
        };
        if ok {
            Ok(format)
        } else {
            Err(GemmError::UnsupportedFormat(format!("{format:?}")))
        }
    }

    /// Bits per weight.
    pub fn bits(&self) -> u32 {
        match *self {
            WeightFormat::Unsigned(b) | WeightFormat::Signed(b) => b,
            WeightFormat::Float { exponent, mantissa } => 1 + exponent + mantissa,
            WeightFormat::F16 => 16,
        }
    }

    /// The value of `code` before scaling (unsigned: before subtracting a zero point).
    pub fn decode(&self, code: u32) -> f32 {
        match *self {
            WeightFormat::Unsigned(_) => code as f32,
            WeightFormat::Signed(b) => {
                let shift = 32 - b;
                ((code << shift) as i32 >> shift) as f32
            }
            WeightFormat::Float { exponent, mantissa } => {
                let sign = if code >> (exponent + mantissa) & 1 == 1 {
                    -1.0f32
                } else {
                    1.0
                };
                let field = (code >> mantissa) & ((1 << exponent) - 1);
                let fraction = (code & ((1 << mantissa) - 1)) as f32 / (1u32 << mantissa) as f32;
                let bias = (1i32 << (exponent - 1)) - 1;
                let magnitude = if field == 0 {
                    fraction * 2f32.powi(1 - bias)
                } else {
                    (1.0 + fraction) * 2f32.powi(field as i32 - bias)
                };
                sign * magnitude
            }
            WeightFormat::F16 => f16::from_bits(code as u16).to_f32(),
        }
    }

    /// The code whose value is nearest to `x` (ties to even), saturating at the format's range.
    /// NaN encodes as 0 for integer and small-float formats (they have no NaN).
    pub fn encode(&self, x: f32) -> u32 {
        match *self {
            WeightFormat::Unsigned(b) => {
                let max = ((1u32 << b) - 1) as f32;
                if x.is_nan() {
                    0
                } else {
                    x.round_ties_even().clamp(0.0, max) as u32
                }
            }
            WeightFormat::Signed(b) => {
                let half = (1i32 << (b - 1)) as f32;
                let v = if x.is_nan() {
                    0.0
                } else {
                    x.round_ties_even().clamp(-half, half - 1.0)
                };
                (v as i32 as u32) & ((1u32 << b) - 1)
            }
            WeightFormat::Float { exponent, mantissa } => {
                if x.is_nan() {
                    return 0;
                }
                // Non-negative codes in increasing value order are 0 ..= 2^(bits-1) - 1.
                let positive = 1u32 << (exponent + mantissa);
                let target = x.abs();
                // Binary search for the first code whose value reaches `target`.
                let (mut lo, mut hi) = (0u32, positive - 1);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if self.decode(mid) < target {
                        lo = mid + 1
                    } else {
                        hi = mid
                    }
                }
                let mut code = lo;
                if code > 0 {
                    let (below, above) = (self.decode(code - 1), self.decode(code));
                    let (d_below, d_above) = (target - below, above - target);
                    if d_below < d_above || (d_below == d_above && (code - 1) % 2 == 0) {
                        code -= 1;
                    }
                }
                if x.is_sign_negative() && code != 0 {
                    code | positive
                } else {
                    code
                }
            }
            WeightFormat::F16 => f16::from_f32(x).to_bits() as u32,
        }
    }

    /// The largest magnitude a code can hold.
    pub fn max_value(&self) -> f32 {
        match *self {
            WeightFormat::Unsigned(b) => ((1u32 << b) - 1) as f32,
            WeightFormat::Signed(b) => ((1u32 << (b - 1)) - 1) as f32,
            WeightFormat::Float { exponent, mantissa } => {
                self.decode((1u32 << (exponent + mantissa)) - 1)
            }
            WeightFormat::F16 => f16::MAX.to_f32(),
        }
    }
}

impl fmt::Display for WeightFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WeightFormat::Unsigned(b) => write!(f, "u{b}"),
            WeightFormat::Signed(b) => write!(f, "i{b}"),
            WeightFormat::Float { exponent, mantissa } => write!(f, "e{exponent}m{mantissa}"),
            WeightFormat::F16 => write!(f, "f16"),
        }
    }
}

/// Parses `u4`, `i3`, `e2m1` (also `f4e2m1`), `f16`.
impl FromStr for WeightFormat {
    type Err = GemmError;

    fn from_str(text: &str) -> Result<Self, GemmError> {
        let bad = || GemmError::UnsupportedFormat(text.to_string());
        let t = text.trim().to_ascii_lowercase();
        if t == "f16" || t == "fp16" {
            return Ok(WeightFormat::F16);
        }
        let number = |s: &str| s.parse::<u32>().map_err(|_| bad());
        let format = if let Some(rest) = t.strip_prefix('u') {
            WeightFormat::Unsigned(number(rest)?)
        } else if let Some(rest) = t.strip_prefix('i') {
            WeightFormat::Signed(number(rest)?)
        } else {
            // eXmY, optionally after a total width: f4e2m1.
            let body = match t.strip_prefix('f') {
                Some(rest) => rest.trim_start_matches(|c: char| c.is_ascii_digit()),
                None => t.as_str(),
            };
            let (e, m) = body
                .strip_prefix('e')
                .and_then(|r| r.split_once('m'))
                .ok_or_else(bad)?;
            let format = WeightFormat::Float {
                exponent: number(e)?,
                mantissa: number(m)?,
            };
            if let Some(rest) = t.strip_prefix('f') {
                let width: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if !width.is_empty() && number(&width)? != format.bits() {
                    return Err(bad());
                }
            }
            format
        };
        WeightFormat::new(format).map_err(|_| bad())
    }
}

/// Packs `bits`-wide codes densely, least-significant bit first (see the module docs).
/// Panics if a code does not fit in `bits` or `bits` is not 1..=16.
pub fn pack(codes: &[u32], bits: u32) -> Vec<u8> {
    assert!((1..=16).contains(&bits), "pack: {bits} bits per code");
    let mut bytes = vec![0u8; (codes.len() * bits as usize).div_ceil(8)];
    for (i, &code) in codes.iter().enumerate() {
        assert!(
            code < (1 << bits),
            "pack: code {code} does not fit in {bits} bits"
        );
        for bit in 0..bits as usize {
            if code >> bit & 1 == 1 {
                let position = i * bits as usize + bit;
                bytes[position / 8] |= 1 << (position % 8);
            }
        }
    }
    bytes
}

/// The `count` codes of `bits` bits each that [`pack`] wrote into `bytes`.
/// Panics if `bytes` is too short.
pub fn unpack(bytes: &[u8], bits: u32, count: usize) -> Vec<u32> {
    assert!((1..=16).contains(&bits), "unpack: {bits} bits per code");
    assert!(
        bytes.len() * 8 >= count * bits as usize,
        "unpack: {} bytes hold fewer than {count} codes",
        bytes.len()
    );
    (0..count)
        .map(|i| {
            (0..bits as usize).fold(0u32, |code, bit| {
                let position = i * bits as usize + bit;
                code | (((bytes[position / 8] >> (position % 8)) & 1) as u32) << bit
            })
        })
        .collect()
}

/// A quantized `k×n` weight matrix: codes row-major (`codes[row·n + col]`), one fp16 scale per
/// group and column (`scales[group·n + col]`), and for unsigned formats with zero points one
/// zero point per group and column.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// The format of the codes.
    pub format: WeightFormat,
    /// Rows of k per scale.
    pub group: usize,
    /// Rows.
    pub k: usize,
    /// Columns.
    pub n: usize,
    /// One code per weight, row-major.
    pub codes: Vec<u32>,
    /// `(k / group) × n` scales.
    pub scales: Vec<f16>,
    /// `(k / group) × n` zero points (unsigned formats with zero points only).
    pub zeros: Option<Vec<u32>>,
}

/// Quantizes row-major `weights` (`k×n`) to `format` with one scale per `group` rows of each
/// column, rounding to nearest. `zero_points` (unsigned formats only) maps each group's
/// `[min, max]` onto the codes; without it unsigned codes cover `[0, max]` and negative
/// weights clamp to 0. Signed and float formats scale each group's largest magnitude to the
/// format's largest value.
pub fn quantize(
    weights: &[f32],
    k: usize,
    n: usize,
    format: WeightFormat,
    group: usize,
    zero_points: bool,
) -> Result<Quantized, GemmError> {
    let format = WeightFormat::new(format)?;
    assert_eq!(weights.len(), k * n, "weights must be k×n");
    if format == WeightFormat::F16 {
        let codes = weights.iter().map(|&w| format.encode(w)).collect();
        return Ok(Quantized {
            format,
            group: k,
            k,
            n,
            codes,
            scales: Vec::new(),
            zeros: None,
        });
    }
    if group == 0 || !k.is_multiple_of(group) {
        return Err(GemmError::GroupSize { group, k });
    }
    let zero_points = zero_points && matches!(format, WeightFormat::Unsigned(_));
    let groups = k / group;
    let mut codes = vec![0u32; k * n];
    let mut scales = vec![f16::ZERO; groups * n];
    let mut zeros = zero_points.then(|| vec![0u32; groups * n]);
    let max_code = format.max_value();
    for g in 0..groups {
        for col in 0..n {
            let column = (g * group..(g + 1) * group).map(|row| weights[row * n + col]);
            let (lo, hi) = column.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), w| {
                (lo.min(w), hi.max(w))
            });
            let (scale, zero) = if zero_points {
                // The range always includes 0, so the zero point is a valid code.
                let (lo, hi) = (lo.min(0.0), hi.max(0.0));
                let scale = fp16_scale((hi - lo) / max_code);
                let s = scale.to_f32();
                let zero = if s > 0.0 { format.encode(-lo / s) } else { 0 };
                (scale, zero)
            } else {
                let magnitude = match format {
                    WeightFormat::Unsigned(_) => hi.max(0.0),
                    _ => lo.abs().max(hi.abs()),
                };
                (fp16_scale(magnitude / max_code), 0)
            };
            scales[g * n + col] = scale;
            if let Some(z) = zeros.as_mut() {
                z[g * n + col] = zero;
            }
            let s = scale.to_f32();
            for row in g * group..(g + 1) * group {
                let x = if s > 0.0 {
                    weights[row * n + col] / s + zero as f32
                } else {
                    zero as f32
                };
                codes[row * n + col] = format.encode(x);
            }
        }
    }
    Ok(Quantized {
        format,
        group,
        k,
        n,
        codes,
        scales,
        zeros,
    })
}

/// The fp16 scale for an ideal scale `s`: rounded to fp16, and at least fp16's smallest normal
/// number, 2⁻¹⁴. Below that fp16 keeps few significant bits (or none: e6m0's ideal scale for
/// weights near 1 is 2⁻³², which is 0 in fp16), so a group with a tiny ideal scale uses part
/// of the format's range instead of losing its values.
pub fn fp16_scale(s: f32) -> f16 {
    let smallest_normal = f16::MIN_POSITIVE;
    let rounded = f16::from_f32(s);
    if rounded < smallest_normal {
        smallest_normal
    } else {
        rounded
    }
}

/// How a kernel turns a code's value and its group's fp16 scale into the weight it multiplies
/// by (`crate::quant::fast::weight_rounding` says which kernel does what).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WeightRounding {
    /// The exact `value · scale` (no rounding: the product of two short significands fits in
    /// f32).
    Exact,
    /// `fp16(value · scale)`, to nearest even.
    Fp16,
    /// `bf16(value · bf16(scale))`: the scale rounded to bf16 first, then the exact product
    /// rounded to bf16, both to nearest even. With no scale (fp16 weights): `bf16(value)`.
    Bf16,
}

impl WeightRounding {
    /// The weight of `value` (the code's value, less its zero point: exact in f32) in a group
    /// scaled by `scale` (1 for fp16 weights, which have no scales).
    pub fn weight(self, value: f32, scale: f16) -> f32 {
        match self {
            WeightRounding::Exact => value * scale.to_f32(),
            WeightRounding::Fp16 => f16::from_f32(value * scale.to_f32()).to_f32(),
            WeightRounding::Bf16 => {
                let scale = bf16::from_f32(scale.to_f32()).to_f32();
                bf16::from_f32(value * scale).to_f32()
            }
        }
    }
}

impl Quantized {
    /// The dequantized weights, row-major `k×n`: `(value(code) − zero) · scale`.
    pub fn dequantize(&self) -> Vec<f32> {
        self.dequantize_as(WeightRounding::Exact)
    }

    /// The weights as a kernel that rounds them by `rounding` multiplies by, row-major `k×n`
    /// (`crate::quant::fast::weight_rounding` gives a path's rounding).
    pub fn dequantize_as(&self, rounding: WeightRounding) -> Vec<f32> {
        if self.format == WeightFormat::F16 {
            return self
                .codes
                .iter()
                .map(|&c| rounding.weight(self.format.decode(c), f16::ONE))
                .collect();
        }
        (0..self.k * self.n)
            .map(|i| {
                let (row, col) = (i / self.n, i % self.n);
                let g = (row / self.group) * self.n + col;
                let zero = self.zeros.as_ref().map_or(0.0, |z| z[g] as f32);
                rounding.weight(self.format.decode(self.codes[i]) - zero, self.scales[g])
            })
            .collect()
    }

    /// The codes packed densely (see [`pack`]).
    pub fn packed(&self) -> Vec<u8> {
        pack(&self.codes, self.format.bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_formats() -> Vec<WeightFormat> {
        let mut formats: Vec<WeightFormat> = (1..=8).map(WeightFormat::Unsigned).collect();
        formats.extend((2..=8).map(WeightFormat::Signed));
        for exponent in 1..=7 {
            for mantissa in 0..=(7 - exponent) {
                formats.push(WeightFormat::Float { exponent, mantissa });
            }
        }
        formats
    }

    #[test]
    fn parses_every_supported_format_and_refuses_the_rest() {
        assert_eq!(
            "u4".parse::<WeightFormat>().unwrap(),
            WeightFormat::Unsigned(4)
        );
        assert_eq!(
            "i3".parse::<WeightFormat>().unwrap(),
            WeightFormat::Signed(3)
        );
        assert_eq!(
            "e2m1".parse::<WeightFormat>().unwrap(),
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1
            }
        );
        assert_eq!(
            "f4e2m1".parse::<WeightFormat>().unwrap(),
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1
            }
        );
        assert_eq!(
            "E4M3".parse::<WeightFormat>().unwrap(),
            WeightFormat::Float {
                exponent: 4,
                mantissa: 3
            }
        );
        assert_eq!("f16".parse::<WeightFormat>().unwrap(), WeightFormat::F16);
        for format in all_formats() {
            assert_eq!(format.to_string().parse::<WeightFormat>().unwrap(), format);
        }
        for bad in [
            "u0", "u9", "i1", "i9", "e0m3", "e5m3", "e4m4", "f5e2m1", "x4", "", "u", "e2",
        ] {
            assert!(
                matches!(
                    bad.parse::<WeightFormat>(),
                    Err(GemmError::UnsupportedFormat(_))
                ),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn small_float_values_match_their_definition() {
        let e2m1 = WeightFormat::Float {
            exponent: 2,
            mantissa: 1,
        };
        let values: Vec<f32> = (0..16).map(|c| e2m1.decode(c)).collect();
        assert_eq!(
            values,
            [
                0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
                -6.0
            ]
        );
        assert_eq!(
            WeightFormat::Float {
                exponent: 4,
                mantissa: 3
            }
            .max_value(),
            480.0
        );
        assert_eq!(
            WeightFormat::Float {
                exponent: 5,
                mantissa: 2
            }
            .max_value(),
            114_688.0
        );
        assert_eq!(
            WeightFormat::Float {
                exponent: 3,
                mantissa: 2
            }
            .max_value(),
            28.0
        );
        assert_eq!(
            WeightFormat::Float {
                exponent: 2,
                mantissa: 3
            }
            .max_value(),
            7.5
        );
        // e4m3's smallest subnormal is 2^-9.
        assert_eq!(
            WeightFormat::Float {
                exponent: 4,
                mantissa: 3
            }
            .decode(1),
            2f32.powi(-9)
        );
    }

    #[test]
    fn signed_codes_are_twos_complement() {
        let i3 = WeightFormat::Signed(3);
        let values: Vec<f32> = (0..8).map(|c| i3.decode(c)).collect();
        assert_eq!(values, [0.0, 1.0, 2.0, 3.0, -4.0, -3.0, -2.0, -1.0]);
        assert_eq!(i3.encode(-4.0), 4);
        assert_eq!(i3.encode(-9.0), 4, "saturates");
        assert_eq!(i3.encode(9.0), 3, "saturates");
        assert_eq!(i3.encode(2.5), 2, "ties to even");
    }

    #[test]
    fn encode_picks_the_nearest_code_for_every_format() {
        for format in all_formats() {
            let codes = 1u32 << format.bits();
            let values: Vec<f32> = (0..codes).map(|c| format.decode(c)).collect();
            // Every code's value encodes back to a code of the same value.
            for &v in &values {
                assert_eq!(format.decode(format.encode(v)), v, "{format}: {v}");
            }
            // Points between and beyond the values encode to a nearest one.
            let top = format.max_value();
            for i in 0..=200 {
                let x = -1.2 * top + 2.4 * top * i as f32 / 200.0;
                let got = (format.decode(format.encode(x)) - x).abs();
                let best = values
                    .iter()
                    .map(|&v| (v - x).abs())
                    .fold(f32::INFINITY, f32::min);
                assert_eq!(got, best, "{format}: x = {x}");
            }
        }
    }

    #[test]
    fn packing_is_dense_and_least_significant_bit_first() {
        // 3-bit codes 1, 2, 7: bits 100 010 111 → 0b1101_0001, then 0b1.
        assert_eq!(pack(&[1, 2, 7], 3), [0xD1, 0x01]);
        assert_eq!(unpack(&[0xD1, 0x01], 3, 3), [1, 2, 7]);
        assert_eq!(pack(&[0xF, 0x1], 4), [0x1F]);
        assert_eq!(pack(&[1; 8], 1), [0xFF]);
        assert_eq!(pack(&[0x7F; 8], 7).len(), 7, "no padding bits");
    }

    #[test]
    fn group_size_must_divide_k() {
        let w = vec![0.5f32; 96 * 4];
        let err = quantize(&w, 96, 4, WeightFormat::Signed(4), 64, false).unwrap_err();
        assert!(
            matches!(err, GemmError::GroupSize { group: 64, k: 96 }),
            "{err}"
        );
        assert!(quantize(&w, 96, 4, WeightFormat::Signed(4), 32, false).is_ok());
        assert!(quantize(&w, 96, 4, WeightFormat::Signed(4), 0, false).is_err());
    }

    #[test]
    fn quantization_error_is_at_most_half_a_step() {
        let (k, n) = (128, 8);
        let w = crate::random::random_matrix(k * n, 3);
        for (format, zeros) in [
            (WeightFormat::Signed(4), false),
            (WeightFormat::Signed(8), false),
            (WeightFormat::Unsigned(4), true),
            (WeightFormat::Unsigned(3), true),
        ] {
            let q = quantize(&w, k, n, format, 32, zeros).unwrap();
            let d = q.dequantize();
            for (i, (&x, &y)) in w.iter().zip(&d).enumerate() {
                let scale = q.scales[(i / n / 32) * n + i % n].to_f32();
                // Half a step, plus the group extreme's fp16 scale rounding (2^-11 relative).
                assert!(
                    (x - y).abs() <= 0.5 * scale * (1.0 + 1e-3) + scale * format.max_value() * 2e-3,
                    "{format} element {i}: {x} became {y} (scale {scale})"
                );
            }
        }
    }

    #[test]
    fn weights_as_used_round_as_each_kernel_does() {
        // u4 with zero point 3, one group per column; scales chosen so that each rounding
        // differs from the exact weight.
        // Scale 1 + 3·2⁻¹⁰ (fp16-exact): bf16 keeps 7 fraction bits, so it rounds to 1
        // (3·2⁻¹⁰ < 2⁻⁸, below half a bf16 step).
        let scale = f16::from_f32(1.0 + 3.0 / 1024.0);
        assert_eq!(scale.to_f32(), 1.0 + 3.0 / 1024.0);
        let q = Quantized {
            format: WeightFormat::Unsigned(4),
            group: 2,
            k: 2,
            n: 2,
            codes: vec![15, 3, 0, 8],
            scales: vec![scale, f16::from_f32(0.375)],
            zeros: Some(vec![3, 3]),
        };
        let s = scale.to_f32();
        // Values: 12, 0, -3, 5.
        assert_eq!(
            q.dequantize_as(WeightRounding::Exact),
            [12.0 * s, 0.0, -3.0 * s, 5.0 * 0.375]
        );
        assert_eq!(q.dequantize(), q.dequantize_as(WeightRounding::Exact));
        // fp16: 12·(1 + 3·2⁻¹⁰) = 12 + 36·2⁻¹⁰ = 12.03515625; fp16 steps are 2⁻⁷ in [8, 16):
        // 4.5 steps, a tie, to even: 12 + 4·2⁻⁷ = 12.03125. -3·s = -3.0087890625; steps of
        // 2⁻⁹ in [2, 4): 4.5 steps, to even: -(3 + 4·2⁻⁹) = -3.0078125.
        assert_eq!(
            q.dequantize_as(WeightRounding::Fp16),
            [12.03125, 0.0, -3.0078125, 1.875]
        );
        // bf16: bf16(s) = 1, so 12 and -3 exactly; 5 · 0.375 = 1.875 fits in bf16's 8 bits.
        assert_eq!(
            q.dequantize_as(WeightRounding::Bf16),
            [12.0, 0.0, -3.0, 1.875]
        );
        // The scale is rounded to bf16 before the product: 307 · 2⁻¹⁰ = 0.2998046875 (exact in
        // fp16) is 153.5 bf16 steps of 2⁻⁹, a tie, to even: 154 · 2⁻⁹ = 0.30078125. Times 7:
        // 2.10546875 = 134.75 steps of 2⁻⁶, so 2.109375; rounding only the exact product
        // (2.0986328125, 134.31 steps) would give 2.09375.
        let point_three = f16::from_f32(307.0 / 1024.0);
        assert_eq!(point_three.to_f32(), 307.0 / 1024.0);
        assert_eq!(bf16::from_f32(point_three.to_f32()).to_f32(), 0.30078125);
        assert_eq!(WeightRounding::Bf16.weight(7.0, point_three), 2.109375);
        assert_eq!(
            bf16::from_f32(7.0 * point_three.to_f32()).to_f32(),
            2.09375,
            "the scale's own rounding matters"
        );
        assert_eq!(
            WeightRounding::Exact.weight(7.0, point_three),
            7.0 * 307.0 / 1024.0
        );
    }

    #[test]
    fn fp16_weights_round_to_bf16_only_for_bf16() {
        // 1 + 2⁻¹⁰ (fp16-exact) is below half a bf16 step above 1: bf16 gives 1. 1 + 3·2⁻⁸
        // is a bf16 tie between 1 + 2⁻⁷ and 1 + 2·2⁻⁷: to even, 1 + 2·2⁻⁷.
        let values = [1.0 + 1.0 / 1024.0, 1.0 + 3.0 / 256.0, -0.5];
        let q = quantize(&values, 1, 3, WeightFormat::F16, 1, false).unwrap();
        assert_eq!(q.dequantize_as(WeightRounding::Exact), values);
        assert_eq!(q.dequantize_as(WeightRounding::Fp16), values);
        assert_eq!(
            q.dequantize_as(WeightRounding::Bf16),
            [1.0, 1.0 + 2.0 / 128.0, -0.5]
        );
    }
}
