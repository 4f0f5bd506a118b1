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
/// stored, empty ones with `nz_mask = 0`. A large set is packed in parts on the pool and joined:
/// the same set bit for bit, and the same error (the first graph's in order).
pub fn pack<T: Real>(graphs: &[Graph], opt: &PackOptions) -> Result<PackedGraphs<T>> {
    let parts = crate::parallel::parts_by_weight(graphs.len(), |i| graphs[i].n_nodes() + 2 * graphs[i].n_edges());
    pack_in_parts(graphs, opt, &parts)
}

/// [`pack`] of each range of `parts` (consecutive, covering `graphs`) on the pool, joined in order
/// (errors: [`crate::parallel::try_parts`]).
fn pack_in_parts<T: Real>(graphs: &[Graph], opt: &PackOptions, parts: &[std::ops::Range<usize>]) -> Result<PackedGraphs<T>> {
    if parts.len() <= 1 {
        return pack_part(graphs, 0, opt);
    }
    let mut packed = crate::parallel::try_parts(parts, |r| pack_part::<T>(&graphs[r.clone()], r.start, opt))?;
    // a set past the 32-bit offsets: one pass names the graph where they ran out
    if !offsets_fit(&packed) {
        return pack_part(graphs, 0, opt);
    }
    if packed.is_empty() {
        return pack_part(graphs, 0, opt);
    }
    let first = packed.remove(0);
    Ok(join_packed(first, packed))
}

/// Whether packed parts of consecutive graphs, joined, keep every offset within 32 bits.
fn offsets_fit<T>(parts: &[PackedGraphs<T>]) -> bool {
    let total = |f: fn(&PackedGraphs<T>) -> usize| parts.iter().map(f).sum::<usize>();
    let Some(first) = parts.first() else { return true };
    let fits = |n: usize| n < u32::MAX as usize;
    fits(total(|p| p.node_data.len()) / first.node_stride)
        && fits(total(|p| p.edge_data.len()) / first.nz_stride)
        && fits(total(|p| p.octiles.len()))
        && fits(total(|p| p.row_ptr.len()))
}

/// Packed parts of consecutive graphs ([`offsets_fit`]) as one set, each part's offsets moved past
/// the ones before.
fn join_packed<T>(mut out: PackedGraphs<T>, parts: Vec<PackedGraphs<T>>) -> PackedGraphs<T> {
    let (ns, nzs) = (out.node_stride, out.nz_stride);
    // the whole set's room at once (no regrowth while the parts are still held)
    out.descs.reserve(parts.iter().map(|p| p.descs.len()).sum());
    out.row_ptr.reserve(parts.iter().map(|p| p.row_ptr.len()).sum());
    out.octiles.reserve(parts.iter().map(|p| p.octiles.len()).sum());
    out.edge_data.reserve(parts.iter().map(|p| p.edge_data.len()).sum());
    out.node_data.reserve(parts.iter().map(|p| p.node_data.len()).sum());
    for mut p in parts {
        let (rows, octiles, nonzeros, nodes) =
            (out.row_ptr.len() as u32, out.octiles.len() as u32, (out.edge_data.len() / nzs) as u32, (out.node_data.len() / ns) as u32);
        for d in &mut p.descs {
            d.row_ptr_offset += rows;
            d.node_offset += nodes;
        }
        for r in &mut p.row_ptr {
            *r += octiles;
        }
        for o in &mut p.octiles {
            o.nz_offset += nonzeros;
        }
        out.descs.append(&mut p.descs);
        out.row_ptr.append(&mut p.row_ptr);
        out.octiles.append(&mut p.octiles);
        out.edge_data.append(&mut p.edge_data);
        out.node_data.append(&mut p.node_data);
    }
    out
}

