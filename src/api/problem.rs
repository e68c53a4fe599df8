//! Validation: a [`MatmulDesc`](super::MatmulDesc) and the buffers of one call, checked into a
//! [`Problem`] (every size, leading dimension, stride and buffer extent known to be
//! consistent) before anything is launched. A pure function of numbers, so it is tested
//! without a GPU.

use super::desc::{Activation, BLayout};
use super::element::DType;
use crate::GemmError;
use crate::shape::MAX_DIMENSION;

/// The device addresses and lengths (in elements) of one call's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffers {
    /// A's address and length.
    pub a: (u64, usize),
    /// B's address and length.
    pub b: (u64, usize),
    /// C's address and length.
    pub c: (u64, usize),
    /// The bias's address and length, if any.
    pub bias: Option<(u64, usize)>,
}

/// What the description asked for, apart from the buffers (sizes as given, unchecked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// Element type and arithmetic.
    pub dtype: DType,
    /// B's layout.
    pub b_layout: BLayout,
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// The reduction length.
    pub k: usize,
    /// Batch items.
    pub batch: usize,
    /// Leading dimensions, `None` for the row length.
    pub lds: (Option<usize>, Option<usize>, Option<usize>),
    /// Batch strides, `None` for packed items.
    pub strides: Option<(usize, usize, usize)>,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
    /// The activation.
    pub activation: Option<Activation>,
}

impl Request {
    /// What `MatmulDesc::new(m, n, k)` asks for with elements of `dtype` and B stored as
    /// `b_layout`: contiguous rows, one batch item, `alpha` 1, `beta` 0, no activation.
    pub const fn contiguous(dtype: DType, b_layout: BLayout, m: usize, n: usize, k: usize) -> Self {
        Self {
            dtype,
            b_layout,
            m,
            n,
            k,
            batch: 1,
            lds: (None, None, None),
            strides: None,
            alpha: 1.0,
            beta: 0.0,
            activation: None,
        }
    }
}

/// A validated call: every field consistent with every buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// Element type and arithmetic.
    pub dtype: DType,
    /// B's layout.
    pub b_layout: BLayout,
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// The reduction length.
    pub k: usize,
    /// Batch items.
    pub batch: usize,
    /// Leading dimension of A.
    pub lda: usize,
    /// Leading dimension of B.
    pub ldb: usize,
    /// Leading dimension of C.
    pub ldc: usize,
    /// Batch strides of A, B, C (0 when batch is 1).
    pub strides: (usize, usize, usize),
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
    /// The activation.
    pub activation: Option<Activation>,
    /// The buffers.
    pub buffers: Buffers,
}

impl Problem {
    /// Whether every base address is a multiple of `bytes` and every leading dimension and
    /// batch stride a multiple of `bytes / element size`: each row of every operand then starts
    /// on a `bytes` boundary, which 16-byte vector loads and TMA need.
    pub fn rows_aligned_to(&self, bytes: usize) -> bool {
        let elements = bytes / self.dtype.bytes();
        let addresses = [self.buffers.a.0, self.buffers.b.0, self.buffers.c.0];
        let lds = [self.lda, self.ldb, self.ldc];
        // Strides matter only between batch items.
        let strides = [self.strides.0, self.strides.1, self.strides.2];
        addresses.iter().all(|a| a % bytes as u64 == 0)
            && lds.iter().all(|ld| ld % elements == 0)
            && (self.batch == 1 || strides.iter().all(|s| s % elements == 0))
    }

    /// Whether every row of A and of B starts on a `bytes` boundary: their base addresses are
    /// multiples of `bytes`, and the leading dimension of each that has more than one row and
    /// (with a batch) their batch strides multiples of `bytes / element size`. C is not looked
    /// at: this is the rule for kernels that read A and B with 16-byte loads and store C
    /// element by element.
    pub fn input_rows_aligned_to(&self, bytes: usize) -> bool {
        self.a_rows_aligned_to(bytes) && self.b_rows_aligned_to(bytes)
    }

    /// Whether every row of A starts on a `bytes` boundary (as [`Problem::input_rows_aligned_to`]).
    pub fn a_rows_aligned_to(&self, bytes: usize) -> bool {
        self.matrix_rows_aligned_to(bytes, self.buffers.a.0, self.m, self.lda, self.strides.0)
    }

    /// Whether every row of B starts on a `bytes` boundary (as [`Problem::input_rows_aligned_to`]).
    pub fn b_rows_aligned_to(&self, bytes: usize) -> bool {
        let b_rows = match self.b_layout {
            BLayout::Kn => self.k,
            BLayout::Nk => self.n,
        };
        self.matrix_rows_aligned_to(bytes, self.buffers.b.0, b_rows, self.ldb, self.strides.1)
    }

