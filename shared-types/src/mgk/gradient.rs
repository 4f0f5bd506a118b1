//! Hyperparameter gradients of the marginalized graph kernel by the adjoint method — the math
//! shared by the CPU solver, the dense reference and the GPU kernels.
//!
//! With M = D×V×⁻¹ − A×⊙E× (symmetric), b = D×·1, M x = b and K = p×ᵀx, the adjoint y solves
//! M y = p× (the same system, right-hand side p_i p′_i′), and for every hyperparameter θ
//!
//! ```text
//!   ∂K/∂θ = ∂p×ᵀ x + yᵀ (∂b − ∂M x)
//!
//!   p  (uniform starting probability):   ∂K/∂p = 2K / p
//!   q  (d_i = deg_i / (1 − q)):          ∂K/∂q = 2/(1 − q) · (K − Σ_k y_k dg_k x_k),  dg = d d′ / κv
//!   θ of κv:                             ∂K/∂θ = Σ_k y_k x_k · d d′ · ∂κv/∂θ / κv²
//!   θ of κe:                             ∂K/∂θ = Σ_k y_k Σ_{(j,j′)} w w′ ∂κe/∂θ(e, e′) x_(j,j′)
//! ```
//!
//! (yᵀb = K, so the q term needs no extra sum.) One extra solve per pair whatever the number of
//! hyperparameters, no finite differences: the node-side terms are one pass over the product
//! vector, each κe hyperparameter one XMV-shaped contraction with ∂κe ([`SpecDerivative`]) in
//! place of κe.
//!
//! The order of the hyperparameters is GraphDot's: p, q, then κv's terms, then κe's terms (each
//! term's parameter, then — additive combinations — its weight).
use crate::kernel_spec::{KernelSpec, MAX_TERMS, PairKernel, SpecDerivative};
use crate::mgk::node_table::{NodeSlot, NodeTable, TABLE_SLOTS};
use crate::mgk::params::PairStatus;
use crate::real::Real;

/// Which system a solve is for: the primal M x = D×·1 (K = p×ᵀx), or the adjoint M y = p×.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rhs {
    /// b = D×·1 (entry d_i d′_i′).
    Primal,
    /// b = p× (entry p_i p′_i′).
    Adjoint,
}

impl Rhs {
    /// Index into a node row (`mgk::layout`) of the factor of b: d for the primal, p for the adjoint.
    #[inline(always)]
    pub const fn node_slot(self) -> usize {
        match self {
            Rhs::Primal => crate::mgk::layout::NODE_D,
            Rhs::Adjoint => crate::mgk::layout::NODE_P,
        }
    }
    /// The other system's slot: the value of a solve is Σ over entries of its product with the
    /// solution (K = p×ᵀx = (D×1)ᵀy).
    #[inline(always)]
    pub const fn value_slot(self) -> usize {
        match self {
            Rhs::Primal => crate::mgk::layout::NODE_P,
            Rhs::Adjoint => crate::mgk::layout::NODE_D,
        }
    }
}

/// What a [`Hyper`] is (stored as `u32`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyperKind {
    /// p, the uniform starting probability.
    StartingProbability = 0,
    /// q, the stopping probability.
    StoppingProbability = 1,
    /// The parameter of κv's term `term`.
    NodeParam = 2,
    /// The weight of κv's term `term` (additive κv).
    NodeWeight = 3,
    /// The parameter of κe's term `term`.
    EdgeParam = 4,
    /// The weight of κe's term `term` (additive κe).
    EdgeWeight = 5,
}

/// One hyperparameter.
///
/// ```text
/// offset 0: kind              u32  HyperKind
/// offset 4: term              u32  index into κv's / κe's terms
/// offset 8: inv_total_weight  f64  1 / Σ ŵ of the combination (weights only)
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    /// [`HyperKind`] as `u32`.
    pub kind: u32,
    /// The term.
    pub term: u32,
    /// 1 / Σ ŵ.
    pub inv_total_weight: f64,
}

impl Hyper {
    /// A hyperparameter of `kind` on `term`.
    pub const fn new(kind: HyperKind, term: u32, inv_total_weight: f64) -> Self {
        Hyper { kind: kind as u32, term, inv_total_weight }
    }

