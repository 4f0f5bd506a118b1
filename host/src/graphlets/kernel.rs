//! The graphlet-count graph kernel: each graph becomes a vector φ(G) of its graphlet orbit
//! counts ([`features`]: summed over the nodes or histogrammed per orbit, optionally log1p-scaled,
//! from one graphlet transform of the whole set), and K(G, G′) is a base kernel on them in f64:
//! linear ⟨φ, φ′⟩ or RBF exp(−γ‖φ − φ′‖²). [`GraphletKernel`] implements the Gram driver's
//! [`GraphKernel`], so K(X), K(X, Y), diag, listed pairs, the normalized forms
//! K_ij / √(K_ii K_jj) and the CLI work as for the other methods. A graph without nodes has
//! φ = 0: linear K = 0 with every graph, which the driver's normalization turns into 0 (1 on a
//! symmetric diagonal), never NaN.
//!
//! ```no_run
//! use octile::{Graph, GraphKernel};
//! use octile::graphlets::kernel::GraphletKernel;
//! use octile::graphlets::kernel_config::GraphletConfig;
//! let mut g = Graph::new(3, &[], &[]);
//! g.add_edge(0, 1, 1.0, &[]).unwrap();
//! g.add_edge(1, 2, 1.0, &[]).unwrap();
//! let k = GraphletKernel::new(GraphletConfig::default()).unwrap();
//! let m = k.gram_normalized(&[g.clone(), g]).unwrap();
//! assert!((m.get(0, 1) - 1.0).abs() < 1e-12);
//! ```
pub mod features;

use crate::error::{OctileError, Result};
use crate::gpu::Engine;
use crate::gram::PairInfo;
use crate::gram::control::{RunControl, blocks_of};
use crate::gram::kernel::{Evaluation, GraphKernel};
use crate::graph::Graph;
use crate::graphlets::kernel_config::{Counts, FeatureForm, GraphletConfig, Scale, VectorKernel};
use features::{GraphFeatures, features};
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

/// Pairs per progress / cancellation step.
const BLOCK_PAIRS: usize = 1 << 16;

/// The graphlet kernel on a backend (the backend of its graphlet transform; the base kernel
/// itself is a few flops per pair, computed on the CPU).
pub struct GraphletKernel {
    config: GraphletConfig,
    /// Backend name and device of the last transform (before any: the engine the configured
    /// backend names, `Auto` the GPU when one is usable).
    ran_on: Mutex<(&'static str, String)>,
    control: RunControl,
}

impl GraphletKernel {
    /// Validate `config`; `Backend::Cuda` without a usable GPU is a [`OctileError::NoGpu`] error
    /// now, not at the first Gram call.
    pub fn new(config: GraphletConfig) -> Result<Self> {
        config.validate()?;
        let engine = Engine::for_backend(config.backend)?;
        let ran_on = Mutex::new((engine.name(), engine.describe()));
        Ok(GraphletKernel { config, ran_on, control: RunControl::default() })
    }

    /// Progress and cancellation hooks.
    pub fn with_control(mut self, control: RunControl) -> Self {
        self.control = control;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &GraphletConfig {
        &self.config
    }

    /// φ of every graph of `sets`, in order, from one graphlet transform (the backend reported by
    /// [`GraphKernel::backend_name`] afterwards is the one that ran it).
    pub fn features(&self, sets: &[&[Graph]]) -> Result<GraphFeatures> {
        let f = features(sets, &self.config)?;
        *self.ran_on.lock().unwrap_or_else(|e| e.into_inner()) = (f.transform.backend, f.transform.device.clone());
        Ok(f)
    }

    /// K of graphs a and b of `f`.
    fn value(&self, f: &GraphFeatures, a: usize, b: usize) -> f64 {
        vector_kernel(self.config.kernel, f.row(a), f.row(b))
    }

    /// How the values were computed, for [`Evaluation::details`].
    fn details(&self, f: &GraphFeatures) -> String {
        let c = &self.config;
        let form = match c.features {
            FeatureForm::Summed => "summed".to_string(),
            FeatureForm::Histogram => format!("histogrammed ({} log2 bins)", c.bins),
        };
        let counts = match c.counts {
            Counts::Net => "net",
            Counts::Raw => "raw",
        };
        let scale = if c.scale == Scale::Log1p { ", log1p" } else { "" };
        let kernel = match c.kernel {
            VectorKernel::Linear => "linear".to_string(),
            VectorKernel::Rbf { gamma } => format!("rbf (γ = {gamma})"),
        };
        format!(
            "graphlet kernel: {kernel} on {form} {counts} counts of orbits {:?}{scale} ({} entries per graph); one transform of {} graphs ({} nodes, {} edges, {} self-loops dropped) in {:.3} ms on {}",
            c.orbits,
            f.dim,
            f.n_graphs(),
            f.nodes,
            f.edges,
            f.self_loops_dropped,
            f.transform.seconds * 1e3,
            f.transform.device
        )
    }
}

/// The base kernel on two feature vectors: ⟨a, b⟩ or exp(−γ‖a − b‖²), summed in entry order.
pub fn vector_kernel(kernel: VectorKernel, a: &[f64], b: &[f64]) -> f64 {
    match kernel {
        VectorKernel::Linear => a.iter().zip(b).map(|(x, y)| x * y).sum(),
        VectorKernel::Rbf { gamma } => (-gamma * a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>()).exp(),
    }
}

impl GraphKernel for GraphletKernel {
    fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation> {
        let t = Instant::now();
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let f = self.features(&[graphs])?;
        let values = self
            .control
            .stream(blocks_of(pairs.len(), BLOCK_PAIRS), |r| Ok(pairs[r].par_iter().map(|&(a, b)| self.value(&f, a as usize, b as usize)).collect()))?;
        Ok(Evaluation {
            info: vec![PairInfo { iterations: 0, residual: 0.0, converged: true }; values.len()],
            values,
            seconds: t.elapsed().as_secs_f64(),
            details: self.details(&f).into(),
        })
    }

