//! The one preconditioned conjugate-gradient solver of octile, and its iterative refinement: the
//! CPU solver (a team of one thread), the GPU tile solver (a block or a team of blocks) and every
//! resident GPU entry (a warp or a block) call these two functions.
//!
//! PCG (Jacobi preconditioner: z = r / diag) solves M·x = b for the symmetric positive-definite
//! product matrix M of a graph pair. The solver never sees M: an [`Operator`] computes ap = M·p.
//! The vectors are raw pointers because the same code runs over shared memory, global memory and
//! host `Vec`s; each thread of a [`Team`] owns the entries `rank, rank + size, …` of every vector
//! (the operator may write `ap` anywhere, ordered by the team reduction that follows it).
//!
//! ```text
//!   start:  p = z = r / diag, ρ = r·z, rr = r·r                     (or given: Start::Prepared)
//!   repeat: ap = M p;  α = ρ / p·ap                                  (p·ap ≤ 0: Breakdown)
//!           x += α p;  r −= α ap;  ρ' = r·(r / diag);  rr = r·r
//!           rr ≤ rtol²·reference²: converged
//!           p = r / diag + (ρ' / ρ) p
//! ```
//! An operator may take M·p by recurrence instead ([`Operator::RECURRENT`]: the resident GPU
//! solver's): the `r` vector then holds z = r / diag, and the update of p moves into the product's
//! pass, which reads z where the direct form reads p:
//!
//! ```text
//!   start:  z = r / diag, p = ap = 0, β = 0, ρ = r·z, rr = r·r       (or given: Start::Prepared)
//!   repeat: p = z + β p;  ap = M z + β ap;  α = ρ / p·ap             (one pass: apply_recurrent)
//!           x += α p;  r = z·diag − α ap;  z = r / diag;  ρ' = r·z;  rr = r·r
//!           rr ≤ rtol²·reference²: converged;  β = ρ' / ρ
//! ```
//! The same iterates in exact arithmetic (M·(z + βp) = M·z + β·M·p); two passes over the vectors
//! and two team reductions an iteration instead of three passes, two reductions and a barrier.
//! Why: in the resident solver each pass costs a walk of the team's rows with its loop and index
//! arithmetic, and a block team's barrier waits for its slowest warp. Rounding lets ap drift from
//! M·p as r drifts from b − M·x; the caller's true residual (the resident solver's residual
//! replacement) bounds both.
//! Sums are f64 whatever the vectors' precision T (f32 vectors keep f64 dot products), and every
//! sum is a team reduction, bit-identical in all threads, so all threads take the same branches.
//! A vector's [`Entry`] is one real, or two solved as one system (`real::Pair`: the gradients' fused
//! primal and adjoint solve, interleaved, so that each thread moves both halves of its entry with
//! one 8-byte access and applies the preconditioner's one diagonal value to both).
//!
//! The API follows faer's `conjugate_gradient`: [`PcgParams`] in, [`PcgInfo`] out, [`PcgError`]
//! when it stops short.
use crate::real::{Entry, Real};

/// The threads that solve one pair together: one CPU thread ([`Alone`]), a GPU warp, a block or
/// a team of blocks. Every method that sums or synchronises must be called by all of them.
pub trait Team {
    /// Consecutive owned entries a thread's vector loops take per step, each lane with its own
    /// partial sums (at most [`MAX_LANES`]): 1 on the GPU, where a thread's loop is scalar; a
    /// SIMD vector's width on the CPU, so that the loops with dot products vectorize (a fixed
    /// order of sums: results stay deterministic).
    const LANES: usize = 1;
    /// Whether every vector this team solves has fewer than 2^32 entries, so that its vector loops
    /// count in u32 (the GPU teams whose vectors lie in shared memory: a 64-bit counter costs a
    /// compare and a carry more per entry and step there).
    const INDEX32: bool = false;
    /// This thread's rank in the team (0 ≤ rank < size).
    fn rank(&self) -> usize;
    /// Threads in the team.
    fn size(&self) -> usize;
    /// Sums of `a` and of `b` over the team, returned to every thread bit-identical. Also a
    /// barrier: every write before it is visible to every thread of the team after it.
    ///
    /// # Safety
    /// Every thread of the team calls it.
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64);
    /// Team-wide barrier: every write before it is visible to every thread of the team after it.
    ///
    /// # Safety
    /// Every thread of the team calls it.
    unsafe fn barrier(&mut self);
}

/// A team of one thread: the CPU solver's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alone;

