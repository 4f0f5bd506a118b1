//! The marginalized-graph-kernel PCG solver: one launch, many pairs, one block — or, for pairs of
//! large graphs, one team of blocks (`crate::mgk::team`) — per pair at a time.
//!
//! Blocks (teams) are persistent: each pulls the next job index from a global atomic counter
//! (dynamic scheduling: a block that drew a small pair simply draws again), solves that pair with
//! Jacobi-preconditioned CG entirely on the device, and writes one [`PairStatus`].
//!
//! The product matrix M = D×V×⁻¹ − A×⊙E× is never formed. Its off-diagonal product (the XMV) is
//! computed tile pair by tile pair: the warp that draws output block (I, I') of the tiled vector
//! (see `octile_types::mgk::tiling`) walks the octiles of tile-row I of G and tile-row I' of G', expands
//! each into shared memory, stages the 8×8 block of p they multiply, and accumulates
//!
//! ```text
//!   ap[(i,i')] -= Σ_{j,j'} A_ij · A'_i'j' · κe(e_ij, e'_i'j') · p[(j,j')]
//! ```
//!
//! with the tile-pair primitive (dense/sparse walk of each tile, `octile_types::mgk::primitives`) that
//! `params.primitives` picks from the two tiles' nonzero counts (lane ℓ owns rows (ℓ/8, ℓ%8) and
//! (ℓ/8 + 4, ℓ%8) of the 64-row block), in registers, without atomics.
use crate::intrinsics::{FULL_MASK, lane_id, sync_warp, warp_id};
use crate::mgk::stage::{WarpStage, stage_b_and_p, stage_tile};
use crate::mgk::team::{BlockTeam, GridTeam, TileTeam};
use octile_types::mgk::gradient::{GradientParams, Rhs, combined, finish, node_share};
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES};
use octile_types::mgk::primitives::{row_pair, row_pair_with, rows_pair_with};
use octile_types::mgk::tiling::{TILE, TILE_AREA, tiled_coords};
use octile_types::pcg::{Operator, PcgError, PcgInfo, PcgParams, PcgVectors, Residual, Start, info_of, pcg, pcg_refined};
use octile_types::{GraphDesc, MgkParams, Octile, PairJob, PairKernel, PairStatus, Real, TeamSync};

/// Raw inputs of one launch (what the kernel entry receives, minus the params), with the
/// graph data in precision T.
struct Inputs<T> {
    graphs: *const GraphDesc,
    row_ptr: *const u32,
    octiles: *const Octile,
    edge_data: *const T,
    node_data: *const T,
}

/// A graph's rows as seen by the kernel.
#[derive(Clone, Copy)]
struct Graph {
    desc: GraphDesc,
}

/// Solve every job, pulling job indices from `job_counter`.
///
/// T = f64: plain PCG in f64. T = f32: mixed precision — PCG in f32 on the f32 data as the inner
/// solver of an iterative refinement whose residual b − M·x is computed in f64 from `inputs64`
/// (the same graphs in f64), so the result is accurate to the f64 tolerance, not to f32's
/// cond(M)·ε.
///
/// Scratch per job (in f64 elements, `scratch_len(n, m)` = 5·len):
/// ```text
/// T = f64: [ x | r | p | ap | diag ]                              5·len f64
/// T = f32: [ x64 | r64 | x32 r32 p32 ap32 diag32 (f32, 2.5·len) ]  4.5·len f64
/// ```
///
/// # Safety
/// Launched with `SOLVER_BLOCK_THREADS` threads per block; all pointers valid for the packed layout
/// described in `octile_types::mgk::layout`; `scratch` holds `scratch_len(n, m)` f64 elements at each
/// job's `scratch_offset`, disjoint between jobs; `*job_counter == 0` at launch.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn solve_all<T: Real, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool>(
    team: &mut Tm,
    params: &MgkParams,
    inputs: &Inputs<T>,
    inputs64: &Inputs<f64>,
    jobs: *const PairJob,
    status: *mut PairStatus,
    scratch: *mut f64,
    job_counter: *mut u32,
) {
    loop {
        // SAFETY: job_counter is a valid global u32 (caller's contract); every thread of the team
        // reaches this call.
        let job_idx = unsafe { team.next_job(job_counter) };
        if job_idx >= params.n_jobs {
            return;
        }
        // SAFETY: job_idx < n_jobs.
        let job = unsafe { *jobs.add(job_idx as usize) };
        // SAFETY: the graph indices were validated by the host.
        let g1 = Graph { desc: unsafe { *inputs.graphs.add(job.g1 as usize) } };
        let g2 = Graph { desc: unsafe { *inputs.graphs.add(job.g2 as usize) } };
        // SAFETY: the job's scratch range lies inside the buffer (checked by the host).
        let base = unsafe { scratch.add(job.scratch_offset as usize) };
        // SAFETY: forwarded contract; the whole block calls it. The branch is on a constant.
        let st = unsafe { solve_one::<T, Tm, SPARSE, BLOCKED>(team, params, inputs, inputs64, &g1, &g2, base, base.add(pair_dims(&g1, &g2).3), Rhs::Primal) };
        if team.leader() {
            // SAFETY: job_idx < n_jobs = length of status.
            unsafe { *status.add(job_idx as usize) = st };
        }
    }
}

