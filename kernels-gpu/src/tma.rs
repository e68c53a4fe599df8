//! Hopper's tensor memory accelerator (TMA) and the shared-memory transaction barriers
//! (`mbarrier`) that say when its copies have landed, as inline-PTX wrappers.
//!
//! A TMA copy moves a whole box of a matrix (here up to 64 × 128 fp16) from global to shared
//! memory on one thread's request, computing every address and bounds check in hardware
//! (elements outside the matrix arrive as zeros) and writing the box in the 128-byte-swizzled
//! layout `wgmma` reads. The copy reports its bytes to an `mbarrier` in shared memory; a
//! barrier phase completes when the expected number of threads have arrived *and* the
//! expected bytes have landed. Waiting threads test the phase's parity.

use gemm_geometry::v17::BARRIER_BYTES;

/// Initializes the barrier at shared address `barrier` (8 bytes, 8-aligned) to expect
/// `arrivals` arrivals per phase.
///
/// # Safety
/// `barrier` must be an 8-byte-aligned shared-state-space address of 8 bytes inside this block's
/// dynamic shared memory, not in use as a barrier; one thread initializes it, and no thread (nor
/// a TMA copy) may use it before [`fence_barrier_init`] and a block barrier have followed.
#[inline(always)]
pub unsafe fn barrier_init(barrier: u32, arrivals: u32) {
    unsafe {
        core::arch::asm!(
            "mbarrier.init.shared::cta.b64 [{barrier}], {arrivals};",
            barrier = in(reg32) barrier,
            arrivals = in(reg32) arrivals,
            options(nostack),
        )
    };
}

/// Makes barrier initializations visible to the async proxy (the TMA unit), before any copy
/// may signal them.
#[inline(always)]
pub fn fence_barrier_init() {
    unsafe { core::arch::asm!("fence.mbarrier_init.release.cluster;", options(nostack)) };
}

/// The `mbarrier`s of a TMA pipeline of `STAGES` stages, `BARRIER_BYTES` each from shared address
/// `base`: stage `s`'s `full` barrier (the producer's arrival and the stage's bytes), then, after
/// all of those, its `empty` barrier (the consumers' release).
#[derive(Clone, Copy)]
pub struct StageBarriers<const STAGES: u32> {
    base: u32,
}

impl<const STAGES: u32> StageBarriers<STAGES> {
    /// The barriers at `base` (8-byte aligned, `2·STAGES·8` bytes of dynamic shared memory).
    #[inline(always)]
    pub const fn at(base: u32) -> Self {
        Self { base }
    }

    /// Stage `stage`'s `full` barrier.
    #[inline(always)]
    pub const fn full(self, stage: u32) -> u32 {
        self.base + BARRIER_BYTES * stage
    }

    /// Stage `stage`'s `empty` barrier.
    #[inline(always)]
    pub const fn empty(self, stage: u32) -> u32 {
        self.base + BARRIER_BYTES * (STAGES + stage)
    }

    /// Thread 0 initializes every `full` barrier to one arrival and every `empty` barrier to
    /// `consumers`, then the whole block synchronizes: every thread of the block calls this.
    ///
    /// # Safety
    /// The barriers must lie in this block's dynamic shared memory, unused until now.
    #[inline(always)]
    pub unsafe fn init(self, thread: u32, consumers: u32) {
        if thread == 0 {
            for stage in 0..STAGES {
                // SAFETY: the caller's contract.
                unsafe {
                    barrier_init(self.full(stage), 1);
                    barrier_init(self.empty(stage), consumers);
                }
            }
            fence_barrier_init();
        }
        crate::device::sync_threads();
    }
}

/// One arrival on `barrier`.
///
/// # Safety
/// `barrier` must be an initialized `mbarrier` in this block's shared memory (see
/// [`barrier_init`]), and this arrival must be one of the arrivals its current phase expects.
#[inline(always)]
pub unsafe fn barrier_arrive(barrier: u32) {
    unsafe {
        core::arch::asm!(
            "mbarrier.arrive.shared::cta.b64 _, [{barrier}];",
            barrier = in(reg32) barrier,
            options(nostack),
        )
    };
}

