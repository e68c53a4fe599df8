//! GEMM shapes: `C[m×n] = A[m×k] · B[k×n]`, all row-major.

use crate::GemmError;
use std::fmt;
use std::str::FromStr;

/// The largest dimension accepted: kernels index with `u32` and add a tile offset to it, and
/// cuBLAS takes `int`, so every dimension stays below 2³¹.
pub const MAX_DIMENSION: usize = i32::MAX as usize;

/// The sizes of one matrix product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "harness", derive(serde::Serialize, serde::Deserialize))]
pub struct GemmShape {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Columns of A and rows of B (the reduction length).
    pub k: usize,
}

impl GemmShape {
    /// A shape, checked: every dimension in `1..=MAX_DIMENSION`.
    pub fn new(m: usize, n: usize, k: usize) -> Result<Self, GemmError> {
        if m == 0 || n == 0 || k == 0 {
            return Err(GemmError::ZeroDimension { m, n, k });
        }
        for (name, value) in [("m", m), ("n", n), ("k", k)] {
            if value > MAX_DIMENSION {
                return Err(GemmError::DimensionTooLarge {
                    name,
                    value,
                    max: MAX_DIMENSION,
                });
            }
        }
        Ok(GemmShape { m, n, k })
    }

    /// A square shape `size × size × size`.
    pub fn square(size: usize) -> Result<Self, GemmError> {
        Self::new(size, size, size)
    }

    /// Floating-point operations of the product: one multiply and one add per term.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Elements of A, B and C.
    pub fn elements(&self) -> (usize, usize, usize) {
        (self.m * self.k, self.k * self.n, self.m * self.n)
    }

    /// Checks that buffers of these lengths hold A, B and C of this shape.
    pub fn check_buffers(&self, a: usize, b: usize, c: usize) -> Result<(), GemmError> {
        let checks = [
            ("A", self.m, self.k, a),
            ("B", self.k, self.n, b),
            ("C", self.m, self.n, c),
        ];
        for (name, rows, cols, actual) in checks {
            if rows * cols != actual {
                return Err(GemmError::BufferSize {
                    name,
                    rows,
                    cols,
                    expected: rows * cols,
                    actual,
                });
            }
        }
        Ok(())
    }
}

impl fmt::Display for GemmShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}×{}×{}", self.m, self.n, self.k)
    }
}

/// Parses `MxNxK` (or `M×N×K`), or a single `S` for a square `S×S×S`.
impl FromStr for GemmShape {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(['x', 'X', '×']).map(str::trim).collect();
        let numbers: Vec<usize> = parts
            .iter()
            .map(|p| {
                p.parse::<usize>()
                    .map_err(|_| format!("{p:?} in shape {text:?} is not a whole number"))
            })
            .collect::<Result<_, _>>()?;
        let shape = match numbers.as_slice() {
            [s] => GemmShape::square(*s),
            [m, n, k] => GemmShape::new(*m, *n, *k),
            _ => return Err(format!("shape {text:?} must be MxNxK or a single size S")),
        };
        shape.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_shapes() {
        let s = GemmShape::new(3, 5, 7).unwrap();
        assert_eq!((s.m, s.n, s.k), (3, 5, 7));
        assert_eq!(
            GemmShape::square(9).unwrap(),
            GemmShape::new(9, 9, 9).unwrap()
        );
        let big = GemmShape::new(MAX_DIMENSION, MAX_DIMENSION, MAX_DIMENSION).unwrap();
        assert_eq!(big.m, MAX_DIMENSION);
        assert_eq!(MAX_DIMENSION, (1usize << 31) - 1);
    }

    #[test]
    fn rejects_zero_dimensions() {
        for (m, n, k) in [(0, 1, 1), (1, 0, 1), (1, 1, 0), (0, 0, 0)] {
            match GemmShape::new(m, n, k) {
                Err(GemmError::ZeroDimension {
                    m: em,
                    n: en,
                    k: ek,
                }) => assert_eq!((em, en, ek), (m, n, k)),
                other => panic!("{m}×{n}×{k}: expected ZeroDimension, got {other:?}"),
            }
        }
        assert!(matches!(
            GemmShape::square(0),
            Err(GemmError::ZeroDimension { .. })
        ));
    }

    #[test]
    fn rejects_dimensions_over_the_limit() {
        let over = MAX_DIMENSION + 1;
        for (index, expected_name) in ["m", "n", "k"].into_iter().enumerate() {
            let mut dims = [1usize; 3];
            dims[index] = over;
            match GemmShape::new(dims[0], dims[1], dims[2]) {
                Err(GemmError::DimensionTooLarge { name, value, max }) => {
                    assert_eq!(name, expected_name);
                    assert_eq!(value, over);
                    assert_eq!(max, MAX_DIMENSION);
                }
                other => panic!("{dims:?}: expected DimensionTooLarge, got {other:?}"),
            }
        }
        // A zero is reported before a size.
        assert!(matches!(
            GemmShape::new(0, over, 1),
            Err(GemmError::ZeroDimension { .. })
        ));
        assert!(matches!(
            GemmShape::new(usize::MAX, 1, 1),
            Err(GemmError::DimensionTooLarge { name: "m", .. })
        ));
    }

