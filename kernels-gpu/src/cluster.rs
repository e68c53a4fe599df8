//! Thread-block clusters (sm_90): blocks launched together on neighbouring SMs that can reach
//! each other's shared memory. v23 pairs two blocks whose tiles share B's columns: each loads
//! half of B's tile once and the TMA multicasts it into both blocks' shared memory, and each
//! block's consumers release a stage in both blocks (whose producers both write it).

/// This block's rank in its cluster (`%cluster_ctarank`): 0 to the cluster's size − 1.
#[inline(always)]
pub fn cluster_rank() -> u32 {
    let rank: u32;
    unsafe {
        core::arch::asm!(
            "mov.u32 {rank}, %cluster_ctarank;",
            rank = out(reg32) rank,
            options(nomem, nostack, pure)
        )
    };
    rank
}

/// Every thread of every block of the cluster waits here for all the others (release, then
/// acquire): barriers initialized before it may be signalled from other blocks after it, and
/// a block that passes it last may exit, since no other block will touch its shared memory.
///
/// # Safety
/// Every thread of the cluster that has not exited must call this as many times.
#[inline(always)]
pub unsafe fn cluster_sync() {
    unsafe {
        core::arch::asm!(
            "barrier.cluster.arrive.release;",
            "barrier.cluster.wait.acquire;",
            options(nostack)
        )
    };
}

/// One arrival on the `mbarrier` at shared offset `barrier` of block `rank` of this cluster
/// (this block's own when `rank` is its rank). Its release is at the default scope, the
/// block's: what it orders are this thread's reads of a stage through `wgmma`, already waited
/// for. `.release.cluster` made each arrival wait as a cluster-wide fence does, and v23 ran at
/// a third of v22's speed (250 TFLOP/s at 4096³, `docs/results/v22-pingpong`).
///
/// # Safety
/// `barrier` must be an initialized `mbarrier` in every block of the cluster, at the same
/// offset, whose current phase expects this arrival; block `rank` must not have exited.
#[inline(always)]
pub unsafe fn barrier_arrive_in(barrier: u32, rank: u32) {
    unsafe {
        core::arch::asm!(
            "{{ .reg .b32 remote;",
            "mapa.shared::cluster.u32 remote, {barrier}, {rank};",
            "mbarrier.arrive.shared::cluster.b64 _, [remote]; }}",
            barrier = in(reg32) barrier,
            rank = in(reg32) rank,
            options(nostack)
        )
    };
}

/// Queues a TMA copy of the box at element coordinates (`x` innermost, `y`) of the 2-D tensor
/// of the map at `map` into shared offset `dst` of every block of the cluster whose bit is set
/// in `blocks`, each reporting the box's bytes to its own `mbarrier` at offset `barrier`.
///
/// # Safety
/// That of [`crate::tma::tma_load_2d`] in every block named by `blocks`, none of which may
/// have exited.
#[inline(always)]
pub unsafe fn tma_load_2d_multicast(
    dst: u32,
    map: *const u8,
    x: u32,
    y: u32,
    barrier: u32,
    blocks: u16,
) {
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{dst}], [{map}, {{{x}, {y}}}], [{barrier}], {blocks};",
            dst = in(reg32) dst,
            map = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            barrier = in(reg32) barrier,
            blocks = in(reg16) blocks,
            options(nostack),
        )
    };
}
