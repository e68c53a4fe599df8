//! Launching the weight-only-quantized GEMM: `C (fp16) = A (fp16) · dequant(W)`.
//!
//! The weights are a [`Quantized`] matrix from [`crate::quant`], uploaded as its packed code
//! stream, fp16 scales and (unsigned formats with zero points) one-byte zero points. The CPU
//! semantics in `quant.rs` define the result; [`reference_product`] computes it in f64.

use crate::check::cpu::{Reference, reference_gemm};
use crate::harness::gpu::Gpu;
use crate::quant::fast::check_activations;
use crate::quant::format::{Quantized, WeightFormat};
use crate::{GemmError, GemmShape};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use half::f16;

/// PTX entry of the reference dequant-GEMM (`kernels-gpu/src/dequant/reference.rs`).
pub const REFERENCE_ENTRY: &str = "dequant_reference";
/// Threads per block of the reference kernel (x along n, y along m).
pub const REFERENCE_BLOCK: (u32, u32) = (32, 8);

/// Quantized weights on the device.
pub struct DeviceWeights {
    /// The quantization they came from (format, group, shape).
    pub format: WeightFormat,
    /// Rows of k per scale.
    pub group: usize,
    /// Rows (the reduction length).
    pub k: usize,
    /// Columns.
    pub n: usize,
    codes: CudaSlice<u8>,
    scales: CudaSlice<u16>,
    zeros: Option<CudaSlice<u8>>,
}

/// The kernel's format arguments: kind (0 unsigned, 1 signed, 2 small float, 3 fp16), bits,
/// exponent bits, mantissa bits.
fn format_args(format: WeightFormat) -> [u32; 4] {
    match format {
        WeightFormat::Unsigned(b) => [0, b, 0, 0],
        WeightFormat::Signed(b) => [1, b, 0, 0],
        WeightFormat::Float { exponent, mantissa } => [2, format.bits(), exponent, mantissa],
        WeightFormat::F16 => [3, 16, 0, 0],
    }
}

impl DeviceWeights {
    /// Uploads `weights`: the packed codes (plus 2 bytes, so that a kernel may always read the
    /// bytes after a code's first one), the scales and the zero points.
    pub fn upload(gpu: &Gpu, weights: &Quantized) -> Result<Self, GemmError> {
        let mut packed = weights.packed();
        packed.extend([0, 0]);
        // fp16 weights have no scales; the kernel never reads them, but a buffer must exist.
        let scales: Vec<u16> = if weights.scales.is_empty() {
            vec![0]
        } else {
            weights.scales.iter().map(|s| s.to_bits()).collect()
        };
        let zeros = match &weights.zeros {
            Some(z) => Some(gpu.upload_raw(&z.iter().map(|&v| v as u8).collect::<Vec<u8>>())?),
            None => None,
        };
        Ok(DeviceWeights {
            format: weights.format,
            group: weights.group,
            k: weights.k,
            n: weights.n,
            codes: gpu.upload_raw(&packed)?,
            scales: gpu.upload_raw(&scales)?,
            zeros,
        })
    }
}

/// Queues the reference dequant-GEMM: `c (m×n, fp16 bits) = a (m×k, fp16 bits) · dequant(w)`.
pub fn launch_reference(
    gpu: &Gpu,
    a: &CudaSlice<u16>,
    weights: &DeviceWeights,
    c: &mut CudaSlice<u16>,
    m: usize,
) -> Result<(), GemmError> {
    check_activations(m, weights.n, weights.k, a.len(), c.len())?;
    if weights.group == 0 || !weights.k.is_multiple_of(weights.group) {
        return Err(GemmError::GroupSize {
            group: weights.group,
            k: weights.k,
        });
    }
    let blocks_y = m.div_ceil(REFERENCE_BLOCK.1 as usize) as u64;
    if blocks_y > crate::ladder::rungs::MAX_GRID_Y {
        return Err(GemmError::GridTooLarge {
            rung: "dequant_reference",
            axis: "y",
            blocks: blocks_y,
            limit: crate::ladder::rungs::MAX_GRID_Y,
        });
    }
    let function = gpu.kernel(REFERENCE_ENTRY)?;
    let config = LaunchConfig {
        grid_dim: (
            weights.n.div_ceil(REFERENCE_BLOCK.0 as usize) as u32,
            blocks_y as u32,
            1,
        ),
        block_dim: (REFERENCE_BLOCK.0, REFERENCE_BLOCK.1, 1),
        shared_mem_bytes: 0,
    };
    let (m, n, k, group) = (
        m as u32,
        weights.n as u32,
        weights.k as u32,
        weights.group as u32,
    );
    let [kind, bits, exponent, mantissa] = format_args(weights.format);
    let null = 0u64;
    let mut builder = gpu.stream().launch_builder(&function);
    builder.arg(a).arg(&weights.codes).arg(&weights.scales);
    match &weights.zeros {
        Some(zeros) => builder.arg(zeros),
        None => builder.arg(&null),
    };
    builder.arg(c).arg(&m).arg(&n).arg(&k).arg(&group);
    builder.arg(&kind).arg(&bits).arg(&exponent).arg(&mantissa);
    // SAFETY: A and C were checked against the weights' shape (check_activations), the codes,
    // scales and zero points were uploaded for that shape, and the arguments follow the
    // kernel's signature.
    unsafe { builder.launch(config) }
        .map(drop)
        .map_err(|e| GemmError::cuda(format!("launching {REFERENCE_ENTRY}"), e))
}

/// The f64 reference for `a (m×k, fp16) · dequant(weights)`: the fp16 inputs are exact in f32,
/// and the dequantized weights are exactly what [`Quantized::dequantize`] gives.
pub fn reference_product(a: &[f16], weights: &Quantized, m: usize) -> Reference {
    let a32: Vec<f32> = a.iter().map(|x| x.to_f32()).collect();
    let w = weights.dequantize();
    reference_gemm(
        &a32,
        &w,
        &GemmShape {
            m,
            n: weights.n,
            k: weights.k,
        },
    )
}
