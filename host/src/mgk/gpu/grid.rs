//! The resident solver's grid launches: the pairs whose slice exceeds a block's shared memory
//! (whole protein chains; f64 pairs of ~100-node graphs) solved by the same solver
//! (`octile_kernels::mgk::resident::grid`) with a team of blocks per pair, launched cooperatively,
//! and the five product vectors in global scratch.
//!
//! ```text
//!   pairs (largest slice first) ─► launches of ≤ GRID_LAUNCH_PAIRS pairs
//!   per launch: team_blocks = resident blocks ÷ pairs, within 1 ..= rows ÷ (128·GRID_MIN_ROWS_PER_THREAD)
//!               teams       = resident blocks ÷ team_blocks, at most one per pair, within the scratch budget
//!   scratch     [ team 0: dg x r p ap ][ team 1 ] …      grid_slice_words of the launch's largest pair
//! ```
//! Why teams of blocks: ten pairs of 800-atom chains would leave most of the GPU idle with one
//! block each; a team's barriers cost ~µs against an XMV of 10⁸ product nonzeros.
use crate::backend::Precision;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::gram::control::RunControl;
use crate::mgk::gpu::resident_set::{DeviceResident, ResidentSet};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use octile_types::mgk::names::SOLVER_BLOCK_THREADS;
use octile_types::mgk::resident::RESIDENT_VECTORS;
use octile_types::{EdgeShape, Kernel, KernelSpec, PairJob, PairStatus, ResidentParams, TeamSync, team_sync_records};

/// Product rows per thread below which a pair's team gets no more blocks (fewer rows per thread
/// would spend more on the team's barriers than they save).
pub const GRID_MIN_ROWS_PER_THREAD: usize = 16;

/// Most pairs per grid launch (the unit of progress reports and cancellation).
pub const GRID_LAUNCH_PAIRS: usize = 4096;

/// The grid entry for a κe shape in `precision`.
pub fn grid_entry(shape: EdgeShape, precision: Precision) -> Kernel {
    match (shape, precision) {
        (EdgeShape::General, Precision::F32) => Kernel::MgkResidentGridGeneral,
        (EdgeShape::SquareExponential, Precision::F32) => Kernel::MgkResidentGridSqexp,
        (EdgeShape::KroneckerDelta, Precision::F32) => Kernel::MgkResidentGridKdelta,
        (EdgeShape::General, Precision::F64) => Kernel::MgkResidentGridGeneralF64,
        (EdgeShape::SquareExponential, Precision::F64) => Kernel::MgkResidentGridSqexpF64,
        (EdgeShape::KroneckerDelta, Precision::F64) => Kernel::MgkResidentGridKdeltaF64,
    }
}

/// Words of pair (a, b)'s slice of global scratch: the five product vectors, an even number of
/// words (f64 vectors stay 8-byte aligned); `None` where n·n′ ≥ 2³² (the kernel's row counters are
/// 32-bit).
pub fn grid_slice_words(set: &ResidentSet, a: u32, b: u32) -> Option<usize> {
    let n = set.size(a).0.checked_mul(set.size(b).0)?;
    if n >= 1 << 32 {
        return None;
    }
    let words = RESIDENT_VECTORS * n * set.real_words();
    Some(words + words % 2)
}

/// Blocks per team for a launch of `n_pairs` pairs whose median product has `rows` rows, with
/// `resident` blocks resident at once: the GPU shared among the pairs, but at least
/// [`GRID_MIN_ROWS_PER_THREAD`] rows per thread (small pairs: one block each).
pub fn grid_team_blocks(rows: usize, n_pairs: usize, resident: u32) -> u32 {
    let most = (rows / (SOLVER_BLOCK_THREADS as usize * GRID_MIN_ROWS_PER_THREAD)).max(1);
    (resident as usize / n_pairs.max(1)).clamp(1, most).min(resident.max(1) as usize) as u32
}

/// What [`solve_grid`] did: a status per pair of `which` (not converged where it was not solved:
/// too large for the scratch budget, missed rtol, or cancelled), its launches and team sizes.
pub struct GridSolved {
    /// Per pair of `which`, in that order.
    pub status: Vec<PairStatus>,
    /// Launches made.
    pub launches: usize,
    /// Blocks per team of each launch.
    pub team_blocks: Vec<u32>,
}

