//! Launching the fast dequant kernels: decode (m ≤ [`DECODE_MAX_M`], `kernels-gpu/src/dequant/
//! decode.rs` with one m16 tile per block), batched decode (the same kernel with
//! [`dequant::BATCHED_M_TILES`] m16 tiles per block, up to [`BATCHED_MAX_M`]) and prefill (expand
//! to fp16, `dequantize.rs`, then the ladder's v18 tensor-core GEMM, or v15 where k or n is not a
//! multiple of 8).
//!
//! Both read weights pre-packed by [`crate::quant::prepack`] and compute `fp16(value · scale)` for
//! every weight, then an fp16 × fp16 product with fp32 accumulation and fp16 output.

use crate::element::Fp16Bits;
use crate::quant::format::WeightFormat;
use crate::quant::prepack::{BLOCK_COLUMNS, Prepacked, chunk_k};
use crate::runtime::Runtime;
use crate::{GemmError, GemmShape, Rung};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchArgs, LaunchConfig, PushKernelArg};
use gemm_geometry::dequant;

/// Largest m the decode kernel is chosen for by default; above it, batched decode.
pub const DECODE_MAX_M: usize = 16;
/// Largest m the batched-decode kernel is chosen for by default; above it, prefill.
pub const BATCHED_MAX_M: usize = 256;
/// Fewest weights (k·n) for which batched decode takes its wide form at m > 128. Measured on
/// the H100 (u4, group 128): at m = 256 the wide form took 277–290 µs against 375–392 µs at
/// k × n = 8192 × 28672 and 28672 × 8192, and 548 against 749 µs at 8192 × 57344, but 131–132
/// against 105–110 µs at 4096 × 14336 and 14336 × 4096 (and at m = 128 it won only at 8192 ×
/// 57344, by 8%; at m = 65 it lost everywhere).
pub const WIDE_MIN_WEIGHTS: usize = 1 << 27;
/// Rows of A per m16 tile (`gemm_geometry::dequant::DECODE_TILE_M`).
const TILE_M: usize = dequant::DECODE_TILE_M as usize;

/// The kernel entries, one per decoder and bit width (`Prepacked::entry_suffix`).
const SUFFIXES: [&str; 19] = [
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
    "int8",
    "float2",
    "float3",
    "float4",
    "float5",
    "float6",
    "float7",
    "float8",
    "wide_float6",
    "wide_float7",
    "wide_float8",
    "half",
];
const DECODE_ENTRIES: [&str; 19] = [
    "dequant_decode_int1",
    "dequant_decode_int2",
    "dequant_decode_int3",
    "dequant_decode_int4",
    "dequant_decode_int5",
    "dequant_decode_int6",
    "dequant_decode_int7",
    "dequant_decode_int8",
    "dequant_decode_float2",
    "dequant_decode_float3",
    "dequant_decode_float4",
    "dequant_decode_float5",
    "dequant_decode_float6",
    "dequant_decode_float7",
    "dequant_decode_float8",
    "dequant_decode_wide_float6",
    "dequant_decode_wide_float7",
    "dequant_decode_wide_float8",
    "dequant_decode_half",
];
const BATCHED_ENTRIES: [&str; 19] = [
    "dequant_batched_int1",
    "dequant_batched_int2",
    "dequant_batched_int3",
    "dequant_batched_int4",
    "dequant_batched_int5",
    "dequant_batched_int6",
    "dequant_batched_int7",
    "dequant_batched_int8",
    "dequant_batched_float2",
    "dequant_batched_float3",
    "dequant_batched_float4",
    "dequant_batched_float5",
    "dequant_batched_float6",
    "dequant_batched_float7",
    "dequant_batched_float8",
    "dequant_batched_wide_float6",
    "dequant_batched_wide_float7",
    "dequant_batched_wide_float8",
    "dequant_batched_half",
];
/// The batched kernel's Hopper form (`wgmma`, in the sm_90a module only), for every decoder
/// but fp16 weights (`SUFFIXES` without its last entry).
const BATCHED_WGMMA_ENTRIES: [&str; 18] = [
    "dequant_batched_wgmma_int1",
    "dequant_batched_wgmma_int2",
    "dequant_batched_wgmma_int3",
    "dequant_batched_wgmma_int4",
    "dequant_batched_wgmma_int5",
    "dequant_batched_wgmma_int6",
    "dequant_batched_wgmma_int7",
    "dequant_batched_wgmma_int8",
    "dequant_batched_wgmma_float2",
    "dequant_batched_wgmma_float3",
    "dequant_batched_wgmma_float4",
    "dequant_batched_wgmma_float5",
    "dequant_batched_wgmma_float6",
    "dequant_batched_wgmma_float7",
    "dequant_batched_wgmma_float8",
    "dequant_batched_wgmma_wide_float6",
    "dequant_batched_wgmma_wide_float7",
    "dequant_batched_wgmma_wide_float8",
];
/// The batched kernel's wide Hopper form (128-row tiles, for m > 64), integer codes only
/// (`SUFFIXES`' first eight entries).
const WIDE_BATCHED_ENTRIES: [&str; 8] = [
    "dequant_batched128_int1",
    "dequant_batched128_int2",
    "dequant_batched128_int3",
    "dequant_batched128_int4",
    "dequant_batched128_int5",
    "dequant_batched128_int6",
    "dequant_batched128_int7",
    "dequant_batched128_int8",
];
const EXPAND_ENTRIES: [&str; 19] = [
    "dequant_expand_int1",
    "dequant_expand_int2",
    "dequant_expand_int3",
    "dequant_expand_int4",
    "dequant_expand_int5",
    "dequant_expand_int6",
    "dequant_expand_int7",
    "dequant_expand_int8",
    "dequant_expand_float2",
    "dequant_expand_float3",
    "dequant_expand_float4",
    "dequant_expand_float5",
    "dequant_expand_float6",
    "dequant_expand_float7",
    "dequant_expand_float8",
    "dequant_expand_wide_float6",
    "dequant_expand_wide_float7",
    "dequant_expand_wide_float8",
    "dequant_expand_half",
];

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
    /// Expand to fp16, then the tensor-core GEMM.
    Prefill,
}

