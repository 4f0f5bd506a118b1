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
    + Entry<Scalar = Self>
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

/// One entry of the PCG's vectors (`crate::pcg`): a real (`f32`, `f64`), or a [`Pair`] — entry k of two systems
/// with the same matrix solved as one (diag(M, M), the halves interleaved). α, β and the
/// preconditioner's diagonal are [`Entry::Scalar`]s; dot products are f64.
pub trait Entry: Copy + Default {
    /// α, β and diag(M)'s type.
    type Scalar: Real;
    /// self + a·x.
    fn axpy(self, a: Self::Scalar, x: Self) -> Self;
    /// self · s.
    fn scale(self, s: Self::Scalar) -> Self;
    /// self / d.
    fn div(self, d: Self::Scalar) -> Self;
    /// self · o in f64.
    fn dot(self, o: Self) -> f64;
    /// acc + self · o in f64: the same value as `acc + self.dot(o)` wherever the product is
    /// exact in f64 (f32 entries), one DFMA instead of a DMUL and a DADD on the GPU.
    #[inline(always)]
    fn dot_add(self, o: Self, acc: f64) -> f64 {
        acc + self.dot(o)
    }
}

macro_rules! real_entry {
    ($($t:ty $(=> $exact:ident)?),*) => {$(
        impl Entry for $t {
            type Scalar = $t;
            #[inline(always)]
            fn axpy(self, a: $t, x: $t) -> $t {
                self + a * x
            }
            #[inline(always)]
            fn scale(self, s: $t) -> $t {
                self * s
            }
            #[inline(always)]
            fn div(self, d: $t) -> $t {
                self / d
            }
            #[inline(always)]
            fn dot(self, o: $t) -> f64 {
                self.to_f64() * o.to_f64()
            }
            $(
            #[inline(always)]
            fn dot_add(self, o: $t, acc: f64) -> f64 {
                // the widened f32 product is exact (24 + 24 bits < 53): one rounding either way
                $exact(self.to_f64(), o.to_f64(), acc)
            }
            )?
        }
    )*};
}
real_entry!(f32 => fma64, f64);

/// a·b + c in f64 rounded once: `fma.rn.f64` on the GPU (rustc contracts no multiply and add by
/// itself); a·b + c elsewhere, where only exact products (widened f32 values) reach it, so the two
/// agree bit for bit.
#[inline(always)]
pub fn fma64(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u64;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!(
                "fma.rn.f64 {r}, {a}, {b}, {c};",
                r = out(reg64) r,
                a = in(reg64) a.to_bits(),
                b = in(reg64) b.to_bits(),
                c = in(reg64) c.to_bits(),
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        f64::from_bits(r)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// a·b + c rounded once (`fma.rn.f32` on the GPU; a·b + c elsewhere, where no solver uses pairs
/// or the resident XMV).
#[inline(always)]
pub fn fma32(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f32;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack, preserves_flags))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// Entry k of two systems solved as one (the fused primal and adjoint solve of the gradients),
/// 8-byte aligned.
///
/// ```text
/// a vector of pairs:  [ x₀ y₀ | x₁ y₁ | … ]   entry k at byte 8·k
/// ```
/// Why aligned: a `[f32; 2]` is 4-byte aligned, so the GPU compiler reads one with two 32-bit
/// loads; aligned to 8 it is one 64-bit load (`LDS.64`, `LD.64`) — half the load instructions of
/// the fused solve, whose shared-memory pipe is its busiest unit.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pair(pub [f32; 2]);

const _: () = assert!(core::mem::size_of::<Pair>() == 8 && core::mem::align_of::<Pair>() == 8);

/// The dot product sums the two halves' products in f32 and converts once: every dot the solver
/// takes of an entry pair (r·z = r²/diag, r·r) has two non-negative terms, so the f32 sum loses
/// nothing a residual test could see, and the f64 sum over the vector stays.
impl Entry for Pair {
    type Scalar = f32;
    #[inline(always)]
    fn axpy(self, a: f32, x: Pair) -> Pair {
        Pair([fma32(a, x.0[0], self.0[0]), fma32(a, x.0[1], self.0[1])])
    }
    #[inline(always)]
    fn scale(self, s: f32) -> Pair {
        Pair([self.0[0] * s, self.0[1] * s])
    }
    #[inline(always)]
    fn div(self, d: f32) -> Pair {
        Pair([self.0[0] / d, self.0[1] / d])
    }
    #[inline(always)]
    fn dot(self, o: Pair) -> f64 {
        fma32(self.0[0], o.0[0], self.0[1] * o.0[1]) as f64
    }
}
