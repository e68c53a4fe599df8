//! # v20 — FP8 on `wgmma`: v18's kernel with one-byte operands, twice the tensor-core rate
//!
//! **Idea.** Feed Hopper's FP8 tensor cores (`wgmma.m64n256k32.f32.e4m3.e4m3`, and the e5m2
//! form) from v18's persistent TMA + `wgmma` pipeline. As for TF32 (v19), the shared-memory side
//! does not change: a swizzled row is still 128 bytes, now 128 values of k, so a stage is
//! 128×256×128, the same 48 KiB, and each `m64n256k32` reads a 32-byte k-slice exactly where
//! the fp16 kernel's `m64n256k16` read one. What changes is the arithmetic per byte: a stage
//! now carries twice the multiply-adds, which the FP8 tensor cores execute at twice the fp16
//! rate (989 → 1 979 dense TFLOP/s on an H100 SXM).
//!
//! **B is `[n, k]`.** FP8 `wgmma` reads both operands K-major only (no `imm-trans`): each column
//! of B must be contiguous along k. This rung therefore takes B stored `[n, k]`, the usual
//! layout of an FP8 weight and the one the Triton tutorial pre-transposes b into for its fp8
//! run; cuBLASLt's FP8 GEMM requires the same ("TN") form. The rung is timed from that layout.
//!
//! **Scales and output.** `C = fp16(scale_a · scale_b · A·Bᵀ)`: FP8 tensors carry a per-tensor
//! scale (the values are stored divided by it), which the kernel reads from device memory (as
//! cuBLASLt's A/B scale pointers) and applies to the fp32 accumulators before rounding to fp16.
//!
//! **Fixes.** The ladder had no FP8 at all; v18 at fp16 is bound by the tensor cores' fp16
//! rate. At FP8 the same tile moves the same bytes per stage but the tensor cores finish it in
//! half the time, so the pipeline's feeding (TMA, L2) is what this rung tests.
//!
//! **Measured** (H100, `docs/results/h100-fp8-wgmma`, three runs, medians): 4096³ 1363 TFLOP/s,
//! **101.5% of cuBLASLt FP8** (1236–1376 TFLOP/s, fast accumulation, same layout and scales);
//! 8192³ 1460 TFLOP/s, **98.2%** (cuBLASLt 1486–1488). e5m2 runs 2–3% faster than e4m3 (1389
//! and 1500 TFLOP/s); cuBLASLt has no e5m2 × e5m2 GEMM to compare with. The epilogue matters
//! twice as much as in v18 (the same 48 KiB per stage feeds twice the multiply-adds): with
//! v18's stores of fp16 pairs this rung ran at 82.7% and 89.6%; storing four fp16 per lane
//! (one shuffle between neighbouring lanes, whole 32-byte sectors per warp and row) gave the
//! numbers above. See `docs/ladder.md`.
//!
//! **Accumulation.** `wgmma` with FP8 inputs keeps its fp32 accumulators at reduced precision
//! (the DeepSeek-V3 report measured about 14 bits retained on H800); the error model in
//! `src/check/verify.rs` says what the verification allows. cuBLASLt's `FAST_ACCUM` mode
//! accumulates the same way, and is the baseline this rung is timed against.
//!
//! Launch: v18's (`gemm_geometry::v20`, which re-exports v17's block, stages and shared
//! memory), persistent: min(⌈m/128⌉·⌈n/256⌉, SMs) blocks of 288 threads. Arguments: `(a, b, c,
//! m, n, k, maps, scales)`; `a`, `b` are not read (the maps hold them); `maps` holds A `[m, k]`
//! (`UINT8`, box 128 × 128) then B `[n, k]` (`UINT8`, box 128 × 256), 128-byte swizzle, zero fill;
//! `scales` two f32 in device memory. TMA rows start at 16-byte boundaries: `k` must be a
//! multiple of 16 (the host refuses other shapes); ragged m and n work.

use crate::element::{E4m3, E5m2, F16};
use crate::tma_gemm::ladder_fp8_tma_wgmma;
use gemm_geometry::v20::{MIN_BLOCKS_PER_SM, THREADS};

crate::launch_bounds!(hgemm_v20_fp8_e4m3, THREADS, MIN_BLOCKS_PER_SM);

/// v20: FP8 e4m3 GEMM on v18's persistent TMA + `wgmma` kernel, B `[n, k]`, fp16 C with
/// per-tensor scales.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract) with one-byte
/// A and B, B stored `[n, k]` and C fp16, except that `a` and `b` are not read: `maps` (64-byte
/// aligned) holds their two tensor maps as the module documentation says, encoded for these `m`,
/// `n`, `k`; `scales` points to two f32; the module's launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v20_fp8_e4m3(
    _a: *const u8,
    _b: *const u8,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
    scales: *const f32,
) {
    // SAFETY: the caller's contract is the body's.
    unsafe { ladder_fp8_tma_wgmma::<E4m3>(c as *mut F16, m, n, k, maps, scales) };
}

crate::launch_bounds!(hgemm_v20_fp8_e5m2, THREADS, MIN_BLOCKS_PER_SM);

/// v20 with e5m2 operands (`wgmma … .e5m2.e5m2`): wider range, one mantissa bit less.
///
/// # Safety
/// That of [`hgemm_v20_fp8_e4m3`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v20_fp8_e5m2(
    _a: *const u8,
    _b: *const u8,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
    scales: *const f32,
) {
    // SAFETY: the caller's contract is the body's.
    unsafe { ladder_fp8_tma_wgmma::<E5m2>(c as *mut F16, m, n, k, maps, scales) };
}
