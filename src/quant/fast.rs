//! Launching the fast dequant kernels: decode (m ≤ [`DECODE_MAX_M`], `kernels-gpu/src/dequant/
//! decode.rs` with one m16 tile per block), batched decode (the same kernel with
//! [`dequant::BATCHED_M_TILES`] m16 tiles per block, up to [`BATCHED_MAX_M`]) and prefill (expand
//! to the activations' type, `dequantize.rs`, then a tensor-core GEMM: for fp16 the ladder's v18,
//! or v15 where k or n is not a multiple of 8).
//!
//! Every kernel reads weights pre-packed by [`crate::quant::prepack`] and multiplies them by fp16
//! or bf16 activations ([`ActivationElement`]) with fp32 accumulation, writing C in the
//! activations' type. Each activation type has its own entries, with the same arguments and the
//! same packed weights; [`weight_rounding`] says which weights each path multiplies by. bf16
//! prefill expands to bf16 and runs the library's bf16 GEMM ([`crate::Gemm::matmul`]: the
//! ladder's v18 and v15 are fp16 only).

use crate::api::graph::{Held, Pinned};
use crate::element::Element;
use crate::quant::format::{WeightFormat, WeightRounding};
use crate::quant::prepack::{BLOCK_COLUMNS, Decoder, Prepacked, chunk_k};
use crate::runtime::Runtime;
use crate::{DType, Gemm, GemmError, GemmShape, MatmulDesc, Rung};
use cudarc::driver::{
    CudaSlice, CudaView, DevicePtr, DevicePtrMut, LaunchArgs, LaunchConfig, PushKernelArg,
};
use gemm_geometry::dequant;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Largest m the decode kernel is chosen for by default; above it, batched decode (but see
/// [`SMALL_LAYER_DECODE_MAX_M`]).
pub const DECODE_MAX_M: usize = 16;
/// Largest m the decode kernel is chosen for at layers of fewer than [`SMALL_LAYER_WEIGHTS`]
/// weights (k·n) with codes of at most 4 bits. There, streaming the weights once per m16 tile
/// costs less than the batched kernel's 64-row tiles. Measured on the H100 (u4, group 128):
/// decode took 31.3–33.1 µs at m = 17–32 where batched decode took 37.6–38.4 µs at
/// 4096 × 14336 and 14336 × 4096; at 8192 × 28672 the two were within 3%, and at 28672 × 8192
/// and 8192 × 57344 batched decode was 6–11% faster. At m = 48 decode lost everywhere.
pub const SMALL_LAYER_DECODE_MAX_M: usize = 32;
/// Weights (k·n) below which a layer counts as small for [`SMALL_LAYER_DECODE_MAX_M`].
pub const SMALL_LAYER_WEIGHTS: usize = 1 << 27;
/// Largest m the batched-decode kernel is chosen for by default; above it, prefill.
pub const BATCHED_MAX_M: usize = 256;
/// Fewest weights (k·n) for which batched decode takes its wide form at m > 128. Measured on
/// the H100 (u4, group 128): at m = 256 the wide form took 277–290 µs against 375–392 µs at
/// k × n = 8192 × 28672 and 28672 × 8192, and 548 against 749 µs at 8192 × 57344, but 131–132
/// against 105–110 µs at 4096 × 14336 and 14336 × 4096 (and at m = 128 it won only at 8192 ×
/// 57344, by 8%; at m = 65 it lost everywhere).
pub const WIDE_MIN_WEIGHTS: usize = 1 << 27;
/// Smallest m the fused kernel takes batched decode's place at (up to [`BATCHED_MAX_M`]), on
/// Hopper for integer codes. Measured on the H200 (u4, group 128, `docs/results/dequant-fused`):
/// at m = 256 the fused kernel took 81 µs against batched decode's 97 at 4096 × 14336 and 283
/// against 313 at 8192 × 28672; at m = 192 the two were within 3% at 4096 × 14336 and batched
/// decode was faster at 8192 × 28672; at m = 128 batched decode won at 4096 × 14336 (54 against
/// 76 µs). Past 256 rows prefill (expansion, then v18) stays faster: 769 against 1293 µs at
/// m = 4096.
pub const FUSED_MIN_M: usize = 193;
/// Rows of A per m16 tile (`gemm_geometry::dequant::DECODE_TILE_M`).
const TILE_M: usize = dequant::DECODE_TILE_M as usize;

/// `[prefix + suffix, …]` for every kernel suffix (`Prepacked::entry_suffix`), in the order
/// of [`SUFFIXES`]: one decoder and bit width per entry, `FastWeights::entry` indexes them.
macro_rules! entry_names {
    ($prefix:literal) => {
        [
            concat!($prefix, "int1"),
            concat!($prefix, "int2"),
            concat!($prefix, "int3"),
            concat!($prefix, "int4"),
            concat!($prefix, "int5"),
            concat!($prefix, "int6"),
            concat!($prefix, "int7"),
            concat!($prefix, "int8"),
            concat!($prefix, "float2"),
            concat!($prefix, "float3"),
            concat!($prefix, "float4"),
            concat!($prefix, "float5"),
            concat!($prefix, "float6"),
            concat!($prefix, "float7"),
            concat!($prefix, "float8"),
            concat!($prefix, "wide_float6"),
            concat!($prefix, "wide_float7"),
            concat!($prefix, "wide_float8"),
            concat!($prefix, "half"),
        ]
    };
}

/// The kernel entries' suffixes, one per decoder and bit width (`Prepacked::entry_suffix`).
const SUFFIXES: [&str; 19] = entry_names!("");
/// Suffixes of the integer decoders (the first eight): the wide batched form has no others.
const INTEGER_SUFFIXES: usize = 8;
/// Suffixes of every decoder but fp16 weights (all but the last): the `wgmma` batched form has
/// no fp16-weight kernel.
const QUANTIZED_SUFFIXES: usize = 18;

/// The entry points of one activation type's kernels, each table indexed like [`SUFFIXES`]
/// (the shorter ones cover its first entries only).
struct EntryTables {
    decode: [&'static str; 19],
    /// The batched kernel's `mma.sync` form (in the portable module; fp16 weights also in the
    /// Hopper one).
    batched: [&'static str; 19],
    /// The batched kernel's Hopper form (`wgmma`, in the sm_90a module only), every decoder
    /// but fp16 weights.
    batched_wgmma: &'static [&'static str],
    /// The batched kernel's wide Hopper form (128-row tiles, for m > 64), integer codes only.
    batched_wide: &'static [&'static str],
    /// The fused kernel (Hopper: the weights decoded into shared memory for `wgmma`), integer
    /// codes only.
    fused: &'static [&'static str],
    /// The expansion to a row-major `k × n` matrix of the activation type.
    expand: [&'static str; 19],
}

const F16_BATCHED_WGMMA: [&str; 19] = entry_names!("dequant_batched_wgmma_");
const F16_BATCHED_WIDE: [&str; 19] = entry_names!("dequant_batched128_");
const BF16_BATCHED_WGMMA: [&str; 19] = entry_names!("dequant_batched_wgmma_bf16_");
const F16_FUSED: [&str; 19] = entry_names!("dequant_fused_");
const BF16_FUSED: [&str; 19] = entry_names!("dequant_fused_bf16_");

/// fp16 activations and output.
const F16_ENTRIES: EntryTables = EntryTables {
    decode: entry_names!("dequant_decode_"),
    batched: entry_names!("dequant_batched_"),
    batched_wgmma: F16_BATCHED_WGMMA.split_at(QUANTIZED_SUFFIXES).0,
    batched_wide: F16_BATCHED_WIDE.split_at(INTEGER_SUFFIXES).0,
    fused: F16_FUSED.split_at(INTEGER_SUFFIXES).0,
    expand: entry_names!("dequant_expand_"),
};

/// bf16 activations and output: the same weights and arguments as fp16's; no wide batched form.
const BF16_ENTRIES: EntryTables = EntryTables {
    decode: entry_names!("dequant_decode_bf16_"),
    batched: entry_names!("dequant_batched_bf16_"),
    batched_wgmma: BF16_BATCHED_WGMMA.split_at(QUANTIZED_SUFFIXES).0,
    batched_wide: &[],
    fused: BF16_FUSED.split_at(INTEGER_SUFFIXES).0,
    expand: entry_names!("dequant_expand_bf16_"),
};

/// Decode-kernel entries compiled for one small-float format (the OCP formats' element types),
/// `(exponent, mantissa, fp16 entry, bf16 entry)`: the same weights as the format's generic
/// entry (`float4`, `wide_float8`, …), with fewer operations per weight, since the compiler
/// knows the widths (`fixed_float` in `kernels-gpu/src/dequant/packed.rs`). The decode kernel
/// takes them where the module has them; batched decode and prefill use the generic entries.
pub const FORMAT_DECODE_ENTRIES: [(u32, u32, &str, &str); 4] = [
    (2, 1, "dequant_decode_e2m1", "dequant_decode_bf16_e2m1"),
    (3, 2, "dequant_decode_e3m2", "dequant_decode_bf16_e3m2"),
    (2, 3, "dequant_decode_e2m3", "dequant_decode_bf16_e2m3"),
    (5, 2, "dequant_decode_e5m2", "dequant_decode_bf16_e5m2"),
];

/// The element type of a dequant GEMM's activations (A) and output (C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ActivationType {
    /// IEEE fp16.
    #[default]
    F16,
    /// bfloat16.
    Bf16,
}

