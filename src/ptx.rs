//! The kernels' PTX, one module per architecture, embedded at build time by `build.rs`, and
//! the choice of module for a device.
//!
//! `kernels-gpu` is built twice:
//! - [`PTX_SM80`], `.target sm_80`, PTX ISA 7.5: every kernel that runs on Ampere and newer (the
//!   fp32 ladder v0–v13, the `mma.sync` rungs v14–v15, the dequant GEMM). The driver
//!   JIT-compiles it for any GPU of compute capability 8.0 or newer (A100, RTX 30/40/50, L4,
//!   H100, B200...); it needs a driver for CUDA 11.5 or newer.
//! - [`PTX_SM90A`], `.target sm_90a`, PTX ISA 8.0: the same kernels plus those that need
//!   Hopper's architecture-specific instructions (`wgmma`, TMA: v16–v18), except the `mma.sync`
//!   batched-decode kernels for bf16 activations ([`PORTABLE_ONLY_PREFIX`]), which Hopper
//!   replaces with their `wgmma` form (each entry adds to the module's JIT time). It loads on compute
//!   capability 9.0 only (H100, H200, GH200: "a" features are not forward-compatible) and
//!   needs a driver for CUDA 12.0 or newer.
//!
//! [`for_compute_capability`] picks the module a device should load; each [`PtxModule`] lists
//! the entry points it defines, so a caller can tell which kernels exist on a device without
//! scanning the text.

use crate::GemmError;
use cudarc::driver::CudaContext;

/// The portable PTX (`.target sm_80`), launch bounds applied.
pub const PTX_SM80: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_sm80.ptx"));

/// Entries of [`PTX_SM80`] that [`PTX_SM90A`] leaves out start with this (all but
/// `dequant_batched_bf16_half`): the `mma.sync` batched-decode kernels for bf16 activations,
/// whose `wgmma` form Hopper runs instead.
pub const PORTABLE_ONLY_PREFIX: &str = "dequant_batched_bf16_";

/// The Hopper PTX (`.target sm_90a`), launch bounds applied: [`PTX_SM80`]'s kernels but those
/// named by [`PORTABLE_ONLY_PREFIX`], and the Hopper-only ones.
pub const PTX_SM90A: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_sm90a.ptx"));

/// The `.entry` names [`PTX_SM80`] defines, sorted.
pub const ENTRIES_SM80: &[&str] = include!(concat!(env!("OUT_DIR"), "/entries_sm80.rs"));

/// The `.entry` names [`PTX_SM90A`] defines, sorted.
pub const ENTRIES_SM90A: &[&str] = include!(concat!(env!("OUT_DIR"), "/entries_sm90a.rs"));

/// One embedded PTX module and what a device needs to load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxModule {
    /// The PTX `.target`: `"sm_80"` or `"sm_90a"`.
    pub target: &'static str,
    /// The compute capability (major, minor) the module needs. The portable module runs on
    /// that capability and every later one; the sm_90a module on exactly that one.
    pub capability: (u32, u32),
    /// Whether a newer GPU than [`capability`](Self::capability) can load the module.
    pub forward_compatible: bool,
    /// The PTX text.
    pub text: &'static str,
    /// The entry points the module defines, sorted.
    pub entries: &'static [&'static str],
}

impl PtxModule {
    /// The module named `sm80` (or `sm_80`: the portable one) or `sm90a` (`sm_90a`: Hopper's).
    pub fn by_name(name: &str) -> Result<&'static PtxModule, crate::GemmError> {
        match name.trim() {
            "sm80" | "sm_80" => Ok(&PORTABLE),
            "sm90a" | "sm_90a" => Ok(&HOPPER),
            other => Err(crate::GemmError::UnknownPtxModule {
                name: other.to_string(),
            }),
        }
    }

    /// Whether a device of compute capability `major.minor` can load this module.
    pub fn loads_on(&self, major: u32, minor: u32) -> bool {
        if self.forward_compatible {
            (major, minor) >= self.capability
        } else {
            (major, minor) == self.capability
        }
    }

    /// Whether the module defines the kernel `entry`.
    pub fn has_entry(&self, entry: &str) -> bool {
        self.entries.binary_search(&entry).is_ok()
    }
}

/// [`PTX_SM80`] as a module: Ampere and every later GPU.
pub const PORTABLE: PtxModule = PtxModule {
    target: "sm_80",
    capability: (8, 0),
    forward_compatible: true,
    text: PTX_SM80,
    entries: ENTRIES_SM80,
};

/// [`PTX_SM90A`] as a module: Hopper (compute capability 9.0) only.
pub const HOPPER: PtxModule = PtxModule {
    target: "sm_90a",
    capability: (9, 0),
    forward_compatible: false,
    text: PTX_SM90A,
    entries: ENTRIES_SM90A,
};

/// The module a device of compute capability `major.minor` should load: [`HOPPER`] on 9.0
/// (it holds every kernel), [`PORTABLE`] on any other capability from 8.0 on, `None` below 8.0.
///
/// ```
/// use rust_gemm::ptx::{HOPPER, PORTABLE, for_compute_capability};
/// assert_eq!(for_compute_capability(9, 0), Some(&HOPPER)); // H100
/// assert_eq!(for_compute_capability(8, 6), Some(&PORTABLE)); // RTX 3090
/// assert_eq!(for_compute_capability(12, 0), Some(&PORTABLE)); // RTX 5090
/// assert_eq!(for_compute_capability(7, 5), None); // T4: no cp.async, no bf16 mma
/// ```
pub fn for_compute_capability(major: u32, minor: u32) -> Option<&'static PtxModule> {
    [&HOPPER, &PORTABLE]
        .into_iter()
        .find(|module| module.loads_on(major, minor))
}

