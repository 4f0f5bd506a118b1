//! The marginalized graph kernel object: Gram matrices on the chosen backend.
use crate::config::{Backend, DenseWalk, KernelConfig, Precision, ResolvedKernel};
use crate::cpu::{CpuParams, MixedWorkspace, Workspace, solve_pair, solve_pair_mixed};
use crate::error::{OctileError, Result};
use crate::gpu::{self, GpuDevice, batch::PairVector};
use crate::graph::Graph;
use crate::pack::{PackOptions, PackedGraphs, pack};
use crate::profile::{self, MapSource};
use crate::reorder::Reordering;
use octile_types::layout::{TILE_STORAGE_COMPACT, TILE_STORAGE_DENSE};
use octile_types::tiling::TILE;
use octile_types::{GatheredKernel, MgkParams, PairStatus, PrimitiveMap, Real};
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Per-pair diagnostics (the Info of Params / Info / Error).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairInfo {
    /// CG iterations.
    pub iterations: u32,
    /// Final relative residual ‖r‖/‖b‖.
    pub residual: f64,
    /// Whether rtol was reached.
    pub converged: bool,
}

/// A kernel matrix with its diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct Gram {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row-major values.
    pub values: Vec<f64>,
    /// Row-major per-entry diagnostics (a symmetric Gram mirrors the upper triangle).
    pub info: Vec<PairInfo>,
    /// Pairs actually solved.
    pub pairs_solved: usize,
    /// "cpu" or "cuda".
    pub backend: String,
    /// Device description.
    pub device: String,
    /// Wall-clock seconds of the solve.
    pub seconds: f64,
    /// Which tile-pair primitives were used and where the map came from.
    pub primitives: String,
}

impl Gram {
    /// Entry (i, j).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.cols + j]
    }
    /// Entries that did not converge, as (row, col, info).
    pub fn failures(&self) -> Vec<(usize, usize, PairInfo)> {
        self.info.iter().enumerate().filter(|(_, f)| !f.converged).map(|(k, f)| (k / self.cols, k % self.cols, *f)).collect()
    }
    /// (min, median, max) of iterations over all entries.
    pub fn iteration_stats(&self) -> (u32, u32, u32) {
        let mut it: Vec<u32> = self.info.iter().map(|f| f.iterations).collect();
        if it.is_empty() {
            return (0, 0, 0);
        }
        it.sort_unstable();
        (it[0], it[it.len() / 2], it[it.len() - 1])
    }
}

/// Node-wise similarities of one pair of graphs (see `MarginalizedGraphKernel::nodal_pairs`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodalMatrix {
    /// Nodes of the first graph.
    pub rows: usize,
    /// Nodes of the second graph.
    pub cols: usize,
    /// Row-major R[i][i'], input node order.
    pub values: Vec<f64>,
    /// The pair's solver diagnostics.
    pub info: PairInfo,
}

impl NodalMatrix {
    /// R[i][i'].
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.cols + j]
    }
    /// Σ R = K(G, G').
    pub fn sum(&self) -> f64 {
        self.values.iter().sum()
    }
}

/// What [`MarginalizedGraphKernel::solve_x`] returns.
struct Solved {
    status: Vec<PairStatus>,
    seconds: f64,
    /// The primitive map's description (and, on the GPU, the solver entries used).
    describe: String,
    /// With `nodal`: each pair's node-wise similarities R, row-major, input node order.
    nodal: Option<Vec<Vec<f64>>>,
}

/// Statuses in pair order, each pair's x when asked for, the GPU entries used (GPU only).
type EngineOutput = (Vec<PairStatus>, Option<Vec<PairVector>>, Option<String>);

/// Progress reporting and cancellation for long runs.
#[derive(Clone, Default)]
pub struct RunControl {
    /// Called with the number of pairs just finished.
    pub progress: Option<Arc<dyn Fn(usize) + Send + Sync>>,
    /// Set to stop early (the call returns `Cancelled`).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl RunControl {
    /// Whether cancellation was requested.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }
    /// Report finished pairs.
    pub fn report(&self, n: usize) {
        if let Some(p) = &self.progress {
            p(n)
        }
    }
}

