//! K and ∂K/∂θ of one staged pair, and the gradient launches' job loops.
use super::edge::{EdgeEval, General, NoDerivative};
use super::fused::{Fold, FusedVectors, solve_pair_fused, team_scratch};
use super::jobs::{Jobs, NOT_PLANNED, Room, deal, fused_room, stage_pair};
use super::on_the_fly::OnTheFly;
use super::product::Product;
use super::product_jobs::product_pairs;
use super::teams::ResidentTeam;
use super::view::View;
use super::xmv::{FusedXmv, Xmv};
use octile_types::mgk::gradient::{GradientParams, Hyper, HyperKind, NODE_PASS, combined, finish, node_share_kv};
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES, NZ_FEATURES};
use octile_types::mgk::node_table::TABLE_SLOTS;
use octile_types::real::Pair;
use octile_types::{PairStatus, ResidentGraph, ResidentParams};
/// K and ∂K/∂θ of one staged pair (`octile_types::mgk::gradient`): x and the adjoint y by the
/// fused solve ([`solve_pair_fused`], its vectors where `fv` puts them), whose last residual pass
/// also contracts κe's hyperparameter of [`Fold::of`] (`folds_edge`, `row3`: the one whose derivative
/// row the entry computes beside the residual's); then, for every other hyperparameter,
/// one team sum over the product vector — `edge_row(h, i, i′, x)` giving row (i, i′) of the XMV
/// with ∂κe for κe's — written by the first thread to `out[h]`.
///
/// # Safety
/// Called by every thread of the team; the views and the vectors lie where [`FusedVectors`] says;
/// `out` holds `gp.n_hyper` f64.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gradient_pair<C: ResidentTeam, X: FusedXmv, const REC: bool>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    xmv: &X,
    g1: &View,
    g2: &View,
    fv: FusedVectors,
    out: *mut f64,
    folds_edge: impl Fn(&Hyper) -> bool,
    row3: impl Fn(usize, usize, *const f32) -> (f64, f64, f64),
    piece3: impl Fn(usize, usize, *const f32) -> (usize, f64, f64, f32),
    edge_row: impl Fn(&Hyper, usize, usize, *const f32) -> f32,
) -> PairStatus {
    let ns = prm.node_stride as usize;
    let (n2, n) = (g2.n, g1.n * g2.n);
    let hy = gp.hypers();
    let fold = Fold::of(hy, folds_edge);
    // SAFETY: forwarded contract; every index below is < n.
    unsafe {
        let (primal, adjoint, scale) = solve_pair_fused::<C, X, REC>(crew, prm, gp, xmv, g1, g2, fv, fold, row3, piece3, out);
        let y_scale = 1.0 / scale;
        // q and κv's: NODE_PASS at a time, from κv's table where the launch has one (one mask and
        // one coefficient per entry and hyperparameter), else κv interpreted once per entry and
        // each derivative per hyperparameter; x and s·y read where the solve left them, row k at
        // its place (the solve's last team sums came after every write to them: no barrier)
        let xy = fv.x as *const Pair;
        let table = &gp.node_table;
        let tabled = table.used != 0;
        let mut next = 0;
        // node-side hyperparameters before this pass: the table's slot of pick[c] is slot0 + c
        let mut slot0 = 0;
        loop {
            let (mut pick, mut cnt) = ([0usize; NODE_PASS], 0);
            while next < hy.len() && cnt < NODE_PASS {
                if hy[next].is_node_side() {
                    pick[cnt] = next;
                    cnt += 1;
                }
                next += 1;
            }
            if cnt == 0 {
                break;
            }
            let mut acc = [0.0f64; NODE_PASS];
            if tabled {
                // one mask per entry, one table entry per hyperparameter (NodeTable)
                rows!(crew, n2, n, |k, i, i2| {
                    let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
                    let coef = &table.coef[table.mask(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..])];
                    let Pair([x1, x2]) = *xy.add(xmv.slot(k));
                    let w = x2 as f64 * x1 as f64 * (a1[NODE_D] as f64 * a2[NODE_D] as f64);
                    for c in 0..NODE_PASS {
                        if c < cnt {
                            acc[c] += w * coef[(slot0 + c) % TABLE_SLOTS];
                        }
                    }
                });
            } else {
                rows!(crew, n2, n, |k, i, i2| {
                    let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
                    let (f1, f2) = (&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
                    let dd = a1[NODE_D] as f64 * a2[NODE_D] as f64;
                    let inv_kv = 1.0 / prm.node_kernel.eval_as::<f64, f32>(f1, f2);
                    let Pair([x1, x2]) = *xy.add(xmv.slot(k));
                    let base = x2 as f64 * x1 as f64 * dd * inv_kv;
                    for c in 0..cnt {
                        acc[c] += node_share_kv(&hy[pick[c]], gp, &prm.node_kernel, f1, f2, base, inv_kv);
                    }
                });
            }
            slot0 += cnt;
            let mut c = 0;
            while c < cnt {
                let (a, b) = crew.sum2(acc[c] * y_scale, if c + 1 < cnt { acc[c + 1] * y_scale } else { 0.0 });
                if crew.rank() == 0 {
                    *out.add(pick[c]) = finish(&hy[pick[c]], gp, primal.value, a);
                    if c + 1 < cnt {
                        *out.add(pick[c + 1]) = finish(&hy[pick[c + 1]], gp, primal.value, b);
                    }
                }
                c += 2;
            }
        }
        if fold.apart {
            // κe's past the fold: one XMV-shaped pass each over x and s·y, apart in p's room
            let (x, y) = (fv.p as *const f32, fv.p.add(n) as *const f32);
            crew.barrier(); // the contractions read x entries of other threads
            for (hi, h) in hy.iter().enumerate() {
                if h.is_edge() && hi != fold.edge {
                    let mut sum = 0.0f64;
                    rows!(crew, n2, n, |k, i, i2| {
                        sum += *y.add(xmv.slot(k)) as f64 * edge_row(h, i, i2, x) as f64;
                    });
                    sum = crew.sum2(sum * y_scale, 0.0).0;
                    if crew.rank() == 0 {
                        *out.add(hi) = finish(h, gp, primal.value, sum);
                    }
                }
            }
        }
        // p: no pass (∂K/∂p = 2K/p)
        if crew.rank() == 0 {
            for (hi, h) in hy.iter().enumerate() {
                if !h.is_node_side() && !h.is_edge() {
                    *out.add(hi) = finish(h, gp, primal.value, 0.0);
                }
            }
        }
        combined(primal, adjoint)
    }
}

