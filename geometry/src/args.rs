//! The argument block every library kernel takes, by value, as its first parameter.
//!
//! A library kernel computes, for every batch item `z < batch`, every row `i < m` and column
//! `j < n`:
//!
//! ```text
//! C_z[i, j] = act(alpha · Σ_l A_z[i, l] · B_z[l, j] + beta · C_z[i, j] + bias[j])
//! ```
//!
//! with `A_z[i, l] = a[z·stride_a + i·lda + l]`, `C_z[i, j] = c[z·stride_c + i·ldc + j]`, and
//! `B_z[l, j] = b[z·stride_b + l·ldb + j]` when B is stored `[k, n]` (row-major) or
//! `b[z·stride_b + j·ldb + l]` when it is stored `[n, k]` (the layout of a PyTorch `nn.Linear`
//! weight). The B layout is part of the kernel's entry point, not of these arguments. When
//! `beta` is 0, C is not read (a NaN already in C does not propagate, as in BLAS). `bias` is 0
//! for none, else the address of `n` elements of C's type.
//!
//! Kernels walk the batch along grid z in steps of the grid's z size, so the host may launch
//! fewer z blocks than batch items (CUDA allows 65 535).
//!
//! The layout is `#[repr(C)]` and passed as one `.param .align 8 .b8 [..]` block: host and
//! device read the same struct, so they cannot disagree on an argument's position.

/// The activation of the fused epilogue, applied after scaling, `beta·C` and the bias.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// None: `x`.
    Identity = 0,
    /// `max(x, 0)`.
    Relu = 1,
    /// `x` if `x > 0`, else `slope·x`.
    LeakyRelu = 2,
    /// GELU with the tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh = 3,
}

impl Activation {
    /// The activation with this code, if any.
    pub const fn from_code(code: u32) -> Option<Activation> {
        match code {
            0 => Some(Activation::Identity),
            1 => Some(Activation::Relu),
            2 => Some(Activation::LeakyRelu),
            3 => Some(Activation::GeluTanh),
            _ => None,
        }
    }
}

/// `√(2/π)`, the GELU-tanh constant.
pub const GELU_SQRT_2_OVER_PI: f32 = 0.797_884_6;
/// The cubic coefficient of GELU-tanh.
pub const GELU_CUBIC: f32 = 0.044_715;

/// The argument block of a library kernel (see the module documentation for the semantics).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmArgs {
    /// Device address of A's first element (of batch item 0).
    pub a: u64,
    /// Device address of B's first element.
    pub b: u64,
    /// Device address of C's first element.
    pub c: u64,
    /// Device address of the bias (n elements of C's type), or 0 for none.
    pub bias: u64,
    /// Device address of the kernel's TMA tensor maps, or 0 for kernels without TMA.
    pub tensor_maps: u64,
    /// Elements from one batch item of A to the next.
    pub stride_a: u64,
    /// Elements from one batch item of B to the next.
    pub stride_b: u64,
    /// Elements from one batch item of C to the next.
    pub stride_c: u64,
    /// Device address of the split-K workspace (fp32) when `splits` > 1 (see
    /// [`crate::split_k`]), or of the stream-K workspace when `stream_k_tiles` > 0 (see
    /// [`crate::stream_k`]); else 0.
    pub workspace: u64,
    /// Rows of A and C.
    pub m: u32,
    /// Columns of B and C.
    pub n: u32,
    /// The reduction length: columns of A, rows of B.
    pub k: u32,
    /// Batch items (at least 1).
    pub batch: u32,
    /// Elements from one row of A to the next (≥ k).
    pub lda: u32,
    /// Elements from one row of B to the next (≥ n for `[k, n]`, ≥ k for `[n, k]`).
    pub ldb: u32,
    /// Elements from one row of C to the next (≥ n).
    pub ldc: u32,
    /// The activation's code ([`Activation`] as `u32`).
    pub activation: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of the existing C; 0 means C is not read.
    pub beta: f32,
    /// The slope of leaky ReLU for negative inputs (unused by other activations).
    pub slope: f32,
    /// Split-K: the number of slices of k (0 or 1: no split). With more than one, a kernel
    /// that supports split-K writes each slice's raw fp32 product into `workspace` instead of
    /// C, and the reduction kernel finishes C (see [`crate::split_k`]).
    pub splits: u32,
    /// Split-K: the length of every slice of k but the last (a multiple of
    /// [`crate::split_k::K_GRANULE`]); unused without a split.
    pub k_chunk: u32,
    /// Stream-K: how many of the last work items (batch · tiles, in the kernel's walk order) are
    /// cut along k into equal shares of the blocks, 0 for none (see [`crate::stream_k`]). Only
    /// the persistent TMA entries read it, and only without a split (`splits` ≤ 1); `workspace`
    /// is then the stream-K workspace. It also keeps the size a multiple of 8 bytes.
    pub stream_k_tiles: u32,
}

