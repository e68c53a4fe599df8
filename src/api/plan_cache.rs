//! The plans of a `Gemm`'s recent calls, so that a call repeated on the same shape (every
//! step of a model, a benchmark's launches) skips dispatch: choosing among the kernels costs
//! 3–6 µs of host time on Hopper (every kernel's refusal and cost-model checks, the reasons
//! written out), as long as a small product's whole kernel.
//!
//! A plan depends only on the device (fixed for a `Gemm`), the validated [`Problem`] (shape,
//! layout, leading dimensions, strides, epilogue and buffers) and what the description forces
//! (kernel, split, stream-K), so an equal key gives the same plan. Of a buffer's address,
//! dispatch reads only whether it is a multiple of 16 bytes (16-byte loads, TMA base
//! addresses): the key keeps each address modulo [`KEY_ADDRESS_ALIGNMENT`], a power of two at
//! least that large, so a call on other buffers of the same alignment (a decode step's fresh
//! activations, a benchmark's rotated copies) replays the plan too, while one whose alignment
//! differs is planned anew. The launch always takes the call's own addresses; only the choice
//! is replayed.

use super::dispatch::Plan;
use super::problem::Problem;

/// Plans kept at most; the oldest goes first.
pub const PLAN_CACHE: usize = 32;

/// A key keeps each buffer address modulo this many bytes: every alignment dispatch asks about
/// (16 bytes, [`Problem::rows_aligned_to`] and the kernels' `row_alignment`) divides it, so two
/// problems that agree on their addresses modulo it get the same plan.
pub const KEY_ADDRESS_ALIGNMENT: u64 = 256;

/// `problem` as the cache compares it: its addresses modulo [`KEY_ADDRESS_ALIGNMENT`].
pub fn key(problem: &Problem) -> Problem {
    let class = |(address, len): (u64, usize)| (address % KEY_ADDRESS_ALIGNMENT, len);
    let mut key = *problem;
    key.buffers.a = class(key.buffers.a);
    key.buffers.b = class(key.buffers.b);
    key.buffers.c = class(key.buffers.c);
    key.buffers.bias = key.buffers.bias.map(class);
    key
}

/// What a call forces besides its problem: `MatmulDesc::kernel`, `split_k` and `stream_k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Forced {
    /// The kernel asked for by name.
    pub kernel: Option<String>,
    /// The slices of k asked for.
    pub split_k: Option<u32>,
    /// Stream-K asked on or off.
    pub stream_k: Option<bool>,
}

/// The last [`PLAN_CACHE`] plans by (problem [`key`], forced choices).
#[derive(Debug, Default)]
pub struct PlanCache {
    entries: Vec<(Problem, Forced, Plan)>,
}

impl PlanCache {
    /// The plan of an earlier call with this problem (as [`key`] compares it) and these forced
    /// choices, else the one `choose` makes (kept if it succeeds; a refusal is not kept, and is
    /// made again next time).
    pub fn get_or_choose<E>(
        &mut self,
        problem: &Problem,
        kernel: Option<&str>,
        split_k: Option<u32>,
        stream_k: Option<bool>,
        choose: impl FnOnce() -> Result<Plan, E>,
    ) -> Result<Plan, E> {
        let problem = key(problem);
        let hit = self.entries.iter().find(|(p, f, _)| {
            *p == problem
                && f.kernel.as_deref() == kernel
                && f.split_k == split_k
                && f.stream_k == stream_k
        });
        if let Some((_, _, plan)) = hit {
            return Ok(plan.clone());
        }
        let plan = choose()?;
        if self.entries.len() >= PLAN_CACHE {
            self.entries.remove(0);
        }
        let forced = Forced {
            kernel: kernel.map(str::to_string),
            split_k,
            stream_k,
        };
        self.entries.push((problem, forced, plan.clone()));
        Ok(plan)
    }

    /// Plans kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no plan is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
