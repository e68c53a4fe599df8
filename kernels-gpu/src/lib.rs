//! Device code for the SGEMM ladder, compiled to PTX by rustc's `nvptx64-nvidia-cuda` target.
//!
//! Every kernel multiplies row-major fp32 matrices, `C[m×n] = A[m×k] · B[k×n]`, and takes the
//! same arguments `(a, b, c, m, n, k)`, so the host can launch any rung from one table.
//! [`device`] holds the few hardware helpers the rungs share; [`sgemm`] holds one file per rung;
//! [`dequant`] holds the weight-only-quantized GEMM (fp16 activations, low-bit weights).

#![no_std]
#![feature(abi_ptx, stdarch_nvptx, core_intrinsics, gpu_intrinsics)]
#![feature(gpu_launch_sized_workgroup_mem, core_float_math, portable_simd)]
#![feature(asm_experimental_arch, stmt_expr_attributes)]
#![allow(internal_features)]
// Kernels take raw device pointers by design; the host validates them before every launch.
#![allow(clippy::missing_safety_doc)]
// `seq!` unrolls loops into straight code with literal indices (`0 * 4 + q`, `i as u32` on a
// literal, `x % 1`...). That is the point of it: every register-array index becomes a
// constant. These lints object to exactly those spelled-out constants.
#![allow(
    clippy::identity_op,
    clippy::erasing_op,
    clippy::eq_op,
    clippy::unnecessary_cast,
    clippy::needless_range_loop
)]

pub mod dequant;
pub mod device;
pub mod element;
pub mod epilogue;
pub mod general;
pub mod sgemm;
pub mod tensor_core;
pub mod tma;

/// A kernel has nowhere to report a panic: stop the whole grid so the host sees a launch error
/// instead of a wrong answer.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { core::arch::nvptx::trap() }
}