    /// Whether its share is a sum over the product vector of [`node_share`] (q and κv's).
    #[inline(always)]
    pub fn is_node_side(&self) -> bool {
        self.kind == HyperKind::StoppingProbability as u32 || self.kind == HyperKind::NodeParam as u32 || self.kind == HyperKind::NodeWeight as u32
    }

    /// Whether it is a κe hyperparameter (its share comes from an XMV-shaped contraction).
    #[inline(always)]
    pub fn is_edge(&self) -> bool {
        self.kind == HyperKind::EdgeParam as u32 || self.kind == HyperKind::EdgeWeight as u32
    }

    /// ∂κ/∂θ for a κv or κe hyperparameter, on that kernel's `spec`.
    #[inline(always)]
    pub fn derivative<'a>(&self, spec: &'a KernelSpec) -> SpecDerivative<'a> {
        let weight = self.kind == HyperKind::NodeWeight as u32 || self.kind == HyperKind::EdgeWeight as u32;
        SpecDerivative { spec, term: self.term as usize, weight, inv_total_weight: self.inv_total_weight }
    }
}

/// Most hyperparameters: p, q and a parameter and a weight per term of κv and κe.
pub const MAX_HYPERPARAMETERS: usize = 2 + 4 * MAX_TERMS;

/// The hyperparameters of one gradient launch, in output order.
///
/// ```text
/// offset  0: n_hyper  u32
/// offset  4: _pad     u32
/// offset  8: q        f64
/// offset 16: p        f64
/// offset 24: hyper    [Hyper; MAX_HYPERPARAMETERS]   16 bytes each
/// offset 568: node_table  NodeTable                   1,304 bytes
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradientParams {
    /// Used entries of `hyper`.
    pub n_hyper: u32,
    /// Padding.
    pub _pad: u32,
    /// Stopping probability.
    pub q: f64,
    /// Starting probability.
    pub p: f64,
    /// The hyperparameters.
    pub hyper: [Hyper; MAX_HYPERPARAMETERS],
    /// κv and the node-side coefficients per mask where κv allows ([`GradientParams::with_node_table`]; the host
    /// fills it for the GPU's resident solver), else [`NodeTable::NONE`].
    pub node_table: NodeTable,
}

impl GradientParams {
    /// These parameters with κv's table for the node-side passes ([`NodeTable::build`]; `node`
    /// is κv) where κv allows one, else with [`NodeTable::NONE`].
    pub fn with_node_table(&self, node: &KernelSpec) -> GradientParams {
        let mut slots = [NodeSlot { stopping: false, term: 0, weight: false, inv_total_weight: 0.0 }; TABLE_SLOTS];
        let mut n = 0;
        for h in self.hypers().iter().filter(|h| h.is_node_side()) {
            if n == TABLE_SLOTS {
                return GradientParams { node_table: NodeTable::NONE, ..*self };
            }
            slots[n] = NodeSlot {
                stopping: h.kind == HyperKind::StoppingProbability as u32,
                term: h.term,
                weight: h.kind == HyperKind::NodeWeight as u32,
                inv_total_weight: h.inv_total_weight,
            };
            n += 1;
        }
        GradientParams { node_table: NodeTable::build(node, self.q, &slots[..n]), ..*self }
    }

    /// The used hyperparameters.
    #[inline(always)]
    pub fn hypers(&self) -> &[Hyper] {
        let n = if (self.n_hyper as usize) < MAX_HYPERPARAMETERS { self.n_hyper as usize } else { MAX_HYPERPARAMETERS };
        &self.hyper[..n]
    }
}

/// This product-graph entry's share of ∂K/∂θ for a hyperparameter that is not κe's: `f1`, `f2` the
/// two nodes' features, `dd` = d_i d′_i′, `x`, `y` the primal and adjoint entries. κe's
/// hyperparameters and p get 0 here (see [`finish`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn node_share<S: Real>(h: &Hyper, gp: &GradientParams, node: &KernelSpec, f1: &[S], f2: &[S], dd: f64, x: f64, y: f64) -> f64 {
    if !h.is_node_side() {
        return 0.0;
    }
    let inv_kv = 1.0 / node.eval_as::<f64, S>(f1, f2);
    node_share_kv(h, gp, node, f1, f2, y * x * dd * inv_kv, inv_kv)
}

