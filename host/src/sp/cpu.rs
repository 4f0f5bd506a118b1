//! The general form on the CPU: for a pair, κv between every node of G and every node of G′ once
//! (an n × n′ table), then the sum over every pair of paths.
use super::paths::PathSet;
use octile_types::KernelSpec;
use octile_types::sp::LengthKernel;

/// K(G_a, G_b) = Σ_{p ∈ P(a)} Σ_{p′ ∈ P(b)} κv(s, s′)·κℓ(w, w′)·κv(e, e′).
pub fn pair_value(set: &PathSet, node: &KernelSpec, length: &LengthKernel, a: usize, b: usize) -> f64 {
    let (n1, n2) = (set.graphs[a].n_nodes as usize, set.graphs[b].n_nodes as usize);
    let kv: Vec<f64> = (0..n1 * n2).map(|k| node.eval::<f64>(set.node(a, k / n2), set.node(b, k % n2))).collect();
    let (pa, pb) = (set.paths(a), set.paths(b));
    let mut total = 0.0;
    for p in pa {
        let (s, e, w) = (set.sp_s[p] as usize * n2, set.sp_e[p] as usize * n2, set.sp_w[p]);
        let mut acc = 0.0;
        for q in pb.clone() {
            acc += kv[s + set.sp_s[q] as usize] * length.eval::<f64>(w, set.sp_w[q]) * kv[e + set.sp_e[q] as usize];
        }
        total += acc;
    }
    total
}
