//! Launching a rung of the ladder: its geometry from the table of rungs, its checks, and the
//! TMA tensor maps of the TMA rungs.

use crate::element::Element;
use crate::ladder::rungs::{Epilogue, Precision};
use crate::runtime::tensor_map::{MapElement, MatrixView};
use crate::runtime::transpose::TransposeSource;
use crate::runtime::{MapKind, Runtime};
use crate::{GemmError, GemmShape, Rung};
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg};
use gemm_geometry as geometry;

impl Runtime {
    /// Queues `rung` computing `c = a·b` for `shape`, after checking the element type, buffers,
    /// limits and alignment. `T` is `f32` for fp32 and TF32 rungs, `u16` (fp16 bits) for fp16
    /// rungs. The buffers may be slices or views.
    pub fn launch_rung<T: Element>(
        &self,
        rung: &Rung,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        c: &mut impl DevicePtrMut<T>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        self.launch(rung, a, b, c, shape, &Epilogue::STORE)
    }

    /// Queues `rung` computing `c = activation(alpha·a·b + beta·c)`; the rung must take
    /// epilogue arguments (v12).
    pub fn launch_rung_with_epilogue(
        &self,
        rung: &Rung,
        a: &impl DevicePtr<f32>,
        b: &impl DevicePtr<f32>,
        c: &mut impl DevicePtrMut<f32>,
        shape: &GemmShape,
        epilogue: &Epilogue,
    ) -> Result<(), GemmError> {
        if !rung.epilogue_args && *epilogue != Epilogue::STORE {
            return Err(GemmError::NoEpilogue { rung: rung.name });
        }
        self.launch(rung, a, b, c, shape, epilogue)
    }

    /// Queues the FP8 rung `rung` (v20) computing `c = fp16(scale_a · scale_b · a·b_nkᵀ)` for
    /// `shape`: `a` holds A `[m, k]` and `b_nk` holds B stored `[n, k]` (k·n elements either
    /// way), both of the rung's FP8 type ([`crate::element::Fp8E4m3`] or
    /// [`crate::element::Fp8E5m2`]); `c` is fp16 bits; `scales` holds `[scale_a, scale_b]` in
    /// device memory, read by the kernel when it runs (as cuBLASLt's scale pointers are).
    pub fn launch_rung_fp8<T: Element>(
        &self,
        rung: &Rung,
        a: &impl DevicePtr<T>,
        b_nk: &impl DevicePtr<T>,
        c: &mut impl DevicePtrMut<u16>,
        scales: &impl DevicePtr<f32>,
        shape: &GemmShape,
    ) -> Result<(), GemmError> {
        check_element::<T>(rung)?;
        shape.check_buffers(a.len(), b_nk.len(), c.len())?;
        if scales.len() < geometry::v20::SCALES as usize {
            return Err(GemmError::BufferTooShort {
                operand: "scales",
                needed: geometry::v20::SCALES as usize,
                len: scales.len(),
            });
        }
        let stream = self.stream();
        let (a, _a_guard) = a.device_ptr(stream);
        let (b, _b_guard) = b_nk.device_ptr(stream);
        let (c, _c_guard) = c.device_ptr_mut(stream);
        let (scales, _scales_guard) = scales.device_ptr(stream);
        let launch = rung.launch(shape, self.info().max_shared_per_block)?;
        rung.check_alignment(a, b)?;
        let function = self.kernel(rung.entry)?;
        let config = LaunchConfig {
            grid_dim: (launch.grid.0.min(self.info().sm_count as u32), 1, 1),
            block_dim: (launch.block.0, launch.block.1, 1),
            shared_mem_bytes: launch.shared_mem_bytes,
        };
        let maps = self.tensor_maps_for(MapKind::Fp8, a, b, shape.k, shape)?;
        let (m, n, k) = (shape.m as u32, shape.n as u32, shape.k as u32);
        let mut builder = stream.launch_builder(&function);
        builder.arg(&a).arg(&b).arg(&c).arg(&m).arg(&n).arg(&k);
        builder.arg(&maps).arg(&scales);
        // SAFETY: A, B and C hold the shape (check_buffers) and `scales` its two values; the
        // rung's grid (persistent, at most one block per SM), shared memory, alignment and TMA
        // limits (k a multiple of 16) were checked (Rung::launch, check_alignment); the maps
        // describe exactly these buffers; the arguments follow the kernel's signature.
        unsafe { builder.launch(config) }
            .map(drop)
            .map_err(|e| GemmError::cuda(format!("launching {}", rung.entry), e))
    }

