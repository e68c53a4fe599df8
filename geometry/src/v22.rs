//! Launch geometry of v22 (`sgemm_v22_decoupled_warps`): v13's tiles and copies, its stages
//! synchronized by per-stage `mbarrier`s instead of a block barrier. The dynamic shared memory
//! holds [`STAGES`] of v13's stages, then `2·STAGES` barriers of [`BARRIER_BYTES`].

use crate::v13;

/// Bytes of one `mbarrier`.
pub const BARRIER_BYTES: u32 = 8;

/// One variant's numbers: block rows (with [`v13::BLOCK_TILE_N`] columns), stages, how many
/// steps ahead of the math the copies run, and blocks per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Rows of C per block.
    pub block_tile_m: u32,
    /// Shared-memory stages.
    pub stages: u32,
    /// Steps of k the copies run ahead of the math (at most `stages − 1`; `stages − ahead − 1`
    /// steps of slack let warps drift apart).
    pub ahead: u32,
    /// Blocks per SM the entry is built for.
    pub min_blocks_per_sm: u32,
}

impl Variant {
    /// Threads per block.
    pub const fn threads(self) -> u32 {
        v13::threads(self.block_tile_m)
    }

    /// Dynamic shared memory, in bytes (B stored `[k, n]`).
    pub const fn shared_bytes(self) -> u32 {
        self.stages * v13::stage_floats(self.block_tile_m, false) * 4
            + 2 * self.stages * BARRIER_BYTES
    }
}

/// The rung: 128 × 128 tiles, 4 stages, copies 2 steps ahead, 2 blocks per SM.
pub const RUNG: Variant = Variant {
    block_tile_m: 128,
    stages: 4,
    ahead: 2,
    min_blocks_per_sm: 2,
};
/// 5 stages, 3 ahead.
pub const S5_A3: Variant = Variant {
    stages: 5,
    ahead: 3,
    ..RUNG
};
/// 4 stages, 3 ahead (no slack: v13's order with barriers per stage).
pub const S4_A3: Variant = Variant { ahead: 3, ..RUNG };
/// 64-row tiles (4 warps), 4 stages, 2 ahead, 4 blocks per SM.
pub const M64: Variant = Variant {
    block_tile_m: 64,
    min_blocks_per_sm: 4,
    ..RUNG
};
/// 64-row tiles, 3 stages, 1 ahead.
pub const M64_S3_A1: Variant = Variant {
    stages: 3,
    ahead: 1,
    ..M64
};

/// One block per SM (255 registers), 8 stages, 6 ahead.
pub const ONE_BLOCK: Variant = Variant {
    stages: 8,
    ahead: 6,
    min_blocks_per_sm: 1,
    ..RUNG
};
/// 64-row tiles at 2 blocks per SM (255 registers), 8 stages, 6 ahead.
pub const M64_TWO_BLOCKS: Variant = Variant {
    stages: 8,
    ahead: 6,
    min_blocks_per_sm: 2,
    ..M64
};
/// 64-row tiles at 3 blocks per SM (170 registers), 6 stages, 4 ahead.
pub const M64_THREE_BLOCKS: Variant = Variant {
    stages: 6,
    ahead: 4,
    min_blocks_per_sm: 3,
    ..M64
};
/// v13's own order (a block barrier per step: `ahead` 0 selects it), for comparisons.
pub const V13_ORDER: Variant = Variant { ahead: 0, ..RUNG };

const _: () = {
    let all = [
        RUNG,
        S5_A3,
        S4_A3,
        M64,
        M64_S3_A1,
        ONE_BLOCK,
        M64_TWO_BLOCKS,
        M64_THREE_BLOCKS,
    ];
    let mut i = 0;
    while i < all.len() {
        let v = all[i];
        assert!(v.ahead >= 1 && v.ahead < v.stages);
        // The blocks fit the H100's 228 KiB of shared memory per SM, 1 KiB reserved per block.
        assert!(v.min_blocks_per_sm * (v.shared_bytes() + 1024) <= 228 * 1024);
        i += 1;
    }
};