impl Path {
    /// The default for `m` rows on a device with `max_shared_per_block` bytes of shared memory
    /// per block (batched decode where it fits, else prefill).
    pub fn for_rows(m: usize, bits: u32, max_shared_per_block: usize) -> Path {
        if m <= DECODE_MAX_M {
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
        }
    }

    /// m16 tiles per block of the decode kernels (1 for prefill, which has no such blocks).
    pub fn m_tiles(&self) -> u32 {
        match self {
            Path::Batched => dequant::BATCHED_M_TILES,
            Path::Decode | Path::Prefill => 1,
        }
    }

    fn blocks_per_sm(&self) -> usize {
        match self {
            Path::Batched => dequant::BATCHED_MIN_BLOCKS_PER_SM as usize,
            Path::Decode | Path::Prefill => dequant::MIN_BLOCKS_PER_SM as usize,
        }
    }
}

/// Whether `path` rounds each dequantized weight to fp16, `fp16(value · scale)`, before the
/// product: the prefill expansion (its GEMM takes fp16 weights), batched decode (which has no
/// registers for a second set of accumulators), and small floats with more than 4 exponent
/// bits on every path (they go through f32). Otherwise the decode kernel multiplies by the
/// exact weights (`code − zero`, or the small float's value, both exact in fp16) and applies
/// each group's scale to the fp32 sums; fp16 weights are exact either way.
pub fn rounds_weights(path: Path, format: WeightFormat) -> bool {
    use crate::quant::prepack::Decoder;
    match Decoder::of(format) {
        Decoder::Half => false,
        Decoder::WideFloat => true,
        Decoder::Integer | Decoder::Float => path != Path::Decode,
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
    /// The decode kernel for these weights on `path` (`Decode` or `Batched`) with `m` rows:
    /// batched decode takes its Hopper form (`wgmma`) where `gpu`'s module has it, and with
    /// integer codes, m > 128 and at least [`WIDE_MIN_WEIGHTS`] weights its wide form (128-row
    /// tiles), where that measured faster.
    pub fn decode_kernel(&self, gpu: &Runtime, path: Path, m: usize) -> DecodeKernel {
        let bits = self.bits();
        let has = |entry: &str| gpu.entries().iter().any(|e| e == entry);
        let hopper = |entry: &'static str, m_tiles: u32| DecodeKernel {
            entry,
            shared_bytes: dequant::batched_wgmma_shared_bytes(bits, m_tiles) as usize,
            m_tiles,
        };
        match path {
            Path::Batched => match (
                WIDE_BATCHED_ENTRIES.get(self.entry),
                BATCHED_WGMMA_ENTRIES.get(self.entry),
            ) {
                (Some(&wide), _) if m > 128 && self.k * self.n >= WIDE_MIN_WEIGHTS && has(wide) => {
                    hopper(wide, dequant::WIDE_BATCHED_M_TILES)
                }
                (_, Some(&entry)) if has(entry) => hopper(entry, dequant::BATCHED_M_TILES),
                _ => DecodeKernel {
                    entry: BATCHED_ENTRIES[self.entry],
                    shared_bytes: decode_shared_bytes(bits, Path::Batched),
                    m_tiles: dequant::BATCHED_M_TILES,
                },
            },
            Path::Decode | Path::Prefill => DecodeKernel {
                entry: DECODE_ENTRIES[self.entry],
                shared_bytes: decode_shared_bytes(bits, Path::Decode),
                m_tiles: 1,
            },
        }
    }

    /// The wide batched kernel (128-row tiles) for these weights, where `gpu`'s module has one
    /// (Hopper, integer codes): what [`FastWeights::decode_kernel`] picks for large m and
    /// layers, for tests that run it at any shape.
    pub fn wide_batched_kernel(&self, gpu: &Runtime) -> Option<DecodeKernel> {
        let entry = *WIDE_BATCHED_ENTRIES.get(self.entry)?;
        gpu.entries()
            .iter()
            .any(|e| e == entry)
            .then(|| DecodeKernel {
                entry,
                shared_bytes: dequant::batched_wgmma_shared_bytes(
                    self.bits(),
                    dequant::WIDE_BATCHED_M_TILES,
                ) as usize,
                m_tiles: dequant::WIDE_BATCHED_M_TILES,
            })
    }

    /// The expansion kernel's entry point for these weights.
    pub fn expand_entry(&self) -> &'static str {
        EXPAND_ENTRIES[self.entry]
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

/// Buffers a fast launch needs besides its inputs, kept between calls: A padded to whole
/// chunks, the split-K workspace and counters (zero between calls: the last block of each tile
/// zeroes them), and the expanded fp16 weights of the prefill path.
#[derive(Default)]
pub struct Scratch {
    padded_a: Option<CudaSlice<u16>>,
    /// C for the decode kernel when the caller's C is not 4-byte aligned (its paired stores).
    staged_c: Option<CudaSlice<u16>>,
    workspace: Option<CudaSlice<f32>>,
    counters: Option<CudaSlice<u32>>,
    expanded: Option<CudaSlice<u16>>,
}

/// Reuses `slot` if it holds exactly `len` elements, else allocates it zeroed.
fn zeroed<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Runtime,
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
) -> Result<&'a mut CudaSlice<T>, GemmError> {
    if slot.as_ref().is_none_or(|s| s.len() != len) {
        *slot = None;
        gpu.ensure_room_for(len * std::mem::size_of::<T>())?;
        *slot = Some(
            gpu.stream()
                .alloc_zeros::<T>(len)
                .map_err(|e| GemmError::cuda("allocating dequant scratch", e))?,
        );
    }
    Ok(slot.as_mut().expect("just filled"))
}

