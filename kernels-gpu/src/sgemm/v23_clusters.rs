//! # v23 — clusters of two: B's tile loaded once for two SMs (TMA multicast)
//!
//! **Idea.** v22's 64-row tiles read B's 256 columns twice as often as v18's 128-row tiles.
//! Launch its blocks in thread-block clusters of two (`.reqnctapercluster 2, 1, 1`): the two
//! blocks of a cluster walk the same work items, each taking one of two vertically adjacent
//! tiles, so both need the same B tile at every stage. Each block's producer loads half of
//! B's slabs and the TMA writes them into both blocks' shared memory
//! (`cp.async.bulk.tensor … .multicast::cluster`, `cluster::tma_load_2d_multicast`); each
//! `full` barrier still expects the whole stage, half of it written by the other block.
//! Since both producers write every stage, a stage is free only when both blocks' consumers
//! have released it: one thread per consumer warp arrives on the `empty` barrier of each
//! block (`mapa` + `mbarrier.arrive.shared::cluster`, `cluster::barrier_arrive_in`), and the
//! blocks meet at a cluster barrier after initializing their barriers and before exiting.
//!
//! **Fixes.** v22's L2 traffic: per stage each SM reads 8 KiB of A and 16 KiB of B, 24 KiB
//! per 64 × 256 × 64 multiply-adds, v18's bytes per FLOP, while keeping v22's turns.
//!
//! **Measured** (H200, three runs, `docs/results/v22-pingpong`): 686–689 TFLOP/s at 4096³ and
//! 702–708 at 8192³ (91–94% of cuBLAS fp16): as fast as v22 at 8192³, 2–3% slower at 4096³, so
//! L2 traffic was not v22's limit. With `.release.cluster` on the remote arrivals it ran at
//! 250 TFLOP/s (see `cluster::barrier_arrive_in`).
//!
//! Launch: v22's block and shared memory; grid x a multiple of 2 (the host launches
//! 2·min(⌈m/128⌉·⌈n/256⌉, ⌊SMs/2⌋) blocks); tensor maps as v22's.

use crate::element::F16;
use crate::tma_gemm::ladder_tma_wgmma_on;
use gemm_geometry::v23::{CLUSTER, MIN_BLOCKS_PER_SM, STAGES, TEAM_WARPGROUPS, TEAMS, THREADS};

crate::launch_bounds!(hgemm_v23_clusters, THREADS, MIN_BLOCKS_PER_SM, CLUSTER);

/// v23: v22 in clusters of two blocks that share B's tiles through TMA multicast.
///
/// # Safety
/// That of [`hgemm_v22_pingpong`](super::v22_pingpong::hgemm_v22_pingpong), with a grid whose
/// x is a multiple of 2.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn hgemm_v23_clusters(
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
        ladder_tma_wgmma_on::<F16, false, CLUSTER, TEAMS, TEAM_WARPGROUPS, STAGES>(
            c as *mut F16,
            m,
            n,
            k,
            maps,
        )
    };
}
