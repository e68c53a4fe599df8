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