/// Node row `i` of a graph: `[d, p, features...]`.
#[inline(always)]
unsafe fn node_row<'a, T>(node_data: *const T, g: &Graph, i: usize, stride: usize) -> &'a [T] {
    // SAFETY: i < n_nodes, node rows are `stride` long (caller's contract).
    unsafe { core::slice::from_raw_parts(node_data.add((g.desc.node_offset as usize + i) * stride), stride) }
}

/// (D×V×⁻¹ entry, right-hand-side entry: D×·1 for the primal, p× for the adjoint) of node pair
/// (i, i'), from node rows in precision T.
#[inline(always)]
fn diag_and_rhs<T: Real>(params: &MgkParams, a1: &[T], a2: &[T], rhs: Rhs) -> (T, T) {
    let dd = a1[NODE_D] * a2[NODE_D];
    (dd / params.node_kernel.eval(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]), a1[rhs.node_slot()] * a2[rhs.node_slot()])
}

/// Sizes of a pair: (n, m, mt, len).
#[inline(always)]
fn pair_dims(g1: &Graph, g2: &Graph) -> (usize, usize, usize, usize) {
    let (n, m) = (g1.desc.n_nodes as usize, g2.desc.n_nodes as usize);
    let (nt, mt) = (g1.desc.n_tile_rows as usize, g2.desc.n_tile_rows as usize);
    (n, m, mt, nt * mt * TILE_AREA)
}

/// K = Σ p_i p'_i' x_ii' over the valid entries of the tiled x (summed over the block); for the
/// adjoint solution y, K = Σ d_i d′_i′ y_ii′ (`rhs.value_slot()`).
#[inline(always)]
unsafe fn kernel_value<T: Real, X: Real, Tm: TileTeam>(
    team: &mut Tm,
    params: &MgkParams,
    inputs: &Inputs<T>,
    g1: &Graph,
    g2: &Graph,
    x: *const X,
    rhs: Rhs,
) -> f64 {
    let w = rhs.value_slot();
    let (n, m, mt, len) = pair_dims(g1, g2);
    let stride = params.node_stride as usize;
    let mut k = 0.0f64;
    let mut idx = team.rank();
    while idx < len {
        let (i, ip) = tiled_coords(idx, mt);
        if i < n && ip < m {
            // SAFETY: i < n, ip < m, idx < len.
            unsafe {
                let (a1, a2) = (node_row(inputs.node_data, g1, i, stride), node_row(inputs.node_data, g2, ip, stride));
                k += a1[w].to_f64() * a2[w].to_f64() * (*x.add(idx)).to_f64();
            }
        }
        idx += team.size();
    }
    // SAFETY: the whole team calls it.
    unsafe { team.sum2(k, 0.0).0 }
}

/// M·p of one pair (the tile-pair XMV plus the diagonal), for the shared PCG.
struct TileOperator<'a, T, const SPARSE: bool, const BLOCKED: bool> {
    params: &'a MgkParams,
    inputs: &'a Inputs<T>,
    g1: &'a Graph,
    g2: &'a Graph,
    diag: *const T,
}

impl<T: Real, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool> Operator<T, Tm> for TileOperator<'_, T, SPARSE, BLOCKED> {
    #[inline(always)]
    unsafe fn apply(&mut self, team: &mut Tm, p: *const T, ap: *mut T) -> f64 {
        let diag = self.diag;
        let len = pair_dims(self.g1, self.g2).3;
        // SAFETY: the whole team calls it (the PCG's contract); p, ap and diag are this pair's
        // padded vectors, and every output entry o lies inside them; the barrier orders every
        // store to ap (and every warp's last draw) before the reads below.
        unsafe {
            xmv::<T, _, _, Tm, SPARSE, BLOCKED>(team, self.params, &self.params.edge_kernel, self.inputs, self.g1, self.g2, p, |o, pv, acc| {
                *ap.add(o) = *diag.add(o) * pv - acc;
                0.0
            });
            team.barrier();
            ranked_dot(team, p, ap, len)
        }
    }
}

/// The refinement's true residual r64 = b − M·x64, in f64 from the f64 graph data.
struct TileResidual<'a, const SPARSE: bool, const BLOCKED: bool> {
    params: &'a MgkParams,
    rhs: Rhs,
    inputs64: &'a Inputs<f64>,
    g1: &'a Graph,
    g2: &'a Graph,
}