fn check_buffers<T: Fp16Bits>(
    w: &FastWeights,
    a: &impl DevicePtr<T>,
    c: &impl DevicePtrMut<T>,
    m: usize,
) -> Result<GemmShape, GemmError> {
    check_activations(m, w.n, w.k, a.len(), c.len())
}

/// One decode kernel: its entry, dynamic shared memory and m16 tiles per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeKernel {
    /// The kernel's entry point.
    pub entry: &'static str,
    /// Dynamic shared memory per block (the kernel traps if it is given less).
    pub shared_bytes: usize,
    /// m16 tiles per block: output tiles are `16·m_tiles × 256`.
    pub m_tiles: u32,
}

/// Output tiles along m of a decode kernel with `m_tiles` m16 tiles per block.
fn row_tiles(m: usize, m_tiles: u32) -> usize {
    m.div_ceil(TILE_M * m_tiles as usize)
}

/// A decode kernel's units of work: one chunk of k of one `16·m_tiles × 256` output tile each.
pub fn decode_units(w: &FastWeights, m: usize, m_tiles: u32) -> usize {
    row_tiles(m, m_tiles) * w.column_blocks() * w.k_chunks()
}

/// Blocks of the decode kernel on `path` when none are asked for. Decode: with at least one
/// output tile per SM, one block per tile: no tile is shared, so no block pays for the
/// workspace (at 16 rows, sharing every tile between two blocks measured 15% slower than a
/// whole tile per block). With fewer tiles, and always for batched decode (one block per tile
/// past 132 tiles measured the same there, 355 against 357 µs at 256 × 28672 × 8192 on the H100,
/// and this way no launch has more blocks than fit at once), as many blocks as fit at a time
/// (two per SM for decode, one for batched decode), each taking an equal share of the units,
/// but no more than the units.
pub fn default_blocks(gpu: &Runtime, w: &FastWeights, m: usize, path: Path) -> usize {
    let m_tiles = w.decode_kernel(gpu, path, m).m_tiles;
    let tiles = row_tiles(m, m_tiles) * w.column_blocks();
    let sms = gpu.info().sm_count;
    if tiles >= sms && path == Path::Decode {
        tiles
    } else {
        (path.blocks_per_sm() * sms).min(decode_units(w, m, m_tiles))
    }
}

