//! The CUDA runtime: one device, one stream, the kernels' module and a cuBLAS handle.
//!
//! Everything goes through cudarc, which opens `libcuda` and `libcublas` with `dlopen` at run
//! time: the host builds on machines with no CUDA at all, and [`Gpu::new`] turns a missing
//! driver, device or library into a [`GemmError`] instead of a panic.

use crate::element::Element;
use crate::rungs::{Epilogue, Precision};
use crate::{GemmError, GemmShape, Rung};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys as cublas_sys};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the host needs to know about the device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: usize,
    /// L2 cache size in bytes.
    pub l2_bytes: usize,
    /// The most dynamic shared memory one block may opt in to, in bytes.
    pub max_shared_per_block: usize,
    /// Device memory in bytes.
    pub total_memory: usize,
}

/// An open GPU with the ladder's kernels loaded.
pub struct Gpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    blas: CudaBlas,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    tensor_maps: Mutex<HashMap<TensorMapKey, CudaSlice<u8>>>,
    info: DeviceInfo,
}

/// What a pair of TMA tensor maps describes: the addresses of A and B and the shape.
type TensorMapKey = (u64, u64, usize, usize, usize);

impl Gpu {
    /// Opens device 0, loads `ptx` and creates a cuBLAS handle (TF32 off).
    pub fn new(ptx: &str) -> Result<Self, GemmError> {
        // cudarc panics if a library is missing, so look before it does.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GemmError::NoGpu(
                "the NVIDIA driver library libcuda.so was not found (is an NVIDIA driver installed?)".into(),
            ));
        }
        let count = CudaContext::device_count()
            .map_err(|e| GemmError::NoGpu(format!("the driver could not start: {e}")))?;
        if count < 1 {
            return Err(GemmError::NoGpu("the driver reports no CUDA device".into()));
        }
        let context = CudaContext::new(0)
            .map_err(|e| GemmError::NoGpu(format!("could not open device 0: {e}")))?;
        // One stream, used in order: cudarc's per-buffer event tracking would only add work
        // around every launch and blur the timings.
        unsafe { context.disable_event_tracking() };
        let info = device_info(&context)?;
        let stream = context.default_stream();
        let module = context
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| GemmError::ModuleLoad(e.to_string()))?;
        if !unsafe { cublas_sys::is_culib_present() } {
            return Err(GemmError::Cublas(
                "libcublas.so (CUDA 13) was not found: add the CUDA toolkit's library directory, e.g. /usr/local/cuda/lib64, to LD_LIBRARY_PATH".into(),
            ));
        }
        let blas = CudaBlas::new(stream.clone()).map_err(|e| GemmError::Cublas(e.to_string()))?;
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
            context,
            stream,
            module,
            blas,
            functions: Mutex::new(HashMap::new()),
            tensor_maps: Mutex::new(HashMap::new()),
            info,
        })
    }

    /// The device's properties.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Bytes of device memory free now.
    pub fn free_memory(&self) -> Result<usize, GemmError> {
        let (free, _total) = self
            .context
            .mem_get_info()
            .map_err(|e| GemmError::cuda("querying free memory", e))?;
        Ok(free)
    }

    /// Copies `data` to a new device buffer, after checking that it fits.
    pub fn upload(&self, data: &[f32]) -> Result<CudaSlice<f32>, GemmError> {
        self.upload_raw(data)
    }

    /// Copies `data` of any plain element type (fp16 bits, packed bytes...) to a new device
    /// buffer, after checking that it fits.
    pub fn upload_raw<T: cudarc::driver::DeviceRepr>(
        &self,
        data: &[T],
    ) -> Result<CudaSlice<T>, GemmError> {
        self.ensure_room(std::mem::size_of_val(data))?;
        self.stream
            .clone_htod(data)
            .map_err(|e| GemmError::cuda("copying to the device", e))
    }

    /// Copies a device buffer of any plain element type back to the host.
    pub fn download_raw<T: cudarc::driver::DeviceRepr>(
        &self,
        buffer: &CudaSlice<T>,
    ) -> Result<Vec<T>, GemmError> {
        self.stream
            .clone_dtoh(buffer)
            .map_err(|e| GemmError::cuda("copying from the device (a kernel may have faulted)", e))
    }

    /// The stream every launch goes to.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A new device buffer of `len` elements, poisoned with NaN.
    pub fn alloc_poisoned<T: Element>(&self, len: usize) -> Result<CudaSlice<T>, GemmError> {
        self.ensure_room(len.saturating_mul(T::BYTES))?;
        let mut buffer =
            unsafe { self.stream.alloc::<T>(len) }.map_err(|e| GemmError::cuda("allocating", e))?;
        self.poison(&mut buffer)?;
        Ok(buffer)
    }

    /// Fills `buffer` with all bits set, a NaN in both f32 and fp16, so that an element a
    /// kernel fails to write cannot pass.
    pub fn poison<T: Element>(&self, buffer: &mut CudaSlice<T>) -> Result<(), GemmError> {
        let (ptr, _sync) = buffer.device_ptr(&self.stream);
        let result = unsafe {
            cudarc::driver::sys::cuMemsetD8Async(
                ptr,
                u8::MAX,
                buffer.len() * T::BYTES,
                self.stream.cu_stream(),
            )
        };
        result
            .result()
            .map_err(|e| GemmError::cuda("poisoning the output", e))
    }

    /// Copies a device buffer back to the host (and so waits for all work queued before it).
    pub fn download(&self, buffer: &CudaSlice<f32>) -> Result<Vec<f32>, GemmError> {
        self.download_raw(buffer)
    }

    /// Queues `rung` computing `c = a·b` for `shape`, after checking the element type, buffers,
    /// limits and alignment. `T` is `f32` for fp32 and TF32 rungs, `u16` (fp16 bits) for fp16
    /// rungs.
    pub fn launch_rung<T: Element>(
        &self,
        rung: &Rung,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        self.launch(rung, a, b, c, shape, &Epilogue::STORE)
    }

    /// Queues `rung` computing `c = activation(alpha·a·b + beta·c)`; the rung must take
    /// epilogue arguments (v12).
    pub fn launch_rung_with_epilogue(
        &self,
        rung: &Rung,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
        shape: &GemmShape,
        epilogue: &Epilogue,
    ) -> Result<(), GemmError> {
        if !rung.epilogue_args && *epilogue != Epilogue::STORE {
            return Err(GemmError::NoEpilogue { rung: rung.name });
        }
        self.launch(rung, a, b, c, shape, epilogue)
    }

    fn launch<T: Element>(
        &self,
        rung: &Rung,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
        shape: &GemmShape,
        epilogue: &Epilogue,
    ) -> Result<(), GemmError> {
        check_element::<T>(rung)?;
        shape.check_buffers(a.len(), b.len(), c.len())?;
        if !rung.candidates.is_empty() {
            return Err(GemmError::NeedsTuning { rung: rung.name });
        }
        let launch = rung.launch(shape, self.info.max_shared_per_block)?;
        rung.check_alignment(self.address(a), self.address(b))?;
        let function = self.function(rung)?;
        let blocks = if launch.persistent {
            launch.grid.0.min(self.info.sm_count as u32)
        } else {
            launch.grid.0
        };
        let config = LaunchConfig {
            grid_dim: (blocks, launch.grid.1, 1),
            block_dim: (launch.block.0, launch.block.1, 1),
            shared_mem_bytes: launch.shared_mem_bytes,
        };
        // GemmShape guarantees every dimension fits in 31 bits.
        let (m, n, k) = (shape.m as u32, shape.n as u32, shape.k as u32);
        let (slope, activation) = match epilogue.leaky_slope {
            Some(slope) => (slope, 1u32),
            None => (0.0f32, 0u32),
        };
        let maps = if rung.tensor_maps {
            Some(self.tensor_maps_for(a, b, shape)?)
        } else {
            None
        };
        let mut builder = self.stream.launch_builder(&function);
        builder.arg(a).arg(b).arg(c).arg(&m).arg(&n).arg(&k);
        if let Some(maps) = &maps {
            builder.arg(maps);
        }
        if rung.epilogue_args {
            builder
                .arg(&epilogue.alpha)
                .arg(&epilogue.beta)
                .arg(&slope)
                .arg(&activation);
        }
        unsafe { builder.launch(config) }
            .map(drop)
            .map_err(|e| GemmError::cuda(format!("launching {}", rung.entry), e))
    }

    /// The device address of the TMA tensor maps (A, then B, 128 bytes each) for fp16 `a`
    /// (m×k) and `b` (k×n), built on first use and kept for later launches on the same
    /// buffers and shape: A in boxes of 128 rows × 64 columns, B in boxes of 64 × 64, both
    /// with the 128-byte swizzle, zeros outside the matrices.
    fn tensor_maps_for<T: Element>(
        &self,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        shape: &GemmShape,
    ) -> Result<u64, GemmError> {
        let key = (self.address(a), self.address(b), shape.m, shape.n, shape.k);
        let mut cache = self
            .tensor_maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(maps) = cache.get(&key) {
            return Ok(self.address(maps));
        }
        let mut bytes = Vec::with_capacity(256);
        // (address, columns, rows, box columns, box rows): dimensions innermost first.
        for (address, cols, rows, box_cols, box_rows) in [
            (key.0, shape.k, shape.m, 64u32, 128u32),
            (key.1, shape.n, shape.k, 64, 64),
        ] {
            bytes.extend_from_slice(&encode_tensor_map(address, cols, rows, box_cols, box_rows)?);
        }
        let maps = self.upload_raw(&bytes)?;
        let ptr = self.address(&maps);
        cache.insert(key, maps);
        Ok(ptr)
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
        let (a_ptr, _a_sync) = a.device_ptr(&self.stream);
        let (b_ptr, _b_sync) = b.device_ptr(&self.stream);
        let (c_ptr, _c_sync) = c.device_ptr(&self.stream);
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

    /// Milliseconds the work queued by `work` takes on the device, between two CUDA events.
    pub fn time_ms(&self, work: impl FnOnce() -> Result<(), GemmError>) -> Result<f64, GemmError> {
        let event = || {
            self.context
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| GemmError::cuda("creating a timing event", e))
        };
        let (start, stop) = (event()?, event()?);
        start
            .record(&self.stream)
            .map_err(|e| GemmError::cuda("recording an event", e))?;
        work()?;
        stop.record(&self.stream)
            .map_err(|e| GemmError::cuda("recording an event", e))?;
        stop.synchronize().map_err(|e| {
            GemmError::cuda("waiting for the timed work (a kernel may have faulted)", e)
        })?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| GemmError::cuda("reading an event", e))?;
        Ok(ms as f64)
    }

    /// Waits for all queued work and reports any fault it raised.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        self.stream
            .synchronize()
            .map_err(|e| GemmError::cuda("waiting for the device", e))
    }

    fn ensure_room(&self, bytes: usize) -> Result<(), GemmError> {
        let free = self.free_memory()?;
        if bytes > free {
            return Err(GemmError::OutOfDeviceMemory {
                needed_bytes: bytes as u64,
                free_bytes: free as u64,
            });
        }
        Ok(())
    }

    /// Fails with [`GemmError::OutOfDeviceMemory`] unless `bytes` more fit on the device.
    pub(crate) fn ensure_room_for(&self, bytes: usize) -> Result<(), GemmError> {
        self.ensure_room(bytes)
    }

    /// The device address of `buffer`, for kernels that take raw pointers (or null).
    pub(crate) fn device_address<T: cudarc::driver::DeviceRepr>(
        &self,
        buffer: &CudaSlice<T>,
    ) -> u64 {
        self.address(buffer)
    }

    fn address<T: cudarc::driver::DeviceRepr>(&self, buffer: &CudaSlice<T>) -> u64 {
        let (ptr, _sync) = buffer.device_ptr(&self.stream);
        ptr
    }

    /// The rung's kernel, loaded once; its shared-memory limit raised to what the device allows,
    /// because blocks may only use more than 48 KiB after opting in.
    fn function(&self, rung: &Rung) -> Result<CudaFunction, GemmError> {
        self.kernel(rung.entry)
    }

    /// The kernel `entry`, loaded once per `Gpu`.
    pub(crate) fn kernel(&self, entry: &'static str) -> Result<CudaFunction, GemmError> {
        let rung_entry = entry;
        let mut functions = self
            .functions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(f) = functions.get(rung_entry) {
            return Ok(f.clone());
        }
        let function = self.module.load_function(rung_entry).map_err(|e| {
            GemmError::ModuleLoad(format!(
                "entry point {rung_entry} is missing from the PTX: {e}"
            ))
        })?;
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.info.max_shared_per_block as i32,
            )
            .map_err(|e| {
                GemmError::cuda(
                    format!("raising the shared-memory limit of {rung_entry}"),
                    e,
                )
            })?;
        functions.insert(rung_entry, function.clone());
        Ok(function)
    }
}

