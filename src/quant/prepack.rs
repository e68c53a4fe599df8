//! Offline pre-packing of quantized weights into the layout the fast dequant kernels read
//! (`kernels-gpu/src/dequant/packed.rs` states the layout; this file writes it, and reads it
//! back for the tests).
//!
//! Summary: columns are padded to blocks of 256 (8 warps × 32), k to chunks of 128 rows (32 for
//! fp16 weights). For each column block, chunk, warp and lane, the lane's `bits·chunk_k/16`
//! 16-byte words hold the codes of its `mma` B fragments, split into power-of-two bit planes so
//! that one shift and one masked merge give two codes in the two halves of a register. Signed
//! integers are stored in offset binary (sign bit flipped), so every integer format decodes as
//! `(1024 + code − offset)·scale` with `offset = 1024 + 2^(bits−1)` (or `1024 + zero point`).
//! Padding codes are 0 and padding scales are 0; A is zero past k, so padding adds nothing.

use crate::GemmError;
use crate::quant::format::{Quantized, WeightFormat};
use half::f16;

use gemm_geometry::dequant;

/// Warps per block of the fast kernels (`gemm_geometry::dequant::WARPS`, as a host index).
pub const WARPS: usize = dequant::WARPS as usize;
/// Columns per warp (`gemm_geometry::dequant::WARP_COLUMNS`).
pub const WARP_COLUMNS: usize = dequant::WARP_COLUMNS as usize;
/// Columns per block: n is padded to a multiple of this (`gemm_geometry::dequant::BLOCK_COLUMNS`).
pub const BLOCK_COLUMNS: usize = dequant::BLOCK_COLUMNS as usize;

/// k16 tiles per chunk (`gemm_geometry::dequant::chunk_k_tiles`).
pub fn chunk_k_tiles(bits: u32) -> usize {
    dequant::chunk_k_tiles(bits) as usize
}

/// Rows of k per chunk: k is padded to a multiple of this (`gemm_geometry::dequant::chunk_k`).
pub fn chunk_k(bits: u32) -> usize {
    dequant::chunk_k(bits) as usize
}

/// 16-byte words per lane per chunk (`gemm_geometry::dequant::loads`).
pub fn loads(bits: u32) -> usize {
    dequant::loads(bits) as usize
}

/// How the kernel turns codes into fp16 weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoder {
    /// Integers in offset binary: `(1024 + code − offset)·scale` in fp16.
    Integer,
    /// Small floats with at most 4 exponent bits, through fp16.
    Float,
    /// Small floats with 5 to 7 exponent bits, through f32.
    WideFloat,
    /// fp16 weights as they are.
    Half,
}

impl Decoder {
    /// The decoder for `format`.
    pub fn of(format: WeightFormat) -> Decoder {
        match format {
            WeightFormat::Unsigned(_) | WeightFormat::Signed(_) => Decoder::Integer,
            WeightFormat::Float { exponent, .. } if exponent <= 4 => Decoder::Float,
            WeightFormat::Float { .. } => Decoder::WideFloat,
            WeightFormat::F16 => Decoder::Half,
        }
    }
}

/// The plane widths of a `bits`-wide code, widest first, with the code bit each starts at.
pub fn planes(bits: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for width in [16, 8, 4, 2, 1] {
        if bits & width != 0 {
            out.push((width, offset));
            offset += width;
        }
    }
    out
}

/// Quantized weights in the fast kernels' layout.
#[derive(Clone, Debug)]
pub struct Prepacked {
    /// The format of the codes.
    pub format: WeightFormat,
    /// Rows of k per scale, as quantized.
    pub group: usize,
    /// Rows.
    pub k: usize,
    /// Columns.
    pub n: usize,
    /// k padded to whole chunks.
    pub k_pad: usize,
    /// n padded to whole column blocks.
    pub n_pad: usize,
    /// The packed codes.
    pub weights: Vec<u8>,
    /// `groups × n_pad` fp16 scales (bits); one 0 for fp16 weights.
    pub scales: Vec<u16>,
    /// `groups × n_pad` fp16 offsets `1024 + zero point` (bits), with zero points only.
    pub offsets: Option<Vec<u16>>,
}

/// The value stored for `code`: integers in offset binary, everything else unchanged.
fn stored(format: WeightFormat, code: u32) -> u32 {
    match format {
        WeightFormat::Signed(b) => code ^ (1 << (b - 1)),
        _ => code,
    }
}

