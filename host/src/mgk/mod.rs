//! The marginalized graph kernel (Tang et al.; GraphDot's definition): configuration ([`config`]),
//! packing graphs into octiles ([`pack`]), the CPU solver ([`cpu`]), the GPU launches and batching
//! ([`gpu`]), tile-pair primitive profiles ([`profile`]), the dense f64 reference ([`reference`])
//! and `octile tune` ([`tune`], the only module here that runs microbenchmarks; nothing else imports
//! it). [`MarginalizedGraphKernel`] implements the Gram driver's [`GraphKernel`] and adds the nodal
//! output.
pub mod config;
pub mod cpu;
pub mod diagnose;
pub mod essential;
pub mod gpu;
pub mod gradient;
pub mod pack;
pub mod profile;
pub mod reference;
pub mod report;
pub mod spread;
pub mod tune;

use crate::backend::{Backend, Precision};
use crate::error::{OctileError, Result};
use crate::gpu::Engine;
use crate::gram::PairInfo;
use crate::gram::control::{RunControl, blocks_of};
use crate::gram::kernel::{Evaluation, GraphKernel, filled, finish, listed};
use crate::graph::Graph;
use crate::reorder::Reordering;
use crate::report::Details;
use config::{DenseWalk, MgkConfig, ResolvedKernel, gathered};
use cpu::{CpuParams, MixedWorkspace, Rhs, Workspace, solve_pair, solve_pair_mixed};
use gpu::batch::PairVector;
use octile_types::mgk::layout::{MAX_EDGE_FEATURES, NODE_P, TILE_STORAGE_COMPACT, TILE_STORAGE_DENSE};
use octile_types::mgk::tiling::{TILE, n_tiles, tiled_index};
use octile_types::{GatheredKernel, MgkParams, PairStatus, PrimitiveMap, Real};
use pack::{PackOptions, PackedGraphs, pack};
use profile::MapSource;
use rayon::prelude::*;
use report::{DenseWalks, GpuEntry, MgkReport, TileReport};
use std::sync::Arc;
use std::time::Instant;

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
    /// What ran: the solvers, the primitive map's origin, the dense walks, the GPU entries.
    report: MgkReport,
    /// With `nodal`: each pair's node-wise similarities R, row-major, input node order.
    nodal: Option<Vec<Vec<f64>>>,
}

/// A set reordered and packed for the tile solvers (`MarginalizedGraphKernel::pack_sets`).
struct Packed {
    /// perms[g][old] = new.
    perms: Vec<Arc<Vec<usize>>>,
    set64: PackedGraphs<f64>,
    /// The f32 copy (f32 runs).
    set32: Option<PackedGraphs<f32>>,
    map: MapSource,
}

/// Statuses in pair order, each pair's x when asked for, the GPU entries used (GPU only).
type EngineOutput = (Vec<PairStatus>, Option<Vec<PairVector>>, Option<Vec<GpuEntry>>);

/// The marginalized graph kernel, configured once and applied to many graph sets.
pub struct MarginalizedGraphKernel {
    config: MgkConfig,
    resolved: ResolvedKernel,
    engine: Engine,
    /// The other selected GPUs, over which large calls are spread ([`spread`]); empty on the CPU.
    peers: Vec<Arc<crate::gpu::GpuDevice>>,
    control: RunControl,
}

impl MarginalizedGraphKernel {
    /// Validate `config` and pick the backend (`Auto`: the GPU if one is usable).
    pub fn new(config: MgkConfig) -> Result<Self> {
        let resolved = config.resolve()?;
        let (engine, peers) = match Engine::with_peers(config.backend)? {
            // more edge features than the GPU kernels read: Auto takes the CPU (Cuda: the error below)
            (Engine::Cuda(_), _) if config.backend == Backend::Auto && resolved.edge_features.len() > MAX_EDGE_FEATURES => (Engine::Cpu, Vec::new()),
            picked => picked,
        };
        if let Engine::Cuda(_) = engine
            && resolved.edge_features.len() > MAX_EDGE_FEATURES
        {
            return Err(OctileError::InvalidConfig(format!(
                "the CUDA backend supports at most {} edge features, the edge kernel reads {}",
                MAX_EDGE_FEATURES,
                resolved.edge_features.len()
            )));
        }
        let k = MarginalizedGraphKernel { config, resolved, engine, peers, control: RunControl::default() };
        k.streams_ready()?;
        Ok(k)
    }

