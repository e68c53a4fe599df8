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
    let mut plane_word = 0;
    let mut offset = 0;
    let mut width = 16;
    while width >= 1 {
        if BITS & width != 0 {
            let per_word = 16 / width;
            let word = words[(plane_word + pair / per_word) as usize];
            let at = width * (pair % per_word);
            // Move this plane's bits of both codes to their place in the code.
            let moved = if at >= offset {
                word >> (at - offset)
            } else {
                word << (offset - at)
            };
            let mask = ((1u32 << width) - 1) << offset;
            out = merge_masked(out, moved, mask | mask << 16);
            plane_word += pairs(BITS) * width / 16;
            offset += width;
        }
        width /= 2;
    }
    out
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
/// bit 4 of each half (the second element says which), OR-ed with `MAGIC_1024`.
#[inline(always)]
pub fn pair_in_place<const BITS: u32>(words: &[u32; 32], pair: u32) -> (u32, bool) {
    let per_word = 16 / BITS;
    let word = words[(pair / per_word) as usize];
    let at = BITS * (pair % per_word);
    let high = at % 8 >= 4;
    let place = if high { 4 } else { 0 };
    let mask = ((1u32 << BITS) - 1) << place;
    (
        merge_masked(MAGIC_1024, word >> (at - place), mask | mask << 16),
        high,
    )
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

/// Pair `pair` of a lane's chunk converted to two fp16 weights (B-fragment register).
///
/// `SCALED`: the weights times their scale, `fp16(value · scale)` (what the expansion for
/// prefill writes). Unscaled, integers and small floats through fp16 come out exact: `code −
/// zero` and `value · 2^(bias − 15)`; the decode kernel multiplies the fp32 sums of each group
/// by the scale (times `2^(15 − bias)`) instead, one `fma` per 8 accumulators rather than one
/// `mul.f16x2` per pair, and without rounding any weight.
#[inline(always)]
pub fn decode_pair<const BITS: u32, const KIND: u32, const SCALED: bool>(
    words: &[u32; 32],
    pair: u32,
    k: &PairConstants,
) -> u32 {
    match KIND {
        INTEGER if in_place(BITS) => {
            let (x, high) = pair_in_place::<BITS>(words, pair);
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
        FLOAT => {
            // Sign to bit 15, exponent and mantissa to fp16's fields (low bits of each).
            let h = pair_codes::<BITS>(words, pair, 0);
            let (e, m) = (k.exponent, k.mantissa);
            let magnitude_mask = ((1u32 << (e + m)) - 1) << (10 - m);
            let magnitude = (h << (10 - m)) & (magnitude_mask | magnitude_mask << 16);
            let placed = merge_masked(magnitude, h << (15 - e - m), 0x8000_8000);
            if SCALED {
                mul_f16x2(mul_f16x2(placed, k.rebias), k.scale)
            } else {
                placed
            }
        }
        WIDE_FLOAT => {
            let h = pair_codes::<BITS>(words, pair, 0);
            let (e, m) = (k.exponent, k.mantissa);
            let rebias = f32::from_bits(k.rebias);
            let scale = half_to_f32(k.scale & 0xFFFF);
            let value = |code: u32| {
                let magnitude = (code & ((1 << (e + m)) - 1)) << (23 - m);
                let sign = (code >> (e + m) & 1) << 31;
                f32::from_bits(magnitude | sign) * rebias * scale
            };
            f32x2_to_f16x2(value(h & 0xFFFF), value(h >> 16))
        }
        _ => pair_codes::<BITS>(words, pair, 0),
    }
}
