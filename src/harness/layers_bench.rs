//! A sequence of quantized layers run eagerly against the same sequence replayed from a CUDA
//! graph (`sgemm-ladder dequant-layers`): what the host's launch gaps cost between layers of
//! 20–30 µs, and what [`Gemm::capture`] saves of it.
//!
//! Each layer is a [`QuantizedWeights`] of random codes (the dequant benchmark's
//! [`RandomWeights`], scales divided by √k so that activations keep their size through the
//! sequence), multiplied through the library's API: `x → layer 0 → h₀ → layer 1 → …`. Timing:
//! warm-up launches (at least 50 ms of them), then per repetition, alternately, the eager
//! sequence, the graph launch and each layer alone, each after an L2 flush and with the device
//! idle (synchronized) before its first CUDA event, so that what the host takes to queue the
//! work is in the time; medians are reported. The replay's output is checked against the eager
//! sequence's: bit for bit where every layer sums in a fixed order
//! ([`QuantizedWeights::reproducible`]), else within a small relative difference.

use crate::harness::bench::median;
use crate::harness::dequant_bench::{RandomWeights, WeightCase};
use crate::harness::gpu::module_for;
use crate::ptx::PtxModule;
use crate::quant::fast::ActivationType;
use crate::quant::format::WeightFormat;
use crate::runtime::{Runtime, open_context};
use crate::{Gemm, GemmElement, GemmError, GemmGraph, QuantizedActivation, QuantizedWeights};
use cudarc::driver::CudaSlice;
use half::f16;
use serde::{Deserialize, Serialize};

/// The weights of a sequence: one format and group for every layer.
#[derive(Clone, Debug)]
pub struct LayersCase {
    /// Weight format.
    pub format: WeightFormat,
    /// Rows of k per scale (each layer's k for per-channel scales: `None`).
    pub group: Option<usize>,
    /// The activations' type.
    pub activation: ActivationType,
    /// Each layer's `(k, n)`; each layer's n is the next one's k.
    pub layers: Vec<(usize, usize)>,
}

impl LayersCase {
    /// Refuses a sequence whose layers do not chain or whose group the kernels do not take.
    pub fn check(&self) -> Result<(), GemmError> {
        if self.layers.is_empty() {
            return Err(GemmError::ZeroDimension { m: 1, n: 0, k: 0 });
        }
        for pair in self.layers.windows(2) {
            let ((_, n), (k, _)) = (pair[0], pair[1]);
            if n != k {
                return Err(GemmError::BufferSize {
                    name: "the next layer's input",
                    rows: 1,
                    cols: k,
                    expected: k,
                    actual: n,
                });
            }
        }
        for &(k, n) in &self.layers {
            crate::GemmShape::new(1, n, k)?;
            let case = self.weight_case(k, n);
            if case.format != WeightFormat::F16 {
                if !k.is_multiple_of(case.group) {
                    return Err(GemmError::GroupSize {
                        group: case.group,
                        k,
                    });
                }
                crate::quant::prepack::check_group(case.format, case.group, k)?;
            }
        }
        Ok(())
    }

    fn weight_case(&self, k: usize, n: usize) -> WeightCase {
        WeightCase {
            format: self.format,
            group: self.group.unwrap_or(k),
            zero_points: false,
            k,
            n,
        }
    }
}

/// Timing settings.
#[derive(Clone, Copy, Debug)]
pub struct LayersOptions {
    /// Untimed repetitions first (warm-up also lasts at least 50 ms of GPU time).
    pub warmup: usize,
    /// Timed repetitions; medians are reported.
    pub reps: usize,
    /// Seed of the weights and activations.
    pub seed: u64,
}

/// One sequence at one m: eager, graph and per-layer medians, and the replay's check.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LayersRecord {
    /// The GPU.
    pub device: String,
    /// The `.target` of the PTX module the kernels ran from.
    pub ptx_target: String,
    /// Weight format.
    pub format: String,
    /// Rows of k per scale (0: per-channel).
    pub group: usize,
    /// The activations' type (`f16`, `bf16`).
    pub activation: String,
    /// The layers, `k×n` each.
    pub layers: Vec<String>,
    /// Rows of activations.
    pub m: usize,
    /// Each layer's path (`dequant-decode`, `dequant-batched`, `dequant-prefill`).
    pub paths: Vec<String>,
    /// Median time of the sequence queued eagerly, one call per layer, microseconds.
    pub eager_us: f64,
    /// Median time of one launch of the captured graph, microseconds.
    pub graph_us: f64,
    /// Median time of each layer alone, microseconds.
    pub layer_us: Vec<f64>,
    /// The sum of `layer_us`.
    pub layer_sum_us: f64,
    /// Timed repetitions behind each median.
    pub reps: usize,
    /// Seed of the weights and activations.
    pub seed: u64,
    /// Whether every layer sums in a fixed order, so that replay and eager run must agree bit
    /// for bit.
    pub reproducible: bool,
    /// Elements of the last layer's output whose bits differ between replay and eager run.
    pub differing: usize,
    /// The largest difference between them, relative to the eager output's largest magnitude.
    pub max_relative_difference: f64,
    /// The replay agreed with the eager run (bit for bit where `reproducible`, else within
    /// [`MAX_RELATIVE_DIFFERENCE`], with the same non-finite values).
    pub passed: bool,
}

