//! A seeded generator of API calls for the fuzz tests: element type, exact or TF32, B layout,
//! shapes from 1 to a few thousand (primes, ones, powers of two and their neighbours), leading
//! dimensions larger than the row, views at offsets into larger buffers, alpha and beta, bias
//! and activation, batch with packed, gapped or shared (stride 0) items, and sometimes a forced
//! kernel. About one call in twenty carries one deliberate defect (a leading dimension below
//! its row, a buffer one element short, C's batch items overlapping) and must be refused with
//! the matching typed error.
//!
//! The same generator drives the CPU property test (`api_fuzz_props`: validation and dispatch
//! decisions, in CI) and the GPU fuzz run (`api_fuzz_gpu`: every call executed and checked
//! against the f64 reference). `Call::generate(seed, index)` depends only on its arguments, so
//! a failure prints `FUZZ_SEED` and `FUZZ_CASE` and replays alone.

use super::Rng;
use rust_gemm::api::dispatch::KERNELS;
use rust_gemm::api::problem::{Buffers, Request};
use rust_gemm::{Activation, BLayout, DType, GemmError};

/// The operands, in the order of [`Call::lens`] and [`Call::offsets`].
pub const OPERANDS: [&str; 4] = ["A", "B", "C", "bias"];

/// At most this many multiply-adds per call, so that the f64 reference of ten thousand calls
/// takes seconds: a dimension of a few thousand comes with small other ones.
const MULTIPLY_ADDS: usize = 3_000_000;

/// Dimensions that sit on or next to the kernels' tile and vector widths.
const EDGES: [usize; 22] = [
    1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
];

/// What is deliberately wrong with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    /// The leading dimension of operand 0, 1 or 2 (A, B, C) is one less than its row.
    LdBelowRow(usize),
    /// Buffer 0..=3 (A, B, C, bias) is one element shorter than the call needs.
    ShortBuffer(usize),
    /// C's batch stride is smaller than one item of C.
    OverlappingBatchItems,
}

/// One generated call: everything a `MatmulDesc` and its buffers say.
#[derive(Clone, Debug)]
pub struct Call {
    /// The run's seed.
    pub seed: u64,
    /// The call's index in the run.
    pub index: u64,
    /// Element type and arithmetic.
    pub dtype: DType,
    /// B's layout.
    pub layout: BLayout,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    /// Leading dimensions of A, B, C as the buffers hold them.
    pub lds: [usize; 3],
    /// Whether each leading dimension is passed to the description (else it is the row
    /// length, which the description's default must give).
    pub explicit_lds: [bool; 3],
    /// Batch strides of A, B, C (0 for A or B: one item shared by the whole batch).
    pub strides: [usize; 3],
    /// Whether the strides are passed to the description (else packed items).
    pub explicit_strides: bool,
    /// Elements before each view in its allocation (A, B, C, bias).
    pub offsets: [usize; 4],
    /// Each view's length in elements (bias: 0 when there is none).
    pub lens: [usize; 4],
    pub alpha: f32,
    pub beta: f32,
    pub bias: bool,
    pub activation: Option<Activation>,
    /// A kernel forced through `MatmulDesc::kernel`.
    pub kernel: Option<&'static str>,
    /// Split-K slices forced through `MatmulDesc::split_k`.
    pub split_k: Option<u32>,
    pub defect: Option<Defect>,
}

/// A dimension: an edge value, or log-uniform in [1, 3000].
fn dimension(rng: &mut Rng) -> usize {
    if rng.chance(0.35) {
        rng.pick(&EDGES)
    } else {
        (3000f64.powf(rng.unit())).round().max(1.0) as usize
    }
}

