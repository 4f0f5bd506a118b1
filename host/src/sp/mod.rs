//! The shortest-path graph kernel (Borgwardt & Kriegel; the GPU designs of
//! `../shared/papers/shortest-path-kernel-gpu-slides.txt`): configuration ([`config`]), all-pairs
//! shortest paths per graph ([`paths`]), the histogram form for Kronecker deltas everywhere
//! ([`histogram`], GraKeL's case, exact integers), the general all-pairs-of-paths sum on the CPU
//! ([`cpu`]) and both forms on the GPU ([`gpu`]). [`ShortestPathKernel`] implements the Gram
//! driver's [`GraphKernel`], so `gram`, `gram_between`, `diag`, normalization, progress and the CLI
//! work as for the marginalized kernel.
pub mod config;
pub mod cpu;
pub mod gpu;
pub mod histogram;
pub mod paths;

use crate::backend::Backend;
use crate::error::{OctileError, Result};
use crate::gpu::Engine;
use crate::gram::control::{RunControl, blocks_of};
use crate::gram::kernel::{Evaluation, GraphKernel};
use crate::gram::matrix::PairInfo;
use crate::graph::Graph;
use config::SpConfig;
use histogram::Histograms;
use octile_types::KernelSpec;
use octile_types::sp::LengthKernel;
use paths::PathSet;
use rayon::prelude::*;
use std::time::Instant;


/// The shortest-path kernel on a backend.
pub struct ShortestPathKernel {
    config: SpConfig,
    node: KernelSpec,
    features: Vec<String>,
    length: LengthKernel,
    engine: Engine,
    control: RunControl,
}

impl ShortestPathKernel {
    /// Validate `config` and pick the engine (`Backend::Auto`: the GPU when one is usable).
    pub fn new(config: SpConfig) -> Result<Self> {
        config.validate()?;
        let (node, features) = config.node_spec();
        let engine = match config.backend {
            Backend::Cpu => Engine::Cpu,
            Backend::Cuda => Engine::Cuda(crate::gpu::device().map_err(OctileError::NoGpu)?),
            Backend::Auto => crate::gpu::device().map_or(Engine::Cpu, Engine::Cuda),
        };
        let length = config.path_length.kernel();
        Ok(ShortestPathKernel { config, node, features, length, engine, control: RunControl::default() })
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
        let set = PathSet::build(graphs, &self.features)?;
        let t_paths = t.elapsed().as_secs_f64() * 1e3;
        let histogram = self.config.is_histogram();
        let hist = histogram.then(|| Histograms::build(&set));
        if std::env::var_os("OCTILE_TRACE").is_some() {
            eprintln!("sp: {} paths at {t_paths:.2} ms, histograms at {:.2} ms", set.sp_s.len(), t.elapsed().as_secs_f64() * 1e3);
        }
        let form = if histogram { "histogram dot products (Kronecker deltas, h = 0)" } else { "all pairs of paths" };
        let values: Vec<f64> = match &self.engine {
            Engine::Cpu => self.control.stream(blocks_of(pairs.len(), 1 << 14), |range| {
                Ok(pairs[range]
                    .par_iter()
                    .map(|&(a, b)| match &hist {
                        Some(h) => h.dot(a as usize, b as usize),
                        None => cpu::pair_value(&set, &self.node, &self.length, a as usize, b as usize),
                    })
                    .collect())
            })?,
            Engine::Cuda(dev) => match &hist {
                Some(h) => gpu::histogram_dots(dev, h, pairs, &self.control)?,
                None => gpu::general_values(dev, &set, &self.node, &self.length, pairs, &self.control)?,
            },
        };
        if std::env::var_os("OCTILE_TRACE").is_some() {
            eprintln!("sp: {} values at {:.2} ms", values.len(), t.elapsed().as_secs_f64() * 1e3);
        }
        let paths: usize = set.sp_s.len();
        Ok(Evaluation {
            info: (0..values.len()).into_par_iter().map(|_| PairInfo { iterations: 0, residual: 0.0, converged: true }).collect(),
            values,
            seconds: t.elapsed().as_secs_f64(),
            details: format!("shortest-path kernel: {form}, {paths} paths over {} graphs", graphs.len()),
        })
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
}
