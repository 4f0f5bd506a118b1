//! A resident launch's shape ([`Launch`]) and entry ([`entry_name`], [`gradient_entry`]), and every
//! `unsafe` launch of the resident entries behind one checked function ([`mgk_resident`]),
//! and what a stream block prepares for its launches before it takes the device's submission lock
//! (`GpuDevice::submission`, under which a block's launches reach the GPU together): its launches'
//! parameters, uploaded in one copy ([`LaunchParams`]), and each launch's jobs checked against
//! the set and the launch ([`check_jobs`]: the per-job part of the launch contract). Both ran
//! inside each launch before, under the lock: a tile's 15 launches of ChEMBL's 230 k pairs took
//! 5–6 ms to submit, and the other tiles in flight waited that long for the lock each
//! (`results/host-packing-h200.md`, call 10's timelines).
use super::resident_set::DeviceResident;
use crate::backend::Precision;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use octile_types::Kernel;
use octile_types::mgk::resident::{
    GRADIENT_SCRATCH_SLICES, PRODUCT_MAX_ENTRIES, PRODUCT_MAX_UNKNOWNS, RESIDENT_BLOCK_HEADER_BYTES, RESIDENT_MAX_WARPS_PER_BLOCK,
};
use octile_types::{EdgeShape, GradientParams, PairJob, PairStatus, ResidentParams};
use rayon::prelude::*;
use std::sync::Arc;

/// How one launch runs: `team` threads per pair (32: one warp, `warps` of them per block; more:
/// one block), each team with `slice_words` words of shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Threads per team.
    pub team: u32,
    /// Teams per block (warp teams only; 1 for block teams).
    pub warps: u32,
    /// Words of each team's slice.
    pub slice_words: u32,
    /// The product form (Kronecker-delta κe, unit weights).
    pub product: bool,
    /// Block teams that walk the second graph's rows in pieces (`PIECE_NONZEROS`).
    pub split: bool,
    /// Gradient launches whose fused vectors do not all fit the slices (`ResidentParams::fused_beside`).
    pub fused_beside: bool,
}

impl Launch {
    /// Whether a launch of `self`'s shapes may take pairs of shape `o` (whose slice is at most as
    /// large): the same entry and team size, the same place for the fused vectors.
    pub fn same_kind(self, o: Launch) -> bool {
        self.product == o.product && self.split == o.split && self.fused_beside == o.fused_beside && self.team == o.team
    }
    /// Dynamic shared memory of one block.
    pub fn smem_bytes(&self) -> usize {
        if self.team == 32 { self.warps as usize * self.slice_words as usize * 4 } else { RESIDENT_BLOCK_HEADER_BYTES + self.slice_words as usize * 4 }
    }
    /// Threads per block.
    pub fn block_threads(&self) -> u32 {
        if self.team == 32 { 32 * self.warps } else { self.team }
    }
}

/// The entry of a launch for a κe shape, in `precision`.
pub fn entry_name(launch: Launch, shape: EdgeShape, precision: Precision) -> Kernel {
    let f64 = precision == Precision::F64;
    if launch.product {
        return match (launch.team == 32, f64) {
            (true, false) => Kernel::MgkResidentWarpProduct,
            (false, false) => Kernel::MgkResidentBlockProduct,
            (true, true) => Kernel::MgkResidentWarpProductF64,
            (false, true) => Kernel::MgkResidentBlockProductF64,
        };
    }
    if launch.split {
        return match (shape, f64) {
            (EdgeShape::General, false) => Kernel::MgkResidentBlockGeneralSplit,
            (EdgeShape::SquareExponential, false) => Kernel::MgkResidentBlockSqexpSplit,
            (EdgeShape::KroneckerDelta, false) => Kernel::MgkResidentBlockKdeltaSplit,
            (EdgeShape::General, true) => Kernel::MgkResidentBlockGeneralSplitF64,
            (EdgeShape::SquareExponential, true) => Kernel::MgkResidentBlockSqexpSplitF64,
            (EdgeShape::KroneckerDelta, true) => Kernel::MgkResidentBlockKdeltaSplitF64,
        };
    }
    match (launch.team == 32, shape, f64) {
        (true, EdgeShape::General, false) => Kernel::MgkResidentWarpGeneral,
        (true, EdgeShape::SquareExponential, false) => Kernel::MgkResidentWarpSqexp,
        (true, EdgeShape::KroneckerDelta, false) => Kernel::MgkResidentWarpKdelta,
        (false, EdgeShape::General, false) => Kernel::MgkResidentBlockGeneral,
        (false, EdgeShape::SquareExponential, false) => Kernel::MgkResidentBlockSqexp,
        (false, EdgeShape::KroneckerDelta, false) => Kernel::MgkResidentBlockKdelta,
        (true, EdgeShape::General, true) => Kernel::MgkResidentWarpGeneralF64,
        (true, EdgeShape::SquareExponential, true) => Kernel::MgkResidentWarpSqexpF64,
        (true, EdgeShape::KroneckerDelta, true) => Kernel::MgkResidentWarpKdeltaF64,
        (false, EdgeShape::General, true) => Kernel::MgkResidentBlockGeneralF64,
        (false, EdgeShape::SquareExponential, true) => Kernel::MgkResidentBlockSqexpF64,
        (false, EdgeShape::KroneckerDelta, true) => Kernel::MgkResidentBlockKdeltaF64,
    }
}