impl ActivationType {
    /// Its name in records and on the command line: `f16` or `bf16`.
    pub fn label(&self) -> &'static str {
        match self {
            ActivationType::F16 => "f16",
            ActivationType::Bf16 => "bf16",
        }
    }

    /// The [`DType`] of the same elements (the cuBLAS baseline's, and the bf16 prefill GEMM's).
    pub fn dtype(&self) -> DType {
        match self {
            ActivationType::F16 => DType::F16,
            ActivationType::Bf16 => DType::Bf16,
        }
    }

    fn entries(&self) -> &'static EntryTables {
        match self {
            ActivationType::F16 => &F16_ENTRIES,
            ActivationType::Bf16 => &BF16_ENTRIES,
        }
    }
}

impl fmt::Display for ActivationType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Parses `f16` (also `fp16`) and `bf16`.
impl FromStr for ActivationType {
    type Err = GemmError;

    fn from_str(text: &str) -> Result<Self, GemmError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "f16" | "fp16" => Ok(ActivationType::F16),
            "bf16" => Ok(ActivationType::Bf16),
            _ => Err(GemmError::UnsupportedFormat(format!(
                "{text} as activations (f16 or bf16)"
            ))),
        }
    }
}

/// An element type the fast kernels take for activations and output: fp16 as its bits (`u16`,
/// as the harness keeps them) or as [`half::f16`], and [`half::bf16`]. Sealed: the kernels
/// exist for these only.
pub trait ActivationElement: Element + sealed::PrefillProduct {
    /// Which kernels the type runs.
    const TYPE: ActivationType;
}

impl ActivationElement for u16 {
    const TYPE: ActivationType = ActivationType::F16;
}
impl ActivationElement for half::f16 {
    const TYPE: ActivationType = ActivationType::F16;
}
impl ActivationElement for half::bf16 {
    const TYPE: ActivationType = ActivationType::Bf16;
}

mod sealed {
    use super::*;

    /// The prefill path's GEMM on the expanded weights, which differs by type: the ladder's
    /// fp16 rungs for fp16, the library's dispatch for bf16.
    pub trait PrefillProduct: Element {
        /// Queues `c = a · expanded` for `shape` (`expanded`: `k × n`, row-major, of this type).
        fn multiply_expanded(
            gpu: &Runtime,
            a: &impl DevicePtr<Self>,
            expanded: &CudaView<'_, Self>,
            c: &mut impl DevicePtrMut<Self>,
            shape: &GemmShape,
            gemm: &mut Option<Box<Gemm>>,
        ) -> Result<(), GemmError>;
    }

    /// fp16: v18 or v15 ([`prefill_rung`]).
    fn fp16_rung<T: Element>(
        gpu: &Runtime,
        a: &impl DevicePtr<T>,
        expanded: &CudaView<'_, T>,
        c: &mut impl DevicePtrMut<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        gpu.launch_rung(prefill_rung(gpu, shape.k, shape.n)?, a, expanded, c, shape)
    }

    /// fp16, as bits (`u16`) or as `half::f16`: the ladder's fp16 rung ([`fp16_rung`]).
    macro_rules! fp16_prefill {
        ($($t:ty),*) => {$(
            impl PrefillProduct for $t {
                fn multiply_expanded(
                    gpu: &Runtime,
                    a: &impl DevicePtr<Self>,
                    expanded: &CudaView<'_, Self>,
                    c: &mut impl DevicePtrMut<Self>,
                    shape: &GemmShape,
                    _gemm: &mut Option<Box<Gemm>>,
                ) -> Result<(), GemmError> {
                    fp16_rung(gpu, a, expanded, c, shape)
                }
            }
        )*};
    }
    fp16_prefill!(u16, half::f16);

    impl PrefillProduct for half::bf16 {
        fn multiply_expanded(
            gpu: &Runtime,
            a: &impl DevicePtr<Self>,
            expanded: &CudaView<'_, Self>,
            c: &mut impl DevicePtrMut<Self>,
            shape: &GemmShape,
            gemm: &mut Option<Box<Gemm>>,
        ) -> Result<(), GemmError> {
            // The ladder has no bf16 rungs: the library's dispatch (v18 or v15 in bf16, on
            // gpu's stream and module) multiplies. Its Gemm is kept for the next call, which
            // reuses its tensor maps.
            if gemm
                .as_ref()
                .is_none_or(|g| !g.runtime().shares_module_and_stream(gpu))
            {
                *gemm = Some(Box::new(Gemm::from_runtime(gpu.sharing())));
            }
            let gemm = gemm.as_ref().expect("just made");
            gemm.matmul(a, expanded, c, &MatmulDesc::new(shape.m, shape.n, shape.k))
        }
    }
}

/// Dynamic shared memory of a decode (or batched-decode, `path`) block for `bits`-wide codes:
/// the stages and a 16-byte flag (the kernel traps if it is given less).
pub fn decode_shared_bytes(bits: u32, path: Path) -> usize {
    dequant::decode_shared_bytes(bits, path.m_tiles()) as usize
}

/// Dynamic shared memory of an expand block (the kernel traps if it is given less).
pub fn expand_shared_bytes(bits: u32) -> usize {
    dequant::expand_shared_bytes(bits) as usize
}

/// Which kernel computes a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The decode kernel (streams the packed weights once per 16 rows of A).
    Decode,
    /// The decode kernel with 64-row blocks (streams the packed weights once per 64 rows of A;
    /// one block per SM, 160 KiB of shared memory at most: A100 and Hopper).
    Batched,
    /// Expand to the activations' type, then the tensor-core GEMM.
    Prefill,
    /// The fused kernel (Hopper, integer codes): one GEMM whose producer warpgroup decodes the
    /// packed weights into shared memory for `wgmma`, 128 × 256 output tiles, no fp16 copy of
    /// the weights in global memory.
    Fused,
}

impl Path {
    /// The default for `m` rows of a `weights`-weight (k·n) layer of `bits`-bit codes on a
    /// device with `max_shared_per_block` bytes of shared memory per block: decode up to
    /// [`DECODE_MAX_M`] rows ([`SMALL_LAYER_DECODE_MAX_M`] at small layers of at most 4-bit
    /// codes), then batched decode where it fits, else prefill.
    pub fn for_rows(m: usize, bits: u32, weights: usize, max_shared_per_block: usize) -> Path {
        let decode_max_m = if bits <= 4 && weights < SMALL_LAYER_WEIGHTS {
            SMALL_LAYER_DECODE_MAX_M
        } else {
            DECODE_MAX_M
        };
        if m <= decode_max_m {
            Path::Decode
        } else if m <= BATCHED_MAX_M
            && decode_shared_bytes(bits, Path::Batched) <= max_shared_per_block
        {
            Path::Batched
        } else {
            Path::Prefill
        }
    }

