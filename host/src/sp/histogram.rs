//! The histogram form of the shortest-path kernel (Kronecker deltas of h = 0 everywhere, GraKeL's
//! case): each graph becomes the counts of its (label u, label v, length) triples, and K(G, G′) is
//! the dot product of two count vectors — exact integers. A triple's key numbers it
//! lexicographically (`octile_types::sp::sp_key`) from dataset-wide label and length ids, so every
//! graph's histogram is a run of ascending keys, the same whether built here or on the GPU:
//!
//! ```text
//! Labels     { of_node: [u32; nodes of all graphs], node_offset: [graphs + 1], count }
//!              label id = rank of the node's feature row among the dataset's distinct rows
//! Lengths    Hops { n_lengths = max nodes }      unit weights: a length's id is its hop count
//!            Distinct([f64 bits, ascending])     otherwise: its rank among the distinct lengths
//! Histograms { runs: [SpHistogram { offset, len }; graphs], keys: [u64], counts: [u32] }
//!              graph g: keys[offset .. offset + len] ascending, counts alongside
//! ```
use super::gather::{concat, grain};
use super::paths::PathSet;
use crate::error::{OctileError, Result};
use crate::gram::control::{RunControl, blocks_of};
use crate::graph::Graph;
use crate::mgk::pack::feature_indices;
use octile_types::sp::{SpHistogram, sp_key, sp_keys_fit};
use rayon::prelude::*;

/// Every node's dataset-wide label id (Kronecker deltas of h = 0 on all features: two nodes have
/// the same id exactly when all their features are equal), and each graph's own labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    /// Label id per node, graph after graph.
    pub of_node: Vec<u32>,
    /// Per node: the index of its label among its graph's own labels (`own`).
    pub local_of_node: Vec<u32>,
    /// Graph g's nodes: `node_offset[g] .. node_offset[g + 1]`.
    pub node_offset: Vec<usize>,
    /// Per graph: the distinct label ids of its nodes, ascending.
    pub own: Vec<Vec<u32>>,
    /// Distinct labels.
    pub count: u32,
}

impl Labels {
    /// The labels of `graphs` on the node features `features` (none: every node the same label).
    pub fn build(graphs: &[Graph], features: &[String]) -> Result<Labels> {
        let stride = features.len().max(1);
        let g = grain(graphs.len(), graphs.iter().map(Graph::n_nodes).sum());
        // per graph: its distinct feature rows (as bits, −0 as 0 so that it equals 0 as the delta
        // says), sorted, and each node's index among them
        let per: Vec<(Vec<u64>, Vec<u32>)> = graphs
            .par_iter()
            .enumerate()
            .with_min_len(g)
            .map(|(k, g)| {
                let idx = feature_indices("node", features, g.node_feature_names(), k)?;
                let canon = |v: f64| if v == 0.0 { 0 } else { v.to_bits() };
                let rows: Vec<u64> = if idx.is_empty() {
                    vec![0; g.n_nodes()]
                } else {
                    (0..g.n_nodes()).flat_map(|i| idx.iter().map(move |&f| canon(g.node_features(i)[f]))).collect()
                };
                let mut distinct: Vec<&[u64]> = rows.chunks(stride).collect();
                distinct.sort_unstable();
                distinct.dedup();
                let local = rows.chunks(stride).map(|r| distinct.partition_point(|d| *d < r) as u32).collect();
                Ok((distinct.concat(), local))
            })
            .collect::<Result<_>>()?;
        // the dataset's distinct rows, sorted
        let mut all: Vec<&[u64]> = per.par_iter().flat_map_iter(|(d, _)| d.chunks(stride)).collect();
        all.par_sort_unstable();
        all.dedup();
        if all.len() > u32::MAX as usize {
            return Err(OctileError::InvalidRequest(format!("{} distinct node labels: more than 2^32", all.len())));
        }
        let own: Vec<Vec<u32>> =
            per.par_iter().with_min_len(g).map(|(d, _)| d.chunks(stride).map(|r| all.partition_point(|x| *x < r) as u32).collect()).collect();
        let globals: Vec<Vec<u32>> =
            per.par_iter().zip(&own).with_min_len(g).map(|((_, local), own)| local.iter().map(|&l| own[l as usize]).collect()).collect();
        let count = all.len() as u32;
        drop(all);
        let locals: Vec<Vec<u32>> = per.into_iter().map(|(_, l)| l).collect();
        let mut node_offset = Vec::with_capacity(graphs.len() + 1);
        node_offset.push(0);
        for g in graphs {
            node_offset.push(node_offset.last().copied().unwrap_or(0) + g.n_nodes());
        }
        Ok(Labels { of_node: concat(&globals), local_of_node: concat(&locals), node_offset, own, count })
    }