/// Checks that the fast kernels support `group` rows per scale for `format` at `k`: one group
/// (per-channel), or a multiple of 16 of at least 32 that divides the chunk or that the chunk
/// divides, so that a chunk's k-tiles never straddle a group boundary.
pub fn check_group(format: WeightFormat, group: usize, k: usize) -> Result<(), GemmError> {
    if format == WeightFormat::F16 || group == k {
        return Ok(());
    }
    let chunk = chunk_k(format.bits());
    let fits = group >= 32
        && group.is_multiple_of(16)
        && (chunk.is_multiple_of(group) || group.is_multiple_of(chunk));
    if fits {
        Ok(())
    } else {
        Err(GemmError::UnsupportedGroup { group, k, chunk })
    }
}

/// Rows of scales (and zero points) stored: one per group of `k_pad` rows (none for fp16
/// weights, one for a single group: the kernels are then given `k_pad` as the group).
fn stored_groups(format: WeightFormat, group: usize, k: usize, k_pad: usize) -> usize {
    if format == WeightFormat::F16 {
        0
    } else if group >= k {
        1
    } else {
        k_pad.div_ceil(group)
    }
}

impl Prepacked {
    /// Pre-packs `q`.
    pub fn new(q: &Quantized) -> Result<Self, GemmError> {
        let zeros = q.zeros.as_deref();
        Self::from_codes(q.format, q.group, q.k, q.n, &q.scales, zeros, |row, col| {
            q.codes[row * q.n + col]
        })
    }

    /// Pre-packs the `k × n` codes `code(row, col)` with `(k/group) × n` scales (none for fp16)
    /// and optional zero points, without a row-major copy of the codes (for the benchmark's
    /// large matrices).
    pub fn from_codes(
        format: WeightFormat,
        group: usize,
        k: usize,
        n: usize,
        scales: &[f16],
        zeros: Option<&[u32]>,
        code: impl Fn(usize, usize) -> u32 + Sync,
    ) -> Result<Self, GemmError> {
        let format = WeightFormat::new(format)?;
        check_group(format, group, k)?;
        let bits = format.bits();
        let (ck, loads) = (chunk_k(bits), loads(bits));
        let k_pad = k.div_ceil(ck) * ck;
        let n_pad = n.div_ceil(BLOCK_COLUMNS) * BLOCK_COLUMNS;
        let k_chunks = k_pad / ck;
        let block_bytes = k_chunks * WARPS * loads * 512;
        let plane_list = planes(bits);
        let pairs = 8 * chunk_k_tiles(bits);
        let mut weights = vec![0u8; n_pad / BLOCK_COLUMNS * block_bytes];
        for_each_chunk_in_parallel(&mut weights, block_bytes, |col_block, out| {
            for chunk in 0..k_chunks {
                for warp in 0..WARPS {
                    for lane in 0..32 {
                        let mut words = [0u32; 32];
                        for pair in 0..pairs {
                            let (kt, nt, r) = (pair / 8, pair / 2 % 4, pair % 2);
                            let col =
                                col_block * BLOCK_COLUMNS + warp * WARP_COLUMNS + nt * 8 + lane / 4;
                            for half in 0..2 {
                                let row = chunk * ck + 16 * kt + 2 * (lane % 4) + 8 * r + half;
                                if row >= k || col >= n {
                                    continue;
                                }
                                let value = stored(format, code(row, col));
                                let mut plane_word = 0;
                                for &(width, offset) in &plane_list {
                                    let per_word = 16 / width as usize;
                                    let word = plane_word + pair / per_word;
                                    let bit = width as usize * (pair % per_word) + 16 * half;
                                    let piece = (value >> offset) & ((1 << width) - 1);
                                    words[word] |= piece << bit;
                                    plane_word += pairs * width as usize / 16;
                                }
                            }
                        }
                        let base = (chunk * WARPS + warp) * loads * 512 + lane * 16;
                        for (w, word) in words[..4 * loads].iter().enumerate() {
                            let at = base + (w / 4) * 512 + (w % 4) * 4;
                            out[at..at + 4].copy_from_slice(&word.to_le_bytes());
                        }
                    }
                }
            }
        });
        // The kernels read one row of scales per group of k_pad, not of k: when a group is
        // shorter than a chunk (32 or 64 rows) and k is no multiple of the chunk, the padding
        // rows past k form groups of their own. Those get scale 0 (and zero point 0), so the
        // padding adds 0 and never reads past the scales (found by the quantized API fuzz).
        let groups = stored_groups(format, group, k, k_pad);
        let real_groups = if groups == 0 { 0 } else { k.div_ceil(group) };
        let padded = |values: &dyn Fn(usize) -> u16, fill: u16| -> Vec<u16> {
            let mut out = vec![fill; groups * n_pad];
            for g in 0..real_groups {
                for col in 0..n {
                    out[g * n_pad + col] = values(g * n + col);
                }
            }
            out
        };
        let scales_out = if groups == 0 {
            vec![0]
        } else {
            padded(&|i| scales[i].to_bits(), 0)
        };
        let offsets = zeros.map(|z| {
            let bits_of = |zero: u32| f16::from_f32(1024.0 + zero as f32).to_bits();
            padded(&|i| bits_of(z[i]), bits_of(0))
        });
        Ok(Prepacked {
            format,
            group,
            k,
            n,
            k_pad,
            n_pad,
            weights,
            scales: scales_out,
            offsets,
        })
    }

