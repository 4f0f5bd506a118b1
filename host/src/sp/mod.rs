//! The shortest-path graph kernel (Borgwardt & Kriegel; the GPU designs of
//! `../shared/papers/shortest-path-kernel-gpu-slides.txt`): configuration ([`config`]), all-pairs
//! shortest paths per graph ([`paths`]), the histogram form for Kronecker deltas everywhere
//! ([`histogram`], GraKeL's case, exact integers), the general all-pairs-of-paths sum on the CPU
//! ([`cpu`]) and both forms on the GPU ([`gpu`]); whole histogram Gram matrices on the GPU, with
//! the histograms built there ([`gpu_gram`]). [`ShortestPathKernel`] implements the Gram
//! driver's [`GraphKernel`], so `gram`, `gram_between`, `diag`, normalization, progress and the CLI
//! work as for the marginalized kernel.
pub mod config;
pub mod cpu;
pub mod csr;
pub mod device;
pub mod gather;
pub mod gpu;
pub mod gpu_gram;
pub mod gpu_paths;
pub mod histogram;
pub mod paths;
pub mod trace;

use crate::error::Result;
use crate::gpu::Engine;
use crate::gpu::staging::Staging;
use crate::gram::PairInfo;
use crate::gram::control::{RunControl, blocks_of};
use crate::gram::kernel::{Evaluation, GraphKernel};
use crate::graph::Graph;
use config::SpConfig;
use histogram::Histograms;
use octile_types::KernelSpec;
use octile_types::sp::LengthKernel;
use paths::PathSet;
use rayon::prelude::*;
use std::borrow::Cow;
use std::time::Instant;
use trace::trace;

/// The shortest-path kernel on a backend.
pub struct ShortestPathKernel {
    config: SpConfig,
    node: KernelSpec,
    features: Vec<String>,
    length: LengthKernel,
    engine: Engine,
    staging: Option<Staging>,
    control: RunControl,
}

impl ShortestPathKernel {
    /// Validate `config` and pick the engine (`Backend::Auto`: the GPU when one is usable). The
    /// host threads and, on the GPU, the pinned buffers the histogram Gram matrix comes back
    /// through start here, once per kernel, not inside each Gram call.
    pub fn new(config: SpConfig) -> Result<Self> {
        config.validate()?;
        let (node, features) = config.node_spec();
        let engine = Engine::for_backend(config.backend)?;
        let length = config.path_length.kernel();
        rayon::broadcast(|_| ());
        let staging = match &engine {
            Engine::Cuda(dev) if config.is_histogram() => Some(Staging::new(dev, gpu_gram::STAGING_PIECE)?),
            _ => None,
        };
        Ok(ShortestPathKernel { config, node, features, length, engine, staging, control: RunControl::default() })
    }

    /// Progress and cancellation hooks.
    pub fn with_control(mut self, control: RunControl) -> Self {
        self.control = control;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &SpConfig {
        &self.config
    }
}

impl GraphKernel for ShortestPathKernel {
    fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation> {
        let t = Instant::now();
        let histogram = self.config.is_histogram();
        let gpu = match &self.engine {
            Engine::Cuda(dev) => Some(dev),
            Engine::Cpu => None,
        };
        // the paths: on the host for the CPU, mostly on the device for the GPU's general form
        let set = if histogram || gpu.is_some() { None } else { Some(PathSet::build(graphs, &self.features)?) };
        let dev_set = match gpu {
            Some(dev) if !histogram => Some(gpu_paths::build(dev, graphs, &self.features)?),
            _ => None,
        };
        let hist = if histogram { Some(Histograms::build(graphs, &self.features)?) } else { None };
        trace(format_args!("{} at {:.2} ms", if histogram { "histograms" } else { "paths" }, t.elapsed().as_secs_f64() * 1e3));
        let form = if histogram { "histogram dot products (Kronecker deltas, h = 0)" } else { "all pairs of paths" };
        let values: Vec<f64> = match (gpu, &hist, &set, &dev_set) {
            (Some(dev), Some(h), _, _) => gpu::histogram_dots(dev, h, pairs, &self.control)?,
            (Some(dev), None, _, Some(d)) => gpu::general_values(dev, d, &self.node, &self.length, pairs, &self.control)?,
            _ => self.control.stream(blocks_of(pairs.len(), 1 << 14), |range| {
                Ok(pairs[range]
                    .par_iter()
                    .map(|&(a, b)| match (&hist, &set) {
                        (Some(h), _) => h.dot(a as usize, b as usize),
                        (None, Some(set)) => cpu::pair_value(set, &self.node, &self.length, a as usize, b as usize),
                        (None, None) => f64::NAN,
                    })
                    .collect())
            })?,
        };
        trace(format_args!("{} values at {:.2} ms", values.len(), t.elapsed().as_secs_f64() * 1e3));
        let size = match (&set, &dev_set, &hist) {
            (Some(set), _, _) => format!("{} paths", set.sp_s.len()),
            (None, Some(d), _) => format!("{} paths ({} of {} graphs' on the GPU)", d.sp_s.len(), d.built_on_gpu, graphs.len()),
            (None, None, Some(h)) => format!("{} histogram entries", h.keys.len()),
            (None, None, None) => String::new(),
        };
        Ok(Evaluation {
            info: (0..values.len()).into_par_iter().map(|_| PairInfo { iterations: 0, residual: 0.0, converged: true }).collect(),
            values,
            seconds: t.elapsed().as_secs_f64(),
            details: format!("shortest-path kernel: {form}, {size} over {} graphs", graphs.len()).into(),
        })
    }

