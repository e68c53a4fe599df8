//! The geometry of ladder rung v23: v22's block (two consumer teams on 64 × 256 tiles, a
//! producer warpgroup, five 40 KiB stages) launched in thread-block clusters of two along m.
//! The two blocks of a cluster take vertically adjacent tiles, which share B's 256 columns:
//! each block loads two of B's four 64-column slabs per stage and the TMA multicasts them into
//! both blocks, so each SM reads 8 KiB of A and 16 KiB of B from L2 per stage instead of v22's
//! 40 KiB.

pub use crate::v22::{
    A_BOX, A_TILE_BYTES, ACCUMULATORS, B_KN_BOX, B_KN_BOXES_PER_STAGE, B_TILE_BYTES, BLOCK_TILE_M,
    BLOCK_TILE_N, CONSUMER_REGISTERS, CONSUMER_THREADS, MIN_BLOCKS_PER_SM, PRODUCER_REGISTERS,
    PRODUCER_THREADS, SHARED_BYTES, STAGE_BYTES, STAGES, TEAM_WARPGROUPS, TEAMS, THREADS, TILE_K,
};

/// Blocks per cluster, along m (grid x must be a multiple of it).
pub const CLUSTER: u32 = 2;
/// Rows of C per cluster work item: one tile per block.
pub const CLUSTER_TILE_M: u32 = CLUSTER * BLOCK_TILE_M;
/// Bytes of B each block loads per stage (and multicasts): its share of the slabs.
pub const B_LOADED_BYTES: u32 = B_TILE_BYTES / CLUSTER;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_split_evenly_over_the_cluster() {
        assert_eq!(B_KN_BOXES_PER_STAGE % CLUSTER, 0);
        assert_eq!(CLUSTER_TILE_M, 128);
        // Per stage and SM, from L2: A's tile and half of B's (24 KiB), v18's per FLOP.
        assert_eq!(A_TILE_BYTES + B_LOADED_BYTES, 24 * 1024);
    }
}
