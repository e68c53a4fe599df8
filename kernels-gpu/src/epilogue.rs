//! The fused epilogue of the library kernels: `act(alpha·acc + beta·C + bias[col])`, as
//! [`GemmArgs::epilogue`] defines it (the same function the host's CPU reference calls), with
//! the device's tanh and the element conversions of [`crate::element`].

use crate::element::Element;
use core::arch::asm;
use gemm_geometry::GemmArgs;

/// `tanh(x) = 1 − 2 / (2^(2x·log₂e) + 1)`, with `ex2.approx` (relative error about 2⁻²²) and
/// an IEEE division: within a few f32 ulps of 1 in absolute terms, which the GELU's
/// `0.5·x·(1 + tanh)` turns into a relative error of the same order. It saturates correctly:
/// `2^(+∞)` gives 1, `2^(−∞)` gives −1.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let scaled = 2.0 * core::f32::consts::LOG2_E * x;
    let power: f32;
    // SAFETY: a pure register computation.
    unsafe { asm!("ex2.approx.ftz.f32 {o}, {i};", o = out(reg32) power, i = in(reg32) scaled) };
    1.0 - 2.0 / (power + 1.0)
}

/// The final value of `C[row, col]` (pointer `c_at`) from the accumulator `acc`.
///
/// # Safety
/// `c_at` must point into C when `args.beta` is not 0, and `args.bias` must be 0 or point to
/// at least `col + 1` elements of `E`.
#[inline(always)]
pub unsafe fn apply<E: Element>(args: &GemmArgs, acc: f32, c_at: *const E, col: u32) -> f32 {
    let old = if args.beta != 0.0 {
        unsafe { c_at.read() }.to_f32()
    } else {
        0.0
    };
    let bias = if args.bias != 0 {
        unsafe { (args.bias as *const E).add(col as usize).read() }.to_f32()
    } else {
        0.0
    };
    args.epilogue(acc, old, bias, tanh)
}
