//! The small set of hardware helpers every rung uses, so that the rungs read like the algorithm.
//!
//! Indices come back as `u32` (what the hardware registers hold); element offsets into global
//! memory are computed in `usize` (64-bit on nvptx64) so that no product `row * cols` can wrap.

use core::arch::nvptx;
use core::simd::f32x4;
use seq_macro::seq;

/// `threadIdx.x`.
#[inline(always)]
pub fn thread_x() -> u32 {
    unsafe { nvptx::_thread_idx_x() }
}

/// `threadIdx.x`, read anew at every call: LLVM may neither hoist it nor anything computed from
/// it out of a loop (an `asm` with effects). For kernels that loop over batch items: hoisted
/// out of that loop, a body's per-thread offsets would all stay live across the whole of it,
/// beyond a tight register budget, where recomputing them once per item costs a few integer
/// instructions.
#[inline(always)]
pub fn thread_x_each_time() -> u32 {
    let thread: u32;
    // SAFETY: reads a special register.
    unsafe {
        core::arch::asm!("mov.u32 {t}, %tid.x;", t = out(reg32) thread, options(nomem, nostack))
    };
    thread
}

/// `threadIdx.y`.
#[inline(always)]
pub fn thread_y() -> u32 {
    unsafe { nvptx::_thread_idx_y() }
}

/// `blockIdx.x`.
#[inline(always)]
pub fn block_x() -> u32 {
    unsafe { nvptx::_block_idx_x() }
}

/// `blockIdx.y`.
#[inline(always)]
pub fn block_y() -> u32 {
    unsafe { nvptx::_block_idx_y() }
}

/// `blockIdx.z`.
#[inline(always)]
pub fn block_z() -> u32 {
    unsafe { nvptx::_block_idx_z() }
}

/// `blockDim.x`.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    unsafe { nvptx::_block_dim_x() }
}

/// `blockDim.y`.
#[inline(always)]
pub fn block_dim_y() -> u32 {
    unsafe { nvptx::_block_dim_y() }
}

/// `gridDim.x`.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    unsafe { nvptx::_grid_dim_x() }
}

/// `gridDim.y`.
#[inline(always)]
pub fn grid_dim_y() -> u32 {
    unsafe { nvptx::_grid_dim_y() }
}

/// `gridDim.z`.
#[inline(always)]
pub fn grid_dim_z() -> u32 {
    unsafe { nvptx::_grid_dim_z() }
}

/// `__syncthreads()`: every thread of the block waits here, and shared-memory writes made before
/// it are visible to all threads after it.
#[inline(always)]
pub fn sync_threads() {
    unsafe { nvptx::_syncthreads() }
}

/// `__syncwarp()`: every lane of the warp waits here, and the shared-memory writes each made
/// before it are visible to the others after it. Every lane of the warp must reach it.
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: a warp barrier with a full mask; no operands. Not `nomem`: it orders the warp's
    // shared-memory accesses, so the compiler must not move them across it.
    unsafe { core::arch::asm!("bar.warp.sync 0xffffffff;", options(nostack)) }
}

/// The block's dynamic shared memory, sized by the host at launch (`shared_mem_bytes`).
/// Asked for with `f32x4`'s alignment so that rungs may use 128-bit shared-memory accesses.
#[inline(always)]
pub fn shared_f32() -> *mut f32 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<f32x4>() as *mut f32
}

/// `a * b + c` with one rounding (`fma.rn.f32`): rustc never contracts `a * b + c` by itself.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::f32::math::mul_add(a, b, c)
}

/// Offset of element (`row`, `col`) in a row-major matrix whose rows hold `cols` elements.
#[inline(always)]
pub fn at(row: u32, col: u32, cols: u32) -> usize {
    row as usize * cols as usize + col as usize
}