    #[test]
    fn parses_shapes() {
        let s = |m, n, k| GemmShape::new(m, n, k).unwrap();
        assert_eq!("64x32x16".parse::<GemmShape>(), Ok(s(64, 32, 16)));
        assert_eq!("64X32X16".parse::<GemmShape>(), Ok(s(64, 32, 16)));
        assert_eq!("127×129×131".parse::<GemmShape>(), Ok(s(127, 129, 131)));
        assert_eq!(" 4 x 5 x 6 ".parse::<GemmShape>(), Ok(s(4, 5, 6)));
        assert_eq!("4096".parse::<GemmShape>(), Ok(s(4096, 4096, 4096)));
        assert_eq!("1x1x1".parse::<GemmShape>(), Ok(s(1, 1, 1)));
    }

    #[test]
    fn rejects_bad_shape_strings() {
        for text in [
            "", "x", "abc", "1x2", "1x2x3x4", "1.5x2x3", "-1x2x3", "1x2x", "1,2,3", "1 2 3",
        ] {
            let err = text
                .parse::<GemmShape>()
                .expect_err(&format!("{text:?} must not parse"));
            assert!(!err.is_empty());
        }
        let err = "abcx2x3".parse::<GemmShape>().unwrap_err();
        assert!(err.contains("\"abc\"") && err.contains("abcx2x3"), "{err}");
        let err = "1x2".parse::<GemmShape>().unwrap_err();
        assert!(err.contains("MxNxK"), "{err}");
        let err = "0x5x5".parse::<GemmShape>().unwrap_err();
        assert!(err.contains("0×5×5") && err.contains("at least 1"), "{err}");
        let err = "0".parse::<GemmShape>().unwrap_err();
        assert!(err.contains("at least 1"), "{err}");
        let err = "3000000000x1x1".parse::<GemmShape>().unwrap_err();
        assert!(err.contains("too large"), "{err}");
    }

    #[test]
    fn displays_with_times_signs() {
        let s = GemmShape::new(127, 129, 131).unwrap();
        assert_eq!(s.to_string(), "127×129×131");
        assert_eq!(s.to_string().parse::<GemmShape>(), Ok(s));
    }

    #[test]
    fn check_buffers_catches_each_mismatch() {
        let s = GemmShape::new(2, 3, 4).unwrap();
        assert_eq!(s.elements(), (8, 12, 6));
        s.check_buffers(8, 12, 6).unwrap();
        let cases = [
            ((7, 12, 6), "A", 2, 4, 8, 7),
            ((8, 13, 6), "B", 4, 3, 12, 13),
            ((8, 12, 5), "C", 2, 3, 6, 5),
            ((0, 12, 6), "A", 2, 4, 8, 0),
            // Right total, wrong operand (A and C swapped lengths).
            ((6, 12, 8), "A", 2, 4, 8, 6),
        ];
        for ((a, b, c), want_name, want_rows, want_cols, want_expected, want_actual) in cases {
            match s.check_buffers(a, b, c) {
                Err(GemmError::BufferSize {
                    name,
                    rows,
                    cols,
                    expected,
                    actual,
                }) => {
                    assert_eq!(
                        (name, rows, cols, expected, actual),
                        (want_name, want_rows, want_cols, want_expected, want_actual),
                        "buffers ({a}, {b}, {c})"
                    );
                }
                other => panic!("buffers ({a}, {b}, {c}): expected BufferSize, got {other:?}"),
            }
        }
        // Only C wrong: the C check is reached.
        let s = GemmShape::new(5, 5, 5).unwrap();
        assert!(matches!(
            s.check_buffers(25, 25, 24),
            Err(GemmError::BufferSize { name: "C", .. })
        ));
    }

    #[test]
    fn flops() {
        assert_eq!(GemmShape::new(1, 1, 1).unwrap().flops(), 2.0);
        assert_eq!(GemmShape::new(2, 3, 4).unwrap().flops(), 48.0);
        assert_eq!(
            GemmShape::square(4096).unwrap().flops(),
            2.0 * 4096f64.powi(3)
        );
        // No integer overflow at the largest shape.
        let big = GemmShape::square(MAX_DIMENSION).unwrap();
        assert!(big.flops() > 1.9e28 && big.flops().is_finite());
    }
}
