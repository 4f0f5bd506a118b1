//! The fused primal and adjoint solve of the gradient entries: its operator, vectors and solve.
use super::operator::{by_pieces, jacobi, sums_at, sums_by_pieces};
use super::solve::MAX_REPLACEMENTS;
use super::teams::ResidentTeam;
use super::view::View;
use super::xmv::FusedXmv;
use crate::intrinsics::{atomic_add_generic_f32, rcp_approx};
use octile_types::mgk::gradient::{GradientParams, Hyper, finish};
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES, NODE_P};
use octile_types::mgk::resident::{GRADIENT_SCRATCH_SLICES, RECURRENCE_SHARE};
use octile_types::pcg::{Operator, PcgParams, PcgVectors, Start, apply_direct, info_of, pcg};
use octile_types::real::{Entry, Pair, fma32};
use octile_types::{PairStatus, ResidentParams};
/// M·p for the fused primal and adjoint system diag(M, M) of 2N unknowns (`solve_pair_fused`),
/// the two halves interleaved (entry k the pair [primal, adjoint]): one [`FusedXmv::row2`] per product
/// row serves both, one 8-byte load per product nonzero; the PCG's vector updates move both halves
/// of an entry with one 8-byte access and one diagonal value. `RECURRENT`: M·p by recurrence
/// ([`Operator::RECURRENT`]), which the product-form entries take where all the fused vectors lie
/// in the team's slice (`Room::FusedInSlice`: molecules). Direct elsewhere: where x and ap lie
/// beside the slice in global scratch the recurrence reads ap once more per entry and iteration,
/// and in the on-the-fly entries its second copy of the solve cost registers (H100,
/// `results/product-row-order-h100.md`: ChEMBL's gradient 0.423 → 0.415 s by recurrence; BA's
/// 0.209 → 0.222 s with every entry recurrent, 0.207 → 0.214 s with the on-the-fly entries
/// recurrent in the slice alone, where BA never is).
pub(super) struct FusedOperator<'a, X, const RECURRENT: bool> {
    pub(super) xmv: &'a X,
    pub(super) dg: *const f32,
    pub(super) n1: usize,
    pub(super) n2: usize,
}

