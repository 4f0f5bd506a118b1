//! Labeled, weighted, undirected graphs: what users build and readers produce.
use crate::error::{OctileError, Result};

/// An undirected edge (i, j) with weight w > 0. A self-loop has i == j.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    /// One end.
    pub i: u32,
    /// The other end.
    pub j: u32,
    /// Weight (> 0).
    pub weight: f64,
}

/// A graph with named node features and named edge features (all real numbers; categorical labels
/// are integers stored as `f64`).
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    n_nodes: usize,
    node_feature_names: Vec<String>,
    /// n_nodes × node_feature_names.len(), row-major.
    node_features: Vec<f64>,
    edge_feature_names: Vec<String>,
    edges: Vec<Edge>,
    /// edges.len() × edge_feature_names.len(), row-major.
    edge_features: Vec<f64>,
}

impl Graph {
    /// A graph of `n_nodes` nodes (features 0) and no edges.
    pub fn new(n_nodes: usize, node_feature_names: &[&str], edge_feature_names: &[&str]) -> Self {
        Graph {
            n_nodes,
            node_feature_names: node_feature_names.iter().map(|s| s.to_string()).collect(),
            node_features: vec![0.0; n_nodes * node_feature_names.len()],
            edge_feature_names: edge_feature_names.iter().map(|s| s.to_string()).collect(),
            edges: Vec::new(),
            edge_features: Vec::new(),
        }
    }

    /// Same, with owned names.
    pub fn with_names(n_nodes: usize, node_feature_names: Vec<String>, edge_feature_names: Vec<String>) -> Self {
        Graph {
            n_nodes,
            node_features: vec![0.0; n_nodes * node_feature_names.len()],
            node_feature_names,
            edge_feature_names,
            edges: Vec::new(),
            edge_features: Vec::new(),
        }
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }
    /// Number of (undirected) edges, self-loops included.
    pub fn n_edges(&self) -> usize {
        self.edges.len()
    }
    /// Node feature names.
    pub fn node_feature_names(&self) -> &[String] {
        &self.node_feature_names
    }
    /// Edge feature names.
    pub fn edge_feature_names(&self) -> &[String] {
        &self.edge_feature_names
    }
    /// The edges.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }
    /// Features of node `i`.
    ///
    /// # Panics
    /// If `i` is not a node of the graph (`i ≥ n_nodes()`).
    pub fn node_features(&self, i: usize) -> &[f64] {
        let k = self.node_feature_names.len();
        &self.node_features[i * k..(i + 1) * k]
    }
    /// Features of edge `e` (index into [`Graph::edges`]).
    ///
    /// # Panics
    /// If `e` is not an edge of the graph (`e ≥ n_edges()`).
    pub fn edge_features(&self, e: usize) -> &[f64] {
        let k = self.edge_feature_names.len();
        &self.edge_features[e * k..(e + 1) * k]
    }
    /// Index of a node feature by name.
    pub fn node_feature_index(&self, name: &str) -> Option<usize> {
        self.node_feature_names.iter().position(|n| n == name)
    }
    /// Index of an edge feature by name.
    pub fn edge_feature_index(&self, name: &str) -> Option<usize> {
        self.edge_feature_names.iter().position(|n| n == name)
    }

    /// Set the features of node `i` (in the order of the node feature names).
    pub fn set_node_features(&mut self, i: usize, values: &[f64]) -> Result<()> {
        let k = self.node_feature_names.len();
        if i >= self.n_nodes {
            return Err(invalid(format!("node {i} out of range (graph has {} nodes)", self.n_nodes)));
        }
        if values.len() != k {
            return Err(invalid(format!("node {i}: {} feature values given, {k} features declared", values.len())));
        }
        if let Some((f, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(invalid(format!("node {i}: feature '{}' is {v}", self.node_feature_names[f])));
        }
        self.node_features[i * k..(i + 1) * k].copy_from_slice(values);
        Ok(())
    }

    /// Add the undirected edge (i, j) with `weight` > 0 and its features. (i, j) and (j, i) are the
    /// same edge; adding it twice is an error.
    pub fn add_edge(&mut self, i: usize, j: usize, weight: f64, features: &[f64]) -> Result<()> {
        let k = self.edge_feature_names.len();
        if i >= self.n_nodes || j >= self.n_nodes {
            return Err(invalid(format!("edge ({i}, {j}): node out of range (graph has {} nodes)", self.n_nodes)));
        }
        if !(weight.is_finite() && weight > 0.0) {
            return Err(invalid(format!("edge ({i}, {j}): weight must be finite and > 0, got {weight}")));
        }
        if features.len() != k {
            return Err(invalid(format!("edge ({i}, {j}): {} feature values given, {k} features declared", features.len())));
        }
        if let Some((f, v)) = features.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(invalid(format!("edge ({i}, {j}): feature '{}' is {v}", self.edge_feature_names[f])));
        }
        self.edges.push(Edge { i: i as u32, j: j as u32, weight });
        self.edge_features.extend_from_slice(features);
        Ok(())
    }

