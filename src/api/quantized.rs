//! Quantized weights for the API: a weight matrix quantized and pre-packed once, then
//! multiplied by fp16 or bf16 activations on the GPU (decode for small batches, prefill for
//! large ones).

use super::Gemm;
use super::MatmulDesc;
use super::element::GemmElement;
use crate::GemmError;
use crate::quant::fast::{self, ActivationElement, FastWeights, Path, check_activations};
use crate::quant::format::{WeightFormat, quantize};
use crate::quant::prepack::{Prepacked, check_group};
use cudarc::driver::{DevicePtr, DevicePtrMut, sys::CUcontext};
use std::sync::Arc;

/// An activation type [`QuantizedWeights::matmul`] takes: [`half::f16`] or [`half::bf16`]
/// (sealed). The output has the activations' type; both accumulate in fp32.
pub trait QuantizedActivation: GemmElement + ActivationElement {}
impl QuantizedActivation for half::f16 {}
impl QuantizedActivation for half::bf16 {}

/// Rows of k that share one scale (and zero point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Groups of this many rows: 32, 64, or a multiple of 128 that divides k.
    Rows(usize),
    /// One group per column (the whole of k).
    PerChannel,
}

/// A `k × n` weight matrix, quantized to a low-bit [`WeightFormat`] with fp16 group scales and
/// pre-packed on the device in the layout the dequantizing kernels read, then multiplied by
/// fp16 or bf16 activations ([`QuantizedActivation`]): the same weights serve both.
///
/// ```no_run
/// use rust_gemm::{Gemm, Group, QuantizedWeights, WeightFormat};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = cudarc::driver::CudaContext::new(0)?;
/// let stream = ctx.default_stream();
/// let gemm = Gemm::new(stream.clone())?;
/// let (k, n, m) = (4096, 4096, 1);
/// let w = vec![0.01f32; k * n]; // row-major [k, n]
/// let qw = QuantizedWeights::quantize(&gemm, &w, k, n, WeightFormat::Unsigned(4), Group::Rows(128))?;
/// let x = stream.clone_htod(&vec![half::f16::from_f32(1.0); m * k])?;
/// let mut y = stream.alloc_zeros::<half::f16>(m * n)?;
/// qw.matmul(&gemm, &x, &mut y, m)?;
/// // The same weights with bf16 activations (and a bf16 output).
/// let x16 = stream.clone_htod(&vec![half::bf16::from_f32(1.0); m * k])?;
/// let mut y16 = stream.alloc_zeros::<half::bf16>(m * n)?;
/// qw.matmul(&gemm, &x16, &mut y16, m)?;
/// # Ok(())
/// # }
/// ```
pub struct QuantizedWeights {
    /// Shared with the CUDA graphs that captured a product with them.
    weights: Arc<FastWeights>,
    context: CUcontext,
}

// SAFETY: the context handle is only compared, never used to make a context current; the
// device buffers are cudarc slices, which are Send and Sync, and are only read after upload.
unsafe impl Send for QuantizedWeights {}
// SAFETY: as for Send.
unsafe impl Sync for QuantizedWeights {}

impl QuantizedWeights {
    /// Quantizes the row-major `k × n` `weights` (`weights[row·n + col]`) to `format` with one
    /// fp16 scale per group of rows of each column (signed and float formats: the group's
    /// largest magnitude maps to the format's largest value; unsigned: `[0, max]`), pre-packs
    /// them and uploads them to `gemm`'s device.
    pub fn quantize(
        gemm: &Gemm,
        weights: &[f32],
        k: usize,
        n: usize,
        format: WeightFormat,
        group: Group,
    ) -> Result<Self, GemmError> {
        Self::build(gemm, weights, k, n, format, group, false)
    }

    /// Like [`QuantizedWeights::quantize`], with a zero point per group, so that unsigned codes
    /// cover each group's `[min, max]`. Unsigned formats only.
    pub fn quantize_with_zero_points(
        gemm: &Gemm,
        weights: &[f32],
        k: usize,
        n: usize,
        format: WeightFormat,
        group: Group,
    ) -> Result<Self, GemmError> {
        if !matches!(format, WeightFormat::Unsigned(_)) {
            return Err(GemmError::ZeroPointsNeedUnsigned {
                format: format.to_string(),
            });
        }
        Self::build(gemm, weights, k, n, format, group, true)
    }