enum Engine {
    Cpu,
    Cuda(Arc<GpuDevice>),
}

/// The marginalized graph kernel, configured once and applied to many graph sets.
pub struct MarginalizedGraphKernel {
    config: KernelConfig,
    resolved: ResolvedKernel,
    engine: Engine,
    control: RunControl,
}

impl MarginalizedGraphKernel {
    /// Validate `config` and pick the backend (`Auto`: the GPU if one is usable).
    pub fn new(config: KernelConfig) -> Result<Self> {
        let resolved = config.resolve()?;
        let engine = match config.backend {
            Backend::Cpu => Engine::Cpu,
            Backend::Cuda => Engine::Cuda(gpu::device().map_err(OctileError::NoGpu)?),
            Backend::Auto => match gpu::device() {
                Ok(d) if resolved.edge_features.len() <= octile_types::layout::MAX_EDGE_FEATURES => Engine::Cuda(d),
                _ => Engine::Cpu,
            },
        };
        if let Engine::Cuda(_) = engine
            && resolved.edge_features.len() > octile_types::layout::MAX_EDGE_FEATURES
        {
            return Err(OctileError::InvalidConfig(format!(
                "the CUDA backend supports at most {} edge features, the edge kernel reads {}",
                octile_types::layout::MAX_EDGE_FEATURES,
                resolved.edge_features.len()
            )));
        }
        Ok(MarginalizedGraphKernel { config, resolved, engine, control: RunControl::default() })
    }

    /// κe gathered for the tiling-blocking dense walks, or marked unusable when the configuration
    /// asks for shared tiling (the default) — `usable` is what selects the walks on both backends.
    fn dense_kernel(&self) -> GatheredKernel {
        crate::tiles::gathered(&self.resolved.edge_spec, self.config.tiles.dense_walk)
    }

    /// Attach progress reporting / cancellation.
    pub fn with_control(mut self, control: RunControl) -> Self {
        self.control = control;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &KernelConfig {
        &self.config
    }

    /// "cpu" or "cuda".
    pub fn backend_name(&self) -> &'static str {
        match self.engine {
            Engine::Cpu => "cpu",
            Engine::Cuda(_) => "cuda",
        }
    }

    /// Human-readable device.
    pub fn device_name(&self) -> String {
        match &self.engine {
            Engine::Cpu => format!("CPU ({} threads)", rayon::current_num_threads()),
            Engine::Cuda(d) => d.describe(),
        }
    }

    /// K(X): the symmetric Gram matrix; only the upper triangle is solved.
    pub fn gram(&self, graphs: &[Graph]) -> Result<Gram> {
        let n = graphs.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
        let (status, secs, prims) = self.solve(graphs, &pairs)?;
        let mut g = self.empty(graphs.len(), graphs.len(), pairs.len(), secs, prims);
        for (&(i, j), s) in pairs.iter().zip(&status) {
            for (r, c) in [(i, j), (j, i)] {
                g.values[r as usize * g.cols + c as usize] = s.value;
                g.info[r as usize * g.cols + c as usize] = info(s);
            }
        }
        finish(g, &pairs, &status, |i, j| (i, j))
    }

    /// K(X, Y).
    pub fn gram_between(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        let all: Vec<Graph> = x.iter().chain(y).cloned().collect();
        let (nx, ny) = (x.len() as u32, y.len() as u32);
        let pairs: Vec<(u32, u32)> = (0..nx).flat_map(|i| (0..ny).map(move |j| (i, nx + j))).collect();
        let (status, secs, prims) = self.solve(&all, &pairs)?;
        finish(self.filled(x.len(), y.len(), &status, secs, prims), &pairs, &status, |i, j| (i, j - nx))
    }

