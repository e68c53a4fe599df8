//! The FP8 baseline: cuBLASLt's FP8 GEMM (`cublasLtMatmul` with `CUDA_R_8F_E4M3` or
//! `CUDA_R_8F_E5M2` operands, per-tensor f32 scales, fp32 accumulation and an fp16 result),
//! called through cudarc's raw bindings, for timing and checking the FP8 rung against.
//!
//! cuBLASLt's FP8 kernels take only the "TN" form (the first operand transposed, the second
//! not), k and the leading dimensions multiples of 16 and 16-byte-aligned pointers; with
//! row-major A `[m, k]` and B stored `[n, k]` (`C = A · Bᵀ`) the TN form is what the buffers
//! already are, as [`Fp8Blas::matmul`] explains.

use crate::element::{Fp8E4m3, Fp8E5m2, Fp16Bits};
use crate::{GemmError, GemmShape};
use cudarc::cublaslt::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use std::any::TypeId;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

/// Which FP8 format both operands have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// OCP E4M3FN (`CUDA_R_8F_E4M3`, [`Fp8E4m3`]): bias 7, no infinities, ±448 at most.
    E4m3,
    /// OCP E5M2 (`CUDA_R_8F_E5M2`, [`Fp8E5m2`]): bias 15, IEEE infinities and NaNs, ±57344 at
    /// most.
    E5m2,
}

impl Fp8Format {
    /// Its name in messages: `fp8-e4m3` or `fp8-e5m2`, the
    /// [`NAME`](crate::element::Element::NAME) of its element type.
    pub fn name(self) -> &'static str {
        match self {
            Fp8Format::E4m3 => "fp8-e4m3",
            Fp8Format::E5m2 => "fp8-e5m2",
        }
    }

    /// cuBLASLt's data type for it.
    fn data_type(self) -> sys::cudaDataType {
        match self {
            Fp8Format::E4m3 => sys::cudaDataType::CUDA_R_8F_E4M3,
            Fp8Format::E5m2 => sys::cudaDataType::CUDA_R_8F_E5M2,
        }
    }
}

/// The workspace cuBLASLt may use: NVIDIA recommends 32 MiB on Hopper (4 MiB before it), and
/// the algorithm search is told exactly this much.
const WORKSPACE_BYTES: usize = 32 << 20;

/// What cuBLASLt's FP8 kernels need k and the leading dimensions to be multiples of.
const FP8_MULTIPLE: usize = 16;

/// `cublasOperation_t` values, as the `TRANSA`/`TRANSB` attributes take them (`int32_t`).
const OP_N: i32 = 0;
const OP_T: i32 = 1;

/// `Ok` for `CUBLAS_STATUS_SUCCESS`, else a [`GemmError::Cublas`] naming `call`.
fn check(status: sys::cublasStatus_t, call: &str) -> Result<(), GemmError> {
    if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(GemmError::Cublas(format!("{call} failed: {status:?}")))
    }
}

/// A cuBLASLt handle, destroyed on drop.
struct Handle(sys::cublasLtHandle_t);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle was created by cublasLtCreate and is destroyed once, here. A
        // failure cannot be reported from a drop; the handle is gone either way.
        let _ = unsafe { sys::cublasLtDestroy(self.0) };
    }
}

/// A matmul descriptor, destroyed on drop.
struct MatmulDesc(sys::cublasLtMatmulDesc_t);

impl MatmulDesc {
    /// A descriptor with fp32 compute and fp32 scale type (alpha, beta and the A/B scales are
    /// f32), as cuBLASLt's FP8 kernels require.
    fn new() -> Result<Self, GemmError> {
        let mut desc = std::ptr::null_mut();
        // SAFETY: `desc` is a valid place for the created descriptor.
        let status = unsafe {
            sys::cublasLtMatmulDescCreate(
                &mut desc,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cudaDataType::CUDA_R_32F,
            )
        };
        check(status, "cublasLtMatmulDescCreate")?;
        Ok(MatmulDesc(desc))
    }