/// The gradient entry of a launch for a κe shape (split launches: `ResidentParams::split`).
pub fn gradient_entry(launch: Launch, shape: EdgeShape) -> Kernel {
    match (launch.team == 32, launch.product, shape) {
        (true, true, _) => Kernel::MgkResidentWarpGradientProduct,
        (false, true, _) => Kernel::MgkResidentBlockGradientProduct,
        (true, false, EdgeShape::General) => Kernel::MgkResidentWarpGradient,
        (true, false, EdgeShape::SquareExponential) => Kernel::MgkResidentWarpGradientSqexp,
        (true, false, EdgeShape::KroneckerDelta) => Kernel::MgkResidentWarpGradientKdelta,
        (false, false, EdgeShape::General) => Kernel::MgkResidentBlockGradient,
        (false, false, EdgeShape::SquareExponential) => Kernel::MgkResidentBlockGradientSqexp,
        (false, false, EdgeShape::KroneckerDelta) => Kernel::MgkResidentBlockGradientKdelta,
    }
}

/// The parameters of a stream block's launches: the host copies [`mgk_resident`] checks and their
/// device copies it passes, uploaded together (one copy a block instead of one a launch).
pub struct LaunchParams {
    host: Vec<ResidentParams>,
    dev: CudaSlice<ResidentParams>,
}

impl LaunchParams {
    /// `host` uploaded on `stream` (the launches' streams wait for it before they launch).
    pub fn upload(stream: &Arc<CudaStream>, host: Vec<ResidentParams>) -> Result<LaunchParams> {
        let dev = stream.clone_htod(&host)?;
        Ok(LaunchParams { host, dev })
    }
}

/// A launch's jobs checked against a resident set and a launch's slice and form ([`check_jobs`]):
/// what [`mgk_resident`] asks for instead of checking each job itself.
pub struct CheckedJobs<'a> {
    jobs: &'a [PairJob],
    set: &'a DeviceResident,
    slice_words: u32,
    product: bool,
}

/// Checks that every job's graphs are in `set` and that its slice fits `launch` (its form: the
/// product form's, or the five vectors'; `launch.slice_words`): the per-job part of the resident
/// entries' contract, on the calling thread's pool where there are many jobs.
pub fn check_jobs<'a>(set: &'a DeviceResident, launch: Launch, jobs: &'a [PairJob]) -> Result<CheckedJobs<'a>> {
    let h = &set.host;
    let check = |j: &PairJob| {
        if j.g1 as usize >= h.graphs.len() || j.g2 as usize >= h.graphs.len() {
            return Some(format!("job graph index ({}, {}) out of range", j.g1, j.g2));
        }
        let need = if launch.product { h.product_words(j.g1, j.g2) } else { Some(h.slice_words(j.g1, j.g2)) };
        match need {
            None => Some(format!(
                "pair ({}, {}) cannot take the product form (weights other than 1, more than {PRODUCT_MAX_UNKNOWNS} unknowns or {PRODUCT_MAX_ENTRIES} entries)",
                j.g1, j.g2
            )),
            Some(w) if w > launch.slice_words as usize => {
                Some(format!("pair ({}, {}) needs {w} slice words, the launch gives {}", j.g1, j.g2, launch.slice_words))
            }
            Some(_) => None,
        }
    };
    let bad = if crate::parallel::pooled(jobs.len()) { jobs.par_iter().find_map_any(check) } else { jobs.iter().find_map(check) };
    match bad {
        Some(what) => Err(OctileError::LaunchContract { launch: "resident".into(), what }),
        None => Ok(CheckedJobs { jobs, set, slice_words: launch.slice_words, product: launch.product }),
    }
}

