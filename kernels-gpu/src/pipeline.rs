//! The stage ring of a multi-stage pipeline: `STAGES` shared-memory buffers used in turn, and
//! for `mbarrier`-synchronized pipelines the phase of their barriers, which flips each time the
//! ring wraps around.

/// A position in a ring of `STAGES` stages: the stage [`index`](Self::index) and how many
/// times the ring has wrapped ([`round`](Self::round), whose parity is the barrier
/// [`phase`](Self::phase)). `Copy` and a few registers; advancing is a compare and select
/// (no `% STAGES`), and what a kernel does not read (the round, in the `cp.async` rungs) is
/// removed by the compiler.
#[derive(Clone, Copy)]
pub struct StageRing<const STAGES: u32> {
    index: u32,
    round: u32,
}

impl<const STAGES: u32> StageRing<STAGES> {
    /// Stage 0 of round 0.
    #[inline(always)]
    pub const fn new() -> Self {
        Self::at(0)
    }

    /// Stage `index` (< `STAGES`) of round 0.
    #[inline(always)]
    pub const fn at(index: u32) -> Self {
        Self { index, round: 0 }
    }

    /// The current stage, `0..STAGES`.
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// How many times the ring has wrapped around.
    #[inline(always)]
    pub const fn round(self) -> u32 {
        self.round
    }

    /// The parity of [`round`](Self::round): the phase an `mbarrier` of this stage completes
    /// in this round.
    #[inline(always)]
    pub const fn phase(self) -> u32 {
        self.round & 1
    }

    /// The next stage, wrapping to 0 (and starting the next round) after `STAGES − 1`.
    #[inline(always)]
    pub const fn next(self) -> Self {
        if self.index + 1 == STAGES {
            Self {
                index: 0,
                round: self.round + 1,
            }
        } else {
            Self {
                index: self.index + 1,
                round: self.round,
            }
        }
    }

    /// Moves to [`next`](Self::next).
    #[inline(always)]
    pub fn advance(&mut self) {
        *self = self.next();
    }
}

impl<const STAGES: u32> Default for StageRing<STAGES> {
    fn default() -> Self {
        Self::new()
    }
}

/// Bytes of one `mbarrier` in shared memory.
pub const BARRIER_BYTES: u32 = 8;

/// The `mbarrier`s of a `cp.async` pipeline whose warps do not meet at a block barrier (v22):
/// per stage a `full` barrier, which completes when every thread's copies into the stage have
/// landed (`cp.async.mbarrier.arrive.noinc`), and an `empty` barrier, which completes when every
/// thread has finished reading the stage. `2·STAGES` barriers of [`BARRIER_BYTES`] from shared
/// address `base`, `full` ones first. sm_80 and later.
#[derive(Clone, Copy)]
pub struct CopyBarriers<const STAGES: u32> {
    base: u32,
}

impl<const STAGES: u32> CopyBarriers<STAGES> {
    /// The barriers at shared address `base` (8-byte aligned).
    #[inline(always)]
    pub const fn at(base: u32) -> Self {
        Self { base }
    }

    #[inline(always)]
    const fn full(self, stage: u32) -> u32 {
        self.base + BARRIER_BYTES * stage
    }

    #[inline(always)]
    const fn empty(self, stage: u32) -> u32 {
        self.base + BARRIER_BYTES * (STAGES + stage)
    }

    /// Thread 0 initializes every barrier to expect `threads` arrivals per phase, then the block
    /// synchronizes: every thread of the block calls this, once.
    ///
    /// # Safety
    /// The `2·STAGES` barriers must lie in this block's dynamic shared memory, unused until now;
    /// `threads` must be the block's thread count, and every one of them must arrive once per
    /// phase.
    #[inline(always)]
    pub unsafe fn init(self, thread: u32, threads: u32) {
        if thread == 0 {
            for stage in 0..STAGES {
                // SAFETY: the caller's contract.
                unsafe {
                    barrier_init(self.full(stage), threads);
                    barrier_init(self.empty(stage), threads);
                }
            }
        }
        crate::device::sync_threads();
    }

    /// This thread's arrival on `stage`'s `full` barrier, made when all the `cp.async` copies it
    /// has issued so far have landed.
    ///
    /// # Safety
    /// Initialized barriers ([`init`](Self::init)); one arrival per thread per phase.
    #[inline(always)]
    pub unsafe fn copies_arrive(self, stage: u32) {
        unsafe {
            core::arch::asm!(
                "cp.async.mbarrier.arrive.noinc.shared.b64 [{barrier}];",
                barrier = in(reg32) self.full(stage),
                options(nostack),
            )
        };
    }

    /// This thread's arrival on `stage`'s `empty` barrier: it has finished reading the stage.
    ///
    /// # Safety
    /// As [`copies_arrive`](Self::copies_arrive).
    #[inline(always)]
    pub unsafe fn release(self, stage: u32) {
        unsafe {
            core::arch::asm!(
                "mbarrier.arrive.shared.b64 _, [{barrier}];",
                barrier = in(reg32) self.empty(stage),
                options(nostack),
            )
        };
    }

    /// Waits until `stage`'s copies of the phase with parity `parity` have all landed.
    ///
    /// # Safety
    /// Initialized barriers; the phase must be one that completes.
    #[inline(always)]
    pub unsafe fn wait_full(self, stage: u32, parity: u32) {
        unsafe { barrier_wait_parity(self.full(stage), parity) };
    }

    /// Waits until every thread has released `stage` in the phase with parity `parity`.
    ///
    /// # Safety
    /// As [`wait_full`](Self::wait_full).
    #[inline(always)]
    pub unsafe fn wait_empty(self, stage: u32, parity: u32) {
        unsafe { barrier_wait_parity(self.empty(stage), parity) };
    }
}

/// `mbarrier.init`: the barrier at shared address `barrier` expects `arrivals` per phase.
///
/// # Safety
/// An 8-byte-aligned shared address in this block's memory, not in use; no thread may use the
/// barrier before a block barrier follows.
#[inline(always)]
unsafe fn barrier_init(barrier: u32, arrivals: u32) {
    unsafe {
        core::arch::asm!(
            "mbarrier.init.shared.b64 [{barrier}], {arrivals};",
            barrier = in(reg32) barrier,
            arrivals = in(reg32) arrivals,
            options(nostack),
        )
    };
}

/// Waits until the phase of `barrier` with parity `parity` has completed: `try_wait` (which may
/// suspend the thread in hardware) on sm_90, `test_wait` in a loop before.
///
/// # Safety
/// An initialized barrier whose phase of that parity completes.
#[inline(always)]
unsafe fn barrier_wait_parity(barrier: u32, parity: u32) {
    loop {
        let done: u32;
        #[cfg(target_feature = "sm_90a")]
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred done; mbarrier.try_wait.parity.shared.b64 done, [{barrier}], {parity}; selp.u32 {out}, 1, 0, done; }}",
                barrier = in(reg32) barrier,
                parity = in(reg32) parity,
                out = out(reg32) done,
                options(nostack),
            )
        };
        #[cfg(not(target_feature = "sm_90a"))]
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred done; mbarrier.test_wait.parity.shared.b64 done, [{barrier}], {parity}; selp.u32 {out}, 1, 0, done; }}",
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