    /// Sets attribute `attr` to `value` (whose type must be the one cuBLASLt documents for it).
    fn set<V: Copy>(
        &self,
        attr: sys::cublasLtMatmulDescAttributes_t,
        value: &V,
    ) -> Result<(), GemmError> {
        // SAFETY: the descriptor is live; `value` points to `size_of::<V>()` readable bytes,
        // which cuBLASLt copies before returning.
        let status = unsafe {
            sys::cublasLtMatmulDescSetAttribute(
                self.0,
                attr,
                (value as *const V).cast::<c_void>(),
                std::mem::size_of::<V>(),
            )
        };
        check(status, &format!("cublasLtMatmulDescSetAttribute({attr:?})"))
    }

    /// Points the two scale attributes at the device addresses `scale_a` and `scale_b`.
    ///
    /// cuBLASLt's first operand is our B and its second our A (see [`Fp8Blas::matmul`]), so
    /// its `A_SCALE_POINTER` is our scale_b and its `B_SCALE_POINTER` our scale_a. With
    /// per-tensor scales the product is the same either way, so a swap here would not show in
    /// any result; it matters as soon as scales become per-row.
    fn set_scales(&self, scale_a: u64, scale_b: u64) -> Result<(), GemmError> {
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        self.set(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b)?;
        self.set(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a)
    }
}

impl Drop for MatmulDesc {
    fn drop(&mut self) {
        // SAFETY: created by cublasLtMatmulDescCreate, destroyed once, here.
        let _ = unsafe { sys::cublasLtMatmulDescDestroy(self.0) };
    }
}

/// A matrix layout, destroyed on drop.
struct Layout(sys::cublasLtMatrixLayout_t);

impl Layout {
    /// A column-major `rows × cols` layout of `data` elements with leading dimension `ld`.
    fn new(
        data: sys::cudaDataType,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<Self, GemmError> {
        let mut layout = std::ptr::null_mut();
        // SAFETY: `layout` is a valid place for the created descriptor.
        let status = unsafe {
            sys::cublasLtMatrixLayoutCreate(&mut layout, data, rows as u64, cols as u64, ld as i64)
        };
        check(
            status,
            &format!("cublasLtMatrixLayoutCreate({data:?}, {rows}×{cols}, ld {ld})"),
        )?;
        Ok(Layout(layout))
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: created by cublasLtMatrixLayoutCreate, destroyed once, here.
        let _ = unsafe { sys::cublasLtMatrixLayoutDestroy(self.0) };
    }
}

/// A matmul preference (the algorithm search's constraints), destroyed on drop.
struct Preference(sys::cublasLtMatmulPreference_t);

impl Preference {
    fn new() -> Result<Self, GemmError> {
        let mut pref = std::ptr::null_mut();
        // SAFETY: `pref` is a valid place for the created descriptor.
        let status = unsafe { sys::cublasLtMatmulPreferenceCreate(&mut pref) };
        check(status, "cublasLtMatmulPreferenceCreate")?;
        Ok(Preference(pref))
    }

    /// Sets attribute `attr` to `value` (whose type must be the one cuBLASLt documents for it).
    fn set<V: Copy>(
        &self,
        attr: sys::cublasLtMatmulPreferenceAttributes_t,
        value: &V,
    ) -> Result<(), GemmError> {
        // SAFETY: the preference is live; `value` points to `size_of::<V>()` readable bytes,
        // which cuBLASLt copies before returning.
        let status = unsafe {
            sys::cublasLtMatmulPreferenceSetAttribute(
                self.0,
                attr,
                (value as *const V).cast::<c_void>(),
                std::mem::size_of::<V>(),
            )
        };
        check(
            status,
            &format!("cublasLtMatmulPreferenceSetAttribute({attr:?})"),
        )
    }
}

impl Drop for Preference {
    fn drop(&mut self) {
        // SAFETY: created by cublasLtMatmulPreferenceCreate, destroyed once, here.
        let _ = unsafe { sys::cublasLtMatmulPreferenceDestroy(self.0) };
    }
}

/// What a plan depends on: the problem, and the alignment of the buffers, which limits the
/// algorithms that may run (the search assumes 256-byte-aligned buffers unless told less).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    format: Fp8Format,
    m: usize,
    n: usize,
    k: usize,
    fast_accumulation: bool,
    /// The alignment in bytes (a power of two from 16 to 256) of A, B and C.
    alignment: [u32; 3],
}