    /// Chunks along k.
    pub fn k_chunks(&self) -> usize {
        self.k_pad / chunk_k(self.format.bits())
    }

    /// The group the kernels are given: `k_pad` when there is one group (per-channel scales, or
    /// fp16 weights), so that padding rows stay in it.
    pub fn kernel_group(&self) -> usize {
        if self.format == WeightFormat::F16 || self.group >= self.k {
            self.k_pad
        } else {
            self.group
        }
    }

    /// The suffix of the kernel entries for this format: `int4`, `float3`, `wide_float8`, `half`.
    pub fn entry_suffix(&self) -> String {
        let bits = self.format.bits();
        match Decoder::of(self.format) {
            Decoder::Integer => format!("int{bits}"),
            Decoder::Float => format!("float{bits}"),
            Decoder::WideFloat => format!("wide_float{bits}"),
            Decoder::Half => "half".to_string(),
        }
    }

    /// The kernels' format constants: `[offset, exponent, mantissa, rebias]` (see
    /// `PairConstants` in the device crate).
    pub fn constants(&self) -> [u32; 4] {
        let twice = |h: u16| h as u32 | (h as u32) << 16;
        match self.format {
            WeightFormat::Unsigned(_) => [twice(f16::from_f32(1024.0).to_bits()), 0, 0, 0],
            WeightFormat::Signed(b) => {
                let offset = 1024.0 + (1u32 << (b - 1)) as f32;
                [twice(f16::from_f32(offset).to_bits()), 0, 0, 0]
            }
            WeightFormat::Float { exponent, mantissa } => {
                let bias = (1i32 << (exponent - 1)) - 1;
                let rebias = if exponent <= 4 {
                    twice(f16::from_f32(2f32.powi(15 - bias)).to_bits())
                } else {
                    2f32.powi(127 - bias).to_bits()
                };
                [0, exponent, mantissa, rebias]
            }
            WeightFormat::F16 => [0, 0, 0, 0],
        }
    }

    /// Bytes the kernels read for the weights: packed codes, scales and offsets.
    pub fn bytes(&self) -> usize {
        let groups = stored_groups(self.format, self.group, self.k, self.k_pad);
        let per_group = if self.offsets.is_some() { 4 } else { 2 };
        self.weights.len() + groups * self.n_pad * per_group
    }

