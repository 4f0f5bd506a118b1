//! One staged pair's solve: the shared PCG, the true residual, residual replacement.
use super::operator::{ResidentOperator, jacobi, recurrent, sums_at, sums_by_pieces};
use super::real::ResidentReal;
use super::teams::ResidentTeam;
use super::view::View;
use super::xmv::Xmv;
use octile_types::mgk::gradient::Rhs;
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES};
use octile_types::mgk::resident::RECURRENCE_SHARE;
use octile_types::pcg::{PcgParams, PcgVectors, Start, info_of, pcg};
use octile_types::{PairStatus, ResidentParams};
/// Rounds of residual replacement after the first CG run: when the true residual misses rtol
/// (f32 rounding made the recurrence drift from b − M·x), CG restarts from x with the true
/// residual, at most this many times.
pub(super) const MAX_REPLACEMENTS: u32 = 2;

/// Entry k of a prepared PCG start ([`Start::Prepared`]) from residual `r0` and z = `z0`: r = r0 and
/// p = z for the direct form; z in r's place and p = ap = 0 for the recurrent one ([`recurrent`]).
///
/// `S`: p's and ap's entries apart (1) or in row records (`solve_pair`).
///
/// # Safety
/// k < n: r holds n values, p and ap n at S apart.
#[inline(always)]
pub(super) unsafe fn start_row<T: ResidentReal, const S: usize>(r: *mut T, p: *mut T, ap: *mut T, k: usize, r0: T, z0: T) {
    // SAFETY: the caller's contract.
    unsafe {
        if recurrent::<T, S>() {
            *r.add(k) = z0;
            *p.add(k * S) = T::ZERO;
            *ap.add(k * S) = T::ZERO;
        } else {
            *r.add(k) = r0;
            *p.add(k) = z0;
        }
    }
}

