//! Autotuning: for a rung with candidate kernels (v11), time every candidate on the shape at
//! hand, keep the fastest in memory and in a JSON cache file keyed by device and shape.

use crate::check::cpu::random_matrix;
use crate::harness::bench::median;
use crate::harness::gpu::Gpu;
use crate::{GemmError, GemmShape, Rung};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Timed launches per candidate during a search; the median decides.
pub const SEARCH_REPS: usize = 10;

/// One candidate's outcome in a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The candidate's name.
    pub candidate: &'static str,
    /// Median milliseconds, or why it could not run this shape.
    pub outcome: Result<f64, String>,
}

/// Picks and remembers the fastest candidate per (device, shape).
#[derive(Debug, Default)]
pub struct Autotuner {
    cache_path: Option<PathBuf>,
    choices: BTreeMap<String, String>,
    /// Search again even when the cache has an answer.
    pub force: bool,
}

impl Autotuner {
    /// A tuner that reads and writes `cache_path` (JSON: "device m×n×k" → candidate name), or
    /// keeps its choices in memory only. A missing file is an empty cache; a corrupt one is an
    /// error, not silently ignored.
    pub fn new(cache_path: Option<PathBuf>) -> Result<Self, String> {
        let mut choices = BTreeMap::new();
        if let Some(path) = cache_path.as_ref().filter(|p| p.exists()) {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            choices = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a valid autotune cache ({e}); delete it to start afresh",
                    path.display()
                )
            })?;
        }
        Ok(Autotuner {
            cache_path,
            choices,
            force: false,
        })
    }

    /// The cache key for `shape` on the device called `device`.
    pub fn key(device: &str, shape: &GemmShape) -> String {
        format!("{device} {}x{}x{}", shape.m, shape.n, shape.k)
    }

    /// The candidate remembered for `key`, if it is still one of `rung`'s candidates.
    pub fn cached(&self, rung: &Rung, key: &str) -> Option<&'static Rung> {
        let name = self.choices.get(key)?;
        rung.candidates.iter().find(|c| c.name == name)
    }

    /// The kernel to launch for `rung` at `shape`: `rung` itself when it has no candidates,
    /// else the remembered choice, else the winner of a new search (reported through `trials`).
    pub fn pick(
        &mut self,
        gpu: &Gpu,
        rung: &'static Rung,
        shape: &GemmShape,
        trials: &mut Vec<Trial>,
    ) -> Result<&'static Rung, GemmError> {
        if rung.candidates.is_empty() {
            return Ok(rung);
        }
        let key = Self::key(&gpu.info().name, shape);
        // A choice made with another PTX module (`--ptx`) may name a candidate this one lacks.
        let runnable = |choice: &&'static Rung| gpu.rung_unavailable(choice).is_none();
        if let Some(choice) = self
            .cached(rung, &key)
            .filter(runnable)
            .filter(|_| !self.force)
        {
            return Ok(choice);
        }
        *trials = search(gpu, rung.candidates, shape)?;
        let best = trials
            .iter()
            .filter_map(|t| t.outcome.as_ref().ok().map(|ms| (t.candidate, *ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((name, _)) = best else {
            // Every candidate refused the shape: report the first refusal.
            return rung.candidates[0]
                .launch(shape, gpu.info().max_shared_per_block)
                .map(|_| rung);
        };
        self.choices.insert(key, name.to_string());
        self.save();
        Ok(rung
            .candidates
            .iter()
            .find(|c| c.name == name)
            .expect("winner is a candidate"))
    }

    fn save(&self) {
        let Some(path) = &self.cache_path else { return };
        let written = serde_json::to_string_pretty(&self.choices)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(path, json + "\n")
            });
        if let Err(err) = written {
            // The choice still holds for this run; only its persistence failed.
            eprintln!("autotune: could not write {}: {err}", path.display());
        }
    }
}

/// Times every candidate on random inputs of `shape` (after two warm-up launches each); a
/// candidate this GPU or its loaded module cannot run is reported as such, not timed.
pub fn search(
    gpu: &Gpu,
    candidates: &'static [Rung],
    shape: &GemmShape,
) -> Result<Vec<Trial>, GemmError> {
    let (a_len, b_len, c_len) = shape.elements();
    let a = gpu.upload(&random_matrix(a_len, 0x5EED))?;
    let b = gpu.upload(&random_matrix(b_len, 0x5EED + 1))?;
    let mut c = gpu.alloc_poisoned(c_len)?;
    let mut trials = Vec::new();
    for candidate in candidates {
        if let Some(reason) = gpu.rung_unavailable(candidate) {
            trials.push(Trial {
                candidate: candidate.name,
                outcome: Err(format!("it {reason}")),
            });
            continue;
        }
        if let Err(refusal) = candidate.launch(shape, gpu.info().max_shared_per_block) {
            trials.push(Trial {
                candidate: candidate.name,
                outcome: Err(refusal.to_string()),
            });
            continue;
        }
        for _ in 0..2 {
            gpu.launch_rung(candidate, &a, &b, &mut c, shape)?;
        }
        let mut times = Vec::with_capacity(SEARCH_REPS);
        for _ in 0..SEARCH_REPS {
            times.push(gpu.time_ms(|| gpu.launch_rung(candidate, &a, &b, &mut c, shape))?);
        }
        trials.push(Trial {
            candidate: candidate.name,
            outcome: Ok(median(&times)),
        });
    }
    Ok(trials)
}