/// Solve the pairs `pairs[which[..]]` of the uploaded set with the grid entries; `budget_bytes`:
/// the most global scratch the teams of a launch may take (pairs whose one slice exceeds it are
/// left unsolved, for the tile solver).
#[allow(clippy::too_many_arguments)]
pub fn solve_grid(
    dev: &GpuDevice,
    set: &DeviceResident,
    pairs: &[(u32, u32)],
    which: &[usize],
    node: &KernelSpec,
    edge: &KernelSpec,
    rtol: f64,
    max_iterations: u32,
    budget_bytes: usize,
    ctl: &RunControl,
) -> Result<GridSolved> {
    let h = set.host();
    let entry = grid_entry(EdgeShape::of(edge), h.precision);
    let mut status = vec![PairStatus::default(); which.len()];
    let (mut launches, mut team_blocks) = (0usize, Vec::new());
    let per_sm = dev.function(entry).ok().and_then(|f| f.occupancy_max_active_blocks_per_multiprocessor(SOLVER_BLOCK_THREADS, 0, None).ok()).unwrap_or(0);
    let resident = per_sm * dev.sm_count;
    if resident == 0 || which.is_empty() {
        return Ok(GridSolved { status, launches, team_blocks });
    }
    // the pairs that fit the budget, largest slice first (each launch's first pair sizes its slices)
    let mut order: Vec<(usize, usize)> = which
        .iter()
        .enumerate()
        .filter_map(|(at, &k)| grid_slice_words(h, pairs[k].0, pairs[k].1).filter(|&w| w * 4 <= budget_bytes).map(|w| (at, w)))
        .collect();
    order.sort_by_key(|&(at, w)| (std::cmp::Reverse(w), at));
    let chunks: Vec<std::ops::Range<usize>> = (0..order.len()).step_by(GRID_LAUNCH_PAIRS).map(|s| s..(s + GRID_LAUNCH_PAIRS).min(order.len())).collect();
    let mut scratch: Option<CudaSlice<u32>> = None;
    let solved = ctl.stream(chunks, |range| {
        let part = &order[range];
        let slice_words = part[0].1;
        let rows = |&(at, _): &(usize, usize)| {
            let (a, b) = pairs[which[at]];
            h.size(a).0 * h.size(b).0
        };
        let mut sizes: Vec<usize> = part.iter().map(rows).collect();
        sizes.sort_unstable();
        let blocks = grid_team_blocks(sizes[sizes.len() / 2], part.len(), resident);
        let teams = (resident / blocks).min(part.len() as u32).min((budget_bytes / (slice_words * 4)).max(1) as u32).max(1);
        let words = teams as usize * slice_words;
        if scratch.as_ref().is_none_or(|s| s.len() < words) {
            scratch = None; // freed before the larger one is taken
            scratch = Some(dev.stream.alloc_zeros::<u32>(words)?);
        }
        let jobs: Vec<PairJob> = part
            .iter()
            .map(|&(at, _)| {
                let (g1, g2) = pairs[which[at]];
                PairJob { g1, g2, scratch_offset: 0 }
            })
            .collect();
        let params = ResidentParams {
            node_kernel: *node,
            edge_kernel: *edge,
            rtol,
            n_jobs: jobs.len() as u32,
            max_iterations,
            node_stride: h.node_stride as u32,
            nz_stride: h.nz_stride as u32,
            slice_words: slice_words as u32,
            fused_beside: 0,
            team_blocks: blocks,
            split: 0,
        };
        let mut sync = dev.stream.alloc_zeros::<TeamSync>(teams as usize * team_sync_records(blocks))?;
        let scratch = scratch.as_mut().expect("allocated above");
        let out = mgk_resident_grid(dev, &params, set, &jobs, teams, &mut sync, scratch)?;
        launches += 1;
        team_blocks.push(blocks);
        Ok(part.iter().map(|&(at, _)| at).zip(out).collect::<Vec<(usize, PairStatus)>>())
    })?;
    for (at, st) in solved {
        status[at] = st;
    }
    Ok(GridSolved { status, launches, team_blocks })
}

impl crate::gram::control::Pending for (usize, PairStatus) {
    fn pending() -> Self {
        (usize::MAX, PairStatus::default())
    }
}