    /// Name in reports: `dequant-decode`, `dequant-batched` or `dequant-prefill`.
    pub fn label(&self) -> &'static str {
        match self {
            Path::Decode => "dequant-decode",
            Path::Batched => "dequant-batched",
            Path::Prefill => "dequant-prefill",
            Path::Fused => "dequant-fused",
        }
    }

    /// m16 tiles per block of the decode kernels (1 for prefill, which has no such blocks;
    /// the fused kernel's 128-row tiles count as 8).
    pub fn m_tiles(&self) -> u32 {
        match self {
            Path::Batched => dequant::BATCHED_M_TILES,
            Path::Fused => dequant::FUSED_TILE_M / dequant::DECODE_TILE_M,
            Path::Decode | Path::Prefill => 1,
        }
    }

    fn blocks_per_sm(&self) -> usize {
        match self {
            Path::Batched => dequant::BATCHED_MIN_BLOCKS_PER_SM as usize,
            Path::Fused => 1,
            Path::Decode | Path::Prefill => dequant::MIN_BLOCKS_PER_SM as usize,
        }
    }

    /// Threads per block of this path's kernel (prefill: the expansion's).
    fn threads(&self) -> u32 {
        match self {
            Path::Fused => dequant::FUSED_THREADS,
            Path::Decode | Path::Batched | Path::Prefill => dequant::THREADS,
        }
    }
}

/// The weights `path`'s kernels multiply `activation`s by.
///
/// fp16 activations: `fp16(value · scale)` ([`WeightRounding::Fp16`]) on the prefill
/// expansion (its GEMM takes fp16 weights), in batched decode (which has no registers for a
/// second set of accumulators), and for small floats with more than 4 exponent bits on every
/// path (they go through f32). Otherwise the decode kernel multiplies by the exact weights
/// (`code − zero`, or the small float's value, both exact in fp16) and applies each group's
/// scale to the fp32 sums; fp16 weights are exact either way.
///
/// bf16 activations: the decode kernel's exact weights as for fp16; fp16 weights rounded to bf16
/// on every path; everything else `bf16(value · bf16(scale))` ([`WeightRounding::Bf16`]).
pub fn weight_rounding(
    path: Path,
    format: WeightFormat,
    activation: ActivationType,
) -> WeightRounding {
    let rounded = match activation {
        ActivationType::F16 => WeightRounding::Fp16,
        ActivationType::Bf16 => WeightRounding::Bf16,
    };
    match (Decoder::of(format), activation) {
        (Decoder::Half, ActivationType::F16) => WeightRounding::Exact,
        (Decoder::Half, ActivationType::Bf16) | (Decoder::WideFloat, _) => rounded,
        (Decoder::Integer | Decoder::Float, _) if path == Path::Decode => WeightRounding::Exact,
        (Decoder::Integer | Decoder::Float, _) => rounded,
    }
}

/// Pre-packed weights on the device.
pub struct FastWeights {
    /// Format of the codes.
    pub format: WeightFormat,
    /// Rows of k per scale, as quantized.
    pub group: usize,
    /// Rows (the reduction length).
    pub k: usize,
    /// Columns.
    pub n: usize,
    /// k padded to whole chunks.
    pub k_pad: usize,
    /// n padded to whole column blocks.
    pub n_pad: usize,
    /// Bytes the kernels read for the weights (codes, scales, offsets).
    pub bytes: usize,
    kernel_group: usize,
    /// The kernels' last four arguments: offset, exponent, mantissa, rebias.
    constants: [u32; 4],
    entry: usize,
    weights: CudaSlice<u8>,
    scales: CudaSlice<u16>,
    offsets: Option<CudaSlice<u16>>,
}

impl FastWeights {
    /// The decode kernel for these weights on `path` (`Decode` or `Batched`) with `m` rows of
    /// `activation`s: batched decode takes its Hopper form (`wgmma`) where `gpu`'s module has
    /// it, and with fp16 activations, integer codes, m > 128 and at least [`WIDE_MIN_WEIGHTS`]
    /// weights its wide form (128-row tiles), where that measured faster. Refused where the
    /// module has no batched kernel for the activations and weights.
    pub fn decode_kernel(
        &self,
        gpu: &Runtime,
        path: Path,
        m: usize,
        activation: ActivationType,
    ) -> Result<DecodeKernel, GemmError> {
        let bits = self.bits();
        let tables = activation.entries();
        let has = |entry: &str| gpu.entries().iter().any(|e| e == entry);
        let hopper = |entry: &'static str, m_tiles: u32| DecodeKernel {
            path: Path::Batched,
            entry,
            shared_bytes: dequant::batched_wgmma_shared_bytes(bits, m_tiles) as usize,
            m_tiles,
            activation,
        };
        match path {
            Path::Batched => match (
                tables.batched_wide.get(self.entry),
                tables.batched_wgmma.get(self.entry),
            ) {
                (Some(&wide), _) if m > 128 && self.k * self.n >= WIDE_MIN_WEIGHTS && has(wide) => {
                    Ok(hopper(wide, dequant::WIDE_BATCHED_M_TILES))
                }
                (_, Some(&entry)) if has(entry) => Ok(hopper(entry, dequant::BATCHED_M_TILES)),
                _ => {
                    let entry = tables.batched[self.entry];
                    if !has(entry) {
                        return Err(GemmError::KernelRefused {
                            kernel: path.label(),
                            reason: format!(
                                "has no kernel for {} weights and {activation} activations in the loaded {} module ({entry} and its wgmma form are missing)",
                                self.format,
                                gpu.ptx_target()
                            ),
                        });
                    }
                    Ok(DecodeKernel {
                        path: Path::Batched,
                        entry,
                        shared_bytes: decode_shared_bytes(bits, Path::Batched),
                        m_tiles: dequant::BATCHED_M_TILES,
                        activation,
                    })
                }
            },
            Path::Fused => match tables.fused.get(self.entry) {
                Some(&entry) if has(entry) => Ok(DecodeKernel {
                    path: Path::Fused,
                    entry,
                    shared_bytes: dequant::fused_shared_bytes(bits) as usize,
                    m_tiles: path.m_tiles(),
                    activation,
                }),
                _ => Err(GemmError::KernelRefused {
                    kernel: path.label(),
                    reason: format!(
                        "has no kernel for {} weights and {activation} activations in the loaded {} module (integer codes on Hopper only)",
                        self.format,
                        gpu.ptx_target()
                    ),
                }),
            },
            Path::Decode | Path::Prefill => Ok(DecodeKernel {
                path: Path::Decode,
                entry: self
                    .format_decode_entry(activation)
                    .filter(|entry| has(entry))
                    .unwrap_or(tables.decode[self.entry]),
                shared_bytes: decode_shared_bytes(bits, Path::Decode),
                m_tiles: 1,
                activation,
            }),
        }
    }

    /// The decode entry compiled for these weights' format ([`FORMAT_DECODE_ENTRIES`]), if
    /// there is one.
    pub fn format_decode_entry(&self, activation: ActivationType) -> Option<&'static str> {
        let WeightFormat::Float { exponent, mantissa } = self.format else {
            return None;
        };
        FORMAT_DECODE_ENTRIES
            .iter()
            .find(|&&(e, m, _, _)| (e, m) == (exponent, mantissa))
            .map(|&(_, _, f16_entry, bf16_entry)| match activation {
                ActivationType::F16 => f16_entry,
                ActivationType::Bf16 => bf16_entry,
            })
    }

    /// The wide batched kernel (128-row tiles, fp16 activations) for these weights, where
    /// `gpu`'s module has one (Hopper, integer codes): what [`FastWeights::decode_kernel`]
    /// picks for large m and layers, for tests that run it at any shape.
    pub fn wide_batched_kernel(&self, gpu: &Runtime) -> Option<DecodeKernel> {
        let entry = *F16_ENTRIES.batched_wide.get(self.entry)?;
        gpu.entries()
            .iter()
            .any(|e| e == entry)
            .then(|| DecodeKernel {
                path: Path::Batched,
                entry,
                shared_bytes: dequant::batched_wgmma_shared_bytes(
                    self.bits(),
                    dequant::WIDE_BATCHED_M_TILES,
                ) as usize,
                m_tiles: dequant::WIDE_BATCHED_M_TILES,
                activation: ActivationType::F16,
            })
    }

    /// The path for `m` rows of activations on `gpu`: [`Path::for_rows`], except that the
    /// fused kernel takes over batched decode's rows from [`FUSED_MIN_M`] on, where `gpu`'s
    /// module has it for these weights with both activation types (Hopper, integer codes).
    /// Prefill keeps the rows past [`BATCHED_MAX_M`]: there the expansion and v18 measured
    /// faster than the fused kernel (`docs/results/dequant-fused`).
    pub fn path(&self, gpu: &Runtime, m: usize) -> Path {
        let path = Path::for_rows(
            m,
            self.bits(),
            self.k * self.n,
            gpu.info().max_shared_per_block,
        );
        let has_fused = [F16_ENTRIES.fused, BF16_ENTRIES.fused].iter().all(|table| {
            table
                .get(self.entry)
                .is_some_and(|entry| gpu.entries().iter().any(|e| e == entry))
        });
        if path == Path::Batched && m >= FUSED_MIN_M && has_fused {
            Path::Fused
        } else {
            path
        }
    }

    /// The expansion kernel's entry point for these weights, expanding to `activation`'s type.
    pub fn expand_entry(&self, activation: ActivationType) -> &'static str {
        activation.entries().expand[self.entry]
    }

    /// Uploads pre-packed weights.
    pub fn upload(gpu: &Runtime, p: &Prepacked) -> Result<Self, GemmError> {
        let suffix = p.entry_suffix();
        let entry = SUFFIXES
            .iter()
            .position(|s| *s == suffix)
            .ok_or_else(|| GemmError::UnsupportedFormat(p.format.to_string()))?;
        Ok(FastWeights {
            format: p.format,
            group: p.group,
            k: p.k,
            n: p.n,
            k_pad: p.k_pad,
            n_pad: p.n_pad,
            bytes: p.bytes(),
            kernel_group: p.kernel_group(),
            constants: p.constants(),
            entry,
            weights: gpu.upload_raw(&p.weights)?,
            scales: gpu.upload_raw(&p.scales)?,
            offsets: match &p.offsets {
                Some(o) => Some(gpu.upload_raw(o)?),
                None => None,
            },
        })
    }

    fn bits(&self) -> u32 {
        self.format.bits()
    }

    fn k_chunks(&self) -> usize {
        self.k_pad / chunk_k(self.bits())
    }

    fn column_blocks(&self) -> usize {
        self.n_pad / BLOCK_COLUMNS
    }
}

