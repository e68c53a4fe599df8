//! The public API: [`Gemm`] multiplies matrices the caller already holds on the GPU, on the
//! caller's own stream, with the fastest kernel the device and the call allow.
//!
//! ```no_run
//! use rust_gemm::{Gemm, MatmulDesc};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = cudarc::driver::CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let gemm = Gemm::new(stream.clone())?;
//! let (m, n, k) = (256, 512, 1024);
//! let a = stream.clone_htod(&vec![1.0f32; m * k])?;
//! let b = stream.clone_htod(&vec![0.5f32; k * n])?;
//! let mut c = stream.alloc_zeros::<f32>(m * n)?;
//! gemm.matmul(&a, &b, &mut c, &MatmulDesc::new(m, n, k))?;
//! let c = stream.clone_dtoh(&c)?;
//! assert_eq!(c[0], 512.0);
//! # Ok(())
//! # }
//! ```

pub mod desc;
pub mod dispatch;
pub mod element;
pub mod graph;
pub mod plan_cache;
pub mod problem;
pub mod quantized;

use crate::GemmError;
use crate::runtime::tensor_map::{MatrixView, TensorMapError, encode_tiled_map};
use crate::runtime::{DeviceInfo, Runtime};
use cudarc::driver::CudaSlice;
use cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DriverError, LaunchConfig, PushKernelArg,
};
use desc::BLayout;
use desc::{Activation, MatmulDesc};
use dispatch::KernelSpec;
use dispatch::{DeviceCaps, Plan};
use element::{DType, GemmElement};
use gemm_geometry::GemmArgs;
use graph::{Call, CaptureState};
use problem::{Buffers, Problem, Request};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// The library kernels' argument block, as a kernel parameter.
#[repr(transparent)]
struct KernelArgs(GemmArgs);

// SAFETY: GemmArgs is `#[repr(C)]` plain data (integers and floats, no padding bytes left
// uninitialized: its last word, `stream_k_tiles`, fills the tail), which the kernels read as one `.param`
// block of the same layout.
unsafe impl DeviceRepr for KernelArgs {}

/// Matrix products on one stream with the kernels loaded for its device.
///
/// `Gemm` is `Send + Sync`: calls from several threads go to its stream in the order they are
/// made (a stream is a queue). For concurrent work, give each thread its own `Gemm` on its own
/// stream.
pub struct Gemm {
    runtime: Runtime,
    caps: DeviceCaps,
    /// TMA tensor maps already on the device, by what they describe (shared with the CUDA
    /// graphs that captured a kernel reading them).
    tensor_maps: Mutex<HashMap<TensorMapKey, Arc<CudaSlice<u8>>>>,
    /// The entry point of the last kernel queued, which a fault found later names (shared with
    /// the graphs captured from this `Gemm`, whose launches set it).
    last_kernel: Arc<Mutex<Option<&'static str>>>,
    /// The split-K workspace (fp32), grown to the largest split so far. Every call goes to
    /// the one stream, in order, so one workspace serves them all; the lock is held from
    /// choosing it to queueing the reduction that last reads it. A graph that captured a split
    /// keeps the workspace it used.
    workspace: Mutex<Option<Arc<CudaSlice<f32>>>>,
    /// The stream-K workspace (`gemm_geometry::stream_k`: flags, then one slot per block),
    /// grown to the largest need so far. Made zero when allocated; every launch leaves its
    /// flags zero again, and the stream runs launches one after the other, so one serves them
    /// all. A graph that captured a stream-K launch keeps the one it used.
    stream_k_workspace: Mutex<Option<Arc<CudaSlice<u8>>>>,
    /// The scratch buffers of [`QuantizedWeights::matmul`](quantized::QuantizedWeights::matmul)
    /// on this stream, for every weight matrix multiplied through this `Gemm` (grown to the
    /// largest need): the decode kernels' split-K workspace and arrival counters, padded A,
    /// staged C and the prefill expansion. They are the stream's, not the weights': kernels of
    /// two streams sharing them would overlap on the device and mix their partial sums, while
    /// one stream runs its launches in order. The lock is held from choosing the buffers to
    /// queueing the last launch that uses them.
    quantized_scratch: Mutex<crate::quant::fast::Scratch>,
    /// The capture in progress on the stream ([`Gemm::capture`]), if any. Every call holds it
    /// for reading from start to end, so a capture begins and ends between calls.
    capture: RwLock<Option<CaptureState>>,
    /// The plans of recent calls ([`plan_cache`]): a repeated call skips dispatch.
    plans: Mutex<plan_cache::PlanCache>,
}

