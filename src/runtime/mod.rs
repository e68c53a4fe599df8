//! The CUDA runtime: the kernels' module loaded into a context, launches on one stream,
//! device memory and events. No cuBLAS and no rung table: the public API ([`crate::api`]), the
//! ladder ([`crate::ladder`]) and the harness build on this.
//!
//! Everything goes through cudarc, which opens `libcuda` with `dlopen` at run time: the library
//! builds on machines with no CUDA at all, and [`Runtime::open`] turns a missing driver or
//! device into a [`GemmError`] instead of a panic.

pub mod prebuilt;
pub mod tensor_map;
pub mod transpose;

use crate::GemmError;
use crate::element::Element;
use cudarc::driver::sys::{
    CUdevice_attribute, CUevent_flags, CUfunction_attribute, CUstreamCaptureStatus,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the host needs to know about the device.
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// The kernels' module on one stream: what every launch needs.
///
/// `Runtime` is `Send + Sync`: its caches sit behind mutexes, and launches go to its stream in
/// the order they are queued.
pub struct Runtime {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    entries: Vec<String>,
    ptx_target: String,
    /// TMA tensor maps built for the ladder's TMA rungs, by (A, B, shape).
    pub(crate) tensor_maps: Mutex<HashMap<TensorMapKey, CudaSlice<u8>>>,
    /// The scratch buffer of transposed copies ([`Runtime::transposed_copy`]), shared with
    /// the CUDA graphs that captured a copy into it.
    scratch: Mutex<Option<Arc<CudaSlice<f32>>>>,
    info: DeviceInfo,
}

/// What a pair of TMA tensor maps describes: the addresses of A and B, the shape, and their
/// element type and layout.
pub(crate) type TensorMapKey = (u64, u64, usize, usize, usize, MapKind);

/// The element type and layout of a TMA rung's pair of tensor maps (the table of rungs names
/// one per TMA rung). An address freed by one rung may come back for another's buffers, so the
/// kind is also part of the runtime's cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapKind {
    /// fp16 A `[m, k]` and B `[k, n]` (v17, v18).
    F16,
    /// fp32 A `[m, k]` and B's transposed `[n, k]` copy, written first (v19).
    Tf32Copy,
    /// fp32 A `[m, k]` in 256-row boxes and B `[k, n]` as it is, in 32-column boxes (v21, which
    /// loads B into registers).
    Tf32RegisterB,
    /// One-byte A `[m, k]` and B `[n, k]` (v20).
    Fp8,
    /// fp16 A `[m, k]` in 64-row boxes and B `[k, n]` (v22, whose tiles are 64 rows tall).
    F16Pingpong,
}

/// Fails with [`GemmError::NoGpu`] unless the driver library is present and reports a device
/// numbered `ordinal`. cudarc panics where a library is missing, so this looks first.
pub fn check_driver(ordinal: usize) -> Result<(), GemmError> {
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GemmError::NoGpu(
            "the NVIDIA driver library libcuda.so was not found (is an NVIDIA driver installed?)"
                .into(),
        ));
    }
    let count = CudaContext::device_count().map_err(|source| GemmError::GpuUnavailable {
        context: "the driver could not start".into(),
        source,
    })?;
    if count < 1 {
        return Err(GemmError::NoGpu("the driver reports no CUDA device".into()));
    }
    if ordinal >= count as usize {
        return Err(GemmError::NoGpu(format!(
            "there is no device {ordinal}: the driver reports {count}"
        )));
    }
    Ok(())
}

/// The context of device `ordinal`, after [`check_driver`]: a missing driver or device is a
/// [`GemmError`], not a panic.
pub fn open_context(ordinal: usize) -> Result<Arc<CudaContext>, GemmError> {
    check_driver(ordinal)?;
    CudaContext::new(ordinal).map_err(|source| GemmError::GpuUnavailable {
        context: format!("could not open device {ordinal}"),
        source,
    })
}

impl Runtime {
    /// Loads the kernels for `stream`'s device and launches them on `stream`. The caller keeps
    /// owning the stream; the module is the PTX built for the device's architecture.
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, GemmError> {
        let module = crate::ptx::for_device(stream.context())?;
        Self::with_ptx(stream, module.text)
    }

