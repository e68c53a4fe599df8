//! CUDA graphs of library calls: [`Gemm::capture`] records the work that a sequence of calls
//! ([`Gemm::matmul`], [`crate::QuantizedWeights::matmul`]) queues on the `Gemm`'s stream, and
//! [`GemmGraph::launch`] replays all of it with one launch. A decode step's layers take
//! 20–30 µs each, so the few microseconds the host spends launching each kernel show up as
//! gaps between them; a graph launch submits the whole sequence at once.
//!
//! What a capture cannot record is refused before anything is queued, as
//! [`GemmError::CaptureUnsupported`]:
//!
//! - **Device memory made on first use.** A call allocates its scratch (the split-K workspace,
//!   the dequant kernels' workspace and counters, the prefill expansion, padded or staged
//!   copies of misaligned activations) and uploads TMA descriptors the first time it needs
//!   them. An allocation during a capture would become part of the graph (or fail), and an
//!   upload from pageable host memory cannot be captured, so the call refuses instead: make
//!   the same calls once eagerly (same buffers, same m) before capturing, or reserve the
//!   quantized products' scratch with [`crate::QuantizedWeights::reserve`].
//! - **cudarc's event tracking.** With it on and more than one stream in the context, every
//!   access to a `CudaSlice` waits on events recorded before the capture, which CUDA forbids
//!   inside one (and the events recorded during it could not be waited on afterwards). A
//!   capture is refused then: turn tracking off (`CudaContext::disable_event_tracking`, as
//!   cudarc's own graph test does) and order the streams by hand, or keep to one stream.
//! - **The legacy default stream** (`CudaContext::default_stream()`), which CUDA cannot
//!   capture. `CudaContext::per_thread_stream()` or a stream of one's own can be.
//! - **Calls from other threads** on the same `Gemm` while it captures (their work would go
//!   into the graph and never run by itself), and `Gemm::synchronize` inside a capture.
//!
//! The graph keeps the library's own buffers that it reads and writes (workspaces, scratch,
//! TMA descriptors, the packed weights) alive for as long as it exists, even when a later call
//! replaces them, and the kernels' module loaded. The caller's buffers are the caller's: [`GemmGraph::launch`] is `unsafe`
//! because a graph replays raw device addresses.

use super::Gemm;
use crate::GemmError;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode, CUstreamCaptureStatus};
use cudarc::driver::{CudaGraph, CudaModule, CudaSlice, CudaStream, DeviceSlice};
use std::sync::{Arc, Mutex, RwLockReadGuard};
use std::thread::{self, ThreadId};

/// A device allocation of the library's that a captured graph uses: the graph holds it until it
/// is dropped, and orders its release after its own work ([`GemmGraph`]'s `Drop`).
pub(crate) trait Held: Send + Sync {
    /// The stream the allocation is freed on.
    fn stream(&self) -> &Arc<CudaStream>;
}

impl<T> Held for CudaSlice<T> {
    fn stream(&self) -> &Arc<CudaStream> {
        DeviceSlice::stream(self)
    }
}

/// One allocation a graph keeps alive.
pub(crate) type Pinned = Arc<dyn Held>;

/// A capture in progress on a `Gemm`'s stream: the thread that runs it and what its calls used.
pub(crate) struct CaptureState {
    thread: ThreadId,
    pinned: Mutex<Vec<Pinned>>,
}

/// One call on a `Gemm`, from its start to the last thing it queues: holds the capture state
/// for reading, so that a capture can neither begin nor end in the middle of the call.
pub(crate) struct Call<'g> {
    state: RwLockReadGuard<'g, Option<CaptureState>>,
}

impl Call<'_> {
    /// Keeps `held` alive for the graph being captured, if this call is being captured.
    pub(crate) fn pin(&self, held: Pinned) {
        if let Some(capture) = self.state.as_ref() {
            let mut pinned = capture
                .pinned
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            // Calls reuse the same buffers: keep each once.
            let address = Arc::as_ptr(&held) as *const ();
            if !pinned
                .iter()
                .any(|p| Arc::as_ptr(p) as *const () == address)
            {
                pinned.push(held);
            }
        }
    }
}