    /// The stored code of weight `(row, col)`, read back from the packed bytes (the inverse of
    /// packing, for the tests).
    pub fn stored_code(&self, row: usize, col: usize) -> u32 {
        let bits = self.format.bits();
        let (ck, loads) = (chunk_k(bits), loads(bits));
        let pairs = 8 * chunk_k_tiles(bits);
        let (chunk, in_chunk) = (row / ck, row % ck);
        let (kt, in_tile) = (in_chunk / 16, in_chunk % 16);
        let (r, quad_row) = (in_tile / 8, in_tile % 8);
        let (quad, half) = (quad_row / 2, quad_row % 2);
        let (col_block, in_block) = (col / BLOCK_COLUMNS, col % BLOCK_COLUMNS);
        let (warp, in_warp) = (in_block / WARP_COLUMNS, in_block % WARP_COLUMNS);
        let (nt, group_id) = (in_warp / 8, in_warp % 8);
        let lane = group_id * 4 + quad;
        let pair = (kt * 4 + nt) * 2 + r;
        let base = ((col_block * self.k_chunks() + chunk) * WARPS + warp) * loads * 512 + lane * 16;
        let word = |w: usize| {
            let at = base + (w / 4) * 512 + (w % 4) * 4;
            u32::from_le_bytes(self.weights[at..at + 4].try_into().expect("4 bytes"))
        };
        let mut value = 0;
        let mut plane_word = 0;
        for (width, offset) in planes(bits) {
            let per_word = 16 / width as usize;
            let bit = width as usize * (pair % per_word) + 16 * half;
            let piece = (word(plane_word + pair / per_word) >> bit) & ((1 << width) - 1);
            value |= piece << offset;
            plane_word += pairs * width as usize / 16;
        }
        value
    }

    /// The code of weight `(row, col)` as quantized (undoing the offset binary of signed
    /// formats).
    pub fn code(&self, row: usize, col: usize) -> u32 {
        stored(self.format, self.stored_code(row, col))
    }
}