/// The packed weights, codes, scales and offsets alike, were uploaded on one stream.
impl Held for FastWeights {
    fn stream(&self) -> &std::sync::Arc<cudarc::driver::CudaStream> {
        cudarc::driver::DeviceSlice::stream(&self.weights)
    }
}

/// Buffers a fast launch needs besides its inputs, kept between calls and grown when a call
/// needs more: A padded to whole chunks, the split-K workspace and counters (zero between
/// calls: the last block of each tile zeroes what it used, so a longer buffer than a call needs
/// stays zero too), the expanded weights of the prefill path (fp16 or bf16 bits), and the
/// library [`Gemm`] that multiplies bf16 expansions. Each buffer is shared with the CUDA graphs
/// that captured a launch using it, which keep it when it is replaced.
///
/// The launches reach these buffers by address, outside cudarc's event tracking, so every
/// launch using one `Scratch` must be queued on one stream: then the stream orders them. The
/// library's [`Gemm`] holds one for its stream (shared by every `QuantizedWeights` multiplied
/// through it); two streams, two `Scratch`es.
#[derive(Default)]
pub struct Scratch {
    padded_a: Option<Arc<CudaSlice<u16>>>,
    /// C for the decode kernel when the caller's C is not 4-byte aligned (its paired stores).
    staged_c: Option<Arc<CudaSlice<u16>>>,
    workspace: Option<Arc<CudaSlice<f32>>>,
    counters: Option<Arc<CudaSlice<u32>>>,
    expanded: Option<Arc<CudaSlice<u16>>>,
    /// Boxed: a [`Gemm`] holds a `Scratch` for its quantized products.
    prefill_gemm: Option<Box<Gemm>>,
}

impl Scratch {
    /// Every device buffer the scratch holds now, for a captured graph to keep.
    pub(crate) fn held(&self) -> Vec<Pinned> {
        let mut held: Vec<Pinned> = Vec::new();
        for slot in [&self.padded_a, &self.staged_c, &self.expanded] {
            held.extend(slot.iter().map(|b| b.clone() as Pinned));
        }
        held.extend(self.workspace.iter().map(|b| b.clone() as Pinned));
        held.extend(self.counters.iter().map(|b| b.clone() as Pinned));
        held
    }
}

/// Elements of each scratch buffer that a decode-kernel launch of `m` rows with `m_tiles` m16
/// tiles per block needs (`padded_a`: 0 unless A must be padded or realigned).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeScratch {
    /// The padded copy of A: `m × k_pad`.
    pub padded_a: usize,
    /// The split-K workspace: `m × n_pad` fp32 sums.
    pub workspace: usize,
    /// One arrival counter per output tile.
    pub counters: usize,
}

impl DecodeScratch {
    /// What a launch of `m` rows needs for `w` (padding A if `pad_a`).
    pub fn for_launch(w: &FastWeights, m: usize, m_tiles: u32, pad_a: bool) -> DecodeScratch {
        DecodeScratch {
            padded_a: if pad_a { m * w.k_pad } else { 0 },
            workspace: m * w.n_pad,
            counters: w.column_blocks() * row_tiles(m, m_tiles),
        }
    }

    /// Each buffer as large as the larger of the two needs.
    pub fn max(self, other: DecodeScratch) -> DecodeScratch {
        DecodeScratch {
            padded_a: self.padded_a.max(other.padded_a),
            workspace: self.workspace.max(other.workspace),
            counters: self.counters.max(other.counters),
        }
    }
}

/// Reuses `slot` if it holds at least `len` elements, else allocates it zeroed (`what` names
/// it, for the refusal when the stream is being captured, which cannot record an allocation).
fn zeroed<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Runtime,
    slot: &'a mut Option<Arc<CudaSlice<T>>>,
    len: usize,
    what: &str,
) -> Result<&'a mut Arc<CudaSlice<T>>, GemmError> {
    if slot.as_ref().is_none_or(|s| s.len() < len) {
        gpu.refuse_in_capture(|| format!("allocating {what} ({len} elements)"))?;
        // The old buffer is freed in stream order, after the kernels that used it (or, if a
        // CUDA graph captured a launch using it, when that graph is dropped).
        *slot = None;
        gpu.ensure_room_for(len * std::mem::size_of::<T>())?;
        *slot =
            Some(Arc::new(gpu.stream().alloc_zeros::<T>(len).map_err(
                |e| GemmError::cuda(format!("allocating {what}"), e),
            )?));
    }
    Ok(slot.as_mut().expect("just filled"))
}

/// Allocates ahead `scratch`'s buffers for every product of `w` with up to `max_m` rows (fp16
/// or bf16 activations) on the path [`Path::for_rows`] chooses for it, and loads the kernels:
/// after this, such a product allocates nothing, so it can be captured into a CUDA graph. Not
/// covered: the padded copy of an A whose address is not 16-byte aligned and the staged C of
/// an output that is not 4-byte aligned (made by the first such call), and the prefill
/// path's GEMM, whose own state depends on the buffers (see [`crate::Gemm::matmul`]).
pub fn reserve(
    gpu: &Runtime,
    w: &FastWeights,
    scratch: &mut Scratch,
    max_m: usize,
) -> Result<(), GemmError> {
    GemmShape::new(max_m, w.n, w.k)?;
    let mut needs = DecodeScratch::default();
    // The path goes from decode to batched decode to prefill as m grows, and the decode
    // paths end at BATCHED_MAX_M rows.
    for m in 1..=max_m.min(BATCHED_MAX_M) {
        let path = w.path(gpu, m);
        if path == Path::Prefill {
            break;
        }
        for activation in [ActivationType::F16, ActivationType::Bf16] {
            // A module without this path's kernel for these activations refuses such calls
            // itself: there is nothing to reserve for them.
            let Ok(kernel) = w.decode_kernel(gpu, path, m, activation) else {
                continue;
            };
            let pad_a = w.k_pad != w.k;
            let mut need = DecodeScratch::for_launch(w, m, kernel.m_tiles, pad_a);
            if path == Path::Fused {
                // Every tile is summed whole in one block: no workspace.
                (need.workspace, need.counters) = (0, 0);
            }
            needs = needs.max(need);
            gpu.kernel(kernel.entry)?;
        }
    }
    if needs.padded_a > 0 {
        zeroed(
            gpu,
            &mut scratch.padded_a,
            needs.padded_a,
            "the padded copy of A",
        )?;
    }
    zeroed(
        gpu,
        &mut scratch.workspace,
        needs.workspace,
        "the decode workspace",
    )?;
    zeroed(
        gpu,
        &mut scratch.counters,
        needs.counters,
        "the decode counters",
    )?;
    if w.path(gpu, max_m) == Path::Prefill {
        zeroed(
            gpu,
            &mut scratch.expanded,
            w.k * w.n,
            "the prefill expansion",
        )?;
        for activation in [ActivationType::F16, ActivationType::Bf16] {
            gpu.kernel(w.expand_entry(activation))?;
        }
    }
    Ok(())
}