impl<Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool> Residual<Tm> for TileResidual<'_, SPARSE, BLOCKED> {
    #[inline(always)]
    unsafe fn residual(&mut self, team: &mut Tm, x64: *const f64, r64: *mut f64) -> f64 {
        let (params, inputs64, g1, g2) = (self.params, self.inputs64, self.g1, self.g2);
        let (n, m, mt, len) = pair_dims(g1, g2);
        let stride = params.node_stride as usize;
        // SAFETY: the whole team calls it; x64 and r64 are this pair's padded vectors; the barrier
        // orders every store to r64 before the reads of ranked_dot.
        unsafe {
            xmv::<f64, _, _, Tm, SPARSE, BLOCKED>(team, params, &params.edge_kernel, inputs64, g1, g2, x64, |o, xv, acc| {
                let (i, ip) = tiled_coords(o, mt);
                let res = if i < n && ip < m {
                    let (dg, b) = diag_and_rhs(params, node_row(inputs64.node_data, g1, i, stride), node_row(inputs64.node_data, g2, ip, stride), self.rhs);
                    b - (dg * xv - acc)
                } else {
                    0.0
                };
                *r64.add(o) = res;
                0.0
            });
            team.barrier();
            ranked_dot(team, r64, r64, len)
        }
    }
}

/// This thread's share of Σ a_k·b_k over a pair's `len` padded entries, taking k = rank, rank +
/// size, …: the same entries and order in every run. (A share summed by the XMV's warps as they
/// draw output blocks would follow the dynamic deal's order, and the team sum — the PCG's p·Ap, the
/// refinement's ‖r‖² — would change in the last bits from run to run.)
///
/// # Safety
/// `a` and `b` hold `len` entries, written before (ordered by a barrier).
#[inline(always)]
unsafe fn ranked_dot<T: Real, Tm: TileTeam>(team: &Tm, a: *const T, b: *const T, len: usize) -> f64 {
    let mut s = 0.0;
    let mut k = team.rank();
    while k < len {
        // SAFETY: k < len (the caller's contract).
        s += unsafe { (*a.add(k)).to_f64() * (*b.add(k)).to_f64() };
        k += team.size();
    }
    s
}

/// The pair's status from the PCG's outcome and the value.
#[inline(always)]
fn status_of(outcome: &Result<PcgInfo, PcgError>, value: f64) -> PairStatus {
    let info = info_of(outcome);
    PairStatus { value, residual: info.relative_residual(), iterations: info.iterations, converged: outcome.is_ok() as u32 }
}

/// The f64 path: PCG on M x = b directly (`rhs`: the primal b = D×·1 or the adjoint b = p×);
/// the solution goes to `x`, the other four vectors are `work[0..4·len]`.
///
/// # Safety
/// See [`solve_all`]; `x` and `work` are this pair's scratch, len and 4·len entries, disjoint.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_direct<T: Real, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool>(
    team: &mut Tm,
    params: &MgkParams,
    inputs: &Inputs<T>,
    g1: &Graph,
    g2: &Graph,
    x: *mut T,
    work: *mut T,
    rhs: Rhs,
) -> PairStatus {
    let (n, m, mt, len) = pair_dims(g1, g2);
    let stride = params.node_stride as usize;
    // SAFETY: four len-long vectors inside this pair's scratch.
    let (r, p, ap, diag) = unsafe { (work, work.add(len), work.add(2 * len), work.add(3 * len)) };
    let mut idx = team.rank();
    while idx < len {
        let (i, ip) = tiled_coords(idx, mt);
        let (dg, b) = if i < n && ip < m {
            // SAFETY: i < n, ip < m.
            unsafe { diag_and_rhs(params, node_row(inputs.node_data, g1, i, stride), node_row(inputs.node_data, g2, ip, stride), rhs) }
        } else {
            (T::ONE, T::ZERO) // padding: diagonal 1, right-hand side 0 → stays 0
        };
        // SAFETY: idx < len.
        unsafe {
            *diag.add(idx) = dg;
            *x.add(idx) = T::ZERO;
            *r.add(idx) = b;
        }
        idx += team.size();
    }
    let mut op = TileOperator::<T, SPARSE, BLOCKED> { params, inputs, g1, g2, diag };
    let pcg_params = PcgParams { rtol: params.rtol, max_iterations: params.max_iterations };
    // SAFETY: whole team; each thread reads back only its own entries before the PCG's first reduction.
    let outcome = unsafe { pcg(team, &mut op, PcgVectors { x, r, p, ap, diag }, len, pcg_params, Start::Residual) };
    let value = unsafe { kernel_value(team, params, inputs, g1, g2, x, rhs) };
    status_of(&outcome, value)
}

