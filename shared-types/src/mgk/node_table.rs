//! κv's values and the node-side gradient coefficients as a table over which κv terms match.
//!
//! Where κv is made of Kronecker deltas and constants only (labeled molecules, MUTAG, the synthetic
//! sets), its value at a product entry (i, i′) and every node-side share of ∂K/∂θ
//! ([`node_share`](super::gradient::node_share)) depend on the two nodes only through the *mask*:
//! bit t set where term t's feature is equal on both nodes. So the host evaluates them once per
//! mask, with the same functions and in the same order as at an entry (bit for bit the same
//! values), and a pass over the product vector reads one table entry instead of interpreting
//! every term of κv and of each derivative — a chain of dependent loads per term that made the
//! GPU gradient's node pass a fifth of its time on ChEMBL (`results/gradient-h200-6.md`).
//!
//! ```text
//! mask m = Σ_t [f_i[feature_t] == f′_i′[feature_t]] · 2^t          (constant terms: bit 0)
//! kv[m]          = κv(i, i′)
//! coef[m][s]     = −2/(1 − q) / κv                  s the q hyperparameter
//!                  ∂κv/∂θ / κv / κv                 s a κv parameter or weight
//! share of θ_s at (i, i′) = y · x · d d′ · coef[m][s]
//! ```
//! `s` counts the node-side hyperparameters (q, κv's) in output order.
use super::gradient::{GradientParams, HyperKind};
use crate::kernel_spec::{BaseKernelKind, KernelSpec, PairKernel};

/// Most κv terms a table covers.
pub const TABLE_TERMS: usize = 4;
/// Masks of a table.
pub const TABLE_MASKS: usize = 1 << TABLE_TERMS;
/// Most node-side hyperparameters of a table's κv: q, a parameter and a weight per term.
pub const TABLE_SLOTS: usize = 1 + 2 * TABLE_TERMS;
/// [`NodeTable::feature`] of a term that reads no feature (a constant).
pub const NO_FEATURE: u32 = u32::MAX;

/// The table of one gradient launch (in [`GradientParams`]).
///
/// ```text
/// offset    0: used     u32                      1: κv fits a table, 0: the passes interpret κv
/// offset    4: n_terms  u32
/// offset    8: feature  [u32; 4]                 NO_FEATURE for constants
/// offset   24: kv       [f64; 16]
/// offset  152: coef     [[f64; 9]; 16]           mask-major
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeTable {
    /// 1 where the table holds κv (Kronecker deltas and constants, at most [`TABLE_TERMS`] terms).
    pub used: u32,
    /// κv's terms.
    pub n_terms: u32,
    /// The feature each term compares.
    pub feature: [u32; TABLE_TERMS],
    /// κv per mask.
    pub kv: [f64; TABLE_MASKS],
    /// The node-side coefficients per mask.
    pub coef: [[f64; TABLE_SLOTS]; TABLE_MASKS],
}

impl NodeTable {
    /// No table: the passes evaluate κv term by term.
    pub const NONE: NodeTable =
        NodeTable { used: 0, n_terms: 0, feature: [NO_FEATURE; TABLE_TERMS], kv: [0.0; TABLE_MASKS], coef: [[0.0; TABLE_SLOTS]; TABLE_MASKS] };

