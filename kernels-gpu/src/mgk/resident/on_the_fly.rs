//! κe evaluated on the fly from the two graphs' CSR.
use super::edge::{EdgeEval, NoDerivative};
use super::real::ResidentReal;
use super::view::View;
use super::xmv::{FusedXmv, Xmv, walk_natural};
use octile_types::mgk::resident::PIECE_NONZEROS;
use octile_types::pcg::Team;
use octile_types::real::{Pair, fma64};
/// κe evaluated on the fly from the two graphs' CSR; `PAIRED`: two of G′'s nonzeros per walk of
/// G's row ([`OnTheFly::paired`]: the shared-memory solver entries), else [`OnTheFly::single`] (the
/// grid and gradient entries).
pub(super) struct OnTheFly<'a, E, const SPLIT: bool, T = f32, const PAIRED: bool = true> {
    pub(super) e: &'a E,
    pub(super) g1: &'a View<T>,
    pub(super) g2: &'a View<T>,
    pub(super) nzs: usize,
}

impl<T: ResidentReal, E: EdgeEval<T>, const SPLIT: bool, const PAIRED: bool> OnTheFly<'_, E, SPLIT, T, PAIRED> {
    /// Σ over G's nonzeros of row i and G′'s nonzeros b0..b1: G′'s nonzeros two per walk of G's
    /// row ([`OnTheFly::paired`]) where `PAIRED`, else one loop over the d·d′ pairs
    /// ([`OnTheFly::single`]).
    #[inline(always)]
    pub(super) unsafe fn sum(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
        // SAFETY: forwarded.
        unsafe { if PAIRED { self.paired(i, b0, b1, v) } else { self.single(i, b0, b1, v) } }
    }

    /// [`OnTheFly::sum`] with G′'s nonzeros two per walk of G's row i: each of G's nonzeros (its
    /// weight, feature and column) read once for two terms, the walk's start paid once for both;
    /// the inner loop sums w·κe·v (one FFMA a term) and w′ multiplies the sum once. The lanes of a
    /// warp walk rows (or pieces) of one row i of G, so each read of G's nonzeros is one broadcast
    /// (no bank conflict). H200, same call: NWS 0.027 → 0.024 s, BA 0.142 → 0.113 s
    /// (`results/xmv-paired-h200.md`; 28 → 23 and 26 → 17 thread instructions per multiply-add).
    ///
    /// # Safety
    /// i < n1, b0..b1 within G′'s nonzeros.
    #[inline(always)]
    pub(super) unsafe fn paired(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
        let (g1, g2, nzs) = (self.g1, self.g2, self.nzs);
        // (κe's terms are symmetric: κe(e′, e) = κe(e, e′), so G′'s nonzero may be the prepared one)
        // SAFETY: i < n1, b0..b1 within G′'s nonzeros; CSR entries of a staged graph are in range
        // (host-built).
        unsafe {
            // u32 counters: 32-bit loop arithmetic
            let (a0, a1, b1) = (*g1.rp.add(i), *g1.rp.add(i + 1), b1 as u32);
            let n2 = g2.n as u32;
            let mut acc = T::ZERO;
            let mut b = b0 as u32;
            while b + 1 < b1 {
                let (bx, by) = (b as usize, b as usize + 1);
                let (ex, ey) = (self.e.prep(g2.edge.add(bx * nzs)), self.e.prep(g2.edge.add(by * nzs)));
                let (vx, vy) = (v.add(*g2.col.add(bx) as usize), v.add(*g2.col.add(by) as usize));
                let (mut sx, mut sy) = (T::ZERO, T::ZERO);
                for a in a0..a1 {
                    let a = a as usize;
                    let (ea, off) = (g1.edge.add(a * nzs), (*g1.col.add(a) * n2) as usize);
                    sx = T::fma(self.e.inner(ex, ea), *vx.add(off), sx);
                    sy = T::fma(self.e.inner(ey, ea), *vy.add(off), sy);
                }
                acc = T::fma(self.e.weight(ex), sx, acc);
                acc = T::fma(self.e.weight(ey), sy, acc);
                b += 2;
            }
            // the last of an odd count
            while b < b1 {
                let bu = b as usize;
                let eb = self.e.prep(g2.edge.add(bu * nzs));
                let vcol = v.add(*g2.col.add(bu) as usize);
                let mut s = T::ZERO;
                for a in a0..a1 {
                    let a = a as usize;
                    s = T::fma(self.e.inner(eb, g1.edge.add(a * nzs)), *vcol.add((*g1.col.add(a) * n2) as usize), s);
                }
                acc = T::fma(self.e.weight(eb), s, acc);
                b += 1;
            }
            acc
        }
    }

    /// [`OnTheFly::sum`] as one loop over the d·d′ pairs (a, b), a fastest, G′'s nonzero reloaded
    /// when a wraps, G's row innermost (broadcast loads: in global memory one L1 wavefront; rows
    /// of a few nonzeros paid more for starting each inner loop than for its pairs, hence one
    /// loop): the walk of the grid entries and of the gradient entries. There the paired walk
    /// spills (80 and 128 registers), and a walk of one of G′'s nonzeros with the weights factored
    /// out measured slower (the proteins in global memory +10 %, BA's gradient +5 %,
    /// `results/xmv-paired-h200.md`).
    ///
    /// # Safety
    /// As [`OnTheFly::paired`].
    #[inline(always)]
    pub(super) unsafe fn single(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
        // SAFETY: as in `paired`.
        unsafe { self.fold_pairs(i, b0 as u32, b1 as u32, v, T::ZERO, |acc, k, x| acc + k * x) }
    }
    /// [`Xmv::row_f64`] over G′'s nonzeros b0..b1 (a row, or a piece of one).
    ///
    /// # Safety
    /// i < n1, b0..b1 within one row of G′, `v` holds n1·n2 values.
    #[inline(always)]
    pub(super) unsafe fn range_f64(&self, i: usize, b0: u32, b1: u32, v: *const T) -> f64 {
        // SAFETY: the caller's contract. One DFMA a term: for f32 factors the product is exact in
        // f64 and it rounds as the add would; for f64 factors once instead of twice.
        unsafe { self.fold_pairs(i, b0, b1, v, 0.0f64, |acc, k, x| fma64(k.to_f64(), x.to_f64(), acc)) }
    }
    /// `add(acc, κe, v[column])` folded over the d·d′ pairs of G's row i and G′'s nonzeros b0..b1
    /// in one loop, a fastest, G′'s nonzero reloaded when a wraps, G's row innermost (broadcast
    /// loads; the grid entries' 80 registers spilled with a loop in a loop here): [`single`](Self::single)
    /// and [`range_f64`](Self::range_f64).
    ///
    /// # Safety
    /// i < n1, b0..b1 within one row of G′ (CSR entries of a staged graph are in range:
    /// host-built), `v` holds n1·n2 values.
    #[inline(always)]
    unsafe fn fold_pairs<A: Copy>(&self, i: usize, b0: u32, b1: u32, v: *const T, zero: A, add: impl Fn(A, T, T) -> A) -> A {
        let (g1, g2, nzs) = (self.g1, self.g2, self.nzs);
        // SAFETY: the caller's contract.
        unsafe {
            // u32 counters: 32-bit loop arithmetic
            let (a0, a1) = (*g1.rp.add(i), *g1.rp.add(i + 1));
            let mut acc = zero;
            if a0 == a1 || b0 == b1 {
                return acc;
            }
            let (mut a, mut b) = (a0, b0);
            let n2 = g2.n as u32;
            let mut vcol = v.add(*g2.col.add(b as usize) as usize);
            let mut eb = self.e.prep(g2.edge.add(b as usize * nzs));
            loop {
                acc = add(acc, self.e.eval(eb, g1.edge.add(a as usize * nzs)), *vcol.add((*g1.col.add(a as usize) * n2) as usize));
                a += 1;
                if a == a1 {
                    b += 1;
                    if b == b1 {
                        return acc;
                    }
                    a = a0;
                    vcol = v.add(*g2.col.add(b as usize) as usize);
                    eb = self.e.prep(g2.edge.add(b as usize * nzs));
                }
            }
        }
    }
    /// Piece `pc` of G′'s rows: (its node, first nonzero, end).
    ///
    /// # Safety
    /// pc < np.
    #[inline(always)]
    pub(super) unsafe fn piece_span(&self, pc: usize) -> (usize, u32, u32) {
        let g2 = self.g2;
        // SAFETY: pc < np; a piece starts inside its node's row and ends at most at the row's end.
        unsafe {
            let w = *g2.pieces.add(pc);
            let (node, b0) = ((w >> 16) as usize, w & 0xffff);
            (node, b0, (b0 + PIECE_NONZEROS as u32).min(*g2.rp.add(node + 1)))
        }
    }
}