/// One element of a `rows × cols` row-major matrix, or 0 outside it. Tiles that hang over a
/// ragged edge read zeros, which add nothing to the dot products.
///
/// # Safety
/// When `row < rows` and `col < cols`, `matrix` must point to a readable row-major `rows × cols`
/// f32 matrix (element (`row`, `col`) at offset `row·cols + col`); otherwise nothing is read.
#[inline(always)]
pub unsafe fn load_or_zero(matrix: *const f32, rows: u32, cols: u32, row: u32, col: u32) -> f32 {
    if row < rows && col < cols {
        unsafe { *matrix.add(at(row, col, cols)) }
    } else {
        0.0
    }
}

/// Four consecutive elements `col..col + 4` of row `row` (`col` a multiple of 4), zeros outside
/// the matrix. One 128-bit load (`ld.global.v4.f32`) when the four lie inside and are 16-byte
/// aligned, which needs `cols % 4 == 0` and a 16-byte-aligned base (the host checks the base);
/// otherwise four scalar loads, so ragged shapes stay correct.
///
/// # Safety
/// As [`load_or_zero`] for each of the four columns; in addition `matrix` must be 16-byte aligned
/// whenever `cols % 4 == 0` (the vector path then assumes it), and `col` a multiple of 4.
#[inline(always)]
pub unsafe fn load4_or_zero(matrix: *const f32, rows: u32, cols: u32, row: u32, col: u32) -> f32x4 {
    if cols % 4 == 0 && row < rows && col + 4 <= cols {
        unsafe { (matrix.add(at(row, col, cols)) as *const f32x4).read() }
    } else {
        unsafe {
            f32x4::from_array([
                load_or_zero(matrix, rows, cols, row, col),
                load_or_zero(matrix, rows, cols, row, col + 1),
                load_or_zero(matrix, rows, cols, row, col + 2),
                load_or_zero(matrix, rows, cols, row, col + 3),
            ])
        }
    }
}

/// Reads 4 floats from 16-byte-aligned memory (shared or global) with one vector access.
///
/// # Safety
/// `ptr` must be 16-byte aligned and point to 4 readable floats (shared or global memory).
#[inline(always)]
pub unsafe fn read4(ptr: *const f32) -> f32x4 {
    unsafe { (ptr as *const f32x4).read() }
}

/// Reads 2 floats from 8-byte-aligned memory (shared or global) with one vector access.
///
/// # Safety
/// `ptr` must be 8-byte aligned and point to 2 readable floats (shared or global memory).
#[inline(always)]
pub unsafe fn read2(ptr: *const f32) -> [f32; 2] {
    unsafe { (ptr as *const core::simd::f32x2).read() }.to_array()
}

/// Writes 4 floats to 16-byte-aligned memory (shared or global) with one vector access.
///
/// # Safety
/// `ptr` must be 16-byte aligned and point to 4 writable floats (shared or global memory) that no
/// other thread accesses concurrently.
#[inline(always)]
pub unsafe fn write4(ptr: *mut f32, value: f32x4) {
    unsafe { (ptr as *mut f32x4).write(value) }
}

/// Writes `value` to elements `col..col + 4` of row `row` (`col` a multiple of 4) of a
/// `rows × cols` row-major matrix, skipping any that fall outside it. One 128-bit store when
/// all four lie inside and are aligned (`cols % 4 == 0`), else up to four scalar stores.
///
/// # Safety
/// When `row < rows`, `matrix` must point to a writable row-major `rows × cols` f32 matrix, 16-byte
/// aligned whenever `cols % 4 == 0`, and `col` must be a multiple of 4; elements outside the matrix
/// are not touched.
#[inline(always)]
pub unsafe fn store4_or_partial(
    matrix: *mut f32,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
    value: f32x4,
) {
    if row >= rows {
        return;
    }
    if cols % 4 == 0 && col + 4 <= cols {
        unsafe { write4(matrix.add(at(row, col, cols)), value) };
    } else {
        // Unrolled so the four lanes stay in registers (a loop here would index them).
        seq!(i in 0..4 {
            if col + i < cols {
                unsafe { *matrix.add(at(row, col + i, cols)) = value[i] };
            }
        });
    }
}