    /// K(G, G) for each graph.
    pub fn diag(&self, graphs: &[Graph]) -> Result<Vec<f64>> {
        let n = graphs.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..n).map(|i| (i, i)).collect();
        let (status, secs, prims) = self.solve(graphs, &pairs)?;
        Ok(finish(self.filled(graphs.len(), 1, &status, secs, prims), &pairs, &status, |i, _| (i, i))?.values)
    }

    /// K(graphs[i], graphs[j]) for the listed index pairs only (e.g. a sample of a Gram matrix, or
    /// nearest-neighbour candidates): a `pairs.len()` × 1 result, row k = pair k. An index outside
    /// `graphs` is an `InvalidConfig` error naming it.
    pub fn pairs(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Gram> {
        let list = listed(graphs, pairs)?;
        let (status, secs, prims) = self.solve(graphs, &list)?;
        finish(self.filled(pairs.len(), 1, &status, secs, prims), &list, &status, |i, j| (i, j))
    }

    /// Node-wise similarity of each listed pair (the paper's nodal output; GraphDot's
    /// `nodal='block'`): R[i][i'] = p_i · x_ii' · p'_i', the expected similarity of the paths that
    /// start at node i of G and node i' of G', so that K(G, G') = Σ R. Rows and columns are in the
    /// graphs' own node order whatever `reorder` packed them in. An index outside `graphs` is an
    /// error naming it; non-convergence is `NoConvergence` as for Gram matrices.
    pub fn nodal_pairs(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<NodalMatrix>> {
        let list = listed(graphs, pairs)?;
        let Solved { status, seconds: secs, describe: prims, nodal } = self.solve_x(graphs, &list, true)?;
        finish(self.filled(pairs.len(), 1, &status, secs, prims), &list, &status, |i, j| (i, j))?;
        Ok(pairs
            .iter()
            .zip(nodal.unwrap_or_default())
            .zip(&status)
            .map(|((&(i, j), values), s)| NodalMatrix { rows: graphs[i].n_nodes(), cols: graphs[j].n_nodes(), values, info: info(s) })
            .collect())
    }

    /// [`Self::nodal_pairs`] for one pair of graphs.
    pub fn nodal(&self, g1: &Graph, g2: &Graph) -> Result<NodalMatrix> {
        Ok(self.nodal_pairs(&[g1.clone(), g2.clone()], &[(0, 1)])?.remove(0))
    }

    /// K(X) normalized: K_ij / sqrt(K_ii K_jj) (unit diagonal).
    pub fn gram_normalized(&self, graphs: &[Graph]) -> Result<Gram> {
        let mut g = self.gram(graphs)?;
        let d: Vec<f64> = (0..g.rows).map(|i| g.get(i, i)).collect();
        normalize(&mut g, &d, &d);
        Ok(g)
    }

    /// K(X, Y) normalized with diag(X) and diag(Y).
    pub fn gram_between_normalized(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        let mut g = self.gram_between(x, y)?;
        let (dx, dy) = (self.diag(x)?, self.diag(y)?);
        normalize(&mut g, &dx, &dy);
        Ok(g)
    }

    /// A rows × cols result whose row-major entry k is pair k's value and diagnostics.
    fn filled(&self, rows: usize, cols: usize, status: &[PairStatus], seconds: f64, primitives: String) -> Gram {
        let mut g = self.empty(rows, cols, status.len(), seconds, primitives);
        for (k, s) in status.iter().enumerate() {
            g.values[k] = s.value;
            g.info[k] = info(s);
        }
        g
    }

    fn empty(&self, rows: usize, cols: usize, pairs_solved: usize, seconds: f64, primitives: String) -> Gram {
        Gram {
            rows,
            cols,
            values: vec![0.0; rows * cols],
            info: vec![PairInfo::default(); rows * cols],
            pairs_solved,
            backend: self.backend_name().into(),
            device: self.device_name(),
            seconds,
            primitives,
        }
    }

    /// The tile-pair primitive map this kernel uses on its engine (adaptive: from the profile of
    /// the device and precision; see `crate::profile`).
    pub fn primitive_map(&self) -> Result<MapSource> {
        let cost = profile::EdgeCost::of(&self.resolved.edge_spec);
        let precision = match self.config.precision {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        };
        match &self.engine {
            Engine::Cpu => profile::resolve(&self.config.tiles, "cpu", &profile::cpu_model(), std::env::consts::ARCH, precision, cost),
            Engine::Cuda(d) => profile::resolve(&self.config.tiles, "cuda", &d.name, &d.arch(), precision, cost),
        }
    }

    /// Pack and solve `pairs` of `graphs` on the engine; returns statuses in pair order, the
    /// seconds taken and the primitive map's description.
    fn solve(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<(Vec<PairStatus>, f64, String)> {
        let Solved { status, seconds, describe, .. } = self.solve_x(graphs, pairs, false)?;
        Ok((status, seconds, describe))
    }

    /// [`Self::solve`], and with `nodal` each pair's node-wise similarity matrix in the graphs'
    /// own node order (the packing order's permutation undone).
    fn solve_x(&self, graphs: &[Graph], pairs: &[(u32, u32)], nodal: bool) -> Result<Solved> {
        let t = Instant::now();
        // reorder once (in parallel), then pack both precisions in that order; perms[g][old] = new
        let ordered: Vec<Graph>;
        let perms: Vec<Arc<Vec<usize>>> = graphs.par_iter().map(|g| if self.config.reorder == Reordering::Natural || g.n_nodes() <= TILE { Arc::new((0..g.n_nodes()).collect()) } else { self.config.reorder.order_cached(g) }).collect();
        let packed = if self.config.reorder == Reordering::Natural {
            graphs
        } else {
            ordered = graphs.par_iter().zip(&perms).map(|(g, perm)| g.permuted(perm)).collect();
            &ordered
        };
        let map = self.primitive_map()?;
        let opt = PackOptions { compact: self.config.tiles.compact, skip_empty: self.config.tiles.skip_empty, ..PackOptions::new(&self.resolved, self.config.q, self.config.p) };
        let set64 = pack::<f64>(packed, &opt)?;
        let (status, xs, entry) = match self.config.precision {
            Precision::F64 => self.solve_t(&set64, &set64, pairs, &map.map, nodal),
            Precision::F32 => self.solve_t(&pack::<f32>(packed, &opt)?, &set64, pairs, &map.map, nodal),
        }?;
        let g = self.dense_kernel();
        let walks = match (self.config.tiles.dense_walk, g.usable != 0) {
            (DenseWalk::TilingBlocking, true) => format!("dense walks (D, R): tiling-blocking, κe gathered to {} feature(s)", g.slots),
            (DenseWalk::TilingBlocking, false) => "dense walks (D, R): shared tiling (tiling-blocking asked for, but κe is not a product reading ≤ 2 edge features)".to_string(),
            (DenseWalk::SharedTiling, _) => "dense walks (D, R): shared tiling".to_string(),
        };
        let describe = match entry {
            Some(e) => format!("{}; {walks}; GPU solver entry: {e}", map.describe),
            None => format!("{}; {walks}", map.describe),
        };
        // R[i][i'] = p_i · x[(π(i), π'(i'))] · p'_i', rows and columns in the input node order
        let nodal = xs.map(|xs| {
            pairs
                .iter()
                .zip(xs)
                .map(|(&(a, b), x)| {
                    let (a, b) = (a as usize, b as usize);
                    let (n, m) = (graphs[a].n_nodes(), graphs[b].n_nodes());
                    let mt = octile_types::tiling::n_tiles(m);
                    let mut r = vec![0.0; n * m];
                    for i in 0..n {
                        let (pi, pa) = (perms[a][i], set64.node_row(a, perms[a][i])[octile_types::layout::NODE_P]);
                        for j in 0..m {
                            let pj = perms[b][j];
                            r[i * m + j] = pa * x[octile_types::tiling::tiled_index(pi, pj, mt)] * set64.node_row(b, pj)[octile_types::layout::NODE_P];
                        }
                    }
                    r
                })
                .collect()
        });
        Ok(Solved { status, seconds: t.elapsed().as_secs_f64(), describe, nodal })
    }

    fn solve_t<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        set: &PackedGraphs<T>,
        set64: &PackedGraphs<f64>,
        pairs: &[(u32, u32)],
        primitives: &PrimitiveMap,
        want_x: bool,
    ) -> Result<EngineOutput> {
        let rtol = self.config.solver.rtol_for(self.config.precision);
        let max_iterations = self.config.solver.max_iterations;
        match &self.engine {
            Engine::Cpu => {
                // few pairs (e.g. large graphs): also split each XMV over the cores
                let parallel_xmv = pairs.len() < 2 * rayon::current_num_threads();
                let prm = CpuParams { node: &self.resolved.node_spec, edge: &self.resolved.edge_spec, rtol, max_iterations, primitives, dense: self.dense_kernel(), parallel_xmv };
                let chunk = 256;
                let mut out = Vec::with_capacity(pairs.len());
                let mut xs = Vec::new();
                for block in pairs.chunks(chunk * rayon::current_num_threads().max(1)) {
                    if self.control.cancelled() {
                        return Err(OctileError::Cancelled);
                    }
                    let keep = |x: &[f64]| if want_x { x.to_vec() } else { Vec::new() };
                    let part: Vec<(PairStatus, Vec<f64>)> = if T::BYTES == 8 {
                        block
                            .par_iter()
                            .map_init(Workspace::default, |ws, &(a, b)| {
                                let st = solve_pair(set64, a as usize, b as usize, &prm, ws);
                                (st, keep(ws.x()))
                            })
                            .collect()
                    } else {
                        block
                            .par_iter()
                            .map_init(MixedWorkspace::default, |ws, &(a, b)| {
                                let st = solve_pair_mixed(set, set64, a as usize, b as usize, &prm, ws);
                                (st, keep(ws.x64()))
                            })
                            .collect()
                    };
                    self.control.report(part.len());
                    for (st, x) in part {
                        out.push(st);
                        xs.push(x);
                    }
                }
                Ok((out, want_x.then_some(xs), None))
            }
            Engine::Cuda(dev) => {
                let params = MgkParams {
                    node_kernel: self.resolved.node_spec,
                    edge_kernel: self.resolved.edge_spec,
                    rtol,
                    n_jobs: 0,
                    max_iterations,
                    node_stride: set.node_stride as u32,
                    nz_stride: set.nz_stride as u32,
                    primitives: *primitives,
                    tile_storage: if set.compact { TILE_STORAGE_COMPACT } else { TILE_STORAGE_DENSE },
                    team_blocks: 1,
                    dense_kernel: self.dense_kernel(),
                };
                let (status, xs, entries) = gpu::batch::solve_pairs(dev, set, set64, pairs, &params, self.config.tiles.blocks_per_pair, want_x, &self.control)?;
                Ok((status, xs, Some(entries)))
            }
        }
    }
}

/// `pairs` as solver indices, or an error naming the first index outside `graphs`.
fn listed(graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<(u32, u32)>> {
    if let Some((k, &(i, j))) = pairs.iter().enumerate().find(|(_, (i, j))| *i >= graphs.len() || *j >= graphs.len()) {
        return Err(OctileError::InvalidConfig(format!("pair {k} = ({i}, {j}) indexes past the {} graphs", graphs.len())));
    }
    Ok(pairs.iter().map(|&(i, j)| (i as u32, j as u32)).collect())
}

fn info(s: &PairStatus) -> PairInfo {
    PairInfo { iterations: s.iterations, residual: s.residual, converged: s.converged != 0 }
}

/// Turn per-pair failures into `NoConvergence` carrying the whole matrix.
fn finish(g: Gram, pairs: &[(u32, u32)], status: &[PairStatus], at: impl Fn(u32, u32) -> (u32, u32)) -> Result<Gram> {
    let failed: Vec<usize> = status.iter().enumerate().filter(|(_, s)| s.converged == 0).map(|(k, _)| k).collect();
    if let Some(&k) = failed.first() {
        let (i, j) = at(pairs[k].0, pairs[k].1);
        return Err(OctileError::NoConvergence {
            pair: (i as usize, j as usize),
            iterations: status[k].iterations,
            residual: status[k].residual,
            n_failed: failed.len(),
            partial: Box::new(g),
        });
    }
    Ok(g)
}

fn normalize(g: &mut Gram, dx: &[f64], dy: &[f64]) {
    let cols = g.cols;
    for (row, &x) in g.values.chunks_mut(cols.max(1)).zip(dx) {
        for (v, &y) in row.iter_mut().zip(dy) {
            *v /= (x * y).sqrt();
        }
    }
}
