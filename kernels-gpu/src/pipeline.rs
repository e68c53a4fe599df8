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

    /// Moves `steps` positions on at once: past the stages of a tile that another consumer
    /// team multiplies (v22), whose barrier phases this team must still count.
    #[inline(always)]
    pub fn skip(&mut self, steps: u32) {
        let position = self.index + steps;
        self.round += position / STAGES;
        self.index = position % STAGES;
    }
}

impl<const STAGES: u32> Default for StageRing<STAGES> {
    fn default() -> Self {
        Self::new()
    }
}

/// Turns of consumer teams on the tensor cores (v22): teams multiply the tiles of a block's
/// walk in turn, each team's main loop after the previous tile's main loop and alongside that
/// tile's epilogue. Named barriers 2, 3, … (one per team; 0 is the block's `bar.sync 0`, 1 the
/// stream-K hand-over's) each join the team that waits for its turn with the team before it.
///
/// The turns also keep the stage ring's parity waits sound: a team that skipped the previous
/// tile's stages would otherwise wait on a stage `STAGES` or more positions ahead of the
/// producer, whose barrier phase parity cannot tell that round from an earlier one.
#[derive(Clone, Copy)]
pub struct TeamTurns {
    /// Threads per team: each barrier joins two teams.
    pub team_threads: u32,
}

impl TeamTurns {
    /// The first named barrier of the turns.
    const FIRST_BARRIER: u32 = 2;

    /// Waits until the team before this one has ended its main loop and passed the turn.
    ///
    /// # Safety
    /// Every thread of `team` calls this together, and the team before it calls
    /// [`pass`](Self::pass) to `team` exactly once for this wait.
    #[inline(always)]
    pub unsafe fn wait(self, team: u32) {
        let threads = 2 * self.team_threads;
        unsafe {
            core::arch::asm!(
                "bar.sync {id}, {n};",
                id = in(reg32) Self::FIRST_BARRIER + team,
                n = in(reg32) threads,
                options(nostack)
            )
        };
    }

    /// Passes the turn to `next_team` (without waiting): its [`wait`](Self::wait) returns
    /// once every thread of this team has passed it.
    ///
    /// # Safety
    /// Every thread of the calling team calls this together, once per wait of `next_team`.
    #[inline(always)]
    pub unsafe fn pass(self, next_team: u32) {
        let threads = 2 * self.team_threads;
        unsafe {
            core::arch::asm!(
                "bar.arrive {id}, {n};",
                id = in(reg32) Self::FIRST_BARRIER + next_team,
                n = in(reg32) threads,
                options(nostack)
            )
        };
    }
}