/// `acc[i][j] += a[i] · b[j]` for every `i`, `j`: the outer product at the heart of every
/// register-blocked rung. Unrolled at compile time (up to 8 × 16), so that `acc`, `a` and `b`
/// are indexed by constants only and stay in registers; LLVM alone stops unrolling at about
/// 64 fmas and the accumulators would move to local memory.
#[inline(always)]
pub fn outer_product<const M: usize, const N: usize>(
    acc: &mut [[f32; N]; M],
    a: &[f32; M],
    b: &[f32; N],
) {
    const { assert!(M <= 8 && N <= 16, "outer_product unrolls at most 8 × 16") };
    seq!(i in 0..8 {
        if i < M {
            seq!(j in 0..16 {
                if j < N {
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
                }
            });
        }
    });
}

/// The shared-state-space address of a pointer into shared memory: what `cp.async` (and
/// `ldmatrix`) take, rather than the generic address Rust pointers hold.
#[inline(always)]
pub fn shared_address<T>(ptr: *const T) -> u32 {
    let address: u32;
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 wide; cvta.to.shared.u64 wide, {generic}; cvt.u32.u64 {address}, wide; }}",
            generic = in(reg64) ptr as u64,
            address = out(reg32) address,
            options(pure, nomem, nostack),
        )
    };
    address
}

/// `base` moved on by `count · size` bytes, as one `mad.wide.u32` (a full 64-bit product of
/// two 32-bit factors, so it cannot wrap). Written in PTX so that LLVM cannot split a
/// loop-invariant part off the offset and keep it alive across iterations: a kernel that issues
/// many copies per step then holds one base pointer and one row length instead of a 64-bit
/// pointer per copy.
#[inline(always)]
pub fn byte_offset<T>(base: *const T, count: u32, size: u32) -> *const T {
    let moved: u64;
    unsafe {
        core::arch::asm!(
            "mad.wide.u32 {moved}, {count}, {size}, {base};",
            moved = out(reg64) moved,
            count = in(reg32) count,
            size = in(reg32) size,
            base = in(reg64) base as u64,
            options(pure, nomem, nostack),
        )
    };
    moved as *const T
}

/// `cp.async` of 4 bytes from global `src` to the shared-memory address `dst` (see
/// [`shared_address`]), without passing through registers: the copy runs in the background
/// until [`wait_async_copies`]. When `valid` is false nothing is read and `dst` is filled with
/// zeros (the copy's source size is 0), so `src` need only be some valid address.
///
/// # Safety
/// `dst` must be a 4-byte-aligned shared-state-space address of 4 bytes inside this block's dynamic
/// shared memory; `src` must be a 4-byte-aligned global address, readable when `valid`. The
/// destination must not be read before this thread has waited for the copy ([`wait_async_copies`])
/// and, for other threads, a barrier after that.
#[inline(always)]
pub unsafe fn copy_async_4(dst: u32, src: *const f32, valid: bool) {
    let src_bytes: u32 = if valid { 4 } else { 0 };
    unsafe {
        core::arch::asm!(
            "cp.async.ca.shared.global [{dst}], [{src}], 4, {src_bytes};",
            dst = in(reg32) dst,
            src = in(reg64) src,
            src_bytes = in(reg32) src_bytes,
            options(nostack),
        )
    };
}

/// `cp.async` of 16 bytes (both addresses 16-byte aligned, any element type), bypassing L1
/// (`.cg`). When `valid` is false nothing is read and `dst` is filled with zeros.
///
/// # Safety
/// `dst` must be a 16-byte-aligned shared-state-space address of 16 bytes inside this block's
/// dynamic shared memory; `src` must be a 16-byte-aligned global address of 16 bytes, readable when
/// `valid`. The destination must not be read before the copy has been waited for
/// ([`wait_async_copies`], then a barrier for other threads).
#[inline(always)]
pub unsafe fn copy_async_16<T>(dst: u32, src: *const T, valid: bool) {
    // SAFETY: the caller's contract; 16 bytes are read when valid, none otherwise.
    unsafe { copy_async_16_partial(dst, src, if valid { 16 } else { 0 }) };
}

