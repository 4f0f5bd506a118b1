//! Streaming many pairs through the GPU under a memory budget.
//!
//! Each pair needs `scratch_len(n, m)` = 5 padded product vectors of f64 scratch. Pairs are cut into
//! consecutive batches whose scratch fits the budget; each batch is one launch of persistent blocks
//! that pull jobs from an atomic counter, and its statuses are copied back before the next batch
//! starts, so every pair's value is written exactly once, in order.
use super::launch::{BatchBuffers, SolverEntry, mgk_solve, mgk_solve_team, solver_blocks_per_sm, team_resident_blocks, upload};
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::gram::control::RunControl;
use crate::mgk::pack::PackedGraphs;
use crate::mgk::report::GpuEntry;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use octile_types::mgk::layout::TILE_STORAGE_COMPACT;
use octile_types::mgk::primitives::nnz_bin;
use octile_types::mgk::tiling::{padded_len, scratch_len};
use octile_types::{MgkParams, PairJob, PairStatus, Real, TeamSync, team_sync_records};

/// One pair's solution x (f64, tiled layout `octile_types::mgk::tiling`).
pub type PairVector = Vec<f64>;

/// What [`solve_pairs`] returns: statuses in pair order, each pair's x when asked for, and the
/// entries that ran.
pub type Solved = (Vec<PairStatus>, Option<Vec<PairVector>>, Vec<GpuEntry>);

/// Scratch budget in bytes: `asked` (`GpuTuning::scratch_bytes`) if set, else 60% of free memory,
/// at most 16 GiB.
pub fn scratch_budget_bytes(dev: &GpuDevice, asked: Option<usize>) -> usize {
    asked.unwrap_or_else(|| (dev.free_mem_bytes() / 10 * 6).min(16 << 30))
}

/// Most pairs per launch (keeps progress reports and cancellation responsive).
const MAX_BATCH_PAIRS: usize = 1 << 16;

/// Split `pairs` into consecutive batches that fit `budget_elems` of scratch.
pub fn plan_batches(set_nodes: impl Fn(u32) -> usize, pairs: &[(u32, u32)], budget_elems: usize) -> Result<Vec<std::ops::Range<usize>>> {
    plan_batches_with(set_nodes, pairs, budget_elems, scratch_len)
}