impl Team for Alone {
    const LANES: usize = 8;
    #[inline(always)]
    fn rank(&self) -> usize {
        0
    }
    #[inline(always)]
    fn size(&self) -> usize {
        1
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        (a, b)
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {}
}

/// The matrix of the system, applied on the fly.
pub trait Operator<T: Entry, Tm: Team> {
    /// ap = M·p for the whole vector, computed by the team; returns this thread's share of p·ap
    /// (the solver sums the shares over the team, which also orders the `ap` writes before any
    /// thread reads them).
    ///
    /// # Safety
    /// Every thread of the team calls it; `p` and `ap` hold the system's `len` entries (`STRIDE` apart); every
    /// thread's writes to `p` are visible to the team (a reduction or barrier came after them).
    unsafe fn apply(&mut self, team: &mut Tm, p: *const T, ap: *mut T) -> f64;
    /// The preconditioned residual z = r / diag at entry `idx` (Jacobi; diag's entry idx at
    /// `diag[idx · STRIDE]`). An operator that keeps 1/diag may multiply instead: the same
    /// preconditioner, a cheaper instruction (CPU).
    ///
    /// # Safety
    /// `idx` < the system's length; `diag` holds its entries.
    #[inline(always)]
    unsafe fn precondition(&self, r: T, idx: usize, diag: *const T::Scalar) -> T {
        // SAFETY: the caller's contract.
        r.div(unsafe { *diag.add(idx * Self::STRIDE) })
    }
    /// Entries from one of p's, ap's and diag's entries to the next (1: each vector apart; 3: the
    /// resident product solve's row records `[p ap dg]`, one address a row for the three); x and r
    /// are apart in every layout. Entry idx of p is `p[idx · STRIDE]`. An operator with STRIDE ≠ 1
    /// is [`Operator::RECURRENT`] and takes [`Operator::apply_recurrent`] itself: `apply`'s
    /// product reads p at other rows, which an operator addresses apart.
    const STRIDE: usize = 1;
    /// Whether [`pcg`] takes M·p by recurrence through [`Operator::apply_recurrent`] (module docs):
    /// its `r` vector then holds z = r / diag.
    const RECURRENT: bool = false;
    /// p = z + β·p and ap = M·z + β·ap, computed by the team; returns this thread's share of p·ap
    /// (summed as `apply`'s). β = 0 at a start, where p and ap hold zeros. The default is the
    /// direct form: the update of p, a barrier, then [`Operator::apply`].
    ///
    /// # Safety
    /// As [`Operator::apply`], with z for p; every vector holds the system's `len` entries (p and ap `STRIDE` apart); the
    /// last team sum came after every write to z, p and ap (the update pass's, or the start's);
    /// the operator's own writes to p and ap are ordered before the sum that follows it (as
    /// `apply` orders its `ap` writes).
    #[inline(always)]
    unsafe fn apply_recurrent(&mut self, team: &mut Tm, z: *const T, p: *mut T, ap: *mut T, beta: T::Scalar, len: usize) -> f64 {
        // SAFETY: forwarded.
        unsafe { apply_direct(self, team, z, p, ap, beta, len) }
    }
}

/// [`Operator::apply_recurrent`] in the direct form, the trait's default: p = z + β·p for this
/// thread's entries, a barrier, then [`Operator::apply`] (ap = M·p). For an operator that takes the
/// recurrence in its own pass where it can and not elsewhere (the resident solver's split launches).
///
/// # Safety
/// As [`Operator::apply_recurrent`].
#[inline(always)]
pub unsafe fn apply_direct<T: Entry, Tm: Team, Op: Operator<T, Tm> + ?Sized>(
    op: &mut Op,
    team: &mut Tm,
    z: *const T,
    p: *mut T,
    ap: *mut T,
    beta: T::Scalar,
    len: usize,
) -> f64 {
    // SAFETY: idx < len; the barrier orders the p writes before the product reads them.
    unsafe {
        let s = Op::STRIDE;
        each_owned(team, len, |idx| *p.add(idx * s) = (*z.add(idx)).axpy(beta, *p.add(idx * s)));
        team.barrier();
        op.apply(team, p, ap)
    }
}

/// Most lanes of a [`Team`] ([`Team::LANES`]).
pub const MAX_LANES: usize = 8;

/// Runs over this thread's entries rank, rank + size, … < `len`, in steps of `Tm::LANES`
/// consecutive owned entries (entry k of a step on lane k; the rest one at a time on lane 0):
/// `compute(idx)` for every entry of a step first, then `store(idx, lane, value)` for each.
///
/// Why two phases: the vectors are raw pointers that the compiler must assume may alias, so a
/// store of one entry would keep the next entry's loads behind it and the step scalar; with every
/// load of a step before its first store, the CPU's 8-entry steps compile to vector loads and
/// arithmetic. With one lane (the GPU) it is the plain loop: compute, store.
#[inline(always)]
fn owned<Tm: Team, V: Copy + Default>(team: &Tm, len: usize, mut compute: impl FnMut(usize) -> V, mut store: impl FnMut(usize, usize, V)) {
    let (rank, size, lanes) = (team.rank(), team.size(), Tm::LANES);
    if Tm::INDEX32 {
        // the GPU's shared-memory teams: one lane, u32 counters (`Team::INDEX32`)
        let (size, len) = (size as u32, len as u32);
        let mut idx = rank as u32;
        while idx < len {
            let v = compute(idx as usize);
            store(idx as usize, 0, v);
            idx += size;
        }
        return;
    }
    let mut idx = rank;
    if lanes > 1 {
        while idx + (lanes - 1) * size < len {
            let mut v = [V::default(); MAX_LANES];
            for (k, vk) in v.iter_mut().enumerate().take(lanes) {
                *vk = compute(idx + k * size);
            }
            for (k, &vk) in v.iter().enumerate().take(lanes) {
                store(idx + k * size, k, vk);
            }
            idx += lanes * size;
        }
    }
    while idx < len {
        let v = compute(idx);
        store(idx, 0, v);
        idx += size;
    }
}

/// Runs `body(idx)` over this thread's entries rank, rank + size, … < `len`: the plain loop, for
/// updates without sums (on the CPU the compiler vectorizes it whole; in lane steps it vectorized
/// across steps, with gathers and scatters).
#[inline(always)]
fn each_owned<Tm: Team>(team: &Tm, len: usize, mut body: impl FnMut(usize)) {
    let (rank, size) = (team.rank(), team.size());
    if Tm::INDEX32 {
        let (size, len) = (size as u32, len as u32);
        let mut idx = rank as u32;
        while idx < len {
            body(idx as usize);
            idx += size;
        }
        return;
    }
    let mut idx = rank;
    while idx < len {
        body(idx);
        idx += size;
    }
}

/// The sum of a thread's `Tm::LANES` partial sums (lane 0 alone for one lane: the scalar loop's
/// sum, bit for bit).
#[inline(always)]
fn lanes_sum<Tm: Team>(acc: &[f64; MAX_LANES]) -> f64 {
    let mut s = acc[0];
    for v in acc.iter().take(Tm::LANES).skip(1) {
        s += v;
    }
    s
}

const _: () = assert!(Alone::LANES <= MAX_LANES);

/// The solver's vectors, each `len` entries: x, the residual r, the search direction p, ap = M·p
/// and the diagonal of M (the Jacobi preconditioner; one value per entry, for both halves of a pair);
/// p's, ap's and diag's entries [`Operator::STRIDE`] apart.
pub struct PcgVectors<T: Entry> {
    /// The solution (updated in place).
    pub x: *mut T,
    /// The residual b − M·x (z = r / diag in its place for a [`Operator::RECURRENT`] operator).
    pub r: *mut T,
    /// The search direction.
    pub p: *mut T,
    /// M·p.
    pub ap: *mut T,
    /// diag(M).
    pub diag: *const T::Scalar,
}

impl<T: Entry> Clone for PcgVectors<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Entry> Copy for PcgVectors<T> {}

/// Tolerance and iteration limit of one PCG run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgParams {
    /// Stop when ‖r‖ ≤ rtol·‖reference‖ (the initial residual, or [`Start::Prepared`]'s reference).
    pub rtol: f64,
    /// Most iterations.
    pub max_iterations: u32,
}