fn check_buffers<T: ActivationElement>(
    w: &FastWeights,
    a: &impl DevicePtr<T>,
    c: &impl DevicePtrMut<T>,
    m: usize,
) -> Result<GemmShape, GemmError> {
    check_activations(m, w.n, w.k, a.len(), c.len())
}

/// One decode kernel: its path, entry, dynamic shared memory, m16 tiles per block and
/// activation type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeKernel {
    /// The path it runs (`Decode`, `Batched` or `Fused`).
    pub path: Path,
    /// The kernel's entry point.
    pub entry: &'static str,
    /// Dynamic shared memory per block (the kernel traps if it is given less).
    pub shared_bytes: usize,
    /// m16 tiles per block: output tiles are `16·m_tiles × 256`.
    pub m_tiles: u32,
    /// The element type of the A and C it takes.
    pub activation: ActivationType,
}

/// Output tiles along m of a decode kernel with `m_tiles` m16 tiles per block.
fn row_tiles(m: usize, m_tiles: u32) -> usize {
    m.div_ceil(TILE_M * m_tiles as usize)
}

/// A decode kernel's units of work: one chunk of k of one `16·m_tiles × 256` output tile each.
pub fn decode_units(w: &FastWeights, m: usize, m_tiles: u32) -> usize {
    row_tiles(m, m_tiles) * w.column_blocks() * w.k_chunks()
}

/// Blocks of the decode kernel on `path` when none are asked for.
///
/// With fewer output tiles than SMs, on both paths, each tile is split between as many blocks
/// as fit on whole SMs for it, so that every split falls on a tile boundary: `⌊b·SMs / tiles⌋`
/// blocks per tile, with `b` blocks per SM. Every hand-over stalls its block's pipeline and adds
/// m rows into the workspace, so a tile split at equal shares of the whole grid's units costs
/// more than the SMs it leaves idle. Decode takes two blocks per SM up to 4 rows and one past
/// that. On the H100 at 4096 × 14336 (56 tiles): decode 224 blocks for m ≤ 4 (22.2 µs at m = 1,
/// against 23.4 with 112) and 112 for m = 16 (24.4 µs, against 25.1 with 224 and 28.2 with 264
/// split wherever the equal shares fell); batched decode 112 (40.3 µs at m = 64, against 45.2
/// with 132), and at 14336 × 4096 (16 tiles) 128 (41.0 against 50.9 µs).
///
/// With at least one tile per SM, decode takes one block per tile: no tile is shared, so no
/// block pays for the workspace (at 16 rows, sharing every tile between two blocks measured
/// 15% slower than a whole tile per block). Batched decode takes one block per SM (one block
/// per tile measured the same there, 355 against 357 µs at 256 × 28672 × 8192 on the H100, and
/// this way no launch has more blocks than fit at once), each taking an equal share of the
/// units. Never more blocks than units. Refused as [`FastWeights::decode_kernel`] refuses.
pub fn default_blocks(
    gpu: &Runtime,
    w: &FastWeights,
    m: usize,
    path: Path,
    activation: ActivationType,
) -> Result<usize, GemmError> {
    let m_tiles = w.decode_kernel(gpu, path, m, activation)?.m_tiles;
    let tiles = row_tiles(m, m_tiles) * w.column_blocks();
    let sms = gpu.info().sm_count;
    Ok(decode_blocks(
        path,
        m,
        tiles,
        sms,
        decode_units(w, m, m_tiles),
    ))
}

/// Rows up to which the decode kernel splits a tile between two blocks per SM rather than one
/// when there are fewer tiles than SMs ([`default_blocks`]).
const TWO_BLOCK_SPLIT_MAX_ROWS: usize = 4;

/// [`default_blocks`]'s rule, for m `rows` in `tiles` output tiles of `units` units on `sms`
/// SMs.
fn decode_blocks(path: Path, rows: usize, tiles: usize, sms: usize, units: usize) -> usize {
    if path == Path::Fused {
        // Persistent: one block per SM, none without a tile.
        return tiles.min(sms);
    }
    let per_sm = match path {
        Path::Decode if rows > TWO_BLOCK_SPLIT_MAX_ROWS => 1,
        _ => path.blocks_per_sm(),
    };
    let blocks = match path {
        _ if tiles < sms => tiles * (per_sm * sms / tiles),
        Path::Decode => tiles,
        _ => per_sm * sms,
    };
    blocks.min(units)
}

/// The most blocks that add into one output tile when `blocks` blocks split `tiles` tiles of
/// `k_chunks` units each (one chunk of k of one tile) in equal shares, tile-major, as the decode
/// kernels do (`first_unit` and `owner` in `kernels-gpu/src/dequant/decode.rs`, whose
/// `shared_by` this is); 1: every tile is summed whole by one block.
pub fn blocks_per_tile(tiles: usize, k_chunks: usize, blocks: usize) -> usize {
    let (units, blocks, k_chunks) = ((tiles * k_chunks) as u64, blocks as u64, k_chunks as u64);
    // The block whose share holds unit `unit`.
    let owner = |unit: u64| ((unit + 1) * blocks).div_ceil(units) - 1;
    (0..tiles as u64)
        .map(|tile| owner(tile * k_chunks + k_chunks - 1) - owner(tile * k_chunks) + 1)
        .max()
        .unwrap_or(1) as usize
}

/// Whether the product of `w` with `m` rows of `activation`s on `path` (its default grid) sums
/// every output in an order that the launch alone fixes, so that every run of it, eager or
/// replayed from a CUDA graph, gives the same bits. Prefill: always (the expansion, then a
/// GEMM without atomics). The decode kernels: when no output tile is shared by more than two
/// blocks. The blocks sharing a tile add their fp32 sums into the workspace with atomic adds,
/// in the order they finish; onto the workspace's zero, two addends give the same sum in either
/// order, three or more may round differently.
pub fn fixed_order(
    gpu: &Runtime,
    w: &FastWeights,
    m: usize,
    path: Path,
    activation: ActivationType,
) -> Result<bool, GemmError> {
    if matches!(path, Path::Prefill | Path::Fused) {
        return Ok(true);
    }
    let kernel = w.decode_kernel(gpu, path, m, activation)?;
    let blocks = default_blocks(gpu, w, m, path, activation)?;
    let tiles = row_tiles(m, kernel.m_tiles) * w.column_blocks();
    Ok(blocks_per_tile(tiles, w.k_chunks(), blocks) <= 2)
}

/// Queues the decode kernel of `path` (`Decode`, or `Batched` for 64-row blocks): `c (m×n T)
/// = a (m×k T) · dequant(w)` on `blocks` blocks (`None`: [`default_blocks`]), each taking an
/// equal share of the units of work.
#[allow(clippy::too_many_arguments)]
pub fn launch_decode<T: ActivationElement>(
    gpu: &Runtime,
    path: Path,
    a: &impl DevicePtr<T>,
    w: &FastWeights,
    c: &mut impl DevicePtrMut<T>,
    m: usize,
    blocks: Option<usize>,
    scratch: &mut Scratch,
) -> Result<(), GemmError> {
    check_buffers(w, a, c, m)?;
    if path == Path::Prefill {
        return Err(GemmError::KernelRefused {
            kernel: path.label(),
            reason: "is not a decode kernel (prefill goes through launch_prefill)".into(),
        });
    }
    let kernel = w.decode_kernel(gpu, path, m, T::TYPE)?;
    let blocks = match blocks {
        Some(blocks) => blocks,
        None => default_blocks(gpu, w, m, path, T::TYPE)?,
    };
    launch_decode_kernel(gpu, kernel, a, w, c, m, blocks, scratch)
}

