//! The ladder's fused epilogue (v10–v12): `alpha·acc + beta·C`, then optionally a leaky ReLU,
//! on four fp32 accumulators at a time. v10 and v11 run it as a plain store
//! ([`Epilogue::STORE`]), v12 with values given at launch. The library kernels use
//! [`crate::epilogue`] instead: the epilogue of `GemmArgs` (bias, more activations, other
//! element types).

use crate::device::fma;
use core::simd::f32x4;
use seq_macro::seq;

/// What happens to the accumulators on their way to C: `alpha·acc + beta·C`, then optionally a
/// leaky ReLU. [`Epilogue::STORE`] (alpha 1, beta 0, no activation) is a plain store; with the
/// constant inlined, the compiler removes every trace of the epilogue. As in BLAS, C is not
/// read at all when beta is 0 (so NaN in an output buffer about to be overwritten stays harmless).
#[derive(Clone, Copy)]
pub struct Epilogue {
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of the existing C.
    pub beta: f32,
    /// `Some(slope)`: apply `x if x > 0 else slope·x` after scaling.
    pub leaky_slope: Option<f32>,
}

impl Epilogue {
    /// `C = A·B`.
    pub const STORE: Epilogue = Epilogue {
        alpha: 1.0,
        beta: 0.0,
        leaky_slope: None,
    };

    /// Applies the epilogue to four accumulators; `c_old` reads the four elements of C they
    /// replace, only when beta is not 0.
    #[inline(always)]
    pub fn apply(&self, acc: f32x4, c_old: impl FnOnce() -> f32x4) -> f32x4 {
        let mut out = acc;
        if self.alpha != 1.0 {
            out *= f32x4::splat(self.alpha);
        }
        if self.beta != 0.0 {
            let old = c_old();
            seq!(q in 0..4 { out[q] = fma(self.beta, old[q], out[q]); });
        }
        if let Some(slope) = self.leaky_slope {
            // NaN fails `> 0.0` and stays NaN through `slope * x`, as IEEE arithmetic says.
            seq!(q in 0..4 { out[q] = if out[q] > 0.0 { out[q] } else { slope * out[q] }; });
        }
        out
    }
}
