//! # Dequantize for prefill: pre-packed weights to a row-major fp16 matrix
//!
//! **Idea.** At prefill sizes (m in the thousands) every weight is reused by thousands of rows,
//! so the product is compute-bound and the best tensor-core GEMM of the ladder (v18) should do
//! it. This kernel expands the pre-packed weights into `W[k×n]` fp16 once per call, with the
//! same in-register conversion as [`super::decode`] (so the same weights, bit for bit): each
//! warp decodes its chunk into a shared-memory tile `chunk_k × 256`, and the block writes the
//! tile out in 16-byte row segments, coalesced.
//!
//! **Measured** (H100, `docs/results/h100-dequant`): the expansion of a 8192 × 57344 matrix
//! takes 358 µs (1-bit) to 639 µs (fp16 weights), the traffic of writing the fp16 matrix at
//! copy bandwidth; with v18 behind it the prefill path runs at 0.83–0.87× cuBLAS fp16 at
//! m = 4096 (0.80–0.90× over the three layer shapes), short of the aim (within 10% of it):
//! only a fused kernel would remove the expansion.
//!
//! Launch: 256 threads, grid `n_pad/256 × k_chunks`, [`shared_bytes`]`(bits)` of dynamic shared
//! memory.

use super::packed::{
    BLOCK_COLUMNS, FLOAT, HALF, INTEGER, PairConstants, WARP_COLUMNS, WIDE_FLOAT, chunk_k,
    chunk_k_tiles, column_constants, decode_pair, loads,
};
use crate::device::{
    block_x, block_y, dynamic_shared_bytes, grid_dim_x, grid_dim_y, load_shared_16, shared_address,
    shared_f32, store_shared_u16, sync_threads, thread_x, trap,
};
use core::simd::u32x4;
use seq_macro::seq;

use gemm_geometry::dequant::EXPAND_ROW_BYTES as ROW_BYTES;
pub use gemm_geometry::dequant::expand_shared_bytes as shared_bytes;

/// Expands the block's chunk of pre-packed weights into `w` (`k × n` fp16, row-major; bf16 with
/// `BF16`, as [`super::packed::decode_pair_bf16`] scales them: `bf16(value · bf16(scale))`).
///
/// # Safety
/// `weights`, `scales`, `offsets` (null or valid) must be pre-packed for this `BITS`/`KIND` as the
/// module documentation says, covering `k × n` with groups of `group` rows; `w` must point to `k ×
/// n` writable 16-bit elements; all threads of the block call it (it may contain barriers), with the
/// module's launch geometry.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn dequantize<const BITS: u32, const KIND: u32, const BF16: bool>(
    weights: *const u8,
    scales: *const u16,
    offsets: *const u16,
    w: *mut u16,
    k: u32,
    n: u32,
    group: u32,
    constants: PairConstants,
) {
    if dynamic_shared_bytes() < shared_bytes(BITS) {
        trap();
    }
    let ck = chunk_k(BITS);
    let loads = loads(BITS);
    let thread = thread_x();
    let (warp, lane) = (thread / 32, thread % 32);
    let (col_block, chunk) = (block_x(), block_y());
    let (n_pad, k_chunks) = (grid_dim_x() * BLOCK_COLUMNS, grid_dim_y());
    let chunk_bytes = (8 * loads * 512) as usize;
    let src = weights.wrapping_add(
        (col_block * k_chunks + chunk) as usize * chunk_bytes
            + (((warp * loads) * 32 + lane) * 16) as usize,
    );
    let mut words = [0u32; 32];
    seq!(j in 0..8 {
        if j < loads {
            let v = unsafe { (src.wrapping_add(j * 512) as *const u32x4).read() }.to_array();
            words[4 * j] = v[0];
            words[4 * j + 1] = v[1];
            words[4 * j + 2] = v[2];
            words[4 * j + 3] = v[3];
        }
    });

    let column = col_block * BLOCK_COLUMNS + warp * WARP_COLUMNS + lane / 4;
    let local_column = warp * WARP_COLUMNS + lane / 4;
    let tile = shared_address(shared_f32());
    // k-tile kt is in group first_group + (kt >> shift): groups smaller than a chunk divide it.
    let first_group = chunk * ck / group;
    let shift = if group >= ck {
        3
    } else {
        (group / 16).trailing_zeros()
    };
    // Without zero points the offsets are read from the scales (any valid address) and not used.
    let has_offsets = !offsets.is_null();
    let offsets = if has_offsets { offsets } else { scales };
    seq!(kt in 0..8 {
        if kt < chunk_k_tiles(BITS) {
            let g = first_group + (kt >> shift);
            seq!(nt in 0..4 {
                let at = g as usize * n_pad as usize + (column + 8 * nt) as usize;
                let kc = if KIND != HALF {
                    let s = unsafe { *scales.add(at) } as u32;
                    let o = unsafe { *offsets.add(at) } as u32;
                    column_constants::<BITS, KIND, BF16>(&constants, s, o, has_offsets)
                } else {
                    constants
                };
                seq!(r in 0..2 {
                    let pair = decode_pair::<BITS, KIND, true, BF16>(&words, (kt * 4 + nt) * 2 + r, &kc);
                    let row = 16 * kt + 2 * (lane % 4) + 8 * r;
                    let at = tile + row * ROW_BYTES + (local_column + 8 * nt) * 2;
                    unsafe {
                        store_shared_u16(at, pair & 0xFFFF);
                        store_shared_u16(at + ROW_BYTES, pair >> 16);
                    }
                });
            });
        }
    });
    sync_threads();

    // Out: 16-byte pieces, 32 per row, rows of this chunk inside k.
    let first_k = chunk * ck;
    let first_col = col_block * BLOCK_COLUMNS;
    let vector = n % 8 == 0;
    let mut piece = thread;
    while piece < ck * 32 {
        let (row, p) = (piece / 32, piece % 32);
        let (gk, gc) = (first_k + row, first_col + 8 * p);
        if gk < k && gc < n {
            let v = unsafe { load_shared_16(tile + row * ROW_BYTES + p * 16) };
            let out = unsafe { w.add(gk as usize * n as usize + gc as usize) };
            if vector {
                unsafe { (out as *mut u32x4).write(u32x4::from_array(v)) };
            } else {
                for i in 0..8u32 {
                    if gc + i < n {
                        let half = (v[(i / 2) as usize] >> (16 * (i % 2))) as u16;
                        unsafe { out.add(i as usize).write(half) };
                    }
                }
            }
        }
        piece += 256;
    }
}