/// `cp.async` of 16 bytes of which only the first `src_bytes` (0 to 16) are read from `src`;
/// the rest of `dst` is filled with zeros (`.cg`, as [`copy_async_16`]). For a piece that
/// runs past the end of a row.
///
/// # Safety
/// As [`copy_async_16`], with `src_bytes ≤ 16` and only the first `src_bytes` bytes at `src`
/// readable (none when 0).
#[inline(always)]
pub unsafe fn copy_async_16_partial<T>(dst: u32, src: *const T, src_bytes: u32) {
    unsafe {
        core::arch::asm!(
            "cp.async.cg.shared.global [{dst}], [{src}], 16, {src_bytes};",
            dst = in(reg32) dst,
            src = in(reg64) src,
            src_bytes = in(reg32) src_bytes,
            options(nostack),
        )
    };
}

/// [`copy_async_4`] with `valid` given as `cp.async`'s `ignore-src` predicate rather than as a
/// source size. Same effect; but ptxas maps the predicate straight onto the copy instruction's
/// own predicate, where from a source size held in a register it may derive address arithmetic
/// per copy. Used where many copies per step are issued (v13).
///
/// # Safety
/// That of [`copy_async_4`].
#[inline(always)]
pub unsafe fn copy_async_4_if(dst: u32, src: *const f32, valid: bool) {
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred ignore; setp.eq.u32 ignore, {valid}, 0; cp.async.ca.shared.global [{dst}], [{src}], 4, ignore; }}",
            dst = in(reg32) dst,
            src = in(reg64) src,
            valid = in(reg32) valid as u32,
            options(nostack),
        )
    };
}

/// [`copy_async_16`] with `valid` given as the `ignore-src` predicate (see [`copy_async_4_if`]).
///
/// # Safety
/// That of [`copy_async_16`].
#[inline(always)]
pub unsafe fn copy_async_16_if<T>(dst: u32, src: *const T, valid: bool) {
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred ignore; setp.eq.u32 ignore, {valid}, 0; cp.async.cg.shared.global [{dst}], [{src}], 16, ignore; }}",
            dst = in(reg32) dst,
            src = in(reg64) src,
            valid = in(reg32) valid as u32,
            options(nostack),
        )
    };
}

/// Closes the group of `cp.async` copies this thread issued since the last commit.
#[inline(always)]
pub fn commit_async_copies() {
    unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack)) };
}

/// Waits until at most `PENDING` of this thread's committed copy groups are still in flight.
/// Other threads' copies become visible only after a barrier as well.
#[inline(always)]
pub fn wait_async_copies<const PENDING: u32>() {
    unsafe { core::arch::asm!("cp.async.wait_group {n};", n = const PENDING, options(nostack)) };
}

/// Declares launch bounds for a kernel, like CUDA's `__launch_bounds__(max_threads,
/// min_blocks)`. Rust has no attribute for this, so the macro exports a constant named
/// `launch_bounds__<entry>`; `build.rs` turns it into the PTX directives
/// `.maxntid max_threads, 1, 1` and `.minnctapersm min_blocks` on that entry, and ptxas then
/// keeps the kernel within `65536 / (max_threads · min_blocks)` registers per thread so that
/// `min_blocks` blocks fit on one SM.
///
/// A fourth number, `cluster`, asks for thread-block clusters of that many blocks along x
/// (`.reqnctapercluster cluster, 1, 1`, like CUDA's `__cluster_dims__`): every launch of the
/// entry then runs in such clusters, and its grid's x must be a multiple of `cluster`.
#[macro_export]
macro_rules! launch_bounds {
    ($entry:ident, $max_threads:expr, $min_blocks:expr) => {
        $crate::launch_bounds!($entry, $max_threads, $min_blocks, 0);
    };
    ($entry:ident, $max_threads:expr, $min_blocks:expr, $cluster:expr) => {
        const _: () = {
            #[unsafe(export_name = concat!("launch_bounds__", stringify!($entry)))]
            #[used]
            static BOUNDS: [u32; 3] = [$max_threads, $min_blocks, $cluster];
        };
    };
}