/// [`pack`] in one pass; `first`: the index of `graphs[0]` in the caller's set (errors name it).
fn pack_part<T: Real>(graphs: &[Graph], first: usize, opt: &PackOptions) -> Result<PackedGraphs<T>> {
    let (node_stride, nz_stride) = strides(opt.kernel);
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
    // one row's values, reused for every node and nonzero of every graph
    let mut row = vec![0.0; node_stride.max(nz_stride)];
    for (gi, g) in graphs.iter().enumerate() {
        let gi = first + gi;
        let rows = GraphRows::read(g, gi, opt)?;
        let n = g.n_nodes();
        let (edge_start, node_start) = (out.edge_data.len(), out.node_data.len());
        out.descs.push(GraphDesc {
            n_nodes: n as u32,
            n_tile_rows: n_tiles(n) as u32,
            row_ptr_offset: out.row_ptr.len() as u32,
            node_offset: n_nodes_total as u32,
        });
        for i in 0..n {
            rows.node_row_into(i, &mut row[..node_stride]);
            out.node_data.extend(row[..node_stride].iter().map(|&v| T::from_f64(v)));
        }
        // nonzeros of both triangles, keyed by (tile_row, tile_col, bit)
        let mut entries: Vec<(u32, u32, u32, usize)> = Vec::with_capacity(2 * g.n_edges());
        for (e, edge) in g.edges().iter().enumerate() {
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
                let mut row_of = |e: usize, data: &mut Vec<T>| {
                    rows.edge_row_into(e, &mut row[..nz_stride]);
                    data.extend(row[..nz_stride].iter().map(|&v| T::from_f64(v)));
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

/// Values per node row and per nonzero row of `kernel`'s packing.
pub fn strides(kernel: &ResolvedKernel) -> (usize, usize) {
    (NODE_FEATURES + kernel.node_features.len(), NZ_FEATURES + kernel.edge_features.len())
}

/// One graph as packing reads it, checked: valid ([`Graph::validate`]), naming every feature the
/// kernel reads, with integer values where a Kronecker delta reads them. Gives its node rows (d,
/// p, node features) and nonzero rows (weight, edge features), weights divided by the graph's
/// scale (a power of two: K does not depend on it, [`Graph::weight_scale`]) — the values of every
/// packed layout (the octiles here, the resident solver's runs).
pub struct GraphRows<'g> {
    g: &'g Graph,
    node_idx: Vec<usize>,
    edge_idx: Vec<usize>,
    scale: f64,
    deg: Vec<f64>,
    /// 1 − q and p.
    one_minus_q: f64,
    p: f64,
}

impl<'g> GraphRows<'g> {
    /// Graph `g`, number `gi` of the caller's set (errors name it).
    pub fn read(g: &'g Graph, gi: usize, opt: &PackOptions) -> Result<Self> {
        let k = opt.kernel;
        g.validate().map_err(|e| at_graph(e, gi))?;
        let node_idx = feature_indices("node", &k.node_features, g.node_feature_names(), gi)?;
        // a graph without edges reads no edge feature: it need not name them (K is still defined)
        let edge_idx = if g.n_edges() == 0 { Vec::new() } else { feature_indices("edge", &k.edge_features, g.edge_feature_names(), gi)? };
        for i in 0..g.n_nodes() {
            let f = g.node_features(i);
            for (pos, &src) in node_idx.iter().enumerate() {
                check_categorical(f[src], k.categorical_node[pos], gi, || format!("node {i}"), &k.node_features[pos])?;
            }
        }
        for (e, edge) in g.edges().iter().enumerate() {
            let f = g.edge_features(e);
            for (pos, &src) in edge_idx.iter().enumerate() {
                check_categorical(f[src], k.categorical_edge[pos], gi, || format!("edge ({}, {})", edge.i, edge.j), &k.edge_features[pos])?;
            }
        }
        let scale = g.weight_scale();
        Ok(GraphRows { g, node_idx, edge_idx, scale, deg: g.degrees_scaled(scale), one_minus_q: 1.0 - opt.q, p: opt.p })
    }
    /// d of a node whose (scaled) degree is `deg`: deg / (1 − q), 1 / (1 − q) for an isolated node.
    #[inline]
    pub fn d_of(&self, deg: f64) -> f64 {
        (if deg > 0.0 { deg } else { 1.0 }) / self.one_minus_q
    }
    /// Node i's row into `dst` (`strides().0` values): d_i / (1 − q) (d_i its scaled degree, 1
    /// for an isolated node: [`GraphRows::d_of`]), p, its features.
    #[inline]
    pub fn node_row_into(&self, i: usize, dst: &mut [f64]) {
        let f = self.g.node_features(i);
        dst[0] = self.d_of(self.deg[i]);
        dst[1] = self.p;
        for (o, &src) in dst[2..].iter_mut().zip(&self.node_idx) {
            *o = f[src];
        }
    }
    /// Edge e's row into `dst` (`strides().1` values): its scaled weight, its features.
    #[inline]
    pub fn edge_row_into(&self, e: usize, dst: &mut [f64]) {
        let f = self.g.edge_features(e);
        dst[0] = self.g.edges()[e].weight * self.scale;
        for (o, &src) in dst[1..].iter_mut().zip(&self.edge_idx) {
            *o = f[src];
        }
    }
}

/// Positions of the `wanted` features among a graph's feature names, or `MissingFeature`.
pub fn feature_indices(kind: &'static str, wanted: &[String], have: &[String], graph: usize) -> Result<Vec<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgk::config::synthetic_kernel;

    /// NWS and BA graphs of 5 to 120 nodes with a label and an integer length.
    fn graphs(seed: u64) -> Vec<Graph> {
        use crate::generators::{barabasi_albert, newman_watts_strogatz};
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..14)
            .map(|k| {
                let n = 5 + 9 * k;
                let edges = if k % 2 == 0 { newman_watts_strogatz(n, 3, 0.1, &mut rng) } else { barabasi_albert(n, 2, &mut rng) };
                let mut g = Graph::new(n, &["label"], &["length"]);
                for i in 0..n {
                    g.set_node_features(i, &[rng.gen_range(0..3) as f64]).unwrap();
                }
                for (u, v) in edges {
                    g.add_edge(u, v, rng.gen_range(1..4) as f64, &[rng.gen_range(1..5) as f64]).unwrap();
                }
                g
            })
            .collect()
    }

    fn cuts(n: usize) -> Vec<Vec<std::ops::Range<usize>>> {
        vec![vec![0..1, 1..6, 6..n], (0..n).map(|g| g..g + 1).collect(), vec![0..n - 1, n - 1..n]]
    }

    #[test]
    fn packing_in_parts_gives_the_one_pass_set_in_every_layout_and_precision() {
        let g = graphs(5);
        let resolved = synthetic_kernel(0.05).resolve().unwrap();
        for (compact, skip_empty) in [(true, true), (false, true), (true, false), (false, false)] {
            let opt = PackOptions { compact, skip_empty, ..PackOptions::new(&resolved, 0.05, 1.0) };
            let one64 = format!("{:?}", pack_part::<f64>(&g, 0, &opt).unwrap());
            let one32 = format!("{:?}", pack_part::<f32>(&g, 0, &opt).unwrap());
            for parts in cuts(g.len()) {
                assert_eq!(
                    format!("{:?}", pack_in_parts::<f64>(&g, &opt, &parts).unwrap()),
                    one64,
                    "f64, compact {compact}, skip_empty {skip_empty}, parts {parts:?}"
                );
                assert_eq!(
                    format!("{:?}", pack_in_parts::<f32>(&g, &opt, &parts).unwrap()),
                    one32,
                    "f32, compact {compact}, skip_empty {skip_empty}, parts {parts:?}"
                );
            }
            assert_eq!(format!("{:?}", pack::<f64>(&g, &opt).unwrap()), one64);
        }
    }

    #[test]
    fn packing_in_parts_meets_the_first_error_in_graph_order() {
        let mut g = graphs(6);
        let resolved = synthetic_kernel(0.05).resolve().unwrap();
        let opt = PackOptions::new(&resolved, 0.05, 1.0);
        // graph 8 lacks the edge feature, graph 11 the node feature: graph 8's error from any cut
        g[8] = Graph::new(3, &["label"], &["weightless"]);
        g[8].add_edge(0, 1, 1.0, &[1.0]).unwrap();
        g[11] = Graph::new(2, &["colour"], &["length"]);
        let one = pack_part::<f64>(&g, 0, &opt).unwrap_err();
        assert!(matches!(&one, OctileError::MissingFeature { graph: 8, .. }), "{one}");
        for parts in cuts(g.len()) {
            assert_eq!(pack_in_parts::<f64>(&g, &opt, &parts).unwrap_err().to_string(), one.to_string(), "parts {parts:?}");
        }
    }

    #[test]
    fn large_sets_are_cut_into_parts_of_about_equal_work() {
        use crate::parallel::{PARTS_MIN_WEIGHT, parts_by_weight};
        let one = |n: usize| -> Vec<std::ops::Range<usize>> { std::iter::once(0..n).collect() };
        assert_eq!(parts_by_weight(10, |_| 1), one(10), "small: one part");
        assert_eq!(parts_by_weight(0, |_| 1), one(0));
        let w = |i: usize| if i.is_multiple_of(7) { 5000 } else { 300 };
        let parts = parts_by_weight(500, w);
        assert!(parts.len() > 1 && parts.len() <= 4 * rayon::current_num_threads(), "{} parts", parts.len());
        assert_eq!(parts.first().map(|r| r.start), Some(0));
        assert_eq!(parts.last().map(|r| r.end), Some(500));
        assert!(parts.windows(2).all(|p| p[0].end == p[1].start && p[0].start < p[0].end));
        let total: usize = (0..500).map(w).sum();
        assert!(total >= PARTS_MIN_WEIGHT);
        let share = total.div_ceil(parts.len());
        for r in &parts[..parts.len() - 1] {
            let got: usize = r.clone().map(w).sum();
            assert!(got >= share.min(total) / 2 && got < share + 5000, "part {r:?}: {got} of a share of {share}");
        }
    }
}
