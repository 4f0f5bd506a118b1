//! The product form's XMV: 16-bit entries in the team's slice.
use super::real::ResidentReal;
use super::xmv::{FusedXmv, Xmv};
use crate::intrinsics::no_unroll;
use octile_types::mgk::resident::{product_entry_byte_offset, product_entry_differs, product_span_parts};
use octile_types::pcg::Team;
use octile_types::real::Pair;
/// The product form (`octile_types::mgk::resident::PRODUCT_COLUMN_BITS`): 16-bit entries in the
/// team's slice, κe = 1 or h. The vectors hold the rows in the XMV's order
/// (`product_row_position`) and the entries' columns are places in that order, so that the XMV
/// reads and writes its own rows' vector values at consecutive places across a warp (words, or f32's
/// row records of 3) and loads no order table; the passes in the natural order find a row's place
/// in `ord` ([`Xmv::slot`]).
#[derive(Clone, Copy)]
pub(super) struct Product<T = f32> {
    pub(super) rp1: *const u32,
    pub(super) rp2: *const u32,
    pub(super) nnz2: usize,
    pub(super) ent: *mut u16,
    /// The place of row k = i·n′ + i′ in the vectors (its position in the XMV's order,
    /// `product_row_position`), n1·n2 of them.
    pub(super) ord: *const u16,
    /// The span of the XMV's s-th row (`product_span`), the row at place s of the vectors.
    pub(super) spans: *const u32,
    pub(super) h: T,
}

impl<T> Product<T> {
    /// First entry and entry count of row (i, i′), the count in u32 (a slice holds fewer than 2³²
    /// entries): 32-bit loop counters in the XMV.
    #[inline(always)]
    pub(super) unsafe fn span(&self, i: usize, i2: usize) -> (usize, u32) {
        // SAFETY: i ≤ n1, i2 ≤ n2 (caller's contract).
        unsafe {
            let (a0, b0) = (*self.rp1.add(i), *self.rp2.add(i2));
            let (d1, d2) = (*self.rp1.add(i + 1) - a0, *self.rp2.add(i2 + 1) - b0);
            ((a0 * self.nnz2 as u32 + d1 * b0) as usize, d1 * d2)
        }
    }
}

impl<T: ResidentReal> Xmv<T> for Product<T> {
    /// (first entry, entry count).
    type At = (usize, u32);
    #[inline(always)]
    unsafe fn row(&self, i: usize, i2: usize, v: *const T) -> T {
        // SAFETY: i < n1, i2 < n2 (caller's contract).
        unsafe { self.row_at(self.span(i, i2), v) }
    }
    #[inline(always)]
    unsafe fn row_f64(&self, i: usize, i2: usize, v: *const T) -> f64 {
        // SAFETY: as in `row_at`, of row (i, i′) (i < n1, i2 < n2: the caller's contract).
        unsafe {
            let (start, len) = self.span(i, i2);
            let (mut same, mut diff) = (0.0f64, 0.0f64);
            walk_entries(self.ent.add(start), len, v, |c, val: T| {
                if product_entry_differs(c) {
                    diff += val.to_f64();
                } else {
                    same += val.to_f64();
                }
            });
            same + self.h.to_f64() * diff
        }
    }
    #[inline(always)]
    unsafe fn row_at(&self, (start, len): (usize, u32), v: *const T) -> T {
        // SAFETY: the row's entries lie in the slice and their columns are < n1·n2 (built by
        // `product_pairs` from host-checked CSR).
        unsafe {
            let (mut same, mut diff) = (T::ZERO, T::ZERO);
            walk_entries(self.ent.add(start), len, v, |c, val: T| T::add_by_entry(c, val, &mut same, &mut diff));
            same + self.h * diff
        }
    }
    #[inline(always)]
    unsafe fn walk<C: Team>(&self, crew: &C, _n2: usize, n: usize, mut body: impl FnMut(usize, (usize, u32))) {
        // rows s = rank, rank + size, … of the order (rows of equally many entries together), each
        // with its span at hand; row s lies at place s of the vectors
        let (size, n) = (crew.size() as u32, n as u32);
        let mut s = crew.rank() as u32;
        while s < n {
            // SAFETY: s < n1·n2, the spans' length (built by `product_pairs`).
            let span = unsafe { *self.spans.add(s as usize) };
            let (start, len) = product_span_parts(span);
            body(s as usize, (start as usize, len));
            s += size;
        }
    }
    #[inline(always)]
    unsafe fn slot(&self, k: usize) -> usize {
        // SAFETY: k < n1·n2, the table's length (built by `product_pairs`).
        unsafe { *self.ord.add(k) as usize }
    }
}