impl<C: ResidentTeam, X: FusedXmv, const REC: bool> Operator<Pair, C> for FusedOperator<'_, X, REC> {
    #[inline(always)]
    unsafe fn apply(&mut self, crew: &mut C, p: *const Pair, ap: *mut Pair) -> f64 {
        let (xmv, dg, n2) = (self.xmv, self.dg, self.n2);
        let n = self.n1 * n2;
        let mut pap = 0.0f64;
        // SAFETY: the whole team calls it; p and ap hold N pairs (8-byte aligned), dg N values.
        unsafe {
            let np = xmv.pieces();
            if np > 0 {
                // G′ has long rows (split launches): as ResidentOperator, both shares added to ap
                // (in the slice or in global scratch: generic atomics)
                pap = by_pieces(
                    crew,
                    (n, self.n1, np),
                    p,
                    ap,
                    |k| (*p.add(k)).scale(*dg.add(k)),
                    |i, pc| {
                        let (i2, s1, s2) = xmv.piece2(i, pc, p as *const f32);
                        let a = ap.add(i * n2 + i2) as *mut f32;
                        atomic_add_generic_f32(a, -s1);
                        atomic_add_generic_f32(a.add(1), -s2);
                    },
                    |Pair([p1, p2]), Pair([a1, a2])| p1 as f64 * a1 as f64 + p2 as f64 * a2 as f64,
                );
            } else {
                xmv.walk(crew, n2, n, |k, at| {
                    let Pair([p1, p2]) = *p.add(k);
                    let (s1, s2) = xmv.row2_at(at, p as *const f32);
                    let d = *dg.add(k);
                    let (a1, a2) = (d * p1 - s1, d * p2 - s2);
                    *ap.add(k) = Pair([a1, a2]);
                    pap += p1 as f64 * a1 as f64 + p2 as f64 * a2 as f64;
                });
            }
        }
        pap
    }
    #[inline(always)]
    unsafe fn precondition(&self, r: Pair, idx: usize, diag: *const f32) -> Pair {
        // SAFETY: idx < N (the PCG's contract). Both halves: one reciprocal.
        r.scale(rcp_approx(unsafe { *diag.add(idx) }))
    }
    /// M·p by recurrence where the vectors lie in the slice, as the plain f32 solve's
    /// ([`ResidentOperator::apply_recurrent`](super::operator::ResidentOperator)): the product walks z (in r's place), and each row's
    /// p and ap pairs are updated where its product is taken: two passes an iteration instead of
    /// three, and no barrier. Split launches (never recurrent today: only the product form is, and it
    /// has no pieces) take the direct form ([`apply_direct`]).
    const RECURRENT: bool = REC;
    #[inline(always)]
    unsafe fn apply_recurrent(&mut self, crew: &mut C, z: *const Pair, p: *mut Pair, ap: *mut Pair, beta: f32, _len: usize) -> f64 {
        let (xmv, dg, n2) = (self.xmv, self.dg, self.n2);
        let n = self.n1 * n2;
        let mut pap = 0.0f64;
        // SAFETY: the whole team calls it; z, p and ap hold N pairs (8-byte aligned), dg N values.
        // Each row's p and ap are read and written here by the one thread that walks it; the
        // other threads' accesses to them (the PCG's update pass, the starts' writes in the
        // natural order) are ordered by the team sums between the passes; by pieces, apply_direct's
        // barrier orders the p writes.
        unsafe {
            if xmv.pieces() > 0 {
                pap = apply_direct(self, crew, z, p, ap, beta, n);
            } else {
                xmv.walk(crew, n2, n, |k, at| {
                    let (Pair([z1, z2]), Pair([p1, p2]), Pair([a1, a2])) = (*z.add(k), *p.add(k), *ap.add(k));
                    let (s1, s2) = xmv.row2_at(at, z as *const f32);
                    let d = *dg.add(k);
                    let (q1, q2) = (fma32(beta, p1, z1), fma32(beta, p2, z2));
                    let (b1, b2) = (fma32(beta, a1, d * z1 - s1), fma32(beta, a2, d * z2 - s2));
                    *p.add(k) = Pair([q1, q2]);
                    *ap.add(k) = Pair([b1, b2]);
                    pap += q1 as f64 * b1 as f64 + q2 as f64 * b2 as f64;
                });
            }
        }
        pap
    }
}

/// Entry k of the fused solve's prepared start ([`Start::Prepared`]) from residual `r0` and z =
/// `z0`: r = r0 and p = z for the direct form; z in r's place and p = ap = 0 for the recurrent one
/// (`RECURRENT`, [`FusedOperator`]).
///
/// # Safety
/// k < N; `r`, `p` and `ap` hold N pairs.
#[inline(always)]
pub(super) unsafe fn start_pair<const RECURRENT: bool>(r: *mut Pair, p: *mut Pair, ap: *mut Pair, k: usize, r0: Pair, z0: Pair) {
    // SAFETY: the caller's contract.
    unsafe {
        if RECURRENT {
            *r.add(k) = z0;
            *p.add(k) = Pair([0.0, 0.0]);
            *ap.add(k) = Pair([0.0, 0.0]);
        } else {
            *r.add(k) = r0;
            *p.add(k) = z0;
        }
    }
}

