//! The fast graphlet transform (FGlT, Floros, Pitsianis & Sun; the CUDA design of
//! `../shared/papers/graphlet-transform-cuda.txt`): for every node of a simple undirected graph,
//! the 16 raw and net frequencies of the orbits σ0–σ15 of the graphlets with up to 4 nodes,
//! exactly as FGlT (pyfglt) defines them, in exact `i64` arithmetic, on all CPU cores ([`cpu`]) or
//! the GPU ([`gpu`]). The input is an [`Adjacency`]; the row sums, raw and net formulas and the
//! GPU layouts live once in `octile_types::graphlets`.
//!
//! ```no_run
//! use octile::graphlets::{Adjacency, TransformParams, transform};
//! let a = Adjacency::from_edges(4, &[(0, 1), (1, 2), (2, 0), (2, 3)]).unwrap();
//! let (f, info) = transform(&a, &TransformParams::default()).unwrap();
//! assert_eq!(f.net_row(2)[4], 1); // node 2 is on one triangle
//! println!("{} on {}", info.seconds, info.device);
//! ```
pub mod adjacency;
pub mod cpu;
pub mod gpu;

pub use adjacency::Adjacency;
pub use octile_types::graphlets::{N_ORBITS, ORBIT_NAMES};

use crate::backend::Backend;
use crate::error::{OctileError, Result};
use crate::gpu::Engine;
use std::time::Instant;

/// What to compute the transform with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransformParams {
    /// `Auto`: the GPU when one is usable, else the CPU.
    pub backend: Backend,
}

/// How a transform went.
#[derive(Clone, Debug, PartialEq)]
pub struct TransformInfo {
    /// "cpu" or "cuda".
    pub backend: &'static str,
    /// The device, in words.
    pub device: String,
    /// Wall time of the whole call (uploads and downloads included), in seconds.
    pub seconds: f64,
    /// GPU only: the kernels' time alone (CUDA events), in seconds.
    pub kernel_seconds: Option<f64>,
    /// GPU only: nodes whose 2-walks overflowed a warp's table (done by whole blocks).
    pub heavy_nodes: u64,
}

/// The raw and net frequencies of every node: n × 16, node-major (row i = node i's 16 orbits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frequencies {
    n_nodes: usize,
    /// Raw frequencies d̂0–d̂15, n × 16 row-major.
    pub raw: Vec<i64>,
    /// Net frequencies d0–d15, n × 16 row-major.
    pub net: Vec<i64>,
}

impl Frequencies {
    /// From per-node rows.
    pub fn from_rows(raw: Vec<[i64; N_ORBITS]>, net: Vec<[i64; N_ORBITS]>) -> Frequencies {
        Frequencies { n_nodes: raw.len(), raw: raw.into_iter().flatten().collect(), net: net.into_iter().flatten().collect() }
    }
    /// From n × 16 row-major arrays.
    ///
    /// # Panics
    /// If the two arrays differ in length or are not a multiple of 16 long.
    pub fn from_flat(raw: Vec<i64>, net: Vec<i64>) -> Frequencies {
        assert!(raw.len() == net.len() && raw.len() % N_ORBITS == 0, "raw and net must both be n × 16");
        Frequencies { n_nodes: raw.len() / N_ORBITS, raw, net }
    }
    /// Nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }
    /// Node i's raw frequencies.
    pub fn raw_row(&self, i: usize) -> &[i64] {
        &self.raw[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
    /// Node i's net frequencies.
    pub fn net_row(&self, i: usize) -> &[i64] {
        &self.net[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
}

/// The raw and net frequencies of every node of `a`.
pub fn transform(a: &Adjacency, params: &TransformParams) -> Result<(Frequencies, TransformInfo)> {
    let engine = match params.backend {
        Backend::Cpu => Engine::Cpu,
        Backend::Cuda => Engine::Cuda(crate::gpu::device().map_err(OctileError::NoGpu)?),
        Backend::Auto => crate::gpu::device().map_or(Engine::Cpu, Engine::Cuda),
    };
    let t = Instant::now();
    let (f, kernel_seconds, heavy_nodes) = match &engine {
        Engine::Cpu => (cpu::transform(a)?, None, 0),
        Engine::Cuda(dev) => {
            let r = gpu::transform(dev, a)?;
            (r.frequencies, Some(r.kernel_seconds), r.heavy_nodes)
        }
    };
    Ok((f, TransformInfo { backend: engine.name(), device: engine.describe(), seconds: t.elapsed().as_secs_f64(), kernel_seconds, heavy_nodes }))
}

/// The error for a count of node `i` past `i64`.
pub(crate) fn overflow(i: usize) -> OctileError {
    OctileError::InvalidGraph { graph: None, what: format!("node {i}: a graphlet count exceeds the int64 range") }
}
