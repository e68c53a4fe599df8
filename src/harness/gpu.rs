//! The harness's GPU: the [`Runtime`] on device 0 plus a cuBLAS handle for the baselines.

use crate::element::Element;
use crate::harness::cublaslt::{Fp8Blas, Fp8Format};
use crate::ladder::rungs::Precision;
use crate::runtime::Runtime;
use crate::{BLayout, DType, GemmError, GemmShape};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys as cublas_sys};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::ops::Deref;

/// Device 0 with the kernels loaded and a cuBLAS handle (TF32 off), for the benchmark harness,
/// the CLI and the tests. It dereferences to its [`Runtime`], so every runtime call (uploads,
/// launches, timing) reads the same on either.
pub struct Gpu {
    runtime: Runtime,
    blas: CudaBlas,
    /// The cuBLASLt handle of the FP8 baseline, made on first use (an FP8-free run never needs
    /// libcublasLt).
    fp8_blas: std::sync::OnceLock<Fp8Blas>,
}

impl Deref for Gpu {
    type Target = Runtime;
    fn deref(&self) -> &Runtime {
        &self.runtime
    }
}

impl Gpu {
    /// Opens device 0 with the PTX module built for it ([`crate::ptx::for_device`]: the sm_90a
    /// module on an H100 or H200, the portable sm_80 module on any other GPU from compute
    /// capability 8.0 on) and creates a cuBLAS handle (TF32 off).
    pub fn open() -> Result<Self, GemmError> {
        Self::open_module(None)
    }

    /// Like [`Gpu::open`], with the module given (`None`: the one built for the device); a
    /// module the device cannot load is refused with [`GemmError::UnsupportedDevice`]. On an
    /// H100, `Some(&PORTABLE)` runs the portable sm_80 module as an Ampere GPU would.
    pub fn open_module(module: Option<&crate::ptx::PtxModule>) -> Result<Self, GemmError> {
        let context = crate::runtime::open_context(0)?;
        Self::new(module_for(&context, module)?.text)
    }

    /// The GPU tests' device: [`Gpu::open_module`] with the module named by the environment
    /// variable [`crate::ptx::TEST_PTX_VARIABLE`] (`sm80`: the portable module, `sm90a`: the Hopper one;
    /// unset: the one built for the device), so that the whole suite can run on either module.
    pub fn open_for_tests() -> Result<Self, GemmError> {
        Self::open_module(crate::ptx::test_module()?)
    }

    /// Why `rung` cannot run here (its architecture, or its kernel missing from the loaded
    /// module), or `None` if it can.
    pub fn rung_unavailable(&self, rung: &crate::Rung) -> Option<String> {
        rung.unavailable_on(self.info().compute_capability)
            .or_else(|| {
                (!self.entries().iter().any(|e| e == rung.entry))
                    .then(|| format!("is not in the loaded {} PTX module", self.ptx_target()))
            })
    }