/// Where the fused solve keeps its vectors (`solve_pair_fused`): all five in the team's slice
/// where they fit ([`FusedVectors::in_slice`]), else p, r and dg in the slice — the solver's room
/// of five N-vectors — and x and ap in the team's global scratch ([`FusedVectors::beside`]: the PCG
/// writes each entry of x by its owner; the residual and contraction passes read x at other
/// threads' entries after a team sum or barrier, which orders global memory too; ap's entries are
/// written by the XMV's threads and read by the same threads in the update pass, the product form's
/// walk stepping through the places as the PCG's passes do).
///
/// ```text
/// in the slice:   v: [ pad | dg (N, even) | x (2N) | r (2N) | p (2N) | ap (2N) ]   ≤ 10·N f32
/// beside it:      v: [ pad | p (2N) | r (2N) | dg (N) ]   ≤ 5·N + 1    scratch: [ x (2N) | ap (2N) ]
///                 x, r, p, ap interleaved: [x₀ y₀ x₁ y₁ …], so one 8-byte load gives both halves
/// ```
/// Why interleaved: the XMV reads each product nonzero's column once for both solves (one `LD.64`
/// instead of two loads and two address computations). Why beside: pairs of two 96-node graphs
/// (NWS, BA) have room in shared memory for the plain solve's five N-vectors, not for 10·N. Why
/// those three stay: p is the one vector the (direct: beside the slice, `FusedOperator`) XMV reads at
/// other threads' rows; of the rest a
/// PCG iteration moves 24 bytes per entry of r (read twice, written once) and 12 of dg (read
/// three times), 16 each of x and ap — with x and ap beside, the scratch traffic, which misses L1
/// (the slice leaves it little room) and streams from L2, is 32 bytes per entry and iteration
/// instead of 68 with r and dg there too.
#[derive(Clone, Copy)]
pub(super) struct FusedVectors {
    pub(super) dg: *mut f32,
    pub(super) x: *mut f32,
    pub(super) r: *mut f32,
    pub(super) p: *mut f32,
    pub(super) ap: *mut f32,
}

impl FusedVectors {
    /// f32 words from `v` to the next 8-byte boundary (0 or 1): where the pair arrays start.
    #[inline(always)]
    pub(super) fn pad(v: *const f32) -> usize {
        (v as usize / 4) & 1
    }
    /// Words [`in_slice`](Self::in_slice) takes at `v` (alignment padding included): at most 10·N
    /// for N ≥ 2, the room the host plans (`FUSED_EXTRA_VECTORS` beyond the plain solve's five).
    #[inline(always)]
    pub(super) fn slice_words(v: *const f32, n: usize) -> usize {
        Self::pad(v) + (n + (n & 1)) + 8 * n
    }
    /// Words of the slice [`beside`](Self::beside) takes at `v`: p, r, dg and p's padding (≤ 5·N +
    /// 1: the solver's room and `FUSED_BESIDE_EXTRA_WORDS`).
    #[inline(always)]
    pub(super) fn beside_words(v: *const f32, n: usize) -> usize {
        Self::pad(v) + 5 * n
    }
    /// Every vector at `v` in the slice.
    ///
    /// # Safety
    /// `v` holds [`slice_words`](Self::slice_words) f32.
    #[inline(always)]
    pub(super) unsafe fn in_slice(v: *mut f32, n: usize) -> Self {
        // SAFETY: within the caller's room; the pair vectors start on an 8-byte boundary.
        unsafe {
            let dg = v.add(Self::pad(v));
            let x = dg.add(n + (n & 1));
            FusedVectors { dg, x, r: x.add(2 * n), p: x.add(4 * n), ap: x.add(6 * n) }
        }
    }
    /// p, r and dg at `v` in the slice, x and ap in `scratch`.
    ///
    /// # Safety
    /// `v` holds [`beside_words`](Self::beside_words) f32; `scratch` (8-byte aligned) 4·N f32 of
    /// this team.
    #[inline(always)]
    pub(super) unsafe fn beside(v: *mut f32, scratch: *mut f32, n: usize) -> Self {
        // SAFETY: within the caller's room; p and r start on 8-byte boundaries.
        unsafe {
            let p = v.add(Self::pad(v));
            let r = p.add(2 * n);
            FusedVectors { dg: r.add(2 * n), x: scratch, r, p, ap: scratch.add(2 * n) }
        }
    }
}