/// Solve `jobs` with one cooperative launch of the grid entry for the set's precision and κe's
/// shape: `teams` teams of `params.team_blocks` blocks; the statuses, in job order.
///
/// Checks first: `params.n_jobs` is the job count; strides match the set; κe's and κv's features lie
/// inside the rows; every job's graphs exist and its [`grid_slice_words`] fit `params.slice_words`,
/// an even number; `scratch` holds `teams` slices and `sync` `teams · team_sync_records(team_blocks)`
/// records; the grid is within the blocks the driver can keep resident at once.
pub fn mgk_resident_grid(
    dev: &GpuDevice,
    params: &ResidentParams,
    set: &DeviceResident,
    jobs: &[PairJob],
    teams: u32,
    sync: &mut CudaSlice<TeamSync>,
    scratch: &mut CudaSlice<u32>,
) -> Result<Vec<PairStatus>> {
    let h = set.host();
    let name = grid_entry(EdgeShape::of(&params.edge_kernel), h.precision);
    let fail = |what: String| Err(OctileError::LaunchContract { launch: name.name().into(), what });
    if params.n_jobs as usize != jobs.len() {
        return fail(format!("n_jobs {} / jobs {}", params.n_jobs, jobs.len()));
    }
    if let Some(what) = h.layout_mismatch(params) {
        return fail(what);
    }
    if !params.slice_words.is_multiple_of(2) {
        return fail(format!("slice of {} words (an even number needed)", params.slice_words));
    }
    for j in jobs {
        if j.g1 as usize >= h.graphs.len() || j.g2 as usize >= h.graphs.len() {
            return fail(format!("job graph index ({}, {}) out of range", j.g1, j.g2));
        }
        match grid_slice_words(h, j.g1, j.g2) {
            Some(w) if w <= params.slice_words as usize => {}
            w => return fail(format!("pair ({}, {}) needs {w:?} slice words, the launch gives {}", j.g1, j.g2, params.slice_words)),
        }
    }
    let blocks = params.team_blocks;
    let grid = teams as u64 * blocks as u64;
    let f = dev.function(name)?;
    let resident = f.occupancy_max_active_blocks_per_multiprocessor(SOLVER_BLOCK_THREADS, 0, None)? as u64 * dev.sm_count as u64;
    if blocks == 0 || teams == 0 || grid > resident {
        return fail(format!("{teams} teams of {blocks} blocks; at most {resident} blocks can be resident"));
    }
    if (scratch.len() as u64) < teams as u64 * params.slice_words as u64 || sync.len() < teams as usize * team_sync_records(blocks) {
        return fail(format!("{} scratch words and {} team records for {teams} teams", scratch.len(), sync.len()));
    }
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let dev_jobs = dev.stream.clone_htod(jobs)?;
    let mut status = dev.stream.alloc_zeros::<PairStatus>(jobs.len())?;
    let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
    dev.stream.memset_zeros(sync)?;
    let dev_params = dev.stream.clone_htod(std::slice::from_ref(params))?;
    let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (SOLVER_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut b = dev.stream.launch_builder(&f);
    b.arg(&dev_params).arg(set.graphs()).arg(set.words()).arg(&dev_jobs).arg(&mut status).arg(&mut counter).arg(&mut *sync).arg(&mut *scratch);
    // SAFETY: the grid entries' contract (octile_kernels::mgk::resident::grid) is checked above:
    // one ResidentParams in device memory, the entry of the set's precision and κe's shape
    // (grid_entry), every graph's run inside `words` (pack_resident, uploaded whole), every job's
    // graphs exist and its five vectors fit the even slice_words (n·n′ < 2³²), `scratch` holds a
    // slice per team and `sync` the teams' zeroed records, strides and feature indices match the
    // rows, status holds n_jobs entries, the counter is zeroed, the blocks have
    // SOLVER_BLOCK_THREADS threads, and the grid is whole teams launched cooperatively within the
    // resident limit (the driver fails the launch otherwise), so no team barrier waits forever.
    // Every buffer outlives the launch: the stream is synchronized below.
    unsafe { b.launch_cooperative(cfg) }?;
    dev.stream.synchronize()?;
    Ok(dev.stream.clone_dtoh(&status)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_share_the_gpu_but_keep_enough_rows_per_thread() {
        let rows_per_block = SOLVER_BLOCK_THREADS as usize * GRID_MIN_ROWS_PER_THREAD;
        // ten pairs of 800-atom chains (~7·10⁵ rows) on 792 resident blocks: 79 blocks each
        assert_eq!(grid_team_blocks(700_000, 10, 792), 79);
        // one such pair: as many blocks as keep GRID_MIN_ROWS_PER_THREAD rows per thread
        assert_eq!(grid_team_blocks(700_000, 1, 792) as usize, 700_000 / rows_per_block);
        assert_eq!(grid_team_blocks(700_000, 1, 200), 200);
        // many pairs of 96-node graphs (9,216 rows): a block each
        assert_eq!(grid_team_blocks(9_216, 12_880, 792), 1);
        // few small pairs: no more blocks than GRID_MIN_ROWS_PER_THREAD allows, at least one
        assert_eq!(grid_team_blocks(3 * rows_per_block + 5, 2, 792), 3);
        assert_eq!(grid_team_blocks(10, 1, 792), 1);
        assert_eq!(grid_team_blocks(700_000, 0, 0), 1);
    }

    #[test]
    fn slices_hold_five_vectors_in_an_even_number_of_words() {
        use octile_types::ResidentGraph;
        let set = |precision, n: &[u32]| ResidentSet {
            precision,
            graphs: n.iter().map(|&n| ResidentGraph { offset: 0, n_nodes: n, nnz: 0, n_pieces: 0 }).collect(),
            words: Vec::new(),
            node_stride: 3,
            nz_stride: 2,
            unit_weights: vec![true; n.len()],
        };
        let s32 = set(Precision::F32, &[3, 5, 70_000]);
        assert_eq!(grid_slice_words(&s32, 0, 1), Some(76)); // 5·15 = 75, rounded up to even
        assert_eq!(grid_slice_words(&s32, 1, 1), Some(126));
        // 70,000² ≥ 2³²: the kernel's 32-bit row counters cannot take it
        assert_eq!(grid_slice_words(&s32, 2, 2), None);
        let s64 = set(Precision::F64, &[3, 5]);
        assert_eq!(grid_slice_words(&s64, 0, 1), Some(150));
        assert_eq!(grid_entry(EdgeShape::SquareExponential, Precision::F64), Kernel::MgkResidentGridSqexpF64);
    }
}
