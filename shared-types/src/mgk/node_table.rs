//! κv's values and the node-side gradient coefficients as a table over which κv terms match.
//!
//! Where κv is made of Kronecker deltas and constants only (labeled molecules, MUTAG, the synthetic
//! sets), its value at a product entry (i, i′) and every node-side share of ∂K/∂θ
//! ([`node_share`](super::gradient::node_share)) depend on the two nodes only through the *mask*:
//! bit t set where term t's feature is equal on both nodes. So the host evaluates them once per
//! mask, with the same functions and in the same order as at an entry (κv bit for bit; the
//! coefficients within about an ulp of [`node_share`](super::gradient::node_share)'s, its
//! products regrouped), and a pass over the product vector reads one table entry instead of
//! interpreting every term of κv and of each derivative — a chain of dependent loads per term that
//! made the GPU gradient's node pass a quarter of its time on ChEMBL (`results/gradient-h100-6.md`).
//!
//! ```text
//! mask m = Σ_t [f_i[feature_t] == f′_i′[feature_t]] · 2^t          (constant terms: bit 0)
//! kv[m]          = κv(i, i′)
//! coef[m][s]     = −2/(1 − q) / κv                  s the q hyperparameter
//!                  ∂κv/∂θ / κv / κv                 s a κv parameter or weight
//! share of θ_s at (i, i′) = y · x · d d′ · coef[m][s]
//! ```
//! `s` counts the node-side hyperparameters (q, κv's) in output order.
use crate::kernel_spec::{BaseKernelKind, KernelSpec, PairKernel, SpecDerivative};

/// Most κv terms a table covers.
pub const TABLE_TERMS: usize = 4;
/// Masks of a table.
pub const TABLE_MASKS: usize = 1 << TABLE_TERMS;
/// Most node-side hyperparameters of a table's κv: q, a parameter and a weight per term.
pub const TABLE_SLOTS: usize = 1 + 2 * TABLE_TERMS;
/// [`NodeTable::feature`] of a term that reads no feature (a constant).
pub const NO_FEATURE: u32 = u32::MAX;

/// One node-side hyperparameter of a table, in output order: q, or a κv term's parameter or weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeSlot {
    /// q (the rest is unused).
    pub stopping: bool,
    /// The κv term.
    pub term: u32,
    /// The term's weight (additive κv) rather than its parameter.
    pub weight: bool,
    /// 1 / Σ ŵ (weights only).
    pub inv_total_weight: f64,
}

/// The table of one gradient launch (in `GradientParams`, built by `GradientParams::with_node_table`).
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

    /// The table of `node` (κv) for the node-side hyperparameters `slots` (in output order) with
    /// stopping probability `q`, or [`NodeTable::NONE`] where κv has another kind of term, more
    /// than [`TABLE_TERMS`] terms, or there are more than [`TABLE_SLOTS`] slots.
    pub fn build(node: &KernelSpec, q: f64, slots: &[NodeSlot]) -> NodeTable {
        let terms = node.terms();
        let tabled = |k: u32| k == BaseKernelKind::KroneckerDelta as u32 || k == BaseKernelKind::Constant as u32;
        if terms.len() > TABLE_TERMS || slots.len() > TABLE_SLOTS || !terms.iter().all(|t| tabled(t.kind)) {
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
            for (s, h) in slots.iter().enumerate() {
                t.coef[m][s] = if h.stopping {
                    -2.0 / (1.0 - q) * inv_kv
                } else {
                    let d = SpecDerivative { spec: &local, term: h.term as usize, weight: h.weight, inv_total_weight: h.inv_total_weight };
                    inv_kv * inv_kv * d.eval_as::<f64, f64>(&a, &b)
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
