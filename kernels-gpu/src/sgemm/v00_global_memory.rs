//! # v0 — global memory only
//!
//! **Idea.** One thread per element of C: thread (x, y) of the grid walks row y of A and
//! column x of B straight from global memory and writes one dot product.
//!
//! **Fixes.** Nothing yet: this is the baseline every later rung is measured against. Threads
//! with consecutive `x` read consecutive elements of B's row and write consecutive elements of
//! C (coalesced); the A element is the same for the whole warp (a broadcast). Every operand
//! still comes from global memory (or L1/L2), one fma per two loads.
//!
//! **Measured** (H100, 4096³, `docs/results/h100-ladder`): 6.7 TFLOP/s, 13% of cuBLAS (52.0 TFLOP/s).
//!
//! Launch: block 32×8 threads, grid ⌈n/32⌉ × ⌈m/8⌉, no shared memory ([`gemm_geometry::v00`];
//! the kernel reads its block shape at run time).

use crate::device::{at, block_dim_x, block_dim_y, block_x, block_y, fma, thread_x, thread_y};

/// v0: `C = A·B`, one thread per element of C.
///
/// # Safety
/// Upholds [the ladder's launch contract](crate::sgemm#the-ladders-launch-contract), no alignment
/// beyond f32's.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn sgemm_v00_global_memory(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if row >= m || col >= n {
        return;
    }
    let mut sum = 0.0f32;
    for i in 0..k {
        unsafe { sum = fma(*a.add(at(row, i, k)), *b.add(at(i, col, n)), sum) };
    }
    unsafe { *c.add(at(row, col, n)) = sum };
}
