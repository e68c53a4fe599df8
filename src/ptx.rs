//! The kernels' PTX, built by `build.rs` and embedded in the library, and the choice of PTX for
//! a device.

use crate::GemmError;
use cudarc::driver::CudaContext;

/// The PTX of every kernel in `kernels-gpu`, built by rustc's nvptx64 backend for sm_90a.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The PTX to load on `context`'s device, or why none fits.
pub fn for_device(context: &CudaContext) -> Result<&'static str, GemmError> {
    let (major, minor) = context
        .compute_capability()
        .map_err(|e| GemmError::cuda("reading the compute capability", e))?;
    if (major, minor) == (9, 0) {
        Ok(PTX)
    } else {
        Err(GemmError::UnsupportedDevice {
            name: context.name().unwrap_or_else(|_| "unknown".into()),
            capability: (major, minor),
            needed: "compute capability 9.0 (H100, H200): the kernels are built for sm_90a",
        })
    }
}
