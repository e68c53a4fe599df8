//! Random inputs for the library's unit tests, without the harness's `rand` dependency: a
//! SplitMix64 stream mapped to [-1, 1).

/// `len` values uniform in [-1, 1), the same for the same `seed`.
pub(crate) fn random_matrix(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            // The top 24 bits, exactly representable in f32.
            (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}