/// How a PCG run begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Start {
    /// `r` holds r₀ = b − M·x₀: the solver sets p = r / diag (recurrent: z = r / diag in r's
    /// place, p = ap = 0) and sums ρ and ‖r₀‖², the reference.
    Residual,
    /// The caller already set p = r / diag (recurrent: z in r's place, p = ap = 0), its last team
    /// reduction after those writes,
    /// and summed ρ = r·z and rr = r·r; the tolerance is relative to `reference2` (‖b‖², say,
    /// when restarting from the true residual).
    Prepared {
        /// r·z.
        rho: f64,
        /// r·r.
        rr: f64,
        /// The squared norm the tolerance is relative to.
        reference2: f64,
    },
}

/// What a PCG run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcgInfo {
    /// Iterations run.
    pub iterations: u32,
    /// ‖r‖² of the recurrence residual at the end.
    pub residual2: f64,
    /// The squared norm the tolerance was relative to.
    pub reference2: f64,
}

impl PcgInfo {
    /// ‖r‖ / ‖reference‖ (0 when the reference is 0).
    #[inline(always)]
    pub fn relative_residual(&self) -> f64 {
        if self.reference2 > 0.0 { libm::sqrt(self.residual2 / self.reference2) } else { 0.0 }
    }
}

/// Why PCG stopped before the tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PcgError {
    /// The iteration limit came first.
    NoConvergence(PcgInfo),
    /// p·M·p ≤ 0 or NaN (impossible for SPD M and p ≠ 0: rounding or a broken matrix).
    Breakdown(PcgInfo),
}

impl PcgError {
    /// What the run did before it stopped.
    #[inline(always)]
    pub fn info(&self) -> PcgInfo {
        match *self {
            PcgError::NoConvergence(i) | PcgError::Breakdown(i) => i,
        }
    }
}

/// The run's info whether or not it converged.
#[inline(always)]
pub fn info_of(r: &Result<PcgInfo, PcgError>) -> PcgInfo {
    match r {
        Ok(i) => *i,
        Err(e) => e.info(),
    }
}

/// ρ, ‖r‖² and the reference ‖·‖² a run begins with: those of a [`Start::Prepared`], or for a
/// [`Start::Residual`] z = r / diag for every entry, `keep(idx, z)` storing it (an entry of r is
/// read before its `keep`), and ρ = r·z and ‖r₀‖² (also the reference), summed over the team.
///
/// # Safety
/// The whole team calls it; `r` and `diag` hold `len` entries; `keep` writes only entry `idx`.
#[inline(always)]
unsafe fn begin<T: Entry, Tm: Team, Op: Operator<T, Tm>>(
    team: &mut Tm,
    op: &Op,
    r: *const T,
    diag: *const T::Scalar,
    len: usize,
    start: Start,
    mut keep: impl FnMut(usize, T),
) -> (f64, f64, f64) {
    if let Start::Prepared { rho, rr, reference2 } = start {
        return (rho, rr, reference2);
    }
    let (mut rho, mut r0) = ([0.0f64; MAX_LANES], [0.0f64; MAX_LANES]);
    owned(
        team,
        len,
        |idx| {
            // SAFETY: idx < len (caller's contract).
            unsafe {
                let ri = *r.add(idx);
                (ri, op.precondition(ri, idx, diag))
            }
        },
        |idx, k, (ri, zi): (T, T)| {
            keep(idx, zi);
            rho[k] = ri.dot_add(zi, rho[k]);
            r0[k] = ri.dot_add(ri, r0[k]);
        },
    );
    // SAFETY: the whole team calls it.
    let (rho, r0) = unsafe { team.sum2(lanes_sum::<Tm>(&rho), lanes_sum::<Tm>(&r0)) };
    (rho, r0, r0)
}

/// One update: x += α·p, and r = `r_old(idx)` − α·ap and z = r / diag for every entry, `v.r` ← r,
/// or z where `keep_z` (the recurrent form); ρ' = r·z and ‖r‖² summed over the team.
///
/// With lanes (the CPU), x += αp is a plain loop of its own, which the compiler vectorizes whole
/// (inside the lane steps, beside the stores of r, it stayed scalar); with one lane (the GPU) it
/// stays in the one pass over the vectors. Either way the same values.
///
/// # Safety
/// The whole team calls it; the vectors hold `len` entries; `r_old(idx)` reads entry idx alone.
#[inline(always)]
unsafe fn update_sums<T: Entry, Tm: Team, Op: Operator<T, Tm>>(
    team: &mut Tm,
    op: &Op,
    v: PcgVectors<T>,
    len: usize,
    alpha: T::Scalar,
    keep_z: bool,
    r_old: impl Fn(usize) -> T,
) -> (f64, f64) {
    let PcgVectors { x, r, p, ap, diag } = v;
    let s = Op::STRIDE;
    let split_x = Tm::LANES > 1;
    if split_x {
        // SAFETY: idx < len (caller's contract).
        each_owned(team, len, |idx| unsafe { *x.add(idx) = (*x.add(idx)).axpy(alpha, *p.add(idx * s)) });
    }
    let (mut rho_part, mut rr_part) = ([0.0f64; MAX_LANES], [0.0f64; MAX_LANES]);
    owned(
        team,
        len,
        |idx| {
            // SAFETY: idx < len (caller's contract).
            unsafe {
                let ri = r_old(idx).axpy(-alpha, *ap.add(idx * s));
                (ri, op.precondition(ri, idx, diag))
            }
        },
        |idx, k, (ri, zi): (T, T)| {
            // SAFETY: idx < len.
            unsafe {
                if !split_x {
                    *x.add(idx) = (*x.add(idx)).axpy(alpha, *p.add(idx * s));
                }
                *r.add(idx) = if keep_z { zi } else { ri };
            }
            rho_part[k] = ri.dot_add(zi, rho_part[k]);
            rr_part[k] = ri.dot_add(ri, rr_part[k]);
        },
    );
    // SAFETY: the whole team calls it.
    unsafe { team.sum2(lanes_sum::<Tm>(&rho_part), lanes_sum::<Tm>(&rr_part)) }
}