/// The descriptors and the algorithm chosen for one [`PlanKey`], kept so that repeated
/// (timed) calls pay neither descriptor creation nor the heuristic search.
struct Plan {
    desc: MatmulDesc,
    /// cuBLASLt's A: our B's buffer.
    lt_a: Layout,
    /// cuBLASLt's B: our A's buffer.
    lt_b: Layout,
    /// C and D (the same buffer): our C.
    lt_cd: Layout,
    algo: sys::cublasLtMatmulAlgo_t,
}

impl Plan {
    /// Builds the descriptors for `key` and asks cuBLASLt's heuristic for its first algorithm.
    /// `scales` are the scales' device addresses (A's, B's): the scale attributes are set before the
    /// search so that it sees the scaled problem that will run.
    fn new(handle: &Handle, key: &PlanKey, scales: (u64, u64)) -> Result<Self, GemmError> {
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        use sys::cublasLtMatmulPreferenceAttributes_t as Pref;
        let PlanKey {
            format, m, n, k, ..
        } = *key;
        let desc = MatmulDesc::new()?;
        desc.set(Attr::CUBLASLT_MATMUL_DESC_TRANSA, &OP_T)?;
        desc.set(Attr::CUBLASLT_MATMUL_DESC_TRANSB, &OP_N)?;
        // int8_t: 1 = keep the whole reduction in the tensor cores' fp32 accumulators, 0 =
        // cuBLASLt's default, promoting partial sums into a separate fp32 sum periodically.
        let fast: i8 = key.fast_accumulation.into();
        desc.set(Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast)?;
        desc.set_scales(scales.0, scales.1)?;

        // The layouts, as stored (before TRANSA/TRANSB apply); see `Fp8Blas::matmul`.
        let fp8 = format.data_type();
        let lt_a = Layout::new(fp8, k, n, k)?;
        let lt_b = Layout::new(fp8, k, m, k)?;
        let lt_cd = Layout::new(sys::cudaDataType::CUDA_R_16F, n, m, n)?;

        let pref = Preference::new()?;
        let workspace = WORKSPACE_BYTES as u64;
        pref.set(Pref::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace)?;
        // cuBLASLt's A is our B, its B our A; C and D are our C.
        let [align_a, align_b, align_c] = key.alignment;
        pref.set(Pref::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b)?;
        pref.set(Pref::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a)?;
        pref.set(Pref::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c)?;
        pref.set(Pref::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c)?;

        let problem = format!(
            "{} {m}×{n}×{k} (fast accumulation {})",
            format.name(),
            if key.fast_accumulation { "on" } else { "off" }
        );
        let hint = match format {
            Fp8Format::E4m3 => "",
            // cuBLASLt's FP8 type table lists E4M3×E4M3, E4M3×E5M2 and E5M2×E4M3 only.
            Fp8Format::E5m2 => {
                "; note that cuBLASLt's documented FP8 combinations do not include E5M2 × E5M2"
            }
        };
        // SAFETY: all-zero bits are a valid value of this C struct: integers, a float, an
        // opaque array and a status whose 0 is CUBLAS_STATUS_SUCCESS. cuBLASLt overwrites it,
        // and it is read only when cuBLASLt says it wrote it (count ≥ 1).
        let mut result: sys::cublasLtMatmulHeuristicResult_t = unsafe { std::mem::zeroed() };
        let mut count: std::ffi::c_int = 0;
        // SAFETY: the handle, descriptor, layouts and preference are live; `result` has room
        // for the one result asked for and `count` receives how many were written.
        let status = unsafe {
            sys::cublasLtMatmulAlgoGetHeuristic(
                handle.0,
                desc.0,
                lt_a.0,
                lt_b.0,
                lt_cd.0,
                lt_cd.0,
                pref.0,
                1,
                &mut result,
                &mut count,
            )
        };
        if status != sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(GemmError::Cublas(format!(
                "cublasLtMatmulAlgoGetHeuristic for {problem} failed: {status:?}{hint}"
            )));
        }
        if count < 1 {
            return Err(GemmError::Cublas(format!(
                "cublasLtMatmulAlgoGetHeuristic found no algorithm for {problem}{hint}"
            )));
        }
        check(
            result.state,
            &format!("the algorithm cublasLtMatmulAlgoGetHeuristic returned for {problem}"),
        )?;
        if result.workspaceSize > WORKSPACE_BYTES {
            return Err(GemmError::Cublas(format!(
                "cublasLtMatmulAlgoGetHeuristic returned an algorithm needing {} bytes of workspace for {problem}, over the {WORKSPACE_BYTES} allowed",
                result.workspaceSize
            )));
        }
        Ok(Plan {
            desc,
            lt_a,
            lt_b,
            lt_cd,
            algo: result.algo,
        })
    }
}

