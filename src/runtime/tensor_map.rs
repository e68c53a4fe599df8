//! TMA tensor maps for every TMA kernel, the library's (`gemm_v18_{f16,bf16}_{kn,nk}`, 3-D
//! maps) and the ladder's (v17, v18: 2-D maps): a pure function from a matrix view (address,
//! element type, rows, columns, leading dimension, batch, batch stride) and a box to the
//! 128-byte `CUtensorMap`, through the driver's `cuTensorMapEncodeTiled`. One encoder, one set
//! of checks ([`tiled_map_spec`]) for both.
//!
//! A library map has rank 3, dimensions innermost first: (columns, rows, batch), strides in
//! bytes (ld·e, batch stride·e for elements of e bytes), the 128-byte swizzle, zeros outside the matrix (OOB fill
//! none), L2 promotion 256 B. The box is (box columns, box rows, 1): the kernel asks for one
//! batch item per copy. A ladder map ([`MapRank::Two`]) is the same without the batch
//! dimension (its view has one item), as the rungs' 2-D copies need.
//!
//! What each library entry needs, in this order in one buffer of 256 bytes (64-byte aligned,
//! the address passed as `GemmArgs::tensor_maps`), boxes from `gemm_geometry::v17`:
//!
//! | map | view (rows × cols, ld) | box (cols, rows) |
//! |---|---|---|
//! | A | m × k, lda, stride_a | `A_BOX` = (64, 128) |
//! | B of `*_kn` (`[k, n]`) | k × n, ldb, stride_b | `B_KN_BOX` = (64, 64) |
//! | B of `*_nk` (`[n, k]`) | n × k, ldb, stride_b | `B_NK_BOX` = (64, 256) |
//!
//! with element type F16 for `*_f16_*` and BF16 for `*_bf16_*`. The TF32 entry
//! `gemm_v19_tf32_nk` (and the ladder's v19) reads fp32 maps (`FLOAT32`) with the boxes of
//! `gemm_geometry::v19`: A (32, 128), B `[n, k]` (32, 256), the same 128 bytes per box row. An operand whose batch stride
//! is 0 (shared by the whole batch), or a batch of 1, gets a batch dimension of 1; the kernel
//! then always reads item 0 of it. k = 0 cannot be encoded (dimensions are at least 1), but the
//! kernels read no map when k = 0, so any map address will do there.

use cudarc::driver::sys::{
    CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle, cuTensorMapEncodeTiled,
};

/// The swizzle span: the box's innermost extent may not exceed it.
const SWIZZLE_BYTES: u64 = 128;
/// TMA's limit on a global stride (exclusive) and on a dimension (inclusive).
const STRIDE_LIMIT: u64 = 1 << 40;
const DIM_LIMIT: u64 = 1 << 32;

/// The element type of a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapElement {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32 (the TF32 kernels read it as TF32).
    F32,
    /// One byte (the FP8 kernels' e4m3 and e5m2: the TMA only moves bytes).
    U8,
}

impl MapElement {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            MapElement::F16 | MapElement::Bf16 => 2,
            MapElement::F32 => 4,
            MapElement::U8 => 1,
        }
    }
}

/// The rank of a map: what the kernel's copy instructions (`cp.async.bulk.tensor.2d` or
/// `.3d`) expect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapRank {
    /// (columns, rows): one matrix (the ladder's rungs).
    Two,
    /// (columns, rows, batch): the library's kernels.
    Three,
}

/// A row-major matrix, or a batch of equally shaped ones, in device memory: element `(z, r,
/// c)` at `address + e·(z·batch_stride + r·ld + c)` for elements of `e` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixView {
    /// Device address of element (0, 0, 0).
    pub address: u64,
    /// Rows of one item.
    pub rows: u64,
    /// Columns of one item.
    pub cols: u64,
    /// Elements from one row to the next (≥ cols).
    pub ld: u64,
    /// Batch items (at least 1).
    pub batch: u64,
    /// Elements from one item to the next; 0 when every item is the same matrix.
    pub batch_stride: u64,
}

