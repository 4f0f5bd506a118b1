//! The resident solver on the host: packing graphs into its word layout ([`pack_resident`]), a
//! pure [`plan`] (which pairs, in which order, go to which entry with what slice, team and grid:
//! decided without a GPU, unit-tested on the CPU), its executor ([`execute`]: upload, launches,
//! statuses back), and every `unsafe` launch of its entries behind a checked function
//! ([`super::resident_launch`]). Its tuning knobs are [`ResidentOptions`].
//!
//! Which pairs: a pair runs resident when its slice (both graphs and five f32 vectors of n·n′,
//! `octile_types::mgk::resident::slice_words`) fits the GPU's shared memory per block; the team is
//! one warp for small systems and a block of up to 1024 threads for large ones
//! ([`team_threads`]). A pair that does not fit runs the same solver in global memory, a team of
//! blocks per pair ([`super::grid`]); a pair whose true residual misses rtol goes to the tile
//! solver (the caller's fallback).
use super::resident_launch::{GradientArgs, Launch, LaunchParams, check_jobs, entry_name, gradient_entry, mgk_resident};
use crate::backend::Precision;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::gpu::pinned::Direction;
use crate::gram::control::{RunControl, blocks_of};
use crate::graph::Graph;
use crate::mgk::gpu::options::ResidentOptions;
pub use crate::mgk::gpu::resident_set::{DeviceResident, ResidentSet, real_words, upload_resident};
use crate::mgk::pack::{GraphRows, PackOptions, strides};
use crate::mgk::report::{ResidentReport, TeamForm, TeamKind};
use cudarc::driver::CudaSlice;
use octile_types::Kernel;
use octile_types::mgk::layout::{NODE_D, NZ_WEIGHT};
use octile_types::mgk::resident::{
    FUSED_BESIDE_EXTRA_WORDS, GRADIENT_SCRATCH_SLICES, PIECE_NONZEROS, RESIDENT_BLOCK_THREADS, RESIDENT_MAX_WARPS_PER_BLOCK, RESIDENT_NODE_EXTRA,
    fused_extra_words, graph_value_offset, graph_words, resident_node_stride,
};
use octile_types::{EdgeShape, GradientParams, KernelSpec, PairJob, PairStatus, ResidentGraph, ResidentParams};
use rayon::prelude::*;
use std::ops::Range;

/// The smallest rtol the resident solver is asked to meet: its f32 true residual settles at
/// ~2–6·10⁻⁷ (measured on NWS and MUTAG pairs), so for a smaller rtol every pair goes to the tile
/// solver's mixed-precision refinement directly.
pub const RESIDENT_MIN_RTOL: f64 = 1e-7;

/// The same for the f64 resident solver: its true residual settles near 10⁻¹⁵ (f64 rounding of
/// sums over a few hundred terms); below this rtol the pairs go to the tile solver.
pub const RESIDENT_MIN_RTOL_F64: f64 = 1e-14;

/// The smallest rtol the resident solver in `precision` is asked to meet.
pub fn resident_min_rtol(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => RESIDENT_MIN_RTOL,
        Precision::F64 => RESIDENT_MIN_RTOL_F64,
    }
}

/// Streams the launches of one solve go round-robin over (one launch's tail overlaps the next
/// one's start; 1 or 2 measured no faster: `results/small-call-h100.md`).
const RESIDENT_STREAMS: usize = 4;
/// Streams one solve takes from the device's pool: its launches', its uploads' and its downloads'.
pub const STREAMS_PER_SOLVE: usize = RESIDENT_STREAMS + 2;

/// Pack `graphs` into the resident layout, straight from their edge lists (no octiles: the
/// values are [`GraphRows`]', checked as `pack` checks them), each graph's nodes sorted by
/// decreasing number of nonzeros (ties by index): the kernel value does not depend on the node
/// order, and rows of similar length side by side keep the lanes of a warp equally busy.
///
/// Values in `precision`. A large set is packed in parts on the pool and joined (the same set bit
/// for bit, the same error: the first bad graph's in order).
pub fn pack_resident(graphs: &[Graph], opt: &PackOptions, precision: Precision) -> Result<ResidentSet> {
    let parts = crate::parallel::parts_by_weight(graphs.len(), |g| graphs[g].n_nodes() + 2 * graphs[g].n_edges());
    resident_in_parts(graphs, opt, &parts, precision)
}

/// [`pack_resident`] of each range of `parts` (consecutive, covering the set) on the pool, joined
/// (errors: [`crate::parallel::try_parts`]).
fn resident_in_parts(graphs: &[Graph], opt: &PackOptions, parts: &[Range<usize>], precision: Precision) -> Result<ResidentSet> {
    if parts.len() <= 1 {
        return resident_part(graphs, 0..graphs.len(), opt, precision);
    }
    let mut rest = crate::parallel::try_parts(parts, |r| resident_part(graphs, r, opt, precision))?;
    if rest.is_empty() {
        return resident_part(graphs, 0..graphs.len(), opt, precision);
    }
    let mut out = rest.remove(0);
    out.graphs.reserve(rest.iter().map(|p| p.graphs.len()).sum());
    out.words.reserve(rest.iter().map(|p| p.words.len()).sum());
    out.unit_weights.reserve(rest.iter().map(|p| p.unit_weights.len()).sum());
    for mut p in rest {
        let base = out.words.len();
        for d in &mut p.graphs {
            let offset = base + d.offset as usize;
            if offset + graph_words(d.n_nodes as usize, d.nnz as usize, out.node_stride, out.nz_stride, d.n_pieces as usize, out.real_words())
                >= u32::MAX as usize
            {
                return resident_part(graphs, 0..graphs.len(), opt, precision);
            }
            d.offset = offset as u32;
        }
        out.graphs.append(&mut p.graphs);
        out.words.append(&mut p.words);
        out.unit_weights.append(&mut p.unit_weights);
    }
    Ok(out)
}

/// [`pack_resident`] of `graphs[range]`, in one pass (offsets from 0), values in `precision`, of
/// `rw` words each (every run then takes a multiple of `rw` words: f64 values stay 8-byte
/// aligned).
fn resident_part(graphs: &[Graph], range: Range<usize>, opt: &PackOptions, precision: Precision) -> Result<ResidentSet> {
    let (packed_ns, nzs) = strides(opt.kernel);
    let ns = resident_node_stride(packed_ns);
    let rw = real_words(precision);
    // the part's words reserved at once (2·edges bounds each graph's nonzeros; pieces grow it
    // where a graph has long rows): no regrowth, each page touched once. Only what the 32-bit
    // offsets can address, and only if the allocator gives it (a larger set fails its offset
    // check below, with its error, not here)
    let words: usize = graphs[range.clone()].iter().map(|g| graph_words(g.n_nodes(), 2 * g.n_edges(), ns, nzs, 0, rw)).sum();
    let mut reserved = Vec::new();
    if words < u32::MAX as usize {
        let _ = reserved.try_reserve_exact(words);
    }
    let mut out = ResidentSet {
        precision,
        graphs: Vec::with_capacity(range.len()),
        words: reserved,
        node_stride: ns,
        nz_stride: nzs,
        unit_weights: Vec::with_capacity(range.len()),
    };
    // per-graph scratch, reused from graph to graph
    let mut adj = Csr::default();
    let mut order: Vec<u32> = Vec::new();
    let mut new_of: Vec<u32> = Vec::new();
    let mut sorted: Vec<(u32, u32)> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    for gi in range {
        let g = &graphs[gi];
        let rows = GraphRows::read(g, gi, opt)?;
        let n = g.n_nodes();
        if 2 * g.n_edges() >= u32::MAX as usize {
            return Err(OctileError::InvalidGraph { graph: Some(gi), what: "graph too large for the resident solver's 32-bit offsets".into() });
        }
        // rows of the adjacency matrix: (column, edge), both triangles
        adj.build(g);
        let len = |i: usize| adj.start[i + 1] - adj.start[i];
        // nodes by decreasing nonzeros, ties by index: a counting sort (stable over 0..n)
        let most = (0..n).map(len).max().unwrap_or(0);
        next.clear();
        next.resize(most + 2, 0);
        for i in 0..n {
            next[most - len(i) + 1] += 1;
        }
        for d in 0..=most {
            next[d + 1] += next[d];
        }
        order.clear();
        order.resize(n, 0);
        for i in 0..n {
            let at = &mut next[most - len(i)];
            order[*at as usize] = i as u32;
            *at += 1;
        }
        new_of.clear();
        new_of.resize(n, 0);
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let nnz = adj.ent.len();
        let offset = out.words.len();
        // pieces (PIECE_NONZEROS): node << 16 | first nonzero, longest first, when some row is long
        let mut pieces: Vec<u32> = Vec::new();
        if cut_in_pieces(n, nnz, len) {
            let mut cut: Vec<(usize, u32)> = Vec::new();
            let mut first = 0usize;
            for (new, &old) in order.iter().enumerate() {
                let d = len(old as usize);
                for start in (0..d).step_by(PIECE_NONZEROS) {
                    cut.push((PIECE_NONZEROS.min(d - start), (new as u32) << 16 | (first + start) as u32));
                }
                first += d;
            }
            cut.sort_by_key(|&(len, _)| std::cmp::Reverse(len));
            pieces = cut.into_iter().map(|(_, w)| w).collect();
        }
        if offset + graph_words(n, nnz, ns, nzs, pieces.len(), rw) >= u32::MAX as usize {
            return Err(OctileError::InvalidGraph { graph: Some(gi), what: "graph set too large for the resident solver's 32-bit offsets; split it".into() });
        }
        // the rows in the resident order, columns renumbered, each row sorted by column: column c
        // (node order[c]) placed in the rows of its neighbours for c = 0, 1, … (A is symmetric)
        let mut rp = 0u32;
        out.words.push(0);
        next.clear();
        for &old in &order {
            next.push(rp);
            rp += len(old as usize) as u32;
            out.words.push(rp);
        }
        sorted.clear();
        sorted.resize(nnz, (0, 0));
        for (c, &old) in order.iter().enumerate() {
            for &(nb, e) in &adj.ent[adj.start[old as usize]..adj.start[old as usize + 1]] {
                let r = new_of[nb as usize] as usize;
                sorted[next[r] as usize] = (c as u32, e);
                next[r] += 1;
            }
        }
        out.words.extend(sorted.iter().map(|&(c, _)| c));
        out.words.resize(offset + graph_value_offset(n, nnz, rw), 0);
        // the values (nonzero rows, then node rows), checked finite in the stored precision
        values.clear();
        values.resize(nnz * nzs + n * ns, 0.0);
        let (nz_rows, node_rows) = values.split_at_mut(nnz * nzs);
        for (&(_, e), dst) in sorted.iter().zip(nz_rows.chunks_exact_mut(nzs)) {
            rows.edge_row_into(e as usize, dst);
        }
        out.unit_weights.push(nz_rows.chunks_exact(nzs).all(|v| v[NZ_WEIGHT] == 1.0));
        // node rows [ρ, d, p, features…] (`RESIDENT_NODE_EXTRA`): in f32, d from the row sums of
        // the weights as stored (rounded to f32), stored as f32(d) and ρ = (d − f32(d))/f32(d) —
        // the true residual then checks the stored system with d exact; in f64, d as packed and ρ 0
        let mut first = 0;
        for (&old, dst) in order.iter().zip(node_rows.chunks_exact_mut(ns)) {
            let (lo, row) = dst.split_at_mut(RESIDENT_NODE_EXTRA);
            rows.node_row_into(old as usize, row);
            let len = len(old as usize);
            if rw == 1 {
                let deg: f64 = nz_rows[first * nzs..(first + len) * nzs].chunks_exact(nzs).map(|v| v[NZ_WEIGHT] as f32 as f64).sum();
                let d = rows.d_of(deg);
                let hi = d as f32 as f64;
                row[NODE_D] = hi;
                lo[0] = (d - hi) / hi;
            }
            first += len;
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(OctileError::InvalidGraph { graph: Some(gi), what: format!("a weight or feature is not finite ({v})") });
        }
        // f32 storage: a value beyond f32's range would become ±inf (as `pack::<f32>` refuses)
        if rw == 1 {
            if let Some(v) = values.iter().find(|v| !(**v as f32).is_finite()) {
                return Err(OctileError::InvalidGraph {
                    graph: Some(gi),
                    what: format!("a weight or feature is outside the f32 range (|v| > 3.4e38; f32 gives {}); use precision f64", *v as f32),
                });
            }
            out.words.extend(values.iter().map(|&v| (v as f32).to_bits()));
        } else {
            // f64 bits low word first (little-endian, as the GPU loads them)
            out.words.extend(values.iter().flat_map(|&v| {
                let b = v.to_bits();
                [b as u32, (b >> 32) as u32]
            }));
        }
        out.words.extend(&pieces);
        out.words.resize(offset + graph_words(n, nnz, ns, nzs, pieces.len(), rw), 0);
        out.graphs.push(ResidentGraph { offset: offset as u32, n_nodes: n as u32, nnz: nnz as u32, n_pieces: pieces.len() as u32 });
    }
    Ok(out)
}

