//! The resident MGK solver: a team (one warp, or one block) solves one pair with its two graphs
//! and all five CG vectors in shared memory (layout and why: `octile_types::mgk::resident`).
//!
//! Teams are persistent and draw pairs from a global counter, like the tile solver. Per pair:
//! stage both graphs, set up dg = D×V×⁻¹, b = D×·1, run the shared Jacobi-PCG (`octile_types::pcg`) in the
//! set's precision (f32, or f64 for `precision = "f64"`: [`ResidentReal`]) with f64 reductions
//! until the recurrence residual reaches `RECURRENCE_SHARE`·rtol, then compute the true residual
//! b − M·x (products in that precision, f64 sums) and the value Σ pᵢ p′ᵢ′ xᵢᵢ′; if the true residual misses
//! rtol, restart CG from x with it (residual replacement, at most `MAX_REPLACEMENTS` times). The XMV
//!
//! ```text
//!   ap[(i,i')] = dg·p[(i,i')] − Σ_{j ∈ N(i)} Σ_{j' ∈ N'(i')} w_ij w'_i'j' κe(e_ij, e'_i'j') p[(j,j')]
//! ```
//! gives thread t the rows k = t, t + T, … (k = i·n′ + i′); the host sorts each graph's nodes
//! by degree, so the lanes of a warp walk rows of similar length. The product form's XMV takes
//! rows t, t + T, … of its own order instead, the rows grouped by the degrees of i and i′
//! ([`Xmv::walk`], `octile_types::mgk::resident::product_row_position`). Pairs whose slice exceeds
//! shared memory: [`grid`] (a team of blocks, the vectors in global memory).
use crate::intrinsics::{
    FULL_MASK, add_by_bit0_f32, add_by_bit0_f64, add_pair_by_bit0_f32, atomic_add_generic_f32, atomic_add_shared_f32, atomic_add_shared_f64, atomic_add_u32,
    block_dim_x, block_idx_x, lane_id, no_unroll, rcp_approx, rcp_approx_f64, shfl_idx_u32, sync_threads, sync_warp, thread_idx_x, warp_id,
};
use crate::reduce::warp_sum2;
use crate::smem::dynamic_smem;
use octile_types::mgk::gradient::{GradientParams, Hyper, HyperKind, NODE_PASS, Rhs, combined, finish, node_share_kv};
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES, NODE_P, NZ_FEATURES};
use octile_types::mgk::node_table::TABLE_SLOTS;
use octile_types::mgk::resident::{
    GRADIENT_SCRATCH_SLICES, PIECE_NONZEROS, PRODUCT_MAX_ENTRIES, RECURRENCE_SHARE, RESIDENT_BLOCK_HEADER_BYTES, RESIDENT_BLOCK_WARPS, RESIDENT_VECTORS,
    graph_value_offset, graph_words, product_entry, product_entry_byte_offset, product_entry_differs, product_row_position, product_slice_words, product_span,
    product_span_parts, product_vector_offset,
};
use octile_types::pcg::{Operator, PcgParams, PcgVectors, Start, Team, apply_direct, info_of, pcg};
use octile_types::real::{Entry, Pair, fma32, fma64};
use octile_types::{Combine, KernelSpec, PairJob, PairKernel, PairStatus, Real, ResidentGraph, ResidentParams};

/// Rounds of residual replacement after the first CG run: when the true residual misses rtol
/// (f32 rounding made the recurrence drift from b − M·x), CG restarts from x with the true
/// residual, at most this many times.
const MAX_REPLACEMENTS: u32 = 2;

pub mod grid;

/// The precision of a resident solve: f32 (the default, GraphDot's) or f64 (`precision = "f64"`:
/// the same solver, every value and vector in f64, two words each in the layout).
pub trait ResidentReal: Real {
    /// Words of one value in the resident layout (`real_words` of `octile_types::mgk::resident`).
    const WORDS: usize;
    /// Whether the plain solve takes M·p by recurrence (`octile_types::pcg`, `Operator::RECURRENT`):
    /// its vectors then hold z = r / dg in r's place, and r is z·dg again where it is needed. f32
    /// alone: `rcp` is exact to an ulp there (H200: ChEMBL 0.250 → 0.241 s, 16 iterations either
    /// way), while f64's 20-bit `rcp.approx` gives r back only to ~1e-6 and the f64 solve then
    /// needed 43 iterations instead of 29 (its true residual missed rtol 1e-12 and restarted).
    const RECURRENT_PCG: bool;
    /// The Jacobi preconditioner's 1/d: `rcp.approx` (two instructions where division takes
    /// about ten; the same function of d at every use, so still one fixed SPD preconditioner).
    fn rcp(d: Self) -> Self;
    /// 2^x: f32 `ex2.approx` (one MUFU instruction), f64 libm's.
    fn exp2(x: Self) -> Self;
    /// a·b + c rounded once (one FFMA / DFMA where a multiply and an add would be two).
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// `*p += v` in shared memory.
    ///
    /// # Safety
    /// `p` is the generic address of a valid, aligned value in this block's shared memory.
    unsafe fn add_shared(p: *mut Self, v: Self);
    /// `v` added to `differ` where the product-form entry `entry`'s labels differ, else to `same`.
    fn add_by_entry(entry: u32, v: Self, same: &mut Self, differ: &mut Self);
    /// [`ResidentReal::add_by_entry`] of an entry of the fused solve's pair of vectors: each value
    /// to its own `same` or `differ`, one flag test for both where the precision has it.
    fn add_pair_by_entry(entry: u32, v: (Self, Self), same: (&mut Self, &mut Self), differ: (&mut Self, &mut Self));
    /// An f32 value in this precision (exact).
    fn of_f32(v: f32) -> Self;
    /// `acc + a·b` of two f32 factors: f32 as the iterations sum (a multiply, then an add); f64 with
    /// the product exact (24-bit significands: 48 bits fit f64's 53), so one DFMA rounds as the
    /// add alone would.
    fn add_product(acc: Self, a: f32, b: f32) -> Self;
}

impl ResidentReal for f32 {
    const WORDS: usize = 1;
    const RECURRENT_PCG: bool = true;
    #[inline(always)]
    fn rcp(d: f32) -> f32 {
        rcp_approx(d)
    }
    #[inline(always)]
    fn exp2(x: f32) -> f32 {
        ex2(x)
    }
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        fma32(a, b, c)
    }
    #[inline(always)]
    unsafe fn add_shared(p: *mut f32, v: f32) {
        // SAFETY: forwarded.
        unsafe { atomic_add_shared_f32(p, v) }
    }
    #[inline(always)]
    fn add_by_entry(entry: u32, v: f32, same: &mut f32, differ: &mut f32) {
        // the flag is bit 0 (`product_entry`)
        add_by_bit0_f32(entry, v, differ, same)
    }
    #[inline(always)]
    fn add_pair_by_entry(entry: u32, v: (f32, f32), same: (&mut f32, &mut f32), differ: (&mut f32, &mut f32)) {
        add_pair_by_bit0_f32(entry, v, differ, same)
    }
    #[inline(always)]
    fn of_f32(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn add_product(acc: f32, a: f32, b: f32) -> f32 {
        acc + a * b
    }
}

impl ResidentReal for f64 {
    const WORDS: usize = 2;
    const RECURRENT_PCG: bool = false;
    #[inline(always)]
    fn rcp(d: f64) -> f64 {
        rcp_approx_f64(d)
    }
    #[inline(always)]
    fn exp2(x: f64) -> f64 {
        libm::exp2(x)
    }
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        fma64(a, b, c)
    }
    #[inline(always)]
    unsafe fn add_shared(p: *mut f64, v: f64) {
        // SAFETY: forwarded.
        unsafe { atomic_add_shared_f64(p, v) }
    }
    #[inline(always)]
    fn add_by_entry(entry: u32, v: f64, same: &mut f64, differ: &mut f64) {
        // the flag is bit 0 (`product_entry`)
        add_by_bit0_f64(entry, v, differ, same)
    }
    #[inline(always)]
    fn add_pair_by_entry(entry: u32, (v0, v1): (f64, f64), (same0, same1): (&mut f64, &mut f64), (differ0, differ1): (&mut f64, &mut f64)) {
        add_by_bit0_f64(entry, v0, differ0, same0);
        add_by_bit0_f64(entry, v1, differ1, same1);
    }
    #[inline(always)]
    fn of_f32(v: f32) -> f64 {
        v as f64
    }
    #[inline(always)]
    fn add_product(acc: f64, a: f32, b: f32) -> f64 {
        fma64(a as f64, b as f64, acc)
    }
}