/// The arguments of `cuTensorMapEncodeTiled` for one map, dimensions innermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledMapSpec {
    /// (columns, rows, batch items the map covers).
    pub dims: [u64; 3],
    /// Bytes from one row to the next, and from one batch item to the next.
    pub strides: [u64; 2],
    /// (box columns, box rows, 1).
    pub boxes: [u32; 3],
}

/// Why a view cannot be described by a tensor map for the TMA kernels.
#[derive(Debug, thiserror::Error)]
pub enum TensorMapError {
    /// The base address is not 16-byte aligned.
    #[error("tensor map: base address {0:#x} is not 16-byte aligned")]
    Misaligned(u64),
    /// A dimension is 0 or above 2³².
    #[error("tensor map: dimension {0} is outside 1..=2^32")]
    Dimension(u64),
    /// The leading dimension is below the columns, not a multiple of 16 bytes, or too large.
    #[error(
        "tensor map: leading dimension {ld} (columns {cols}) must be >= the columns, a multiple of 16 bytes and below 2^40 bytes"
    )]
    LeadingDimension {
        /// The leading dimension.
        ld: u64,
        /// The columns.
        cols: u64,
    },
    /// The batch stride is not a multiple of 16 bytes, overlaps the items or is too large.
    #[error(
        "tensor map: batch stride {stride} must be 0 or a multiple of 16 bytes, at least rows·ld = {item}, and below 2^40 bytes"
    )]
    BatchStride {
        /// The batch stride.
        stride: u64,
        /// Elements of one item (rows·ld).
        item: u64,
    },
    /// The box does not fit the 128-byte swizzle or TMA's limits.
    #[error(
        "tensor map: box {cols}×{rows} must have columns of 16..=128 bytes (a multiple of 16) and 1..=256 rows"
    )]
    Box {
        /// Box columns.
        cols: u32,
        /// Box rows.
        rows: u32,
    },
    /// A 2-D map of a view with more than one batch item.
    #[error("tensor map: a 2-D map describes one matrix, not a batch of {0}")]
    Batched(u64),
    /// The driver refused the map.
    #[error("encoding a TMA tensor map: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
}

/// Checks `view` and `box` against the rules of the TMA (16-byte-aligned base, strides
/// multiples of 16 bytes below 2⁴⁰, dimensions 1..=2³², box innermost extent ≤ 128 bytes for
/// the 128-byte swizzle and a multiple of 16 bytes, box dimensions ≤ 256) and returns the
/// encoder's arguments. Items that overlap (batch stride < rows·ld) are refused: the driver's
/// documentation describes strides that grow with the dimensions.
pub fn tiled_map_spec(
    element: MapElement,
    view: &MatrixView,
    box_cols: u32,
    box_rows: u32,
) -> Result<TiledMapSpec, TensorMapError> {
    let element_bytes = element.bytes();
    if view.address % 16 != 0 {
        return Err(TensorMapError::Misaligned(view.address));
    }
    for dim in [view.rows, view.cols, view.batch] {
        if dim == 0 || dim > DIM_LIMIT {
            return Err(TensorMapError::Dimension(dim));
        }
    }
    let row_bytes = view.ld.checked_mul(element_bytes);
    let row_bytes = match row_bytes {
        Some(bytes) if view.ld >= view.cols && bytes % 16 == 0 && bytes < STRIDE_LIMIT => bytes,
        _ => {
            return Err(TensorMapError::LeadingDimension {
                ld: view.ld,
                cols: view.cols,
            });
        }
    };
    // rows ≤ 2³² and row_bytes < 2⁴⁰: the product may not fit in u64, hence checked.
    let item_bytes = view.rows.checked_mul(row_bytes);
    let batched = view.batch > 1 && view.batch_stride != 0;
    let (batch_dim, batch_bytes) = if batched {
        let stride_bytes = view.batch_stride.checked_mul(element_bytes);
        match (stride_bytes, item_bytes) {
            (Some(bytes), Some(item))
                if bytes % 16 == 0 && bytes >= item && bytes < STRIDE_LIMIT =>
            {
                (view.batch, bytes)
            }
            _ => {
                return Err(TensorMapError::BatchStride {
                    stride: view.batch_stride,
                    item: view.rows.saturating_mul(view.ld),
                });
            }
        }
    } else {
        // One item (or one shared by the batch): a batch dimension of 1, whose stride is never
        // used but must be legal; one item's bytes (a multiple of 16, as row_bytes is), kept
        // below the limit.
        let bytes = item_bytes
            .unwrap_or(STRIDE_LIMIT - 16)
            .min(STRIDE_LIMIT - 16);
        (1, bytes)
    };
    let box_bytes = box_cols as u64 * element_bytes;
    if box_cols == 0
        || box_bytes % 16 != 0
        || box_bytes > SWIZZLE_BYTES
        || box_rows == 0
        || box_rows > 256
    {
        return Err(TensorMapError::Box {
            cols: box_cols,
            rows: box_rows,
        });
    }
    Ok(TiledMapSpec {
        dims: [view.cols, view.rows, batch_dim],
        strides: [row_bytes, batch_bytes],
        boxes: [box_cols, box_rows, 1],
    })
}

