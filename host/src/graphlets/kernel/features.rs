//! φ(G) of every graph of a call from ONE graphlet transform: the graphs become one [`Adjacency`],
//! their disjoint union (node ids shifted by the nodes before them), so a whole set is one
//! transform (one GPU launch sequence once the GPU backend lands). Graphlets are connected, so a
//! node's counts in the union are its counts in its own graph; each graph's rows are then summed
//! or binned per orbit.
use crate::error::Result;
use crate::graph::Graph;
use crate::graphlets::adjacency::Adjacency;
use crate::graphlets::kernel_config::{Counts, FeatureForm, GraphletConfig, Scale, bin_of};
use crate::graphlets::{Keep, TransformInfo, TransformParams, transform};
use octile_types::graphlets::N_ORBITS;
use rayon::prelude::*;

/// The feature vectors of a list of graphs, and how the transform behind them went.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphFeatures {
    /// Entries per graph.
    pub dim: usize,
    /// graphs × `dim`, row-major: row g = φ(graph g).
    pub values: Vec<f64>,
    /// Nodes of the union (all graphs).
    pub nodes: usize,
    /// Undirected edges of the union, self-loops and repeats dropped.
    pub edges: u64,
    /// Self-loops of the inputs, dropped (graphlets are subgraphs of a simple graph).
    pub self_loops_dropped: u64,
    /// The one transform's report.
    pub transform: TransformInfo,
}

impl GraphFeatures {
    /// φ of graph `g`.
    pub fn row(&self, g: usize) -> &[f64] {
        &self.values[g * self.dim..(g + 1) * self.dim]
    }
    /// Graphs.
    pub fn n_graphs(&self) -> usize {
        self.values.len().checked_div(self.dim).unwrap_or(0)
    }
}

/// The disjoint union of `graphs` as one [`Adjacency`] and each graph's first node in it
/// (`graphs.len() + 1` offsets, the last = all nodes).
pub fn disjoint_union(graphs: &[&Graph]) -> Result<(Adjacency, Vec<usize>)> {
    let u = Adjacency::union_edges(graphs)?;
    Ok((Adjacency::from_edges(u.n_nodes, &u.edges)?, u.offsets))
}

/// φ of every graph of `sets` (in order, set after set) under `config`, from one transform on
/// `config.backend`.
pub fn features(sets: &[&[Graph]], config: &GraphletConfig) -> Result<GraphFeatures> {
    let graphs: Vec<&Graph> = sets.iter().flat_map(|s| s.iter()).collect();
    let (a, offsets) = disjoint_union(&graphs)?;
    let keep = match config.counts {
        Counts::Net => Keep::Net,
        Counts::Raw => Keep::Raw,
    };
    let params = TransformParams { backend: config.backend, keep };
    let (f, info) = transform(&a, &params)?;
    let counts = match config.counts {
        Counts::Net => &f.net,
        Counts::Raw => &f.raw,
    };
    let dim = config.dim();
    let mut values = vec![0.0; graphs.len() * dim];
    values.par_chunks_mut(dim.max(1)).enumerate().for_each(|(g, row)| graph_row(&counts[offsets[g] * N_ORBITS..offsets[g + 1] * N_ORBITS], config, row));
    Ok(GraphFeatures { dim, values, nodes: a.n_nodes(), edges: a.n_edges(), self_loops_dropped: a.self_loops_dropped, transform: info })
}

/// φ of one graph from its nodes' counts (`rows`: nodes × 16, row-major) into `out`.
fn graph_row(rows: &[i64], config: &GraphletConfig, out: &mut [f64]) {
    match config.features {
        FeatureForm::Summed => {
            for (slot, &o) in out.iter_mut().zip(&config.orbits) {
                // exact in i128 (16 nodes' worth of i64::MAX would already pass i64), one rounding
                *slot = rows.chunks_exact(N_ORBITS).map(|r| r[o] as i128).sum::<i128>() as f64;
            }
        }
        FeatureForm::Histogram => {
            let bins = config.bins;
            for (hist, &o) in out.chunks_exact_mut(bins).zip(&config.orbits) {
                for r in rows.chunks_exact(N_ORBITS) {
                    hist[bin_of(r[o], bins)] += 1.0;
                }
            }
        }
    }
    if config.scale == Scale::Log1p {
        for v in out.iter_mut() {
            *v = v.ln_1p();
        }
    }
}