impl LayersRecord {
    /// What identifies a measurement: a later run of the same replaces it in a report.
    pub fn same_case(&self, other: &LayersRecord) -> bool {
        (
            &self.device,
            &self.ptx_target,
            &self.format,
            self.group,
            &self.activation,
            &self.layers,
            self.m,
        ) == (
            &other.device,
            &other.ptx_target,
            &other.format,
            other.group,
            &other.activation,
            &other.layers,
            other.m,
        )
    }
}

/// How far replay and eager run may differ where the decode kernels' atomic adds make the
/// rounding depend on the blocks' order: relative to the output's largest magnitude, a few
/// fp16/bf16 ulps carried through the layers (a replay that read stale inputs or skipped a
/// layer is off by the whole magnitude).
pub const MAX_RELATIVE_DIFFERENCE: f64 = 1.0 / 64.0;

/// Warm-up lasts at least this long (GPU time), beyond the asked-for repetitions.
const WARMUP_MS: f64 = 50.0;

/// A `Gemm` on device 0 that can capture: a stream of its own on a context whose cudarc event
/// tracking is off (the benchmark orders its one stream itself), with `module` (`None`: the
/// one built for the device). Fails with [`GemmError::NoGpu`] without a GPU.
pub fn open_capturable(module: Option<&'static PtxModule>) -> Result<Gemm, GemmError> {
    let context = open_context(0)?;
    // SAFETY: no buffer exists on this context object yet, and everything the benchmark
    // allocates is used on the one stream below.
    unsafe { context.disable_event_tracking() };
    let module = module_for(&context, module)?;
    let stream = context
        .new_stream()
        .map_err(|e| GemmError::cuda("creating a stream", e))?;
    Ok(Gemm::from_runtime(Runtime::with_ptx(stream, module.text)?))
}

/// The sequence's weights on one `Gemm`, and the buffer that flushes the L2 cache.
pub struct LayersBench<'g> {
    gemm: &'g Gemm,
    case: LayersCase,
    weights: Vec<QuantizedWeights>,
    flush: CudaSlice<u8>,
    seed: u64,
}

impl<'g> LayersBench<'g> {
    /// Draws, packs and uploads the layers' weights (random codes; scales divided by √k).
    pub fn new(gemm: &'g Gemm, case: &LayersCase, seed: u64) -> Result<Self, GemmError> {
        case.check()?;
        let mut weights = Vec::with_capacity(case.layers.len());
        for (i, &(k, n)) in case.layers.iter().enumerate() {
            let mut random =
                RandomWeights::new(case.weight_case(k, n), seed.wrapping_add(i as u64))?;
            // The codes' values are about ±1: scaled by 1/√k, each layer keeps its input's size
            // (fp16 weights, which have no scales, keep theirs).
            let shrink = 1.0 / (k as f32).sqrt();
            for scale in &mut random.scales {
                *scale = f16::from_f32(scale.to_f32() * shrink);
            }
            weights.push(QuantizedWeights::from_prepacked(gemm, &random.prepack()?)?);
        }
        let l2 = gemm.device().l2_bytes.max(1 << 20);
        let flush = gemm
            .stream()
            .alloc_zeros::<u8>(2 * l2)
            .map_err(|e| GemmError::cuda("allocating the L2 flush buffer", e))?;
        Ok(LayersBench {
            gemm,
            case: case.clone(),
            weights,
            flush,
            seed,
        })
    }

    /// Times the sequence at `m` rows eagerly, as a graph and layer by layer, and checks the
    /// replay against the eager run.
    pub fn run(&mut self, m: usize, options: &LayersOptions) -> Result<LayersRecord, GemmError> {
        match self.case.activation {
            ActivationType::F16 => self.run_as::<f16>(m, options),
            ActivationType::Bf16 => self.run_as::<half::bf16>(m, options),
        }
    }

