//! Base kernels on node and edge features, and their combination into κv / κe.
//!
//! A [`KernelSpec`] is a fixed-size, `#[repr(C)]` description that travels to the GPU inside the
//! solver parameters; [`KernelSpec::eval`] is the one implementation of the math, used by the CPU
//! solver, the dense reference and the GPU kernels alike.
//!
//! Features are addressed by index into a graph's per-node (or per-edge) feature row; the host maps
//! feature *names* to indices when it packs graphs.
use crate::real::Real;

/// Most base kernels one [`KernelSpec`] may combine.
pub const MAX_TERMS: usize = 8;

/// Which base kernel a [`BaseKernel`] is. Stored as `u32` in the `#[repr(C)]` struct.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseKernelKind {
    /// κ(a, b) = c
    Constant = 0,
    /// κ(a, b) = 1 if a == b else h
    KroneckerDelta = 1,
    /// κ(a, b) = exp(−(a − b)² / (2ℓ²))
    SquareExponential = 2,
}

impl BaseKernelKind {
    /// Decode the `u32` stored in a [`BaseKernel`]; `None` for an unknown code.
    #[inline(always)]
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Constant),
            1 => Some(Self::KroneckerDelta),
            2 => Some(Self::SquareExponential),
            _ => None,
        }
    }
}

/// How the terms of a [`KernelSpec`] combine.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Tensor product: κ = Π_k κ_k (the default; GraphDot's `TensorProduct`).
    Product = 0,
    /// Weighted sum: κ = Σ_k w_k κ_k with Σ_k w_k = 1 (the host normalises the weights).
    Additive = 1,
}

/// One base kernel applied to one feature.
///
/// ```text
/// offset  0: kind    u32   BaseKernelKind
/// offset  4: feature u32   index into the node/edge feature row
/// offset  8: param   f64   c (Constant), h (KroneckerDelta), ℓ (SquareExponential)
/// offset 16: coef    f64   −1/(2ℓ²) for SquareExponential (precomputed), else 0
/// offset 24: weight  f64   weight in an Additive combination (1 in a Product)
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaseKernel {
    /// [`BaseKernelKind`] as `u32`.
    pub kind: u32,
    /// Index of the feature this kernel reads.
    pub feature: u32,
    /// The hyperparameter: c, h or ℓ.
    pub param: f64,
    /// Precomputed −1/(2ℓ²) for the square exponential.
    pub coef: f64,
    /// Weight in an additive combination.
    pub weight: f64,
}

impl BaseKernel {
    /// κ(a, b) = c.
    pub const fn constant(c: f64) -> Self {
        BaseKernel { kind: BaseKernelKind::Constant as u32, feature: 0, param: c, coef: 0.0, weight: 1.0 }
    }
    /// κ(a, b) = 1 if a == b else h, on feature `feature`.
    pub const fn kronecker_delta(feature: u32, h: f64) -> Self {
        BaseKernel { kind: BaseKernelKind::KroneckerDelta as u32, feature, param: h, coef: 0.0, weight: 1.0 }
    }
    /// κ(a, b) = exp(−(a − b)²/(2ℓ²)), on feature `feature`.
    pub fn square_exponential(feature: u32, length_scale: f64) -> Self {
        BaseKernel { kind: BaseKernelKind::SquareExponential as u32, feature, param: length_scale, coef: -0.5 / (length_scale * length_scale), weight: 1.0 }
    }
    /// Whether the hyperparameter is inside its valid range. `strictly_positive`: the kernel must
    /// never be 0 (node kernels: V× is inverted).
    pub fn is_valid(&self, strictly_positive: bool) -> bool {
        let p = self.param;
        if !p.is_finite() {
            return false;
        }
        match BaseKernelKind::from_u32(self.kind) {
            Some(BaseKernelKind::Constant) | Some(BaseKernelKind::KroneckerDelta) => p <= 1.0 && if strictly_positive { p > 0.0 } else { p >= 0.0 },
            Some(BaseKernelKind::SquareExponential) => p > 0.0 && (self.coef - (-0.5 / (p * p))).abs() <= 1e-12 * self.coef.abs(),
            None => false,
        }
    }

    /// κ(a, b) on the two feature rows.
    ///
    /// # Panics
    /// If `feature` is out of range of either row (on the GPU: `trap`). The host validates feature
    /// indices when it builds a spec, so this never fires on validated input.
    #[inline(always)]
    pub fn eval<T: Real>(&self, a: &[T], b: &[T]) -> T {
        self.eval_as::<T, T>(a, b)
    }

    /// κ(a, b) in precision T on feature rows stored in precision S (the GPU's f64 residual check
    /// reads the f32 rows it solved with).
    #[inline(always)]
    pub fn eval_as<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T {
        match self.kind {
            0 => T::from_f64(self.param),
            1 => {
                let f = self.feature as usize;
                if a[f] == b[f] { T::ONE } else { T::from_f64(self.param) }
            }
            _ => {
                let f = self.feature as usize;
                let d = T::from_f64(a[f].to_f64()) - T::from_f64(b[f].to_f64());
                (T::from_f64(self.coef) * d * d).exp()
            }
        }
    }
}

impl BaseKernel {
    /// ∂κ(a, b)/∂(its hyperparameter): 1 (Constant), 1 − δ(a, b) (KroneckerDelta),
    /// (a − b)²/ℓ³ · κ(a, b) (SquareExponential).
    #[inline(always)]
    pub fn eval_d<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T {
        match self.kind {
            0 => T::ONE,
            1 => {
                let f = self.feature as usize;
                if a[f] == b[f] { T::ZERO } else { T::ONE }
            }
            _ => {
                let f = self.feature as usize;
                let d = T::from_f64(a[f].to_f64()) - T::from_f64(b[f].to_f64());
                let l = T::from_f64(self.param);
                d * d / (l * l * l) * (T::from_f64(self.coef) * d * d).exp()
            }
        }
    }
}