/// Solve one staged pair; `v` holds room for the five vectors: apart (`S` = 1), or x, r and the
/// rows' records (`S` = 3, the f32 product form, recurrent):
///
/// ```text
///   S = 1:  [ dg | x | r | p | ap ]                          each n values
///   S = 3:  [ x | r (z) | p₀ ap₀ dg₀ | p₁ ap₁ dg₁ | … ]       x, r: n values; records: 3·n
/// ```
/// Why records: the XMV's pass reads and writes a row's p, ap and dg, the update pass its p, ap
/// and dg beside x and z; apart, each vector's address was an instruction of its own at every row
/// (LLVM's loop strength reduction keeps the slice's base apart: one add per vector and row), in a
/// record one address serves the three. z stays apart: the entries read it at other rows; so does
/// x, which the true residual reads there. H100: warp instructions −5.8 % (MUTAG) / −6.0 %
/// (ChEMBL), ChEMBL's launches −2.1 % and its call 0.2293 → 0.2261 s, MUTAG's launches as before
/// (the issue rate fell with the count), values bit-identical (`results/rows2-h100.md`, call 6).
/// f64 keeps its vectors apart: its PCG is direct, and the direct XMV reads p at other rows.
///
/// The shared PCG runs in T (f64 sums) until the recurrence residual reaches
/// `RECURRENCE_SHARE`·rtol; then the true residual b − M·x (T products, f64 sums) and the value;
/// if the true residual misses rtol, PCG restarts from x with it ([`Start::Prepared`]), at most
/// `MAX_REPLACEMENTS` times.
///
/// # Safety
/// Called by every thread of the team; the views and `v` lie in the team's slice.
#[inline(always)]
pub(super) unsafe fn solve_pair<T: ResidentReal, C: ResidentTeam, X: Xmv<T>, const S: usize>(
    crew: &mut C,
    prm: &ResidentParams,
    xmv: &X,
    g1: &View<T>,
    g2: &View<T>,
    v: *mut T,
) -> PairStatus {
    // the primal system (the gradient entries solve the adjoint fused with it: solve_pair_fused)
    let (bs, vs) = (Rhs::Primal.node_slot(), Rhs::Primal.value_slot());
    // the true residual's b is D×·1 in f64 from d's two words (`View::dd64`)
    const { assert!(Rhs::Primal.node_slot() == NODE_D, "the primal right-hand side is d") };
    let (n1, n2) = (g1.n, g2.n);
    let n = n1 * n2;
    let ns = prm.node_stride as usize;
    // the two layouts above, and no other (the offsets below are written for records of 3)
    const { assert!(S == 1 || S == 3, "solve_pair's vectors: apart (S = 1) or in records [p ap dg] (S = 3)") };
    // SAFETY: five n-long vectors in the slice (caller's contract: 5·n values, which either layout
    // takes); every row index below is < n (p, ap and dg at S times it).
    unsafe {
        let (dg, x, r, p, ap) =
            if S == 1 { (v, v.add(n), v.add(2 * n), v.add(3 * n), v.add(4 * n)) } else { (v.add(2 * n + 2), v, v.add(n), v.add(2 * n), v.add(2 * n + 1)) };
        let (mut rho, mut bb) = (0.0f64, 0.0f64);
        rows!(crew, n2, n, |k, i, i2| {
            let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
            let dd = a1[NODE_D] * a2[NODE_D];
            let b = a1[bs] * a2[bs];
            let d = dd / prm.node_kernel.eval(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
            let z = jacobi(b, d);
            let s = xmv.slot(k);
            *dg.add(s * S) = d;
            *x.add(s) = T::ZERO;
            start_row::<T, S>(r, p, ap, s, b, z);
            rho += b.to_f64() * z.to_f64();
            bb += b.to_f64() * b.to_f64();
        });
        // also orders the r, p (and ap) writes before the PCG's first XMV
        let (rho, bb) = crew.sum2(rho, bb);
        let mut start = Start::Prepared { rho, rr: bb, reference2: bb };
        let mut op = ResidentOperator::<X, T, S> { xmv, dg, n1, n2 };
        let vectors = PcgVectors { x, r, p, ap, diag: dg };
        let mut it = 0u32;
        let mut replaced = 0u32;
        loop {
            let pcg_params = PcgParams { rtol: RECURRENCE_SHARE * prm.rtol, max_iterations: prm.max_iterations - it };
            it += info_of(&pcg(crew, &mut op, vectors, n, pcg_params, start)).iterations;
            crew.barrier(); // the residual reads x entries of other threads
            // ---- true residual b − M·x (T products, f64 sums) and the value; the true residual
            // also replaces r (or z, in r's place), and restarts p (and ap), for another round if
            // it misses rtol. Where the iterations walk pieces, so do the rows' sums
            // (`sums_by_pieces`, in r's room); a restart then takes the pass again with the rows
            // walked whole (`whole`), which writes r and p there (rare: most pairs meet rtol at
            // their first check).
            // (row records: never split — the sums' 2·n words in r's room would run into them)
            let split = S == 1 && xmv.pieces() > 0;
            let sums = sums_at::<T, 1>(r);
            let mut whole = !split;
            let (rz, rr) = loop {
                if !whole {
                    sums_by_pieces(crew, (n, n1, xmv.pieces(), n2), sums, |i, pc| {
                        let (i2, share) = xmv.piece_f64(i, pc, x);
                        (i2, [share], 0.0)
                    });
                }
                let (mut res2, mut value, mut rz) = (0.0f64, 0.0f64, 0.0f64);
                rows!(crew, n2, n, |k, i, i2| {
                    let (a1, a2) = (g1.node(i, ns), g2.node(i2, ns));
                    // d in f64 from its two words (`RESIDENT_NODE_EXTRA`): the residual of the
                    // stored system with d exact, not rounded to T; b = D×·1 (bs = NODE_D)
                    let dd = g1.dd64(i, g2, i2, ns);
                    let b = dd;
                    let (f1, f2) = (&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
                    let kv: f64 = prm.node_kernel.eval_as::<f64, T>(f1, f2);
                    let s = xmv.slot(k);
                    let xk = (*x.add(s)).to_f64();
                    let row = if whole { xmv.row_f64(i, i2, x) } else { (*sums.add(k))[0] };
                    let res = b - (dd / kv * xk - row);
                    res2 += res * res;
                    value += a1[vs].to_f64() * a2[vs].to_f64() * xk;
                    if whole {
                        let z = jacobi(T::from_f64(res), *dg.add(s * S));
                        start_row::<T, S>(r, p, ap, s, T::from_f64(res), z);
                        rz += res * z.to_f64();
                    }
                });
                // (a team sum is also a barrier: every thread has read its sums)
                let (res2, value) = crew.sum2(res2, value);
                let residual = if bb > 0.0 { libm::sqrt(res2 / bb) } else { 0.0 };
                if residual <= prm.rtol || replaced >= MAX_REPLACEMENTS || it >= prm.max_iterations {
                    return PairStatus { value, residual, iterations: it, converged: (residual <= prm.rtol) as u32 };
                }
                if !whole {
                    whole = true;
                    continue;
                }
                break (rz, res2);
            };
            // residual replacement: rounding let the recurrence drift from b − M·x
            replaced += 1;
            start = Start::Prepared { rho: crew.sum2(rz, 0.0).0, rr, reference2: bb };
        }
    }
}