/// [`node_share`] with the entry's common factor `base` = y·x·D×/κv(f1, f2) and 1/κv given, so
/// that one pass over the product vector evaluates κv, and divides by it, once for several
/// hyperparameters: −2/(1 − q)·base for q, base/κv·∂κv/∂θ for κv's θ.
#[inline(always)]
pub fn node_share_kv<S: Real>(h: &Hyper, gp: &GradientParams, node: &KernelSpec, f1: &[S], f2: &[S], base: f64, inv_kv: f64) -> f64 {
    match h.kind {
        1 => -2.0 / (1.0 - gp.q) * base,
        2 | 3 => base * inv_kv * h.derivative(node).eval_as::<f64, S>(f1, f2),
        _ => 0.0,
    }
}

/// Node-side hyperparameters (q, κv's) one pass over the product vector takes at once.
pub const NODE_PASS: usize = 4;

/// The status of a pair from its primal and adjoint solves: the primal's value, the worse
/// residual, the iterations of both, converged when both did.
#[inline(always)]
pub fn combined(primal: PairStatus, adjoint: PairStatus) -> PairStatus {
    PairStatus {
        value: primal.value,
        residual: if primal.residual >= adjoint.residual { primal.residual } else { adjoint.residual },
        iterations: primal.iterations + adjoint.iterations,
        converged: primal.converged & adjoint.converged,
    }
}

/// Scratch of one pair of the GPU tile solver's gradient entries, in f64 elements: the solver's
/// (`scratch_len`) and the adjoint y after it.
///
/// ```text
/// T = f64: [ x | r | p | ap | diag | y ]                 6·len f64
/// T = f32: [ x64 | r64 | x32 r32 p32 ap32 diag32 | · | y ]  y at 5·len
/// ```
pub const fn gradient_scratch_len(n: usize, m: usize) -> usize {
    crate::mgk::tiling::scratch_len(n, m) + crate::mgk::tiling::padded_len(n, m)
}

/// ∂K/∂θ from the pair's value `k` and the sum of its entries' shares (`shares`: [`node_share`] for
/// κv's hyperparameters and q, the contraction for κe's).
#[inline(always)]
pub fn finish(h: &Hyper, gp: &GradientParams, k: f64, shares: f64) -> f64 {
    match h.kind {
        0 => 2.0 * k / gp.p,
        1 => 2.0 * k / (1.0 - gp.q) + shares,
        _ => shares,
    }
}

const _: () = assert!(core::mem::size_of::<Hyper>() == 16 && core::mem::align_of::<Hyper>() == 8);
const _: () = assert!(core::mem::size_of::<GradientParams>() == 24 + 16 * MAX_HYPERPARAMETERS + core::mem::size_of::<NodeTable>());
const _: () = assert!(core::mem::align_of::<GradientParams>() == 8);

/// Tests of [`NodeTable`] against [`node_share`], here because the table's module is below this one.
#[cfg(test)]
mod node_table_tests {
    use super::*;
    use crate::kernel_spec::{BaseKernel, Combine};
    use crate::mgk::node_table::TABLE_TERMS;

    /// xorshift64, seeded: the test's only randomness.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// GradientParams with p, q, each κv term's parameter (and weight where additive), one κe
    /// parameter — the host's order.
    fn params(node: &KernelSpec, q: f64) -> GradientParams {
        let mut gp = GradientParams {
            n_hyper: 0,
            _pad: 0,
            q,
            p: 1.0,
            hyper: [Hyper::new(HyperKind::StartingProbability, 0, 0.0); MAX_HYPERPARAMETERS],
            node_table: NodeTable::NONE,
        };
        let total: f64 = node.terms().iter().map(|t| t.weight).sum();
        let mut push = |h: Hyper| {
            gp.hyper[gp.n_hyper as usize] = h;
            gp.n_hyper += 1;
        };
        push(Hyper::new(HyperKind::StartingProbability, 0, 0.0));
        push(Hyper::new(HyperKind::StoppingProbability, 0, 0.0));
        for k in 0..node.n_terms {
            push(Hyper::new(HyperKind::NodeParam, k, 0.0));
            if node.combine == Combine::Additive as u32 {
                push(Hyper::new(HyperKind::NodeWeight, k, 1.0 / total));
            }
        }
        push(Hyper::new(HyperKind::EdgeParam, 0, 0.0));
        gp
    }