/// Everything cuBLASLt calls touch, used under one lock.
struct State {
    /// Dropped first: descriptors before the handle.
    plans: HashMap<PlanKey, Plan>,
    workspace: CudaSlice<u8>,
    handle: Handle,
}

// SAFETY: the handle and descriptors are host objects that cuBLASLt lets any thread use, one
// call at a time; `State` is only reached through `Fp8Blas`'s mutex, which provides that.
unsafe impl Send for State {}

/// A cuBLASLt handle on one stream, with its workspace, for FP8 GEMMs: the FP8 baseline.
pub struct Fp8Blas {
    state: Mutex<State>,
    stream: Arc<CudaStream>,
}

impl Fp8Blas {
    /// Creates the handle and a 32 MiB workspace on `stream`.
    ///
    /// Fails with [`GemmError::Cublas`] when libcublasLt cannot be found or the handle cannot
    /// be created, with [`GemmError::UnsupportedDevice`] on a GPU older than compute capability
    /// 8.9 (no FP8 tensor cores), and with [`GemmError::Cuda`] when the workspace cannot be
    /// allocated.
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, GemmError> {
        // SAFETY: only tries to open the library (dlopen); nothing is called in it.
        if !unsafe { sys::is_culib_present() } {
            return Err(GemmError::Cublas(
                "libcublasLt.so (CUDA 13) was not found: add the CUDA toolkit's library directory, e.g. /usr/local/cuda/lib64, to LD_LIBRARY_PATH".into(),
            ));
        }
        let context = stream.context();
        let (major, minor) = context
            .compute_capability()
            .map_err(|e| GemmError::cuda("reading the compute capability", e))?;
        if (major, minor) < (8, 9) {
            return Err(GemmError::UnsupportedDevice {
                name: context.name().unwrap_or_else(|_| "unknown".into()),
                capability: (major, minor),
                needed: "compute capability 8.9 or newer (Ada, Hopper, Blackwell) for cuBLASLt's FP8 GEMM",
            });
        }
        context
            .bind_to_thread()
            .map_err(|e| GemmError::cuda("binding the CUDA context for cuBLASLt", e))?;
        let workspace = stream
            .alloc_zeros::<u8>(WORKSPACE_BYTES)
            .map_err(|e| GemmError::cuda("allocating the 32 MiB cuBLASLt workspace", e))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: `handle` is a valid place for the created handle; the library is present.
        check(
            unsafe { sys::cublasLtCreate(&mut handle) },
            "cublasLtCreate",
        )?;
        Ok(Fp8Blas {
            state: Mutex::new(State {
                plans: HashMap::new(),
                workspace,
                handle: Handle(handle),
            }),
            stream,
        })
    }

