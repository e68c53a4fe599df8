//! Checking results: random inputs, the f64 CPU reference, the error models and tolerances a
//! result must meet, and randomized sweeps of every kernel.

pub mod cpu;
pub mod sweep;
pub mod verify;