/// Whether a graph of `n` nodes and `nnz` nonzeros whose row i holds `len(i)` of them is walked in
/// pieces of at most `PIECE_NONZEROS` (some row is longer, and node and nonzero indices fit the
/// pieces' 16 bits each); it then has Σ ⌈len(i) / PIECE_NONZEROS⌉ pieces.
fn cut_in_pieces(n: usize, nnz: usize, len: impl Fn(usize) -> usize) -> bool {
    n < 1 << 16 && nnz < 1 << 16 && (0..n).any(|i| len(i) > PIECE_NONZEROS)
}

/// What the planner reads of [`pack_resident`]'s set — each graph's nodes, nonzeros and pieces, its
/// unit-weight flag, the strides and precision — without packing it (its words stay empty): one
/// pass over each graph's edges, so that the plan is made while the set is packed. The graphs are
/// not checked here (packing checks them; a plan of a set that fails to pack is dropped).
pub fn resident_shapes(graphs: &[Graph], opt: &PackOptions, precision: Precision) -> ResidentSet {
    let (packed_ns, nzs) = strides(opt.kernel);
    let ns = resident_node_stride(packed_ns);
    let mut out = ResidentSet {
        precision,
        graphs: Vec::with_capacity(graphs.len()),
        words: Vec::new(),
        node_stride: ns,
        nz_stride: nzs,
        unit_weights: Vec::with_capacity(graphs.len()),
    };
    let mut deg: Vec<usize> = Vec::new();
    for g in graphs {
        let n = g.n_nodes();
        deg.clear();
        deg.resize(n, 0);
        for e in g.edges() {
            // (an edge naming a node past n: the packing's check refuses the graph)
            if let Some(d) = deg.get_mut(e.i as usize) {
                *d += 1;
            }
            if e.i != e.j
                && let Some(d) = deg.get_mut(e.j as usize)
            {
                *d += 1;
            }
        }
        let nnz: usize = deg.iter().sum();
        let n_pieces = if cut_in_pieces(n, nnz, |i| deg[i]) { deg.iter().map(|d| d.div_ceil(PIECE_NONZEROS)).sum() } else { 0 };
        let scale = g.weight_scale();
        // the packed rows' weights are weight · scale (`GraphRows::edge_row_into`)
        out.unit_weights.push(g.edges().iter().all(|e| e.weight * scale == 1.0));
        out.graphs.push(ResidentGraph { offset: 0, n_nodes: n as u32, nnz: nnz as u32, n_pieces: n_pieces as u32 });
    }
    out
}

/// One graph's adjacency in CSR form, in the graph's node order: row i's nonzeros are
/// `ent[start[i]..start[i + 1]]`, each (column, edge index), both triangles (a self-loop once).
#[derive(Default)]
struct Csr {
    start: Vec<usize>,
    ent: Vec<(u32, u32)>,
}

impl Csr {
    /// Graph `g` (the buffers reused: a count pass, then a fill pass over its edges).
    fn build(&mut self, g: &Graph) {
        let n = g.n_nodes();
        self.start.clear();
        self.start.resize(n + 1, 0);
        for e in g.edges() {
            self.start[e.i as usize + 1] += 1;
            if e.i != e.j {
                self.start[e.j as usize + 1] += 1;
            }
        }
        for i in 0..n {
            self.start[i + 1] += self.start[i];
        }
        self.ent.clear();
        self.ent.resize(self.start[n], (0, 0));
        // the next free place of each row: start[i] moves to start[i + 1] as row i fills, so
        // after the pass start[i] is row i + 1's start; shifted back below
        for (k, e) in g.edges().iter().enumerate() {
            let (i, j) = (e.i as usize, e.j as usize);
            self.ent[self.start[i]] = (e.j, k as u32);
            self.start[i] += 1;
            if i != j {
                self.ent[self.start[j]] = (e.i, k as u32);
                self.start[j] += 1;
            }
        }
        self.start.copy_within(0..n, 1);
        self.start[0] = 0;
    }
}

/// Threads of a product-form team for `n` unknowns when shared memory holds `pairs_per_sm`
/// slices: one warp while that many warps keep an SM busy (`warps_per_sm`, the latency-hiding
/// target: `ResidentOptions::product_warps_per_sm`, 16 by default), else as many warps per pair as make up the
/// target, a power of two with at least 4 rows per thread and at most `max_threads` (the block
/// entry's declared limit: `Kernel::decl().threads`).
pub fn product_team(n: usize, pairs_per_sm: usize, warps_per_sm: usize, max_threads: u32) -> u32 {
    let want = warps_per_sm.div_ceil(pairs_per_sm.max(1)).next_power_of_two();
    let most = n.div_ceil(32 * 4).next_power_of_two();
    (32 * want.min(most).max(1)).min(max_threads as usize) as u32
}

/// Threads of the team for a product system of `n` unknowns: a power of two times 32, about
/// `rows` rows per thread, at most `RESIDENT_BLOCK_THREADS`. 32 means one warp (the warp entry).
pub fn team_threads(n: usize, rows: usize) -> u32 {
    let want = n.div_ceil(rows.max(1));
    let mut t = 32u32;
    while (t as usize) < want && t < RESIDENT_BLOCK_THREADS {
        t *= 2;
    }
    t
}

/// Product vectors the fused primal and adjoint solve of the gradient entries needs beyond the
/// solver's five where all of them stay in shared memory (`octile_kernels::mgk::resident::
/// FusedVectors`: dg once, x, r, p, ap for both halves, interleaved, with alignment padding); where
/// that does not fit, p, r and dg stay in the solver's room (`FUSED_BESIDE_EXTRA_WORDS` more) and x
/// and ap go to the launch's global scratch (`octile_types::mgk::resident::GRADIENT_SCRATCH_SLICES`).
pub const FUSED_EXTRA_VECTORS: usize = 5;

impl TeamKind {
    /// The kind of team of a launch.
    pub fn of(l: Launch) -> Self {
        let form = if l.product {
            TeamForm::Product
        } else if l.split {
            TeamForm::SplitRows
        } else {
            TeamForm::OnTheFly
        };
        TeamKind { form, threads: l.team }
    }
}

/// What a resident plan needs to know of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanDevice {
    /// Most dynamic shared memory one block may use, in bytes (`GpuDevice::max_smem_per_block_bytes`).
    pub max_smem_bytes: usize,
    /// Streaming multiprocessors.
    pub sm_count: u32,
}

/// Pairs per block of the stream of launches (the unit of progress reports and cancellation).
pub const RESIDENT_STREAM_BLOCK: usize = 1 << 18;
/// Stream blocks queued before the first is collected (`RunControl::pipeline_deep`), their
/// launches under the submission lock together: a GPU tile of up to 4 blocks (1,048,576 pairs)
/// reaches the GPU whole, so that tiles in flight end one after another. With fewer (run 29: 2,
/// NCI 5K's tiles of 864 graphs had 3 blocks), a tile's third block was built once its first came
/// back and queued behind the other tiles' blocks: the four tiles in flight then ended together
/// and started their host work together, the GPU idle for ~40 ms.
pub const RESIDENT_BLOCKS_QUEUED: usize = 4;

/// One launch of a [`ResidentPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedLaunch {
    /// Its pairs: positions in [`ResidentPlan::order`] (consecutive).
    pub pairs: std::ops::Range<usize>,
    /// Team, slice and form: those of its last pair (the largest slice of the shapes it joins).
    pub launch: Launch,
    /// The entry it runs.
    pub entry: Kernel,
    /// Blocks: as many as can be resident at once, at most one team per pair.
    pub grid: u32,
}

/// One block of the stream of launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedBlock {
    /// Its pairs: positions in [`ResidentPlan::order`].
    pub pairs: std::ops::Range<usize>,
    /// Its launches: indices into [`ResidentPlan::launches`].
    pub launches: std::ops::Range<usize>,
}

/// Which pairs the resident solver takes and how: each pair's launch shape (team, slice, form),
/// the pairs sorted by shape, cut into stream blocks and launches, each launch with its entry and
/// grid. Decided on the host without a GPU ([`plan`]); [`execute`] uploads and launches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidentPlan {
    /// κe's shape (which specialized entries run).
    pub shape: EdgeShape,
    /// The launch shapes of the pairs, by ascending sort key.
    pub distinct: Vec<Launch>,
    /// Per pair, in the caller's order: its shape's index in `distinct`, `u32::MAX` when its
    /// slice does not fit shared memory (the tile solver's pair).
    pub bucket: Vec<u32>,
    /// The pairs that fit (indices into the pair list), sorted by launch shape.
    pub order: Vec<usize>,
    /// The stream blocks, in order.
    pub blocks: Vec<PlannedBlock>,
    /// Every launch, in the order they are submitted.
    pub launches: Vec<PlannedLaunch>,
    /// The gradient entries ([`plan_with`]).
    pub gradient: bool,
}

