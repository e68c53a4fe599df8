//! What one call multiplies: [`MatmulDesc`] (shape, layouts, leading dimensions, batch,
//! precision, alpha/beta) and its [`Epilogue`] (bias and activation).

use super::element::GemmElement;
use cudarc::driver::DevicePtr;
use std::fmt;

/// How B is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BLayout {
    /// `[k, n]`, row-major: `B[l, j]` at `b[l·ldb + j]` (C = A·B).
    Kn,
    /// `[n, k]`, row-major: `B[l, j]` at `b[j·ldb + l]`, the layout of a PyTorch `nn.Linear`
    /// weight (C = A·Wᵀ).
    Nk,
}

impl BLayout {
    /// `kn` or `nk`, as in kernel entry points.
    pub fn label(&self) -> &'static str {
        match self {
            BLayout::Kn => "kn",
            BLayout::Nk => "nk",
        }
    }
}

/// The activation of the fused epilogue, applied last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activation {
    /// `max(x, 0)`.
    Relu,
    /// `x` if `x > 0`, else `slope·x`.
    LeakyRelu(f32),
    /// GELU, tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh,
}

/// The fused epilogue: `C = act(alpha·A·B + beta·C + bias)`, bias broadcast over rows.
///
/// ```no_run
/// # fn demo(bias: &cudarc::driver::CudaSlice<half::bf16>) {
/// use rust_gemm::{Epilogue, MatmulDesc};
/// let desc = MatmulDesc::new(16, 4096, 4096)
///     .b_transposed()
///     .epilogue(Epilogue::bias(bias).gelu_tanh());
/// # let _ = desc;
/// # }
/// ```
pub struct Epilogue<'a, T> {
    pub(crate) bias: Option<&'a (dyn DevicePtr<T> + Sync)>,
    pub(crate) activation: Option<Activation>,
}

impl<'a, T> Epilogue<'a, T> {
    /// No bias, no activation.
    pub fn none() -> Self {
        Epilogue {
            bias: None,
            activation: None,
        }
    }

    /// Adds `bias[j]` to column `j` (at least n elements of C's type, on the same device).
    pub fn bias(bias: &'a (dyn DevicePtr<T> + Sync)) -> Self {
        Epilogue {
            bias: Some(bias),
            activation: None,
        }
    }

    /// Then ReLU.
    pub fn relu(self) -> Self {
        self.activation(Activation::Relu)
    }

    /// Then leaky ReLU with this slope for negative values.
    pub fn leaky_relu(self, slope: f32) -> Self {
        self.activation(Activation::LeakyRelu(slope))
    }

    /// Then GELU (tanh approximation).
    pub fn gelu_tanh(self) -> Self {
        self.activation(Activation::GeluTanh)
    }

    /// Then `activation`.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = Some(activation);
        self
    }
}

impl<T> Clone for Epilogue<'_, T> {
    fn clone(&self) -> Self {
        Epilogue {
            bias: self.bias,
            activation: self.activation,
        }
    }
}

/// One matrix product (or a strided batch of them), as the caller's buffers hold it:
///
/// `C[z] = act(alpha·A[z]·B[z] + beta·C[z] + bias)` for `z < batch`, with A `m×k` (row-major,
/// leading dimension `lda`), B `[k, n]` or `[n, k]` (`ldb`), C `m×n` (`ldc`); leading
/// dimensions default to the row length, batch strides to one item's extent.
///
/// ```no_run
/// use rust_gemm::MatmulDesc;
/// // 8 products of 64×128 by 128×32, B stored as [n, k], C = 2·A·Bᵀ + C.
/// let desc = MatmulDesc::<f32>::new(64, 32, 128).b_transposed().batch(8).alpha(2.0).beta(1.0);
/// # let _ = desc;
/// ```
pub struct MatmulDesc<'a, T> {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) batch: usize,
    pub(crate) lda: Option<usize>,
    pub(crate) ldb: Option<usize>,
    pub(crate) ldc: Option<usize>,
    pub(crate) strides: Option<(usize, usize, usize)>,
    pub(crate) b_layout: BLayout,
    pub(crate) tf32: bool,
    pub(crate) alpha: f32,
    pub(crate) beta: f32,
    pub(crate) epilogue: Epilogue<'a, T>,
    pub(crate) kernel: Option<&'a str>,
    pub(crate) split_k: Option<u32>,
    pub(crate) stream_k: Option<bool>,
}