/// Queues the decode kernel `kernel` (one of [`FastWeights::decode_kernel`]'s or
/// [`FastWeights::wide_batched_kernel`]'s) on `blocks` blocks: what [`launch_decode`] does once
/// it has chosen them. The kernel must take `T` (its [`DecodeKernel::activation`]).
#[allow(clippy::too_many_arguments)]
pub fn launch_decode_kernel<T: ActivationElement>(
    gpu: &Runtime,
    kernel: DecodeKernel,
    a: &impl DevicePtr<T>,
    w: &FastWeights,
    c: &mut impl DevicePtrMut<T>,
    m: usize,
    blocks: usize,
    scratch: &mut Scratch,
) -> Result<(), GemmError> {
    check_buffers(w, a, c, m)?;
    let DecodeKernel {
        path,
        entry,
        shared_bytes,
        m_tiles: tiles_per_block,
        activation,
    } = kernel;
    let label = path.label();
    // The fused kernel sums every tile whole in one block: no workspace, at most one block
    // per tile.
    let fused = path == Path::Fused;
    if activation != T::TYPE {
        return Err(GemmError::KernelRefused {
            kernel: label,
            reason: format!(
                "{entry} takes {activation} activations, and A and C hold {}",
                T::TYPE
            ),
        });
    }
    let limit = gpu.info().max_shared_per_block;
    if shared_bytes > limit {
        return Err(GemmError::KernelRefused {
            kernel: label,
            reason: format!(
                "needs {shared_bytes} bytes of shared memory per block, and this device allows {limit}"
            ),
        });
    }
    let units = decode_units(w, m, tiles_per_block);
    let needs = |pad_a| DecodeScratch::for_launch(w, m, tiles_per_block, pad_a);
    if units > u32::MAX as usize / 2 {
        return Err(GemmError::GridTooLarge {
            rung: "dequant-decode",
            axis: "x",
            blocks: units as u64,
            limit: u32::MAX as u64 / 2,
        });
    }
    let most_blocks = if fused {
        row_tiles(m, tiles_per_block) * w.column_blocks()
    } else {
        units
    };
    if blocks == 0 || blocks > most_blocks {
        return Err(GemmError::DecodeBlocks {
            blocks,
            units: most_blocks,
        });
    }
    // A rows must span whole chunks, with zeros past k, and start on 16-byte boundaries (the
    // kernel's vector loads): otherwise they are copied into a padded, aligned scratch A.
    let stream = gpu.stream();
    let (a_address, _a_guard) = a.device_ptr(stream);
    let a_ptr = if w.k_pad == w.k && a_address.is_multiple_of(16) {
        a_address
    } else {
        let padded = gpu.device_address(&**zeroed(
            gpu,
            &mut scratch.padded_a,
            needs(true).padded_a,
            "the padded copy of A (A's rows must span whole chunks of k and start on 16-byte boundaries)",
        )?);
        if w.k_pad != w.k {
            // The kernel reads each row up to k_pad, so the tail past k must be zero. The buffer
            // is the `Gemm`'s, shared by weights of every k: an earlier call with a longer k
            // left its A there, so the rows are cleared on every call, not only when allocated.
            // SAFETY: the scratch holds at least m·k_pad 16-bit elements (`needs(true)`), on this
            // runtime's context; the memset is queued on the stream its users run on.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    padded,
                    0,
                    m * w.k_pad * 2,
                    stream.cu_stream(),
                )
            }
            .map_err(|e| GemmError::cuda("clearing the padded copy of A", e))?;
        }
        for row in 0..m {
            let (src, dst) = (
                a_address + (row * w.k * 2) as u64,
                padded + (row * w.k_pad * 2) as u64,
            );
            // SAFETY: check_buffers saw m·k elements in A, and the scratch holds m·k_pad.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(dst, src, w.k * 2, stream.cu_stream())
            }
            .map_err(|e| GemmError::cuda("padding A", e))?;
        }
        padded
    };
    // Tiles shared by several blocks meet in the workspace, counted per tile.
    let (workspace, counters) = if fused {
        (0u64, 0u64)
    } else {
        (
            gpu.device_address(&**zeroed(
                gpu,
                &mut scratch.workspace,
                needs(false).workspace,
                "the decode workspace",
            )?),
            gpu.device_address(&**zeroed(
                gpu,
                &mut scratch.counters,
                needs(false).counters,
                "the decode counters",
            )?),
        )
    };
    let function = gpu.kernel(entry)?;
    let config = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (path.threads(), 1, 1),
        shared_mem_bytes: shared_bytes as u32,
    };
    let (m32, n32) = (m as u32, w.n as u32);
    let (column_blocks, k_chunks, group) = (
        w.column_blocks() as u32,
        w.k_chunks() as u32,
        w.kernel_group as u32,
    );
    let offsets = w.offsets.as_ref().map_or(0, |o| gpu.device_address(o));
    let (c_address, _c_guard) = c.device_ptr_mut(stream);
    // The kernel stores pairs of 16-bit values as 32-bit words: a C that is not 4-byte aligned gets an
    // aligned scratch C, copied into the caller's after the kernel.
    let staged = if c_address.is_multiple_of(4) {
        None
    } else {
        Some(gpu.device_address(&**zeroed(
            gpu,
            &mut scratch.staged_c,
            m * w.n,
            "the staged copy of C (C must start on a 4-byte boundary)",
        )?))
    };
    let out_address = staged.unwrap_or(c_address);
    let mut builder = gpu.stream().launch_builder(&function);
    builder
        .arg(&a_ptr)
        .arg(&w.weights)
        .arg(&w.scales)
        .arg(&offsets)
        .arg(&out_address)
        .arg(&workspace)
        .arg(&counters);
    builder
        .arg(&m32)
        .arg(&n32)
        .arg(&column_blocks)
        .arg(&k_chunks)
        .arg(&group);
    launch_with_constants(builder, &w.constants, config, entry)?;
    if let Some(staged) = staged {
        // SAFETY: check_buffers saw m·n elements in C; the staged C holds m·n.
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                c_address,
                staged,
                m * w.n * 2,
                stream.cu_stream(),
            )
        }
        .map_err(|e| GemmError::cuda("copying the staged C", e))?;
    }
    Ok(())
}

/// Queues the expansion of `w` into `out` (`k × n` of `T`, fp16 or bf16, row-major).
pub fn launch_expand<T: ActivationElement>(
    gpu: &Runtime,
    w: &FastWeights,
    out: &mut impl DevicePtrMut<T>,
) -> Result<(), GemmError> {
    if out.len() != w.k * w.n {
        return Err(GemmError::BufferSize {
            name: "W",
            rows: w.k,
            cols: w.n,
            expected: w.k * w.n,
            actual: out.len(),
        });
    }
    let (out_address, _out_guard) = out.device_ptr_mut(gpu.stream());
    // SAFETY: `out` holds the k·n elements of T checked above.
    unsafe { launch_expand_to(gpu, w, T::TYPE, out_address) }
}

/// [`launch_expand`] into the device address `out_address`.
///
/// # Safety
/// `out_address` must hold `w.k · w.n` 16-bit elements of this context that nothing else uses
/// until the kernel has run.
unsafe fn launch_expand_to(
    gpu: &Runtime,
    w: &FastWeights,
    activation: ActivationType,
    out_address: u64,
) -> Result<(), GemmError> {
    if w.k_chunks() as u64 > 65_535 {
        return Err(GemmError::GridTooLarge {
            rung: "dequant-expand",
            axis: "y",
            blocks: w.k_chunks() as u64,
            limit: 65_535,
        });
    }
    let entry = w.expand_entry(activation);
    let function = gpu.kernel(entry)?;
    let config = LaunchConfig {
        grid_dim: (w.column_blocks() as u32, w.k_chunks() as u32, 1),
        block_dim: (dequant::THREADS, 1, 1),
        shared_mem_bytes: expand_shared_bytes(w.bits()) as u32,
    };
    let (k32, n32, group) = (w.k as u32, w.n as u32, w.kernel_group as u32);
    let offsets = w.offsets.as_ref().map_or(0, |o| gpu.device_address(o));
    let mut builder = gpu.stream().launch_builder(&function);
    builder
        .arg(&w.weights)
        .arg(&w.scales)
        .arg(&offsets)
        .arg(&out_address)
        .arg(&k32)
        .arg(&n32)
        .arg(&group);
    launch_with_constants(builder, &w.constants, config, entry)
}

/// Appends the format's constants, the last arguments of both fast kernels, and launches.
fn launch_with_constants<'a>(
    mut builder: LaunchArgs<'a>,
    constants: &'a [u32; 4],
    config: LaunchConfig,
    entry: &str,
) -> Result<(), GemmError> {
    for constant in constants {
        builder.arg(constant);
    }
    // SAFETY: both callers checked A and C against the weights' shape (check_buffers), sized
    // the scratch buffers for it, and pushed the arguments in the order of the kernel's
    // signature; the weights were uploaded in the layout the entry decodes.
    unsafe { builder.launch(config) }
        .map(drop)
        .map_err(|e| GemmError::cuda(format!("launching {entry}"), e))
}