/// This team's part of the gradient launch's global scratch: `GRADIENT_SCRATCH_SLICES ·
/// slice_words` f32 per team (≥ 5·N ≥ 4·N, what [`FusedVectors::beside`] takes), 8-byte aligned
/// (slice sizes are even).
///
/// # Safety
/// The launch gives `scratch` `GRADIENT_SCRATCH_SLICES · slice_words` f32 per team of the grid.
#[inline(always)]
pub(super) unsafe fn team_scratch<C: ResidentTeam>(crew: &C, prm: &ResidentParams, scratch: *mut f32) -> *mut f32 {
    // SAFETY: the caller's contract.
    unsafe { scratch.add(crew.index() * GRADIENT_SCRATCH_SLICES * prm.slice_words as usize) }
}

/// κe's hyperparameter the fused solve's last residual pass contracts as it walks the rows
/// ([`solve_pair_fused`]): the one whose derivative row the entry's XMV gives beside the
/// residual's (`row2_d`), each product nonzero read once for both. Every other hyperparameter
/// takes a pass of its own after the solve ([`gradient_pair`](super::gradient::gradient_pair)); `apart`: some κe one does, reading
/// x at other threads' rows, so the solve leaves x and s·y apart for it.
///
/// Measured (H100, `results/gradient-h200-5.md`): the node-side shares (q, κv's) folded into the
/// same pass as well gave no faster call on any set and raised the warp entries' spill stores from
/// 32–100 to 260–404 bytes: they keep their pass, which reads x and y at its rows' places only
/// (no neighbour's columns).
#[derive(Clone, Copy)]
pub(super) struct Fold {
    /// The folded κe hyperparameter's index, [`Fold::NONE`] if none.
    pub(super) edge: usize,
    pub(super) apart: bool,
}

impl Fold {
    pub(super) const NONE: usize = usize::MAX;
    /// The fold of `hy`: `folds_edge(h)` tells whether κe's hyperparameter `h` is the one the
    /// entry's derivative row computes (the first such is folded).
    #[inline(always)]
    pub(super) fn of(hy: &[Hyper], folds_edge: impl Fn(&Hyper) -> bool) -> Fold {
        let mut f = Fold { edge: Self::NONE, apart: false };
        for (hi, h) in hy.iter().enumerate() {
            if h.is_edge() {
                if f.edge == Self::NONE && folds_edge(h) {
                    f.edge = hi;
                } else {
                    f.apart = true;
                }
            }
        }
        f
    }
}