    /// K(X) (upper triangle, mirrored) or K(X, Y), row-major, from one transform of X (∪ Y):
    /// blocks of rows, progress after each, cancellation ([`OctileError::Cancelled`]) before each.
    fn evaluate_matrix(&self, x: &[Graph], y: Option<&[Graph]>) -> Result<Option<Evaluation>> {
        let t = Instant::now();
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let f = match y {
            None => self.features(&[x])?,
            Some(y) => self.features(&[x, y])?,
        };
        let (nr, nc, col0) = match y {
            None => (x.len(), x.len(), 0),
            Some(y) => (x.len(), y.len(), x.len()),
        };
        let symmetric = y.is_none();
        let mut upper: Vec<Vec<f64>> = Vec::with_capacity(nr);
        for r in blocks_of(nr, BLOCK_PAIRS / nc.max(1) + 1) {
            if self.control.cancelled() {
                return Err(OctileError::Cancelled);
            }
            let part: Vec<Vec<f64>> = r.into_par_iter().map(|i| (if symmetric { i } else { 0 }..nc).map(|j| self.value(&f, i, col0 + j)).collect()).collect();
            self.control.report(part.iter().map(Vec::len).sum());
            upper.extend(part);
        }
        let values = if symmetric {
            (0..nr * nc).into_par_iter().map(|k| if k / nc <= k % nc { upper[k / nc][k % nc - k / nc] } else { upper[k % nc][k / nc - k % nc] }).collect()
        } else {
            upper.into_par_iter().flatten_iter().collect()
        };
        Ok(Some(Evaluation { values, info: Vec::new(), seconds: t.elapsed().as_secs_f64(), details: self.details(&f).into() }))
    }

    fn control(&self) -> &RunControl {
        &self.control
    }

    fn backend_name(&self) -> &'static str {
        self.ran_on.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    fn device_name(&self) -> String {
        self.ran_on.lock().unwrap_or_else(|e| e.into_inner()).1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;

    /// A path of n nodes.
    fn path(n: usize) -> Graph {
        let mut g = Graph::new(n, &[], &[]);
        for i in 1..n {
            g.add_edge(i - 1, i, 1.0, &[]).unwrap();
        }
        g
    }

    #[test]
    fn summed_net_counts_of_paths_and_their_linear_kernel() {
        let k = GraphletKernel::new(GraphletConfig { orbits: vec![0, 1, 2, 5, 6], backend: Backend::Cpu, ..GraphletConfig::default() }).unwrap();
        // P4: 4 nodes, 3 edges (σ1 counts each edge at both ends: 6), 2 induced 2-paths (ends: 4),
        // one 3-path (ends: 2, interiors: 2)
        let f = k.features(&[&[path(4), Graph::new(0, &[], &[]), path(1)]]).unwrap();
        assert_eq!(f.row(0), [4.0, 6.0, 4.0, 2.0, 2.0]);
        assert_eq!(f.row(1), [0.0; 5]);
        assert_eq!(f.row(2), [1.0, 0.0, 0.0, 0.0, 0.0]);
        let g = k.gram(&[path(4), Graph::new(0, &[], &[]), path(1)]).unwrap();
        assert_eq!(g.values, [76.0, 0.0, 4.0, 0.0, 0.0, 0.0, 4.0, 0.0, 1.0]);
        let n = k.gram_normalized(&[path(4), Graph::new(0, &[], &[])]).unwrap();
        // 76 / (√76·√76) is 1 within a rounding; a graph without nodes: 0 off the diagonal, 1 on it
        assert!((n.values[0] - 1.0).abs() < 1e-15 && n.values[1..] == [0.0, 0.0, 1.0], "{:?}", n.values);
    }
}