/// A kernel on two feature rows: κv / κe ([`KernelSpec`]) or one of their derivatives
/// ([`SpecDerivative`]); the tile-pair primitives are written once over it.
pub trait PairKernel {
    /// κ(a, b) in precision T over feature rows stored in precision S.
    fn eval_as<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T;
    /// κ(a, b) in the rows' precision.
    #[inline(always)]
    fn eval<T: Real>(&self, a: &[T], b: &[T]) -> T {
        self.eval_as::<T, T>(a, b)
    }
}

impl PairKernel for KernelSpec {
    #[inline(always)]
    fn eval_as<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T {
        KernelSpec::eval_as(self, a, b)
    }
}

/// ∂κ/∂θ for one hyperparameter θ of a [`KernelSpec`]: the parameter of term `term` (c, h or ℓ),
/// or — `weight` — the (unnormalized) weight ŵ_term of an additive combination, whose stored
/// weights are w_k = ŵ_k / Σ ŵ (`inv_total_weight` = 1 / Σ ŵ):
///
/// ```text
///   product   κ = Π κ_k       ∂κ/∂θ_t = ∂κ_t/∂θ_t · Π_{k≠t} κ_k
///   additive  κ = Σ w_k κ_k   ∂κ/∂θ_t = w_t · ∂κ_t/∂θ_t,   ∂κ/∂ŵ_t = (κ_t − κ) / Σ ŵ
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SpecDerivative<'a> {
    /// The kernel.
    pub spec: &'a KernelSpec,
    /// Which term.
    pub term: usize,
    /// The term's weight rather than its parameter.
    pub weight: bool,
    /// 1 / Σ ŵ (additive weights only).
    pub inv_total_weight: f64,
}

impl PairKernel for SpecDerivative<'_> {
    #[inline(always)]
    fn eval_as<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T {
        let terms = self.spec.terms();
        if self.term >= terms.len() {
            return T::ZERO;
        }
        if self.weight {
            return (terms[self.term].eval_as::<T, S>(a, b) - self.spec.eval_as::<T, S>(a, b)) * T::from_f64(self.inv_total_weight);
        }
        if self.spec.combine == Combine::Additive as u32 {
            return T::from_f64(terms[self.term].weight) * terms[self.term].eval_d::<T, S>(a, b);
        }
        let mut s = T::ONE;
        for (k, t) in terms.iter().enumerate() {
            s *= if k == self.term { t.eval_d::<T, S>(a, b) } else { t.eval_as::<T, S>(a, b) };
        }
        s
    }
}

/// κv or κe: up to [`MAX_TERMS`] base kernels combined by product or weighted sum.
///
/// ```text
/// offset 0: combine  u32            Combine
/// offset 4: n_terms  u32            terms[..n_terms] are used
/// offset 8: terms    [BaseKernel; 8] 32 bytes each
/// ```
/// With `n_terms == 0` the kernel is the constant 1 (unlabeled graphs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSpec {
    /// [`Combine`] as `u32`.
    pub combine: u32,
    /// Number of used terms.
    pub n_terms: u32,
    /// The base kernels.
    pub terms: [BaseKernel; MAX_TERMS],
}

impl KernelSpec {
    /// κ ≡ 1.
    pub const fn unit() -> Self {
        KernelSpec { combine: Combine::Product as u32, n_terms: 0, terms: [BaseKernel::constant(1.0); MAX_TERMS] }
    }

    /// The used terms.
    #[inline(always)]
    pub fn terms(&self) -> &[BaseKernel] {
        let n = if (self.n_terms as usize) < MAX_TERMS { self.n_terms as usize } else { MAX_TERMS };
        &self.terms[..n]
    }

    /// κ(a, b) over two feature rows.
    #[inline(always)]
    pub fn eval<T: Real>(&self, a: &[T], b: &[T]) -> T {
        self.eval_as::<T, T>(a, b)
    }

    /// κ(a, b) in precision T over feature rows stored in precision S.
    #[inline(always)]
    pub fn eval_as<T: Real, S: Real>(&self, a: &[S], b: &[S]) -> T {
        let terms = self.terms();
        if self.combine == Combine::Additive as u32 {
            let mut s = T::ZERO;
            for t in terms {
                s += T::from_f64(t.weight) * t.eval_as::<T, S>(a, b);
            }
            s
        } else {
            let mut s = T::ONE;
            for t in terms {
                s *= t.eval_as::<T, S>(a, b);
            }
            s
        }
    }

    /// Whether the feature value `v` can be used exactly by the kernels in `T` precision: a feature
    /// read by a Kronecker delta must be an integer that `f32` represents exactly (|v| < 2²⁴), since
    /// the GPU compares it after conversion.
    pub fn categorical_ok(v: f64) -> bool {
        v.is_finite() && v == (v as i64) as f64 && v.abs() < 16_777_216.0
    }
}

const _: () = assert!(core::mem::size_of::<BaseKernel>() == 32 && core::mem::align_of::<BaseKernel>() == 8);
const _: () = assert!(core::mem::size_of::<KernelSpec>() == 8 + 32 * MAX_TERMS);
const _: () = assert!(core::mem::align_of::<KernelSpec>() == 8);