impl Call {
    /// The call number `index` of the run seeded with `seed`.
    pub fn generate(seed: u64, index: u64) -> Call {
        let mut rng = Rng::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let dtype = rng.pick(&[DType::F32, DType::Tf32, DType::F16, DType::Bf16]);
        let layout = rng.pick(&[BLayout::Kn, BLayout::Nk]);
        let batch = if rng.chance(0.7) { 1 } else { rng.range(2..=4) };
        let mut dims = [
            dimension(&mut rng),
            dimension(&mut rng),
            dimension(&mut rng),
        ];
        while dims.iter().product::<usize>() * batch > MULTIPLY_ADDS {
            let largest = (0..3).max_by_key(|&i| dims[i]).expect("three");
            dims[largest] = dims[largest].div_ceil(2);
        }
        let [m, n, k] = dims;
        let (b_rows, b_cols) = match layout {
            BLayout::Kn => (k, n),
            BLayout::Nk => (n, k),
        };
        // Half the calls keep every row 16-byte aligned (what the TMA and vector paths need),
        // the rest are ragged anywhere.
        let aligned = rng.chance(0.5);
        let unit = if aligned { 16 / dtype.bytes() } else { 1 };
        let round = |x: usize| x.div_ceil(unit) * unit;
        let rows = [m, b_rows, m];
        let cols = [k, b_cols, n];
        let mut lds = [0; 3];
        let mut explicit_lds = [false; 3];
        for i in 0..3 {
            let pad = if rng.chance(0.5) {
                0
            } else {
                rng.range(1..=20)
            };
            lds[i] = round(cols[i] + pad);
            explicit_lds[i] = lds[i] != cols[i] || rng.chance(0.3);
        }
        let extent = |i: usize, lds: &[usize; 3]| (rows[i] - 1) * lds[i] + cols[i];
        let explicit_strides = batch > 1 && rng.chance(0.6);
        let mut strides = [0; 3];
        if batch > 1 {
            for (i, stride) in strides.iter_mut().enumerate() {
                *stride = if explicit_strides {
                    if i < 2 && rng.chance(0.15) {
                        0
                    } else {
                        round(extent(i, &lds) + rng.range(0..=10))
                    }
                } else {
                    rows[i] * lds[i]
                };
            }
        }
        let alpha = if rng.chance(0.5) {
            1.0
        } else {
            (rng.signed_unit() * 2.0) as f32
        };
        let beta = match rng.range(0..=5) {
            0..=2 => 0.0,
            3 => 1.0,
            _ => (rng.signed_unit() * 2.0) as f32,
        };
        let bias = rng.chance(0.4);
        let activation = match rng.range(0..=5) {
            0..=2 => None,
            3 => Some(Activation::Relu),
            4 => Some(Activation::LeakyRelu(rng.pick(&[0.01, 0.1, 0.5]))),
            _ => Some(Activation::GeluTanh),
        };
        let kernel = if rng.chance(0.25) {
            let names: Vec<&'static str> = kernel_names(dtype, layout);
            Some(rng.pick(&names))
        } else {
            None
        };
        let split_k = rng.chance(0.15).then(|| rng.pick(&[1, 2, 3, 8, 64]));
        let mut offsets = [0; 4];
        for offset in &mut offsets {
            *offset = if aligned {
                rng.range(0..=4) * unit
            } else {
                rng.range(0..=9)
            };
        }
        let mut call = Call {
            seed,
            index,
            dtype,
            layout,
            m,
            n,
            k,
            batch,
            lds,
            explicit_lds,
            strides,
            explicit_strides,
            offsets,
            lens: [0; 4],
            alpha,
            beta,
            bias,
            activation,
            kernel,
            split_k,
            defect: None,
        };
        if rng.chance(0.05) {
            call.defect = call.pick_defect(&mut rng);
        }
        if let Some(Defect::LdBelowRow(i)) = call.defect {
            call.lds[i] = cols[i] - 1;
            call.explicit_lds[i] = true;
        }
        if call.defect == Some(Defect::OverlappingBatchItems) {
            call.strides[2] = extent(2, &call.lds) - 1;
        }
        // Lengths as the (defect-free) extents need them, plus some slack.
        for i in 0..3 {
            let needed = if call.defect == Some(Defect::LdBelowRow(i)) {
                1
            } else {
                (batch - 1) * call.strides[i] + extent(i, &call.lds)
            };
            call.lens[i] = needed
                + if rng.chance(0.5) {
                    0
                } else {
                    rng.range(1..=16)
                };
        }
        call.lens[3] = if bias { n + rng.range(0..=3) } else { 0 };
        if let Some(Defect::ShortBuffer(i)) = call.defect {
            call.lens[i] = call.needed(i) - 1;
        }
        call
    }

    /// A defect this call can carry (`None` if it cannot carry the one drawn).
    fn pick_defect(&self, rng: &mut Rng) -> Option<Defect> {
        let cols = [self.k, self.b_cols(), self.n];
        match rng.range(0..=2) {
            0 => {
                let i = rng.range(0..=2);
                (cols[i] > 1).then_some(Defect::LdBelowRow(i))
            }
            1 => {
                let i = rng.range(0..=3);
                (i < 3 || self.bias).then_some(Defect::ShortBuffer(i))
            }
            _ => (self.batch > 1 && self.explicit_strides).then_some(Defect::OverlappingBatchItems),
        }
    }

