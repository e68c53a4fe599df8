//! Property tests of the weight formats: pack/unpack and encode/decode round trips, and the
//! quantizer's error bound, on random inputs (proptest).

use proptest::prelude::*;
use rust_gemm::quant::format::{WeightFormat, pack, quantize, unpack};

fn format() -> impl Strategy<Value = WeightFormat> {
    prop_oneof![
        (1u32..=8).prop_map(WeightFormat::Unsigned),
        (2u32..=8).prop_map(WeightFormat::Signed),
        (1u32..=7)
            .prop_flat_map(|e| (Just(e), 0..=(7 - e)))
            .prop_map(|(exponent, mantissa)| WeightFormat::Float { exponent, mantissa }),
    ]
}

proptest! {
    #[test]
    fn pack_then_unpack_is_the_identity(bits in 1u32..=16, raw in prop::collection::vec(any::<u32>(), 0..300)) {
        let codes: Vec<u32> = raw.iter().map(|c| c & ((1 << bits) - 1)).collect();
        let bytes = pack(&codes, bits);
        prop_assert_eq!(bytes.len(), (codes.len() * bits as usize).div_ceil(8));
        prop_assert_eq!(unpack(&bytes, bits, codes.len()), codes);
    }

    #[test]
    fn every_code_survives_decode_then_encode(format in format(), raw in any::<u32>()) {
        let code = raw & ((1 << format.bits()) - 1);
        let value = format.decode(code);
        prop_assert!(value.is_finite());
        prop_assert_eq!(format.decode(format.encode(value)), value);
    }

    #[test]
    fn dequantized_weights_stay_within_the_format_step(
        format in format(),
        groups in 1usize..4,
        n in 1usize..6,
        zero_points in any::<bool>(),
        weights in prop::collection::vec(-1.0f32..1.0, 3 * 32 * 5),
    ) {
        let group = 32;
        let k = groups * group;
        let w = &weights[..k * n];
        let q = quantize(w, k, n, format, group, zero_points).unwrap();
        let d = q.dequantize();
        prop_assert_eq!(unpack(&q.packed(), format.bits(), k * n), q.codes.clone());
        for (i, (&x, &y)) in w.iter().zip(&d).enumerate() {
            let scale = q.scales[(i / n / group) * n + i % n].to_f32();
            // Unsigned codes without zero points cover [0, max]: negative weights clamp to 0.
            let x = if matches!(format, WeightFormat::Unsigned(_)) && q.zeros.is_none() { x.max(0.0) } else { x };
            // The largest gap between neighbouring values is at most top·2^-m for floats and 1
            // for integers; rounding to nearest stays within half of it (plus fp16 scale rounding).
            let step = match format {
                WeightFormat::Float { mantissa, .. } => format.max_value() / (1u32 << mantissa) as f32,
                _ => 1.0,
            };
            let bound = scale * (0.5 * step + format.max_value() * 2e-3) + 1e-7;
            prop_assert!((x - y).abs() <= bound, "{} element {}: {} became {} (scale {})", format, i, x, y, scale);
        }
    }
}
