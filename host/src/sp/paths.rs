//! All-pairs shortest paths per graph, as the slides' SP_S / SP_E / SP_W arrays
//! (`octile_types::sp`): breadth-first search from every source when every edge weight is 1 (the
//! lengths are hop counts), otherwise — with the weights as edge lengths (finite, > 0) —
//! Floyd–Warshall up to `SP_APSP_MAX_NODES` nodes (the GPU's algorithm, so host and GPU give the
//! same bits) and Dijkstra from every source beyond. Self-loops never shorten a path and are
//! ignored. Graphs are independent, so the set is built in parallel.
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use crate::mgk::pack::feature_indices;
use octile_types::sp::{SP_APSP_MAX_NODES, SpGraph};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Every graph's shortest paths and node feature rows.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSet {
    /// One per graph.
    pub graphs: Vec<SpGraph>,
    /// Source node of each path.
    pub sp_s: Vec<u32>,
    /// End node of each path.
    pub sp_e: Vec<u32>,
    /// Length of each path.
    pub sp_w: Vec<f64>,
    /// Node feature rows (`node_stride` values per node, the node kernel's features in its order).
    pub nodes: Vec<f64>,
    /// Values per node row (≥ 1: a graph without features gets one 0).
    pub node_stride: usize,
}

/// Ordered node pairs u ≠ v in one connected component: how many paths [`for_each_path`] emits
/// (union–find over the edges; self-loops join nothing).
pub fn path_count(g: &Graph) -> usize {
    let n = g.n_nodes();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for e in g.edges() {
        let (a, b) = (root(&mut parent, e.i as usize), root(&mut parent, e.j as usize));
        if a != b {
            parent[a] = b;
        }
    }
    let mut size = vec![0usize; n];
    for x in 0..n {
        let r = root(&mut parent, x);
        size[r] += 1;
    }
    size.iter().map(|&c| c * c.saturating_sub(1)).sum()
}

/// Whether every edge of `g` but self-loops has weight 1, or the error naming a weight that is not
/// a length (finite, > 0), or a graph past 32-bit node indices.
pub fn unit_weights(g: &Graph, graph: usize) -> Result<bool> {
    let n = g.n_nodes();
    if n > u32::MAX as usize {
        return Err(OctileError::InvalidGraph { graph: Some(graph), what: format!("{n} nodes: more than the shortest-path kernel's 32-bit node indices") });
    }
    let mut unit = true;
    for e in g.edges().iter().filter(|e| e.i != e.j) {
        if !(e.weight.is_finite() && e.weight > 0.0) {
            return Err(OctileError::InvalidGraph {
                graph: Some(graph),
                what: format!("edge ({}, {}) has weight {}: shortest paths need finite lengths > 0", e.i, e.j, e.weight),
            });
        }
        unit &= e.weight == 1.0;
    }
    Ok(unit)
}