/// Every job's K and ∂K/∂θ on the fly: the solves with the κe evaluator `e`, the contractions with
/// `de` for ∂κe/∂(the parameter of κe's first term) where the entry has a specialized one (κe one
/// square exponential: `ex2` in place of the interpreter's `exp`, no per-entry dispatch), the
/// general interpreter over ∂κe for every other κe hyperparameter ([`gradient_pair`]);
/// `grad[job · n_hyper + h]`.
///
/// # Safety
/// As [`solve_all`](super::jobs::solve_all), with `gp` valid, `grad` holding `n_jobs · gp.n_hyper` f64 and `scratch`
/// `params.slice_words` f32 per team of the grid.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gradient_all<C: ResidentTeam, E: EdgeEval, D: EdgeEval>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    e: &E,
    de: Option<&D>,
    js: Jobs,
    grad: *mut f64,
    scratch: *mut f32,
) {
    let nzs = prm.nz_stride as usize;
    let features = nzs - NZ_FEATURES;
    let s = crew.slice();
    let np = gp.hypers().len();
    // SAFETY: forwarded contract; runs and slice sizes host-checked.
    let each = #[inline(always)]
    |crew: &mut C, j: u32, d1: ResidentGraph, d2: ResidentGraph, room: Room| unsafe {
        let (g1, g2, staged) = stage_pair::<f32, C>(crew, prm, js.words, s, &d1, &d2);
        // split launches walk G′'s long rows in pieces in the solve's XMV (the view without
        // pieces otherwise); the other passes walk whole rows
        let g2p = if C::SPLITS && prm.split != 0 { g2 } else { View { np: 0, ..g2 } };
        // (PAIRED = false: the gradient entries' walks are `single` and `range2_d`, see `single`)
        let fly = OnTheFly::<E, true, f32, false> { e, g1: &g1, g2: &g2p, nzs };
        let edge_row = #[inline(always)]
        |h: &Hyper, i: usize, i2: usize, x: *const f32| {
            if let Some(de) = de
                && h.kind == HyperKind::EdgeParam as u32
                && h.term == 0
            {
                return OnTheFly::<_, false, f32, false> { e: de, g1: &g1, g2: &g2, nzs }.row(i, i2, x);
            }
            let d = h.derivative(&prm.edge_kernel);
            let dk = General { spec: &d, features };
            OnTheFly::<_, false, f32, false> { e: &dk, g1: &g1, g2: &g2, nzs }.row(i, i2, x)
        };
        let (v, n) = (s.add(staged) as *mut f32, g1.n * g2.n);
        let fv = match room {
            Room::FusedBeside if staged + FusedVectors::beside_words(v, n) <= prm.slice_words as usize => {
                FusedVectors::beside(v, team_scratch(crew, prm, scratch), n)
            }
            Room::FusedInSlice if staged + FusedVectors::slice_words(v, n) <= prm.slice_words as usize => FusedVectors::in_slice(v, n),
            _ => return NOT_PLANNED,
        };
        // κe's first parameter folded into the solve's last residual pass where the entry has a
        // specialized derivative for it
        let folds_edge = |h: &Hyper| de.is_some() && h.kind == HyperKind::EdgeParam as u32 && h.term == 0;
        let row3 = #[inline(always)]
        |i: usize, i2: usize, v: *const f32| match de {
            Some(de) => {
                let (s1, s2, sd) = fly.row2_d::<_, f64>(de, i, i2, v);
                (s1, s2, sd as f64)
            }
            None => {
                let (s1, s2, _) = fly.row2_d::<_, f64>(&NoDerivative, i, i2, v);
                (s1, s2, 0.0)
            }
        };
        // `row3` of piece pc of G′'s rows (split launches: the residual's rows by pieces)
        let piece3 = #[inline(always)]
        |i: usize, pc: usize, v: *const f32| {
            let (node, b0, b1) = fly.piece_span(pc);
            match de {
                Some(de) => {
                    let (s1, s2, sd) = fly.range2_d::<_, f64>(de, i, b0, b1, v);
                    (node, s1, s2, sd)
                }
                None => {
                    let (s1, s2, _) = fly.range2_d::<_, f64>(&NoDerivative, i, b0, b1, v);
                    (node, s1, s2, 0.0)
                }
            }
        };
        // the fused solve direct (FusedOperator: the recurrence measured slower here)
        gradient_pair::<C, _, false>(crew, prm, gp, &fly, &g1, &g2, fv, grad.add(j as usize * np), folds_edge, row3, piece3, edge_row)
    };
    // SAFETY: forwarded contract.
    unsafe {
        fused_room(
            prm,
            #[inline(always)]
            |room| {
                deal(
                    crew,
                    prm,
                    js,
                    #[inline(always)]
                    |crew, j, d1, d2| each(crew, j, d1, d2, room),
                )
            },
        )
    }
}

