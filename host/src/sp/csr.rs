//! The GPU builds' graph input: the adjacency of some graphs of a set in one CSR, both directions
//! of every edge, self-loops dropped, node ids local to each graph:
//!
//! ```text
//! start[first node of graph k + v ..= + v + 1]   node v's range in adj / weight
//! adj[..]  u32 local neighbour ids;  weight[..]  f64 edge weights (only when asked for)
//! node_offset[k]: graph which[k]'s first node;   start.len() = nodes + 1
//! ```
//! Built in parallel: sizes first, then every graph fills its own slices.
use super::gather::grain;
use crate::graph::Graph;
use rayon::prelude::*;

/// The CSR of graphs `which` of a set.
pub struct Csr {
    /// Row starts (global entry indices), one per node and the end.
    pub start: Vec<u32>,
    /// Neighbours, local ids.
    pub adj: Vec<u32>,
    /// Edge weights alongside `adj` (empty unless asked for).
    pub weight: Vec<f64>,
    /// First node of each listed graph.
    pub node_offset: Vec<u32>,
}

impl Csr {
    /// The CSR of `graphs[which[k]]`, k in order, with the weights when `weights`.
    pub fn build(graphs: &[Graph], which: &[usize], weights: bool) -> Csr {
        let g = grain(which.len(), which.iter().map(|&g| graphs[g].n_nodes()).sum());
        let entries: Vec<usize> = which.par_iter().with_min_len(g).map(|&k| 2 * graphs[k].edges().iter().filter(|e| e.i != e.j).count()).collect();
        let (mut node_offset, mut adj_base) = (Vec::with_capacity(which.len()), Vec::with_capacity(which.len()));
        let (mut nodes, mut total) = (0usize, 0usize);
        for (&k, &m) in which.iter().zip(&entries) {
            node_offset.push(nodes as u32);
            adj_base.push(total);
            (nodes, total) = (nodes + graphs[k].n_nodes(), total + m);
        }
        let (mut start, mut adj) = (vec![0u32; nodes + 1], vec![0u32; total]);
        let mut weight = vec![0.0f64; if weights { total } else { 0 }];
        start[nodes] = total as u32;
        let mut slots = Vec::with_capacity(which.len());
        let (mut rs, mut ra, mut rw) = (&mut start[..nodes], &mut adj[..], &mut weight[..]);
        for (&k, &m) in which.iter().zip(&entries) {
            let (s, r1) = std::mem::take(&mut rs).split_at_mut(graphs[k].n_nodes());
            let (a, r2) = std::mem::take(&mut ra).split_at_mut(m);
            let (w, r3) = std::mem::take(&mut rw).split_at_mut(if weights { m } else { 0 });
            (rs, ra, rw) = (r1, r2, r3);
            slots.push((s, a, w));
        }
        slots.into_par_iter().zip(which.par_iter().zip(&adj_base)).with_min_len(g).for_each(|((start, adj, weight), (&k, &base))| {
            let n = start.len();
            let mut fill = vec![0u32; n + 1];
            for e in graphs[k].edges().iter().filter(|e| e.i != e.j) {
                fill[e.i as usize + 1] += 1;
                fill[e.j as usize + 1] += 1;
            }
            for i in 0..n {
                fill[i + 1] += fill[i];
                start[i] = base as u32 + fill[i];
            }
            for e in graphs[k].edges().iter().filter(|e| e.i != e.j) {
                for (from, to) in [(e.i, e.j), (e.j, e.i)] {
                    let at = fill[from as usize] as usize;
                    adj[at] = to;
                    if !weight.is_empty() {
                        weight[at] = e.weight;
                    }
                    fill[from as usize] += 1;
                }
            }
        });
        Csr { start, adj, weight, node_offset }
    }
}