/// Writes `v0, v1` to elements `col, col + 1` of row `row` of a `rows × cols` row-major fp32
/// matrix, skipping any outside it: one 64-bit store when both lie inside and are 8-byte
/// aligned (`col` even and `cols % 2 == 0`), else up to two scalar stores.
///
/// # Safety
/// When `row < rows`, `matrix` must point to a writable row-major `rows × cols` f32 matrix (element
/// (`row`, `col`) at offset `row·cols + col`), and when `cols` is even, `matrix` must be 8-byte
/// aligned and `col` even (the 64-bit store assumes it); elements outside the matrix are not
/// touched.
#[inline(always)]
pub unsafe fn store2_or_partial(
    matrix: *mut f32,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
    v0: f32,
    v1: f32,
) {
    if row >= rows {
        return;
    }
    let at_col = unsafe { matrix.add(at(row, col, cols)) };
    if cols % 2 == 0 && col + 2 <= cols {
        unsafe {
            (at_col as *mut core::simd::f32x2).write(core::simd::f32x2::from_array([v0, v1]))
        };
    } else {
        if col < cols {
            unsafe { at_col.write(v0) };
        }
        if col + 1 < cols {
            unsafe { at_col.add(1).write(v1) };
        }
    }
}

/// Writes two fp16 values packed in `pair` (low half first) to elements `col, col + 1` of row
/// `row` of a `rows × cols` row-major fp16 matrix, skipping any outside it: one 32-bit store
/// when both lie inside and are 4-byte aligned, else up to two 16-bit stores.
///
/// # Safety
/// When `row < rows`, `matrix` must point to a writable row-major `rows × cols` fp16 matrix, and
/// when `cols` is even, `matrix` must be 4-byte aligned and `col` even (the 32-bit store assumes
/// it); elements outside the matrix are not touched.
#[inline(always)]
pub unsafe fn store_f16x2_or_partial(
    matrix: *mut u16,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
    pair: u32,
) {
    if row >= rows {
        return;
    }
    let at_col = unsafe { matrix.add(at(row, col, cols)) };
    if cols % 2 == 0 && col + 2 <= cols {
        unsafe { (at_col as *mut u32).write(pair) };
    } else {
        if col < cols {
            unsafe { at_col.write(pair as u16) };
        }
        if col + 1 < cols {
            unsafe { at_col.add(1).write((pair >> 16) as u16) };
        }
    }
}

/// Writes four fp16 values, packed two per register in `low` (elements `col, col + 1`) and
/// `high` (`col + 2, col + 3`), to row `row` of a `rows × cols` row-major fp16 matrix, skipping
/// any outside it: one 64-bit store when all four lie inside and `cols` is a multiple of 4 (so
/// that the address is 8-byte aligned), else up to four 16-bit stores.
///
/// # Safety
/// When `row < rows`, `matrix` must point to a writable row-major `rows × cols` fp16 matrix,
/// 8-byte aligned, and `col` must be a multiple of 4; elements outside the matrix are not
/// touched.
#[inline(always)]
pub unsafe fn store_f16x4_or_partial(
    matrix: *mut u16,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
    low: u32,
    high: u32,
) {
    if row >= rows {
        return;
    }
    let at_col = unsafe { matrix.add(at(row, col, cols)) };
    if cols % 4 == 0 && col + 4 <= cols {
        // SAFETY: four elements inside the matrix, 8-byte aligned (base, row stride and col).
        unsafe {
            core::arch::asm!(
                "st.global.v2.b32 [{at}], {{{low}, {high}}};",
                at = in(reg64) at_col,
                low = in(reg32) low,
                high = in(reg32) high,
                options(nostack),
            )
        };
    } else {
        let values = [
            low as u16,
            (low >> 16) as u16,
            high as u16,
            (high >> 16) as u16,
        ];
        seq!(i in 0..4 {
            if col + i < cols {
                // SAFETY: (row, col + i) lies inside the matrix.
                unsafe { at_col.add(i).write(values[i]) };
            }
        });
    }
}