    fn build(
        gemm: &Gemm,
        weights: &[f32],
        k: usize,
        n: usize,
        format: WeightFormat,
        group: Group,
        zero_points: bool,
    ) -> Result<Self, GemmError> {
        let shape = crate::GemmShape::new(1, n, k)?;
        if weights.len() != k * n {
            return Err(GemmError::BufferSize {
                name: "weights",
                rows: k,
                cols: n,
                expected: k * n,
                actual: weights.len(),
            });
        }
        let group = match group {
            Group::Rows(rows) => rows,
            Group::PerChannel => k,
        };
        if group == 0 || !k.is_multiple_of(group) {
            return Err(GemmError::GroupSize { group, k });
        }
        let format = WeightFormat::new(format)?;
        check_group(format, group, shape.k)?;
        let quantized = quantize(weights, k, n, format, group, zero_points)?;
        let packed = Prepacked::new(&quantized)?;
        Self::from_prepacked(gemm, &packed)
    }

    /// Weights already quantized and pre-packed (the benchmark harness packs random codes
    /// without a row-major matrix of them), uploaded to `gemm`'s device.
    pub(crate) fn from_prepacked(gemm: &Gemm, packed: &Prepacked) -> Result<Self, GemmError> {
        let runtime = gemm.runtime();
        Ok(QuantizedWeights {
            weights: Arc::new(FastWeights::upload(runtime, packed)?),
            context: runtime.context().cu_ctx(),
        })
    }

    /// The format of the codes.
    pub fn format(&self) -> WeightFormat {
        self.weights.format
    }

    /// Rows (the reduction length k) and columns (n).
    pub fn shape(&self) -> (usize, usize) {
        (self.weights.k, self.weights.n)
    }

    /// The kernel path for `m` rows of activations on `gemm`'s device: the decode kernel
    /// (weights streamed once per 16 rows) for m ≤ 16 (m ≤ 32 at layers of fewer than 2²⁷
    /// weights with codes of at most 4 bits, [`fast::SMALL_LAYER_DECODE_MAX_M`]), batched
    /// decode (once per 64 rows) up to
    /// [`fast::BATCHED_MAX_M`] where the device has the shared memory for it, else prefill
    /// (weights expanded to the activations' type, then a tensor-core GEMM); on Hopper, for
    /// integer codes, the fused kernel (weights decoded inside the GEMM) from
    /// [`fast::FUSED_MIN_M`] rows on. The same for fp16 and bf16 activations.
    pub fn path(&self, gemm: &Gemm, m: usize) -> Path {
        self.weights.path(gemm.runtime(), m)
    }

    /// Queues `y (m×n T) = x (m×k T) · dequant(W)` on `gemm`'s stream, choosing the path by m
    /// ([`QuantizedWeights::path`]), with T [`half::f16`] or [`half::bf16`] and fp32
    /// accumulation. `x` and `y` are contiguous row-major, slices or views at least `m × k` and
    /// `m × n` long (elements past those are left alone).
    ///
    /// The weights are `(value − zero) · scale` with the fp16 group scale; where a kernel
    /// rounds them before the product (batched decode, prefill, small floats with wide
    /// exponents), fp16 activations see `fp16(value · scale)` and bf16 ones
    /// `bf16(value · bf16(scale))` (fp16 weights: `bf16(w)`); see
    /// [`fast::weight_rounding`].
    ///
    /// Capturable into a CUDA graph ([`Gemm::capture`]) once its scratch exists: after
    /// [`QuantizedWeights::reserve`] for decode and batched decode, after the same call has run
    /// eagerly (same buffers) for prefill, whose GEMM makes TMA descriptors and a split-K
    /// workspace for the buffers it is given. Anything missing is refused under capture with
    /// [`GemmError::CaptureUnsupported`]. Replays are exact repeats: the decode kernels leave
    /// their workspace and counters zeroed after each use, and the prefill path expands the
    /// weights again on each run.
    pub fn matmul<T: QuantizedActivation>(
        &self,
        gemm: &Gemm,
        x: &impl DevicePtr<T>,
        y: &mut impl DevicePtrMut<T>,
        m: usize,
    ) -> Result<(), GemmError> {
        let call = gemm.begin_call()?;
        let runtime = gemm.runtime();
        self.check_context(gemm)?;
        for (operand, stream) in [("x", x.stream()), ("y", y.stream())] {
            if stream.context().cu_ctx() != self.context {
                return Err(GemmError::WrongContext { operand });
            }
        }
        // The scratch is the stream's (`gemm`'s): launches on another stream through these
        // same weights use their own, so the two never share a workspace on the device.
        let mut scratch = gemm.quantized_scratch();
        let (k, n) = self.shape();
        check_activations(m, n, k, x.len(), y.len())?;
        match self.path(gemm, m) {
            path @ (Path::Decode | Path::Batched | Path::Fused) => {
                fast::launch_decode(runtime, path, x, &self.weights, y, m, None, &mut scratch)?;
                let kernel = self.weights.decode_kernel(runtime, path, m, T::TYPE)?;
                gemm.queued(kernel.entry);
            }
            // The expanded weights go through the library's own dispatch (TMA + wgmma where
            // the device and the shape allow it), which also takes x and y as they come.
            Path::Prefill => {
                let expanded = fast::expand::<T>(runtime, &self.weights, &mut scratch)?;
                gemm.queued(self.weights.expand_entry(T::TYPE));
                gemm.matmul_in(&call, x, &expanded, y, &MatmulDesc::new(m, n, k))?;
            }
        }
        // A graph being captured keeps what it read: the packed weights and the scratch.
        call.pin(self.weights.clone());
        for held in scratch.held() {
            call.pin(held);
        }
        Ok(())
    }