/// The tensor-core rung the fp16 prefill path multiplies with: v18 (TMA, persistent) where k and n
/// are multiples of 8 and the device has it (sm_90a), else v15.
pub fn prefill_rung(gpu: &Runtime, k: usize, n: usize) -> Result<&'static Rung, GemmError> {
    let v18 = Rung::by_name("v18")?;
    let has_v18 = gpu.entries().iter().any(|e| e == v18.entry);
    if has_v18 && k.is_multiple_of(8) && n.is_multiple_of(8) {
        Rung::by_name("v18")
    } else {
        Rung::by_name("v15")
    }
}

/// Queues the expansion of `w` to `T` (`k × n`, row-major) into `scratch`'s buffer (made on
/// first use, kept for the next call) and returns a view of it.
pub fn expand<'s, T: ActivationElement>(
    gpu: &Runtime,
    w: &FastWeights,
    scratch: &'s mut Scratch,
) -> Result<CudaView<'s, T>, GemmError> {
    expand_into(gpu, w, &mut scratch.expanded)
}

/// [`expand`] into `slot`, a buffer of 16-bit elements.
fn expand_into<'s, T: ActivationElement>(
    gpu: &Runtime,
    w: &FastWeights,
    slot: &'s mut Option<Arc<CudaSlice<u16>>>,
) -> Result<CudaView<'s, T>, GemmError> {
    let len = w.k * w.n;
    let expanded = zeroed(gpu, slot, len, "the prefill expansion of the weights")?;
    match Arc::get_mut(expanded) {
        Some(buffer) => {
            // SAFETY: T is a 16-bit float (ActivationElement), so the buffer's k·n u16 hold
            // k·n of it, any bits being a valid value of either type.
            let mut out = unsafe { buffer.transmute_mut::<T>(len) }
                .expect("the expansion buffer holds k·n 16-bit elements");
            launch_expand(gpu, w, &mut out)?;
        }
        None => {
            // A CUDA graph holds the buffer too (its replays expand into it): write through its
            // address. cudarc's event tracking cannot order this write with the graph's
            // launches either way; they are ordered by the stream.
            let address = gpu.device_address(&**expanded);
            // SAFETY: the buffer holds at least k·n 16-bit elements (zeroed above); like the
            // graph's replays, the expansion is queued on the runtime's stream.
            unsafe { launch_expand_to(gpu, w, T::TYPE, address) }?;
        }
    }
    // SAFETY: as above.
    Ok(unsafe { expanded.transmute::<T>(len) }
        .expect("the expansion buffer holds k·n 16-bit elements"))
}

/// Queues the prefill path: expand `w` to `T` (kept in `scratch`), then the tensor-core GEMM
/// (fp16: the ladder's v18 or v15, [`prefill_rung`]; bf16: the library's dispatch).
pub fn launch_prefill<T: ActivationElement>(
    gpu: &Runtime,
    a: &impl DevicePtr<T>,
    w: &FastWeights,
    c: &mut impl DevicePtrMut<T>,
    m: usize,
    scratch: &mut Scratch,
) -> Result<(), GemmError> {
    let shape = check_buffers(w, a, c, m)?;
    let expanded = expand_into::<T>(gpu, w, &mut scratch.expanded)?;
    T::multiply_expanded(gpu, a, &expanded, c, &shape, &mut scratch.prefill_gemm)
}

/// Every kernel entry of the fast dequant kernels: for fp16 then bf16 activations, decode,
/// batched decode (`mma.sync`, `wgmma`, wide), fused, then expand; then the decode entries
/// compiled for one format ([`FORMAT_DECODE_ENTRIES`]). Not every module has all of them:
/// the `wgmma`, wide and fused forms are Hopper's, and the sm_90a module leaves out the bf16
/// `mma.sync` batched kernels that its `wgmma` form replaces.
pub fn entries() -> impl Iterator<Item = &'static str> {
    [&F16_ENTRIES, &BF16_ENTRIES]
        .into_iter()
        .flat_map(|t| {
            t.decode
                .iter()
                .chain(t.batched.iter())
                .chain(t.batched_wgmma.iter())
                .chain(t.batched_wide.iter())
                .chain(t.fused.iter())
                .chain(t.expand.iter())
                .copied()
        })
        .chain(
            FORMAT_DECODE_ENTRIES
                .iter()
                .flat_map(|&(_, _, f16_entry, bf16_entry)| [f16_entry, bf16_entry]),
        )
}

/// Queues `c = a · dequant(w)` on `path` (`blocks`: decode only, see [`launch_decode`]).
#[allow(clippy::too_many_arguments)]
pub fn launch<T: ActivationElement>(
    gpu: &Runtime,
    path: Path,
    a: &impl DevicePtr<T>,
    w: &FastWeights,
    c: &mut impl DevicePtrMut<T>,
    m: usize,
    blocks: Option<usize>,
    scratch: &mut Scratch,
) -> Result<(), GemmError> {
    match path {
        Path::Decode | Path::Batched | Path::Fused => {
            launch_decode(gpu, path, a, w, c, m, blocks, scratch)
        }
        Path::Prefill => launch_prefill(gpu, a, w, c, m, scratch),
    }
}