    /// One matrix's part of [`Problem::input_rows_aligned_to`].
    fn matrix_rows_aligned_to(
        &self,
        bytes: usize,
        address: u64,
        rows: usize,
        ld: usize,
        stride: usize,
    ) -> bool {
        let elements = bytes / self.dtype.bytes();
        address.is_multiple_of(bytes as u64)
            && (rows == 1 || ld.is_multiple_of(elements))
            && (self.batch == 1 || stride.is_multiple_of(elements))
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch as f64
    }
}

/// The first element past the last one a `rows × cols` matrix with leading dimension `ld`
/// touches, or `None` on overflow.
fn extent(rows: usize, cols: usize, ld: usize) -> Option<usize> {
    (rows - 1).checked_mul(ld)?.checked_add(cols)
}

/// Checks `request` against `buffers`; every error is reported before any launch.
pub fn validate(request: &Request, buffers: Buffers) -> Result<Problem, GemmError> {
    let Request { m, n, k, batch, .. } = *request;
    if m == 0 || n == 0 || k == 0 {
        return Err(GemmError::ZeroDimension { m, n, k });
    }
    if batch == 0 {
        return Err(GemmError::ZeroBatch);
    }
    for (name, value) in [("m", m), ("n", n), ("k", k), ("batch", batch)] {
        if value > MAX_DIMENSION {
            return Err(GemmError::DimensionTooLarge {
                name,
                value,
                max: MAX_DIMENSION,
            });
        }
    }
    let (b_rows, b_cols) = match request.b_layout {
        BLayout::Kn => (k, n),
        BLayout::Nk => (n, k),
    };
    let operands = [
        ("A", m, k, request.lds.0),
        ("B", b_rows, b_cols, request.lds.1),
        ("C", m, n, request.lds.2),
    ];
    let mut lds = [0usize; 3];
    for (slot, &(operand, _, cols, ld)) in lds.iter_mut().zip(&operands) {
        let ld = ld.unwrap_or(cols);
        if ld < cols || ld > MAX_DIMENSION {
            return Err(GemmError::LeadingDimension {
                operand,
                ld,
                min: cols,
                max: MAX_DIMENSION,
            });
        }
        *slot = ld;
    }
    let overflow = |operand| GemmError::SizeOverflow { operand };
    let mut extents = [0usize; 3];
    for (slot, (&(operand, rows, cols, _), &ld)) in
        extents.iter_mut().zip(operands.iter().zip(&lds))
    {
        *slot = extent(rows, cols, ld).ok_or_else(|| overflow(operand))?;
    }
    let strides = if batch == 1 {
        (0, 0, 0)
    } else {
        match request.strides {
            Some(s) => s,
            None => (
                m.checked_mul(lds[0]).ok_or_else(|| overflow("A"))?,
                b_rows.checked_mul(lds[1]).ok_or_else(|| overflow("B"))?,
                m.checked_mul(lds[2]).ok_or_else(|| overflow("C"))?,
            ),
        }
    };
    if batch > 1 && strides.2 < extents[2] {
        return Err(GemmError::BatchStride {
            operand: "C",
            stride: strides.2,
            min: extents[2],
        });
    }
    let lens = [buffers.a.1, buffers.b.1, buffers.c.1];
    let stride_list = [strides.0, strides.1, strides.2];
    let mut needed = [0usize; 3];
    for i in 0..3 {
        let operand = operands[i].0;
        needed[i] = (batch - 1)
            .checked_mul(stride_list[i])
            .and_then(|x| x.checked_add(extents[i]))
            .ok_or_else(|| overflow(operand))?;
        if lens[i] < needed[i] {
            return Err(GemmError::BufferTooShort {
                operand,
                needed: needed[i],
                len: lens[i],
            });
        }
    }
    if let Some((_, len)) = buffers.bias
        && len < n
    {
        return Err(GemmError::BufferTooShort {
            operand: "bias",
            needed: n,
            len,
        });
    }
    // C is written: it must not share a byte with what is read.
    let size = request.dtype.bytes() as u64;
    let range = |address: u64, elements: usize| (address, address + elements as u64 * size);
    let c_range = range(buffers.c.0, needed[2]);
    let reads = [
        ("A", Some(range(buffers.a.0, needed[0]))),
        ("B", Some(range(buffers.b.0, needed[1]))),
        ("bias", buffers.bias.map(|(address, _)| range(address, n))),
    ];
    for (operand, read) in reads {
        if let Some((start, end)) = read
            && start < c_range.1
            && c_range.0 < end
        {
            return Err(GemmError::Overlap { operand });
        }
    }
    Ok(Problem {
        dtype: request.dtype,
        b_layout: request.b_layout,
        m,
        n,
        k,
        batch,
        lda: lds[0],
        ldb: lds[1],
        ldc: lds[2],
        strides,
        alpha: request.alpha,
        beta: request.beta,
        activation: request.activation,
        buffers,
    })
}