/// α = ρ / p·ap from this thread's share of p·ap (summed over the team); `None` on a breakdown:
/// p·ap ≤ 0, or NaN (hence not `pap <= 0.0`).
///
/// # Safety
/// The whole team calls it.
#[inline(always)]
unsafe fn step_length<T: Entry, Tm: Team>(team: &mut Tm, pap_part: f64, rho: f64) -> Option<T::Scalar> {
    // SAFETY: the caller's contract.
    let (pap, _) = unsafe { team.sum2(pap_part, 0.0) };
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(pap > 0.0) { None } else { Some(T::Scalar::from_f64(rho / pap)) }
}

/// A PCG run's result from what it did and how it stopped.
#[inline(always)]
fn outcome(info: PcgInfo, converged: bool, breakdown: bool) -> Result<PcgInfo, PcgError> {
    if converged {
        Ok(info)
    } else if breakdown {
        Err(PcgError::Breakdown(info))
    } else {
        Err(PcgError::NoConvergence(info))
    }
}

/// Jacobi-preconditioned CG on M·x = b from the x, r (and, for [`Start::Prepared`], p) in `v`.
/// For a [`Operator::RECURRENT`] operator `v.r` holds z = r / diag from the start on (with
/// `Start::Residual` the solver turns r₀ into z₀ and zeroes p and ap; with `Start::Prepared` the
/// caller has set z, p = 0 and ap = 0), and holds the last z at the end.
///
/// # Safety
/// Every thread of the team calls it with the same arguments; the five vectors hold `len` entries
/// each (p, ap and diag [`Operator::STRIDE`] apart) and belong to this pair; `diag` has no zero
/// entry.
#[inline(always)]
pub unsafe fn pcg<T: Entry, Tm: Team, Op: Operator<T, Tm>>(
    team: &mut Tm,
    op: &mut Op,
    v: PcgVectors<T>,
    len: usize,
    params: PcgParams,
    start: Start,
) -> Result<PcgInfo, PcgError> {
    if Op::RECURRENT {
        // SAFETY: forwarded.
        return unsafe { pcg_recurrent(team, op, v, len, params, start) };
    }
    let PcgVectors { r, p, ap, diag, .. } = v;
    let s = Op::STRIDE;
    // SAFETY: idx < len (caller's contract); the sum also orders the p writes before the
    // operator reads them.
    let (mut rho, mut rr, reference2) = unsafe { begin(team, op, r, diag, len, start, |idx, zi| *p.add(idx * s) = zi) };
    let tol2 = params.rtol * params.rtol * reference2;
    let mut iterations = 0u32;
    let mut converged = rr <= tol2;
    let mut breakdown = false;
    while !converged && iterations < params.max_iterations {
        // ---- ap = M p, and p·ap
        // SAFETY: forwarded; p's writes were ordered by the last reduction or barrier.
        let pap_part = unsafe { op.apply(team, p, ap) };
        // SAFETY: the whole team calls it.
        let Some(alpha) = (unsafe { step_length::<T, Tm>(team, pap_part, rho) }) else {
            breakdown = true;
            break;
        };
        // ---- x += αp, r −= α·ap, z = r / diag, ρ' = r·z, rr = r·r
        // SAFETY: idx < len; the whole team calls it.
        let (rho_new, rr_new) = unsafe { update_sums(team, op, v, len, alpha, false, |idx| *r.add(idx)) };
        rr = rr_new;
        iterations += 1;
        if rr <= tol2 {
            converged = true;
            break;
        }
        let beta = T::Scalar::from_f64(rho_new / rho);
        rho = rho_new;
        // ---- p = z + βp
        // SAFETY: idx < len.
        each_owned(team, len, |idx| unsafe { *p.add(idx * s) = op.precondition(*r.add(idx), idx, diag).axpy(beta, *p.add(idx * s)) });
        // SAFETY: the whole team reaches it; the operator reads p entries of other threads.
        unsafe { team.barrier() };
    }
    outcome(PcgInfo { iterations, residual2: rr, reference2 }, converged, breakdown)
}

/// [`pcg`] for an operator that takes M·p by recurrence ([`Operator::RECURRENT`], module docs):
/// `v.r` holds z.
///
/// # Safety
/// As [`pcg`].
#[inline(always)]
unsafe fn pcg_recurrent<T: Entry, Tm: Team, Op: Operator<T, Tm>>(
    team: &mut Tm,
    op: &mut Op,
    v: PcgVectors<T>,
    len: usize,
    params: PcgParams,
    start: Start,
) -> Result<PcgInfo, PcgError> {
    let PcgVectors { r: z, p, ap, diag, .. } = v;
    let s = Op::STRIDE;
    // SAFETY: idx < len (caller's contract), z holds r₀ here at a Residual start; the sum also
    // orders the z, p and ap writes before the operator reads them.
    let (mut rho, mut rr, reference2) = unsafe {
        begin(team, op, z, diag, len, start, |idx, zi| {
            *z.add(idx) = zi;
            *p.add(idx * s) = T::default();
            *ap.add(idx * s) = T::default();
        })
    };
    let tol2 = params.rtol * params.rtol * reference2;
    let mut iterations = 0u32;
    let mut converged = rr <= tol2;
    let mut breakdown = false;
    let mut beta = T::Scalar::from_f64(0.0);
    while !converged && iterations < params.max_iterations {
        // ---- p = z + βp, ap = M z + β ap, and p·ap
        // SAFETY: forwarded; z's writes were ordered by the last reduction.
        let pap_part = unsafe { op.apply_recurrent(team, z, p, ap, beta, len) };
        // SAFETY: the whole team calls it.
        let Some(alpha) = (unsafe { step_length::<T, Tm>(team, pap_part, rho) }) else {
            breakdown = true;
            break;
        };
        // ---- x += αp, r = z·diag − α·ap, z = r / diag, ρ' = r·z, rr = r·r
        // SAFETY: idx < len; the whole team calls it (the sum also orders the z writes before
        // the next product).
        let (rho_new, rr_new) = unsafe { update_sums(team, op, v, len, alpha, true, |idx| (*z.add(idx)).scale(*diag.add(idx * s))) };
        rr = rr_new;
        iterations += 1;
        if rr <= tol2 {
            converged = true;
            break;
        }
        beta = T::Scalar::from_f64(rho_new / rho);
        rho = rho_new;
    }
    outcome(PcgInfo { iterations, residual2: rr, reference2 }, converged, breakdown)
}