/// The mixed-precision path (T = f32): iterative refinement, residuals in f64; the solution goes
/// to `x64`, r64 and the five T vectors are `work` (len f64, then 2.5·len f64).
///
/// # Safety
/// See [`solve_all`]; `x64` (len f64) and `work` (3.5·len f64) are this pair's scratch, disjoint.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_refined<T: Real, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool>(
    team: &mut Tm,
    params: &MgkParams,
    inputs: &Inputs<T>,
    inputs64: &Inputs<f64>,
    g1: &Graph,
    g2: &Graph,
    x64: *mut f64,
    work: *mut f64,
    rhs: Rhs,
) -> PairStatus {
    let (n, m, mt, len) = pair_dims(g1, g2);
    let stride = params.node_stride as usize;
    let r64 = work;
    // SAFETY: r64, then 5·len T (T = f32: 2.5·len f64) inside `work`.
    let inner = unsafe { work.add(len) } as *mut T;
    let (x, r, p, ap, diag) = unsafe { (inner, inner.add(len), inner.add(2 * len), inner.add(3 * len), inner.add(4 * len)) };
    let mut bb = 0.0f64;
    let mut idx = team.rank();
    while idx < len {
        let (i, ip) = tiled_coords(idx, mt);
        let (dg, b) = if i < n && ip < m {
            // SAFETY: i < n, ip < m.
            unsafe { diag_and_rhs(params, node_row(inputs64.node_data, g1, i, stride), node_row(inputs64.node_data, g2, ip, stride), rhs) }
        } else {
            (1.0, 0.0)
        };
        // SAFETY: idx < len.
        unsafe {
            *diag.add(idx) = T::from_f64(dg);
            *x64.add(idx) = 0.0;
            *r64.add(idx) = b;
        }
        bb += b * b;
        idx += team.size();
    }
    // SAFETY: the whole team calls it.
    let (bb, _) = unsafe { team.sum2(bb, 0.0) };
    let mut op = TileOperator::<T, SPARSE, BLOCKED> { params, inputs, g1, g2, diag };
    let mut res = TileResidual::<SPARSE, BLOCKED> { params, rhs, inputs64, g1, g2 };
    let pcg_params = PcgParams { rtol: params.rtol, max_iterations: params.max_iterations };
    // SAFETY: whole team; this pair's vectors, x64 = 0 and r64 = b set above.
    let outcome = unsafe { pcg_refined(team, &mut op, &mut res, PcgVectors { x, r, p, ap, diag }, x64, r64, len, pcg_params, bb) };
    let value = unsafe { kernel_value(team, params, inputs64, g1, g2, x64, rhs) };
    status_of(&outcome, value)
}

/// One solve of M x = b (`rhs`) in the entry's precision: PCG in f64 (T = f64) or the mixed
/// precision refinement (T = f32); x (f64 either way) goes to `x`, `work` holds the other vectors.
///
/// # Safety
/// See [`solve_all`]; `x` (len f64) and `work` (4·len f64) are this pair's scratch, disjoint.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_one<T: Real, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool>(
    team: &mut Tm,
    params: &MgkParams,
    inputs: &Inputs<T>,
    inputs64: &Inputs<f64>,
    g1: &Graph,
    g2: &Graph,
    x: *mut f64,
    work: *mut f64,
    rhs: Rhs,
) -> PairStatus {
    // SAFETY: forwarded; the branch is on a constant (T = f64: the f64 scratch holds T values).
    unsafe {
        if T::BYTES == 8 {
            solve_direct::<T, Tm, SPARSE, BLOCKED>(team, params, inputs, g1, g2, x as *mut T, work as *mut T, rhs)
        } else {
            solve_refined::<T, Tm, SPARSE, BLOCKED>(team, params, inputs, inputs64, g1, g2, x, work, rhs)
        }
    }
}