    fn launch<T: Element>(
        &self,
        rung: &Rung,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        c: &mut impl DevicePtrMut<T>,
        shape: &GemmShape,
        epilogue: &Epilogue,
    ) -> Result<(), GemmError> {
        check_element::<T>(rung)?;
        shape.check_buffers(a.len(), b.len(), c.len())?;
        let stream = self.stream();
        // The guards keep cudarc's stream ordering of the buffers until the launch is queued.
        let (a, _a_guard) = a.device_ptr(stream);
        let (b, _b_guard) = b.device_ptr(stream);
        let (c, _c_guard) = c.device_ptr_mut(stream);
        if !rung.candidates.is_empty() {
            return Err(GemmError::NeedsTuning { rung: rung.name });
        }
        let launch = rung.launch(shape, self.info().max_shared_per_block)?;
        rung.check_alignment(a, b)?;
        let function = self.kernel(rung.entry)?;
        // Clustered rungs: `cluster` blocks per work item, at most one block per SM.
        let cluster = launch.cluster.max(1);
        let blocks = if launch.persistent {
            launch.grid.0.min(self.info().sm_count as u32 / cluster) * cluster
        } else {
            launch.grid.0 * cluster
        };
        let config = LaunchConfig {
            grid_dim: (blocks, launch.grid.1, 1),
            block_dim: (launch.block.0, launch.block.1, 1),
            shared_mem_bytes: launch.shared_mem_bytes,
        };
        // GemmShape guarantees every dimension fits in 31 bits.
        let (m, n, k) = (shape.m as u32, shape.n as u32, shape.k as u32);
        let (slope, activation) = match epilogue.leaky_slope {
            Some(slope) => (slope, 1u32),
            None => (0.0f32, 0u32),
        };
        // A TF32 TMA rung reads B only K-major: queue B's transposed copy first (timed with
        // the rung) and build B's map over the copy. `copy` holds the scratch buffer until the
        // rung is queued.
        let copy = if rung.transposes_b() {
            let source = TransposeSource {
                address: b,
                rows: shape.k,
                cols: shape.n,
                ld: shape.n,
                batch: 1,
                stride: 0,
            };
            // SAFETY: B holds k·n elements (check_buffers), read before anything writes it.
            Some(unsafe { self.transposed_copy(&source) }?)
        } else {
            None
        };
        let maps = match (rung.tensor_maps, &copy) {
            (Some(kind), Some(copy)) => {
                Some(self.tensor_maps_for(kind, a, copy.address, copy.ld, shape)?)
            }
            (Some(kind), None) => Some(self.tensor_maps_for(kind, a, b, shape.n, shape)?),
            (None, _) => None,
        };
        let mut builder = stream.launch_builder(&function);
        builder.arg(&a).arg(&b).arg(&c).arg(&m).arg(&n).arg(&k);
        if let Some(maps) = &maps {
            builder.arg(maps);
        }
        if rung.epilogue_args {
            builder
                .arg(&epilogue.alpha)
                .arg(&epilogue.beta)
                .arg(&slope)
                .arg(&activation);
        }
        // SAFETY: the buffers hold the shape (check_buffers), the rung's grid, shared memory,
        // alignment and TMA limits were checked (Rung::launch, check_alignment), and the
        // arguments are pushed in the order of the kernel's signature.
        unsafe { builder.launch(config) }
            .map(drop)
            .map_err(|e| GemmError::cuda(format!("launching {}", rung.entry), e))
    }