/// Which kind of stream a `Gemm` runs on, as far as capturing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// The legacy default stream (`CudaContext::default_stream()`, handle 0, or
    /// `CU_STREAM_LEGACY`), which CUDA cannot capture.
    Legacy,
    /// The per-thread default stream (`CudaContext::per_thread_stream()`).
    PerThread,
    /// A stream created by `cuStreamCreate` (`CudaContext::new_stream()`, or one wrapped).
    Created,
}

impl StreamKind {
    /// The kind of `stream`, by its handle.
    pub fn of(stream: &CudaStream) -> StreamKind {
        // CUDA's special handles: 0 and CU_STREAM_LEGACY (0x1) are the legacy stream,
        // CU_STREAM_PER_THREAD (0x2) the calling thread's default stream.
        match stream.cu_stream() as usize {
            0 | 0x1 => StreamKind::Legacy,
            0x2 => StreamKind::PerThread,
            _ => StreamKind::Created,
        }
    }
}

/// Why a capture on a stream of `kind` cannot start, with cudarc's event tracking managing
/// that context's streams (`managing`: tracking on and more than one stream), or `None` if it
/// can.
pub fn capture_refusal(kind: StreamKind, managing: bool) -> Option<String> {
    if kind == StreamKind::Legacy {
        return Some(
            "the Gemm runs on the legacy default stream (CudaContext::default_stream()), which \
             CUDA cannot capture: make the Gemm on a stream of its own (CudaContext::new_stream()) \
             or on CudaContext::per_thread_stream()"
                .into(),
        );
    }
    if managing {
        return Some(tracking_refusal());
    }
    None
}

/// Why nothing is captured while cudarc's event tracking manages the context's streams.
fn tracking_refusal() -> String {
    "cudarc's event tracking is on and the context has more than one stream, so every buffer \
     access would wait on an event recorded outside the capture, which CUDA forbids inside one: \
     call CudaContext::disable_event_tracking() (unsafe: the streams are then ordered by hand) \
     before allocating the buffers, or keep to one stream"
        .into()
}