    /// Graph g's node labels.
    pub fn of_graph(&self, g: usize) -> &[u32] {
        &self.of_node[self.node_offset[g]..self.node_offset[g + 1]]
    }

    /// Graph g's nodes' indices among its own labels.
    pub fn local_of_graph(&self, g: usize) -> &[u32] {
        &self.local_of_node[self.node_offset[g]..self.node_offset[g + 1]]
    }
}

/// How path lengths become key ids.
#[derive(Clone, Debug, PartialEq)]
pub enum Lengths {
    /// Every edge weight is 1: a length is its hop count, below `n_lengths` (the largest graph's nodes).
    Hops {
        /// Length ids (> every hop count).
        n_lengths: u64,
    },
    /// Weighted graphs: a length's id is its rank among these (f64 bits of the distinct lengths, ascending).
    Distinct(Vec<u64>),
}

impl Lengths {
    /// `Hops` when every edge of `graphs` that is not a self-loop has weight 1.
    pub fn hops(graphs: &[Graph]) -> Option<Lengths> {
        let unit = graphs.par_iter().all(|g| g.edges().iter().all(|e| e.i == e.j || e.weight == 1.0));
        unit.then(|| Lengths::Hops { n_lengths: graphs.iter().map(|g| g.n_nodes() as u64).max().unwrap_or(0).max(1) })
    }

    /// The lengths of `set`: hop counts when `graphs` (the set's graphs) have unit weights, else
    /// the distinct lengths of its paths.
    pub fn of(graphs: &[Graph], set: &PathSet) -> Lengths {
        Lengths::hops(graphs).unwrap_or_else(|| {
            let mut d: Vec<u64> = (0..set.graphs.len())
                .into_par_iter()
                .flat_map_iter(|g| {
                    let mut w: Vec<u64> = set.sp_w[set.paths(g)].iter().map(|w| w.to_bits()).collect();
                    w.sort_unstable();
                    w.dedup();
                    w
                })
                .collect();
            d.par_sort_unstable();
            d.dedup();
            Lengths::Distinct(d)
        })
    }

    /// Length ids.
    pub fn count(&self) -> u64 {
        match self {
            Lengths::Hops { n_lengths } => *n_lengths,
            Lengths::Distinct(d) => d.len().max(1) as u64,
        }
    }

    fn id(&self, w: f64) -> u64 {
        match self {
            Lengths::Hops { .. } => w as u64,
            Lengths::Distinct(d) => d.partition_point(|&x| x < w.to_bits()) as u64,
        }
    }
}

/// Every graph's histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histograms {
    /// One run per graph.
    pub runs: Vec<SpHistogram>,
    /// Triple keys, ascending within a run.
    pub keys: Vec<u64>,
    /// Their counts.
    pub counts: Vec<u32>,
}

/// The error for key numberings past `u64`.
pub fn check_keys(labels: &Labels, lengths: &Lengths) -> Result<()> {
    if sp_keys_fit(labels.count as u64, lengths.count()) {
        Ok(())
    } else {
        Err(OctileError::InvalidRequest(format!(
            "{} node labels and {} path lengths: the histogram keys (labels² × lengths) pass 2^64",
            labels.count,
            lengths.count()
        )))
    }
}

impl Histograms {
    /// The histograms of `graphs`, all built on the host (shortest paths by [`PathSet`]).
    pub fn build(graphs: &[Graph], features: &[String]) -> Result<Histograms> {
        Histograms::on_host(graphs, &Labels::build(graphs, features)?)
    }

    /// The histograms of `graphs`, all built on the host, with their `labels` already known.
    pub fn on_host(graphs: &[Graph], labels: &Labels) -> Result<Histograms> {
        let set = PathSet::build(graphs, &[])?;
        let lengths = Lengths::of(graphs, &set);
        let all: Vec<usize> = (0..graphs.len()).collect();
        Histograms::from_paths(&set, &all, labels, &lengths)
    }