/// `value` of lane `lane ^ mask` of the warp: `shfl.sync.bfly`, which every lane of the warp
/// must execute together.
#[inline(always)]
pub fn shuffle_xor_u32(value: u32, mask: u32) -> u32 {
    let out: u32;
    // SAFETY: a warp-collective register exchange; the caller has every lane execute it.
    unsafe {
        core::arch::asm!(
            "shfl.sync.bfly.b32 {o}, {i}, {mask}, 0x1f, 0xffffffff;",
            o = out(reg32) out, i = in(reg32) value, mask = in(reg32) mask,
            options(nomem, nostack),
        )
    };
    out
}

/// Eight consecutive fp16 (or bf16) elements `col..col + 8` of row `row` of a `rows × cols`
/// row-major matrix whose rows are `ld` elements apart, zeros outside it, packed two per
/// register (low half first), by 16-bit loads: the path for rows whose starts are not 16-byte
/// aligned, where `cp.async` cannot copy 16 bytes.
///
/// # Safety
/// When `row < rows`, `matrix` must point to a readable row-major `rows × cols` matrix of 2-byte
/// elements with rows `ld ≥ cols` apart, 2-byte aligned; elements outside it are not read.
#[inline(always)]
pub unsafe fn load8_f16_or_zero(
    matrix: *const u16,
    ld: u32,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
) -> [u32; 4] {
    let mut halves = [0u32; 8];
    if row < rows {
        seq!(i in 0..8 {
            if col + i < cols {
                // SAFETY: (row, col + i) lies inside the matrix.
                halves[i] = unsafe { *matrix.add(at(row, col + i, ld)) } as u32;
            }
        });
    }
    [
        halves[0] | halves[1] << 16,
        halves[2] | halves[3] << 16,
        halves[4] | halves[5] << 16,
        halves[6] | halves[7] << 16,
    ]
}

/// Stores 16 bytes to the shared-memory address `dst` (16-byte aligned, see
/// [`shared_address`]) with one `st.shared.v4.b32`.
///
/// # Safety
/// `dst` must be a 16-byte-aligned shared-state-space address with 16 writable bytes inside this
/// block's dynamic shared memory.
#[inline(always)]
pub unsafe fn store_shared_16(dst: u32, value: [u32; 4]) {
    unsafe {
        core::arch::asm!(
            "st.shared.v4.b32 [{dst}], {{{v0}, {v1}, {v2}, {v3}}};",
            dst = in(reg32) dst,
            v0 = in(reg32) value[0],
            v1 = in(reg32) value[1],
            v2 = in(reg32) value[2],
            v3 = in(reg32) value[3],
            options(nostack),
        )
    };
}

/// 16 bytes from the shared-memory address `dst` (16-byte aligned) with one `ld.shared.v4.b32`.
///
/// # Safety
/// `src` must be a 16-byte-aligned shared-state-space address with 16 initialized bytes inside this
/// block's dynamic shared memory.
#[inline(always)]
pub unsafe fn load_shared_16(src: u32) -> [u32; 4] {
    let (v0, v1, v2, v3): (u32, u32, u32, u32);
    unsafe {
        core::arch::asm!(
            "ld.shared.v4.b32 {{{v0}, {v1}, {v2}, {v3}}}, [{src}];",
            src = in(reg32) src,
            v0 = out(reg32) v0,
            v1 = out(reg32) v1,
            v2 = out(reg32) v2,
            v3 = out(reg32) v3,
            options(readonly, nostack),
        )
    };
    [v0, v1, v2, v3]
}

