//! Deterministic pseudo-random numbers without the harness's `rand` dependency: SplitMix64
//! (Steele, Lea and Flood, 2014), the one generator of the unit tests' inputs, the dequant
//! benchmark's weights (`harness::dequant_bench`) and the API tests' inputs (`tests/common`,
//! which includes this file).

/// SplitMix64's increment, ⌊2⁶⁴/φ⌋.
pub(crate) const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64: output number `i` of the generator whose state starts at `x` is
/// `splitmix64(x + i·GAMMA)`; on its own, a good 64-bit hash of `x`.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The first `len` outputs of the SplitMix64 generator whose state starts at `seed`.
#[cfg(test)]
pub(crate) fn stream(seed: u64, len: usize) -> impl Iterator<Item = u64> {
    (0..len as u64).map(move |i| splitmix64(seed.wrapping_add(i.wrapping_mul(GAMMA))))
}

/// `len` values uniform in [-1, 1), the same for the same `seed`.
#[cfg(test)]
pub(crate) fn random_matrix(len: usize, seed: u64) -> Vec<f32> {
    // The top 24 bits, exactly representable in f32.
    stream(seed, len)
        .map(|z| (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        .collect()
}
