//! Layout and launch geometry of the dequant kernels (`kernels-gpu/src/dequant/`): the
//! pre-packed weight layout the host writes (`src/quant/prepack.rs`) and the decode and expand
//! kernels read, and the threads and dynamic shared memory each kernel is launched with.
//!
//! A block covers [`BLOCK_COLUMNS`] columns of the weights ([`WARPS`] warps of
//! [`WARP_COLUMNS`]); k is cut into chunks of [`chunk_k`]`(bits)` rows, of which each lane holds
//! [`loads`]`(bits)` 16-byte words.

/// Warps per block.
pub const WARPS: u32 = 8;
/// Columns per warp: four n8 tiles.
pub const WARP_COLUMNS: u32 = 32;
/// Columns per block: n is padded to a multiple of this.
pub const BLOCK_COLUMNS: u32 = WARPS * WARP_COLUMNS;
/// Threads per block of both the decode and the expand kernels (one warp per 32 columns).
pub const THREADS: u32 = WARPS * 32;
/// Blocks per SM the kernels are built for (`.minnctapersm`) and the decode kernel's host
/// launches as many of: what fits at a time.
pub const MIN_BLOCKS_PER_SM: u32 = 2;

/// k16 tiles per chunk: 8 (128 rows of k), or 2 for 16-bit weights (which would need too many
/// registers and too much shared memory per chunk otherwise).
pub const fn chunk_k_tiles(bits: u32) -> u32 {
    if bits > 8 { 2 } else { 8 }
}

/// Rows of k per chunk: k is padded to a multiple of this.
pub const fn chunk_k(bits: u32) -> u32 {
    16 * chunk_k_tiles(bits)
}

/// 16-byte words per lane per chunk.
pub const fn loads(bits: u32) -> u32 {
    chunk_k_tiles(bits) * bits / 8
}

/// Rows of A per m16 tile of the decode kernels: a decode block covers one
/// (`decode_shared_bytes(bits, 1)`), a batched-decode block [`BATCHED_M_TILES`].
pub const DECODE_TILE_M: u32 = 16;
/// m16 tiles per batched-decode block: 64 rows of A share every weight the block decodes, so the
/// weights stream from memory once per 64 rows instead of once per 16.
pub const BATCHED_M_TILES: u32 = 4;
/// m16 tiles per block of the wide batched-decode kernel (Hopper, integer formats, m > 64):
/// 128 rows, so that each `wgmma` covers N = 128 rows and the weights are decoded once per 128.
pub const WIDE_BATCHED_M_TILES: u32 = 8;
/// Blocks per SM the batched-decode kernel is built for: its accumulators for 64 rows (128 fp32
/// registers with the per-group sums) need more than the 128 registers two blocks would allow.
pub const BATCHED_MIN_BLOCKS_PER_SM: u32 = 1;
/// Bytes reserved per decode stage for the scales (and again for the offsets): up to 4 groups
/// per chunk.
pub const DECODE_GROUP_BYTES: u32 = 4 * BLOCK_COLUMNS * 2;
/// Bytes after the decode stages for the block's flag (is this block the last of a tile?).
pub const DECODE_FLAG_BYTES: u32 = 16;

/// Bytes of one decode pipeline stage for blocks of `m_tiles` m16 tiles: A's chunk, the block's
/// weights, scales and offsets.
pub const fn decode_stage_bytes(bits: u32, m_tiles: u32) -> u32 {
    DECODE_TILE_M * m_tiles * chunk_k(bits) * 2 + WARPS * loads(bits) * 512 + 2 * DECODE_GROUP_BYTES
}

/// Decode pipeline depth, 2 to 8 stages.
///
/// One m16 tile per block: enough stages that about 32 KiB of weights are in flight while one
/// stage is decoded, within 96 KiB of shared memory (two blocks per SM). More is not better:
/// with 4-bit weights 3 stages measured 6–8% faster than 4 on the H100 (and 2 stages 3%
/// slower), fp16 weights 5% faster with 3 than with 4: past what hides the latency, more
/// requests in flight only crowd the memory system. (7-bit weights, whose third stage would
/// need 110 KiB, measured 7% slower with it.)
///
/// Batched (one block per SM): the same 64 KiB in flight per SM from the one block, within 160
/// KiB, which the A100 (163 KiB per block) and the H100 (227 KiB) have; GPUs with about 100 KiB
/// per block (sm_86, sm_89, sm_120) do not run it (the host checks). The wide form
/// ([`WIDE_BATCHED_M_TILES`], Hopper only): within 220 KiB.
pub const fn decode_stages(bits: u32, m_tiles: u32) -> u32 {
    let (in_flight, budget) = if m_tiles == 1 {
        (32 * 1024u32, 96 * 1024)
    } else if m_tiles <= BATCHED_M_TILES {
        (64 * 1024u32, 160 * 1024)
    } else {
        // The wide (Hopper-only) form: its 32 KiB A tiles need the H100's room for 3–5 stages.
        (64 * 1024u32, 220 * 1024)
    };
    let weights = WARPS * loads(bits) * 512;
    let wanted = 1 + in_flight.div_ceil(weights);
    let fit = budget / decode_stage_bytes(bits, m_tiles);
    let stages = if wanted < fit { wanted } else { fit };
    if stages < 2 {
        2
    } else if stages > 8 {
        8
    } else {
        stages
    }
}

/// Dynamic shared memory of one decode block of `m_tiles` m16 tiles (the kernel traps if it is
/// given less).
pub const fn decode_shared_bytes(bits: u32, m_tiles: u32) -> u32 {
    decode_stages(bits, m_tiles) * decode_stage_bytes(bits, m_tiles) + DECODE_FLAG_BYTES
}

