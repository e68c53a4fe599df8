//! The pre-packed weight layout of the fast dequant kernels, and the in-register conversion of
//! its codes to fp16. `host/src/prepack.rs` writes this layout; both sides follow the same
//! definition, stated here once.
//!
//! **Tiles.** A block owns [`BLOCK_COLUMNS`] columns: [`WARPS`] warps of [`WARP_COLUMNS`] (four
//! n8 tiles of `mma.sync.m16n8k16`). K is cut into *chunks* of `16·chunk_k_tiles(bits)` rows;
//! one chunk of one warp is what a lane decodes between two pipeline steps: `8·chunk_k_tiles`
//! *pairs*, pair `(kt·4 + nt)·2 + r` being the B-fragment register `r` of k-tile `kt` and n8
//! tile `nt` (two weights of column `8·nt + lane/4`, rows `16·kt + 2·(lane%4) + 8·r + {0, 1}`).
//!
//! **Bits.** A code of `bits` bits is split into *planes* of power-of-two widths (the binary
//! digits of `bits`, widest first: 6 = 4 + 2, 7 = 4 + 2 + 1); a plane of width `p` holds code
//! bits `o .. o + p`, `o` being the widths of the planes before it. Within a lane's chunk a
//! plane is `pairs·p/16` 32-bit words, each holding `16/p` pairs: pair `i` of a word has its
//! first weight at bit `p·i` and its second at bit `p·i + 16`. So one shift and one masked merge
//! (`lop3`) put both weights of a pair, for one plane, into the two 16-bit halves of a
//! register, where the fp16 conversion works on both at once. Every width from 1 to 8 bits (and
//! 16, for unquantized fp16 weights) uses the same code: no copy per format.
//!
//! **Bytes.** A lane's chunk is `loads(bits)` 16-byte words, read with 128-bit loads; in global
//! memory the order is `[column block][chunk][warp][load][lane]`, so every warp-wide load reads
//! 512 contiguous bytes and no lane ever rearranges what it loaded.
//!
//! **Values.** Integer codes are stored in offset binary (signed codes with their sign bit
//! flipped, so `code + 2^(bits-1)`); the kernel builds `1024 + code` as fp16 by OR-ing the
//! exponent of 1024 (`0x6400`), then `x − offset` is one exact subtraction (`offset` = 1024 +
//! zero point): `code − zero`, an exact fp16 integer. Small floats with at most 4 exponent bits
//! are moved into fp16's exponent and mantissa fields: their values times `2^(bias−15)`,
//! exactly, subnormals landing on fp16 subnormals. Wider exponents do not fit fp16, so those go
//! through f32 and are rounded to fp16 once, `fp16(value · scale)`. The scale is applied either
//! to the fp32 sums of each group (decode, [`decode_pair`] unscaled: the weights are never
//! rounded), or to each weight with one rounding, `fp16(value · scale)` (the expansion for
//! prefill, whose GEMM needs fp16 weights).

use core::arch::asm;

pub use gemm_geometry::dequant::{
    BLOCK_COLUMNS, WARP_COLUMNS, WARPS, chunk_k, chunk_k_tiles, loads,
};

/// n8 tiles per warp.
pub const N_TILES: usize = 4;
/// Bytes of one weight's fp16 exponent pattern for 1024: `fp16(1024 + code)` is `0x6400 | code`.
pub const MAGIC_1024: u32 = 0x6400_6400;

/// Decoder kinds: integer codes in offset binary.
pub const INTEGER: u32 = 0;
/// Small floats with at most 4 exponent bits (through fp16).
pub const FLOAT: u32 = 1;
/// Small floats with 5 to 7 exponent bits (through f32).
pub const WIDE_FLOAT: u32 = 2;
/// fp16 weights, no scale.
pub const HALF: u32 = 3;
/// Flag of the decoder kinds [`fixed_float`] makes: one small-float format, its widths
/// written into the kind.
pub const FIXED_FLOAT: u32 = 0x100;

