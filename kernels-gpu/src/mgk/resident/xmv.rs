//! The off-diagonal part of one product row (the XMV) as the solves see it: [`Xmv`], and [`FusedXmv`] for the fused primal and adjoint solve.
use octile_types::Real;
use octile_types::pcg::Team;
/// The off-diagonal part of one product row: Σ_{j,j′} w w′ κe(e_ij, e′_i′j′) v[(j, j′)].
pub(super) trait Xmv<T: Real = f32> {
    /// A row as [`Xmv::walk`] hands it over: (i, i′) for the forms that find a row's nonzeros in
    /// the graphs' CSR, the span of its entries for the product form.
    type At: Copy;
    /// Row (i, i′) against `v`.
    ///
    /// # Safety
    /// i < n1, i2 < n2, `v` holds n1·n2 values.
    unsafe fn row(&self, i: usize, i2: usize, v: *const T) -> T;
    /// [`Xmv::row`] with each term κe·v (κe as the solve's iterations evaluate it) taken and
    /// summed in f64: the true residual's pass. Where the walk rarely stops (q → 0) a row's sum
    /// nearly cancels dg·v, and an f32 sum's rounding was as large as the residual it was to check:
    /// a pair (K18 against a path, q = 0.0098) passed its check at 1e-6 with K 1.0e-5 off, where
    /// its value condition allows 1.2e-6 (`tests/tests/reference.rs`). Summed so, the residual shows
    /// what is left, and the replacement's restart from it refines x. Its cost: BA's call +14 %
    /// (the hubs' long rows walked whole, one term at a time), ChEMBL +0.6 %, the proteins none (H100,
    /// `results/true-residual-h100.md`; a compensated f32 sum of exact products cost as much).
    ///
    /// # Safety
    /// As [`Xmv::row`].
    unsafe fn row_f64(&self, i: usize, i2: usize, v: *const T) -> f64;
    /// The row `walk` handed over as `at`, against `v`: [`Xmv::row`] of that row.
    ///
    /// # Safety
    /// `at` came from [`Xmv::walk`] of this pair; `v` holds n1·n2 values.
    unsafe fn row_at(&self, at: Self::At, v: *const T) -> T;
    /// Pieces of G′'s rows the XMV walks instead of whole rows (0: whole rows).
    fn pieces(&self) -> usize {
        0
    }
    /// Row i of G against piece `pc` of G′: (i′, its share of row (i, i′)).
    ///
    /// # Safety
    /// i < n1, pc < `pieces()`, `v` holds n1·n2 values.
    unsafe fn piece(&self, _i: usize, _pc: usize, _v: *const T) -> (usize, T) {
        (0, T::ZERO)
    }
    /// [`Xmv::piece`] with its terms multiplied and summed in f64 (as [`Xmv::row_f64`]): the true
    /// residual's pass where the iterations walk pieces ([`sums_by_pieces`](super::operator::sums_by_pieces)).
    ///
    /// # Safety
    /// As [`Xmv::piece`].
    unsafe fn piece_f64(&self, _i: usize, _pc: usize, _v: *const T) -> (usize, f64) {
        (0, 0.0)
    }
    /// `body(s, at)` for this thread's share of the n = n1·n2 product rows of the XMV (`s` the
    /// row's place in the vectors, `at` the row for [`Xmv::row_at`]), each row once across the
    /// team: k = i·n′ + i′ = rank, rank + size, … (the natural order, [`walk_natural`], s = k) unless
    /// the form orders its rows itself ([`Product`](super::product::Product)).
    ///
    /// # Safety
    /// Called by the whole team; n2 and n are the pair's.
    unsafe fn walk<C: Team>(&self, crew: &C, n2: usize, n: usize, body: impl FnMut(usize, Self::At));
    /// The place of row k = i·n′ + i′ in the vectors: k, unless the form keeps its vectors in its
    /// own row order ([`Product`](super::product::Product)). The split paths (`pieces() > 0`: the on-the-fly forms alone)
    /// index ap by i·n′ + i′ and rely on the identity.
    ///
    /// # Safety
    /// k < n1·n2.
    #[inline(always)]
    unsafe fn slot(&self, k: usize) -> usize {
        k
    }
}

/// [`Xmv::walk`] in the natural order, each row handed over as (i, i′).
///
/// # Safety
/// Called by the whole team; n2 and n are the pair's.
#[inline(always)]
pub(super) unsafe fn walk_natural<C: Team>(crew: &C, n2: usize, n: usize, mut body: impl FnMut(usize, (usize, usize))) {
    rows!(crew, n2, n, |k, i, i2| {
        body(k, (i, i2));
    });
}

/// The fused primal and adjoint solve's XMV (the gradient entries, f32).
pub(super) trait FusedXmv: Xmv<f32> {
    /// Row (i, i′) against two interleaved vectors at once (the fused primal and adjoint solve:
    /// `v[2c]`, `v[2c + 1]` are entry c of each, one 8-byte load): each product nonzero read, and
    /// κe evaluated, once for both.
    ///
    /// # Safety
    /// As [`Xmv::row`], `v` 8-byte aligned and holding 2·n1·n2 values.
    unsafe fn row2(&self, i: usize, i2: usize, v: *const f32) -> (f32, f32);
    /// [`FusedXmv::row2`] of the row `walk` handed over as `at`.
    ///
    /// # Safety
    /// As [`Xmv::row_at`], `v` as in [`FusedXmv::row2`].
    unsafe fn row2_at(&self, at: Self::At, v: *const f32) -> (f32, f32);
    /// Row i of G against piece `pc` of G′ ([`Xmv::piece`]) against both interleaved vectors:
    /// (i′, its shares of row (i, i′) of each).
    ///
    /// # Safety
    /// As [`Xmv::piece`], `v` as in [`FusedXmv::row2`].
    unsafe fn piece2(&self, _i: usize, _pc: usize, _v: *const f32) -> (usize, f32, f32) {
        (0, 0.0, 0.0)
    }
}