impl Gemm {
    /// Records the work `calls` queues on this `Gemm`'s stream into a CUDA graph, without
    /// running it, and returns the graph, which [`GemmGraph::launch`] replays. `calls` gets this
    /// `Gemm` and makes its calls as it would eagerly: [`Gemm::matmul`] and
    /// [`crate::QuantizedWeights::matmul`], in order, on the buffers the replays will use (a
    /// graph replays the same device addresses; change what they hold between launches, not
    /// which buffers they are).
    ///
    /// **Prepare before capturing.** Anything a call would allocate or upload on first use is
    /// refused inside a capture ([`GemmError::CaptureUnsupported`]): run the same calls once
    /// eagerly first (same buffers, same m), which makes every workspace and TMA descriptor
    /// they need, or for decode-sized products reserve the quantized products' scratch with
    /// [`crate::QuantizedWeights::reserve`]. The stream must not be the legacy default stream,
    /// and cudarc's event tracking must not be managing several streams of the context (see
    /// [`crate::api::graph`]).
    ///
    /// The capture runs in CUDA's thread-local mode: calls the CUDA documentation lists as
    /// unsafe during a capture (a `cuMemAlloc`, a synchronous copy) fail when this thread makes
    /// them, instead of silently running outside the graph, while other threads of the
    /// program, which know nothing of this capture, keep working (the global mode would make
    /// theirs fail too, and the relaxed mode would let this thread's through). While the
    /// capture lasts, calls on this `Gemm` from other threads are refused.
    ///
    /// If `calls` returns an error (or panics), the capture is ended, its partial graph
    /// dropped, and the error returned: the stream is usable again.
    ///
    /// Inside `calls`, make the buffers' contents change outside the graph, not in it: do not
    /// allocate, copy from the host or drop cudarc buffers on the `Gemm`'s stream there (an
    /// allocation or a free would become part of the graph, a copy from pageable memory is
    /// refused by CUDA); copies into the inputs belong before each [`GemmGraph::launch`].
    ///
    /// ```no_run
    /// use rust_gemm::{Gemm, Group, QuantizedWeights, WeightFormat};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// // One stream, ordered by hand: cudarc's event tracking cannot be captured.
    /// unsafe { ctx.disable_event_tracking() };
    /// let stream = ctx.new_stream()?;
    /// let gemm = Gemm::new(stream.clone())?;
    /// let (k, n) = (4096, 4096);
    /// let w = vec![0.01f32; k * n];
    /// let w1 = QuantizedWeights::quantize(&gemm, &w, k, n, WeightFormat::Unsigned(4), Group::Rows(128))?;
    /// let w2 = QuantizedWeights::quantize(&gemm, &w, k, n, WeightFormat::Unsigned(4), Group::Rows(128))?;
    /// let m = 1;
    /// let mut x = stream.alloc_zeros::<half::f16>(m * k)?;
    /// let mut h = stream.alloc_zeros::<half::f16>(m * n)?;
    /// let mut y = stream.alloc_zeros::<half::f16>(m * n)?;
    /// // Make every scratch buffer the calls need, then record them.
    /// w1.reserve(&gemm, m)?;
    /// w2.reserve(&gemm, m)?;
    /// let graph = gemm.capture(|gemm| {
    ///     w1.matmul(gemm, &x, &mut h, m)?;
    ///     w2.matmul(gemm, &h, &mut y, m)
    /// })?;
    /// for step in 0..8 {
    ///     stream.memcpy_htod(&vec![half::f16::from_f32(step as f32); m * k], &mut x)?;
    ///     // SAFETY: x, h and y are alive and used by nothing else while the graph runs.
    ///     unsafe { graph.launch() }?;
    /// }
    /// let y = stream.clone_dtoh(&y)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn capture(
        &self,
        calls: impl FnOnce(&Gemm) -> Result<(), GemmError>,
    ) -> Result<GemmGraph, GemmError> {
        let stream = self.stream();
        let managing = stream.context().is_managing_stream_synchronization();
        if let Some(what) = capture_refusal(StreamKind::of(stream), managing) {
            return Err(GemmError::CaptureUnsupported { what });
        }
        {
            // The write lock waits for calls in flight on other threads, and keeps new ones
            // out until the state says who captures.
            let mut state = self
                .capture
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if state.is_some() {
                return Err(GemmError::CaptureUnsupported {
                    what: "this Gemm is already capturing (captures do not nest)".into(),
                });
            }
            if self.runtime.capturing()? {
                return Err(GemmError::CaptureUnsupported {
                    what: "the Gemm's stream is already being captured (outside Gemm::capture)"
                        .into(),
                });
            }
            stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(|e| GemmError::cuda("beginning a stream capture", e))?;
            *state = Some(CaptureState {
                thread: thread::current().id(),
                pinned: Mutex::new(Vec::new()),
            });
        }
        // From here on the capture ends whatever `calls` does, a panic included.
        let capture = Capturing {
            gemm: self,
            ended: false,
        };
        let outcome = calls(self);
        capture.end(outcome)
    }

    /// The state of the current call: refuses calls from other threads while this `Gemm`
    /// captures, and calls that cudarc's event tracking would break inside a capture.
    pub(crate) fn begin_call(&self) -> Result<Call<'_>, GemmError> {
        let state = self
            .capture
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let managing = self.stream().context().is_managing_stream_synchronization();
        match state.as_ref() {
            Some(capture) if capture.thread != thread::current().id() => {
                Err(GemmError::CaptureUnsupported {
                    what: "a call from another thread while this Gemm's stream is being \
                           captured (its work would go into that graph and never run by \
                           itself): make it before or after the capture, or on a Gemm of its \
                           own stream"
                        .into(),
                })
            }
            // Tracking was turned on (or a second stream made) after the capture began.
            Some(_) if managing => Err(GemmError::CaptureUnsupported {
                what: tracking_refusal(),
            }),
            // A capture begun outside `Gemm::capture`: with tracking managing the streams,
            // the buffer accesses below would break it. Only then is the stream asked, since
            // the question costs a driver call.
            None if managing && self.runtime.capturing()? => Err(GemmError::CaptureUnsupported {
                what: tracking_refusal(),
            }),
            _ => Ok(Call { state }),
        }
    }

    /// Whether this `Gemm` is capturing (from any thread).
    pub(crate) fn is_capturing(&self) -> bool {
        self.capture
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some()
    }
}

/// A capture begun on `gemm`'s stream, ended once: by [`Capturing::end`], or on drop if
/// `calls` panicked.
struct Capturing<'g> {
    gemm: &'g Gemm,
    ended: bool,
}

