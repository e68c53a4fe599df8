//! Runs a generated call (`fuzz::Call`) on the GPU through `Gemm::matmul` and checks every
//! element of C's allocation: the described elements against the f64 reference within the
//! precision's tolerance, every other one unchanged; a call with a defect must be refused with
//! its typed error and leave C untouched.

use super::fuzz::Call;
use super::{Case, random, reference, tolerance};
use cudarc::driver::{CudaSlice, CudaStream};
use rust_gemm::{DType, Epilogue, Gemm, GemmElement, GemmError, MatmulDesc};
use std::sync::Arc;

/// What one call did.
pub enum Outcome {
    /// Ran on this kernel entry (and, when k was split, this reduction entry) and matched the
    /// reference.
    Ran(&'static str, Option<&'static str>),
    /// Refused with the error its defect calls for.
    Refused(String),
}

/// Runs `call` with element type `T` and checks every element of C's allocation.
fn run_typed<T: GemmElement>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    call: &Call,
) -> Result<Outcome, String> {
    let seed = call.seed ^ call.index.wrapping_mul(0x9E37_79B9);
    let host = |i: usize| -> (Vec<T>, Vec<f64>) {
        let typed: Vec<T> = random(call.allocation(i), seed + i as u64)
            .iter()
            .map(|&x| T::from_f64(x))
            .collect();
        let wide = typed.iter().map(|x| x.to_f64()).collect();
        (typed, wide)
    };
    let (a, a64) = host(0);
    let (b, b64) = host(1);
    let (c, c64) = host(2);
    let (bias, bias64) = host(3);
    let upload = |x: &[T]| -> Result<CudaSlice<T>, String> {
        stream.clone_htod(x).map_err(|e| format!("upload: {e}"))
    };
    let (a_dev, b_dev, bias_dev) = (upload(&a)?, upload(&b)?, upload(&bias)?);
    let mut c_dev = upload(&c)?;
    let view = |i: usize| call.offsets[i]..call.offsets[i] + call.lens[i];
    let (a_view, b_view, bias_view) = (
        a_dev.slice(view(0)),
        b_dev.slice(view(1)),
        bias_dev.slice(view(3)),
    );
    let describe = |kernel: Option<&'static str>, split_k: Option<u32>| {
        let mut desc = MatmulDesc::<T>::new(call.m, call.n, call.k)
            .b_layout(call.layout)
            .alpha(call.alpha)
            .beta(call.beta);
        let setters = [MatmulDesc::lda, MatmulDesc::ldb, MatmulDesc::ldc];
        for (i, set) in setters.into_iter().enumerate() {
            if call.explicit_lds[i] {
                desc = set(desc, call.lds[i]);
            }
        }
        if call.batch > 1 {
            desc = desc.batch(call.batch);
        }
        if call.explicit_strides {
            desc = desc.batch_strides(call.strides[0], call.strides[1], call.strides[2]);
        }
        let mut epilogue = if call.bias {
            Epilogue::bias(&bias_view)
        } else {
            Epilogue::none()
        };
        if let Some(activation) = call.activation {
            epilogue = epilogue.activation(activation);
        }
        desc = desc.epilogue(epilogue);
        if call.dtype == DType::Tf32 {
            desc = desc.tf32();
        }
        if let Some(name) = kernel {
            desc = desc.kernel(name);
        }
        if let Some(slices) = split_k {
            desc = desc.split_k(slices);
        }
        desc
    };
    let mut c_view = c_dev.slice_mut(view(2));
    // A forced kernel that refuses the call is a correct answer too; the call then goes through
    // dispatch, so that every call computes something.
    let forced = call.kernel.filter(|&name| {
        !matches!(
            gemm.plan(&a_view, &b_view, &c_view, &describe(Some(name), None)),
            Err(GemmError::KernelRefused { .. })
        )
    });
    // Likewise a forced split that this kernel (or every kernel) cannot make.
    let split_k = call.split_k.filter(|&slices| {
        !matches!(
            gemm.plan(&a_view, &b_view, &c_view, &describe(forced, Some(slices))),
            Err(GemmError::KernelRefused { .. } | GemmError::NoKernel { .. })
        )
    });
    let desc = describe(forced, split_k);
    let plan = gemm.plan(&a_view, &b_view, &c_view, &desc);
    let result = gemm.matmul(&a_view, &b_view, &mut c_view, &desc);
    let out = stream
        .clone_dtoh(&c_dev)
        .map_err(|e| format!("download (did the kernel fault?): {e}"))?;
    if call.defect.is_some() {
        return match result {
            Err(error) if call.expects(&error) => {
                if out
                    .iter()
                    .zip(&c)
                    .any(|(x, y)| x.to_f64().to_bits() != y.to_f64().to_bits())
                {
                    Err(format!("refused with {error} but C changed"))
                } else {
                    Ok(Outcome::Refused(error_kind(&error)))
                }
            }
            other => Err(format!("the defect {:?} gave {other:?}", call.defect)),
        };
    }
    let plan = plan.map_err(|e| format!("plan: {e}"))?;
    result.map_err(|e| format!("matmul via {}: {e}", plan.kernel.entry))?;
    if let Some(name) = forced
        && plan.kernel.name != name
    {
        return Err(format!("forced {name}, ran {}", plan.kernel.entry));
    }
    let at = |i: usize| call.offsets[i];
    let case = Case {
        m: call.m,
        n: call.n,
        k: call.k,
        batch: call.batch,
        lda: call.lds[0],
        ldb: call.lds[1],
        ldc: call.lds[2],
        strides: (call.strides[0], call.strides[1], call.strides[2]),
        b_layout: call.layout,
        alpha: call.alpha as f64,
        beta: call.beta as f64,
        activation: call.activation,
        a: &a64[at(0)..],
        b: &b64[at(1)..],
        c: &c64[at(2)..],
        bias: call.bias.then(|| &bias64[at(3)..]),
    };
    let (expected, magnitude) = reference(&case);
    let entry = plan.kernel.entry;
    for (i, (got, want)) in out.iter().zip(&c64).enumerate() {
        let got = got.to_f64();
        let inside = i >= at(2) && i - at(2) < expected.len();
        let (want, tol) = if inside {
            let j = i - at(2);
            let want = expected[j];
            let touched = want.to_bits() != c64[i].to_bits() || magnitude[j] != 0.0;
            let tol = if touched {
                tolerance(call.dtype, call.k, magnitude[j], want)
            } else {
                0.0
            };
            (want, tol)
        } else {
            (*want, 0.0)
        };
        let equal = got.to_bits() == want.to_bits() || (got - want).abs() <= tol;
        if !equal {
            return Err(format!(
                "via {entry}: element {i} of C's allocation (view offset {}) is {got}, \
                 expected {want} (tolerance {tol:e})",
                at(2)
            ));
        }
    }
    Ok(Outcome::Ran(entry, plan.reduction()))
}

/// Runs `call` with the element type its dtype names (`stream`: where the buffers live).
pub fn run(stream: &Arc<CudaStream>, gemm: &Gemm, call: &Call) -> Result<Outcome, String> {
    match call.dtype {
        DType::F32 | DType::Tf32 => run_typed::<f32>(stream, gemm, call),
        DType::F16 => run_typed::<half::f16>(stream, gemm, call),
        DType::Bf16 => run_typed::<half::bf16>(stream, gemm, call),
    }
}

/// The error's variant name (`LeadingDimension`, `BufferTooShort`, ...).
fn error_kind(error: &GemmError) -> String {
    let debug = format!("{error:?}");
    debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_string()
}
