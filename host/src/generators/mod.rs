//! Seeded random graph generators with networkx's semantics, and the paper's synthetic sets.
use crate::graph::Graph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

pub mod large;
pub mod molecules;

pub use molecules::molecule_set;

/// Undirected simple-graph edge set under construction.
struct EdgeSet {
    set: HashSet<(usize, usize)>,
    list: Vec<(usize, usize)>,
    deg: Vec<usize>,
}

impl EdgeSet {
    fn new(n: usize) -> Self {
        EdgeSet { set: HashSet::new(), list: Vec::new(), deg: vec![0; n] }
    }
    fn has(&self, u: usize, v: usize) -> bool {
        self.set.contains(&(u.min(v), u.max(v)))
    }
    fn add(&mut self, u: usize, v: usize) {
        if u != v && self.set.insert((u.min(v), u.max(v))) {
            self.list.push((u, v));
            self.deg[u] += 1;
            self.deg[v] += 1;
        }
    }
}

/// Newman–Watts–Strogatz (networkx `newman_watts_strogatz_graph`): a ring where each node joins
/// its k/2 nearest neighbours on each side, then for every ring edge (u, v), with probability p, a
/// shortcut (u, w) to a uniformly chosen w ≠ u not yet adjacent (no edges are removed).
pub fn newman_watts_strogatz(n: usize, k: usize, p: f64, rng: &mut impl Rng) -> Vec<(usize, usize)> {
    let mut g = EdgeSet::new(n);
    for j in 1..=k / 2 {
        for i in 0..n {
            g.add(i, (i + j) % n);
        }
    }
    let ring = g.list.clone();
    for (u, _) in ring {
        if rng.r#gen::<f64>() < p {
            if g.deg[u] >= n - 1 {
                continue;
            }
            let mut w = rng.gen_range(0..n);
            while w == u || g.has(u, w) {
                w = rng.gen_range(0..n);
            }
            g.add(u, w);
        }
    }
    g.list
}

/// Barabási–Albert (networkx `barabasi_albert_graph`): start from a star of m + 1 nodes; each new
/// node attaches to m distinct existing nodes chosen with probability proportional to degree.
///
/// # Panics
/// Unless 1 ≤ m < n.
pub fn barabasi_albert(n: usize, m: usize, rng: &mut impl Rng) -> Vec<(usize, usize)> {
    assert!(m >= 1 && m < n, "barabasi_albert needs 1 <= m < n");
    let mut g = EdgeSet::new(n);
    for v in 1..=m {
        g.add(0, v);
    }
    let mut repeated: Vec<usize> = Vec::new();
    for v in 0..=m {
        repeated.extend(std::iter::repeat_n(v, g.deg[v]));
    }
    for source in (m + 1)..n {
        let mut targets: Vec<usize> = Vec::with_capacity(m);
        while targets.len() < m {
            let t = repeated[rng.gen_range(0..repeated.len())];
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        for &t in &targets {
            g.add(source, t);
        }
        repeated.extend(&targets);
        repeated.extend(std::iter::repeat_n(source, m));
    }
    g.list
}

/// Label a topology the paper's way: node feature `label` uniform in {0, 1, 2}, edge feature
/// `length` uniform in [0.5, 2), weight 1.
///
/// # Panics
/// If an edge names a node ≥ n or appears twice.
pub fn labeled(n: usize, edges: &[(usize, usize)], rng: &mut impl Rng) -> Graph {
    let mut g = Graph::new(n, &["label"], &["length"]);
    for i in 0..n {
        g.set_node_features(i, &[rng.gen_range(0..3) as f64]).expect("valid node");
    }
    for &(u, v) in edges {
        g.add_edge(u, v, 1.0, &[rng.gen_range(0.5..2.0)]).expect("valid edge");
    }
    g
}

/// The paper's synthetic sets: `count` labeled NWS graphs (n = 96, k = 3, p = 0.1).
pub fn nws_set(count: usize, seed: u64) -> Vec<Graph> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let e = newman_watts_strogatz(96, 3, 0.1, &mut rng);
            labeled(96, &e, &mut rng)
        })
        .collect()
}

/// `count` labeled BA graphs (n = 96, m = 6).
pub fn ba_set(count: usize, seed: u64) -> Vec<Graph> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let e = barabasi_albert(96, 6, &mut rng);
            labeled(96, &e, &mut rng)
        })
        .collect()
}
