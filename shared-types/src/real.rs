//! The floating-point abstraction the solvers are generic over (`f32` on the GPU, `f64` everywhere).
//!
//! `core` has no `exp`; [`libm`] provides a pure-Rust one that compiles for nvptx64 and x86-64 alike,
//! so both sides evaluate base kernels with the same code.
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// A real scalar: `f32` or `f64`.
pub trait Real:
    Copy
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + Send
    + Sync
    + 'static
{
    /// 0
    const ZERO: Self;
    /// 1
    const ONE: Self;
    /// Size in bytes.
    const BYTES: usize;
    /// Name used in kernel names and reports (`"f32"` / `"f64"`).
    const NAME: &'static str;
    /// Conversion from `f64` (rounding to nearest).
    fn from_f64(v: f64) -> Self;
    /// Conversion to `f64` (exact).
    fn to_f64(self) -> f64;
    /// e^self.
    fn exp(self) -> Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const BYTES: usize = 4;
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    /// On the GPU: `ex2.approx.ftz.f32` of x·log₂e (one MUFU instruction, relative error ~2⁻²²
    /// plus the rounding of the product). The f32 path only ever uses it inside the inner solver of
    /// the mixed-precision refinement, whose residuals are computed in f64 with libm's `exp`, so the
    /// approximation costs accuracy of nothing but the preconditioner. On the CPU: libm.
    #[inline(always)]
    fn exp(self) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let y = self * core::f32::consts::LOG2_E;
            let r: f32;
            // SAFETY: a pure arithmetic instruction.
            unsafe { core::arch::asm!("ex2.approx.ftz.f32 {r}, {a};", r = out(reg32) r, a = in(reg32) y, options(pure, nomem, nostack, preserves_flags)) };
            r
        }
        #[cfg(all(not(target_arch = "nvptx64"), feature = "std"))]
        {
            f32::exp(self)
        }
        #[cfg(all(not(target_arch = "nvptx64"), not(feature = "std")))]
        {
            libm::expf(self)
        }
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const BYTES: usize = 8;
    const NAME: &'static str = "f64";
    #[inline(always)]
    fn from_f64(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    /// With the `std` feature (host builds): the platform's `exp`; else libm's.
    #[inline(always)]
    fn exp(self) -> f64 {
        #[cfg(feature = "std")]
        {
            f64::exp(self)
        }
        #[cfg(not(feature = "std"))]
        {
            libm::exp(self)
        }
    }
}