    /// The histogram form's whole matrix: no pair list (the GPU builds the histograms of the
    /// graphs it can, then computes every row × column dot product in place). The whole call runs
    /// on a worker of the thread pool, so its many small parallel steps run inline or are stolen,
    /// instead of each handing work to sleeping threads and waiting for them (≈ 1 ms a step on
    /// the GPU machines' virtual CPUs).
    fn evaluate_matrix(&self, x: &[Graph], y: Option<&[Graph]>) -> Result<Option<Evaluation>> {
        if !self.config.is_histogram() {
            return Ok(None);
        }
        rayon::scope(|_| self.histogram_matrix(x, y)).map(Some)
    }

    fn control(&self) -> &RunControl {
        &self.control
    }

    fn backend_name(&self) -> &'static str {
        self.engine.name()
    }

    fn device_name(&self) -> String {
        self.engine.describe()
    }

    fn device_report(&self) -> crate::report::Details {
        crate::report::Details::new(self.engine.info())
    }
}

impl ShortestPathKernel {
    /// K(X) or K(X, Y) of the histogram form, row-major.
    fn histogram_matrix(&self, x: &[Graph], y: Option<&[Graph]>) -> Result<Evaluation> {
        let t = Instant::now();
        let all: Cow<[Graph]> = match y {
            None => Cow::Borrowed(x),
            Some(y) => Cow::Owned(x.iter().chain(y).cloned().collect()),
        };
        let (rows, cols) = match y {
            None => (0..x.len(), 0..x.len()),
            Some(y) => (0..x.len(), x.len()..x.len() + y.len()),
        };
        let pairs = if y.is_some() { rows.len() * cols.len() } else { x.len() * (x.len() + 1) / 2 };
        let (values, built) = match &self.engine {
            Engine::Cpu => {
                let h = Histograms::build(&all, &self.features)?;
                trace(format_args!("{} histogram entries at {:.2} ms", h.keys.len(), t.elapsed().as_secs_f64() * 1e3));
                (h.matrix(rows, cols, &self.control)?, "on the host".to_string())
            }
            Engine::Cuda(dev) => {
                let h = gpu_gram::build(dev, &all, &self.features)?;
                trace(format_args!("histograms ({} of {} on the GPU) at {:.2} ms", h.built_on_gpu, all.len(), t.elapsed().as_secs_f64() * 1e3));
                (gpu_gram::matrix(dev, &h, rows, cols, pairs, self.staging.as_ref(), &self.control)?, format!("{} of {} on the GPU", h.built_on_gpu, all.len()))
            }
        };
        trace(format_args!("{}-value matrix at {:.2} ms", values.len(), t.elapsed().as_secs_f64() * 1e3));
        Ok(Evaluation {
            values,
            info: Vec::new(),
            seconds: t.elapsed().as_secs_f64(),
            details: format!("shortest-path kernel: histogram Gram matrix (Kronecker deltas, h = 0), histograms of {} graphs {built}", all.len()).into(),
        })
    }
}