/// Queues the decode kernel of `path` (`Decode`, or `Batched` for 64-row blocks): `c (m×n fp16)
/// = a (m×k fp16) · dequant(w)` on `blocks` blocks (`None`: [`default_blocks`]), each taking an
/// equal share of the units of work.
#[allow(clippy::too_many_arguments)]
pub fn launch_decode<T: Fp16Bits>(
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
    let kernel = w.decode_kernel(gpu, path, m);
    let blocks = blocks.unwrap_or_else(|| default_blocks(gpu, w, m, path));
    launch_decode_kernel(gpu, kernel, a, w, c, m, blocks, scratch)
}

/// Queues the decode kernel `kernel` (one of [`FastWeights::decode_kernel`]'s or
/// [`FastWeights::wide_batched_kernel`]'s) on `blocks` blocks: what [`launch_decode`] does once
/// it has chosen them.
#[allow(clippy::too_many_arguments)]
pub fn launch_decode_kernel<T: Fp16Bits>(
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
        entry,
        shared_bytes,
        m_tiles: tiles_per_block,
    } = kernel;
    let label = if tiles_per_block == 1 {
        Path::Decode.label()
    } else {
        Path::Batched.label()
    };
    let limit = gpu.info().max_shared_per_block;
    if shared_bytes > limit {
        return Err(GemmError::KernelRefused {
            kernel: label,
            reason: format!(
                "needs {shared_bytes} bytes of shared memory per block, and this device allows {limit}"
            ),
        });
    }
    let m_tiles = row_tiles(m, tiles_per_block);
    let units = decode_units(w, m, tiles_per_block);
    if units > u32::MAX as usize / 2 {
        return Err(GemmError::GridTooLarge {
            rung: "dequant-decode",
            axis: "x",
            blocks: units as u64,
            limit: u32::MAX as u64 / 2,
        });
    }
    if blocks == 0 || blocks > units {
        return Err(GemmError::DecodeBlocks { blocks, units });
    }
    // A rows must span whole chunks, with zeros past k, and start on 16-byte boundaries (the
    // kernel's vector loads): otherwise they are copied into a padded, aligned scratch A.
    let stream = gpu.stream();
    let (a_address, _a_guard) = a.device_ptr(stream);
    let a_ptr = if w.k_pad == w.k && a_address.is_multiple_of(16) {
        a_address
    } else {
        let padded = gpu.device_address(zeroed(gpu, &mut scratch.padded_a, m * w.k_pad)?);
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
    let workspace = gpu.device_address(zeroed(gpu, &mut scratch.workspace, m * w.n_pad)?);
    let counters = gpu.device_address(zeroed(
        gpu,
        &mut scratch.counters,
        w.column_blocks() * m_tiles,
    )?);
    let function = gpu.kernel(entry)?;
    let config = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (dequant::THREADS, 1, 1),
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
    // The kernel stores pairs of fp16 as 32-bit words: a C that is not 4-byte aligned gets an
    // aligned scratch C, copied into the caller's after the kernel.
    let staged = if c_address.is_multiple_of(4) {
        None
    } else {
        Some(gpu.device_address(zeroed(gpu, &mut scratch.staged_c, m * w.n)?))
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

/// Queues the expansion of `w` into `out` (`k × n` fp16, row-major).
pub fn launch_expand(
    gpu: &Runtime,
    w: &FastWeights,
    out: &mut CudaSlice<u16>,
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
    if w.k_chunks() as u64 > 65_535 {
        return Err(GemmError::GridTooLarge {
            rung: "dequant-expand",
            axis: "y",
            blocks: w.k_chunks() as u64,
            limit: 65_535,
        });
    }
    let function = gpu.kernel(EXPAND_ENTRIES[w.entry])?;
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
        .arg(out)
        .arg(&k32)
        .arg(&n32)
        .arg(&group);
    launch_with_constants(builder, &w.constants, config, EXPAND_ENTRIES[w.entry])
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

/// The tensor-core rung the prefill path multiplies with: v18 (TMA, persistent) where k and n
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

/// Queues the expansion of `w` to fp16 (`k × n`, row-major) into `scratch`'s buffer (made on
/// first use, kept for the next call) and returns that buffer.
pub fn expand<'s>(
    gpu: &Runtime,
    w: &FastWeights,
    scratch: &'s mut Scratch,
) -> Result<&'s mut CudaSlice<u16>, GemmError> {
    let expanded = zeroed(gpu, &mut scratch.expanded, w.k * w.n)?;
    launch_expand(gpu, w, expanded)?;
    Ok(expanded)
}

/// Queues the prefill path: expand `w` to fp16 (kept in `scratch`), then the tensor-core GEMM.
pub fn launch_prefill<T: Fp16Bits>(
    gpu: &Runtime,
    a: &impl DevicePtr<T>,
    w: &FastWeights,
    c: &mut impl DevicePtrMut<T>,
    m: usize,
    scratch: &mut Scratch,
) -> Result<(), GemmError> {
    let shape = check_buffers(w, a, c, m)?;
    let expanded = expand(gpu, w, scratch)?;
    // SAFETY: the expanded weights are fp16 bits, which is what T holds (Fp16Bits).
    let expanded = unsafe { expanded.transmute::<T>(w.k * w.n) }
        .expect("the expansion buffer holds k·n elements");
    gpu.launch_rung(prefill_rung(gpu, w.k, w.n)?, a, &expanded, c, &shape)
}

/// Every kernel entry of the fast dequant kernels (decode, batched decode, then expand).
pub fn entries() -> impl Iterator<Item = &'static str> {
    DECODE_ENTRIES
        .iter()
        .chain(BATCHED_ENTRIES.iter())
        .chain(BATCHED_WGMMA_ENTRIES.iter())
        .chain(WIDE_BATCHED_ENTRIES.iter())
        .chain(EXPAND_ENTRIES.iter())
        .copied()
}

