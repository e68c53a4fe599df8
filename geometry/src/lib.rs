//! What the kernels (`kernels-gpu`, built for nvptx64) and the host (`rust-gemm`) must agree
//! on, written once: the argument block of the library kernels ([`GemmArgs`]), the activation
//! codes of the fused epilogue ([`Activation`]), and each kernel's launch geometry (threads per
//! block, block tiles, pipeline stages, shared-memory bytes) and the dequant layout constants.
//!
//! `#![no_std]` and dependency-free, so that the device crate can use it with only `core`.

#![no_std]

pub mod args;
pub mod dequant;
pub mod general;
pub mod general_mma;
pub mod split_k;
pub mod stream_k;
pub mod thin;
pub mod v00;
pub mod v01;
pub mod v02;
pub mod v03;
pub mod v05;
pub mod v10;
pub mod v11;
pub mod v13;
pub mod v14;
pub mod v15;
pub mod v16;
pub mod v17;
pub mod v18_m64;
pub mod v18_n128;
pub mod v19;
pub mod v20;
pub mod v21;
pub mod v22;
pub mod v23;

pub use args::{Activation, GemmArgs};