/// Dynamic shared memory of one batched-decode block of the Hopper (`wgmma`) form with `m_tiles`
/// m16 tiles: the stages of [`decode_shared_bytes`]`(bits, m_tiles)` plus 1 KiB to start them on the 1 024-byte
/// boundary that `wgmma`'s 128-byte swizzle needs.
pub const fn batched_wgmma_shared_bytes(bits: u32, m_tiles: u32) -> u32 {
    decode_shared_bytes(bits, m_tiles) + 1024
}

/// Bytes per row of the expand kernel's shared tile: 256 halves plus 16 bytes, so that the 8
/// rows lanes write at once start in different banks.
pub const EXPAND_ROW_BYTES: u32 = BLOCK_COLUMNS * 2 + 16;

/// Dynamic shared memory of one expand block (the kernel traps if it is given less).
pub const fn expand_shared_bytes(bits: u32) -> u32 {
    chunk_k(bits) * EXPAND_ROW_BYTES
}

// ---- The fused kernel (Hopper): weights decoded into shared memory for `wgmma` ----

/// Consumer warpgroups of a fused block: 64 rows of the output tile each.
pub const FUSED_CONSUMER_WARPGROUPS: u32 = 2;
/// Threads of a fused block: the consumer warpgroups, then one producer warpgroup that copies
/// A and decodes the weights.
pub const FUSED_THREADS: u32 = 128 * (FUSED_CONSUMER_WARPGROUPS + 1);
/// Rows of a fused output tile (its columns are [`BLOCK_COLUMNS`], one column block of the
/// pre-packed weights).
pub const FUSED_TILE_M: u32 = 64 * FUSED_CONSUMER_WARPGROUPS;
/// Rows of k per fused pipeline stage: half a chunk, one 128-byte swizzled row of fp16 per
/// row of A and per column of W.
pub const FUSED_STAGE_K: u32 = 64;
/// Bytes of A's part of a fused stage: `FUSED_TILE_M` rows of 128 bytes.
pub const FUSED_A_STAGE_BYTES: u32 = FUSED_TILE_M * FUSED_STAGE_K * 2;
/// Bytes of the decoded weights' part of a fused stage: `BLOCK_COLUMNS` columns of 128 bytes
/// (`[n, k]`, K-major, as `wgmma` reads it).
pub const FUSED_B_STAGE_BYTES: u32 = BLOCK_COLUMNS * FUSED_STAGE_K * 2;
/// Bytes of one fused stage (a multiple of 1 024, so every stage keeps the swizzle's alignment).
pub const FUSED_STAGE_BYTES: u32 = FUSED_A_STAGE_BYTES + FUSED_B_STAGE_BYTES;
/// Packed chunks in flight in a fused block: the one being decoded and the next.
pub const FUSED_PACKED_SLOTS: u32 = 2;
/// Bytes of one packed chunk slot of a fused block: the block's weights of one chunk, then
/// the scales and offsets of its groups (as in a decode stage).
pub const fn fused_packed_bytes(bits: u32) -> u32 {
    WARPS * loads(bits) * 512 + 2 * DECODE_GROUP_BYTES
}
/// The most dynamic shared memory a block may have on Hopper (227 KiB).
pub const HOPPER_SHARED_PER_BLOCK: u32 = 227 * 1024;
/// Bytes of one `mbarrier`.
pub const FUSED_BARRIER_BYTES: u32 = 8;
/// Bytes before the stages that let them start on a 1 024-byte boundary.
pub const FUSED_ALIGNMENT_SLACK: u32 = 1024;

/// Fused pipeline stages for `bits`-bit weights: as many as fit beside the packed slots, at
/// most 4 (v18's depth), at least 2.
pub const fn fused_stages(bits: u32) -> u32 {
    let fixed = FUSED_ALIGNMENT_SLACK + FUSED_PACKED_SLOTS * fused_packed_bytes(bits);
    let per_stage = FUSED_STAGE_BYTES + 2 * FUSED_BARRIER_BYTES;
    let fit = (HOPPER_SHARED_PER_BLOCK - fixed) / per_stage;
    if fit > 4 {
        4
    } else if fit < 2 {
        2
    } else {
        fit
    }
}

/// Dynamic shared memory of one fused block: alignment slack, the stages, the packed slots,
/// then a `full` and an `empty` barrier per stage.
pub const fn fused_shared_bytes(bits: u32) -> u32 {
    let stages = fused_stages(bits);
    FUSED_ALIGNMENT_SLACK
        + stages * FUSED_STAGE_BYTES
        + FUSED_PACKED_SLOTS * fused_packed_bytes(bits)
        + 2 * stages * FUSED_BARRIER_BYTES
}

#[cfg(test)]
mod fused_tests {
    use super::*;

    #[test]
    fn fused_blocks_fit_hopper_with_at_least_three_stages() {
        for bits in 1..=8 {
            assert!(
                fused_shared_bytes(bits) <= HOPPER_SHARED_PER_BLOCK,
                "{bits} bits"
            );
            assert!(fused_stages(bits) >= 3, "{bits} bits");
            assert_eq!(chunk_k(bits), 2 * FUSED_STAGE_K);
        }
        assert_eq!(FUSED_STAGE_BYTES % 1024, 0);
        assert_eq!(FUSED_A_STAGE_BYTES % 1024, 0);
        assert_eq!(FUSED_THREADS, 384);
        assert_eq!(fused_stages(4), 3);
        assert_eq!(fused_stages(2), 4);
    }
}