    /// The stream the GEMMs are queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Queues row-major `C[m, n] = fp16(scale_a · scale_b · A[m, k] · B[n, k]ᵀ)` with fp32
    /// accumulation, on the handle's stream.
    ///
    /// - `a`: A `[m, k]` row-major, and `b_nk`: B stored `[n, k]` row-major (an `nn.Linear`
    ///   weight), both FP8 of `format`, as bytes: buffers of any 1-byte element type (`u8`,
    ///   [`Fp8E4m3`], [`Fp8E5m2`]; the FP8 types must match `format`).
    /// - `c`: C `[m, n]` row-major, fp16 (`u16` bits or [`half::f16`]); overwritten (beta = 0).
    /// - `scale_a`, `scale_b`: one f32 each on the device (the first element is used), read by
    ///   the kernel when it runs (so they may be written by earlier work on the stream). Each
    ///   must be 16-byte aligned: cuBLASLt 13.1 on the H100 answered `NOT_SUPPORTED` from
    ///   `cublasLtMatmul` (after its heuristic had chosen an algorithm) for a scale pointer 4
    ///   bytes into a buffer, and ran once both were buffers of their own.
    /// - `fast_accumulation`: sets `CUBLASLT_MATMUL_DESC_FAST_ACCUM`: `true` keeps the whole
    ///   reduction in the tensor cores' fp32 accumulators, like a plain `wgmma` kernel; `false`
    ///   is cuBLASLt's default, which periodically promotes partial sums into a separate fp32
    ///   sum (slower, more accurate for long k).
    ///
    /// Refused before anything is queued: buffer lengths that do not match `shape` (A m·k, B
    /// n·k, C m·n), an empty scale buffer, k or n not multiples of 16, or A, B, C or a scale
    /// not 16-byte aligned (cuBLASLt's FP8 requirements).
    ///
    /// # The column-major mapping
    ///
    /// cuBLASLt is column-major, and a row-major matrix is its transpose read column-major. So
    /// row-major C `[m, n]` is the column-major n×m matrix Cᵀ (ld n), and we ask cuBLASLt for
    /// Cᵀ = B·Aᵀ = op(X)·op(Y) with
    /// - X = B's buffer: row-major `[n, k]` reads as the column-major k×n matrix Bᵀ (ld k), and
    ///   TRANSA = T turns it into the n×k matrix B;
    /// - Y = A's buffer: row-major `[m, k]` reads as the column-major k×m matrix Aᵀ (ld k),
    ///   taken as it is (TRANSB = N).
    ///
    /// That is the "TN" form cuBLASLt requires for FP8, with cuBLASLt's (m, n, k) = our
    /// (n, m, k). Because its first operand is our B, its A scale is our scale_b and its B
    /// scale our scale_a.
    #[allow(clippy::too_many_arguments)]
    pub fn matmul<T, H, A, B, C>(
        &self,
        format: Fp8Format,
        a: &A,
        b_nk: &B,
        c: &mut C,
        scale_a: &impl DevicePtr<f32>,
        scale_b: &impl DevicePtr<f32>,
        shape: &GemmShape,
        fast_accumulation: bool,
    ) -> Result<(), GemmError>
    where
        T: DeviceRepr + 'static,
        H: Fp16Bits,
        A: DevicePtr<T>,
        B: DevicePtr<T>,
        C: DevicePtrMut<H>,
    {
        // The element type: one byte, and the right format if it names one.
        if std::mem::size_of::<T>() != 1 {
            return Err(GemmError::Cublas(format!(
                "the FP8 baseline takes 1-byte elements for A and B, not {}-byte ones",
                std::mem::size_of::<T>()
            )));
        }
        let named = if TypeId::of::<T>() == TypeId::of::<Fp8E4m3>() {
            Some(Fp8Format::E4m3)
        } else if TypeId::of::<T>() == TypeId::of::<Fp8E5m2>() {
            Some(Fp8Format::E5m2)
        } else {
            None
        };
        if let Some(named) = named.filter(|&named| named != format) {
            return Err(GemmError::Cublas(format!(
                "the FP8 baseline was asked for {} but given {} buffers",
                format.name(),
                named.name()
            )));
        }

        // The shape and the buffers.
        let (m, n, k) = (shape.m, shape.n, shape.k);
        if m == 0 || n == 0 || k == 0 {
            return Err(GemmError::ZeroDimension { m, n, k });
        }
        shape.check_buffers(a.len(), b_nk.len(), c.len())?;
        for (operand, len) in [("scale_a", scale_a.len()), ("scale_b", scale_b.len())] {
            if len == 0 {
                return Err(GemmError::BufferTooShort {
                    operand,
                    needed: 1,
                    len,
                });
            }
        }
        if k % FP8_MULTIPLE != 0 || n % FP8_MULTIPLE != 0 {
            return Err(GemmError::Cublas(format!(
                "cuBLASLt's FP8 GEMM needs k and the leading dimensions (k for A and B, n for C) to be multiples of {FP8_MULTIPLE}; got k = {k}, n = {n}"
            )));
        }

        let stream: &CudaStream = &self.stream;
        let (a_ptr, _a_sync) = a.device_ptr(stream);
        let (b_ptr, _b_sync) = b_nk.device_ptr(stream);
        let (c_ptr, _c_sync) = c.device_ptr_mut(stream);
        let (scale_a_ptr, _scale_a_sync) = scale_a.device_ptr(stream);
        let (scale_b_ptr, _scale_b_sync) = scale_b.device_ptr(stream);
        let scales_ptr = (scale_a_ptr, scale_b_ptr);
        for (name, ptr) in [
            ("A", a_ptr),
            ("B", b_ptr),
            ("C", c_ptr),
            ("scale_a", scale_a_ptr),
            ("scale_b", scale_b_ptr),
        ] {
            if ptr % 16 != 0 {
                return Err(GemmError::Cublas(format!(
                    "cuBLASLt's FP8 GEMM needs 16-byte-aligned buffers, but {name} starts {} bytes past a 16-byte boundary",
                    ptr % 16
                )));
            }
        }
        // The alignment the algorithm may assume: the largest power of two dividing the
        // address, capped at 256 (the search's default assumption).
        let alignment = |ptr: u64| 1u32 << ptr.trailing_zeros().min(8);
        let key = PlanKey {
            format,
            m,
            n,
            k,
            fast_accumulation,
            alignment: [alignment(a_ptr), alignment(b_ptr), alignment(c_ptr)],
        };

        stream
            .context()
            .bind_to_thread()
            .map_err(|e| GemmError::cuda("binding the CUDA context for cuBLASLt", e))?;
        // A panic while the lock was held cannot leave a plan half made (a plan is inserted
        // only once complete), so a poisoned lock is still usable.
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let State {
            plans,
            workspace,
            handle,
        } = &mut *guard;
        let plan = match plans.entry(key) {
            std::collections::hash_map::Entry::Occupied(entry) => {
                let plan = entry.into_mut();
                // The scales may be another buffer than the one the plan was made with.
                plan.desc.set_scales(scale_a_ptr, scale_b_ptr)?;
                plan
            }
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert(Plan::new(handle, &key, scales_ptr)?)
            }
        };
        let (workspace_ptr, _workspace_sync) = workspace.device_ptr_mut(stream);
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: the handle and the plan's descriptors are live and used under the lock. The
        // buffers hold exactly what the layouts describe (lengths checked above: cuBLASLt's A
        // is our B, k×n with ld k = n·k bytes; its B our A, k×m with ld k = m·k bytes; C/D
        // n×m fp16 with ld n = m·n elements), and are 16-byte aligned with their alignment
        // given to the search. The scale pointers set on the descriptor point to `scale_a`
        // and `scale_b`, which hold at least one f32 each. The workspace holds WORKSPACE_BYTES. alpha and beta are
        // host f32 (the default pointer mode; fp32 scale type), read before the call returns.
        // Everything is queued on `stream`, and the sync guards above keep cudarc's event
        // tracking of the buffers in step with that.
        let status = unsafe {
            sys::cublasLtMatmul(
                handle.0,
                plan.desc.0,
                (&alpha as *const f32).cast::<c_void>(),
                b_ptr as *const c_void,
                plan.lt_a.0,
                a_ptr as *const c_void,
                plan.lt_b.0,
                (&beta as *const f32).cast::<c_void>(),
                c_ptr as *const c_void,
                plan.lt_cd.0,
                c_ptr as *mut c_void,
                plan.lt_cd.0,
                &plan.algo,
                workspace_ptr as *mut c_void,
                WORKSPACE_BYTES,
                stream.cu_stream() as sys::cudaStream_t,
            )
        };
        check(
            status,
            &format!(
                "cublasLtMatmul ({} {m}×{n}×{k}, fast accumulation {})",
                format.name(),
                if fast_accumulation { "on" } else { "off" }
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use cudarc::driver::{CudaContext, CudaView};

    #[test]
    fn format_names_are_the_element_names() {
        assert_eq!(Fp8Format::E4m3.name(), Fp8E4m3::NAME);
        assert_eq!(Fp8Format::E5m2.name(), Fp8E5m2::NAME);
    }

    #[test]
    fn fp8_blas_can_be_shared_between_threads() {
        fn send_sync<X: Send + Sync>() {}
        send_sync::<Fp8Blas>();
    }

    /// Never run: checks that the call forms the harness needs type-check (bytes or FP8
    /// element buffers, views, fp16 as `u16` or `half::f16`).
    #[allow(dead_code, clippy::too_many_arguments)]
    fn call_forms(
        blas: &Fp8Blas,
        bytes: &CudaSlice<u8>,
        e4m3: &CudaSlice<Fp8E4m3>,
        view: &CudaView<'_, Fp8E4m3>,
        c_bits: &mut CudaSlice<u16>,
        c_half: &mut CudaSlice<half::f16>,
        scales: &CudaSlice<f32>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        blas.matmul(
            Fp8Format::E5m2,
            bytes,
            bytes,
            c_bits,
            scales,
            scales,
            shape,
            true,
        )?;
        blas.matmul(
            Fp8Format::E4m3,
            e4m3,
            view,
            c_half,
            scales,
            scales,
            shape,
            false,
        )
    }

    /// A small deterministic generator (SplitMix64).
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Values whose products and their sums are exact in fp32 (and so in any accumulation
    /// order), so that only the final fp16 rounding separates cuBLASLt from the reference.
    fn exact_values<T: Element>(len: usize, seed: u64) -> Vec<T> {
        const SET: [f32; 9] = [-2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0];
        let mut state = seed;
        (0..len)
            .map(|_| T::from_f32(SET[(next(&mut state) % SET.len() as u64) as usize]))
            .collect()
    }

    fn open() -> (Arc<CudaStream>, Fp8Blas) {
        let ctx =
            CudaContext::new(0).unwrap_or_else(|e| panic!("these tests need a CUDA GPU: {e}"));
        let stream = ctx.new_stream().expect("a stream");
        let blas = Fp8Blas::new(stream.clone()).unwrap_or_else(|e| panic!("{e}"));
        (stream, blas)
    }

    /// Runs `format` at `m × n × k` through cuBLASLt and checks C against an f64 reference of
    /// `scale_a · scale_b · A · Bᵀ` rounded to fp16.
    fn check_product<T: Element>(
        stream: &Arc<CudaStream>,
        blas: &Fp8Blas,
        format: Fp8Format,
        (m, n, k): (usize, usize, usize),
        fast_accumulation: bool,
    ) -> Result<(), GemmError> {
        let shape = GemmShape::new(m, n, k)?;
        let a = exact_values::<T>(m * k, 1);
        let b = exact_values::<T>(n * k, 2);
        let (scale_a, scale_b) = (0.5f32, 4.0f32);
        let up = |e| GemmError::cuda("test upload", e);
        let a_dev = stream.clone_htod(&a).map_err(up)?;
        let b_dev = stream.clone_htod(&b).map_err(up)?;
        let scale_a_dev = stream.clone_htod(&[scale_a]).map_err(up)?;
        let scale_b_dev = stream.clone_htod(&[scale_b]).map_err(up)?;
        let mut c_dev = stream.alloc_zeros::<u16>(m * n).map_err(up)?;
        blas.matmul(
            format,
            &a_dev,
            &b_dev,
            &mut c_dev,
            &scale_a_dev,
            &scale_b_dev,
            &shape,
            fast_accumulation,
        )?;
        // A second call reuses the cached plan.
        blas.matmul(
            format,
            &a_dev,
            &b_dev,
            &mut c_dev,
            &scale_a_dev,
            &scale_b_dev,
            &shape,
            fast_accumulation,
        )?;
        let c = stream
            .clone_dtoh(&c_dev)
            .map_err(|e| GemmError::cuda("test download", e))?;
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|p| f64::from(a[i * k + p].to_f32()) * f64::from(b[j * k + p].to_f32()))
                    .sum();
                let want = <u16 as Element>::from_f32((dot * f64::from(scale_a * scale_b)) as f32);
                assert_eq!(
                    c[i * n + j],
                    want,
                    "{} {m}×{n}×{k} fast {fast_accumulation}: C[{i}, {j}] = {} but the reference is {}",
                    format.name(),
                    c[i * n + j].to_f32(),
                    want.to_f32()
                );
            }
        }
        Ok(())
    }

