//! Device code for the SGEMM ladder, compiled to PTX by rustc's `nvptx64-nvidia-cuda` target.
//!
//! Every kernel multiplies row-major fp32 matrices, `C[m×n] = A[m×k] · B[k×n]`, and takes the
//! same arguments `(a, b, c, m, n, k)`, so the host can launch any rung from one table.
//! [`device`] holds the few hardware helpers the rungs share; [`sgemm`] holds one file per rung;
//! [`dequant`] holds the weight-only-quantized GEMM (fp16 activations, low-bit weights).
//!
//! # One crate, one PTX per architecture
//! The root `build.rs` builds this crate twice: for `sm_80` (portable: the driver JIT-compiles it
//! for any GPU of compute capability 8.0 or newer, Ampere to Blackwell) and for `sm_90a` (H100,
//! H200 only: `wgmma`, TMA, `mbarrier` transactions). Code that needs Hopper's
//! architecture-specific instructions is gated with `#[cfg(target_feature = "sm_90a")]`, which
//! rustc sets for `-C target-cpu=sm_90a` (and not for sm_90 or any other target): the whole
//! module of a Hopper-only kernel, and the helpers only such kernels use. Everything else is
//! compiled into both PTX files, so a portable kernel is written once. A new entry point that
//! uses `wgmma`, TMA or `setmaxnreg` must be gated the same way, or the sm_80 build fails (in
//! rustc when it calls a gated helper, in `scripts/ptxas-check.sh` when it uses its own inline
//! PTX).
//!
//! `cargo build --release` in this folder builds for sm_90a (`.cargo/config.toml`); build for
//! the portable target with `RUSTFLAGS="-C target-cpu=sm_80 -C target-feature=+ptx75" cargo
//! build --release --target-dir target/sm_80` (a target directory of its own, so that the two
//! builds do not evict each other's `core`).

#![no_std]
#![feature(abi_ptx, stdarch_nvptx, core_intrinsics, gpu_intrinsics)]
#![feature(gpu_launch_sized_workgroup_mem, core_float_math, portable_simd)]
#![feature(asm_experimental_arch, stmt_expr_attributes)]
#![allow(internal_features)]
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

#[cfg(target_feature = "sm_90a")]
pub mod cluster;
pub mod dequant;
pub mod device;
pub mod element;
pub mod epilogue;
pub mod general;
pub mod general_mma;
pub mod k_major_b;
pub mod ladder_epilogue;
pub mod pipeline;
pub mod sgemm;
pub mod split_k;
#[cfg(target_feature = "sm_90a")]
pub mod stream_k;
pub mod tensor_core;
pub mod thin;
pub mod thin_mma;
pub mod thin_rows;
pub mod tile_order;
#[cfg(target_feature = "sm_90a")]
pub mod tma;
#[cfg(target_feature = "sm_90a")]
pub mod tma_gemm;
#[cfg(target_feature = "sm_90a")]
pub mod tma_gemm_m64;
#[cfg(target_feature = "sm_90a")]
pub mod tma_gemm_n128;
pub mod transpose;

/// A kernel has nowhere to report a panic: stop the whole grid so the host sees a launch error
/// instead of a wrong answer.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { core::arch::nvptx::trap() }
}