    /// Opens device 0, loads `ptx` and creates a cuBLAS handle (TF32 off).
    pub fn new(ptx: &str) -> Result<Self, GemmError> {
        let runtime = Runtime::open(0, ptx)?;
        if !unsafe { cublas_sys::is_culib_present() } {
            return Err(GemmError::Cublas(
                "libcublas.so (CUDA 13) was not found: add the CUDA toolkit's library directory, e.g. /usr/local/cuda/lib64, to LD_LIBRARY_PATH".into(),
            ));
        }
        let blas = CudaBlas::new(runtime.stream().clone())
            .map_err(|e| GemmError::Cublas(e.to_string()))?;
        // CUBLAS_DEFAULT_MATH: true fp32 SGEMM, no TF32 tensor cores (unless the environment
        // sets NVIDIA_TF32_OVERRIDE=1, which the CLI refuses).
        let status = unsafe {
            cublas_sys::cublasSetMathMode(
                *blas.handle(),
                cublas_sys::cublasMath_t::CUBLAS_DEFAULT_MATH,
            )
        };
        if status != cublas_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(GemmError::Cublas(format!(
                "cublasSetMathMode failed: {status:?}"
            )));
        }
        Ok(Gpu {
            runtime,
            blas,
            fp8_blas: std::sync::OnceLock::new(),
        })
    }

    /// Queues cuBLAS SGEMM (TF32 off) computing row-major `c = a·b` for `shape`.
    pub fn launch_cublas(
        &self,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        shape.check_buffers(a.len(), b.len(), c.len())?;
        // cuBLAS is column-major: a row-major C = A·B is the column-major Cᵀ = Bᵀ·Aᵀ.
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        let config = GemmConfig {
            transa: cublas_sys::cublasOperation_t::CUBLAS_OP_N,
            transb: cublas_sys::cublasOperation_t::CUBLAS_OP_N,
            m: n,
            n: m,
            k,
            alpha: 1.0f32,
            lda: n,
            ldb: k,
            beta: 0.0f32,
            ldc: n,
        };
        unsafe { self.blas.gemm(config, b, a, c) }.map_err(|e| GemmError::Cublas(e.to_string()))
    }

    /// Queues cuBLASLt's FP8 GEMM computing row-major `c = fp16(scale_a · scale_b · a·b_nkᵀ)`
    /// (A `[m, k]`, B stored `[n, k]`, both in `format`; `scale_a`, `scale_b` one f32 each on
    /// the device, in buffers of their own: cuBLASLt needs them 16-byte aligned), with fast
    /// accumulation: the FP8 rungs' baseline ([`Fp8Blas::matmul`]).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_cublaslt_fp8<T: Element>(
        &self,
        format: Fp8Format,
        a: &CudaSlice<T>,
        b_nk: &CudaSlice<T>,
        c: &mut CudaSlice<u16>,
        scale_a: &CudaSlice<f32>,
        scale_b: &CudaSlice<f32>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        let blas = match self.fp8_blas.get() {
            Some(blas) => blas,
            None => {
                let blas = Fp8Blas::new(self.runtime.stream().clone())?;
                self.fp8_blas.get_or_init(|| blas)
            }
        };
        blas.matmul(format, a, b_nk, c, scale_a, scale_b, shape, true)
    }

    /// Queues the cuBLAS baseline for `precision` computing row-major `c = a·b`: SGEMM with
    /// TF32 off, `cublasGemmEx` with fp32 compute in TF32 mode, or `cublasGemmEx` with fp16 A,
    /// B, C and fp32 compute (all through [`Gpu::launch_cublas_gemm`], B stored `[k, n]`).
    pub fn launch_cublas_as<T: Element>(
        &self,
        precision: Precision,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        let dtype = match precision {
            Precision::Fp32 => DType::F32,
            Precision::Tf32 => DType::Tf32,
            Precision::Fp16 => DType::F16,
            Precision::Fp8E4m3 | Precision::Fp8E5m2 => {
                return Err(GemmError::Cublas(format!(
                    "the {} baseline is cuBLASLt's FP8 GEMM (Gpu::launch_cublaslt_fp8), not cublasGemmEx",
                    precision.label()
                )));
            }
        };
        self.launch_cublas_gemm(dtype, BLayout::Kn, a, b, c, shape)
    }

    /// Queues `cublasGemmEx` computing row-major `c = a·b` (`b_layout` [`BLayout::Kn`]) or
    /// `c = a·bᵀ` (`b_layout` [`BLayout::Nk`]: B stored `[n, k]`, an `nn.Linear` weight) in
    /// `dtype`, with fp32 accumulation throughout:
    ///
    /// | `dtype` | A, B, C | compute |
    /// |---|---|---|
    /// | `F32` | `CUDA_R_32F` | `CUBLAS_COMPUTE_32F` (exact fp32: the handle's math mode keeps TF32 off) |
    /// | `Tf32` | `CUDA_R_32F` | `CUBLAS_COMPUTE_32F_FAST_TF32` (inputs rounded to TF32) |
    /// | `F16` | `CUDA_R_16F` | `CUBLAS_COMPUTE_32F` |
    /// | `Bf16` | `CUDA_R_16BF` | `CUBLAS_COMPUTE_32F` |
    ///
    /// `T` must have `dtype`'s element size (`f32` for F32 and TF32; `u16`, [`half::f16`] or
    /// [`half::bf16`] for the 16-bit types), and the buffers must hold exactly A (m·k), B (k·n
    /// in either layout) and C (m·n).
    pub fn launch_cublas_gemm<T: cudarc::driver::DeviceRepr>(
        &self,
        dtype: DType,
        b_layout: BLayout,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        use cublas_sys::{cublasComputeType_t as Compute, cudaDataType as Data};
        let (data, compute) = match dtype {
            DType::F32 => (Data::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
            DType::Tf32 => (Data::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F_FAST_TF32),
            DType::F16 => (Data::CUDA_R_16F, Compute::CUBLAS_COMPUTE_32F),
            DType::Bf16 => (Data::CUDA_R_16BF, Compute::CUBLAS_COMPUTE_32F),
        };
        if std::mem::size_of::<T>() != dtype.bytes() {
            return Err(GemmError::Cublas(format!(
                "the {} baseline takes {}-byte elements, not {}-byte ones",
                dtype.label(),
                dtype.bytes(),
                std::mem::size_of::<T>()
            )));
        }
        shape.check_buffers(a.len(), b.len(), c.len())?;
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        // cuBLAS is column-major, and a row-major matrix is its transpose in column-major
        // order: row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ, an n×m product whose
        // first operand is B's buffer. Stored [k, n], that buffer reads as the column-major
        // n×k matrix Bᵀ (ld n): no transpose. Stored [n, k], it reads as the column-major k×n
        // matrix Bᵀ (ld k), and transa = T turns it into the n×k matrix needed.
        let (transa, ldb_buffer) = match b_layout {
            BLayout::Kn => (cublas_sys::cublasOperation_t::CUBLAS_OP_N, n),
            BLayout::Nk => (cublas_sys::cublasOperation_t::CUBLAS_OP_T, k),
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (a_ptr, _a_sync) = a.device_ptr(self.runtime.stream());
        let (b_ptr, _b_sync) = b.device_ptr(self.runtime.stream());
        let (c_ptr, _c_sync) = c.device_ptr(self.runtime.stream());
        // SAFETY: the handle is bound to this stream; the three buffers hold exactly m·k, k·n
        // and m·n elements of `dtype`'s size (checked above), which is all that an n×m×k
        // product with these leading dimensions reads and writes; alpha and beta are f32, as
        // fp32 compute types take them, and live until the call returns (cuBLAS reads host
        // scalars before it returns).
        let status = unsafe {
            cublas_sys::cublasGemmEx(
                *self.blas.handle(),
                transa,
                cublas_sys::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast(),
                b_ptr as *const std::ffi::c_void,
                data,
                ldb_buffer,
                a_ptr as *const std::ffi::c_void,
                data,
                k,
                (&beta as *const f32).cast(),
                c_ptr as *mut std::ffi::c_void,
                data,
                n,
                compute,
                cublas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        };
        if status != cublas_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(GemmError::Cublas(format!(
                "cublasGemmEx ({}, B {}) failed: {status:?}",
                dtype.label(),
                b_layout.label()
            )));
        }
        Ok(())
    }
}

/// The module to load on `context`'s device: `module`, or the one built for the device
/// ([`crate::ptx::for_device`]) when `None`; a module the device cannot load is refused with
/// [`GemmError::UnsupportedDevice`].
pub fn module_for<'m>(
    context: &cudarc::driver::CudaContext,
    module: Option<&'m crate::ptx::PtxModule>,
) -> Result<&'m crate::ptx::PtxModule, GemmError> {
    // Asked even when a module is given: it refuses devices older than any module.
    let chosen = crate::ptx::for_device(context)?;
    let module = module.unwrap_or(chosen);
    let (major, minor) = context
        .compute_capability()
        .map_err(|e| GemmError::cuda("reading the compute capability", e))?;
    if !module.loads_on(major as u32, minor as u32) {
        return Err(GemmError::UnsupportedDevice {
            name: context.name().unwrap_or_else(|_| "unknown".into()),
            capability: (major, minor),
            needed: "compute capability 9.0 for the sm_90a module",
        });
    }
    Ok(module)
}
