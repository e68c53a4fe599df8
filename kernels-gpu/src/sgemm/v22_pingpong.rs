//! # v22 — ping-pong: two consumer teams take turns, one multiplying while the other stores
//!
//! **Idea.** In v18 both consumer warpgroups share each 128×256 tile: they multiply it together,
//! then store it together, and while they store (128 accumulators per thread, 32 stores of four
//! fp16) the tensor cores have nothing to do. Here each consumer warpgroup is a team of its own
//! that takes every other tile of the block's walk, whole: 64 × 256 tiles (one `wgmma`
//! m64n256k16 per k16 slice, the same 128 accumulators). The teams take turns on the tensor
//! cores (`pipeline::TeamTurns`, two named barriers): a team begins its main loop when the other
//! has ended its own, so one team's epilogue runs under the other's main loop. The producer
//! loads every tile's stages in the walk's order into one ring of five 40 KiB stages
//! (`gemm_geometry::v22`); each team counts the other's stages past (`StageRing::skip`) to keep
//! the barrier phases, and its `empty` barriers count one team's 128 threads.
//!
//! **Registers.** The producer is a whole warpgroup that lowers itself to 40 registers
//! (`setmaxnreg.dec`), and the consumers rise to 232 (`setmaxnreg.inc`) from the 168 that a
//! 384-thread block gets per thread at launch. The ladder's plain store fits in 168; the
//! library's fused epilogue and a stream-K hand-over are what the room is for.
//!
//! **What it costs.** Tiles half as tall read B's panels twice as often: per 64-deep stage,
//! 40 KiB of A and B for 64 × 256 × 64 multiply-adds instead of v18's 48 KiB for twice that,
//! 1.7× the bytes from L2 per FLOP.
//!
//! **Fixes.** The tensor cores' idle time during v18's epilogue.
//!
//! **Measured** (H200, same runs as v18 and cuBLAS, three runs per build,
//! `docs/results/v22-pingpong`): about 706 TFLOP/s at 4096³ and 698–707 at 8192³, **91–96%
//! of cuBLAS fp16, 6–9% slower than v18** (751–755 and 776) in every run. Not the bytes above:
//! v23 halves them and is no faster. Not the hand-over: passing the turn before the last
//! `wgmma`s complete (as here) or after them made no difference. Untested: one warpgroup
//! issuing at a time, on half-height tiles.
//!
//! Launch: 384 threads (two consumer warpgroups, then the producer warpgroup),
//! `gemm_geometry::v22::SHARED_BYTES` of dynamic shared memory, min(⌈m/64⌉·⌈n/256⌉, SMs)
//! blocks (the host's `Persistent` grid). Tensor maps: v17's, but A's box is 64 rows × 64
//! (`gemm_geometry::v22::A_BOX`).

use crate::element::F16;
use crate::tma_gemm::ladder_tma_wgmma_on;
use gemm_geometry::v22::{MIN_BLOCKS_PER_SM, STAGES, TEAM_WARPGROUPS, TEAMS, THREADS};

crate::launch_bounds!(hgemm_v22_pingpong, THREADS, MIN_BLOCKS_PER_SM);

/// v22: v18's TMA + `wgmma` kernel with two consumer teams taking turns on 64 × 256 tiles.
///
/// # Safety
/// That of
/// [`hgemm_v18_persistent`](super::v18_persistent::hgemm_v18_persistent), with this module's
/// launch and A's tensor map in 64-row boxes.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v22_pingpong(
    _a: *const u16,
    _b: *const u16,
    c: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    maps: *const u8,
) {
    // SAFETY: the caller's contract is the body's.
    unsafe {
        ladder_tma_wgmma_on::<F16, false, 1, TEAMS, TEAM_WARPGROUPS, STAGES>(
            c as *mut F16,
            m,
            n,
            k,
            maps,
        )
    };
}