    fn run_as<T: QuantizedActivation>(
        &mut self,
        m: usize,
        options: &LayersOptions,
    ) -> Result<LayersRecord, GemmError> {
        let gemm = self.gemm;
        let stream = gemm.stream().clone();
        let alloc = |len: usize| {
            stream
                .alloc_zeros::<T>(len)
                .map_err(|e| GemmError::cuda("allocating activations", e))
        };
        let (k0, _) = self.case.layers[0];
        let x_host: Vec<T> = crate::check::cpu::random_matrix(m * k0, self.seed ^ m as u64)
            .into_iter()
            .map(|v| T::from_f64(v as f64))
            .collect();
        let x = stream
            .clone_htod(&x_host)
            .map_err(|e| GemmError::cuda("copying the activations", e))?;
        let mut outputs = self
            .case
            .layers
            .iter()
            .map(|&(_, n)| alloc(m * n))
            .collect::<Result<Vec<_>, _>>()?;
        for w in &self.weights {
            w.reserve(gemm, m)?;
        }
        let (weights, flush) = (&self.weights, &mut self.flush);
        let mut timed = |work: &mut dyn FnMut() -> Result<(), GemmError>| timed(gemm, flush, work);
        // Once eagerly: the prefill GEMM makes its state for these buffers, which the capture
        // then finds (and the first launches' costs stay out of the timing).
        run_sequence(gemm, weights, &x, &mut outputs, m)?;
        let graph = gemm.capture(|gemm| run_sequence(gemm, weights, &x, &mut outputs, m))?;
        graph.upload()?;

        let mut warm_ms = 0.0;
        let mut round = 0;
        while round < options.warmup || warm_ms < WARMUP_MS {
            warm_ms += timed(&mut || run_sequence(gemm, weights, &x, &mut outputs, m))?;
            warm_ms += timed(&mut || launch(&graph))?;
            round += 1;
            if round >= 2000 {
                break;
            }
        }
        let layers = weights.len();
        let (mut eager, mut replay) = (Vec::new(), Vec::new());
        let mut alone = vec![Vec::new(); layers];
        for _ in 0..options.reps {
            eager.push(timed(&mut || {
                run_sequence(gemm, weights, &x, &mut outputs, m)
            })?);
            replay.push(timed(&mut || launch(&graph))?);
            for (i, times) in alone.iter_mut().enumerate() {
                let (before, after) = outputs.split_at_mut(i);
                let input = if i == 0 { &x } else { &before[i - 1] };
                times.push(timed(&mut || {
                    weights[i].matmul(gemm, input, &mut after[0], m)
                })?);
            }
        }

        // The replay against the eager run, on the same x.
        let download = |buffer: &CudaSlice<T>| {
            stream
                .clone_dtoh(buffer)
                .map_err(|e| GemmError::cuda("copying the output back", e))
        };
        run_sequence(gemm, weights, &x, &mut outputs, m)?;
        let expected = download(outputs.last().expect("at least one layer"))?;
        // NaN everywhere first, so that a replay that wrote nothing cannot pass.
        for output in &mut outputs {
            gemm.runtime().poison(output)?;
        }
        launch(&graph)?;
        let replayed = download(outputs.last().expect("at least one layer"))?;
        gemm.synchronize()?;
        let mut reproducible = true;
        for w in weights {
            reproducible &= w.reproducible::<T>(gemm, m)?;
        }
        let (differing, max_relative_difference, same_non_finite) = compare(&replayed, &expected);
        let passed = if reproducible {
            differing == 0
        } else {
            same_non_finite && max_relative_difference <= MAX_RELATIVE_DIFFERENCE
        };

        let to_us = |ms: &[f64]| median(ms) * 1e3;
        let layer_us: Vec<f64> = alone.iter().map(|t| to_us(t)).collect();
        Ok(LayersRecord {
            device: gemm.device().name.clone(),
            ptx_target: gemm.runtime().ptx_target().to_string(),
            format: self.case.format.to_string(),
            group: self.case.group.unwrap_or(0),
            activation: self.case.activation.label().to_string(),
            layers: self
                .case
                .layers
                .iter()
                .map(|(k, n)| format!("{k}x{n}"))
                .collect(),
            m,
            paths: weights
                .iter()
                .map(|w| w.path(gemm, m).label().to_string())
                .collect(),
            eager_us: to_us(&eager),
            graph_us: to_us(&replay),
            layer_sum_us: layer_us.iter().sum(),
            layer_us,
            reps: options.reps,
            seed: self.seed,
            reproducible,
            differing,
            max_relative_difference,
            passed,
        })
    }
}

