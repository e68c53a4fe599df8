//! One error type for everything the host library can refuse or fail at.

use thiserror::Error;

/// Why a GEMM could not be run, or was not run correctly.
#[derive(Debug, Error)]
pub enum GemmError {
    /// A dimension is zero.
    #[error("invalid shape {m}×{n}×{k}: every dimension must be at least 1")]
    ZeroDimension {
        /// Rows of A and C.
        m: usize,
        /// Columns of B and C.
        n: usize,
        /// Columns of A, rows of B.
        k: usize,
    },
    /// A dimension does not fit the kernels' 32-bit index arithmetic (or cuBLAS's `int`).
    #[error(
        "dimension {name} = {value} is too large: the kernels index with 32-bit integers, so each dimension must be at most {max}"
    )]
    DimensionTooLarge {
        /// Which dimension ("m", "n" or "k").
        name: &'static str,
        /// Its value.
        value: usize,
        /// The largest value accepted.
        max: usize,
    },
    /// A batch of zero items.
    #[error("invalid batch: the batch count must be at least 1")]
    ZeroBatch,
    /// A leading dimension smaller than the row it steps over, or too large.
    #[error(
        "leading dimension of {operand} is {ld}, but it must be at least the row length {min} (and at most {max})"
    )]
    LeadingDimension {
        /// "A", "B" or "C".
        operand: &'static str,
        /// The leading dimension given.
        ld: usize,
        /// The row length.
        min: usize,
        /// The largest accepted.
        max: usize,
    },
    /// The extent of an operand does not fit in the address space.
    #[error("the extent of {operand} (rows × leading dimension × batch) overflows")]
    SizeOverflow {
        /// "A", "B" or "C".
        operand: &'static str,
    },
    /// Batch items of C that would overlap.
    #[error(
        "the batch stride of {operand} is {stride} elements, but one item spans {min}: the items would overlap"
    )]
    BatchStride {
        /// The operand ("C").
        operand: &'static str,
        /// The stride given.
        stride: usize,
        /// The smallest stride that keeps items apart.
        min: usize,
    },
    /// A buffer shorter than what the description reads or writes in it.
    #[error("buffer {operand} holds {len} elements, but the description needs {needed}")]
    BufferTooShort {
        /// "A", "B", "C" or "bias".
        operand: &'static str,
        /// Elements needed.
        needed: usize,
        /// The buffer's length.
        len: usize,
    },
    /// C shares memory with an input.
    #[error("C overlaps {operand}: the output must not share memory with an input")]
    Overlap {
        /// "A", "B" or "bias".
        operand: &'static str,
    },
    /// TF32 asked for 2-byte elements.
    #[error(
        "TF32 is a mode of f32 products: f16 and bf16 products are already tensor-core products"
    )]
    Tf32NeedsF32,
    /// A buffer on another device or context than the `Gemm`'s stream.
    #[error("buffer {operand} belongs to another CUDA context than the Gemm's stream")]
    WrongContext {
        /// "A", "B", "C" or "bias".
        operand: &'static str,
    },
    /// A kernel name that no library kernel has (for this element type and layout).
    #[error("no library kernel named {name:?} for this element type and B layout; known: {known}")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The kernels that exist, comma-separated.
        known: String,
    },
    /// The forced kernel cannot run this call.
    #[error("kernel {kernel} cannot run this call: it {reason}")]
    KernelRefused {
        /// The kernel's name.
        kernel: &'static str,
        /// Why.
        reason: String,
    },
    /// No kernel can run the call on this device.
    #[error("no kernel can run this call on this device: {reason}")]
    NoKernel {
        /// Each kernel's reason.
        reason: String,
    },
    /// Zero points asked for a format that has none.
    #[error("zero points apply to unsigned formats only (u1–u8), not to {format}")]
    ZeroPointsNeedUnsigned {
        /// The format asked for.
        format: String,
    },
    /// A buffer's length does not match the shape it is used with.
    #[error("buffer {name} holds {actual} elements but a {rows}×{cols} matrix needs {expected}")]
    BufferSize {
        /// Which operand ("A", "B" or "C").
        name: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// rows × cols.
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// The rung needs more shared memory than a block may have on this device.
    #[error(
        "rung {rung} needs {needed} bytes of shared memory per block for k = {k}, but the device allows {limit} (k ≤ {max_k} for this rung)"
    )]
    SharedMemory {
        /// The rung's name.
        rung: &'static str,
        /// The k of the shape.
        k: usize,
        /// Bytes the rung would need.
        needed: usize,
        /// Bytes the device allows per block.
        limit: usize,
        /// The largest k the rung accepts on this device.
        max_k: usize,
    },
    /// The grid would have more blocks along one axis than CUDA allows.
    #[error(
        "rung {rung} would launch {blocks} blocks along grid {axis}, over CUDA's limit of {limit}"
    )]
    GridTooLarge {
        /// The rung's name.
        rung: &'static str,
        /// "x" or "y".
        axis: &'static str,
        /// Blocks needed.
        blocks: u64,
        /// CUDA's limit on that axis.
        limit: u64,
    },
    /// A vectorized rung was given a pointer that is not 16-byte aligned.
    #[error(
        "rung {rung} reads {name} with 128-bit loads, which need a 16-byte-aligned base address (got offset {offset_bytes} bytes past a 16-byte boundary)"
    )]
    Misaligned {
        /// The rung's name.
        rung: &'static str,
        /// Which operand.
        name: &'static str,
        /// Address modulo 16.
        offset_bytes: u64,
    },
    /// A TMA rung was given rows that do not start at 16-byte boundaries.
    #[error(
        "rung {rung} loads its tiles with TMA, which needs every row it reads to start at a 16-byte boundary: k (and n, unless the rung reads B `[n, k]` or transposes it first) must be multiples of {multiple} (got k = {k}, n = {n})"
    )]
    TmaRows {
        /// The rung's name.
        rung: &'static str,
        /// Elements per 16 bytes: what k (and n) must be multiples of.
        multiple: usize,
        /// Columns of A.
        k: usize,
        /// Columns of B.
        n: usize,
    },
    /// The buffers' element type is not the one the rung takes.
    #[error(
        "rung {rung} takes {expected} matrices ({precision} precision), but was given {given} buffers"
    )]
    WrongElementType {
        /// The rung's name.
        rung: &'static str,
        /// The rung's precision label.
        precision: &'static str,
        /// The element type the rung takes.
        expected: &'static str,
        /// The element type of the buffers passed.
        given: &'static str,
    },
    /// An epilogue was asked of a rung whose kernel has none.
    #[error(
        "rung {rung} has no fused epilogue: only rungs with epilogue arguments (v12) take alpha, beta and an activation"
    )]
    NoEpilogue {
        /// The rung's name.
        rung: &'static str,
    },
    /// An autotuned rung was launched directly instead of through the autotuner.
    #[error(
        "rung {rung} is autotuned: pick one of its candidates first (autotune::Autotuner::pick)"
    )]
    NeedsTuning {
        /// The rung's name.
        rung: &'static str,
    },
    /// A weight format the quantizer does not support, or a name it cannot parse.
    #[error(
        "unsupported weight format {0:?}: use u1–u8, i2–i8, a small float eXmY with 1 + X + Y ≤ 8 bits (X ≥ 1, Y ≥ 0, e.g. e2m1, e4m3, e5m2), or f16"
    )]
    UnsupportedFormat(String),
    /// The quantization group does not divide the reduction length.
    #[error(
        "group size {group} does not divide k = {k}: groups of scales run along k, so k must be a multiple of the group size"
    )]
    GroupSize {
        /// The group size asked for.
        group: usize,
        /// The reduction length.
        k: usize,
    },
    /// A group size the fast dequant kernels do not take (its k-tiles would straddle groups).
    #[error(
        "group size {group} is not supported by the fast dequant kernels: they take per-channel scales (group = k = {k}) or groups of at least 32 rows that divide {chunk} or are multiples of it (32, 64, 128, 256, ...)"
    )]
    UnsupportedGroup {
        /// The group size asked for.
        group: usize,
        /// The reduction length.
        k: usize,
        /// Rows of k per chunk of the kernels.
        chunk: usize,
    },
    /// A decode-kernel grid outside what the work can be split into.
    #[error(
        "{blocks} decode blocks: there must be between 1 and {units} (one per chunk of k of each 16 × 256 output tile)"
    )]
    DecodeBlocks {
        /// The blocks asked for.
        blocks: usize,
        /// The units of work.
        units: usize,
    },
    /// No rung has that name.
    #[error("no rung named {name:?}; known rungs: {known}")]
    UnknownRung {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// The operands do not fit in device memory.
    #[error(
        "out of device memory: {needed_bytes} bytes are needed but only {free_bytes} are free on the device"
    )]
    OutOfDeviceMemory {
        /// Bytes the run needs.
        needed_bytes: u64,
        /// Bytes free on the device.
        free_bytes: u64,
    },
    /// No usable GPU: no driver library, no device, or the driver refused to start.
    #[error("no CUDA GPU available: {0}")]
    NoGpu(String),
    /// The driver failed while looking for or opening a GPU.
    #[error("no CUDA GPU available: {context}: {source}")]
    GpuUnavailable {
        /// What was being done.
        context: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// cuBLAS could not be loaded or failed.
    #[error("cuBLAS: {0}")]
    Cublas(String),
    /// The driver refused the PTX (for example, a driver older than the PTX version).
    #[error(
        "the CUDA driver could not load the kernels' PTX (PTX ISA {ptx_version}, target {ptx_target}) on {device} (compute capability {}.{}): the driver must accept PTX ISA {ptx_version} and the GPU must support {ptx_target}",
        capability.0,
        capability.1
    )]
    ModuleLoad {
        /// The PTX's `.version`.
        ptx_version: String,
        /// The PTX's `.target`.
        ptx_target: String,
        /// The device's name.
        device: String,
        /// The device's compute capability.
        capability: (i32, i32),
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// A kernel entry point is missing from the loaded PTX.
    #[error("entry point {entry} is missing from the kernels' PTX")]
    MissingKernel {
        /// The entry point's name.
        entry: &'static str,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// The device is older than (or otherwise not one of) the architectures the kernels are
    /// built for.
    #[error(
        "{name} (compute capability {}.{}) cannot run these kernels: they need {needed}",
        capability.0,
        capability.1
    )]
    UnsupportedDevice {
        /// The device's name.
        name: String,
        /// Its compute capability.
        capability: (i32, i32),
        /// What the kernels need.
        needed: &'static str,
    },
    /// A PTX module name other than `sm80` and `sm90a`.
    #[error("no PTX module named {name:?}; the modules are sm80 (portable) and sm90a (Hopper)")]
    UnknownPtxModule {
        /// The name given.
        name: String,
    },
    /// Work that cannot be recorded into a CUDA graph, refused before anything was queued
    /// ([`crate::Gemm::capture`] and calls made while a capture is in progress): an allocation
    /// or upload the call would make on first use (prepare it before capturing), a stream or
    /// setting stream capture cannot work with, or a call from another thread.
    #[error("cannot capture into a CUDA graph: {what}")]
    CaptureUnsupported {
        /// What would have broken the capture, and how to prepare for it.
        what: String,
    },
    /// The GPU reported a failure while running the stream's work: a kernel faulted (for
    /// example on an invalid address). CUDA makes such faults sticky: the context cannot be used
    /// again, and every later call on it fails.
    #[error(
        "the GPU failed while running the stream ({source}); the last kernel queued was {kernel}; \
         after a fault the CUDA context cannot be used again"
    )]
    KernelFault {
        /// The entry point of the last kernel queued before the failure was seen.
        kernel: &'static str,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// Any other CUDA driver error, with what was being done.
    #[error("CUDA error while {context}: {source}")]
    Cuda {
        /// What the host was doing.
        context: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
}

impl GemmError {
    /// Wraps a driver error with what the host was doing when it happened.
    pub fn cuda(context: impl Into<String>, source: cudarc::driver::DriverError) -> Self {
        GemmError::Cuda {
            context: context.into(),
            source,
        }
    }

    /// The driver refused `ptx` on the device `info` describes.
    pub fn module_load(
        ptx: &str,
        info: &crate::runtime::DeviceInfo,
        source: cudarc::driver::DriverError,
    ) -> Self {
        let directive = |name: &str| {
            ptx.lines()
                .find_map(|line| line.trim().strip_prefix(name))
                .map(|rest| rest.trim().to_string())
                .unwrap_or_else(|| "unknown".into())
        };
        GemmError::ModuleLoad {
            ptx_version: directive(".version"),
            ptx_target: directive(".target"),
            device: info.name.clone(),
            capability: info.compute_capability,
            source,
        }
    }
}