impl Capturing<'_> {
    /// Ends the capture: on success, instantiates the graph with what the calls pinned; on
    /// `outcome`'s error, drops the partial graph and returns the error.
    fn end(mut self, outcome: Result<(), GemmError>) -> Result<GemmGraph, GemmError> {
        self.ended = true;
        let gemm = self.gemm;
        let stream = gemm.stream();
        // Held until the capture has ended and the state is cleared, so that no other thread's
        // call reaches the stream while it still captures.
        let mut state = gemm
            .capture
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let pinned = state.take().map_or_else(Vec::new, |capture| {
            capture
                .pinned
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        });
        if let Err(error) = outcome {
            abandon(stream);
            drop(pinned);
            return Err(error);
        }
        let graph = match stream.end_capture(CUgraphInstantiate_flags(0)) {
            Ok(Some(graph)) => graph,
            Ok(None) => {
                return Err(GemmError::CaptureUnsupported {
                    what: "the driver returned no graph for the capture".into(),
                });
            }
            Err(e) => {
                // cudarc first reports any error an earlier call left in its context (a buffer
                // freed during the capture, say), without ending the capture: end it here.
                abandon(stream);
                return Err(GemmError::cuda(
                    "ending the stream capture (something queued during it could not be captured)",
                    e,
                ));
            }
        };
        Ok(GemmGraph {
            graph,
            stream: stream.clone(),
            pinned,
            _module: gemm.runtime.module().clone(),
            last_kernel: gemm.last_kernel(),
            gemm_last_kernel: gemm.last_kernel.clone(),
        })
    }
}

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // `calls` panicked: end the capture so that the stream works again.
        let mut state = self
            .gemm
            .capture
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        abandon(self.gemm.stream());
        *state = None;
    }
}

/// Ends a capture on `stream` that is being given up, and destroys what it recorded. Straight
/// through the driver: cudarc's calls first return any error stored in its context, which would
/// leave the capture running.
fn abandon(stream: &CudaStream) {
    use cudarc::driver::result;
    // SAFETY: the context and stream are alive (`stream` holds both); the graph, if any, is
    // destroyed once, here, and was never instantiated.
    unsafe {
        if result::ctx::set_current(stream.context().cu_ctx()).is_err() {
            return;
        }
        let Ok(status) = result::stream::is_capturing(stream.cu_stream()) else {
            return;
        };
        if status == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return;
        }
        // An invalidated capture ends with an error and no graph: nothing more to do.
        match result::stream::end_capture(stream.cu_stream()) {
            Ok(graph) if !graph.is_null() => {
                let _ = result::graph::destroy(graph);
            }
            _ => {}
        }
    }
}

/// Work captured from a [`Gemm`]'s stream by [`Gemm::capture`], replayed on that stream by
/// [`GemmGraph::launch`] with one launch: every kernel, copy and reduction the captured calls
/// queued, in their order, on the same buffers.
///
/// The graph keeps the library buffers it uses alive (workspaces, scratch, TMA descriptors,
/// packed weights) and the kernels' module loaded, even if the `Gemm` or the
/// [`crate::QuantizedWeights`] are dropped or replace them; the caller keeps its own buffers alive (see [`GemmGraph::launch`]).
///
/// `GemmGraph` is `Send` but not `Sync`: CUDA requires the calls on one graph to be made one at
/// a time, so launches from several threads need a lock around it.
///
/// ```no_run
/// use rust_gemm::{Gemm, MatmulDesc};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = cudarc::driver::CudaContext::new(0)?;
/// let stream = ctx.per_thread_stream(); // capturable; the legacy default stream is not
/// let gemm = Gemm::new(stream.clone())?;
/// let (m, n, k) = (16, 4096, 4096);
/// let x = stream.clone_htod(&vec![half::f16::from_f32(0.5); m * k])?;
/// let w = stream.clone_htod(&vec![half::f16::from_f32(0.25); n * k])?;
/// let mut y = stream.alloc_zeros::<half::f16>(m * n)?;
/// let desc = MatmulDesc::new(m, n, k).b_transposed();
/// gemm.matmul(&x, &w, &mut y, &desc)?; // eagerly once: makes its workspace
/// let graph = gemm.capture(|gemm| gemm.matmul(&x, &w, &mut y, &desc))?;
/// graph.upload()?;
/// // SAFETY: x, w and y are alive and nothing else uses them while it runs.
/// unsafe { graph.launch() }?;
/// gemm.synchronize()?;
/// # Ok(())
/// # }
/// ```
pub struct GemmGraph {
    graph: CudaGraph,
    stream: Arc<CudaStream>,
    /// The library's buffers the graph uses, kept until it is dropped.
    pinned: Vec<Pinned>,
    /// The module of its kernels: unloading it would leave the graph's kernel nodes without
    /// code. Declared after `graph`, so that it is unloaded after the graph is destroyed.
    _module: Arc<CudaModule>,
    /// The last kernel the captured calls queued, which a fault seen after a launch names.
    last_kernel: Option<&'static str>,
    gemm_last_kernel: Arc<Mutex<Option<&'static str>>>,
}

