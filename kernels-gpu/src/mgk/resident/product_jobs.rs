//! The product form's jobs: each pair's entries built in the slice, then solved.
use super::fused::FusedVectors;
use super::jobs::{Jobs, NOT_PLANNED, Room, deal};
use super::product::Product;
use super::real::ResidentReal;
use super::solve::solve_pair;
use super::teams::ResidentTeam;
use super::view::View;
use crate::intrinsics::no_unroll;
use octile_types::mgk::layout::NZ_FEATURES;
use octile_types::mgk::resident::{
    PRODUCT_MAX_ENTRIES, RESIDENT_VECTORS, product_entry, product_row_position, product_slice_words, product_span, product_vector_offset,
};
use octile_types::{PairStatus, ResidentParams};
/// Every job in product form (`octile_types::mgk::resident::PRODUCT_COLUMN_BITS`): κe a Kronecker
/// delta on edge feature `f` with value `h` for differing labels, every weight 1. The graphs stay
/// in global memory (read once per pair, to build the entries and the node terms); the slice holds
/// both row-pointer arrays, the five vectors and the entries.
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`](super::entries::MgkResidentWarpProduct).
#[inline(always)]
pub(super) unsafe fn solve_all_product<T: ResidentReal, C: ResidentTeam>(crew: &mut C, prm: &ResidentParams, f: usize, h: T, js: Jobs) {
    // SAFETY: forwarded contract.
    unsafe {
        product_pairs(crew, prm, f, h, js, Room::Solver, |crew, _, prod: &Product<T>, g1, g2, v, _| {
            // the f32 solve's vectors in row records (recurrent: `solve_pair`), f64's apart
            if T::RECURRENT_PCG { solve_pair::<T, C, _, 3>(crew, prm, prod, g1, g2, v) } else { solve_pair::<T, C, _, 1>(crew, prm, prod, g1, g2, v) }
        })
    }
}

/// Every job staged in product form — row pointers, the vectors (`room`: the solver's five, or
/// the fused solve's, all of them or p, r and dg: [`FusedVectors`]), then the entries — and handed to
/// `solve(crew, job, product, g1, g2, vectors, room)` ([`NOT_PLANNED`] where a job's slice lacks
/// that room).
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`](super::entries::MgkResidentWarpProduct).
#[inline(always)]
pub(super) unsafe fn product_pairs<T: ResidentReal, C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    f: usize,
    h: T,
    js: Jobs,
    room: Room,
    mut solve: impl FnMut(&mut C, u32, &Product<T>, &View<T>, &View<T>, *mut T, Room) -> PairStatus,
) {
    let nzs = prm.nz_stride as usize;
    let s = crew.slice();
    // SAFETY: forwarded contract; runs, n1·n2 ≤ 2^14 (`PRODUCT_MAX_UNKNOWNS`) and slice sizes host-checked.
    unsafe {
        deal(
            crew,
            prm,
            js,
            #[inline(always)]
            |crew, j, d1, d2| {
                let (n1, n2, nnz2) = (d1.n_nodes as usize, d2.n_nodes as usize, d2.nnz as usize);
                let g1 = View::<T>::at(js.words.add(d1.offset as usize), &d1, nzs, prm.node_stride as usize);
                let g2 = View::<T>::at(js.words.add(d2.offset as usize), &d2, nzs, prm.node_stride as usize);
                let n = n1 * n2;
                let v = s.add(product_vector_offset(n1, n2, T::WORDS)) as *mut T;
                let plain = product_slice_words((n1, d1.nnz as usize), (n2, nnz2), T::WORDS);
                // the vectors' room: the plain solve's five, or the fused solve's — all of them, or
                // p, r and dg (x and ap beside the slice, FusedVectors::beside; the gradient
                // entries, f32 alone)
                let words = match room {
                    Room::Solver => RESIDENT_VECTORS * n * T::WORDS,
                    Room::FusedInSlice => FusedVectors::slice_words(v.cast(), n),
                    Room::FusedBeside => FusedVectors::beside_words(v.cast(), n),
                };
                if plain - RESIDENT_VECTORS * n * T::WORDS + words > prm.slice_words as usize || d1.nnz as usize * nnz2 >= PRODUCT_MAX_ENTRIES {
                    // a planning error (the host sizes every slice for its launch's room and gives
                    // the product form no pair whose entries the spans cannot hold; a row's count
                    // always fits, PRODUCT_MAX_ROW_ENTRIES): reported, not written past the slice
                    return NOT_PLANNED;
                }
                let spans = (v as *mut u32).add(words);
                let ent = spans.add(n) as *mut u16;
                let ord = ent.add(d1.nnz as usize * nnz2);
                let mut t = crew.rank();
                while t < n1 + n2 + 2 {
                    *s.add(t) = if t <= n1 { *g1.rp.add(t) } else { *g2.rp.add(t - n1 - 1) };
                    t += crew.size();
                }
                // each node's degree run [first, end) (the host sorts nodes by degree), packed
                // first | end << 16, G's nodes then G′'s, in the vectors' room until the solve
                // sets them up (n1 + n2 ≤ 5·n1·n2 words)
                let runs = v as *mut u32;
                let mut t = crew.rank();
                while t < n1 + n2 {
                    let (rp, node, nodes) = if t < n1 { (g1.rp, t, n1) } else { (g2.rp, t - n1, n2) };
                    let deg = |u: usize| *rp.add(u + 1) - *rp.add(u);
                    let d = deg(node);
                    let (mut first, mut end) = (node, node + 1);
                    while first > 0 && deg(first - 1) == d {
                        first -= 1;
                    }
                    while end < nodes && deg(end) == d {
                        end += 1;
                    }
                    *runs.add(t) = first as u32 | (end as u32) << 16;
                    t += crew.size();
                }
                crew.barrier();
                let run = |w: u32| (w & 0xffff, w >> 16);
                // each thread builds the entries of its own rows (disjoint runs), their places in
                // the row order (the table: k's place) and their spans there; the columns are
                // places in that order too
                // u32 counters (n1·n2 ≤ 2^14, nnz·nnz′ < PRODUCT_MAX_ENTRIES), the row pointers from
                // the slice, the inner loop one entry a step with ptxas's unrolling off (as
                // `walk_entries`: G′'s rows hold 1–4 nonzeros in molecules, and a 4×/2×/1× unrolled
                // loop with 64-bit counters took ~360 instructions a product row of MUTAG). H100:
                // warp instructions −1.9 % (MUTAG) / −3.3 % (ChEMBL), ChEMBL 0.2322 → 0.2268 s,
                // `--gradient` 0.4056 → 0.3947 s (its block entry's spills gone), values bit-identical
                // (`results/rows2-h100.md`, call 4)
                let (rs1, rs2, nnz2w) = (s as *const u32, s.add(n1 + 1) as *const u32, nnz2 as u32);
                rows!(crew, n2, n, |k, i, i2| {
                    let (a, b) = (run(*runs.add(i)), run(*runs.add(n1 + i2)));
                    let (a0, a1) = (*rs1.add(i), *rs1.add(i + 1));
                    let (b0, b1) = (*rs2.add(i2), *rs2.add(i2 + 1));
                    let mut o = a0 * nnz2w + (a1 - a0) * b0;
                    let at = product_row_position(i as u32, a, i2 as u32, b, n2 as u32) as usize;
                    *ord.add(k) = at as u16;
                    *spans.add(at) = product_span(o, (a1 - a0) * (b1 - b0));
                    let mut a = a0;
                    while a < a1 {
                        let j = *g1.col.add(a as usize);
                        let ra = run(*runs.add(j as usize));
                        let la = *g1.edge.add(a as usize * nzs + NZ_FEATURES + f);
                        let mut b = b0;
                        while b < b1 {
                            no_unroll();
                            let j2 = *g2.col.add(b as usize);
                            let column = product_row_position(j, ra, j2, run(*runs.add(n1 + j2 as usize)), n2 as u32);
                            *ent.add(o as usize) = product_entry(column, la != *g2.edge.add(b as usize * nzs + NZ_FEATURES + f));
                            o += 1;
                            b += 1;
                        }
                        a += 1;
                    }
                });
                crew.barrier();
                let prod = Product { rp1: s, rp2: s.add(n1 + 1), nnz2, ent, ord, spans, h };
                solve(crew, j, &prod, &g1, &g2, v, room)
            },
        )
    }
}

/// A product-form launch's jobs: κe's one Kronecker-delta term (feature, h in T) read from `p`.
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`](super::entries::MgkResidentWarpProduct) (or its block and f64 forms) for `crew`'s kind.
#[inline(always)]
pub(super) unsafe fn product_launch<T: ResidentReal, C: ResidentTeam>(crew: &mut C, p: &ResidentParams, js: Jobs) {
    let term = &p.edge_kernel.terms[0];
    // SAFETY: forwarded.
    unsafe { solve_all_product::<T, C>(crew, p, term.feature as usize, T::from_f64(term.param), js) }
}