/// [`plan_batches`] with `per_pair(n, m)` scratch elements per pair.
pub fn plan_batches_with(
    set_nodes: impl Fn(u32) -> usize,
    pairs: &[(u32, u32)],
    budget_elems: usize,
    per_pair: fn(usize, usize) -> usize,
) -> Result<Vec<std::ops::Range<usize>>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut used = 0usize;
    for (k, &(a, b)) in pairs.iter().enumerate() {
        let need = per_pair(set_nodes(a), set_nodes(b));
        if need > budget_elems {
            // typed, before any launch of the set: not a CUDA error part way
            return Err(OctileError::TooLarge {
                what: format!("the GPU solver's scratch for a pair of graphs with {} and {} nodes", set_nodes(a), set_nodes(b)),
                need_bytes: need as u128 * 8,
                have_bytes: budget_elems as u64 * 8,
                of: "GPU scratch budget (60 % of free GPU memory)",
                hint: "a pair this large needs its product graph (n·n′ unknowns) in memory; --backend cpu solves it on the host when that has the memory",
            });
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

/// The sparse-only entry runs when the map's other choices (D, L, R) concern at most this share of
/// the tile pairs: below it, the per-tile-pair switch in the adaptive entry's hot loop (measured
/// 0.72–0.92× of the sparse-only loop, see the README) costs more than those few tile pairs gain.
pub const SPARSE_ENTRY_MAX_OTHER_SHARE: f64 = 0.01;

/// Share of the tile pairs of a launch over these octiles for which the map picks a primitive other
/// than sparse × sparse. Every octile of G meets every octile of G' in the XMV, so the tile pairs of
/// a graph pair are the product of the two graphs' octiles; over the set, the nonzero-count
/// histogram's outer product estimates them (exact for K(X, X) over all ordered pairs).
fn other_share(octiles: &[octile_types::Octile], map: &octile_types::PrimitiveMap) -> f64 {
    let mut hist = [0f64; octile_types::mgk::primitives::NNZ_BINS];
    for t in octiles {
        hist[nnz_bin(t.nnz())] += 1.0;
    }
    map.non_sparse_share(&hist)
}

/// Whether a launch over these octiles uses the sparse-only solver entry, and the share of tile
/// pairs whose map choice it overrides: compact storage, and the map picks sparse × sparse for all
/// but at most [`SPARSE_ENTRY_MAX_OTHER_SHARE`] of the tile pairs (typically for none: molecules,
/// NWS; BA ×48: ~0.03%).
fn uses_sparse_entry(octiles: &[octile_types::Octile], params: &MgkParams) -> (bool, f64) {
    let share = other_share(octiles, &params.primitives);
    (params.tile_storage == TILE_STORAGE_COMPACT && share <= SPARSE_ENTRY_MAX_OTHER_SHARE, share)
}

/// Blocks that should solve one pair of graphs with `nt` and `mt` tile rows together, in a launch
/// of `n_pairs` pairs on a GPU with `resident` team-entry blocks resident at once; `fixed` is the
/// user's `blocks_per_pair` (0 = automatic).
///
/// Automatic: one block for small pairs (fewer than 64 output blocks of 8×8, i.e. both graphs
/// under ~64 nodes: a cross-block barrier costs more than it saves); otherwise enough blocks that
/// each warp draws ~64 output blocks on average (pairs of large graphs: whole GPU per pair), and at least
/// resident / n_pairs (few pairs would leave the GPU idle), but never fewer than 2 output blocks
/// per warp.
pub fn team_blocks_for(nt: usize, mt: usize, n_pairs: usize, resident: u32, fixed: u32) -> u32 {
    let resident = resident as usize;
    let blocks = if fixed > 0 {
        fixed as usize
    } else {
        let out_blocks = nt * mt;
        if out_blocks < 64 {
            1
        } else {
            let warps = octile_types::mgk::names::SOLVER_WARPS as usize;
            (out_blocks / (64 * warps)).max(resident / n_pairs.max(1)).min(out_blocks / (2 * warps))
        }
    };
    blocks.min(resident).max(1) as u32
}

/// Solve `pairs` (indices into `set`) on the GPU; also returns which solver entries ran (adaptive
/// or sparse-only for one block per pair, see [`uses_sparse_entry`]; teams for pairs of large
/// graphs, see [`team_blocks_for`]). The adaptive entries walk dense tiles of B with tiling-blocking
/// when `base_params.dense_kernel.usable`, else with shared tiling. `scratch_bytes`: the scratch
/// budget asked for (`GpuTuning::scratch_bytes`; `None`: see [`scratch_budget_bytes`]).
#[allow(clippy::too_many_arguments)]
pub fn solve_pairs<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    pairs: &[(u32, u32)],
    base_params: &MgkParams,
    blocks_per_pair: u32,
    scratch_bytes: Option<usize>,
    want_x: bool,
    ctl: &RunControl,
) -> Result<Solved> {
    let budget = scratch_budget_bytes(dev, scratch_bytes) / 8; // scratch is f64 for both kernels
    // every pair's scratch against the budget before anything is uploaded or launched
    plan_batches(|g| set.n_nodes(g as usize), pairs, budget).map_err(|e| match e {
        // a budget asked for is not 60 % of the free memory: say which it is
        OctileError::TooLarge { what, need_bytes, have_bytes, hint, .. } if scratch_bytes.is_some() => {
            OctileError::TooLarge { what, need_bytes, have_bytes, of: "GPU scratch budget asked for (scratch_bytes, OCTILE_GPU_SCRATCH_BYTES)", hint }
        }
        e => e,
    })?;
    let graphs = upload(dev, set, set64)?;
    let (sparse_only, overridden) = uses_sparse_entry(&set.octiles, base_params);
    // tiling-blocking dense walks: requested by the caller through a usable gathered κe
    let blocked = base_params.dense_kernel.usable != 0;
    let entry = match (sparse_only, blocked) {
        (true, _) => SolverEntry::SparseOnly,
        (false, true) => SolverEntry::Blocked,
        (false, false) => SolverEntry::Adaptive,
    };
    let resident = dev.sm_count * solver_blocks_per_sm::<T>(dev, entry);
    let resident_team = team_resident_blocks::<T>(dev, blocked);
    let rows = |g: u32| set.descs[g as usize].n_tile_rows as usize;
    let want: Vec<u32> = pairs
        .iter()
        .map(|&(a, b)| if resident_team < 2 { 1 } else { team_blocks_for(rows(a), rows(b), pairs.len(), resident_team, blocks_per_pair) })
        .collect();
    let (team_pairs, block_pairs): (Vec<usize>, Vec<usize>) = (0..pairs.len()).partition(|&k| want[k] >= 2);
    let mut out = vec![PairStatus::default(); pairs.len()];
    let mut xs: Vec<PairVector> = vec![Vec::new(); if want_x { pairs.len() } else { 0 }];
    let mut entries = Vec::new();
    if !block_pairs.is_empty() {
        let (st, x) = run_batches(dev, set, pairs, &block_pairs, budget, want_x, ctl, |jobs, buf| {
            let mut params = *base_params;
            params.n_jobs = jobs.len() as u32;
            params.team_blocks = 1;
            mgk_solve(dev, &params, &graphs, jobs, buf, resident.min(jobs.len() as u32), entry)
        })?;
        scatter(&mut out, &block_pairs, st);
        scatter(&mut xs, &block_pairs, x);
        entries.push(if sparse_only { GpuEntry::SparseOnly { overridden_share: overridden } } else { GpuEntry::Adaptive { tiling_blocking: blocked } });
    }
    if !team_pairs.is_empty() {
        let mut sizes: Vec<u32> = team_pairs.iter().map(|&k| want[k]).collect();
        sizes.sort_unstable();
        let team_blocks = sizes[sizes.len() / 2];
        let max_teams = (resident_team / team_blocks).max(1);
        let mut sync = dev.stream.alloc_zeros::<TeamSync>(max_teams as usize * team_sync_records(team_blocks))?;
        let (st, x) = run_batches(dev, set, pairs, &team_pairs, budget, want_x, ctl, |jobs, buf| {
            let mut params = *base_params;
            params.n_jobs = jobs.len() as u32;
            params.team_blocks = team_blocks;
            mgk_solve_team(dev, &params, &graphs, jobs, buf, max_teams.min(jobs.len() as u32), &mut sync, blocked)
        })?;
        scatter(&mut out, &team_pairs, st);
        scatter(&mut xs, &team_pairs, x);
        entries.push(GpuEntry::Team { blocks_per_pair: team_blocks, pairs: team_pairs.len(), tiling_blocking: blocked });
    }
    Ok((out, want_x.then_some(xs), entries))
}

/// `dst[which[i]] = src[i]`.
fn scatter<V>(dst: &mut [V], which: &[usize], src: Vec<V>) {
    for (&k, v) in which.iter().zip(src) {
        dst[k] = v;
    }
}

/// Run the pairs `all[which[..]]` in consecutive batches whose scratch fits `budget` f64 elements;
/// `launch` solves one batch's jobs (already uploaded in the buffers). Statuses come back in the
/// order of `which`, and with `want_x` each pair's solution x (f64, tiled: the first padded vector
/// of its scratch, where both kernels keep x — `x` in f64, `x64` in the mixed-precision path).
#[allow(clippy::too_many_arguments)]
fn run_batches<T: Real>(
    dev: &GpuDevice,
    set: &PackedGraphs<T>,
    all: &[(u32, u32)],
    which: &[usize],
    budget: usize,
    want_x: bool,
    ctl: &RunControl,
    mut launch: impl FnMut(&[PairJob], &mut BatchBuffers<'_>) -> Result<()>,
) -> Result<(Vec<PairStatus>, Vec<PairVector>)> {
    let pairs: Vec<(u32, u32)> = which.iter().map(|&k| all[k]).collect();
    let pairs = &pairs[..];
    let batches = plan_batches(|g| set.n_nodes(g as usize), pairs, budget)?;
    let scratch_max = batches
        .iter()
        .map(|r| pairs[r.clone()].iter().map(|&(a, b)| scratch_len(set.n_nodes(a as usize), set.n_nodes(b as usize))).sum::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut scratch = dev.stream.alloc_zeros::<f64>(scratch_max)?;
    let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
    let solved = ctl.stream(batches, |range| {
        let mut offset = 0u64;
        let jobs: Vec<PairJob> = pairs[range]
            .iter()
            .map(|&(g1, g2)| {
                let j = PairJob { g1, g2, scratch_offset: offset };
                offset += scratch_len(set.n_nodes(g1 as usize), set.n_nodes(g2 as usize)) as u64;
                j
            })
            .collect();
        let mut buf = BatchBuffers {
            jobs: dev.stream.clone_htod(&jobs)?,
            status: dev.stream.alloc_zeros::<PairStatus>(jobs.len())?,
            scratch: &mut scratch,
            counter: &mut counter,
        };
        launch(&jobs, &mut buf)?;
        dev.stream.synchronize()?;
        let status = dev.stream.clone_dtoh(&buf.status)?;
        let all = if want_x { dev.stream.clone_dtoh(&*buf.scratch)? } else { Vec::new() };
        Ok(jobs
            .iter()
            .zip(status)
            .map(|(j, st)| {
                let x = if want_x {
                    let len = padded_len(set.n_nodes(j.g1 as usize), set.n_nodes(j.g2 as usize));
                    all[j.scratch_offset as usize..j.scratch_offset as usize + len].to_vec()
                } else {
                    Vec::new()
                };
                (st, x)
            })
            .collect())
    })?;
    let (out, xs): (Vec<PairStatus>, Vec<PairVector>) = solved.into_iter().unzip();
    Ok((out, if want_x { xs } else { Vec::new() }))
}

#[cfg(test)]
mod entry_tests {
    use super::{team_blocks_for, uses_sparse_entry};
    use octile_types::mgk::layout::{TILE_STORAGE_COMPACT, TILE_STORAGE_DENSE};
    use octile_types::{KernelSpec, MgkParams, Octile, Primitive, PrimitiveMap};

    fn params(map: PrimitiveMap, storage: u32) -> MgkParams {
        MgkParams {
            node_kernel: KernelSpec::unit(),
            edge_kernel: KernelSpec::unit(),
            rtol: 1e-9,
            n_jobs: 0,
            max_iterations: 1,
            node_stride: 2,
            nz_stride: 1,
            primitives: map,
            tile_storage: storage,
            team_blocks: 1,
            dense_kernel: octile_types::GatheredKernel::of(&KernelSpec::unit()),
        }
    }

    fn tile(nnz: u32) -> Octile {
        Octile { nz_mask: if nnz == 64 { u64::MAX } else { (1u64 << nnz) - 1 }, ..Octile::default() }
    }

    #[test]
    fn sparse_entry_when_the_map_is_sparse_for_almost_every_tile_pair_and_storage_compact() {
        let sparse = |tiles: &[Octile], map, storage| uses_sparse_entry(tiles, &params(map, storage)).0;
        let sparse_tiles = [tile(3), tile(6), tile(11)];
        assert!(sparse(&sparse_tiles, PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT));
        assert_eq!(uses_sparse_entry(&sparse_tiles, &params(PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT)).1, 0.0);
        assert!(!sparse(&sparse_tiles, PrimitiveMap::threshold(2), TILE_STORAGE_DENSE));
        // 3 of the 4 tile pairs are dense × dense
        assert!(!sparse(&[tile(3), tile(64)], PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT));
        assert!(!sparse(&sparse_tiles, PrimitiveMap::uniform(Primitive::DenseDense), TILE_STORAGE_COMPACT));
        assert!(sparse(&[tile(64)], PrimitiveMap::uniform(Primitive::SparseSparse), TILE_STORAGE_COMPACT));
        // one dense tile among 300 sparse ones: 601 of 301² tile pairs (0.66%) → sparse-only
        let mut few: Vec<Octile> = vec![tile(3); 300];
        few.push(tile(64));
        let (yes, share) = uses_sparse_entry(&few, &params(PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT));
        assert!(yes && (share - 601.0 / (301.0 * 301.0)).abs() < 1e-12, "share {share}");
        // … among 50: 101 of 51² (3.9%) → adaptive
        assert!(!sparse(&few[250..], PrimitiveMap::threshold(2), TILE_STORAGE_COMPACT));
    }

    #[test]
    fn team_size_rule() {
        // small pairs: one block, however few pairs
        assert_eq!(team_blocks_for(4, 4, 3, 660, 0), 1);
        assert_eq!(team_blocks_for(12, 12, 12_880, 660, 0), 1); // NWS, 96 nodes: many pairs fill the GPU
        // few pairs: spread over the GPU, but at least 2 output blocks per warp
        assert_eq!(team_blocks_for(12, 12, 3, 660, 0), 18);
        // protein chains (~600 atoms): ~64 output blocks per warp when many pairs
        assert_eq!(team_blocks_for(75, 75, 136, 660, 0), 21);
        // one pair of 2,000-atom chains: the whole GPU
        assert_eq!(team_blocks_for(250, 250, 1, 660, 0), 660);
        // user's choice, capped by what can be resident
        assert_eq!(team_blocks_for(2, 2, 1000, 660, 3), 3);
        assert_eq!(team_blocks_for(2, 2, 1000, 660, 1), 1);
        assert_eq!(team_blocks_for(250, 250, 1, 8, 100), 8);
    }
}