/// The decoder kind of the small float with `exponent` and `mantissa` bits, for entries
/// compiled for that one format (e2m1, e3m2, e2m3, e5m2: the decode kernel's). Knowing the
/// widths, the compiler moves each plane of codes straight to its place in the 16-bit float
/// ([`placed_fields`]) instead of gathering the code and then placing it, as [`FLOAT`] and
/// [`WIDE_FLOAT`] do with widths that arrive at run time. The weights are the same: an
/// exponent of at most 4 bits goes through fp16 like [`FLOAT`], a wider one like
/// [`WIDE_FLOAT`].
pub const fn fixed_float(exponent: u32, mantissa: u32) -> u32 {
    FIXED_FLOAT | exponent << 4 | mantissa
}

/// Whether `kind` decodes small floats through fp16 ([`FLOAT`], or [`fixed_float`] with at
/// most 4 exponent bits): unscaled weights exact, so the decode kernel scales each group's sums.
pub const fn through_half(kind: u32) -> bool {
    kind == FLOAT || (kind & FIXED_FLOAT != 0 && (kind >> 4 & 15) <= 4)
}

/// Whether `kind` decodes small floats through f32 ([`WIDE_FLOAT`], or [`fixed_float`] with 5
/// or more exponent bits): every weight scaled, `fp16(value · scale)`.
pub const fn through_f32(kind: u32) -> bool {
    kind == WIDE_FLOAT || (kind & FIXED_FLOAT != 0 && (kind >> 4 & 15) > 4)
}

/// Pairs (B-fragment registers) per lane per chunk.
pub const fn pairs(bits: u32) -> u32 {
    8 * chunk_k_tiles(bits)
}

/// `lop3.b32` with the lookup table `(value & mask) | acc`: the masked merge of one plane.
#[inline(always)]
pub fn merge_masked(acc: u32, value: u32, mask: u32) -> u32 {
    let out: u32;
    unsafe {
        asm!(
            "lop3.b32 {out}, {value}, {mask}, {acc}, 0xEA;",
            out = out(reg32) out,
            value = in(reg32) value,
            mask = in(reg32) mask,
            acc = in(reg32) acc,
            options(pure, nomem, nostack),
        )
    };
    out
}

/// The two codes of pair `pair` of a lane's chunk (`words`, its `4·loads(BITS)` 32-bit words),
/// in the low bits of the two 16-bit halves, OR-ed with `base` (`MAGIC_1024` for integers).
/// `pair` is a constant after unrolling, so every shift, mask and word index is one too.
#[inline(always)]
pub fn pair_codes<const BITS: u32>(words: &[u32; 32], pair: u32, base: u32) -> u32 {
    let mut out = base;
    for_each_plane::<BITS>(words, pair, |word, at, width, offset| {
        // Move this plane's bits of both codes to their place in the code.
        let mask = ((1u32 << width) - 1) << offset;
        out = merge_masked(out, moved(word, at, offset), mask | mask << 16);
    });
    out
}

/// Calls `plane(word, at, width, offset)` for each plane of a `BITS`-wide code, widest first:
/// `word` holds pair `pair`'s bits of that plane at bit `at` of each half, and they are code
/// bits `offset .. offset + width`. Every argument is a constant after unrolling.
#[inline(always)]
fn for_each_plane<const BITS: u32>(
    words: &[u32; 32],
    pair: u32,
    mut plane: impl FnMut(u32, u32, u32, u32),
) {
    let mut plane_word = 0;
    let mut offset = 0;
    let mut width = 16;
    while width >= 1 {
        if BITS & width != 0 {
            let per_word = 16 / width;
            let word = words[(plane_word + pair / per_word) as usize];
            plane(word, width * (pair % per_word), width, offset);
            plane_word += pairs(BITS) * width / 16;
            offset += width;
        }
        width /= 2;
    }
}