    /// Like [`Runtime::new`], with the PTX text given.
    pub fn with_ptx(stream: Arc<CudaStream>, ptx: &str) -> Result<Self, GemmError> {
        let context = stream.context().clone();
        let info = device_info(&context)?;
        // A prebuilt cubin of this very PTX where one is given (`prebuilt`), else the PTX,
        // which the driver compiles for the device.
        let prebuilt = prebuilt::find(ptx, info.compute_capability)
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|image| context.load_module(Ptx::from_binary(image)).ok());
        let module = match prebuilt {
            Some(module) => module,
            None => context
                .load_module(Ptx::from_src(ptx))
                .map_err(|e| GemmError::module_load(ptx, &info, e))?,
        };
        Ok(Runtime {
            context,
            stream,
            module,
            functions: Mutex::new(HashMap::new()),
            entries: entry_points(ptx),
            ptx_target: ptx
                .lines()
                .find_map(|line| line.trim().strip_prefix(".target "))
                .map_or_else(|| "unknown".into(), |t| t.trim().to_string()),
            tensor_maps: Mutex::new(HashMap::new()),
            scratch: Mutex::new(None),
            info,
        })
    }

    /// Opens device `ordinal` on its default stream with cudarc's event tracking off (one
    /// stream, used in order: the tracking would only add work around every launch and blur
    /// timings) and loads `ptx`. For the harness and tests; a library user passes their own
    /// stream to [`Runtime::new`].
    pub fn open(ordinal: usize, ptx: &str) -> Result<Self, GemmError> {
        let context = open_context(ordinal)?;
        // SAFETY: no buffer exists on this fresh context yet, and the harness uses one stream.
        unsafe { context.disable_event_tracking() };
        Self::with_ptx(context.default_stream(), ptx)
    }

    /// Another runtime on the same stream and loaded module, with caches of its own: what a
    /// [`crate::Gemm`] over the kernels this runtime launches is made from (the bf16 prefill of
    /// the fast dequant kernels).
    pub(crate) fn sharing(&self) -> Runtime {
        Runtime {
            context: self.context.clone(),
            stream: self.stream.clone(),
            module: self.module.clone(),
            functions: Mutex::new(HashMap::new()),
            entries: self.entries.clone(),
            ptx_target: self.ptx_target.clone(),
            tensor_maps: Mutex::new(HashMap::new()),
            scratch: Mutex::new(None),
            info: self.info.clone(),
        }
    }

    /// Whether `other` launches on the same stream from the same loaded module.
    pub(crate) fn shares_module_and_stream(&self, other: &Runtime) -> bool {
        Arc::ptr_eq(&self.stream, &other.stream) && Arc::ptr_eq(&self.module, &other.module)
    }

    /// The loaded module, which the CUDA graphs holding its kernels keep loaded.
    pub(crate) fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The `.target` of the loaded PTX (`sm_80`, `sm_90a`).
    pub fn ptx_target(&self) -> &str {
        &self.ptx_target
    }

    /// The kernel entry points of the loaded PTX.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The context the module lives in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
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
    pub fn stream(&self) -> &Arc<CudaStream> {
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

    /// Whether the stream is being captured into a CUDA graph (by anyone), or its capture was
    /// invalidated and not yet ended.
    pub fn capturing(&self) -> Result<bool, GemmError> {
        let status = self
            .stream
            .capture_status()
            .map_err(|e| GemmError::cuda("asking whether the stream is being captured", e))?;
        Ok(status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// Fails with [`GemmError::CaptureUnsupported`] if the stream is being captured: for work
    /// that allocates or uploads device memory, which a capture cannot record (an allocation
    /// would become part of the graph, a copy from pageable host memory is refused). `what`
    /// says what that work is; asked only on such paths, since it costs a driver call.
    pub(crate) fn refuse_in_capture(&self, what: impl FnOnce() -> String) -> Result<(), GemmError> {
        if self.capturing()? {
            return Err(GemmError::CaptureUnsupported {
                what: format!(
                    "{} would allocate or upload device memory during the capture; prepare it \
                     before capturing: run the same calls once eagerly (same buffers and m), \
                     or reserve the quantized products' scratch (QuantizedWeights::reserve)",
                    what()
                ),
            });
        }
        Ok(())
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

    pub(crate) fn address<T: cudarc::driver::DeviceRepr>(&self, buffer: &CudaSlice<T>) -> u64 {
        let (ptr, _sync) = buffer.device_ptr(&self.stream);
        ptr
    }

    /// The kernel `entry`, loaded once per `Runtime`, its shared-memory limit raised to what
    /// the device allows (blocks may use more than 48 KiB only after opting in).
    pub fn kernel(&self, entry: &'static str) -> Result<CudaFunction, GemmError> {
        let mut functions = self
            .functions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(f) = functions.get(entry) {
            return Ok(f.clone());
        }
        // The first use of a kernel loads it (with lazy loading, the driver's default, onto the
        // device). Where that fails while the stream is being captured, say so: the kernel
        // exists, it was only never used outside a capture.
        let in_capture = |error: GemmError| match self.capturing() {
            Ok(true) => GemmError::CaptureUnsupported {
                what: format!(
                    "loading kernel {entry} for its first use failed during the capture ({error}); \
                     run the same calls once eagerly before capturing"
                ),
            },
            _ => error,
        };
        let function = self
            .module
            .load_function(entry)
            .map_err(|source| in_capture(GemmError::MissingKernel { entry, source }))?;
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.info.max_shared_per_block as i32,
            )
            .map_err(|e| {
                in_capture(GemmError::cuda(
                    format!("raising the shared-memory limit of {entry}"),
                    e,
                ))
            })?;
        functions.insert(entry, function.clone());
        Ok(function)
    }
}

/// The names of the `.entry` points of `ptx`.
pub fn entry_points(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| line.split(".entry ").nth(1))
        .filter_map(|rest| rest.split('(').next())
        .map(|name| name.trim().to_string())
        .collect()
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