    /// The device address of the TMA tensor maps (A, then B, 128 bytes each) of `kind` for `a`
    /// (m×k) and `b` (rows `ldb` elements apart), built on first use and kept for later
    /// launches on the same buffers, shape and kind, 128-byte swizzle, zeros outside the
    /// matrices. fp16 (v17, v18): A in boxes of 128 rows × 64 columns, B `[k, n]` in boxes of
    /// 64 × 64 (v22, v23: A in boxes of 64 × 64). TF32 (v19): fp32 A in boxes of 128 × 32, B's
    /// transposed copy (n×k) in boxes of 256 × 32. TF32 (v21): fp32 A in boxes of 256 × 32,
    /// B `[k, n]` (as it is) in boxes of 32 × 32. FP8 (v20): one-byte A in boxes of 128 × 128,
    /// B `[n, k]` in boxes of 256 × 128.
    fn tensor_maps_for(
        &self,
        kind: MapKind,
        a: u64,
        b: u64,
        ldb: usize,
        shape: &GemmShape,
    ) -> Result<u64, GemmError> {
        // The kind is part of the key: an fp16 B freed earlier may have had the address a
        // TF32 copy or an FP8 B has now.
        let key = (a, b, shape.m, shape.n, shape.k, kind);
        let mut cache = self
            .tensor_maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(maps) = cache.get(&key) {
            return Ok(self.address(maps));
        }
        let mut bytes = Vec::with_capacity(256);
        // (address, columns, rows, leading dimension, [box columns, box rows]): dimensions
        // innermost first.
        let (element, maps) = match kind {
            MapKind::F16 => (
                MapElement::F16,
                [
                    (a, shape.k, shape.m, shape.k, geometry::v17::A_BOX),
                    (b, shape.n, shape.k, ldb, geometry::v17::B_KN_BOX),
                ],
            ),
            MapKind::F16Pingpong => (
                MapElement::F16,
                [
                    (a, shape.k, shape.m, shape.k, geometry::v22::A_BOX),
                    (b, shape.n, shape.k, ldb, geometry::v22::B_KN_BOX),
                ],
            ),
            MapKind::Tf32Copy => (
                MapElement::F32,
                [
                    (a, shape.k, shape.m, shape.k, geometry::v19::A_BOX),
                    (b, shape.k, shape.n, ldb, geometry::v19::B_NK_BOX),
                ],
            ),
            MapKind::Tf32RegisterB => (
                MapElement::F32,
                [
                    (a, shape.k, shape.m, shape.k, geometry::v21::A_BOX),
                    (b, shape.n, shape.k, ldb, geometry::v21::B_BOX),
                ],
            ),
            MapKind::Fp8 => (
                MapElement::U8,
                [
                    (a, shape.k, shape.m, shape.k, geometry::v20::A_BOX),
                    (b, shape.k, shape.n, ldb, geometry::v20::B_NK_BOX),
                ],
            ),
        };
        for (address, cols, rows, ld, [box_cols, box_rows]) in maps {
            let view = MatrixView {
                address,
                rows: rows as u64,
                cols: cols as u64,
                ld: ld as u64,
                batch: 1,
                batch_stride: 0,
            };
            bytes.extend_from_slice(&encode_tensor_map(element, &view, box_cols, box_rows)?);
        }
        let maps = self.upload_raw(&bytes)?;
        let ptr = self.address(&maps);
        cache.insert(key, maps);
        Ok(ptr)
    }
}

/// A 2-D TMA tensor map for the matrix `view`, read in boxes of `box_rows × box_cols` with the
/// 128-byte swizzle: the runtime's one encoder, with its checks.
fn encode_tensor_map(
    element: MapElement,
    view: &MatrixView,
    box_cols: u32,
    box_rows: u32,
) -> Result<[u8; 128], GemmError> {
    use crate::runtime::tensor_map::{MapRank, TensorMapError, encode_map};
    encode_map(element, MapRank::Two, view, box_cols, box_rows).map_err(|e| match e {
        TensorMapError::Driver(source) => GemmError::cuda("encoding a TMA tensor map", source),
        // The rung's own check (`TmaRows`) comes first; this is the encoder's second line.
        other => GemmError::KernelRefused {
            kernel: "a TMA rung",
            reason: other.to_string(),
        },
    })
}

/// Refuses buffers whose element type is not the one `rung` takes.
fn check_element<T: Element>(rung: &Rung) -> Result<(), GemmError> {
    let expected = match rung.precision {
        Precision::Fp32 | Precision::Tf32 => <f32 as Element>::NAME,
        Precision::Fp16 => <u16 as Element>::NAME,
        Precision::Fp8E4m3 => <crate::element::Fp8E4m3 as Element>::NAME,
        Precision::Fp8E5m2 => <crate::element::Fp8E5m2 as Element>::NAME,
    };
    if T::NAME != expected {
        return Err(GemmError::WrongElementType {
            rung: rung.name,
            precision: rung.precision.label(),
            expected,
            given: T::NAME,
        });
    }
    Ok(())
}