/// One arrival on `barrier` that takes place once every `cp.async` this thread has issued so
/// far has landed (`cp.async.mbarrier.arrive.noinc`: it counts as one of the phase's expected
/// arrivals). The thread goes on at once; the barrier's waiters see the copies.
///
/// # Safety
/// That of [`barrier_arrive`].
#[inline(always)]
pub unsafe fn barrier_arrive_on_copies(barrier: u32) {
    unsafe {
        core::arch::asm!(
            "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [{barrier}];",
            barrier = in(reg32) barrier,
            options(nostack),
        )
    };
}

/// One arrival on `barrier` that also announces `bytes` more bytes of copies to wait for.
///
/// # Safety
/// That of [`barrier_arrive`]; the `bytes` announced must be exactly the bytes of the copies that
/// will report to this phase of `barrier`.
#[inline(always)]
pub unsafe fn barrier_arrive_expect_bytes(barrier: u32, bytes: u32) {
    unsafe {
        core::arch::asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{barrier}], {bytes};",
            barrier = in(reg32) barrier,
            bytes = in(reg32) bytes,
            options(nostack),
        )
    };
}

/// Waits until the phase of `barrier` with parity `parity` (0 or 1) has completed.
///
/// # Safety
/// `barrier` must be an initialized `mbarrier` in this block's shared memory (see
/// [`barrier_init`]), and `parity` the parity of a phase that will complete (else the thread waits
/// forever).
#[inline(always)]
pub unsafe fn barrier_wait(barrier: u32, parity: u32) {
    loop {
        let done: u32;
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred done; mbarrier.try_wait.parity.shared::cta.b64 done, [{barrier}], {parity}; selp.u32 {out}, 1, 0, done; }}",
                barrier = in(reg32) barrier,
                parity = in(reg32) parity,
                out = out(reg32) done,
                options(nostack),
            )
        };
        if done != 0 {
            break;
        }
    }
}

/// Queues a TMA copy of the box at element coordinates (`x` innermost, `y`) of the matrix
/// described by the tensor map at `map` (global memory, 64-byte aligned) to shared address
/// `dst`, reporting its bytes to `barrier`.
///
/// # Safety
/// `map` must point to a valid 2-D tensor map in global (or constant/param) memory, 64-byte
/// aligned, describing memory that stays valid until the copy completes; `dst` must be a
/// shared-state-space address aligned as the map's swizzle requires (1 024 bytes for the 128-byte
/// swizzle) with room for the box inside the dynamic allocation; `barrier` an initialized
/// `mbarrier` whose current phase expects the box's bytes.
#[inline(always)]
pub unsafe fn tma_load_2d(dst: u32, map: *const u8, x: u32, y: u32, barrier: u32) {
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{dst}], [{map}, {{{x}, {y}}}], [{barrier}];",
            dst = in(reg32) dst,
            map = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            barrier = in(reg32) barrier,
            options(nostack),
        )
    };
}

/// Queues a TMA copy of the box at element coordinates (`x` innermost, `y`, `z`) of the
/// 3-dimensional tensor described by the tensor map at `map` (global memory, 64-byte aligned)
/// to shared address `dst`, reporting its bytes to `barrier`. The library GEMMs use the third
/// dimension for the batch: one map covers every batch item, `z` picks the item. As in 2-D,
/// elements outside the tensor arrive as zeros and still count towards the barrier's bytes.
///
/// # Safety
/// `map` must point to a valid tensor map of rank 3; `dst` must be a shared-memory address
/// aligned as the map's swizzle requires (1 024 bytes for the 128-byte swizzle) with room for
/// the box, and `barrier` an initialized `mbarrier` that expects the box's bytes.
#[inline(always)]
pub unsafe fn tma_load_3d(dst: u32, map: *const u8, x: u32, y: u32, z: u32, barrier: u32) {
    // SAFETY: the caller upholds the contract above.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [{dst}], [{map}, {{{x}, {y}, {z}}}], [{barrier}];",
            dst = in(reg32) dst,
            map = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            barrier = in(reg32) barrier,
            options(nostack),
        )
    };
}