    /// The histograms of the graphs of `set`, whose graph k is the dataset's graph `which[k]` (its
    /// node labels in `labels`).
    pub fn from_paths(set: &PathSet, which: &[usize], labels: &Labels, lengths: &Lengths) -> Result<Histograms> {
        check_keys(labels, lengths)?;
        let (n_labels, n_lengths) = (labels.count as u64, lengths.count());
        let per: Vec<(Vec<u64>, Vec<u32>)> = (0..set.graphs.len())
            .into_par_iter()
            .map(|k| {
                let lab = labels.of_graph(which[k]);
                let mut t: Vec<u64> = set
                    .paths(k)
                    .map(|p| sp_key(lab[set.sp_s[p] as usize] as u64, lab[set.sp_e[p] as usize] as u64, lengths.id(set.sp_w[p]), n_labels, n_lengths))
                    .collect();
                t.sort_unstable();
                let (mut keys, mut counts) = (Vec::new(), Vec::new());
                for x in t {
                    match (keys.last(), counts.last_mut()) {
                        (Some(&y), Some(c)) if y == x => *c += 1,
                        _ => {
                            keys.push(x);
                            counts.push(1u32);
                        }
                    }
                }
                (keys, counts)
            })
            .collect();
        let mut h = Histograms::default();
        for (keys, counts) in per {
            h.runs.push(SpHistogram { offset: h.keys.len() as u32, len: keys.len() as u32 });
            h.keys.extend(keys);
            h.counts.extend(counts);
        }
        if h.keys.len() > u32::MAX as usize {
            return Err(OctileError::InvalidRequest(format!("{} histogram entries in all: more than 2^32; split the set", h.keys.len())));
        }
        Ok(h)
    }

    /// Σ count_a(t)·count_b(t) over the triples t both graphs have (a merge of sorted runs).
    pub fn dot(&self, a: usize, b: usize) -> f64 {
        let (ra, rb) = (self.runs[a], self.runs[b]);
        let (ia, ib) = (&self.keys[ra.offset as usize..(ra.offset + ra.len) as usize], &self.keys[rb.offset as usize..(rb.offset + rb.len) as usize]);
        let (ca, cb) = (&self.counts[ra.offset as usize..], &self.counts[rb.offset as usize..]);
        let (mut x, mut y, mut acc) = (0usize, 0usize, 0u64);
        while x < ia.len() && y < ib.len() {
            match ia[x].cmp(&ib[y]) {
                std::cmp::Ordering::Less => x += 1,
                std::cmp::Ordering::Greater => y += 1,
                std::cmp::Ordering::Equal => {
                    acc += ca[x] as u64 * cb[y] as u64;
                    x += 1;
                    y += 1;
                }
            }
        }
        acc as f64
    }

    /// The row-major matrix of runs `rows` × runs `cols` (the symmetric K(X) when they are the
    /// same range: its upper triangle is computed once and mirrored), rows in parallel, progress
    /// and cancellation per block of rows.
    pub fn matrix(&self, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>, ctl: &RunControl) -> Result<Vec<f64>> {
        let (nr, nc) = (rows.len(), cols.len());
        let symmetric = rows == cols;
        let block = (1 << 20) / nc.max(1) + 1;
        let mut upper: Vec<Vec<f64>> = Vec::with_capacity(nr);
        for r in blocks_of(nr, block) {
            if ctl.cancelled() {
                return Err(OctileError::Cancelled);
            }
            let part: Vec<Vec<f64>> =
                r.into_par_iter().map(|i| (if symmetric { i } else { 0 }..nc).map(|j| self.dot(rows.start + i, cols.start + j)).collect()).collect();
            ctl.report(part.iter().map(Vec::len).sum());
            upper.extend(part);
        }
        Ok(if symmetric {
            (0..nr * nc).into_par_iter().map(|k| if k / nc <= k % nc { upper[k / nc][k % nc - k / nc] } else { upper[k % nc][k / nc - k % nc] }).collect()
        } else {
            upper.into_par_iter().flatten_iter().collect()
        })
    }
}