/// The inner PCG of the mixed-precision refinement stops at this relative residual; the f64
/// refinement step then restores full accuracy.
pub const INNER_RTOL: f64 = 1e-5;
/// Most refinement steps of the mixed-precision path.
pub const MAX_REFINE: u32 = 40;

/// The true residual of the refinement, in f64: r64 = b − M·x64 over the whole vector, computed by
/// the team; returns this thread's share of ‖r64‖².
pub trait Residual<Tm: Team> {
    /// Compute r64 from x64 (every thread's x64 writes are visible when it is called).
    ///
    /// # Safety
    /// Every thread of the team calls it.
    unsafe fn residual(&mut self, team: &mut Tm, x64: *const f64, r64: *mut f64) -> f64;
}

/// Mixed-precision iterative refinement: PCG in T (f32 on the GPU) on M·c = r64 as the inner
/// solver, x64 += c, then the true residual r64 = b − M·x64 in f64 ([`Residual`]), until
/// ‖r64‖ ≤ rtol·‖b‖: the result meets the f64 tolerance instead of f32's cond(M)·ε.
///
/// On entry x64 = 0, r64 = b and `bb` = ‖b‖² (summed over the team); `inner` is the T solver's
/// vectors (its `diag` set). Iterations count the inner PCG's, against `params.max_iterations`.
///
/// # Safety
/// As [`pcg`]; x64 and r64 hold `len` entries.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn pcg_refined<T: Real, Tm: Team, Op: Operator<T, Tm>, Res: Residual<Tm>>(
    team: &mut Tm,
    op: &mut Op,
    res: &mut Res,
    inner: PcgVectors<T>,
    x64: *mut f64,
    r64: *mut f64,
    len: usize,
    params: PcgParams,
    bb: f64,
) -> Result<PcgInfo, PcgError> {
    const { assert!(Op::STRIDE == 1, "the refinement's operators keep p, ap and diag apart") };
    let (rank, size) = (team.rank(), team.size());
    let tol2 = params.rtol * params.rtol * bb;
    let mut rr64 = bb;
    let mut iterations = 0u32;
    let mut refinements = 0u32;
    let mut converged = rr64 <= tol2;
    while !converged && iterations < params.max_iterations && refinements < MAX_REFINE {
        // ---- inner solve M c = r64 in T
        let mut idx = rank;
        while idx < len {
            // SAFETY: idx < len; each thread touches only its own entries here.
            unsafe {
                *inner.r.add(idx) = T::from_f64(*r64.add(idx));
                *inner.x.add(idx) = T::ZERO;
            }
            idx += size;
        }
        let inner_params = PcgParams { rtol: INNER_RTOL.max(params.rtol), max_iterations: params.max_iterations - iterations };
        // SAFETY: forwarded.
        let it = info_of(&unsafe { pcg(team, op, inner, len, inner_params, Start::Residual) }).iterations;
        iterations += it;
        refinements += 1;
        // ---- x64 += c, then r64 = b − M·x64 in f64
        let mut idx = rank;
        while idx < len {
            // SAFETY: idx < len.
            unsafe { *x64.add(idx) += (*inner.x.add(idx)).to_f64() };
            idx += size;
        }
        // SAFETY: the whole team reaches it; the residual reads x64 written by other threads.
        unsafe { team.barrier() };
        // SAFETY: forwarded.
        let part = unsafe { res.residual(team, x64, r64) };
        // SAFETY: the whole team calls it.
        rr64 = unsafe { team.sum2(part, 0.0).0 };
        converged = rr64 <= tol2;
        if it == 0 {
            break; // no inner progress possible
        }
    }
    let info = PcgInfo { iterations, residual2: rr64, reference2: bb };
    if converged { Ok(info) } else { Err(PcgError::NoConvergence(info)) }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// A dense SPD matrix as an operator.
    struct Dense<'a> {
        m: &'a [f64],
        n: usize,
    }
    /// ap = M·p for a dense row-major M; returns p·ap.
    ///
    /// # Safety
    /// p and ap hold n entries.
    unsafe fn dense_apply(m: &[f64], n: usize, p: *const f64, ap: *mut f64) -> f64 {
        let mut pap = 0.0;
        for i in 0..n {
            // SAFETY: p, ap hold n entries.
            unsafe {
                let s: f64 = (0..n).map(|j| m[i * n + j] * *p.add(j)).sum();
                *ap.add(i) = s;
                pap += *p.add(i) * s;
            }
        }
        pap
    }

    /// The same matrix taking M·p by recurrence (the resident solver's form): ap = M·z + β·ap
    /// and p = z + β·p in one pass, z read where the direct form reads p.
    struct Recurrent<'a>(Dense<'a>);
    impl<Tm: Team> Operator<f64, Tm> for Recurrent<'_> {
        unsafe fn apply(&mut self, _: &mut Tm, p: *const f64, ap: *mut f64) -> f64 {
            // SAFETY: forwarded.
            unsafe { dense_apply(self.0.m, self.0.n, p, ap) }
        }
        const RECURRENT: bool = true;
        unsafe fn apply_recurrent(&mut self, _: &mut Tm, z: *const f64, p: *mut f64, ap: *mut f64, beta: f64, len: usize) -> f64 {
            // SAFETY: forwarded; p and ap apart (stride 1).
            unsafe { recurrent_apply(&self.0, z, p, ap, beta, len, 1) }
        }
    }

    /// p = z + β·p and ap = M·z + β·ap for every row of `dense`, p's and ap's entries `stride` apart;
    /// returns p·ap.
    ///
    /// # Safety
    /// z holds n entries, p and ap n entries `stride` apart.
    unsafe fn recurrent_apply(dense: &Dense<'_>, z: *const f64, p: *mut f64, ap: *mut f64, beta: f64, len: usize, stride: usize) -> f64 {
        let (m, n) = (dense.m, dense.n);
        assert_eq!(len, n);
        let mut pap = 0.0;
        for i in 0..n {
            let k = i * stride;
            // SAFETY: the caller's contract.
            unsafe {
                let mz: f64 = (0..n).map(|j| m[i * n + j] * *z.add(j)).sum();
                *p.add(k) = *z.add(i) + beta * *p.add(k);
                *ap.add(k) = mz + beta * *ap.add(k);
                pap += *p.add(k) * *ap.add(k);
            }
        }
        pap
    }

    fn spd(n: usize, seed: u64) -> Vec<f64> {
        // M = I·n + a symmetric matrix with entries in [0, 1): diagonally dominant
        let mut s = seed;
        let mut rnd = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut m = std::vec![0.0; n * n];
        for i in 0..n {
            for j in i..n {
                let v = rnd();
                m[i * n + j] = v;
                m[j * n + i] = v;
            }
            m[i * n + i] += n as f64;
        }
        m
    }

    /// A team of one thread with one lane (the GPU teams' `LANES`): x updated inside the update
    /// pass, as on the GPU, where `Alone`'s eight lanes update it in a loop of its own.
    #[derive(Default)]
    struct OneLane;
    impl Team for OneLane {
        fn rank(&self) -> usize {
            0
        }
        fn size(&self) -> usize {
            1
        }
        unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
            (a, b)
        }
        unsafe fn barrier(&mut self) {}
    }
    impl<Tm: Team> Operator<f64, Tm> for Dense<'_> {
        unsafe fn apply(&mut self, _: &mut Tm, p: *const f64, ap: *mut f64) -> f64 {
            // SAFETY: forwarded.
            unsafe { dense_apply(self.m, self.n, p, ap) }
        }
    }
    /// The recurrent form through the trait's default `apply_recurrent` (the p pass, a barrier,
    /// then `apply`).
    struct DefaultRecurrent<'a>(Dense<'a>);
    impl<Tm: Team> Operator<f64, Tm> for DefaultRecurrent<'_> {
        unsafe fn apply(&mut self, t: &mut Tm, p: *const f64, ap: *mut f64) -> f64 {
            // SAFETY: forwarded.
            unsafe { <Dense<'_> as Operator<f64, Tm>>::apply(&mut self.0, t, p, ap) }
        }
        const RECURRENT: bool = true;
    }

    /// `got` (x and info after `k` iterations) is the direct form's `want`: k iterations, ‖r‖²
    /// within 1e-8 and x within 1e-12 relative (1e-15 absolute near 0), reporting the index.
    fn assert_same_iterate(label: &str, k: u32, (xd, id): (&[f64], PcgInfo), (x, info): (&[f64], PcgInfo)) {
        assert_eq!(info.iterations, k, "{label}");
        let rel = (id.residual2 - info.residual2).abs() / id.residual2;
        assert!(rel <= 1e-8, "{label} after {k}: ‖r‖² {} against the direct form's {} (rel {rel:e})", info.residual2, id.residual2);
        for (i, (d, v)) in xd.iter().zip(x).enumerate() {
            assert!((d - v).abs() <= 1e-12 * d.abs().max(1e-3), "{label} after {k}, x[{i}]: {v} against {d}");
        }
    }

    /// x after `iters` iterations of each form on team `Tm`, operator as given, from x = 0.
    fn run<Tm: Team + Default, Op: Operator<f64, Tm>>(mut op: Op, m: &[f64], b: &[f64], iters: u32) -> (Vec<f64>, PcgInfo) {
        let n = b.len();
        let diag: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
        let (mut x, mut r, mut p, mut ap) = (std::vec![0.0; n], b.to_vec(), std::vec![f64::NAN; n], std::vec![f64::NAN; n]);
        let v = PcgVectors { x: x.as_mut_ptr(), r: r.as_mut_ptr(), p: p.as_mut_ptr(), ap: ap.as_mut_ptr(), diag: diag.as_ptr() };
        // SAFETY: every vector holds n entries; a team of one.
        let res = unsafe { pcg(&mut Tm::default(), &mut op, v, n, PcgParams { rtol: 1e-300, max_iterations: iters }, Start::Residual) };
        (x, info_of(&res))
    }

    /// On a one-lane team and through the default `apply_recurrent`, the recurrent form takes the
    /// direct form's iterates, as with `Alone`.
    #[test]
    fn pcg_forms_agree_on_one_lane_and_through_the_default_recurrent_apply() {
        let (n, m) = (20, spd(20, 13));
        let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 5) as f64).collect();
        for k in [1, 3, 6] {
            let (xd, id) = run::<OneLane, _>(Dense { m: &m, n }, &m, &b, k);
            let (xr, ir) = run::<OneLane, _>(Recurrent(Dense { m: &m, n }), &m, &b, k);
            let (xq, iq) = run::<OneLane, _>(DefaultRecurrent(Dense { m: &m, n }), &m, &b, k);
            let (xa, _) = run::<Alone, _>(Dense { m: &m, n }, &m, &b, k);
            for (label, x, info) in [("recurrent", &xr, ir), ("default recurrent", &xq, iq), ("Alone direct", &xa, id)] {
                assert_same_iterate(label, k, (&xd, id), (x, info));
            }
        }
    }

    /// A restart as the resident solver makes it (`Start::Prepared` from the true residual: z in
    /// r's place and p = ap = 0 for the recurrent form, r and p = z for the direct one) converges
    /// both forms to the same x.
    #[test]
    fn pcg_forms_restart_from_the_true_residual_alike() {
        let (n, m) = (30, spd(30, 17));
        let b: Vec<f64> = (0..n).map(|i| 2.0 - (i % 3) as f64 * 0.5).collect();
        let diag: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
        let bb: f64 = b.iter().map(|v| v * v).sum();
        let mut xs = Vec::new();
        for recurrent in FORMS {
            let (mut x, _) =
                if recurrent { run::<OneLane, _>(Recurrent(Dense { m: &m, n }), &m, &b, 3) } else { run::<OneLane, _>(Dense { m: &m, n }, &m, &b, 3) };
            // the true residual and the prepared start
            let res: Vec<f64> = (0..n).map(|i| b[i] - (0..n).map(|j| m[i * n + j] * x[j]).sum::<f64>()).collect();
            let z: Vec<f64> = (0..n).map(|i| res[i] / diag[i]).collect();
            let (rho, rr) = (res.iter().zip(&z).map(|(a, b)| a * b).sum(), res.iter().map(|v| v * v).sum());
            let (mut r, mut p, mut ap) =
                if recurrent { (z.clone(), std::vec![0.0; n], std::vec![0.0; n]) } else { (res.clone(), z.clone(), std::vec![f64::NAN; n]) };
            let v = PcgVectors { x: x.as_mut_ptr(), r: r.as_mut_ptr(), p: p.as_mut_ptr(), ap: ap.as_mut_ptr(), diag: diag.as_ptr() };
            let params = PcgParams { rtol: 1e-13, max_iterations: 200 };
            let start = Start::Prepared { rho, rr, reference2: bb };
            // SAFETY: every vector holds n entries; a team of one.
            let res = unsafe {
                if recurrent {
                    pcg(&mut OneLane, &mut Recurrent(Dense { m: &m, n }), v, n, params, start)
                } else {
                    pcg(&mut OneLane, &mut Dense { m: &m, n }, v, n, params, start)
                }
            };
            assert!(res.is_ok(), "recurrent {recurrent}: {res:?}");
            for i in 0..n {
                let mx: f64 = (0..n).map(|j| m[i * n + j] * x[j]).sum();
                assert!((mx - b[i]).abs() <= 1e-10 * b[i].abs(), "recurrent {recurrent} row {i}: M·x = {mx}, b = {}", b[i]);
            }
            xs.push(x);
        }
        for (i, (d, r)) in xs[0].iter().zip(&xs[1]).enumerate() {
            assert!((d - r).abs() <= 1e-11 * d.abs(), "x[{i}]: direct {d} recurrent {r}");
        }
    }

    /// Both forms of the PCG: M·p applied directly, and by recurrence ([`Operator::RECURRENT`]).
    const FORMS: [bool; 2] = [false, true];

    /// x and the run's outcome for M·x = b from x = 0; `recurrent`: M·p by recurrence (`r` then
    /// holds z at the end: its last z is checked against the returned residual).
    fn solve_with(m: &[f64], b: &[f64], params: PcgParams, recurrent: bool) -> (Vec<f64>, Result<PcgInfo, PcgError>) {
        let n = b.len();
        let diag: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
        // p and ap start as NaN: the recurrent form must zero them itself at a Residual start
        let (mut x, mut r, mut p, mut ap) = (std::vec![0.0; n], b.to_vec(), std::vec![f64::NAN; n], std::vec![f64::NAN; n]);
        let v = PcgVectors { x: x.as_mut_ptr(), r: r.as_mut_ptr(), p: p.as_mut_ptr(), ap: ap.as_mut_ptr(), diag: diag.as_ptr() };
        let dense = Dense { m, n };
        // SAFETY: every vector holds n entries; a team of one.
        let res = unsafe {
            if recurrent {
                pcg(&mut Alone, &mut Recurrent(dense), v, n, params, Start::Residual)
            } else {
                pcg(&mut Alone, &mut { dense }, v, n, params, Start::Residual)
            }
        };
        if recurrent && let Ok(info) = res {
            // the recurrence's residual is z·diag
            let rr: f64 = (0..n).map(|i| (r[i] * diag[i]).powi(2)).sum();
            assert!((rr - info.residual2).abs() <= 1e-9 * info.residual2.max(1e-300), "z·diag's ‖r‖² {rr} against the reported {}", info.residual2);
        }
        (x, res)
    }

    #[test]
    fn pcg_solves_spd_systems_to_the_tolerance() {
        for recurrent in FORMS {
            for (n, seed) in [(1, 1), (2, 2), (7, 3), (40, 4), (90, 5)] {
                let m = spd(n, seed);
                let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 * 0.25).collect();
                let (x, res) = solve_with(&m, &b, PcgParams { rtol: 1e-12, max_iterations: 200 }, recurrent);
                let info = res.expect("converges");
                assert!(info.relative_residual() <= 1e-12, "n {n} recurrent {recurrent}: residual {}", info.relative_residual());
                for i in 0..n {
                    let mx: f64 = (0..n).map(|j| m[i * n + j] * x[j]).sum();
                    assert!((mx - b[i]).abs() <= 1e-9 * b[i].abs(), "n {n} recurrent {recurrent} row {i}: M·x = {mx}, b = {}", b[i]);
                }
            }
        }
    }

    /// The two forms run the same iterates: after every iteration count the same x (to rounding)
    /// and the same residual.
    #[test]
    fn pcg_recurrent_form_takes_the_direct_forms_iterates() {
        let (n, m) = (25, spd(25, 11));
        let b: Vec<f64> = (0..n).map(|i| 0.5 + (i % 7) as f64).collect();
        for k in 1..=8 {
            let params = PcgParams { rtol: 1e-300, max_iterations: k };
            let (xd, rd) = solve_with(&m, &b, params, false);
            let (xr, rr) = solve_with(&m, &b, params, true);
            assert_eq!(info_of(&rd).iterations, k);
            assert_same_iterate("recurrent", k, (&xd, info_of(&rd)), (&xr, info_of(&rr)));
        }
    }

    #[test]
    fn pcg_reports_the_iteration_limit_and_a_zero_rhs() {
        for recurrent in FORMS {
            let m = spd(30, 9);
            let b = std::vec![1.0; 30];
            let (_, res) = solve_with(&m, &b, PcgParams { rtol: 1e-14, max_iterations: 1 }, recurrent);
            match res {
                Err(PcgError::NoConvergence(i)) => assert_eq!(i.iterations, 1),
                other => panic!("recurrent {recurrent}: expected NoConvergence after 1 iteration, got {other:?}"),
            }
            let (x, res) = solve_with(&m, &std::vec![0.0; 30], PcgParams { rtol: 1e-8, max_iterations: 5 }, recurrent);
            assert_eq!(res, Ok(PcgInfo { iterations: 0, residual2: 0.0, reference2: 0.0 }), "recurrent {recurrent}");
            assert!(x.iter().all(|&v| v == 0.0));
        }
    }

    /// The recurrent form with p, ap and diag in row records `[p ap diag]` ([`Operator::STRIDE`]
    /// = 3, the resident f32 product solve's layout): z and x apart, p, ap and diag of row i at
    /// 3·i, 3·i + 1 and 3·i + 2.
    struct Records<'a>(Dense<'a>);
    impl<Tm: Team> Operator<f64, Tm> for Records<'_> {
        unsafe fn apply(&mut self, _: &mut Tm, _: *const f64, _: *mut f64) -> f64 {
            unreachable!("an operator of row records is recurrent: the PCG calls apply_recurrent alone")
        }
        const STRIDE: usize = 3;
        const RECURRENT: bool = true;
        unsafe fn apply_recurrent(&mut self, _: &mut Tm, z: *const f64, p: *mut f64, ap: *mut f64, beta: f64, len: usize) -> f64 {
            // SAFETY: forwarded; p and ap in records of 3.
            unsafe { recurrent_apply(&self.0, z, p, ap, beta, len, 3) }
        }
    }

    /// x, the last z and the outcome of the recurrent form, `iters` iterations (or convergence to
    /// `rtol`) on team `Tm` from x = 0, with p, ap and diag in row records ([`Records`]) or apart
    /// ([`Recurrent`]).
    fn run_recurrent<Tm: Team + Default>(m: &[f64], b: &[f64], params: PcgParams, records: bool) -> (Vec<f64>, Vec<f64>, Result<PcgInfo, PcgError>) {
        let n = b.len();
        // p, ap and diag in one buffer: field f of row i at i·3 + f (records) or f·n + i (apart);
        // NaN in p's and ap's places: the recurrent start must zero them itself
        let (stride, field) = if records { (3, 1) } else { (1, n) };
        let mut pad = std::vec![f64::NAN; 3 * n];
        for i in 0..n {
            pad[i * stride + 2 * field] = m[i * n + i];
        }
        let (mut x, mut r) = (std::vec![0.0; n], b.to_vec());
        let base = pad.as_mut_ptr();
        // SAFETY: p, ap and diag at offsets 0, field and 2·field of 3·n values, stride apart.
        let v = unsafe { PcgVectors { x: x.as_mut_ptr(), r: r.as_mut_ptr(), p: base, ap: base.add(field), diag: base.add(2 * field) as *const f64 } };
        let dense = Dense { m, n };
        // SAFETY: x and r hold n entries, p, ap and diag n each as laid out above; a team of one.
        let res = unsafe {
            if records {
                pcg(&mut Tm::default(), &mut Records(dense), v, n, params, Start::Residual)
            } else {
                pcg(&mut Tm::default(), &mut Recurrent(dense), v, n, params, Start::Residual)
            }
        };
        (x, r, res)
    }

    /// Row records take the same arithmetic as vectors apart: x, z and the outcome bit for bit,
    /// on a one-lane team (the GPU's loops) and on `Alone` (lane steps), after 1–8 iterations and
    /// at convergence.
    #[test]
    fn pcg_row_records_run_the_iterates_of_vectors_apart() {
        fn check<Tm: Team + Default>(label: &str, m: &[f64], b: &[f64], params: PcgParams) {
            let (xa, za, ra) = run_recurrent::<Tm>(m, b, params, false);
            let (xr, zr, rr) = run_recurrent::<Tm>(m, b, params, true);
            assert_eq!(ra, rr, "{label}: outcome");
            for (i, (a, r)) in xa.iter().zip(&xr).enumerate() {
                assert!(a.to_bits() == r.to_bits(), "{label}, x[{i}]: records {r} against apart {a}");
            }
            for (i, (a, r)) in za.iter().zip(&zr).enumerate() {
                assert!(a.to_bits() == r.to_bits(), "{label}, z[{i}]: records {r} against apart {a}");
            }
        }
        for (n, seed) in [(1, 21), (9, 22), (33, 23)] {
            let m = spd(n, seed);
            let b: Vec<f64> = (0..n).map(|i| 0.75 + (i % 4) as f64).collect();
            for k in 1..=8 {
                let params = PcgParams { rtol: 1e-300, max_iterations: k };
                check::<OneLane>(&std::format!("one lane, n {n}, {k} iterations"), &m, &b, params);
                check::<Alone>(&std::format!("Alone, n {n}, {k} iterations"), &m, &b, params);
            }
            let params = PcgParams { rtol: 1e-12, max_iterations: 200 };
            check::<OneLane>(&std::format!("one lane, n {n}, converged"), &m, &b, params);
            check::<Alone>(&std::format!("Alone, n {n}, converged"), &m, &b, params);
            let (x, _, res) = run_recurrent::<OneLane>(&m, &b, params, true);
            assert!(res.is_ok(), "n {n}: {res:?}");
            for i in 0..n {
                let mx: f64 = (0..n).map(|j| m[i * n + j] * x[j]).sum();
                assert!((mx - b[i]).abs() <= 1e-9 * b[i].abs(), "n {n} row {i}: M·x = {mx}, b = {}", b[i]);
            }
        }
    }

    #[test]
    fn pcg_reports_breakdown_on_an_indefinite_matrix() {
        for recurrent in FORMS {
            let m = [1.0, 0.0, 0.0, -1.0];
            let (_, res) = solve_with(&m, &[1.0, 1.0], PcgParams { rtol: 1e-10, max_iterations: 10 }, recurrent);
            assert!(matches!(res, Err(PcgError::Breakdown(_))), "recurrent {recurrent}: {res:?}");
        }
    }
}