/// K and ∂K/∂θ of one pair (`octile_types::mgk::gradient`): the primal solve into x, the adjoint
/// into y (scratch layout: `gradient_scratch_len`), then per hyperparameter one team sum — over
/// the product vector for q and κv's, over an XMV with ∂κe in place of κe for κe's — written to
/// `out[h]` by the leader.
///
/// # Safety
/// See [`solve_all`]; `base` holds `gradient_scratch_len(n, m)` f64, `out` `gp.n_hyper` f64.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gradient_pair<T: Real, Tm: TileTeam>(
    team: &mut Tm,
    params: &MgkParams,
    gp: &GradientParams,
    inputs: &Inputs<T>,
    inputs64: &Inputs<f64>,
    g1: &Graph,
    g2: &Graph,
    base: *mut f64,
    out: *mut f64,
) -> PairStatus {
    let (n, m, mt, len) = pair_dims(g1, g2);
    let stride = params.node_stride as usize;
    // SAFETY: x, the solver's work vectors and y inside the pair's gradient scratch.
    let (x, work, y) = unsafe { (base, base.add(len), base.add(5 * len)) };
    // SAFETY: forwarded; the whole team.
    let primal = unsafe { solve_one::<T, Tm, false, false>(team, params, inputs, inputs64, g1, g2, x, work, Rhs::Primal) };
    let adjoint = unsafe { solve_one::<T, Tm, false, false>(team, params, inputs, inputs64, g1, g2, y, work, Rhs::Adjoint) };
    for (hi, h) in gp.hypers().iter().enumerate() {
        let mine = if h.is_edge() {
            let d = h.derivative(&params.edge_kernel);
            // each entry's share stored by the warp that drew its block, then summed by rank: the
            // same order in every run (a sum per warp would follow the dynamic deal's order)
            // SAFETY: the whole team; x and y are this pair's padded vectors, ordered by the
            // solves' final reductions; `work` (4·len f64) is free after the solves and every
            // o < len is written once (each output block is drawn once); the barrier orders the
            // stores (and every warp's last draw) before the reads, and the sum2 below orders
            // the reads before the next hyperparameter's stores.
            unsafe {
                xmv::<f64, _, _, Tm, false, false>(team, params, &d, inputs64, g1, g2, x, |o, _, acc| {
                    *work.add(o) = *y.add(o) * acc;
                    0.0
                });
                team.barrier();
                let mut s = 0.0;
                let mut idx = team.rank();
                while idx < len {
                    s += *work.add(idx);
                    idx += team.size();
                }
                s
            }
        } else {
            let mut s = 0.0;
            let mut idx = team.rank();
            while idx < len {
                let (i, ip) = tiled_coords(idx, mt);
                if i < n && ip < m {
                    // SAFETY: i < n, ip < m, idx < len.
                    unsafe {
                        let (a1, a2) = (node_row(inputs64.node_data, g1, i, stride), node_row(inputs64.node_data, g2, ip, stride));
                        s += node_share(
                            h,
                            gp,
                            &params.node_kernel,
                            &a1[NODE_FEATURES..],
                            &a2[NODE_FEATURES..],
                            a1[NODE_D] * a2[NODE_D],
                            *x.add(idx),
                            *y.add(idx),
                        );
                    }
                }
                idx += team.size();
            }
            s
        };
        // SAFETY: the whole team calls it.
        let shares = unsafe { team.sum2(mine, 0.0).0 };
        if team.leader() {
            // SAFETY: hi < n_hyper.
            unsafe { *out.add(hi) = finish(h, gp, primal.value, shares) };
        }
    }
    combined(primal, adjoint)
}

/// Every job's K and ∂K/∂θ, one block per pair, jobs pulled from `job_counter`; `grad` holds
/// `n_jobs · gp.n_hyper` f64 (job-major).
///
/// # Safety
/// As [`solve_all`], with each job's scratch `gradient_scratch_len(n, m)` f64 long.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gradient_all<T: Real, Tm: TileTeam>(
    team: &mut Tm,
    params: &MgkParams,
    gp: &GradientParams,
    inputs: &Inputs<T>,
    inputs64: &Inputs<f64>,
    jobs: *const PairJob,
    status: *mut PairStatus,
    scratch: *mut f64,
    job_counter: *mut u32,
    grad: *mut f64,
) {
    let np = gp.hypers().len();
    loop {
        // SAFETY: as in solve_all.
        let job_idx = unsafe { team.next_job(job_counter) };
        if job_idx >= params.n_jobs {
            return;
        }
        // SAFETY: job_idx < n_jobs; graph indices and scratch ranges host-checked.
        unsafe {
            let job = *jobs.add(job_idx as usize);
            let g1 = Graph { desc: *inputs.graphs.add(job.g1 as usize) };
            let g2 = Graph { desc: *inputs.graphs.add(job.g2 as usize) };
            let st =
                gradient_pair::<T, Tm>(team, params, gp, inputs, inputs64, &g1, &g2, scratch.add(job.scratch_offset as usize), grad.add(job_idx as usize * np));
            if team.leader() {
                *status.add(job_idx as usize) = st;
            }
        }
    }
}