impl ResidentPlan {
    /// Pairs planned (fitting or not).
    pub fn n_pairs(&self) -> usize {
        self.bucket.len()
    }
    /// Pair k's launch shape, `None` when its slice does not fit shared memory.
    pub fn shape_of(&self, k: usize) -> Option<Launch> {
        self.distinct.get(self.bucket[k] as usize).copied()
    }
}

/// Plan the resident solve of `pairs` of `set` for a κe of `shape` on a device with `dev`'s
/// limits. `blocks_per_sm(entry, launch)`: how many blocks of that launch one SM holds at once
/// (the executor asks the driver's occupancy calculator; `None` or 0 counts as 1).
///
/// A pair's shape: the product form when κe is one Kronecker delta, both graphs' weights are 1
/// and its slice fits ([`ResidentSet::product_words`], team by [`product_team`]); else on the
/// fly, with a team of [`team_threads`] and split rows for block teams whose second graph has
/// pieces; slices rounded by [`bucket_words`]; warp teams as many per block as shared memory
/// holds. Pairs are sorted by (product, split, team, slice), cut into blocks of
/// [`RESIDENT_STREAM_BLOCK`], and each block into launches of one shape, a shape with fewer than
/// `fill` pairs joining the next larger slice of the same team kind.
pub fn plan(
    set: &ResidentSet,
    pairs: &[(u32, u32)],
    shape: EdgeShape,
    dev: PlanDevice,
    opts: &ResidentOptions,
    blocks_per_sm: impl Fn(Kernel, Launch) -> Option<u32>,
) -> ResidentPlan {
    plan_with(set, pairs, shape, dev, opts, blocks_per_sm, false)
}

/// [`plan`], or for the gradient entries (`gradient`, split rows as the solver's: the fused XMV walks
/// them in pieces with `ResidentParams::split`); slices with room for the fused
/// primal and adjoint solve (`FUSED_EXTRA_VECTORS` more product vectors) where that fits shared
/// memory, else the solver's and one word (p, r and dg stay there, x and ap go to global scratch).
#[allow(clippy::too_many_arguments)]
pub fn plan_with(
    set: &ResidentSet,
    pairs: &[(u32, u32)],
    shape: EdgeShape,
    dev: PlanDevice,
    opts: &ResidentOptions,
    blocks_per_sm: impl Fn(Kernel, Launch) -> Option<u32>,
    gradient: bool,
) -> ResidentPlan {
    let rows = opts.rows_per_thread;
    let max_smem = dev.max_smem_bytes;
    let product = shape == EdgeShape::KroneckerDelta && opts.product;
    let product_warps = opts.product_warps_per_sm;
    let split = opts.split;
    let warps_for = |slice: usize| ((max_smem / 4) / slice).min(RESIDENT_MAX_WARPS_PER_BLOCK as usize) as u32;
    // the product form's block entry bounds its team (its declared threads)
    let product_block = if gradient { Kernel::MgkResidentBlockGradientProduct } else { Kernel::MgkResidentBlockProduct };
    let product_max_threads = product_block.decl().threads.max();
    let shape_of = |&(a, b): &(u32, u32)| {
        // a slice past the shared memory cannot fit (and must not wrap when cast to u32)
        // gradients: room for the fused primal and adjoint solve (ten vectors) where it fits
        let n = set.size(a).0 * set.size(b).0;
        // (words, fused vectors beside the slice)
        let fused = |w: usize| {
            let all = w + fused_extra_words(n);
            if gradient && opts.fused_in_slice && bucket_words(all) <= max_smem / 4 {
                (all, false)
            } else if gradient {
                (w + FUSED_BESIDE_EXTRA_WORDS, true)
            } else {
                (w, false)
            }
        };
        if let Some((words, beside)) = set.product_words(a, b).map(fused).filter(|&(w, _)| product && bucket_words(w) <= max_smem / 4) {
            let slice = bucket_words(words);
            let team = product_team(set.size(a).0 * set.size(b).0, max_smem / (4 * slice), product_warps, product_max_threads);
            let warps = if team == 32 { warps_for(slice) } else { 1 };
            let l = Launch { team, warps, slice_words: slice as u32, product: true, split: false, fused_beside: beside };
            if l.warps >= 1 && l.smem_bytes() <= max_smem {
                return Some(l);
            }
        }
        let (words, beside) = fused(set.slice_words(a, b));
        let team = team_threads(n, rows);
        let slice = bucket_words(words);
        if slice > max_smem / 4 {
            return None;
        }
        let warps = if team == 32 { warps_for(slice) } else { 1 };
        let split = split && team > 32 && set.size(b).2 > 0;
        let l = Launch { team, warps, slice_words: slice as u32, product: false, split, fused_beside: beside };
        (warps >= 1 && l.smem_bytes() <= max_smem).then_some(l)
    };
    // in parallel only where it pays (waking the pool costs more than planning a small set)
    let parallel = crate::parallel::pooled(pairs.len());
    // pairs sorted by shape, so that each block of the stream splits into few launches
    let key = |l: Launch| (l.product as u64) << 63 | (l.split as u64) << 62 | (l.fused_beside as u64) << 61 | (l.team as u64) << 32 | l.slice_words as u64;
    let (distinct, bucket) = shapes_of_pairs(set, pairs, |a, b| shape_of(&(a, b)), key, parallel);
    let (order, runs) = order_by_bucket(&distinct, &bucket);
    let fill = opts.fill.unwrap_or(16 * dev.sm_count as usize);
    // the occupancy of each (entry, shape), asked once: every block of the stream launches the same
    // few shapes, and each question is several driver calls
    let mut asked: Vec<(Kernel, Launch, u32)> = Vec::new();
    let mut resident_blocks = |entry: Kernel, l: Launch| -> u32 {
        if let Some(&(_, _, b)) = asked.iter().find(|(e, s, _)| *e == entry && *s == l) {
            return b;
        }
        let b = blocks_per_sm(entry, l).filter(|&b| b > 0).unwrap_or(1);
        asked.push((entry, l, b));
        b
    };
    let (mut blocks, mut launches) = (Vec::new(), Vec::new());
    for range in blocks_of(order.len(), RESIDENT_STREAM_BLOCK) {
        let first_launch = launches.len();
        // the runs of one shape within this block, in key order
        let parts: Vec<(Launch, Range<usize>)> =
            runs.iter().map(|(l, r)| (*l, r.start.max(range.start)..r.end.min(range.end))).filter(|(_, r)| !r.is_empty()).collect();
        let mut i = 0;
        while i < parts.len() {
            // one launch per shape; a shape with fewer pairs than `fill` teams joins the next
            // larger slice of the same team kind (its slice then serves both), so that small
            // sets do not pay a launch and a tail per bucket
            let (first, start) = (parts[i].0, parts[i].1.start);
            let mut end = parts[i].1.end;
            i += 1;
            while i < parts.len() && end - start < fill && parts[i].0.same_kind(first) {
                end = parts[i].1.end;
                i += 1;
            }
            let l = parts[i - 1].0;
            let entry = if gradient { gradient_entry(l, shape) } else { entry_name(l, shape, set.precision) };
            let teams_per_block = if l.team == 32 { l.warps as usize } else { 1 };
            let resident = resident_blocks(entry, l) * dev.sm_count;
            let grid = resident.min((end - start).div_ceil(teams_per_block) as u32);
            launches.push(PlannedLaunch { pairs: start..end, launch: l, entry, grid });
        }
        blocks.push(PlannedBlock { pairs: range, launches: first_launch..launches.len() });
    }
    ResidentPlan { shape, distinct, bucket, order, blocks, launches, gradient }
}

/// Every pair's launch shape, as the distinct shapes (ascending `key`) and each pair's index
/// among them (`u32::MAX`: its slice does not fit). A pair's shape depends only on its two graphs'
/// sizes (nodes, nonzeros, pieces) and whether their weights are all 1, so where the set has few
/// such classes it is computed once per pair of classes and looked up per pair.
fn shapes_of_pairs(
    set: &ResidentSet,
    pairs: &[(u32, u32)],
    shape_of: impl Fn(u32, u32) -> Option<Launch> + Sync,
    key: impl Fn(Launch) -> u64 + Sync,
    parallel: bool,
) -> (Vec<Launch>, Vec<u32>) {
    let mut classes = std::collections::HashMap::new();
    let mut reps: Vec<u32> = Vec::new();
    let class: Vec<u32> = (0..set.graphs.len() as u32)
        .map(|g| {
            let (n, nnz, pieces) = set.size(g);
            *classes.entry((n, nnz, pieces, set.unit_weights[g as usize])).or_insert_with(|| {
                reps.push(g);
                reps.len() as u32 - 1
            })
        })
        .collect();
    let c = reps.len();
    let distinct_of = |shapes: &mut dyn Iterator<Item = Launch>| {
        let mut d: Vec<Launch> = Vec::new();
        for l in shapes {
            if let Err(at) = d.binary_search_by_key(&key(l), |&x| key(x)) {
                d.insert(at, l);
            }
        }
        d
    };
    let index = |d: &[Launch], s: Option<Launch>| s.map_or(u32::MAX, |l| d.partition_point(|&x| key(x) < key(l)) as u32);
    if c * c <= pairs.len() {
        // a table over pairs of classes
        let table: Vec<Option<Launch>> = crate::parallel::collect(c * c, parallel, |t| shape_of(reps[t / c], reps[t % c]));
        let distinct = distinct_of(&mut table.iter().flatten().copied());
        let by_class: Vec<u32> = table.iter().map(|&s| index(&distinct, s)).collect();
        let bucket =
            crate::parallel::collect(pairs.len(), parallel, |k| by_class[class[pairs[k].0 as usize] as usize * c + class[pairs[k].1 as usize] as usize]);
        (distinct, bucket)
    } else {
        let shapes: Vec<Option<Launch>> = crate::parallel::collect(pairs.len(), parallel, |k| shape_of(pairs[k].0, pairs[k].1));
        let distinct = distinct_of(&mut shapes.iter().flatten().copied());
        let bucket = crate::parallel::collect(pairs.len(), parallel, |k| index(&distinct, shapes[k]));
        (distinct, bucket)
    }
}

