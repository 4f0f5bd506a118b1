//! The fast graphlet transform's GPU launches (entries: `octile_kernels::graphlets`, layouts:
//! `octile_types::graphlets`).
use super::Frequencies;
use super::adjacency::Adjacency;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;

/// A GPU transform's result and timings.
pub struct GpuTransform {
    /// The frequencies.
    pub frequencies: Frequencies,
    /// The kernels' time alone, seconds.
    pub kernel_seconds: f64,
    /// Nodes done by the block pass.
    pub heavy_nodes: u64,
}

/// Raw and net frequencies of every node of `a` on the GPU.
pub fn transform(_dev: &GpuDevice, a: &Adjacency) -> Result<GpuTransform> {
    Err(OctileError::Cuda(format!("graphlet transform of {} nodes: GPU kernels not built yet", a.n_nodes())))
}