// SAFETY: a CUDA graph and its executable are handles that any thread may use (cudarc's
// `CudaGraph` is not `Send` only because it holds raw pointers); its methods make the context
// current on the calling thread. Not `Sync`: calls on one graph must not overlap.
unsafe impl Send for GemmGraph {}

impl GemmGraph {
    /// Queues the captured work on the `Gemm`'s stream, as one graph launch. Like any work on
    /// the stream it runs after what is already queued there and completes later; a fault in
    /// one of its kernels is seen by [`Gemm::synchronize`], which then names the last kernel
    /// the capture recorded.
    ///
    /// # Safety
    /// The graph replays the device addresses the captured calls were given: every buffer of
    /// the caller's that they read or wrote (activations, outputs, weights, biases) must still
    /// be allocated, and no other stream may use one while the launch runs unless the caller
    /// orders it (cudarc's event tracking cannot see inside a graph). The library's own
    /// buffers are kept by the graph.
    pub unsafe fn launch(&self) -> Result<(), GemmError> {
        self.graph
            .launch()
            .map_err(|e| GemmError::cuda("launching a CUDA graph", e))?;
        if let Some(kernel) = self.last_kernel {
            *self
                .gemm_last_kernel
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(kernel);
        }
        Ok(())
    }

    /// Uploads the graph's resources to the device ahead of its first launch, which otherwise
    /// does it (queued on the stream; optional).
    pub fn upload(&self) -> Result<(), GemmError> {
        self.graph
            .upload()
            .map_err(|e| GemmError::cuda("uploading a CUDA graph", e))
    }

    /// The stream the graph is launched on (the `Gemm`'s).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl Drop for GemmGraph {
    fn drop(&mut self) {
        // The pinned buffers are freed (when this graph held the last reference) on the streams
        // they were made on, in that stream's order. Where that is not the graph's stream, it
        // waits for the graph's launches first: a launch may still be running.
        let mut others: Vec<&Arc<CudaStream>> = Vec::new();
        for held in &self.pinned {
            let stream = held.stream();
            if **stream != *self.stream && !others.iter().any(|s| ***s == **stream) {
                others.push(stream);
            }
        }
        if others.is_empty() {
            return;
        }
        let ordered = self
            .stream
            .record_event(None)
            .is_ok_and(|event| others.iter().all(|stream| stream.wait(&event).is_ok()));
        if !ordered {
            // No event to order them by: wait for the launches on the host instead.
            let _ = self.stream.synchronize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_refuse_the_legacy_stream_and_managed_tracking() {
        for managing in [false, true] {
            let legacy = capture_refusal(StreamKind::Legacy, managing).expect("refused");
            assert!(legacy.contains("legacy default stream"), "{legacy}");
            assert!(legacy.contains("new_stream"), "{legacy}");
        }
        for kind in [StreamKind::PerThread, StreamKind::Created] {
            assert_eq!(capture_refusal(kind, false), None, "{kind:?}");
            let tracked = capture_refusal(kind, true).expect("refused");
            assert!(tracked.contains("disable_event_tracking"), "{tracked}");
        }
    }

    #[test]
    fn capture_refusals_read_as_such() {
        let error = GemmError::CaptureUnsupported {
            what: "allocating the split-K workspace".into(),
        };
        assert_eq!(
            error.to_string(),
            "cannot capture into a CUDA graph: allocating the split-K workspace"
        );
    }
}