/// The 128-byte TMA tensor map of `view` (elements of `element`) read in boxes of `box_rows`
/// rows × `box_cols` columns of one batch item, 128-byte swizzle, zeros outside the matrix,
/// of rank 3 (the library's kernels): see [`tiled_map_spec`] for the rules it checks first.
/// Needs a current CUDA context (the driver is loaded through cudarc).
pub fn encode_tiled_map(
    element: MapElement,
    view: &MatrixView,
    box_cols: u32,
    box_rows: u32,
) -> Result<[u8; 128], TensorMapError> {
    encode_map(element, MapRank::Three, view, box_cols, box_rows)
}

/// [`encode_tiled_map`] of the given rank; a [`MapRank::Two`] map describes a view of one
/// batch item.
pub fn encode_map(
    element: MapElement,
    rank: MapRank,
    view: &MatrixView,
    box_cols: u32,
    box_rows: u32,
) -> Result<[u8; 128], TensorMapError> {
    if rank == MapRank::Two && view.batch != 1 {
        return Err(TensorMapError::Batched(view.batch));
    }
    let spec = tiled_map_spec(element, view, box_cols, box_rows)?;
    let rank = match rank {
        MapRank::Two => 2,
        MapRank::Three => 3,
    };
    let data_type = match element {
        MapElement::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        MapElement::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        MapElement::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        MapElement::U8 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
    };
    let element_strides = [1u32; 3];
    let mut map = std::mem::MaybeUninit::<CUtensorMap>::zeroed();
    // SAFETY: every pointer refers to a live array at least as long as the driver reads for
    // `rank` (rank values, rank − 1 strides); `map` is written by the driver before
    // `assume_init`.
    let result = unsafe {
        cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            data_type,
            rank,
            view.address as *mut std::ffi::c_void,
            spec.dims.as_ptr(),
            spec.strides.as_ptr(),
            spec.boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    result.result()?;
    // SAFETY: the driver filled the map (it returned success).
    let map = unsafe { map.assume_init() };
    let mut bytes = [0u8; 128];
    for (chunk, word) in bytes.as_chunks_mut::<8>().0.iter_mut().zip(map.opaque) {
        *chunk = word.to_le_bytes();
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(rows: u64, cols: u64, ld: u64, batch: u64, batch_stride: u64) -> MatrixView {
        MatrixView {
            address: 0x7f00_0000_0000,
            rows,
            cols,
            ld,
            batch,
            batch_stride,
        }
    }

    #[test]
    fn a_two_dimensional_map_describes_one_matrix() {
        // Refused before the driver is asked (no GPU needed).
        let err = encode_map(
            MapElement::F16,
            MapRank::Two,
            &view(64, 64, 64, 2, 4096),
            64,
            64,
        );
        assert!(matches!(err, Err(TensorMapError::Batched(2))), "{err:?}");
        let err = encode_map(
            MapElement::F16,
            MapRank::Two,
            &view(64, 60, 60, 1, 0),
            64,
            64,
        );
        assert!(
            matches!(err, Err(TensorMapError::LeadingDimension { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn ragged_shapes_with_aligned_rows_are_accepted() {
        // A of 1000 × 100 with lda 104, a batch of 3 items 1000·104 apart.
        let spec =
            tiled_map_spec(MapElement::F16, &view(1000, 100, 104, 3, 104_000), 64, 128).unwrap();
        assert_eq!(spec.dims, [100, 1000, 3]);
        assert_eq!(spec.strides, [208, 208_000]);
        assert_eq!(spec.boxes, [64, 128, 1]);
    }

    #[test]
    fn shared_or_single_items_get_a_batch_dimension_of_one() {
        for (batch, stride) in [(1, 0), (1, 999_999), (8, 0)] {
            let spec = tiled_map_spec(
                MapElement::F16,
                &view(4096, 4096, 4096, batch, stride),
                64,
                256,
            )
            .unwrap();
            assert_eq!(spec.dims, [4096, 4096, 1]);
            assert_eq!(spec.strides, [8192, 4096 * 8192]);
            assert_eq!(spec.strides[1] % 16, 0);
        }
    }

    #[test]
    fn tma_rules_are_enforced() {
        let bad = |v: MatrixView, bc, br| tiled_map_spec(MapElement::F16, &v, bc, br).is_err();
        let mut misaligned = view(8, 8, 8, 1, 0);
        misaligned.address += 8;
        assert!(bad(misaligned, 64, 64));
        // ld not a multiple of 8 elements, ld below the columns, empty dimensions.
        assert!(bad(view(8, 12, 12, 1, 0), 64, 64));
        assert!(bad(view(8, 16, 8, 1, 0), 64, 64));
        assert!(bad(view(0, 8, 8, 1, 0), 64, 64));
        assert!(bad(view(8, 8, 8, 0, 0), 64, 64));
        // Batch stride not a multiple of 8 elements, or overlapping items.
        assert!(bad(view(8, 8, 8, 2, 68), 64, 64));
        assert!(bad(view(8, 8, 8, 2, 56), 64, 64));
        // Boxes wider than the 128-byte swizzle, or taller than 256 rows.
        assert!(bad(view(8, 8, 8, 1, 0), 128, 64));
        assert!(bad(view(8, 8, 8, 1, 0), 64, 512));
        assert!(bad(view(8, 8, 8, 1, 0), 4, 64));
    }

    #[test]
    fn f32_rows_are_16_bytes_every_4_elements() {
        // TF32's A of 100 × 36 (ld 36 = 144 bytes) and a box of 32 × 128 (128 bytes wide).
        let spec = tiled_map_spec(MapElement::F32, &view(100, 36, 36, 1, 0), 32, 128).unwrap();
        assert_eq!(spec.strides[0], 144);
        // ld 34 (136 bytes) is not a multiple of 16 bytes; a 64-column box is 256 bytes.
        assert!(tiled_map_spec(MapElement::F32, &view(100, 34, 34, 1, 0), 32, 128).is_err());
        assert!(tiled_map_spec(MapElement::F32, &view(100, 36, 36, 1, 0), 64, 128).is_err());
        // A batch stride of 36·100 + 2 floats is not a multiple of 16 bytes.
        let v = view(100, 36, 36, 2, 3602);
        assert!(tiled_map_spec(MapElement::F32, &v, 32, 128).is_err());
    }

    #[test]
    fn byte_rows_are_16_bytes_every_16_elements() {
        // FP8's A of 100 × 144 (ld 144 bytes) in boxes of 128 × 128 (128 bytes wide).
        let spec = tiled_map_spec(MapElement::U8, &view(100, 144, 144, 1, 0), 128, 128).unwrap();
        assert_eq!(spec.strides[0], 144);
        // ld 136 is not a multiple of 16 bytes; a 256-column box is 256 bytes.
        assert!(tiled_map_spec(MapElement::U8, &view(100, 136, 136, 1, 0), 128, 128).is_err());
        assert!(tiled_map_spec(MapElement::U8, &view(100, 144, 144, 1, 0), 256, 128).is_err());
    }
}