/// Calls `take(entry, v[entry's column])` for the `len` product entries from `e`, in order. The
/// columns are decoded as byte offsets (`product_entry_byte_offset`: one AND per entry). Two
/// entries a step, ptxas's unrolling off ([`no_unroll`]), the odd one after: a product row holds
/// d·d′ entries (MUTAG 4.8 on average), and ptxas unrolled a plain loop 4× with a 2× and a 1×
/// remainder, each a reconvergence region of its own (26.5 loop-control and reconvergence
/// instructions a row and iteration in the XMV's passes, Nsight Compute's source counters). Two a
/// step: 3.5–4.2 % fewer warp instructions on MUTAG and ChEMBL, ChEMBL 0.2435 → 0.2353 s,
/// `--gradient` 0.4159 → 0.4050 s, values bit-identical (H100, `results/counters-h100.md`). Two a
/// step unrolled 4× more (by LLVM, before `-unroll-runtime=false`) ran ChEMBL 3 % slower on an H200.
///
/// # Safety
/// `e..e + len` lie in the slice; every entry's column is within `v` (values of `size_of::<V>()`
/// bytes: 4 or 8).
#[inline(always)]
pub(super) unsafe fn walk_entries<V: Copy>(e: *const u16, len: u32, v: *const V, mut take: impl FnMut(u32, V)) {
    let words = core::mem::size_of::<V>() / 4;
    let base = v as *const u8;
    // SAFETY: the caller's contract.
    unsafe {
        let mut t = 0u32;
        while t + 1 < len {
            no_unroll();
            let (c0, c1) = (*e.add(t as usize) as u32, *e.add(t as usize + 1) as u32);
            let (v0, v1) =
                (*base.add(product_entry_byte_offset(c0, words) as usize).cast::<V>(), *base.add(product_entry_byte_offset(c1, words) as usize).cast::<V>());
            take(c0, v0);
            take(c1, v1);
            t += 2;
        }
        if t < len {
            let c = *e.add(t as usize) as u32;
            take(c, *base.add(product_entry_byte_offset(c, words) as usize).cast::<V>());
        }
    }
}

impl FusedXmv for Product {
    #[inline(always)]
    unsafe fn row2(&self, i: usize, i2: usize, v: *const f32) -> (f32, f32) {
        // SAFETY: as in `row`, for both vectors (8-byte aligned pairs: the caller's contract); the
        // walk sums the differing entries anyway, so the derivative row costs nothing here.
        let (a, b, _) = unsafe { self.row2_d::<f32>(i, i2, v) };
        (a, b)
    }
    #[inline(always)]
    unsafe fn row2_at(&self, at: (usize, u32), v: *const f32) -> (f32, f32) {
        // SAFETY: as in `row2`.
        let (a, b, _) = unsafe { self.row2_d_at::<f32>(at, v) };
        (a, b)
    }
}

impl Product {
    /// [`FusedXmv::row2`] and, beside it, row (i, i′) of the XMV with ∂κe/∂h = 1 − δ against `v`'s
    /// first half (the sum of its entries whose labels differ): the fused solve's last residual
    /// pass and κe's contraction in one walk of the row; summed in `A` (f32 in the iterations, f64
    /// in the true residual's pass, as [`OnTheFly::row2_d`](super::on_the_fly::OnTheFly::row2_d)).
    ///
    /// # Safety
    /// As [`FusedXmv::row2`].
    #[inline(always)]
    pub(super) unsafe fn row2_d<A: ResidentReal>(&self, i: usize, i2: usize, v: *const f32) -> (A, A, A) {
        // SAFETY: i < n1, i2 < n2 (caller's contract).
        unsafe { self.row2_d_at(self.span(i, i2), v) }
    }
    /// [`Product::row2_d`] of the row of span `(start, len)`.
    ///
    /// # Safety
    /// As [`FusedXmv::row2_at`].
    #[inline(always)]
    pub(super) unsafe fn row2_d_at<A: ResidentReal>(&self, (start, len): (usize, u32), v: *const f32) -> (A, A, A) {
        let v = v as *const Pair;
        // SAFETY: as in `row` (the entries lie in the slice, their columns are < n1·n2), for both
        // vectors (8-byte aligned pairs: the caller's contract).
        unsafe {
            let (mut same1, mut diff1, mut same2, mut diff2) = (A::ZERO, A::ZERO, A::ZERO, A::ZERO);
            walk_entries(self.ent.add(start), len, v, |c, Pair([a, b])| {
                A::add_pair_by_entry(c, (A::of_f32(a), A::of_f32(b)), (&mut same1, &mut same2), (&mut diff1, &mut diff2))
            });
            let h = A::of_f32(self.h);
            (same1 + h * diff1, same2 + h * diff2, diff1)
        }
    }
    /// Row (i, i′) of the XMV with ∂κe/∂h = 1 − δ: the sum over the entries whose labels differ.
    ///
    /// # Safety
    /// As [`Xmv::row`].
    #[inline(always)]
    pub(super) unsafe fn row_differing(&self, i: usize, i2: usize, v: *const f32) -> f32 {
        // SAFETY: as in `row`.
        unsafe {
            let (start, len) = self.span(i, i2);
            let mut diff = 0.0f32;
            walk_entries(self.ent.add(start), len, v, |c, val| {
                if product_entry_differs(c) {
                    diff += val;
                }
            });
            diff
        }
    }
}