    /// One resident solve's streams made on each GPU now, not during the first call (creating them
    /// took MUTAG's call 0.2–0.45 ms: `gpu::streams`); none where the resident solver does not run.
    fn streams_ready(&self) -> Result<()> {
        if self.resident_device(false).is_none() {
            return Ok(());
        }
        for d in self.gpus() {
            d.streams.keep_ready(&d.stream, gpu::resident::STREAMS_PER_SOLVE)?;
        }
        Ok(())
    }

    /// The kernel on these GPUs (CUDA's ordinals; the first becomes its engine): calls of more
    /// than [`spread::MIN_PAIRS_PER_DEVICE`] pairs per GPU are spread over them. Without a usable GPU
    /// among them, [`OctileError::NoGpu`]; a kernel on the CPU backend stays there
    /// ([`OctileError::InvalidConfig`]).
    pub fn with_gpus(mut self, ordinals: &[usize]) -> Result<Self> {
        if matches!(self.engine, Engine::Cpu) {
            return Err(OctileError::InvalidConfig("with_gpus: the kernel runs on the CPU backend".into()));
        }
        let devs = ordinals.iter().map(|&k| crate::gpu::device_at(k)).collect::<std::result::Result<Vec<_>, String>>().map_err(OctileError::NoGpu)?;
        let Some(first) = devs.first() else { return Err(OctileError::InvalidConfig("with_gpus: no GPU listed".into())) };
        self.engine = Engine::Cuda(first.clone());
        self.peers = devs[1..].to_vec();
        self.streams_ready()?;
        Ok(self)
    }

    /// Every GPU the kernel uses, the first (its engine's) first; empty on the CPU.
    fn gpus(&self) -> Vec<Arc<crate::gpu::GpuDevice>> {
        match &self.engine {
            Engine::Cpu => Vec::new(),
            Engine::Cuda(d) => std::iter::once(d.clone()).chain(self.peers.iter().cloned()).collect(),
        }
    }

    /// The same kernel once per GPU it uses, each on that GPU alone; empty on one GPU or the CPU.
    pub fn per_gpu(&self) -> Vec<MarginalizedGraphKernel> {
        if self.peers.is_empty() { Vec::new() } else { self.gpus().iter().map(|d| self.on_device(d)).collect() }
    }

    /// The GPU whose resident solver takes this kernel's Gram entries (`gradient`: and their
    /// gradients) first: on a GPU, the resident solver on, a tolerance it reaches in the
    /// configured precision (f32 or f64; gradients f32 alone); None: the tile solver or the CPU
    /// takes them.
    fn resident_device(&self, gradient: bool) -> Option<&Arc<crate::gpu::GpuDevice>> {
        let precision = self.config.precision;
        match &self.engine {
            Engine::Cuda(dev)
                if (precision == Precision::F32 || !gradient)
                    && self.config.solver.resident
                    && self.config.solver.rtol_for(precision) >= gpu::resident::resident_min_rtol(precision) =>
            {
                Some(dev)
            }
            _ => None,
        }
    }

    /// The same kernel on GPU `dev` alone (one GPU's share of a spread call).
    fn on_device(&self, dev: &Arc<crate::gpu::GpuDevice>) -> Self {
        MarginalizedGraphKernel {
            config: self.config.clone(),
            resolved: self.resolved.clone(),
            engine: Engine::Cuda(dev.clone()),
            peers: Vec::new(),
            control: self.control.clone(),
        }
    }

    /// κe gathered for the tiling-blocking dense walks, or marked unusable when the configuration
    /// asks for shared tiling (the default) — `usable` is what selects the walks on both backends.
    fn dense_kernel(&self) -> GatheredKernel {
        gathered(&self.resolved.edge_spec, self.config.tiles.dense_walk)
    }

