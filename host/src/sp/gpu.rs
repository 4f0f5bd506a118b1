//! The shortest-path kernel's GPU launches, each `unsafe` launch behind a function that checks
//! the data it hands over first (entries: `octile_kernels::sp`, layouts: `octile_types::sp`).
use super::device::{check, upload};
use super::gpu_paths::DevicePaths;
use super::histogram::Histograms;
use crate::error::Result;
use crate::gpu::GpuDevice;
use crate::gram::control::{RunControl, blocks_of};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use octile_types::Kernel;
use octile_types::sp::{LengthKernel, SP_BLOCK_THREADS, SP_TABLE_ENTRIES, SpHistogram, SpParams};
use octile_types::{KernelSpec, PairJob};
use rayon::prelude::*;

/// Jobs of `pairs`, each graph index checked against `n_graphs`.
fn jobs_of(pairs: &[(u32, u32)], n_graphs: usize) -> Result<Vec<PairJob>> {
    check(pairs.iter().all(|&(a, b)| (a as usize) < n_graphs && (b as usize) < n_graphs), || "a pair names a graph past the set".into())?;
    Ok(pairs.par_iter().map(|&(a, b)| PairJob { g1: a, g2: b, scratch_offset: 0 }).collect())
}

/// The general form on the GPU: one value per pair, over the paths of [`gpu_paths::build`](super::gpu_paths::build).
pub fn general_values(
    dev: &GpuDevice,
    set: &DevicePaths,
    node: &KernelSpec,
    length: &LengthKernel,
    pairs: &[(u32, u32)],
    ctl: &RunControl,
) -> Result<Vec<f64>> {
    check(node.terms().iter().all(|t| t.kind == 0 || (t.feature as usize) < set.node_stride), || "node kernel feature outside the node rows".into())?;
    check(
        set.descs.iter().all(|d| {
            (d.path_offset + d.n_paths) as usize <= set.sp_s.len()
                && ((d.node_offset + d.n_nodes) as usize) * set.node_stride <= set.nodes.len().max(set.node_stride)
        }),
        || "a graph's paths or node rows pass the arrays".into(),
    )?;
    let s = &dev.stream;
    let f = dev.function(Kernel::SpGeneralF64)?;
    let mut counter = s.alloc_zeros::<u32>(1)?;
    ctl.stream(blocks_of(pairs.len(), 1 << 16), |range| {
        let jobs = jobs_of(&pairs[range], set.descs.len())?;
        let dev_jobs = s.clone_htod(&jobs)?;
        let mut out = s.alloc_zeros::<f64>(jobs.len())?;
        let params = s.clone_htod(&[SpParams { node_kernel: *node, length: *length, n_jobs: jobs.len() as u32, node_stride: set.node_stride as u32 }])?;
        s.memset_zeros(&mut counter)?;
        let grid = (jobs.len() as u32).min(dev.sm_count * 6).max(1);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (SP_BLOCK_THREADS, 1, 1), shared_mem_bytes: (SP_TABLE_ENTRIES * 8) as u32 };
        let mut b = s.launch_builder(&f);
        b.arg(&params).arg(&set.graphs).arg(&set.sp_s).arg(&set.sp_e).arg(&set.sp_w).arg(&set.nodes).arg(&dev_jobs).arg(&mut out).arg(&mut counter);
        // SAFETY: sp_general_f64's contract: params is one SpParams in device memory; the block is
        // SP_BLOCK_THREADS threads with SP_TABLE_ENTRIES·8 bytes of dynamic shared memory; every
        // graph's path and node runs lie inside the arrays (checked above), its paths' nodes inside
        // the graph (host-built: PathSet; GPU-built: written < n by sp_floyd_warshall, and exactly
        // the counted number, checked by gpu_paths::build), node-kernel features inside the rows,
        // every job's graphs exist (jobs_of), out holds n_jobs values and the counter is zeroed;
        // the buffers outlive the launch (synchronized by the download below).
        unsafe { b.launch(cfg) }?;
        Ok(s.clone_dtoh(&out)?)
    })
}

/// The histogram form on the GPU: one dot product per pair.
pub fn histogram_dots(dev: &GpuDevice, h: &Histograms, pairs: &[(u32, u32)], ctl: &RunControl) -> Result<Vec<f64>> {
    check(h.counts.len() == h.keys.len() && h.runs.iter().all(|r| (r.offset + r.len) as usize <= h.keys.len()), || "histogram runs past their arrays".into())?;
    check(h.runs.iter().all(|r| h.keys[r.offset as usize..(r.offset + r.len) as usize].windows(2).all(|w| w[0] < w[1])), || {
        "histogram keys not ascending".into()
    })?;
    let s = &dev.stream;
    let (keys, counts, runs) = (upload(s, &h.keys, 0)?, upload(s, &h.counts, 0)?, upload(s, &h.runs, SpHistogram::default())?);
    let f = dev.function(Kernel::SpHistogramDot)?;
    let mut counter = s.alloc_zeros::<u32>(1)?;
    ctl.stream(blocks_of(pairs.len(), 1 << 20), |range| {
        let jobs = jobs_of(&pairs[range], h.runs.len())?;
        let dev_jobs = s.clone_htod(&jobs)?;
        let mut out = s.alloc_zeros::<f64>(jobs.len())?;
        let params = s.clone_htod(&[SpParams {
            node_kernel: KernelSpec::unit(),
            length: LengthKernel::kronecker_delta(0.0),
            n_jobs: jobs.len() as u32,
            node_stride: 1,
        }])?;
        s.memset_zeros(&mut counter)?;
        let grid = (jobs.len().div_ceil(4) as u32).min(dev.sm_count * 16).max(1);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        let mut b = s.launch_builder(&f);
        b.arg(&params).arg(&runs).arg(&keys).arg(&counts).arg(&dev_jobs).arg(&mut out).arg(&mut counter);
        // SAFETY: sp_histogram_dot's contract: params is one SpParams in device memory; every run
        // lies inside keys/counts (checked above), every job's graphs exist (jobs_of), out holds
        // n_jobs values and the counter is zeroed; the buffers outlive the launch (synchronized by
        // the download below).
        unsafe { b.launch(cfg) }?;
        Ok(s.clone_dtoh(&out)?)
    })
}
