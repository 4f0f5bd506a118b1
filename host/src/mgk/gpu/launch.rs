//! Every `unsafe` launch of the MGK solver entries, each behind a safe function that checks the
//! contract (lengths, indices, offsets) on the host first; uploading a packed graph set.
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::mgk::pack::PackedGraphs;
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg, ValidAsZeroBits};
use octile_types::Kernel;
use octile_types::mgk::layout::{MAX_NZ_STRIDE, TILE_STORAGE_COMPACT, TILE_STORAGE_DENSE};
use octile_types::mgk::names::SOLVER_BLOCK_THREADS;
use octile_types::mgk::tiling::{TILE_AREA, scratch_len};
use octile_types::{GraphDesc, MgkParams, Octile, PairJob, PairStatus, Real, TeamSync, team_sync_records};

/// A packed graph set resident on the device (plus the host copy of its descriptors, for checks).
pub struct DeviceGraphs<T> {
    descs_host: Vec<GraphDesc>,
    descs: CudaSlice<GraphDesc>,
    row_ptr: CudaSlice<u32>,
    octiles: CudaSlice<Octile>,
    edge_data: CudaSlice<T>,
    node_data: CudaSlice<T>,
    edge_data64: CudaSlice<f64>,
    node_data64: CudaSlice<f64>,
    node_stride: usize,
    nz_stride: usize,
    /// Nonzero rows stored in edge_data.
    n_nz: usize,
    /// Largest nz_offset + nnz (compact reads) and nz_offset + 64 (dense-storage reads) over tiles.
    nz_end: [usize; 2],
    /// Bytes on the device.
    pub bytes: usize,
}

/// Upload a packed set in precision T and the same set in f64 (`set64`: the f32 kernel computes its
/// refinement residuals from it; for T = f64 pass the same set). Empty arrays are padded to one
/// element (CUDA has no zero-size buffers).
pub fn upload<T: Real + DeviceRepr>(dev: &GpuDevice, set: &PackedGraphs<T>, set64: &PackedGraphs<f64>) -> Result<DeviceGraphs<T>> {
    if set64.octiles != set.octiles || set64.descs != set.descs || set64.node_stride != set.node_stride {
        return Err(OctileError::LaunchContract { launch: "graph set upload".into(), what: "the f64 copy of the graph set has another layout".into() });
    }
    /// `v` on the device; an empty `v` becomes the one element `pad`.
    fn up<U: DeviceRepr + Copy>(dev: &GpuDevice, v: &[U], pad: U) -> Result<CudaSlice<U>> {
        Ok(dev.stream.clone_htod(if v.is_empty() { std::slice::from_ref(&pad) } else { v })?)
    }
    let bytes = set.descs.len() * 16 + set.row_ptr.len() * 4 + set.octiles.len() * 24 + (set.edge_data.len() + set.node_data.len()) * (T::BYTES + 8);
    crate::memory::check_gpu(
        bytes as u128,
        dev.free_mem_bytes(),
        || format!("the packed graphs ({} graphs, {} tiles) on the GPU", set.descs.len(), set.octiles.len()),
        "use fewer graphs per call, or --backend cpu",
    )?;
    Ok(DeviceGraphs {
        descs_host: set.descs.clone(),
        descs: up(dev, &set.descs, GraphDesc::default())?,
        row_ptr: up(dev, &set.row_ptr, 0)?,
        octiles: up(dev, &set.octiles, Octile::default())?,
        edge_data: up(dev, &set.edge_data, T::ZERO)?,
        node_data: up(dev, &set.node_data, T::ZERO)?,
        edge_data64: up(dev, &set64.edge_data, 0.0)?,
        node_data64: up(dev, &set64.node_data, 0.0)?,
        node_stride: set.node_stride,
        nz_stride: set.nz_stride,
        n_nz: set.edge_data.len() / set.nz_stride.max(1),
        nz_end: [
            set.octiles.iter().map(|t| t.nz_offset as usize + t.nnz() as usize).max().unwrap_or(0),
            set.octiles.iter().map(|t| t.nz_offset as usize + TILE_AREA).max().unwrap_or(0),
        ],
        bytes,
    })
}

/// Device buffers of one batch of jobs (scratch and counter are reused by every batch).
pub struct BatchBuffers<'s> {
    /// Jobs.
    pub jobs: CudaSlice<PairJob>,
    /// One status per job.
    pub status: CudaSlice<PairStatus>,
    /// Scratch for all jobs (f64 elements; the f32 kernel carves its f32 vectors out of it).
    pub scratch: &'s mut CudaSlice<f64>,
    /// The dynamic-scheduling counter.
    pub counter: &'s mut CudaSlice<u32>,
}