/// The hyperparameters and the output of a gradient launch: one `GradientParams` on the device,
/// `n_jobs · n_hyper` f64.
pub struct GradientArgs<'a, 'b> {
    /// The hyperparameters.
    pub params: &'a CudaSlice<GradientParams>,
    /// Hyperparameters per pair.
    pub n_hyper: usize,
    /// ∂K/∂θ per job, job-major.
    pub grad: &'a mut CudaViewMut<'b, f64>,
    /// `GRADIENT_SCRATCH_SLICES · slice_words` f32 per team of the grid: where a team keeps the
    /// fused solve's vectors that do not fit its shared memory.
    pub scratch: &'a mut CudaSlice<f32>,
}

/// Solve `jobs` (uploaded in `dev_jobs`) with one resident launch of `grid` blocks, with the
/// parameters of launch `index` of `block`.
///
/// Checks first: job count, status length and `params.n_jobs` agree; strides match the set; the
/// edge kernel's shape matches `shape` (the specialized entries read only its first term) and its
/// features, and the node kernel's, lie inside the rows; `jobs` were checked against this set and a
/// launch of this slice and form (every job's graphs exist and its slice fits `launch.slice_words`:
/// [`check_jobs`]); the block's shared memory is within the device's limit; the team size
/// is a warp (with 1..=`RESIDENT_MAX_WARPS_PER_BLOCK` warps per block) or a block of a power of two
/// times 32 threads up to `RESIDENT_BLOCK_THREADS`.
#[allow(clippy::too_many_arguments)]
pub fn mgk_resident(
    dev: &GpuDevice,
    stream: &Arc<CudaStream>,
    block: &LaunchParams,
    index: usize,
    set: &DeviceResident,
    jobs: CheckedJobs<'_>,
    dev_jobs: &CudaView<'_, PairJob>,
    status: &mut CudaViewMut<'_, PairStatus>,
    counter: &mut CudaViewMut<'_, u32>,
    launch: Launch,
    grid: u32,
    mut gradient: Option<GradientArgs<'_, '_>>,
) -> Result<()> {
    let Some(params) = block.host.get(index) else {
        return Err(OctileError::LaunchContract { launch: "resident".into(), what: format!("launch {index} of a block of {}", block.host.len()) });
    };
    let shape = EdgeShape::of(&params.edge_kernel);
    let name = if gradient.is_some() { gradient_entry(launch, shape) } else { entry_name(launch, shape, set.host.precision) };
    let fail = |what: String| Err(OctileError::LaunchContract { launch: name.name().into(), what });
    let h = &set.host;
    // the jobs were checked (`check_jobs`) against this set and a launch of this slice and form
    if !std::ptr::eq(jobs.set, set) || jobs.slice_words != launch.slice_words || jobs.product != launch.product {
        return fail("jobs checked against another set or launch".into());
    }
    let jobs = jobs.jobs;
    if params.n_jobs as usize != jobs.len() || dev_jobs.len() < jobs.len() || status.len() < jobs.len() || counter.is_empty() {
        return fail(format!(
            "n_jobs {} / jobs {} / device jobs {} / status {} / counter {}",
            params.n_jobs,
            jobs.len(),
            dev_jobs.len(),
            status.len(),
            counter.len()
        ));
    }
    if let Some(what) = h.layout_mismatch(params) {
        return fail(what);
    }
    if params.slice_words != launch.slice_words {
        return fail(format!("params.slice_words {} / launch {}", params.slice_words, launch.slice_words));
    }
    // f64 values and vectors stay 8-byte aligned only where every slice starts on an even word
    if !(launch.slice_words as usize).is_multiple_of(h.real_words()) {
        return fail(format!("slice of {} words for values of {} words", launch.slice_words, h.real_words()));
    }
    let warp = launch.team == 32;
    if let Some(g) = &gradient
        && (!launch.slice_words.is_multiple_of(2)
            || g.params.len() != 1
            || g.grad.len() < jobs.len() * g.n_hyper
            || g.scratch.len()
                < grid.max(1) as usize * (if launch.team == 32 { launch.warps } else { 1 }) as usize * GRADIENT_SCRATCH_SLICES * launch.slice_words as usize)
    {
        return fail(format!(
            "gradient launch: slice {} words (even needed), {} params, {} values for {} jobs, {} scratch words",
            launch.slice_words,
            g.params.len(),
            g.grad.len(),
            jobs.len(),
            g.scratch.len()
        ));
    }
    if launch.product && shape != EdgeShape::KroneckerDelta {
        return fail(format!("product form needs a Kronecker-delta κe, not {shape:?}"));
    }
    if launch.split && (launch.product || warp) {
        return fail("split rows are a block-team form of the on-the-fly entries".into());
    }
    let team_ok = if warp {
        (1..=RESIDENT_MAX_WARPS_PER_BLOCK).contains(&launch.warps)
    } else {
        launch.warps == 1 && launch.team.is_power_of_two() && launch.team <= name.decl().threads.max()
    };
    if !team_ok {
        return fail(format!("team of {} threads, {} per block", launch.team, launch.warps));
    }
    let max_smem = dev.max_smem_per_block_bytes();
    if launch.smem_bytes() > max_smem {
        return fail(format!("{} bytes of shared memory per block, the device allows {max_smem}", launch.smem_bytes()));
    }
    if jobs.is_empty() {
        return Ok(());
    }
    let f = dev.function_with_smem(name, launch.smem_bytes())?;
    stream.memset_zeros(counter)?;
    let cfg = LaunchConfig { grid_dim: (grid.max(1), 1, 1), block_dim: (launch.block_threads(), 1, 1), shared_mem_bytes: launch.smem_bytes() as u32 };
    let dev_params = block.dev.slice(index..index + 1);
    let mut b = stream.launch_builder(&f);
    b.arg(&dev_params).arg(set.graphs()).arg(set.words()).arg(dev_jobs).arg(status).arg(counter);
    if let Some(g) = gradient.as_mut() {
        b.arg(g.params).arg(&mut *g.grad).arg(&mut *g.scratch);
    }
    // SAFETY: the entries' contract (octile_kernels::mgk::resident) is checked above and, per job,
    // by `check_jobs` (the token names this set and this launch's slice and form): the params
    // are one ResidentParams in device memory (the device copy of the host copy checked here), the entry's precision is the set's (entry_name of
    // precision) with slices a whole number of its values, alive until the stream is synchronized (below, in
    // the caller, before this function's buffers drop: cudarc frees on the stream in order); every graph's
    // run lies inside `words` (built by pack_resident, uploaded whole), every job's graphs exist and
    // its slice fits slice_words, the dynamic shared memory is warps·slice (warp teams) or
    // header + slice (block teams) as launched, strides and feature indices match the rows, the
    // specialized κe entries get the spec whose shape they read (EdgeShape::of), product-form
    // pairs have unit weights, n·n′ ≤ PRODUCT_MAX_UNKNOWNS and their spans fit (product_words), status holds
    // n_jobs entries, and the counter is zeroed; a gradient launch's split flag is its pieces' (split
    // only for block teams whose second graph has pieces: checked above), its scratch
    // holds GRADIENT_SCRATCH_SLICES·slice_words f32 (≥ 5·n1·n2 of any job) for each team of the grid, and its
    // one GradientParams and n_jobs · n_hyper outputs exist (checked above).
    unsafe { b.launch(cfg) }?;
    Ok(())
}
