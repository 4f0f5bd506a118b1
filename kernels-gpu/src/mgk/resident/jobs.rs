//! How a team draws its jobs and stages a pair's graphs; the jobs on the fly; where a job's vectors go.
use super::edge::EdgeEval;
use super::on_the_fly::OnTheFly;
use super::real::ResidentReal;
use super::solve::solve_pair;
use super::teams::ResidentTeam;
use super::view::View;
use octile_types::mgk::resident::graph_words;
use octile_types::{PairJob, PairStatus, ResidentGraph, ResidentParams};
/// A launch's jobs, the arguments every resident entry takes after its params: the set's graph
/// records and the words their runs lie in (the resident layout), the jobs, one status a job and
/// the counter the teams draw jobs from.
#[derive(Clone, Copy)]
pub(super) struct Jobs {
    pub(super) graphs: *const ResidentGraph,
    pub(super) words: *const u32,
    pub(super) jobs: *const PairJob,
    pub(super) status: *mut PairStatus,
    pub(super) counter: *mut u32,
}

/// Every job of `js`, drawn from its counter by each team in turn: `solve` gets the pair's two
/// graphs and returns its status, which the team's first thread stores.
///
/// # Safety
/// Called by the whole team; the counter valid, `jobs`/`status` hold `n_jobs` entries and every
/// job's graphs exist (host-checked).
#[inline(always)]
pub(super) unsafe fn deal<C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    js: Jobs,
    mut solve: impl FnMut(&mut C, u32, ResidentGraph, ResidentGraph) -> PairStatus,
) {
    loop {
        // SAFETY: whole team; valid counter (contract).
        let j = unsafe { crew.next_job(js.counter) };
        if j >= prm.n_jobs {
            return;
        }
        // SAFETY: j < n_jobs; the job's graphs exist (contract).
        unsafe {
            let job = *js.jobs.add(j as usize);
            let st = solve(crew, j, *js.graphs.add(job.g1 as usize), *js.graphs.add(job.g2 as usize));
            if crew.rank() == 0 {
                *js.status.add(j as usize) = st;
            }
            crew.barrier(); // the next pair overwrites the slice
        }
    }
}

/// Both graphs of a job copied from `words` into the team's slice `s`, one after the other: their
/// views and the words they take (the vectors' room starts there; runs of f64 sets take an even
/// number of words, so with `s` 8-byte aligned every value and vector is).
///
/// # Safety
/// Called by every thread of the team; both runs lie in `words` and fit the slice (host-checked).
#[inline(always)]
pub(super) unsafe fn stage_pair<T: ResidentReal, C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    words: *const u32,
    s: *mut u32,
    d1: &ResidentGraph,
    d2: &ResidentGraph,
) -> (View<T>, View<T>, usize) {
    let (ns, nzs) = (prm.node_stride as usize, prm.nz_stride as usize);
    let w1 = graph_words(d1.n_nodes as usize, d1.nnz as usize, ns, nzs, d1.n_pieces as usize, T::WORDS);
    let w2 = graph_words(d2.n_nodes as usize, d2.nnz as usize, ns, nzs, d2.n_pieces as usize, T::WORDS);
    // SAFETY: the caller's contract; the barrier orders the copies before any view is read.
    unsafe {
        let mut t = crew.rank();
        while t < w1 + w2 {
            *s.add(t) = if t < w1 { *words.add(d1.offset as usize + t) } else { *words.add(d2.offset as usize + t - w1) };
            t += crew.size();
        }
        crew.barrier();
        (View::at(s, d1, nzs, ns), View::at(s.add(w1), d2, nzs, ns), w1 + w2)
    }
}

/// Every job, on the fly.
///
/// # Safety
/// The launch contract of the entries (see [`MgkResidentWarpGeneral`](super::entries::MgkResidentWarpGeneral)).
#[inline(always)]
pub(super) unsafe fn solve_all<T: ResidentReal, C: ResidentTeam, E: EdgeEval<T>, const SPLIT: bool>(crew: &mut C, prm: &ResidentParams, e: &E, js: Jobs) {
    let nzs = prm.nz_stride as usize;
    let s = crew.slice();
    // SAFETY: forwarded contract; runs and slice sizes host-checked.
    unsafe {
        deal(crew, prm, js, |crew, _, d1, d2| {
            let (g1, g2, staged) = stage_pair::<T, C>(crew, prm, js.words, s, &d1, &d2);
            solve_pair::<T, C, _, 1>(crew, prm, &OnTheFly::<E, SPLIT, T> { e, g1: &g1, g2: &g2, nzs }, &g1, &g2, s.add(staged) as *mut T)
        })
    }
}

/// What a launch's slices hold for each job's vectors (the launch's `fused_beside` chooses between
/// the fused ones): the solver's five, or the fused solve's ([`FusedVectors`](super::fused::FusedVectors)) — all of them, or p,
/// r and dg.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    Solver,
    FusedInSlice,
    FusedBeside,
}

/// `run` with the launch's room for the fused vectors (`ResidentParams::fused_beside`), called in two
/// places with a constant each: two inlined copies, so that where the launch keeps every job's
/// vectors in its slice they are reached with shared-memory instructions (a pointer that may point
/// at either memory needs generic ones).
#[inline(always)]
pub(super) fn fused_room<R>(prm: &ResidentParams, mut run: impl FnMut(Room) -> R) -> R {
    if prm.fused_beside == 0 { run(Room::FusedInSlice) } else { run(Room::FusedBeside) }
}

/// The status of a job whose slice lacks the room its launch promised (a planning error, never
/// expected): reported unconverged, so that the host solves it again elsewhere, instead of written
/// past the slice.
pub(super) const NOT_PLANNED: PairStatus = PairStatus { value: 0.0, residual: f64::INFINITY, iterations: 0, converged: 0 };