/// Which build of the solver body a launch runs (`octile_kernels::mgk`'s entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverEntry {
    /// Per-tile-pair primitive from the map, shared-tiling dense walks (`mgk_solve_*`).
    Adaptive,
    /// Sparse × sparse only, compact storage only (`mgk_solve_sparse_*`).
    SparseOnly,
    /// Per-tile-pair primitive, tiling-blocking dense walks (`mgk_solve_blocked_*`); needs
    /// `params.dense_kernel.usable`.
    Blocked,
}

/// Solve `jobs` (already uploaded in `buf`) with the MGK kernel for T.
///
/// Checks before launching: `params.n_jobs == jobs.len() == status.len()`; every job's graphs
/// exist; every job's scratch range `[offset, offset + scratch_len(n, m))` lies inside `scratch`;
/// the packed strides match `params`; feature indices of both kernels are inside the rows.
pub fn mgk_solve<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    params: &MgkParams,
    graphs: &DeviceGraphs<T>,
    jobs: &[PairJob],
    buf: &mut BatchBuffers<'_>,
    grid: u32,
    entry: SolverEntry,
) -> Result<()> {
    let name = solver_name::<T>(entry);
    check_solve(name.name(), params, graphs, jobs, buf, entry)?;
    if params.team_blocks != 1 {
        return Err(OctileError::LaunchContract {
            launch: name.name().into(),
            what: format!("the one-block-per-pair entries need team_blocks = 1, got {}", params.team_blocks),
        });
    }
    if jobs.is_empty() {
        return Ok(());
    }
    dev.stream.memset_zeros(&mut *buf.counter)?;
    let f = dev.function(name)?;
    let cfg = LaunchConfig { grid_dim: (grid.max(1), 1, 1), block_dim: (SOLVER_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let params_dev = upload_params(dev, params)?;
    let mut b = dev.stream.launch_builder(&f);
    push_solver_args(&mut b, &params_dev, graphs, buf);
    // SAFETY: the kernel's contract (octile_kernels::mgk::solver::solve_all) is checked in check_solve (the
    // sparse-only entry additionally gets compact storage, the blocked one a usable gathered κe
    // whose slots lie inside the nonzero rows, both checked there): every tile's
    // entries in the chosen storage lie inside edge_data, job count and
    // status length agree with n_jobs, graph indices are in range, each job's scratch range (f64
    // elements) lies in the scratch buffer (offsets are disjoint by construction in batch.rs), the
    // f64 data mirror the T data (checked in `upload`), strides and feature
    // indices match the packed rows, the counter is zeroed, the block size is
    // SOLVER_BLOCK_THREADS, and `params_dev` is one MgkParams on the device, the copy of the
    // params checked here (the entry's `&MgkParams`, which nothing writes while it runs).
    unsafe { b.launch(cfg) }?;
    Ok(())
}

/// Solve `jobs` with the team entry for T: `teams` teams of `params.team_blocks` blocks, each team
/// one pair at a time, launched cooperatively (the driver refuses a grid that cannot be resident
/// at once, instead of letting a team barrier wait forever). `sync` holds at least
/// `teams · team_sync_records(team_blocks)` records (each team's TeamSync and its blocks' partial sums).
///
/// Checks: everything [`mgk_solve`] checks, plus `team_blocks ≥ 2`, `teams ≥ 1`, the grid within
/// [`team_resident_blocks`], and `sync` long enough (it is zeroed here). `blocked`: the
/// tiling-blocking dense walks (as [`SolverEntry::Blocked`]).
#[allow(clippy::too_many_arguments)]
pub fn mgk_solve_team<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    params: &MgkParams,
    graphs: &DeviceGraphs<T>,
    jobs: &[PairJob],
    buf: &mut BatchBuffers<'_>,
    teams: u32,
    sync: &mut CudaSlice<TeamSync>,
    blocked: bool,
) -> Result<()> {
    let name = team_name::<T>(blocked);
    check_solve(name.name(), params, graphs, jobs, buf, if blocked { SolverEntry::Blocked } else { SolverEntry::Adaptive })?;
    let fail = |what: String| Err(OctileError::LaunchContract { launch: name.name().into(), what });
    let grid = teams as u64 * params.team_blocks as u64;
    let resident = team_resident_blocks::<T>(dev, blocked) as u64;
    if params.team_blocks < 2 || teams == 0 || grid > resident {
        return fail(format!(
            "{teams} teams of {} blocks; the team entry needs ≥ 2 blocks per team and at most {resident} resident blocks",
            params.team_blocks
        ));
    }
    let records = teams as usize * team_sync_records(params.team_blocks);
    if sync.len() < records {
        return fail(format!("{} team records for {teams} teams of {} blocks ({records} needed)", sync.len(), params.team_blocks));
    }
    if jobs.is_empty() {
        return Ok(());
    }
    dev.stream.memset_zeros(&mut *buf.counter)?;
    dev.stream.memset_zeros(sync)?;
    let f = dev.function(name)?;
    let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (SOLVER_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let params_dev = upload_params(dev, params)?;
    let mut b = dev.stream.launch_builder(&f);
    push_solver_args(&mut b, &params_dev, graphs, buf);
    b.arg(sync);
    // SAFETY: solve_all's contract is checked in check_solve (as for mgk_solve); the team
    // contract: the grid is exactly `teams` whole teams of team_blocks ≥ 2 blocks, `sync` holds
    // ≥ teams · team_sync_records(team_blocks) zeroed records (checked above), and the launch is cooperative, so every block is resident
    // together (the driver fails the launch otherwise) and no team barrier can wait forever.
    // `params_dev` is the device copy of the params checked here (as in mgk_solve).
    unsafe { b.launch_cooperative(cfg) }?;
    Ok(())
}

/// Blocks of the team entry for T that can be resident at once (occupancy × SMs): the largest
/// cooperative grid.
pub fn team_resident_blocks<T: Real>(dev: &GpuDevice, blocked: bool) -> u32 {
    let per_sm = dev
        .function(team_name::<T>(blocked))
        .ok()
        .and_then(|f| f.occupancy_max_active_blocks_per_multiprocessor(SOLVER_BLOCK_THREADS, 0, None).ok())
        .unwrap_or(0);
    per_sm * dev.sm_count
}

/// The launch's parameters in device memory (one `MgkParams`, the host copy checked by the caller):
/// the solver entries take them as a shared reference (`&MgkParams`: a `noalias` read-only
/// pointer). Why not by value: a kernel parameter struct that the body borrows is copied into every
/// thread's local memory at the start (1,136 bytes a thread, most of each entry's ptxas stack
/// frame); measured on an H100, NWS on the tile solver 0.530 → 0.493 s. The gradient entries keep
/// them by value (measured slower by reference: [`mgk_gradient`]).
pub(super) fn upload_params(dev: &GpuDevice, params: &MgkParams) -> Result<CudaSlice<MgkParams>> {
    Ok(dev.stream.clone_htod(std::slice::from_ref(params))?)
}

/// Push the arguments every solver entry takes, in the order of `octile_kernels::mgk`'s entry
/// signature (the team entries take one more, pushed by the caller); `params` from [`upload_params`].
pub(super) fn push_solver_args<'a, T: DeviceRepr>(
    b: &mut LaunchArgs<'a>,
    params: &'a CudaSlice<MgkParams>,
    graphs: &'a DeviceGraphs<T>,
    buf: &'a mut BatchBuffers<'_>,
) {
    b.arg(params);
    push_args_after_params(b, graphs, buf);
}

/// Push the arguments that follow the params in every solver and gradient entry's signature.
fn push_args_after_params<'a, T: DeviceRepr>(b: &mut LaunchArgs<'a>, graphs: &'a DeviceGraphs<T>, buf: &'a mut BatchBuffers<'_>) {
    b.arg(&graphs.descs)
        .arg(&graphs.row_ptr)
        .arg(&graphs.octiles)
        .arg(&graphs.edge_data)
        .arg(&graphs.node_data)
        .arg(&graphs.edge_data64)
        .arg(&graphs.node_data64)
        .arg(&buf.jobs)
        .arg(&mut buf.status)
        .arg(&mut *buf.scratch)
        .arg(&mut *buf.counter);
}