/// The indices of the pairs that fit, ordered by their shape's index `bucket` (ties in index
/// order), and the runs of one shape in that order: a counting sort. (A comparison sort of the
/// indices with each key looked up through a per-pair shape took most of the planning time:
/// `benches/benches/plan.rs`.)
fn order_by_bucket(distinct: &[Launch], bucket: &[u32]) -> (Vec<usize>, Vec<(Launch, Range<usize>)>) {
    let mut start = vec![0usize; distinct.len() + 1];
    for &b in bucket.iter().filter(|&&b| b != u32::MAX) {
        start[b as usize + 1] += 1;
    }
    for b in 0..distinct.len() {
        start[b + 1] += start[b];
    }
    let runs = distinct.iter().enumerate().map(|(b, &l)| (l, start[b]..start[b + 1])).collect();
    let mut order = vec![0usize; start[distinct.len()]];
    for (k, &b) in bucket.iter().enumerate().filter(|&(_, &b)| b != u32::MAX) {
        order[start[b as usize]] = k;
        start[b as usize] += 1;
    }
    (order, runs)
}

/// Blocks of `launch` (entry `entry`) one SM can hold at once, from the driver's occupancy
/// calculator (`None` when it cannot tell).
fn occupancy(dev: &GpuDevice, entry: Kernel, launch: Launch) -> Option<u32> {
    // (asked from whichever thread plans: the device's context made current there first)
    dev.ctx.bind_to_thread().ok()?;
    dev.function_with_smem(entry, launch.smem_bytes())
        .ok()?
        .occupancy_max_active_blocks_per_multiprocessor(launch.block_threads(), launch.smem_bytes(), None)
        .ok()
}

/// Result of [`solve_resident`]: a status per pair, `None` where the tile solver must take over
/// (does not fit, or missed rtol), and what ran.
pub struct ResidentOutcome {
    /// Per pair: its status where the resident solver solved it, else the default (not
    /// converged) — those pairs are listed in `rest`.
    pub status: Vec<PairStatus>,
    /// The pairs left to another solver (not planned, or above rtol), in increasing order.
    pub rest: Vec<usize>,
    /// What ran: entries, teams, pairs, launches.
    pub report: ResidentReport,
    /// Gradient runs: ∂K/∂θ per pair (pair-major, `n_hyper` each; NaN for the pairs in `rest`),
    /// else empty.
    pub grads: Vec<f64>,
}

