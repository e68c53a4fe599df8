//! Uses rust-gemm as a dependency, as a user's crate on stable Rust would: multiplies two small
//! matrices on the GPU through the public API. CI builds it (it needs no GPU to build); run on a
//! GPU machine it prints the product and the kernel that computed it.

use rust_gemm::{Gemm, MatmulDesc};
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = cudarc::driver::CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let gemm = Gemm::new(stream.clone())?;
    let a = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0])?;
    let b = stream.clone_htod(&[5.0f32, 6.0, 7.0, 8.0])?;
    let mut c = stream.alloc_zeros::<f32>(4)?;
    let desc = MatmulDesc::new(2, 2, 2);
    let plan = gemm.plan(&a, &b, &c, &desc)?;
    gemm.matmul(&a, &b, &mut c, &desc)?;
    println!(
        "{:?} (kernel {}: {})",
        stream.clone_dtoh(&c)?,
        plan.kernel.name,
        plan.reason
    );
    Ok(())
}
