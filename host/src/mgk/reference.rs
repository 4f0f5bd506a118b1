//! Dense f64 reference: the explicit product system solved directly. Small graphs only (n·m ≲ 2000);
//! used by the tests to check every solver path.
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use crate::mgk::config::MgkConfig;
use crate::mgk::pack::feature_indices;

/// Feature rows of a graph (`count` rows from `values`), in the resolved order.
fn rows<'a>(names: &[String], have: &[String], values: impl Fn(usize) -> &'a [f64], count: usize, kind: &'static str, graph: usize) -> Result<Vec<Vec<f64>>> {
    let idx = feature_indices(kind, names, have, graph)?;
    Ok((0..count)
        .map(|k| {
            let v = values(k);
            idx.iter().map(|&i| v[i]).collect()
        })
        .collect())
}

/// K(G1, G2) by forming M = D×V×⁻¹ − A×⊙E× (natural order, index i·m + i') and solving
/// M x = D×·1 with a dense Cholesky factorisation.
pub fn mgk_dense(g1: &Graph, g2: &Graph, cfg: &MgkConfig) -> Result<f64> {
    Ok(mgk_dense_nodal(g1, g2, cfg)?.iter().sum())
}

/// The node-wise similarities R[i·m + i'] = p_i · x_ii' · p'_i' of the same dense solve (input node
/// order); K = Σ R.
pub fn mgk_dense_nodal(g1: &Graph, g2: &Graph, cfg: &MgkConfig) -> Result<Vec<f64>> {
    let (mut a, mut x) = dense_system(g1, g2, cfg)?;
    cholesky_solve(&mut a, x.len(), &mut x).ok_or_else(not_spd)?;
    Ok(x.iter().map(|v| v * cfg.p * cfg.p).collect())
}

/// How far K can move, relatively, for a solve that stops at a relative residual ε: a solution x
/// with M·x = b − r, ‖r‖ ≤ ε·‖b‖, has |Σx − K| ≤ ε · ‖M⁻¹·1‖ · ‖b‖ / |Σ M⁻¹b| · |K| — this factor
/// times ε, reached when r lies along M⁻¹·1 (M is symmetric). Small where the walk stops early (q
/// near 1), large where it runs long and the product system is nearly singular (q → 0). The
/// solvers' tolerance bounds the residual, not K: a test of an f32 solve (rtol 1e-6) against the
/// dense reference expects K within this factor times its rtol.
pub fn value_condition(g1: &Graph, g2: &Graph, cfg: &MgkConfig) -> Result<f64> {
    let (a, b) = dense_system(g1, g2, cfg)?;
    let (x, y) = (solved(&a, b.clone())?, solved(&a, vec![1.0; b.len()])?);
    Ok(norm(&y) * norm(&b) / x.iter().sum::<f64>().abs())
}

/// M⁻¹·rhs by a Cholesky factorisation of a copy of `a` (M, row-major).
fn solved(a: &[f64], mut rhs: Vec<f64>) -> Result<Vec<f64>> {
    cholesky_solve(&mut a.to_vec(), rhs.len(), &mut rhs).ok_or_else(not_spd)?;
    Ok(rhs)
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|t| t * t).sum::<f64>().sqrt()
}

fn not_spd() -> OctileError {
    OctileError::InvalidConfig("reference: product matrix is not positive definite".into())
}

/// M = D×V×⁻¹ − A×⊙E× (natural order, index i·m + i′, row-major) and b = D×·1.
fn dense_system(g1: &Graph, g2: &Graph, cfg: &MgkConfig) -> Result<(Vec<f64>, Vec<f64>)> {
    let k = cfg.resolve()?;
    let (n, m) = (g1.n_nodes(), g2.n_nodes());
    let big = n * m;
    let nf1 = rows(&k.node_features, g1.node_feature_names(), |i| g1.node_features(i), n, "node", 0)?;
    let nf2 = rows(&k.node_features, g2.node_feature_names(), |i| g2.node_features(i), m, "node", 1)?;
    let ef1 = rows(&k.edge_features, g1.edge_feature_names(), |e| g1.edge_features(e), g1.n_edges(), "edge", 0)?;
    let ef2 = rows(&k.edge_features, g2.edge_feature_names(), |e| g2.edge_features(e), g2.n_edges(), "edge", 1)?;
    // weights divided by each graph's scale, as the solvers do (K does not depend on it)
    let d = |g: &Graph| -> Vec<f64> { g.degrees_scaled(g.weight_scale()).into_iter().map(|x| if x > 0.0 { x } else { 1.0 } / (1.0 - cfg.q)).collect() };
    let (d1, d2) = (d(g1), d(g2));
    // directed nonzeros (both triangles; self-loop once)
    let nz = |g: &Graph| -> Vec<(usize, usize, f64, usize)> {
        let (mut v, s) = (Vec::new(), g.weight_scale());
        for (e, ed) in g.edges().iter().enumerate() {
            v.push((ed.i as usize, ed.j as usize, ed.weight * s, e));
            if ed.i != ed.j {
                v.push((ed.j as usize, ed.i as usize, ed.weight * s, e));
            }
        }
        v
    };
    let (nz1, nz2) = (nz(g1), nz(g2));
    let mut a = vec![0.0f64; big * big];
    for i in 0..n {
        for ip in 0..m {
            let r = i * m + ip;
            a[r * big + r] += d1[i] * d2[ip] / k.node_spec.eval(&nf1[i], &nf2[ip]);
        }
    }
    for &(i, j, w, e) in &nz1 {
        for &(ip, jp, wp, ep) in &nz2 {
            let (r, c) = (i * m + ip, j * m + jp);
            a[r * big + c] -= w * wp * k.edge_spec.eval(&ef1[e], &ef2[ep]);
        }
    }
    let b: Vec<f64> = (0..big).map(|r| d1[r / m] * d2[r % m]).collect();
    Ok((a, b))
}

