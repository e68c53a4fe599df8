//! The ladder: the table of rungs (one row per kernel of `kernels-gpu/src/sgemm/`), how a rung
//! is launched, and v11's autotuner.

#[cfg(feature = "harness")]
pub mod autotune;
pub mod launch;
pub mod rungs;