/// What a TMA kernel's pair of tensor maps describes: element type, B layout, and each map's
/// view and box (kernels of different tiles read the same matrices through different boxes).
type TensorMapKey = (DType, BLayout, [(MatrixView, [u32; 2]); 2]);

/// Tensor-map buffers kept at most: calls on other buffers or shapes beyond this start over
/// (the freed buffers are released in stream order, after the kernels that read them).
const TENSOR_MAP_CACHE: usize = 64;

impl Gemm {
    /// Loads the kernels for `stream`'s device; every call is queued on `stream`, which the
    /// caller keeps owning. Needs no cuBLAS. Fails with [`GemmError::UnsupportedDevice`] on a
    /// GPU the kernels are not built for, or [`GemmError::ModuleLoad`] if the driver refuses
    /// the PTX.
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, GemmError> {
        let runtime = Runtime::new(stream)?;
        Ok(Self::from_runtime(runtime))
    }

    /// A `Gemm` over an existing [`Runtime`].
    pub fn from_runtime(runtime: Runtime) -> Self {
        let info = runtime.info();
        let caps = DeviceCaps {
            compute_capability: info.compute_capability,
            sm_count: info.sm_count,
            max_shared_per_block: info.max_shared_per_block,
            entries: runtime.entries().to_vec(),
        };
        Gemm {
            runtime,
            caps,
            tensor_maps: Mutex::new(HashMap::new()),
            last_kernel: Arc::new(Mutex::new(None)),
            workspace: Mutex::new(None),
            stream_k_workspace: Mutex::new(None),
            quantized_scratch: Mutex::new(Default::default()),
            capture: RwLock::new(None),
            plans: Mutex::new(Default::default()),
        }
    }