    /// The table of `node` (κv) for `gp`'s node-side hyperparameters, or [`NodeTable::NONE`] where
    /// κv has another kind of term, more than [`TABLE_TERMS`] terms or `gp` more node-side
    /// hyperparameters than [`TABLE_SLOTS`].
    pub fn of(node: &KernelSpec, gp: &GradientParams) -> NodeTable {
        let terms = node.terms();
        let hy = gp.hypers();
        let slots = hy.iter().filter(|h| h.is_node_side()).count();
        let tabled = |k: u32| k == BaseKernelKind::KroneckerDelta as u32 || k == BaseKernelKind::Constant as u32;
        if terms.len() > TABLE_TERMS || slots > TABLE_SLOTS || !terms.iter().all(|t| tabled(t.kind)) {
            return NodeTable::NONE;
        }
        let mut t = NodeTable::NONE;
        t.used = 1;
        t.n_terms = terms.len() as u32;
        // rows of features that realize each mask: f′ = f except where a Kronecker delta's bit is
        // clear (masks that no pair of nodes can give — two terms on one feature, bits differing —
        // come out as another mask's values and are never read)
        let mut a = [0.0f64; TABLE_TERMS];
        let mut b = [0.0f64; TABLE_TERMS];
        // feature indices renumbered into the rows' first TABLE_TERMS places
        let mut local = *node;
        for (k, term) in terms.iter().enumerate() {
            let kronecker = term.kind == BaseKernelKind::KroneckerDelta as u32;
            t.feature[k] = if kronecker { term.feature } else { NO_FEATURE };
            // the first term on this feature gives its place
            let place = terms[..=k].iter().position(|o| o.kind == term.kind && o.feature == term.feature && kronecker).unwrap_or(k);
            local.terms[k].feature = place as u32;
        }
        for m in 0..(1usize << terms.len()) {
            for (k, term) in terms.iter().enumerate() {
                if term.kind == BaseKernelKind::KroneckerDelta as u32 {
                    let place = local.terms[k].feature as usize;
                    // the first term on a feature decides its rows
                    if place == k {
                        a[place] = 0.0;
                        b[place] = if m >> k & 1 == 1 { 0.0 } else { 1.0 };
                    }
                }
            }
            let kv = local.eval_as::<f64, f64>(&a, &b);
            t.kv[m] = kv;
            let inv_kv = 1.0 / kv;
            for (s, h) in hy.iter().filter(|h| h.is_node_side()).enumerate() {
                t.coef[m][s] = if h.kind == HyperKind::StoppingProbability as u32 {
                    -2.0 / (1.0 - gp.q) * inv_kv
                } else {
                    inv_kv * inv_kv * h.derivative(&local).eval_as::<f64, f64>(&a, &b)
                };
            }
        }
        t
    }

    /// The mask of product entry (i, i′) from the two nodes' features (`n_terms` ≤ [`TABLE_TERMS`]).
    #[inline(always)]
    pub fn mask<S: crate::real::Real>(&self, f1: &[S], f2: &[S]) -> usize {
        let mut m = 0usize;
        for k in 0..TABLE_TERMS {
            let f = self.feature[k];
            if (k as u32) < self.n_terms && f != NO_FEATURE && f1[f as usize] == f2[f as usize] {
                m |= 1 << k;
            }
        }
        m
    }
}

const _: () = assert!(core::mem::size_of::<NodeTable>() == 24 + 8 * TABLE_MASKS + 8 * TABLE_SLOTS * TABLE_MASKS);
const _: () = assert!(core::mem::align_of::<NodeTable>() == 8);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_spec::{BaseKernel, Combine};
    use crate::mgk::gradient::{Hyper, MAX_HYPERPARAMETERS, node_share};

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
            let table = NodeTable::of(&node, &gp);
            assert_eq!(table.used, 1, "case {case}: {node:?}");
            for _ in 0..20 {
                let f1: [f32; 3] = core::array::from_fn(|_| rng.below(2) as f32);
                let f2: [f32; 3] = core::array::from_fn(|_| rng.below(2) as f32);
                let (x, y, dd) = (rng.unit() + 0.1, rng.unit() - 0.5, 0.5 + 3.0 * rng.unit());
                let m = table.mask(&f1, &f2);
                let kv: f64 = node.eval_as::<f64, f32>(&f1, &f2);
                assert!(table.kv[m].to_bits() == kv.to_bits(), "case {case}, mask {m}: table κv {:e}, κv {kv:e}", table.kv[m]);
                for (s, h) in gp.hypers().iter().filter(|h| h.is_node_side()).enumerate() {
                    let got = y * x * dd * table.coef[m][s];
                    let want = node_share(h, &gp, &node, &f1, &f2, dd, x, y);
                    let err = (got - want).abs();
                    assert!(err <= 1e-14 * want.abs().max(1e-300) || err == 0.0, "case {case}, mask {m}, slot {s} ({h:?}): table {got:e}, node_share {want:e}");
                }
            }
        }
    }

    #[test]
    fn kernels_past_the_table_get_none() {
        let mut sq = KernelSpec::unit();
        sq.n_terms = 1;
        sq.terms[0] = BaseKernel::square_exponential(0, 1.0);
        assert_eq!(NodeTable::of(&sq, &params(&sq, 0.1)).used, 0);
        let mut many = KernelSpec::unit();
        many.n_terms = TABLE_TERMS as u32 + 1;
        for k in 0..TABLE_TERMS + 1 {
            many.terms[k] = BaseKernel::kronecker_delta(k as u32, 0.5);
        }
        assert_eq!(NodeTable::of(&many, &params(&many, 0.1)).used, 0);
        let unit = KernelSpec::unit();
        let t = NodeTable::of(&unit, &params(&unit, 0.1));
        assert_eq!((t.used, t.kv[0]), (1, 1.0));
    }
}