    /// Allocates the scratch buffers of every product with up to `max_m` rows (fp16 or bf16
    /// activations) on the paths [`QuantizedWeights::path`] chooses, and loads their kernels,
    /// so that such products allocate nothing when they run: what capturing them into a CUDA
    /// graph ([`Gemm::capture`]) needs. For decode and batched decode (m ≤
    /// [`fast::BATCHED_MAX_M`]) that is everything, provided `x` starts on a 16-byte boundary
    /// and `y` on a 4-byte one (as cudarc's allocations do; views at other offsets need a
    /// padded or staged copy, which the first eager call with them makes). For prefill it is
    /// the expansion buffer; the GEMM after it makes its own state for the buffers it is given,
    /// so run a prefill product once eagerly before capturing it. The buffers are `gemm`'s
    /// (its stream's, shared by all the weights multiplied through it, each buffer as large as
    /// the largest need): they are kept, and only grow, until `gemm` is dropped. Reserve each
    /// weight matrix on each `Gemm` that will capture products with it. Refused while `gemm`'s
    /// stream is being captured.
    ///
    /// ```no_run
    /// use rust_gemm::{Gemm, Group, QuantizedWeights, WeightFormat};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let gemm = Gemm::new(ctx.per_thread_stream())?;
    /// let (k, n) = (4096, 14336);
    /// let w = vec![0.01f32; k * n];
    /// let qw = QuantizedWeights::quantize(&gemm, &w, k, n, WeightFormat::Unsigned(4), Group::Rows(128))?;
    /// qw.reserve(&gemm, 16)?; // decode at any m ≤ 16 now captures without a warm-up call
    /// # Ok(())
    /// # }
    /// ```
    pub fn reserve(&self, gemm: &Gemm, max_m: usize) -> Result<(), GemmError> {
        let _call = gemm.begin_call()?;
        self.check_context(gemm)?;
        let mut scratch = gemm.quantized_scratch();
        fast::reserve(gemm.runtime(), &self.weights, &mut scratch, max_m)
    }

    /// Whether the product with `m` rows of `T` activations on `gemm`'s device gives the same
    /// bits every time it runs, eagerly or replayed from a CUDA graph. Prefill does (the
    /// expansion, then a GEMM without atomics). The decode kernels do when no output tile is
    /// shared by more than two blocks: the blocks that share a tile add their fp32 sums into a
    /// workspace with atomic adds, in the order they finish, and past two addends that order
    /// can change the rounding. Whether tiles are shared depends on the shape and the number
    /// of SMs (on an H100, a 4096 × 14336 layer's 56 tiles are shared by four blocks each at
    /// m = 1 and by two at m = 16; 4096 × 1024's 4 tiles by 32), so two runs of the same product may differ in the last bit of
    /// some outputs where this is `false`; each run is within the accumulation's error bound.
    pub fn reproducible<T: QuantizedActivation>(
        &self,
        gemm: &Gemm,
        m: usize,
    ) -> Result<bool, GemmError> {
        self.check_context(gemm)?;
        let (k, n) = self.shape();
        crate::GemmShape::new(m, n, k)?;
        fast::fixed_order(
            gemm.runtime(),
            &self.weights,
            m,
            self.path(gemm, m),
            T::TYPE,
        )
    }

    /// Refuses a `gemm` of another context than the weights'.
    fn check_context(&self, gemm: &Gemm) -> Result<(), GemmError> {
        if gemm.runtime().context().cu_ctx() != self.context {
            return Err(GemmError::WrongContext { operand: "weights" });
        }
        Ok(())
    }
}
