//! K and ∂K/∂θ of many pairs on the GPU: pairs cut into batches under the scratch budget
//! (`gradient_scratch_len`: the solver's five padded vectors and the adjoint), each batch one
//! launch of a gradient entry (one block per pair, or teams of blocks for pairs of large graphs;
//! adaptive primitives), its statuses and gradients copied back before the next.
use super::batch::{plan_batches_with, scratch_budget_bytes, team_blocks_for};
use super::launch::{BatchBuffers, GradientGrid, SolverEntry, gradient_team_resident_blocks, mgk_gradient, solver_blocks_per_sm, upload};
use crate::error::Result;
use crate::gpu::GpuDevice;
use crate::gram::control::RunControl;
use crate::mgk::pack::PackedGraphs;
use crate::mgk::report::GpuEntry;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use octile_types::mgk::gradient::gradient_scratch_len;
use octile_types::{GradientParams, MgkParams, PairJob, PairStatus, Real, TeamSync, team_sync_records};

/// What [`solve_pairs`] returns: statuses and gradients (pair-major, θ fastest) in pair order, and
/// the entry that ran.
pub type Solved = (Vec<PairStatus>, Vec<f64>, Vec<GpuEntry>);

/// K and ∂K/∂θ (the hyperparameters of `gp`) of `pairs` of `set` on the GPU: one block per pair,
/// or — pairs of large graphs, as the solver decides ([`team_blocks_for`]; `blocks_per_pair` the
/// user's choice) — teams of blocks per pair.
#[allow(clippy::too_many_arguments)]
pub fn solve_pairs<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    pairs: &[(u32, u32)],
    base_params: &MgkParams,
    gp: &GradientParams,
    blocks_per_pair: u32,
    scratch_bytes: Option<usize>,
    ctl: &RunControl,
) -> Result<Solved> {
    let np = gp.n_hyper as usize;
    let budget = scratch_budget_bytes(dev, scratch_bytes) / 8;
    let nodes = |g: u32| set.n_nodes(g as usize);
    // every pair's scratch against the budget before anything is uploaded or launched
    plan_batches_with(nodes, pairs, budget, gradient_scratch_len)?;
    let graphs = upload(dev, set, set64)?;
    let mut params = *base_params;
    // the gradient entries have no tiling-blocking walks
    params.dense_kernel.usable = 0;
    let resident = dev.sm_count * solver_blocks_per_sm::<T>(dev, SolverEntry::Adaptive);
    let resident_team = gradient_team_resident_blocks::<T>(dev);
    let rows = |g: u32| set.descs[g as usize].n_tile_rows as usize;
    let want: Vec<u32> = pairs
        .iter()
        .map(|&(a, b)| if resident_team < 2 { 1 } else { team_blocks_for(rows(a), rows(b), pairs.len(), resident_team, blocks_per_pair) })
        .collect();
    let (team_pairs, block_pairs): (Vec<usize>, Vec<usize>) = (0..pairs.len()).partition(|&k| want[k] >= 2);
    let gparams = dev.stream.clone_htod(std::slice::from_ref(gp))?;
    let mut status = vec![PairStatus::default(); pairs.len()];
    let mut grads = vec![f64::NAN; pairs.len() * np];
    let mut entries = Vec::new();
    for (which, team) in [(&block_pairs, false), (&team_pairs, true)] {
        if which.is_empty() {
            continue;
        }
        let sub: Vec<(u32, u32)> = which.iter().map(|&k| pairs[k]).collect();
        let team_blocks = if team {
            let mut sizes: Vec<u32> = which.iter().map(|&k| want[k]).collect();
            sizes.sort_unstable();
            sizes[sizes.len() / 2]
        } else {
            1
        };
        let max_teams = (resident_team / team_blocks).max(1);
        let mut sync = dev.stream.alloc_zeros::<TeamSync>(if team { max_teams as usize * team_sync_records(team_blocks) } else { 1 })?;
        params.team_blocks = team_blocks;
        let batches = plan_batches_with(nodes, &sub, budget, gradient_scratch_len)?;
        let scratch_max =
            batches.iter().map(|r| sub[r.clone()].iter().map(|&(a, b)| gradient_scratch_len(nodes(a), nodes(b))).sum::<usize>()).max().unwrap_or(1).max(1);
        let mut scratch = dev.stream.alloc_zeros::<f64>(scratch_max)?;
        let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
        let solved: Vec<(PairStatus, Vec<f64>)> = ctl.stream(batches, |range| {
            let mut offset = 0u64;
            let jobs: Vec<PairJob> = sub[range]
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
            let shape =
                if team { GradientGrid::Teams(max_teams.min(jobs.len() as u32), &mut sync) } else { GradientGrid::Blocks(resident.min(jobs.len() as u32)) };
            mgk_gradient(dev, &params, &graphs, &jobs, &mut buf, shape, &gparams, np, &mut grad)?;
            dev.stream.synchronize()?;
            let st = dev.stream.clone_dtoh(&buf.status)?;
            let g = dev.stream.clone_dtoh(&grad)?;
            Ok(st.into_iter().enumerate().map(|(k, st)| (st, g[k * np..(k + 1) * np].to_vec())).collect())
        })?;
        for (&k, (st, g)) in which.iter().zip(solved) {
            status[k] = st;
            if g.len() == np {
                grads[k * np..(k + 1) * np].copy_from_slice(&g);
            }
        }
        entries.push(if team {
            GpuEntry::GradientTeam { blocks_per_pair: team_blocks, pairs: which.len() }
        } else {
            GpuEntry::Gradient { pairs: which.len() }
        });
    }
    Ok((status, grads, entries))
}
