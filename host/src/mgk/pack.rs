//! Packing graphs into the octile format of `octile_types::mgk::layout` — the only format every solver
//! (CPU, GPU) reads.
use crate::error::{OctileError, Result};
use crate::graph::{Graph, at_graph};
use crate::mgk::config::ResolvedKernel;
use octile_types::kernel_spec::KernelSpec;
use octile_types::mgk::layout::{NODE_FEATURES, NZ_FEATURES};
use octile_types::mgk::tiling::n_tiles;
use octile_types::{GraphDesc, Octile, Real};

/// A set of graphs in octile format, in precision `T`.
#[derive(Clone, Debug)]
pub struct PackedGraphs<T> {
    /// One per graph.
    pub descs: Vec<GraphDesc>,
    /// CSR row pointers over tile rows (absolute octile indices).
    pub row_ptr: Vec<u32>,
    /// Non-empty tiles.
    pub octiles: Vec<Octile>,
    /// Per nonzero: weight, edge features.
    pub edge_data: Vec<T>,
    /// Per node: d, p, node features.
    pub node_data: Vec<T>,
    /// Values per node row.
    pub node_stride: usize,
    /// Values per nonzero row.
    pub nz_stride: usize,
    /// Compact storage (nnz rows per octile) or dense (64 rows per octile).
    pub compact: bool,
}

impl<T> PackedGraphs<T> {
    /// Number of graphs.
    pub fn len(&self) -> usize {
        self.descs.len()
    }
    /// Whether there are no graphs.
    pub fn is_empty(&self) -> bool {
        self.descs.is_empty()
    }
    /// Nodes of graph `g`.
    pub fn n_nodes(&self, g: usize) -> usize {
        self.descs[g].n_nodes as usize
    }
    /// Octiles of tile-row `r` of graph `g` (index range into `octiles`).
    #[inline]
    pub fn row_octiles(&self, g: usize, r: usize) -> std::ops::Range<usize> {
        let o = self.descs[g].row_ptr_offset as usize + r;
        self.row_ptr[o] as usize..self.row_ptr[o + 1] as usize
    }
    /// Node row `i` of graph `g`.
    #[inline]
    pub fn node_row(&self, g: usize, i: usize) -> &[T] {
        let s = (self.descs[g].node_offset as usize + i) * self.node_stride;
        &self.node_data[s..s + self.node_stride]
    }
    /// All octiles of graph `g` (index range into `octiles`).
    pub fn graph_octiles(&self, g: usize) -> std::ops::Range<usize> {
        let d = &self.descs[g];
        self.row_ptr[d.row_ptr_offset as usize] as usize..self.row_ptr[d.row_ptr_offset as usize + d.n_tile_rows as usize] as usize
    }
    /// Expand the octiles of graph `g` into `out`: 64 entries of `nz_stride` values per octile, in
    /// octile order (the layout of `octile_types::mgk::primitives`; zeros where the bitmap is clear).
    pub fn expand_graph(&self, g: usize, out: &mut Vec<T>)
    where
        T: Real,
    {
        let s = self.nz_stride;
        let range = self.graph_octiles(g);
        out.clear();
        out.resize(range.len() * 64 * s, T::ZERO);
        for (k, t) in self.octiles[range].iter().enumerate() {
            expand_octile(t, &self.edge_data, s, self.compact, &mut out[k * 64 * s..(k + 1) * 64 * s]);
        }
    }
    /// Octiles of graph `g`.
    pub fn n_octiles(&self, g: usize) -> usize {
        let d = &self.descs[g];
        (self.row_ptr[d.row_ptr_offset as usize + d.n_tile_rows as usize] - self.row_ptr[d.row_ptr_offset as usize]) as usize
    }
}

/// Expand octile `t` into `dst` (64·stride values, the layout of `octile_types::mgk::primitives`):
/// its nonzeros copied from `edge_data` (compact: in bit order from `nz_offset`; dense storage:
/// entry k at `nz_offset + k`), zeros elsewhere.
pub fn expand_octile<T: Real>(t: &Octile, edge_data: &[T], stride: usize, compact: bool, dst: &mut [T]) {
    dst.fill(T::ZERO);
    for (bit, idx) in t.nonzeros() {
        let src = if compact { idx } else { t.nz_offset as usize + bit };
        dst[bit * stride..(bit + 1) * stride].copy_from_slice(&edge_data[src * stride..(src + 1) * stride]);
    }
}

