//! Uses rust-gemm as a dependency: picks the embedded PTX module for a device of compute
//! capability 8.6 (an RTX 3090) and prints what it holds. Built by CI, not run.

fn main() {
    let module = rust_gemm::ptx::for_compute_capability(8, 6)
        .expect("rust-gemm has a PTX module for compute capability 8.6");
    println!(
        "{}: {} kernels, {} bytes of PTX",
        module.target,
        module.entries.len(),
        module.text.len()
    );
}
