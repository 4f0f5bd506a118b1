//! Streaming many pairs through the GPU under a memory budget.
//!
//! Each pair needs `scratch_len(n, m)` = 5 padded product vectors of f64 scratch. Pairs are cut into
//! consecutive batches whose scratch fits the budget; each batch is one launch of persistent blocks
//! that pull jobs from an atomic counter, and its statuses are copied back before the next batch
//! starts, so every pair's value is written exactly once, in order.
use super::GpuDevice;
use super::launch::{BatchBuffers, mgk_solve, solver_blocks_per_sm, upload};
use crate::error::{OctileError, Result};
use octile_types::layout::TILE_STORAGE_COMPACT;
use octile_types::primitives::nnz_bin;
use crate::pack::PackedGraphs;
use crate::solver::RunControl;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use octile_types::tiling::scratch_len;
use octile_types::{MgkParams, PairJob, PairStatus, Real};

/// Scratch budget in bytes: `OCTILE_GPU_SCRATCH_BYTES` if set, else 60% of free memory, at most 16 GiB.
pub fn scratch_budget_bytes(dev: &GpuDevice) -> usize {
    if let Some(b) = std::env::var("OCTILE_GPU_SCRATCH_BYTES").ok().and_then(|v| v.parse().ok()) {
        return b;
    }
    (dev.free_mem_bytes() / 10 * 6).min(16 << 30)
}

/// Most pairs per launch (keeps progress reports and cancellation responsive).
const MAX_BATCH_PAIRS: usize = 1 << 16;

/// Split `pairs` into consecutive batches that fit `budget_elems` of scratch.
pub fn plan_batches(set_nodes: impl Fn(u32) -> usize, pairs: &[(u32, u32)], budget_elems: usize) -> Result<Vec<std::ops::Range<usize>>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut used = 0usize;
    for (k, &(a, b)) in pairs.iter().enumerate() {
        let need = scratch_len(set_nodes(a), set_nodes(b));
        if need > budget_elems {
            return Err(OctileError::Cuda(format!(
                "pair of graphs with {} and {} nodes needs {need} scratch elements, more than the budget of {budget_elems}",
                set_nodes(a),
                set_nodes(b)
            )));
        }
        if used + need > budget_elems || k - start >= MAX_BATCH_PAIRS {
            out.push(start..k);
            start = k;
            used = 0;
        }
        used += need;
    }
    if start < pairs.len() {
        out.push(start..pairs.len());
    }
    Ok(out)
}

/// Whether a launch over these octiles uses the sparse-only solver entry: compact storage and the
/// map picks sparse × sparse for every pair of nonzero-count bins present (the same choices the
/// adaptive entry would make, without the per-tile-pair switch).
fn uses_sparse_entry(octiles: &[octile_types::Octile], params: &MgkParams) -> bool {
    let bins = octiles.iter().fold(0u32, |m, t| m | 1 << nnz_bin(t.nnz()));
    params.tile_storage == TILE_STORAGE_COMPACT && params.primitives.all_sparse_over(bins)
}

/// Solve `pairs` (indices into `set`) on the GPU; also returns whether the sparse-only solver entry
/// ran (see [`uses_sparse_entry`]).
pub fn solve_pairs<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    pairs: &[(u32, u32)],
    base_params: &MgkParams,
    ctl: &RunControl,
) -> Result<(Vec<PairStatus>, bool)> {
    let graphs = upload(dev, set, set64)?;
    let budget = scratch_budget_bytes(dev) / 8; // scratch is f64 for both kernels
    let batches = plan_batches(|g| set.n_nodes(g as usize), pairs, budget)?;
    let scratch_max = batches
        .iter()
        .map(|r| pairs[r.clone()].iter().map(|&(a, b)| scratch_len(set.n_nodes(a as usize), set.n_nodes(b as usize))).sum::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut scratch = dev.stream.alloc_zeros::<f64>(scratch_max)?;
    let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
    let sparse_only = uses_sparse_entry(&set.octiles, base_params);
    let resident = dev.sm_count * solver_blocks_per_sm::<T>(dev, sparse_only);
    let mut out = Vec::with_capacity(pairs.len());
    for range in batches {
        if ctl.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let mut offset = 0u64;
        let jobs: Vec<PairJob> = pairs[range.clone()]
            .iter()
            .map(|&(g1, g2)| {
                let j = PairJob { g1, g2, scratch_offset: offset };
                offset += scratch_len(set.n_nodes(g1 as usize), set.n_nodes(g2 as usize)) as u64;
                j
            })
            .collect();
        let mut params = *base_params;
        params.n_jobs = jobs.len() as u32;
        let mut buf = BatchBuffers {
            jobs: dev.stream.clone_htod(&jobs)?,
            status: dev.stream.alloc_zeros::<PairStatus>(jobs.len())?,
            scratch,
            counter,
        };
        let grid = resident.min(jobs.len() as u32);
        mgk_solve(dev, &params, &graphs, &jobs, &mut buf, grid, sparse_only)?;
        dev.stream.synchronize()?;
        out.extend(dev.stream.clone_dtoh(&buf.status)?);
        ctl.report(jobs.len());
        scratch = buf.scratch;
        counter = buf.counter;
    }
    Ok((out, sparse_only))
}

#[cfg(test)]
mod entry_tests {
    use super::uses_sparse_entry;
    use octile_types::layout::{TILE_STORAGE_COMPACT, TILE_STORAGE_DENSE};
    use octile_types::{KernelSpec, MgkParams, Octile, Primitive, PrimitiveMap};

    fn params(map: PrimitiveMap, storage: u32) -> MgkParams {
        MgkParams { node_kernel: KernelSpec::unit(), edge_kernel: KernelSpec::unit(), rtol: 1e-9, n_jobs: 0, max_iterations: 1, node_stride: 2, nz_stride: 1, primitives: map, tile_storage: storage, _pad: 0 }
    }

    fn tile(nnz: u32) -> Octile {
        Octile { nz_mask: if nnz == 64 { u64::MAX } else { (1u64 << nnz) - 1 }, ..Octile::default() }
    }

    #[test]
    fn sparse_entry_only_when_every_present_bin_pair_is_sparse_and_storage_compact() {
        let sparse_tiles = [tile(3), tile(6), tile(11)];
        assert!(uses_sparse_entry(&sparse_tiles, &params(PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT)));
        assert!(!uses_sparse_entry(&sparse_tiles, &params(PrimitiveMap::threshold(2), TILE_STORAGE_DENSE)));
        assert!(!uses_sparse_entry(&[tile(3), tile(64)], &params(PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT)));
        assert!(!uses_sparse_entry(&sparse_tiles, &params(PrimitiveMap::uniform(Primitive::DenseDense), TILE_STORAGE_COMPACT)));
        assert!(uses_sparse_entry(&[tile(64)], &params(PrimitiveMap::uniform(Primitive::SparseSparse), TILE_STORAGE_COMPACT)));
    }
}