/// In-place Cholesky (lower) of the SPD `a` (n×n, row-major) and solve; `None` if not SPD. Rows
/// against rows (`dot`): both factors of every product are contiguous.
pub fn cholesky_solve(a: &mut [f64], n: usize, b: &mut [f64]) -> Option<()> {
    for j in 0..n {
        let rowj = &a[j * n..j * n + j];
        let s = a[j * n + j] - dot(rowj, rowj);
        if s.is_nan() || s <= 0.0 {
            return None;
        }
        let ljj = s.sqrt();
        a[j * n + j] = ljj;
        let (head, tail) = a.split_at_mut((j + 1) * n);
        let rowj = &head[j * n..j * n + j];
        for i in (j + 1)..n {
            let rowi = &mut tail[(i - j - 1) * n..(i - j) * n];
            rowi[j] = (rowi[j] - dot(&rowi[..j], rowj)) / ljj;
        }
    }
    for i in 0..n {
        b[i] = (b[i] - dot(&a[i * n..i * n + i], &b[..i])) / a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in (i + 1)..n {
            s -= a[k * n + i] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    Some(())
}

/// Σ x·y with eight partial sums: one running sum is a chain of dependent adds (one a few cycles,
/// the reference tests' hundreds of 1200-row factorisations spent minutes of CI in it); eight
/// independent ones keep the multiply-add units busy. The order of the adds differs from one sum's
/// by rounding only (the reference's values move in the last bits). Not `cpu::product::dot`, its
/// twin: the reference shares no arithmetic with the solvers it checks.
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let (xs, ys) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f64 = xs.remainder().iter().zip(ys.remainder()).map(|(a, b)| a * b).sum();
    let mut acc = [0.0f64; 8];
    for (a, b) in xs.zip(ys) {
        for ((s, p), q) in acc.iter_mut().zip(a).zip(b) {
            *s += p * q;
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A complete graph of `n` nodes against a path of `m`, unlabeled (κv = κe = 1), stopping
    /// probability `q`: the reference test's pair that missed (K18 against a path, q ≈ 0.01).
    fn pair(n: usize, m: usize, q: f64) -> (Graph, Graph, MgkConfig) {
        let mut g1 = Graph::new(n, &[], &[]);
        for i in 0..n {
            for j in 0..i {
                g1.add_edge(j, i, 1.0, &[]).unwrap();
            }
        }
        let mut g2 = Graph::new(m, &[], &[]);
        for i in 1..m {
            g2.add_edge(i - 1, i, 1.0, &[]).unwrap();
        }
        (g1, g2, MgkConfig { q, node: vec![], edge: vec![], ..MgkConfig::default() })
    }

    /// The value condition is what it says: a residual of ε‖b‖ along M⁻¹·1 moves K by exactly
    /// condition · ε relative, and no residual of that size moves it more (Cauchy–Schwarz: ≥ 1).
    #[test]
    fn the_value_condition_bounds_how_far_a_residual_moves_k() {
        for (n, m, q) in [(1, 1, 0.5), (18, 5, 0.0098), (6, 9, 0.05), (12, 12, 0.0005), (4, 3, 0.9)] {
            let (g1, g2, cfg) = pair(n, m, q);
            let cond = value_condition(&g1, &g2, &cfg).unwrap();
            assert!(cond >= 1.0 - 1e-12, "({n}, {m}, q {q}): condition {cond} below 1");
            if n * m == 1 {
                assert!((cond - 1.0).abs() <= 1e-12, "a 1 × 1 system: condition {cond}, expected 1");
            }
            // x + M⁻¹r for r = ε‖b‖ · M⁻¹1 / ‖M⁻¹1‖: K moves by ε‖b‖ · ‖M⁻¹1‖
            let (a, b) = dense_system(&g1, &g2, &cfg).unwrap();
            let (x, y) = (solved(&a, b.clone()).unwrap(), solved(&a, vec![1.0; b.len()]).unwrap());
            let eps = 1e-6;
            let k: f64 = x.iter().sum();
            // the solution error a residual r of ε‖b‖ along M⁻¹·1 leaves: M·δx = r, solved
            let (ny, nb) = (norm(&y), norm(&b));
            let dx = solved(&a, y.iter().map(|t| eps * nb * t / ny).collect()).unwrap();
            let rel = dx.iter().sum::<f64>().abs() / k.abs();
            assert!((rel / (cond * eps) - 1.0).abs() <= 1e-9, "({n}, {m}, q {q}): K moved {rel:e}, condition · ε = {:e}", cond * eps);
        }
        // the reference test's pair: K may move 1.2 × rtol
        let (g1, g2, cfg) = pair(18, 5, 0.0098);
        let cond = value_condition(&g1, &g2, &cfg).unwrap();
        assert!((1.0..2.0).contains(&cond), "K18 against P5 at q 0.0098: condition {cond}");
    }
}