    #[test]
    fn table_gives_node_share_and_kv_at_every_entry() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..500 {
            let mut node = KernelSpec::unit();
            node.combine = if rng.below(3) == 0 { Combine::Additive as u32 } else { Combine::Product as u32 };
            // (an additive κv has at least one term: the host's validation)
            let additive = node.combine == Combine::Additive as u32;
            let n = if additive { 1 + rng.below(TABLE_TERMS) } else { rng.below(TABLE_TERMS + 1) };
            node.n_terms = n as u32;
            for k in 0..n {
                // features 0..3 (two terms may share one), now and then a constant
                node.terms[k] = if rng.below(5) == 0 {
                    BaseKernel::constant(0.1 + 0.9 * rng.unit())
                } else {
                    BaseKernel::kronecker_delta(rng.below(3) as u32, 0.05 + 0.95 * rng.unit())
                };
                node.terms[k].weight = 0.2 + rng.unit();
            }
            let gp = params(&node, 0.01 + 0.6 * rng.unit());
            let table = gp.with_node_table(&node).node_table;
            assert_eq!(table.used, 1, "case {case}: {node:?}");
            for _ in 0..20 {
                let f1: [f32; 3] = core::array::from_fn(|_| rng.below(2) as f32);
                let f2: [f32; 3] = core::array::from_fn(|_| rng.below(2) as f32);
                let (x, y, dd) = (rng.unit() + 0.1, rng.unit() - 0.5, 0.5 + 3.0 * rng.unit());
                let m = table.mask(&f1, &f2);
                let kv: f64 = node.eval_as::<f64, f32>(&f1, &f2);
                assert!(table.kv[m].to_bits() == kv.to_bits(), "case {case}, mask {m}, f1 {f1:?}, f2 {f2:?}, {node:?}: table κv {:e}, κv {kv:e}", table.kv[m]);
                for (s, h) in gp.hypers().iter().filter(|h| h.is_node_side()).enumerate() {
                    let got = y * x * dd * table.coef[m][s];
                    let want = node_share(h, &gp, &node, &f1, &f2, dd, x, y);
                    let err = (got - want).abs();
                    assert!(
                        err <= 1e-14 * want.abs().max(1e-300) || err == 0.0,
                        "case {case}, mask {m}, slot {s} ({h:?}), f1 {f1:?}, f2 {f2:?}, {node:?}: table {got:e}, node_share {want:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn kernels_past_the_table_get_none() {
        let mut sq = KernelSpec::unit();
        sq.n_terms = 1;
        sq.terms[0] = BaseKernel::square_exponential(0, 1.0);
        assert_eq!(params(&sq, 0.1).with_node_table(&sq).node_table.used, 0);
        let mut many = KernelSpec::unit();
        many.n_terms = TABLE_TERMS as u32 + 1;
        for k in 0..TABLE_TERMS + 1 {
            many.terms[k] = BaseKernel::kronecker_delta(k as u32, 0.5);
        }
        assert_eq!(params(&many, 0.1).with_node_table(&many).node_table.used, 0);
        // κv a Kronecker delta times a square exponential: interpreted, no table
        let mut mixed = KernelSpec::unit();
        mixed.n_terms = 2;
        mixed.terms[0] = BaseKernel::kronecker_delta(0, 0.5);
        mixed.terms[1] = BaseKernel::square_exponential(1, 1.0);
        assert_eq!(params(&mixed, 0.1).with_node_table(&mixed).node_table.used, 0);
        // κv ≡ 1: one mask, κv 1 and q's coefficient −2/(1 − q)
        let unit = KernelSpec::unit();
        let t = params(&unit, 0.1).with_node_table(&unit).node_table;
        assert_eq!((t.used, t.kv[0], t.coef[0][0]), (1, 1.0, -2.0 / 0.9), "unit κv: {t:?}");
    }
}
