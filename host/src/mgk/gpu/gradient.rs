//! K and ∂K/∂θ of many pairs on the GPU: pairs cut into batches under the scratch budget
//! (`gradient_scratch_len`: the solver's five padded vectors and the adjoint), each batch one
//! launch of the gradient entry (one block per pair, adaptive primitives), its statuses and
//! gradients copied back before the next.
use super::batch::{plan_batches_with, scratch_budget_bytes};
use super::launch::{BatchBuffers, SolverEntry, mgk_gradient, solver_blocks_per_sm, upload};
use crate::error::Result;
use crate::gpu::GpuDevice;
use crate::gram::control::RunControl;
use crate::mgk::pack::PackedGraphs;
use crate::mgk::report::GpuEntry;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use octile_types::mgk::gradient::gradient_scratch_len;
use octile_types::{GradientParams, MgkParams, PairJob, PairStatus, Real};

/// What [`solve_pairs`] returns: statuses and gradients (pair-major, θ fastest) in pair order, and
/// the entry that ran.
pub type Solved = (Vec<PairStatus>, Vec<f64>, Vec<GpuEntry>);

/// K and ∂K/∂θ (the hyperparameters of `gp`) of `pairs` of `set` on the GPU.
#[allow(clippy::too_many_arguments)]
pub fn solve_pairs<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    pairs: &[(u32, u32)],
    base_params: &MgkParams,
    gp: &GradientParams,
    scratch_bytes: Option<usize>,
    ctl: &RunControl,
) -> Result<Solved> {
    let np = gp.n_hyper as usize;
    let budget = scratch_budget_bytes(dev, scratch_bytes) / 8;
    let nodes = |g: u32| set.n_nodes(g as usize);
    let batches = plan_batches_with(nodes, pairs, budget, gradient_scratch_len)?;
    let graphs = upload(dev, set, set64)?;
    let mut params = *base_params;
    params.team_blocks = 1;
    // the gradient entries have no tiling-blocking walks
    params.dense_kernel.usable = 0;
    let resident = dev.sm_count * solver_blocks_per_sm::<T>(dev, SolverEntry::Adaptive);
    let scratch_max =
        batches.iter().map(|r| pairs[r.clone()].iter().map(|&(a, b)| gradient_scratch_len(nodes(a), nodes(b))).sum::<usize>()).max().unwrap_or(1).max(1);
    let mut scratch = dev.stream.alloc_zeros::<f64>(scratch_max)?;
    let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
    let gparams = dev.stream.clone_htod(std::slice::from_ref(gp))?;
    let solved: Vec<(PairStatus, Vec<f64>)> = ctl.stream(batches, |range| {
        let mut offset = 0u64;
        let jobs: Vec<PairJob> = pairs[range]
            .iter()
            .map(|&(g1, g2)| {
                let j = PairJob { g1, g2, scratch_offset: offset };
                offset += gradient_scratch_len(nodes(g1), nodes(g2)) as u64;
                j
            })
            .collect();
        let mut grad = dev.stream.alloc_zeros::<f64>((jobs.len() * np).max(1))?;
        let mut buf = BatchBuffers {
            jobs: dev.stream.clone_htod(&jobs)?,
            status: dev.stream.alloc_zeros::<PairStatus>(jobs.len())?,
            scratch: &mut scratch,
            counter: &mut counter,
        };
        params.n_jobs = jobs.len() as u32;
        mgk_gradient(dev, &params, &graphs, &jobs, &mut buf, resident.min(jobs.len() as u32), &gparams, np, &mut grad)?;
        dev.stream.synchronize()?;
        let status = dev.stream.clone_dtoh(&buf.status)?;
        let g = dev.stream.clone_dtoh(&grad)?;
        Ok(status.into_iter().enumerate().map(|(k, st)| (st, g[k * np..(k + 1) * np].to_vec())).collect())
    })?;
    let mut status = Vec::with_capacity(pairs.len());
    let mut grads = Vec::with_capacity(pairs.len() * np);
    for (s, g) in solved {
        status.push(s);
        if g.len() == np { grads.extend_from_slice(&g) } else { grads.extend(std::iter::repeat_n(f64::NAN, np)) }
    }
    Ok((status, grads, vec![GpuEntry::Gradient { pairs: pairs.len() }]))
}
