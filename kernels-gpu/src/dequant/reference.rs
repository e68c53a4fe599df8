//! # Reference dequant-GEMM
//!
//! **Idea.** The simplest correct kernel for every format: one thread per element of C, which
//! walks k, unpacks each weight's code from the dense bit stream, decodes it, applies its
//! group's scale and zero point, and accumulates `a · w` in fp32; the sum is rounded to fp16
//! once, at the store. It reads the packed layout exactly as `host/src/quant.rs` writes it, so
//! it doubles as an executable definition of the format for the optimized kernels to come.
//!
//! **Not fast, on purpose:** every weight is fetched and decoded by every row of C that needs
//! it, with byte-granular loads.
//!
//! Launch: block 32×8 threads, grid ⌈n/32⌉ × ⌈m/8⌉, no shared memory. Arguments: fp16 A (bits),
//! packed codes, fp16 scales (`(k/group)×n`), zero points (one byte each, or null), fp16 C,
//! m, n, k, group, then the format (kind, bits, exponent, mantissa).

use super::format::{F16, Format, f16_to_f32, f32_to_f16, packed_code};
use crate::device::{block_dim_x, block_dim_y, block_x, block_y, fma, thread_x, thread_y};

/// Reference weight-only-quantized GEMM: `C = A · dequant(W)`, one thread per element of C.
///
/// # Safety
/// `a` must point to `m × k` fp16, `codes`, `scales` and `zeros` to the reference format's codes,
/// scales and zero points for `k × n` weights with groups of `group` rows, and `c` to `m × n`
/// writable fp16 elements, all device memory; launch as the module documentation says.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dequant_reference(
    a: *const u16,
    codes: *const u8,
    scales: *const u16,
    zeros: *const u8,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    group: u32,
    kind: u32,
    bits: u32,
    exponent: u32,
    mantissa: u32,
) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if row >= m || col >= n {
        return;
    }
    let format = Format {
        kind,
        bits,
        exponent,
        mantissa,
    };
    let (n_us, k_us) = (n as usize, k as usize);
    let mut sum = 0.0f32;
    for i in 0..k_us {
        let code = unsafe { packed_code(codes, i * n_us + col as usize, bits) };
        let weight = if kind == F16 {
            format.decode(code)
        } else {
            let g = (i / group as usize) * n_us + col as usize;
            let zero = if zeros.is_null() {
                0.0
            } else {
                (unsafe { *zeros.add(g) }) as f32
            };
            (format.decode(code) - zero) * f16_to_f32(unsafe { *scales.add(g) })
        };
        let x = f16_to_f32(unsafe { *a.add(row as usize * k_us + i) });
        sum = fma(x, weight, sum);
    }
    unsafe { *c.add(row as usize * n_us + col as usize) = f32_to_f16(sum) };
}