/// Checks that A holds at least `m × k` and C at least `m × n` elements (the dequant GEMMs'
/// activations and output, contiguous row-major at the start of each buffer: a longer buffer
/// or a view into one is fine, elements past them are neither read nor written), returning
/// the shape.
pub fn check_activations(
    m: usize,
    n: usize,
    k: usize,
    a_len: usize,
    c_len: usize,
) -> Result<GemmShape, GemmError> {
    let shape = GemmShape::new(m, n, k)?;
    let (a_expected, _, c_expected) = shape.elements();
    for (name, cols, expected, actual) in [("A", k, a_expected, a_len), ("C", n, c_expected, c_len)]
    {
        if actual < expected {
            return Err(GemmError::BufferSize {
                name,
                rows: m,
                cols,
                expected,
                actual,
            });
        }
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_splits_tiles_only_between_whole_sms() {
        // 8192 × 57344 on 132 SMs: 224 tiles, one block each, whatever m.
        assert_eq!(decode_blocks(Path::Decode, 1, 224, 132, 224 * 64), 224);
        assert_eq!(decode_blocks(Path::Decode, 16, 224, 132, 224 * 64), 224);
        // 4096 × 14336 (56 tiles) and 14336 × 4096 (16): two blocks per SM up to 4 rows...
        assert_eq!(decode_blocks(Path::Decode, 1, 56, 132, 56 * 32), 224);
        assert_eq!(decode_blocks(Path::Decode, 4, 16, 132, 16 * 112), 256);
        // ...one past that.
        assert_eq!(decode_blocks(Path::Decode, 5, 56, 132, 56 * 32), 112);
        assert_eq!(decode_blocks(Path::Decode, 16, 16, 132, 16 * 112), 128);
        // Never more blocks than units: one tile of two chunks.
        assert_eq!(decode_blocks(Path::Decode, 1, 1, 132, 2), 2);
        // Batched decode: fewer tiles than SMs split on tile boundaries, one block per SM...
        assert_eq!(decode_blocks(Path::Batched, 64, 56, 132, 56 * 32), 112);
        assert_eq!(decode_blocks(Path::Batched, 64, 16, 132, 16 * 112), 128);
        assert_eq!(decode_blocks(Path::Batched, 64, 112, 132, 112 * 64), 112);
        // ...more tiles than SMs in equal shares, one block per SM, at most one per unit.
        assert_eq!(decode_blocks(Path::Batched, 128, 224, 132, 224 * 64), 132);
        assert_eq!(decode_blocks(Path::Batched, 64, 1, 132, 64), 64);
    }

    #[test]
    fn blocks_per_tile_counts_the_blocks_whose_shares_meet_in_a_tile() {
        // Against the shares themselves: block b takes units [⌊b·U/B⌋, ⌊(b+1)·U/B⌋), the
        // decode kernel's `first_unit`.
        let mut random = crate::random::stream(0x6AF, 3 * 2000);
        let mut below =
            |bound: usize| (random.next().expect("enough values") % bound as u64) as usize;
        for case in 0..2000 {
            let tiles = 1 + below(70);
            let k_chunks = 1 + below(40);
            let units = tiles * k_chunks;
            let blocks = 1 + below(units);
            let first = |b: usize| b * units / blocks;
            let mut most = 0;
            for tile in 0..tiles {
                let (start, end) = (tile * k_chunks, (tile + 1) * k_chunks);
                let sharing = (0..blocks)
                    .filter(|&b| first(b) < end && first(b + 1) > start)
                    .count();
                most = most.max(sharing);
            }
            assert_eq!(
                blocks_per_tile(tiles, k_chunks, blocks),
                most,
                "case {case}: {tiles} tiles × {k_chunks} chunks on {blocks} blocks"
            );
        }
        // One block per tile, two, and the decode rule's ⌊132 / 4⌋ = 33 at 4 tiles.
        assert_eq!(blocks_per_tile(56, 32, 56), 1);
        assert_eq!(blocks_per_tile(56, 32, 112), 2);
        assert_eq!(blocks_per_tile(4, 64, 132), 33);
        // Shares that straddle tiles: 2 tiles of 5 chunks on 5 blocks of 2 chunks each.
        assert_eq!(blocks_per_tile(2, 5, 5), 3);
    }

    #[test]
    fn entry_tables_line_up() {
        for (tables, infix) in [(&F16_ENTRIES, ""), (&BF16_ENTRIES, "bf16_")] {
            for (i, suffix) in SUFFIXES.iter().enumerate() {
                let name = |kind: &str| format!("dequant_{kind}_{infix}{suffix}");
                assert_eq!(tables.decode[i], name("decode"));
                assert_eq!(tables.batched[i], name("batched"));
                assert_eq!(tables.expand[i], name("expand"));
                if let Some(entry) = tables.batched_wgmma.get(i) {
                    assert_eq!(*entry, name("batched_wgmma"));
                }
                if let Some(entry) = tables.batched_wide.get(i) {
                    assert_eq!(*entry, name("batched128"));
                }
                if let Some(entry) = tables.fused.get(i) {
                    assert_eq!(*entry, name("fused"));
                }
            }
            // wgmma: every decoder but fp16 weights.
            assert_eq!(tables.batched_wgmma.len(), 18);
            assert_eq!(SUFFIXES[tables.batched_wgmma.len()], "half");
        }
        // The wide form: integer codes, fp16 activations only.
        assert_eq!(F16_ENTRIES.batched_wide.len(), 8);
        assert_eq!(SUFFIXES[7], "int8");
        assert!(BF16_ENTRIES.batched_wide.is_empty());
        // The fused kernel: integer codes, both activation types.
        assert_eq!(F16_ENTRIES.fused.len(), 8);
        assert_eq!(BF16_ENTRIES.fused.len(), 8);
        // Every entry once: 19 · 3 + 18 + 8 + 8 for fp16, 19 · 3 + 18 + 8 for bf16, and two
        // per format-specific decode entry.
        let all: Vec<&str> = entries().collect();
        assert_eq!(all.len(), 91 + 83 + 2 * FORMAT_DECODE_ENTRIES.len());
        let unique: std::collections::BTreeSet<&str> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len());
    }

    #[test]
    fn format_decode_entries_are_named_after_their_formats() {
        for (exponent, mantissa, f16_entry, bf16_entry) in FORMAT_DECODE_ENTRIES {
            let format = WeightFormat::Float { exponent, mantissa };
            assert_eq!(f16_entry, format!("dequant_decode_{format}"));
            assert_eq!(bf16_entry, format!("dequant_decode_bf16_{format}"));
        }
    }

    #[test]
    fn activation_types_parse_and_name_their_entries() {
        assert_eq!(
            "f16".parse::<ActivationType>().unwrap(),
            ActivationType::F16
        );
        assert_eq!(
            "FP16".parse::<ActivationType>().unwrap(),
            ActivationType::F16
        );
        assert_eq!(
            "bf16".parse::<ActivationType>().unwrap(),
            ActivationType::Bf16
        );
        assert!("f32".parse::<ActivationType>().is_err());
        assert_eq!(ActivationType::default(), ActivationType::F16);
        assert_eq!(<u16 as ActivationElement>::TYPE, ActivationType::F16);
        assert_eq!(<half::f16 as ActivationElement>::TYPE, ActivationType::F16);
        assert_eq!(
            <half::bf16 as ActivationElement>::TYPE,
            ActivationType::Bf16
        );
        assert_eq!(ActivationType::Bf16.dtype(), DType::Bf16);
    }

    #[test]
    fn weight_rounding_by_path_format_and_activation() {
        use ActivationType::{Bf16, F16};
        use WeightRounding::{Bf16 as ToBf16, Exact, Fp16 as ToFp16};
        let (u4, e2m1, e5m2) = (
            WeightFormat::Unsigned(4),
            WeightFormat::Float {
                exponent: 2,
                mantissa: 1,
            },
            WeightFormat::Float {
                exponent: 5,
                mantissa: 2,
            },
        );
        for format in [u4, e2m1] {
            for activation in [F16, Bf16] {
                assert_eq!(weight_rounding(Path::Decode, format, activation), Exact);
            }
            assert_eq!(weight_rounding(Path::Batched, format, F16), ToFp16);
            assert_eq!(weight_rounding(Path::Prefill, format, F16), ToFp16);
            assert_eq!(weight_rounding(Path::Batched, format, Bf16), ToBf16);
            assert_eq!(weight_rounding(Path::Prefill, format, Bf16), ToBf16);
        }
        for path in [Path::Decode, Path::Batched, Path::Prefill] {
            assert_eq!(weight_rounding(path, e5m2, F16), ToFp16);
            assert_eq!(weight_rounding(path, e5m2, Bf16), ToBf16);
            assert_eq!(weight_rounding(path, WeightFormat::F16, F16), Exact);
            assert_eq!(weight_rounding(path, WeightFormat::F16, Bf16), ToBf16);
        }
    }

    #[test]
    fn shared_memory_stays_within_two_blocks_per_sm() {
        for bits in (1..=8).chain([16]) {
            let bytes = decode_shared_bytes(bits, Path::Decode);
            // Two blocks per SM: 228 KiB, less 1 KiB reserved per block.
            assert!(2 * (bytes + 1024) <= 228 * 1024, "{bits} bits: {bytes}");
            // Batched: one block within the A100's 163 KiB per block.
            let batched = decode_shared_bytes(bits, Path::Batched);
            assert!(batched <= 163 * 1024, "{bits} bits batched: {batched}");
            // Its Hopper form within the H100's 227 KiB.
            let wgmma = dequant::batched_wgmma_shared_bytes(bits, 4) as usize;
            assert!(wgmma <= 227 * 1024, "{bits} bits batched wgmma: {wgmma}");
            let wide = dequant::batched_wgmma_shared_bytes(bits, 8) as usize;
            assert!(wide <= 227 * 1024, "{bits} bits wide: {wide}");
            // Deep enough for the wgmma forms, which copy `stages − 2` chunks ahead.
            assert!(dequant::decode_stages(bits, 8) >= 3, "{bits} bits wide");
            assert!(expand_shared_bytes(bits) <= 113 * 1024);
        }
    }

    #[test]
    fn paths_by_rows() {
        let (hopper, ada) = (227 * 1024, 99 * 1024);
        let (small, large) = (4096 * 14336, 8192 * 28672);
        for bits in (1..=8).chain([16]) {
            for weights in [small, large] {
                assert_eq!(Path::for_rows(1, bits, weights, hopper), Path::Decode);
                assert_eq!(Path::for_rows(16, bits, weights, hopper), Path::Decode);
                assert_eq!(Path::for_rows(33, bits, weights, hopper), Path::Batched);
                let batched = Path::for_rows(BATCHED_MAX_M, bits, weights, hopper);
                assert_eq!(batched, Path::Batched);
                assert_eq!(
                    Path::for_rows(BATCHED_MAX_M + 1, bits, weights, hopper),
                    Path::Prefill
                );
            }
            // m = 17–32: decode at small layers of codes of at most 4 bits, else batched.
            let small_decodes = bits <= 4;
            for m in [17, 32] {
                assert_eq!(
                    Path::for_rows(m, bits, small, hopper) == Path::Decode,
                    small_decodes
                );
                assert_eq!(Path::for_rows(m, bits, large, hopper), Path::Batched);
            }
        }
        // Where the batched kernel's shared memory does not fit, prefill.
        assert_eq!(Path::for_rows(64, 8, small, ada), Path::Prefill);
    }
}