/// Calls `emit(u, v, length)` for every path of `g` (u ≠ v, finite distance), u-major.
pub fn for_each_path(g: &Graph, graph: usize, mut emit: impl FnMut(u32, u32, f64)) -> Result<()> {
    let n = g.n_nodes();
    let unit = unit_weights(g, graph)?;
    // adjacency in CSR form (both directions, self-loops dropped)
    let mut start = vec![0usize; n + 1];
    for e in g.edges() {
        if e.i == e.j {
            continue;
        }
        start[e.i as usize + 1] += 1;
        start[e.j as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![(0usize, 0.0f64); start[n]];
    for e in g.edges().iter().filter(|e| e.i != e.j) {
        let (i, j) = (e.i as usize, e.j as usize);
        adj[fill[i]] = (j, e.weight);
        fill[i] += 1;
        adj[fill[j]] = (i, e.weight);
        fill[j] += 1;
    }
    if !unit && n <= SP_APSP_MAX_NODES as usize {
        // Floyd–Warshall, the same operations as the GPU's sp_floyd_warshall
        let mut d = vec![f64::INFINITY; n * n];
        for v in 0..n {
            d[v * n + v] = 0.0;
        }
        for v in 0..n {
            for &(u, w) in &adj[start[v]..start[v + 1]] {
                if w < d[v * n + u] {
                    d[v * n + u] = w;
                }
            }
        }
        for k in 0..n {
            for i in 0..n {
                let dik = d[i * n + k];
                for j in 0..n {
                    let via = dik + d[k * n + j];
                    if via < d[i * n + j] {
                        d[i * n + j] = via;
                    }
                }
            }
        }
        for (c, &l) in d.iter().enumerate() {
            if c / n != c % n && l.is_finite() {
                emit((c / n) as u32, (c % n) as u32, l);
            }
        }
        return Ok(());
    }
    let mut dist = vec![f64::INFINITY; n];
    let mut queue = vec![0usize; n];
    let mut heap = BinaryHeap::new();
    for s in 0..n {
        dist.fill(f64::INFINITY);
        dist[s] = 0.0;
        if unit {
            let (mut head, mut tail) = (0, 1);
            queue[0] = s;
            while head < tail {
                let u = queue[head];
                head += 1;
                for &(v, _) in &adj[start[u]..start[u + 1]] {
                    if dist[v].is_infinite() {
                        dist[v] = dist[u] + 1.0;
                        queue[tail] = v;
                        tail += 1;
                    }
                }
            }
        } else {
            // Dijkstra; f64 lengths ordered by their bits (all ≥ 0, so the order is the same)
            heap.push(Reverse((0u64, s)));
            while let Some(Reverse((bits, u))) = heap.pop() {
                let d = f64::from_bits(bits);
                if d > dist[u] {
                    continue;
                }
                for &(v, w) in &adj[start[u]..start[u + 1]] {
                    // (a sum past f64's range is inf, never shorter: the path reads as missing,
                    // which `build_some`'s count check reports, `paths_missing`)
                    let nd = d + w;
                    if nd < dist[v] {
                        dist[v] = nd;
                        heap.push(Reverse((nd.to_bits(), v)));
                    }
                }
            }
        }
        for (v, &d) in dist.iter().enumerate() {
            if v != s && d.is_finite() {
                emit(s as u32, v as u32, d);
            }
        }
    }
    Ok(())
}

/// The error of graph `graph` whose all-pairs search found `found` shortest paths where its
/// connected components hold `counted`: fewer are paths between connected nodes whose length
/// (finite weights summed) passed f64's range and so reads as no path; more cannot happen.
pub fn paths_missing(graph: usize, found: usize, counted: usize) -> OctileError {
    if found < counted {
        OctileError::InvalidGraph {
            graph: Some(graph),
            what: format!(
                "{} shortest path(s) between connected nodes are longer than f64 holds (their edge weights sum past {:.3e}); scale the weights down",
                counted - found,
                f64::MAX
            ),
        }
    } else {
        OctileError::Internal(format!("graph {graph}: {found} shortest paths found, {counted} counted"))
    }
}

/// Every node's row of the features `features` (by name), graph after graph; one 0 per node
/// when there are none.
pub fn node_rows(graphs: &[Graph], features: &[String]) -> Result<Vec<f64>> {
    let all: Vec<usize> = (0..graphs.len()).collect();
    rows_of(graphs, &all, features)
}

/// [`node_rows`] of `graphs[which[k]]`, k in order (errors name the dataset's graph index).
fn rows_of(graphs: &[Graph], which: &[usize], features: &[String]) -> Result<Vec<f64>> {
    let rows: Vec<Vec<f64>> = which
        .par_iter()
        .map(|&k| {
            let g = &graphs[k];
            let idx = feature_indices("node", features, g.node_feature_names(), k)?;
            Ok(if idx.is_empty() { vec![0.0; g.n_nodes()] } else { (0..g.n_nodes()).flat_map(|i| idx.iter().map(move |&f| g.node_features(i)[f])).collect() })
        })
        .collect::<Result<_>>()?;
    Ok(super::gather::concat(&rows))
}

impl PathSet {
    /// The paths of `graphs` and the rows of the node features `features` (by name).
    pub fn build(graphs: &[Graph], features: &[String]) -> Result<PathSet> {
        let all: Vec<usize> = (0..graphs.len()).collect();
        PathSet::build_some(graphs, &all, features)
    }

    /// [`build`](Self::build) for the graphs `graphs[which[k]]` only: the set's graph k is the
    /// dataset's graph `which[k]` (errors name `which[k]`), without copying any graph.
    pub fn build_some(graphs: &[Graph], which: &[usize], features: &[String]) -> Result<PathSet> {
        // sizes first (union–find), then every graph writes its paths into its own slices of the
        // final arrays, in parallel: no per-graph buffers, no copies
        let counts: Vec<usize> = which.par_iter().map(|&k| path_count(&graphs[k])).collect();
        let total: usize = counts.iter().sum();
        if total > u32::MAX as usize {
            return Err(OctileError::InvalidRequest(format!("{total} shortest paths in all: more than 2^32; split the set")));
        }
        let node_stride = features.len().max(1);
        let (mut sp_s, mut sp_e, mut sp_w) = (vec![0u32; total], vec![0u32; total], vec![0.0f64; total]);
        let mut parts = Vec::with_capacity(which.len());
        let (mut rs, mut re, mut rw) = (&mut sp_s[..], &mut sp_e[..], &mut sp_w[..]);
        for &c in &counts {
            let (a, r1) = std::mem::take(&mut rs).split_at_mut(c);
            let (b, r2) = std::mem::take(&mut re).split_at_mut(c);
            let (d, r3) = std::mem::take(&mut rw).split_at_mut(c);
            (rs, re, rw) = (r1, r2, r3);
            parts.push((a, b, d));
        }
        parts.into_par_iter().zip(which.par_iter()).with_min_len(16).try_for_each(|((s, e, w), &k)| {
            let mut i = 0;
            for_each_path(&graphs[k], k, |u, v, d| {
                (s[i], e[i], w[i]) = (u, v, d);
                i += 1;
            })?;
            if i == s.len() { Ok(()) } else { Err(paths_missing(k, i, s.len())) }
        })?;
        let nodes = rows_of(graphs, which, features)?;
        let (mut path_offset, mut node_offset) = (0u32, 0u32);
        let descs = counts
            .iter()
            .zip(which.iter().map(|&k| &graphs[k]))
            .map(|(&c, g)| {
                let d = SpGraph { path_offset, n_paths: c as u32, node_offset, n_nodes: g.n_nodes() as u32 };
                path_offset += c as u32;
                node_offset += g.n_nodes() as u32;
                d
            })
            .collect();
        Ok(PathSet { graphs: descs, sp_s, sp_e, sp_w, nodes, node_stride })
    }

    /// Graph g's node row i.
    pub fn node(&self, g: usize, i: usize) -> &[f64] {
        let o = (self.graphs[g].node_offset as usize + i) * self.node_stride;
        &self.nodes[o..o + self.node_stride]
    }

    /// Graph g's path range.
    pub fn paths(&self, g: usize) -> std::ops::Range<usize> {
        let d = &self.graphs[g];
        d.path_offset as usize..(d.path_offset + d.n_paths) as usize
    }
}
