//! A transposed copy of a batch of fp32 matrices on the stream (`gemm_transpose_f32`, see
//! `kernels-gpu/src/transpose.rs`), into a scratch buffer the [`Runtime`] keeps. TF32 `wgmma`
//! reads B only K-major, so the TF32 TMA kernels (the ladder's v19 and the library's
//! `gemm_v19_tf32_nk` for calls with B `[k, n]`) multiply by such a copy of B.

use super::Runtime;
use crate::GemmError;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gemm_geometry::v19::{TRANSPOSE_SHARED_BYTES, TRANSPOSE_THREADS, TRANSPOSE_TILE};
use std::sync::{Arc, MutexGuard};

/// The transpose kernel's entry point.
pub const TRANSPOSE_ENTRY: &str = "gemm_transpose_f32";

/// A batch of row-major fp32 matrices in device memory to be copied transposed: item `z`'s
/// element `(r, c)` at `address + 4·(z·stride + r·ld + c)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposeSource {
    /// Device address of item 0's element (0, 0), 4-byte aligned.
    pub address: u64,
    /// Rows of one item.
    pub rows: usize,
    /// Columns of one item.
    pub cols: usize,
    /// Elements from one row to the next (≥ cols).
    pub ld: usize,
    /// Items.
    pub batch: usize,
    /// Elements from one item to the next (≥ rows·ld when batch > 1).
    pub stride: usize,
}

impl TransposeSource {
    /// The copy's leading dimension: the rows, rounded up to 4 elements so that every row of
    /// the copy starts on a 16-byte boundary (what TMA needs).
    pub fn copy_ld(&self) -> usize {
        self.rows.next_multiple_of(4)
    }

    /// Elements of one item of the copy (`cols` rows of [`copy_ld`](Self::copy_ld)).
    pub fn copy_item(&self) -> usize {
        self.cols * self.copy_ld()
    }
}

/// The copy written by [`Runtime::transposed_copy`]: `batch` items of `cols × rows`, row `c` of
/// item `z` at `address + 4·(z·stride + c·ld)`. Holds the runtime's scratch buffer until
/// dropped: keep it until the kernels that read the copy are queued.
pub struct TransposedCopy<'a> {
    /// Device address of the copy (256-byte aligned).
    pub address: u64,
    /// Its leading dimension ([`TransposeSource::copy_ld`]).
    pub ld: usize,
    /// Elements from one item to the next.
    pub stride: usize,
    held: MutexGuard<'a, Option<Arc<CudaSlice<f32>>>>,
}

impl TransposedCopy<'_> {
    /// The scratch buffer holding the copy, for a CUDA graph that captured it to keep.
    pub(crate) fn buffer(&self) -> Arc<CudaSlice<f32>> {
        self.held
            .clone()
            .expect("a copy is made into an allocated buffer")
    }
}

impl Runtime {
    /// Queues a transposed copy of `source` into the runtime's scratch buffer (grown when too
    /// short) and returns where it is. Calls on the runtime's one stream run in order, so a copy
    /// is read by the kernels queued after it before the next call overwrites it; the returned
    /// guard keeps other threads from growing (freeing) the buffer in between.
    ///
    /// # Safety
    /// `source` must describe memory of this context that holds every element it names, which
    /// nothing writes until the copy has run.
    pub unsafe fn transposed_copy(
        &self,
        source: &TransposeSource,
    ) -> Result<TransposedCopy<'_>, GemmError> {
        let tiles_x = source.cols.div_ceil(TRANSPOSE_TILE as usize);
        let tiles_y = source.rows.div_ceil(TRANSPOSE_TILE as usize);
        if tiles_x > i32::MAX as usize || tiles_y > 65_535 {
            return Err(GemmError::KernelRefused {
                kernel: TRANSPOSE_ENTRY,
                reason: format!(
                    "a transposed copy of {} × {} is beyond its grid (at most 65 535 × 32 rows)",
                    source.rows, source.cols
                ),
            });
        }
        let item = source.copy_item();
        let elements = item
            .checked_mul(source.batch)
            .ok_or_else(|| GemmError::KernelRefused {
                kernel: TRANSPOSE_ENTRY,
                reason: "the transposed copy's size overflows".into(),
            })?;
        let mut held = self
            .scratch
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.as_ref().is_none_or(|s| s.len() < elements) {
            self.refuse_in_capture(|| "growing the scratch buffer of B's transposed copy".into())?;
            // The old buffer is freed in stream order, after the kernels that read it (or,
            // if a CUDA graph captured a copy into it, when that graph is dropped).
            *held = None;
            self.ensure_room(elements.saturating_mul(4))?;
            // SAFETY: the copy writes every element the kernels after it read.
            let fresh = unsafe { self.stream.alloc::<f32>(elements.max(1)) }
                .map_err(|e| GemmError::cuda("allocating the transposed copy of B", e))?;
            *held = Some(Arc::new(fresh));
        }
        let address = self.address(held.as_deref().expect("allocated above"));
        let function = self.kernel(TRANSPOSE_ENTRY)?;
        let config = LaunchConfig {
            grid_dim: (
                tiles_x as u32,
                tiles_y as u32,
                source.batch.clamp(1, 65_535) as u32,
            ),
            block_dim: (TRANSPOSE_THREADS, 1, 1),
            shared_mem_bytes: TRANSPOSE_SHARED_BYTES,
        };
        // Validation upstream bounds every size by i32::MAX.
        let (rows, cols) = (source.rows as u32, source.cols as u32);
        let (ld_src, ld_dst) = (source.ld as u32, source.copy_ld() as u32);
        let (stride_src, stride_dst) = (source.stride as u64, item as u64);
        let batch = source.batch as u32;
        let mut builder = self.stream.launch_builder(&function);
        builder
            .arg(&source.address)
            .arg(&address)
            .arg(&rows)
            .arg(&cols)
            .arg(&ld_src)
            .arg(&ld_dst)
            .arg(&stride_src)
            .arg(&stride_dst)
            .arg(&batch);
        // SAFETY: the source holds what it describes (the caller's contract); the scratch
        // buffer holds batch · cols · copy_ld elements, every one the kernel writes; the grid
        // covers the tiles (x, y checked above, z walks the rest) with the kernel's block and
        // shared memory, and the arguments follow its signature.
        unsafe { builder.launch(config) }
            .map_err(|e| GemmError::cuda(format!("launching {TRANSPOSE_ENTRY}"), e))?;
        Ok(TransposedCopy {
            address,
            ld: source.copy_ld(),
            stride: item,
            held,
        })
    }
}