    #[test]
    #[ignore = "needs a CUDA GPU with FP8 (compute capability 8.9+) and libcublasLt: run with --ignored on a GPU machine"]
    fn e4m3_matches_the_reference() {
        let (stream, blas) = open();
        // Non-square, m not a multiple of 16: a swapped m and n or a transposed operand shows.
        for shape in [(40, 48, 96), (256, 512, 1024), (1, 16, 16)] {
            for fast in [false, true] {
                check_product::<Fp8E4m3>(&stream, &blas, Fp8Format::E4m3, shape, fast)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU with FP8 (compute capability 8.9+) and libcublasLt: run with --ignored on a GPU machine"]
    fn e5m2_matches_the_reference_or_is_refused_clearly() {
        let (stream, blas) = open();
        match check_product::<Fp8E5m2>(&stream, &blas, Fp8Format::E5m2, (40, 48, 96), true) {
            Ok(()) => println!("cuBLASLt ran E5M2 × E5M2"),
            Err(GemmError::Cublas(message)) => {
                println!("cuBLASLt refused E5M2 × E5M2: {message}");
                assert!(message.contains("E5M2"), "{message}");
            }
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU with FP8 (compute capability 8.9+) and libcublasLt: run with --ignored on a GPU machine"]
    fn invalid_calls_are_refused_before_launch() {
        let (stream, blas) = open();
        let (m, n, k) = (32, 32, 32);
        let shape = GemmShape::new(m, n, k).unwrap();
        let a = stream.alloc_zeros::<u8>(m * k + 16).unwrap();
        let b = stream.alloc_zeros::<u8>(n * k).unwrap();
        let mut c = stream.alloc_zeros::<u16>(m * n).unwrap();
        let scales = stream.clone_htod(&[1.0f32, 1.0]).unwrap();
        let a_exact = a.slice(..m * k);
        let a_misaligned = a.slice(1..m * k + 1);
        let run = |a: &CudaView<'_, u8>, c: &mut CudaSlice<u16>, s: &CudaView<'_, f32>, sh| {
            blas.matmul(Fp8Format::E4m3, a, &b, c, &scales, s, sh, false)
        };
        run(&a_exact, &mut c, &scales.slice(..1), &shape).expect("the valid call runs");
        let refusals = [
            run(&a_misaligned, &mut c, &scales.slice(..1), &shape),
            // 4 bytes into the buffer: the misplaced scale cuBLASLt refuses at run time.
            run(&a_exact, &mut c, &scales.slice(1..), &shape),
            run(&a_exact, &mut c, &scales.slice(..0), &shape),
            run(&a.slice(..m * k - 1), &mut c, &scales.slice(..1), &shape),
        ];
        for (what, result) in [
            "misaligned A",
            "misaligned scale_b",
            "no scale_b",
            "short A",
        ]
        .iter()
        .zip(refusals)
        {
            assert!(result.is_err(), "{what} was accepted");
            println!("{what}: {}", result.unwrap_err());
        }
        // k = 24 and n = 24 are not multiples of 16.
        for (m, n, k) in [(32, 32, 24), (32, 24, 32)] {
            let shape = GemmShape::new(m, n, k).unwrap();
            let a = stream.alloc_zeros::<u8>(m * k).unwrap();
            let b = stream.alloc_zeros::<u8>(n * k).unwrap();
            let mut c = stream.alloc_zeros::<u16>(m * n).unwrap();
            let result = blas.matmul(
                Fp8Format::E4m3,
                &a,
                &b,
                &mut c,
                &scales,
                &scales,
                &shape,
                false,
            );
            assert!(
                matches!(&result, Err(GemmError::Cublas(message)) if message.contains("multiples of 16")),
                "{m}×{n}×{k}: {result:?}"
            );
        }
        // E5M2 buffers asked for as E4M3.
        let e5m2 = stream.alloc_zeros::<Fp8E5m2>(m * k).unwrap();
        let e5m2_b = stream.alloc_zeros::<Fp8E5m2>(n * k).unwrap();
        let result = blas.matmul(
            Fp8Format::E4m3,
            &e5m2,
            &e5m2_b,
            &mut c,
            &scales,
            &scales,
            &shape,
            false,
        );
        assert!(result.is_err(), "wrong format accepted");
        stream.synchronize().unwrap();
    }
}