    /// Attach progress reporting / cancellation.
    pub fn with_control(mut self, control: RunControl) -> Self {
        self.control = control;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &MgkConfig {
        &self.config
    }

    /// Node-wise similarity of each listed pair (the paper's nodal output; GraphDot's
    /// `nodal='block'`): R[i][i'] = p_i · x_ii' · p'_i', the expected similarity of the paths that
    /// start at node i of G and node i' of G', so that K(G, G') = Σ R. Rows and columns are in the
    /// graphs' own node order whatever `reorder` packed them in. An index outside `graphs` is an
    /// error naming it; non-convergence is `NoConvergence` as for Gram matrices.
    pub fn nodal_pairs(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<NodalMatrix>> {
        let (matrices, e) = self.nodal_evaluated(graphs, pairs)?;
        finish(filled(self, pairs.len(), 1, &e), &e.info, |k| pairs[k])?;
        Ok(matrices)
    }

    /// [`Self::nodal_pairs`] with the pairs that failed kept as results, each matrix's
    /// [`NodalMatrix::info`] saying whether it converged (the CLI writes them, then exits 3).
    pub fn nodal_pairs_unchecked(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<NodalMatrix>> {
        Ok(self.nodal_evaluated(graphs, pairs)?.0)
    }

    /// The nodal matrices of `pairs` and their evaluation (K and diagnostics per pair).
    fn nodal_evaluated(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<(Vec<NodalMatrix>, Evaluation)> {
        let list = listed(graphs, pairs)?;
        let Solved { status, seconds, report, nodal } = self.solve_x(graphs, &list, true)?;
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let e = evaluation(&status, seconds, Details::new(report));
        let matrices = pairs
            .iter()
            .zip(nodal.unwrap_or_default())
            .zip(&status)
            .map(|((&(i, j), values), s)| NodalMatrix { rows: graphs[i].n_nodes(), cols: graphs[j].n_nodes(), values, info: info(s) })
            .collect();
        Ok((matrices, e))
    }

    /// Every pair of `status` whose value over- or underflowed marked as failed: K > 0 for every
    /// valid configuration and scales as p², so a value that is not finite, or below
    /// [`smallest_value`] of the kernel's precision (digits lost; K = 0 normalizes to an identity
    /// matrix), is reported as a failure, never passed on as a result.
    fn mark_out_of_range(&self, status: &mut [PairStatus]) {
        let floor = smallest_value(self.config.precision);
        for s in status.iter_mut().filter(|s| !(s.value.is_finite() && s.value >= floor)) {
            s.converged = 0;
        }
    }

    /// [`Self::nodal_pairs`] for one pair of graphs.
    pub fn nodal(&self, g1: &Graph, g2: &Graph) -> Result<NodalMatrix> {
        Ok(self.nodal_pairs(&[g1.clone(), g2.clone()], &[(0, 1)])?.remove(0))
    }

    /// The tile-pair primitive map this kernel uses on its engine (adaptive: from the profile of
    /// the device and precision; see [`profile`]).
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

    /// Pack and solve `pairs` of `graphs` on the engine: statuses in pair order (a value out of
    /// range marked failed: [`Self::mark_out_of_range`]), the seconds taken, the description of the
    /// run and, with `nodal`, each pair's node-wise similarity matrix in the graphs' own node order
    /// (the packing order's permutation undone).
    fn solve_x(&self, graphs: &[Graph], pairs: &[(u32, u32)], nodal: bool) -> Result<Solved> {
        let mut solved = self.solve_x_on_engine(graphs, pairs, nodal)?;
        self.mark_out_of_range(&mut solved.status);
        Ok(solved)
    }

    /// [`Self::solve_x`] as the engine's solvers leave it.
    fn solve_x_on_engine(&self, graphs: &[Graph], pairs: &[(u32, u32)], nodal: bool) -> Result<Solved> {
        let t = Instant::now();
        let rtol = self.config.solver.rtol_for(self.config.precision);
        // f32 Gram entries on the GPU: the resident solver first (it orders each graph's nodes
        // itself, so no reordering), the tile solver for the pairs it leaves
        if let Some(dev) = self.resident_device(false)
            && !nodal
        {
            let opt = PackOptions::new(&self.resolved, self.config.q, self.config.p);
            let res = gpu::resident::solve_resident(
                dev,
                self.config.precision,
                graphs,
                &opt,
                pairs,
                &self.resolved.node_spec,
                &self.resolved.edge_spec,
                rtol,
                self.config.solver.max_iterations,
                &self.config.gpu.resident,
                self.config.gpu.scratch_bytes,
                &self.control,
                None,
            )?;
            log::debug!("solve: resident solver done at {:.1} ms: {}", t.elapsed().as_secs_f64() * 1e3, res.report);
            crate::phases::mark("resident done");
            let (mut status, rest) = (res.status, res.rest);
            let mut report = MgkReport { resident: Some(res.report), tiles: None };
            if !rest.is_empty() {
                // the tile solver reorders and packs only the graphs of the pairs it gets (copied
                // out only when that is not all of them)
                let mut used = vec![false; graphs.len()];
                for &k in &rest {
                    used[pairs[k].0 as usize] = true;
                    used[pairs[k].1 as usize] = true;
                }
                let subset: Vec<Graph>;
                let (set, rest_pairs): (&[Graph], Vec<(u32, u32)>) = if used.iter().all(|&u| u) {
                    (graphs, rest.iter().map(|&k| pairs[k]).collect())
                } else {
                    let mut next = 0u32;
                    let local: Vec<u32> = used
                        .iter()
                        .map(|&u| {
                            if u {
                                next += 1;
                                next - 1
                            } else {
                                u32::MAX
                            }
                        })
                        .collect();
                    subset = graphs.iter().zip(&used).filter(|(_, u)| **u).map(|(g, _)| g.clone()).collect();
                    (&subset, rest.iter().map(|&k| (local[pairs[k].0 as usize], local[pairs[k].1 as usize])).collect())
                };
                let tiles = self.solve_tiles(set, &rest_pairs, false, t)?;
                for (&k, s) in rest.iter().zip(tiles.status) {
                    status[k] = s;
                }
                report.tiles = tiles.report.tiles;
            }
            log::debug!("solve: done at {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            return Ok(Solved { status, seconds: t.elapsed().as_secs_f64(), report, nodal: None });
        }
        self.solve_tiles(graphs, pairs, nodal, t)
    }

    /// Each graph's packing order (perms[g][old] = new) and the set packed in it in f64 and, for
    /// f32 runs, in f32 too, with the tile-pair primitive map of the engine.
    fn pack_sets(&self, graphs: &[Graph]) -> Result<Packed> {
        // reorder once (in parallel for large sets), then pack both precisions in that order
        let order = |g: &Graph| {
            if self.config.reorder == Reordering::Natural || g.n_nodes() <= TILE {
                Arc::new((0..g.n_nodes()).collect())
            } else {
                self.config.reorder.order_cached(g)
            }
        };
        let pooled = crate::parallel::pooled(graphs.iter().map(Graph::n_nodes).sum());
        let perms: Vec<Arc<Vec<usize>>> = crate::parallel::collect(graphs.len(), pooled, |i| order(&graphs[i]));
        let ordered: Vec<Graph>;
        let packed = if self.config.reorder == Reordering::Natural {
            graphs
        } else {
            ordered = crate::parallel::collect(graphs.len(), pooled, |i| graphs[i].permuted(&perms[i]));
            &ordered
        };
        let map = self.primitive_map()?;
        let opt = PackOptions {
            compact: self.config.tiles.compact,
            skip_empty: self.config.tiles.skip_empty,
            ..PackOptions::new(&self.resolved, self.config.q, self.config.p)
        };
        let set64 = pack::<f64>(packed, &opt)?;
        let set32 = match self.config.precision {
            Precision::F64 => None,
            Precision::F32 => Some(pack::<f32>(packed, &opt)?),
        };
        Ok(Packed { perms, set64, set32, map })
    }

    /// The CPU solver's parameters for a run of `pairs` pairs.
    fn cpu_params<'a>(&'a self, primitives: &'a PrimitiveMap, pairs: usize) -> CpuParams<'a> {
        CpuParams {
            node: &self.resolved.node_spec,
            edge: &self.resolved.edge_spec,
            rtol: self.config.solver.rtol_for(self.config.precision),
            max_iterations: self.config.solver.max_iterations,
            primitives,
            dense: self.dense_kernel(),
            // few pairs (e.g. large graphs): also split each XMV over the cores
            parallel_xmv: pairs < 2 * rayon::current_num_threads(),
            product_form: self.config.solver.resident,
        }
    }

    /// Every thread's CPU workspace (`per_pair` bytes for a pair) for the largest pair it may get,
    /// checked before any is allocated.
    fn check_cpu_workspace<T>(
        &self,
        set: &PackedGraphs<T>,
        pairs: &[(u32, u32)],
        per_pair: impl Fn(&PackedGraphs<T>, usize, usize) -> u128 + Sync,
    ) -> Result<()>
    where
        T: Sync,
    {
        let threads = rayon::current_num_threads().clamp(1, pairs.len().max(1));
        if let Some((need, a, b)) = pairs.par_iter().map(|&(a, b)| (per_pair(set, a as usize, b as usize), a, b)).max_by_key(|w| w.0) {
            let what = || {
                format!(
                    "the CPU solver's workspace ({threads} thread(s), each up to a pair of graphs with {} and {} nodes)",
                    set.n_nodes(a as usize),
                    set.n_nodes(b as usize)
                )
            };
            crate::memory::check_with(
                need * threads as u128,
                self.control.max_memory_bytes,
                what,
                "a pair needs its product graph (n·n′ unknowns) in memory: leave the largest graphs out, or use a machine with that memory",
            )?;
        }
        Ok(())
    }

    /// Which dense walks the tile solvers use.
    fn dense_walks(&self) -> DenseWalks {
        let g = self.dense_kernel();
        match (self.config.tiles.dense_walk, g.usable != 0) {
            (DenseWalk::TilingBlocking, true) => DenseWalks::TilingBlocking { gathered_features: g.slots },
            (DenseWalk::TilingBlocking, false) => DenseWalks::SharedTilingFallback,
            (DenseWalk::SharedTiling, _) => DenseWalks::SharedTiling,
        }
    }

    /// The tile solver's launch parameters for `set` (`n_jobs` and `team_blocks` set per launch).
    fn tile_params<T>(&self, set: &PackedGraphs<T>, primitives: &PrimitiveMap) -> MgkParams {
        MgkParams {
            node_kernel: self.resolved.node_spec,
            edge_kernel: self.resolved.edge_spec,
            rtol: self.config.solver.rtol_for(self.config.precision),
            n_jobs: 0,
            max_iterations: self.config.solver.max_iterations,
            node_stride: set.node_stride as u32,
            nz_stride: set.nz_stride as u32,
            primitives: *primitives,
            tile_storage: if set.compact { TILE_STORAGE_COMPACT } else { TILE_STORAGE_DENSE },
            team_blocks: 1,
            dense_kernel: self.dense_kernel(),
        }
    }

    /// [`Self::solve_x`] with the tile solvers (CPU or GPU); `t`: when the call started.
    fn solve_tiles(&self, graphs: &[Graph], pairs: &[(u32, u32)], nodal: bool, t: Instant) -> Result<Solved> {
        let Packed { perms, set64, set32, map } = self.pack_sets(graphs)?;
        let (status, xs, entries) = match &set32 {
            None => self.solve_t(&set64, &set64, pairs, &map.map, nodal),
            Some(set32) => self.solve_t(set32, &set64, pairs, &map.map, nodal),
        }?;
        let dense_walks = self.dense_walks();
        let report = MgkReport { resident: None, tiles: Some(TileReport { pairs: pairs.len(), primitives: map.origin, dense_walks, gpu_entries: entries }) };
        // R[i][i'] = p_i · x[(π(i), π'(i'))] · p'_i', rows and columns in the input node order
        let nodal = xs.map(|xs| {
            pairs
                .iter()
                .zip(xs)
                .map(|(&(a, b), x)| {
                    let (a, b) = (a as usize, b as usize);
                    let (n, m) = (graphs[a].n_nodes(), graphs[b].n_nodes());
                    let mt = n_tiles(m);
                    let mut r = vec![0.0; n * m];
                    for i in 0..n {
                        let (pi, pa) = (perms[a][i], set64.node_row(a, perms[a][i])[NODE_P]);
                        for j in 0..m {
                            let pj = perms[b][j];
                            r[i * m + j] = pa * x[tiled_index(pi, pj, mt)] * set64.node_row(b, pj)[NODE_P];
                        }
                    }
                    r
                })
                .collect()
        });
        Ok(Solved { status, seconds: t.elapsed().as_secs_f64(), report, nodal })
    }

    fn solve_t<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        set: &PackedGraphs<T>,
        set64: &PackedGraphs<f64>,
        pairs: &[(u32, u32)],
        primitives: &PrimitiveMap,
        want_x: bool,
    ) -> Result<EngineOutput> {
        match &self.engine {
            Engine::Cpu => {
                let prm = self.cpu_params(primitives, pairs.len());
                self.check_cpu_workspace(set, pairs, |s, a, b| cpu::workspace_bytes(s, a, b, &prm))?;
                let block_len = 256 * rayon::current_num_threads().max(1);
                let keep = |x: &[f64]| if want_x { x.to_vec() } else { Vec::new() };
                let solved: Vec<(PairStatus, Vec<f64>)> = self.control.stream(blocks_of(pairs.len(), block_len), |range| {
                    let block = &pairs[range];
                    Ok(if T::BYTES == 8 {
                        block
                            .par_iter()
                            .map_init(Workspace::default, |ws, &(a, b)| {
                                let st = solve_pair(set64, a as usize, b as usize, &prm, ws, Rhs::Primal);
                                (st, keep(ws.x()))
                            })
                            .collect()
                    } else {
                        block
                            .par_iter()
                            .map_init(MixedWorkspace::default, |ws, &(a, b)| {
                                let st = solve_pair_mixed(set, set64, a as usize, b as usize, &prm, ws, Rhs::Primal);
                                (st, keep(ws.x64()))
                            })
                            .collect()
                    })
                })?;
                let (out, xs): (Vec<PairStatus>, Vec<Vec<f64>>) = solved.into_iter().unzip();
                Ok((out, want_x.then_some(xs), None))
            }
            Engine::Cuda(dev) => {
                let params = self.tile_params(set, primitives);
                let (status, xs, entries) = gpu::batch::solve_pairs(
                    dev,
                    set,
                    set64,
                    pairs,
                    &params,
                    self.config.tiles.blocks_per_pair,
                    self.config.gpu.scratch_bytes,
                    want_x,
                    &self.control,
                )?;
                Ok((status, xs, Some(entries)))
            }
        }
    }
}

impl GraphKernel for MarginalizedGraphKernel {
    fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation> {
        let gpus = self.gpus();
        if spread::spreads(gpus.len(), pairs.len()) {
            let (status, _, report, seconds) = spread::spread(&gpus, pairs, 0, |dev, share| {
                let Solved { status, report, .. } = self.on_device(dev).solve_x(graphs, share, false)?;
                Ok(spread::Part { status, per_pair: Vec::new(), report })
            })?;
            return Ok(evaluation(&status, seconds, Details::new(report)));
        }
        let Solved { status, seconds, report, .. } = self.solve_x(graphs, pairs, false)?;
        Ok(evaluation(&status, seconds, Details::new(report)))
    }

    fn control(&self) -> &RunControl {
        &self.control
    }

    fn backend_name(&self) -> &'static str {
        self.engine.name()
    }

    /// Every backend keeps a status per pair; a GPU's resident solve also its plan (the pair's
    /// launch shape and place in the sorted order) and its job, made for a whole tile at once.
    fn working_bytes_per_pair(&self) -> usize {
        working_bytes_per_pair(!matches!(self.engine, Engine::Cpu))
    }

    fn per_device(&self) -> Vec<Box<dyn GraphKernel + Send + Sync>> {
        self.per_gpu().into_iter().map(|k| Box::new(k) as Box<dyn GraphKernel + Send + Sync>).collect()
    }

    fn device_name(&self) -> String {
        match self.peers.len() {
            0 => self.engine.describe(),
            n => format!("{} GPUs: {}", n + 1, self.gpus().iter().map(|d| format!("GPU {} {}", d.ordinal, d.describe())).collect::<Vec<_>>().join(", ")),
        }
    }

    fn device_report(&self) -> crate::report::Details {
        crate::report::Details::new(self.engine.info())
    }
}

/// Host bytes a call holds per pair beside the driver's pair list, values and diagnostics: the
/// solver's status, and on a GPU the resident plan's bucket (u32) and order (usize) entries and the
/// pair's job.
fn working_bytes_per_pair(gpu: bool) -> usize {
    let plan = std::mem::size_of::<u32>() + std::mem::size_of::<usize>() + std::mem::size_of::<octile_types::PairJob>();
    std::mem::size_of::<PairStatus>() + if gpu { plan } else { 0 }
}

/// The solver's statuses as the driver's per-pair values and diagnostics.
fn evaluation(status: &[PairStatus], seconds: f64, details: Details) -> Evaluation {
    // a light pass: on the pool only for many pairs (`crate::parallel`)
    let pooled = crate::parallel::pooled(status.len());
    let values = crate::parallel::collect(status.len(), pooled, |k| status[k].value);
    let infos = crate::parallel::collect(status.len(), pooled, |k| info(&status[k]));
    Evaluation { values, info: infos, seconds, details }
}

/// The smallest value a pair's K may have in `precision` and be a result ([`MarginalizedGraphKernel`]
/// marks smaller ones failed): f64's smallest normal number (below it digits are lost); for f32,
/// 2²⁴ times f32's, where the right-hand side's terms p·p′ of the f32 solve may already be flushed to
/// zero (p ≈ 1e-16 and below).
pub fn smallest_value(precision: Precision) -> f64 {
    match precision {
        Precision::F64 => f64::MIN_POSITIVE,
        Precision::F32 => f32::MIN_POSITIVE as f64 * (1u32 << 24) as f64,
    }
}

fn info(s: &PairStatus) -> PairInfo {
    PairInfo { iterations: s.iterations, residual: s.residual, converged: s.converged != 0 }
}
