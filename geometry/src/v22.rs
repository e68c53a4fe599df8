//! The geometry of ladder rung v22 (two consumer warpgroups taking turns, "ping-pong"): v17's
//! pipeline of TMA copies into 128-byte-swizzled stages, but each consumer warpgroup is a team
//! of its own that multiplies whole 64 × 256 tiles, one team's main loop while the other stores
//! its tile. A producer warpgroup (one thread of which issues the copies) hands its registers
//! to the consumers (`setmaxnreg`).
//!
//! A stage is one tile's 64 rows of A and 256 columns of B, 64 deep: 8 KiB + 32 KiB. Five fit
//! in the 227 KiB a block may have.

pub use crate::v17::{
    ALIGNMENT_SLACK, B_KN_BOX, B_KN_BOXES_PER_STAGE, BARRIER_BYTES, ELEMENT_BYTES, SWIZZLE_BYTES,
    SWIZZLE_ELEMENTS, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TENSOR_MAPS, TILE_K,
};

/// Consumer teams: each takes every `TEAMS`-th tile of the block's walk, whole.
pub const TEAMS: u32 = 2;
/// Consumer warpgroups per team (each owns 64 rows of the team's tile): one.
pub const TEAM_WARPGROUPS: u32 = 1;
/// Rows of C (and of A) per tile: one `wgmma` m64 tile.
pub const BLOCK_TILE_M: u32 = 64 * TEAM_WARPGROUPS;
/// Columns of C (and of B) per tile: one `wgmma` n256 tile.
pub const BLOCK_TILE_N: u32 = 256;
/// fp32 accumulators per consumer thread: the team's 64 × 256 tile over its 128 threads.
pub const ACCUMULATORS: u32 = BLOCK_TILE_M * BLOCK_TILE_N / (128 * TEAM_WARPGROUPS);
/// Pipeline stages, shared by the two teams in the order of the walk.
pub const STAGES: u32 = 5;
/// Threads of the consumer teams: 256.
pub const CONSUMER_THREADS: u32 = TEAMS * TEAM_WARPGROUPS * 128;
/// Threads of the producer: a whole warpgroup, because `setmaxnreg` moves registers between
/// warpgroups.
pub const PRODUCER_THREADS: u32 = 128;
/// Threads per block: 384 (the consumers first, then the producer warpgroup).
pub const THREADS: u32 = CONSUMER_THREADS + PRODUCER_THREADS;
/// Blocks per SM the launch bounds ask for (every thread gets 65 536 / 384, rounded down to
/// 168 registers, at launch).
pub const MIN_BLOCKS_PER_SM: u32 = 1;
/// Registers per consumer thread after `setmaxnreg.inc`: 128 accumulators and the epilogue.
pub const CONSUMER_REGISTERS: u32 = 232;
/// Registers per producer thread after `setmaxnreg.dec`: the copies need a few dozen.
pub const PRODUCER_REGISTERS: u32 = 40;

/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 64 × 64, one copy per stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// Bytes of one stage's A tile (64 rows of 128 bytes).
pub const A_TILE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile (64 × 256 elements, four [`B_KN_BOX`] slabs).
pub const B_TILE_BYTES: u32 = BLOCK_TILE_N * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage, and the transaction bytes its `full` barrier expects: 40 KiB.
pub const STAGE_BYTES: u32 = A_TILE_BYTES + B_TILE_BYTES;
/// Dynamic shared memory per block: slack, the stages, then the `full` and `empty` barriers
/// (205 904 bytes).
pub const SHARED_BYTES: u32 = ALIGNMENT_SLACK + STAGES * STAGE_BYTES + 2 * STAGES * BARRIER_BYTES;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_fit_and_registers_balance() {
        const { assert!(SHARED_BYTES <= 227 * 1024) };
        assert_eq!(SHARED_BYTES, 205_904);
        assert_eq!(STAGE_BYTES, 40 * 1024);
        assert_eq!(A_BOX[0] * A_BOX[1] * ELEMENT_BYTES, A_TILE_BYTES);
        assert_eq!(
            B_KN_BOXES_PER_STAGE * B_KN_BOX[0] * B_KN_BOX[1] * ELEMENT_BYTES,
            B_TILE_BYTES
        );
        // Tiles keep the 1 024-byte alignment of the swizzle atoms.
        assert_eq!(A_TILE_BYTES % 1024, 0);
        assert_eq!(STAGE_BYTES % 1024, 0);
        assert_eq!((THREADS, ACCUMULATORS), (384, 128));
        // setmaxnreg: multiples of 8 in 24..=256, and what the producer gives up covers what
        // the consumers take, within the launch's 168 per thread.
        for registers in [CONSUMER_REGISTERS, PRODUCER_REGISTERS] {
            assert!(registers % 8 == 0 && (24..=256).contains(&registers));
        }
        const {
            assert!(
                CONSUMER_THREADS * CONSUMER_REGISTERS + PRODUCER_THREADS * PRODUCER_REGISTERS
                    <= THREADS * 168
            )
        };
    }
}