    /// The stream every call is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.runtime.stream()
    }

    /// The device's properties.
    pub fn device(&self) -> &DeviceInfo {
        self.runtime.info()
    }

    /// What dispatch knows of the device.
    pub fn caps(&self) -> &DeviceCaps {
        &self.caps
    }

    /// The runtime underneath (module, launches, memory).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Waits until everything queued on the stream has run. Kernels run asynchronously, so a
    /// kernel that faults (an invalid address, say, from an `unsafe` view) is seen here, as
    /// [`GemmError::KernelFault`] naming the last kernel this `Gemm` queued. Refused with
    /// [`GemmError::CaptureUnsupported`] while the stream is being captured ([`Gemm::capture`]):
    /// the captured work has not run, and CUDA forbids waiting for a capturing stream.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        if self.is_capturing() {
            return Err(GemmError::CaptureUnsupported {
                what: "synchronizing the stream while it is being captured (nothing captured \
                       has run: launch the graph, then synchronize)"
                    .into(),
            });
        }
        self.stream()
            .synchronize()
            .map_err(|source| GemmError::KernelFault {
                kernel: self
                    .last_kernel()
                    .unwrap_or("none (no kernel was queued by this Gemm)"),
                source,
            })
    }

    /// The entry point of the last kernel this `Gemm` queued, if any.
    pub fn last_kernel(&self) -> Option<&'static str> {
        *self
            .last_kernel
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The scratch of quantized products on this stream (see the field), locked.
    pub(crate) fn quantized_scratch(
        &self,
    ) -> std::sync::MutexGuard<'_, crate::quant::fast::Scratch> {
        self.quantized_scratch
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes `entry` as the last kernel queued (for [`Gemm::synchronize`]'s report).
    pub(crate) fn queued(&self, entry: &'static str) {
        *self
            .last_kernel
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(entry);
    }

    /// Every kernel the library can choose from, fastest first per element type and layout.
    pub fn kernels() -> &'static [dispatch::KernelSpec] {
        dispatch::KERNELS
    }

    /// The kernel [`Gemm::matmul`] would run for these buffers and description, and why;
    /// every check of `matmul` is made, nothing is launched.
    pub fn plan<T: GemmElement>(
        &self,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        c: &impl DevicePtr<T>,
        desc: &MatmulDesc<'_, T>,
    ) -> Result<Plan, GemmError> {
        let stream = self.runtime.stream();
        let (a_ptr, _a_guard) = a.device_ptr(stream);
        let (b_ptr, _b_guard) = b.device_ptr(stream);
        let (c_ptr, _c_guard) = c.device_ptr(stream);
        let bias = desc.epilogue.bias;
        let bias_guard = bias.map(|bias| bias.device_ptr(stream));
        let problem = self.problem(
            desc,
            [(a.stream(), "A"), (b.stream(), "B"), (c.stream(), "C")],
            Buffers {
                a: (a_ptr, a.len()),
                b: (b_ptr, b.len()),
                c: (c_ptr, c.len()),
                bias: bias.zip(bias_guard.as_ref()).map(|(b, g)| (g.0, b.len())),
            },
        )?;
        self.choose_plan(&problem, desc)
    }

    /// Dispatch's plan for `problem` as `desc` forces it, from the cache of recent calls when
    /// the same problem was planned before.
    fn choose_plan<T: GemmElement>(
        &self,
        problem: &Problem,
        desc: &MatmulDesc<'_, T>,
    ) -> Result<Plan, GemmError> {
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        plans.get_or_choose(problem, desc.kernel, desc.split_k, desc.stream_k, || {
            dispatch::choose_plan(
                &self.caps,
                problem,
                desc.kernel,
                desc.split_k,
                desc.stream_k,
            )
        })
    }

    /// Queues `C = act(alpha·A·B + beta·C + bias)` as `desc` describes, on the stream. Every
    /// description and buffer is checked first ([`GemmError`] says what is wrong); the
    /// kernel is the fastest that accepts the call ([`Gemm::plan`] shows which).
    ///
    /// The buffers may be [`cudarc::driver::CudaSlice`]s or views into larger buffers
    /// (`slice(..)`, `slice_mut(..)`), at least as long as the description needs.
    ///
    /// Capturable ([`Gemm::capture`]) once the same call has run eagerly on the same buffers:
    /// that makes the split-K workspace, the TMA descriptors and the transposed copy of B it
    /// may need, which a captured call refuses to make ([`GemmError::CaptureUnsupported`]).
    pub fn matmul<T: GemmElement>(
        &self,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        c: &mut impl DevicePtrMut<T>,
        desc: &MatmulDesc<'_, T>,
    ) -> Result<(), GemmError> {
        let call = self.begin_call()?;
        self.matmul_in(&call, a, b, c, desc)
    }

    /// [`Gemm::matmul`] within `call` (begun by the caller, which may queue more in it).
    pub(crate) fn matmul_in<T: GemmElement>(
        &self,
        call: &Call<'_>,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        c: &mut impl DevicePtrMut<T>,
        desc: &MatmulDesc<'_, T>,
    ) -> Result<(), GemmError> {
        let stream = self.runtime.stream();
        let (a_ptr, _a_guard) = a.device_ptr(stream);
        let (b_ptr, _b_guard) = b.device_ptr(stream);
        let c_len = c.len();
        let c_stream = c.stream().clone();
        let (c_ptr, _c_guard) = c.device_ptr_mut(stream);
        let bias = desc.epilogue.bias;
        let bias_guard = bias.map(|bias| bias.device_ptr(stream));
        let problem = self.problem(
            desc,
            [(a.stream(), "A"), (b.stream(), "B"), (&c_stream, "C")],
            Buffers {
                a: (a_ptr, a.len()),
                b: (b_ptr, b.len()),
                c: (c_ptr, c_len),
                bias: bias.zip(bias_guard.as_ref()).map(|(b, g)| (g.0, b.len())),
            },
        )?;
        let plan = self.choose_plan(&problem, desc)?;
        self.launch(call, &plan, &problem)
    }

    /// Checks the description, the buffers' device and their extents.
    fn problem<T: GemmElement>(
        &self,
        desc: &MatmulDesc<'_, T>,
        streams: [(&Arc<CudaStream>, &'static str); 3],
        buffers: Buffers,
    ) -> Result<Problem, GemmError> {
        if desc.tf32 && T::DTYPE != DType::F32 {
            return Err(GemmError::Tf32NeedsF32);
        }
        let ours = self.runtime.context().cu_ctx();
        let bias_stream = desc.epilogue.bias.map(|b| (b.stream(), "bias"));
        for (stream, operand) in streams.into_iter().chain(bias_stream) {
            if stream.context().cu_ctx() != ours {
                return Err(GemmError::WrongContext { operand });
            }
        }
        let request = Request {
            dtype: desc.dtype(),
            b_layout: desc.b_layout,
            m: desc.m,
            n: desc.n,
            k: desc.k,
            batch: desc.batch,
            lds: (desc.lda, desc.ldb, desc.ldc),
            strides: desc.strides,
            alpha: desc.alpha,
            beta: desc.beta,
            activation: desc.epilogue.activation,
        };
        problem::validate(&request, buffers)
    }

    /// Launches `plan` for `problem`, keeping the library buffers it uses for a graph if
    /// `call` is being captured.
    fn launch(&self, call: &Call<'_>, plan: &Plan, problem: &Problem) -> Result<(), GemmError> {
        let spec = plan.kernel;
        // A kernel that reads B in the other layout (v19 on B `[k, n]`, `v13_m64_via_kn` on
        // B `[n, k]`): queue B's transposed copy first and let the kernel read that. `copy`
        // holds the runtime's scratch buffer until the product is queued.
        let copy = if spec.transposes_b() {
            let source = dispatch::transpose_source(problem);
            // SAFETY: validation checked that B holds every element of `source` (it is B's
            // own description), in this context; the copy is queued on the call's stream
            // before anything of this call writes (C overlaps no input).
            let copy = unsafe { self.runtime.transposed_copy(&source) }?;
            call.pin(copy.buffer());
            Some(copy)
        } else {
            None
        };
        let copy_address = copy.as_ref().map_or(0, |copy| copy.address);
        let problem = &dispatch::kernel_problem(spec, problem, copy_address);
        let maps = if spec.tensor_maps {
            self.tensor_maps(call, spec, problem)?
        } else {
            0
        };
        let mut args = kernel_args(problem, maps);
        // A split holds the workspace's lock until its reduction is queued: no other call may
        // grow (free) the workspace between the two launches. Calls without a split leave the
        // workspace alone and take no lock.
        let _workspace_held = if plan.splits > 1 {
            let mut held = self
                .workspace
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            args.workspace = self.workspace(&mut held, plan, problem)?;
            call.pin(held.clone().expect("workspace allocated above"));
            args.splits = plan.splits;
            args.k_chunk = plan.k_chunk;
            Some(held)
        } else {
            None
        };
        // A stream-K launch takes the stream-K workspace (never with a split) for as long as it
        // is being queued.
        let _stream_k_held = if plan.stream_k_tiles > 0 {
            let mut held = self
                .stream_k_workspace
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            args.workspace = self.stream_k_workspace(&mut held, plan)?;
            call.pin(held.clone().expect("workspace allocated above"));
            args.stream_k_tiles = plan.stream_k_tiles;
            Some(held)
        } else {
            None
        };
        let config = LaunchConfig {
            grid_dim: plan.grid,
            block_dim: (spec.threads, 1, 1),
            shared_mem_bytes: spec.shared_bytes,
        };
        // SAFETY: `problem` was validated against the buffers' lengths (every element the
        // kernel reads or writes lies inside them, C overlaps no input), the addresses belong
        // to this context, dispatch checked the kernel's alignment and shared-memory needs
        // (and, for a split, that it splits k), the workspace holds splits·batch·m·n values
        // (for stream-K: the flags, zero, and a slot per block of this grid), and the argument
        // block has the layout the kernel reads.
        unsafe { self.launch_entry(spec.entry, config, &args) }?;
        if let Some(entry) = plan.reduction() {
            let elements = (problem.batch * problem.m * problem.n) as u64;
            let threads = gemm_geometry::split_k::REDUCE_THREADS;
            // Enough blocks to fill the device a few times; each thread walks the rest.
            let blocks = gemm_geometry::split_k::reduce_blocks(
                elements,
                plan.splits,
                self.caps.sm_count as u32,
            );
            let config = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: queued after the split launch on the same stream, which filled the
            // workspace for these arguments; it writes only the described elements of C and
            // reads C only when beta ≠ 0, as the split launch would have.
            unsafe { self.launch_entry(entry, config, &args) }?;
        }
        Ok(())
    }

    /// Queues `entry` with the argument block `args`.
    ///
    /// # Safety
    /// `args` must satisfy the entry's preconditions and `config` be its launch.
    unsafe fn launch_entry(
        &self,
        entry: &'static str,
        config: LaunchConfig,
        args: &GemmArgs,
    ) -> Result<(), GemmError> {
        let function = self.runtime.kernel(entry)?;
        let args = KernelArgs(*args);
        let mut builder = self.runtime.stream().launch_builder(&function);
        builder.arg(&args);
        // SAFETY: the caller's contract.
        unsafe { builder.launch(config) }
            .map_err(|e| GemmError::cuda(format!("launching {entry}"), e))?;
        self.queued(entry);
        Ok(())
    }

    /// The device address of a workspace of at least `plan.splits · batch · m · n` fp32 values,
    /// growing `held` (the `Gemm`'s, locked by the caller) when it is shorter.
    fn workspace(
        &self,
        held: &mut Option<Arc<CudaSlice<f32>>>,
        plan: &Plan,
        problem: &Problem,
    ) -> Result<u64, GemmError> {
        let needed = plan.splits as usize * problem.batch * problem.m * problem.n;
        self.grown(
            held,
            needed,
            "split-K workspace",
            || {
                format!(
                    "growing the split-K workspace to {needed} fp32 values ({} splits)",
                    plan.splits
                )
            },
            // SAFETY: every element the split kernel's reduction reads, the split kernel
            // writes first.
            |stream, len| unsafe { stream.alloc::<f32>(len) },
        )
    }
}

impl Gemm {
    /// The device address of a stream-K workspace for `plan`'s grid and tiles (flags zero),
    /// growing `held` (the `Gemm`'s, locked by the caller) when it is shorter.
    fn stream_k_workspace(
        &self,
        held: &mut Option<Arc<CudaSlice<u8>>>,
        plan: &Plan,
    ) -> Result<u64, GemmError> {
        let spec = plan.kernel;
        let blocks = plan.grid.0 * plan.grid.1 * plan.grid.2;
        let needed =
            gemm_geometry::stream_k::workspace_bytes(blocks, spec.block_tile_m * spec.block_tile_n)
                as usize;
        self.grown(
            held,
            needed,
            "stream-K workspace",
            || format!("growing the stream-K workspace to {needed} bytes"),
            |stream, len| stream.alloc_zeros::<u8>(len),
        )
    }

    /// The device address of `held` (one of the `Gemm`'s scratch buffers, locked by the
    /// caller), first replaced by `allocate(stream, needed)` when it holds fewer than `needed`
    /// elements: refused during a capture (`growing` says what would grow), the old buffer
    /// freed in stream order, after the kernels that used it (or, if a CUDA graph captured
    /// one, when that graph is dropped).
    fn grown<T: DeviceRepr>(
        &self,
        held: &mut Option<Arc<CudaSlice<T>>>,
        needed: usize,
        what: &str,
        growing: impl FnOnce() -> String,
        allocate: impl FnOnce(&Arc<CudaStream>, usize) -> Result<CudaSlice<T>, DriverError>,
    ) -> Result<u64, GemmError> {
        if held.as_ref().is_none_or(|w| w.len() < needed) {
            self.runtime.refuse_in_capture(growing)?;
            *held = None;
            let fresh = allocate(self.runtime.stream(), needed)
                .map_err(|e| GemmError::cuda(format!("allocating the {what}"), e))?;
            *held = Some(Arc::new(fresh));
        }
        let workspace = held.as_deref().expect("allocated above");
        Ok(self.runtime.address(workspace))
    }

    /// The device address of the tensor maps (A's, then B's, 128 bytes each) a TMA kernel reads
    /// for `problem`, encoded and uploaded on first use.
    fn tensor_maps(
        &self,
        call: &Call<'_>,
        spec: &KernelSpec,
        problem: &Problem,
    ) -> Result<u64, GemmError> {
        let views =
            dispatch::tensor_map_views(spec, problem).map_err(|e| GemmError::KernelRefused {
                kernel: spec.name,
                reason: e.to_string(),
            })?;
        let key = (problem.dtype, problem.b_layout, views);
        let mut cache = self
            .tensor_maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(maps) = cache.get(&key) {
            call.pin(maps.clone());
            return Ok(self.runtime.address(maps));
        }
        // New maps are uploaded from host memory, which a capture cannot record.
        self.runtime.refuse_in_capture(|| {
            format!(
                "uploading the TMA descriptors of {} for these buffers (TMA descriptors hold the \
                 buffers' addresses and shapes)",
                spec.name
            )
        })?;
        let element = dispatch::map_element(problem.dtype);
        let mut bytes = Vec::with_capacity(256);
        for (view, [cols, rows]) in views {
            let map = encode_tiled_map(element, &view, cols, rows).map_err(|e| match e {
                TensorMapError::Driver(source) => {
                    GemmError::cuda("encoding a TMA tensor map", source)
                }
                other => GemmError::KernelRefused {
                    kernel: spec.name,
                    reason: other.to_string(),
                },
            })?;
            bytes.extend_from_slice(&map);
        }
        if cache.len() >= TENSOR_MAP_CACHE {
            cache.clear();
        }
        let maps = Arc::new(self.runtime.upload_raw(&bytes)?);
        let address = self.runtime.address(&maps);
        cache.insert(key, maps);
        Ok(address)
    }
}

/// The argument block for `problem` (`tensor_maps`: their device address, or 0).
pub fn kernel_args(problem: &Problem, tensor_maps: u64) -> GemmArgs {
    let (activation, slope) = match problem.activation {
        None => (gemm_geometry::Activation::Identity, 0.0),
        Some(Activation::Relu) => (gemm_geometry::Activation::Relu, 0.0),
        Some(Activation::LeakyRelu(slope)) => (gemm_geometry::Activation::LeakyRelu, slope),
        Some(Activation::GeluTanh) => (gemm_geometry::Activation::GeluTanh, 0.0),
    };
    // Validation bounds every size by i32::MAX, so the narrowing casts are exact.
    GemmArgs {
        a: problem.buffers.a.0,
        b: problem.buffers.b.0,
        c: problem.buffers.c.0,
        bias: problem.buffers.bias.map_or(0, |(address, _)| address),
        tensor_maps,
        stride_a: problem.strides.0 as u64,
        stride_b: problem.strides.1 as u64,
        stride_c: problem.strides.2 as u64,
        workspace: 0,
        m: problem.m as u32,
        n: problem.n as u32,
        k: problem.k as u32,
        batch: problem.batch as u32,
        lda: problem.lda as u32,
        ldb: problem.ldb as u32,
        ldc: problem.ldc as u32,
        activation: activation as u32,
        alpha: problem.alpha,
        beta: problem.beta,
        slope,
        splits: 1,
        k_chunk: 0,
        stream_k_tiles: 0,
    }
}