/// A TMA tensor map for a row-major fp16 matrix of `rows × cols` at device `address`, read in
/// boxes of `box_rows × box_cols` with the 128-byte swizzle.
fn encode_tensor_map(
    address: u64,
    cols: usize,
    rows: usize,
    box_cols: u32,
    box_rows: u32,
) -> Result<[u8; 128], GemmError> {
    use cudarc::driver::sys::{
        CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
        CUtensorMapL2promotion, CUtensorMapSwizzle, cuTensorMapEncodeTiled,
    };
    let mut map = std::mem::MaybeUninit::<CUtensorMap>::zeroed();
    let dims = [cols as u64, rows as u64];
    // Bytes from one row to the next (the innermost stride is implied).
    let strides = [cols as u64 * 2];
    let boxes = [box_cols, box_rows];
    let element_strides = [1u32, 1];
    let result = unsafe {
        cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            2,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    result
        .result()
        .map_err(|e| GemmError::cuda("encoding a TMA tensor map", e))?;
    let map = unsafe { map.assume_init() };
    let mut bytes = [0u8; 128];
    for (chunk, word) in bytes.as_chunks_mut::<8>().0.iter_mut().zip(map.opaque) {
        *chunk = word.to_le_bytes();
    }
    Ok(bytes)
}

/// Refuses buffers whose element type is not the one `rung` takes.
fn check_element<T: Element>(rung: &Rung) -> Result<(), GemmError> {
    let expected = match rung.precision {
        Precision::Fp32 | Precision::Tf32 => <f32 as Element>::NAME,
        Precision::Fp16 => <u16 as Element>::NAME,
    };
    if T::NAME != expected {
        return Err(GemmError::WrongElementType {
            rung: rung.name,
            precision: rung.precision.label(),
            expected,
            given: T::NAME,
        });
    }
    Ok(())
}

fn device_info(context: &Arc<CudaContext>) -> Result<DeviceInfo, GemmError> {
    let attribute = |a: CUdevice_attribute| {
        context
            .attribute(a)
            .map_err(|e| GemmError::cuda("reading a device attribute", e))
    };
    Ok(DeviceInfo {
        name: context
            .name()
            .map_err(|e| GemmError::cuda("reading the device name", e))?,
        compute_capability: context
            .compute_capability()
            .map_err(|e| GemmError::cuda("reading the compute capability", e))?,
        sm_count: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize,
        l2_bytes: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
        max_shared_per_block: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as usize,
        total_memory: context
            .total_mem()
            .map_err(|e| GemmError::cuda("reading the memory size", e))?,
    })
}