    /// Check what `add_edge` cannot check alone: at least one node, no duplicate edges.
    pub fn validate(&self) -> Result<()> {
        if self.n_nodes == 0 {
            return Err(invalid("graph has no nodes".into()));
        }
        if self.n_nodes >= u32::MAX as usize / 2 {
            return Err(invalid(format!("graph has {} nodes (too many)", self.n_nodes)));
        }
        let mut keys: Vec<(u32, u32)> = self.edges.iter().map(|e| (e.i.min(e.j), e.i.max(e.j))).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid(format!("duplicate edge ({}, {})", w[0].0, w[0].1)));
        }
        Ok(())
    }

    /// Weighted degrees deg_i = Σ_j A_ij (a self-loop counted once).
    pub fn degrees(&self) -> Vec<f64> {
        // × 1.0 is exact: the same sums
        self.degrees_scaled(1.0)
    }

    /// The power of two 2^−e with 2^e ≤ the largest edge weight < 2^(e+1) (1 without edges; e kept
    /// within f64's normal exponents). The marginalized kernel does not depend on the scale of a
    /// graph's weights (D and A scale together; isolated nodes decouple), so the solvers divide by
    /// this: weights of 1e±100 give the same K as weights near 1, with neither f64 overflow nor f32
    /// range errors; and as a power of two the division is exact, so weights already in [1, 2)
    /// are left as they are bit for bit.
    pub fn weight_scale(&self) -> f64 {
        let max = self.edges.iter().map(|e| e.weight).fold(0.0f64, f64::max);
        if max <= 0.0 || !max.is_finite() {
            return 1.0;
        }
        let e = max.log2().floor().clamp(-1022.0, 1023.0) as i32;
        // log2 may round across a power of two: take the exponent bits of the scaled maximum
        let s = 2f64.powi(-e);
        if max * s >= 2.0 {
            s / 2.0
        } else if max * s < 1.0 && e > -1022 {
            s * 2.0
        } else {
            s
        }
    }

    /// Weighted degrees of the weights times `scale` (see [`Self::weight_scale`]), each summed from
    /// scaled weights so that no sum overflows.
    pub fn degrees_scaled(&self, scale: f64) -> Vec<f64> {
        let mut deg = vec![0.0; self.n_nodes];
        for e in &self.edges {
            deg[e.i as usize] += e.weight * scale;
            if e.i != e.j {
                deg[e.j as usize] += e.weight * scale;
            }
        }
        deg
    }

    /// The same graph with nodes relabeled: new node `perm[k]` is old node `k`.
    ///
    /// # Panics
    /// If `perm` is not a permutation of `0..n_nodes()`.
    pub fn permuted(&self, perm: &[usize]) -> Graph {
        assert_eq!(perm.len(), self.n_nodes);
        let mut g = Graph::with_names(self.n_nodes, self.node_feature_names.clone(), self.edge_feature_names.clone());
        let k = self.node_feature_names.len();
        for (old, &new) in perm.iter().enumerate() {
            g.node_features[new * k..(new + 1) * k].copy_from_slice(self.node_features(old));
        }
        for (e, edge) in self.edges.iter().enumerate() {
            g.edges.push(Edge { i: perm[edge.i as usize] as u32, j: perm[edge.j as usize] as u32, weight: edge.weight });
            g.edge_features.extend_from_slice(self.edge_features(e));
        }
        g
    }
}

/// An [`OctileError::InvalidGraph`] without a graph index (the caller attaches one, [`at_graph`]).
pub(crate) fn invalid(what: String) -> OctileError {
    OctileError::InvalidGraph { graph: None, what }
}

/// Attach a graph index to an [`OctileError::InvalidGraph`] raised by a method of [`Graph`].
pub(crate) fn at_graph(e: OctileError, graph: usize) -> OctileError {
    match e {
        OctileError::InvalidGraph { what, .. } => OctileError::InvalidGraph { graph: Some(graph), what },
        other => other,
    }
}