/// Integer codes of 1, 2 or 4 bits are a single plane whose pairs sit 1, 2 or 4 bits apart.
/// Instead of shifting each pair down to bit 0, pairs at bit 4 (mod 8) of a 16-bit half are
/// used *in place*: `0x6400 | code << 4` is the fp16 number `1024 + 16·code`, and one
/// `fma.f16x2` with `1/16` gives `64 + code − (64 + zero) = code − zero`, exactly. So a
/// word needs half as many shifts (one per 8 bits instead of one per pair).
pub const fn in_place(bits: u32) -> bool {
    bits == 1 || bits == 2 || bits == 4
}

/// Pair `pair` of a single-plane lane chunk (`in_place(BITS)`), with the codes at bit 0 or at
/// bit 4 of each half (the second element says which), OR-ed with `base` (`MAGIC_1024`, or
/// `MAGIC_128_BF16` for codes of at most 2 bits).
#[inline(always)]
pub fn pair_in_place<const BITS: u32>(words: &[u32; 32], pair: u32, base: u32) -> (u32, bool) {
    let per_word = 16 / BITS;
    let word = words[(pair / per_word) as usize];
    let at = BITS * (pair % per_word);
    let high = at % 8 >= 4;
    let place = if high { 4 } else { 0 };
    let mask = ((1u32 << BITS) - 1) << place;
    (
        merge_masked(base, word >> (at - place), mask | mask << 16),
        high,
    )
}

/// `word` shifted so that its bit `from` lands on bit `to` (both constants after unrolling).
#[inline(always)]
const fn moved(word: u32, from: u32, to: u32) -> u32 {
    if to >= from {
        word << (to - from)
    } else {
        word >> (from - to)
    }
}

/// Pair `pair` of a lane's chunk of small floats (`BITS` = 1 + `exponent` + `mantissa`) placed
/// in the fields of a 16-bit float with `field` mantissa bits (10: fp16, 7: bf16), in both
/// halves: the sign at bit 15, exponent and mantissa at the low end of the float's exponent
/// and mantissa fields. That is the value times `2^(bias − 15)` as fp16, or `2^(bias − 127)`
/// as bf16 (and as the top half of an f32), what [`decode_pair`]'s `FLOAT` arm places after
/// gathering the code.
///
/// With the widths known to the compiler ([`fixed_float`]) each plane's bits move straight to
/// their place: one shift and one masked merge per plane, and one more of each for the sign,
/// the code's top bit. For a 4-bit float that is 4 operations a pair where gathering the code
/// first takes 6.
#[inline(always)]
pub fn placed_fields<const BITS: u32>(
    words: &[u32; 32],
    pair: u32,
    mantissa: u32,
    field: u32,
) -> u32 {
    let magnitude_bits = BITS - 1;
    // Where code bit 0 (the mantissa's lowest) goes.
    let first = field - mantissa;
    let mut out = 0;
    // The walk of `for_each_plane`, written out: through the closure, ptxas got the same
    // instructions in another order, and this is the code that was measured.
    let mut plane_word = 0;
    let mut offset = 0;
    let mut width = 16;
    while width >= 1 {
        if BITS & width != 0 {
            let per_word = 16 / width;
            let word = words[(plane_word + pair / per_word) as usize];
            let at = width * (pair % per_word);
            // This plane's exponent and mantissa bits: code bits `offset ..` below the sign.
            let magnitude_width = if magnitude_bits - offset < width {
                magnitude_bits - offset
            } else {
                width
            };
            if magnitude_width > 0 {
                let mask = ((1u32 << magnitude_width) - 1) << (first + offset);
                out |= moved(word, at, first + offset) & (mask | mask << 16);
            }
            if offset + width == BITS {
                out |= moved(word, at + width - 1, 15) & 0x8000_8000;
            }
            plane_word += pairs(BITS) * width / 16;
            offset += width;
        }
        width /= 2;
    }
    out
}