/// What packing needs besides the graphs.
#[derive(Clone, Debug)]
pub struct PackOptions<'a> {
    /// Features and kernels.
    pub kernel: &'a ResolvedKernel,
    /// Stopping probability.
    pub q: f64,
    /// Starting probability.
    pub p: f64,
    /// Compact nonzeros (`TILE_STORAGE_COMPACT`) or all 64 entries per tile (`TILE_STORAGE_DENSE`).
    pub compact: bool,
    /// Only non-empty tiles, or every tile of the ⌈n/8⌉² grid.
    pub skip_empty: bool,
}

impl<'a> PackOptions<'a> {
    /// The fast defaults: compact storage, non-empty tiles only.
    pub fn new(kernel: &'a ResolvedKernel, q: f64, p: f64) -> Self {
        PackOptions { kernel, q, p, compact: true, skip_empty: true }
    }
}

/// Pack `graphs` (all of them, in order, each in its own node order: reordering is done before, by
/// the solver) into one set. With `compact = false` every octile's `nz_offset` indexes a block of
/// 64 entries (`TILE_STORAGE_DENSE`); with `skip_empty = false` every tile of each graph's grid is
/// stored, empty ones with `nz_mask = 0`.
pub fn pack<T: Real>(graphs: &[Graph], opt: &PackOptions) -> Result<PackedGraphs<T>> {
    let k = opt.kernel;
    let node_stride = NODE_FEATURES + k.node_features.len();
    let nz_stride = NZ_FEATURES + k.edge_features.len();
    let mut out = PackedGraphs {
        descs: Vec::with_capacity(graphs.len()),
        row_ptr: Vec::new(),
        octiles: Vec::new(),
        edge_data: Vec::new(),
        node_data: Vec::new(),
        node_stride,
        nz_stride,
        compact: opt.compact,
    };
    let mut n_nodes_total = 0usize;
    let mut nnz_total = 0usize;
    for (gi, g) in graphs.iter().enumerate() {
        g.validate().map_err(|e| at_graph(e, gi))?;
        let node_idx = feature_indices("node", &k.node_features, g.node_feature_names(), gi)?;
        // a graph without edges reads no edge feature: it need not name them (K is still defined)
        let edge_idx = if g.n_edges() == 0 { Vec::new() } else { feature_indices("edge", &k.edge_features, g.edge_feature_names(), gi)? };
        let n = g.n_nodes();
        let (edge_start, node_start) = (out.edge_data.len(), out.node_data.len());
        out.descs.push(GraphDesc {
            n_nodes: n as u32,
            n_tile_rows: n_tiles(n) as u32,
            row_ptr_offset: out.row_ptr.len() as u32,
            node_offset: n_nodes_total as u32,
        });
        // node rows; weights divided by the graph's scale (a power of two: K does not depend on it)
        let scale = g.weight_scale();
        let deg = g.degrees_scaled(scale);
        for (i, &deg_i) in deg.iter().enumerate().take(n) {
            let d = if deg_i > 0.0 { deg_i } else { 1.0 } / (1.0 - opt.q);
            out.node_data.push(T::from_f64(d));
            out.node_data.push(T::from_f64(opt.p));
            let f = g.node_features(i);
            for (pos, &src) in node_idx.iter().enumerate() {
                let v = f[src];
                check_categorical(v, k.categorical_node[pos], gi, || format!("node {i}"), &k.node_features[pos])?;
                out.node_data.push(T::from_f64(v));
            }
        }
        // nonzeros of both triangles, keyed by (tile_row, tile_col, bit)
        let mut entries: Vec<(u32, u32, u32, usize)> = Vec::with_capacity(2 * g.n_edges());
        for (e, edge) in g.edges().iter().enumerate() {
            let f = g.edge_features(e);
            for (pos, &src) in edge_idx.iter().enumerate() {
                check_categorical(f[src], k.categorical_edge[pos], gi, || format!("edge ({}, {})", edge.i, edge.j), &k.edge_features[pos])?;
            }
            let (i, j) = (edge.i, edge.j);
            entries.push((i / 8, j / 8, (i % 8) * 8 + j % 8, e));
            if i != j {
                entries.push((j / 8, i / 8, (j % 8) * 8 + i % 8, e));
            }
        }
        entries.sort_unstable_by_key(|&(r, c, b, _)| (r, c, b));
        let nt = n_tiles(n) as u32;
        let mut s = 0;
        for tr in 0..nt {
            out.row_ptr.push(out.octiles.len() as u32);
            let mut next_col = 0u32; // with skip_empty = false: the next tile column to emit
            loop {
                let here = s < entries.len() && entries[s].0 == tr;
                // the next tile to emit: the next stored one, or (dense grid) the next column
                let tc = match (here, opt.skip_empty) {
                    (true, true) => entries[s].1,
                    (true, false) => next_col.min(entries[s].1),
                    (false, false) if next_col < nt => next_col,
                    _ => break,
                };
                next_col = tc + 1;
                let mut octile = Octile { nz_mask: 0, tile_row: tr, tile_col: tc, nz_offset: nnz_total as u32, _pad: 0 };
                let start = s;
                while s < entries.len() && entries[s].0 == tr && entries[s].1 == tc {
                    octile.nz_mask |= 1u64 << entries[s].2;
                    s += 1;
                }
                let row_of = |e: usize, data: &mut Vec<T>| {
                    data.push(T::from_f64(g.edges()[e].weight * scale));
                    let f = g.edge_features(e);
                    data.extend(edge_idx.iter().map(|&src| T::from_f64(f[src])));
                };
                if opt.compact {
                    for &(_, _, _, e) in &entries[start..s] {
                        row_of(e, &mut out.edge_data);
                    }
                    nnz_total += s - start;
                } else {
                    let mut k = start;
                    for bit in 0..64u32 {
                        if k < s && entries[k].2 == bit {
                            row_of(entries[k].3, &mut out.edge_data);
                            k += 1;
                        } else {
                            out.edge_data.extend(std::iter::repeat_n(T::ZERO, nz_stride));
                        }
                    }
                    nnz_total += 64;
                }
                out.octiles.push(octile);
            }
        }
        out.row_ptr.push(out.octiles.len() as u32);
        // f32 packing: a value beyond f32's range would become ±inf (and κe NaN); the GPU's
        // staging also relies on every stored value being finite in T
        if let Some(v) = out.edge_data[edge_start..].iter().chain(&out.node_data[node_start..]).find(|v| !v.to_f64().is_finite()) {
            let what = if T::BYTES == 4 {
                format!("a weight or feature is outside the f32 range (|v| > 3.4e38; f32 gives {}); use precision f64", v.to_f64())
            } else {
                format!("a weight or feature is not finite ({})", v.to_f64())
            };
            return Err(OctileError::InvalidGraph { graph: Some(gi), what });
        }
        n_nodes_total += n;
        if n_nodes_total >= u32::MAX as usize || nnz_total >= u32::MAX as usize || out.octiles.len() >= u32::MAX as usize {
            return Err(OctileError::InvalidGraph { graph: Some(gi), what: "graph set too large for 32-bit offsets; split it".into() });
        }
    }
    Ok(out)
}

/// Positions of the `wanted` features among a graph's feature names, or `MissingFeature`.
pub(crate) fn feature_indices(kind: &'static str, wanted: &[String], have: &[String], graph: usize) -> Result<Vec<usize>> {
    wanted
        .iter()
        .map(|w| have.iter().position(|h| h == w).ok_or_else(|| OctileError::MissingFeature { kind, feature: w.clone(), graph, available: have.join(", ") }))
        .collect()
}

fn check_categorical(v: f64, categorical: bool, graph: usize, what: impl Fn() -> String, feature: &str) -> Result<()> {
    if categorical && !KernelSpec::categorical_ok(v) {
        return Err(OctileError::InvalidGraph {
            graph: Some(graph),
            what: format!("{}: feature '{feature}' = {v} is read by a Kronecker delta and must be an integer with |v| < 2^24", what()),
        });
    }
    Ok(())
}