/// The product M·p for one pair, block (I, I') by block: for every output entry o the warp that
/// drew its block (`TileTeam::deal`) calls `finish(o, p[o], acc)` with acc = Σ A_ij A'_i'j' κ p[(j, j')] (the
/// off-diagonal part, κ = `edge`: κe, or ∂κe for the gradients' contractions); `finish` applies the
/// diagonal, stores, and returns this entry's share of a reduction, whose per-thread sum is
/// returned. The tiling-blocking walks (`BLOCKED`) read κe gathered in `params.dense_kernel`:
/// only κe's own products use them.
///
/// # Safety
/// Called by the whole block (warp barriers inside each warp's loop are warp-uniform: every lane of
/// a warp walks the same blocks and octiles); `p` is this pair's padded vector.
#[inline(always)]
unsafe fn xmv<T: Real, K: PairKernel, F: FnMut(usize, T, T) -> f64, Tm: TileTeam, const SPARSE: bool, const BLOCKED: bool>(
    team: &mut Tm,
    params: &MgkParams,
    edge: &K,
    inputs: &Inputs<T>,
    g1: &Graph,
    g2: &Graph,
    p: *const T,
    mut finish: F,
) -> f64 {
    let nz_stride = params.nz_stride as usize;
    let storage = params.tile_storage;
    let lane = lane_id() as usize;
    let st = WarpStage::<T>::of_warp(warp_id() as usize);
    let (nt, mt) = (g1.desc.n_tile_rows as usize, g2.desc.n_tile_rows as usize);
    let (ra0, rb) = (lane / TILE, lane % TILE); // rows (ra0, rb) and (ra0 + 4, rb) of the block
    let mut red = 0.0f64;
    let blocks = (nt * mt) as u32;
    loop {
        // SAFETY: all lanes draw together (the loop is warp-uniform); the caller's reduction after
        // this XMV orders every warp's last draw before `end_deal`.
        let blk = unsafe { team.deal() };
        if blk >= blocks {
            break;
        }
        let blk = blk as usize;
        let (bi, bip) = (blk / mt, blk % mt);
        let mut acc0 = T::ZERO;
        let mut acc1 = T::ZERO;
        // SAFETY: row_ptr has n_tile_rows + 1 entries per graph.
        let (a_lo, a_hi) = unsafe {
            let rp = inputs.row_ptr.add(g1.desc.row_ptr_offset as usize + bi);
            (*rp, *rp.add(1))
        };
        let (b_lo, b_hi) = unsafe {
            let rp = inputs.row_ptr.add(g2.desc.row_ptr_offset as usize + bip);
            (*rp, *rp.add(1))
        };
        if b_lo < b_hi {
            for oa in a_lo..a_hi {
                // SAFETY: octile indices from row_ptr are in range.
                let ta = unsafe { *inputs.octiles.add(oa as usize) };
                // SAFETY: the previous tile pair ended with a warp barrier; ta's entries exist.
                unsafe { stage_tile::<T, SPARSE>(&ta, inputs.edge_data, nz_stride, storage, st.tile_a, lane) };
                let (ma0, ma1) = (ta.row_mask(ra0 as u32), ta.row_mask(ra0 as u32 + 4));
                let nnz_a = ta.nnz();
                for ob in b_lo..b_hi {
                    let tb = unsafe { *inputs.octiles.add(ob as usize) };
                    let src = (ta.tile_col as usize * mt + tb.tile_col as usize) * TILE_AREA;
                    // SAFETY: all lanes stage (warp-uniform loop); block (J, J') lies inside p.
                    unsafe { stage_b_and_p::<T, SPARSE>(&st, &tb, inputs.edge_data, nz_stride, storage, p.add(src), lane) };
                    let mb_row = tb.row_mask(rb as u32);
                    if SPARSE {
                        // sparse-only kernel: every tile pair sparse × sparse; a lane whose row of
                        // B is empty adds nothing
                        if mb_row != 0 {
                            // SAFETY: staged above, ordered by the warp barrier.
                            unsafe {
                                acc0 += row_pair::<T, _, false, false>(edge, st.tile_a, st.tile_b, st.pblk, nz_stride, ra0, rb, ma0, mb_row);
                                acc1 += row_pair::<T, _, false, false>(edge, st.tile_a, st.tile_b, st.pblk, nz_stride, ra0 + 4, rb, ma1, mb_row);
                            }
                        }
                    } else {
                        // warp-uniform choice: both tiles are the same for every lane
                        let prim = params.primitives.choose(nnz_a, tb.nnz());
                        if BLOCKED {
                            // the tiling-blocking walks for D and R (B's row in registers, both
                            // rows of the lane at once)
                            // SAFETY: staged above, ordered by the warp barrier; the host launches
                            // these entries only with `dense_kernel.usable` and its slots inside the row.
                            let (s0, s1) = unsafe {
                                rows_pair_with(
                                    prim,
                                    &params.edge_kernel,
                                    &params.dense_kernel,
                                    st.tile_a,
                                    st.tile_b,
                                    st.pblk,
                                    nz_stride,
                                    (ra0, ra0 + 4, rb),
                                    (ma0, ma1, mb_row),
                                )
                            };
                            acc0 += s0;
                            acc1 += s1;
                        } else {
                            // SAFETY: staged above, ordered by the warp barrier.
                            unsafe {
                                acc0 += row_pair_with(prim, edge, st.tile_a, st.tile_b, st.pblk, nz_stride, ra0, rb, ma0, mb_row);
                                acc1 += row_pair_with(prim, edge, st.tile_a, st.tile_b, st.pblk, nz_stride, ra0 + 4, rb, ma1, mb_row);
                            }
                        }
                    }
                    // SAFETY: all lanes of the warp reach it; protects tile_b/pblk before restaging.
                    unsafe { sync_warp(FULL_MASK) };
                }
            }
        }
        let base = blk * TILE_AREA;
        for (row, acc) in [(ra0, acc0), (ra0 + 4, acc1)] {
            let o = base + row * TILE + rb;
            // SAFETY: o < len.
            red += finish(o, unsafe { *p.add(o) }, acc);
        }
    }
    team.end_deal(blocks);
    red
}