/// The launch contract shared by both solver launches (see [`mgk_solve`]); `name`: the entry
/// launched, for the error.
pub(super) fn check_solve<T: Real>(
    name: &str,
    params: &MgkParams,
    graphs: &DeviceGraphs<T>,
    jobs: &[PairJob],
    buf: &BatchBuffers<'_>,
    entry: SolverEntry,
) -> Result<()> {
    let fail = |what: String| Err(OctileError::LaunchContract { launch: name.into(), what });
    if params.n_jobs as usize != jobs.len() || buf.jobs.len() != jobs.len() || buf.status.len() != jobs.len() {
        return fail(format!("n_jobs {} / jobs {} / device jobs {} / status {}", params.n_jobs, jobs.len(), buf.jobs.len(), buf.status.len()));
    }
    if params.node_stride as usize != graphs.node_stride || params.nz_stride as usize != graphs.nz_stride {
        return fail("strides of params and packed graphs differ".into());
    }
    if entry == SolverEntry::SparseOnly && params.tile_storage != TILE_STORAGE_COMPACT {
        return fail("the sparse-only kernel reads compact tile storage only".into());
    }
    if entry == SolverEntry::Blocked && !params.dense_kernel.fits(graphs.nz_stride) {
        return fail("the tiling-blocking entry needs a usable gathered edge kernel whose features lie inside the nonzero rows".into());
    }
    let nz_end = graphs.nz_end[(params.tile_storage == TILE_STORAGE_DENSE) as usize];
    if params.tile_storage > TILE_STORAGE_DENSE || nz_end > graphs.n_nz {
        return fail(format!("tile storage {} reads up to nonzero row {nz_end}, {} stored", params.tile_storage, graphs.n_nz));
    }
    if graphs.nz_stride > MAX_NZ_STRIDE {
        return fail(format!("{} edge features; the GPU kernel stages at most {}", graphs.nz_stride - 1, MAX_NZ_STRIDE - 1));
    }
    for (spec, width) in [(&params.node_kernel, graphs.node_stride - 2), (&params.edge_kernel, graphs.nz_stride - 1)] {
        if spec.terms().iter().any(|t| t.kind != 0 && t.feature as usize >= width) {
            return fail("kernel feature index outside the packed feature rows".into());
        }
    }
    for j in jobs {
        let (Some(a), Some(b)) = (graphs.descs_host.get(j.g1 as usize), graphs.descs_host.get(j.g2 as usize)) else {
            return fail(format!("job graph index ({}, {}) out of range", j.g1, j.g2));
        };
        let need = j.scratch_offset as usize + scratch_len(a.n_nodes as usize, b.n_nodes as usize);
        if need > buf.scratch.len() {
            return fail(format!("scratch of {} elements, job needs up to {need}", buf.scratch.len()));
        }
    }
    Ok(())
}

