//! The harness's GPU: the [`Runtime`] on device 0 plus a cuBLAS handle for the baselines.

use crate::element::Element;
use crate::ladder::rungs::Precision;
use crate::runtime::Runtime;
use crate::{GemmError, GemmShape};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys as cublas_sys};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::ops::Deref;

/// Device 0 with the kernels loaded and a cuBLAS handle (TF32 off), for the benchmark harness,
/// the CLI and the tests. It dereferences to its [`Runtime`], so every runtime call (uploads,
/// launches, timing) reads the same on either.
pub struct Gpu {
    runtime: Runtime,
    blas: CudaBlas,
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
        crate::runtime::check_driver(0)?;
        let context =
            cudarc::driver::CudaContext::new(0).map_err(|source| GemmError::GpuUnavailable {
                context: "could not open device 0".into(),
                source,
            })?;
        let chosen = crate::ptx::for_device(&context)?;
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
        Self::new(module.text)
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
        Ok(Gpu { runtime, blas })
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

    /// Queues the cuBLAS baseline for `precision` computing row-major `c = a·b`: SGEMM with
    /// TF32 off ([`Gpu::launch_cublas`]), `cublasGemmEx` with fp32 compute in TF32 mode, or
    /// `cublasGemmEx` with fp16 A, B, C and fp32 compute.
    pub fn launch_cublas_as<T: Element>(
        &self,
        precision: Precision,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        use cublas_sys::{cublasComputeType_t as Compute, cudaDataType as Data};
        let (data, compute) = match precision {
            Precision::Fp32 => (Data::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
            Precision::Tf32 => (Data::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F_FAST_TF32),
            Precision::Fp16 => (Data::CUDA_R_16F, Compute::CUBLAS_COMPUTE_32F),
        };
        if T::BYTES != precision.element_bytes() {
            return Err(GemmError::Cublas(format!(
                "the {} baseline takes {}-byte elements, not {}",
                precision.label(),
                precision.element_bytes(),
                T::NAME
            )));
        }
        shape.check_buffers(a.len(), b.len(), c.len())?;
        let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (a_ptr, _a_sync) = a.device_ptr(self.runtime.stream());
        let (b_ptr, _b_sync) = b.device_ptr(self.runtime.stream());
        let (c_ptr, _c_sync) = c.device_ptr(self.runtime.stream());
        // Column-major Cᵀ = Bᵀ·Aᵀ, as in `launch_cublas`.
        let status = unsafe {
            cublas_sys::cublasGemmEx(
                *self.blas.handle(),
                cublas_sys::cublasOperation_t::CUBLAS_OP_N,
                cublas_sys::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast(),
                b_ptr as *const std::ffi::c_void,
                data,
                n,
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
                "cublasGemmEx ({}) failed: {status:?}",
                precision.label()
            )));
        }
        Ok(())
    }
}
