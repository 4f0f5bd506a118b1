//! The fast graphlet transform (FGlT, Floros, Pitsianis & Sun; the CUDA design of
//! `../shared/papers/graphlet-transform-cuda.txt`): for every node of a simple undirected graph,
//! the 16 raw and net frequencies of the orbits σ0–σ15 of the graphlets with up to 4 nodes,
//! exactly as FGlT (pyfglt) defines them, in exact `i64` arithmetic, on all CPU cores ([`cpu`]) or
//! on the GPU ([`gpu`]), with the same values to the bit. The input is an [`Adjacency`]; the row
//! sums, raw and net formulas and the GPU layouts live once in `octile_types::graphlets`.
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
pub mod frequencies;
pub mod gpu;
pub mod kernel;
pub mod kernel_config;
pub mod orbits;

pub use adjacency::Adjacency;
pub use frequencies::{Frequencies, Keep, Phases};
pub use octile_types::graphlets::{N_ORBITS, ORBIT_NAMES};

use crate::backend::Backend;
use crate::error::Result;
use crate::gpu::Engine;
use std::time::Instant;

/// What to compute the transform with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransformParams {
    /// `Cpu`: all CPU cores; `Cuda`: the GPU (an error without one); `Auto`: the GPU if one is
    /// usable, else the CPU.
    pub backend: Backend,
    /// Which frequencies come back (default: both).
    pub keep: Keep,
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
    /// The compute alone, in seconds: on the GPU the kernels between the upload of the graph and
    /// the download of the counts (CUDA events); on the CPU the same as `seconds`.
    pub kernel_seconds: f64,
    /// Where the time went, in seconds, in order (GPU: "prepare" the row starts, "upload" the
    /// CSR with the allocations, "kernels", "host_alloc" the result's pages mapped by other cores
    /// meanwhile, "host_pages" the wait for them after the kernels, "download"; CPU: empty).
    pub phases: Phases,
}

/// The raw and net frequencies of every node of `a`.
pub fn transform(a: &Adjacency, params: &TransformParams) -> Result<(Frequencies, TransformInfo)> {
    let engine = Engine::for_backend(params.backend)?;
    let t = Instant::now();
    let (f, phases) = match &engine {
        Engine::Cpu => (cpu::transform(a)?.keep(params.keep), Vec::new()),
        Engine::Cuda(dev) => gpu::transform(dev, a, params.keep)?,
    };
    let seconds = t.elapsed().as_secs_f64();
    let kernel_seconds = phases.iter().find(|p| p.0 == "kernels").map_or(seconds, |p| p.1);
    Ok((f, TransformInfo { backend: engine.name(), device: engine.describe(), seconds, kernel_seconds, phases }))
}