    /// B's rows and columns as stored.
    pub fn b_rows(&self) -> usize {
        match self.layout {
            BLayout::Kn => self.k,
            BLayout::Nk => self.n,
        }
    }

    /// B's columns as stored.
    pub fn b_cols(&self) -> usize {
        match self.layout {
            BLayout::Kn => self.n,
            BLayout::Nk => self.k,
        }
    }

    /// Elements operand `i` (A, B, C, bias) must hold for this call.
    pub fn needed(&self, i: usize) -> usize {
        if i == 3 {
            return self.n;
        }
        let rows = [self.m, self.b_rows(), self.m][i];
        let cols = [self.k, self.b_cols(), self.n][i];
        (self.batch - 1) * self.strides[i] + (rows - 1) * self.lds[i] + cols
    }

    /// Each allocation's length: the view's offset plus its length plus a tail that must stay
    /// untouched.
    pub fn allocation(&self, i: usize) -> usize {
        self.offsets[i] + self.lens[i] + 7
    }

    /// The request as `Gemm` would build it from the description.
    pub fn request(&self) -> Request {
        let ld = |i: usize| self.explicit_lds[i].then_some(self.lds[i]);
        Request {
            dtype: self.dtype,
            b_layout: self.layout,
            m: self.m,
            n: self.n,
            k: self.k,
            batch: self.batch,
            lds: (ld(0), ld(1), ld(2)),
            strides: self.explicit_strides.then_some((
                self.strides[0],
                self.strides[1],
                self.strides[2],
            )),
            alpha: self.alpha,
            beta: self.beta,
            activation: self.activation,
        }
    }

    /// The buffers at `bases` (the allocations' device addresses), each view at its offset.
    pub fn buffers(&self, bases: [u64; 4]) -> Buffers {
        let size = self.dtype.bytes() as u64;
        let view = |i: usize| (bases[i] + self.offsets[i] as u64 * size, self.lens[i]);
        Buffers {
            a: view(0),
            b: view(1),
            c: view(2),
            bias: self.bias.then(|| view(3)),
        }
    }

    /// Whether `error` is the one this call's defect must produce (`false` for a call without
    /// a defect: it must not fail validation).
    pub fn expects(&self, error: &GemmError) -> bool {
        match (self.defect, error) {
            (Some(Defect::LdBelowRow(i)), GemmError::LeadingDimension { operand, .. }) => {
                *operand == OPERANDS[i]
            }
            (Some(Defect::ShortBuffer(i)), GemmError::BufferTooShort { operand, .. }) => {
                *operand == OPERANDS[i]
            }
            (Some(Defect::OverlappingBatchItems), GemmError::BatchStride { operand, .. }) => {
                *operand == "C"
            }
            _ => false,
        }
    }

    /// How to replay this call alone.
    pub fn replay(&self, test: &str) -> String {
        format!(
            "FUZZ_SEED={} FUZZ_CASE={} cargo test --release --test {test} -- --include-ignored",
            self.seed, self.index
        )
    }
}

/// The distinct kernel names dispatch knows for (`dtype`, `layout`).
pub fn kernel_names(dtype: DType, layout: BLayout) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = KERNELS
        .iter()
        .filter(|k| k.dtype == dtype && k.b_layout == layout)
        .map(|k| k.name)
        .collect();
    names.dedup();
    names
}

/// The run's seed: `FUZZ_SEED` if set (decimal or 0x-hex), else `default`.
pub fn seed_from_env(default: u64) -> u64 {
    match std::env::var("FUZZ_SEED") {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("FUZZ_SEED={text} is not a number"))
        }
        Err(_) => default,
    }
}

/// The indices to run: `FUZZ_CASE` alone if set, else `0..FUZZ_CASES` (default `default`).
pub fn indices_from_env(default: u64) -> std::ops::Range<u64> {
    let number = |name: &str| {
        std::env::var(name).ok().map(|text| {
            text.trim()
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{name}={text} is not a number"))
        })
    };
    match number("FUZZ_CASE") {
        Some(index) => index..index + 1,
        None => 0..number("FUZZ_CASES").unwrap_or(default),
    }
}
