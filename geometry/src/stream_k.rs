//! Stream-K for the persistent TMA body (`kernels-gpu/src/tma_gemm.rs`; the library enables it
//! for the small-tile entries `gemm_v18_m64_*`): the last work items of a product (its
//! *tail*) are cut along k into equal shares of the blocks, so that a product whose tiles fill
//! its last wave badly (1152³ is 324 tiles of 64 × 64 on 264 block slots: two waves, the
//! second 23% full) still keeps every SM busy to the end.
//!
//! With `args.stream_k_tiles = t > 0`, the blocks (`G` of them, the grid's size) first walk the
//! other `items − t` work items whole, as without stream-K, and then the `t · S` k-steps of the
//! tail (`S` = k-steps per tile), in one range of consecutive steps per block:
//! block `b` takes steps `[block_start(b), block_start(b + 1))` of the tail, counted tile by
//! tile. A tile of the tail is thus computed in pieces by consecutive blocks. Each piece that
//! does not end the tile (a *partial* piece) goes, as raw fp32 accumulators, into its block's
//! slot of the workspace, and a flag says it is there. The block whose piece ends the tile
//! (the *finisher*) waits for those flags, adds the pieces to its own accumulators in the order
//! of the blocks that made them (so the sum is the same on every run: no atomics), clears the
//! flags for the next launch, and stores the tile through the ordinary epilogue.
//!
//! A block has at most one partial piece: its range is consecutive steps, and only the tile in
//! which it ends can be left unfinished. It walks its tail tiles last to first, so that the
//! partial piece (the last tile of its range) is computed first and the finishing piece (the
//! first) last: by the time a finisher waits, the blocks before it have had their whole share
//! to publish. A finisher only ever waits for blocks of lower index, which the GPU starts no
//! later than itself, so the wait cannot deadlock even when the grid does not fit at once.
//!
//! The workspace: one u32 flag per block (zero between launches: made zero when allocated, and
//! every flag a launch raises its finisher clears), padded to [`FLAG_ALIGN`] bytes, then one
//! slot of `block_tile_m · block_tile_n` fp32 values per block ([`workspace_bytes`]).
//!
//! [`tail_tiles`] is the tail the host asks for; [`block_start`] and [`block_holding`] are the
//! device's arithmetic, written once here and tested on the CPU.

/// Bytes the flags are padded to, so that the slots start 256-byte aligned (the kernels store
/// them with 16-byte vectors).
pub const FLAG_ALIGN: u64 = 256;

/// The first step (of the tail's `total` k-steps) of block `block`'s share, of `blocks`:
/// `⌊block · total / blocks⌋` (block `blocks` gives `total`). Shares differ by at most one step.
pub const fn block_start(block: u32, blocks: u32, total: u64) -> u64 {
    block as u64 * total / blocks as u64
}

/// The block whose share holds step `step < total` of the tail: the largest `b` with
/// `block_start(b) ≤ step`. Blocks with an empty share (more blocks than steps) hold none.
pub const fn block_holding(step: u64, blocks: u32, total: u64) -> u32 {
    // block_start(b) ≤ step ⟺ b · total < (step + 1) · blocks.
    (((step + 1) * blocks as u64 - 1) / total) as u32
}

/// The tail the host hands to stream-K for `items` work items (batch · tiles) on a grid of
/// `blocks`: none when the items fill whole waves; all of them when they fill less than two;
/// else the last partial wave and one full wave before it, so that every block's share is
/// between one and two tiles and each tile is cut into at most three pieces (a tail of the
/// partial wave alone would cut 2176³'s 21 leftover tiles into six pieces each, and their
/// finishers would read five slots of 128 KiB each).
pub const fn tail_tiles(items: u64, blocks: u32) -> u32 {
    let blocks = blocks as u64;
    if blocks == 0 || items.is_multiple_of(blocks) {
        0
    } else if items < 2 * blocks {
        items as u32
    } else {
        (items % blocks + blocks) as u32
    }
}

/// Bytes of the flags (one u32 per block, padded to [`FLAG_ALIGN`]); the slots follow.
pub const fn flag_bytes(blocks: u32) -> u64 {
    (blocks as u64 * 4).div_ceil(FLAG_ALIGN) * FLAG_ALIGN
}

/// Bytes of the whole stream-K workspace for `blocks` blocks of tiles of `tile_elements`.
pub const fn workspace_bytes(blocks: u32, tile_elements: u32) -> u64 {
    flag_bytes(blocks) + blocks as u64 * tile_elements as u64 * 4
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn shares_cover_the_tail_once_and_differ_by_one_step_at_most() {
        for (blocks, total) in [
            (132, 714),
            (132, 5_202),
            (264, 4_096),
            (132, 64),
            (7, 3),
            (1, 9),
        ] {
            let shares: Vec<u64> = (0..blocks)
                .map(|b| block_start(b + 1, blocks, total) - block_start(b, blocks, total))
                .collect();
            assert_eq!(shares.iter().sum::<u64>(), total);
            let (least, most) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(
                most - least <= 1,
                "{blocks} blocks, {total} steps: {shares:?}"
            );
            for step in 0..total {
                let b = block_holding(step, blocks, total);
                assert!(block_start(b, blocks, total) <= step, "step {step}");
                assert!(step < block_start(b + 1, blocks, total), "step {step}");
            }
        }
    }

    #[test]
    fn each_block_leaves_at_most_one_tile_unfinished() {
        // The pieces of a block's share: one per tile it touches; partial when it stops
        // before the tile's end. Only the last can be.
        for (blocks, tiles, steps) in [(132, 153, 34), (132, 21, 34), (132, 16, 64), (264, 64, 2)] {
            let total = tiles as u64 * steps;
            let mut finishers = 0;
            for b in 0..blocks {
                let (lo, hi) = (
                    block_start(b, blocks, total),
                    block_start(b + 1, blocks, total),
                );
                if lo == hi {
                    continue;
                }
                let pieces: Vec<(u64, u64)> = (lo / steps..=(hi - 1) / steps)
                    .map(|t| (lo.max(t * steps), hi.min((t + 1) * steps)))
                    .collect();
                let partial: Vec<bool> = pieces.iter().map(|&(_, end)| end % steps != 0).collect();
                assert!(partial[..partial.len() - 1].iter().all(|p| !p), "block {b}");
                finishers += pieces.iter().filter(|&&(_, end)| end % steps == 0).count();
            }
            // Every tile is finished by exactly one block.
            assert_eq!(finishers, tiles);
        }
    }

    #[test]
    fn the_tail_is_the_last_wave_and_one_more() {
        assert_eq!(tail_tiles(264, 132), 0);
        assert_eq!(tail_tiles(153, 132), 153);
        assert_eq!(tail_tiles(64, 132), 64);
        assert_eq!(tail_tiles(512, 132), 116 + 132);
        assert_eq!(tail_tiles(2048, 132), 68 + 132);
        assert_eq!(tail_tiles(5, 0), 0);
        assert_eq!(flag_bytes(132), 768);
        assert_eq!(workspace_bytes(132, 128 * 256), 768 + 132 * 131_072);
    }
}