/// Queues `c = a · dequant(w)` on `path` (`blocks`: decode only, see [`launch_decode`]).
#[allow(clippy::too_many_arguments)]
pub fn launch<T: Fp16Bits>(
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
        Path::Decode | Path::Batched => launch_decode(gpu, path, a, w, c, m, blocks, scratch),
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
    fn entry_tables_line_up() {
        for (i, suffix) in SUFFIXES.iter().enumerate() {
            assert_eq!(DECODE_ENTRIES[i], format!("dequant_decode_{suffix}"));
            assert_eq!(BATCHED_ENTRIES[i], format!("dequant_batched_{suffix}"));
            if let Some(entry) = BATCHED_WGMMA_ENTRIES.get(i) {
                assert_eq!(*entry, format!("dequant_batched_wgmma_{suffix}"));
            }
            if let Some(entry) = WIDE_BATCHED_ENTRIES.get(i) {
                assert_eq!(*entry, format!("dequant_batched128_{suffix}"));
            }
            assert_eq!(EXPAND_ENTRIES[i], format!("dequant_expand_{suffix}"));
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
        for bits in (1..=8).chain([16]) {
            assert_eq!(Path::for_rows(1, bits, hopper), Path::Decode);
            assert_eq!(Path::for_rows(16, bits, hopper), Path::Decode);
            assert_eq!(Path::for_rows(17, bits, hopper), Path::Batched);
            assert_eq!(Path::for_rows(BATCHED_MAX_M, bits, hopper), Path::Batched);
            assert_eq!(
                Path::for_rows(BATCHED_MAX_M + 1, bits, hopper),
                Path::Prefill
            );
        }
        // Where the batched kernel's shared memory does not fit, prefill.
        assert_eq!(Path::for_rows(64, 8, ada), Path::Prefill);
    }
}
