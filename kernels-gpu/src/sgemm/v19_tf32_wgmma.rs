//! # v19 — TF32 on `wgmma`: v18's kernel with fp32 operands, B transposed first
//!
//! **Idea.** Run TF32 through v18's TMA + `wgmma` pipeline instead of v14's `mma.sync`. The
//! shared-memory side does not change at all: a swizzled row is still 128 bytes, now 32 fp32
//! values of k instead of 64 fp16, so a stage is 128×256×32, the same 48 KiB, and a
//! `wgmma.m64n256k8.f32.tf32.tf32` reads a 32-byte k-slice exactly where the fp16 kernel's
//! `m64n256k16` read one. Only the TMA's element type, the depth of a stage and the
//! instruction change ([`crate::tma_gemm::WgmmaElement`] for `f32`).
//!
//! **The catch: TF32 `wgmma` reads B only K-major.** For 16-bit types `wgmma` transposes an
//! MN-major B tile (the ladder's row-major `[k, n]`) on the fly (`imm-trans-b = 1`); for TF32
//! the instruction has no such argument: each column of B must be contiguous along k, i.e. B
//! stored `[n, k]`. The arrangements:
//! - transpose each tile in shared memory (the consumers or the producer warp reading the TMA's
//!   tile and writing it back transposed): 32 KiB of shared-memory traffic each way per stage,
//!   on the same port the `wgmma` reads from, in every one of the n/256 · m/128 tiles that
//!   reread B;
//! - compute Cᵀ = Bᵀ·Aᵀ with B as the *register* operand A of `wgmma` (any layout can be
//!   loaded into registers): 16 more registers per consumer thread next to 128 accumulators,
//!   and `ld.shared` traffic for every fragment, again per tile;
//! - **transpose B once in global memory** (`gemm_transpose_f32`, a 32 × 32-tile copy kernel
//!   at close to DRAM bandwidth), then run the K-major kernel. It costs one read and one write
//!   of B, 8·k·n bytes: at 4096³ 128 MiB, about 50 µs at the H100's ~3 TB/s, against
//!   ~320 µs of cuBLAS TF32 arithmetic (2·4096³ at ~430 TFLOP/s); at 8192³ the same bytes ×4
//!   against arithmetic ×8. This rung takes it: it is the cheapest per FLOP at large shapes, and
//!   a caller who stores B `[n, k]` (an `nn.Linear` weight: the library's `b_transposed()`)
//!   pays nothing.
//!
//! **Fixes.** v14 (TF32 `mma.sync`, 128×128 tiles, `ldmatrix` cannot load 32-bit fragments
//! transposed) reached 35–37% of cuBLAS TF32: every fragment is loaded by scalar shared loads,
//! and `mma.sync` m16n8k8 issues 8× as many instructions per FLOP as `wgmma` m64n256k8.
//!
//! **Measured** (H100, `docs/results/h100-tf32-wgmma`, three runs, the transposed copy inside
//! the timed region: the rung is timed from A and B `[k, n]` to C, like every rung): 4096³
//! 332 TFLOP/s, **82.8% of cuBLAS TF32** (82.3–83.3%; v14: 37%), 8192³ 369 TFLOP/s, 88.0%
//! (87.6–90.5%). Through the library (the shape suite, `cublasGemmEx` with
//! `CUBLAS_COMPUTE_32F_FAST_TF32` as the baseline, same layout): with B `[n, k]` (no copy)
//! 1.06× cuBLAS at 4096³ and 1.00× at 8192³; with B `[k, n]` 0.91 and 0.93.
//!
//! **Accuracy.** `wgmma` reads the fp32 bits and ignores the low 13 (truncation), where v14 and
//! cuBLAS round to nearest: the relative error is about 2.7× theirs (6.9·10⁻⁴ against
//! 2.6·10⁻⁴ at 4096³), within the TF32 model of `src/check/verify.rs` (u = 2⁻¹⁰).
//!
//! Launch: v18's (`gemm_geometry::v19`, which re-exports v17's block, stages and shared memory),
//! persistent: min(⌈m/128⌉·⌈n/256⌉, SMs) blocks of 288 threads. The last argument is the
//! address of two tensor maps: A `[m, k]` (fp32, box 32 × 128) and the `[n, k]` copy of B (fp32,
//! box 32 × 256, row stride = the copy's leading dimension), 128-byte swizzle, zero fill.
//!
//! # The library entry
//! `gemm_v19_tf32_nk` is the same body with v18's library epilogue and 3-D maps (batch), for
//! B `[n, k]`: the preconditions of `gemm_v18_f16_nk` with fp32 elements (row strides
//! multiples of 16 bytes: `lda`, `ldb` multiples of 4), A box (32, 128, 1), B box (32, 256, 1),
//! map type `FLOAT32`, C 4-byte aligned with any `ldc` (column pairs as one 64-bit store when C
//! is 8-byte aligned and `ldc`, `stride_c` are even, decided at run time). For B `[k, n]` the
//! host transposes B into a workspace first, as the rung does.

use crate::tma_gemm::{V17_ACC, V17_WARPGROUPS, ladder_tma_wgmma, library_gemm};
use gemm_geometry::GemmArgs;
use gemm_geometry::v19::{MIN_BLOCKS_PER_SM, STAGES, THREADS};

crate::launch_bounds!(sgemm_v19_tf32_wgmma, THREADS, MIN_BLOCKS_PER_SM);

/// v19: TF32 GEMM on v18's persistent TMA + `wgmma` kernel. `b` is not read: the host passes the
/// tensor maps of A and of a `[n, k]` copy of B that it wrote with `gemm_transpose_f32`.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract) for f32,
/// except that `maps` (64-byte aligned) holds the two tensor maps of the module documentation,
/// for A and for a `[n, k]` copy of B, encoded for these `m`, `n`, `k`; the module's launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v19_tf32_wgmma(
    _a: *const f32,
    _b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    // SAFETY: the caller's contract is the body's (2-D maps, one product, B's `[n, k]` copy).
    unsafe { ladder_tma_wgmma::<f32, true>(c, m, n, k, maps) };
}

crate::launch_bounds!(gemm_v19_tf32_nk, THREADS, MIN_BLOCKS_PER_SM);

/// Persistent TMA + `wgmma` GEMM, fp32 A `[m, k]` and B `[n, k]` (C = A·Bᵀ) read as TF32,
/// fp32 C, fp32 accumulation and epilogue, batched, split-K.
///
/// # Safety
/// The preconditions of the module documentation (`# The library entry`) must hold; the launch
/// must be v18's.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_v19_tf32_nk(args: GemmArgs) {
    // SAFETY: the caller's contract.
    unsafe { library_gemm::<f32, true, V17_WARPGROUPS, V17_ACC, STAGES>(&args) };
}