/// A resident team (one warp, or one block): the PCG's [`Team`] with its shared-memory slice and
/// job drawing.
trait ResidentTeam: Team {
    /// Whether the team kind walks G′'s long rows in pieces where a launch asks for it (block teams;
    /// warp teams never do, and their entries compile no split path).
    const SPLITS: bool = false;
    /// The team's shared-memory slice.
    fn slice(&self) -> *mut u32;
    /// The team's index in the grid (warp teams: block · warps per block + warp; block teams: the
    /// block).
    fn index(&self) -> usize;
    /// The next job index (`*counter` post-incremented once per team), the same in every thread.
    ///
    /// # Safety
    /// Every thread of the team must call it; `counter` is a valid global u32.
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32;
}

/// One warp per pair; the warps of a block own consecutive slices of the dynamic shared memory.
struct WarpTeam {
    lane: usize,
    slice: *mut u32,
}

impl Team for WarpTeam {
    const INDEX32: bool = true;
    #[inline(always)]
    fn rank(&self) -> usize {
        self.lane
    }
    #[inline(always)]
    fn size(&self) -> usize {
        32
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: every lane reaches it (caller's contract).
        unsafe { sync_warp(FULL_MASK) }
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: every lane calls it; the barrier also orders the lanes' shared-memory writes
        // before the reads that follow the reduction.
        unsafe {
            sync_warp(FULL_MASK);
            warp_sum2(a, b)
        }
    }
}

impl ResidentTeam for WarpTeam {
    #[inline(always)]
    fn slice(&self) -> *mut u32 {
        self.slice
    }
    #[inline(always)]
    fn index(&self) -> usize {
        block_idx_x() as usize * (block_dim_x() as usize / 32) + warp_id() as usize
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: lane 0 alone increments the valid counter; every lane takes part in the shuffle.
        unsafe {
            let v = if self.lane == 0 { atomic_add_u32(counter, 1) } else { 0 };
            shfl_idx_u32(FULL_MASK, v, 0)
        }
    }
}

/// One block per pair (a multiple of 32 threads, at most `RESIDENT_BLOCK_THREADS`); reductions go
/// through the header of the dynamic shared memory.
struct BlockSliceTeam {
    tid: usize,
    size: usize,
    slots: *mut f64,
    slice: *mut u32,
}

impl Team for BlockSliceTeam {
    const INDEX32: bool = true;
    #[inline(always)]
    fn rank(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn size(&self) -> usize {
        self.size
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: every thread reaches it (caller's contract).
        unsafe { sync_threads() }
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: every thread calls it; slots 2w, 2w + 1 (w < RESIDENT_BLOCK_WARPS) lie in the header.
        unsafe {
            let (a, b) = warp_sum2(a, b);
            if lane_id() == 0 {
                let w = warp_id() as usize;
                *self.slots.add(2 * w) = a;
                *self.slots.add(2 * w + 1) = b;
            }
            sync_threads();
            let (mut sa, mut sb) = (0.0, 0.0);
            for w in 0..self.size / 32 {
                sa += *self.slots.add(2 * w);
                sb += *self.slots.add(2 * w + 1);
            }
            sync_threads();
            (sa, sb)
        }
    }
}

impl ResidentTeam for BlockSliceTeam {
    const SPLITS: bool = true;
    #[inline(always)]
    fn slice(&self) -> *mut u32 {
        self.slice
    }
    #[inline(always)]
    fn index(&self) -> usize {
        block_idx_x() as usize
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: the broadcast slot follows the 2·WARPS f64 partials inside the header.
        unsafe {
            let slot = self.slots.add(2 * RESIDENT_BLOCK_WARPS as usize) as *mut u32;
            if self.tid == 0 {
                *slot = atomic_add_u32(counter, 1);
            }
            sync_threads();
            let v = *slot;
            sync_threads();
            v
        }
    }
}

/// κe times both weights, for two nonzero rows `[w, features…]`; `A` is what the outer loop
/// keeps of its row.
trait EdgeEval<T = f32> {
    type A: Copy;
    /// What the outer loop keeps of nonzero row `a`.
    unsafe fn prep(&self, a: *const T) -> Self::A;
    /// w · w′ · κe(a, b).
    unsafe fn eval(&self, a: Self::A, b: *const T) -> T;
    /// The prepared row's weight (`a` from [`EdgeEval::prep`]).
    ///
    /// # Safety
    /// `a` was prepared from a nonzero row that is still valid.
    unsafe fn weight(&self, a: Self::A) -> T;
    /// κe(a, b) times the other row's (`b`'s) weight alone: the XMV's inner loop sums these and
    /// multiplies the sum by the prepared row's [`EdgeEval::weight`] once.
    unsafe fn inner(&self, a: Self::A, b: *const T) -> T;
}

/// `ex2.approx.ftz.f32` (one MUFU instruction).
#[inline(always)]
fn ex2(x: f32) -> f32 {
    let r: f32;
    // SAFETY: a pure arithmetic instruction.
    unsafe { core::arch::asm!("ex2.approx.ftz.f32 {r}, {a};", r = out(reg32) r, a = in(reg32) x, options(pure, nomem, nostack, preserves_flags)) };
    r
}

/// Any κe — or ∂κe for the gradients' contractions: the [`KernelSpec`] interpreter.
struct General<'a, K = KernelSpec> {
    spec: &'a K,
    features: usize,
}
impl<T: Real, K: PairKernel> EdgeEval<T> for General<'_, K> {
    type A = *const T;
    #[inline(always)]
    unsafe fn prep(&self, a: *const T) -> *const T {
        a
    }
    #[inline(always)]
    unsafe fn eval(&self, a: *const T, b: *const T) -> T {
        // SAFETY: both rows hold 1 + features values (caller's contract).
        unsafe {
            let fa = core::slice::from_raw_parts(a.add(NZ_FEATURES), self.features);
            let fb = core::slice::from_raw_parts(b.add(NZ_FEATURES), self.features);
            *a * *b * self.spec.eval::<T>(fa, fb)
        }
    }
    #[inline(always)]
    unsafe fn weight(&self, a: *const T) -> T {
        // SAFETY: a valid nonzero row holds its weight first (the caller's contract).
        unsafe { *a }
    }
    #[inline(always)]
    unsafe fn inner(&self, a: *const T, b: *const T) -> T {
        // SAFETY: both rows hold 1 + features values (caller's contract).
        unsafe {
            let fa = core::slice::from_raw_parts(a.add(NZ_FEATURES), self.features);
            let fb = core::slice::from_raw_parts(b.add(NZ_FEATURES), self.features);
            *b * self.spec.eval::<T>(fa, fb)
        }
    }
}

/// (weight, feature f) of a nonzero row.
///
/// # Safety
/// The row holds the feature (host-checked).
#[inline(always)]
unsafe fn weight_and<T: Copy>(row: *const T, f: usize) -> (T, T) {
    // SAFETY: caller's contract.
    unsafe { (*row, *row.add(NZ_FEATURES + f)) }
}

/// One base-kernel term `k(a, b)` on edge feature `f` (the specialized shapes: square exponential,
/// Kronecker delta), times both weights.
struct OneTerm<K> {
    f: usize,
    k: K,
}
impl<T: Real, K: Fn(T, T) -> T> EdgeEval<T> for OneTerm<K> {
    type A = (T, T);
    #[inline(always)]
    unsafe fn prep(&self, a: *const T) -> (T, T) {
        // SAFETY: forwarded.
        unsafe { weight_and(a, self.f) }
    }
    #[inline(always)]
    unsafe fn eval(&self, (w, l): (T, T), b: *const T) -> T {
        // SAFETY: forwarded.
        let (wb, lb) = unsafe { weight_and(b, self.f) };
        w * wb * (self.k)(l, lb)
    }
    #[inline(always)]
    unsafe fn weight(&self, (w, _): (T, T)) -> T {
        w
    }
    #[inline(always)]
    unsafe fn inner(&self, (_, l): (T, T), b: *const T) -> T {
        // SAFETY: forwarded.
        let (wb, lb) = unsafe { weight_and(b, self.f) };
        wb * (self.k)(l, lb)
    }
}

/// ∂κe ≡ 0: [`OnTheFly::row2_d`] without a derivative row (its sum is dead code, removed).
struct NoDerivative;
impl EdgeEval for NoDerivative {
    type A = ();
    #[inline(always)]
    unsafe fn prep(&self, _a: *const f32) {}
    #[inline(always)]
    unsafe fn eval(&self, _a: (), _b: *const f32) -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn weight(&self, _a: ()) -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn inner(&self, _a: (), _b: *const f32) -> f32 {
        0.0
    }
}

/// A graph staged in the team's slice.
struct View<T = f32> {
    n: usize,
    rp: *const u32,
    col: *const u32,
    edge: *const T,
    node: *const T,
    /// `np` pieces (`octile_types::mgk::resident::PIECE_NONZEROS`).
    pieces: *const u32,
    np: usize,
}

impl<T> Clone for View<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<T> {}

impl<T: ResidentReal> View<T> {
    /// The views of graph `d`'s run of `graph_words` words at `s` (8-byte aligned for f64).
    #[inline(always)]
    unsafe fn at(s: *const u32, d: &ResidentGraph, nz_stride: usize, node_stride: usize) -> View<T> {
        let (n, nnz) = (d.n_nodes as usize, d.nnz as usize);
        // SAFETY: the run is graph_words(n, nnz, .., n_pieces, T::WORDS) words long (caller's contract).
        unsafe {
            let col = s.add(n + 1);
            let edge = s.add(graph_value_offset(n, nnz, T::WORDS)) as *const T;
            let node = edge.add(nnz * nz_stride);
            View { n, rp: s, col, edge, node, pieces: node.add(n * node_stride) as *const u32, np: d.n_pieces as usize }
        }
    }
}

impl<T> View<T> {
    /// Node row i: `[d, p, features…]`.
    #[inline(always)]
    unsafe fn node<'a>(&self, i: usize, stride: usize) -> &'a [T] {
        // SAFETY: i < n.
        unsafe { core::slice::from_raw_parts(self.node.add(i * stride), stride) }
    }
}

/// Walks this thread's rows k = rank, rank + size, … < n1·n2 with their (i, i′).
macro_rules! rows {
    ($crew:expr, $n2:expr, $n:expr, |$k:ident, $i:ident, $i2:ident| $body:block) => {{
        // u32 counters (n1·n2 < 2³² for every resident pair): 32-bit loop arithmetic
        let (size, n2, n) = ($crew.size() as u32, $n2 as u32, $n as u32);
        let (step_i, step_i2) = (size / n2, size % n2);
        let mut k = $crew.rank() as u32;
        let mut i = k / n2;
        let mut i2 = k % n2;
        while k < n {
            #[allow(unused_variables)]
            let ($k, $i, $i2) = (k as usize, i as usize, i2 as usize);
            $body
            k += size;
            i += step_i;
            i2 += step_i2;
            if i2 >= n2 {
                i2 -= n2;
                i += 1;
            }
        }
    }};
}

/// The off-diagonal part of one product row: Σ_{j,j′} w w′ κe(e_ij, e′_i′j′) v[(j, j′)].
trait Xmv<T: Real = f32> {
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
    /// residual's pass where the iterations walk pieces ([`sums_by_pieces`]).
    ///
    /// # Safety
    /// As [`Xmv::piece`].
    unsafe fn piece_f64(&self, _i: usize, _pc: usize, _v: *const T) -> (usize, f64) {
        (0, 0.0)
    }
    /// `body(s, at)` for this thread's share of the n = n1·n2 product rows of the XMV (`s` the
    /// row's place in the vectors, `at` the row for [`Xmv::row_at`]), each row once across the
    /// team: k = i·n′ + i′ = rank, rank + size, … (the natural order, [`walk_natural`], s = k) unless
    /// the form orders its rows itself ([`Product`]).
    ///
    /// # Safety
    /// Called by the whole team; n2 and n are the pair's.
    unsafe fn walk<C: Team>(&self, crew: &C, n2: usize, n: usize, body: impl FnMut(usize, Self::At));
    /// The place of row k = i·n′ + i′ in the vectors: k, unless the form keeps its vectors in its
    /// own row order ([`Product`]). The split paths (`pieces() > 0`: the on-the-fly forms alone)
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
unsafe fn walk_natural<C: Team>(crew: &C, n2: usize, n: usize, mut body: impl FnMut(usize, (usize, usize))) {
    rows!(crew, n2, n, |k, i, i2| {
        body(k, (i, i2));
    });
}

/// The fused primal and adjoint solve's XMV (the gradient entries, f32).
trait FusedXmv: Xmv<f32> {
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

/// κe evaluated on the fly from the two graphs' CSR; `PAIRED`: two of G′'s nonzeros per walk of
/// G's row ([`OnTheFly::paired`]: the shared-memory solver entries), else [`OnTheFly::single`] (the
/// grid and gradient entries).
struct OnTheFly<'a, E, const SPLIT: bool, T = f32, const PAIRED: bool = true> {
    e: &'a E,
    g1: &'a View<T>,
    g2: &'a View<T>,
    nzs: usize,
}

impl<T: ResidentReal, E: EdgeEval<T>, const SPLIT: bool, const PAIRED: bool> OnTheFly<'_, E, SPLIT, T, PAIRED> {
    /// Σ over G's nonzeros of row i and G′'s nonzeros b0..b1: G′'s nonzeros two per walk of G's
    /// row ([`OnTheFly::paired`]) where `PAIRED`, else one loop over the d·d′ pairs
    /// ([`OnTheFly::single`]).
    #[inline(always)]
    unsafe fn sum(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
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
    unsafe fn paired(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
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
    unsafe fn single(&self, i: usize, b0: usize, b1: usize, v: *const T) -> T {
        let (g1, g2, nzs) = (self.g1, self.g2, self.nzs);
        let n2 = g2.n;
        // SAFETY: as in `paired`.
        unsafe {
            let (a0, a1) = (*g1.rp.add(i), *g1.rp.add(i + 1));
            // u32 counters: 32-bit loop arithmetic
            let (b0, b1) = (b0 as u32, b1 as u32);
            let mut acc = T::ZERO;
            if a0 == a1 || b0 == b1 {
                return acc;
            }
            let (mut a, mut b) = (a0, b0);
            let n2 = n2 as u32;
            let mut vcol = v.add(*g2.col.add(b as usize) as usize);
            let mut eb = self.e.prep(g2.edge.add(b as usize * nzs));
            loop {
                acc += self.e.eval(eb, g1.edge.add(a as usize * nzs)) * *vcol.add((*g1.col.add(a as usize) * n2) as usize);
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
    /// [`Xmv::row_f64`] over G′'s nonzeros b0..b1 (a row, or a piece of one).
    ///
    /// # Safety
    /// i < n1, b0..b1 within one row of G′, `v` holds n1·n2 values.
    #[inline(always)]
    unsafe fn range_f64(&self, i: usize, b0: u32, b1: u32, v: *const T) -> f64 {
        let (g1, g2, nzs) = (self.g1, self.g2, self.nzs);
        // SAFETY: i < n1, b0..b1 within one row of G′ (caller's contract); CSR entries of a staged
        // graph are in range (host-built). One loop over the d·d′ terms, G's row innermost, as `single` (the grid
        // entries' 80 registers spilled with a loop in a loop here).
        unsafe {
            let (a0, a1) = (*g1.rp.add(i), *g1.rp.add(i + 1));
            let mut b = b0;
            let mut acc = 0.0f64;
            if a0 == a1 || b == b1 {
                return acc;
            }
            let n2 = g2.n as u32;
            let mut a = a0;
            let mut vcol = v.add(*g2.col.add(b as usize) as usize);
            let mut eb = self.e.prep(g2.edge.add(b as usize * nzs));
            loop {
                // one DFMA: for f32 factors the product is exact in f64 and it rounds as the add
                // would; for f64 factors once instead of twice
                acc = fma64(self.e.eval(eb, g1.edge.add(a as usize * nzs)).to_f64(), (*vcol.add((*g1.col.add(a as usize) * n2) as usize)).to_f64(), acc);
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
    unsafe fn piece_span(&self, pc: usize) -> (usize, u32, u32) {
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
    unsafe fn row2_d<D: EdgeEval, A: ResidentReal>(&self, de: &D, i: usize, i2: usize, v: *const f32) -> (A, A, f32) {
        // SAFETY: i2 < n2 (caller's contract).
        unsafe { self.range2_d(de, i, *self.g2.rp.add(i2), *self.g2.rp.add(i2 + 1), v) }
    }

    /// [`OnTheFly::row2_d`] over G′'s nonzeros b0..b1 (a row, or a piece of one).
    ///
    /// # Safety
    /// As [`FusedXmv::row2`], b0..b1 within one row of G′.
    #[inline(always)]
    unsafe fn range2_d<D: EdgeEval, A: ResidentReal>(&self, de: &D, i: usize, b0: u32, b1: u32, v: *const f32) -> (A, A, f32) {
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

/// The product form (`octile_types::mgk::resident::PRODUCT_COLUMN_BITS`): 16-bit entries in the
/// team's slice, κe = 1 or h. The vectors hold the rows in the XMV's order
/// (`product_row_position`) and the entries' columns are places in that order, so that the XMV
/// reads and writes its own rows' vector values at consecutive places across a warp (words, or f32's
/// row records of 3) and loads no order table; the passes in the natural order find a row's place
/// in `ord` ([`Xmv::slot`]).
#[derive(Clone, Copy)]
struct Product<T = f32> {
    rp1: *const u32,
    rp2: *const u32,
    nnz2: usize,
    ent: *mut u16,
    /// The place of row k = i·n′ + i′ in the vectors (its position in the XMV's order,
    /// `product_row_position`), n1·n2 of them.
    ord: *const u16,
    /// The span of the XMV's s-th row (`product_span`), the row at place s of the vectors.
    spans: *const u32,
    h: T,
}

impl<T> Product<T> {
    /// First entry and entry count of row (i, i′), the count in u32 (a slice holds fewer than 2³²
    /// entries): 32-bit loop counters in the XMV.
    #[inline(always)]
    unsafe fn span(&self, i: usize, i2: usize) -> (usize, u32) {
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
unsafe fn walk_entries<V: Copy>(e: *const u16, len: u32, v: *const V, mut take: impl FnMut(u32, V)) {
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
    /// in the true residual's pass, as [`OnTheFly::row2_d`]).
    ///
    /// # Safety
    /// As [`FusedXmv::row2`].
    #[inline(always)]
    unsafe fn row2_d<A: ResidentReal>(&self, i: usize, i2: usize, v: *const f32) -> (A, A, A) {
        // SAFETY: i < n1, i2 < n2 (caller's contract).
        unsafe { self.row2_d_at(self.span(i, i2), v) }
    }
    /// [`Product::row2_d`] of the row of span `(start, len)`.
    ///
    /// # Safety
    /// As [`FusedXmv::row2_at`].
    #[inline(always)]
    unsafe fn row2_d_at<A: ResidentReal>(&self, (start, len): (usize, u32), v: *const f32) -> (A, A, A) {
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
    unsafe fn row_differing(&self, i: usize, i2: usize, v: *const f32) -> f32 {
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

/// The Jacobi preconditioner z = r / dg of every resident solve, with the reciprocal approximated
/// ([`ResidentReal::rcp`]: two instructions where division takes about ten): the same function of
/// dg at every use, so still one fixed SPD preconditioner for the PCG.
#[inline(always)]
fn jacobi<T: ResidentReal>(r: T, d: T) -> T {
    r * T::rcp(d)
}

/// M·p of one staged pair for the shared PCG: dg·p minus the XMV, by rows or, where G′ has long
/// rows, by (row of G, piece of G′) with the shares added to ap. `S`: p's, ap's and dg's entries
/// apart (1), or the product form's row records `[p ap dg]` (3: `solve_pair`).
struct ResidentOperator<'a, X, T = f32, const S: usize = 1> {
    xmv: &'a X,
    dg: *const T,
    n1: usize,
    n2: usize,
}

impl<T: ResidentReal, X: Xmv<T>, const S: usize> ResidentOperator<'_, X, T, S> {
    /// The product by (row of G, piece of G′) ([`by_pieces`]): ap = `diag(k)` for every row,
    /// then each piece's share of the XMV against `v` subtracted; returns this thread's share of
    /// p·ap.
    ///
    /// # Safety
    /// Called by the whole team; `v`, `p` and `ap` hold the pair's n1·n2 values in the slice.
    #[inline(always)]
    unsafe fn pieces<C: Team>(&self, crew: &mut C, v: *const T, p: *const T, ap: *mut T, diag: impl Fn(usize) -> T) -> f64 {
        let (xmv, n1, n2) = (self.xmv, self.n1, self.n2);
        // SAFETY: forwarded; every (i, piece) share lands in row i·n2 + i′ < n1·n2.
        unsafe {
            by_pieces(
                crew,
                (n1 * n2, n1, xmv.pieces()),
                p,
                ap,
                diag,
                |i, pc| {
                    let (i2, share) = xmv.piece(i, pc, v);
                    T::add_shared(ap.add(i * n2 + i2), -share);
                },
                |a: T, b: T| a.to_f64() * b.to_f64(),
            )
        }
    }
}

impl<T: ResidentReal, C: ResidentTeam, X: Xmv<T>, const S: usize> Operator<T, C> for ResidentOperator<'_, X, T, S> {
    const STRIDE: usize = S;
    #[inline(always)]
    unsafe fn apply(&mut self, crew: &mut C, p: *const T, ap: *mut T) -> f64 {
        let (xmv, dg, n1, n2) = (self.xmv, self.dg, self.n1, self.n2);
        let n = n1 * n2;
        let mut pap = 0.0f64;
        if S != 1 {
            // never taken: an operator of row records is recurrent (`RECURRENT`), and the PCG then
            // calls `apply_recurrent` alone (were it taken: a NaN p·ap, which the PCG reports as a
            // breakdown)
            return f64::NAN;
        }
        // SAFETY: the whole team calls it (the PCG's contract); p, ap and dg hold n1·n2 values
        // in the slice; every index below is < n.
        unsafe {
            if xmv.pieces() > 0 {
                // G′ has long rows: one (row of G, piece of G′) per thread, shares added to ap
                pap = self.pieces(crew, p, p, ap, |k| *dg.add(k) * *p.add(k));
            } else {
                xmv.walk(crew, n2, n, |k, at| {
                    let pk = *p.add(k);
                    let val = *dg.add(k) * pk - xmv.row_at(at, p);
                    *ap.add(k) = val;
                    // one DFMA: for f32 the value of a multiply and an add (the widened product is
                    // exact); for f64, p·ap rounded once a term instead of twice
                    pap = fma64(pk.to_f64(), val.to_f64(), pap);
                });
            }
        }
        pap
    }
    #[inline(always)]
    unsafe fn precondition(&self, r: T, idx: usize, diag: *const T) -> T {
        // SAFETY: idx < n (the PCG's contract).
        jacobi(r, unsafe { *diag.add(idx * S) })
    }
    /// M·p by recurrence where the precision allows ([`ResidentReal::RECURRENT_PCG`]): the
    /// product walks z, and each row's p and ap are updated where its product is taken (one pass
    /// and no barrier for p = z + βp; `octile_types::pcg`), and with row records ([`recurrent`]).
    const RECURRENT: bool = recurrent::<T, S>();
    #[inline(always)]
    unsafe fn apply_recurrent(&mut self, crew: &mut C, z: *const T, p: *mut T, ap: *mut T, beta: T, _len: usize) -> f64 {
        let (xmv, dg, n1, n2) = (self.xmv, self.dg, self.n1, self.n2);
        let n = n1 * n2;
        let mut pap = 0.0f64;
        // SAFETY: the whole team calls it (the PCG's contract); z, p, ap and dg hold n1·n2 values
        // in the slice (p's, ap's and dg's S apart); every index below is < n. Each row's p and ap are read and written here
        // by the one thread that walks it; the other threads' accesses to them (the PCG's update
        // pass, `start_row`'s writes in the natural order) are ordered by the team sums between
        // the passes (a sum is also a barrier), and by pieces by by_pieces' own barriers.
        unsafe {
            if S == 1 && xmv.pieces() > 0 {
                pap = self.pieces(crew, z, p, ap, |k| {
                    let zk = *z.add(k);
                    *p.add(k) = T::fma(beta, *p.add(k), zk);
                    T::fma(beta, *ap.add(k), *dg.add(k) * zk)
                });
            } else {
                xmv.walk(crew, n2, n, |k, at| {
                    let zk = *z.add(k);
                    let pk = T::fma(beta, *p.add(k * S), zk);
                    let val = T::fma(beta, *ap.add(k * S), *dg.add(k * S) * zk - xmv.row_at(at, z));
                    *p.add(k * S) = pk;
                    *ap.add(k * S) = val;
                    pap = fma64(pk.to_f64(), val.to_f64(), pap);
                });
            }
        }
        pap
    }
}

/// M·p by (row of G, piece of G′), for operators whose second graph has long rows (split rows):
/// ap = dg·p (`diag(k)`), a barrier, each thread's (row i, piece pc) subtracting its shares from ap
/// with atomics (`take(i, pc)`), a barrier, and this thread's share of p·ap (`dot`).
///
/// # Safety
/// Called by the whole team; p and ap hold n = `sizes.0` entries; `take` touches ap atomically only.
#[inline(always)]
unsafe fn by_pieces<V: Copy, C: Team>(
    crew: &mut C,
    (n, n1, np): (usize, usize, usize),
    p: *const V,
    ap: *mut V,
    diag: impl Fn(usize) -> V,
    take: impl Fn(usize, usize),
    dot: impl Fn(V, V) -> f64,
) -> f64 {
    // SAFETY: every index below is < n (caller's contract); the barriers order the passes.
    unsafe {
        let mut k = crew.rank();
        while k < n {
            *ap.add(k) = diag(k);
            k += crew.size();
        }
        crew.barrier();
        each_piece(crew, n1, np, take);
        crew.barrier();
        let (mut pap, mut k) = (0.0f64, crew.rank());
        while k < n {
            pap += dot(*p.add(k), *ap.add(k));
            k += crew.size();
        }
        pap
    }
}

/// `take(i, pc)` for this thread's share of the (row i of G, piece pc of G′) pairs: rank, rank +
/// size, … of the n1 · np.
#[inline(always)]
fn each_piece<C: Team>(crew: &C, n1: usize, np: usize, mut take: impl FnMut(usize, usize)) {
    let mut vk = crew.rank();
    while vk < n1 * np {
        let i = vk / np;
        take(i, vk - i * np);
        vk += crew.size();
    }
}

/// The true residual's XMV rows where the iterations walk G′'s long rows in pieces (split
/// launches): `sums[k]` = 0 for every row, a barrier, each thread's (row i of G, piece pc of G′)
/// summed in f64 (`share(i, pc)`: (i′, the piece's W sums, a term of this thread's sum that
/// `sums_by_pieces` returns)) and added to row (i, i′)'s with shared-memory f64 atomics, a barrier. Walked whole, a row of a hub of G′ kept the team waiting on
/// the one thread that walked it (BA's call +14 % when the true residual's sums went from f32 to
/// f64, `results/true-residual-h100.md`).
///
/// ```text
///   sums: n × [f64; W], from the first 8-byte boundary of r's room (plain, W = 1: r and p's
///         2·N f32, or r's N f64) or of the fused solve's r and p (W = 2: 4·N f32, contiguous in
///         both of its layouts) — vectors a restart rewrites anyway
/// ```
///
/// # Safety
/// Called by the whole team; `sums` holds n = `sizes.0` entries, 8-byte aligned, in this block's
/// shared memory, and nothing else of the solve lives there until a restart rewrites it; each
/// share's row i·n2 + i′ < n.
#[inline(always)]
unsafe fn sums_by_pieces<const W: usize, C: Team>(
    crew: &mut C,
    (n, n1, np, n2): (usize, usize, usize, usize),
    sums: *mut [f64; W],
    share: impl Fn(usize, usize) -> (usize, [f64; W], f64),
) -> f64 {
    // SAFETY: every index below is < n (caller's contract); the barriers order the passes.
    unsafe {
        let mut total = 0.0f64;
        let mut k = crew.rank();
        while k < n {
            *sums.add(k) = [0.0; W];
            k += crew.size();
        }
        crew.barrier();
        each_piece(crew, n1, np, |i, pc| {
            let (i2, part, term) = share(i, pc);
            let row = sums.add(i * n2 + i2) as *mut f64;
            for (w, v) in part.iter().enumerate() {
                atomic_add_shared_f64(row.add(w), *v);
            }
            total += term;
        });
        crew.barrier();
        total
    }
}

/// Where [`sums_by_pieces`] keeps its sums: `room`'s first 8-byte boundary.
#[inline(always)]
fn sums_at<T, const W: usize>(room: *mut T) -> *mut [f64; W] {
    room.cast::<u8>().wrapping_add(room as usize & 4).cast()
}

/// Whether a resident solve in precision T with p's, ap's and dg's entries `S` apart takes M·p by
/// recurrence: where the precision allows ([`ResidentReal::RECURRENT_PCG`]), and with row records
/// (S ≠ 1) always, since the direct form's XMV reads p at other rows, which the entries address
/// apart ([`ResidentOperator`]'s `RECURRENT`, [`start_row`]).
#[inline(always)]
const fn recurrent<T: ResidentReal, const S: usize>() -> bool {
    T::RECURRENT_PCG || S != 1
}

/// Entry k of a prepared PCG start ([`Start::Prepared`]) from residual `r0` and z = `z0`: r = r0 and
/// p = z for the direct form; z in r's place and p = ap = 0 for the recurrent one ([`recurrent`]).
///
/// `S`: p's and ap's entries apart (1) or in row records (`solve_pair`).
///
/// # Safety
/// k < n: r holds n values, p and ap n at S apart.
#[inline(always)]
unsafe fn start_row<T: ResidentReal, const S: usize>(r: *mut T, p: *mut T, ap: *mut T, k: usize, r0: T, z0: T) {
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
unsafe fn solve_pair<T: ResidentReal, C: ResidentTeam, X: Xmv<T>, const S: usize>(
    crew: &mut C,
    prm: &ResidentParams,
    xmv: &X,
    g1: &View<T>,
    g2: &View<T>,
    v: *mut T,
) -> PairStatus {
    // the primal system (the gradient entries solve the adjoint fused with it: solve_pair_fused)
    let (bs, vs) = (Rhs::Primal.node_slot(), Rhs::Primal.value_slot());
    let (n1, n2) = (g1.n, g2.n);
    let n = n1 * n2;
    let ns = prm.node_stride as usize;
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
                    let dd = a1[NODE_D].to_f64() * a2[NODE_D].to_f64();
                    let b = a1[bs].to_f64() * a2[bs].to_f64();
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

/// M·p for the fused primal and adjoint system diag(M, M) of 2N unknowns (`solve_pair_fused`),
/// the two halves interleaved (entry k the pair [primal, adjoint]): one [`Xmv::row2`] per product
/// row serves both, one 8-byte load per product nonzero; the PCG's vector updates move both halves
/// of an entry with one 8-byte access and one diagonal value. `RECURRENT`: M·p by recurrence
/// ([`Operator::RECURRENT`]), which the product-form entries take where all the fused vectors lie
/// in the team's slice (`Room::FusedInSlice`: molecules). Direct elsewhere: where x and ap lie
/// beside the slice in global scratch the recurrence reads ap once more per entry and iteration,
/// and in the on-the-fly entries its second copy of the solve cost registers (H100,
/// `results/product-row-order-h100.md`: ChEMBL's gradient 0.423 → 0.415 s by recurrence; BA's
/// 0.209 → 0.222 s with every entry recurrent, 0.207 → 0.214 s with the on-the-fly entries
/// recurrent in the slice alone, where BA never is).
struct FusedOperator<'a, X, const RECURRENT: bool> {
    xmv: &'a X,
    dg: *const f32,
    n1: usize,
    n2: usize,
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
    /// ([`ResidentOperator::apply_recurrent`]): the product walks z (in r's place), and each row's
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
unsafe fn start_pair<const RECURRENT: bool>(r: *mut Pair, p: *mut Pair, ap: *mut Pair, k: usize, r0: Pair, z0: Pair) {
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
struct FusedVectors {
    dg: *mut f32,
    x: *mut f32,
    r: *mut f32,
    p: *mut f32,
    ap: *mut f32,
}

impl FusedVectors {
    /// f32 words from `v` to the next 8-byte boundary (0 or 1): where the pair arrays start.
    #[inline(always)]
    fn pad(v: *const f32) -> usize {
        (v as usize / 4) & 1
    }
    /// Words [`in_slice`](Self::in_slice) takes at `v` (alignment padding included): at most 10·N
    /// for N ≥ 2, the room the host plans (`FUSED_EXTRA_VECTORS` beyond the plain solve's five).
    #[inline(always)]
    fn slice_words(v: *const f32, n: usize) -> usize {
        Self::pad(v) + (n + (n & 1)) + 8 * n
    }
    /// Words of the slice [`beside`](Self::beside) takes at `v`: p, r, dg and p's padding (≤ 5·N +
    /// 1: the solver's room and `FUSED_BESIDE_EXTRA_WORDS`).
    #[inline(always)]
    fn beside_words(v: *const f32, n: usize) -> usize {
        Self::pad(v) + 5 * n
    }
    /// Every vector at `v` in the slice.
    ///
    /// # Safety
    /// `v` holds [`slice_words`](Self::slice_words) f32.
    #[inline(always)]
    unsafe fn in_slice(v: *mut f32, n: usize) -> Self {
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
    unsafe fn beside(v: *mut f32, scratch: *mut f32, n: usize) -> Self {
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
unsafe fn team_scratch<C: ResidentTeam>(crew: &C, prm: &ResidentParams, scratch: *mut f32) -> *mut f32 {
    // SAFETY: the caller's contract.
    unsafe { scratch.add(crew.index() * GRADIENT_SCRATCH_SLICES * prm.slice_words as usize) }
}

/// κe's hyperparameter the fused solve's last residual pass contracts as it walks the rows
/// ([`solve_pair_fused`]): the one whose derivative row the entry's XMV gives beside the
/// residual's (`row2_d`), each product nonzero read once for both. Every other hyperparameter
/// takes a pass of its own after the solve ([`gradient_pair`]); `apart`: some κe one does, reading
/// x at other threads' rows, so the solve leaves x and s·y apart for it.
///
/// Measured (H100, `results/gradient-h200-5.md`): the node-side shares (q, κv's) folded into the
/// same pass as well gave no faster call on any set and raised the warp entries' spill stores from
/// 32–100 to 260–404 bytes: they keep their pass, which reads x and y at its rows' places only
/// (no neighbour's columns).
#[derive(Clone, Copy)]
struct Fold {
    /// The folded κe hyperparameter's index, [`Fold::NONE`] if none.
    edge: usize,
    apart: bool,
}

impl Fold {
    const NONE: usize = usize::MAX;
    /// The fold of `hy`: `folds_edge(h)` tells whether κe's hyperparameter `h` is the one the
    /// entry's derivative row computes (the first such is folded).
    #[inline(always)]
    fn of(hy: &[Hyper], folds_edge: impl Fn(&Hyper) -> bool) -> Fold {
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
/// `row3`, as [`Xmv::row_f64`] in the plain solve), restarting both
/// ([`Start::Prepared`]) while either misses rtol, at most `MAX_REPLACEMENTS` times.
///
/// The residual pass also contracts `fold`'s κe hyperparameter (`row3(i, i′, v)`: [`FusedXmv::row2`] and
/// its derivative row against v's first half): the last pass's sum, finished, goes to `out[h]`
/// (first thread). Returns the two statuses (both with the fused iterations) and s; where
/// `fold.apart`, x and s·y are left apart in p's room (in the slice, where
/// the other contractions read them), x at `p[0..N]` and s·y at `p[N..2N]`, each row at its place
/// ([`Xmv::slot`]).
///
/// # Safety
/// Called by every thread of the team; the views lie in the team's slice, the vectors where
/// [`FusedVectors`] puts them; `out` holds `gp.n_hyper` f64.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_pair_fused<C: ResidentTeam, X: FusedXmv, const REC: bool>(
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
                    let dd = a1[NODE_D] as f64 * a2[NODE_D] as f64;
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

/// Every job, drawn from `counter` by each team in turn: `solve` gets the pair's two graphs and
/// returns its status, which the team's first thread stores.
///
/// # Safety
/// Called by the whole team; `counter` valid, `jobs`/`status` hold `n_jobs` entries and every
/// job's graphs exist (host-checked).
#[inline(always)]
unsafe fn deal<C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    graphs: *const ResidentGraph,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
    mut solve: impl FnMut(&mut C, u32, ResidentGraph, ResidentGraph) -> PairStatus,
) {
    loop {
        // SAFETY: whole team; valid counter (contract).
        let j = unsafe { crew.next_job(counter) };
        if j >= prm.n_jobs {
            return;
        }
        // SAFETY: j < n_jobs; the job's graphs exist (contract).
        unsafe {
            let job = *jobs.add(j as usize);
            let st = solve(crew, j, *graphs.add(job.g1 as usize), *graphs.add(job.g2 as usize));
            if crew.rank() == 0 {
                *status.add(j as usize) = st;
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
unsafe fn stage_pair<T: ResidentReal, C: ResidentTeam>(
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
/// The launch contract of the entries (see [`MgkResidentWarpGeneral`]).
#[inline(always)]
unsafe fn solve_all<T: ResidentReal, C: ResidentTeam, E: EdgeEval<T>, const SPLIT: bool>(
    crew: &mut C,
    prm: &ResidentParams,
    e: &E,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
) {
    let nzs = prm.nz_stride as usize;
    let s = crew.slice();
    // SAFETY: forwarded contract; runs and slice sizes host-checked.
    unsafe {
        deal(crew, prm, graphs, jobs, status, counter, |crew, _, d1, d2| {
            let (g1, g2, staged) = stage_pair::<T, C>(crew, prm, words, s, &d1, &d2);
            solve_pair::<T, C, _, 1>(crew, prm, &OnTheFly::<E, SPLIT, T> { e, g1: &g1, g2: &g2, nzs }, &g1, &g2, s.add(staged) as *mut T)
        })
    }
}

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
unsafe fn gradient_pair<C: ResidentTeam, X: FusedXmv, const REC: bool>(
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
/// As [`solve_all`], with `gp` valid, `grad` holding `n_jobs · gp.n_hyper` f64 and `scratch`
/// `params.slice_words` f32 per team of the grid.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gradient_all<C: ResidentTeam, E: EdgeEval, D: EdgeEval>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    e: &E,
    de: Option<&D>,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
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
        let (g1, g2, staged) = stage_pair::<f32, C>(crew, prm, words, s, &d1, &d2);
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
                    graphs,
                    jobs,
                    status,
                    counter,
                    #[inline(always)]
                    |crew, j, d1, d2| each(crew, j, d1, d2, room),
                )
            },
        )
    }
}

/// Every job's K and ∂K/∂θ in product form (κe one Kronecker delta on feature `f`, value `h`,
/// unit weights): ∂κe/∂h = 1 − δ, so κe's one hyperparameter contracts the entries whose labels
/// differ. Slice as [`solve_all_product`]'s with the kept x after the five vectors.
///
/// # Safety
/// As [`solve_all_product`], with `gp` valid, `grad` holding `n_jobs · gp.n_hyper` f64 and
/// `scratch` `params.slice_words` f32 per team of the grid.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gradient_all_product<C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    gp: &GradientParams,
    f: usize,
    h: f32,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
    grad: *mut f64,
    scratch: *mut f32,
) {
    let np = gp.hypers().len();
    // SAFETY: forwarded contract.
    unsafe {
        let each = #[inline(always)]
        |crew: &mut C, j: u32, prod: &Product, g1: &View, g2: &View, v: *mut f32, room: Room| {
            let edge_row = #[inline(always)]
            |_: &Hyper, i: usize, i2: usize, x: *const f32| prod.row_differing(i, i2, x);
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
            let (out, folds_edge) = (grad.add(j as usize * np), |h: &Hyper| h.is_edge());
            if room == Room::FusedInSlice {
                gradient_pair::<C, _, true>(crew, prm, gp, prod, g1, g2, fv, out, folds_edge, row3, piece3, edge_row)
            } else {
                gradient_pair::<C, _, false>(crew, prm, gp, prod, g1, g2, fv, out, folds_edge, row3, piece3, edge_row)
            }
        };
        fused_room(
            prm,
            #[inline(always)]
            |room| product_pairs(crew, prm, f, h, graphs, words, jobs, status, counter, room, each),
        )
    }
}

/// Every job in product form (`octile_types::mgk::resident::PRODUCT_COLUMN_BITS`): κe a Kronecker
/// delta on edge feature `f` with value `h` for differing labels, every weight 1. The graphs stay
/// in global memory (read once per pair, to build the entries and the node terms); the slice holds
/// both row-pointer arrays, the five vectors and the entries.
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_all_product<T: ResidentReal, C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    f: usize,
    h: T,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
) {
    // SAFETY: forwarded contract.
    unsafe {
        product_pairs(crew, prm, f, h, graphs, words, jobs, status, counter, Room::Solver, |crew, _, prod: &Product<T>, g1, g2, v, _| {
            // the f32 solve's vectors in row records (recurrent: `solve_pair`), f64's apart
            if T::RECURRENT_PCG { solve_pair::<T, C, _, 3>(crew, prm, prod, g1, g2, v) } else { solve_pair::<T, C, _, 1>(crew, prm, prod, g1, g2, v) }
        })
    }
}

/// What a launch's slices hold for each job's vectors (the launch's `fused_beside` chooses between
/// the fused ones): the solver's five, or the fused solve's ([`FusedVectors`]) — all of them, or p,
/// r and dg.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Room {
    Solver,
    FusedInSlice,
    FusedBeside,
}

/// `run` with the launch's room for the fused vectors (`ResidentParams::fused_beside`), called in two
/// places with a constant each: two inlined copies, so that where the launch keeps every job's
/// vectors in its slice they are reached with shared-memory instructions (a pointer that may point
/// at either memory needs generic ones).
#[inline(always)]
fn fused_room<R>(prm: &ResidentParams, mut run: impl FnMut(Room) -> R) -> R {
    if prm.fused_beside == 0 { run(Room::FusedInSlice) } else { run(Room::FusedBeside) }
}

/// The status of a job whose slice lacks the room its launch promised (a planning error, never
/// expected): reported unconverged, so that the host solves it again elsewhere, instead of written
/// past the slice.
const NOT_PLANNED: PairStatus = PairStatus { value: 0.0, residual: f64::INFINITY, iterations: 0, converged: 0 };

/// Every job staged in product form — row pointers, the vectors (`room`: the solver's five, or
/// the fused solve's, all of them or p, r and dg: [`FusedVectors`]), then the entries — and handed to
/// `solve(crew, job, product, g1, g2, vectors, room)` ([`NOT_PLANNED`] where a job's slice lacks
/// that room).
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn product_pairs<T: ResidentReal, C: ResidentTeam>(
    crew: &mut C,
    prm: &ResidentParams,
    f: usize,
    h: T,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
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
            graphs,
            jobs,
            status,
            counter,
            #[inline(always)]
            |crew, j, d1, d2| {
                let (n1, n2, nnz2) = (d1.n_nodes as usize, d2.n_nodes as usize, d2.nnz as usize);
                let g1 = View::<T>::at(words.add(d1.offset as usize), &d1, nzs, prm.node_stride as usize);
                let g2 = View::<T>::at(words.add(d2.offset as usize), &d2, nzs, prm.node_stride as usize);
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

/// This thread's warp team: warp w of the block owns slice w of the dynamic shared memory.
///
/// # Safety
/// The launch gives each of its warps `slice_words` words of dynamic shared memory.
#[inline(always)]
unsafe fn warp_team(slice_words: u32) -> WarpTeam {
    // SAFETY: the warp's slice lies inside the launch's dynamic shared memory (contract).
    WarpTeam { lane: lane_id() as usize, slice: unsafe { (dynamic_smem() as *mut u32).add(warp_id() as usize * slice_words as usize) } }
}

/// This thread's block team: the reduction header, then the slice.
///
/// # Safety
/// The launch gives the block `RESIDENT_BLOCK_HEADER_BYTES` + its slice of dynamic shared memory.
#[inline(always)]
unsafe fn block_team() -> BlockSliceTeam {
    let base = dynamic_smem();
    // SAFETY: header then slice inside the launch's dynamic shared memory (contract).
    BlockSliceTeam {
        tid: thread_idx_x() as usize,
        size: block_dim_x() as usize,
        slots: base as *mut f64,
        slice: unsafe { base.add(RESIDENT_BLOCK_HEADER_BYTES) } as *mut u32,
    }
}

/// A product-form launch's jobs: κe's one Kronecker-delta term (feature, h in T) read from `p`.
///
/// # Safety
/// The launch contract of [`MgkResidentWarpProduct`] (or its block and f64 forms) for `crew`'s kind.
#[inline(always)]
unsafe fn product_launch<T: ResidentReal, C: ResidentTeam>(
    crew: &mut C,
    p: &ResidentParams,
    graphs: *const ResidentGraph,
    words: *const u32,
    jobs: *const PairJob,
    status: *mut PairStatus,
    counter: *mut u32,
) {
    let term = &p.edge_kernel.terms[0];
    // SAFETY: forwarded.
    unsafe { solve_all_product::<T, C>(crew, p, term.feature as usize, T::from_f64(term.param), graphs, words, jobs, status, counter) }
}

/// Defines the product-form entries of one precision: one warp per pair and one block per pair.
macro_rules! product_entries {
    ($t:ty, $(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident) => {
        $(#[$wdoc])*
        ///
        /// # Safety
        /// As [`MgkResidentWarpGeneral`], with `product_slice_words(..)` ≤ `params.slice_words`,
        /// n1·n2 ≤ `PRODUCT_MAX_UNKNOWNS` and nnz1·nnz2 < `PRODUCT_MAX_ENTRIES` for every job (a
        /// job past these reports NOT_PLANNED), and every edge weight 1 (host-checked; other
        /// weights would be ignored).
        #[unsafe(export_name = octile_types::entry_name!($warp))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $warp(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
        ) {
            // SAFETY: `params` points at one ResidentParams in global memory (see the warp entries);
            // forwarded launch contract (slices, then the solve's).
            unsafe { product_launch::<$t, _>(&mut warp_team((*params).slice_words), &*params, graphs, words, jobs, status, counter) }
        }
        $(#[$bdoc])*
        ///
        /// # Safety
        /// As the warp entry, but launched with 32·2^k ≤ `RESIDENT_BLOCK_THREADS` threads
        /// and `RESIDENT_BLOCK_HEADER_BYTES` + `slice_words`·4 bytes of dynamic shared memory.
        #[unsafe(export_name = octile_types::entry_name!($block))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $block(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
        ) {
            // SAFETY: as in the warp entry (header and slice, then the solve's).
            unsafe { product_launch::<$t, _>(&mut block_team(), &*params, graphs, words, jobs, status, counter) }
        }
    };
}

product_entries!(
    f32,
    /// Resident solver in product form, one warp per pair: κe one Kronecker-delta term (host:
    /// `EdgeShape::of`) and every edge weight of both graphs 1.
    MgkResidentWarpProduct,
    /// Resident solver in product form, one block per pair (as [`MgkResidentWarpProduct`]; for
    /// pairs whose slice leaves room for few pairs per SM, so that more warps share the work).
    MgkResidentBlockProduct
);
product_entries!(
    f64,
    /// [`MgkResidentWarpProduct`] in f64.
    MgkResidentWarpProductF64,
    /// [`MgkResidentBlockProduct`] in f64.
    MgkResidentBlockProductF64
);

/// Defines a warp-team and a block-team gradient entry: `|p, gp, team, grad…| body` runs one team's jobs.
macro_rules! gradient_entries {
    ($(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident, |$p:ident, $gp:ident, $team:ident| $body:expr) => {
        $(#[$wdoc])*
        ///
        /// # Safety
        /// As the solver entry of the same form, with `gparams` pointing at one `GradientParams`,
        /// `grad` holding `n_jobs · n_hyper` f64 and `scratch` `slice_words` f32 per team of the
        /// grid (where each team keeps its primal x).
        #[unsafe(export_name = octile_types::entry_name!($warp))]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $warp(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
            gparams: *const GradientParams,
            grad: *mut f64,
            scratch: *mut f32,
        ) {
            // SAFETY: both parameter blocks are in global memory (read through the pointers).
            let ($p, $gp): (&ResidentParams, &GradientParams) = unsafe { (&*params, &*gparams) };
            let $team = &mut unsafe { warp_team($p.slice_words) };
            // SAFETY: forwarded launch contract.
            unsafe { $body(graphs, words, jobs, status, counter, grad, scratch) }
        }
        $(#[$bdoc])*
        ///
        /// # Safety
        /// As the warp entry, launched as the block entries.
        #[unsafe(export_name = octile_types::entry_name!($block))]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $block(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
            gparams: *const GradientParams,
            grad: *mut f64,
            scratch: *mut f32,
        ) {
            // SAFETY: as in the warp entry.
            let ($p, $gp): (&ResidentParams, &GradientParams) = unsafe { (&*params, &*gparams) };
            let $team = &mut unsafe { block_team() };
            // SAFETY: forwarded launch contract.
            unsafe { $body(graphs, words, jobs, status, counter, grad, scratch) }
        }
    };
}

gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, any κe ([`gradient_all`]).
    MgkResidentWarpGradient,
    /// Resident hyperparameter gradient, one block per pair, any κe.
    MgkResidentBlockGradient,
    |p, gp, team| #[inline(always)] |g, w, j, s, c, out, sc| {
        let e = General { spec: &p.edge_kernel, features: p.nz_stride as usize - NZ_FEATURES };
        gradient_all(team, p, gp, &e, None::<&General>, g, w, j, s, c, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, κe one square exponential.
    MgkResidentWarpGradientSqexp,
    /// Resident hyperparameter gradient, one block per pair, κe one square exponential.
    MgkResidentBlockGradientSqexp,
    |p, gp, team| #[inline(always)] |g, w, j, s, c, out, sc| {
        let t = &p.edge_kernel.terms[0];
        let c2 = (t.coef * core::f64::consts::LOG2_E) as f32;
        let e = sqexp::<f32>(p);
        // ∂κe/∂ℓ = (a − b)²/ℓ³ · κe (BaseKernel::eval_d), times the term's weight where κe is a sum
        let scale = (if p.edge_kernel.combine == Combine::Additive as u32 { t.weight } else { 1.0 } / (t.param * t.param * t.param)) as f32;
        let de = OneTerm { f: t.feature as usize, k: move |a: f32, b: f32| (a - b) * (a - b) * scale * ex2(c2 * (a - b) * (a - b)) };
        gradient_all(team, p, gp, &e, Some(&de), g, w, j, s, c, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, κe one Kronecker delta.
    MgkResidentWarpGradientKdelta,
    /// Resident hyperparameter gradient, one block per pair, κe one Kronecker delta.
    MgkResidentBlockGradientKdelta,
    |p, gp, team| #[inline(always)] |g, w, j, s, c, out, sc| {
        let t = &p.edge_kernel.terms[0];
        let e = kdelta::<f32>(p);
        // ∂κe/∂h = 1 − δ (BaseKernel::eval_d), times the term's weight where κe is a sum
        let wt = (if p.edge_kernel.combine == Combine::Additive as u32 { t.weight } else { 1.0 }) as f32;
        let de = OneTerm { f: t.feature as usize, k: move |a: f32, b: f32| if a == b { 0.0 } else { wt } };
        gradient_all(team, p, gp, &e, Some(&de), g, w, j, s, c, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient in product form, one warp per pair ([`gradient_all_product`]).
    MgkResidentWarpGradientProduct,
    /// Resident hyperparameter gradient in product form, one block per pair.
    MgkResidentBlockGradientProduct,
    |p, gp, team| #[inline(always)] |g, w, j, s, c, out, sc| {
        let term = &p.edge_kernel.terms[0];
        gradient_all_product(team, p, gp, term.feature as usize, term.param as f32, g, w, j, s, c, out, sc)
    }
);

/// Defines a warp-team and a block-team entry for one κe evaluator.
macro_rules! resident_entries {
    ($t:ty, $(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident, $(#[$sdoc:meta])* $split:ident, |$p:ident| $edge:expr) => {
        $(#[$wdoc])*
        ///
        /// # Safety
        /// `params` points at the launch's parameters in global memory. Launched with 32·w threads (w ≤ `RESIDENT_MAX_WARPS_PER_BLOCK`) and w·`slice_words`·4
        /// bytes of dynamic shared memory; `graphs`/`words` in the resident layout with every run
        /// inside `words`; every job's graphs exist and its `slice_words(..)` ≤ `params.slice_words`;
        /// `status` holds `n_jobs` entries; `*counter == 0`.
        #[unsafe(export_name = octile_types::entry_name!($warp))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $warp(params: *const ResidentParams, graphs: *const ResidentGraph, words: *const u32, jobs: *const PairJob, status: *mut PairStatus, counter: *mut u32) {
            // SAFETY: `params` points at one ResidentParams in global memory (read through the
            // pointer: a by-value struct parameter would be copied to each thread's stack).
            let $p: &ResidentParams = unsafe { &*params };
            // SAFETY: forwarded launch contract (slices, then the solve's).
            unsafe { solve_all::<$t, _, _, false>(&mut warp_team($p.slice_words), $p, &$edge, graphs, words, jobs, status, counter) }
        }
        $(#[$bdoc])*
        ///
        /// # Safety
        /// As the warp entry, but launched with 32·2^k ≤ `RESIDENT_BLOCK_THREADS` threads and
        /// `RESIDENT_BLOCK_HEADER_BYTES` + `slice_words`·4 bytes of dynamic shared memory.
        #[unsafe(export_name = octile_types::entry_name!($block))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $block(params: *const ResidentParams, graphs: *const ResidentGraph, words: *const u32, jobs: *const PairJob, status: *mut PairStatus, counter: *mut u32) {
            // SAFETY: as in the warp entry.
            let $p: &ResidentParams = unsafe { &*params };
            // SAFETY: forwarded launch contract (header and slice, then the solve's).
            unsafe { solve_all::<$t, _, _, false>(&mut block_team(), $p, &$edge, graphs, words, jobs, status, counter) }
        }
        $(#[$sdoc])*
        ///
        /// # Safety
        /// As the block entry; the second graph's pieces (`PIECE_NONZEROS`) are read where it has any.
        #[unsafe(export_name = octile_types::entry_name!($split))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $split(params: *const ResidentParams, graphs: *const ResidentGraph, words: *const u32, jobs: *const PairJob, status: *mut PairStatus, counter: *mut u32) {
            // SAFETY: as in the warp entry.
            let $p: &ResidentParams = unsafe { &*params };
            // SAFETY: forwarded launch contract (header and slice, then the solve's).
            unsafe { solve_all::<$t, _, _, true>(&mut block_team(), $p, &$edge, graphs, words, jobs, status, counter) }
        }
    };
}

resident_entries!(
    f32,
    /// Resident solver, one warp per pair, any κe.
    MgkResidentWarpGeneral,
    /// Resident solver, one block per pair, any κe.
    MgkResidentBlockGeneral,
    /// Resident solver, one block per pair, any κe, long rows of G′ split into pieces.
    MgkResidentBlockGeneralSplit,
    |params| General { spec: &params.edge_kernel, features: params.nz_stride as usize - NZ_FEATURES }
);
resident_entries!(
    f32,
    /// Resident solver, one warp per pair, κe one square exponential (host: `EdgeShape::of`).
    MgkResidentWarpSqexp,
    /// Resident solver, one block per pair, κe one square exponential.
    MgkResidentBlockSqexp,
    /// Resident solver, one block per pair, one square exponential, long rows of G′ split into pieces.
    MgkResidentBlockSqexpSplit,
    |params| sqexp::<f32>(params)
);
resident_entries!(
    f32,
    /// Resident solver, one warp per pair, κe one Kronecker delta (host: `EdgeShape::of`).
    MgkResidentWarpKdelta,
    /// Resident solver, one block per pair, κe one Kronecker delta.
    MgkResidentBlockKdelta,
    /// Resident solver, one block per pair, one Kronecker delta, long rows of G′ split into pieces.
    MgkResidentBlockKdeltaSplit,
    |params| kdelta::<f32>(params)
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpGeneral`] in f64.
    MgkResidentWarpGeneralF64,
    /// [`MgkResidentBlockGeneral`] in f64.
    MgkResidentBlockGeneralF64,
    /// [`MgkResidentBlockGeneralSplit`] in f64.
    MgkResidentBlockGeneralSplitF64,
    |params| General { spec: &params.edge_kernel, features: params.nz_stride as usize - NZ_FEATURES }
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpSqexp`] in f64.
    MgkResidentWarpSqexpF64,
    /// [`MgkResidentBlockSqexp`] in f64.
    MgkResidentBlockSqexpF64,
    /// [`MgkResidentBlockSqexpSplit`] in f64.
    MgkResidentBlockSqexpSplitF64,
    |params| sqexp::<f64>(params)
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpKdelta`] in f64.
    MgkResidentWarpKdeltaF64,
    /// [`MgkResidentBlockKdelta`] in f64.
    MgkResidentBlockKdeltaF64,
    /// [`MgkResidentBlockKdeltaSplit`] in f64.
    MgkResidentBlockKdeltaSplitF64,
    |params| kdelta::<f64>(params)
);

/// κe one square exponential in T: exp2(c2·(a − b)²), c2 = −log₂e / (2ℓ²).
#[inline(always)]
fn sqexp<T: ResidentReal>(params: &ResidentParams) -> OneTerm<impl Fn(T, T) -> T> {
    let t = &params.edge_kernel.terms[0];
    let c2 = T::from_f64(t.coef * core::f64::consts::LOG2_E);
    OneTerm { f: t.feature as usize, k: move |a: T, b: T| T::exp2(c2 * (a - b) * (a - b)) }
}

/// κe one Kronecker delta in T: 1 where the labels agree, else h.
#[inline(always)]
fn kdelta<T: ResidentReal>(params: &ResidentParams) -> OneTerm<impl Fn(T, T) -> T> {
    let t = &params.edge_kernel.terms[0];
    let h = T::from_f64(t.param);
    OneTerm { f: t.feature as usize, k: move |a: T, b: T| if a == b { T::ONE } else { h } }
}

const _: () = assert!(RESIDENT_VECTORS == 5);