/// Every job's K and ∂K/∂θ in product form (κe one Kronecker delta on feature `f`, value `h`,
/// unit weights): ∂κe/∂h = 1 − δ, so κe's parameter contracts the entries whose labels differ;
/// the weight of its one term (an additive κe) has ∂κe ≡ 0. Slice as [`solve_all_product`](super::product_jobs::solve_all_product)'s with the kept x after the five vectors.
///
/// # Safety
/// As [`solve_all_product`](super::product_jobs::solve_all_product), with `gp` valid, `grad` holding `n_jobs · gp.n_hyper` f64 and
/// `scratch` `params.slice_words` f32 per team of the grid.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gradient_all_product<C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    f: usize,
    h: f32,
    js: Jobs,
    grad: *mut f64,
    scratch: *mut f32,
) {
    let np = gp.hypers().len();
    // SAFETY: forwarded contract.
    unsafe {
        let each = #[inline(always)]
        |crew: &mut C, j: u32, prod: &Product, g1: &View, g2: &View, v: *mut f32, room: Room| {
            // ∂κe/∂h = 1 − δ: the differing entries. κe's other hyperparameter here is the weight of
            // its one term (an additive κe of one term, weight 1: the product form's unit weights),
            // whose ∂κe = (κ_t − κ) / ŵ is 0 (`SpecDerivative`)
            let edge_row =
                #[inline(always)]
                |h: &Hyper, i: usize, i2: usize, x: *const f32| if h.kind == HyperKind::EdgeParam as u32 { prod.row_differing(i, i2, x) } else { 0.0 };
            let n = g1.n * g2.n;
            let fv = match room {
                Room::FusedInSlice => FusedVectors::in_slice(v, n),
                Room::FusedBeside => FusedVectors::beside(v, team_scratch(crew, prm, scratch), n),
                Room::Solver => return NOT_PLANNED,
            };
            // κe's one hyperparameter (1 − δ: the differing entries) folded into the solve's last
            // residual pass
            let row3 = #[inline(always)]
            |i: usize, i2: usize, v: *const f32| prod.row2_d::<f64>(i, i2, v);
            // (the product form walks no pieces: never called)
            let piece3 = |_: usize, _: usize, _: *const f32| (0usize, 0.0f64, 0.0f64, 0.0f32);
            // the fused solve by recurrence where its vectors lie in the slice (FusedOperator)
            let (out, folds_edge) = (grad.add(j as usize * np), |h: &Hyper| h.kind == HyperKind::EdgeParam as u32);
            if room == Room::FusedInSlice {
                gradient_pair::<C, _, true>(crew, prm, gp, prod, g1, g2, fv, out, folds_edge, row3, piece3, edge_row)
            } else {
                gradient_pair::<C, _, false>(crew, prm, gp, prod, g1, g2, fv, out, folds_edge, row3, piece3, edge_row)
            }
        };
        fused_room(
            prm,
            #[inline(always)]
            |room| product_pairs(crew, prm, f, h, js, room, each),
        )
    }
}
