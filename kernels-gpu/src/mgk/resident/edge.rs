//! κe times both weights of a nonzero pair: the general interpreter and the one-term forms.
use super::real::ResidentReal;
use octile_types::mgk::layout::NZ_FEATURES;
use octile_types::{KernelSpec, PairKernel, Real, ResidentParams};
/// κe times both weights, for two nonzero rows `[w, features…]`; `A` is what the outer loop
/// keeps of its row.
pub(super) trait EdgeEval<T = f32> {
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

/// Any κe — or ∂κe for the gradients' contractions: the [`KernelSpec`] interpreter.
pub(super) struct General<'a, K = KernelSpec> {
    pub(super) spec: &'a K,
    pub(super) features: usize,
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
pub(super) unsafe fn weight_and<T: Copy>(row: *const T, f: usize) -> (T, T) {
    // SAFETY: caller's contract.
    unsafe { (*row, *row.add(NZ_FEATURES + f)) }
}

/// One base-kernel term `k(a, b)` on edge feature `f` (the specialized shapes: square exponential,
/// Kronecker delta), times both weights.
pub(super) struct OneTerm<K> {
    pub(super) f: usize,
    pub(super) k: K,
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

/// ∂κe ≡ 0: [`OnTheFly::row2_d`](super::on_the_fly::OnTheFly::row2_d) without a derivative row (its sum is dead code, removed).
pub(super) struct NoDerivative;
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

/// κe one square exponential in T: exp2(c2·(a − b)²), c2 = −log₂e / (2ℓ²).
#[inline(always)]
pub(super) fn sqexp<T: ResidentReal>(params: &ResidentParams) -> OneTerm<impl Fn(T, T) -> T> {
    let t = &params.edge_kernel.terms[0];
    let c2 = T::from_f64(t.coef * core::f64::consts::LOG2_E);
    OneTerm { f: t.feature as usize, k: move |a: T, b: T| T::exp2(c2 * (a - b) * (a - b)) }
}

/// κe one Kronecker delta in T: 1 where the labels agree, else h.
#[inline(always)]
pub(super) fn kdelta<T: ResidentReal>(params: &ResidentParams) -> OneTerm<impl Fn(T, T) -> T> {
    let t = &params.edge_kernel.terms[0];
    let h = T::from_f64(t.param);
    OneTerm { f: t.feature as usize, k: move |a: T, b: T| if a == b { T::ONE } else { h } }
}