/// Calls `f(index, chunk)` for each `chunk_len`-byte chunk of `data`, spread over the machine's
/// threads (packing 470 M weights one thread at a time takes minutes). Plain scoped threads:
/// the library's default build has no thread-pool dependency.
fn for_each_chunk_in_parallel(
    data: &mut [u8],
    chunk_len: usize,
    f: impl Fn(usize, &mut [u8]) + Sync,
) {
    let chunks = data.len().div_ceil(chunk_len.max(1));
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(chunks.max(1));
    let per_thread = chunks.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for (t, part) in data.chunks_mut(per_thread * chunk_len.max(1)).enumerate() {
            let f = &f;
            scope.spawn(move || {
                for (i, chunk) in part.chunks_mut(chunk_len.max(1)).enumerate() {
                    f(t * per_thread + i, chunk);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::format::{WeightRounding, quantize};
    use crate::random::random_matrix;

    fn all_formats() -> Vec<WeightFormat> {
        let mut all: Vec<WeightFormat> = (1..=8).map(WeightFormat::Unsigned).collect();
        all.extend((2..=8).map(WeightFormat::Signed));
        for exponent in 1..=7 {
            for mantissa in 0..=(7 - exponent) {
                all.push(WeightFormat::Float { exponent, mantissa });
            }
        }
        all.push(WeightFormat::F16);
        all
    }

    /// The device's conversion of one pair (`decode_pair` in `kernels-gpu/src/dequant/packed.rs`),
    /// step for step on the CPU: the plane merge, the fp16 magic numbers, the float placement.
    /// fp16 arithmetic is emulated exactly: sums and products of two fp16 values are exact in
    /// f32, then rounded once.
    fn emulate_pair(p: &Prepacked, codes: [u32; 2], scale: u16, offset: u16) -> [u16; 2] {
        let [off, exponent, mantissa, rebias] = p.constants();
        let offset = if p.offsets.is_some() {
            offset
        } else {
            off as u16
        };
        let h = |i: usize| f16::from_bits(i as u16).to_f32();
        let round = |x: f32| f16::from_f32(x).to_bits();
        codes.map(|code| match Decoder::of(p.format) {
            Decoder::Integer => {
                let x = h((0x6400 | code) as usize);
                let shifted = round(x - h(offset as usize));
                let low = round(h(shifted as usize) * h(scale as usize));
                if [1, 2, 4].contains(&p.format.bits()) {
                    // The in-place variant: `0x6400 | code << 4` is 1024 + 16·code; one fma
                    // with 1/16 and 960 − offset must give the same value, exactly.
                    let x = h((0x6400 | code << 4) as usize);
                    let bias = round(960.0 - h(offset as usize));
                    let value = round(x * (1.0 / 16.0) + h(bias as usize));
                    assert_eq!(value, shifted, "in-place value of code {code}");
                }
                low
            }
            Decoder::Float => {
                let (e, m) = (exponent, mantissa);
                let magnitude = (code << (10 - m)) & (((1 << (e + m)) - 1) << (10 - m));
                let placed = magnitude | ((code << (15 - e - m)) & 0x8000);
                let rebiased = round(h(placed as usize) * h((rebias & 0xFFFF) as usize));
                round(h(rebiased as usize) * h(scale as usize))
            }
            Decoder::WideFloat => {
                let (e, m) = (exponent, mantissa);
                let magnitude = (code & ((1 << (e + m)) - 1)) << (23 - m);
                let sign = (code >> (e + m) & 1) << 31;
                let value = f32::from_bits(magnitude | sign) * f32::from_bits(rebias);
                round(value * h(scale as usize))
            }
            Decoder::Half => code as u16,
        })
    }

    /// Calls `check(format, codes, scale, zero, p, offset)` for every format, every code of it
    /// (fp16 weights: every pattern but NaNs), four scales and the zero points 0, 3 and the
    /// largest code (unsigned formats; else 0): `p` is one chunk of columns pre-packed with
    /// that scale and zero point, `offset` fp16's `1024 + zero` as bits.
    fn for_every_code(mut check: impl FnMut(WeightFormat, &[u32], f16, u32, &Prepacked, u16)) {
        for &format in &all_formats() {
            let bits = format.bits().min(8);
            let codes: Vec<u32> = if format == WeightFormat::F16 {
                (0..=0xFFFFu32)
                    .filter(|&c| !f16::from_bits(c as u16).is_nan())
                    .collect()
            } else {
                (0..1u32 << bits).collect()
            };
            let zero_points = matches!(format, WeightFormat::Unsigned(_));
            let zeros = if zero_points {
                vec![0, 3, (1 << bits) - 1]
            } else {
                vec![0]
            };
            let (k, n) = (chunk_k(format.bits()), 256);
            for scale in [0.0137f32, 1.0, 3.5e-4, 117.0].map(crate::quant::format::fp16_scale) {
                for &zero in &zeros {
                    let zero_list = vec![zero; n];
                    let p = Prepacked::from_codes(
                        format,
                        k,
                        k,
                        n,
                        &vec![scale; n],
                        zero_points.then_some(&zero_list[..]),
                        |_, _| 0,
                    )
                    .unwrap();
                    let offset = f16::from_f32(1024.0 + zero as f32).to_bits();
                    check(format, &codes, scale, zero, &p, offset);
                }
            }
        }
    }

    #[test]
    fn the_device_conversion_gives_every_code_its_dequantized_value_rounded_to_fp16() {
        for_every_code(|format, codes, scale, zero, p, offset| {
            for pair in codes.chunks(2) {
                let pair_codes = [
                    stored(format, pair[0]),
                    stored(format, *pair.last().unwrap()),
                ];
                let got = emulate_pair(p, pair_codes, scale.to_bits(), offset);
                for (i, &code) in [pair[0], *pair.last().unwrap()].iter().enumerate() {
                    let value = format.decode(code);
                    let expected = f16::from_f32(if format == WeightFormat::F16 {
                        WeightRounding::Fp16.weight(value, f16::ONE)
                    } else {
                        WeightRounding::Fp16.weight(value - zero as f32, scale)
                    });
                    let got = f16::from_bits(got[i]);
                    assert!(
                        got == expected || (got.is_nan() && expected.is_nan()),
                        "{format} code {code:#x} scale {scale} zero {zero}: {got} != {expected}"
                    );
                }
            }
        });
    }

    /// The device's bf16 conversion of one code (`column_constants` and `decode_pair_bf16` in
    /// `kernels-gpu/src/dequant/packed.rs`), step for step on the CPU: the bf16 and f32 magic
    /// numbers, the placement in bf16's fields, the bf16 `fma`s (their operands' products are
    /// exact in f64, then rounded once). Returns the unscaled and the scaled weight's bits.
    fn emulate_bf16(p: &Prepacked, code: u32, scale: u16, offset: u16) -> (u32, u32) {
        use half::bf16;
        let [off, exponent, mantissa, rebias] = p.constants();
        let offset = if p.offsets.is_some() {
            offset as u32
        } else {
            off & 0xFFFF
        };
        let b = |bits: u32| bf16::from_bits(bits as u16).to_f64();
        let round = |x: f64| bf16::from_f64(x).to_bits() as u32;
        let fma = |x: u32, y: u32, z: u32| round(b(x) * b(y) + b(z));
        let (one, negative_zero) = (0x3F80, 0x8000);
        let bf16_scale = round(f16::from_bits(scale).to_f64());
        match Decoder::of(p.format) {
            Decoder::Integer => {
                let unscaled = if p.format.bits() == 8 {
                    let offset = f32::from_bits(0x4B00_0000 + (offset - 0x6400));
                    (f32::from_bits(0x4B00_0000 | code) - offset).to_bits() >> 16
                } else {
                    let negative_offset = (offset - 0x2100) | 0x8000;
                    let value = fma(0x4300 | code, one, negative_offset);
                    if p.format.bits() <= 2 {
                        // In place: 0x4300 | code << 4 is 128 + 16·code.
                        let offset_high = fma(negative_offset, one, 0x42F0);
                        let in_place = fma(0x4300 | code << 4, 0x3D80, offset_high);
                        assert_eq!(in_place, value, "in-place value of code {code}");
                    }
                    value
                };
                (unscaled, fma(unscaled, bf16_scale, negative_zero))
            }
            Decoder::Float => {
                let (e, m) = (exponent, mantissa);
                let magnitude = (code << (7 - m)) & (((1 << (e + m)) - 1) << (7 - m));
                let placed = magnitude | ((code << (15 - e - m)) & 0x8000);
                let rebias = round(f16::from_bits(rebias as u16).to_f64() * 2f64.powi(112));
                let rebiased = fma(placed, rebias, negative_zero);
                (
                    fma(placed, 0x7780, negative_zero),
                    fma(rebiased, bf16_scale, negative_zero),
                )
            }
            Decoder::WideFloat => {
                let (e, m) = (exponent, mantissa);
                let magnitude = (code & ((1 << (e + m)) - 1)) << (23 - m);
                let sign = (code >> (e + m) & 1) << 31;
                let value = f32::from_bits(magnitude | sign)
                    * f32::from_bits(rebias)
                    * f32::from_bits(bf16_scale << 16);
                let rounded = bf16::from_f32(value).to_bits() as u32;
                (rounded, rounded)
            }
            Decoder::Half => {
                let rounded = round(f16::from_bits(code as u16).to_f64());
                (rounded, rounded)
            }
        }
    }

    #[test]
    fn the_bf16_conversion_gives_fp16s_exact_weights_and_rounds_scaled_ones_once() {
        use half::bf16;
        for_every_code(|format, codes, scale, zero, p, offset| {
            for &code in codes {
                let (unscaled, scaled) =
                    emulate_bf16(p, stored(format, code), scale.to_bits(), offset);
                let value = format.decode(code) as f64 - zero as f64;
                let (unscaled, scaled) = (
                    bf16::from_bits(unscaled as u16).to_f64(),
                    bf16::from_bits(scaled as u16).to_f64(),
                );
                // What the host reference (`WeightRounding::Bf16`) says the weight is.
                let expected_scaled = match Decoder::of(format) {
                    Decoder::Half => WeightRounding::Bf16.weight(value as f32, f16::ONE),
                    _ => WeightRounding::Bf16.weight(value as f32, scale),
                } as f64;
                let context = format!("{format} code {code:#x} scale {scale} zero {zero}");
                assert_eq!(scaled, expected_scaled, "{context}: scaled");
                // Unscaled, integers and floats through bf16 equal fp16's exact weights.
                let expected_unscaled = match (Decoder::of(format), format) {
                    (Decoder::Integer, _) => value,
                    (Decoder::Float, WeightFormat::Float { exponent, .. }) => {
                        let bias = (1i32 << (exponent - 1)) - 1;
                        value * 2f64.powi(bias - 15)
                    }
                    _ => expected_scaled,
                };
                assert_eq!(unscaled, expected_unscaled, "{context}: unscaled");
            }
        });
    }

    #[test]
    fn planes_cover_every_bit_once() {
        for bits in (1..=8).chain([16]) {
            let p = planes(bits);
            assert_eq!(p.iter().map(|&(w, _)| w).sum::<u32>(), bits);
            let mut offset = 0;
            for &(width, at) in &p {
                assert_eq!(at, offset);
                assert!(width.is_power_of_two());
                offset += width;
            }
        }
    }

    #[test]
    fn packing_round_trips_every_code_of_every_format_with_ragged_padding() {
        // Ragged k and n: padding rows and columns on both sides of a block and chunk edge.
        let (k, n) = (160, 300);
        for (i, &format) in all_formats().iter().enumerate() {
            let group = if format == WeightFormat::F16 { k } else { 32 };
            let w = random_matrix(k * n, 40 + i as u64);
            let q = quantize(&w, k, n, format, group, false).unwrap();
            let p = Prepacked::new(&q).unwrap();
            assert_eq!(p.k_pad % chunk_k(format.bits()), 0);
            assert_eq!(p.n_pad % BLOCK_COLUMNS, 0);
            assert_eq!(
                p.weights.len(),
                p.k_pad * p.n_pad * format.bits() as usize / 8,
                "{format}: dense, no padding bits"
            );
            for row in 0..k {
                for col in 0..n {
                    assert_eq!(
                        p.code(row, col),
                        q.codes[row * n + col],
                        "{format} ({row},{col})"
                    );
                }
            }
            // Padding reads back as 0.
            if k < p.k_pad {
                assert_eq!(p.stored_code(k, 0), 0);
            }
            assert_eq!(p.stored_code(0, n), 0);
        }
    }

    #[test]
    fn every_bit_position_is_used_exactly_once() {
        // All-ones codes fill every byte of the packed stream: no gaps, no overlaps.
        for bits in (1..=8).chain([16]) {
            let format = if bits == 16 {
                WeightFormat::F16
            } else {
                WeightFormat::Unsigned(bits)
            };
            let (k, n) = (chunk_k(bits), BLOCK_COLUMNS);
            let scales = vec![f16::ONE; n];
            let ones = (1u32 << bits) - 1;
            let p = Prepacked::from_codes(format, k, k, n, &scales, None, |_, _| ones).unwrap();
            assert!(p.weights.iter().all(|&b| b == 0xFF), "{bits} bits");
        }
    }

    #[test]
    fn signed_codes_are_stored_in_offset_binary() {
        let format = WeightFormat::Signed(4);
        let scales = vec![f16::ONE; 256];
        // -8 (0b1000) is stored as 0, 7 (0b0111) as 15.
        let p = Prepacked::from_codes(format, 128, 128, 256, &scales, None, |row, _| {
            if row == 0 { 0b1000 } else { 0b0111 }
        })
        .unwrap();
        assert_eq!(p.stored_code(0, 0), 0);
        assert_eq!(p.stored_code(1, 0), 15);
        assert_eq!(p.constants()[0], 0x6408_6408, "offset 1032 = 1024 + 8");
    }

    #[test]
    fn scales_and_offsets_are_padded_row_major() {
        let (k, n) = (64, 3);
        let w = random_matrix(k * n, 9);
        let q = quantize(&w, k, n, WeightFormat::Unsigned(4), 32, true).unwrap();
        let p = Prepacked::new(&q).unwrap();
        // Two groups of k, and k_pad's padding rows as groups of scale 0 of their own.
        let groups = p.k_pad / 32;
        assert!(groups > 2, "k = 64 pads to a whole chunk");
        assert_eq!(p.scales.len(), groups * 256);
        assert_eq!(p.scales[256 + 2], q.scales[n + 2].to_bits());
        assert_eq!(p.scales[5], 0, "padding columns have scale 0");
        assert!(
            p.scales[2 * 256..].iter().all(|&s| s == 0),
            "padding rows have scale 0"
        );
        let offsets = p.offsets.as_ref().unwrap();
        let zero = q.zeros.as_ref().unwrap()[n + 1];
        assert_eq!(
            f16::from_bits(offsets[256 + 1]).to_f32(),
            1024.0 + zero as f32
        );
    }

    #[test]
    fn groups_that_straddle_k_tiles_are_refused() {
        let f = WeightFormat::Unsigned(4);
        assert!(check_group(f, 128, 4096).is_ok());
        assert!(check_group(f, 32, 4096).is_ok());
        assert!(check_group(f, 256, 4096).is_ok());
        assert!(check_group(f, 131, 131).is_ok(), "per-channel");
        assert!(check_group(f, 48, 4800).is_err());
        assert!(check_group(f, 16, 4096).is_err());
        assert!(check_group(f, 192, 3840).is_err());
    }

    #[test]
    fn kernel_group_is_the_padded_k_for_one_group() {
        let scales = vec![f16::ONE; 256];
        let f = WeightFormat::Unsigned(3);
        let p = Prepacked::from_codes(f, 131, 131, 256, &scales, None, |_, _| 1).unwrap();
        assert_eq!(p.k_pad, 256);
        assert_eq!(p.kernel_group(), 256);
    }
}