impl GemmArgs {
    /// A plain product `C = A·B` of one contiguous row-major `m×k` A, `[k, n]` B and `m×n` C
    /// at these addresses: alpha 1, beta 0, no bias, no activation, batch 1.
    pub const fn contiguous(a: u64, b: u64, c: u64, m: u32, n: u32, k: u32) -> GemmArgs {
        GemmArgs {
            a,
            b,
            c,
            bias: 0,
            tensor_maps: 0,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
            workspace: 0,
            m,
            n,
            k,
            batch: 1,
            lda: k,
            ldb: n,
            ldc: n,
            activation: Activation::Identity as u32,
            alpha: 1.0,
            beta: 0.0,
            slope: 0.0,
            splits: 1,
            k_chunk: 0,
            stream_k_tiles: 0,
        }
    }

    /// Whether the epilogue is a plain store of the product (alpha 1, beta 0, no bias, no
    /// activation).
    pub fn is_plain_store(&self) -> bool {
        self.alpha == 1.0
            && self.beta == 0.0
            && self.bias == 0
            && self.activation == Activation::Identity as u32
    }

    /// The epilogue applied to one accumulator `acc` of column `col`: `old` is C's current
    /// value (read only when beta ≠ 0) and `bias_value` the bias at `col` (0 when there is
    /// none), both already widened to f32. `tanh` is the device's (or host's) tanh. This is the
    /// one definition of the epilogue; the device kernels and the host's CPU reference both call
    /// it, so they cannot drift apart.
    #[inline(always)]
    pub fn epilogue(&self, acc: f32, old: f32, bias_value: f32, tanh: impl Fn(f32) -> f32) -> f32 {
        let mut x = self.alpha * acc;
        if self.beta != 0.0 {
            x += self.beta * old;
        }
        x += bias_value;
        match Activation::from_code(self.activation) {
            Some(Activation::Relu) => {
                if x > 0.0 {
                    x
                } else {
                    0.0
                }
            }
            Some(Activation::LeakyRelu) => {
                if x > 0.0 {
                    x
                } else {
                    self.slope * x
                }
            }
            Some(Activation::GeluTanh) => {
                let inner = GELU_SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
                0.5 * x * (1.0 + tanh(inner))
            }
            _ => x,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn layout_is_what_the_kernels_read() {
        // 9 addresses and strides of 8 bytes, then 14 words of 4 bytes.
        assert_eq!(core::mem::size_of::<GemmArgs>(), 9 * 8 + 14 * 4);
        assert_eq!(core::mem::align_of::<GemmArgs>(), 8);
        assert_eq!(core::mem::offset_of!(GemmArgs, m), 72);
        assert_eq!(core::mem::offset_of!(GemmArgs, alpha), 104);
        assert_eq!(core::mem::offset_of!(GemmArgs, splits), 116);
    }

    #[test]
    fn epilogue_matches_its_definition() {
        let tanh = std::primitive::f32::tanh;
        let mut args = GemmArgs::contiguous(0, 0, 0, 1, 1, 1);
        assert!(args.is_plain_store());
        assert_eq!(args.epilogue(-3.0, f32::NAN, 0.0, tanh), -3.0);
        args.alpha = 2.0;
        args.beta = 0.5;
        args.activation = Activation::LeakyRelu as u32;
        args.slope = 0.1;
        // 2·(-3) + 0.5·4 + 1 = -3, and leaky ReLU makes it -0.3.
        assert!((args.epilogue(-3.0, 4.0, 1.0, tanh) + 0.3).abs() < 1e-6);
        args.activation = Activation::Relu as u32;
        assert_eq!(args.epilogue(-3.0, 4.0, 1.0, tanh), 0.0);
        args.activation = Activation::GeluTanh as u32;
        args.alpha = 1.0;
        args.beta = 0.0;
        // GELU(1) = 0.841192 in the tanh form.
        assert!((args.epilogue(1.0, f32::NAN, 0.0, tanh) - 0.841_192).abs() < 1e-4);
        assert!(!args.is_plain_store());
        assert_eq!(Activation::from_code(4), None);
    }
}
