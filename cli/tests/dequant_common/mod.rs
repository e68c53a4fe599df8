//! What the dequant GPU tests share: the GPU, every weight format, random fp16 and bf16
//! activations.

use rust_gemm::check::cpu::random_matrix;
use rust_gemm::element::Element;
use rust_gemm::harness::gpu::Gpu;
use rust_gemm::quant::format::WeightFormat;

pub fn open_gpu() -> Gpu {
    Gpu::open_for_tests().unwrap_or_else(|e| panic!("these tests need a CUDA GPU: {e}"))
}

/// Every format: u1–u8 (with and without zero points), i2–i8, every eXmY of up to 8 bits, f16.
pub fn formats() -> Vec<(WeightFormat, bool)> {
    let mut all: Vec<(WeightFormat, bool)> = Vec::new();
    for b in 1..=8 {
        all.push((WeightFormat::Unsigned(b), false));
        all.push((WeightFormat::Unsigned(b), true));
    }
    all.extend((2..=8).map(|b| (WeightFormat::Signed(b), false)));
    for exponent in 1..=7 {
        for mantissa in 0..=(7 - exponent) {
            all.push((WeightFormat::Float { exponent, mantissa }, false));
        }
    }
    all.push((WeightFormat::F16, false));
    all
}

/// `len` activations of type `T` (fp16 or bf16), uniform in [-1, 1) before rounding.
pub fn activations<T: Element>(len: usize, seed: u64) -> Vec<T> {
    random_matrix(len, seed)
        .into_iter()
        .map(T::from_f32)
        .collect()
}