/// `a · b + c` on two fp16 values per register, rounded once.
#[inline(always)]
pub fn fma_f16x2(a: u32, b: u32, c: u32) -> u32 {
    let out: u32;
    unsafe {
        asm!("fma.rn.f16x2 {o}, {a}, {b}, {c};", o = out(reg32) out, a = in(reg32) a,
            b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    out
}

/// `1/16` as fp16, twice.
const SIXTEENTH: u32 = 0x2C00_2C00;
/// `960` as fp16, twice: `960 − (1024 + zero) = −(64 + zero)`.
pub const NINE_SIXTY: u32 = 0x6380_6380;

/// `a − b` on two fp16 values per register.
#[inline(always)]
pub fn sub_f16x2(a: u32, b: u32) -> u32 {
    let out: u32;
    unsafe {
        asm!("sub.rn.f16x2 {o}, {a}, {b};", o = out(reg32) out, a = in(reg32) a, b = in(reg32) b,
            options(pure, nomem, nostack))
    };
    out
}

/// `a · b` on two fp16 values per register, rounded once (no contraction, no flush to zero).
#[inline(always)]
pub fn mul_f16x2(a: u32, b: u32) -> u32 {
    let out: u32;
    unsafe {
        asm!("mul.rn.f16x2 {o}, {a}, {b};", o = out(reg32) out, a = in(reg32) a, b = in(reg32) b,
            options(pure, nomem, nostack))
    };
    out
}

/// Two f32 values rounded to fp16 and packed, `low` in bits 0–15.
#[inline(always)]
pub fn f32x2_to_f16x2(low: f32, high: f32) -> u32 {
    let out: u32;
    unsafe {
        asm!("cvt.rn.f16x2.f32 {o}, {hi}, {lo};", o = out(reg32) out, hi = in(reg32) high,
            lo = in(reg32) low, options(pure, nomem, nostack))
    };
    out
}

/// fp16 bits to f32.
#[inline(always)]
pub fn half_to_f32(bits: u32) -> f32 {
    super::format::f16_to_f32(bits as u16)
}

/// What the conversion of a pair needs besides its codes: per-column scale and offset (each
/// duplicated into both halves) and the format's constants.
#[derive(Clone, Copy)]
pub struct PairConstants {
    /// The group's scale, twice.
    pub scale: u32,
    /// Integers: `1024 + zero point`, twice.
    pub offset: u32,
    /// Integers of 1, 2 or 4 bits: `−(64 + zero point)`, twice (see [`in_place`]).
    pub offset_high: u32,
    /// Small floats: exponent bits.
    pub exponent: u32,
    /// Small floats: mantissa bits.
    pub mantissa: u32,
    /// Small floats through fp16: `2^(15 − bias)` as fp16, twice. Through f32: `2^(127 − bias)`
    /// as f32 bits.
    pub rebias: u32,
}

impl PairConstants {
    /// The format's constants as every dequant entry receives them from the host (`offset`,
    /// `exponent`, `mantissa`, `rebias`), with no group's scale yet: [`column_constants`] fills
    /// `scale` and `offset_high` per group and column.
    #[inline(always)]
    pub const fn of_format(offset: u32, exponent: u32, mantissa: u32, rebias: u32) -> Self {
        Self {
            scale: 0,
            offset,
            offset_high: 0,
            exponent,
            mantissa,
            rebias,
        }
    }
}

/// [`placed_fields`] for widths that arrive at run time (`k.exponent`, `k.mantissa`): the
/// pair's codes gathered to the low bits of each half first ([`pair_codes`]), then exponent
/// and mantissa shifted to the fields (`field` mantissa bits) and the sign to bit 15.
#[inline(always)]
fn gathered_fields<const BITS: u32>(
    words: &[u32; 32],
    pair: u32,
    k: &PairConstants,
    field: u32,
) -> u32 {
    let h = pair_codes::<BITS>(words, pair, 0);
    let (e, m) = (k.exponent, k.mantissa);
    let magnitude_mask = ((1u32 << (e + m)) - 1) << (field - m);
    let magnitude = (h << (field - m)) & (magnitude_mask | magnitude_mask << 16);
    merge_masked(magnitude, h << (15 - e - m), 0x8000_8000)
}

/// Pair `pair` of a lane's chunk converted to two fp16 weights (B-fragment register), or two
/// bf16 weights with `BF16` (for bf16 activations, [`decode_pair_bf16`]; `k` then comes from
/// [`column_constants`] with `BF16`).
///
/// `SCALED`: the weights times their scale, `fp16(value · scale)` (what the expansion for
/// prefill writes). Unscaled, integers and small floats through fp16 come out exact: `code −
/// zero` and `value · 2^(bias − 15)`; the decode kernel multiplies the fp32 sums of each group
/// by the scale (times `2^(15 − bias)`) instead, one `fma` per 8 accumulators rather than one
/// `mul.f16x2` per pair, and without rounding any weight.
#[inline(always)]
pub fn decode_pair<const BITS: u32, const KIND: u32, const SCALED: bool, const BF16: bool>(
    words: &[u32; 32],
    pair: u32,
    k: &PairConstants,
) -> u32 {
    if BF16 {
        return decode_pair_bf16::<BITS, KIND, SCALED>(words, pair, k);
    }
    match KIND {
        INTEGER if in_place(BITS) => {
            let (x, high) = pair_in_place::<BITS>(words, pair, MAGIC_1024);
            let value = if high {
                fma_f16x2(x, SIXTEENTH, k.offset_high)
            } else {
                sub_f16x2(x, k.offset)
            };
            if SCALED {
                mul_f16x2(value, k.scale)
            } else {
                value
            }
        }
        INTEGER => {
            let x = pair_codes::<BITS>(words, pair, MAGIC_1024);
            let value = sub_f16x2(x, k.offset);
            if SCALED {
                mul_f16x2(value, k.scale)
            } else {
                value
            }
        }
        _ if through_half(KIND) => {
            let placed = if KIND == FLOAT {
                gathered_fields::<BITS>(words, pair, k, 10)
            } else {
                placed_fields::<BITS>(words, pair, KIND & 15, 10)
            };
            if SCALED {
                mul_f16x2(mul_f16x2(placed, k.rebias), k.scale)
            } else {
                placed
            }
        }
        _ if through_f32(KIND) => {
            // Placed in bf16's fields (8 exponent bits: room for 7), which are the top half of
            // an f32's: `value · 2^(bias − 127)`, times `2^(127 − bias) · scale` (`k.offset`,
            // exact in f32) rounds once, to `f32(value · scale)`, then once more to fp16.
            let placed = if KIND == WIDE_FLOAT {
                gathered_fields::<BITS>(words, pair, k, 7)
            } else {
                placed_fields::<BITS>(words, pair, KIND & 15, 7)
            };
            let rebiased_scale = f32::from_bits(k.offset);
            f32x2_to_f16x2(
                f32::from_bits(placed << 16) * rebiased_scale,
                f32::from_bits(placed & 0xFFFF_0000) * rebiased_scale,
            )
        }
        _ => pair_codes::<BITS>(words, pair, 0),
    }
}

// ---------------------------------------------------------------------------------------------
// bf16: the same weights for bf16 activations.

/// `bf16(128 + code)` is `0x4300 | code` for codes of up to 7 bits (bf16 has 7 mantissa bits:
/// the integers 128 … 255 are one binade with a step of 1), twice.
pub const MAGIC_128_BF16: u32 = 0x4300_4300;
/// `f32(2^23 + code)` is `0x4B00_0000 | code`: the 8-bit codes, which do not fit bf16's binade.
const MAGIC_2_23: u32 = 0x4B00_0000;
/// `1.0` as bf16, twice.
const ONE_BF16: u32 = 0x3F80_3F80;
/// `−0.0` as bf16, twice: the addend of a multiplication done as `fma` (`x · s + (−0) = x · s`
/// for every x, signed zeros included).
const NEGATIVE_ZERO_BF16: u32 = 0x8000_8000;
/// `1/16` as bf16, twice.
const SIXTEENTH_BF16: u32 = 0x3D80_3D80;
/// `120` as bf16, twice: `120 − (128 + zero) = −(8 + zero)`.
const ONE_TWENTY_BF16: u32 = 0x42F0_42F0;
/// `2^112` as bf16, twice: a small float placed in bf16's fields is `value · 2^(bias − 127)`;
/// times this it is `value · 2^(bias − 15)`, what fp16's placement gives.
const TWO_112_BF16: u32 = 0x7780_7780;

/// `a · b + c` on two bf16 values per register, rounded once (`fma.rn.bf16x2`: sm_80 and newer,
/// which have no bf16 `add`, `sub` or `mul`).
#[inline(always)]
pub fn fma_bf16x2(a: u32, b: u32, c: u32) -> u32 {
    let out: u32;
    unsafe {
        asm!("fma.rn.bf16x2 {o}, {a}, {b}, {c};", o = out(reg32) out, a = in(reg32) a,
            b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    out
}

/// Two f32 values rounded to bf16 and packed, `low` in bits 0–15.
#[inline(always)]
fn f32x2_to_bf16x2(low: f32, high: f32) -> u32 {
    crate::tensor_core::pack_bf16x2(low, high)
}

/// The pair constants of one column of one group: `s`, the group's fp16 scale, and `o`, its
/// fp16 offset `1024 + zero point` (used when `has_offsets`; else the format's `base.offset`),
/// both as raw bits, in the form [`decode_pair`] takes for fp16 or (`BF16`) bf16 weights.
///
/// For bf16, which [`decode_pair_bf16`] documents: `scale` is `bf16(s)` twice; integers of up to
/// 7 bits take `offset = −(128 + zero)` and (in place) `offset_high = −(8 + zero)` as bf16,
/// 8-bit integers `offset` = the f32 bits of `2^23 + zero`; small floats through bf16 take
/// `rebias = 2^(127 − bias)` as bf16, twice (from `base.rebias`, fp16's `2^(15 − bias)`).
#[inline(always)]
pub fn column_constants<const BITS: u32, const KIND: u32, const BF16: bool>(
    base: &PairConstants,
    s: u32,
    o: u32,
    has_offsets: bool,
) -> PairConstants {
    let offset = if has_offsets {
        o | o << 16
    } else {
        base.offset
    };
    let mut k = *base;
    if !BF16 {
        k.scale = s | s << 16;
        k.offset = if through_f32(KIND) {
            // `2^(127 − bias) · scale`: exact in f32 (at most 2^112 · 65504 < 2^128).
            (f32::from_bits(base.rebias) * half_to_f32(s)).to_bits()
        } else {
            offset
        };
        k.offset_high = sub_f16x2(NINE_SIXTY, offset);
        return k;
    }
    let scale = half_to_f32(s);
    k.scale = f32x2_to_bf16x2(scale, scale);
    match KIND {
        INTEGER if BITS == 8 => {
            // fp16 `1024 + zero` is 0x6400 + zero (a step of 1 from 1024 to 2048).
            k.offset = MAGIC_2_23 + ((offset & 0xFFFF) - 0x6400);
        }
        INTEGER => {
            // bf16 `128 + zero` is 0x4300 + zero: 0x2100 below fp16's `1024 + zero` (zero <
            // 128), in both halves; then negated.
            k.offset = (offset - 0x2100_2100) | NEGATIVE_ZERO_BF16;
            k.offset_high = fma_bf16x2(k.offset, ONE_BF16, ONE_TWENTY_BF16);
        }
        _ if through_half(KIND) => {
            let rebias = half_to_f32(base.rebias & 0xFFFF) * f32::from_bits(0x7780_0000);
            k.rebias = f32x2_to_bf16x2(rebias, rebias);
        }
        _ if through_f32(KIND) => {
            // `2^(127 − bias)` as f32 bits: a power of two, exactly its top half in bf16.
            k.rebias = base.rebias >> 16 | (base.rebias & 0xFFFF_0000);
        }
        _ => {}
    }
    k
}

/// [`decode_pair`] for bf16 activations: pair `pair` of a lane's chunk as two bf16 weights.
/// Unscaled, the values are exactly fp16's (`code − zero`, `value · 2^(bias − 15)`: both fit
/// bf16's 8 significant bits), so the decode kernel's per-group scaling is the same. Scaled,
/// the weights are `bf16(value · bf16(scale))`: the group's scale rounded to bf16 once per
/// column, then one rounding per weight. fp16 weights (`HALF`) are rounded to bf16.
///
/// What each decoder costs beyond fp16's:
/// * integers of up to 7 bits: nothing. `0x4300 | code` is `128 + code`, and one `fma` with
///   `−(128 + zero)` gives `code − zero` (of 1 and 2 bits in place: `0x4300 | code << 4` is
///   `128 + 16·code`, times `1/16` plus `−(8 + zero)`); 4-bit codes do not fit in place (the
///   code would reach bf16's exponent), so they are shifted down like the others;
/// * 8-bit integers: `2^23 + code` in f32, one `sub.f32` each, and the top halves of both
///   (exact: `code − zero` has at most 8 significant bits);
/// * small floats through bf16: sign, exponent and mantissa placed in bf16's fields as fp16's
///   are, then one `fma` by `2^112`;
/// * small floats with 5 to 7 exponent bits: placed in bf16's fields too (bf16 has 8 exponent
///   bits), then two `fma`s, by `2^(127 − bias)` and by the scale: no f32 as for fp16;
/// * fp16 weights: two `cvt.f32.f16` and one `cvt.rn.bf16x2.f32`.
#[inline(always)]
pub fn decode_pair_bf16<const BITS: u32, const KIND: u32, const SCALED: bool>(
    words: &[u32; 32],
    pair: u32,
    k: &PairConstants,
) -> u32 {
    let scaled = |value: u32| {
        if SCALED {
            fma_bf16x2(value, k.scale, NEGATIVE_ZERO_BF16)
        } else {
            value
        }
    };
    match KIND {
        INTEGER if BITS <= 2 => {
            let (x, high) = pair_in_place::<BITS>(words, pair, MAGIC_128_BF16);
            scaled(if high {
                fma_bf16x2(x, SIXTEENTH_BF16, k.offset_high)
            } else {
                fma_bf16x2(x, ONE_BF16, k.offset)
            })
        }
        INTEGER if BITS == 8 => {
            let h = pair_codes::<BITS>(words, pair, 0);
            let offset = f32::from_bits(k.offset);
            let low = f32::from_bits(MAGIC_2_23 | (h & 0xFF)) - offset;
            let high = f32::from_bits(MAGIC_2_23 | (h >> 16)) - offset;
            scaled((low.to_bits() >> 16) | (high.to_bits() & 0xFFFF_0000))
        }
        INTEGER => {
            let x = pair_codes::<BITS>(words, pair, MAGIC_128_BF16);
            scaled(fma_bf16x2(x, ONE_BF16, k.offset))
        }
        _ if through_half(KIND) => {
            let placed = if KIND == FLOAT {
                gathered_fields::<BITS>(words, pair, k, 7)
            } else {
                placed_fields::<BITS>(words, pair, KIND & 15, 7)
            };
            if SCALED {
                fma_bf16x2(
                    fma_bf16x2(placed, k.rebias, NEGATIVE_ZERO_BF16),
                    k.scale,
                    NEGATIVE_ZERO_BF16,
                )
            } else {
                fma_bf16x2(placed, TWO_112_BF16, NEGATIVE_ZERO_BF16)
            }
        }
        _ if through_f32(KIND) => {
            // bf16 holds every such value (exponents of up to 7 bits): placed in its fields,
            // times `2^(127 − bias)` (`k.rebias`) it is the value exactly, then times the
            // scale rounded once, as for the narrower floats.
            let placed = if KIND == WIDE_FLOAT {
                gathered_fields::<BITS>(words, pair, k, 7)
            } else {
                placed_fields::<BITS>(words, pair, KIND & 15, 7)
            };
            fma_bf16x2(
                fma_bf16x2(placed, k.rebias, NEGATIVE_ZERO_BF16),
                k.scale,
                NEGATIVE_ZERO_BF16,
            )
        }
        _ => {
            let h = pair_codes::<BITS>(words, pair, 0);
            f32x2_to_bf16x2(half_to_f32(h & 0xFFFF), half_to_f32(h >> 16))
        }
    }
}