/// The 16-bit value at the shared-memory address `src`, zero-extended.
///
/// # Safety
/// `src` must be a 2-byte-aligned shared-state-space address inside this block's dynamic shared
/// memory.
#[inline(always)]
pub unsafe fn load_shared_u16(src: u32) -> u32 {
    let value: u32;
    unsafe {
        core::arch::asm!(
            "{{ .reg .b16 h; ld.shared.b16 h, [{src}]; cvt.u32.u16 {value}, h; }}",
            src = in(reg32) src,
            value = out(reg32) value,
            options(readonly, nostack),
        )
    };
    value
}

/// The 32-bit value at the shared-memory address `src` (4-byte aligned).
///
/// # Safety
/// `src` must be a 4-byte-aligned shared-state-space address inside this block's dynamic shared
/// memory.
#[inline(always)]
pub unsafe fn load_shared_u32(src: u32) -> u32 {
    let value: u32;
    unsafe {
        core::arch::asm!("ld.shared.u32 {v}, [{src}];", v = out(reg32) value, src = in(reg32) src,
            options(readonly, nostack))
    };
    value
}

/// Stores the 32-bit value `value` at the shared-memory address `dst` (4-byte aligned).
///
/// # Safety
/// `dst` must be a 4-byte-aligned shared-state-space address inside this block's dynamic shared
/// memory.
#[inline(always)]
pub unsafe fn store_shared_u32(dst: u32, value: u32) {
    unsafe {
        core::arch::asm!("st.shared.u32 [{dst}], {v};", dst = in(reg32) dst, v = in(reg32) value,
            options(nostack))
    };
}

/// Stores the 16-bit value `value` at the shared-memory address `dst`.
///
/// # Safety
/// `dst` must be a 2-byte-aligned shared-state-space address inside this block's dynamic shared
/// memory.
#[inline(always)]
pub unsafe fn store_shared_u16(dst: u32, value: u32) {
    unsafe {
        core::arch::asm!(
            "{{ .reg .b16 h; cvt.u16.u32 h, {value}; st.shared.b16 [{dst}], h; }}",
            dst = in(reg32) dst,
            value = in(reg32) value,
            options(nostack),
        )
    };
}

/// Bytes of dynamic shared memory this launch was given (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_shared_bytes() -> u32 {
    let bytes: u32;
    unsafe {
        core::arch::asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes,
            options(pure, nomem, nostack))
    };
    bytes
}

/// Stops the whole grid: the host sees a launch error instead of a wrong answer.
#[inline(always)]
pub fn trap() -> ! {
    unsafe { nvptx::trap() }
}

/// `ld.global.b16` of the 16 bits at `at`.
///
/// # Safety
/// `at` must be the address of two readable bytes in global memory, 2-byte aligned.
#[inline(always)]
pub unsafe fn load_global_b16(at: u64) -> u16 {
    let bits: u16;
    // SAFETY: as the caller promises. Not `pure`: the load must stay under its bounds check.
    unsafe {
        core::arch::asm!("ld.global.b16 {v}, [{at}];", v = out(reg16) bits, at = in(reg64) at,
            options(readonly, nostack))
    };
    bits
}

/// `base + index · stride`, as one `mad.lo.u64` that LLVM may neither hoist out of a loop nor
/// split into per-slot pointers: left to itself it keeps a 64-bit pointer per load slot and per
/// row of C alive across the whole k loop, which costs some 30 registers (109 against the
/// register budget of two or more blocks per SM). Not `pure`, for exactly that reason.
#[inline(always)]
pub fn opaque_mad(index: u64, stride: u64, base: u64) -> u64 {
    let out: u64;
    // SAFETY: a register computation.
    unsafe {
        core::arch::asm!(
            "mad.lo.u64 {out}, {index}, {stride}, {base};",
            out = out(reg64) out,
            index = in(reg64) index,
            stride = in(reg64) stride,
            base = in(reg64) base,
            options(nomem, nostack),
        )
    };
    out
}