impl<E: EdgeEval, const SPLIT: bool, const PAIRED: bool> OnTheFly<'_, E, SPLIT, f32, PAIRED> {
    /// [`FusedXmv::row2`] and, beside it, row (i, i′) of the XMV with ∂κe (`de`) against `v`'s first
    /// half: the fused solve's last residual pass and κe's contraction in one walk of the row
    /// (each pair of nonzeros read once; a square exponential's `ex2` shared by κe and ∂κe). The
    /// two rows' terms (f32 factors, as the iterations evaluate them) are multiplied and summed in
    /// `A` ([`ResidentReal::add_product`]): f32 in the iterations' [`FusedXmv::row2`], f64 in the
    /// true residual's pass (as [`Xmv::row_f64`], for the same reason: at small q an f32 row sum's
    /// rounding is as large as the residual it checks); the derivative row, a contraction and no
    /// check, in f32.
    ///
    /// # Safety
    /// As [`FusedXmv::row2`].
    #[inline(always)]
    pub(super) unsafe fn row2_d<D: EdgeEval, A: ResidentReal>(&self, de: &D, i: usize, i2: usize, v: *const f32) -> (A, A, f32) {
        // SAFETY: i2 < n2 (caller's contract).
        unsafe { self.range2_d(de, i, *self.g2.rp.add(i2), *self.g2.rp.add(i2 + 1), v) }
    }

    /// [`OnTheFly::row2_d`] over G′'s nonzeros b0..b1 (a row, or a piece of one).
    ///
    /// # Safety
    /// As [`FusedXmv::row2`], b0..b1 within one row of G′.
    #[inline(always)]
    pub(super) unsafe fn range2_d<D: EdgeEval, A: ResidentReal>(&self, de: &D, i: usize, b0: u32, b1: u32, v: *const f32) -> (A, A, f32) {
        let (g1, g2, nzs) = (self.g1, self.g2, self.nzs);
        let n2 = g2.n;
        let v = v as *const Pair;
        // SAFETY: as in `single`, for both vectors (8-byte aligned pairs: the caller's contract).
        unsafe {
            let (a0, a1) = (*g1.rp.add(i), *g1.rp.add(i + 1));
            let (mut s1, mut s2, mut sd) = (A::ZERO, A::ZERO, 0.0f32);
            // u32 counters: 32-bit loop arithmetic; G's row innermost (broadcast loads, as `single`;
            // κe and ∂κe are symmetric)
            for b in b0..b1 {
                let b = b as usize;
                let vcol = v.add(*g2.col.add(b) as usize);
                let eb = self.e.prep(g2.edge.add(b * nzs));
                let db = de.prep(g2.edge.add(b * nzs));
                for a in a0..a1 {
                    let a = a as usize;
                    let w = self.e.eval(eb, g1.edge.add(a * nzs));
                    let dw = de.eval(db, g1.edge.add(a * nzs));
                    let Pair([x, y]) = *vcol.add(*g1.col.add(a) as usize * n2);
                    s1 = A::add_product(s1, w, x);
                    s2 = A::add_product(s2, w, y);
                    sd += dw * x;
                }
            }
            (s1, s2, sd)
        }
    }
}