impl<'a, T: GemmElement> MatmulDesc<'a, T> {
    /// `C = A·B` with A `m×k`, B `[k, n]`, C `m×n`, all contiguous row-major.
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        MatmulDesc {
            m,
            n,
            k,
            batch: 1,
            lda: None,
            ldb: None,
            ldc: None,
            strides: None,
            b_layout: BLayout::Kn,
            tf32: false,
            alpha: 1.0,
            beta: 0.0,
            epilogue: Epilogue::none(),
            kernel: None,
            split_k: None,
            stream_k: None,
        }
    }

    /// B is stored `[n, k]` (C = A·Bᵀ, a PyTorch `nn.Linear` weight).
    pub fn b_transposed(mut self) -> Self {
        self.b_layout = BLayout::Nk;
        self
    }

    /// B's layout.
    pub fn b_layout(mut self, layout: BLayout) -> Self {
        self.b_layout = layout;
        self
    }

    /// Elements from one row of A to the next (default k).
    pub fn lda(mut self, lda: usize) -> Self {
        self.lda = Some(lda);
        self
    }

    /// Elements from one row of B to the next (default n for `[k, n]`, k for `[n, k]`).
    pub fn ldb(mut self, ldb: usize) -> Self {
        self.ldb = Some(ldb);
        self
    }

    /// Elements from one row of C to the next (default n).
    pub fn ldc(mut self, ldc: usize) -> Self {
        self.ldc = Some(ldc);
        self
    }

    /// `count` products, each item `stride` elements after the previous one (by default the
    /// items are packed: `m·lda`, B's rows × `ldb`, `m·ldc`).
    pub fn batch(mut self, count: usize) -> Self {
        self.batch = count;
        self
    }

    /// Elements between batch items of A, B and C. A stride of 0 for A or B reuses one matrix
    /// for every item; C's items must not overlap.
    pub fn batch_strides(mut self, a: usize, b: usize, c: usize) -> Self {
        self.strides = Some((a, b, c));
        self
    }

    /// For `f32`: let the tensor cores cut A and B to TF32 (10-bit mantissa, fp32
    /// accumulation): rounded to nearest by v14, truncated by v19's `wgmma` (a relative error
    /// of at most 2⁻¹⁰ per operand). Exact fp32 is the default; refused for other element
    /// types.
    pub fn tf32(mut self) -> Self {
        self.tf32 = true;
        self
    }

    /// Scale of the product (default 1).
    pub fn alpha(mut self, alpha: f32) -> Self {
        self.alpha = alpha;
        self
    }

    /// Scale of C's current contents, added to the product (default 0: C is only written, and
    /// a NaN already in C does not propagate).
    pub fn beta(mut self, beta: f32) -> Self {
        self.beta = beta;
        self
    }

    /// Bias and activation.
    pub fn epilogue(mut self, epilogue: Epilogue<'a, T>) -> Self {
        self.epilogue = epilogue;
        self
    }

    /// Run this kernel (its name in [`crate::Gemm::kernels`], e.g. `"general"`, `"v13"`),
    /// for teaching and tests. A call that the kernel cannot run is refused with
    /// [`crate::GemmError::KernelRefused`], never run elsewhere.
    pub fn kernel(mut self, name: &'a str) -> Self {
        self.kernel = Some(name);
        self
    }

    /// Cut k into about `slices` slices computed side by side and added in a fixed order
    /// (split-K; `1`: never split), instead of dispatch's choice, for teaching and tests. The
    /// slice count may come out lower so that no slice is empty ([`crate::Gemm::plan`] shows
    /// it). A kernel that cannot split k is passed over; a forced kernel that cannot is refused
    /// with [`crate::GemmError::KernelRefused`].
    pub fn split_k(mut self, slices: u32) -> Self {
        self.split_k = Some(slices);
        self
    }

    /// Compute the last tiles in shares of k handed from block to block (stream-K, `true`) or
    /// never (`false`), instead of dispatch's choice, for teaching and tests. Only the
    /// small-tile TMA kernel `v18_m64` has a stream-K tail; with `true`,
    /// the chosen one does not split k by itself, a forced kernel without one (or a forced
    /// split) is refused with [`crate::GemmError::KernelRefused`], and other kernels run as
    /// they would. Products whose tiles fill whole waves have no tail to share and run as
    /// without it.
    pub fn stream_k(mut self, on: bool) -> Self {
        self.stream_k = Some(on);
        self
    }

    /// The element type and arithmetic of this call.
    pub fn dtype(&self) -> super::element::DType {
        if self.tf32 {
            super::element::DType::Tf32
        } else {
            T::DTYPE
        }
    }
}

impl<T> fmt::Debug for MatmulDesc<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatmulDesc")
            .field("m", &self.m)
            .field("n", &self.n)
            .field("k", &self.k)
            .field("batch", &self.batch)
            .field("lda", &self.lda)
            .field("ldb", &self.ldb)
            .field("ldc", &self.ldc)
            .field("strides", &self.strides)
            .field("b_layout", &self.b_layout)
            .field("tf32", &self.tf32)
            .field("alpha", &self.alpha)
            .field("beta", &self.beta)
            .field("bias", &self.epilogue.bias.map(|b| b.len()))
            .field("activation", &self.epilogue.activation)
            .field("kernel", &self.kernel)
            .field("split_k", &self.split_k)
            .field("stream_k", &self.stream_k)
            .finish()
    }
}