/// Defines one entry point (named by its `octile_types::entries` id) over [`solve_all`] per precision and variant: one block
/// per pair (`BlockTeam`), or teams of `params.team_blocks` blocks per pair (`team`: an extra
/// `team_sync` argument, `team_sync_records(team_blocks)` zeroed [`TeamSync`] records per team). Both arms expand the one `@entry` arm,
/// which owns the argument list every solver entry shares (the host pushes it in this order:
/// `octile::mgk::gpu::launch::push_solver_args`); the parameter names come from the calling arm so that its
/// team constructor can use them.
macro_rules! mgk_entry {
    ($(#[$doc:meta])* $name:ident, $t:ty, $sparse:expr, $blocked:expr) => {
        mgk_entry!(@entry
            $(#[$doc])*
            ///
            /// # Safety
            /// See [`solve_all`]; launched with `SOLVER_BLOCK_THREADS` threads, `params` one
            /// `MgkParams` in global memory that no thread writes during the launch.
            $name, $t, $sparse, $blocked, params, [], BlockTeam::new());
    };
    ($(#[$doc:meta])* team $name:ident, $t:ty, $blocked:expr) => {
        mgk_entry!(@entry
            $(#[$doc])*
            ///
            /// # Safety
            /// See [`solve_all`]; launched cooperatively (every block resident) with
            /// `SOLVER_BLOCK_THREADS` threads and a grid of whole teams of `params.team_blocks` blocks;
            /// `team_sync` holds `team_sync_records(team_blocks)` zeroed records per team (the team contract: team_blocks
            /// divides the grid, one TeamSync per team, cooperative launch); `params` as for the
            /// one-block entries.
            $name, $t, false, $blocked, params, [team_sync: *mut TeamSync], GridTeam::of_block(params.team_blocks, team_sync));
    };
    (@entry $(#[$doc:meta])* $name:ident, $t:ty, $sparse:expr, $blocked:expr, $params:ident, [$($extra:ident: $extra_ty:ty),*], $team:expr) => {
        $(#[$doc])*
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(clippy::too_many_arguments, non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $name(
            $params: &MgkParams,
            graphs: *const GraphDesc,
            row_ptr: *const u32,
            octiles: *const Octile,
            edge_data: *const $t,
            node_data: *const $t,
            edge_data64: *const f64,
            node_data64: *const f64,
            jobs: *const PairJob,
            status: *mut PairStatus,
            scratch: *mut f64,
            job_counter: *mut u32,
            $($extra: $extra_ty),*
        ) {
            let inputs = Inputs { graphs, row_ptr, octiles, edge_data, node_data };
            let inputs64 = Inputs { graphs, row_ptr, octiles, edge_data: edge_data64, node_data: node_data64 };
            // SAFETY: forwarded to the launcher's contract (see the entry's docs). `params` is one
            // MgkParams in global memory taken as a shared reference: a `noalias` read-only kernel
            // pointer, whose loads LLVM hoists and reads through the read-only cache (`ld.global.nc`).
            // By value, the struct was copied into every thread's local memory at the entry; by raw
            // pointer, its loads were repeated in the loops (the f64 tile gradient 1.66× slower).
            unsafe { solve_all::<$t, _, { $sparse }, { $blocked }>(&mut $team, $params, &inputs, &inputs64, jobs, status, scratch, job_counter) }
        }
    };
}

/// Defines a gradient entry (one block per pair, adaptive primitives): the solver entries'
/// arguments, then the hyperparameters (`gparams`, one [`GradientParams`] in global memory) and the
/// output `grad` (`n_jobs · n_hyper` f64).
macro_rules! gradient_entry {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        gradient_entry!(@entry $(#[$doc])*
            ///
            /// # Safety
            /// As the solver entries (see [`solve_all`]), with each job's scratch
            /// `gradient_scratch_len(n, m)` f64 long, `gparams` valid and `grad` holding
            /// `n_jobs · gparams.n_hyper` f64.
            $name, $t, params, [], BlockTeam::new());
    };
    ($(#[$doc:meta])* team $name:ident, $t:ty) => {
        gradient_entry!(@entry $(#[$doc])*
            ///
            /// # Safety
            /// As the one-block entry, launched as the team solver entries (cooperatively, whole
            /// teams of `params.team_blocks` blocks, `team_sync_records(team_blocks)` zeroed [`TeamSync`] records per team).
            $name, $t, params, [team_sync: *mut TeamSync], GridTeam::of_block(params.team_blocks, team_sync));
    };
    (@entry $(#[$doc:meta])* $name:ident, $t:ty, $params:ident, [$($extra:ident: $extra_ty:ty),*], $team:expr) => {
        $(#[$doc])*
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(clippy::too_many_arguments, non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $name(
            $params: MgkParams,
            graphs: *const GraphDesc,
            row_ptr: *const u32,
            octiles: *const Octile,
            edge_data: *const $t,
            node_data: *const $t,
            edge_data64: *const f64,
            node_data64: *const f64,
            jobs: *const PairJob,
            status: *mut PairStatus,
            scratch: *mut f64,
            job_counter: *mut u32,
            $($extra: $extra_ty,)*
            gparams: *const GradientParams,
            grad: *mut f64,
        ) {
            let inputs = Inputs { graphs, row_ptr, octiles, edge_data, node_data };
            let inputs64 = Inputs { graphs, row_ptr, octiles, edge_data: edge_data64, node_data: node_data64 };
            // SAFETY: forwarded launch contract; `gparams` points at one GradientParams. `params` by
            // value (copied into each thread's local memory, unlike the solver entries' reference):
            // through a reference the f64 gradient ran 2.6–7 % slower (H100, MUTAG and NWS,
            // `results/session33-h100.md`), through a raw pointer 66 % slower.
            unsafe { gradient_all::<$t, _>(&mut $team, &$params, &*gparams, &inputs, &inputs64, jobs, status, scratch, job_counter, grad) }
        }
    };
}

gradient_entry!(
    /// Hyperparameter gradient, f32 solves (mixed precision with f64 refinement), f64 contractions.
    MgkGradientF32,
    f32
);
gradient_entry!(
    /// Hyperparameter gradient, f64.
    MgkGradientF64,
    f64
);
gradient_entry!(
    /// Hyperparameter gradient, teams of blocks per pair (pairs of large graphs), f32 solves.
    team MgkGradientTeamF32,
    f32
);
gradient_entry!(
    /// Hyperparameter gradient, teams of blocks per pair, f64.
    team MgkGradientTeamF64,
    f64
);

mgk_entry!(
    /// `f32` entry point, adaptive primitives (mixed precision: f32 inner PCG, f64 refinement from `*_data64`).
    MgkSolveF32,
    f32,
    false,
    false
);
mgk_entry!(
    /// `f64` entry point, adaptive primitives (`*_data64` are the same arrays as `*_data`).
    MgkSolveF64,
    f64,
    false,
    false
);
mgk_entry!(
    /// `f32` entry point, sparse × sparse only, compact storage only: what the adaptive map picks
    /// for every tile pair of sets whose tiles are all sparse enough (the host decides), without the
    /// switch's cost (measured: 0.72–0.9× on NWS, BA, ChEMBL with the switch compiled in).
    MgkSolveSparseF32,
    f32,
    true,
    false
);
mgk_entry!(
    /// `f64` entry point, sparse × sparse only, compact storage only.
    MgkSolveSparseF64,
    f64,
    true,
    false
);
mgk_entry!(
    /// `f32` team entry point: several blocks per pair (pairs of large graphs), adaptive primitives.
    team MgkSolveTeamF32,
    f32,
    false
);
mgk_entry!(
    /// `f64` team entry point: several blocks per pair, adaptive primitives.
    team MgkSolveTeamF64,
    f64,
    false
);
mgk_entry!(
    /// `f32` entry point, adaptive primitives with the tiling-blocking walks for D and R
    /// (`octile_types::mgk::blocked`: B's row and κe's gathered features in registers); opt-in
    /// (`dense_walk = "blocked"`), launched only when `params.dense_kernel.usable`.
    MgkSolveBlockedF32,
    f32,
    false,
    true
);
mgk_entry!(
    /// `f64` entry point, adaptive primitives with the tiling-blocking walks for D and R.
    MgkSolveBlockedF64,
    f64,
    false,
    true
);
mgk_entry!(
    /// `f32` team entry point with the tiling-blocking walks for D and R.
    team MgkSolveTeamBlockedF32,
    f32,
    true
);
mgk_entry!(
    /// `f64` team entry point with the tiling-blocking walks for D and R.
    team MgkSolveTeamBlockedF64,
    f64,
    true
);
