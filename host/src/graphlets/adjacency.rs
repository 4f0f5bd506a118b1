//! The graphlet transform's input: the simple undirected graph of an edge list, as a CSR with
//! sorted rows, both directions of every edge, self-loops and repeated edges dropped (graphlets
//! are subgraphs of a simple graph; FGlT counted a self-loop as a neighbour and gave counts no
//! graphlet has):
//!
//! ```text
//! row_start[i] .. row_start[i + 1]   node i's run in col, ascending, no i, no repeats
//! col[..]                            u32 neighbour ids          (2·m entries for m edges)
//! ```
//! Why sorted rows: membership tests (is k a neighbour of i?) are binary searches and row
//! intersections are merges, on both backends; u64 row starts so that 2·m may pass 2³².
use crate::error::Result;
use crate::graph::{Graph, invalid};
use rayon::prelude::*;

/// A simple undirected graph in CSR form (see the module picture).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adjacency {
    row_start: Vec<u64>,
    col: Vec<u32>,
    /// Self-loops in the input, dropped.
    pub self_loops_dropped: u64,
    /// Repeats of an edge already given (either direction), dropped.
    pub repeats_dropped: u64,
}

/// Several graphs as one: their disjoint union's edge list ([`Adjacency::union_edges`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnionEdges {
    /// Nodes of all the graphs.
    pub n_nodes: usize,
    /// Every graph's edges, node ids shifted by the nodes before it.
    pub edges: Vec<(u32, u32)>,
    /// Each graph's first node: `graphs.len() + 1` offsets, the last = all nodes.
    pub offsets: Vec<usize>,
}

impl Adjacency {
    /// The graph of `n_nodes` nodes and `edges` (node ids < `n_nodes`; either direction; self-loops
    /// and repeats dropped and counted). Sizes are checked before the arrays are allocated.
    pub fn from_edges(n_nodes: usize, edges: &[(u32, u32)]) -> Result<Adjacency> {
        if n_nodes >= u32::MAX as usize {
            return Err(invalid(format!("{n_nodes} nodes: node ids must fit 32 bits")));
        }
        if let Some(&(i, j)) = edges.par_iter().find_any(|&&(i, j)| i as usize >= n_nodes || j as usize >= n_nodes) {
            return Err(invalid(format!("edge ({i}, {j}): node out of range (graph has {n_nodes} nodes)")));
        }
        // per edge: both directions as u64 keys (16 bytes), collected through the pool's per-thread
        // chunks (twice that while they are joined), then 8 bytes of columns while the keys live:
        // at 24 a graph that passed the check aborted in the collect under `ulimit -v`
        crate::memory::check_with(
            ((n_nodes as u128 + 1) * 8) + (edges.len() as u128) * 40,
            None,
            || format!("the graphlet transform's adjacency of {n_nodes} nodes and {} edges", edges.len()),
            "a smaller graph",
        )?;
        // both directions, self-loops out, sorted by (row, col), repeats out
        let self_loops = edges.par_iter().filter(|&&(i, j)| i == j).count() as u64;
        let mut both: Vec<u64> =
            edges.par_iter().filter(|&&(i, j)| i != j).flat_map_iter(|&(i, j)| [((i as u64) << 32) | j as u64, ((j as u64) << 32) | i as u64]).collect();
        both.par_sort_unstable();
        let before = both.len();
        both.dedup();
        let repeats = ((before - both.len()) / 2) as u64;
        let mut row_start = vec![0u64; n_nodes + 1];
        for &key in &both {
            row_start[(key >> 32) as usize + 1] += 1;
        }
        for i in 0..n_nodes {
            row_start[i + 1] += row_start[i];
        }
        let col = both.par_iter().map(|&key| key as u32).collect();
        Ok(Adjacency { row_start, col, self_loops_dropped: self_loops, repeats_dropped: repeats })
    }

    /// The disjoint union of `graphs` as one edge list (each graph's node ids shifted by the nodes
    /// of the graphs before it; weights and features not used). A union whose node ids would not
    /// fit 32 bits is an error before any edge is copied.
    pub fn union_edges(graphs: &[&Graph]) -> Result<UnionEdges> {
        let mut offsets = Vec::with_capacity(graphs.len() + 1);
        let mut total = 0usize;
        for g in graphs {
            offsets.push(total);
            total += g.n_nodes();
        }
        offsets.push(total);
        if total >= u32::MAX as usize {
            return Err(invalid(format!(
                "the {} graphs have {total} nodes together: as one graph (their disjoint union) its node ids must fit 32 bits (use fewer graphs at a time)",
                graphs.len()
            )));
        }
        let edges = graphs
            .par_iter()
            .zip(&offsets[..graphs.len()])
            .flat_map_iter(|(g, &off)| g.edges().iter().map(move |e| (e.i + off as u32, e.j + off as u32)))
            .collect();
        Ok(UnionEdges { n_nodes: total, edges, offsets })
    }

    /// The adjacency of a [`Graph`] (its weights and features are not used).
    pub fn from_graph(g: &Graph) -> Result<Adjacency> {
        let edges: Vec<(u32, u32)> = g.edges().iter().map(|e| (e.i, e.j)).collect();
        Adjacency::from_edges(g.n_nodes(), &edges)
    }

    /// A CSR given as is (rows must be ascending, without self-loops or repeats, symmetric):
    /// checked, an error naming the first broken row otherwise.
    pub fn from_csr(row_start: Vec<u64>, col: Vec<u32>) -> Result<Adjacency> {
        let n = row_start.len().checked_sub(1).ok_or_else(|| invalid("row_start is empty".into()))?;
        if row_start[0] != 0 || row_start[n] != col.len() as u64 || row_start.windows(2).any(|w| w[0] > w[1]) {
            return Err(invalid("row_start must rise from 0 to the number of entries".into()));
        }
        let a = Adjacency { row_start, col, self_loops_dropped: 0, repeats_dropped: 0 };
        if let Some(i) = (0..n).into_par_iter().find_first(|&i| {
            let r = a.row(i);
            r.windows(2).any(|w| w[0] >= w[1]) || r.iter().any(|&k| k as usize >= n || k as usize == i || a.row(k as usize).binary_search(&(i as u32)).is_err())
        }) {
            return Err(invalid(format!("row {i} is not ascending, names a node past the graph or itself, or lacks its mirror entry")));
        }
        Ok(a)
    }

    /// Nodes.
    pub fn n_nodes(&self) -> usize {
        self.row_start.len() - 1
    }
    /// Undirected edges.
    pub fn n_edges(&self) -> u64 {
        self.col.len() as u64 / 2
    }
    /// deg(i).
    pub fn degree(&self, i: usize) -> u64 {
        self.row_start[i + 1] - self.row_start[i]
    }
    /// The largest degree (0 without nodes).
    pub fn max_degree(&self) -> u64 {
        (0..self.n_nodes()).into_par_iter().map(|i| self.degree(i)).max().unwrap_or(0)
    }
    /// Node i's neighbours, ascending.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.col[self.row_start[i] as usize..self.row_start[i + 1] as usize]
    }
    /// The row starts (n + 1).
    pub fn row_start(&self) -> &[u64] {
        &self.row_start
    }
    /// The neighbour ids of every row.
    pub fn col(&self) -> &[u32] {
        &self.col
    }
}
