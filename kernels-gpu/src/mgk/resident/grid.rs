//! The resident solver for pairs whose slice exceeds shared memory (whole protein chains; f64
//! pairs of ~100-node graphs): the same solve ([`solve_pair`], on-the-fly XMV), by a team of
//! blocks per pair ([`GridTeam`], launched cooperatively), with the five product vectors in a slice
//! of global scratch per team and both graphs read in place from the set.
//!
//! ```text
//!   grid     [ team 0: blocks 0 .. B-1 ][ team 1: blocks B .. 2B-1 ] ...     B = params.team_blocks
//!   scratch  [ team 0: dg x r p ap ][ team 1: dg x r p ap ] ...              slice_words words each
//!   graphs   read where the set lies (words[d.offset ..]): not staged
//!   rows     thread t of the team: product rows k = t, t + 128·B, …   (k = i·n′ + i′)
//! ```
//! Why not the tile solver: its XMV walks 8×8 tiles, and a protein chain's octiles are a quarter
//! full (16 of 64 entries), so even its sparse tile pairs pay per tile pair what this walk pays per
//! product nonzero. Why not staged graphs: two 800-atom chains take ~300 KB, more than a block's
//! shared memory; their CSR rows stay in L1 and L2 while a warp walks them (the warp's rows share
//! G's row i, read by one broadcast load per nonzero: [`OnTheFly`] walks G's row innermost).
use super::edge::{EdgeEval, General, kdelta, sqexp};
use super::jobs::{Jobs, deal};
use super::on_the_fly::OnTheFly;
use super::real::ResidentReal;
use super::solve::solve_pair;
use super::teams::ResidentTeam;
use super::view::View;
use crate::intrinsics::block_idx_x;
use crate::mgk::team::{GridTeam, TileTeam};
use octile_types::mgk::layout::NZ_FEATURES;
use octile_types::pcg::Team;
use octile_types::{PairJob, PairStatus, ResidentGraph, ResidentParams, TeamSync};

/// A team of blocks with its slice of global scratch.
struct GridSliceTeam {
    team: GridTeam,
    index: usize,
    slice: *mut u32,
}

impl Team for GridSliceTeam {
    #[inline(always)]
    fn rank(&self) -> usize {
        self.team.rank()
    }
    #[inline(always)]
    fn size(&self) -> usize {
        self.team.size()
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: forwarded (every thread of the team calls it).
        unsafe { self.team.sum2(a, b) }
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: forwarded.
        unsafe { self.team.barrier() }
    }
}

impl ResidentTeam for GridSliceTeam {
    #[inline(always)]
    fn slice(&self) -> *mut u32 {
        self.slice
    }
    #[inline(always)]
    fn index(&self) -> usize {
        self.index
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: forwarded (every thread of the team calls it; the counter is valid).
        unsafe { TileTeam::next_job(&mut self.team, counter) }
    }
}

/// Every job of a grid launch, on the fly.
///
/// # Safety
/// The launch contract of the grid entries (see [`MgkResidentGridGeneral`]).
#[inline(always)]
unsafe fn solve_grid<T: ResidentReal, E: EdgeEval<T>>(prm: &ResidentParams, e: &E, js: Jobs, sync: *mut TeamSync, scratch: *mut u32) {
    let (nzs, ns) = (prm.nz_stride as usize, prm.node_stride as usize);
    let index = (block_idx_x() / prm.team_blocks) as usize;
    // SAFETY: team_blocks divides the grid, `sync` holds the teams' records and the launch is
    // cooperative (contract); team `index`'s slice lies in `scratch`.
    let mut crew = unsafe { GridSliceTeam { team: GridTeam::of_block(prm.team_blocks, sync), index, slice: scratch.add(index * prm.slice_words as usize) } };
    // SAFETY: forwarded contract: every run lies in `words` (8-byte aligned where the set is f64:
    // runs of f64 sets take an even number of words), and the slice holds five n1·n2 vectors.
    unsafe {
        deal(&mut crew, prm, js, |crew, _, d1, d2| {
            let g1 = View::<T>::at(js.words.add(d1.offset as usize), &d1, nzs, ns);
            let g2 = View::<T>::at(js.words.add(d2.offset as usize), &d2, nzs, ns);
            let v = crew.slice() as *mut T;
            solve_pair::<T, _, _, 1>(crew, prm, &OnTheFly::<E, false, T, false> { e, g1: &g1, g2: &g2, nzs }, &g1, &g2, v)
        })
    }
}

/// Defines a grid entry for one κe evaluator in one precision.
macro_rules! grid_entry {
    ($t:ty, $(#[$doc:meta])* $name:ident, |$p:ident| $edge:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `params` points at the launch's parameters in global memory; launched cooperatively
        /// (every block resident at once) with `SOLVER_BLOCK_THREADS` threads per block and a grid
        /// of whole teams of `team_blocks ≥ 1` blocks; `sync` holds `team_sync_records(team_blocks)`
        /// zeroed records per team; `scratch` holds `slice_words` words per team (8-byte aligned
        /// in f64), at least five n1·n2 values of T for every job, n1·n2 < 2³²; `graphs`/`words` in
        /// the resident layout with every run inside `words`; every job's graphs exist; `status`
        /// holds `n_jobs` entries; `*counter == 0`.
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
            sync: *mut TeamSync,
            scratch: *mut u32,
        ) {
            // SAFETY: `params` points at one ResidentParams in global memory.
            let $p: &ResidentParams = unsafe { &*params };
            // SAFETY: forwarded launch contract.
            unsafe { solve_grid::<$t, _>($p, &$edge, Jobs { graphs, words, jobs, status, counter }, sync, scratch) }
        }
    };
}

/// Defines the three grid entries of one precision: any κe, one square exponential, one Kronecker delta.
macro_rules! grid_entries {
    ($t:ty, $(#[$gdoc:meta])* $general:ident, $(#[$sdoc:meta])* $sqexp:ident, $(#[$kdoc:meta])* $kdelta:ident) => {
        grid_entry!($t, $(#[$gdoc])* $general, |params| General { spec: &params.edge_kernel, features: params.nz_stride as usize - NZ_FEATURES });
        grid_entry!($t, $(#[$sdoc])* $sqexp, |params| sqexp::<$t>(params));
        grid_entry!($t, $(#[$kdoc])* $kdelta, |params| kdelta::<$t>(params));
    };
}

grid_entries!(
    f32,
    /// Resident solver in global memory, a team of blocks per pair, any κe.
    MgkResidentGridGeneral,
    /// Resident solver in global memory, a team of blocks per pair, one square exponential.
    MgkResidentGridSqexp,
    /// Resident solver in global memory, a team of blocks per pair, one Kronecker delta.
    MgkResidentGridKdelta
);
grid_entries!(
    f64,
    /// [`MgkResidentGridGeneral`] in f64.
    MgkResidentGridGeneralF64,
    /// [`MgkResidentGridSqexp`] in f64.
    MgkResidentGridSqexpF64,
    /// [`MgkResidentGridKdelta`] in f64.
    MgkResidentGridKdeltaF64
);