impl<T: ResidentReal, E: EdgeEval<T>, const SPLIT: bool, const PAIRED: bool> Xmv<T> for OnTheFly<'_, E, SPLIT, T, PAIRED> {
    type At = (usize, usize);
    #[inline(always)]
    unsafe fn row(&self, i: usize, i2: usize, v: *const T) -> T {
        // SAFETY: i2 < n2 (caller's contract).
        unsafe { self.sum(i, *self.g2.rp.add(i2) as usize, *self.g2.rp.add(i2 + 1) as usize, v) }
    }
    #[inline(always)]
    unsafe fn row_f64(&self, i: usize, i2: usize, v: *const T) -> f64 {
        // SAFETY: i2 < n2 (caller's contract).
        unsafe { self.range_f64(i, *self.g2.rp.add(i2), *self.g2.rp.add(i2 + 1), v) }
    }
    #[inline(always)]
    unsafe fn piece_f64(&self, i: usize, pc: usize, v: *const T) -> (usize, f64) {
        // SAFETY: pc < np (caller's contract).
        unsafe {
            let (node, b0, b1) = self.piece_span(pc);
            (node, self.range_f64(i, b0, b1, v))
        }
    }
    #[inline(always)]
    unsafe fn row_at(&self, (i, i2): (usize, usize), v: *const T) -> T {
        // SAFETY: `walk_natural` hands over rows of the pair.
        unsafe { self.row(i, i2, v) }
    }
    #[inline(always)]
    unsafe fn walk<C: Team>(&self, crew: &C, n2: usize, n: usize, body: impl FnMut(usize, (usize, usize))) {
        // SAFETY: forwarded.
        unsafe { walk_natural(crew, n2, n, body) }
    }
    #[inline(always)]
    fn pieces(&self) -> usize {
        if SPLIT { self.g2.np } else { 0 }
    }
    #[inline(always)]
    unsafe fn piece(&self, i: usize, pc: usize, v: *const T) -> (usize, T) {
        // SAFETY: pc < np (caller's contract).
        unsafe {
            let (node, b0, b1) = self.piece_span(pc);
            (node, self.sum(i, b0 as usize, b1 as usize, v))
        }
    }
}

impl<E: EdgeEval, const SPLIT: bool, const PAIRED: bool> FusedXmv for OnTheFly<'_, E, SPLIT, f32, PAIRED> {
    #[inline(always)]
    unsafe fn row2(&self, i: usize, i2: usize, v: *const f32) -> (f32, f32) {
        // SAFETY: the caller's contract; the unused derivative row is dead code.
        let (s1, s2, _) = unsafe { self.row2_d::<_, f32>(&NoDerivative, i, i2, v) };
        (s1, s2)
    }
    #[inline(always)]
    unsafe fn row2_at(&self, (i, i2): (usize, usize), v: *const f32) -> (f32, f32) {
        // SAFETY: `walk_natural` hands over rows of the pair.
        unsafe { self.row2(i, i2, v) }
    }
    #[inline(always)]
    unsafe fn piece2(&self, i: usize, pc: usize, v: *const f32) -> (usize, f32, f32) {
        // SAFETY: pc < np (caller's contract); the unused derivative row is dead code.
        unsafe {
            let (node, b0, b1) = self.piece_span(pc);
            let (s1, s2, _) = self.range2_d::<_, f32>(&NoDerivative, i, b0, b1, v);
            (node, s1, s2)
        }
    }
}