/// Solve every pair that fits with the resident solver in `precision`: pack `graphs`
/// ([`pack_resident`] with `pack`'s options), plan ([`plan`]), upload and [`execute`]; then, with `opts.grid`, the pairs
/// whose slice exceeds shared memory in global memory ([`super::grid`], within the scratch budget
/// `scratch_bytes`: see [`super::batch::scratch_budget_bytes`]); with `gradient`, K and ∂K/∂θ by the
/// gradient entries (f32 alone: an f64 gradient call is refused here, the caller runs the tile solver).
#[allow(clippy::too_many_arguments)]
pub fn solve_resident(
    dev: &GpuDevice,
    precision: Precision,
    graphs: &[Graph],
    pack: &PackOptions,
    pairs: &[(u32, u32)],
    node: &KernelSpec,
    edge: &KernelSpec,
    rtol: f64,
    max_iterations: u32,
    opts: &ResidentOptions,
    scratch_bytes: Option<usize>,
    ctl: &RunControl,
    gradient: Option<&GradientParams>,
) -> Result<ResidentOutcome> {
    let t0 = std::time::Instant::now();
    if gradient.is_some() && precision != Precision::F32 {
        return Err(OctileError::Internal("the resident gradient entries run in f32 alone".into()));
    }
    // the plan reads only the set's shapes: made from them while the set is packed (MUTAG's
    // call: its 0.3 ms beside the packing's 0.46, on an H100)
    let limits = PlanDevice { max_smem_bytes: dev.max_smem_per_block_bytes(), sm_count: dev.sm_count };
    let (set, (shapes, plan, jobs)) = rayon::join(
        || pack_resident(graphs, pack, precision),
        || {
            let shapes = resident_shapes(graphs, pack, precision);
            let plan = plan_with(&shapes, pairs, EdgeShape::of(edge), limits, opts, |entry, l| occupancy(dev, entry, l), gradient.is_some());
            let jobs = plan_jobs(&plan, pairs);
            (shapes, plan, jobs)
        },
    );
    let set = set?;
    if !set.same_shapes(&shapes) {
        return Err(OctileError::Internal("the resident set's shapes differ from those its plan was made for".into()));
    }
    crate::phases::mark("packed and planned");
    log::debug!("resident: packed {} graphs and planned {} pairs in {:.1} ms", set.graphs.len(), pairs.len(), t0.elapsed().as_secs_f64() * 1e3);
    let dset = upload_resident(dev, set)?;
    crate::phases::mark("uploaded");
    let mut out = execute(dev, &dset, &plan, &jobs, pairs, node, edge, rtol, max_iterations, ctl, t0, gradient)?;
    log::debug!("resident: all launches done at {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    if gradient.is_none() && opts.grid && plan.order.len() < pairs.len() {
        // the pairs whose slice exceeds shared memory: the same solver in global memory
        let mut planned = vec![false; pairs.len()];
        for &k in &plan.order {
            planned[k] = true;
        }
        let outside: Vec<usize> = (0..pairs.len()).filter(|&k| !planned[k]).collect();
        let budget = super::batch::scratch_budget_bytes(dev, scratch_bytes);
        let g = super::grid::solve_grid(dev, &dset, pairs, &outside, node, edge, rtol, max_iterations, budget, ctl)?;
        let mut solved = 0;
        for (&k, st) in outside.iter().zip(&g.status) {
            if st.converged == 1 {
                out.status[k] = *st;
                solved += 1;
            }
        }
        out.rest.retain(|&k| out.status[k].converged != 1);
        out.report.pairs_solved += solved;
        out.report.launches += g.launches;
        out.report.grid_pairs = solved;
        for b in g.team_blocks {
            out.report.teams.push(TeamKind { form: TeamForm::Grid, threads: b * octile_types::mgk::names::SOLVER_BLOCK_THREADS });
        }
        out.report.teams.sort_unstable();
        out.report.teams.dedup();
        log::debug!(
            "resident: {solved} of {} pairs too large for shared memory solved in global memory at {:.1} ms",
            outside.len(),
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(out)
}

/// The jobs of `plan`'s pairs, in its order (`plan.order`): what its launches upload, block by block.
pub fn plan_jobs(plan: &ResidentPlan, pairs: &[(u32, u32)]) -> Vec<PairJob> {
    plan.order.iter().map(|&k| PairJob { g1: pairs[k].0, g2: pairs[k].1, scratch_offset: 0 }).collect()
}

/// Run `plan` over the uploaded set: its launches block by block (progress and cancellation per
/// block), round-robin over a few streams, and the statuses back in pair order. `jobs`: the
/// plan's ([`plan_jobs`]), made beside the packing. `t0`: when the
/// solve started (for the debug log's timings; with debug logging on, every launch is
/// synchronized to be timed).
#[allow(clippy::too_many_arguments)]
pub fn execute(
    dev: &GpuDevice,
    dset: &DeviceResident,
    plan: &ResidentPlan,
    jobs: &[PairJob],
    pairs: &[(u32, u32)],
    node: &KernelSpec,
    edge: &KernelSpec,
    rtol: f64,
    max_iterations: u32,
    ctl: &RunControl,
    t0: std::time::Instant,
    gradient: Option<&GradientParams>,
) -> Result<ResidentOutcome> {
    let trace = log::log_enabled!(log::Level::Debug);
    if trace {
        dev.stream.synchronize()?;
        log::debug!("resident: uploaded at {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
    if plan.shape != EdgeShape::of(edge) || plan.n_pairs() != pairs.len() || plan.gradient != gradient.is_some() || jobs.len() != plan.order.len() {
        return Err(OctileError::LaunchContract { launch: "resident".into(), what: "the plan (or its jobs) was made for another κe or pair list".into() });
    }
    // launches go round-robin over a few streams, so that one shape's tail overlaps the next
    // shape's start (each launch has its own counter and statuses: its parts of the block's two
    // buffers); results come back on a
    // stream of their own, so that a block's download waits for that block's launches only; the
    // jobs go up on a third (below). All lent by the device's pool, not made per call
    let lent = dev.streams.take(&dev.stream, STREAMS_PER_SOLVE)?;
    let (streams, copy, up) = (&lent[..RESIDENT_STREAMS], &lent[RESIDENT_STREAMS], &lent[RESIDENT_STREAMS + 1]);
    crate::phases::mark("streams");
    let (mut launches, mut teams_seen) = (0usize, std::collections::BTreeSet::new());
    let np = gradient.map_or(0, |g| g.n_hyper as usize);
    let gparams = match gradient {
        Some(g) => {
            // κv's table for the node-side passes (where κv allows one)
            let g = g.with_node_table(node);
            Some(dev.stream.clone_htod(std::slice::from_ref(&g))?)
        }
        None => None,
    };
    // the jobs go up on a stream of this call's own, after the set and the parameters: a copy
    // from pageable memory first waits for its stream's earlier work, and on the device's stream
    // that was every tile's uploads
    up.join(&dev.stream)?;
    // results in pair order, written as each block comes back (a block never submitted after a
    // cancellation stays None / NaN); ∂K/∂θ `np` per pair in one flat vector
    // (made at the first block's collection, not before its launches: zeroing a tile's tens of
    // MB took ~10 ms of page faults before the first launch beside the other tiles' host work)
    let whole = || (vec![PairStatus::default(); pairs.len()], vec![f64::NAN; if np > 0 { pairs.len() * np } else { 0 }]);
    let (mut out, mut grads): (Vec<PairStatus>, Vec<f64>) = (Vec::new(), Vec::new());
    // the submission lock kept from the first block's submission to the last one queued before
    // the first is collected
    let held: std::cell::RefCell<Option<std::sync::MutexGuard<'_, ()>>> = std::cell::RefCell::new(None);
    let submit = |range: std::ops::Range<usize>| -> Result<InFlight> {
        let at = plan.blocks.partition_point(|b| b.pairs.start < range.start);
        let block = &plan.blocks[at];
        // the jobs are built in ordinary memory and uploaded from there: a host → device copy from
        // pageable memory returns once the driver has staged it (on `up`, which carries copies
        // only, not launches), so a tile's first block reaches the GPU without pinning a
        // buffer first (NCI 5K's first launch 33 instead of 44 ms, run 29); the statuses come
        // down into pinned memory (`collect`: a download into pageable memory would wait for the
        // block's launches, and the other tiles' copies with it)
        let tb = std::time::Instant::now();
        let jobs = &jobs[range.clone()];
        let dev_jobs = up.clone_htod(jobs)?;
        crate::phases::mark("jobs up");
        // the block's statuses and its launches' counters, one buffer each (made and zeroed on
        // `up`, which the launches' streams join): two allocations a block, not two a launch
        let mut statuses = up.alloc_zeros::<PairStatus>(range.len().max(1))?;
        let mut counters = up.alloc_zeros::<u32>(block.launches.len().max(1))?;
        crate::phases::mark("statuses");
        // each launch's parameters (one upload a block) and its jobs checked, before the lock:
        // the other tiles' blocks wait for nothing of this one's host work
        let launched = &plan.launches[block.launches.clone()];
        let local = |pl: &PlannedLaunch| pl.pairs.start - range.start..pl.pairs.end - range.start;
        let params = LaunchParams::upload(
            up,
            launched
                .iter()
                .map(|pl| ResidentParams {
                    node_kernel: *node,
                    edge_kernel: *edge,
                    rtol,
                    n_jobs: pl.pairs.len() as u32,
                    max_iterations,
                    node_stride: dset.host.node_stride as u32,
                    nz_stride: dset.host.nz_stride as u32,
                    slice_words: pl.launch.slice_words,
                    fused_beside: pl.launch.fused_beside as u32,
                    team_blocks: 1,
                    split: pl.launch.split as u32,
                })
                .collect(),
        )?;
        crate::phases::mark("params up");
        let mut checked = launched.iter().map(|pl| check_jobs(dset, pl.launch, &jobs[local(pl)])).collect::<Result<Vec<_>>>()?.into_iter();
        crate::phases::mark("jobs checked");
        for s in streams {
            s.join(up)?;
        }
        crate::phases::mark("jobs");
        let mut parts: Vec<Part> = Vec::new();
        if trace {
            up.synchronize()?;
            log::debug!("resident: block of {} pairs: jobs uploaded in {:.3} ms", jobs.len(), tb.elapsed().as_secs_f64() * 1e3);
        }
        // the block's launches reach the GPU together, not interleaved with another tile's: the
        // GPU runs launches in about the order they come, so interleaved tiles all ended at
        // once and all started their host work at once (the GPU idle meanwhile); in order,
        // one tile ends while the others still run, and its next tile's host work overlaps them.
        // The lock is kept until the first RESIDENT_BLOCKS_QUEUED blocks are queued (the pipeline
        // builds and queues them before it waits for the first; their host work then runs under
        // the lock), so a tile of up to that many blocks is queued whole; longer calls interleave
        // from the block after. (With `-v` every launch is synchronized under it.)
        let in_order = match held.borrow_mut().take() {
            Some(g) => g,
            // (it guards no data: usable after a panic elsewhere)
            None => dev.submission.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        for (li, pl) in launched.iter().enumerate() {
            let (l, grid) = (pl.launch, pl.grid);
            let Range { start, end } = local(pl);
            let Some(checked_jobs) = checked.next() else {
                return Err(OctileError::Internal("a launch of the block without its checked jobs".into()));
            };
            let sub_jobs = dev_jobs.slice(start..end);
            let stream = &streams[launches % streams.len()];
            let tl = std::time::Instant::now();
            let mut grad = match &gparams {
                Some(_) => Some(stream.alloc_zeros::<f64>(((end - start) * np).max(1))?),
                None => None,
            };
            let mut gview = grad.as_mut().map(|g| g.slice_mut(..));
            let teams = grid as usize * if l.team == 32 { l.warps as usize } else { 1 };
            let mut keep = match &gparams {
                Some(_) => Some(stream.alloc_zeros::<f32>((teams * GRADIENT_SCRATCH_SLICES * l.slice_words as usize).max(1))?),
                None => None,
            };
            let gargs = match (&gparams, gview.as_mut(), keep.as_mut()) {
                (Some(p), Some(v), Some(k)) => Some(GradientArgs { params: p, n_hyper: np, grad: v, scratch: k }),
                _ => None,
            };
            let (mut status, mut counter) = (statuses.slice_mut(start..end), counters.slice_mut(li..li + 1));
            mgk_resident(dev, stream, &params, li, dset, checked_jobs, &sub_jobs, &mut status, &mut counter, l, grid, gargs)?;
            parts.push(Part { offset: start, len: end - start, grad });
            if trace {
                let submitted = tl.elapsed().as_secs_f64() * 1e3;
                stream.synchronize()?;
                log::debug!(
                    "resident: launch {}team {} × {} per block, slice {} words, {} pairs, grid {grid}: {:.3} ms (submitted in {submitted:.3} ms)",
                    if l.product { "product " } else { "" },
                    l.team,
                    l.warps,
                    l.slice_words,
                    end - start,
                    tl.elapsed().as_secs_f64() * 1e3
                );
            }
            launches += 1;
            teams_seen.insert(TeamKind::of(l));
            crate::phases::mark("launched");
        }
        if at + 1 < plan.blocks.len().min(RESIDENT_BLOCKS_QUEUED) {
            *held.borrow_mut() = Some(in_order);
        } else {
            drop(in_order);
        }
        // the block's end on every stream, for its download to wait on (and nothing later)
        let done = streams.iter().map(|s| s.record_event(None)).collect::<std::result::Result<Vec<_>, _>>()?;
        crate::phases::mark("submitted");
        Ok(InFlight { _jobs: dev_jobs, _params: params, statuses, _counters: counters, parts, done })
    };
    let collect = |range: std::ops::Range<usize>, f: InFlight| -> Result<()> {
        // never wait for the GPU holding the submission lock (the blocks to be queued with the
        // first were not all submitted: a cancellation)
        held.borrow_mut().take();
        let tb = std::time::Instant::now();
        for e in &f.done {
            copy.wait(e)?;
        }
        // every part's statuses (and ∂K/∂θ) into pinned memory, asynchronously, then one wait on
        // this thread's own event: a copy into pageable memory would hold the driver's staging
        // until the block's launches end, and with it the other tiles' uploads
        let total: usize = f.parts.iter().map(|p| p.len).sum();
        let mut stage = dev.pinned.take(total * std::mem::size_of::<PairStatus>(), Direction::Down, copy)?;
        let mut stage_grads = if np > 0 { Some(dev.pinned.take(total * np * std::mem::size_of::<f64>(), Direction::Down, copy)?) } else { None };
        {
            let statuses = stage.view_mut::<PairStatus>(total)?;
            let mut grads_view = match stage_grads.as_mut() {
                Some(g) => Some(g.view_mut::<f64>(total * np)?),
                None => None,
            };
            // the launches cover the block in order: their statuses are its buffer's first `total`
            if total > 0 {
                copy.memcpy_dtoh(&f.statuses.slice(..total), &mut statuses[..total])?;
            }
            for part in &f.parts {
                let (at, n) = (part.offset, part.len);
                if let (Some(g), Some(view)) = (&part.grad, grads_view.as_deref_mut()) {
                    copy.memcpy_dtoh(&g.slice(..n * np), &mut view[at * np..(at + n) * np])?;
                }
            }
        }
        stage.record()?;
        if out.len() != pairs.len() {
            (out, grads) = whole();
        }
        stage.wait()?;
        let statuses = stage.view_mut::<PairStatus>(total)?;
        let grads_back: &[f64] = match stage_grads.as_mut() {
            Some(g) => g.view_mut::<f64>(total * np)?,
            None => &[],
        };
        for part in &f.parts {
            let (at, n) = (part.offset, part.len);
            let order = &plan.order[range.start + at..range.start + at + n];
            for (i, (st, &k)) in statuses[at..at + n].iter().zip(order).enumerate() {
                if st.converged == 1 {
                    out[k] = *st;
                    if np > 0 {
                        grads[k * np..(k + 1) * np].copy_from_slice(&grads_back[(at + i) * np..(at + i + 1) * np]);
                    }
                }
            }
        }
        crate::phases::mark("back");
        if trace {
            log::debug!("resident: block of {} pairs downloaded and stored in {:.3} ms", range.len(), tb.elapsed().as_secs_f64() * 1e3);
        }
        Ok(())
    };
    ctl.pipeline_deep(plan.blocks.iter().map(|b| b.pairs.clone()), RESIDENT_BLOCKS_QUEUED, submit, collect)?;
    if out.len() != pairs.len() {
        // no block collected (no pairs, or cancelled before the first)
        (out, grads) = whole();
    }
    crate::phases::mark("all back");
    if trace {
        log::debug!("resident: all blocks back at {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
    let fits = plan.order.len();
    let rest: Vec<usize> = if crate::parallel::pooled(pairs.len()) {
        (0..pairs.len()).into_par_iter().filter(|&k| out[k].converged != 1).collect()
    } else {
        (0..pairs.len()).filter(|&k| out[k].converged != 1).collect()
    };
    // (the pairs outside the plan are in `rest` too)
    let missed = rest.len() - (pairs.len() - fits);
    let report = ResidentReport {
        edge_kernel: plan.shape.into(),
        teams: teams_seen.into_iter().collect(),
        pairs_solved: fits - missed,
        pairs: pairs.len(),
        launches,
        above_rtol: missed,
        grid_pairs: 0,
    };
    Ok(ResidentOutcome { status: out, rest, report, grads })
}

/// What one launch leaves behind: its first job's place in the block, the statuses and, for
/// gradients, ∂K/∂θ per job (`n_hyper` each).
struct Part {
    /// Its first pair in the block, and its pairs.
    offset: usize,
    len: usize,
    grad: Option<CudaSlice<f64>>,
}

/// A submitted stream block: its uploaded jobs (alive until its launches end), its launches'
/// outputs, and an event per stream recorded after its last launch there.
struct InFlight {
    _jobs: CudaSlice<PairJob>,
    /// The block's launch parameters (freed, like the jobs, once the block is back).
    _params: LaunchParams,
    /// The block's statuses, launch after launch.
    statuses: CudaSlice<PairStatus>,
    _counters: CudaSlice<u32>,
    parts: Vec<Part>,
    done: Vec<cudarc::driver::CudaEvent>,
}

/// Slice sizes are rounded up to steps of 1/8 of a power of two (≤ 12.5% waste), so the pairs of a
/// set fall into few launch shapes.
pub fn bucket_words(words: usize) -> usize {
    let words = words.max(32);
    let step = (words.next_power_of_two() / 8).max(8);
    words.div_ceil(step) * step
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::{ba_set, nws_set};
    use crate::mgk::config::synthetic_kernel;
    use crate::mgk::pack::pack;
    use octile_types::mgk::resident::PRODUCT_MAX_ENTRIES;

    /// Every graph's run, in f32 and f64, against its graph read directly: rows in the order of
    /// decreasing nonzeros (ties by node index), each row's columns the node's neighbours
    /// renumbered and sorted, each nonzero's and node's values `GraphRows`' (bit for bit in f64, as
    /// f32 in f32), the unit-weight flag; pieces (where a row is longer than `PIECE_NONZEROS`)
    /// covering every nonzero in order with at most `PIECE_NONZEROS` each and never crossing a
    /// row; f64 runs 8-byte aligned.
    #[test]
    fn resident_runs_hold_sorted_rows_and_pieces_that_cover_them() {
        for precision in [Precision::F32, Precision::F64] {
            check_runs(precision);
        }
    }

    fn check_runs(precision: Precision) {
        let cfg = synthetic_kernel(0.05);
        let resolved = cfg.resolve().unwrap();
        let mut graphs = ba_set(6, 3);
        graphs.extend(nws_set(3, 4));
        graphs.extend(mixed_set(5));
        // a weighted graph with a self-loop and an isolated node (weights scaled by 1/4)
        let mut w = crate::graph::Graph::new(5, &["label"], &["length"]);
        for i in 0..5 {
            w.set_node_features(i, &[i as f64]).unwrap();
        }
        for (i, j, wt) in [(0, 1, 3.0), (1, 1, 0.5), (1, 2, 5.5), (3, 0, 1.0)] {
            w.add_edge(i, j, wt, &[2.0]).unwrap();
        }
        graphs.push(w);
        let opt = PackOptions::new(&resolved, 0.05, 1.0);
        let set = pack_resident(&graphs, &opt, precision).unwrap();
        let rw = real_words(precision);
        assert_eq!(set.precision, precision);
        assert_eq!(set.graphs.len(), graphs.len());
        let mut split_seen = false;
        for (g, d) in set.graphs.iter().enumerate() {
            let (n, nnz, np) = (d.n_nodes as usize, d.nnz as usize, d.n_pieces as usize);
            let graph = &graphs[g];
            let rows = GraphRows::read(graph, g, &opt).unwrap();
            let len = graph_words(n, nnz, set.node_stride, set.nz_stride, np, rw);
            assert!((d.offset as usize).is_multiple_of(rw) && len.is_multiple_of(rw), "{precision:?} graph {g}: run at {} of {len} words", d.offset);
            let run = &set.words[d.offset as usize..d.offset as usize + len];
            // the expected order from the edge list: nonzeros per node (a self-loop once)
            let mut nb: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
            for (e, edge) in graph.edges().iter().enumerate() {
                nb[edge.i as usize].push((edge.j as usize, e));
                if edge.i != edge.j {
                    nb[edge.j as usize].push((edge.i as usize, e));
                }
            }
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(nb[i].len()), i));
            let mut new_of = vec![0; n];
            for (new, &old) in order.iter().enumerate() {
                new_of[old] = new;
            }
            assert_eq!(nnz, nb.iter().map(Vec::len).sum::<usize>(), "graph {g}: nonzeros");
            let value =
                |at: usize| -> f64 { if rw == 1 { f32::from_bits(run[at]) as f64 } else { f64::from_bits(run[at] as u64 | (run[at + 1] as u64) << 32) } };
            let stored = |v: f64| if rw == 1 { v as f32 as f64 } else { v };
            let rp = &run[..n + 1];
            assert_eq!((rp[0], rp[n] as usize), (0, nnz), "graph {g}: row pointers");
            let values_at = graph_value_offset(n, nnz, rw);
            for (r, &old) in order.iter().enumerate() {
                let mut want: Vec<(usize, usize)> = nb[old].iter().map(|&(c, e)| (new_of[c], e)).collect();
                want.sort_unstable();
                let (s, t) = (rp[r] as usize, rp[r + 1] as usize);
                let cols: Vec<usize> = run[n + 1 + s..n + 1 + t].iter().map(|&c| c as usize).collect();
                assert_eq!(cols, want.iter().map(|w| w.0).collect::<Vec<_>>(), "graph {g} row {r} (node {old}): columns");
                for (k, &(_, e)) in want.iter().enumerate() {
                    let mut row = vec![0.0; set.nz_stride];
                    rows.edge_row_into(e, &mut row);
                    for (f, &v) in row.iter().enumerate() {
                        let got = value(values_at + rw * ((s + k) * set.nz_stride + f));
                        assert_eq!(got.to_bits(), stored(v).to_bits(), "graph {g} row {r} nonzero {k} value {f}: {got} vs {v}");
                    }
                }
                // d's relative low part ρ (RESIDENT_NODE_EXTRA), then [d, p, features…] as the
                // packing gives them: in f32, d_hi·(1 + ρ) is the f32 weights' row sum over 1 − q to
                // ~1e-14 and d_hi its f32 rounding; in f64 d as packed and ρ 0
                let ns = set.node_stride;
                let mut row = vec![0.0; ns - RESIDENT_NODE_EXTRA];
                rows.node_row_into(old, &mut row);
                let row_value = |f: usize| value(values_at + rw * (nnz * set.nz_stride + r * ns + RESIDENT_NODE_EXTRA + f));
                for (f, &v) in row.iter().enumerate().skip(NODE_D + 1) {
                    assert_eq!(row_value(f).to_bits(), stored(v).to_bits(), "graph {g} node row {r} value {f}: {} vs {v}", row_value(f));
                }
                let lo = value(values_at + rw * (nnz * set.nz_stride + r * ns));
                if rw == 1 {
                    let deg: f64 = want.iter().map(|&(_, e)| (graph.edges()[e].weight * graph.weight_scale()) as f32 as f64).sum();
                    let d = if deg > 0.0 { deg } else { 1.0 } / (1.0 - 0.05);
                    let hi = row_value(NODE_D);
                    assert_eq!(hi.to_bits(), stored(d).to_bits(), "graph {g} node row {r}: d's high word {hi} vs f32({d})");
                    assert!((hi * (1.0 + lo) - d).abs() <= 1e-14 * d, "graph {g} node row {r}: d {} vs {d}", hi * (1.0 + lo));
                } else {
                    assert_eq!(row_value(NODE_D).to_bits(), row[NODE_D].to_bits(), "graph {g} node row {r}: d");
                    assert_eq!(lo, 0.0, "graph {g} node row {r}: d's relative low part in f64");
                }
            }
            let len = |i: usize| (rp[i + 1] - rp[i]) as usize;
            let long = (0..n).any(|i| len(i) > PIECE_NONZEROS);
            assert_eq!(np > 0, long, "graph {g}: pieces {np}, a row longer than {PIECE_NONZEROS}: {long}");
            let first_piece = values_at + rw * (nnz * set.nz_stride + n * set.node_stride);
            let pieces = &run[first_piece..first_piece + np];
            let mut covered = Vec::new();
            for (p, &w) in pieces.iter().enumerate() {
                let (node, first) = ((w >> 16) as usize, (w & 0xffff) as usize);
                assert!(node < n && rp[node] as usize <= first && first < rp[node + 1] as usize, "graph {g} piece {p}: node {node}, first {first}");
                let end = (first + PIECE_NONZEROS).min(rp[node + 1] as usize);
                covered.push((first, end));
            }
            let lens: Vec<usize> = covered.iter().map(|(a, b)| b - a).collect();
            assert!(lens.windows(2).all(|w| w[0] >= w[1]), "graph {g}: pieces not sorted by length");
            covered.sort_unstable();
            if np > 0 {
                assert!(
                    covered[0].0 == 0 && covered[np - 1].1 == nnz && covered.windows(2).all(|w| w[0].1 == w[1].0),
                    "graph {g}: pieces do not cover the nonzeros once"
                );
                split_seen = true;
            }
            let unit = graph.edges().iter().all(|e| e.weight * graph.weight_scale() == 1.0);
            assert_eq!(set.unit_weights[g], unit, "graph {g}: unit weights");
        }
        assert!(!set.unit_weights[graphs.len() - 1], "the weighted graph");
        assert!(split_seen, "BA graphs have hubs: some graph must be split");
    }

    #[test]
    fn packing_in_parts_gives_the_one_pass_set_and_its_error() {
        let graphs: Vec<crate::graph::Graph> = (1..4).flat_map(mixed_set).collect();
        let resolved = synthetic_kernel(0.05).resolve().unwrap();
        let opt = PackOptions::new(&resolved, 0.05, 1.0);
        let n = graphs.len();
        for precision in [Precision::F32, Precision::F64] {
            let one = resident_part(&graphs, 0..n, &opt, precision).unwrap();
            for parts in [vec![0..1, 1..5, 5..n], (0..n).map(|g| g..g + 1).collect(), vec![0..n - 1, n - 1..n]] {
                assert_eq!(resident_in_parts(&graphs, &opt, &parts, precision).unwrap(), one, "{precision:?} parts {parts:?}");
            }
            // through the pool's own cut too (a set this small is one part: the same set either way)
            assert_eq!(pack_resident(&graphs, &opt, precision).unwrap(), one);
        }
        // an edge feature past f32's range in graph 9, a duplicate edge in graph 14: graph 9's
        // error from any cut, and f64 names graph 14
        let mut bad = graphs.clone();
        bad[9] = crate::graph::Graph::new(3, &["label"], &["length"]);
        bad[9].add_edge(0, 1, 1.0, &[1e39]).unwrap();
        bad[14] = crate::graph::Graph::new(3, &["label"], &["length"]);
        bad[14].add_edge(0, 1, 1.0, &[1.0]).unwrap();
        bad[14].add_edge(1, 0, 1.0, &[1.0]).unwrap();
        let err = resident_part(&bad, 0..n, &opt, Precision::F32).unwrap_err();
        assert!(matches!(err, OctileError::InvalidGraph { graph: Some(9), .. }), "{err}");
        assert!(err.to_string().contains("f32 range"), "{err}");
        let one = err.to_string();
        for parts in [vec![0..1, 1..5, 5..n], (0..n).map(|g| g..g + 1).collect(), vec![0..12, 12..n]] {
            assert_eq!(resident_in_parts(&bad, &opt, &parts, Precision::F32).unwrap_err().to_string(), one, "parts {parts:?}");
        }
        // f64 holds graph 9's value; graph 14's duplicate is `pack`'s error
        let err = resident_part(&bad, 0..n, &opt, Precision::F64).unwrap_err();
        assert_eq!(err.to_string(), pack::<f64>(&bad, &opt).unwrap_err().to_string());
        assert!(err.to_string().contains("duplicate edge (0, 1)"), "{err}");
    }

    /// Graphs of 6 to 240 nodes (NWS and BA, whose hubs make split rows), integer edge lengths
    /// (a Kronecker delta may read them), weights 1: warp and block teams, pairs that do not fit.
    fn mixed_set(seed: u64) -> Vec<crate::graph::Graph> {
        use crate::generators::{barabasi_albert, newman_watts_strogatz};
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        [6, 10, 16, 30, 48, 96, 160, 240]
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let edges = if k % 2 == 0 { newman_watts_strogatz(n, 3, 0.1, &mut rng) } else { barabasi_albert(n, 3, &mut rng) };
                let mut g = crate::graph::Graph::new(n, &["label"], &["length"]);
                for i in 0..n {
                    g.set_node_features(i, &[rng.gen_range(0..3) as f64]).unwrap();
                }
                for (u, v) in edges {
                    g.add_edge(u, v, 1.0, &[rng.gen_range(0..3) as f64]).unwrap();
                }
                g
            })
            .collect()
    }

    /// A resident set of `graphs` under the synthetic kernel (κe square exponential) or, with
    /// `delta`, κe one Kronecker delta on the same feature (the product form's κe), in f32.
    fn resident_set(graphs: &[crate::graph::Graph], delta: bool) -> (ResidentSet, EdgeShape) {
        resident_set_in(graphs, delta, Precision::F32)
    }

    /// [`resident_set`] in `precision`.
    fn resident_set_in(graphs: &[crate::graph::Graph], delta: bool, precision: Precision) -> (ResidentSet, EdgeShape) {
        let mut cfg = synthetic_kernel(0.05);
        if delta {
            cfg.edge[0].kernel = crate::mgk::config::BaseKernelConfig::KroneckerDelta { h: 0.3 };
        }
        let resolved = cfg.resolve().unwrap();
        let set = pack_resident(graphs, &PackOptions::new(&resolved, 0.05, 1.0), precision).unwrap();
        (set, EdgeShape::of(&resolved.edge_spec))
    }

    #[test]
    fn the_shapes_the_plan_is_made_from_are_the_packed_sets() {
        // hubs (pieces), unit and other weights (scaled by powers of two), self-loops, an isolated
        // node, a single node, no edges; f32 and f64, κe square exponential and Kronecker delta
        let mut graphs = mixed_set(9);
        let mut odd = crate::graph::Graph::new(5, &["label"], &["length"]);
        for i in 0..5 {
            odd.set_node_features(i, &[0.0]).unwrap();
        }
        odd.add_edge(0, 0, 4.0, &[1.0]).unwrap();
        odd.add_edge(0, 1, 4.0, &[1.0]).unwrap();
        odd.add_edge(2, 3, 4.0, &[0.0]).unwrap();
        let mut heavy = odd.clone();
        heavy.add_edge(3, 3, 3.0, &[0.0]).unwrap();
        let mut one = crate::graph::Graph::new(1, &["label"], &["length"]);
        one.set_node_features(0, &[2.0]).unwrap();
        let mut bare = crate::graph::Graph::new(3, &["label"], &["length"]);
        for i in 0..3 {
            bare.set_node_features(i, &[1.0]).unwrap();
        }
        graphs.extend([odd, heavy, one, bare]);
        for precision in [Precision::F32, Precision::F64] {
            for delta in [false, true] {
                let mut cfg = synthetic_kernel(0.05);
                if delta {
                    cfg.edge[0].kernel = crate::mgk::config::BaseKernelConfig::KroneckerDelta { h: 0.3 };
                }
                let resolved = cfg.resolve().unwrap();
                let opt = PackOptions::new(&resolved, 0.05, 1.0);
                let (set, shapes) = (pack_resident(&graphs, &opt, precision).unwrap(), resident_shapes(&graphs, &opt, precision));
                assert!(
                    set.same_shapes(&shapes),
                    "{precision:?} delta {delta}: packed {:?} {:?}, shapes {:?} {:?}",
                    set.graphs,
                    set.unit_weights,
                    shapes.graphs,
                    shapes.unit_weights
                );
                assert!(set.graphs.iter().any(|g| g.n_pieces > 0) && set.unit_weights.iter().any(|&u| u) && set.unit_weights.iter().any(|&u| !u));
                // and the plan made from the shapes is the plan of the set
                let pairs: Vec<(u32, u32)> = (0..graphs.len() as u32).flat_map(|a| (a..graphs.len() as u32).map(move |b| (a, b))).collect();
                let shape = EdgeShape::of(&resolved.edge_spec);
                let (a, b) = (
                    plan(&set, &pairs, shape, H100, &ResidentOptions::default(), occupancy),
                    plan(&shapes, &pairs, shape, H100, &ResidentOptions::default(), occupancy),
                );
                assert_eq!((a.order, a.bucket, a.launches), (b.order, b.bucket, b.launches));
            }
        }
        // a set that differs in one graph's shape is told apart
        let (set, _) = resident_set(&graphs, true);
        let mut other = set.clone();
        other.graphs[3].n_pieces += 1;
        assert!(!set.same_shapes(&other));
        let mut other = set.clone();
        other.unit_weights[0] = !other.unit_weights[0];
        assert!(!set.same_shapes(&other));
    }

    #[test]
    fn the_product_form_takes_pairs_whose_entries_the_spans_can_hold() {
        // paths of 300 and 70 nodes (any node count: the order holds k = i·n′ + i′) and complete
        // graphs of 19 and 20 nodes (342² entries < PRODUCT_MAX_ENTRIES ≤ 380²), unit weights;
        // beside a 4-node path
        let path = |n: usize| {
            let mut g = crate::graph::Graph::new(n, &["label"], &["length"]);
            for i in 0..n {
                g.set_node_features(i, &[0.0]).unwrap();
            }
            for i in 1..n {
                g.add_edge(i - 1, i, 1.0, &[(i % 2) as f64]).unwrap();
            }
            g
        };
        let complete = |n: usize| {
            let mut g = crate::graph::Graph::new(n, &["label"], &["length"]);
            for i in 0..n {
                g.set_node_features(i, &[0.0]).unwrap();
                for j in 0..i {
                    g.add_edge(j, i, 1.0, &[0.0]).unwrap();
                }
            }
            g
        };
        let (set, _) = resident_set(&[path(300), path(4), path(70), complete(19), complete(20)], true);
        assert!(set.product_words(0, 1).is_some(), "300 nodes against 4");
        assert!(set.product_words(1, 0).is_some(), "4 against 300 nodes");
        assert!(set.product_words(1, 2).is_some(), "4 against 70");
        assert_eq!(set.product_words(0, 2), None, "300 · 70 unknowns > PRODUCT_MAX_UNKNOWNS");
        let (k19, k20) = (set.size(3).1, set.size(4).1);
        assert_eq!((k19, k20), (342, 380));
        assert!(k19 * k19 < PRODUCT_MAX_ENTRIES && k20 * k20 >= PRODUCT_MAX_ENTRIES);
        assert!(set.product_words(3, 3).is_some(), "K19 against K19: 342² entries");
        assert_eq!(set.product_words(4, 4), None, "K20 against K20: 380² entries");
        assert!(set.product_words(4, 1).is_some(), "K20 against a path");
    }

    /// An H100's limits, and an occupancy that depends on the launch (as the driver's does).
    const H100: PlanDevice = PlanDevice { max_smem_bytes: 232_448, sm_count: 132 };
    fn occupancy(_: Kernel, l: Launch) -> Option<u32> {
        Some((2048 / l.block_threads()).min((H100.max_smem_bytes / l.smem_bytes().max(1)) as u32))
    }

    /// The launches of `plan` as the solver cut them before the plan was split from the launches
    /// (a copy of that loop): (pair indices, launch, grid) per launch.
    fn launches_as_before(
        plan: &ResidentPlan,
        precision: Precision,
        fill: usize,
        sm_count: u32,
        occupancy: impl Fn(Kernel, Launch) -> Option<u32>,
    ) -> Vec<(Vec<usize>, Launch, u32)> {
        let mut out = Vec::new();
        for range in blocks_of(plan.order.len(), 1 << 18) {
            let ks = &plan.order[range];
            let mut start = 0;
            while start < ks.len() {
                let first = plan.shape_of(ks[start]).unwrap();
                let same_kind = |x: Launch| x.same_kind(first);
                let mut end = start;
                while end < ks.len() && plan.shape_of(ks[end]) == Some(first) {
                    end += 1;
                }
                while end < ks.len() && end - start < fill && plan.shape_of(ks[end]).is_some_and(same_kind) {
                    let next = plan.shape_of(ks[end]);
                    while end < ks.len() && plan.shape_of(ks[end]) == next {
                        end += 1;
                    }
                }
                let l = plan.shape_of(ks[end - 1]).unwrap();
                let teams_per_block = if l.team == 32 { l.warps as usize } else { 1 };
                let resident = occupancy(entry_name(l, plan.shape, precision), l).filter(|&b| b > 0).unwrap_or(1) * sm_count;
                out.push((ks[start..end].to_vec(), l, resident.min((end - start).div_ceil(teams_per_block) as u32)));
                start = end;
            }
        }
        out
    }

    /// Everything a plan promises: fitting pairs in shape order, blocks and launches covering
    /// them in order, each launch one team kind whose slice holds each of its pairs' and whose
    /// entry is its shape's, grids as the occupancy allows; and the launches the solver made
    /// before the split.
    fn check_plan(
        plan: &ResidentPlan,
        set: &ResidentSet,
        pairs: &[(u32, u32)],
        opts: &ResidentOptions,
        dev: PlanDevice,
        occupancy: impl Fn(Kernel, Launch) -> Option<u32>,
    ) {
        assert_eq!(plan.n_pairs(), pairs.len());
        let fitting: Vec<usize> = (0..pairs.len()).filter(|&k| plan.shape_of(k).is_some()).collect();
        let mut sorted = plan.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, fitting, "order: the fitting pairs, once each");
        let key = |k: usize| plan.shape_of(k).map(|l| (l.product, l.split, l.team, l.slice_words));
        assert!(plan.order.windows(2).all(|w| key(w[0]) <= key(w[1])), "order sorted by shape");
        assert!(plan.blocks.windows(2).all(|w| w[0].pairs.end == w[1].pairs.start && w[0].launches.end == w[1].launches.start));
        assert!(plan.blocks.iter().all(|b| b.pairs.len() <= RESIDENT_STREAM_BLOCK
            && plan.launches[b.launches.clone()].iter().all(|l| b.pairs.start <= l.pairs.start && l.pairs.end <= b.pairs.end)));
        assert!(plan.launches.windows(2).all(|w| w[0].pairs.end == w[1].pairs.start));
        assert_eq!((plan.launches.first().map_or(0, |l| l.pairs.start), plan.launches.last().map_or(0, |l| l.pairs.end)), (0, plan.order.len()));
        for pl in &plan.launches {
            let l = pl.launch;
            assert_eq!(pl.entry, entry_name(l, plan.shape, set.precision));
            assert!(l.smem_bytes() <= dev.max_smem_bytes && pl.grid >= 1);
            for &k in &plan.order[pl.pairs.clone()] {
                let (a, b) = pairs[k];
                let p = plan.shape_of(k).unwrap();
                assert_eq!((p.product, p.split, p.team), (l.product, l.split, l.team), "one team kind per launch");
                let need = if l.product { set.product_words(a, b).unwrap() } else { set.slice_words(a, b) };
                assert!(need <= l.slice_words as usize, "pair ({a}, {b}) needs {need} words, the launch gives {}", l.slice_words);
            }
        }
        let fill = opts.fill.unwrap_or(16 * dev.sm_count as usize);
        let now: Vec<(Vec<usize>, Launch, u32)> = plan.launches.iter().map(|pl| (plan.order[pl.pairs.clone()].to_vec(), pl.launch, pl.grid)).collect();
        assert_eq!(now, launches_as_before(plan, set.precision, fill, dev.sm_count, occupancy), "the launches the solver made before the split");
    }

    #[test]
    fn plans_cover_every_fitting_pair_with_launches_of_one_shape_kind() {
        let graphs = mixed_set(5);
        let n = graphs.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..n).flat_map(|a| (a..n).map(move |b| (a, b))).collect();
        let mut seen = std::collections::BTreeSet::new();
        for (delta, precision) in [(false, Precision::F32), (true, Precision::F32), (false, Precision::F64), (true, Precision::F64)] {
            let (set, shape) = resident_set_in(&graphs, delta, precision);
            for opts in [
                ResidentOptions::default(),
                ResidentOptions { product: false, split: false, ..ResidentOptions::default() },
                ResidentOptions { fill: Some(1), rows_per_thread: 2, product_warps_per_sm: 64, ..ResidentOptions::default() },
            ] {
                let plan = plan(&set, &pairs, shape, H100, &opts, occupancy);
                check_plan(&plan, &set, &pairs, &opts, H100, occupancy);
                let kinds: Vec<TeamKind> = plan.launches.iter().map(|l| TeamKind::of(l.launch)).collect();
                let has = |f: TeamForm| kinds.iter().any(|t| t.form == f);
                assert_eq!(has(TeamForm::Product), delta && opts.product, "{opts:?} delta {delta}: {kinds:?}");
                let f64_entries = plan.launches.iter().all(|l| l.entry.name().ends_with("_f64"));
                assert_eq!(f64_entries, precision == Precision::F64, "{precision:?}: {:?}", plan.launches.iter().map(|l| l.entry).collect::<Vec<_>>());
                // BA hubs: split rows whenever they are on (pairs past the product form's size run on the fly)
                assert_eq!(has(TeamForm::SplitRows), opts.split, "{opts:?} delta {delta}: {kinds:?}");
                assert!(plan.order.len() < pairs.len(), "pairs of the 240-node graph do not fit");
                if opts.fill == Some(1) {
                    // no joining: one launch per distinct shape
                    let shapes: std::collections::BTreeSet<_> =
                        (0..plan.n_pairs()).filter_map(|k| plan.shape_of(k)).map(|l| (l.product, l.split, l.team, l.slice_words)).collect();
                    assert_eq!(plan.launches.len(), shapes.len());
                }
                seen.extend(kinds.iter().map(|t| t.threads == 32));
            }
        }
        assert_eq!(seen.len(), 2, "warp and block teams both planned");
    }

    #[test]
    fn shapes_looked_up_by_graph_class_equal_those_of_the_pairs_alone() {
        // the set three times over: few classes of graphs for many pairs, so the plan takes its
        // table over pairs of classes; 8 distinct graphs alone (36 pairs < 8²): each pair's own shape
        let graphs = mixed_set(5);
        let n = graphs.len();
        let many: Vec<crate::graph::Graph> = graphs.iter().cycle().take(3 * n).cloned().collect();
        let all = |m: usize| -> Vec<(u32, u32)> { (0..m as u32).flat_map(|a| (a..m as u32).map(move |b| (a, b))).collect() };
        let (pairs, few) = (all(3 * n), all(n));
        for delta in [false, true] {
            let ((set, shape), (small, _)) = (resident_set(&many, delta), resident_set(&graphs, delta));
            for gradient in [false, true] {
                let opts = ResidentOptions::default();
                let table = plan_with(&set, &pairs, shape, H100, &opts, occupancy, gradient);
                let alone = plan_with(&small, &few, shape, H100, &opts, occupancy, gradient);
                if !gradient {
                    check_plan(&table, &set, &pairs, &opts, H100, occupancy);
                }
                for (k, &(a, b)) in pairs.iter().enumerate() {
                    let (a0, b0) = (a as usize % n, b as usize % n);
                    if a0 <= b0 {
                        let j = few.iter().position(|&p| p == (a0 as u32, b0 as u32)).unwrap();
                        assert_eq!(table.shape_of(k), alone.shape_of(j), "pair ({a}, {b}) = ({a0}, {b0}), delta {delta}, gradient {gradient}");
                    }
                }
            }
        }
    }

    #[test]
    fn gradient_plans_leave_room_for_the_fused_solve_and_run_gradient_entries() {
        let graphs = mixed_set(5);
        let pairs: Vec<(u32, u32)> = (0..graphs.len() as u32).flat_map(|a| (a..graphs.len() as u32).map(move |b| (a, b))).collect();
        for delta in [false, true] {
            let (set, shape) = resident_set(&graphs, delta);
            let p = plan_with(&set, &pairs, shape, H100, &ResidentOptions::default(), occupancy, true);
            let plain = plan(&set, &pairs, shape, H100, &ResidentOptions::default(), occupancy);
            assert!(p.gradient && !p.order.is_empty());
            assert!(p.order.len() <= plain.order.len(), "a longer slice never fits more pairs");
            for &k in &p.order {
                let (a, b) = pairs[k];
                let l = p.shape_of(k).unwrap();
                let n = set.size(a).0 * set.size(b).0;
                let need = if l.product { set.product_words(a, b).unwrap() } else { set.slice_words(a, b) };
                assert!(need <= l.slice_words as usize && (!l.split || l.team > 32 && set.size(b).2 > 0), "pair ({a}, {b}): {l:?} for {need} words");
                // room for the fused solve (its extra vectors and alignment) wherever it fits shared
                // memory, and the launch says where the vectors are
                let fused = need + fused_extra_words(n);
                let fits = bucket_words(fused) <= H100.max_smem_bytes / 4;
                assert!(fused >= need + FUSED_EXTRA_VECTORS * n);
                assert_eq!(l.slice_words as usize >= fused, fits, "pair ({a}, {b}): {l:?}, fused {fused} words");
                // beside: p, r and dg in the solver's room, with one word of alignment
                assert!(l.slice_words as usize >= need + FUSED_BESIDE_EXTRA_WORDS, "pair ({a}, {b}): {l:?}");
                assert_eq!(l.fused_beside, !fits, "pair ({a}, {b}): {l:?}, fused {fused} words");
                // a team the gradient entry it runs on was compiled for
                let entry = crate::mgk::gpu::resident_launch::gradient_entry(l, shape);
                assert!(l.team <= entry.decl().threads.max(), "pair ({a}, {b}): {l:?} on {entry:?}");
            }
            // a launch never mixes jobs whose vectors stay in the slice with jobs whose do not
            for pl in &p.launches {
                let kinds: std::collections::BTreeSet<bool> = p.order[pl.pairs.clone()].iter().map(|&k| p.shape_of(k).unwrap().fused_beside).collect();
                assert_eq!(kinds.len(), 1, "{pl:?}");
                assert_eq!(kinds.first().copied(), Some(pl.launch.fused_beside), "{pl:?}");
            }
            for pl in &p.launches {
                assert_eq!(pl.entry, gradient_entry(pl.launch, shape));
                assert!(pl.entry.name().contains("gradient"), "{:?}", pl.entry);
            }
            assert_eq!(p.launches.iter().any(|l| l.launch.product), delta, "product form for Kronecker-delta κe with unit weights");
        }
    }

    #[test]
    fn pairs_past_shared_memory_are_left_to_the_tile_solver() {
        let graphs = mixed_set(9);
        let (set, shape) = resident_set(&graphs, false);
        let pairs: Vec<(u32, u32)> = (0..8).flat_map(|a| (0..8).map(move |b| (a, b))).collect();
        let small = PlanDevice { max_smem_bytes: 512, sm_count: 4 };
        let none = plan(&set, &pairs, shape, small, &ResidentOptions::default(), |_, _| None);
        assert!(none.order.is_empty() && none.launches.is_empty() && none.blocks.is_empty() && (0..none.n_pairs()).all(|k| none.shape_of(k).is_none()));
        let some = PlanDevice { max_smem_bytes: 48 << 10, sm_count: 4 };
        let p = plan(&set, &pairs, shape, some, &ResidentOptions::default(), |_, _| None);
        check_plan(&p, &set, &pairs, &ResidentOptions::default(), some, |_, _| None);
        for (k, &(a, b)) in pairs.iter().enumerate() {
            let fits = bucket_words(set.slice_words(a, b)) * 4 <= some.max_smem_bytes;
            assert_eq!(p.shape_of(k).is_some(), fits, "pair ({a}, {b})");
        }
        assert!(!p.order.is_empty() && p.order.len() < pairs.len());
        // no occupancy known: one block per SM
        assert!(p.launches.iter().all(|l| l.grid <= some.sm_count), "{:?}", p.launches);
    }

    #[test]
    fn long_pair_lists_are_cut_into_stream_blocks() {
        let graphs = mixed_set(2);
        let (set, shape) = resident_set(&graphs, true);
        let pairs: Vec<(u32, u32)> = (0..300_000u32).map(|k| (k % 7, (k / 7 + k) % 7)).collect();
        let opts = ResidentOptions::default();
        let p = plan(&set, &pairs, shape, H100, &opts, occupancy);
        check_plan(&p, &set, &pairs, &opts, H100, occupancy);
        assert_eq!(p.blocks.iter().map(|b| b.pairs.clone()).collect::<Vec<_>>(), [0..RESIDENT_STREAM_BLOCK, RESIDENT_STREAM_BLOCK..p.order.len()]);
        assert!(p.launches.len() > p.blocks.len());
    }

    #[test]
    fn product_teams_grow_only_when_few_pairs_fit_an_sm() {
        // many slices per SM: one warp each; few: more warps per pair, at least 4 rows a thread
        assert_eq!(product_team(300, 22, 16, RESIDENT_BLOCK_THREADS), 32);
        assert_eq!(product_team(1500, 5, 16, RESIDENT_BLOCK_THREADS), 128);
        assert_eq!(product_team(200, 1, 16, RESIDENT_BLOCK_THREADS), 64);
        assert_eq!(product_team(100_000, 1, 64, RESIDENT_BLOCK_THREADS), RESIDENT_BLOCK_THREADS);
        // a team never past what its entry was compiled for
        assert_eq!(product_team(100_000, 1, 64, 256), 256);
        assert_eq!(product_team(1500, 5, 16, 256), 128);
        assert_eq!(team_threads(9216, 4), RESIDENT_BLOCK_THREADS);
        assert_eq!(team_threads(100, 4), 32);
    }
}
