//! Why a pair failed before the solver's first iteration: a node kernel that underflows to zero
//! between two nodes (a square exponential with a length scale far below the distance of the
//! values: exp(−d²/2ℓ²) = 0) leaves the product system without a finite solution (its diagonal
//! holds 1/κv), and the solver breaks down at its first step. The solver reports only "0
//! iterations"; this names the nodes and values.
use crate::backend::Precision;
use crate::error::OctileError;
use crate::graph::Graph;
use crate::mgk::config::{MgkConfig, resolve_terms};

/// The first node pair of `g1` × `g2` (graphs `i` and `j` in messages) whose node kernel is zero
/// in the configuration's precision (or so small its inverse overflows), as a sentence; `None`
/// when there is none (then the failure has another cause). Costs |V1|·|V2| kernel evaluations.
pub fn zero_node_kernel(cfg: &MgkConfig, g1: &Graph, g2: &Graph, i: usize, j: usize) -> Option<String> {
    let (spec, names, _) = resolve_terms(&cfg.node, cfg.node_combine);
    let rows = |g: &Graph| -> Option<Vec<Vec<f64>>> {
        let at: Vec<usize> = names.iter().map(|n| g.node_feature_index(n)).collect::<Option<_>>()?;
        Some((0..g.n_nodes()).map(|u| at.iter().map(|&f| g.node_features(u)[f]).collect()).collect())
    };
    let (a, b) = (rows(g1)?, rows(g2)?);
    let vanishes = |k: f64| match cfg.precision {
        Precision::F64 => !(1.0 / k).is_finite(),
        Precision::F32 => !(1.0 / (k as f32)).is_finite(),
    };
    for (u, fu) in a.iter().enumerate() {
        for (v, fv) in b.iter().enumerate() {
            if vanishes(spec.eval::<f64>(fu, fv)) {
                let values: Vec<String> = names.iter().zip(fu.iter().zip(fv)).map(|(n, (x, y))| format!("{n} {x} and {y}")).collect();
                return Some(format!(
                    "the node kernel underflowed to zero between node {u} of graph {i} and node {v} of graph {j} ({}), so the pair's linear system has no finite solution and the solver stopped before its first iteration; use a larger length_scale (or kronecker_delta for labels)",
                    values.join(", ")
                ));
            }
        }
    }
    None
}

/// The smallest (scaled, non-zero) degree of `g` and its node; `None` without edges.
fn smallest_degree(g: &Graph) -> Option<(usize, f64)> {
    g.degrees_scaled(g.weight_scale()).into_iter().enumerate().filter(|&(_, d)| d > 0.0).min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The largest over the smallest edge weight of `g` (a graph with edges).
fn weight_span(g: &Graph) -> f64 {
    let w = g.edges().iter().map(|e| e.weight);
    w.clone().fold(0.0f64, f64::max) / w.fold(f64::INFINITY, f64::min).min(f64::MAX)
}

/// Why a pair of `g1` × `g2` (graphs `i` and `j`) stopped before its first iteration when its
/// node kernel does not vanish: the product of two nodes' degrees (each graph's weights scaled to
/// a largest of about 1) underflows in the configuration's precision, as when a graph's edge
/// weights span more than about 1e150, so the product system's diagonal holds a zero. `None`
/// when no such pair of nodes exists.
pub fn vanishing_degrees(cfg: &MgkConfig, g1: &Graph, g2: &Graph, i: usize, j: usize) -> Option<String> {
    let ((u, du), (v, dv)) = (smallest_degree(g1)?, smallest_degree(g2)?);
    let product = du * dv;
    let vanishes = match cfg.precision {
        Precision::F64 => !product.is_normal(),
        Precision::F32 => !(product as f32).is_normal(),
    };
    vanishes.then(|| {
        format!(
            "node {u} of graph {i} and node {v} of graph {j} have degrees whose product underflows ({du:.3e} × {dv:.3e}, each graph's weights scaled to a largest of 1): their edge weights span {:.1e} and {:.1e} (largest / smallest), too wide for the product system; keep each graph's weights within a ratio of about 1e150 (rescale or clip them)",
            weight_span(g1),
            weight_span(g2)
        )
    })
}

/// `e` with its cause named when it is a [`OctileError::NoConvergence`] whose first failing pair
/// stopped before any iteration because the node kernel underflowed or two nodes' degrees
/// multiply to zero (its pair: a row of `x`, a
/// column of `y`, or of `x` when `y` is `None`); any other error as it is.
pub fn explain(e: OctileError, cfg: &MgkConfig, x: &[Graph], y: Option<&[Graph]>) -> OctileError {
    match e {
        OctileError::NoConvergence { pair, iterations: 0, residual, n_failed, partial, cause: None } => {
            let cols = y.unwrap_or(x);
            let cause = x
                .get(pair.0)
                .zip(cols.get(pair.1))
                .and_then(|(a, b)| zero_node_kernel(cfg, a, b, pair.0, pair.1).or_else(|| vanishing_degrees(cfg, a, b, pair.0, pair.1)));
            OctileError::NoConvergence { pair, iterations: 0, residual, n_failed, partial, cause }
        }
        // a solve that met its tolerance and still failed: its value is out of range
        OctileError::NoConvergence { pair, iterations, residual, n_failed, partial, cause: None } if residual <= cfg.solver.rtol_for(cfg.precision) => {
            OctileError::NoConvergence { pair, iterations, residual, n_failed, partial, cause: Some(out_of_range(cfg, residual)) }
        }
        e => e,
    }
}

/// Why a pair whose solve met its tolerance (`residual`) is a failure: its value over- or
/// underflowed. K scales as p²; a value that is not finite, or below
/// [`smallest_value`](super::smallest_value) of the precision, is never a result (a small p: 1e-170
/// underflows every K to 0; a large one, 1e200, overflows them).
pub fn out_of_range(cfg: &MgkConfig, residual: f64) -> String {
    if cfg.p < 1.0 {
        format!(
            "its solve met its tolerance (residual {residual:.3e}) but its value underflowed: K shrinks as p² (p = {:e}), below {:.1e}, the smallest value {} holds to its digits; use a larger p (K scales exactly as p²)",
            cfg.p,
            super::smallest_value(cfg.precision),
            format!("{:?}", cfg.precision).to_lowercase()
        )
    } else {
        format!("its solve met its tolerance (residual {residual:.3e}) but its value is not finite: K grows as p² (p = {:e}), beyond f64's range", cfg.p)
    }
}
