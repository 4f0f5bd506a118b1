//! The precision of a resident solve: f32 or f64 ([`ResidentReal`]).
use crate::intrinsics::{add_by_bit0_f32, add_by_bit0_f64, add_pair_by_bit0_f32, atomic_add_shared_f32, atomic_add_shared_f64, rcp_approx, rcp_approx_f64};
use octile_types::Real;
use octile_types::real::{fma32, fma64};
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

/// `ex2.approx.ftz.f32` (one MUFU instruction).
#[inline(always)]
pub(super) fn ex2(x: f32) -> f32 {
    let r: f32;
    // SAFETY: a pure arithmetic instruction.
    unsafe { core::arch::asm!("ex2.approx.ftz.f32 {r}, {a};", r = out(reg32) r, a = in(reg32) x, options(pure, nomem, nostack, preserves_flags)) };
    r
}
