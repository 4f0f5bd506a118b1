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
    let mut x: Vec<f64> = (0..big).map(|r| d1[r / m] * d2[r % m]).collect();
    cholesky_solve(&mut a, big, &mut x).ok_or_else(|| OctileError::InvalidConfig("reference: product matrix is not positive definite".into()))?;
    Ok(x.iter().map(|v| v * cfg.p * cfg.p).collect())
}

/// In-place Cholesky (lower) of the SPD `a` (n×n, row-major) and solve; `None` if not SPD.
pub fn cholesky_solve(a: &mut [f64], n: usize, b: &mut [f64]) -> Option<()> {
    for j in 0..n {
        let mut s = a[j * n + j];
        for k in 0..j {
            s -= a[j * n + k] * a[j * n + k];
        }
        if s.is_nan() || s <= 0.0 {
            return None;
        }
        let ljj = s.sqrt();
        a[j * n + j] = ljj;
        let (head, tail) = a.split_at_mut((j + 1) * n);
        let rowj = &head[j * n..j * n + j];
        for i in (j + 1)..n {
            let rowi = &mut tail[(i - j - 1) * n..(i - j) * n];
            let mut s = rowi[j];
            for k in 0..j {
                s -= rowi[k] * rowj[k];
            }
            rowi[j] = s / ljj;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i * n + k] * b[k];
        }
        b[i] = s / a[i * n + i];
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
