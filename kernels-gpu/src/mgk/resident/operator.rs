//! M·p of the plain solve ([`ResidentOperator`]), and the walks by (row of G, piece of G′) for long rows.
use super::real::ResidentReal;
use super::teams::ResidentTeam;
use super::xmv::Xmv;
use crate::intrinsics::atomic_add_shared_f64;
use octile_types::pcg::{Operator, Team};
use octile_types::real::fma64;
/// The Jacobi preconditioner z = r / dg of every resident solve, with the reciprocal approximated
/// ([`ResidentReal::rcp`]: two instructions where division takes about ten): the same function of
/// dg at every use, so still one fixed SPD preconditioner for the PCG.
#[inline(always)]
pub(super) fn jacobi<T: ResidentReal>(r: T, d: T) -> T {
    r * T::rcp(d)
}

/// M·p of one staged pair for the shared PCG: dg·p minus the XMV, by rows or, where G′ has long
/// rows, by (row of G, piece of G′) with the shares added to ap. `S`: p's, ap's and dg's entries
/// apart (1), or the product form's row records `[p ap dg]` (3: `solve_pair`).
pub(super) struct ResidentOperator<'a, X, T = f32, const S: usize = 1> {
    pub(super) xmv: &'a X,
    pub(super) dg: *const T,
    pub(super) n1: usize,
    pub(super) n2: usize,
}

impl<T: ResidentReal, X: Xmv<T>, const S: usize> ResidentOperator<'_, X, T, S> {
    /// The product by (row of G, piece of G′) ([`by_pieces`]): ap = `diag(k)` for every row,
    /// then each piece's share of the XMV against `v` subtracted; returns this thread's share of
    /// p·ap.
    ///
    /// # Safety
    /// Called by the whole team; `v`, `p` and `ap` hold the pair's n1·n2 values in the slice.
    #[inline(always)]
    pub(super) unsafe fn pieces<C: Team>(&self, crew: &mut C, v: *const T, p: *const T, ap: *mut T, diag: impl Fn(usize) -> T) -> f64 {
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
pub(super) unsafe fn by_pieces<V: Copy, C: Team>(
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
pub(super) fn each_piece<C: Team>(crew: &C, n1: usize, np: usize, mut take: impl FnMut(usize, usize)) {
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
pub(super) unsafe fn sums_by_pieces<const W: usize, C: Team>(
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
pub(super) fn sums_at<T, const W: usize>(room: *mut T) -> *mut [f64; W] {
    room.cast::<u8>().wrapping_add(room as usize & 4).cast()
}

/// Whether a resident solve in precision T with p's, ap's and dg's entries `S` apart takes M·p by
/// recurrence: where the precision allows ([`ResidentReal::RECURRENT_PCG`]), and with row records
/// (S ≠ 1) always, since the direct form's XMV reads p at other rows, which the entries address
/// apart ([`ResidentOperator`]'s `RECURRENT`, [`start_row`](super::solve::start_row)).
#[inline(always)]
pub(super) const fn recurrent<T: ResidentReal, const S: usize>() -> bool {
    T::RECURRENT_PCG || S != 1
}
