//! The geometry of the TF32 register-operand kernel (ladder rung v21): v17's threads, stages
//! and shared memory, with the product computed transposed, Cᵀ = Bᵀ·Aᵀ, so that B `[k, n]`
//! never has to be K-major.
//!
//! TF32 `wgmma` reads its shared-memory operands only K-major, but takes its first operand from
//! registers in any order the threads load them. So B's tile is the register operand (each
//! warpgroup's 64 columns of C are the instruction's M = 64 rows) and A's tile, K-major as A
//! `[m, k]` is stored, the shared-memory operand (the 256 rows of the block tile are the
//! instruction's N = 256). A block computes 256 rows × 128 columns of C, 32 deep per stage:
//! A 256 × 32 fp32 = 32 KiB (v19's B box), B 32 × 128 fp32 = 16 KiB, the same 48 KiB stage.

pub use crate::v17::{
    ALIGNMENT_SLACK, BARRIER_BYTES, CONSUMER_THREADS, CONSUMER_WARPGROUPS, MIN_BLOCKS_PER_SM,
    SHARED_BYTES, STAGE_BYTES, STAGES, SWIZZLE_BYTES, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES,
    TENSOR_MAPS,
};

/// Threads of the producer: a whole warpgroup (one thread of which issues the copies), because
/// `setmaxnreg` moves registers between warpgroups.
pub const PRODUCER_THREADS: u32 = 128;
/// Threads per block: 384 (the consumers first, then the producer warpgroup).
pub const THREADS: u32 = CONSUMER_THREADS + PRODUCER_THREADS;
/// Registers per consumer thread after `setmaxnreg.inc`: 128 accumulators, 16 B fragments and
/// the addresses, with room to spare (every thread gets 65 536 / 384, rounded down to 168, at
/// launch).
pub const CONSUMER_REGISTERS: u32 = 232;
/// Registers per producer thread after `setmaxnreg.dec`: the copies need a few dozen.
pub const PRODUCER_REGISTERS: u32 = 40;

/// Bytes per element (fp32, read by the tensor cores as TF32).
pub const ELEMENT_BYTES: u32 = 4;
/// Depth of one pipeline stage along k: one swizzled 128-byte row of A, 32 elements.
pub const TILE_K: u32 = SWIZZLE_BYTES / ELEMENT_BYTES;
/// k of one TF32 `wgmma` (m64n256k8).
pub const INSTRUCTION_K: u32 = 8;
/// Rows of C (and of A) per block tile: the `wgmma`'s N.
pub const BLOCK_TILE_M: u32 = 256;
/// Columns of C (and of B) per block tile: one `wgmma` M of 64 per consumer warpgroup.
pub const BLOCK_TILE_N: u32 = 128;
/// Tile rows per group of the grouped tile order (v9's, 8 elsewhere): 4 × 256 rows, the 1 024
/// rows of A that v17–v19's groups span. With 8, a group's panels of A at k = 8192 (64 MiB)
/// would not stay in the 50 MiB L2 while the group's columns reuse them.
pub const GROUP_TILE_ROWS: u32 = 4;
/// Columns of C per consumer warpgroup.
pub const WARPGROUP_COLUMNS: u32 = BLOCK_TILE_N / CONSUMER_WARPGROUPS;
/// TMA box of A (row-major `[m, k]`): `[k, rows]` = 32 × 256, 128-byte swizzle, one copy per
/// stage.
pub const A_BOX: [u32; 2] = [TILE_K, BLOCK_TILE_M];
/// TMA box of B (row-major `[k, n]`): `[n, k]` = 32 × 32, 128-byte swizzle: 32 rows of 128
/// bytes, one 4 KiB block per 32 columns.
pub const B_BOX: [u32; 2] = [SWIZZLE_BYTES / ELEMENT_BYTES, TILE_K];
/// Copies of [`B_BOX`] per stage, side by side along n.
pub const B_BOXES_PER_STAGE: u32 = BLOCK_TILE_N / B_BOX[0];
/// Bytes of one B box.
pub const B_BOX_BYTES: u32 = B_BOX[0] * B_BOX[1] * ELEMENT_BYTES;
/// Bytes of one stage's A tile (256 rows of 128 bytes).
pub const A_TILE_BYTES: u32 = BLOCK_TILE_M * TILE_K * ELEMENT_BYTES;
/// Bytes of one stage's B tile.
pub const B_TILE_BYTES: u32 = B_BOXES_PER_STAGE * B_BOX_BYTES;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_fill_v17s_stages() {
        assert_eq!(TILE_K, 32);
        assert_eq!(A_TILE_BYTES + B_TILE_BYTES, STAGE_BYTES);
        assert_eq!(A_BOX[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
        assert!(A_BOX[1] <= 256 && B_BOX[1] <= 256);
        // Every B box starts on a 1 024-byte boundary (the 128-byte swizzle's atom).
        assert_eq!(B_BOX_BYTES % 1024, 0);
        assert_eq!(B_BOX[0] * ELEMENT_BYTES, SWIZZLE_BYTES);
        assert_eq!(A_TILE_BYTES % 1024, 0);
        assert_eq!(WARPGROUP_COLUMNS, 64);
        assert_eq!(TILE_K % INSTRUCTION_K, 0);
        // setmaxnreg: multiples of 8 in 24..=256, and the block's total within the SM's file.
        for registers in [CONSUMER_REGISTERS, PRODUCER_REGISTERS] {
            assert!(registers % 8 == 0 && (24..=256).contains(&registers));
        }
        const {
            assert!(
                CONSUMER_THREADS * CONSUMER_REGISTERS + PRODUCER_THREADS * PRODUCER_REGISTERS
                    <= 65_536
            )
        };
        assert_eq!(PRODUCER_THREADS % 128, 0);
    }
}
