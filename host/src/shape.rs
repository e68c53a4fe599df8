//! GEMM shapes: `C[m×n] = A[m×k] · B[k×n]`, all row-major.

use crate::GemmError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The largest dimension accepted: kernels index with `u32` and add a tile offset to it, and
/// cuBLAS takes `int`, so every dimension stays below 2³¹.
pub const MAX_DIMENSION: usize = i32::MAX as usize;

/// The sizes of one matrix product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