/// One kernel entry per (bits, decoder, output type): `dequant_expand_<name>`, fp16 or (`bf16`
/// in the name) bf16.
macro_rules! expand_entry {
    ($name:ident, $bits:expr, $kind:expr) => {
        expand_entry!($name, $bits, $kind, false);
    };
    (bf16 $name:ident, $bits:expr, $kind:expr) => {
        expand_entry!($name, $bits, $kind, true);
    };
    ($name:ident, $bits:expr, $kind:expr, $bf16:expr) => {
        crate::launch_bounds!(
            $name,
            gemm_geometry::dequant::THREADS,
            gemm_geometry::dequant::MIN_BLOCKS_PER_SM
        );
        /// Dequantize entry (see the module docs). Arguments: pre-packed weights, scales and
        /// offsets (`groups × n_pad` fp16; offsets may be null), W (`k × n` fp16, or bf16), k, n, group,
        /// and the format's constants.
        ///
        /// # Safety
        /// `weights`, `scales` and `offsets` (null or valid) must be device memory pre-packed for
        /// this entry's format, covering `k × n` with groups of `group` rows; `w` must point to `k
        /// × n` writable 16-bit elements; launch as the module documentation says.
        #[allow(clippy::too_many_arguments)]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            weights: *const u8,
            scales: *const u16,
            offsets: *const u16,
            w: *mut u16,
            k: u32,
            n: u32,
            group: u32,
            offset: u32,
            exponent: u32,
            mantissa: u32,
            rebias: u32,
        ) {
            let constants = PairConstants::of_format(offset, exponent, mantissa, rebias);
            unsafe {
                dequantize::<{ $bits }, { $kind }, { $bf16 }>(
                    weights, scales, offsets, w, k, n, group, constants,
                )
            }
        }
    };
}

expand_entry!(dequant_expand_int1, 1, INTEGER);
expand_entry!(dequant_expand_int2, 2, INTEGER);
expand_entry!(dequant_expand_int3, 3, INTEGER);
expand_entry!(dequant_expand_int4, 4, INTEGER);
expand_entry!(dequant_expand_int5, 5, INTEGER);
expand_entry!(dequant_expand_int6, 6, INTEGER);
expand_entry!(dequant_expand_int7, 7, INTEGER);
expand_entry!(dequant_expand_int8, 8, INTEGER);
expand_entry!(dequant_expand_float2, 2, FLOAT);
expand_entry!(dequant_expand_float3, 3, FLOAT);
expand_entry!(dequant_expand_float4, 4, FLOAT);
expand_entry!(dequant_expand_float5, 5, FLOAT);
expand_entry!(dequant_expand_float6, 6, FLOAT);
expand_entry!(dequant_expand_float7, 7, FLOAT);
expand_entry!(dequant_expand_float8, 8, FLOAT);
expand_entry!(dequant_expand_wide_float6, 6, WIDE_FLOAT);
expand_entry!(dequant_expand_wide_float7, 7, WIDE_FLOAT);
expand_entry!(dequant_expand_wide_float8, 8, WIDE_FLOAT);
expand_entry!(dequant_expand_half, 16, HALF);

// bf16 output (for bf16 activations).
expand_entry!(bf16 dequant_expand_bf16_int1, 1, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int2, 2, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int3, 3, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int4, 4, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int5, 5, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int6, 6, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int7, 7, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_int8, 8, INTEGER);
expand_entry!(bf16 dequant_expand_bf16_float2, 2, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float3, 3, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float4, 4, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float5, 5, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float6, 6, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float7, 7, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_float8, 8, FLOAT);
expand_entry!(bf16 dequant_expand_bf16_wide_float6, 6, WIDE_FLOAT);
expand_entry!(bf16 dequant_expand_bf16_wide_float7, 7, WIDE_FLOAT);
expand_entry!(bf16 dequant_expand_bf16_wide_float8, 8, WIDE_FLOAT);
expand_entry!(bf16 dequant_expand_bf16_half, 16, HALF);