/// How a gradient launch runs: one block per pair on `grid` blocks, or `teams` teams of
/// `params.team_blocks` blocks (cooperative) with one [`TeamSync`] each in `sync`.
pub enum GradientGrid<'a> {
    /// One block per pair.
    Blocks(u32),
    /// Teams of blocks per pair.
    Teams(u32, &'a mut CudaSlice<TeamSync>),
}

/// K and ∂K/∂θ of `jobs` (already uploaded in `buf`) with the gradient entry for T: `gparams` on the
/// device holds the hyperparameters, `grad` gets `n_jobs · n_hyper` values.
///
/// Checks: everything [`mgk_solve`] checks (and, for teams, [`mgk_solve_team`]'s team contract),
/// every job's gradient scratch (`gradient_scratch_len`) inside `scratch`, `grad` long enough.
#[allow(clippy::too_many_arguments)]
pub fn mgk_gradient<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    params: &MgkParams,
    graphs: &DeviceGraphs<T>,
    jobs: &[PairJob],
    buf: &mut BatchBuffers<'_>,
    shape: GradientGrid<'_>,
    gparams: &CudaSlice<octile_types::GradientParams>,
    n_hyper: usize,
    grad: &mut CudaSlice<f64>,
) -> Result<()> {
    let team = matches!(shape, GradientGrid::Teams(..));
    let name = match (T::BYTES == 4, team) {
        (true, false) => Kernel::MgkGradientF32,
        (false, false) => Kernel::MgkGradientF64,
        (true, true) => Kernel::MgkGradientTeamF32,
        (false, true) => Kernel::MgkGradientTeamF64,
    };
    check_solve(name.name(), params, graphs, jobs, buf, SolverEntry::Adaptive)?;
    let fail = |what: String| Err(OctileError::LaunchContract { launch: name.name().into(), what });
    if (params.team_blocks != 1) != team || gparams.len() != 1 || grad.len() < jobs.len() * n_hyper {
        return fail(format!(
            "team_blocks {}, {} gradient params (1), {} gradient values for {} jobs × {n_hyper}",
            params.team_blocks,
            gparams.len(),
            grad.len(),
            jobs.len()
        ));
    }
    let grid = match &shape {
        GradientGrid::Blocks(g) => *g as u64,
        GradientGrid::Teams(teams, sync) => {
            let grid = *teams as u64 * params.team_blocks as u64;
            let resident = gradient_team_resident_blocks::<T>(dev) as u64;
            if params.team_blocks < 2 || *teams == 0 || grid > resident || sync.len() < *teams as usize * team_sync_records(params.team_blocks) {
                return fail(format!("{teams} teams of {} blocks ({} records); at most {resident} resident blocks", params.team_blocks, sync.len()));
            }
            grid
        }
    };
    for j in jobs {
        let (a, b) = (&graphs.descs_host[j.g1 as usize], &graphs.descs_host[j.g2 as usize]);
        let need = j.scratch_offset as usize + octile_types::mgk::gradient::gradient_scratch_len(a.n_nodes as usize, b.n_nodes as usize);
        if need > buf.scratch.len() {
            return fail(format!("scratch of {} elements, job needs up to {need}", buf.scratch.len()));
        }
    }
    if jobs.is_empty() {
        return Ok(());
    }
    dev.stream.memset_zeros(&mut *buf.counter)?;
    let f = dev.function(name)?;
    let cfg = LaunchConfig { grid_dim: (grid.max(1) as u32, 1, 1), block_dim: (SOLVER_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut b = dev.stream.launch_builder(&f);
    // the gradient entries take MgkParams by value (`octile_kernels::mgk::solver`'s gradient_entry!)
    b.arg(params);
    push_args_after_params(&mut b, graphs, buf);
    match shape {
        GradientGrid::Blocks(_) => {
            b.arg(gparams).arg(grad);
            // SAFETY: the solver entries' contract is checked in check_solve (adaptive entry), each
            // job's gradient scratch range lies in the scratch buffer (checked above; disjoint by
            // construction), `gparams` holds one GradientParams and `grad` n_jobs · n_hyper f64
            // (checked above), the counter is zeroed and the block size is SOLVER_BLOCK_THREADS.
            unsafe { b.launch(cfg) }?;
        }
        GradientGrid::Teams(_, sync) => {
            dev.stream.memset_zeros(&mut *sync)?;
            b.arg(&mut *sync).arg(gparams).arg(grad);
            // SAFETY: as the one-block launch, plus the team contract of mgk_solve_team: whole
            // teams of team_blocks ≥ 2 blocks, ≥ teams · team_sync_records(team_blocks) zeroed records, a cooperative
            // launch within the resident blocks (checked above).
            unsafe { b.launch_cooperative(cfg) }?;
        }
    }
    Ok(())
}

/// Blocks of the team gradient entry for T that can be resident at once (the largest cooperative grid).
pub fn gradient_team_resident_blocks<T: Real>(dev: &GpuDevice) -> u32 {
    let name = if T::BYTES == 4 { Kernel::MgkGradientTeamF32 } else { Kernel::MgkGradientTeamF64 };
    let per_sm = dev.function(name).ok().and_then(|f| f.occupancy_max_active_blocks_per_multiprocessor(SOLVER_BLOCK_THREADS, 0, None).ok()).unwrap_or(0);
    per_sm * dev.sm_count
}

/// The one-block-per-pair solver entry for T.
fn solver_name<T: Real>(entry: SolverEntry) -> Kernel {
    match (T::BYTES == 4, entry) {
        (true, SolverEntry::Adaptive) => Kernel::MgkSolveF32,
        (false, SolverEntry::Adaptive) => Kernel::MgkSolveF64,
        (true, SolverEntry::SparseOnly) => Kernel::MgkSolveSparseF32,
        (false, SolverEntry::SparseOnly) => Kernel::MgkSolveSparseF64,
        (true, SolverEntry::Blocked) => Kernel::MgkSolveBlockedF32,
        (false, SolverEntry::Blocked) => Kernel::MgkSolveBlockedF64,
    }
}

/// The team entry for T, with shared-tiling or tiling-blocking dense walks.
fn team_name<T: Real>(blocked: bool) -> Kernel {
    match (T::BYTES == 4, blocked) {
        (true, false) => Kernel::MgkSolveTeamF32,
        (false, false) => Kernel::MgkSolveTeamF64,
        (true, true) => Kernel::MgkSolveTeamBlockedF32,
        (false, true) => Kernel::MgkSolveTeamBlockedF64,
    }
}

/// Blocks per SM the solver entry for T can keep resident.
pub fn solver_blocks_per_sm<T: Real>(dev: &GpuDevice, entry: SolverEntry) -> u32 {
    dev.function(solver_name::<T>(entry))
        .ok()
        .and_then(|f| f.occupancy_max_active_blocks_per_multiprocessor(SOLVER_BLOCK_THREADS, 0, None).ok())
        .filter(|&b| b > 0)
        .unwrap_or(4)
}