/// The architecture a kernel needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Any GPU of compute capability 8.0 or newer (Ampere on): `cp.async`, `mma.sync`, bf16.
    Sm80,
    /// Hopper's architecture-specific features (`wgmma`, TMA multicast, `setmaxnreg`):
    /// compute capability 9.0 exactly.
    Sm90a,
}

impl Arch {
    /// Whether a device of this capability has the architecture.
    pub fn supported_by(&self, capability: (i32, i32)) -> bool {
        match self {
            Arch::Sm80 => capability >= (8, 0),
            Arch::Sm90a => capability == (9, 0),
        }
    }

    /// `sm_80` or `sm_90a`.
    pub fn label(&self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm90a => "sm_90a",
        }
    }
}

/// The PTX of every kernel, built for sm_90a ([`PTX_SM90A`]; loads on compute capability 9.0
/// only): what the harness and the tests load on the H100. [`for_device`] picks the module for
/// any GPU.
pub const PTX: &str = PTX_SM90A;

/// The module to load on `context`'s device, or [`GemmError::UnsupportedDevice`] naming the
/// device, its capability and what the kernels need.
pub fn for_device(context: &CudaContext) -> Result<&'static PtxModule, GemmError> {
    let (major, minor) = context
        .compute_capability()
        .map_err(|e| GemmError::cuda("reading the compute capability", e))?;
    u32::try_from(major)
        .ok()
        .zip(u32::try_from(minor).ok())
        .and_then(|(major, minor)| for_compute_capability(major, minor))
        .ok_or_else(|| GemmError::UnsupportedDevice {
            name: context.name().unwrap_or_else(|_| "unknown".into()),
            capability: (major, minor),
            needed: "compute capability 8.0 or newer (Ampere, Ada, Hopper, Blackwell): the \
                     kernels use cp.async, bf16 mma.sync and ldmatrix (PTX sm_80)",
        })
}

/// The environment variable that picks the PTX module the GPU tests load (`sm80` or `sm90a`).
pub const TEST_PTX_VARIABLE: &str = "RUST_GEMM_TEST_PTX";

/// The module [`TEST_PTX_VARIABLE`] names, `None` when it is unset.
pub fn test_module() -> Result<Option<&'static PtxModule>, crate::GemmError> {
    match std::env::var(TEST_PTX_VARIABLE) {
        Err(_) => Ok(None),
        Ok(name) => PtxModule::by_name(&name).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the first `.directive` line of `ptx`.
    fn directive<'a>(ptx: &'a str, name: &str) -> &'a str {
        ptx.lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} directive"))
            .trim()
    }

    #[test]
    fn each_module_declares_its_target_and_isa_version() {
        assert_eq!(directive(PTX_SM80, ".target"), "sm_80");
        assert_eq!(directive(PTX_SM80, ".version"), "7.5");
        assert_eq!(directive(PTX_SM90A, ".target"), "sm_90a");
        assert_eq!(directive(PTX_SM90A, ".version"), "8.0");
    }

    #[test]
    fn entry_lists_match_the_texts() {
        for module in [PORTABLE, HOPPER] {
            assert!(!module.entries.is_empty(), "{}: no entries", module.target);
            assert!(module.entries.is_sorted(), "{}: unsorted", module.target);
            let in_text = module.text.matches(".entry ").count();
            assert_eq!(in_text, module.entries.len(), "{}", module.target);
            for entry in module.entries {
                assert!(module.text.contains(&format!(".entry {entry}(")), "{entry}");
            }
        }
    }

    #[test]
    fn hopper_module_holds_every_portable_kernel_and_the_hopper_only_ones() {
        let mut portable_only = 0;
        for entry in ENTRIES_SM80 {
            if entry.starts_with(PORTABLE_ONLY_PREFIX) && *entry != "dequant_batched_bf16_half" {
                assert!(!HOPPER.has_entry(entry), "{entry} in the sm_90a PTX");
                portable_only += 1;
                continue;
            }
            assert!(
                HOPPER.has_entry(entry),
                "{entry} missing from the sm_90a PTX"
            );
        }
        // One per quantized weight format (every decoder but fp16 weights).
        assert_eq!(portable_only, 18);
        for hopper_only in [
            "hgemm_v16_wgmma",
            "hgemm_v17_tma_warp_specialized",
            "hgemm_v18_persistent",
            "sgemm_v19_tf32_wgmma",
            "hgemm_v20_fp8_e4m3",
            "hgemm_v20_fp8_e5m2",
            "sgemm_v21_tf32_register_b",
        ] {
            assert!(HOPPER.has_entry(hopper_only), "{hopper_only}");
            assert!(
                !PORTABLE.has_entry(hopper_only),
                "{hopper_only} in the sm_80 PTX"
            );
        }
        // No Hopper-only instruction leaked into the portable module.
        for instruction in ["wgmma.", "cp.async.bulk", "setmaxnreg", "tensormap"] {
            assert!(
                !PTX_SM80.contains(instruction),
                "{instruction} in the sm_80 PTX"
            );
        }
    }

    #[test]
    fn module_choice_by_compute_capability() {
        let target =
            |major, minor| for_compute_capability(major, minor).map(|module| module.target);
        assert_eq!(target(7, 0), None);
        assert_eq!(target(7, 5), None);
        assert_eq!(target(8, 0), Some("sm_80"));
        assert_eq!(target(8, 6), Some("sm_80"));
        assert_eq!(target(8, 9), Some("sm_80"));
        assert_eq!(target(9, 0), Some("sm_90a"));
        assert_eq!(target(10, 0), Some("sm_80"));
        assert_eq!(target(12, 0), Some("sm_80"));
    }
}