/// The primal M x = D×·1 and the adjoint M y = p× solved together as one system of 2N unknowns,
/// diag(M, M) [x; s·y] = [D×·1; s·p×] with s = ‖D×·1‖ / ‖p×‖ (so that both halves weigh the same in
/// the shared residual): the shared PCG, one [`FusedXmv::row2`] per product row and iteration, one set of
/// reductions; then the true residual of each half (its rows' terms multiplied and summed in f64:
/// `row3`, as [`Xmv::row_f64`](super::xmv::Xmv::row_f64) in the plain solve), restarting both
/// ([`Start::Prepared`]) while either misses rtol, at most `MAX_REPLACEMENTS` times.
///
/// The residual pass also contracts `fold`'s κe hyperparameter (`row3(i, i′, v)`: [`FusedXmv::row2`] and
/// its derivative row against v's first half): the last pass's sum, finished, goes to `out[h]`
/// (first thread). Returns the two statuses (both with the fused iterations) and s; where
/// `fold.apart`, x and s·y are left apart in p's room (in the slice, where
/// the other contractions read them), x at `p[0..N]` and s·y at `p[N..2N]`, each row at its place
/// ([`Xmv::slot`](super::xmv::Xmv::slot)).
///
/// # Safety
/// Called by every thread of the team; the views lie in the team's slice, the vectors where
/// [`FusedVectors`] puts them; `out` holds `gp.n_hyper` f64.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn solve_pair_fused<C: ResidentTeam, X: FusedXmv, const REC: bool>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    xmv: &X,
    g1: &View,
    g2: &View,
    fv: FusedVectors,
    fold: Fold,
    row3: impl Fn(usize, usize, *const f32) -> (f64, f64, f64),
    piece3: impl Fn(usize, usize, *const f32) -> (usize, f64, f64, f32),
    out: *mut f64,
) -> (PairStatus, PairStatus, f64) {
    let (n1, n2) = (g1.n, g2.n);
    let n = n1 * n2;
    let ns = prm.node_stride as usize;
    let hy = gp.hypers();
    let table = &gp.node_table;
    let tabled = table.used != 0;
    // SAFETY: the vectors' room (caller's contract); every index below is < 2n (< n for dg); the
    // pair arrays start on an 8-byte boundary.
    unsafe {
        let FusedVectors { dg, x, r, p, ap } = fv;
        let pair = |a: *mut f32, k: usize| (a as *mut Pair).add(k);
        let (mut bb1, mut bb2) = (0.0f64, 0.0f64);
        rows!(crew, n2, n, |k, i, i2| {
            let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
            let (b1, b2) = (a1[NODE_D] as f64 * a2[NODE_D] as f64, a1[NODE_P] as f64 * a2[NODE_P] as f64);
            bb1 += b1 * b1;
            bb2 += b2 * b2;
        });
        let (bb1, bb2) = crew.sum2(bb1, bb2);
        let scale = if bb2 > 0.0 && bb1 > 0.0 { libm::sqrt(bb1 / bb2) } else { 1.0 };
        let sf = scale as f32;
        let mut rho = 0.0f64;
        rows!(crew, n2, n, |k, i, i2| {
            let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
            let dd = a1[NODE_D] * a2[NODE_D];
            let d = dd / prm.node_kernel.eval(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
            let (b1, b2) = (dd, sf * (a1[NODE_P] * a2[NODE_P]));
            let s = xmv.slot(k);
            *dg.add(s) = d;
            *pair(x, s) = Pair([0.0, 0.0]);
            let (z1, z2) = (jacobi(b1, d), jacobi(b2, d));
            start_pair::<REC>(pair(r, 0), pair(p, 0), pair(ap, 0), s, Pair([b1, b2]), Pair([z1, z2]));
            rho += b1 as f64 * z1 as f64 + b2 as f64 * z2 as f64;
        });
        let bb2s = scale * scale * bb2;
        let bb = bb1 + bb2s;
        // also orders the r (z), p and ap writes before the PCG's first XMV
        let rho = crew.sum2(rho, 0.0).0;
        let mut start = Start::Prepared { rho, rr: bb, reference2: bb };
        let mut op = FusedOperator::<X, REC> { xmv, dg, n1, n2 };
        let vectors = PcgVectors { x: pair(x, 0), r: pair(r, 0), p: pair(p, 0), ap: pair(ap, 0), diag: dg as *const f32 };
        let (mut it, mut replaced) = (0u32, 0u32);
        loop {
            // each half's share of the shared residual: rtol/√2 of the whole leaves each near rtol
            let pcg_params = PcgParams { rtol: RECURRENCE_SHARE * prm.rtol * core::f64::consts::FRAC_1_SQRT_2, max_iterations: prm.max_iterations - it };
            it += info_of(&pcg(crew, &mut op, vectors, n, pcg_params, start)).iterations;
            crew.barrier(); // the residual reads x entries of other threads
            // where the iterations walk pieces, so do the rows' sums (`sums_by_pieces`, in r and
            // p's room; the contraction's shares are linear: taken piece by piece); a restart then
            // takes the pass again with the rows walked whole (`whole`), which writes r, p and ap
            // (rare: most pairs meet rtol at their first check)
            let split = xmv.pieces() > 0;
            let sums = sums_at::<f32, 2>(if r < p { r } else { p });
            let mut whole = !split;
            let (rz, rr) = loop {
                let (mut e1, mut e2, mut k1, mut k2, mut rz) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
                // the folded contraction's share (kept if this pass is the last)
                let mut de = 0.0f64;
                if !whole {
                    de = sums_by_pieces(crew, (n, n1, xmv.pieces(), n2), sums, |i, pc| {
                        let (i2, s1, s2, sd) = piece3(i, pc, x);
                        (i2, [s1, s2], (*pair(x, i * n2 + i2)).0[1] as f64 * sd as f64)
                    });
                }
                rows!(crew, n2, n, |k, i, i2| {
                    let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
                    let hh = a1[NODE_D] as f64 * a2[NODE_D] as f64;
                    let pp = a1[NODE_P] as f64 * a2[NODE_P] as f64;
                    let (f1, f2) = (&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
                    // κv from the table where the launch has one (the same value)
                    let kv: f64 = if tabled { table.kv[table.mask(f1, f2)] } else { prm.node_kernel.eval_as::<f64, f32>(f1, f2) };
                    let s = xmv.slot(k);
                    let Pair([x1, x2]) = *pair(x, s);
                    let (x1, x2) = (x1 as f64, x2 as f64);
                    let (s1, s2, sd) = if !whole {
                        let [s1, s2] = *sums.add(k);
                        (s1, s2, 0.0)
                    } else {
                        row3(i, i2, x)
                    };
                    // d₁d₂ in f64 from d's two words (as `View::dd64`): the stored system's exact d
                    // (ρ read last: the fewest registers live beside it)
                    let dd = hh + hh * (g1.rho(i, ns) + g2.rho(i2, ns)) as f64;
                    let res1 = dd - (dd / kv * x1 - s1);
                    let res2 = scale * pp - (dd / kv * x2 - s2);
                    e1 += res1 * res1;
                    e2 += res2 * res2;
                    k1 += pp * x1;
                    k2 += dd * x2;
                    if whole {
                        let d = *dg.add(s);
                        let (z1, z2) = (jacobi(res1 as f32, d), jacobi(res2 as f32, d));
                        start_pair::<REC>(pair(r, 0), pair(p, 0), pair(ap, 0), s, Pair([res1 as f32, res2 as f32]), Pair([z1, z2]));
                        rz += res1 * z1 as f64 + res2 * z2 as f64;
                        de += x2 * sd;
                    }
                });
                // (a team sum is also a barrier: every thread has read its sums)
                let (e1, e2) = crew.sum2(e1, e2);
                let (k1, k2) = crew.sum2(k1, k2);
                let rel1 = if bb1 > 0.0 { libm::sqrt(e1 / bb1) } else { 0.0 };
                let rel2 = if bb2s > 0.0 { libm::sqrt(e2 / bb2s) } else { 0.0 };
                if (rel1 <= prm.rtol && rel2 <= prm.rtol) || replaced >= MAX_REPLACEMENTS || it >= prm.max_iterations {
                    let primal = PairStatus { value: k1, residual: rel1, iterations: it, converged: (rel1 <= prm.rtol) as u32 };
                    let adjoint = PairStatus { value: k2 / scale, residual: rel2, iterations: 0, converged: (rel2 <= prm.rtol) as u32 };
                    // the folded contraction (the shares are linear in y: scaled by 1/s per thread)
                    if fold.edge != Fold::NONE {
                        let sum = crew.sum2(de * (1.0 / scale), 0.0).0;
                        if crew.rank() == 0 {
                            *out.add(fold.edge) = finish(&hy[fold.edge], gp, k1, sum);
                        }
                    }
                    if fold.apart {
                        // x and s·y apart in p's room (at the rows' places), for the other
                        // contractions: each thread moves the rows it owns (p's last use, in the PCG,
                        // ended with the reductions above)
                        rows!(crew, n2, n, |k, _i, _i2| {
                            let s = xmv.slot(k);
                            let Pair([x1, x2]) = *pair(x, s);
                            *p.add(s) = x1;
                            *p.add(n + s) = x2;
                        });
                    }
                    return (primal, adjoint, scale);
                }
                if !whole {
                    whole = true;
                    continue;
                }
                break (rz, e1 + e2);
            };
            // residual replacement for both halves
            replaced += 1;
            start = Start::Prepared { rho: crew.sum2(rz, 0.0).0, rr, reference2: bb };
        }
    }
}