/// Milliseconds `work` takes on the device after an L2 flush (`flush` zeroed), from an idle
/// device: the host's time to queue the work counts.
fn timed(
    gemm: &Gemm,
    flush: &mut CudaSlice<u8>,
    work: &mut dyn FnMut() -> Result<(), GemmError>,
) -> Result<f64, GemmError> {
    gemm.stream()
        .memset_zeros(flush)
        .map_err(|e| GemmError::cuda("flushing the L2 cache", e))?;
    gemm.synchronize()?;
    gemm.runtime().time_ms(work)
}

/// Queues `x → weights[0] → outputs[0] → weights[1] → …`.
fn run_sequence<T: QuantizedActivation>(
    gemm: &Gemm,
    weights: &[QuantizedWeights],
    x: &CudaSlice<T>,
    outputs: &mut [CudaSlice<T>],
    m: usize,
) -> Result<(), GemmError> {
    for (i, w) in weights.iter().enumerate() {
        let (before, after) = outputs.split_at_mut(i);
        let input = if i == 0 { x } else { &before[i - 1] };
        w.matmul(gemm, input, &mut after[0], m)?;
    }
    Ok(())
}

/// Launches `graph`, whose buffers the caller keeps alive on its one stream.
fn launch(graph: &GemmGraph) -> Result<(), GemmError> {
    // SAFETY: every caller holds the buffers the graph was captured with (x and the outputs of
    // `LayersBench::run_as`) until after its last launch, and uses them on this stream only.
    unsafe { graph.launch() }
}

/// Elements whose bits differ, the largest difference relative to `expected`'s largest finite
/// magnitude, and whether both have their non-finite values in the same places.
pub fn compare<T: GemmElement>(got: &[T], expected: &[T]) -> (usize, f64, bool) {
    let scale = expected
        .iter()
        .map(|v| v.to_f64().abs())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let (mut differing, mut largest, mut same_non_finite) = (0, 0.0f64, true);
    for (g, e) in got.iter().zip(expected) {
        let (g, e) = (g.to_f64(), e.to_f64());
        if g.to_bits() == e.to_bits() {
            continue;
        }
        differing += 1;
        if g.is_finite() && e.is_finite() {
            let difference = (g - e).abs() / if scale > 0.0 { scale } else { 1.0 };
            largest = largest.max(difference);
        } else {
            same_non_finite = false;
        }
    }
    (differing, largest, same_non_finite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_must_chain_and_take_the_kernels_groups() {
        let case = |layers: Vec<(usize, usize)>, group| LayersCase {
            format: WeightFormat::Unsigned(4),
            group,
            activation: ActivationType::F16,
            layers,
        };
        case(vec![(4096, 14336), (14336, 4096), (4096, 4096)], Some(128))
            .check()
            .unwrap();
        case(vec![(4096, 1024)], None).check().unwrap();
        assert!(matches!(
            case(vec![(4096, 14336), (4096, 4096)], Some(128)).check(),
            Err(GemmError::BufferSize { .. })
        ));
        assert!(matches!(
            case(vec![(4000, 1024)], Some(128)).check(),
            Err(GemmError::GroupSize { .. })
        ));
        assert!(matches!(
            case(vec![(4096, 1024)], Some(48)).check(),
            Err(GemmError::GroupSize { .. } | GemmError::UnsupportedGroup { .. })
        ));
        assert!(case(vec![], Some(128)).check().is_err());
        assert!(case(vec![(0, 1024)], Some(128)).check().is_err());
    }

    #[test]
    fn comparison_counts_bits_and_scales_by_the_largest_output() {
        let v = |x: &[f32]| x.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
        assert_eq!(compare(&v(&[1.0, -2.0]), &v(&[1.0, -2.0])), (0, 0.0, true));
        // -0 and +0 differ in their bits, by nothing in value.
        assert_eq!(compare(&v(&[-0.0, 4.0]), &v(&[0.0, 4.0])), (1, 0.0, true));
        let (differing, largest, same) = compare(&v(&[1.0, 3.0]), &v(&[1.0, 4.0]));
        assert_eq!((differing, largest, same), (1, 0.25, true));
        let (differing, _, same) = compare(&v(&[f32::INFINITY]), &v(&[1.0]));
        assert_eq!((differing, same), (1, false));
    }
}
